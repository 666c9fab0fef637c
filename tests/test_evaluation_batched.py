"""Batched duplicate evaluation (``barbu_env.evaluation.batched``) against the env runner, and engine selection.

For deterministic agents (heuristic, greedy checkpoints) and seeded random ones, ``engine="batched"`` must give
exactly the per-board numbers and game scores of ``engine="python"`` (every game through ``barbu_env.env``) on
the same seed: card play (R4, R5, R7) with doubling off, and with classic doubling (R6), where a checkpoint
agent hands its doubling decisions to its fallback.
"""

from __future__ import annotations

import copy
import json
import re

import numpy as np
import pytest

from barbu_env import evaluation as ev
from barbu_env.evaluation.batched import batched_unavailable, select_engine


def both(agents: list[str], **kw) -> tuple[dict, dict]:
    return ev.evaluate(agents, engine="batched", **kw), ev.evaluate(agents, engine="python", **kw)


@pytest.mark.parametrize(
    ("agents", "doubling"),
    [(["heuristic", "random"], "off"), (["random", "heuristic"], "classic"), (["heuristic", "heuristic"], "classic")],
)
def test_heuristic_and_random_same_boards_as_the_env(agents, doubling):
    batched, python = both(agents, contracts="all", boards=2, seed=5, doubling=doubling)
    assert (batched["engine"], python["engine"]) == ("batched", "python")
    assert batched["boards"] == python["boards"]
    assert {k: v for k, v in batched.items() if k != "engine"} == {k: v for k, v in python.items() if k != "engine"}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("agents", "doubling", "lineup"),
    [(["checkpoints", "heuristic"], "off", "1v3"), (["checkpoints:bidding=heuristic", "heuristic"], "classic", "1v3"),
     (["heuristic", "checkpoints:fallback=random,bidding=heuristic"], "classic", "2v2")],
)  # fmt: skip
def test_checkpoints_same_boards_as_the_env(agents, doubling, lineup):
    """Greedy networks (one batched call a step) and their fallback's doubling decisions (R6)."""
    pytest.importorskip("torch")
    batched, python = both(agents, contracts="all", boards=2, seed=2, doubling=doubling, lineup=lineup)
    assert batched["engine"] == "batched" and batched["boards"] == python["boards"]


def test_checkpoints_under_free_fantan_passes_same_boards_as_the_env():
    """Under ``fantan_pass=free`` (R7.3) the shipped Fantan network, trained with forced passes, plays a card where it
    has one on both engines (``NeuralAgent._as_trained``): the boards end (passing there, it left the first board's
    deal without an end), and end the same."""
    pytest.importorskip("torch")
    from timeouts import time_limit

    with time_limit(120, "the evaluation"):
        batched, python = both(["checkpoints", "heuristic"], contracts=["fantan"], boards=2, seed=0, fantan_pass="free")
    assert batched["engine"] == "batched" and batched["boards"] == python["boards"]


def test_card_actions_are_the_agents_choices_row_by_row():
    """``NeuralAgent.card_actions`` (one pass over many observations) picks, on every row, what it picks from that
    row alone, what ``act`` picks (one row into the agent's buffers) and the largest legal logit of the network run
    by torch in float64, on 2000+ card decisions of VectorDeals games per contract."""
    torch = pytest.importorskip("torch")
    from barbu_env.agents import make
    from barbu_env.vector import VectorDeals

    agent = make("checkpoints")
    for contract in ("no_hearts", "trumps:H", "fantan:9"):
        name = contract.split(":")[0]
        wide = copy.deepcopy(agent.nets[name]).double()
        v = VectorDeals(contract, "classic", batch=64, seed=3)
        v.reset()
        rows = 0
        while rows < 2000:
            obs, mask, _ = v.observe()
            got = agent.card_actions(name, obs.copy(), mask.copy())
            alone = [agent.card_actions(name, obs[i : i + 1], mask[i : i + 1])[0] for i in range(v.batch)]
            np.testing.assert_array_equal(got, alone)
            one = [agent._decide(name, obs[i], mask[i]) for i in range(v.batch)]  # what act() takes, row by row
            np.testing.assert_array_equal(got, one)
            with torch.no_grad():
                logits = wide(torch.from_numpy(obs).double(), torch.from_numpy(mask))[0].numpy()
            np.testing.assert_array_equal(got, logits.argmax(1))
            rows += v.batch
            v.step(v.heuristic_actions())
    with pytest.raises(ValueError, match=r"no network for 'salad'"):
        agent.card_actions("salad", obs, mask)
    with pytest.raises(ValueError, match="samples each choice"):
        make("checkpoints:greedy=false").card_actions("no_hearts", obs, mask)


