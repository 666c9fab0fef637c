"""PettingZoo's own conformance tests on barbu_v0 (api_test, seed_test), in deal and match mode with
several rule options (RULES.md R4, R6.7, R7.5, R9, R10), and the registry entry."""

from __future__ import annotations

import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, seed_test

import barbu_env

DEAL_CONFIGS = [
    {"mode": "deal", "contract": "no_queens"},
    {"mode": "deal", "contract": "trumps:H", "overtrump": "yes"},
    {"mode": "deal", "contract": "fantan:7", "ace_plays_again": True},
    {"mode": "deal", "contract": "no_king", "doubling": "declarer_only", "king_discard": "forced"},
    {"mode": "deal", "contract": "no_last_two", "rules": "basic32"},
    {"mode": "deal"},  # the declarer chooses (R3)
    {"mode": "deal", "rules": "ravage_city", "declarer": 2},
    {"mode": "deal", "doubling": "off", "undoubled_negative": "play", "declarer": "random"},
    {"mode": "deal", "undoubled_negative": "split", "contract": "no_tricks"},
]
MATCH_CONFIGS = [
    {},
    {"doubling": "off", "schedule": "rotate"},
    {"rules": "basic32", "ravage_city": True},
]


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test's advice about Dict observation spaces, dummy options
        fn(*args, **kwargs)


@pytest.mark.parametrize("kwargs", DEAL_CONFIGS, ids=lambda k: "-".join(f"{v}" for v in k.values()))
def test_api_and_seed_deal_mode(kwargs):
    _quiet(api_test, barbu_env.env(**kwargs), num_cycles=100)
    _quiet(seed_test, lambda: barbu_env.env(**kwargs), num_cycles=100)


@pytest.mark.parametrize("kwargs", MATCH_CONFIGS, ids=lambda k: "-".join(f"{v}" for v in k.values()) or "classic")
def test_api_and_seed_match_mode(kwargs):
    _quiet(api_test, barbu_env.env(mode="match", **kwargs), num_cycles=40)
    _quiet(seed_test, lambda: barbu_env.env(mode="match", **kwargs), num_cycles=40)


def test_raw_env_passes_api_test_too():
    _quiet(api_test, barbu_env.raw_env(mode="deal", contract="no_hearts"), num_cycles=100)


def test_registry_make():
    e = pettingzoo.make("aec", "barbu/barbu-v0", mode="deal", contract="no_tricks")
    assert e.unwrapped.metadata["name"] == "barbu_v0"
    assert e.unwrapped.mode == "deal"
    assert isinstance(e, pettingzoo.utils.wrappers.OrderEnforcingWrapper)
    e.reset(seed=0)
    assert e.agent_selection == "player_1"  # R6.1: doubling starts left of the declarer


def test_metadata_and_spaces():
    e = barbu_env.env()
    md = e.unwrapped.metadata
    assert md["name"] == "barbu_v0" and md["is_parallelizable"] is False
    assert set(md["render_modes"]) == {"ansi", "human", "rgb_array"}
    assert e.possible_agents == ["player_0", "player_1", "player_2", "player_3"]
    for a in e.possible_agents:
        assert e.action_space(a).n == barbu_env.NUM_ACTIONS == 87
        space = e.observation_space(a)
        assert space["action_mask"].shape == (87,)
    shapes = {barbu_env.env(mode=m, **kw).observation_space("player_0")["observation"].shape
              for m in ("deal", "match") for kw in ({}, {"rules": "basic32"}, {"doubling": "off"})}  # fmt: skip
    assert len(shapes) == 1  # one shape for both modes and every option


def test_agent_iter_as_pettingzoo():
    """The generator-backed ``agent_iter`` yields what PettingZoo's ``AECIterable`` yields, ``max_iter``
    included, and each ``iter()`` starts afresh."""
    import itertools

    from pettingzoo.utils.env import AECIterable

    for max_iter in (2**63, 7):
        seqs = []
        for it in (lambda e, n=max_iter: e.agent_iter(n), lambda e, n=max_iter: AECIterable(e, n)):
            e = barbu_env.raw_env(mode="deal", contract="no_king")
            e.reset(seed=4)
            seq = []
            for agent in it(e):
                seq.append(agent)
                obs, _, term, trunc, _ = e.last()
                e.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[-1]))
            seqs.append(seq)
        assert seqs[0] == seqs[1] and len(seqs[0]) == min(max_iter, len(seqs[1]))
    e = barbu_env.raw_env(mode="deal", contract="no_king")
    e.reset(seed=4)
    it = e.agent_iter(3)
    assert list(itertools.islice(iter(it), 2)) == list(itertools.islice(iter(it), 2))
