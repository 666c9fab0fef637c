"""Results of a duplicate evaluation: the summary (means and t intervals per contract and agent),
Markdown tables, a bar chart, and the files ``barbu-eval --out`` writes (``results.md``, ``.json``,
``.csv`` with one row per board and agent, ``.png``). A summary of an interrupted run has
``partial: true`` and the boards finished so far; :func:`read_finished` reads them back to resume."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..contracts import contract_table
from ..rules import Rules
from .boards import lineup_for, seatings
from .stats import confidence_interval

if TYPE_CHECKING:
    from .config import EvalConfig

#: The files :func:`write_outputs` writes, by kind.
FILES = {"md": "results.md", "json": "results.json", "csv": "results.csv", "png": "results.png"}


def _labels(agents: Sequence[str]) -> list[str]:
    """Agent labels for tables: the spec, with ``#k`` added when the same spec appears twice."""
    out = []
    for i, a in enumerate(agents):
        out.append(a if agents.count(a) == 1 else f"{a}#{agents[: i + 1].count(a)}")
    return out


def summarise(
    cfg: EvalConfig, results: list[dict[str, Any]], total: int | None = None, notes: Sequence[str] = ()
) -> dict[str, Any]:
    """Per-contract (and overall) means with CIs from the per-board ``results`` (of ``total`` boards in
    the run: fewer make the summary ``partial``); ``notes``: lines shown with the tables."""
    labels = _labels(cfg.agents)
    n_agents = len(labels)
    total = len(results) if total is None else total
    seats = seatings(lineup_for(cfg.lineup, cfg.rules["players"]))
    out: dict[str, Any] = {
        "config": {**asdict(cfg), "seatings": [list(s) for s in seats]},
        "agents": labels,
        "partial": len(results) < total,
        "finished": len(results),
        "total": total,
        "notes": list(notes),
        "contracts": {},
    }
    by_name: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        name = cfg.contracts[0] if cfg.mode == "match" else r["contract"].split(":")[0]
        by_name.setdefault(name, []).append(r)
    for name in cfg.contracts:
        rows = by_name.get(name, [])
        entry: dict[str, Any] = {"boards": len(rows), "agents": {}}
        out["contracts"][name] = entry
        if not rows:
            continue
        for a, label in enumerate(labels):
            ci: dict[str, Any] = {**confidence_interval([r["rel"][a] for r in rows])}
            ci["raw_mean"] = float(np.mean([r["raw"][a] for r in rows]))
            if cfg.mode == "match":
                ci["win_rate"] = confidence_interval([r["win"][a] for r in rows])
            entry["agents"][label] = ci
    if cfg.mode == "deal" and len(cfg.contracts) > 1:
        # the overall number of a board is its mean over the contracts: boards played in all of them
        count: dict[int, int] = {}
        for r in results:
            count[r["board"]] = count.get(r["board"], 0) + 1
        boards = sorted(b for b, k in count.items() if k == len(cfg.contracts))
        per_board = {b: np.zeros(n_agents) for b in boards}
        for r in results:
            if r["board"] in per_board:
                per_board[r["board"]] += np.asarray(r["rel"]) / len(cfg.contracts)
        if boards:
            out["overall"] = {
                label: confidence_interval([per_board[b][a] for b in boards]) for a, label in enumerate(labels)
            }
    if cfg.mode == "match":
        names = list(contract_table(cfg.make_rules()))
        out["by_contract"] = {
            n: {
                label: confidence_interval([r["by_contract"][n][a] for r in results if n in r["by_contract"]])
                for a, label in enumerate(labels)
            }
            for n in names
            if any(n in r["by_contract"] for r in results)
        }
    out["boards"] = results
    return out


def _fmt(ci: dict[str, float], digits: int = 2, sign: bool = True) -> str:
    hw = ci["half_width"]
    m = f"{ci['mean']:+.{digits}f}" if sign else f"{ci['mean']:.{digits}f}"
    return f"{m} ± {hw:.{digits}f}" if hw == hw else m