def test_near_ties_are_decided_in_float64(tmp_path):
    """Two legal cards whose logits differ by 2**-22 on a logit of 16: float32 sums round them to a tie (the first
    card), the network's float64 sums do not (the second); ``card_actions`` and ``act`` take the second."""
    torch = pytest.importorskip("torch")
    from barbu_env import env
    from barbu_env.agents import make
    from barbu_env.agents.neural import TIE
    from barbu_env.nn import PolicyNet, save_checkpoint

    e = env(mode="deal", contract="no_queens", doubling="off")
    e.reset(seed=1)
    name = e.agent_selection
    o = e.observe(name)
    first, second = np.flatnonzero(o["action_mask"][:52])[:2]
    x = int(np.flatnonzero(o["observation"] == 1)[0])
    net = PolicyNet(hidden=())
    with torch.no_grad():
        net.policy.weight.zero_()
        net.policy.bias.zero_()
        net.policy.bias[[first, second]] = 16.0
        net.policy.weight[second, x] = 2.0**-22  # a float16 value: the checkpoint keeps it
    save_checkpoint(tmp_path / "no_queens.pt", net, "no_queens", {})
    agent = make(str(tmp_path))
    obs, mask = o["observation"][None], o["action_mask"][None]
    f32 = agent._logits(agent.nets["no_queens"], obs, mask)[0]
    assert f32[first] == f32[second] == 16.0 and 2.0**-22 / 17 < TIE
    assert agent.card_actions("no_queens", obs, mask)[0] == second
    assert agent.act(e, name) == second


def test_engine_selection():
    cfg, made = ev.make_config(["heuristic", "random"], contracts="all", boards=1)
    assert select_engine(cfg, "auto", made)[0] == "batched"
    assert select_engine(cfg, "python", made)[0] == "python"
    for agents, kw, why in [
        (["pimc:samples=2", "heuristic"], {}, "agent 'pimc:samples=2' has no batched form"),
        (["heuristic", "random"], {"mode": "match"}, "match mode plays through the env"),
        (["heuristic", "random"], {"rules": "king"}, "rule option game='king' is not supported by the batched engine"),
    ]:
        cfg, made = ev.make_config(agents, boards=1, **kw)
        assert why in batched_unavailable(cfg, made)
        assert select_engine(cfg, "auto", made) == ("python", batched_unavailable(cfg, made))
        with pytest.raises(ValueError, match=f"engine 'batched' cannot play this evaluation: {re.escape(why)}"):
            select_engine(cfg, "batched", made)
    with pytest.raises(ValueError, match=r"bad engine 'gpu': expected one of \['auto', 'batched', 'python'\]"):
        select_engine(cfg, "gpu", made)


def test_batched_workers_give_the_same_boards(monkeypatch):
    """The batched engine's worker processes (parts of the boards, each process building its agents) give every
    board's games exactly as one process does, random seats and networks included."""
    pytest.importorskip("torch")
    from barbu_env.evaluation import batched

    monkeypatch.setattr(batched, "PART", 3)  # several parts of a small run (the workers read their own PART: 1000)
    parts: list[int] = []
    pool = batched.in_processes

    def counted(n, build, args, fn, payloads, chunksize=1):
        parts.append(len(payloads))
        return pool(n, build, args, fn, payloads, chunksize)

    monkeypatch.setattr(batched, "in_processes", counted)
    for agents in (["random", "heuristic"], ["checkpoints", "random"]):
        kw = {"contracts": ["no_queens", "fantan"], "boards": 8, "seed": 4, "engine": "batched"}
        one, two = ev.evaluate(agents, **kw), ev.evaluate(agents, workers=2, **kw)
        assert two["engine"] == "batched" and len(two["boards"]) == 16 and one["boards"] == two["boards"]
    assert parts == [4, 4]  # each two-worker run played in four parts of four boards


def test_greedy_false_checkpoint_plays_through_the_env():
    pytest.importorskip("torch")
    cfg, made = ev.make_config(["checkpoints/no_queens.pt:greedy=false", "heuristic"], boards=1)
    assert "has no batched form" in batched_unavailable(cfg, made)


def test_cli_says_which_engine_played(tmp_path, capsys):
    args = ["--agents", "heuristic", "random", "--contract", "no_queens", "--deals", "2", "--no-progress"]
    assert ev.main([*args, "--out", str(tmp_path / "b")]) == 0
    assert "barbu-eval: engine: batched (" in capsys.readouterr().err
    assert ev.main([*args, "--engine", "python", "--out", str(tmp_path / "p")]) == 0
    assert "barbu-eval: engine: python (asked for" in capsys.readouterr().err
    b, p = (json.loads((tmp_path / d / "results.json").read_text()) for d in "bp")
    assert (b["engine"], p["engine"]) == ("batched", "python") and b["boards"] == p["boards"]
    assert ev.main(["--agents", "heuristic", "random", "--mode", "match", "--matches", "1", "--no-progress"]) == 0
    assert "barbu-eval: engine: python (match mode plays through the env" in capsys.readouterr().err
    assert ev.main(["--agents", "pimc", "random", "--engine", "batched", "--deals", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "engine 'batched' cannot play this evaluation: agent 'pimc'" in err
