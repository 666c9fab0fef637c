"""Learned bidding (training/bidding.py, barbu_env.agents.bidding): labels against the Python engine, the
checkpoint format, the neural agent's ``bidding`` option and whole matches under the R6.4 mask."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numba")

from barbu_env import agents  # noqa: E402
from barbu_env.actions import DECLARE_BASE, DOUBLE_BASE, NUM_ACTIONS  # noqa: E402
from barbu_env.agents.heuristic import heuristic_action, rollout  # noqa: E402
from barbu_env.contracts import CLASSIC_CONTRACTS as SEVEN  # noqa: E402
from barbu_env.engine.deal import DECLARE, DOUBLE, Deal  # noqa: E402
from barbu_env.env import env as make_env  # noqa: E402
from barbu_env.nn import PolicyNet, load_bidding, save_bidding  # noqa: E402
from barbu_env.observation import BLOCKS, OBS_SIZE, block  # noqa: E402
from barbu_env.rules import Rules  # noqa: E402
from barbu_env.vector import VectorDeals  # noqa: E402
from training import bidding  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _deals(n: int, seed: int, p: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The hands, declarers and R6.4 masks :func:`bidding.label_chunk` sets up for ``(n, seed)``."""
    v = VectorDeals(None, batch=n, seed=seed, auto_reset=False)
    v.reset()
    declarer = v.state.declarer.copy()
    md = bidding._obligations(np.random.default_rng([seed, 1]), declarer, p)
    return v.state.hands.astype(np.uint64).copy(), declarer, md


@pytest.mark.parametrize("role", ["declare", "double"])
def test_labels_are_heuristic_playouts_on_the_python_deal(role):
    """Each label is the seat's deal score (R8.1) after that action and heuristic play to the end, on ``Deal``."""
    cfg = bidding.BiddingConfig(role=role, must_double_prob=0.3, random_declare=0.0)
    obs, mask, label, heur = bidding.label_chunk(cfg, 6, seed=3)
    hands, declarer, md = _deals(6, 3, cfg.must_double_prob)
    checked = 0
    for i in range(6):
        d = Deal.from_hands([int(h) for h in hands[i]], int(declarer[i]), None, Rules(), must_double=int(md[i]))
        if role == "double":
            d.apply(heuristic_action(d, d.to_move))  # the heuristic's declaration (random_declare=0)
            while d.double_step < block(obs[i], "doubled_done").sum():  # the heuristic's earlier doubles
                d.apply(heuristic_action(d, d.to_move))
        legal = d.legal_actions()
        assert sorted(np.flatnonzero(mask[i])) == legal
        assert heur[i] == heuristic_action(d, d.to_move)
        for a in range(NUM_ACTIONS):
            if a not in legal or (role == "declare") != (a < DOUBLE_BASE):
                assert np.isnan(label[i, a])
                continue
            c = d.clone()
            c.apply(a)
            rollout(c)
            assert label[i, a] == c.scores[d.to_move], (i, a)
            checked += 1
    assert checked >= 6 * (22 if role == "declare" else 1)


# ----------------------------------------------------------------------------- checkpoints
def _tiny(tmp_path: Path, role: str, bias: np.ndarray | None = None, baseline: dict | None = None) -> Path:
    """A bidding checkpoint of an untrained network (policy bias ``bias``: the estimates of every input)."""
    blocks = bidding.BLOCKS[role]
    net = PolicyNet(sum(BLOCKS[b][1] for b in blocks), NUM_ACTIONS, (8,))
    if bias is not None:
        with torch.no_grad():
            net.policy.weight.zero_()
            net.policy.bias.copy_(torch.from_numpy(bias))
    meta = {"scale": 1.0}
    if role == "declare":
        meta["baseline"] = baseline or dict.fromkeys(SEVEN, 0.0)
    path = tmp_path / f"{role}.pt"
    save_bidding(path, net, role, blocks, {"role": role}, meta)
    return path


def test_bidding_checkpoints_round_trip_and_refusals(tmp_path):
    path = _tiny(tmp_path, "declare")
    _, ckpt = load_bidding(path, "declare")
    assert ckpt["blocks"] == bidding.BLOCKS["declare"] and ckpt["env_version"] and ckpt["meta"]["scale"] == 1.0
    with pytest.raises(ValueError, match="decides 'declare', expected 'double'"):
        load_bidding(path, "double")
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match=r"bad\.pt.*corrupt"):
        load_bidding(bad, "declare")
    with pytest.raises(ValueError, match="not found"):
        load_bidding(tmp_path / "none.pt", "declare")
    ckpt["blocks"] = ["hand", "no_such_block"]
    torch.save(ckpt, bad)
    with pytest.raises(ValueError, match="bad input blocks"):
        load_bidding(bad, "declare")


