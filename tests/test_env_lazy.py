"""Deal mode with the compiled copy as the state of record (``raw_env._materialise``): ``step`` moves only the
copy until something reads the ``Deal``, which is then rebuilt by replaying the actions. Checked against the
Python path (the env without a mirror) on the same deals and actions: the rebuilt deal at random points,
rewards (contract + settlement, R8.1), observations, and illegal actions in each ``illegal_action`` mode."""

from __future__ import annotations

import importlib
import itertools

import numpy as np
import pytest
from pettingzoo.utils.env import AECIterable

import barbu_env
from barbu_env.actions import NUM_ACTIONS, action_id
from barbu_env.engine.deal import Deal
from barbu_env.observation import encode

pytest.importorskip("numba")
env_mod = importlib.import_module("barbu_env.env")

CONTRACTS = ("no_tricks", "no_hearts", "no_queens", "no_king", "no_last_two", "trumps:S", "trumps:C", "fantan:7",
             "fantan:2", None)  # fmt: skip
KWARGS = [
    {},
    {"rules": "ravage_city"},
    {"rules": "basic32"},
    {"rules": "spanish", "reward_scale": 0.25},
    {"doubling": "off"},
    {"doubling": "declarer_only", "undoubled_negative": "split"},
    {"fantan_pass": "free", "ace_plays_again": True},
    {"overtrump": "yes", "trump_lead": "free", "declarer": "random"},
]


def _python_env(monkeypatch: pytest.MonkeyPatch, **kwargs: object) -> barbu_env.raw_env:
    with monkeypatch.context() as m:
        m.setattr(env_mod, "_mirror", lambda rules: None)
        e = barbu_env.raw_env(mode="deal", **kwargs)
    assert e._fast is None
    return e


def _same_deal(a: Deal, b: Deal) -> None:
    """Every public slot of the two deals is equal (caches and the rule flags derived from rules excluded)."""
    for name in Deal.__slots__:
        if not name.startswith("_"):
            assert getattr(a, name, None) == getattr(b, name, None), name


def _contract(rng: np.random.Generator, e: barbu_env.raw_env) -> str | None:
    c = CONTRACTS[rng.integers(len(CONTRACTS))]
    if c is not None and c.startswith("fantan") and "fantan" not in e._fast.tables.names:
        return "no_queens"
    if c == "fantan:2" and e.rules.deck_size == 32:
        return "fantan:7"
    return c


@pytest.mark.parametrize("kwargs", KWARGS)
def test_lazy_rewards_and_observations_equal_python_path(kwargs, monkeypatch):
    """Nothing reads the deal: the copy alone carries it; rewards, terminations and every observation equal the
    Python path's, and the copy stays the state of record to the end."""
    fast = barbu_env.raw_env(mode="deal", **kwargs)
    slow = _python_env(monkeypatch, **kwargs)
    rng = np.random.default_rng(7)
    ended = 0
    for k in range(12):
        c = _contract(rng, fast)
        fast.reset(seed=k, options={"contract": c})
        slow.reset(seed=k, options={"contract": c})
        for agent in fast.agent_iter():
            assert agent == slow.agent_selection and fast._lazy is not None
            obs, r, term, trunc, info = fast.last()
            ref = slow.last()
            assert obs["observation"].tobytes() == ref[0]["observation"].tobytes()
            assert obs["action_mask"].tobytes() == ref[0]["action_mask"].tobytes()
            assert (r, term, trunc, info) == ref[1:]
            for other in fast.possible_agents:
                if other in fast.agents and rng.random() < 0.2:
                    o, p = fast.observe(other), slow.observe(other)
                    assert o["observation"].tobytes() == p["observation"].tobytes()
                    assert o["action_mask"].tobytes() == p["action_mask"].tobytes()
            if term or trunc:
                fast.step(None)
                slow.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            a = int(legal[rng.integers(len(legal))])
            fast.step(a)
            slow.step(a)
            assert fast.rewards == slow.rewards and fast._cumulative_rewards == slow._cumulative_rewards
            assert fast.terminations == slow.terminations
            ended += any(fast.terminations.values())
        assert fast._lazy is not None and fast.agents == slow.agents == []
        _same_deal(fast.deal, slow.deal)  # read once over: rebuilt
    assert ended >= 12


