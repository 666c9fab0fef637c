"""Option ``positive`` (RULES.md R10.3): negated contracts, the anti-salad, R6.2 for a negated contract.
Seats: A=0 (declarer), B=1, C=2, D=3; B's right is A, C's across is A, D's left is A (R1.3)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import agents_env_play, legal_names, make_deal
from pettingzoo.test import api_test, seed_test

import barbu_env
from barbu_env import Match, Rules, action_id, action_name, agents, load_rules
from barbu_env.actions import ANTI_SALAD, NUM_ACTIONS, num_actions
from barbu_env.contracts import contract_table
from barbu_env.engine.deal import Deal
from barbu_env.evaluation import evaluate
from barbu_env.observation import block_of, encode

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


# ------------------------------------------------------------------ the env, agents, evaluation (R10.3 in the env)
def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


@pytest.mark.parametrize(("preset", "mode"), [("positive1", "deal"), ("positive1", "match"), ("positive3", "deal")])
def test_r10_3_env_api_and_seed(preset: str, mode: str) -> None:
    _quiet(api_test, barbu_env.env(rules=preset, mode=mode), num_cycles=400)
    _quiet(seed_test, lambda: barbu_env.env(rules=preset, mode=mode), num_cycles=400)


def test_r10_3_env_declares_and_observes_the_anti_salad() -> None:
    """The env's 88 actions: ``declare:anti_salad`` (87) in the declarer's mask; the ``positive`` block names the
    negated contracts; the contract blocks' 12th entry is the anti-salad (not R2.4's extra deal); A taking every
    card is rewarded -100 in the anti-salad and +100 in the positive salad beside it."""
    hands = [h.split() for h in ALL_TO_A]
    for contract, reward in (("declare:anti_salad", -100.0), ("declare:salad", 100.0)):
        e = barbu_env.env(rules="positive1", mode="deal", declarer=0)
        e.reset(seed=0, options={"hands": hands})
        rules = e.unwrapped.rules
        o = e.observe("player_0")
        assert e.action_space("player_0").n == 88 and o["action_mask"].shape == (88,) and o["action_mask"][87] == 1
        assert block_of(o["observation"], "positive", rules).tolist() == [1, 0, 0, 1]  # no_tricks, salad
        available = block_of(o["observation"], "available", rules)
        assert available.shape == (12,) and available[11] == 1 and available[5] == 0  # no ravage_city
        e.step(action_id(contract))
        o = e.observe("player_1")["observation"]
        assert np.flatnonzero(block_of(o, "contract", rules)).tolist() == [11 if "anti" in contract else 6]
        assert block_of(o, "extra_deal", rules).tolist() == [0]
        assert np.array_equal(o, encode(e.unwrapped.deal, 1))
        total = dict.fromkeys(e.possible_agents, 0.0)
        for ag in e.agent_iter():
            obs, r, term, trunc, _ = e.last()
            total[ag] += r
            e.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
        assert list(total.values()) == [reward, 0.0, 0.0, 0.0], contract


def test_r10_3_match_remaining_holds_the_anti_salad() -> None:
    """Match mode: each seat's ``remaining`` row has 12 entries, 9 contracts to declare (R10.3: one more per
    declarer); once the declarer has played the anti-salad, its row no longer holds it."""
    e = barbu_env.env(rules="positive2", declarer=2)
    e.reset(seed=1, options={"contract": "anti_salad"})
    rules = e.unwrapped.rules
    rows = block_of(e.observe("player_2")["observation"], "remaining", rules).reshape(4, 12)
    assert rows.sum(axis=1).tolist() == [9, 9, 9, 9] and rows[:, 11].tolist() == [1, 1, 1, 1]
    while e.unwrapped.match.deal_no == 0:
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    rows = block_of(e.observe("player_2")["observation"], "remaining", rules).reshape(4, 12)
    assert rows.sum(axis=1).tolist() == [8, 9, 9, 9] and rows[0, 11] == 0  # seat 2 is relative seat 0


@pytest.mark.parametrize(("preset", "spec"), [("positive1", "random"), ("positive2", "heuristic"),
                                             ("positive3", "heuristic")])  # fmt: skip
def test_r10_3_agents_play_whole_matches(preset: str, spec: str) -> None:
    """Agents play only legal actions through a whole match (36 deals); rewards sum to the totals (R8.3)."""
    e = barbu_env.env(rules=preset)
    e.reset(seed=3)
    total = agents_env_play(e, spec)
    m = e.unwrapped.match
    assert m.is_over and len(m.records) == 36 and list(total.values()) == m.totals
    assert {r.contract for r in m.records} >= {"anti_salad", "salad", "no_tricks"}


def test_r10_3_pimc_plays_the_positive_contracts() -> None:
    for contract in ("no_tricks", "salad", "anti_salad"):
        e = barbu_env.env(rules="positive3", mode="deal", contract=contract)
        e.reset(seed=2)
        players = {a: agents.make("pimc:samples=2", seed=i) for i, a in enumerate(e.possible_agents)}
        for ag in e.agent_iter():
            _, _, term, trunc, _ = e.last()
            e.step(None if term or trunc else players[ag].act(e, ag))
        assert e.unwrapped.deal.is_over


@pytest.mark.parametrize("preset", ["positive1", "positive2", "positive3"])
def test_r10_3_barbu_eval(preset: str) -> None:
    """barbu-eval runs the anti-salad, the positive salad and a negated No tricks of each preset."""
    contracts = ["anti_salad", "salad", "no_tricks"]
    s = evaluate(["heuristic", "random"], rules=preset, contracts=contracts, boards=2, seed=0)
    assert list(s["contracts"]) == contracts
    for row in s["contracts"].values():  # margins from the table mean: heuristic + 3 x random = 0
        assert row["agents"]["heuristic"]["mean"] == pytest.approx(-3 * row["agents"]["random"]["mean"])


def test_r10_3_render_and_what_refuses() -> None:
    """render marks a negated contract; VectorDeals refuses ``positive`` listing what it supports; a checkpoint
    refuses the 1238-entry layout naming both sizes."""
    from barbu_env.vector import VectorDeals

    e = barbu_env.env(rules="positive1", mode="deal", contract="no_tricks", render_mode="ansi", doubling="off")
    e.reset(seed=0)
    text = e.render().splitlines()
    assert text[0] == "Barbu, positive no_tricks, salad" and "contract no_tricks (positive)" in text[1]
    with pytest.raises(ValueError, match=r"positive=\('no_tricks', 'salad'\) is not supported.*positive=\[\(\)\]"):
        VectorDeals("no_tricks", rules="positive1", batch=2)
    net = agents.make("checkpoints/no_tricks.pt")
    with pytest.raises(ValueError, match=r"reads 1228 observation entries and 87 actions, these rules have 1238 and"):
        net.act(e, e.agent_selection)
