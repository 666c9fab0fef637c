"""The deal-in-play seam (``barbu_env.inplay``): the compiled play against the engine play on the same deals and
actions, seat by seat (observations, masks, seats, refusals, scores, the rebuilt ``Deal``), in deal and match
mode, and the env's public behaviour around it (copies, pickles, a deal changed by its reader, RULES.md R3-R9)."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import barbu_env
from barbu_env import inplay
from barbu_env.contracts import contract_table
from barbu_env.engine.deal import FANTAN_PLAY, PLAY, Deal, deal_hands
from barbu_env.engine.match import Match
from barbu_env.inplay import CompiledPlay, EnginePlay, mirror_for
from barbu_env.observation import encode
from barbu_env.rules import load_rules

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
        out += {"trumps": ["trumps:S", "trumps:H"], "fantan": ["fantan:7", "fantan:10"]}.get(name, [name])
    return out


def _same_deal(a: Deal, b: Deal) -> None:
    """Every public slot of the two deals is equal."""
    for name in Deal.__slots__:
        if not name.startswith("_"):
            assert getattr(a, name, None) == getattr(b, name, None), name


def _compare(fast, slow, n: int, rng: np.random.Generator) -> int:
    """Play ``fast`` and ``slow`` (same deal) with the same random actions, some illegal; compare every seat (and the
    copy's forced move with the mask)."""
    looked = 0
    while True:
        assert fast.seat == slow.seat
        for seat in rng.permutation(n)[: rng.integers(1, n + 1)]:
            assert fast.observe(int(seat)).tobytes() == slow.observe(int(seat)).tobytes(), seat
            looked += 1
        if fast.seat < 0:
            assert fast._mirror.forced_action() == -1
            assert fast.scores() == slow.scores()
            _same_deal(fast.deal(), slow.deal())
            return looked
        mask = slow.mask()
        assert fast.mask().tobytes() == mask.tobytes()
        legal = np.flatnonzero(mask)  # a forced move: the one legal action
        assert fast._mirror.forced_action() == (int(legal[0]) if len(legal) == 1 else -1)
        deal, k = slow._deal, fast._mirror.card_contract()  # R4, R7: a card to play under the declared contract
        assert (None if k < 0 else fast._mirror.tables.names[k]) == (
            deal.contract.name if deal.phase in (PLAY, FANTAN_PLAY) else None
        )
        if rng.random() < 0.1:
            bad = np.flatnonzero(mask == 0)
            a = int(bad[rng.integers(len(bad))])
            assert not fast.apply(a) and not slow.apply(a)  # refused, nothing changed
            continue
        if rng.random() < 0.05:
            _same_deal(fast.deal(), slow.deal())
        legal = np.flatnonzero(mask)
        a = int(legal[rng.integers(len(legal))])
        assert fast.apply(a) and slow.apply(a)


def _deal_mode(kwargs: dict, seed: int, deals: int) -> int:
    rules = load_rules(kwargs.get("rules"), **{k: v for k, v in kwargs.items() if k != "rules"})
    mirror = mirror_for(rules)
    assert mirror is not None
    rng = np.random.default_rng(seed)
    contracts = _contracts(rules)
    looked = 0
    for k in range(deals):
        hands = deal_hands(rng, rules)
        contract = contracts[rng.integers(len(contracts))]
        declarer = int(rng.integers(4))
        fast = CompiledPlay.start(mirror, hands, declarer, contract, drawn=bool(k % 2))
        slow = EnginePlay(Deal.from_hands(hands, declarer, contract, rules))
        looked += _compare(fast, slow, 4, rng)
    return looked


@pytest.mark.parametrize("preset", CLASSIC_PRESETS)
def test_compiled_play_equals_engine_play_presets(preset):
    assert _deal_mode({"rules": preset}, 1, deals=6) > 300


@pytest.mark.parametrize("options", OPTIONS)
def test_compiled_play_equals_engine_play_options(options):
    assert _deal_mode(options, 2, deals=6) > 300


@pytest.mark.parametrize("preset", ["classic", "rotate", "spanish", "basic32", "ravage_city", "split"])
def test_compiled_play_equals_engine_play_in_a_match(preset):
    """A whole match (R2): each deal's compiled play, match blocks and record (R6.5, R6.6, R8.1, R9.1) included,
    against the engine play."""
    rules = load_rules("classic", doubling="declarer_only", undoubled_negative="split") if preset == "split" else (
        load_rules(preset))  # fmt: skip
    mirror = mirror_for(rules)
    rng = np.random.default_rng(5)
    m = Match(rules, 3)
    while not m.is_over:
        slow = EnginePlay(m.deal.clone(), m)
        fast = CompiledPlay.load(mirror, m.deal, m)
        if fast is None:  # an R2.4 tie-break deal is played under other rules: the engine plays it
            assert m.deal_no >= m.num_deals
            fast = EnginePlay(m.deal, m)
        _compare(fast, slow, 4, rng)
        m.deal = slow.deal()
        rec = m.end_deal()
        if isinstance(fast, CompiledPlay):  # the record from the compiled copy is the one read off the Deal
            assert fast.record(rec.number) == rec


@pytest.mark.parametrize("preset", ["king3", "king", "king5", "king_choose", "king_short"])
def test_king_encoder_gives_the_reference_observation(preset):
    """Barbu King's compiled encoder (the engine play's, ``inplay.encoder_for``) gives ``observation.encode``'s
    array for every seat at every step of seeded deals and of a whole match (R11, its match blocks included)."""
    rules = load_rules(preset)
    king = inplay.encoder_for(rules)
    assert king is not encode
    rng = np.random.default_rng(7)
    n = rules.players
    looked = 0
    for k in range(8):
        d = Deal.from_hands(deal_hands(rng, rules), k % n, None, rules)
        while True:
            for s in range(n):
                assert king(d, s, None).tobytes() == encode(d, s).tobytes(), (k, s, d.history)
                looked += 1
            if d.is_over:
                break
            legal = d.legal_actions()
            d.apply(legal[rng.integers(len(legal))])
    m = Match(rules, 2)
    while not m.is_over:
        for s in range(n):
            assert king(m.deal, s, m).tobytes() == encode(m.deal, s, m).tobytes()
        legal = m.legal_actions()
        m.apply(legal[rng.integers(len(legal))])
    assert looked > 300


def test_no_compiled_play_for_king():
    assert mirror_for(load_rules("king")) is None and mirror_for(load_rules("king3")) is None


def test_mirror_start_learns_the_set_up():
    """``Mirror.start`` without a Deal gives the same row, mask and seat as ``load`` of the built Deal."""
    from barbu_env.rules import Rules
    from barbu_env.vector.single import Mirror

    contracts = _contracts(Rules())
    for rules in (Rules(), Rules(doubling="off")):
        a, b = Mirror(rules), Mirror(rules)
        rng = np.random.default_rng(0)
        seen: set[tuple[int, str | None]] = set()
        for k in range(60):
            hands = deal_hands(rng, rules)
            declarer, contract = k % 4, contracts[k % len(contracts)]
            built = a.start(hands, declarer, contract)
            assert (built is None) == ((declarer, contract) in seen)
            seen.add((declarer, contract))
            b.load(Deal.from_hands(hands, declarer, contract, rules))
            assert a.seat == b.seat
            assert a.row.tobytes() == b.row.tobytes() and a.mask.tobytes() == b.mask.tobytes()


def _first(e) -> int:
    return int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0])


