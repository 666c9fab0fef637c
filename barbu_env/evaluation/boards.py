"""The duplicate core: boards from a seed, seatings of a line-up, and each agent's per-board margin.

A board is one deal (deal mode) or one match seed (match mode), replayed once per seating. A seating
puts the agents of a line-up in the seats (``seating[seat]`` = agent index); the seatings of a board
are the distinct rotations of the line-up, so each agent holds each hand equally often. Playing is
someone else's job: :func:`duplicate` takes the boards, the seatings and a :data:`PlayFn` that plays
them (the env runner of :mod:`.runner`, training's batched self-play, a vectorised engine) and turns
each board's games into per-agent margins: the mean over the agent's seats and seatings of its score
minus the table mean, per deal, times ``rules.score_sign`` (R11: in Barbu King points are bad).

Board ``i`` depends only on ``(seed, i)``: the same hands for every contract, the declarer seat
``i % players``; Trumps and Fantan get the trump suit / start rank the heuristic names for the
declarer's hand, so every seating plays the same contract and only card play is compared. A match-mode
board is a match seed: deal ``k`` of the match is the ``k``-th shuffle of ``np.random.default_rng(seed)``
(``Match`` draws from its generator only to deal), so every seating gets the same 28 deals, whatever
the agents declare, double or play (``tests/test_match_duplicate.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..agents.heuristic import best_fantan_rank, best_trump
from ..cards import RANKS, SUITS, copies_cards
from ..engine.deal import deal_hands
from ..engine.match import DealRecord
from ..rules import Rules

#: Line-ups: which agent (by index in the ``agents`` list) sits in seats 0..3 before rotation.
LINEUPS: dict[str, tuple[int, ...]] = {"1v3": (0, 1, 1, 1), "2v2": (0, 1, 0, 1), "4": (0, 1, 2, 3)}
MODES = ("deal", "match")
#: ``seating[seat]`` = index of the agent in that seat.
Seating = tuple[int, ...]
#: Doubling outcomes of a pair of seats, from one seat's side (R6.3, R6.5): it doubled the other (unanswered),
#: the other doubled it (unanswered), or a double and a redouble between them.
DOUBLING_OUTCOMES = ("doubled", "was_doubled", "redoubled")


@dataclass(frozen=True)
class Board:
    """One board: ``contract_idx``/``contract`` (``"match"`` in match mode) and its number ``index``;
    deal mode: ``hands`` (card bitmasks), ``declarer`` and ``text`` (``"trumps:S"``); match mode: ``seed``."""

    contract_idx: int
    contract: str
    index: int
    text: str
    hands: tuple[int, ...] = ()
    declarer: int = -1
    seed: int | None = None

    @property
    def key(self) -> tuple[str, int]:
        """``(contract, index)``: what identifies a board's result in a run."""
        return self.contract, self.index

    def reset_kwargs(self) -> dict[str, Any]:
        """``env.reset`` keyword arguments that set this board up."""
        if self.seed is not None:
            return {"seed": self.seed, "options": {}}
        options = {"hands": [copies_cards(h) for h in self.hands], "declarer": self.declarer, "contract": self.text}
        return {"seed": None, "options": options}


@dataclass
class Game:
    """One seating of a board, played: per-seat ``scores`` (match mode: totals over ``deals`` deals),
    match mode's winning seats and each deal's record (contract, doubles, contract scores, scores)."""

    seating: Seating
    scores: list[float]
    deals: int = 1
    winners: list[int] = field(default_factory=list)
    records: list[DealRecord] = field(default_factory=list)


#: Plays every seating of each board: ``play(boards, seatings)`` yields ``(board, games)``, one game
#: per seating in the order given, boards in any order.
PlayFn = Callable[[Sequence[Board], Sequence[Seating]], Iterable[tuple[Board, list[Game]]]]


