"""PIMC with rollouts played by learned policies (``pimc:rollout=PATH``, ``barbu_env.vector.policy_rollout``).

A tiny deterministic network per contract (seeded initial weights, saved as checkpoints) plays the rollouts. The
batched playouts on ``VectorDeals`` must end with the scores (R8.1) of a reference that plays the same network on
``Deal`` clones move by move through ``observation.encode`` (the neural agent's ``act_deal``); the observed-play
log-likelihoods of ``weighting=policy`` must equal those of the reference replaying the history one decision at a
time; contracts without a network and rules the batched engine does not cover fall back to heuristic rollouts;
the spec parses and bad option values are refused with the reason; whole deals play through ``barbu-eval``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import MID_CONTRACTS, mid_deals

torch = pytest.importorskip("torch")

from barbu_env import agents  # noqa: E402
from barbu_env.actions import NUM_ACTIONS  # noqa: E402
from barbu_env.agents.heuristic import heuristic_action  # noqa: E402
from barbu_env.agents.pimc import sample_hands, world_weights  # noqa: E402
from barbu_env.engine import InfoState  # noqa: E402
from barbu_env.engine.deal import FANTAN_PLAY, OVER, PLAY, Deal  # noqa: E402
from barbu_env.nn import PolicyNet, save_checkpoint  # noqa: E402
from barbu_env.observation import encode  # noqa: E402
from barbu_env.rules import Rules  # noqa: E402
from barbu_env.vector.policy_rollout import MAX_STEPS, PolicyRollouts  # noqa: E402
from barbu_env.vector.rollout import row_of_deal  # noqa: E402
from barbu_env.vector.tables import build_tables  # noqa: E402

CONTRACTS = ("no_tricks", "no_hearts", "no_queens", "no_king", "no_last_two", "trumps", "fantan")


@pytest.fixture(scope="module")
def nets(tmp_path_factory) -> Path:
    """A folder of tiny seeded networks, one per classic contract (untrained: any deterministic policy will do)."""
    torch.set_num_threads(1)  # one-row forward passes: more threads only spin on shared cores
    folder = tmp_path_factory.mktemp("nets")
    for i, name in enumerate(CONTRACTS):
        torch.manual_seed(i)
        save_checkpoint(folder / f"{name}.pt", PolicyNet(hidden=(16,)), name, {"note": "tiny, untrained"})
    return folder


def reference_score(policy, view: Deal, world: list[int], action: int, seat: int, only: int | None = None) -> int:
    """``seat``'s deal score after ``action`` then ``policy`` in every seat (in seat ``only`` if given, the
    heuristic in the others), on a ``Deal`` clone, move by move: each choice from ``encode(deal, seat on move)``
    and the legal actions, one row at a time."""
    d = view.clone()
    d.hands = list(world)
    d._legal = None
    d.apply(action)
    for _ in range(MAX_STEPS):
        while only is not None and d.phase != OVER and d.to_move != only:
            d.apply(heuristic_action(d, d.to_move))
        if d.phase == OVER:
            break
        mask = np.zeros(NUM_ACTIONS, np.int8)
        mask[d.legal_actions()] = 1
        d.apply(int(policy.card_actions(d.contract.name, encode(d, d.to_move)[None], mask[None])[0]))
    while d.phase != OVER:  # free Fantan passes (R7.3) can run on: the heuristic ends the deal
        d.apply(heuristic_action(d, d.to_move))
    assert d.scores is not None
    return d.scores[seat]


def reference_log_likelihood(policy, view: Deal, world: list[int], seat: int, temperature: float) -> float:
    """The log-probability of the other seats' card decisions of ``view``'s history in ``world`` (hands now),
    replayed one decision at a time through ``observation.encode``."""
    start = [h | view.played_by[s] for s, h in enumerate(world)]
    d = Deal.from_hands(start, view.declarer, view.contract_text, view.rules)
    total = 0.0
    for s, a in view.history:
        if d.phase in (PLAY, FANTAN_PLAY) and s != seat:
            mask = np.zeros(NUM_ACTIONS, np.int8)
            mask[d.legal_actions()] = 1
            z = policy.card_logits(d.contract.name, encode(d, s)[None], mask[None])[0] / temperature
            total += z[a] - (z.max() + np.log(np.exp(z - z.max()).sum()))
        d.apply(a)
    return total


@pytest.mark.parametrize("options", [{}, {"overtrump": "yes", "fantan_pass": "free", "doubling": "classic"}],
                         ids=["default", "options"])  # fmt: skip
def test_policy_rollouts_equal_reference(nets, options):
    """For mid-deal states of every contract (R5, R7), each seat, the true and two sampled worlds and every legal
    first action: the batched playout's score is the reference's."""
    rules = Rules(**options)
    policy = agents.make(str(nets))
    ro = PolicyRollouts(build_tables(rules), policy)
    rng = np.random.default_rng(3)
    compared = 0
    for d in mid_deals(rules, 7, seed=5 + len(options), contracts=MID_CONTRACTS):
        seat = d.to_move
        info = InfoState.of(d, seat)
        worlds = [list(d.hands), sample_hands(info, rng)]
        legal = d.legal_actions()
        got = ro.scores(info.view, worlds, legal, seat)
        want = [[reference_score(policy, d, w, a, seat) for a in legal] for w in worlds]
        np.testing.assert_array_equal(got, want, err_msg=f"{d!r} seat {seat}")
        compared += got.size
    assert compared > 40


def test_policy_in_one_seat_heuristic_in_the_others(nets):
    """``play_out(..., seats)``: the policy plays the card decisions of the seats marked for each game, the
    heuristic the others' (R5, R7), as the reference plays them move by move; every seat marked is the default."""
    rules = Rules()
    policy = agents.make(str(nets))
    ro = PolicyRollouts(build_tables(rules), policy)
    compared = 0
    for d in mid_deals(rules, 7, seed=11, contracts=MID_CONTRACTS):
        seat, legal = d.to_move, d.legal_actions()
        rows = np.repeat(row_of_deal(d, ro.t)[None], len(legal), axis=0)
        seats = np.zeros((len(legal), 4), bool)
        seats[:, seat] = True
        got = ro.play_out(rows, np.array(legal), seats)[:, seat]
        want = [reference_score(policy, d, d.hands, a, seat, only=seat) for a in legal]
        np.testing.assert_array_equal(got, want, err_msg=f"{d!r} seat {seat}")
        every = ro.play_out(rows, np.array(legal), np.ones((len(legal), 4), bool))
        np.testing.assert_array_equal(every, ro.play_out(rows, np.array(legal)))
        compared += len(legal)
    assert compared > 20
    with pytest.raises(ValueError, match=r"seats must be a bool array of shape \(2, 4\)"):
        ro.play_out(np.repeat(rows[:1], 2, axis=0), np.array(legal[:1] * 2), np.ones((2, 3), bool))


