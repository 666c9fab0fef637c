"""Ravage City (RULES.md R9.1, R9.2, E4)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import SUIT_HANDS, legal_names, make_deal, play, random_playout, ref_contract_scores

from barbu_env import Deal, Match, Rules
from barbu_env.contracts import contract_table, ravage_scores

RAVAGE = Rules(ravage_city=True)
C, D, H, S = range(4)


def run(suit: int, n: int, start: int = 0) -> int:
    """Mask of ``n`` cards of ``suit`` from rank index ``start`` up."""
    return sum(1 << (13 * suit + r) for r in range(start, start + n))


def captured(*counts: tuple[int, int]) -> list[int]:
    """Per seat, a mask holding ``n`` cards of ``suit`` (the lowest ones)."""
    return [run(suit, n) for suit, n in counts]


def test_e4_first_example() -> None:
    """E4: A 7♣, B 11♠, C 9♥, D 8♦ -> B loses 24."""
    assert ravage_scores(captured((C, 7), (S, 11), (H, 9), (D, 8)), -24) == [0, -24, 0, 0]


def test_e4_second_example() -> None:
    """E4: A 9♣, B 6♠, C 9♥, D 7♦ -> A and C lose 12 each."""
    assert ravage_scores(captured((C, 9), (S, 6), (H, 9), (D, 7)), -24) == [-12, 0, -12, 0]


@pytest.mark.parametrize(
    ("masks", "expected"),
    [(captured((C, 5), (D, 5), (H, 5), (S, 4)), [-8, -8, -8, 0]),
     (captured((C, 4), (D, 4), (H, 4), (S, 4)), [-6, -6, -6, -6]),
     ([run(C, 7), run(S, 6), run(S, 6, 6), run(H, 6)], [-24, 0, 0, 0])],
)  # fmt: skip
def test_ties_share_the_penalty(masks: list[int], expected: list[int]) -> None:
    """R9.1: ties share the 24 — three -8, four -6. The last case is the seed's third example
    (A 7♣, B 6♠, C 6♠, D 6♥) read by the rule as stated (R9.1 Decision): A's 7 is the largest count,
    so A alone loses 24."""
    assert ravage_scores(masks, -24) == expected


def test_count_is_the_largest_single_suit() -> None:
    """R9.1: a player's count is the largest number of one suit among all the cards they captured."""
    mixed = run(C, 6) | run(D, 5) | run(H, 2)  # 13 cards, count 6
    assert ravage_scores([mixed, run(S, 5), run(H, 4, 2), 0], -24) == [-24, 0, 0, 0]
    assert ravage_scores([mixed, run(S, 6), 0, 0], -24) == [-12, -12, 0, 0]


def test_full_deal_one_player_takes_everything() -> None:
    """R9.1 in play: trick play as R5 with no trumps and no hearts-lead rule; all 13 tricks."""
    deal = make_deal(SUIT_HANDS, 2, "ravage_city", rules=RAVAGE)
    assert legal_names(deal) == {r + "H" for r in "23456789TJQKA"}  # holds only hearts
    deal = make_deal(SUIT_HANDS, 0, "ravage_city", rules=RAVAGE)
    for r in "AKQJT98765432":
        play(deal, [r + "C", r + "D", r + "H", r + "S"])
    assert deal.is_over and deal.trick_no == 13 and deal.contract_scores == [-24, 0, 0, 0]


def test_random_ravage_deals_score_by_the_rule() -> None:
    """Random Ravage City deals: scores as the reference computes them, ties seen and shared."""
    rng = np.random.default_rng(99)
    shares = set()
    for k in range(120):
        deal = Deal.random(rng, k % 4, "ravage_city", RAVAGE)
        random_playout(deal, rng)
        assert deal.contract_scores == ref_contract_scores(deal)
        assert sum(deal.contract_scores) == -24 and deal.trick_no == 13
        shares.add(min(deal.contract_scores))
    assert {-24, -12} <= shares  # single losers and two-way ties both occur


def test_r9_2_contracts_and_match_length() -> None:
    """R9.2: eight contracts, 32 deals, declarer changes every 8 deals, No King -16, Fantan
    +55 +30 +10 -10; the eight totals sum to zero."""
    table = contract_table(RAVAGE)
    assert list(table) == ["no_tricks", "no_hearts", "no_queens", "no_king", "no_last_two", "ravage_city",
                           "trumps", "fantan"]  # fmt: skip
    assert table["no_king"].total(RAVAGE) == -16 and table["fantan"].fantan_points == (55, 30, 10, -10)
    assert table["ravage_city"].total(RAVAGE) == -24 and not table["ravage_city"].positive
    assert sum(c.total(RAVAGE) for c in table.values()) == 0
    m = Match(RAVAGE, np.random.default_rng(0))
    assert m.num_deals == 32 and [m.declarer_of(k) for k in (0, 7, 8, 15, 16, 31)] == [0, 0, 1, 1, 2, 3]
    deal = make_deal(SUIT_HANDS, 0, "no_king", rules=RAVAGE)
    play(deal, "2C 2D KH 2S")
    assert deal.contract_scores == [-16, 0, 0, 0]
