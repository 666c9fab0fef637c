"""Per-contract policies trained with RLlib PPO on a Ray cluster (needs the ``rllib`` extra).

    python -m training.rllib_train --contracts no_queens trumps --iterations 50        # local Ray
    python -m training.rllib_train --mode match --rules basic32 --iterations 50       # one policy, whole matches
    RAY_AUTH_MODE=token python -m training.rllib_train --address HEAD:6379 --num-env-runners 32 --iterations 500

``--address`` joins a running Ray cluster (every node needs ``barbu_env`` installed; clusters started with
``ray start`` use token authentication, hence ``RAY_AUTH_MODE=token`` on the driver).

One policy per contract, shared by the four seats (RLlib policy mapping by contract,
:func:`barbu_env.wrappers.rllib.policy_for_agent`); every episode is one deal of a contract drawn from
``--contracts`` with fresh hands and a random declarer (:class:`~barbu_env.wrappers.rllib.BarbuMultiAgentEnv`,
deal mode, rewards = own deal score / |contract total|). Invalid actions are masked by RLlib's
action-masking module; the network has the shape of :class:`barbu_env.nn.PolicyNet`.

``--mode match``: every episode is a whole match and one policy (``shared``) takes every decision of every
seat — declarations, doubling, cards, Fantan passes — with full rules by default (rewards = deal scores /
the rules' largest |contract total|).

Outputs under ``--out``: ``rllib_checkpoint/`` (RLlib's own, for ``--resume``), ``policies/<contract>.pt``
(deal mode: the project's checkpoint format, converted by :func:`~barbu_env.wrappers.rllib.export_policies`;
``barbu-eval --agents OUT/policies heuristic --contract no_queens trumps``) and ``metrics.jsonl``.
``--eval-boards N`` runs that duplicate evaluation against the heuristic at the end; in match mode it plays
N duplicate matches of the policy as agent ``rllib:source=OUT/rllib_checkpoint`` against the heuristic.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from barbu_env.contracts import CLASSIC_CONTRACTS as SEVEN
from barbu_env.options import rule_option_arg


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m training.rllib_train", description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--mode",
        choices=("deal", "match"),
        default="deal",
        help="deal: one policy per contract on single deals; match: one policy for whole matches",
    )
    ap.add_argument(
        "--contracts", nargs="+", default=None, help=f"deal mode: contracts to train (of {SEVEN}; default no_queens)"
    )
    ap.add_argument("--rules", default="classic", help="rule preset or YAML path")
    ap.add_argument(
        "--set",
        dest="rule_options",
        nargs="*",
        type=rule_option_arg,
        default=[],
        metavar="KEY=VALUE",
        help="rule options (deal mode default doubling=off: card play only, as barbu-eval's deal mode)",
    )
    ap.add_argument("--iterations", type=int, default=20, help="PPO training iterations")
    ap.add_argument("--address", default=None, help="Ray cluster to join (HOST:PORT or 'auto'); default: new local Ray")
    ap.add_argument("--num-env-runners", type=int, default=0, help="rollout workers (0: sample in the driver)")
    ap.add_argument("--num-cpus", type=int, default=None, help="CPUs of the local Ray instance (default: all)")
    ap.add_argument("--train-batch", type=int, default=4000, help="env steps per PPO update")
    ap.add_argument("--minibatch", type=int, default=500, help="minibatch size")
    ap.add_argument("--epochs", type=int, default=4, help="passes over each batch")
    ap.add_argument("--lr", type=float, default=3e-4, help="learning rate")
    ap.add_argument("--hidden", type=int, nargs="+", default=[256, 128], help="hidden layer sizes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="runs/rllib", help="output directory")
    ap.add_argument("--resume", action="store_true", help="continue from OUT/rllib_checkpoint")
    ap.add_argument("--eval-boards", type=int, default=0, help="duplicate boards vs heuristic per contract at the end")
    return ap


def train(args: argparse.Namespace) -> dict[str, Any]:
    """Run the training described by ``args``; returns the last result summary and the exported paths."""
    import ray

    from barbu_env.rules import load_rules
    from barbu_env.wrappers.common import check_contracts
    from barbu_env.wrappers.rllib import export_policies, masked_ppo_config

    match = args.mode == "match"
    if match and args.contracts is not None:
        raise ValueError("--contracts picks deal-mode contracts: in --mode match one policy plays every contract")
    contracts = None if match else (args.contracts or ["no_queens"])
    bad = [c for c in contracts or () if c.split(":")[0] not in SEVEN]
    if bad:
        raise ValueError(f"unknown contract(s) {bad}: choose from {SEVEN}")
    if args.iterations < 1:
        raise ValueError(f"bad --iterations {args.iterations}: expected >= 1")
    options = {**({} if match else {"doubling": "off"}), **dict(args.rule_options)}
    rules = load_rules(args.rules, **options)
    if contracts is not None:
        check_contracts(contracts, rules)
    env_config = {"mode": args.mode, "rules": args.rules, **options}
    config = (
        masked_ppo_config(contracts, env_config, args.hidden, args.num_env_runners, args.seed)
        .training(
            train_batch_size_per_learner=args.train_batch, minibatch_size=args.minibatch, num_epochs=args.epochs,
            lr=args.lr,
        )
        .reporting(metrics_num_episodes_for_smoothing=20)
    )  # fmt: skip
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ckpt_dir = (out / "rllib_checkpoint").resolve()
    started_ray = not ray.is_initialized()
    if started_ray:
        # address "local": always a fresh local instance, even where `ray start` left a default cluster
        ray.init(address=args.address or "local", num_cpus=args.num_cpus if args.address is None else None,
                 include_dashboard=False, log_to_driver=False)  # fmt: skip
    try:
        algo = config.build_algo()
        if args.resume:
            algo.restore_from_path(str(ckpt_dir))
        last: dict[str, Any] = {}
        with open(out / "metrics.jsonl", "a") as log:
            for it in range(args.iterations):
                t0 = time.time()
                result = algo.train()
                last = summarise(result, time.time() - t0)
                log.write(json.dumps({"iteration": it, **last}) + "\n")
                log.flush()
                returns = " ".join(f"{k}={v:+.3f}" for k, v in sorted(last["module_return_mean"].items()))
                print(f"iter {it + 1}/{args.iterations} env_steps={last['env_steps']} {returns} "
                      f"({last['seconds']:.1f}s)", flush=True)  # fmt: skip
        algo.save_to_path(str(ckpt_dir))
        meta = {"iterations": args.iterations, "env_steps": last.get("env_steps"), "env_config": env_config}
        algo.stop()
        paths = {} if match else export_policies(ckpt_dir, out / "policies", meta)
    finally:
        if started_ray:
            ray.shutdown()
    for mid, path in paths.items():
        print(f"{mid}: {path}")
    summary = {"last": last, "policies": {k: str(v) for k, v in paths.items()}, "checkpoint": str(ckpt_dir)}
    if args.eval_boards > 0 and match:
        summary["evaluation"] = evaluate_match(ckpt_dir, args.eval_boards, args.seed, args.rules, options)
    elif args.eval_boards > 0:
        summary["evaluation"] = evaluate_exported(out / "policies", contracts or [], args.eval_boards, args.seed,
                                                  args.rules, options)  # fmt: skip
    return summary


def summarise(result: dict[str, Any], seconds: float) -> dict[str, Any]:
    """The numbers of one RLlib result worth logging: env steps, per-module and per-agent mean returns."""
    runners = result.get("env_runners", {})

    def floats(d: Any) -> dict[str, float]:
        return {str(k): float(v) for k, v in (d or {}).items()}

    return {
        "env_steps": int(
            result.get("num_env_steps_sampled_lifetime", runners.get("num_env_steps_sampled_lifetime", 0))
        ),
        "episodes": int(runners.get("num_episodes_lifetime", 0)),
        "module_return_mean": floats(runners.get("module_episode_returns_mean")),
        "agent_return_mean": floats(runners.get("agent_episode_returns_mean")),
        "seconds": seconds,
    }


def evaluate_exported(policies: Path, contracts: list[str], boards: int, seed: int, rules: str,
                     options: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """Duplicate evaluation (``barbu-eval``) of the exported policies folder (a neural agent playing each
    contract with its network, the rest with the heuristic) against three heuristic players."""
    from barbu_env.evaluation import evaluate, markdown

    summary = evaluate([str(policies), "heuristic"], contracts=sorted({c.split(":")[0] for c in contracts}),
                       boards=boards, seed=seed, rules=rules, **options)  # fmt: skip
    print(markdown(summary))
    return summary


def evaluate_match(checkpoint: Path, boards: int, seed: int, rules: str, options: dict[str, Any]) -> dict[str, Any]:
    """Duplicate match evaluation (``barbu-eval --mode match``) of the match-mode policy of ``checkpoint``, played
    by :class:`~barbu_env.wrappers.rllib.ModuleAgent` (``rllib:source=...``), against three heuristic players."""
    from barbu_env.evaluation import evaluate, markdown

    summary = evaluate([f"rllib:source={checkpoint}", "heuristic"], mode="match", boards=boards, seed=seed,
                       rules=rules, **options)  # fmt: skip
    print(markdown(summary))
    return summary


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    train(args)


if __name__ == "__main__":
    main()
