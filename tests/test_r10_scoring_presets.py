"""Scoring presets and Salad (RULES.md R10.1, R10.2)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import SUIT_HANDS, legal_names, make_deal, play

from barbu_env import Deal, Match, Rules
from barbu_env.actions import action_name
from barbu_env.cards import DECK32
from barbu_env.contracts import contract_table

BASIC32 = Rules(scoring="basic32")
#: 32-card deck, each seat one suit (7..A).
SUIT_HANDS32 = [" ".join(r + s for r in "789TJQKA") for s in "CDHS"]

TOTALS = {  # R10.1 table, per preset: contract totals over one deal
    "classic": dict(no_tricks=-26, no_hearts=-30, no_queens=-24, no_king=-20, no_last_two=-30, trumps=65, fantan=65),
    "basic52": dict(no_tricks=-13, no_hearts=-13, no_queens=-12, no_king=-12, no_last_two=-12, trumps=39, fantan=45),
    "basic32": dict(no_tricks=-8, no_hearts=-8, no_queens=-8, no_king=-8, no_last_two=-8, trumps=16, fantan=30),
}  # fmt: skip


@pytest.mark.parametrize("preset", sorted(TOTALS))
def test_r10_1_contract_totals(preset: str) -> None:
    rules = Rules(scoring=preset)
    table = contract_table(rules)
    assert {n: c.total(rules) for n, c in table.items()} == TOTALS[preset]
    fantan = {"classic": (45, 20, 5, -5), "basic52": (25, 15, 5, 0), "basic32": (20, 10, 0, 0)}[preset]
    assert table["fantan"].fantan_points == fantan


def test_basic52_per_card_values() -> None:
    """basic52: -1 per trick / heart (A♥ too), -3 per queen, -12 K♥, -4 / -8 last two, +3 per trick."""
    rules = Rules(scoring="basic52")
    deal = make_deal(SUIT_HANDS, 0, "no_hearts", rules=rules)
    play(deal, "2C 2D AH 2S")
    assert deal.points == [-1, 0, 0, 0]
    deal = make_deal(SUIT_HANDS, 0, "no_queens", rules=rules)
    play(deal, "2C QD 2H 2S")
    assert deal.points == [-3, 0, 0, 0]
    deal = make_deal(SUIT_HANDS, 0, "trumps:C", rules=rules)
    play(deal, "2C 2D 2H 2S")
    assert deal.points == [3, 0, 0, 0]


def test_basic32_deck() -> None:
    """R10.1 basic32: 32 cards (7..A), 8 each, R1.2 ids kept; 8 tricks."""
    rng = np.random.default_rng(0)
    deal = Deal.random(rng, 0, "no_tricks", BASIC32)
    assert [h.bit_count() for h in deal.hands] == [8, 8, 8, 8]
    assert deal.hands[0] | deal.hands[1] | deal.hands[2] | deal.hands[3] == DECK32
    with pytest.raises(ValueError, match="2C"):
        Deal.from_hands(["2C 8C 9C TC JC QC KC AC", *SUIT_HANDS32[1:]], 0, None, BASIC32)
    with pytest.raises(ValueError, match="8"):
        Deal.from_hands(SUIT_HANDS, 0, None, BASIC32)
    assert BASIC32.deck_size == 32 and BASIC32.hand_size == 8


def test_basic32_last_two_are_tricks_7_and_8() -> None:
    """R10.1: with 32 cards the "last two" are tricks 7 (-3) and 8 (-5)."""
    deal = make_deal(SUIT_HANDS32, 0, "no_last_two", rules=BASIC32)
    for i, r in enumerate("AKQJT987"):
        play(deal, [r + s for s in "CDHS"])
        assert deal.points[0] == {6: -3, 7: -8}.get(i, 0), i
    assert deal.is_over and deal.trick_no == 8 and deal.contract_scores == [-8, 0, 0, 0]


def test_basic32_fantan_ranks() -> None:
    """R10.1 with R7.2: Fantan ranks are those of the deck; a run from the 7 only grows upward."""
    deal = make_deal(SUIT_HANDS32, 0, None, rules=BASIC32)
    fantan = {n for n in legal_names(deal) if n.startswith("declare:fantan:")}
    assert fantan == {f"declare:fantan:{r}" for r in "789TJQKA"}
    with pytest.raises(ValueError, match="not in the 32-card deck"):
        make_deal(SUIT_HANDS32, 0, "fantan:2", rules=BASIC32)
    deal = make_deal(SUIT_HANDS32, 0, "fantan:7", rules=BASIC32)
    play(deal, "7C 7D 7H 7S")
    assert legal_names(deal) == {"8C"}
    deal = make_deal(SUIT_HANDS32, 0, "fantan:8", rules=BASIC32)
    play(deal, "8C 8D 8H 8S")
    assert legal_names(deal) == {"7C", "9C"}
    play(deal, "7C")
    assert action_name(deal.legal_actions()[0]) in {"7D", "9D"}


def test_r10_2_salad() -> None:
    """R10.2 Salad: No tricks + No hearts + No queens + No King in one deal; the Q♥ counts as a queen
    and a heart, the K♥ as the King and a heart; hearts-lead restriction applies. Reading: it is
    played to the 13th trick (it includes No tricks, R4.5), no early end."""
    rules = Rules(salad=True)
    table = contract_table(rules)
    assert "salad" in table and table["salad"].total(rules) == -26 - 30 - 24 - 20
    deal = make_deal(SUIT_HANDS, 0, "salad", rules=rules)
    play(deal, "2C 2D QH 2S")
    assert deal.points == [-2 - 2 - 6, 0, 0, 0]  # trick, heart, queen
    play(deal, "3C 3D KH 3S")
    assert deal.points == [-10 - 2 - 2 - 20, 0, 0, 0]  # trick, heart, King
    play(deal, "4C QD AH QS")
    assert deal.points == [-34 - 2 - 6 - 12, 0, 0, 0]  # trick, A♥, two queens
    order_d = [r + "D" for r in "456789TJKA"]
    order_h = [r + "H" for r in "23456789TJ"]
    order_s = [r + "S" for r in "456789TJKA"]
    for i, r in enumerate("56789TJQKA"):
        play(deal, [r + "C", order_d[i], order_h[i], order_s[i]])
    assert deal.is_over and deal.trick_no == 13
    assert deal.contract_scores == [-100, 0, 0, 0]
    seat2 = make_deal(SUIT_HANDS, 2, "salad", rules=rules)
    assert len(legal_names(seat2)) == 13  # only hearts: may lead them
    mixed = make_deal({0: "2H 3C"}, 0, "salad", rules=rules)
    assert "2H" not in legal_names(mixed)


def test_salad_adds_a_contract_per_declarer() -> None:
    """R10.2: Salad adds one contract per declarer (32 deals; 36 with Ravage City too)."""
    assert Match(Rules(salad=True), 0).num_deals == 32
    assert Match(Rules(salad=True, ravage_city=True), 0).num_deals == 36
    assert Match(Rules(salad=True, scoring="basic52"), 0).num_deals == 32
