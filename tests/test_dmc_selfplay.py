"""Deep Monte-Carlo self-play on the batched engine (training/dmc_selfplay.py).

The collector's targets are the acting seat's final deal score / |contract total| (R4, R8.1); the batched
duplicate evaluation equals the ``Deal``-based one (training.common.duplicate_eval's harness) on the same
boards; a tiny run trains, writes its logs and a checkpoint the neural agent loads, and resumes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from barbu_env.agents import make  # noqa: E402
from barbu_env.contracts import contract_scale, contract_table  # noqa: E402
from barbu_env.evaluation import evaluate  # noqa: E402
from barbu_env.nn import PolicyNet, load_checkpoint, save_checkpoint  # noqa: E402
from barbu_env.rules import Rules  # noqa: E402
from barbu_env.vector import VectorDeals  # noqa: E402
from barbu_env.vector.backend import numba_available  # noqa: E402
from barbu_env.vector.encode import unpack_observations  # noqa: E402
from training import dmc_selfplay  # noqa: E402
from training.common import load_config  # noqa: E402
from training.dmc_selfplay import Collector, SelfPlayConfig, eval_rules, vector_margin  # noqa: E402
from training.selfplay import LEARNER  # noqa: E402

pytestmark = pytest.mark.skipif(not numba_available(), reason="numba not installed (pip install barbu_env[fast])")


def collect(contract: str, steps: int, heuristic_only: bool, seed: int = 0) -> tuple[Collector, dict]:
    rules = eval_rules(Rules())
    col = Collector(contract, rules, 16, np.random.default_rng(seed), 0.3, 0.0, 0.0)
    if heuristic_only:
        col.all_heuristic()
    net = PolicyNet()
    for _ in range(steps):
        col.step(None if heuristic_only else net, None, 0.2, record_heuristic=heuristic_only)
    return col, col.take()


@pytest.mark.parametrize("contract", ["no_queens", "trumps", "fantan"])
def test_targets_are_each_seats_final_score_and_sum_to_the_contract_total(contract: str) -> None:
    """R4/R7: without doubling the four seats' deal scores add up to the contract's total; every decision
    of a (deal, seat) carries that seat's score / scale."""
    _col, data = collect(contract, 200, heuristic_only=True)
    assert data["action"].shape[0] > 500
    scale = contract_scale(contract, Rules())
    total = contract_table(Rules())[contract].total(Rules())
    per: dict[tuple[int, int], set[float]] = {}
    for k, s, t in zip(data["key"].tolist(), data["seat"].tolist(), data["target"].tolist()):
        per.setdefault((k, s), set()).add(t)
    assert all(len(v) == 1 for v in per.values())
    deals: dict[int, dict[int, float]] = {}
    for (k, s), v in per.items():
        deals.setdefault(k, {})[s] = v.pop()
    full = [d for d in deals.values() if len(d) == 4]
    assert full, "some deal has an unforced decision of every seat"
    for d in full:
        assert sum(d.values()) * scale == pytest.approx(total)
    # in teacher mode the recorded move is the heuristic's, and legal
    assert (data["action"] == data["teacher"]).all()
    assert data["mask"][np.arange(len(data["action"])), data["action"]].all()


def test_take_keeps_decisions_of_running_deals_pending() -> None:
    col, data = collect("no_hearts", 30, heuristic_only=False)
    assert data["action"].shape[0] == 0  # 30 steps: no deal of 52 decisions is over
    pending = sum(p[0].shape[0] for p in col.pending)
    assert pending > 0 and col.complete == 0
    net = PolicyNet()
    while col.complete == 0:
        col.step(net, None, 0.0, record_heuristic=False)
    done = col.complete
    data = col.take()
    assert data["action"].shape[0] == done
    for _ in range(3):
        col.step(net, None, 0.0, record_heuristic=False)
    assert col.complete == 0 and sum(p[0].shape[0] for p in col.pending) > 0  # the next deals are running
    assert col.take()["action"].shape[0] == 0