@pytest.mark.parametrize("kwargs", KWARGS)
def test_rebuilt_deal_equals_python_path_at_random_points(kwargs, monkeypatch):
    """The deal is read at a random step (``deal``, ``render``, ``information_state``): rebuilt, it equals the
    Python path's; afterwards the copy follows it and observations still equal ``encode``."""
    fast = barbu_env.raw_env(mode="deal", render_mode="ansi", **kwargs)
    slow = _python_env(monkeypatch, render_mode="ansi", **kwargs)
    rng = np.random.default_rng(11)
    for k in range(10):
        c = _contract(rng, fast)
        fast.reset(seed=100 + k, options={"contract": c})
        slow.reset(seed=100 + k, options={"contract": c})
        at = int(rng.integers(0, 60))
        n = 0
        while not fast.terminations[fast.agent_selection]:
            if n == at:
                assert fast._lazy is not None
                how = n % 3
                if how == 0:
                    _same_deal(fast.deal, slow.deal)
                elif how == 1:
                    assert fast.render() == slow.render()
                else:
                    agent = fast.agent_selection
                    got, ref = vars(fast.information_state(agent)), vars(slow.information_state(agent))
                    _same_deal(got.pop("view"), ref.pop("view"))
                    assert got == ref
                assert fast._lazy is None and fast.deal is fast._fast_deal
            obs = fast.observe(fast.agent_selection)
            legal = np.flatnonzero(obs["action_mask"])
            a = int(legal[rng.integers(len(legal))])
            fast.step(a)
            slow.step(a)
            n += 1
            assert (fast._lazy is None) == (n > at)
            if n > at and not fast.terminations[fast.agent_selection]:
                s = fast.agent_name_mapping[fast.agent_selection]
                assert np.array_equal(fast.observe(fast.agent_selection)["observation"], encode(fast.deal, s))
        assert fast.rewards == slow.rewards
        _same_deal(fast.deal, slow.deal)


def _illegal(e: barbu_env.raw_env) -> int:
    mask = e.observe(e.agent_selection)["action_mask"]
    return int(np.flatnonzero(mask == 0)[0])


@pytest.mark.parametrize("mode", ["raise", "renege", "terminate"])
def test_illegal_actions_as_python_path(mode, monkeypatch):
    """An illegal action rebuilds the deal and takes the Python path: the same error, penalty or termination."""
    fast = barbu_env.raw_env(mode="deal", contract="no_hearts", illegal_action=mode)
    slow = _python_env(monkeypatch, contract="no_hearts", illegal_action=mode)
    rng = np.random.default_rng(3)
    for k in range(6):
        fast.reset(seed=k)
        slow.reset(seed=k)
        at = int(rng.integers(0, 40))
        for n in itertools.count():
            agent = fast.agent_selection
            if fast.terminations[agent]:
                break
            if n == at:
                bad = _illegal(fast)
                assert fast._lazy is not None
                if mode == "raise":
                    with pytest.raises(ValueError) as got:
                        fast.step(bad)
                    with pytest.raises(ValueError) as ref:
                        slow.step(bad)
                    assert str(got.value) == str(ref.value)
                else:
                    fast.step(bad)
                    slow.step(bad)
                assert fast._lazy is None
                _same_deal(fast.deal, slow.deal)
                assert fast.rewards == slow.rewards and fast.terminations == slow.terminations
                assert fast.infos == slow.infos
                continue
            legal = np.flatnonzero(fast.observe(agent)["action_mask"])
            a = int(legal[rng.integers(len(legal))])
            fast.step(a)
            slow.step(a)
        assert fast.rewards == slow.rewards and fast._cumulative_rewards == slow._cumulative_rewards


def test_other_actions_and_dead_steps(monkeypatch):
    """numpy integer actions stay on the copy; None, out-of-range ids and a dead agent's action fail as before."""
    fast = barbu_env.raw_env(mode="deal", contract="no_queens")
    fast.reset(seed=1)
    fast.step(np.int64(action_id("double:none")))
    assert fast._lazy is not None and fast._hist == [action_id("double:none")]
    for bad in (None, -1, NUM_ACTIONS, 1.0):
        with pytest.raises(ValueError):
            fast.step(bad)
    fast.reset(seed=2)
    while not fast.terminations[fast.agent_selection]:
        fast.step(int(np.flatnonzero(fast.observe(fast.agent_selection)["action_mask"])[0]))
    assert fast._lazy is not None
    with pytest.raises(ValueError, match="dead"):
        fast.step(0)
    fast.step(None)
    assert len(fast.agents) == 3


