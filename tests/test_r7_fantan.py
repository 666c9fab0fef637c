"""Fantan / Domino (RULES.md R7.1–R7.5, R3.2, R4)."""

from __future__ import annotations

import numpy as np
from helpers import SUIT_HANDS, legal_names, make_deal, play, ref_fantan_playable

from barbu_env import Rules
from barbu_env.actions import PASS
from barbu_env.cards import parse_card
from barbu_env.engine.deal import Phase

#: Seat 1 holds every diamond and can always play; the others get blocked and pass (fantan:2).
SKIP_HANDS = [
    "3C 4C 5C 6C 7C 8C 3H 4H 5H 6H 7H 8H 9H",
    SUIT_HANDS[1],
    "2C 2H 9C TC JC QC KC AC TH JH QH KH AH",
    SUIT_HANDS[3],
]


def test_r7_1_declarer_plays_first_and_runs_grow_both_ways() -> None:
    """R7.1: the declarer plays first; R7.2: the starting rank opens a suit, which then grows one rank
    up or down from its run."""
    deal = make_deal(SUIT_HANDS, 2, "fantan:7")
    assert deal.phase == Phase.FANTAN and deal.current_player == 2
    assert legal_names(deal) == {"7H"}  # R7.3 forced: no pass while able to play
    play(deal, "7H 7S 7C 7D")
    assert legal_names(deal) == {"6H", "8H"}
    play(deal, "8H")
    assert legal_names(deal) == {"6S", "8S"}
    play(deal, "6S 6C 8D 9H")
    assert deal.fantan_lo[2] == parse_card("7H") % 13 and deal.fantan_hi[2] == parse_card("9H") % 13


def test_r7_4_finishing_order_scores() -> None:
    """R7.4: the deal ends when three players are out; +45, +20, +5, -5 by finishing order."""
    deal = make_deal(SUIT_HANDS, 0, "fantan:7")
    up = "89TJQKA"
    down = "65432"
    seq = ["7"] + [r for pair in zip(up, down) for r in pair] + list(up[len(down) :])
    moves = [r + s for r in seq for s in "CDHS"]  # one card of each suit per round, seat 0 first
    play(deal, moves[:-1])  # seats 0, 1 and 2 play their 13th card; seat 3 keeps one
    assert deal.is_over and deal.finished == [0, 1, 2, 3]
    assert deal.contract_scores == [45, 20, 5, -5] and sum(deal.contract_scores) == 65
    assert deal.hands[3].bit_count() == 1


def test_r7_3_forced_and_free_pass() -> None:
    """R7.3: with no playable card the only action is pass; forced (default): no pass otherwise;
    free: passing is always legal. R3.2: the declarer need not hold the starting rank."""
    deal = make_deal(SKIP_HANDS, 0, "fantan:2")
    assert deal.legal_actions() == [PASS]  # seat 0 holds no 2
    play(deal, "pass")
    assert deal.current_player == 1 and legal_names(deal) == {"2D"}
    free = make_deal(SKIP_HANDS, 2, "fantan:2", rules=Rules(fantan_pass="free"))
    assert legal_names(free) == {"2C", "2H", "pass"}
    play(free, "pass")
    assert free.current_player == 3 and free.passes[2] == 1


def test_r7_4_players_out_are_skipped() -> None:
    """R7.4: seat 1 (every diamond) plays each turn and goes out first (the declarer, seat 0, starts
    with a pass); it is skipped afterwards. Passes happen only without a playable card (forced)."""
    deal = make_deal(SKIP_HANDS, 0, "fantan:2")
    while not deal.is_over:
        p = deal.current_player
        assert p not in deal.finished
        mine = {c for c in ref_fantan_playable(deal) if deal.hands[p] >> c & 1}
        if not mine:
            assert deal.legal_actions() == [PASS]
        deal.apply(deal.legal_actions()[0])
    assert deal.finished[:2] == [1, 3] and deal.passes[1] == 0 and deal.passes[0] > 0
    assert sorted(deal.finished) == [0, 1, 2, 3] and deal.contract_scores[1] == 45


def test_r7_5_ace_plays_again() -> None:
    """R7.5 (option): playing an ace gives the same player another turn; off by default."""
    for option, next_player in ((True, 0), (False, 1)):
        deal = make_deal(SUIT_HANDS, 0, "fantan:K", rules=Rules(ace_plays_again=option))
        play(deal, "KC KD KH KS")
        assert legal_names(deal) == {"QC", "AC"}
        play(deal, "AC")
        assert deal.current_player == next_player
    # an ace as the last card: the player is out and play moves on
    deal = make_deal(SUIT_HANDS, 0, "fantan:2", rules=Rules(ace_plays_again=True))
    moves = [r + s for r in "23456789TJQK" for s in "CDHS"]
    play(deal, moves)
    play(deal, "AC")
    assert deal.finished == [0] and deal.current_player == 1


def test_fantan_random_deals_end_and_score() -> None:
    """R7.4 under every pass/ace option: random deals end with four distinct places and 65 points."""
    for options in ({}, {"fantan_pass": "free"}, {"ace_plays_again": True}):
        rng = np.random.default_rng(17)
        for k in range(20):
            deal = make_deal([[c for c in range(52) if c % 4 == s] for s in range(4)], k % 4,
                             f"fantan:{'23456789TJQKA'[k % 13]}", rules=Rules(**options))  # fmt: skip
            while not deal.is_over:
                legal = deal.legal_actions()
                deal.apply(legal[int(rng.integers(len(legal)))])
            assert len(set(deal.finished)) == 4 and sum(deal.contract_scores) == 65