def test_recorded_observations_are_the_learner_seats() -> None:
    """Unpacked recorded observations are the env's observations of a learner seat (its own hand block)."""
    col, data = collect("no_tricks", 60, heuristic_only=False)
    obs = unpack_observations(data["bits"], data["numeric"])
    hand = obs[:, :52]
    legal_cards = data["mask"][:, :52].astype(bool)
    assert (hand[legal_cards] == 1).all()  # every legal card is in the hand of the seat that moved
    assert (col.roles >= 0).all() and (col.roles == LEARNER).any(1).all()


@pytest.mark.parametrize("contract", ["no_king", "trumps", "fantan"])
def test_batched_duplicate_margin_equals_barbu_eval(contract: str, tmp_path: Path) -> None:
    """The model-selection margin is barbu-eval's (1 vs 3 heuristic, doubling off) on the same boards: same
    boards, same greedy network (as the checkpoint stores it), compiled heuristic vs agents.heuristic."""
    torch.manual_seed(1)
    save_checkpoint(tmp_path / "p.pt", PolicyNet(), contract, {})
    net, _ = load_checkpoint(tmp_path / "p.pt")
    mean, _half, boards = vector_margin(net, contract, Rules(), 5, seed=7)
    ref = evaluate([str(tmp_path / "p.pt"), "heuristic"], contracts=contract, boards=5, seed=7)
    ci = ref["contracts"][contract]["agents"][ref["agents"][0]]
    assert boards == ci["n"] == 5
    assert mean == pytest.approx(ci["mean"]) and mean != 0


@pytest.mark.parametrize("contract", ["trumps", "fantan"])
def test_declared_deals_observed_as_the_fixed_contract(contract: str) -> None:
    """R3.2: a deal whose trump suit / start rank the heuristic declared, patched, is observed exactly as the
    same deal played with that contract fixed (how barbu-eval plays it), at every card decision."""
    rules = eval_rules(Rules())
    hands, declarer, texts = dmc_selfplay.duplicate_boards(contract, rules, 3, 11)
    hands, declarer, texts = hands[::4], declarer[::4], texts[::4]
    declared = VectorDeals(contract, rules, batch=3, boards=(hands, declarer), auto_reset=False)
    fixed = VectorDeals(texts, rules, batch=3, boards=(hands, declarer), auto_reset=False)
    declared.reset()
    fixed.reset()
    declared.step(declared.heuristic_actions())  # the declaration: the heuristic's, as in deal_board
    patch = dmc_selfplay.fixed_contract_patch(contract, rules)
    steps = 0
    while (fixed.seat >= 0).any():
        a_bits, a_num, a_mask, a_seat = (x.copy() for x in declared.observe_packed())
        b_bits, b_num, b_mask, b_seat = fixed.observe_packed()
        live = b_seat >= 0
        dmc_selfplay.apply_patch(a_bits, live, patch)
        assert (a_seat == b_seat).all() and (a_mask == b_mask).all()
        assert (a_bits[live] == b_bits[live]).all() and (a_num[live] == b_num[live]).all()
        a = np.maximum(fixed.heuristic_actions(), 0)
        declared.step(a)
        fixed.step(a)
        steps += 1
    assert steps >= 52


def test_value_warmup_trains_the_value_head_only(tmp_path: Path) -> None:
    """With ``baseline``, ``value_only`` fits V (its loss falls) and leaves the logits' layer unchanged; a full
    update then moves the logits too."""
    cfg = load_config(SelfPlayConfig, None, [f"out_dir={tmp_path}", "contracts=[no_queens]", "hidden=[16]",
                                             "baseline=true", "minibatch=256"])  # fmt: skip
    run = dmc_selfplay.Run(cfg, "no_queens", resume=False)
    _, data = collect("no_queens", 120, heuristic_only=True)
    before = run.net.policy.weight.detach().clone()
    first = run.fit(data, 1, 0.0, 1e-2, value_only=True)["losses/value_mse"]
    last = run.fit(data, 5, 0.0, 1e-2, value_only=True)["losses/value_mse"]
    assert last < first
    assert torch.equal(run.net.policy.weight, before)
    stats = run.fit(data, 1, 1.0, 1e-3)
    assert {"losses/q_mse", "losses/cross_entropy", "losses/value_mse"} <= stats.keys()
    assert not torch.equal(run.net.policy.weight, before)
    run.logger.tb.close()


