"""The match (RULES.md R2.1–R2.4, R3.1, R6.4, R8.3)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import SUIT_HANDS, finish_with_tie, legal_names

from barbu_env import Match, Rules
from barbu_env.actions import action_id, action_name
from barbu_env.contracts import contract_table
from barbu_env.engine.deal import Phase
from barbu_env.engine.match import MAX_EXTRA_DEALS


def play_match(m: Match, rng: np.random.Generator, lazy: bool = False) -> Match:
    """Random legal play to the end; ``lazy`` doublers never double unless the mask forces them."""
    while not m.is_over:
        legal = m.legal_actions()
        if lazy and m.deal.phase == Phase.DOUBLE:
            a = legal[0]  # double:none when allowed (lowest id), else the smallest forced choice
        else:
            a = legal[int(rng.integers(len(legal)))]
        m.apply(a)
    return m


@pytest.mark.parametrize(
    ("options", "deals"),
    [({}, 28), ({"ravage_city": True}, 32), ({"salad": True}, 32), ({"ravage_city": True, "salad": True}, 36),
     ({"scoring": "basic32"}, 28)],
)  # fmt: skip
def test_r2_1_match_length(options: dict, deals: int) -> None:
    """R2.1 / R9.2 / R10.2: 28 deals, 32 with Ravage City or Salad, 36 with both."""
    m = Match(Rules(**options), np.random.default_rng(0))
    assert m.num_deals == deals and m.per_declarer == deals // 4


@pytest.mark.parametrize("first", [0, 1, 3])
def test_r2_2_schedules(first: int) -> None:
    """R2.2 blocks: the first declarer declares deals 1–7, the player to their left 8–14, …;
    rotate: deal k (1-based) is declared by (first + k - 1) % 4."""
    blocks = Match(Rules(), 0, first_declarer=first)
    assert [blocks.declarer_of(k) for k in range(28)] == [(first + k // 7) % 4 for k in range(28)]
    rotate = Match(Rules(schedule="rotate"), 0, first_declarer=first)
    assert [rotate.declarer_of(k) for k in range(28)] == [(first + k) % 4 for k in range(28)]
    assert blocks.deal.declarer == first and blocks.deal.current_player == first
    with pytest.raises(ValueError, match=r"seat 0\.\.3"):
        Match(Rules(), 0, first_declarer=4)


MATCH_OPTIONS = [
    {},
    {"schedule": "rotate"},
    {"ravage_city": True, "salad": True},
    {"doubling": "declarer_only"},
    {"undoubled_negative": "split"},
    {"schedule": "rotate", "scoring": "basic32", "ravage_city": True},
]


def option_id(o: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in o.items()) or "classic"


@pytest.mark.parametrize("options", MATCH_OPTIONS, ids=option_id)
@pytest.mark.parametrize("lazy", [False, True])
def test_random_matches_keep_every_match_rule(options: dict, lazy: bool) -> None:
    """Under random play: the schedule holds (R2.2), each declarer uses each contract exactly once
    (R2.1, R3.1), every other player doubles every declarer at least twice in that declarer's deals
    (R6.4, enforced by the mask), totals are the sums of deal scores (R8.3), the best total wins (R2.4)."""
    rules = Rules(**options)
    for seed in range(2):
        m = play_match(Match(rules, np.random.default_rng(seed), first_declarer=seed + 1),
                       np.random.default_rng(100 + seed), lazy)  # fmt: skip
        names = list(contract_table(rules))
        assert len(m.records) == m.num_deals == 4 * len(names)
        doubled = np.zeros((4, 4), dtype=int)
        for k, rec in enumerate(m.records):
            assert rec.number == k and rec.declarer == m.declarer_of(k)
            for s in range(4):
                if s != rec.declarer and rec.doubles[s] >> rec.declarer & 1:
                    doubled[rec.declarer, s] += 1
        for d in range(4):
            used = sorted(r.contract.split(":")[0] for r in m.records if r.declarer == d)
            assert used == sorted(names)
            assert m.remaining_contracts(d) == [] and m.outstanding(d) == [0, 0, 0, 0]
            for s in range(4):
                if s != d:
                    assert doubled[d, s] >= 2, (d, s)
                    if lazy:
                        assert doubled[d, s] == 2  # forced exactly when due, never earlier
        assert m.totals == [sum(r.scores[s] for r in m.records) for s in range(4)]
        assert m.winners == [s for s in range(4) if m.totals[s] == max(m.totals)]
        assert m.current_player == -1 and m.legal_actions() == []
        with pytest.raises(ValueError, match="over"):
            m.apply(0)


def test_r6_4_forced_in_the_declarers_last_deals() -> None:
    """R6.4 with lazy doublers: the mask forces the two doubles into the declarer's last two deals."""
    m = Match(Rules(), np.random.default_rng(5))
    rng = np.random.default_rng(6)
    while not m.is_over:
        d, k = m.deal.declarer, m.deal_no
        if m.deal.phase == Phase.DOUBLE and m.deal.current_player != d:
            left = m.deals_left_of(d, k)
            names = legal_names(m.deal)
            assert ("double:none" not in names) == (left <= 2), (k, left, names)
            assert m.outstanding(d)[m.deal.current_player] == min(2, left)
            m.apply(m.legal_actions()[0])
        else:
            legal = m.legal_actions()
            m.apply(legal[int(rng.integers(len(legal)))])


