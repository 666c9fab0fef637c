"""Baseline agents (barbu_env.agents): the make() protocol, legality everywhere, information hiding,
seeding, and scripted heuristic decisions (RULES.md R3, R4, R5, R6, R7)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import hands_of, make_deal, play

import barbu_env
from barbu_env import Deal, InfoState, Match, Rules, action_id, action_name, agents
from barbu_env.actions import DOUBLE_BASE, DOUBLE_SUBSETS, PASS
from barbu_env.agents.heuristic import best_trump, heuristic_action
from barbu_env.agents.pimc import candidate_moves, sample_world
from barbu_env.cards import parse_card, parse_cards
from barbu_env.contracts import contract_table
from barbu_env.engine.doubling import REL_TO_ABS

NO_DOUBLING = Rules(doubling="off")


# ----------------------------------------------------------------------------- make()
def test_make_names_and_options():
    assert isinstance(agents.make("random"), agents.RandomAgent)
    assert isinstance(agents.make("heuristic"), agents.HeuristicAgent)
    p = agents.make("pimc:samples=3", seed=1)
    assert isinstance(p, agents.PIMCAgent) and p.samples == 3 and p.spec == "pimc:samples=3"
    assert agents.make("pimc").spec == "pimc"


@pytest.mark.parametrize(
    "spec, words",
    [
        ("alphazero", ["unknown agent", "heuristic", "pimc", "random"]),
        ("pimc:depth=3", ["unknown option", "samples"]),
        ("pimc:samples=0", ["samples"]),
        ("pimc:samples", ["key=value"]),
        ("heuristic:samples=3", ["unknown option", "[]"]),
        ("checkpoints/does_not_exist.pt", ["does_not_exist.pt"]),
        ("", ["bad agent spec"]),
        (":greedy=0", ["no agent name"]),  # not the checkpoints of the current folder
        ("pimc:samples=2.5", ["samples=2.5"]),
    ],
)
def test_make_rejects_bad_specs(spec, words):
    with pytest.raises(ValueError) as e:
        agents.make(spec)
    for w in words:
        assert w in str(e.value)


def test_checkpoint_specs_are_recognised():
    assert agents.is_checkpoint_spec("runs/a.pt") and agents.is_checkpoint_spec("model.ckpt")
    assert not agents.is_checkpoint_spec("pimc")
    assert agents.parse_spec("runs/a.pt:greedy=false") == ("runs/a.pt", {"greedy": False})


# ----------------------------------------------------------------------------- legality
OPTION_SETS = [
    {},
    {"hearts_lead": "until_broken", "king_discard": "forced"},
    {"trump_lead": "free", "overtrump": "yes"},
    {"doubling": "declarer_only", "fantan_pass": "free", "ace_plays_again": True},
    {"undoubled_negative": "split"},
    {"scoring": "basic32", "ravage_city": True, "salad": True},
]


def _check_agents_on(deal: Deal, players: list, counters: dict) -> None:
    seat = deal.current_player
    legal = deal.legal_actions()
    for p in players:
        a = p.act_deal(deal, seat)
        assert a in legal, f"{p!r} chose {action_name(a)} in {deal!r}; legal {[action_name(x) for x in legal]}"
        counters[p.name] = counters.get(p.name, 0) + 1


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_agents_play_only_legal_actions(options):
    """Every phase (declaration with a random set of available contracts, doubling with random R6.4
    obligations, trick play, Fantan) under several rule options: each agent's choice is legal."""
    rules = Rules(**options)
    rng = np.random.default_rng(len(str(options)))
    names = list(contract_table(rules))
    rnd, heur, pimc = agents.make("random", 1), agents.make("heuristic", 2), agents.make("pimc:samples=2", 3)
    counters: dict[str, int] = {}
    states = 0
    for k in range(3 * len(names)):
        available = [n for n in names if rng.random() < 0.5] or [names[k % len(names)]]
        deal = Deal.random(rng, int(rng.integers(4)), None, rules, available=available,
                           must_double=int(rng.integers(16)))  # fmt: skip
        steps = 0
        while not deal.is_over:
            steps += 1
            assert steps < 1000, f"deal did not end: {deal!r}"
            checked = [rnd, heur] + ([pimc] if states % 7 == 0 else [])
            _check_agents_on(deal, checked, counters)
            states += 1
            mover = heur if rng.random() < 0.5 else rnd  # mix: reach both sensible and odd states
            deal.apply(mover.act_deal(deal))
    assert states > 500  # x 6 option sets: thousands of states in all
    assert counters["heuristic"] == states and counters["pimc"] > 100