def test_playout_decisions_are_counted(nets):
    """``PolicyRollouts.decisions`` counts the policy's card decisions: in a contract played to the last trick (R5)
    with the policy in every seat, each card left in the hands after the first action is one; with one seat marked,
    that seat's."""
    rules = Rules()
    ro = PolicyRollouts(build_tables(rules), agents.make(str(nets)))
    checked = 0
    for d in mid_deals(rules, 7, seed=13, contracts=["no_tricks", "no_last_two", "trumps:H"]):
        if d.phase != PLAY:
            continue
        seat, legal = d.to_move, d.legal_actions()
        rows = np.repeat(row_of_deal(d, ro.t)[None], len(legal), axis=0)
        left = [h.bit_count() for h in d.hands]
        before = ro.decisions
        ro.play_out(rows, np.array(legal))
        assert ro.decisions - before == len(legal) * (sum(left) - 1)
        seats = np.zeros((len(legal), 4), bool)
        seats[:, seat] = True
        before = ro.decisions
        ro.play_out(rows, np.array(legal), seats)
        assert ro.decisions - before == len(legal) * (left[seat] - 1)
        checked += 1
    assert checked > 3


def test_log_likelihoods_equal_reference(nets):
    """``weighting=policy``'s world scores: the sum over the other seats' past card decisions of the log-softmax
    (at a temperature) of the network's logits, as the reference computes it decision by decision."""
    rules = Rules()
    policy = agents.make(str(nets))
    ro = PolicyRollouts(build_tables(rules), policy)
    rng = np.random.default_rng(8)
    for d in mid_deals(rules, 7, seed=9, contracts=MID_CONTRACTS):
        seat = d.to_move
        info = InfoState.of(d, seat)
        worlds = [list(d.hands)] + [sample_hands(info, rng) for _ in range(2)]
        for temperature in (1.0, 0.25):
            got = ro.log_likelihoods(info.view, worlds, seat, temperature)
            want = [reference_log_likelihood(policy, d, w, seat, temperature) for w in worlds]
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4, err_msg=f"{d!r}")
            assert (got <= 0).all()
    fresh = Deal.random(rng, 0, "no_queens", rules)
    fresh.apply(fresh.legal_actions()[0])  # seat 0 leads: no decision of another seat yet
    assert ro.log_likelihoods(fresh, [fresh.hands, fresh.hands], 1).tolist() == [0.0, 0.0]


