"""Property-based tests (hypothesis): arbitrary values at the env's entry points.

Every env keyword (the env options and every RULES.md option), every reset option (``hands``, ``declarer``,
``first_declarer``, ``contract``), the seed and the action get valid values and junk (None, bools, huge and
negative ints, nan/inf, strings, bytes, lists, dicts, numpy scalars and arrays, objects). Each call runs under
a time limit and must give a valid result or a ``ValueError``/``TypeError`` whose message names the argument;
a refused ``step`` or ``reset`` changes nothing that ``observe``/``last``/``agent_selection``/``rewards`` show.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np
import pytest
from helpers import random_env_play
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from timeouts import time_limit

import barbu_env
from barbu_env.cards import cards_of, format_card
from barbu_env.engine.deal import deal_hands
from barbu_env.env_checks import ENV_OPTIONS, RESET_OPTIONS
from barbu_env.render import HAND_CHOICES
from barbu_env.rules import (
    BOOL_OPTIONS,
    CHOICES,
    GAMES,
    KING_BOOL_OPTIONS,
    PLAYER_COUNTS,
    POSITIVE_CHOICES,
    PRESETS,
    load_rules,
)

MODES = ("match", "deal")
ILLEGAL_MODES = ("raise", "renege", "terminate")
LIMIT_S = 30.0  # per call: far above any valid call, even on a loaded machine (a hang or a huge loop fails)
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([-1, 0, 1, 3, 4, 5, 7, 86, 87, 2**52, 10**30, -(10**30)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.binary(max_size=4),
    st.complex_numbers(max_magnitude=10, allow_nan=False),
    st.lists(st.integers(-3, 60), max_size=4),
    st.dictionaries(st.text(max_size=3), st.integers(-3, 3), max_size=2),
    st.integers(-(2**63), 2**63 - 1).map(np.int64),
    st.floats(width=32).map(np.float32),
    st.booleans().map(np.bool_),
    st.lists(st.integers(0, 100), max_size=3).map(np.array),
    st.builds(object),
)
CONTRACTS = ["no_queens", "no_tricks", "trumps:S", "trumps:x", "fantan:5", "fantan:10", "fantan:Z", "salad",
             "ravage_city", "take_tricks", "no_first_last", "declare:no_king", "trumps", ""]  # fmt: skip
GOOD: dict[str, st.SearchStrategy] = {
    "mode": st.sampled_from(MODES),
    "contract": st.sampled_from(CONTRACTS),
    "declarer": st.sampled_from([0, 1, 2, 3, 4, "random", np.int64(2)]),
    "rules": st.sampled_from(sorted(PRESETS)),
    "reward_scale": st.floats(-2, 1e6, allow_nan=False) | st.sampled_from([np.float32(0.5), np.int64(3), 0]),
    "illegal_action": st.sampled_from(ILLEGAL_MODES),
    "illegal_penalty": st.floats(-10, 1e6) | st.sampled_from([np.float32(5.0), 0]),
    "render_mode": st.sampled_from([None, "ansi"]),
    "render_hands": st.sampled_from(HAND_CHOICES),
    **{name: st.sampled_from(allowed) for name, allowed in CHOICES.items()},
    **{name: st.booleans() | st.booleans().map(np.bool_) for name in (*BOOL_OPTIONS, *KING_BOOL_OPTIONS)},
    "game": st.sampled_from(GAMES),
    "players": st.sampled_from(PLAYER_COUNTS) | st.sampled_from(PLAYER_COUNTS).map(np.int64),
    "positive": st.lists(st.sampled_from(POSITIVE_CHOICES), max_size=4, unique=True),  # R10.3
}
assert set(GOOD) == set(ENV_OPTIONS) | set(load_rules().__dataclass_fields__), "a keyword has no strategy"
KEYS = sorted(GOOD)


def value_for(key: str) -> st.SearchStrategy:
    """A valid value of ``key`` or junk."""
    return GOOD[key] | JUNK if key in GOOD else JUNK


def kwargs_strategy() -> st.SearchStrategy[dict[str, Any]]:
    # (R10.3's ``positive`` is a RULES.md option without an engine field: an unknown keyword, which must say so)
    names = st.lists(st.sampled_from([*KEYS, "positive", "colour", "Mode"]), unique=True, max_size=4)
    return names.flatmap(lambda ks: st.fixed_dictionaries({k: value_for(k) for k in ks}))


def assert_clear_refusal(err: BaseException, names: list[str]) -> None:
    """``err`` is a ValueError/TypeError whose message names one of ``names``."""
    assert isinstance(err, (ValueError, TypeError)), f"{type(err).__name__}: {err}"
    msg = str(err)
    assert any(n in msg for n in names), f"the message does not name any of {names}: {msg}"


def snapshot(e) -> tuple:
    """What the AEC API shows of ``e``: agents, agent on move, rewards, flags, infos, ``last()`` and every
    live agent's observation."""
    raw = e.unwrapped
    last = e.last() if e.agents else None
    obs = {a: e.observe(a) for a in e.agents}
    return (
        list(e.agents), e.agent_selection, dict(raw.rewards), dict(raw.terminations), dict(raw.truncations),
        repr(raw.infos), None if last is None else (_obs_key(last[0]), *last[1:4]),
        {a: _obs_key(o) for a, o in obs.items()},
    )  # fmt: skip


