"""Contracts as data (RULES.md R4, R7, R9, R10, R11).

A :class:`Contract` is a record: how the deal is played (tricks or Fantan), whether a trump suit is
named, the hearts-lead restriction, how captured cards and trick positions score, and when the deal
may stop early. Scoring is one function over captured cards and trick winners (see
:meth:`Contract.trick_points`), so No tricks, No hearts, No queens, No King, No last two, Salad and
Ravage City are rows of one table, built per scoring preset by :func:`contract_table`. Barbu King's
eight contracts (R11.2, R11.4) are more rows, built for ``rules.game == "king"``; their points keep the
game's sign (positive = bad for the taker, R11) and ``positive`` marks the contracts where scoring is
good for the taker (Take tricks) or mixed (Domino), as seed 001 names them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from typing import TypedDict

from .cards import ACE_OF_HEARTS, HEARTS, KING_OF_HEARTS, QUEENS, SUIT_MASK
from .rules import Rules

TRICKS, FANTAN = "tricks", "fantan"

#: Contract names in action order (R3.3); ``take_tricks`` and ``no_first_last`` are Barbu King's.
CONTRACT_NAMES: tuple[str, ...] = (
    "no_tricks",
    "no_hearts",
    "no_queens",
    "no_king",
    "no_last_two",
    "ravage_city",
    "salad",
    "trumps",
    "fantan",
    "take_tricks",
    "no_first_last",
)

#: R10.3: the negative Salad, played beside a positive one (``positive`` holding ``salad``). Not in
#: :data:`CONTRACT_NAMES`: its declare action follows the doubling ones (:data:`barbu_env.actions.ANTI_SALAD`).
ANTI_SALAD = "anti_salad"

#: The seven contracts of classic Barbu (R4), in table order: the rows of ``contract_table(Rules())``.
CLASSIC_CONTRACTS: tuple[str, ...] = (
    "no_tricks", "no_hearts", "no_queens", "no_king", "no_last_two", "trumps", "fantan",
)  # fmt: skip


@dataclass(frozen=True)
class Contract:
    """One contract of a scoring preset; all point values are per player."""

    name: str
    play: str = TRICKS  # TRICKS (R5) or FANTAN (R7)
    positive: bool = False  # sign of the contract (R4); decides who may be doubled (R6.2)
    trumps: bool = False  # a trump suit is named at declaration (R3.2)
    hearts_lead: bool = False  # the hearts-lead restriction of R4.1 applies
    per_trick: int = 0  # points per trick taken
    card_points: tuple[tuple[int, int], ...] = ()  # (card mask, points per card of it taken)
    position_points: tuple[tuple[int, int], ...] = ()  # (trick index, negative from the end; points)
    ravage: int = 0  # R9.1: points shared by the largest single-suit count(s)
    end_when_captured: int = 0  # R4.2/R4.3: the deal ends once all these cards are captured
    fantan_points: tuple[int, ...] = ()  # R7.4 / R11.2: by finishing order, one entry per player

    def card_values(self) -> tuple[int, ...]:
        """Points for capturing each card id (52 entries; empty when no card scores)."""
        return _card_values(self.card_points)

    def position_values(self, num_tricks: int) -> tuple[int, ...]:
        """Points for winning each trick index, beyond ``per_trick`` and the cards in it."""
        return _position_values(self.position_points, num_tricks)

    def total(self, rules: Rules) -> int:
        """The sum of all players' scores over one deal of this contract (E5)."""
        if self.play == FANTAN:
            return sum(self.fantan_points)
        deck, deck2 = rules.deck, rules.deck2  # deck2: the second copies of six-player King (R11.5)
        cards = sum(pts * ((mask & deck).bit_count() + (mask & deck2).bit_count()) for mask, pts in self.card_points)
        n = rules.hand_size
        return self.per_trick * n + cards + sum(self.position_values(n)) + self.ravage

    def scale(self, rules: Rules) -> float:
        """``|total|`` (1 where the total is 0): the unit the rewards of ``normalize=True`` and the trainers' value
        targets are measured in."""
        return float(max(abs(self.total(rules)), 1))


