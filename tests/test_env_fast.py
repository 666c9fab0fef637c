"""The env's compiled observation path (``vector.single.Mirror``, deal mode of classic Barbu with numba):
observations and masks byte-identical to the Python path (``SeatObservations``) and to ``encode`` /
``Deal.legal_actions``, whatever the seats' order and rate of looking, and the fallbacks to the Python path
where the copy cannot follow (Barbu King, match mode, numba missing, R8.2 renege, a deal changed outside
``step``)."""

from __future__ import annotations

import copy
import importlib
import pickle

import numpy as np
import pytest

import barbu_env
from barbu_env.actions import NUM_ACTIONS, action_id
from barbu_env.contracts import contract_table
from barbu_env.observation import encode
from barbu_env.rules import load_rules

env_mod = importlib.import_module("barbu_env.env")  # the module (barbu_env.env is the function env())

CLASSIC_PRESETS = ["classic", "ravage_city", "basic52", "basic32", "salad", "rotate", "spanish", "online"]
OPTIONS = [
    {"doubling": "off"},
    {"doubling": "declarer_only", "undoubled_negative": "split"},
    {"fantan_pass": "free", "ace_plays_again": True},
    {"overtrump": "yes", "trump_lead": "free"},
    {"hearts_lead": "until_broken", "king_discard": "forced"},
]


def _contracts(rules) -> list[str | None]:
    """Every contract text of the rules (trumps in two suits, Fantan at two ranks), and None (declaration)."""
    out: list[str | None] = [None]
    for name in contract_table(rules):
        if name == "trumps":
            out += ["trumps:S", "trumps:H"]
        elif name == "fantan":
            out += ["fantan:7", "fantan:10"]
        else:
            out.append(name)
    return out


def _mask(deal) -> np.ndarray:
    m = np.zeros(NUM_ACTIONS, np.int8)
    if not deal.is_over:
        m[deal.legal_actions()] = 1
    return m


def _play_both(kwargs: dict, seed: int, monkeypatch: pytest.MonkeyPatch, deals: int = 3) -> int:
    """Two raw envs, compiled and Python path, the same deals and actions; seats look in random order and
    at random rates. Every observation and mask of the two is compared byte for byte, and with ``encode``.
    Returns the number of observations compared."""
    fast = barbu_env.raw_env(mode="deal", **kwargs)
    with monkeypatch.context() as m:
        m.setattr(env_mod, "_mirror", lambda rules: None)
        slow = barbu_env.raw_env(mode="deal", **kwargs)
    assert slow._fast is None
    rng = np.random.default_rng(seed)
    looked = 0
    for k in range(deals):
        contract = rng.choice(np.array(_contracts(fast.rules), object)) if "contract" not in kwargs else None
        options = {"contract": contract} if contract is not None else {}
        fast.reset(seed=seed * 100 + k, options=options)
        slow.reset(seed=seed * 100 + k, options=options)
        assert fast._fast is not None and fast.deal is fast._fast_deal  # the compiled path is the one tested
        while True:
            for agent in rng.permutation(fast.possible_agents)[: rng.integers(0, 5)]:
                a, b = fast.observe(agent), slow.observe(agent)
                assert a["observation"].tobytes() == b["observation"].tobytes(), agent
                assert a["action_mask"].tobytes() == b["action_mask"].tobytes(), agent
                seat = fast.agent_name_mapping[agent]
                assert np.array_equal(a["observation"], encode(fast.deal, seat))
                on_move = seat == fast.deal.to_move and not fast.terminations[agent]
                assert np.array_equal(a["action_mask"], _mask(fast.deal) if on_move else np.zeros(NUM_ACTIONS))
                looked += 1
            agent = fast.agent_selection
            assert agent == slow.agent_selection
            if fast.terminations[agent]:
                assert fast.rewards == slow.rewards and slow.terminations[agent]
                break
            obs, *_ = fast.last()
            legal = np.flatnonzero(obs["action_mask"])
            assert legal.tolist() == fast.deal.legal_actions()
            a = int(legal[rng.integers(len(legal))])
            fast.step(a)
            slow.step(a)
            assert fast.deal is fast._fast_deal
    return looked