def _obs_key(obs: dict[str, np.ndarray]) -> tuple[bytes, bytes]:
    return obs["observation"].tobytes(), obs["action_mask"].tobytes()


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    """Load the compiled kernels before any time limit (an alarm must not land inside a compile)."""
    for mode in MODES:
        barbu_env.env(mode=mode).reset(seed=0)


# ----------------------------------------------------------------------------- env keywords
@PROPERTY
@given(kwargs=kwargs_strategy(), seed=st.integers(0, 2**32))
def test_any_env_keywords_give_a_working_env_or_a_clear_error(kwargs, seed):
    try:
        with time_limit(LIMIT_S, f"env(**{kwargs!r})"):
            e = barbu_env.env(**kwargs)
    except Exception as err:
        assert_clear_refusal(err, [*kwargs, "rule option", "rules"])
        return
    with time_limit(LIMIT_S, f"reset of env(**{kwargs!r})"):
        e.reset(seed=seed)
        random_env_play(e, np.random.default_rng(seed), 12)
    for agent in e.agents:
        obs = e.observe(agent)
        assert e.observation_space(agent).contains(obs)
    if e.agents and not e.terminations[e.agent_selection]:
        assert e.last()[0]["action_mask"].any()


# ----------------------------------------------------------------------------- reset options
ENVS = [("classic", "deal"), ("classic", "match"), ("king3", "deal"), ("basic32", "match"), ("king", "match"),
        ("ravage_city", "deal")]  # fmt: skip


@st.composite
def hands_strategy(draw, rules) -> Any:
    """Valid hands (card strings, ids or bitmasks), hands made wrong in one way, or junk."""
    masks = deal_hands(np.random.default_rng(draw(st.integers(0, 2**16))), rules)
    form = draw(st.sampled_from(["text", "ids", "masks", "lists"]))
    hands: list[Any] = {
        "text": [" ".join(format_card(c) for c in cards_of(m)) for m in masks],
        "ids": [cards_of(m) for m in masks],
        "masks": list(masks),
        "lists": [[format_card(c) for c in cards_of(m)] for m in masks],
    }[form]
    damage = draw(st.sampled_from(["none", "none", "seat_junk", "drop", "extra", "swap", "seats", "junk"]))
    seat = draw(st.integers(0, len(hands) - 1))
    if damage == "seat_junk":
        hands[seat] = draw(JUNK)
    elif damage == "drop" and form != "masks":
        hands[seat] = hands[seat][1:] if form != "text" else hands[seat][3:]
    elif damage == "extra" and form in ("ids", "lists"):
        hands[seat] = [*hands[seat], hands[(seat + 1) % len(hands)][0]]
    elif damage == "swap" and form == "masks":
        hands[seat] = hands[seat] ^ (1 << draw(st.integers(0, 60)))
    elif damage == "seats":
        hands = hands[:-1] if draw(st.booleans()) else [*hands, hands[0]]
    elif damage == "junk":
        return draw(JUNK)
    return hands


