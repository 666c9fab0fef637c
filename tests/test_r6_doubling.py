"""Doubling (RULES.md R6.1–R6.7, E3). Seats: A=0 (declarer unless said), B=1, C=2, D=3.
Targets of a double are relative to the doubler (R1.3): for B, left is C, across D, right A."""

from __future__ import annotations

import pytest
from helpers import SUIT_HANDS, legal_names, make_deal, play

from barbu_env import Rules
from barbu_env.engine.deal import Phase
from barbu_env.engine.doubling import settlement, split_scores

ALL_SUBSETS = {
    "double:none", "double:left", "double:across", "double:right", "double:left+across",
    "double:left+right", "double:across+right", "double:left+across+right",
}  # fmt: skip
B_C, C_B = 1 << 2, 1 << 1  # B's double of C, C's double of B (absolute-seat masks)

#: E3 deal (No queens, declarer A): B takes one queen (-6), C none, A three (-18), D none.
E3_HANDS = [
    "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC 4D",
    "AC 2D 3D 5D 6D 7D 8D 9D TD JD QD KD AD",
    SUIT_HANDS[2],
    SUIT_HANDS[3],
]
E3_PLAY = "2C AC QH 2S  2D 2H 3S 4D  3C QD 3H QS  QC 3D 4H 4S"


def test_e3_settlement_direct() -> None:
    """E3 (R6.5): B doubled C, C did not redouble; B -6, C 0 -> B -12, C +6. Redoubled: B -18, C +12."""
    scores = [-18, -6, 0, 0]
    assert settlement(scores, [0, B_C, 0, 0]) == [0, -6, 6, 0]
    assert settlement(scores, [0, B_C, C_B, 0]) == [0, -12, 12, 0]
    assert settlement(scores, [0, 0, 0, 0]) == [0, 0, 0, 0]
    assert settlement([5, 5, 0, 0], [2, 1, 0, 0]) == [0, 0, 0, 0]  # equal scores: nothing


@pytest.mark.parametrize(("redouble", "expected"), [(False, [-18, -12, 6, 0]), (True, [-18, -18, 12, 0])])
def test_e3_deal_level(redouble: bool, expected: list[int]) -> None:
    """E3 in a real deal: the doubling actions, then play; No queens ends with the 4th queen."""
    deal = make_deal(E3_HANDS, 0, "no_queens",
                     doubles=["double:left", "double:right" if redouble else "double:none", "double:none",
                              "double:none"])  # fmt: skip
    assert deal.doubles == [0, B_C, C_B if redouble else 0, 0]
    play(deal, E3_PLAY)
    assert deal.is_over
    assert deal.contract_scores == [-18, -6, 0, 0]
    assert deal.scores == expected
    assert sum(deal.settlement) == 0


def test_r6_1_order_and_one_decision_each() -> None:
    """R6.1: left of the declarer first, the declarer last, one decision each, then play (R6.3: no
    second round)."""
    deal = make_deal(SUIT_HANDS, 2, "no_tricks", doubles=[])
    order = []
    while deal.phase == Phase.DOUBLE:
        order.append(deal.current_player)
        play(deal, ["double:none"])
    assert order == [3, 0, 1, 2]
    assert deal.phase == Phase.PLAY and deal.current_player == 2


def test_r6_2_who_may_be_doubled() -> None:
    """R6.2: negative — a non-declarer may double any of the other three; positive — only the
    declarer; the declarer only those who doubled the declarer (R6.3: always redoubles)."""
    deal = make_deal(SUIT_HANDS, 0, "no_hearts", doubles=[])
    assert legal_names(deal) == ALL_SUBSETS
    play(deal, "double:right")  # B doubles A
    assert legal_names(deal) == ALL_SUBSETS
    play(deal, "double:right")  # C doubles B (B cannot answer: no second round)
    assert legal_names(deal) == ALL_SUBSETS
    play(deal, "double:left+right")  # D doubles A and C
    assert legal_names(deal) == {"double:none", "double:left", "double:right", "double:left+right"}  # A: B, D
    play(deal, "double:right")  # A redoubles D only
    assert deal.doubles == [1 << 3, 1 << 0, 1 << 1, (1 << 0) | (1 << 2)]
    for contract in ("trumps:H", "fantan:7"):
        deal = make_deal(SUIT_HANDS, 0, contract, doubles=[])
        assert legal_names(deal) == {"double:none", "double:right"}  # B: only A
        play(deal, "double:none")
        assert legal_names(deal) == {"double:none", "double:across"}  # C: only A
        play(deal, "double:across double:left")
        assert legal_names(deal) == {"double:none", "double:across", "double:right", "double:across+right"}


