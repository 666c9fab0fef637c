"""Bad input at the env's and the engine's edges: refused at once with an error naming the argument.

Regression tests of issue 15 items 1 (hand bitmasks), 7 (types of the env keywords and rule options) and
9 (actions, seeds, hands and calls after the episode). Each bad call runs under a time limit: a hang fails.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import SUIT_HANDS, random_env_play
from timeouts import time_limit

import barbu_env
from barbu_env import Deal, Rules, action_id
from barbu_env.cards import cards_of


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    """Load the compiled kernels before any time limit (an alarm must not land inside a compile)."""
    for mode in ("deal", "match"):
        barbu_env.env(mode=mode).reset(seed=0)


# ----------------------------------------------------------------------------- item 1: hand bitmasks
@pytest.mark.parametrize("mode", ["deal", "match"])
@pytest.mark.parametrize("hands", [[-1, 0, 0, 0], [-(1 << 52), 0, 0, 0], [(1 << 100_000) - 1, 0, 0, 0]])
def test_negative_or_oversized_hand_bitmasks_are_refused_at_once(mode, hands):
    e = barbu_env.env(mode=mode)
    with time_limit(5, "reset with bad bitmask hands"), pytest.raises(ValueError, match=r"bitmask .* seat 0"):
        e.reset(options={"hands": hands})


def test_deal_from_hands_refuses_negative_bitmasks_and_cards_of_negative_masks():
    with time_limit(5, "Deal.from_hands"), pytest.raises(ValueError, match="bitmask"):
        Deal.from_hands([-(1 << 52), 0, 0, 0])
    with time_limit(5, "Deal.from_hands"), pytest.raises(ValueError, match="bitmask"):
        Deal.from_hands([np.int64(-1), 0, 0, 0])
    with time_limit(5, "cards_of"), pytest.raises(ValueError, match="non-negative"):
        cards_of(-1)


def test_bitmask_hands_as_numpy_ints_are_hands():
    """R1.2: a hand may be given as a bitmask; numpy integers are ints."""
    masks = [((1 << 13) - 1) << (13 * s) for s in range(4)]
    d = Deal.from_hands(np.array(masks, dtype=np.int64), 0, "no_tricks")
    assert d.hands == masks and all(type(h) is int for h in d.hands)
    e = barbu_env.env(mode="match")
    e.reset(options={"hands": [np.int64(m) for m in masks]})
    assert e.unwrapped.deal.hands == masks


def test_endless_hand_is_refused():
    e = barbu_env.env(mode="deal")
    with time_limit(5, "reset with an endless hand"), pytest.raises(ValueError, match="more than 13 cards"):
        e.reset(options={"hands": [itertools.count(), [], [], []]})


@pytest.mark.parametrize(
    "hands, error, message",
    [
        ([None] * 4, TypeError, "bad hand None of seat 0"),
        ([1.5, 0, 0, 0], TypeError, "bad hand 1.5 of seat 0"),
        ([b"AS KH", "", "", ""], TypeError, "of seat 0"),
        (5, TypeError, "hands must be a list of 4 hands"),
        ({"0": "AS"}, TypeError, "hands must be a list"),
        ([True, 0, 0, 0], TypeError, "bad hand True of seat 0"),
    ],
)
@pytest.mark.parametrize("mode", ["deal", "match"])
def test_values_that_are_no_hands_are_type_errors(mode, hands, error, message):
    e = barbu_env.env(mode=mode)
    with time_limit(5, "reset"), pytest.raises(error, match=message):
        e.reset(options={"hands": hands})


# ----------------------------------------------------------------------------- item 7: types of keywords
def test_players_must_be_an_int_and_numpy_ints_are_ints():
    with pytest.raises(ValueError, match=r"'players'.*expected an int"):
        barbu_env.env(players=4.0)
    with pytest.raises(ValueError, match="'players'"):
        barbu_env.env(rules="king", players=3.0)
    for mode in ("deal", "match"):
        e = barbu_env.env(rules="king", players=np.int64(3), mode=mode)
        e.reset(seed=0)
        assert type(e.unwrapped.rules.players) is int and e.unwrapped.rules == barbu_env.load_rules("king3")
        assert e.possible_agents == ["player_0", "player_1", "player_2"]
        random_env_play(e, np.random.default_rng(0))


def test_numpy_values_for_rule_options_are_stored_as_python_values():
    r = Rules(ravage_city=np.True_, overtrump=np.bool_(True), scoring=np.str_("basic52"))
    assert r == Rules(ravage_city=True, overtrump="yes", scoring="basic52")
    assert type(r.ravage_city) is bool and type(r.scoring) is str
    with pytest.raises(ValueError, match="'schedule'"):
        Rules(schedule=np.array(["blocks", "rotate"]))  # not a truth-value error from numpy


def test_reward_scale_accepts_numpy_floats():
    """Rewards are the deal score (R8.1) times ``reward_scale``, whatever the number's type."""
    totals = {}
    for scale in (0.5, np.float32(0.5), np.float64(0.5), np.int64(2), 2):
        e = barbu_env.env(mode="deal", reward_scale=scale)
        e.reset(seed=3)
        got = dict.fromkeys(e.possible_agents, 0.0)
        for agent in e.agent_iter():
            obs, reward, term, trunc, _ = e.last()
            got[agent] += reward
            e.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
        assert type(e.unwrapped.reward_scale) is float
        totals[float(scale)] = got
    assert any(v != 0 for v in totals[0.5].values())
    assert {a: 4 * v for a, v in totals[0.5].items()} == totals[2.0]


