"""The compiled heuristic (``barbu_env.vector.heuristic``) against the Python heuristic agent, decision by decision.

B games run in ``VectorDeals`` and, side by side, B reference ``Deal`` objects with the same hands, declarer
and R6.4 obligation; at every state the compiled heuristic's action for the seat on move must equal
``HeuristicAgent``'s (which sees the seat's information state only). The games are driven by a mix of
heuristic and random legal actions so that both the heuristic's own lines and odd positions are reached;
every contract is played with and without the declaration (R3), under each doubling option (R6.7) and the
rule options of classic Barbu (R4.1, R4.4, R5.4, R5.5, R6.6, R7.3, R7.5, R9, R10).
"""

from __future__ import annotations

import numpy as np
import pytest

from barbu_env.actions import PASS
from barbu_env.agents import HeuristicAgent, make
from barbu_env.engine.deal import OVER, Deal
from barbu_env.rules import Rules
from barbu_env.vector import VectorDeals, random_actions

#: Per game, round-robin: full declaration, each family with its parameter chosen, every fixed contract.
SPECS = [None, "no_tricks", "no_hearts", "no_queens", "no_king", "no_last_two", "trumps", "fantan", "trumps:S",
         "fantan:9", "trumps:D", "fantan:A"]  # fmt: skip
#: Rule options of classic Barbu, one variant each (the default rules first).
VARIANTS = [
    {},
    {"hearts_lead": "until_broken"},
    {"hearts_lead": "free", "trump_lead": "free"},
    {"king_discard": "forced"},
    {"overtrump": "yes"},
    {"undoubled_negative": "split"},
    {"fantan_pass": "free"},
    {"fantan_pass": "free", "ace_plays_again": True},
    {"ace_plays_again": True},
    {"scoring": "basic52"},
    {"scoring": "basic32"},
    {"ravage_city": True, "salad": True},
    {"scoring": "basic32", "ravage_city": True, "fantan_pass": "free"},
]
DOUBLING = ["classic", "declarer_only", "off"]


def reference(v: VectorDeals, g: int, spec: str | None, must_double: int) -> Deal:
    hands = [int(h) for h in v.state.hands[g]]
    declarer = int(v.state.declarer[g])
    if spec in ("trumps", "fantan"):
        return Deal.from_hands(hands, declarer, None, v.rules, available=(spec,), must_double=must_double)
    return Deal.from_hands(hands, declarer, spec, v.rules, must_double=must_double)


def run_agreement(rules: Rules, batch: int, steps: int, seed: int, p_heuristic: float = 0.7) -> int:
    """Play ``steps`` steps of ``batch`` games, comparing the compiled heuristic with ``HeuristicAgent`` at every
    state of every game on move; returns the number of states compared."""
    specs = SPECS + [c for c in ("ravage_city", "salad") if getattr(rules, c)]
    spec_of = [specs[g % len(specs)] for g in range(batch)]
    v = VectorDeals(specs, rules, batch=batch, seed=seed, auto_reset=False)
    rng = np.random.default_rng(seed)
    agent = HeuristicAgent()
    games = np.arange(batch)
    must = rng.integers(0, 16, batch) * (rng.random(batch) < 0.3)  # some R6.4 obligations due
    v.reset_games(games, must_double=must)
    refs = [reference(v, g, spec_of[g], int(must[g])) for g in games]
    compared = 0
    for step in range(steps):
        _, mask, seat = v.observe()
        got = v.heuristic_actions()
        want = np.array([agent.act_deal(d) if d.phase != OVER else -1 for d in refs])
        bad = np.flatnonzero(got != want)
        if bad.size:
            g = int(bad[0])
            raise AssertionError(f"step {step} game {g} ({spec_of[g]!r}, {refs[g]!r}, history {refs[g].history}): "
                                 f"compiled {got[g]}, Python {want[g]}")  # fmt: skip
        compared += int((seat >= 0).sum())
        actions = np.where(rng.random(batch) < p_heuristic, got, random_actions(mask, rng))
        _, done = v.step(actions)
        for g, d in enumerate(refs):
            d.apply(int(actions[g]))
            assert done[g] == (d.phase == OVER)
        ended = np.flatnonzero(done)
        if ended.size:
            must = rng.integers(0, 16, ended.size) * (rng.random(ended.size) < 0.3)
            v.reset_games(ended, must_double=must)
            for g, md in zip(ended, must):
                refs[g] = reference(v, int(g), spec_of[g], int(md))
    return compared


@pytest.mark.parametrize("options", VARIANTS, ids=lambda o: "+".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_agrees_under_rule_options(options):
    assert run_agreement(Rules(**options), batch=48, steps=60, seed=11) > 2000


@pytest.mark.parametrize("doubling", ["declarer_only", "off"])
def test_agrees_under_doubling_options(doubling):
    """R6.7: doubling limited to the declarer, or no doubling (play starts after the declaration)."""
    assert run_agreement(Rules(doubling=doubling), batch=48, steps=60, seed=12) > 2000


def test_fantan_free_pass_never_stalls():
    """R7.3 ``fantan_pass=free``: heuristic players in every seat pass voluntarily (holding a playable card) only
    while the last three actions were not all passes (the state's ``pass_run``), so every Fantan deal ends."""
    v = VectorDeals("fantan", Rules(fantan_pass="free"), batch=64, seed=5, auto_reset=False)
    v.reset()
    voluntary = 0
    for _ in range(400):
        if (v.seat < 0).all():
            break
        a = v.heuristic_actions()
        free = (a == PASS) & v.action_masks()[:, :PASS].any(1)
        assert (v.state.pass_run[free] < 3).all()
        voluntary += int(free.sum())
        v.step(np.where(a < 0, 0, a))
    assert (v.seat < 0).all() and voluntary > 0


@pytest.mark.slow
def test_agrees_on_200k_states():
    """The full run: every rule variant under every doubling option, at least 200k states in all."""
    total = 0
    for i, options in enumerate(VARIANTS):
        for j, doubling in enumerate(DOUBLING):
            if doubling == "off" and options.get("undoubled_negative") == "split":
                continue  # R6.6 split needs a doubling phase (the rules refuse the pair)
            total += run_agreement(Rules(**{**options, "doubling": doubling}), 96, 60, 100 * i + j)
    print(f"compiled heuristic == Python heuristic on {total} states")
    assert total >= 200_000


def test_agent_handle():
    """``agents.make("heuristic")`` has a compiled form: ``vector_actions`` is ``VectorDeals.heuristic_actions``;
    agents without one say so."""
    v = VectorDeals(None, Rules(), batch=16, seed=3)
    v.reset()
    agent = make("heuristic")
    assert agent.compiled and not make("random").compiled
    games = np.arange(16) % 2 == 0
    got = agent.vector_actions(v, games)
    np.testing.assert_array_equal(got[games], v.heuristic_actions()[games])
    assert (got[~games] == -1).all()
    with pytest.raises(NotImplementedError, match="'random' has no compiled form"):
        make("random").vector_actions(v)
