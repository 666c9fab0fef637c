"""``barbu-play``: a deal or a match in the terminal against agents (drawn with ``rich``).

``barbu-play --seat 0 --agents heuristic pimc checkpoints --mode match --rules classic``. The human seat's
hand is shown by suit, the legal actions numbered and named, with the trick, contract, doubles and scores.
A move is its number or its name (``QS``, ``10d``, ``declare:no_queens``, ``double:left``); ``h`` asks the
``--hint`` agent, ``q`` stops. Anything else is answered with the legal choices and nothing is lost. The
game is saved as a record (:mod:`barbu_env.records`) when it ends or stops. Input is read line by line
from standard input, so a script can play it (``barbu-play < moves.txt``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from rich.columns import Columns
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..env import MODES
from ..rules import load_rules
from .game import Game, IllegalMove

SYMBOLS = {"S": ("♠", "bold"), "H": ("♥", "bold red"), "D": ("♦", "bold red"), "C": ("♣", "bold")}
HELP = "a number or a name from the list (QS, 10D, declare:no_queens, double:left); h = hint; q = save and quit"


def card_text(card: str) -> Text:
    """A card such as ``QS`` as ``Q♠`` in its suit's colour."""
    symbol, style = SYMBOLS[card[-1]]
    return Text(card[:-1].replace("T", "10") + symbol, style=style)


RELATIVE = ("left", "across", "right")  # R1.3: seat + 1, + 2, + 3


def action_text(name: str, seat: int | None = None, players: int = 4) -> Text:
    """An action name for display: cards with their suit symbol; a double by ``seat`` with the seats it
    doubles (``double:left (P1)`` at four seats, R6; ``double:+1+2 (P1 P2)`` at ``players`` seats, R12.2);
    other actions as named."""
    if len(name) == 2 and name[-1] in SYMBOLS:
        return card_text(name)
    if seat is not None and name.startswith("double:") and name != "double:none":
        offsets = [RELATIVE.index(r) + 1 if r in RELATIVE else int(r) for r in name[7:].split("+") if r]
        targets = [f"P{(seat + k) % players}" for k in offsets]
        return Text(f"{name} ({' '.join(targets)})")
    return Text(name)


def _join(parts: list[Text], sep: str = " ") -> Text:
    return Text(sep).join(parts)


def seat_name(seat: int, game: Game) -> str:
    return "you" if seat == game.seat else f"P{seat} {game.players[seat]}"


def table_of(view: dict[str, Any], game: Game) -> Table:
    """The seats' counters: cards left, tricks, points, passes in Fantan, totals in a match."""
    t = Table(box=None, pad_edge=False, show_edge=False)
    for col in ("seat", "cards", "tricks", "points", *(["passes"] if view["phase"] == "fantan" else [])):
        t.add_column(col, justify="right" if col != "seat" else "left")
    match = view["match"]
    if match is not None:
        t.add_column("total", justify="right")
    for s in range(view["players"]):
        mark = "▶ " if s == view["to_move"] else "  "
        row = [mark + seat_name(s, game), str(view["hand_sizes"][s]), str(view["tricks_won"][s])]
        row.append(f"{view['points'][s]:+d}")
        if view["phase"] == "fantan":
            row.append(str(view["passes"][s]))
        if match is not None:
            row.append(f"{match['totals'][s]:+d}")
        t.add_row(*row)
    return t


def render(view: dict[str, Any], game: Game) -> list[Any]:
    """The screen for the human seat: header, trick, seats, hand and numbered legal actions."""
    out: list[Any] = []
    match = view["match"]
    head = Text()
    if view["king"]:
        head.append("Barbu King: points are bad, the lowest total wins\n")
    if match is not None:
        head.append(f"deal {match['deal_no'] + 1}/{match['num_deals']}   ", style="bold")
    contract = view["contract"] or "(to be declared)"
    head.append(f"contract {contract}   declarer {seat_name(view['declarer'], game)}")
    out.append(head)
    if view["doubles"]:
        out.append(Text("doubles: " + "  ".join(f"P{s}→P{t}" for s, t in view["doubles"])))
    if view["layout"] and any(view["layout"]):
        runs = [_join([card_text(lo), Text(".."), card_text(hi)], "") for lo, hi in filter(None, view["layout"])]
        out.append(Text("layout: ").append(_join(runs, "  ")))
    if view["trick"]:
        out.append(Text("trick: ").append(trick_text(view["trick"])))
    elif view["last_trick"]:
        lt = view["last_trick"]
        out.append(Text("last trick: ").append(trick_text(lt["cards"])).append(f"  → P{lt['winner']}"))
    out.append(table_of(view, game))
    out.append(Text("your hand: ").append(_join([card_text(c) for c in view["hand"]]) if view["hand"] else Text("-")))
    if view["legal"]:
        out.append(choices(view["legal"], view["seat"], view["players"]))
    return out


def trick_text(cards: list[list[Any]]) -> Text:
    """A trick's ``[seat, card]`` pairs as ``P1 Q♠  P2 4♠``."""
    return _join([Text(f"P{s} ").append(card_text(c)) for s, c in cards], "  ")


