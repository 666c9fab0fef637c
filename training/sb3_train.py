"""Per-contract policies trained with sb3-contrib's MaskablePPO on the batched engine (needs the ``sb3`` extra).

    python -m training.sb3_train --contracts no_queens --minutes 12 --eval-boards 1000
    python -m training.sb3_train --contracts no_queens trumps --timesteps 5000000 --opponents heuristic random
    python -m training.sb3_train --contracts no_queens --timesteps 10000000 --resume     # continue a run
    python -m training.sb3_train --contracts no_queens --opponents self self heuristic  # self-play, a heuristic seat

One ``MaskablePPO`` model per contract on :class:`barbu_env.wrappers.vector_env.BarbuVectorEnv` in its SB3 form
(``--num-envs`` games at once, the learner's seat drawn per deal, the other seats ``--opponents``; rewards = the
learner's deal score / |contract total|, gamma 1). An opponent ``self`` is a frozen copy of the learner (greedy, on
the batched engine): every ``--refresh`` decisions the learner is copied into ``OUT/<contract>/pool/`` (the newest
``--pool`` copies are kept) and each ``self`` seat draws one of them for the next piece: self-play. Outputs
under ``--out/<contract>/``: ``model.zip`` (SB3's; the agent spec ``sb3:source=OUT/<contract>/model.zip`` plays it in
``barbu-eval``, ``barbu-play`` and ``evaluate``), ``run.json`` (the arguments, the env version, timesteps and wall
time so far, the evaluation), ``progress.csv`` (``progress_from_<timesteps>.csv`` for each resumed piece) and
TensorBoard events (SB3's logger). The model and ``run.json`` are saved every ``--save-minutes`` and at the end;
``--resume`` loads them and trains on to ``--timesteps`` in all (a contract of the run without a model yet starts
from scratch). ``--eval-boards N`` ends with the duplicate evaluation against the heuristic (1 model vs 3 heuristic
players, doubling off, 95% CIs).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import CSVOutputFormat, Logger, TensorBoardOutputFormat
from stable_baselines3.common.vec_env import VecMonitor
from tqdm import tqdm

from barbu_env.contracts import CLASSIC_CONTRACTS as SEVEN
from barbu_env.nn import ENV_VERSION
from barbu_env.options import rule_option_arg
from barbu_env.wrappers.sb3_vec import sb3_vec_env


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m training.sb3_train", description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--contracts",
        nargs="+",
        default=["no_queens"],
        help=f"contracts to train, one model each (of {list(SEVEN)}; trumps, fantan: the declarer names the parameter)",
    )
    ap.add_argument(
        "--opponents",
        nargs="+",
        default=["heuristic"],
        help="one spec for the three other seats or three (heuristic, random, checkpoints:bidding=..., "
        "sb3:source=MODEL.zip, self: a frozen copy of the learner)",
    )
    ap.add_argument("--refresh", type=int, default=200_000, help="decisions between copies of the learner (self)")
    ap.add_argument("--pool", type=int, default=1, help="copies of the learner kept for the self seats to draw from")
    ap.add_argument("--rules", default="classic", help="rule preset or YAML path (the batched engine's options)")
    ap.add_argument("--set", dest="rule_options", type=rule_option_arg, nargs="*", default=[],
                    help="rule options (default doubling=off: card play only)")  # fmt: skip
    ap.add_argument("--timesteps", type=int, default=3_000_000, help="learner decisions per contract, in all")
    ap.add_argument("--minutes", type=float, default=None, help="wall-clock limit per contract (stops earlier)")
    ap.add_argument("--num-envs", type=int, default=512, help="games played at once")
    ap.add_argument("--n-steps", type=int, default=32, help="steps per game between updates")
    ap.add_argument("--batch", type=int, default=4096, help="minibatch size")
    ap.add_argument("--epochs", type=int, default=4, help="passes over each rollout")
    ap.add_argument("--lr", type=float, default=3e-4, help="learning rate")
    ap.add_argument("--ent-coef", type=float, default=0.01, help="entropy bonus")
    ap.add_argument("--hidden", type=int, nargs="+", default=[256, 256], help="hidden layer sizes (policy and value)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="runs/sb3", help="output directory")
    ap.add_argument("--save-minutes", type=float, default=3.0, help="minutes between saves of the model")
    ap.add_argument("--resume", action="store_true", help="continue from OUT/<contract>/model.zip")
    ap.add_argument("--eval-boards", type=int, default=0, help="duplicate boards against the heuristic at the end")
    return ap


class _Progress(BaseCallback):
    """Moves ``bar`` to the run's timesteps; stops at ``total`` timesteps or the deadline; saves the model every
    ``save_every`` s."""

    def __init__(self, bar: tqdm, total: int, deadline: float, save_every: float, save: Any) -> None:
        super().__init__()
        self.bar, self.total, self.deadline, self.save_every, self.save = bar, total, deadline, save_every, save
        self.saved = time.time()

    def _on_step(self) -> bool:
        self.bar.update(self.model.num_timesteps - self.bar.n)
        if time.time() - self.saved >= self.save_every:
            self.save()
            self.saved = time.time()
        return time.time() < self.deadline and self.model.num_timesteps < self.total


def make_env(args: argparse.Namespace, contract: str, options: dict, specs: list[str], seed: int) -> VecMonitor:
    """The SB3 form of the contract's vector env against ``specs``, episode rewards logged."""
    opponents = specs[0] if len(specs) == 1 else specs
    return VecMonitor(sb3_vec_env(args.num_envs, opponents, contracts=[contract], normalize=True, seed=seed,
                                  rules=args.rules, **options))  # fmt: skip