def test_agents_legal_in_a_match_with_doubling_obligations():
    """A whole match (R2, R6.4 obligations become due): every agent's choice is legal."""
    rng = np.random.default_rng(5)
    m = Match(Rules(), rng)
    heur, rnd, pimc = agents.make("heuristic"), agents.make("random", 0), agents.make("pimc:samples=2", 0)
    forced = 0
    n = 0
    while not m.is_over:
        d = m.deal
        legal = d.legal_actions()
        forced += d.phase == 1 and d.must_double >> d.current_player & 1
        for p in (heur, rnd) + ((pimc,) if n % 11 == 0 else ()):
            assert p.act_deal(d) in legal
        m.apply(heur.act_deal(d) if n % 3 else rnd.act_deal(d))
        n += 1
    assert forced > 0  # the R6.4 forced-double states were exercised


def test_agents_through_the_env():
    """The act(env, agent_name) protocol plays whole games in deal and match mode."""
    for mode, kwargs in (("deal", {"contract": "no_queens", "doubling": "off"}), ("deal", {}), ("match", {})):
        env = barbu_env.env(mode=mode, **kwargs)
        specs = ["heuristic", "random", "pimc:samples=2", "random"] if mode == "deal" else ["heuristic", "random"] * 2
        players = [agents.make(s, seed=i) for i, s in enumerate(specs)]
        env.reset(seed=3)
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            a = None if term or trunc else players[agents.seat_of(name)].act(env, name)
            if a is not None:
                assert obs["action_mask"][a] == 1
            env.step(a)
        raw = env.unwrapped
        assert raw.deal.is_over and (raw.match is None or raw.match.is_over)


def test_seat_of():
    assert agents.seat_of("player_3") == 3
    with pytest.raises(ValueError, match="player_0"):
        agents.seat_of("player_7")


# ----------------------------------------------------------------------------- information only
def _swapped(deal: Deal, a: int, b: int) -> Deal:
    other = deal.clone()
    other.hands[a], other.hands[b] = deal.hands[b], deal.hands[a]
    other._legal = None
    return other


@pytest.mark.parametrize("contract", ["no_queens", "trumps:H", "no_last_two"])
def test_swapping_opponents_hands_changes_nothing_an_agent_sees(contract):
    """Agents read only the information state: swapping the hidden hands of two opponents leaves the
    info state, and so every agent's choice, unchanged."""
    rng = np.random.default_rng(11)
    heur = agents.make("heuristic")
    for k in range(6):
        d = Deal.random(rng, k % 4, contract, NO_DOUBLING)
        for _ in range(int(rng.integers(0, 20))):
            d.apply(heur.act_deal(d))
        seat = d.current_player
        a, b = [s for s in range(4) if s != seat][:2]
        if d.hands[a].bit_count() != d.hands[b].bit_count():
            continue
        e = _swapped(d, a, b)
        assert e.hands != d.hands
        assert InfoState.of(d, seat) == InfoState.of(e, seat)
        for spec in ("heuristic", "pimc:samples=4", "random"):
            assert agents.make(spec, seed=9).act_deal(d) == agents.make(spec, seed=9).act_deal(e)


def test_sampled_worlds_respect_the_information_state():
    """PIMC's sampler keeps the own hand and never gives a seat a card it has shown it cannot hold."""
    rng = np.random.default_rng(2)
    heur = agents.make("heuristic")
    for k in range(20):
        d = Deal.random(rng, k % 4, ["no_hearts", "trumps:S", "fantan:7"][k % 3], NO_DOUBLING)
        for _ in range(int(rng.integers(5, 30))):
            if d.is_over:
                break
            d.apply(heur.act_deal(d))
        if d.is_over:
            continue
        info = InfoState.of(d, d.current_player)
        for _ in range(5):
            w = sample_world(info, rng)
            assert w.hands[info.seat] == d.hands[info.seat]
            assert w.hands[0] | w.hands[1] | w.hands[2] | w.hands[3] | w.played == w.deck
            for s in range(4):
                assert w.hands[s].bit_count() == d.hands[s].bit_count()
                assert not w.hands[s] & d.excluded[s]


