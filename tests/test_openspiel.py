"""The OpenSpiel game ``python_barbu`` (issue 19): OpenSpiel's own checks, returns against the engine's
contract totals (E5, R8.1), tensors against the env's observation, resampling, IS-MCTS and the project's
agents as bots in OpenSpiel's evaluation loop. Skipped when open_spiel is not installed (extra ``bench``)."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import barbu_env  # noqa: E402
import barbu_env.openspiel as bo  # noqa: E402
from barbu_env.actions import action_id  # noqa: E402
from barbu_env.contracts import contract_table  # noqa: E402
from barbu_env.engine.deal import Deal  # noqa: E402
from barbu_env.engine.match import Match  # noqa: E402
from barbu_env.rules import load_rules  # noqa: E402


def _deal_cards(state, hands: list[list[int]]) -> None:
    """Apply the chance nodes that deal ``hands`` (the ``k``-th card to seat ``k % n``)."""
    n = len(hands)
    for k in range(sum(len(h) for h in hands)):
        state.apply_action(hands[k % n][k // n])


def _random_play(state, rng: np.random.Generator, stop: int | None = None):
    """Play chance and seats uniformly at random, to the end or for ``stop`` player actions."""
    moves = 0
    while not state.is_terminal() and (stop is None or moves < stop):
        if state.is_chance_node():
            outcomes, _ = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
            moves += 1
    return state


def test_registered_with_every_rule_option():
    assert "python_barbu" in pyspiel.registered_names()
    game = pyspiel.load_game("python_barbu(contract=no_queens,doubling=off)")
    params = game.get_parameters()
    scalar = set(barbu_env.rules.OPTION_NAMES) - {"positive"}  # R10.3's list is no OpenSpiel parameter type
    assert {"mode", "contract", "declarer", "rules"} | scalar == set(params)
    assert game.num_players() == 4 and game.num_distinct_actions() == barbu_env.NUM_ACTIONS
    assert game.get_type().utility == pyspiel.GameType.Utility.CONSTANT_SUM
    assert game.utility_sum() == -24  # R4.3: four queens at -6
    king = bo.load(rules="king3", mode="match")
    assert king.num_players() == 3 and king.config.rules == load_rules("king3")
    assert bo.load(doubling="off").get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM  # declarer's choice


@pytest.mark.parametrize(
    ("rules", "actions", "name"),
    [("classic3", 83, "double:+1+2"), ("classic5", 95, "double:+2+4"), ("positive1", 88, "declare:anti_salad"),
     ("king3", 87, "pass")],
)  # fmt: skip
def test_action_space_follows_the_rules(rules, actions, name):
    """R12.2 / R10.3: the game's action ids are those of the env (``num_actions``), named at its player count."""
    game = bo.load(rules=rules)
    assert game.num_distinct_actions() == actions == barbu_env.env(rules=rules).unwrapped.num_actions
    assert game.new_initial_state().action_to_string(0, action_id(name, players=game.num_players())) == name


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"mode": "tournament"}, "expected one of ('deal', 'match')"),
        ({"doubling": "sometimes"}, "expected one of ('classic', 'declarer_only', 'off')"),
        ({"rules": "nope"}, "expected a preset"),
        ({"contract": "no_queens", "mode": "match"}, "use it with mode=deal"),
        ({"contract": "ravage_city"}, "not played under these rules"),
        ({"declarer": 4}, "expected a seat 0..3"),
        ({"players": 6}, "'players'"),  # R12.1: classic Barbu has 3, 4 or 5 seats
    ],
)
def test_bad_parameters_say_what_is_allowed(params, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        bo.load(**params)


@pytest.mark.parametrize(
    "params",
    [
        {"contract": "no_queens", "doubling": "off"},
        {},  # the declarer chooses, classic doubling (R3, R6)
        {"contract": "fantan:7", "ace_plays_again": True},
        {"rules": "king5", "declarer": 2},
        {"rules": "king3", "short": True, "mode": "match"},  # R11.3: 5 deals of 17 cards
        {"rules": "classic3", "declarer": 2},  # R12: 83 actions, doubling by offsets
        {"rules": "classic5", "contract": "fantan:2"},  # R12.5: 2♣ and 2♦ out of the pack
        {"rules": "positive1"},  # R10.3: declare:anti_salad is action 87
    ],
    ids=["no_queens", "choice", "fantan", "king5", "king3_match", "classic3", "classic5", "positive1"],
)
def test_openspiel_random_sim_test(params):
    """OpenSpiel's own checks: legal actions and masks, chance outcomes, serialisation, tensors, returns."""
    pyspiel.random_sim_test(bo.load(**params), num_sims=2, serialize=True, verbose=False)


@pytest.mark.parametrize(
    "rules", ["classic", "ravage_city", "salad", "basic32", "king", "king5", "classic3", "classic5", "positive3"]
)
def test_returns_sum_to_the_contract_total(rules):
    """E5: every contract's returns sum to its total (settlement is zero-sum, R6.5); the returns are the
    engine's deal scores for the same hands and actions, times the game's sign (R11: King's are negated)."""
    r = load_rules(rules)
    rng = np.random.default_rng(1)
    for name, c in contract_table(r).items():
        contract = {"trumps": "trumps:H", "fantan": "fantan:8"}.get(name, name)
        game = bo.load(rules=rules, contract=contract, declarer=1)
        state = _random_play(game.new_initial_state(), rng)
        returns = state.returns()
        assert sum(returns) == r.score_sign * c.total(r) == game.utility_sum()
        dealt = [h | p for h, p in zip(state.deal.hands, state.deal.played_by)]
        replay = Deal.from_hands(dealt, 1, contract, r)
        for _, a in state.deal.history:
            replay.apply(a)
        assert returns == [r.score_sign * s for s in replay.scores]


def test_match_returns_are_the_match_totals():
    """R8.3: in match mode the returns are the match totals, each deal's scores the reward of its last action."""
    game = bo.load(mode="match", rules="king3", short=True)
    state = game.new_initial_state()
    rng = np.random.default_rng(3)
    rewards = np.zeros(3)
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, _ = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
            rewards += state.rewards()
    match: Match = state.match
    assert len(match.records) == 5 and match.is_over
    assert state.returns() == [-t for t in match.totals] == list(rewards)
    assert sum(state.returns()) == game.utility_sum()


def test_tensors_are_the_env_observation():
    """Observation and information-state tensors equal the env's observation for every seat."""
    rng = np.random.default_rng(5)
    game = bo.load()  # classic doubling, declarer's choice
    state = game.new_initial_state()
    order = rng.permutation(52)
    hands = [sorted(int(c) for c in order[s::4]) for s in range(4)]
    _deal_cards(state, hands)
    env = barbu_env.env(mode="deal")
    env.reset(seed=0, options={"hands": hands, "declarer": 0})
    for _ in range(20):
        for seat in range(4):
            obs = env.observe(f"player_{seat}")["observation"]
            np.testing.assert_array_equal(np.array(state.observation_tensor(seat), np.float32), obs)
            np.testing.assert_array_equal(np.array(state.information_state_tensor(seat), np.float32), obs)
        a = int(rng.choice(state.legal_actions()))
        state.apply_action(a)
        env.step(a)


def test_dealing_observes_nothing_of_others():
    game = bo.load(contract="no_queens")
    state = game.new_initial_state()
    assert state.is_chance_node() and len(state.chance_outcomes()) == 52
    assert not any(state.observation_tensor(0))
    state.apply_action(12)  # the A♣ to seat 0
    assert "AC" in state.information_state_string(0) and "AC" not in state.information_state_string(1)
    with pytest.raises(ValueError, match="not a card left to deal"):
        state.apply_action(12)


@pytest.mark.parametrize("params", [{"contract": "trumps:S"}, {"rules": "king3"}, {"mode": "match"}])
def test_resample_keeps_the_information_state(params):
    """A resampled state: same information state for the seat, same own hand, the same public actions
    legal in it (every shown void respected), other hands re-dealt."""
    rng = np.random.default_rng(7)
    game = bo.load(**params)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    for stop in (1, 3, 9, 17, 30):
        state = _random_play(game.new_initial_state(), rng, stop)
        if state.is_terminal():
            continue
        seat = state.current_player()
        changed = False
        for _ in range(5):
            other = state.resample_from_infostate(seat, sampler)
            assert other.information_state_string(seat) == state.information_state_string(seat)
            assert other.observation_tensor(seat) == state.observation_tensor(seat)
            assert other.legal_actions() == state.legal_actions()
            assert other.deal.hands[seat] == state.deal.hands[seat]
            for s in range(game.num_players()):
                assert not other.deal.hands[s] & state.deal.excluded[s]
            changed |= other.deal.hands != state.deal.hands
        assert changed


def test_resample_in_a_later_deal_of_a_match():
    """Match mode: the seat's record of finished deals stays; only the current deal's hidden cards change."""
    rng = np.random.default_rng(11)
    game = bo.load(rules="king3", mode="match", short=True)
    state = _random_play(game.new_initial_state(), rng, 75)  # R11.4: 51 cards a deal, so in the second deal
    assert state.match.deal_no == 1 and not state.is_chance_node()
    seat = state.current_player()
    other = state.resample_from_infostate(seat, pyspiel.UniformProbabilitySampler(0.0, 1.0))
    assert other.information_state_string(seat) == state.information_state_string(seat)
    assert other.history()[: state._core.start] == state.history()[: state._core.start]
    assert other.match.totals == state.match.totals and other.deal.hands != state.deal.hands
    assert other.legal_actions() == state.legal_actions()


def test_resample_while_dealing():
    game = bo.load(contract="no_hearts")
    state = game.new_initial_state()
    _deal_cards(state, [[0, 1, 2], [13, 14, 15], [26, 27], [39, 40]])
    other = state.resample_from_infostate(1, pyspiel.UniformProbabilitySampler(0.0, 1.0))
    assert other.information_state_string(1) == state.information_state_string(1)
    assert len(other.history()) == 10
    assert other._core.dealt[1] == state._core.dealt[1]
    assert sorted(bin(h).count("1") for h in other._core.dealt) == [2, 2, 3, 3]


@pytest.mark.slow
@pytest.mark.parametrize("params", [{"contract": "no_king", "doubling": "off"}, {"rules": "king3"}])
def test_ismcts_plays_whole_deals(params):
    """OpenSpiel's IS-MCTS (Python) in every seat plays deals to the end; returns sum to the contract total.
    (OpenSpiel's ``evaluate_bots`` needs ``restart_at``, which its Python ``ISMCTSBot`` lacks: a plain loop.)"""
    from open_spiel.python.algorithms import ismcts, mcts

    game = bo.load(**params)
    for seed in range(2):
        rs = np.random.RandomState(seed)
        evaluator = mcts.RandomRolloutEvaluator(1, rs)
        bots = [ismcts.ISMCTSBot(game, evaluator, 10.0, 8, random_state=rs) for _ in range(game.num_players())]
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rs.choice(outcomes, p=probs)))
            else:
                action = bots[state.current_player()].step(state)
                assert action in state.legal_actions()
                state.apply_action(action)
        returns = state.returns()
        if game.get_type().utility == pyspiel.GameType.Utility.CONSTANT_SUM:
            assert sum(returns) == game.utility_sum()
        else:  # King deal mode, the declarer chooses: the total of the contract played
            r = game.config.rules
            assert sum(returns) == r.score_sign * state.deal.contract.total(r)