@pytest.mark.parametrize("mode", ["deal", "match"])
@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copies_mid_deal_play_on_alone(mode, how):
    """A deepcopy or pickle of the env mid-deal plays on by itself; the original is untouched."""
    e = barbu_env.raw_env(mode=mode)
    e.reset(seed=6)
    for _ in range(10):
        e.step(_first(e))
    c = copy.deepcopy(e) if how == "deepcopy" else pickle.loads(pickle.dumps(e))
    ref = copy.deepcopy(e)
    for _ in range(70):
        if all(c.terminations.values()):
            break
        c.step(_first(c))
        ref.step(_first(ref))
        for agent in c.possible_agents:
            assert c.observe(agent)["observation"].tobytes() == ref.observe(agent)["observation"].tobytes()
    assert c.rewards == ref.rewards
    assert len(e.deal.history) == 10 and len(c.deal.history) != 10
    for s, agent in enumerate(e.possible_agents):
        assert np.array_equal(e.observe(agent)["observation"], encode(e.deal, s, e.match))


def _finish(e) -> list[float]:
    """Play the rest of the deal with each seat's first legal action; the rewards of its last step."""
    while not all(e.terminations.values()):
        e.step(int(np.flatnonzero(e.last()[0]["action_mask"])[0]))
    return [e.rewards[a] for a in e.possible_agents]


def test_unpickled_in_a_fresh_process_steps(tmp_path):
    """An env pickled mid-deal steps in a new process (where the compiled kernels are not loaded yet) and ends
    the deal with the same rewards (R8.1)."""
    import ast
    import inspect
    import subprocess
    import sys

    e = barbu_env.raw_env(mode="deal", contract="no_queens")
    e.reset(seed=3)
    for _ in range(9):
        e.step(int(np.flatnonzero(e.last()[0]["action_mask"])[-1]))
    path = tmp_path / "env.pkl"
    path.write_bytes(pickle.dumps(e))
    code = (f"import pickle, numpy as np\n{inspect.getsource(_finish)}\n"
            f"e = pickle.loads(open({str(path)!r}, 'rb').read())\nprint(repr(_finish(e)))\n")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert ast.literal_eval(out) == _finish(e)