def choices(legal: list[str], seat: int, players: int = 4) -> Columns:
    """The legal actions of ``seat`` (of ``players`` seats), numbered from 1, in columns."""
    items = [Text(f"{i:>2}) ").append(action_text(a, seat, players)) for i, a in enumerate(legal, 1)]
    return Columns(items, padding=(0, 3))


def describe(seat: int, action: str, game: Game) -> Text:
    return Text(f"{seat_name(seat, game)}: ").append(action_text(action, seat, game.raw.num_players))


def deal_summary(view: dict[str, Any], game: Game) -> Text:
    scores = view["scores"]
    line = Text(f"deal over ({view['contract']}): ", style="bold")
    line.append("  ".join(f"{seat_name(s, game)} {v:+d}" for s, v in enumerate(scores)))
    return line


def parse_move(line: str, legal: list[str]) -> str:
    """A legal action name from what the human typed: a number from the list or an action name."""
    text = line.strip()
    if text.isdigit():
        i = int(text)
        if 1 <= i <= len(legal):
            return legal[i - 1]
        raise IllegalMove(f"no choice {i}: choose 1..{len(legal)}", legal)
    return text


def run(game: Game, lines: TextIO, console: Console, save: Path | None) -> Path | None:
    """Play ``game`` reading the human's moves from ``lines``; returns the record's path (None: not saved)."""

    def show(events: list[Any]) -> None:
        for e in events:
            console.print(describe(e.seat, e.action, game))
            if e.view["scores"] is not None:
                console.print(deal_summary(e.view, game))

    show(game.advance())
    while not game.over:
        console.print()
        for part in render(game.view(), game):
            console.print(part)
        console.print("your move > ", end="")
        line = lines.readline()
        if not line:  # end of input: stop here, the record keeps the game so far
            console.print("\n(end of input)")
            break
        line = line.strip()
        if not lines.isatty():
            console.print(line, highlight=False)  # a scripted move, shown as if typed
        if line.lower() in ("q", "quit"):
            break
        if line.lower() in ("h", "hint"):
            hint = game.hint()
            if hint is None or game.hinter is None:
                console.print("no hint: start barbu-play with --hint SPEC (e.g. --hint pimc)")
            else:
                number = game.legal().index(hint) + 1
                shown = action_text(hint, game.seat, game.raw.num_players)
                console.print(Text(f"hint ({game.hinter.spec}): {number}) ").append(shown))
            continue
        if line in ("", "?", "help"):
            console.print(HELP)
            continue
        legal = game.legal()
        try:
            show(game.play(parse_move(line, legal)))
        except IllegalMove as e:
            console.print(Text(e.reason, style="yellow"))
            console.print("legal choices:")
            console.print(choices(legal, game.seat, game.raw.num_players))
    rec = game.record
    if rec.finished and rec.kind == "match":
        winners = ", ".join(seat_name(s, game) for s in rec.winners or ())
        console.print(Text(f"match over: totals {rec.totals}, winner(s): {winners}", style="bold"))
    if save is None:
        return None
    path = game.env.save(save)
    console.print(f"record saved to {path}")
    return path


def default_record_path(mode: str) -> Path:
    return Path("barbu_games") / f"{time.strftime('%Y%m%d-%H%M%S')}-{mode}.json"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="barbu-play", description="Play Barbu in the terminal against agents.")
    p.add_argument("--seat", type=int, default=0, help="your seat (0..3; default 0)")
    p.add_argument("--agents", nargs="+", default=["heuristic"],
                   help="agent specs of the other seats: one for all or one per seat (random, heuristic, "
                        "pimc:samples=16, checkpoints, path.pt, your own as module:Name or file.py:Name)")  # fmt: skip
    p.add_argument("--mode", choices=MODES, default="deal", help="one deal or a whole match (default deal)")
    p.add_argument("--rules", default="classic", help="a preset name or a YAML file (default classic)")
    p.add_argument("--contract", default=None, help="deal mode: fix the contract (no_queens, trumps:S, fantan:5)")
    p.add_argument("--declarer", type=int, default=0, help="the declarer (deal) or first declarer (match)")
    p.add_argument("--seed", type=int, default=None, help="seed of the shuffle and the agents")
    p.add_argument("--hint", default=None, metavar="SPEC", help="an agent whose move 'h' shows (e.g. pimc)")
    p.add_argument("--save", type=Path, default=None, help="record file (default barbu_games/<time>-<mode>.json)")
    p.add_argument("--no-save", action="store_true", help="do not save the record")
    return p


def main(argv: Sequence[str] | None = None, stdin: TextIO | None = None, console: Console | None = None) -> int:
    args = build_parser().parse_args(argv)
    console = console or Console(highlight=False)
    try:
        rules = load_rules(args.rules)
        if args.contract is not None and args.mode != "deal":
            raise ValueError("--contract fixes one deal's contract: use it with --mode deal")
        game = Game(args.seat, args.agents, args.mode, rules, args.contract, args.declarer, args.seed, args.hint)
    except ValueError as e:
        console.print(f"barbu-play: {e}", style="red")
        return 2
    if args.mode == "match":
        console.print(f"a match of {game.raw.match.num_deals} deals under {args.rules!r}; you are P{args.seat}")
    save = None if args.no_save else (args.save or default_record_path(args.mode))
    run(game, stdin or sys.stdin, console, save)
    return 0


if __name__ == "__main__":
    sys.exit(main())
