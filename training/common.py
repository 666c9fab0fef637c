"""Pieces shared by the training scripts: config loading, batched policies, duplicate evaluation
for model selection, logging (TensorBoard + CSV), learning curves and the final evaluation table."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import math
import shutil
import sys
import time
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch

from barbu_env.contracts import CLASSIC_CONTRACTS as SEVEN
from barbu_env.evaluation import LINEUPS, confidence_interval, duplicate, make_boards, seatings
from barbu_env.nn import PolicyNet
from barbu_env.options import parse_option
from barbu_env.rules import Rules

from .augment import action_index, action_map, obs_index, suit_permutations
from .selfplay import selfplay_player

#: Per suit relabelling: the observation gather, the action gather and the map of actions back (:func:`suit_gathers`).
Gathers = list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]

C = TypeVar("C")


@dataclass
class CommonConfig:
    """Settings every training script shares; each can be set in YAML or with ``--set key=value``."""

    contracts: list[str] = field(default_factory=lambda: list(SEVEN))
    """Contracts to train, one network each (names of RULES.md R4)."""
    rules: str = "classic"
    """Rule preset or YAML file the deals are played under."""
    seed: int = 0
    """Seed of every RNG (deals, roles or sampling, torch)."""
    out_dir: str = "runs/default"
    """Where data, metrics, TensorBoard logs, resume state and best checkpoints are written."""
    export_dir: str = ""
    """If set, each contract's best checkpoint is copied there as ``<contract>.pt``."""
    hidden: list[int] = field(default_factory=lambda: [256, 128])
    """Hidden layer sizes of the MLP."""
    double_prob: float = 0.3
    """Probability that each player takes a random legal double, so the policy sees varied doubles (R6)."""
    eval_boards: int = 100
    """Duplicate boards (each played 4 times, seats rotated) per model-selection evaluation."""
    final_eval_deals: int = 200
    """Boards per contract in the final table against the baselines (0 skips it)."""
    threads: int = 2
    """Torch CPU threads (1 is faster when other jobs share the cores)."""
    per_contract: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Settings that differ for some contracts, e.g. ``{trumps: {states: 800000, double_prob: 0.1}}``
    (keys: the other fields of this config)."""

    def for_contract(self: C, contract: str) -> C:
        """This config with ``per_contract[contract]`` applied."""
        return dataclasses.replace(self, **self.per_contract.get(contract, {}), per_contract={})


INF = float("inf")
_COUNTS = ("threads", "workers", "epochs", "minibatch", "num_games", "bc_epochs", "rollout_decisions", "update_epochs",
           "snapshot_every", "pool_size", "eval_every", "eval_boards", "hidden", "chunk", "buffer", "rollout_threads",
           "worlds", "pimc_samples", "late_worlds")  # fmt: skip
_SHARES = ("double_prob", "label_prob", "p_heuristic", "p_snapshot", "gae_lambda", "doubled", "lr_final", "epsilon",
           "rollout_opponents", "p_heuristic_deal", "p_pimc_deal", "late_label_prob")  # fmt: skip
#: Allowed ranges ``(low, high)``, inclusive, of numeric settings (of every training config); other
#: integers must be >= 0 and other floats finite.
RANGES: dict[str, tuple[float, float]] = {
    **dict.fromkeys(_SHARES, (0.0, 1.0)),
    **dict.fromkeys(_COUNTS, (1, INF)),
    **dict.fromkeys(("lr", "clip", "max_grad_norm", "bc_temp"), (1e-12, INF)),
    **dict.fromkeys(("weight_decay", "bc_coef", "bc_final", "ent_coef", "vf_coef", "belief"), (0.0, INF)),
    "ema": (0.0, 0.99999),
}
#: The allowed values of text settings that are a choice among names.
CHOICES: dict[str, tuple[str, ...]] = {
    "rollout": ("heuristic", "learner", "learner_seat", "as_played"),
    "select": ("heuristic", "pimc", "last"),
}


def load_config(cls: type[C], path: str | Path | None, overrides: list[str] | None = None) -> C:
    """A ``cls`` config from YAML plus ``key=value`` overrides (values read by
    :func:`barbu_env.options.parse_value`); ``ValueError`` naming the key and what is allowed for an
    unknown key, a value of the wrong type or out of range (:data:`RANGES`), or a bad file."""
    import yaml

    data: dict[str, Any] = {}
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ValueError(f"config file {str(p)!r} not found")
        try:
            data = yaml.safe_load(p.read_text()) or {}
        except (yaml.YAMLError, UnicodeDecodeError) as e:
            raise ValueError(f"config file {str(p)!r} is not valid YAML: {str(e).splitlines()[0]}") from None
        if not isinstance(data, dict):
            raise ValueError(f"config file {str(p)!r} must hold a mapping of settings")
    for item in overrides or []:
        key, value = parse_option(item, "override")
        data[key] = value
    valid = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - valid, key=str)
    if unknown:
        raise ValueError(f"unknown config key(s) {unknown}: valid keys are {sorted(valid)}")
    hints = typing.get_type_hints(cls)
    data = {k: check_setting(k, v, hints[k]) for k, v in data.items()}
    allowed = valid - {"contracts", "per_contract", "out_dir", "export_dir"}
    for contract, settings in data.get("per_contract", {}).items():
        if contract not in SEVEN:
            raise ValueError(f"config per_contract: unknown contract {contract!r}: choose from {list(SEVEN)}")
        wrong = sorted(set(settings) - allowed, key=str)
        if wrong:
            raise ValueError(f"config per_contract.{contract}: unknown or not per-contract key(s) {wrong}: "
                             f"valid keys are {sorted(allowed)}")  # fmt: skip
        data["per_contract"][contract] = {k: check_setting(f"per_contract.{contract}.{k}", v, hints[k])
                                          for k, v in settings.items()}  # fmt: skip
    bad = [c for c in data.get("contracts", []) if c not in SEVEN]
    if bad:
        raise ValueError(f"config contracts: unknown contract(s) {bad}: choose from {list(SEVEN)}")
    rules = data.get("rules")
    if rules is not None:
        from barbu_env.rules import load_rules

        try:
            load_rules(rules)
        except ValueError as e:
            raise ValueError(f"config rules: {e}") from None
    return cls(**data)


def check_setting(name: str, value: Any, hint: Any) -> Any:
    """``value`` checked against the type ``hint`` of setting ``name`` (and :data:`RANGES`); ints are
    accepted for floats. ``ValueError`` naming the setting and what it allows."""
    key = name.rsplit(".", 1)[-1]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is list:
        if not isinstance(value, list):
            raise ValueError(f"config {name}: expected a list, got {value!r}")
        return [check_setting(f"{name}[{i}]", v, args[0]) for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, dict) for k, v in value.items()):
            raise ValueError(f"config {name}: expected a mapping of contract names to mappings of settings, "
                             f"got {value!r}")  # fmt: skip
        return {k: dict(v) for k, v in value.items()}
    if hint is bool:
        if not isinstance(value, bool):
            raise ValueError(f"config {name}: expected true or false, got {value!r}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise ValueError(f"config {name}: expected a text, got {value!r}")
        choices = CHOICES.get(key)
        if choices is not None and value not in choices:
            raise ValueError(f"config {name}: expected one of {list(choices)}, got {value!r}")
        return value
    if hint not in (int, float):
        return value  # a type these checks do not know: left to the config class
    if hint is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(f"config {name}: expected an integer, got {value!r}")
    if hint is float and (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)):
        raise ValueError(f"config {name}: expected a number, got {value!r}")
    low, high = RANGES.get(key.split("[")[0], (0, INF) if hint is int else (-INF, INF))
    if not low <= value <= high:
        span = f">= {low}" if high == INF else f"between {low} and {high}"
        raise ValueError(f"config {name}: expected a value {span}, got {value!r}")
    return float(value) if hint is float else value


def make_policy(net: PolicyNet, greedy: bool = False):
    """A batched numpy policy function over ``net`` (sampling, or argmax when ``greedy``)."""

    @torch.no_grad()
    def fn(obs: np.ndarray, mask: np.ndarray):
        logits, value = net(torch.from_numpy(obs), torch.from_numpy(mask))
        logp = torch.log_softmax(logits, -1)
        if greedy:
            a = logits.argmax(-1)
        else:  # Gumbel-max sampling: one pass, no distribution object
            a = (logp - torch.log(-torch.log(torch.rand_like(logp).clamp_(1e-20, 1.0)))).argmax(-1)
        return a.numpy(), logp.gather(-1, a[:, None]).squeeze(-1).numpy(), value.numpy()

    return fn


def duplicate_eval(net: PolicyNet, contract: str, rules: Rules, boards: int, seed: int) -> tuple[float, float, int]:
    """``(mean, 95% half-width, boards)``: the duplicate margin of the greedy policy over the heuristic
    (1 vs 3, doubling off), points per deal over the table mean, on ``boards`` boards of ``contract``
    from ``seed`` (the duplicate core of ``barbu-eval``: same boards, seatings, margins and t interval)."""
    eval_rules = rules.replace(doubling="off", undoubled_negative="play")
    play = selfplay_player(contract, eval_rules, make_policy(net, greedy=True))
    board_list = make_boards(seed, [contract], boards, eval_rules)
    results = duplicate(board_list, seatings(LINEUPS["1v3"]), play, 2, eval_rules.score_sign)
    ci = confidence_interval([r["rel"][0] for _, r in results])
    return ci["mean"], ci["half_width"], ci["n"]


def suit_gathers(contract: str, augment: bool = True) -> Gathers:
    """The index tensors of each suit relabelling of ``contract`` (``training.augment.suit_permutations``, identity
    first; the identity alone without ``augment``): the observation gather, the action gather and the map of actions
    back to the original labels."""
    perms = suit_permutations(contract) if augment else [(0, 1, 2, 3)]
    return [(torch.from_numpy(obs_index(p)), torch.from_numpy(action_index(p)), torch.from_numpy(action_map(p)))
            for p in perms]  # fmt: skip


def sizes(net: PolicyNet) -> dict[str, Any]:
    """The sizes of ``net`` that a checkpoint or resume state must share to load into it."""
    return {"hidden": list(net.hidden), "card_hidden": net.card_hidden}


def init_weights(net: PolicyNet, path: str, contract: str) -> None:
    """Load into ``net`` the weights of the checkpoint ``path`` (the file, or a folder holding ``<contract>.pt``);
    ``ValueError`` naming both when it plays another contract or has other sizes than :func:`widens` allows. A
    wider ``net`` (or one with a card head where the checkpoint has none) starts as the checkpoint plays: each
    weight is copied into the leading block of its own, the new units keep their fresh incoming weights and their
    outgoing weights start at zero (Net2Net's function-preserving widening, zero-initialised)."""
    from barbu_env.nn import load_checkpoint

    p = Path(path) / f"{contract}.pt" if Path(path).is_dir() else Path(path)
    loaded, ckpt = load_checkpoint(p)
    if ckpt["contract"] != contract or not widens(loaded, net):
        raise ValueError(f"init checkpoint {str(p)!r} plays {ckpt['contract']!r} with sizes {sizes(loaded)}; "
                         f"this run trains {contract!r} with sizes {sizes(net)} (the same, or each at least as "
                         "large with as many layers)")  # fmt: skip
    old = loaded.state_dict()
    with torch.no_grad():
        for name, w in net.state_dict().items():
            if name not in old:  # a card head the checkpoint lacks: it adds nothing until it learns
                if name.startswith("card_head.out."):
                    w.zero_()
                continue
            o = old[name]
            if w.ndim == 2 and w.shape[1] > o.shape[1]:  # the new inputs of this layer: new units' outputs
                w[:, o.shape[1] :] = 0.0
            w[tuple(slice(0, n) for n in o.shape)] = o


def widens(small: PolicyNet, large: PolicyNet) -> bool:
    """Whether :func:`init_weights` can start ``large`` from ``small``: the same observation and action sizes and
    number of hidden layers, each hidden layer and the card head at least as wide (none counts as width 0)."""
    same = (small.obs_size, small.num_actions, len(small.hidden)) == (large.obs_size, large.num_actions,
                                                                     len(large.hidden))  # fmt: skip
    wider = all(a <= b for a, b in zip(small.hidden, large.hidden)) and small.card_hidden <= large.card_hidden
    return same and wider


def save_resume(directory: Path, contract: str, net: PolicyNet, opt: torch.optim.Optimizer,
                rng: np.random.Generator, counters: dict[str, Any]) -> None:  # fmt: skip
    """Write ``directory/state.pt`` (atomically): ``counters``, the network and optimiser, the numpy and torch
    generators, and the contract and sizes that :func:`load_resume` checks."""
    s = {**counters, "contract": contract, "sizes": sizes(net), "net": net.state_dict(),
         "opt": opt.state_dict(), "rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state()}  # fmt: skip
    tmp = directory / "state.pt.tmp"
    torch.save(s, tmp)
    tmp.replace(directory / "state.pt")


def load_resume(path: Path, contract: str, net: PolicyNet, opt: torch.optim.Optimizer, rng: np.random.Generator,
                check: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:  # fmt: skip
    """Restore what :func:`save_resume` wrote into ``net``, ``opt``, ``rng`` and torch's generator; returns the
    saved state (its counters); ``ValueError`` when it belongs to another contract or other sizes, or when
    ``check`` (the caller's own test of the saved state, run before anything is restored) raises it."""
    s = torch.load(path, map_location="cpu", weights_only=False)
    saved = s.get("sizes", {"hidden": s.get("hidden"), "card_hidden": 0})  # states written before card heads
    if s.get("contract") != contract or saved != sizes(net):
        raise ValueError(f"resume state {str(path)!r} belongs to another run (contract/sizes differ)")
    if check is not None:
        check(s)
    net.load_state_dict(s["net"])
    opt.load_state_dict(s["opt"])
    rng.bit_generator.state = s["rng"]
    torch.set_rng_state(s["torch_rng"])
    return s


class Logger:
    """Namespaced metrics to TensorBoard and to a CSV in long format (decisions, updates, wall_s, metric, value)."""

    def __init__(self, directory: Path, fresh: bool) -> None:
        from torch.utils.tensorboard import SummaryWriter

        self.csv_path = directory / "metrics.csv"
        if fresh:
            self.csv_path.unlink(missing_ok=True)
        self.tb = SummaryWriter(str(directory / "tb"))

    def log(self, step: int, updates: int, wall: float, metrics: dict[str, float]) -> None:
        new = not self.csv_path.exists()
        with self.csv_path.open("a", newline="") as f:
            w = csv.writer(f)
            if new:
                w.writerow(["decisions", "updates", "wall_s", "metric", "value"])
            for k, v in metrics.items():
                self.tb.add_scalar(k, v, step)
                w.writerow([step, updates, round(wall, 1), k, v])

    def close(self, png: Path, title: str, x_label: str = "learner decisions") -> None:
        self.tb.close()
        plot_curve(self.csv_path, png, title, x_label)


def plot_curve(csv_path: Path, png: Path, title: str, x_label: str = "learner decisions") -> None:
    """Learning curve: duplicate margins over the heuristic (and PIMC, where logged) and points per deal vs the
    CSV's first column."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not csv_path.exists():
        return
    rows = list(csv.DictReader(csv_path.open()))
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for key, label in (("eval/margin_vs_heuristic", "margin vs heuristic (eval)"),
                       ("eval/margin_vs_pimc", "margin vs PIMC-16 (eval)"),
                       ("charts/points_per_deal", "points per deal (training)")):  # fmt: skip
        pts = [(float(r["decisions"]), float(r["value"])) for r in rows if r["metric"] == key]
        if pts:
            ax.plot(*zip(*pts), marker=".", label=label)
    ax.axhline(0, color="grey", lw=0.5)
    ax.set_xlabel(x_label)
    ax.set_ylabel("points per deal")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    plt.close(fig)


def final_table(paths: dict[str, Path], boards: int, seed: int, rules: str,
                baselines: tuple[str, ...] = ("random", "heuristic"),
                workers: int = 1) -> tuple[str, dict[str, Any]]:  # fmt: skip
    """Duplicate evaluation of each trained policy (1 vs 3) against each baseline, through
    ``barbu_env.evaluation`` (the same harness as ``barbu-eval``): ``(Markdown table, results)``,
    results[contract][baseline] = the policy's CI dict (points per deal relative to the table mean)."""
    from barbu_env.evaluation import evaluate as duplicate

    head = " | ".join(f"vs {b}" for b in baselines)
    lines = [
        f"Trained policy vs baselines: points per deal relative to the table mean, 1 policy vs 3 baselines, "
        f"{boards} duplicate boards per contract (seats rotated, doubling off), 95% CI (seed {seed}).",
        "",
        f"| contract | {head} | beats {baselines[-1]} |",
        "|---" * (len(baselines) + 2) + "|",
    ]
    results: dict[str, Any] = {}
    for contract, path in paths.items():
        results[contract] = {}
        for baseline in baselines:
            s = duplicate([str(path), baseline], contracts=contract, boards=boards, seed=seed, rules=rules,
                          workers=workers)  # fmt: skip
            results[contract][baseline] = s["contracts"][contract]["agents"][s["agents"][0]]
        cells = [results[contract][b] for b in baselines]
        fmt = [f"{c['mean']:+.2f} ± {c['half_width']:.2f}" for c in cells]
        verdict = "yes" if cells[-1]["low"] > 0 else ("no" if cells[-1]["high"] < 0 else "not significant")
        lines.append(f"| {contract} | {' | '.join(fmt)} | {verdict} |")
    return "\n".join(lines) + "\n", results


def finish_run(cfg: Any, directory: Path, contract: str, logger: Logger, x_label: str = "learner decisions") -> Path:
    """Close the logs (and draw the curve, over ``x_label``) of one contract's run; copy its best checkpoint to
    ``cfg.export_dir/<contract>.pt`` if set. Returns the best checkpoint's path."""
    logger.close(directory / "curve.png", contract, x_label)
    best = directory / "best.pt"
    if cfg.export_dir:
        Path(cfg.export_dir).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(best, Path(cfg.export_dir) / f"{contract}.pt")
    return best


def write_manifest(export_dir: str | Path, cfg: Any, paths: dict[str, Path], command: str,
                   evaluation: dict[str, Any] | None, seconds: float) -> Path:  # fmt: skip
    """``MANIFEST.json`` beside exported checkpoints: command, config, per-contract training facts
    (from each checkpoint's meta), evaluation results and wall time."""
    import json

    from barbu_env.nn import load_checkpoint

    contracts = {}
    for contract, path in paths.items():
        _, ckpt = load_checkpoint(path)
        contracts[contract] = {"file": f"{contract}.pt", "bytes": (Path(export_dir) / f"{contract}.pt").stat().st_size,
                               "training": ckpt["meta"]}  # fmt: skip
    manifest = {"command": command, "env_version": __import__("barbu_env").__version__,
                "config": dataclasses.asdict(cfg), "wall_seconds": round(seconds), "contracts": contracts,
                "evaluation": evaluation}  # fmt: skip
    out = Path(export_dir) / "MANIFEST.json"
    out.write_text(json.dumps(manifest, indent=1, default=float) + "\n")
    return out


def run_cli(name: str, doc: str | None, cls: type, train: Any, argv: list[str] | None, resume_help: str) -> None:
    """The command line of a training script: config + overrides, training, the final table against
    the baselines, and the manifest beside exported checkpoints."""
    from barbu_env import __version__

    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="configs/default.yaml", help="YAML training config")
    ap.add_argument("--set", nargs="*", action="extend", default=[], metavar="KEY=VALUE", help="override config fields")
    ap.add_argument("--resume", action="store_true", help=resume_help)
    args = ap.parse_args(argv)
    try:
        cfg = load_config(cls, args.config, args.set)
    except (ValueError, TypeError) as e:
        ap.exit(2, f"{ap.prog}: error: {e}\n")
    print(f"barbu_env {__version__}: training.{name} on {cfg.contracts} -> {cfg.out_dir}")
    print(json.dumps(dataclasses.asdict(cfg)))
    t0 = time.time()
    paths = train(cfg, args.resume)
    print(f"training done in {time.time() - t0:.0f} s")
    results = None
    if cfg.final_eval_deals:
        table, results = final_table(paths, cfg.final_eval_deals, cfg.seed + 20_000, cfg.rules)
        (Path(cfg.out_dir) / "evaluation.md").write_text(table)
        print(table)
    if cfg.export_dir:
        command = f"python -m training.{name} " + " ".join(argv if argv is not None else sys.argv[1:])
        write_manifest(cfg.export_dir, cfg, paths, command, results, time.time() - t0)