# ----------------------------------------------------------------------------- seeding
def test_same_seed_same_choices():
    rng = np.random.default_rng(4)
    states = []
    for k in range(12):
        d = Deal.random(rng, k % 4, ["no_tricks", "trumps:D", "fantan:9"][k % 3], NO_DOUBLING)
        for _ in range(int(rng.integers(0, 12))):
            d.apply(d.legal_actions()[0])
        states.append(d)
    for spec in ("random", "pimc:samples=3", "heuristic"):
        first = [agents.make(spec, seed=5).act_deal(d) for d in states]
        again = [agents.make(spec, seed=5).act_deal(d) for d in states]
        assert first == again
        p = agents.make(spec, seed=5)
        p.reset(5)
        assert [p.act_deal(d) for d in states[:1]] == first[:1]
    r1 = [agents.make("random", seed=1).act_deal(d) for d in states]
    r2 = [agents.make("random", seed=2).act_deal(d) for d in states]
    assert r1 != r2


# ----------------------------------------------------------------------------- scripted heuristic decisions
def _heur(deal: Deal) -> str:
    return action_name(heuristic_action(InfoState.of(deal, deal.current_player).view, deal.current_player))


def test_ducks_with_highest_card_that_still_loses():
    """No queens (R4), following suit (R5.1): with 3♠ 9♠ K♠ under a J♠ lead, play 9♠."""
    d = make_deal({0: "JS", 1: "3S 9S KS"}, 0, "no_queens", NO_DOUBLING)
    play(d, "JS")
    assert _heur(d) == "9S"


def test_void_dumps_queen_in_no_queens():
    d = make_deal({0: "2C", 1: "QS 2S 3S 4S 5S 2D 3D 4D 5D 6D 2H 3H 4H"}, 0, "no_queens", NO_DOUBLING)
    play(d, "2C")
    assert _heur(d) == "QS"


def test_void_dumps_king_of_hearts_in_no_king():
    d = make_deal({0: "2C", 1: "KH 2S 3S 4S 5S 6S 2D 3D 4D 5D 6D 2H 3H"}, 0, "no_king", NO_DOUBLING)
    play(d, "2C")
    assert _heur(d) == "KH"


def test_void_dumps_ace_of_hearts_in_no_hearts():
    d = make_deal({0: "2C", 1: "AH 2S 3S 4S 5S 6S 2D 3D 4D 5D 6D 2H 3H"}, 0, "no_hearts", NO_DOUBLING)
    play(d, "2C")
    assert _heur(d) == "AH"


def test_forced_to_win_avoids_capturing_own_queen():
    """No queens: holding only Q♠ A♠ in spades, last to play on a J♠ trick: win with A♠, keep Q♠
    (it may fall under someone's K♠ later)."""
    d = make_deal({0: "JS", 1: "2S", 2: "3S", 3: "QS AS"}, 0, "no_queens", NO_DOUBLING)
    play(d, "JS 2S 3S")
    assert _heur(d) == "AS"


def test_trumps_last_hand_wins_with_cheapest_card():
    """Trumps (R5.2): last to play on 2♣ J♣ Q♣, holding K♣ A♣: K♣ wins as well as A♣."""
    d = make_deal(
        {0: "2C 3C 4C 5C 6C 7C 8C 9C TC 2D 3D 4D 5D", 1: "JC", 2: "QC", 3: "KC AC"}, 0, "trumps:S", NO_DOUBLING
    )
    play(d, "2C JC QC")
    assert _heur(d) == "KC"


def test_trumps_lead_draws_with_master_trump():
    """Trumps (R5.4): the declarer holding A♠ K♠ leads the master trump."""
    d = make_deal({0: "AS KS 2S 3C"}, 0, "trumps:S", NO_DOUBLING)
    assert _heur(d) == "AS"


def test_fantan_opens_own_run_not_the_opponents():
    """Fantan (R7.2): with 7♣ (own 2♣-6♣ behind it) and 7♦ (nothing behind it) playable, open clubs."""
    d = make_deal({0: "2C 3C 4C 5C 6C 7C 7D 2H 3H 4H 5H 6H 2S"}, 0, "fantan:7", NO_DOUBLING)
    assert _heur(d) == "7C"


def test_declares_trumps_with_a_long_strong_suit():
    """R3: seven spades to the ace and side aces → Trumps, spades (rather than a negative contract)."""
    hand = "AS KS QS JS TS 9S 8S AH KH AD KD AC KC"
    d = make_deal({0: hand}, 0, None, Rules(), available=("no_tricks", "no_hearts", "trumps"))
    assert _heur(d) == "declare:trumps:S"
    assert best_trump(sum(1 << c for c in parse_cards(hand))) == 3