def test_a_deal_changed_by_its_reader_is_followed():
    """``env.deal`` hands over the engine's Deal: an action applied to it outside ``step`` (or an R8.2 renege) is
    what the observations show next."""
    e = barbu_env.raw_env(mode="deal", contract="no_tricks", doubling="off")
    e.reset(seed=3)
    e.step(_first(e))
    d = e.deal
    d.apply(d.legal_actions()[0])
    seat = d.to_move
    o = e.observe(e.possible_agents[seat])
    assert np.array_equal(o["observation"], encode(d, seat))
    assert np.flatnonzero(o["action_mask"]).tolist() == d.legal_actions()
    e = barbu_env.raw_env(mode="deal", contract="no_tricks", illegal_action="renege", doubling="off")
    e.reset(seed=2)
    e.step(_first(e))
    hand = e.deal.hands[e.deal.to_move]
    e.step(next(c for c in range(52) if not hand >> c & 1))  # R8.2: the deal ends with the penalty
    assert e.deal.is_over and all(e.terminations.values())
    for s, agent in enumerate(e.possible_agents):
        assert np.array_equal(e.observe(agent)["observation"], encode(e.deal, s))


def _same_actions_on_the_copy(specs: list[str], mode: str, rules: str | dict, games: int) -> int:
    """Play the agents of ``specs`` (one per seat) through two envs: one left alone, one whose ``Deal`` is read
    each step (the engine plays it); every action must be the same and the first env's deal must stay on the
    compiled copy. Returns the decisions compared."""
    from barbu_env.agents import make

    opts = rules if isinstance(rules, dict) else {"rules": rules}
    agents = [make(spec, seed=s) for s, spec in enumerate(specs)]
    fast, slow = barbu_env.env(mode=mode, **opts), barbu_env.env(mode=mode, **opts)
    steps = 0
    for seed in range(games):
        fast.reset(seed=seed)
        slow.reset(seed=seed)
        for name in fast.agent_iter(max_iter=400):
            assert slow.unwrapped.deal is not None and isinstance(slow.unwrapped._play, EnginePlay)
            if fast.terminations[name]:
                fast.step(None)
                slow.step(None)
                continue
            a = agents[int(name[-1])].act(fast, name)
            assert a == agents[int(name[-1])].act(slow, name), steps
            assert fast.unwrapped.contract_text == slow.unwrapped.deal.contract_text
            assert fast.unwrapped.deal_scores is None
            assert isinstance(fast.unwrapped._play, CompiledPlay) and fast.unwrapped.compiled_deal is not None, steps
            fast.step(a)
            slow.step(a)
            steps += 1
        if mode == "deal":
            assert fast.unwrapped.deal_scores == slow.unwrapped.deal.scores and len(fast.unwrapped.deal_scores) == 4
    return steps


def test_framework_envs_against_the_heuristic_stay_on_the_compiled_copy():
    """The Gymnasium single-agent env (``wrappers.sb3``) with heuristic opponents and ``normalize=True`` reads
    the contract (its ``info`` and reward scale) and the final points without building the ``Deal``."""
    from barbu_env.wrappers.sb3 import BarbuSingleAgentEnv

    env = BarbuSingleAgentEnv(
        opponents="heuristic", contracts=["no_queens", "trumps"], normalize=True, seed=1, doubling="off"
    )
    rng = np.random.default_rng(0)
    for _ in range(4):
        _, info = env.reset()
        assert info["contract"].split(":")[0] in ("no_queens", "trumps")
        done = False
        while not done:
            assert isinstance(env.raw._play, CompiledPlay)
            _, reward, done, _, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            assert abs(reward) <= 1.0  # divided by |contract total| (no doubles)
        assert isinstance(env.raw._play, CompiledPlay)
        assert info["points"] == env.raw.deal.scores[env.seat]


@pytest.mark.parametrize("mode", ["deal", "match"])
@pytest.mark.parametrize("rules", ["classic", "ravage_city", "basic32", "rotate", *OPTIONS])
def test_heuristic_agents_leave_the_deal_on_the_compiled_copy(mode, rules):
    """``HeuristicAgent`` plays on the env's compiled copy (``Mirror.heuristic``): the actions of the heuristic in
    every seat (declaration, doubling with R6.4, trick play, Fantan: R2.3, R5-R7) are those it takes from the
    engine's ``Deal``, and the env never builds the ``Deal``."""
    assert _same_actions_on_the_copy(["heuristic"] * 4, mode, rules, 4 if mode == "deal" else 1) >= 150


@pytest.mark.parametrize("mode", ["deal", "match"])
def test_checkpoint_agents_leave_the_deal_on_the_compiled_copy(mode, monkeypatch):
    """``NeuralAgent`` decides from the observation alone (phase and contract read from it), its card play from the
    compiled copy's own row (``_copy_decision``): the shipped networks (card play, declaration and doubling, R2.3,
    R6) in two seats and the heuristic in the others take the actions they take where the engine plays the deal,
    and the env never builds the ``Deal``."""
    pytest.importorskip("torch")
    from barbu_env.agents.neural import NeuralAgent

    on_copy, real = [], NeuralAgent._copy_decision
    monkeypatch.setattr(NeuralAgent, "_copy_decision", lambda agent, m: on_copy.append(real(agent, m)) or on_copy[-1])
    specs = ["checkpoints", "heuristic", "checkpoints", "heuristic"]
    assert _same_actions_on_the_copy(specs, mode, "classic", 3 if mode == "deal" else 1) >= 150
    assert sum(a >= 0 for a in on_copy) >= 20 and -1 in on_copy  # card play from the copy; bidding went on