def test_r6_3_redouble_between_non_declarers() -> None:
    """R6.3: C doubling B, who doubled C, is a redouble: k = 2 for that pair (R6.5)."""
    deal = make_deal(E3_HANDS, 0, "no_queens", doubles="double:left double:right double:none double:none")
    play(deal, E3_PLAY)
    assert deal.settlement == [0, -12, 12, 0]


def test_r6_4_obligation_in_the_mask() -> None:
    """R6.4: a player whose obligation is due must include the declarer in every legal choice; the
    declarer is never bound by it."""
    deal = make_deal(SUIT_HANDS, 0, "no_tricks", doubles=[], must_double=0b1111)
    assert legal_names(deal) == {"double:right", "double:left+right", "double:across+right",
                                 "double:left+across+right"}  # fmt: skip
    play(deal, "double:right")
    assert legal_names(deal) == {"double:across", "double:left+across", "double:across+right",
                                 "double:left+across+right"}  # fmt: skip
    play(deal, "double:across double:left")
    assert "double:none" in legal_names(deal)  # the declarer
    deal = make_deal(SUIT_HANDS, 0, "trumps:C", doubles=[], must_double=0b0100)
    play(deal, "double:none")  # B is not bound
    assert legal_names(deal) == {"double:across"}  # C must double A
    deal = make_deal(SUIT_HANDS, 0, "trumps:C", doubles=[], must_double=0b0100,
                     rules=Rules(doubling="declarer_only"))  # fmt: skip
    play(deal, "double:right")
    assert legal_names(deal) == {"double:across"}


@pytest.mark.parametrize(
    ("contract", "expected"),
    [("no_tricks", [1, -9, -9, -9]), ("no_queens", [0, -8, -8, -8]), ("no_hearts", [0, -10, -10, -10]),
     ("no_king", [1, -7, -7, -7]), ("no_last_two", [0, -10, -10, -10])],
)  # fmt: skip
def test_r6_6_split(contract: str, expected: list[int]) -> None:
    """R6.6 split: an undoubled negative deal is not played; each non-declarer scores floor(total / 3),
    the declarer the remainder (No tricks -9 -9 -9 and +1; No queens -8 each and 0)."""
    rules = Rules(undoubled_negative="split")
    deal = make_deal(SUIT_HANDS, 0, contract, rules=rules)
    assert deal.is_over and deal.split
    assert deal.contract_scores == expected and deal.scores == expected and deal.played == 0
    assert split_scores(-26, 2) == [-9, -9, 1, -9]
    # doubled: played normally
    deal = make_deal(SUIT_HANDS, 0, contract, rules=rules, doubles="double:left double:none double:none double:none")
    assert deal.phase == Phase.PLAY and not deal.split
    # positive contracts are always played
    deal = make_deal(SUIT_HANDS, 0, "trumps:S", rules=rules)
    assert deal.phase == Phase.PLAY
    # default `play`: undoubled negative deals are played
    assert make_deal(SUIT_HANDS, 0, contract).phase == Phase.PLAY


def test_r6_7_declarer_only() -> None:
    """R6.7 declarer_only: non-declarers may double only the declarer, in every contract; a declarer
    who redoubles must redouble all who doubled."""
    rules = Rules(doubling="declarer_only")
    deal = make_deal(SUIT_HANDS, 0, "no_queens", rules=rules, doubles=[])
    assert legal_names(deal) == {"double:none", "double:right"}
    play(deal, "double:right")
    assert legal_names(deal) == {"double:none", "double:across"}
    play(deal, "double:none double:left")
    assert legal_names(deal) == {"double:none", "double:left+right"}  # all who doubled, or none
    play(deal, "double:left+right")
    assert deal.doubles == [(1 << 1) | (1 << 3), 1, 0, 1]


def test_r6_7_off() -> None:
    """R6.7 off: no doubling phase; play starts right after the declaration."""
    deal = make_deal(SUIT_HANDS, 1, "no_hearts", rules=Rules(doubling="off"))
    assert deal.phase == Phase.PLAY and deal.current_player == 1 and deal.history == []
    deal = make_deal(SUIT_HANDS, 1, None, rules=Rules(doubling="off"))
    play(deal, "declare:fantan:7")
    assert deal.phase == Phase.FANTAN and deal.current_player == 1