BAD_SCALES = [0, 0.0, -1, -0.5, float("nan"), float("inf"), np.float32("nan"), 10**400]


@pytest.mark.parametrize("scale", BAD_SCALES, ids=lambda v: str(v)[:12])
def test_reward_scale_must_be_a_finite_positive_number(scale):
    with pytest.raises(ValueError, match="reward_scale"):
        barbu_env.env(reward_scale=scale)


@pytest.mark.parametrize("scale", ["1", None, True, np.True_, [1.0], 1j])
def test_reward_scale_of_another_type_is_a_type_error(scale):
    with pytest.raises(TypeError, match="reward_scale"):
        barbu_env.env(reward_scale=scale)


def test_illegal_penalty_must_not_be_negative():
    """A negative penalty would make an illegal move pay under "terminate"."""
    for penalty in (-5, -0.1, float("-inf"), float("nan")):
        with pytest.raises(ValueError, match="illegal_penalty"):
            barbu_env.env(illegal_action="terminate", illegal_penalty=penalty)
    e = barbu_env.env(illegal_action="terminate", illegal_penalty=np.float32(0))
    e.reset(seed=0)
    e.step(action_id("AS"))  # a card during the declaration: the episode ends, the offender gets 0
    assert all(e.terminations.values()) and set(e.rewards.values()) == {0.0}


# ----------------------------------------------------------------------------- item 9: raw errors at the edges
def test_huge_action_through_the_wrappers_is_out_of_the_action_space():
    e = barbu_env.env()
    e.reset(seed=0)
    assert not e.action_space("player_0").contains(10**20) and not e.action_space("player_0").contains(-(10**20))
    with pytest.raises(AssertionError, match="not in action space"):  # PettingZoo's AssertOutOfBoundsWrapper
        e.step(10**20)
    raw = barbu_env.raw_env()
    raw.reset(seed=0)
    with pytest.raises(ValueError, match="legal actions are"):
        raw.step(10**20)


@pytest.mark.parametrize("mode", ["deal", "match"])
def test_last_and_step_after_the_episode_say_it_is_over(mode):
    e = barbu_env.raw_env(mode=mode, **({"contract": "no_king"} if mode == "deal" else {"rules": "king_short"}))
    e.reset(seed=1)
    random_env_play(e, np.random.default_rng(0))
    assert e.agents == []
    with pytest.raises(RuntimeError, match=r"episode is over.*reset"):
        e.last()
    with pytest.raises(RuntimeError, match=r"episode is over.*reset"):
        e.step(None)
    e.reset(seed=1)  # and a reset starts the next one
    assert e.last()[0]["action_mask"].any()


@pytest.mark.parametrize("seed, error", [(-1, ValueError), (-(2**70), ValueError), (1.5, TypeError),
                                         ("1", TypeError), (True, TypeError), ([1, 2], TypeError)])  # fmt: skip
def test_bad_seed_is_named(seed, error):
    e = barbu_env.env()
    with pytest.raises(error, match="bad seed"):
        e.reset(seed=seed)