def test_agents_as_bots_in_openspiel_evaluation():
    """The project's heuristic against OpenSpiel's uniform random bots, through OpenSpiel's evaluation loop,
    whole matches of Barbu King and a classic deal with declaration and doubling (R3, R6)."""
    from open_spiel.python.algorithms import evaluate_bots
    from open_spiel.python.bots import uniform_random

    for game in (bo.load(), bo.load(mode="match", rules="king3", short=True)):
        n = game.num_players()
        rs = np.random.RandomState(0)
        bots = [bo.bot("heuristic", seed=0)] + [uniform_random.UniformRandomBot(p, rs) for p in range(1, n)]
        state = game.new_initial_state()
        returns = evaluate_bots.evaluate_bots(state, bots, rs)
        assert state.is_terminal() and returns == state.returns()
    assert isinstance(bo.bot("pimc:samples=2"), pyspiel.Bot)
    with pytest.raises(ValueError, match="unknown agent"):
        bo.bot("nobody")
    with pytest.raises(ValueError, match="seat on move"):
        bo.bot("heuristic").step(bo.load().new_initial_state())  # a chance node


def test_heuristic_bot_beats_random_bots():
    """Over a few seeded deals of No queens the heuristic seat takes fewer queens than the random seats."""
    from open_spiel.python.algorithms import evaluate_bots
    from open_spiel.python.bots import uniform_random

    game = bo.load(contract="no_queens", doubling="off")
    total = np.zeros(4)
    for seed in range(12):
        rs = np.random.RandomState(seed)
        bots = [bo.bot("heuristic", seed)] + [uniform_random.UniformRandomBot(p, rs) for p in range(1, 4)]
        total += evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rs)
    assert total[0] > total[1:].mean()