def test_world_weights():
    np.testing.assert_allclose(world_weights(np.log([1.0, 3.0])), [0.25, 0.75])
    np.testing.assert_allclose(world_weights(np.array([-np.inf, -np.inf])), [0.5, 0.5])  # every world impossible
    np.testing.assert_allclose(world_weights(np.array([-1e4, -np.inf])), [1.0, 0.0])


def test_pimc_with_policy_rollouts_decides_by_them(nets):
    """``pimc:rollout=PATH`` keeps the move whose policy playouts score best: from the same seed it samples the
    worlds ``pimc`` samples, and its decision is the best mean of the reference playouts (ties: the heuristic's)."""
    from barbu_env.agents.pimc import candidate_moves

    agent = agents.make(f"pimc:rollout={nets},samples=2", seed=11)
    policy = agents.make(str(nets))
    compared = 0
    for d in mid_deals(Rules(), 8, seed=21, contracts=MID_CONTRACTS):
        seat, legal = d.to_move, d.legal_actions()
        classes = candidate_moves(d, seat, legal)
        if len(classes) < 2:
            continue
        agent.reset(seed=compared)
        rng = np.random.default_rng(compared)  # the agent's draws
        info = InfoState.of(d, seat)
        worlds = [sample_hands(info, rng) for _ in range(2)]
        totals = np.array([sum(reference_score(policy, d, w, rep, seat) for w in worlds) for rep in classes])
        best = [rep for rep, t in zip(classes, totals) if t == totals.max()]
        h = heuristic_action(d, seat)
        want = h if any(h in classes[rep] for rep in best) else best[0]
        assert agent.act_deal(d) == want, f"{d!r}"
        compared += 1
    assert compared >= 4


def test_prior_counts_the_network_values_as_worlds(nets):
    """``prior=K`` adds K times the network's value of each move (its logit times the size of the contract's
    total, R4) to the sum of its playout scores over the worlds: from the same seed the decision is the best of the
    reference playouts plus that; a huge K leaves the network's own best move, which differs from the playouts'
    best in some positions."""
    from barbu_env.agents.pimc import candidate_moves
    from barbu_env.contracts import contract_table

    policy = agents.make(str(nets))
    compared = differs = 0
    for d in mid_deals(Rules(), 8, seed=21, contracts=MID_CONTRACTS):
        seat, legal = d.to_move, d.legal_actions()
        classes = candidate_moves(d, seat, legal)
        if len(classes) < 2:
            continue
        reps = list(classes)
        mask = np.zeros((1, NUM_ACTIONS), np.int8)
        mask[0, legal] = 1
        size = abs(contract_table(d.rules)[d.contract.name].total(d.rules))
        values = size * policy.card_logits(d.contract.name, encode(d, seat)[None], mask)[0][reps]
        info = InfoState.of(d, seat)
        rng = np.random.default_rng(compared)  # the agent's draws
        worlds = [sample_hands(info, rng) for _ in range(2)]
        sums = np.array([sum(reference_score(policy, d, w, rep, seat) for w in worlds) for rep in reps])
        totals = sums + 3.0 * values
        best = [rep for rep, t in zip(reps, totals) if t >= totals.max() - 1e-9]
        h = heuristic_action(d, seat)
        want = h if any(h in classes[rep] for rep in best) else best[0]
        agent = agents.make(f"pimc:rollout={nets},samples=2,prior=3", seed=compared)
        assert agent.act_deal(d) == want, f"{d!r}"
        huge = agents.make(f"pimc:rollout={nets},samples=2,prior=1e6", seed=compared).act_deal(d)
        assert huge == reps[int(np.argmax(values))], f"{d!r}"
        differs += huge != agents.make(f"pimc:rollout={nets},samples=2", seed=compared).act_deal(d)
        compared += 1
    assert compared >= 4 and differs >= 1


