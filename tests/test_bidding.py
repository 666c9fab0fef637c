"""Learned bidding (training/bidding.py, barbu_env.agents.bidding): labels against the Python engine, the
checkpoint format, the neural agent's ``bidding`` option and whole matches under the R6.4 mask."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numba")

from barbu_env import agents  # noqa: E402
from barbu_env.actions import DECLARE_BASE, DOUBLE_BASE, NUM_ACTIONS  # noqa: E402
from barbu_env.agents.heuristic import heuristic_action, rollout  # noqa: E402
from barbu_env.contracts import CLASSIC_CONTRACTS as SEVEN  # noqa: E402
from barbu_env.engine.deal import DECLARE, DOUBLE, OVER, Deal  # noqa: E402
from barbu_env.env import env as make_env  # noqa: E402
from barbu_env.nn import PolicyNet, load_bidding, save_bidding  # noqa: E402
from barbu_env.observation import BLOCKS, OBS_SIZE, block  # noqa: E402
from barbu_env.rules import Rules  # noqa: E402
from barbu_env.vector import VectorDeals  # noqa: E402
from barbu_env.vector.tables import build_tables  # noqa: E402
from training import bidding  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _deals(n: int, seed: int, p: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The hands, declarers and R6.4 masks :func:`bidding.label_chunk` sets up for ``(n, seed)``."""
    v = VectorDeals(None, batch=n, seed=seed, auto_reset=False)
    v.reset()
    declarer = v.state.declarer.copy()
    md = bidding._obligations(np.random.default_rng([seed, 1]), declarer, p)
    return v.state.hands.astype(np.uint64).copy(), declarer, md


def _labelled(cfg: bidding.BiddingConfig, n: int, seed: int) -> tuple[list[Deal], np.ndarray, np.ndarray, np.ndarray]:
    """``(deals, masks, labels, heuristic)``: :func:`bidding.label_chunk`'s ``n`` decisions of ``(cfg, seed)`` and,
    for each, the Python ``Deal`` at that decision (the heuristic's declaration and earlier doubles replayed;
    ``random_declare`` must be 0)."""
    obs, mask, label, heur = bidding.label_chunk(cfg, n, seed=seed)
    hands, declarer, md = _deals(n, seed, cfg.must_double_prob)
    deals = []
    for i in range(n):
        d = Deal.from_hands([int(h) for h in hands[i]], int(declarer[i]), None, Rules(), must_double=int(md[i]))
        if cfg.role == "double":
            d.apply(heuristic_action(d, d.to_move))  # the heuristic's declaration (random_declare=0)
            while d.double_step < block(obs[i], "doubled_done").sum():  # the heuristic's earlier doubles
                d.apply(heuristic_action(d, d.to_move))
        deals.append(d)
    return deals, mask, label, heur


def _check_labels(role: str, deals: list[Deal], mask: np.ndarray, label: np.ndarray, heur: np.ndarray,
                  play_out: Callable[[Deal], None]) -> int:  # fmt: skip
    """Asserts each decision's mask and heuristic choice, and that each legal action's label is the seat's deal
    score (R8.1) after that action and ``play_out`` (in place, to the end of the deal) on a ``Deal`` clone, and
    NaN elsewhere; returns the labels compared."""
    checked = 0
    for i, d in enumerate(deals):
        legal = d.legal_actions()
        assert sorted(np.flatnonzero(mask[i])) == legal
        assert heur[i] == heuristic_action(d, d.to_move)
        for a in range(NUM_ACTIONS):
            if a not in legal or (role == "declare") != (a < DOUBLE_BASE):
                assert np.isnan(label[i, a])
                continue
            c = d.clone()
            c.apply(a)
            play_out(c)
            assert label[i, a] == c.scores[d.to_move], (i, a)
            checked += 1
    return checked


@pytest.mark.parametrize("role", ["declare", "double"])
def test_labels_are_heuristic_playouts_on_the_python_deal(role):
    """Each label is the seat's deal score (R8.1) after that action and heuristic play to the end, on ``Deal``."""
    cfg = bidding.BiddingConfig(role=role, must_double_prob=0.3, random_declare=0.0)
    checked = _check_labels(role, *_labelled(cfg, 6, 3), rollout)
    assert checked >= 6 * (22 if role == "declare" else 1)