def test_learned_declaration_is_estimate_minus_baseline_among_legal(tmp_path):
    """R3.1: only contracts left; the choice maximises estimate - baseline of the contract."""
    from barbu_env.agents.bidding import LearnedBidding

    bias = np.zeros(NUM_ACTIONS, np.float32)
    bias[DECLARE_BASE + 0] = 10.0  # no_tricks: estimate 10
    bias[DECLARE_BASE + 4] = 6.0  # no_last_two: estimate 6
    bias[62 + 1] = 30.0  # trumps:D: estimate 30
    base = {"no_tricks": 9.0, "no_hearts": 0.0, "no_queens": 0.0, "no_king": 0.0, "no_last_two": 0.0,
            "trumps": 28.0, "fantan": 100.0}  # fmt: skip
    _tiny(tmp_path, "declare", bias, base)
    lb = LearnedBidding(tmp_path, ("declare",))
    obs = np.zeros(OBS_SIZE, np.float32)
    mask = np.zeros(NUM_ACTIONS, np.int8)
    mask[[DECLARE_BASE + 0, DECLARE_BASE + 4, 62, 63, 64, 65]] = 1
    assert lb.choose("declare", obs, mask) == DECLARE_BASE + 4  # 6 - 0 beats 30 - 28 and 10 - 9
    mask[DECLARE_BASE + 4] = 0
    assert lb.choose("declare", obs, mask) == 63  # trumps:D, 2 above its baseline
    with pytest.raises(ValueError, match="classic layout"):
        lb.choose("declare", obs[:-4], mask)  # another layout (e.g. Barbu King's)


def test_bidding_option_values_and_errors(tmp_path):
    with pytest.raises(ValueError, match=r"option 'bidding'.*\['heuristic', 'learned', 'declare', 'double'\]"):
        agents.make("checkpoints:bidding=maybe")
    with pytest.raises(ValueError, match=r"no declare network .*declare\.pt"):
        agents.make(f"checkpoints:bidding=learned,bidding_dir={tmp_path}")
    with pytest.raises(ValueError, match="unknown option"):
        agents.make("checkpoints:biding=learned")
    _tiny(tmp_path, "double")
    a = agents.make(f"checkpoints:bidding=double,bidding_dir={tmp_path}")
    assert a.bidding_roles == ("double",) and "bidding=double" in a.spec
    assert agents.make("checkpoints").bidding_roles == ()


# ----------------------------------------------------------------------------- whole matches
@pytest.mark.slow
def test_learned_bidding_plays_50_whole_matches_within_the_mask():
    """R3.1 and R6.4: every learned declaration and double is legal (asserted against the mask before each
    step), and at the end every player has doubled every declarer at least twice."""
    spec = f"{ROOT / 'checkpoints' / 'no_king.pt'}:bidding=learned,fallback=random"  # cheap card play elsewhere
    e = make_env(mode="match")
    players = [agents.make(spec, seed=s) for s in range(4)]
    assert players[0].learned.folder == ROOT / "checkpoints" / "bidding"
    learned = 0
    for match in range(50):
        for s, p in enumerate(players):
            p.reset(100 * match + s)
        e.reset(seed=match)
        raw = e.unwrapped
        while not all(e.terminations.values()):
            agent = e.agent_selection
            phase = raw.deal.phase
            a = players[raw.agent_name_mapping[agent]].act(e, agent)
            assert e.observe(agent)["action_mask"][a] == 1, (match, agent, a)
            learned += phase in (DECLARE, DOUBLE)
            e.step(a)
        m = raw.match
        assert m.is_over
        assert all(m.doubled[d][s] >= 2 for d in range(4) for s in range(4) if s != d), m.doubled
        assert sorted(r.contract.split(":")[0] for r in m.records if r.declarer == 0) == sorted(SEVEN)
    assert learned == 50 * 28 * 5  # one declaration and four doubling decisions per deal


# ----------------------------------------------------------------------------- training
@pytest.mark.slow
def test_tiny_bidding_run_trains_exports_and_resumes(tmp_path):
    cfg = bidding.BiddingConfig(role="declare", states=140, chunk=70, epochs=1, minibatch=32,
                                out_dir=str(tmp_path / "run"), export_dir=str(tmp_path / "export"))  # fmt: skip
    best = bidding.train(cfg)
    _, ckpt = load_bidding(tmp_path / "export" / "declare.pt", "declare")
    assert set(ckpt["meta"]["baseline"]) == set(SEVEN) and ckpt["meta"]["sets"]["learned"]["n"] == 2
    assert ckpt["config"]["states"] == 140 and best.is_file()
    again = bidding.BiddingConfig(**{**cfg.__dict__, "epochs": 2})
    bidding.train(again, resume=True)  # reuses data.npz and state.pt: trains epoch 2 only
    epochs = [line.split(",")[0] for line in (tmp_path / "run" / "metrics.csv").read_text().splitlines()[1:]]
    assert sorted(set(epochs)) == ["1", "2"]
    with pytest.raises(ValueError, match=r"bad role 'bid'.*\['declare', 'double'\]"):
        bidding.train(bidding.BiddingConfig(role="bid", out_dir=str(tmp_path / "x")))