def self_play_specs(args: argparse.Namespace, model: MaskablePPO, pool: Path, done: int) -> list[str]:
    """Copy ``model`` into ``pool`` (``<done>.zip``; the newest ``args.pool`` copies kept), then the three seats'
    specs: each ``self`` seat a copy drawn uniformly from the pool (seeded by the run's seed and ``done``)."""
    pool.mkdir(exist_ok=True)
    model.save(pool / f"{done:012d}.zip")
    copies = sorted(pool.glob("*.zip"))
    for old in copies[: -args.pool]:
        old.unlink()
    copies = copies[-args.pool :]
    rng = np.random.default_rng([args.seed, done])
    seats = args.opponents * 3 if len(args.opponents) == 1 else args.opponents
    return [f"sb3:source={copies[rng.integers(len(copies))]}" if o == "self" else o for o in seats]


def train_contract(args: argparse.Namespace, contract: str) -> dict[str, Any]:
    """Train (or resume) one contract's model; returns its ``run.json``."""
    out = Path(args.out) / contract
    out.mkdir(parents=True, exist_ok=True)
    options = {"doubling": "off", **dict(args.rule_options)}
    path, meta_path, pool = out / "model.zip", out / "run.json", out / "pool"
    selfplay = "self" in args.opponents
    meta: dict[str, Any] = {"contract": contract, "env_version": ENV_VERSION, "timesteps": 0, "seconds": 0.0,
                            "args": {k: v for k, v in vars(args).items() if k != "rule_options"},
                            "rule_options": options}  # fmt: skip
    if args.resume and path.is_file():
        model = MaskablePPO.load(path, device="cpu")
        if meta_path.is_file():
            meta["seconds"] = json.loads(meta_path.read_text())["seconds"]
    else:  # self-play's first copy is this untrained model, so its first env seats random players instead
        env = make_env(args, contract, options, ["random"] if selfplay else args.opponents, args.seed)
        model = MaskablePPO("MlpPolicy", env, n_steps=args.n_steps, batch_size=args.batch, n_epochs=args.epochs,
                            learning_rate=args.lr, gamma=1.0, gae_lambda=0.95, ent_coef=args.ent_coef,
                            policy_kwargs={"net_arch": list(args.hidden)}, seed=args.seed, device="cpu")  # fmt: skip
    csv = "progress.csv" if model.num_timesteps == 0 else f"progress_from_{model.num_timesteps}.csv"  # one a piece
    model.set_logger(Logger(str(out), [CSVOutputFormat(str(out / csv)), TensorBoardOutputFormat(str(out))]))
    start, spent = time.time(), float(meta["seconds"])

    def save() -> None:
        model.save(path)
        meta.update(timesteps=int(model.num_timesteps), seconds=round(spent + time.time() - start, 1))
        meta_path.write_text(json.dumps(meta, indent=1))

    deadline = start + args.minutes * 60 if args.minutes is not None else float("inf")
    with tqdm(total=args.timesteps, initial=model.num_timesteps, unit="dec", unit_scale=True) as bar:
        callback = _Progress(bar, args.timesteps, deadline, args.save_minutes * 60, save)
        while model.num_timesteps < args.timesteps and time.time() < deadline:
            done = int(model.num_timesteps)
            specs = self_play_specs(args, model, pool, done) if selfplay else args.opponents
            if selfplay or model.get_env() is None:  # a resumed piece, or a refresh: fresh deals (seed + timesteps)
                model.set_env(make_env(args, contract, options, specs, args.seed + done))
            left = args.timesteps - model.num_timesteps
            model.learn(min(left, args.refresh) if selfplay else left, callback=callback, reset_num_timesteps=False)
    save()
    if args.eval_boards:
        from barbu_env.evaluation import evaluate

        result = evaluate([f"sb3:source={path}", "heuristic"], contracts=[contract], boards=args.eval_boards,
                          seed=args.seed + 1, rules=args.rules, **options)  # fmt: skip
        row = result["contracts"][contract]["agents"][result["agents"][0]]
        meta["evaluation"] = {"boards": args.eval_boards, "seed": args.seed + 1, "against": "heuristic",
                              "mean": row["mean"], "half_width": row["half_width"]}  # fmt: skip
        meta_path.write_text(json.dumps(meta, indent=1))
    return meta


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.refresh < 1 or args.pool < 1:
        parser.error(f"--refresh {args.refresh} --pool {args.pool}: expected a number of decisions >= 1 and a pool "
                     "of at least one copy")  # fmt: skip
    torch.set_num_threads(1)
    if args.resume and not any((Path(args.out) / c / "model.zip").is_file() for c in args.contracts):
        raise SystemExit(f"--resume: no model to continue under {args.out} (for {args.contracts})")
    for contract in args.contracts:
        meta = train_contract(args, contract)
        print(f"{contract}: {meta['timesteps']} decisions in {meta['seconds']:.0f} s -> {Path(args.out) / contract}")
        if "evaluation" in meta:
            e = meta["evaluation"]
            print(f"{contract}: {e['mean']:+.2f} ± {e['half_width']:.2f} points per deal against 3 heuristic players "
                  f"({e['boards']} duplicate boards, 95% CI)")  # fmt: skip


if __name__ == "__main__":
    main()