@pytest.fixture(scope="module")
def card_player():
    """The shipped card-play networks as the labels' ``card_play=checkpoints`` loads them (greedy, heuristic
    bidding)."""
    return agents.make("checkpoints:bidding=heuristic")


@pytest.mark.parametrize("role", ["declare", "double"])
def test_learned_card_play_labels_are_agent_playouts_on_the_python_deal(role, card_player):
    """``card_play=checkpoints``: each label is the seat's deal score (R8.1) after that action, then on ``Deal``
    every card decision (R5, R7) by the neural agent's own choice (``act_deal``: a torch pass on
    ``observation.encode``) and every later double or redouble (R6) by the heuristic. The heuristic's labels of
    the same decisions differ somewhere (the test tells the two card players apart)."""
    cfg = bidding.BiddingConfig(role=role, must_double_prob=0.3, random_declare=0.0, card_play="checkpoints")

    def learned(d: Deal) -> None:
        while d.phase != OVER:
            bid = d.phase in (DECLARE, DOUBLE)
            d.apply(heuristic_action(d, d.to_move) if bid else card_player.act_deal(d))

    n = 3 if role == "declare" else 5
    deals, mask, label, heur = _labelled(cfg, n, 4)
    checked = _check_labels(role, deals, mask, label, heur, learned)
    assert checked >= n * (22 if role == "declare" else 1)
    plain = bidding.label_chunk(dataclasses.replace(cfg, card_play="heuristic"), n, seed=4)[2]
    assert not np.array_equal(np.nan_to_num(plain), np.nan_to_num(label))


def test_card_play_refusals(tmp_path):
    """``card_play``: a missing path, a folder of bidding (not card-play) checkpoints and a folder that lacks a
    contract's network are refused, naming the setting and what is allowed or missing."""
    t = build_tables(Rules())
    assert bidding.card_policy("heuristic", t) is None
    with pytest.raises(ValueError, match=r"bad card_play 'no/such/folder': expected 'heuristic' or .*not found"):
        bidding.card_policy("no/such/folder", t)
    with pytest.raises(ValueError, match=r"bad card_play .*bidding.*not a barbu_env policy"):
        bidding.card_policy(str(ROOT / "checkpoints" / "bidding"), t)
    with pytest.raises(ValueError, match=r"no card-play network for \['no_hearts', .*'fantan'\].*\['no_tricks'\]"):
        bidding.card_policy(str(ROOT / "checkpoints" / "no_tricks.pt"), t)
    with pytest.raises(ValueError, match="bad card_play 'nowhere'"):
        bidding.train(bidding.BiddingConfig(card_play="nowhere", out_dir=str(tmp_path / "run")))
    assert not (tmp_path / "run").exists()  # refused before anything is written


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
    with pytest.raises(ValueError, match=r"option 'bidding'.*\['auto', 'heuristic', 'learned', 'declare', 'double'\]"):
        agents.make("checkpoints:bidding=maybe")
    with pytest.raises(ValueError, match=r"no declare network .*declare\.pt"):
        agents.make(f"checkpoints:bidding=learned,bidding_dir={tmp_path}")
    with pytest.raises(ValueError, match="unknown option"):
        agents.make("checkpoints:biding=learned")
    _tiny(tmp_path, "double")
    a = agents.make(f"checkpoints:bidding=double,bidding_dir={tmp_path}")
    assert a.bidding_roles == ("double",) and "bidding=double" in a.spec
    # auto (the default): the full-match agent where both networks are beside the checkpoints, else heuristic
    full = agents.make("checkpoints")
    assert full.bidding == "learned" and full.bidding_roles == ("declare", "double") and full.spec == "checkpoints"
    assert agents.make("checkpoints:bidding=heuristic").bidding_roles == ()
    only_double = agents.make(f"checkpoints:bidding_dir={tmp_path}")  # one network there: auto is heuristic
    assert only_double.bidding == "heuristic" and only_double.bidding_roles == ()


def test_batched_engine_takes_the_full_match_agent_where_it_makes_no_bidding_decision():
    """Deal-mode boards name their contract: without doubling the learned bidding never decides, so the batched
    engine plays ``checkpoints``; with doubling on its doubles are the networks', which only the env plays."""
    from barbu_env.evaluation.batched import seat_player

    full = agents.make("checkpoints")
    assert seat_player(full, doubling=False) is full and seat_player(full, doubling=True) is None
    plain = agents.make("checkpoints:bidding=heuristic")
    assert seat_player(plain, doubling=True) is plain


