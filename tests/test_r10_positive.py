"""Option ``positive`` (RULES.md R10.3): negated contracts, the anti-salad, R6.2 for a negated contract.
Seats: A=0 (declarer), B=1, C=2, D=3; B's right is A, C's across is A, D's left is A (R1.3)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import legal_names, make_deal

from barbu_env import Match, Rules, action_id, action_name, load_rules
from barbu_env.actions import ANTI_SALAD, NUM_ACTIONS, num_actions
from barbu_env.contracts import contract_table
from barbu_env.engine.deal import Deal

#: A holds every spade and leads: each trick is one spade, one heart, one diamond, one club, all won by A.
ALL_TO_A = [
    "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS",
    "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH",
    "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD",
    "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC",
]
POSITIVE1 = load_rules("positive1")


def play_all_to_a(deal: Deal) -> None:
    """Every player has one suit: each plays its lowest card, A's spade wins all 13 tricks."""
    while not deal.is_over:
        deal.apply(min(deal.legal_actions()))


def test_r10_3_presets_are_seed_003s_combinations() -> None:
    assert load_rules("positive1").positive == ("no_tricks", "salad")
    assert load_rules("positive2").positive == ("no_tricks", "no_hearts", "salad")
    assert load_rules("positive3").positive == ("no_tricks", "no_hearts", "no_queens", "salad")
    assert Rules(salad=True, positive=["salad", "no_tricks"]).positive == ("no_tricks", "salad")  # table order
    for name in ("positive1", "positive2", "positive3"):
        table = contract_table(load_rules(name))
        assert list(table)[5:7] == ["salad", "anti_salad"] and len(table) == 9
        assert Match(load_rules(name), rng=0).num_deals == 36  # R10.3: one more contract per declarer


def test_r10_3_negated_totals_and_signs() -> None:
    table = contract_table(load_rules("positive3"))
    totals = {n: c.total(load_rules("positive3")) for n, c in table.items()}
    assert totals == {"no_tricks": 26, "no_hearts": 30, "no_queens": 24, "no_king": -20, "no_last_two": -30,
                      "salad": 100, "anti_salad": -100, "trumps": 65, "fantan": 65}  # fmt: skip
    assert [n for n, c in table.items() if c.positive] == [
        "no_tricks", "no_hearts", "no_queens", "salad", "trumps", "fantan",
    ]  # fmt: skip
    # early end (R4.2) and the hearts-lead rule (R4.1) are kept
    assert table["no_queens"].end_when_captured and table["no_hearts"].hearts_lead and table["anti_salad"].hearts_lead


def test_r10_3_positive_salad_and_anti_salad_scores() -> None:
    """A takes every card: +100 in the positive salad, -100 in the anti-salad beside it (R10.2, R10.3)."""
    for contract, expected in (("salad", 100), ("anti_salad", -100), ("no_tricks", 26)):
        deal = make_deal(ALL_TO_A, 0, contract, POSITIVE1)
        play_all_to_a(deal)
        assert deal.contract_scores == [expected, 0, 0, 0], contract
    classic = make_deal(ALL_TO_A, 0, "salad", Rules(salad=True))
    play_all_to_a(classic)
    assert classic.contract_scores == [-100, 0, 0, 0]  # the anti-salad is R10.2's salad


def test_r10_3_positive_no_tricks_non_declarer_doubles_only_the_declarer() -> None:
    """R6.2 for a negated contract: B, C, D may double A only; A redoubles B: pair A-B settles twice 26."""
    deal = make_deal(ALL_TO_A, 0, "no_tricks", POSITIVE1, doubles=[])
    assert legal_names(deal) == {"double:none", "double:right"}  # B
    deal.apply(action_id("double:right"))
    assert legal_names(deal) == {"double:none", "double:across"}  # C
    deal.apply(action_id("double:none"))
    assert legal_names(deal) == {"double:none", "double:left"}  # D
    deal.apply(action_id("double:none"))
    assert legal_names(deal) == {"double:none", "double:left"}  # A: only B doubled A
    deal.apply(action_id("double:left"))
    play_all_to_a(deal)
    assert deal.contract_scores == [26, 0, 0, 0]
    assert deal.settlement == [52, -52, 0, 0] and deal.scores == [78, -52, 0, 0]
    # the same contract negative (classic): B may double anyone
    neg = make_deal(ALL_TO_A, 0, "no_tricks", Rules(), doubles=[])
    assert len(legal_names(neg)) == 8


def test_r10_3_positive_contract_is_never_split() -> None:
    """R6.6 ``split`` applies to negative contracts only: an undoubled positive No tricks is played."""
    rules = POSITIVE1.replace(undoubled_negative="split")
    deal = make_deal(ALL_TO_A, 0, "no_tricks", rules)
    assert not deal.split and not deal.is_over
    anti = make_deal(ALL_TO_A, 0, "anti_salad", rules)
    assert anti.split and anti.contract_scores == [2, -34, -34, -34]  # floor(-100 / 3) = -34; A: -100 + 102


def test_r10_3_renege_penalty_is_the_absolute_total() -> None:
    deal = make_deal(ALL_TO_A, 0, "salad", POSITIVE1)
    deal.renege(1)
    assert deal.contract_scores == [0, -100, 0, 0]


def test_r10_3_anti_salad_action() -> None:
    assert action_name(ANTI_SALAD) == "declare:anti_salad" and action_id("declare:anti_salad") == ANTI_SALAD
    assert num_actions(POSITIVE1) == NUM_ACTIONS + 1 == 88
    assert num_actions(Rules()) == num_actions(load_rules("positive1").replace(positive=("no_tricks",))) == 87
    deal = Deal.random(np.random.default_rng(0), 0, None, POSITIVE1)
    assert "declare:anti_salad" in legal_names(deal) and "declare:salad" in legal_names(deal)
    deal.apply(ANTI_SALAD)
    assert deal.contract.name == "anti_salad" and not deal.contract.positive
    with pytest.raises(ValueError, match=r"anti_salad.*not played under these rules"):
        Deal.random(np.random.default_rng(0), 0, "anti_salad", Rules(salad=True))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"positive": ["salad"]}, "needs salad=True"),
        ({"positive": ["no_king"]}, "expected names from"),
        ({"positive": "no_tricks"}, "expected a list"),
        ({"positive": ["no_tricks", "no_tricks"]}, "twice"),
        ({"game": "king", "doubling": "off", "positive": ["no_tricks"]}, "does not apply to Barbu King"),
    ],
)
def test_r10_3_bad_positive_is_refused(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Rules(**options)


def test_r10_3_match_obligation_and_totals() -> None:
    """A random positive3 match: 36 deals, R6.4 met for every declarer, totals = sum of deal scores (R8.3)."""
    rng = np.random.default_rng(5)
    m = Match(load_rules("positive3"), rng=rng)
    while not m.is_over:
        legal = m.legal_actions()
        m.apply(legal[int(rng.integers(len(legal)))])
    assert len(m.records) == 36
    for decl in range(4):
        assert m.outstanding(decl) == [0, 0, 0, 0]
    assert m.totals == [sum(r.scores[s] for r in m.records) for s in range(4)]
    assert sorted(r.contract.split(":")[0] for r in m.records if r.declarer == 0) == sorted(contract_table(m.rules))
