"""PIMC's compiled rollouts (``barbu_env.vector.rollout``) against the Python ones on ``Deal`` clones.

Mid-deal states of every contract and rule option are copied into the batched engine (``state_of_deal``); for
each legal action the compiled playout (the action, then the compiled heuristic in every seat) must end with the
same deal scores as ``agents.heuristic.rollout`` (R8.1), and ``pimc`` with ``rollouts="compiled"`` must make the
same decisions as with ``rollouts="python"`` (the same samples from the same seed, the same playouts).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import mid_deals

from barbu_env import agents
from barbu_env.agents.heuristic import heuristic_action, rollout
from barbu_env.rules import Rules
from barbu_env.vector.heuristic import CompiledHeuristic
from barbu_env.vector.rollout import Rollouts, state_of_deal
from barbu_env.vector.tables import build_tables

OPTIONS = [
    {},
    {"king_discard": "forced", "hearts_lead": "until_broken", "overtrump": "yes"},
    {"fantan_pass": "free", "ace_plays_again": True, "trump_lead": "free"},
    {"ravage_city": True, "salad": True, "scoring": "basic52"},
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "+".join(o) or "default")
def test_compiled_rollouts_equal_python_rollouts(options):
    rules = Rules(**options)
    t = build_tables(rules)
    ro, heur = Rollouts(t), CompiledHeuristic(t)
    for d in mid_deals(rules, 60, seed=len(options)):
        assert heur(state_of_deal(d, t))[0] == heuristic_action(d, d.to_move)  # the copy is the deal
        legal = d.legal_actions()
        for seat in range(4):
            want = []
            for a in legal:
                w = d.clone()
                w.apply(a)
                want.append(rollout(w).scores[seat])
            got = ro.scores(d, [d.hands, d.hands], legal, seat)
            np.testing.assert_array_equal(got, [want, want], err_msg=f"{d!r} seat {seat}")


@pytest.mark.parametrize("options", OPTIONS[:3], ids=lambda o: "+".join(o) or "default")
def test_pimc_compiled_decides_as_python(options):
    """``pimc:samples=16``: the same decision from the same seed with either rollouts, on every state."""
    rules = Rules(**options)
    fast, slow = agents.make("pimc:samples=16", seed=7), agents.make("pimc:samples=16,rollouts=python", seed=7)
    assert fast.rollouts == "compiled" and slow.spec == "pimc:rollouts=python"
    compared = 0
    for d in mid_deals(rules, 40, seed=10 + len(options)):
        a, b = fast.act_deal(d), slow.act_deal(d)
        assert a == b, f"{d!r}: compiled {a}, python {b}"
        compared += len(d.legal_actions()) > 1
    assert compared > 20


@pytest.mark.parametrize("options", OPTIONS[:2], ids=lambda o: "+".join(o) or "default")
def test_batched_pimc_is_the_agents_search_on_the_same_worlds(options):
    """``vector.pimc`` on the worlds the agent draws (the same seed): every legal move's total over the worlds is
    the agent's compiled playouts' sum, and where no two legal cards are equivalent (the agent plays one card per
    class) the decision is the agent's (ties to the heuristic's move, then the lowest card)."""
    from barbu_env.actions import NUM_ACTIONS
    from barbu_env.agents.pimc import candidate_moves, sample_hands
    from barbu_env.engine import InfoState
    from barbu_env.vector.core import COLUMNS
    from barbu_env.vector.pimc import pimc_choice, pimc_totals
    from barbu_env.vector.rollout import row_of_deal

    rules = Rules(**options)
    t = build_tables(rules)
    ro, agent = Rollouts(t), agents.make("pimc:samples=8")
    deals = [d for d in mid_deals(rules, 150, seed=30 + len(options)) if len(d.legal_actions()) > 1]
    hands = COLUMNS["hands"]
    worlds = [np.stack([row_of_deal(d, t) for d in deals]) for _ in range(8)]
    mask = np.zeros((len(deals), NUM_ACTIONS), np.int8)
    want, distinct = [], []
    for g, d in enumerate(deals):
        legal = d.legal_actions()
        info, rng = InfoState.of(d, d.to_move), np.random.default_rng(g)
        drawn = [sample_hands(info, rng) for _ in range(8)]
        for w, h in zip(worlds, drawn, strict=True):
            w[g, hands : hands + 4] = h
        mask[g, legal] = 1
        want.append(ro.scores(d, drawn, legal, d.to_move).sum(0))
        distinct.append(len(candidate_moves(d, d.to_move, legal)) == len(legal))
    totals = pimc_totals(ro, worlds, mask)
    for g, d in enumerate(deals):
        np.testing.assert_array_equal(totals[g, d.legal_actions()], want[g], err_msg=repr(d))
    heuristic = np.array([heuristic_action(d, d.to_move) for d in deals])
    got = pimc_choice(totals, mask, heuristic)
    checked = 0
    for g, d in enumerate(deals):
        if distinct[g]:
            agent.rng = np.random.default_rng(g)
            assert got[g] == agent.act_deal(d), repr(d)
            checked += got[g] != heuristic[g]
    assert checked >= 4  # the search overrules the heuristic on some of them
