"""The ``barbu-eval`` command: argument parsing and :func:`main`.

Every argument is checked before a board is played (bad ones: one line on stderr, exit status 2),
the ``--out`` folder included. Ctrl-C stops the run: the boards finished so far are printed and
written (marked partial) and ``--resume`` with the same arguments plays only the rest (exit 130).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any, NoReturn

from ..options import rule_option_arg
from .batched import ENGINES, select_engine
from .boards import LINEUPS, MODES
from .config import fallback_notes, make_config
from .report import check_out_dir, markdown, read_finished, write_outputs
from .runner import EvaluationInterrupted, run

DEFAULT_DEALS, DEFAULT_MATCHES = 200, 20


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"bad number {text!r}: expected an integer >= 1")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"bad seed {text!r}: expected an integer >= 0")
    return value


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="barbu-eval",
        description="Duplicate evaluation of Barbu agents with 95%% confidence intervals.",
        epilog="Example: barbu-eval --agents heuristic random --contract no_queens --deals 1000 --seed 0 --out DIR",
    )
    p.add_argument("--agents", nargs="+", required=True,
                   help="agent specs: random, heuristic, pimc[:samples=N], a checkpoint path, or your own agent as "
                        "module:Name or file.py:Name")  # fmt: skip
    p.add_argument("--mode", choices=MODES, default="deal", help="one deal per board, or full matches")
    p.add_argument("--contract", nargs="+", default=None,
                   help="deal mode: contract name(s) or 'all' (default: every contract of the rules)")  # fmt: skip
    p.add_argument("--deals", type=_positive, default=None,
                   help=f"boards per contract (deal mode, default {DEFAULT_DEALS})")  # fmt: skip
    p.add_argument("--matches", type=_positive, default=None,
                   help=f"boards = matches (match mode, default {DEFAULT_MATCHES})")  # fmt: skip
    p.add_argument("--seed", type=_seed, default=0)
    p.add_argument("--lineup", choices=list(LINEUPS), default="1v3",
                   help="1v3: first agent vs three copies of the second; 2v2: alternating; 4: four agents")  # fmt: skip
    p.add_argument("--workers", type=_positive, default=1,
                   help="processes: the python engine's games, the batched engine's parts of at least 1000 boards "
                        "(results do not depend on it)")  # fmt: skip
    p.add_argument("--engine", choices=ENGINES, default="auto",
                   help="batched: deal-mode boards on the compiled engine (heuristic, random and greedy checkpoint "
                        "agents); python: through the env, one game at a time (any agent, match mode); auto "
                        "(default): batched where it can play the evaluation. Results do not depend on it")  # fmt: skip
    p.add_argument("--rules", default=None, help="rules preset name or YAML file (default classic)")
    p.add_argument("--rule", type=rule_option_arg, action="append", default=[], metavar="KEY=VALUE",
                   help="rule option override, repeatable (e.g. --rule overtrump=yes)")  # fmt: skip
    p.add_argument("--doubling", choices=("classic", "declarer_only", "off"), default=None,
                   help="doubling rule (default: off in deal mode, the rules' own in match mode)")  # fmt: skip
    p.add_argument("--out", default=None, help="folder for results.md / .json / .csv / .png")
    p.add_argument("--resume", action="store_true",
                   help="play only the boards missing from --out's results.json (same arguments, "
                        "perhaps more boards)")  # fmt: skip
    p.add_argument("--save-games", default=None, metavar="DIR",
                   help="write every game played as a game record (barbu_env.records) to DIR; plays on the "
                        "python engine")  # fmt: skip
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)  # unwinds the worker pool's context manager, which stops the workers


def _boards(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """The number of boards; flags of the other mode are errors."""
    if args.mode == "match":
        wrong = [f for f, v in (("--deals", args.deals), ("--contract", args.contract)) if v is not None]
        if wrong:
            verb = "apply" if len(wrong) > 1 else "applies"
            p.error(f"{' and '.join(wrong)} {verb} to deal mode only: match mode plays whole matches (use --matches N)")
        return args.matches or DEFAULT_MATCHES
    if args.matches is not None:
        p.error("--matches applies to match mode only: deal mode plays --deals N boards per contract")
    return args.deals or DEFAULT_DEALS


def main(argv: Sequence[str] | None = None) -> int:
    """The ``barbu-eval`` command (see ``barbu-eval --help``); returns the exit status."""
    p = build_parser()
    args = p.parse_args(argv)
    boards = _boards(p, args)
    if args.resume and not args.out:
        p.error("--resume needs --out: the folder whose results.json it resumes")
    rule_options = dict(args.rule)
    if args.doubling is not None:
        rule_options["doubling"] = args.doubling
    contracts: str | list[str] = "all" if args.contract in (None, ["all"]) else args.contract
    try:
        cfg, made = make_config(args.agents, args.mode, contracts, boards, args.seed, args.lineup, args.rules,
                                **rule_options)  # fmt: skip
        finished = read_finished(args.out, cfg) if args.resume else []
        if args.out:
            check_out_dir(args.out)
        if args.save_games is not None:
            check_out_dir(args.save_games, "--save-games")
            if args.engine == "batched":
                raise ValueError("--save-games records games through the env: use --engine python or auto")
        engine, why = select_engine(cfg, "python" if args.save_games else args.engine, made)
        if args.save_games and args.engine == "auto":
            why = "--save-games records every game through the env"
    except (ValueError, TypeError) as e:
        print(f"barbu-eval: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("barbu-eval: interrupted before any board was played", file=sys.stderr)
        return 130
    notes = fallback_notes(cfg, made)
    for note in notes:
        print(f"barbu-eval: note: {note}", file=sys.stderr)
    print(f"barbu-eval: engine: {engine} ({why})", file=sys.stderr)
    if args.workers > 1 and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        summary = run(
            cfg,
            args.workers,
            not args.no_progress,
            finished,
            notes,
            engine=engine,
            agents=made,
            save_games=args.save_games,
        )
    except EvaluationInterrupted as e:
        summary = e.summary
    print(markdown(summary))
    if args.out:
        paths = write_outputs(summary, args.out)
        print("wrote " + ", ".join(str(p) for p in paths.values()))
    if summary["partial"]:
        done = f"{summary['finished']} of {summary['total']} boards finished"
        if args.out:
            how = f"written to {args.out!r} (marked partial); add --resume to the same command to play the rest"
        else:
            how = "not saved (no --out); rerun with --out DIR to keep results, then --resume to continue them"
        print(f"barbu-eval: interrupted: {done}, {how}", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
