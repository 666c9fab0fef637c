"""Paired comparison of two duplicate evaluations played on the same boards.

    barbu-compare RESULTS_A RESULTS_B [RESULTS_A2 RESULTS_B2 ...]

Each argument is a ``barbu-eval --out`` folder (or its ``results.json``). The two runs of a pair must have played
the same boards (seed, mode, line-up, rules, contracts) against the same opponents; only the first agent may differ.
Deal mode compares per contract; match mode per match (a match seed deals the same 28 hands whoever plays: a row
named ``match``). For each contract, the first agent's margin in each run and the mean of the per-board differences
A − B with a Student-t 95% interval: the same boards make the difference far less noisy than the two intervals suggest
(e.g. "is this policy's margin over the heuristic at least PIMC's on the same boards?"). With several pairs (other
seeds, say), each pair's table, then one pooled over every pair's boards, contract by contract.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .report import FILES
from .stats import confidence_interval


def read_results(path: str | Path) -> dict[str, Any]:
    """The summary in a ``barbu-eval --out`` folder or ``results.json``; ``ValueError`` naming the file and why."""
    p = Path(path)
    if p.is_dir():
        p = p / FILES["json"]
    if not p.is_file():
        raise ValueError(f"{str(p)!r} not found: give a barbu-eval --out folder or its {FILES['json']}")
    try:
        data = json.loads(p.read_text())
        if not isinstance(data["config"], dict) or not isinstance(data["boards"], list):
            raise TypeError("config must be a mapping and boards a list")
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{str(p)!r} is not a barbu-eval results file ({e})") from None
    return data


def differences(ca: dict[str, Any], cb: dict[str, Any], keys: Sequence[str]) -> list[str]:
    """The ``keys`` in which run configs ``ca`` and ``cb`` differ, then their opponents (every agent after the first)
    with both values where those differ."""
    diff = [k for k in keys if ca.get(k) != cb.get(k)]
    if ca.get("agents", [])[1:] != cb.get("agents", [])[1:]:
        diff.append(f"opponents ({ca.get('agents', [])[1:]} and {cb.get('agents', [])[1:]})")
    return diff


def paired_margins(a: dict[str, Any], b: dict[str, Any]) -> dict[str, list[tuple[float, float]]]:
    """Per contract of summaries ``a`` and ``b`` (``match`` in match mode): the first agent's margins (a, b) on each
    board both finished. ``ValueError`` when the runs did not play the same boards against the same opponents."""
    ca, cb = a["config"], b["config"]
    diff = differences(ca, cb, ("mode", "seed", "lineup", "rules", "contracts"))
    if diff:
        raise ValueError(f"the two runs did not play the same boards against the same opponents: they differ in "
                         f"{', '.join(diff)}; only the first agent and the number of boards may differ")  # fmt: skip
    rows_b = {(r["contract"].split(":")[0], r["board"]): r for r in b["boards"]}
    by_name: dict[str, list[tuple[float, float]]] = {name: [] for name in ca["contracts"]}
    for r in a["boards"]:
        name = r["contract"].split(":")[0]
        other = rows_b.get((name, r["board"]))
        if other is None:
            continue
        if other["contract"] != r["contract"]:
            raise ValueError(f"board {r['board']} of {name} was dealt differently ({r['contract']!r} and "
                             f"{other['contract']!r}): not the same boards")  # fmt: skip
        by_name.setdefault(name, []).append((r["rel"][0], other["rel"][0]))
    if not any(by_name.values()):
        raise ValueError("the two runs have no finished board in common")
    return by_name


def intervals(by_name: dict[str, list[tuple[float, float]]]) -> dict[str, dict[str, Any]]:
    """Per contract with boards: ``boards``, ``a`` and ``b`` (the intervals of each run's margins) and ``diff`` (the
    interval of a − b, board by board)."""
    return {
        name: {
            "boards": len(pairs),
            "a": confidence_interval([x for x, _ in pairs]),
            "b": confidence_interval([y for _, y in pairs]),
            "diff": confidence_interval([x - y for x, y in pairs]),
        }
        for name, pairs in by_name.items()
        if pairs
    }


def compare(a: dict[str, Any], b: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per contract of summaries ``a`` and ``b``: ``boards`` (those both finished), ``a`` and ``b`` (the
    first agent's per-board margins' intervals on them) and ``diff`` (the interval of a − b, board by board).
    ``ValueError`` when the runs did not play the same boards against the same opponents."""
    return intervals(paired_margins(a, b))


def pooled(runs: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """:func:`compare`'s rows over the boards of several pairs of runs together (each pair on its own boards, e.g.
    another seed), contract by contract: each board's difference counts once, whichever pair it comes from.
    ``ValueError`` when the pairs played against different opponents, line-ups or rules."""
    first = runs[0][0]["config"]
    for i, (a, _) in enumerate(runs[1:], 2):
        diff = differences(first, a["config"], ("mode", "lineup", "rules"))
        if diff:
            raise ValueError(f"pairs 1 and {i} differ in {', '.join(diff)}: pooled margins would mix them")
    by_name: dict[str, list[tuple[float, float]]] = {}
    for a, b in runs:
        for name, pairs in paired_margins(a, b).items():
            by_name.setdefault(name, []).extend(pairs)
    return intervals(by_name)


def markdown(a: dict[str, Any], b: dict[str, Any], rows: dict[str, dict[str, Any]], title: str = "") -> str:
    """The comparison as a Markdown table (points per deal relative to the table mean, 95% CIs); ``title`` replaces
    the heading that names the two runs' agents, seed and line-up."""
    name_a, name_b = a["config"]["agents"][0], b["config"]["agents"][0]
    opp = ", ".join(a["config"]["agents"][1:])
    title = title or (f"barbu-compare: A = {name_a}, B = {name_b}, each vs {opp} (seed {a['config']['seed']}, "
                      f"line-up {a['config']['lineup']})")  # fmt: skip
    lines = [f"# {title}", "",
             "The first agent's points per deal relative to the table mean on the boards both runs finished; "
             "A − B: mean of the per-board differences ± 95% CI half-width (Student t).", "",
             "| contract | boards | A | B | A − B |", "|---|---|---|---|---|"]  # fmt: skip
    for name, r in rows.items():
        cells = [f"{r[k]['mean']:+.2f} ± {r[k]['half_width']:.2f}" for k in ("a", "b", "diff")]
        lines.append(f"| {name} | {r['boards']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", metavar="RESULTS",
                    help="barbu-eval --out folders (or results.json), in pairs: A B [A2 B2 ...], "
                         "each pair on the same boards")  # fmt: skip
    args = ap.parse_args(argv)
    if len(args.runs) < 2 or len(args.runs) % 2:
        raise SystemExit(f"barbu-compare: give the runs in pairs, A B [A2 B2 ...]: got {len(args.runs)} "
                         f"({' '.join(args.runs)})")  # fmt: skip
    try:
        runs = [(read_results(x), read_results(y)) for x, y in zip(args.runs[::2], args.runs[1::2])]
        tables = [markdown(a, b, compare(a, b)) for a, b in runs]
        if len(runs) > 1:
            seeds = ", ".join(str(a["config"]["seed"]) for a, _ in runs)
            tables.append(
                markdown(*runs[0], pooled(runs), f"barbu-compare: pooled over the {len(runs)} pairs (seeds {seeds})")
            )
        print("\n".join(tables), end="")
    except ValueError as e:
        raise SystemExit(f"barbu-compare: {e}") from None


if __name__ == "__main__":
    main()
