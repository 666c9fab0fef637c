"""The checkpoint agent's endgame search (``checkpoints:endgame=K``): its card play is PIMC's once the seat holds
14 - K cards or fewer (from trick K on, R5; in Fantan, R7, the same count of cards left) and the networks' before,
through the env and against a bare ``Deal``; bad values are named; the batched engine, which plays the networks
alone, refuses it."""

from __future__ import annotations

import numpy as np
import pytest

import barbu_env
from barbu_env import InfoState
from barbu_env.agents import make
from barbu_env.engine.deal import FANTAN_PLAY, PLAY

torch = pytest.importorskip("torch")


def spied(agent):
    """Record the cards in hand of the seat at every decision ``agent.search`` takes."""
    calls: list[int] = []
    choose, act_info = agent.search.choose, agent.search.act_info

    def on_env(env, name):
        deal = env.unwrapped.deal
        calls.append(deal.hands[deal.to_move].bit_count())
        return choose(env, name)

    def on_info(info):
        calls.append(info.view.hands[info.seat].bit_count())
        return act_info(info)

    agent.search.choose, agent.search.act_info = on_env, on_info
    return calls


@pytest.mark.parametrize("contract", ["no_hearts", "trumps:S", "fantan:7"])
def test_search_plays_the_cards_from_trick_k_on(contract):
    agent = make("checkpoints:endgame=10,endgame_samples=8", seed=1)
    plain = make("checkpoints", seed=1)
    calls = spied(agent)
    env = barbu_env.env(mode="deal", contract=contract, doubling="off")
    env.reset(seed=4)
    late = 0
    for name in env.agent_iter():
        _, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        deal = env.unwrapped.deal
        card = deal.phase in (PLAY, FANTAN_PLAY)
        before = len(calls)
        action = agent.act(env, name)
        searched = len(calls) > before
        assert searched == (card and deal.hands[deal.to_move].bit_count() <= 4)  # K = 10: 14 - 10 cards
        if card and contract != "fantan:7":
            assert searched == (deal.trick_no + 1 >= 10)  # from the 10th trick on
        if not searched:  # the networks' (or the fallback's) decision, as the agent without search takes it
            assert action == plain.act(env, name)
        late += searched
        env.step(action)
    assert late > 0 and all(n <= 4 for n in calls)


def test_search_through_an_information_state():
    """``act_info`` / ``act_deal`` (no env) hand the late tricks to the search too."""
    agent = make("checkpoints:endgame=12", seed=0)
    calls = spied(agent)
    rng = np.random.default_rng(0)
    deal = barbu_env.Deal.random(rng, 0, "no_last_two", barbu_env.Rules())  # played to the 13th trick (R4)
    while not deal.is_over:
        seat = deal.to_move
        a = agent.act_info(InfoState.of(deal, seat)) if seat == 0 else int(rng.choice(deal.legal_actions()))
        assert deal.is_legal(a)
        deal.apply(a)
    assert calls and all(n <= 2 for n in calls)


def test_spec_options_and_refusals():
    agent = make("checkpoints:endgame=9", seed=0)
    assert agent.spec == "checkpoints:endgame=9" and agent.search.samples == 32
    assert make("checkpoints:endgame=9,endgame_samples=64").spec == "checkpoints:endgame=9,endgame_samples=64"
    assert make("checkpoints").search is None
    refusals = {
        "checkpoints:endgame=14": r"bad value 14 for option 'endgame': expected 0 \(off\) or the trick 1\.\.13",
        "checkpoints:endgame=yes": "bad value True for option 'endgame'",
        "checkpoints:endgame=9,endgame_samples=0": "bad value 0 for option 'endgame_samples'",
    }
    for spec, message in refusals.items():
        with pytest.raises(ValueError, match=message):
            make(spec)


def test_batched_engine_plays_the_networks_alone_so_refuses_search():
    from barbu_env import evaluation as ev
    from barbu_env.evaluation.batched import batched_unavailable

    cfg, made = ev.make_config(["checkpoints:endgame=9", "heuristic"], contracts="no_queens", boards=1)
    assert "no endgame search" in batched_unavailable(cfg, made)
    result = ev.evaluate(["checkpoints:endgame=9", "heuristic"], contracts="no_queens", boards=1)
    assert result["engine"] == "python" and result["finished"] == 1