def test_agent_iter_as_pettingzoo():
    """The generator-backed ``agent_iter`` yields what PettingZoo's ``AECIterable`` yields, ``max_iter``
    included, and each ``iter()`` starts afresh."""
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


def test_mirror_start_learns_the_set_up():
    """``Mirror.start`` without a Deal gives the same row, mask and seat as ``load`` of the built Deal."""
    from barbu_env.engine.deal import deal_hands
    from barbu_env.rules import Rules
    from barbu_env.vector.single import Mirror

    for rules in (Rules(), Rules(doubling="off")):
        a, b = Mirror(rules), Mirror(rules)
        rng = np.random.default_rng(0)
        seen: set[tuple[int, str | None]] = set()
        for k in range(60):
            hands = deal_hands(rng, rules)
            declarer, contract = k % 4, CONTRACTS[k % len(CONTRACTS)]
            built = a.start(hands, declarer, contract)
            assert (built is None) == ((declarer, contract) in seen)
            seen.add((declarer, contract))
            b.load(Deal.from_hands(hands, declarer, contract, rules))
            assert a.seat == b.seat and a.steps == b.steps == 0
            assert a.row.tobytes() == b.row.tobytes() and a.mask.tobytes() == b.mask.tobytes()


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copies_mid_deal_keep_their_own_copy(how, monkeypatch):
    """A deepcopy or pickle of the env mid-deal (the copy the state of record) plays on by itself: the same
    rewards and rebuilt deal as the Python path, the original untouched."""
    import copy
    import pickle

    e = barbu_env.raw_env(mode="deal", contract="no_hearts")
    slow = _python_env(monkeypatch, contract="no_hearts")
    e.reset(seed=6)
    slow.reset(seed=6)
    for _ in range(10):
        a = int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0])
        e.step(a)
        slow.step(a)
    c = copy.deepcopy(e) if how == "deepcopy" else pickle.loads(pickle.dumps(e))
    assert c._lazy is not None and c._mbuf is c._fast._buf and c._mbuf is not e._mbuf
    while not c.terminations[c.agent_selection]:
        a = int(np.flatnonzero(c.observe(c.agent_selection)["action_mask"])[-1])
        c.step(a)
        slow.step(a)
    assert c._lazy is not None and c.rewards == slow.rewards and any(c.rewards.values())
    _same_deal(c.deal, slow.deal)
    assert e._lazy is not None and len(e.deal.history) == 10



def _finish(e) -> list[float]:
    """Play the rest of the deal with each seat's first legal action; the rewards of its last step."""
    while not all(e.terminations.values()):
        e.step(int(np.flatnonzero(e.last()[0]["action_mask"])[0]))
    return [e.rewards[a] for a in e.possible_agents]


def test_unpickled_in_a_fresh_process_steps(tmp_path):
    """An env pickled mid-deal (the compiled copy as the state of record) steps in a new process, where the
    mirror's kernel has not been looked up yet, and ends the deal with the same rewards (R8.1)."""
    import ast
    import inspect
    import pickle
    import subprocess
    import sys

    pytest.importorskip("numba")
    e = barbu_env.raw_env(mode="deal", contract="no_queens")
    e.reset(seed=3)
    for _ in range(9):
        e.step(int(np.flatnonzero(e.last()[0]["action_mask"])[-1]))
    assert e._lazy is not None
    path = tmp_path / "env.pkl"
    path.write_bytes(pickle.dumps(e))
    code = (f"import pickle, numpy as np\n{inspect.getsource(_finish)}\n"
            f"e = pickle.loads(open({str(path)!r}, 'rb').read())\nprint(repr(_finish(e)), e._lazy is not None)\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    assert ast.literal_eval(" ".join(out[:-1])) == _finish(e) and out[-1] == "True"
