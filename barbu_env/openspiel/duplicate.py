"""OpenSpiel's IS-MCTS (and the project's PIMC, for comparison) against the heuristic on duplicate boards.

    python -m barbu_env.openspiel.duplicate --boards 105 --out docs/openspiel_ismcts.json

Board ``i`` is the deal-mode board of ``barbu-eval`` (:func:`barbu_env.evaluation.boards.deal_board`: hands from the
seed, declarer ``i % n``, Trumps/Fantan parameter named by the heuristic) of contract ``contracts[i % k]``,
doubling off (card play only). Each searcher plays it once from every seat, the heuristic in the other seats,
through ``python_barbu`` states. Per board a searcher's number is its mean over seats of (return − the table mean,
contract total / n), the per-board number of ``barbu-eval``'s ``1v3`` line-up; results are the mean over boards
with a 95% Student-t interval, and the mean wall time of its decisions with more than one legal action.

Searcher specs: ``ismcts`` (OpenSpiel's Python ``ISMCTSBot``, options ``simulations`` (default 50), ``uct``
(exploration constant in units of |contract total| / n, default 2), ``rollouts`` (random rollouts per leaf,
default 1)) or any agent spec of :func:`barbu_env.agents.make` (``pimc:samples=16``).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel

from ..agents import parse_spec
from ..evaluation import SEVEN, confidence_interval
from ..evaluation.boards import deal_board, game_seed
from ..rules import OPTION_NAMES, Rules, load_rules
from . import bot, load

ISMCTS_OPTIONS = {"simulations": 50, "uct": 2.0, "rollouts": 1}


def searcher(spec: str, game: pyspiel.Game, seed: int) -> pyspiel.Bot:
    """The bot of a searcher spec (see the module docstring) for ``game``."""
    name, options = parse_spec(spec)
    if name != "ismcts":
        return bot(spec, seed)
    from open_spiel.python.algorithms import ismcts, mcts

    bad = sorted(set(options) - set(ISMCTS_OPTIONS))
    if bad:
        raise ValueError(f"unknown option(s) {bad} for ismcts: valid options are {list(ISMCTS_OPTIONS)}")
    o = {**ISMCTS_OPTIONS, **options}
    rs = np.random.RandomState(seed % 2**32)
    scale = abs(game.utility_sum()) / game.num_players() or 1.0
    evaluator = mcts.RandomRolloutEvaluator(int(o["rollouts"]), rs)
    return ismcts.ISMCTSBot(game, evaluator, float(o["uct"]) * scale, int(o["simulations"]), random_state=rs)


def play(
    game: pyspiel.Game, hands: list[list[int]], bots: list[pyspiel.Bot], timed: int
) -> tuple[list[float], list[float]]:
    """One deal of ``hands`` with ``bots`` by seat: (returns, wall seconds of seat ``timed``'s real choices)."""
    state = game.new_initial_state()
    n = len(hands)
    for k in range(sum(len(h) for h in hands)):
        state.apply_action(hands[k % n][k // n])
    times = []
    while not state.is_terminal():
        p = state.current_player()
        if p == timed and len(state.legal_actions()) > 1:
            t = time.perf_counter()
            action = bots[p].step(state)
            times.append(time.perf_counter() - t)
        else:
            action = bots[p].step(state)
        state.apply_action(int(action))
    return state.returns(), times


def run(
    specs: Sequence[str], boards: int, contracts: Sequence[str] = SEVEN, rules: Rules | None = None, seed: int = 0
) -> dict[str, Any]:
    """Every searcher of ``specs`` on ``boards`` duplicate boards (see the module docstring)."""
    rules = (rules or load_rules()).replace(doubling="off")
    n = rules.players
    options = {k: getattr(rules, k) for k in OPTION_NAMES if getattr(rules, k) != getattr(Rules(), k)}
    games: dict[tuple[str, int], pyspiel.Game] = {}
    per_board: dict[str, list[float]] = {s: [] for s in specs}
    times: dict[str, list[float]] = {s: [] for s in specs}
    for i in range(boards):
        ci = i % len(contracts)
        hands, declarer, text = deal_board(seed, i, contracts[ci], rules)
        key = (text, declarer)
        if key not in games:
            games[key] = load(contract=text, declarer=declarer, **options)
        game = games[key]
        mean = game.utility_sum() / n
        for spec in specs:
            margins = []
            for seat in range(n):
                seeds = [game_seed(seed, ci, i, seat, s) for s in range(n)]
                bots = [searcher(spec, game, seeds[s]) if s == seat else bot("heuristic", seeds[s]) for s in range(n)]
                returns, t = play(game, hands, bots, seat)
                margins.append(returns[seat] - mean)
                times[spec].extend(t)
            per_board[spec].append(float(np.mean(margins)))
    out: dict[str, Any] = {"boards": boards, "contracts": list(contracts), "seed": seed, "doubling": "off", "rows": []}
    for spec in specs:
        out["rows"].append(
            {
                "searcher": spec,
                "margin": confidence_interval(per_board[spec]),
                "ms_per_decision": 1000 * float(np.mean(times[spec])),
                "decisions": len(times[spec]),
            }
        )
    if len(specs) == 2:
        diff = np.subtract(per_board[specs[0]], per_board[specs[1]])
        out["difference"] = {"of": list(specs), "margin": confidence_interval(diff.tolist())}
    return out


def markdown(result: dict[str, Any]) -> str:
    """The result as a Markdown table."""
    lines = [
        "| searcher (vs 3 heuristic seats) | margin per deal, 95% CI | ms per decision | decisions |",
        "|---|---|---|---|",
    ]
    for r in result["rows"]:
        m, ms = r["margin"], r["ms_per_decision"]
        lines.append(f"| `{r['searcher']}` | {m['mean']:+.2f} ± {m['half_width']:.2f} | {ms:.0f} | {r['decisions']} |")
    if "difference" in result:
        d, m = result["difference"], result["difference"]["margin"]
        lines.append(f"\n{d['of'][0]} − {d['of'][1]}, paired by board: {m['mean']:+.2f} ± {m['half_width']:.2f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m barbu_env.openspiel.duplicate", description=__doc__.split("\n")[0])
    parser.add_argument("--searchers", nargs="+", default=["ismcts", "pimc:samples=16"])
    parser.add_argument("--boards", type=int, default=105)
    parser.add_argument("--contracts", nargs="+", default=list(SEVEN))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="also write the result as JSON here")
    args = parser.parse_args(argv)
    result = run(args.searchers, args.boards, args.contracts, seed=args.seed)
    print(markdown(result))
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
