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