def test_overlapped_fits_equal_the_same_schedule_on_one_thread(tmp_path: Path) -> None:
    """``overlap``: each rollout is fit on a second thread while the next is played by the network as it was
    before that fit; the weights equal those of that schedule run on one thread (collect, copy, fit), so
    they do not depend on the threads' timing."""
    sets = [f"out_dir={tmp_path}", "contracts=[no_queens]", "hidden=[32]", "num_games=64", "rollout=600",
            "p_heuristic=0.3", "p_snapshot=0", "bc_decisions=0", "eval_every=1000000000", "decisions=3000"]  # fmt: skip
    cfg = load_config(SelfPlayConfig, None, [*sets, "overlap=true"])
    run = dmc_selfplay.Run(cfg, "no_queens", resume=False)
    run.evaluate = lambda: {}  # type: ignore[method-assign]
    trained, _, _ = run.selfplay()

    ref = dmc_selfplay.Run(load_config(SelfPlayConfig, None, [*sets, "overlap=false"]), "no_queens", resume=False)
    col, actor, done = ref.collector(), PolicyNet(hidden=(32,)).eval(), 0
    actor.load_state_dict(ref.net.state_dict())
    while done < 3000:
        while col.complete < 600:
            col.step(actor, None, ref.cfg.epsilon, record_heuristic=False)
        data = col.take()
        actor.load_state_dict(ref.net.state_dict())
        ref.fit(data, 1, ref.cfg.prior_coef, ref.cfg.lr)
        done += data["action"].shape[0]
    assert trained == done == run.decisions
    for k, v in ref.net.state_dict().items():
        assert torch.equal(run.net.state_dict()[k], v), k
    run.logger.tb.close()
    ref.logger.tb.close()


def test_config_rejects_unknown_keys(tmp_path: Path) -> None:
    p = tmp_path / "c.yaml"
    p.write_text("epsilonn: 0.1\n")
    with pytest.raises(ValueError, match="epsilonn"):
        load_config(SelfPlayConfig, p)


@pytest.mark.slow
def test_tiny_run_trains_logs_checkpoints_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    config = tmp_path / "tiny.yaml"
    config.write_text(f"contracts: [no_queens]\nout_dir: {out}\nexport_dir: {out}/ckpt\nhidden: [32]\n"
                      "num_games: 64\nbc_decisions: 3000\nrollout: 2000\neval_every: 3000\neval_boards: 4\n"
                      "final_eval_deals: 0\nthreads: 1\n")  # fmt: skip
    dmc_selfplay.main(["--config", str(config), "--set", "decisions=6000"])
    d = out / "no_queens"
    for name in ("best.pt", "state.pt", "metrics.csv", "curve.png"):
        assert (d / name).is_file(), name
    _, ckpt = load_checkpoint(out / "ckpt" / "no_queens.pt")
    assert ckpt["contract"] == "no_queens" and ckpt["config"]["decisions"] == 6000
    agent = make(str(out / "ckpt" / "no_queens.pt"))
    assert "no_queens" in agent.nets
    before = torch.load(d / "state.pt", weights_only=False)["decisions"]
    assert before >= 6000
    dmc_selfplay.main(["--config", str(config), "--set", "decisions=10000", "--resume"])
    after = torch.load(d / "state.pt", weights_only=False)
    assert after["decisions"] >= 10000 and after["bc_done"]
    metrics = (d / "metrics.csv").read_text()
    assert metrics.count("imitation/agreement") == 1  # the warm start is not repeated on resume