# ----------------------------------------------------------------------------- whole matches
def _play_matches(players, matches: int, cards=None) -> int:
    """Plays ``matches`` whole matches (seeds 0, 1, ...) through the env: every declaration and double by
    ``players[seat]``, card decisions by them too or, if ``cards`` (a generator) is given, uniformly at random
    from the engine's legal actions. Asserts R3.1 and R6.4 at the end of each; returns the bidding decisions."""
    e = make_env(mode="match")
    raw = e.unwrapped
    bids = 0
    for match in range(matches):
        for s, p in enumerate(players):
            p.reset(100 * match + s)
        raw.reset(seed=match)
        while not all(raw.terminations.values()):
            agent, deal = raw.agent_selection, raw.deal
            bidding_phase = deal.phase in (DECLARE, DOUBLE)
            if bidding_phase or cards is None:
                a = players[raw.agent_name_mapping[agent]].act(raw, agent)  # the env refuses an illegal one
                bids += bidding_phase
            else:
                legal = deal.legal_actions()
                a = legal[int(cards.integers(len(legal)))]
            raw.step(a)
        m = raw.match
        assert m.is_over
        assert all(m.doubled[d][s] >= 2 for d in range(4) for s in range(4) if s != d), (match, m.doubled)
        assert all(sorted(r.contract.split(":")[0] for r in m.records if r.declarer == d) == sorted(SEVEN)
                   for d in range(4)), match  # fmt: skip
    return bids


@pytest.mark.slow
def test_full_match_agent_never_breaks_the_obligation_in_1000_matches():
    """R3.1 and R6.4 over 1000 whole matches: ``agents.make("checkpoints")`` (learned declaration and doubling)
    takes every bidding decision of the four seats; each is legal, and at the end of each match every player has
    doubled every declarer at least twice and each declarer has played its seven contracts. The bidding
    networks read the hand, the contract, the doubles and the obligations, never the card play, so the cards are
    played at random here (fast; the next test has the agent play them). ``BARBU_OBLIGATION_MATCHES`` changes
    the count."""
    matches = int(os.environ.get("BARBU_OBLIGATION_MATCHES", "1000"))
    players = [agents.make("checkpoints", seed=s) for s in range(4)]
    assert players[0].learned.folder.resolve() == ROOT / "checkpoints" / "bidding"
    bids = _play_matches(players, matches, cards=np.random.default_rng(0))
    assert bids == matches * 28 * 5  # one declaration and four doubling decisions per deal


@pytest.mark.slow
def test_full_match_agent_plays_whole_matches_within_the_mask():
    """The full-match agent in every seat, card play included (R3.1, R6.4 as above)."""
    players = [agents.make("checkpoints", seed=s) for s in range(4)]
    assert _play_matches(players, 2) == 2 * 28 * 5


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


def test_estimates_are_the_torch_networks_values():
    """``LearnedBidding.estimates`` (numpy, float64) gives the shipped torch networks' values up to float32 rounding at
    every declaration (R3) and doubling (R6) decision of a seeded match of the full-match agent, and every choice is
    the one torch's values make wherever their best two legal values are not within that rounding."""
    from barbu_env.agents.bidding import declared_contract
    from barbu_env.nn import bidding_input

    agent = agents.make("checkpoints", seed=0)
    lb = agent.learned
    env = make_env(mode="match")
    env.reset(seed=3)
    checked = 0
    for name in env.agent_iter(max_iter=3000):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        a = agent.act(env, name)
        role = {DECLARE: "declare", DOUBLE: "double"}.get(env.unwrapped.deal.phase)
        if role is not None:
            net, blocks = lb.nets[role]
            with torch.no_grad():
                x = torch.from_numpy(bidding_input(obs["observation"], blocks)[None])
                want = net.policy(net.body(x))[0].double().numpy() * lb.meta[role]["scale"]
            got = lb.estimates(role, obs["observation"])
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4 * np.abs(want).max())
            legal = np.flatnonzero(obs["action_mask"])
            value = want[legal]
            if role == "declare":
                value = value - [lb.meta["declare"]["baseline"][declared_contract(int(b))] for b in legal]
            top2 = np.sort(value)[-2:]
            if len(legal) == 1 or top2[1] - top2[0] > 1e-3:
                assert a == legal[np.argmax(value)]
            checked += 1
        env.step(a)
    assert checked >= 100