@pytest.mark.parametrize("preset", CLASSIC_PRESETS)
def test_compiled_observations_equal_python_path_presets(preset, monkeypatch):
    pytest.importorskip("numba")
    assert _play_both({"rules": preset}, 1, monkeypatch, deals=6) > 300


@pytest.mark.parametrize("options", OPTIONS)
def test_compiled_observations_equal_python_path_options(options, monkeypatch):
    pytest.importorskip("numba")
    assert _play_both(options, 2, monkeypatch, deals=6) > 300


@pytest.mark.parametrize("contract", [c for c in _contracts(load_rules("classic")) if c is not None])
def test_compiled_observations_equal_python_path_contracts(contract, monkeypatch):
    pytest.importorskip("numba")
    assert _play_both({"contract": contract, "declarer": "random"}, 3, monkeypatch, deals=4) > 150


def test_compiled_copy_survives_copies():
    """deepcopy / pickle mid-deal: each copy's observations follow its own deal."""
    pytest.importorskip("numba")
    e = barbu_env.raw_env(mode="deal", contract="no_hearts")
    e.reset(seed=4)
    for _ in range(9):
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[-1]))
    for c in (copy.deepcopy(e), pickle.loads(pickle.dumps(e))):
        assert c.deal is c._fast_deal and c.deal is not e.deal
        c.step(int(np.flatnonzero(c.observe(c.agent_selection)["action_mask"])[0]))
        for s, agent in enumerate(c.possible_agents):
            assert np.array_equal(c.observe(agent)["observation"], encode(c.deal, s))
            assert np.array_equal(e.observe(agent)["observation"], encode(e.deal, s))


@pytest.mark.parametrize(
    "kwargs", [{"mode": "deal", "rules": "king"}, {"mode": "deal", "rules": "king3"}, {"mode": "match"}]
)
def test_no_compiled_copy_for_king_or_match(kwargs):
    e = barbu_env.raw_env(**kwargs)
    e.reset(seed=0)
    assert e._fast is None and e._fast_deal is None


def test_no_compiled_copy_without_numba(monkeypatch):
    """Without numba (``barbu_env[fast]`` not installed) the env takes the Python path, unchanged."""
    from barbu_env.vector import backend

    monkeypatch.setattr(backend, "numba_available", lambda: False)
    e = barbu_env.raw_env(mode="deal", contract="trumps:D")
    e.reset(seed=1)
    assert e._fast is None
    for _agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        seat = e.agent_name_mapping[e.agent_selection]
        assert np.array_equal(obs["observation"], encode(e.deal, seat))
        e.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))


def test_falls_back_after_renege_and_outside_changes():
    """An R8.2 renege, or an action applied to the deal outside ``step``: the Python path serves the rest of
    that deal (observations still equal ``encode``); the next deal is copied again."""
    pytest.importorskip("numba")
    e = barbu_env.raw_env(mode="deal", contract="no_tricks", illegal_action="renege", doubling="off")
    e.reset(seed=2)
    assert e.deal is e._fast_deal
    e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    hand = e.deal.hands[e.deal.to_move]
    illegal = next(c for c in range(52) if not hand >> c & 1)
    e.step(illegal)  # R8.2: the deal ends with the penalty
    assert e._fast_deal is None and e.deal.is_over
    for s, agent in enumerate(e.possible_agents):
        assert np.array_equal(e.observe(agent)["observation"], encode(e.deal, s))
    e.reset(seed=3)
    assert e.deal is e._fast_deal
    d = e.deal
    d.apply(d.legal_actions()[0])  # outside step: the copy no longer matches
    seat = d.to_move
    o = e.observe(e.possible_agents[seat])
    assert np.array_equal(o["observation"], encode(d, seat))
    assert np.flatnonzero(o["action_mask"]).tolist() == d.legal_actions()


def test_terminate_mode_keeps_the_compiled_copy():
    pytest.importorskip("numba")
    e = barbu_env.raw_env(mode="deal", contract="no_queens", illegal_action="terminate")
    e.reset(seed=5)
    e.step(action_id("double:none"))
    assert e.deal is e._fast_deal and e._fast.steps == 1