def test_r3_1_used_contracts_leave_the_choice() -> None:
    """R3.1: the declarer chooses among contracts not yet used; Trumps and Fantan carry their parameter."""
    m = Match(Rules(), np.random.default_rng(1))
    first = {n for n in legal_names(m.deal)}
    assert len(first) == 5 + 4 + 13
    m.apply(action_id("declare:trumps:H"))
    rng = np.random.default_rng(2)
    while m.deal_no == 0:
        legal = m.legal_actions()
        m.apply(legal[int(rng.integers(len(legal)))])
    second = legal_names(m.deal)
    assert not any(n.startswith("declare:trumps") for n in second) and len(second) == 5 + 13
    assert m.remaining_contracts(0) == ["no_tricks", "no_hearts", "no_queens", "no_king", "no_last_two", "fantan"]
    with pytest.raises(ValueError, match="legal actions are"):
        m.apply(action_id("declare:trumps:S"))


def test_fixed_first_deal() -> None:
    """Match(hands=..., contract=...) fixes the first deal; an unavailable contract is an error."""
    m = Match(Rules(), 0, first_declarer=2, hands=SUIT_HANDS, contract="no_queens")
    assert m.deal.contract_text == "no_queens" and m.deal.declarer == 2 and m.deal.phase == Phase.DOUBLE
    assert m.deal.hands[2] >> 26 & 1  # 2H is seat 2's
    with pytest.raises(ValueError, match="not available"):
        Match(Rules(), 0, hands=SUIT_HANDS, contract="ravage_city")


def test_r2_4_ties_stand_by_default() -> None:
    m = finish_with_tie(Rules())
    assert m.is_over and m.winners == [0, 1]


@pytest.mark.parametrize(("schedule", "first", "winner"), [("blocks", 0, 0), ("blocks", 1, 1), ("rotate", 2, 0),
                                                            ("blocks", 3, 0)])  # fmt: skip
def test_r2_4_first_declarer(schedule: str, first: int, winner: int) -> None:
    """R2.4 first_declarer: among tied players, the one who was declarer earliest wins."""
    m = finish_with_tie(Rules(tiebreak="first_declarer", schedule=schedule), first)
    assert m.is_over and m.winners == [winner]