@cache
def _card_values(card_points: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
    if not card_points:
        return ()
    values = [0] * 52
    for mask, pts in card_points:
        for c in range(52):
            if mask >> c & 1:
                values[c] += pts
    return tuple(values)


@cache
def _position_values(position_points: tuple[tuple[int, int], ...], num_tricks: int) -> tuple[int, ...]:
    values = [0] * num_tricks
    for idx, pts in position_points:
        values[idx % num_tricks] += pts
    return tuple(values)


class _Scoring(TypedDict):
    """One scoring table (R10.1): tricks, heart, ace of hearts extra, queen, K♥, 12th, 13th, fantan, trumps."""

    trick: int
    heart: int
    ace_h: int
    queen: int
    king: int
    pen: int
    last: int
    fantan: tuple[int, ...]
    trump: int


_TABLES: dict[str, _Scoring] = {
    "classic": _Scoring(trick=-2, heart=-2, ace_h=-4, queen=-6, king=-20, pen=-10, last=-20,
                        fantan=(45, 20, 5, -5), trump=5),
    "basic52": _Scoring(trick=-1, heart=-1, ace_h=0, queen=-3, king=-12, pen=-4, last=-8,
                        fantan=(25, 15, 5, 0), trump=3),
    "basic32": _Scoring(trick=-1, heart=-1, ace_h=0, queen=-2, king=-8, pen=-3, last=-5,
                        fantan=(20, 10, 0, 0), trump=2),
}  # fmt: skip


def contract_table(rules: Rules) -> dict[str, Contract]:
    """The contracts a declarer chooses from under ``rules``, in declaration order (R2.1, R9, R10).
    A fresh dict each call (the rows are shared, immutable and cached)."""
    return dict(_contract_table(rules))


def contract_scale(text: str | None, rules: Rules) -> float:
    """``|contract total|`` (E5) under ``rules`` of the contract ``text`` names (a name, or ``Deal.contract_text``
    such as ``"trumps:S"``): the unit of the rewards of ``normalize=True`` and of the trainers' value targets
    (``Contract.scale``: 1 where the total is 0); 1 for None (before the declaration)."""
    return 1.0 if text is None else _contract_table(rules)[text.split(":")[0]].scale(rules)


@cache
def _contract_table(rules: Rules) -> dict[str, Contract]:
    if rules.king:
        return _king_table(rules.players, rules.short)
    t = _TABLES[rules.scoring].copy()
    if rules.ravage_city and rules.scoring == "classic":  # R9.2 keeps the classic table zero-sum
        t["king"], t["fantan"] = -16, (55, 30, 10, -10)
    hearts = ((SUIT_MASK[HEARTS], t["heart"]), (1 << ACE_OF_HEARTS, t["ace_h"]))
    queens = ((QUEENS, t["queen"]),)
    king = ((1 << KING_OF_HEARTS, t["king"]),)
    table = [
        Contract("no_tricks", per_trick=t["trick"]),
        Contract("no_hearts", hearts_lead=True, card_points=hearts),
        Contract("no_queens", card_points=queens, end_when_captured=QUEENS),
        Contract("no_king", hearts_lead=True, card_points=king, end_when_captured=1 << KING_OF_HEARTS),
        Contract("no_last_two", position_points=((-2, t["pen"]), (-1, t["last"]))),
    ]
    if rules.ravage_city:
        table.append(Contract("ravage_city", ravage=-24))
    if rules.salad:
        salad = Contract("salad", hearts_lead=True, per_trick=t["trick"], card_points=hearts + queens + king)
        table.append(salad)
        if "salad" in rules.positive:  # R10.3 Decision: the negative salad is played too
            table.append(replace(salad, name=ANTI_SALAD))
    table = [negated(c) if c.name in rules.positive else c for c in table]
    table.append(Contract("trumps", positive=True, trumps=True, per_trick=t["trump"]))
    # R12.4: first, second and third as in the table, every later place the fourth-place value
    fantan = tuple(t["fantan"][min(place, 3)] for place in range(rules.players))
    table.append(Contract("fantan", play=FANTAN, positive=True, fantan_points=fantan))
    return {c.name: c for c in table}


def negated(c: Contract) -> Contract:
    """R10.3: ``c`` with every point negated, a positive contract (R6.2); lead rule and early end kept."""
    return replace(
        c,
        positive=True,
        per_trick=-c.per_trick,
        card_points=tuple((mask, -pts) for mask, pts in c.card_points),
        position_points=tuple((idx, -pts) for idx, pts in c.position_points),
    )


#: R11.2 / R11.4: Domino points by finishing order, per number of players.
KING_DOMINO: dict[int, tuple[int, ...]] = {
    3: (-40, 0, 40), 4: (-50, -20, 20, 40), 5: (-50, -25, 0, 25, 50), 6: (-60, -40, -20, 20, 40, 60),
}  # fmt: skip
#: R11.3: the contracts of the short game (deals 1-5).
KING_SHORT = 5


def _king_table(players: int, short: bool) -> dict[str, Contract]:
    """Barbu King's contracts in their fixed order (R11.2); trick counts follow the hand size (R11.4); with six
    players (R11.5) the Barbu scores +160 and every copy of a heart or queen scores."""
    trick, heart, queen, king = 5, 5, 20, 160 if players == 6 else 80
    hearts = ((SUIT_MASK[HEARTS], heart),)
    queens = ((QUEENS, queen),)
    kh = ((1 << KING_OF_HEARTS, king),)
    table = [
        Contract("no_tricks", per_trick=trick),
        Contract("no_hearts", hearts_lead=True, card_points=hearts),
        Contract("no_queens", card_points=queens),  # R11.2: no early end
        Contract("no_king", hearts_lead=True, card_points=kh),
        Contract("salad", hearts_lead=True, per_trick=trick, card_points=hearts + queens + kh),
        Contract("take_tricks", positive=True, per_trick=-trick),
        Contract("no_first_last", position_points=((0, 40), (-1, 40))),
        Contract("fantan", play=FANTAN, positive=True, fantan_points=KING_DOMINO[players]),
    ]
    if short:
        table = table[:KING_SHORT]
    return {c.name: c for c in table}


#: Tie-break deal of R2.4 (``tiebreak="extra_deals"``): no trumps, +5 per trick.
EXTRA_DEAL = Contract("extra_deal", positive=True, per_trick=5)


def ravage_scores(captured: list[int], penalty: int) -> list[int]:
    """R9.1: the largest single-suit count among captured cards shares ``penalty`` (ties split)."""
    counts = [max((m & SUIT_MASK[s]).bit_count() for s in range(4)) for m in captured]
    top = max(counts)
    losers = [i for i, c in enumerate(counts) if c == top]
    share = penalty // len(losers)
    return [share if i in losers else 0 for i in range(len(captured))]
