"""Evaluate a folder of per-contract checkpoints against baselines and record it in its manifest.

    python -m training.evaluate_checkpoints --dir checkpoints --boards 2000 --baselines random heuristic

Runs :func:`training.common.final_table` (duplicate evaluation, 1 policy vs 3 copies of each
baseline, seats rotated, doubling off) for every ``<contract>.pt`` in ``--dir``, prints the table,
writes ``evaluation.md`` there and stores the numbers under ``evaluation`` in ``MANIFEST.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from barbu_env.nn import load_checkpoint

from .common import final_table


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default="checkpoints", help="folder of <contract>.pt files")
    ap.add_argument("--boards", type=int, default=2000, help="duplicate boards per contract and baseline")
    ap.add_argument("--baselines", nargs="+", default=["random", "heuristic"], help="agent specs")
    ap.add_argument("--seed", type=int, default=12345, help="board seed (keep it apart from training's)")
    ap.add_argument("--rules", default="classic", help="rule preset the deals are played under")
    ap.add_argument("--workers", type=int, default=1, help="processes (results do not depend on it)")
    args = ap.parse_args(argv)
    folder = Path(args.dir)
    paths = {load_checkpoint(p)[1]["contract"]: p for p in sorted(folder.glob("*.pt"))}
    if not paths:
        raise SystemExit(f"no checkpoint (*.pt) in {str(folder)!r}")
    t0 = time.time()
    table, results = final_table(paths, args.boards, args.seed, args.rules, tuple(args.baselines), args.workers)
    print(table)
    (folder / "evaluation.md").write_text(table)
    manifest = folder / "MANIFEST.json"
    data = json.loads(manifest.read_text()) if manifest.is_file() else {}
    data.setdefault("evaluations", []).append(
        {"command": "python -m training.evaluate_checkpoints " + " ".join(argv if argv is not None else sys.argv[1:]),
         "boards": args.boards, "seed": args.seed, "seconds": round(time.time() - t0), "results": results}
    )  # fmt: skip
    manifest.write_text(json.dumps(data, indent=1, default=float) + "\n")


if __name__ == "__main__":
    main()