def test_duplicate_measure_counts_margins_per_board():
    """The IS-MCTS measurement's bookkeeping: the deterministic heuristic against itself has margin 0 on every
    board (each seat's return minus the table mean, averaged over its seats, sums to zero); a searcher's
    timed decisions are its own with more than one legal action."""
    from barbu_env.openspiel.duplicate import markdown, run

    result = run(["heuristic", "ismcts:simulations=3"], boards=2, contracts=["no_queens", "trumps"])
    heuristic, ismcts = result["rows"]
    assert heuristic["margin"]["mean"] == 0 and heuristic["margin"]["sd"] == 0
    assert ismcts["decisions"] > 8 and ismcts["ms_per_decision"] > 0
    assert result["difference"]["margin"]["n"] == 2
    assert "`ismcts:simulations=3`" in markdown(result)
    with pytest.raises(ValueError, match="valid options are"):
        run(["ismcts:depth=3"], boards=1)


def test_readme_ismcts_snippet_runs():
    """The README's OpenSpiel block: IS-MCTS in seat 0 against three heuristic bots plays a whole deal."""
    from pathlib import Path

    from test_doc_snippets import python_blocks

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    (block,) = [b for b in python_blocks(readme) if "python_barbu" in b]
    namespace: dict = {"__name__": "__readme__"}
    exec(compile(block, "README.md OpenSpiel block", "exec"), namespace)
    state = namespace["state"]
    assert state.is_terminal() and sum(state.returns()) == -24  # R4.3