def test_numpy_int_seed_is_a_seed():
    obs = []
    for seed in (7, np.int64(7), np.uint8(7)):
        e = barbu_env.env(mode="deal")
        e.reset(seed=seed)
        obs.append(e.observe("player_0")["observation"])
    assert all(np.array_equal(obs[0], o) for o in obs[1:])


@pytest.mark.parametrize("options", [5, "hands", ["hands"]])
def test_reset_options_must_be_a_mapping(options):
    with pytest.raises(TypeError, match="reset options"):
        barbu_env.env().reset(options=options)


@pytest.mark.parametrize("illegal_action", ["raise", "renege", "terminate"])
@pytest.mark.parametrize("action", [None, 2.5, "2C", np.float64(3.0), True, np.array([1, 2]), -1, 87, 10**20])
def test_a_wrong_type_or_out_of_space_action_is_refused_in_every_mode(illegal_action, action):
    """Only an action id 0..86 can be a renege (R8.2) or end the episode; anything else is an error that
    changes nothing."""
    e = barbu_env.raw_env(mode="deal", contract="no_hearts", illegal_action=illegal_action)
    e.reset(options={"hands": SUIT_HANDS})
    before = e.last()
    with pytest.raises(ValueError, match=r"bad action|legal actions are"):
        e.step(action)
    after = e.last()
    assert e.agent_selection == "player_1" and not any(e.terminations.values()) and e.deal.history == []
    assert np.array_equal(before[0]["observation"], after[0]["observation"]) and before[1:] == after[1:]
    assert e.rewards == dict.fromkeys(e.possible_agents, 0.0)


def test_a_refused_step_keeps_the_pending_reward():
    """Match mode: after a deal ends the next agent's ``last()`` reward is its deal score; a refused step
    leaves it (and ``rewards``) as they were."""
    e = barbu_env.raw_env(mode="match", doubling="off", illegal_action="renege")
    e.reset(options={"hands": SUIT_HANDS, "contract": "trumps:C"})
    e.step(action_id("2H"))  # seat 0 holds clubs only: a renege, the deal ends (R8.2), seat 0 declares next
    agent = e.agent_selection
    reward = e.last()[1]
    rewards = dict(e.rewards)
    assert agent == "player_0" and reward == rewards[agent] == -65
    for bad in (None, 2.5, 87):
        with pytest.raises(ValueError):
            e.step(bad)
        assert e.last()[1] == reward and e.rewards == rewards and e.agent_selection == agent


@pytest.mark.parametrize("mode", ["deal", "match"])
def test_raw_env_calls_before_the_first_reset_say_to_reset(mode):
    e = barbu_env.raw_env(mode=mode, render_mode="ansi")
    for call in (lambda: e.step(0), e.last, lambda: e.observe("player_0"), e.render,
                 lambda: e.information_state("player_0")):  # fmt: skip
        with pytest.raises(RuntimeError, match=r"not been reset: call reset\(\) first"):
            call()


@pytest.mark.parametrize("agent", ["player_4", "player_9", None, ["player_0"], 0])
def test_an_unknown_agent_is_named_with_the_valid_ones(agent):
    e = barbu_env.env(mode="deal")
    e.reset(seed=0)
    for call in (e.observe, e.observation_space, e.action_space, e.unwrapped.information_state):
        with pytest.raises(ValueError, match=r"unknown agent .*'player_0', 'player_1', 'player_2', 'player_3'"):
            call(agent)


def test_engine_seats_take_numpy_ints_and_refuse_bools():
    """R1.3: a seat is an int 0..n-1; numpy integers are ints, a bool is not a seat."""
    d = Deal.from_hands(SUIT_HANDS, np.int64(1), "no_tricks", Rules(doubling="off"))
    assert d.declarer == 1 and type(d.declarer) is int and d.to_move == 1
    m = barbu_env.Match(Rules(), 0, np.int64(2))
    assert m.first_declarer == 2 and type(m.first_declarer) is int and m.deal.declarer == 2
    for bad in (True, np.True_, 1.0, 4, -1):
        with pytest.raises(ValueError, match="bad declarer"):
            Deal.from_hands(SUIT_HANDS, bad, "no_tricks")
        with pytest.raises(ValueError, match="bad first declarer"):
            barbu_env.Match(Rules(), 0, bad)
