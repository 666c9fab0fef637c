"""Pieces shared by the training scripts: config loading, batched policies, duplicate evaluation
for model selection, logging (TensorBoard + CSV), learning curves and the final evaluation table."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch

from barbu_env.nn import PolicyNet
from barbu_env.rules import Rules

from .selfplay import SelfPlay, duplicate_boards, duplicate_margin

SEVEN = ["no_tricks", "no_hearts", "no_queens", "no_king", "no_last_two", "trumps", "fantan"]
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


def load_config(cls: type[C], path: str | Path | None, overrides: list[str] | None = None) -> C:
    """A ``cls`` config from YAML plus ``key=value`` overrides; unknown keys are errors listing the valid ones."""
    import yaml

    data: dict[str, Any] = {}
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ValueError(f"config file {str(p)!r} not found")
        data = yaml.safe_load(p.read_text()) or {}
        if not isinstance(data, dict):
            raise ValueError(f"config file {str(p)!r} must hold a mapping of settings")
    for item in overrides or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"bad override {item!r}: expected key=value")
        data[key.strip()] = yaml.safe_load(value)
    valid = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - valid)
    if unknown:
        raise ValueError(f"unknown config key(s) {unknown}: valid keys are {sorted(valid)}")
    cfg = cls(**data)
    bad = [c for c in [*cfg.contracts, *cfg.per_contract] if c not in SEVEN]
    if bad:
        raise ValueError(f"unknown contract(s) {bad}: choose from {SEVEN}")
    allowed = valid - {"contracts", "per_contract", "out_dir", "export_dir"}
    for contract, settings in cfg.per_contract.items():
        wrong = sorted(set(settings) - allowed)
        if wrong:
            raise ValueError(f"per_contract.{contract}: unknown or not per-contract key(s) {wrong}: "
                             f"valid keys are {sorted(allowed)}")  # fmt: skip
    for name, value in dataclasses.asdict(cfg).items():
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            raise ValueError(f"config {name} must not be negative, got {value}")
    return cfg


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
    """Duplicate margin of the greedy policy over the heuristic (1 vs 3), raw points per deal."""
    eval_rules = rules.replace(doubling="off", undoubled_negative="play")
    plan = duplicate_boards(contract, eval_rules, boards, seed)
    sp = SelfPlay(contract, eval_rules, min(len(plan), 256), np.random.default_rng(seed), lambda r: [], 0.0, plan)
    policy = make_policy(net, greedy=True)
    while not sp.finished:
        sp.step(policy)
    return duplicate_margin(sp.results)


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

    def close(self, png: Path, title: str) -> None:
        self.tb.close()
        plot_curve(self.csv_path, png, title)


def plot_curve(csv_path: Path, png: Path, title: str) -> None:
    """Learning curve: duplicate margin over the heuristic and points per deal vs decisions."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not csv_path.exists():
        return
    rows = list(csv.DictReader(csv_path.open()))
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for key, label in (("eval/margin_vs_heuristic", "margin vs heuristic (eval)"),
                       ("charts/points_per_deal", "points per deal (training)")):  # fmt: skip
        pts = [(float(r["decisions"]), float(r["value"])) for r in rows if r["metric"] == key]
        if pts:
            ax.plot(*zip(*pts), marker=".", label=label)
    ax.axhline(0, color="grey", lw=0.5)
    ax.set_xlabel("learner decisions")
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


def finish_run(cfg: Any, directory: Path, contract: str, logger: Logger) -> Path:
    """Close the logs (and draw the curve) of one contract's run; copy its best checkpoint to
    ``cfg.export_dir/<contract>.pt`` if set. Returns the best checkpoint's path."""
    logger.close(directory / "curve.png", contract)
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
    ap.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="override config fields")
    ap.add_argument("--resume", action="store_true", help=resume_help)
    args = ap.parse_args(argv)
    cfg = load_config(cls, args.config, args.set)
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