def test_low_hand_declares_a_negative_contract():
    """R3: a hand of twos, threes and fours is good for the negative contracts, bad for Trumps."""
    d = make_deal({0: "2C 3C 4C 5C 2D 3D 4D 2H 3H 4H 2S 3S 4S"}, 0, None, Rules(),
                  available=("no_tricks", "no_queens", "trumps"))  # fmt: skip
    assert _heur(d) in ("declare:no_tricks", "declare:no_queens")


def _targets(seat: int, action: str) -> int:
    return REL_TO_ABS[seat][DOUBLE_SUBSETS[action_id(action) - DOUBLE_BASE]]


def test_doubles_with_a_safe_hand_and_not_with_a_dangerous_one():
    """R6: No tricks; seat 1 with only low cards doubles; with aces and kings it does not."""
    low = Deal.from_hands(hands_of({1: "2C 3C 4C 5C 2D 3D 4D 2H 3H 4H 2S 3S 4S"}), 0, "no_tricks", Rules())
    assert _targets(1, _heur(low)) != 0
    high = Deal.from_hands(hands_of({1: "AC KC QC AD KD QD AH KH QH AS KS QS JS"}), 0, "no_tricks", Rules())
    assert _heur(high) == "double:none"


def test_forced_double_obligation_is_met():
    """R6.4: when the obligation is due the heuristic's choice includes the declarer (the mask forces it)."""
    hands = hands_of({1: "AC KC QC AD KD QD AH KH QH AS KS QS JS"})
    d = Deal.from_hands(hands, 0, "no_tricks", Rules(), must_double=0b0010)
    assert _targets(1, _heur(d)) & 1


# ----------------------------------------------------------------------------- PIMC
def test_equivalent_cards_are_grouped():
    """3♠ 4♠ are equivalent (adjacent); 6♠ is not (5♠ unseen); Q♠ differs from J♠ in No queens."""
    d = make_deal({0: "3S 4S 6S JS QS"}, 0, "no_queens", NO_DOUBLING)
    classes = candidate_moves(d, 0, d.legal_actions())
    groups = sorted(sorted(action_name(c) for c in m) for m in classes.values())
    assert ["3S", "4S"] in groups and ["6S"] in groups and ["JS"] in groups and ["QS"] in groups


def test_pimc_avoids_a_sure_loss_the_heuristic_sees_too():
    """PIMC picks a card whose rollouts score best: last to play to a trick holding the Q♠ under K♠,
    it dumps the queen (No queens)."""
    d = make_deal({0: "KS", 1: "2S", 2: "3S", 3: "QS 4S"}, 0, "no_queens", NO_DOUBLING)
    play(d, "KS 2S 3S")
    assert action_name(agents.make("pimc:samples=4", 0).act_deal(d)) == "QS"
    assert parse_card("QS") in d.legal_actions()


# ----------------------------------------------------------------------------- acting for the seat on move
def _env_on_move(phase: str):
    """A deal-mode env at the declaration (R3) or in card play (R5): the env, its seat on move, another seat."""
    from barbu_env.engine.deal import PLAY

    e = barbu_env.env(mode="deal", contract=None if phase == "declare" else "no_queens")
    e.reset(seed=5)
    while phase == "play" and e.unwrapped.deal.phase != PLAY:
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    on_move = e.agent_selection
    return e, on_move, f"player_{(int(on_move[-1]) + 1) % 4}"


@pytest.mark.parametrize("spec", ["random", "heuristic", "pimc:samples=2", "checkpoints/no_queens.pt"])
@pytest.mark.parametrize("phase", ["declare", "play"])
def test_agents_refuse_to_act_for_a_seat_not_on_move(spec, phase):
    """An agent asked to act for a seat that is not on move names the seat on move (instead of an
    action the env would apply to the seat on move, -1, or a numpy error)."""
    if spec.endswith(".pt"):
        pytest.importorskip("torch")
    e, on_move, other = _env_on_move(phase)
    agent = agents.make(spec, seed=0)
    with pytest.raises(ValueError, match=f"'{other}' is not on move: '{on_move}' is"):
        agent.act(e, other)
    a = agent.act(e, on_move)
    assert e.observe(on_move)["action_mask"][a] == 1