def test_fallback_to_heuristic_rollouts(nets, tmp_path):
    """Contracts without a network, and Barbu King (R11: not batched), use the heuristic rollouts: the same
    decisions as ``pimc`` from the same seed."""
    from barbu_env.rules import load_rules

    only = tmp_path / "only"
    only.mkdir()
    (only / "no_queens.pt").write_bytes((nets / "no_queens.pt").read_bytes())
    for d in mid_deals(Rules(), 4, seed=2, contracts=["no_king", "fantan:7"]):
        a = agents.make(f"pimc:rollout={only},samples=4", seed=3).act_deal(d)
        assert a == agents.make("pimc:samples=4", seed=3).act_deal(d), f"{d!r}"
    d = Deal.random(np.random.default_rng(0), 0, None, load_rules("king"))
    while d.phase not in (PLAY, FANTAN_PLAY):
        d.apply(d.legal_actions()[0])
    for _ in range(3):
        a = agents.make(f"pimc:rollout={nets},samples=2", seed=4).act_deal(d)
        assert a == agents.make("pimc:samples=2", seed=4).act_deal(d)
        d.apply(a)


def test_spec_and_bad_options(nets):
    agent = agents.make(f"pimc:rollout={nets},weighting=policy,temperature=0.5,samples=8,prior=4", seed=0)
    assert agent.spec == f"pimc:samples=8,rollout={nets},weighting=policy,temperature=0.5,prior=4.0"
    assert agents.make(agent.spec).options() == agent.options()
    assert agents.make("pimc").options() == {} and agents.make("pimc:rollout=heuristic").spec == "pimc"
    bad = {
        "pimc:rollout=no/such/folder": r"bad pimc option rollout='no/such/folder': checkpoint .* not found",
        "pimc:rollout=3": r"rollout=3: expected 'heuristic' or a checkpoint file or folder",
        "pimc:weighting=prior": r"weighting='prior': expected one of \['uniform', 'policy'\]",
        f"pimc:rollout={nets},temperature=0": r"temperature=0: expected a number > 0",
        f"pimc:rollout={nets},temperature=yes": r"temperature=True: expected a number > 0",
        "pimc:weighting=policy": r"weighting=policy: .* needs policy rollouts \(rollout=checkpoints",
        "pimc:prior=2": r"prior=2: .* needs policy rollouts \(rollout=checkpoints",
        f"pimc:rollout={nets},prior=-1": r"prior=-1: expected a number >= 0",
        f"pimc:rollout={nets},prior=yes": r"prior=True: expected a number >= 0",
        f"pimc:rollout={nets},rollouts=python": r"policy rollouts run on the batched engine only",
        "pimc:rollouts=gpu": r"rollouts='gpu': expected one of \['compiled', 'python'\]",
    }
    for spec, message in bad.items():
        with pytest.raises(ValueError, match=message):
            agents.make(spec)


def test_package_does_not_import_torch():
    code = ("import sys, barbu_env, barbu_env.agents, barbu_env.vector.policy_rollout; barbu_env.agents.make('pimc'); "
            "print('torch' in sys.modules)")  # fmt: skip
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"


@pytest.mark.slow
def test_barbu_eval_plays_whole_deals(nets, tmp_path):
    """``barbu-eval`` plays whole deals with the agent (card play by PIMC, declaration and doubling by the
    heuristic) in trick and Fantan contracts."""
    from barbu_env.evaluation.cli import main

    out = tmp_path / "eval"
    args = ["--agents", f"pimc:rollout={nets},samples=2,weighting=policy", "heuristic", "--contract", "no_queens",
            "fantan", "--deals", "1", "--seed", "3", "--no-progress", "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    import json

    results = json.loads((out / "results.json").read_text())
    text = json.dumps(results)
    assert "weighting=policy" in text
    table = (out / "results.md").read_text()
    assert "| no_queens | 1 |" in table and "| fantan | 1 |" in table