def seatings(lineup: Sequence[int]) -> list[Seating]:
    """The distinct rotations of a line-up: ``seating[seat]`` = index of the agent in that seat."""
    n = len(lineup)
    if n not in (3, 4, 5, 6):
        raise ValueError(
            f"a line-up names the agent of each seat, 3, 4, 5 or 6 of them (R11.4, R11.5, R12.1), got {lineup!r}"
        )
    out: list[Seating] = []
    for r in range(n):
        s = tuple(lineup[(seat + r) % n] for seat in range(n))
        if s not in out:
            out.append(s)
    return out


def lineup_for(name: str, players: int) -> tuple[int, ...]:
    """``LINEUPS[name]`` for 4 seats; for 3, 5 or 6 seats (R11.4, R11.5, R12.1): one agent vs the rest, alternating,
    or one each."""
    if name not in LINEUPS:
        raise ValueError(f"unknown line-up {name!r}: expected one of {list(LINEUPS)}")
    if players == 4:
        return LINEUPS[name]
    if name == "1v3":
        return (0,) + (1,) * (players - 1)
    if name == "2v2":
        return tuple(i % 2 for i in range(players))
    return tuple(range(players))


def lineup_of(name: str, num_agents: int, players: int = 4) -> tuple[int, ...]:
    """The line-up for ``--lineup``, checked against the number of agents given."""
    lineup = lineup_for(name, players)
    need = max(lineup) + 1
    if num_agents != need:
        raise ValueError(f"line-up {name!r} needs {need} agents, got {num_agents}")
    return lineup


def board_seed(seed: int, board: int) -> np.random.SeedSequence:
    """The seed sequence of board ``board`` (shared by every contract of a run)."""
    return np.random.SeedSequence([seed, board])


def game_seed(seed: int, contract_idx: int, board: int, seating: int, seat: int) -> int:
    """Seed of the agent in ``seat`` for one game (independent of workers and run order)."""
    return int(np.random.SeedSequence([seed, 1 + contract_idx, board, seating, seat]).generate_state(1)[0])


def deal_board(seed: int, board: int, contract: str, rules: Rules) -> tuple[list[list[int]], int, str]:
    """``(hands as card lists, declarer, contract text)`` of a deal-mode board (see :func:`make_board`)."""
    b = make_board(seed, 0, contract, board, rules)
    return [copies_cards(h) for h in b.hands], b.declarer, b.text  # (a card held twice listed twice, R11.5)


def make_board(seed: int, contract_idx: int, contract: str, index: int, rules: Rules) -> Board:
    """Board ``index`` of a run: deal mode (a contract name) or match mode (``contract="match"``)."""
    if contract == "match":
        return Board(contract_idx, contract, index, contract, seed=int(board_seed(seed, index).generate_state(1)[0]))
    hands = deal_hands(np.random.default_rng(board_seed(seed, index)), rules)
    declarer = index % rules.players
    text = named_contract(contract, hands[declarer], rules)
    return Board(contract_idx, contract, index, text, tuple(int(h) for h in hands), declarer)


def named_contract(contract: str, hand: int, rules: Rules) -> str:
    """The contract text a deal-mode board plays: Trumps and Fantan with the trump suit / start rank the heuristic
    names for the declarer's ``hand`` (R3.2), other contracts as they are."""
    if contract == "trumps":
        return "trumps:" + SUITS[best_trump(hand)]
    if contract == "fantan":
        return "fantan:" + RANKS[best_fantan_rank(hand, rules.deck)]
    return contract


def make_boards(seed: int, contracts: Sequence[str], boards: int, rules: Rules) -> list[Board]:
    """Boards ``0 .. boards-1`` of each contract, contract by contract."""
    return [make_board(seed, ci, c, b, rules) for ci, c in enumerate(contracts) for b in range(boards)]