def markdown(summary: dict[str, Any]) -> str:
    """The results as Markdown tables (points per deal relative to the table mean, 95% CI)."""
    cfg = summary["config"]
    labels = summary["agents"]
    lines = [
        f"# barbu-eval: {' vs '.join(labels)} ({cfg['mode']} mode, line-up {cfg['lineup']}, seed {cfg['seed']})",
        "",
        "Points per deal relative to the table mean, mean over duplicate boards ± 95% CI half-width "
        "(Student t on per-board numbers).",
        "",
    ]
    if summary.get("partial"):
        lines += [f"**PARTIAL RESULTS: the run was interrupted after {summary['finished']} of {summary['total']} "
                  "boards.**", ""]  # fmt: skip
    if cfg["rules"].get("game") == "king":
        lines += ["Barbu King (R11): points are bad, so these numbers are the table mean minus the agent's "
                  "points (higher is better, as in Barbu).", ""]  # fmt: skip
    if cfg["mode"] == "match":
        head = "| | boards | " + " | ".join(f"{lab} pts/deal | {lab} win rate/seat" for lab in labels) + " |"
        lines += [head, "|" + "---|" * (2 + 2 * len(labels))]
        e = summary["contracts"]["match"]
        cells = [f"{_fmt(e['agents'][lab])} | {_fmt(e['agents'][lab]['win_rate'], 3, sign=False)}"
                 if lab in e["agents"] else "— | —" for lab in labels]  # fmt: skip
        lines.append(f"| match | {e['boards']} | " + " | ".join(cells) + " |")
        lines += ["", "By contract (match deals, points per deal relative to the table mean):", ""]
        lines += ["| contract | " + " | ".join(labels) + " |", "|" + "---|" * (1 + len(labels))]
        for name, row in summary.get("by_contract", {}).items():
            lines.append(f"| {name} | " + " | ".join(_fmt(row[lab]) for lab in labels) + " |")
    else:
        lines += ["| contract | boards | " + " | ".join(labels) + " |", "|" + "---|" * (2 + len(labels))]
        for name, e in summary["contracts"].items():
            cells = [_fmt(e["agents"][lab]) if lab in e["agents"] else "—" for lab in labels]
            lines.append(f"| {name} | {e['boards']} | " + " | ".join(cells) + " |")
        if "overall" in summary:
            n = next(iter(summary["overall"].values()))["n"]
            lines.append(f"| **all** | {n} | " + " | ".join(_fmt(summary["overall"][lab]) for lab in labels) + " |")
    if cfg["mode"] == "deal":
        lines += ["", f"Board i is declared by seat i % {cfg['rules']['players']}; Trumps and Fantan are played with "
                  "the trump suit / start rank the heuristic names for the declarer's hand "
                  "(fixed per board)."]  # fmt: skip
    default = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(Rules()).items()}  # as cfg stores them
    rules = {k: v for k, v in cfg["rules"].items() if v != default[k]}
    lines += ["", f"Rules (differences from classic): {rules or 'none'}. Agents: {', '.join(cfg['agents'])}."]
    lines += [f"Note: {note}." for note in summary.get("notes", [])]
    return "\n".join(lines) + "\n"


def plot(summary: dict[str, Any], path: str | Path) -> None:
    """A bar chart with 95% CI error bars per contract and agent (matplotlib, Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = summary["agents"]
    if summary["config"]["mode"] == "match":
        groups = {"match": summary["contracts"]["match"]["agents"], **summary.get("by_contract", {})}
    else:
        groups = {n: e["agents"] for n, e in summary["contracts"].items() if e["agents"]}
        if "overall" in summary:
            groups["all"] = summary["overall"]
    names = list(groups)
    x = np.arange(len(names))
    width = 0.8 / len(labels)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(names) + 2), 4.5))
    if summary["config"]["mode"] == "match" and not groups["match"]:
        names = []
    for a, lab in enumerate(labels):
        means = [groups[n][lab]["mean"] for n in names]
        errs = [np.nan_to_num(groups[n][lab]["half_width"]) for n in names]
        ax.bar(x + (a - (len(labels) - 1) / 2) * width, means, width, yerr=errs, capsize=3, label=lab)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(x)
    ax.set_xticklabels(names, rotation=20)
    ax.set_ylabel("points per deal vs table mean (95% CI)")
    ax.set_title(f"barbu-eval, {summary['config']['mode']} mode, line-up {summary['config']['lineup']}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_csv(summary: dict[str, Any], path: str | Path) -> None:
    """One row per board and agent: contract, board, agent, margin per deal (``rel``), points per deal."""
    with Path(path).open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["contract", "board", "agent", "rel", "raw"])
        for r in summary["boards"]:
            for a, label in enumerate(summary["agents"]):
                w.writerow([r["contract"], r["board"], label, r["rel"][a], r["raw"][a]])


def write_outputs(summary: dict[str, Any], out_dir: str | Path) -> dict[str, Path]:
    """Write :data:`FILES` (``results.md``, ``.json``, ``.csv``, ``.png``) to ``out_dir``."""
    out = check_out_dir(out_dir)
    paths = {kind: out / name for kind, name in FILES.items()}
    paths["md"].write_text(markdown(summary))
    paths["json"].write_text(json.dumps(summary, indent=1))
    write_csv(summary, paths["csv"])
    plot(summary, paths["png"])
    return paths


def check_out_dir(out_dir: str | Path, flag: str = "--out") -> Path:
    """``out_dir``, created if missing; ``ValueError`` naming it (as ``flag``) when it cannot be a writable folder."""
    out = Path(out_dir)
    for p in [out, *out.parents]:
        if p.exists() and not p.is_dir():
            what = "is a file" if p == out else f"is below {str(p)!r}, which is a file"
            raise ValueError(f"bad {flag} {str(out_dir)!r}: it {what}, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"bad {flag} {str(out_dir)!r}: cannot create that folder ({e.strerror or e})") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise ValueError(f"bad {flag} {str(out_dir)!r}: that folder is not writable")
    return out


def read_finished(out_dir: str | Path, cfg: EvalConfig) -> list[dict[str, Any]]:
    """The boards of ``out_dir/results.json`` (an earlier run of ``cfg``, perhaps with fewer boards),
    to resume from; ``ValueError`` if there is none or it evaluated something else."""
    path = Path(out_dir) / FILES["json"]
    if not path.is_file():
        raise ValueError(f"nothing to resume: {str(path)!r} not found (run once with --out to create it)")
    try:
        data = json.loads(path.read_text())
        old = {k: v for k, v in data["config"].items() if k not in ("boards", "seatings")}
        boards = data["boards"]
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"cannot resume from {str(path)!r}: not a barbu-eval results file ({e})") from None
    new = {k: v for k, v in json.loads(json.dumps(asdict(cfg))).items() if k != "boards"}
    diff = sorted(k for k in new.keys() | old.keys() if new.get(k) != old.get(k))
    if diff:
        raise ValueError(f"cannot resume from {str(path)!r}: it evaluated different {diff} (give the same arguments)")
    return boards