def options_strategy(rules) -> st.SearchStrategy[dict[str, Any]]:
    values = {
        "hands": hands_strategy(rules),
        "contract": st.sampled_from(CONTRACTS) | JUNK,
        "declarer": st.sampled_from([0, 1, 2, 3, 4, "random", np.int64(1)]) | JUNK,
        "first_declarer": st.sampled_from([0, 1, 5, "random"]) | JUNK,
        "colour": JUNK,
    }
    names = st.lists(st.sampled_from(sorted(values)), unique=True, max_size=3)
    return names.flatmap(lambda ks: st.fixed_dictionaries({k: values[k] for k in ks}))


SEEDS = st.none() | st.integers(0, 2**64) | JUNK


@PROPERTY
@given(data=st.data())
def test_any_reset_gives_a_valid_start_or_a_clear_error_that_changes_nothing(data):
    preset, mode = data.draw(st.sampled_from(ENVS))
    e = barbu_env.env(rules=preset, mode=mode)
    e.reset(seed=5)
    random_env_play(e, np.random.default_rng(5), data.draw(st.integers(0, 6)))
    options = data.draw(options_strategy(e.unwrapped.rules) | st.none() | JUNK, label="options")
    seed = data.draw(SEEDS, label="seed")
    before = snapshot(e)
    try:
        with time_limit(LIMIT_S, f"reset(seed={seed!r}, options={options!r})"), warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # unknown reset options are ignored with a warning
            e.reset(seed=seed, options=options)
    except Exception as err:
        names = [*RESET_OPTIONS, "hand", "card", "seed", "reset options", "contract", "declar"]
        assert_clear_refusal(err, names)
        assert snapshot(e) == before, "a refused reset changed the env"
        return
    assert len(e.agents) == e.unwrapped.num_players
    assert e.last()[0]["action_mask"].any()


@settings(PROPERTY, derandomize=True, phases=[Phase.explicit, Phase.generate])  # no shrinking: it fails now
@given(data=st.data())
def test_a_refused_reset_leaves_the_generator_alone(data):
    """A refused ``reset`` does not advance or reseed the env's generator: the next bare ``reset()`` deals what
    it would have dealt without the refused call."""
    preset, mode = data.draw(st.sampled_from(ENVS))
    e = barbu_env.env(rules=preset, mode=mode)
    e.reset(seed=5)
    twin = copy.deepcopy(e)
    options = data.draw(options_strategy(e.unwrapped.rules), label="options")
    seed = data.draw(SEEDS, label="seed")
    try:
        with time_limit(LIMIT_S, "reset"), warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            e.reset(seed=seed, options=options)
    except (ValueError, TypeError):
        e.reset()
        twin.reset()
        assert snapshot(e) == snapshot(twin)


# ----------------------------------------------------------------------------- actions
ACTIONS = st.integers(0, 86) | st.integers(-3, 90) | JUNK


@PROPERTY
@given(data=st.data())
def test_any_action_is_applied_or_refused_without_a_change(data):
    preset, mode = data.draw(st.sampled_from(ENVS))
    illegal_action = data.draw(st.sampled_from(ILLEGAL_MODES))
    make = data.draw(st.sampled_from([barbu_env.env, barbu_env.raw_env]))
    e = make(rules=preset, mode=mode, illegal_action=illegal_action)
    seed = data.draw(st.integers(0, 2**16))
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(data.draw(st.integers(1, 4))):
        random_env_play(e, rng, data.draw(st.integers(0, 30)))
        if not e.agents:
            break
        action = data.draw(ACTIONS, label="action")
        before, twin = snapshot(e), copy.deepcopy(e)
        try:
            with time_limit(LIMIT_S, f"step({action!r})"):
                e.step(action)
        except AssertionError as err:  # PettingZoo's AssertOutOfBoundsWrapper in env()
            assert make is barbu_env.env and "not in action space" in str(err)
            assert not e.action_space(e.agent_selection).contains(action)
        except Exception as err:
            assert_clear_refusal(err, ["action", "dead"])
        else:
            continue
        assert snapshot(e) == before, f"a refused step({action!r}) changed the env"
        e.reset()
        twin.reset()
        assert snapshot(e) == snapshot(twin), f"a refused step({action!r}) moved the generator"
        return