def test_r2_4_extra_deals() -> None:
    """R2.4 extra_deals: tied leaders play extra no-trump deals, +5 per trick, until untied. Reading
    (seed 000): all four play them and score; the declarer is the player with the fewest points
    (the seed's alternative); no declaration and no doubling."""
    m = finish_with_tie(Rules(tiebreak="extra_deals"))
    assert not m.is_over and m.deal_no == 28
    deal = m.deal
    assert deal.contract_text == "extra_deal" and deal.phase == Phase.PLAY and deal.trump == -1
    assert deal.declarer == 3 and deal.current_player == 3
    rng = np.random.default_rng(3)
    while not m.is_over:
        legal = m.legal_actions()
        m.apply(legal[int(rng.integers(len(legal)))])
    extra = m.records[28:]
    assert 1 <= len(extra) <= MAX_EXTRA_DEALS
    for rec in extra:
        assert rec.contract == "extra_deal" and sum(rec.contract_scores) == 65 and not any(rec.doubles)
        assert all(s % 5 == 0 for s in rec.scores)
    assert len(m.winners) == 1 or len(extra) == MAX_EXTRA_DEALS
    base = (10, 10, 5, 0)
    assert m.totals == [base[s] + m.records[27].scores[s] + sum(r.scores[s] for r in extra) for s in range(4)]


def test_r2_3_declarer_leads_and_clone() -> None:
    """R2.3: declare, double, play; the declarer leads the first trick. Match.clone is independent."""
    m = Match(Rules(), np.random.default_rng(8), first_declarer=1)
    assert m.deal.phase == Phase.DECLARE and m.current_player == 1
    m.apply(action_id("declare:no_tricks"))
    assert [m.current_player] == [2]
    for _ in range(4):
        m.apply(m.legal_actions()[0])
    assert m.deal.phase == Phase.PLAY and m.current_player == 1
    c = m.clone()
    play_match(c, np.random.default_rng(0))
    assert not m.is_over and m.deal_no == 0 and m.totals == [0, 0, 0, 0] and c.is_over
    a = play_match(m.clone(), np.random.default_rng(4))
    b = play_match(m.clone(), np.random.default_rng(4))
    assert a.records == b.records  # the clone copies the shuffle RNG state too
    assert action_name(m.legal_actions()[0]).endswith(("C", "D", "H", "S"))


def test_redeal_replaces_an_unstarted_deal() -> None:
    """An outside dealer (OpenSpiel's chance nodes) gives a deal's hands: declarer, available contracts (R3.1)
    and the R6.4 duties of the scheduled deal stay; a deal already started cannot be replaced."""
    m = Match(Rules(), rng=0, first_declarer=2)
    before = (m.deal.declarer, m.deal.available, m.deal.must_double)
    m.redeal(SUIT_HANDS)
    assert (m.deal.declarer, m.deal.available, m.deal.must_double) == before
    assert m.deal.hands[1] == sum(1 << (13 + r) for r in range(13))  # seat 1 holds the diamonds
    m.apply(m.legal_actions()[0])
    with pytest.raises(ValueError, match="before its first action"):
        m.redeal(SUIT_HANDS)
    with pytest.raises(ValueError, match="hand of seat 0 has 12 cards"):
        Match(Rules(), rng=0).redeal([h.rsplit(" ", 1)[0] if s == 0 else h for s, h in enumerate(SUIT_HANDS)])


def test_score_deal_scores_a_record_as_end_deal_does() -> None:
    """``Match.score_deal`` (a deal played elsewhere, R2.1, R3.1, R6.4, R8.3) leaves the score sheet ``end_deal``
    leaves; it refuses another deal's record and the schedule's last deal, naming them."""
    a, b = Match(Rules(), 4), Match(Rules(), 4)
    rng = np.random.default_rng(4)
    while a.deal_no + 1 < a.num_deals:
        while not a.deal.is_over:
            legal = a.deal.legal_actions()
            a.deal.apply(legal[rng.integers(len(legal))])
        b.deal = a.deal.clone()
        rec = a.end_deal()
        with pytest.raises(ValueError, match=f"scores deal {b.deal_no} .* got a record of deal {b.deal_no + 1}"):
            b.score_deal(dataclasses.replace(rec, number=rec.number + 1))
        b.score_deal(rec)
        assert (b.records, b.totals, b.used, b.doubled, b.deal_no) == (
            a.records,
            a.totals,
            a.used,
            a.doubled,
            a.deal_no,
        )
        assert b.deal.must_double == a.deal.must_double and b.deal.available == a.deal.available
    with pytest.raises(ValueError, match="before the last of 28 deals"):
        b.score_deal(dataclasses.replace(rec, number=b.deal_no))
