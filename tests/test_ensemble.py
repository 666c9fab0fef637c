"""``training.ensemble``: an ensemble plays the largest mean centred logit of its networks, an ensemble of one plays as
its network, and its evaluation plays barbu-eval's boards."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from barbu_env.agents.neural import NeuralAgent  # noqa: E402
from barbu_env.evaluation import evaluate as barbu_eval  # noqa: E402
from barbu_env.nn import PolicyNet, save_checkpoint  # noqa: E402
from training import ensemble  # noqa: E402
from training.prune import card_decisions  # noqa: E402


def _file(tmp_path: Path, name: str, seed: int, contract: str = "no_queens") -> str:
    torch.manual_seed(seed)
    path = tmp_path / f"{name}.pt"
    save_checkpoint(path, PolicyNet(hidden=(32, 16), card_hidden=4).eval(), contract, {}, {})
    return str(path)


def _decisions(agent: NeuralAgent, contract: str) -> tuple[np.ndarray, np.ndarray]:
    obs, mask = (np.concatenate(x) for x in zip(*card_decisions(agent.nets[contract], contract, 8, 3), strict=True))
    return obs, mask


def test_an_ensemble_plays_the_largest_mean_centred_logit(tmp_path: Path) -> None:
    a, b = _file(tmp_path, "a", 0), _file(tmp_path, "b", 1)
    agent = ensemble.EnsembleAgent(a, [b])
    obs, mask = _decisions(agent, "no_queens")
    legal = mask != 0
    logits = []
    for f in (a, b):
        got = NeuralAgent(f).card_logits("no_queens", obs, mask)
        mean = np.where(legal, got, 0.0).sum(1, keepdims=True) / legal.sum(1, keepdims=True)
        logits.append(np.where(legal, got - mean, 0.0))
    target = (logits[0] + logits[1]) / 2
    want = np.where(legal, target, -np.inf).argmax(1)
    top2 = np.sort(np.where(legal, target, -np.inf), 1)[:, -2:]
    clear = (top2[:, 1] - top2[:, 0]) > 1e-4  # float32 passes against float64 sums: compare clear choices only
    got = agent.card_actions("no_queens", obs, mask)
    assert clear.mean() > 0.9
    assert np.array_equal(got[clear], want[clear])
    alone = [NeuralAgent(f).card_actions("no_queens", obs, mask) for f in (a, b)]
    assert all((got != one).any() for one in alone)  # the ensemble is neither network
    assert all(got[i] == agent._decide("no_queens", obs[i], mask[i]) for i in range(0, len(obs), 17))


def test_an_ensemble_of_one_plays_as_its_network(tmp_path: Path) -> None:
    a = _file(tmp_path, "a", 0)
    agent, net = ensemble.EnsembleAgent(a, symmetrised=False), NeuralAgent(a)
    obs, mask = _decisions(net, "no_queens")
    logits = net.card_logits("no_queens", obs, mask)
    top2 = np.sort(logits, 1)[:, -2:]
    clear = (top2[:, 1] - top2[:, 0]) > 1e-4
    assert clear.mean() > 0.9
    assert np.array_equal(agent.card_actions("no_queens", obs, mask)[clear],
                          net.card_actions("no_queens", obs, mask)[clear])  # fmt: skip


def test_an_ensemble_plays_its_target_through_the_env(tmp_path: Path) -> None:
    """In the env (the deal on its compiled copy, the card play read from the copy's row) an ensemble plays its own
    choice, not its first network's."""
    import barbu_env

    a, b = _file(tmp_path, "a", 0), _file(tmp_path, "b", 1)
    agent, first = ensemble.EnsembleAgent(a, [b]), NeuralAgent(a)
    env, differ, n = barbu_env.env(mode="deal", doubling="off"), 0, 0
    for seed in range(6):
        env.reset(seed=seed, options={"contract": "no_queens", "declarer": 0})
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            want = agent.card_actions("no_queens", obs["observation"][None], obs["action_mask"][None])[0]
            got = agent.act(env, name)
            assert got == want and env.unwrapped.compiled_deal is not None
            differ += got != first.act(env, name)
            n += 1
            env.step(got)
    assert n > 250 and differ > 0  # a deal ends once the last queen falls (R4.2)


@pytest.mark.parametrize("against", ["heuristic", "pimc:samples=2"])
def test_the_evaluation_plays_barbu_evals_boards(tmp_path: Path, against: str) -> None:
    """An ensemble of one scores what barbu-eval scores for its file, on the batched engine and through the env."""
    a = _file(tmp_path, "a", 0)
    boards = 12 if against == "heuristic" else 2
    got = ensemble.evaluate([a], against, boards, seed=5)
    want = barbu_eval([a, against], "deal", ["no_queens"], boards, seed=5)
    assert got["engine"] == want["engine"] == ("batched" if against == "heuristic" else "python")
    assert [r["rel"] for r in got["boards"]] == [r["rel"] for r in want["boards"]]
    assert got["config"]["agents"][0] == f"ensemble({a})"


def test_bad_ensembles_are_refused(tmp_path: Path) -> None:
    a, k = _file(tmp_path, "a", 0), _file(tmp_path, "k", 1, "no_king")
    with pytest.raises(ValueError, match=r"plays .no_king.*give networks of one contract"):
        ensemble.EnsembleAgent(a, [k])
    folder = tmp_path / "two"
    folder.mkdir()
    for f in (a, k):
        (folder / Path(f).name).write_bytes(Path(f).read_bytes())
    with pytest.raises(ValueError, match="holds 2 networks: give one checkpoint file"):
        ensemble.EnsembleAgent(str(folder))
    with pytest.raises(ValueError, match="at least one checkpoint"):
        ensemble.evaluate([])