def test_agents_refuse_to_act_once_the_game_is_over():
    e = barbu_env.env(mode="deal", contract="no_queens")
    e.reset(seed=1)
    h = agents.make("heuristic")
    while not all(e.terminations.values()):
        e.step(h.act(e, e.agent_selection))
    with pytest.raises(ValueError, match=r"is not on move|game is over"):
        h.act(e, e.agent_selection)


@pytest.mark.parametrize("seed", [-1, 1.5, "7", True])
def test_bad_agent_seeds_are_named(seed):
    with pytest.raises(ValueError, match="bad agent seed"):
        agents.make("random", seed=seed)


def _fantan_decisions(agent, seeds: range, rules: dict, end: bool = True):
    """(mask, action) of ``agent`` (seat 0) at each of its Fantan decisions of seeded deals against the heuristic,
    each deal played to its end (``end``; else for at most 400 steps)."""
    from barbu_env.agents import make

    env, other, out = barbu_env.env(mode="deal", **rules), make("heuristic", seed=0), []
    for seed in seeds:
        env.reset(seed=seed, options={"contract": f"fantan:{'789'[seed % 3]}", "declarer": seed % 4})
        for name in env.agent_iter(max_iter=2000 if end else 400):
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            a = (agent if name == "player_0" else other).act(env, name)
            if name == "player_0":
                out.append((obs["action_mask"], a))
            env.step(a)
        assert not end or env.unwrapped.deal_scores is not None, f"deal {seed} did not end"
    return out


def test_r7_3_checkpoint_agents_pass_beside_a_playable_card_only_if_trained_to(tmp_path) -> None:
    """Under ``fantan_pass=free`` (R7.3) a network trained with forced passes (every shipped file) plays a card where
    it has one, so its deals end; a network trained with free passes keeps its pass (a seat that always passes can
    hold the only playable cards: such a deal need not end). Same weights in both files: a policy whose pass logit
    dwarfs the others."""
    torch = pytest.importorskip("torch")
    from barbu_env.agents.neural import NeuralAgent
    from barbu_env.nn import PolicyNet, save_checkpoint

    torch.manual_seed(0)
    net = PolicyNet(hidden=(16,), card_hidden=0).eval()
    with torch.no_grad():
        net.policy.bias[PASS] = 1e4
    save_checkpoint(tmp_path / "forced.pt", net, "fantan", {"rules": "classic"})
    save_checkpoint(tmp_path / "free.pt", net, "fantan", {"rules": {"fantan_pass": "free"}})
    free_rules = {"fantan_pass": "free", "doubling": "off"}
    for spec, passes in (("forced.pt", False), ("free.pt", True), ("forced.pt:greedy=false", False)):
        agent = NeuralAgent(str(tmp_path / spec.split(":")[0]), seed=1, greedy=":" not in spec)
        seen = _fantan_decisions(agent, range(2) if passes else range(6), free_rules, end=not passes)
        choice = [a == PASS for mask, a in seen if mask[PASS] and mask[:PASS].any()]
        assert len(choice) >= 2 and all(choice) is passes and any(choice) is passes, spec
    shipped = _fantan_decisions(NeuralAgent("checkpoints/fantan.pt"), range(6), free_rules)
    assert not any(a == PASS for mask, a in shipped if mask[:PASS].any())


@pytest.mark.parametrize("contract", ["no_queens", "fantan:J"])
def test_checkpoint_agent_plays_forced_moves_without_its_network(contract) -> None:
    """A card decision with one legal action (R5.1's one card of the led suit, R7.3's pass with no playable card) is
    the rules': the shipped network in every seat plays it without its pass, which runs on every other card
    decision, and every action is legal; on the env's compiled copy and, once the engine holds the deal, from the
    observation."""
    pytest.importorskip("torch")
    from barbu_env.agents.neural import NeuralAgent

    agent = NeuralAgent("checkpoints")
    real, passes = agent._pass, []
    agent._pass = lambda *args: passes.append(1) or real(*args)
    env = barbu_env.env(mode="deal", contract=contract, doubling="off")  # card decisions only
    choices = forced = 0
    for seed in range(4):
        env.reset(seed=seed)
        if seed % 2:  # reading the Deal hands it to the engine: the agent decides from the observation
            assert env.unwrapped.deal is not None and env.unwrapped.compiled_deal is None
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = int(obs["action_mask"].sum())
            forced += legal == 1
            choices += legal > 1
            a = agent.act(env, name)
            assert obs["action_mask"][a], (a, np.flatnonzero(obs["action_mask"]))
            env.step(a)
    assert forced >= 10 and choices >= 10 and len(passes) == choices