def settlement_by_outcome(rec: DealRecord, seat: int) -> dict[str, int]:
    """``seat``'s settlement points of one deal (R6.5) split by the doubling outcome of each pair it is in
    (:data:`DOUBLING_OUTCOMES`); the parts add up to ``rec.settlement[seat]``."""
    out = dict.fromkeys(DOUBLING_OUTCOMES, 0)
    cs = rec.contract_scores
    for t in range(len(cs)):
        mine, theirs = rec.doubles[seat] >> t & 1, rec.doubles[t] >> seat & 1
        if t == seat or not mine | theirs:
            continue
        key = "redoubled" if mine and theirs else "doubled" if mine else "was_doubled"
        out[key] += (mine + theirs) * (cs[seat] - cs[t])
    return out


def board_result(board: Board, games: Sequence[Game], num_agents: int, sign: int = 1) -> dict[str, Any]:
    """Per-agent numbers of one board from its games: ``rel`` (margin over the table mean per deal,
    times ``sign``), ``raw`` (points per deal); match mode adds ``win`` (share of wins per seat),
    ``by_contract`` (margin per deal of each contract name), ``settlement`` (settlement points per deal, R6.5,
    times ``sign``: zero-sum, so also a margin) and ``by_doubling`` (those points split by
    :func:`settlement_by_outcome`)."""
    rel = [0.0] * num_agents  # plain floats: a board's few numbers are summed faster than in numpy arrays
    raw = [0.0] * num_agents
    seats_of = [0] * num_agents
    wins = [0.0] * num_agents
    by_contract: dict[str, list[float]] = {}
    by_doubling = {key: [0.0] * num_agents for key in DOUBLING_OUTCOMES}
    for g in games:
        n = len(g.seating)
        for s in g.winners:
            wins[g.seating[s]] += 1 / len(g.winners)
        for rec in g.records:
            scores = rec.scores
            mean = sum(scores) / n
            row = by_contract.setdefault(rec.contract.split(":")[0], [0.0] * (2 * num_agents))
            for s in range(n):
                row[g.seating[s]] += sign * (scores[s] - mean)
                row[num_agents + g.seating[s]] += 1
                for key, points in settlement_by_outcome(rec, s).items():
                    by_doubling[key][g.seating[s]] += sign * points / g.deals
        mean = sum(g.scores) / n
        for s in range(n):
            a = g.seating[s]
            rel[a] += sign * (g.scores[s] - mean) / g.deals
            raw[a] += g.scores[s] / g.deals
            seats_of[a] += 1
    out: dict[str, Any] = {
        "contract": board.text,
        "board": board.index,
        "rel": [x / k for x, k in zip(rel, seats_of)],
        "raw": [x / k for x, k in zip(raw, seats_of)],
        "games": [{"seating": list(g.seating), "scores": list(g.scores)} for g in games],
    }
    if board.seed is not None:
        out["win"] = [x / k for x, k in zip(wins, seats_of)]
        out["by_contract"] = {
            name: [row[a] / row[num_agents + a] for a in range(num_agents)] for name, row in by_contract.items()
        }
        out["by_doubling"] = {key: [x / k for x, k in zip(row, seats_of)] for key, row in by_doubling.items()}
        out["settlement"] = [sum(out["by_doubling"][key][a] for key in DOUBLING_OUTCOMES) for a in range(num_agents)]
    return out


def duplicate(
    boards: Sequence[Board], seats: Sequence[Seating], play: PlayFn, num_agents: int, sign: int = 1
) -> Iterator[tuple[Board, dict[str, Any]]]:
    """Play ``boards`` in every seating of ``seats`` with ``play``; yields ``(board, board_result)`` as
    boards finish (in the order ``play`` yields them)."""
    for board, games in play(boards, seats):
        if [tuple(g.seating) for g in games] != [tuple(s) for s in seats]:
            raise ValueError(f"board {board.key}: the games' seatings {[g.seating for g in games]} are not {seats}")
        yield board, board_result(board, games, num_agents, sign)
