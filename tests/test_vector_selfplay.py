"""PPO's collector on the batched engine (training/vector_selfplay.py) against reference ``Deal`` replays.

Every step of the collector's ``VectorDeals`` is logged (hands, declarer, seat roles, actions); each game
is then replayed on a reference ``Deal`` built from the same hands and declarer. The recorded batch must
be exactly the learner decisions of the replay: observations (``observation.encode``), masks
(``Deal.legal_actions``), actions, complete trajectories per (game, seat) in the order deals ended, and
a reward only at each trajectory's last decision, equal to the seat's deal score / contract scale.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from barbu_env.actions import DECLARE_BASE, DOUBLE_BASE, NUM_ACTIONS  # noqa: E402
from barbu_env.agents.heuristic import heuristic_action  # noqa: E402
from barbu_env.engine.deal import OVER, Deal  # noqa: E402
from barbu_env.nn import load_checkpoint  # noqa: E402
from barbu_env.observation import encode  # noqa: E402
from barbu_env.rules import Rules  # noqa: E402
from training import ppo  # noqa: E402
from training.common import load_config  # noqa: E402
from training.ppo import TrainConfig  # noqa: E402
from training.selfplay import HEURISTIC, LEARNER, SNAPSHOT  # noqa: E402
from training.vector_selfplay import RANDOM, VectorSelfPlay  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def random_policy(seed: int):
    """A seeded uniformly random legal policy in the batched PolicyFn format."""
    rng = np.random.default_rng(seed)

    def fn(obs: np.ndarray, mask: np.ndarray):
        assert obs.shape == (len(mask), obs.shape[1]) and mask.shape[1] == NUM_ACTIONS
        u = rng.random(mask.shape) * mask
        return u.argmax(1), rng.random(len(mask)), rng.random(len(mask))

    return fn


def logged_run(sp: VectorSelfPlay, steps: int) -> list[tuple[np.ndarray, ...]]:
    """Play ``steps`` collector steps; returns per step (hands, declarer, roles, seat, actions, done)."""
    log = []
    step = sp.env.step

    def spy(actions):
        st = sp.env.state
        before = (st.hands.copy(), st.declarer.copy(), sp.roles.copy(), sp.env.seat.copy(), np.array(actions))
        rewards, done = step(actions)
        log.append((*before, done.copy()))
        return rewards, done

    sp.env.step = spy
    policy, snapshot = random_policy(1), random_policy(2)
    for _ in range(steps):
        sp.step(policy, snapshot)
    return log


def reference(hands: np.ndarray, declarer: int, contract: str, rules: Rules) -> Deal:
    family = contract in ("trumps", "fantan")
    return Deal.from_hands([int(h) for h in hands], declarer, None if family else contract, rules,
                           available=(contract,) if family else None)  # fmt: skip


def expected_batch(log, contract: str, rules: Rules, declare: str, scale: float):
    """Replay every game on reference deals: the learner decisions (obs, mask, action) of each complete
    (game, seat) trajectory and its final reward, in the order the collector closes them."""
    games = log[0][0].shape[0]
    refs: list[Deal | None] = [None] * games
    open_: list[dict[int, list]] = [{} for _ in range(games)]
    out = []
    for hands, declarer, roles, seat, actions, done in log:
        for g in range(games):
            if refs[g] is None:
                refs[g] = reference(hands[g], int(declarer[g]), contract, rules)
                open_[g] = {s: [] for s in range(4) if roles[g, s] == LEARNER}
            d, s, a = refs[g], int(seat[g]), int(actions[g])
            assert d.current_player == s
            legal = d.legal_actions()
            assert a in legal
            mask = np.zeros(NUM_ACTIONS, np.int8)
            mask[legal] = 1
            declaring = DECLARE_BASE <= a < DOUBLE_BASE
            if (declaring and declare == "heuristic") or (roles[g, s] == HEURISTIC and a < DOUBLE_BASE):
                assert a == heuristic_action(d, s)  # the compiled heuristic's choice is the agent's
            if a >= DOUBLE_BASE:  # doubles are drawn by the collector, never recorded
                pass
            elif roles[g, s] == LEARNER and not (declaring and declare == "heuristic"):
                open_[g][s].append((encode(d, s), mask, a))
            d.apply(a)
            assert bool(done[g]) == (d.phase == OVER)
        for g in np.flatnonzero(done):
            for s, decisions in open_[g].items():
                if decisions:
                    out.append((decisions, refs[g].scores[s] / scale))
            refs[g] = None
    return out


def check_batch(sp: VectorSelfPlay, want) -> None:
    batch = sp.take_batch()
    assert len(batch.trajectories) == len(want) > 0
    assert batch.complete == len(batch) == sum(len(t) for t, _ in want)
    for traj, (decisions, reward) in zip(batch.trajectories, want):
        assert len(traj) == len(decisions)
        for i, (obs, mask, action) in zip(traj, decisions):
            np.testing.assert_array_equal(batch.obs[i], obs)
            np.testing.assert_array_equal(batch.mask[i], mask)
            assert batch.action[i] == action
        assert [batch.reward[i] for i in traj[:-1]] == [0.0] * (len(traj) - 1)
        assert batch.reward[traj[-1]] == pytest.approx(reward)


@pytest.mark.parametrize(("contract", "declare", "doubling"), [
    ("no_queens", "heuristic", "classic"), ("trumps", "heuristic", "classic"), ("fantan", "policy", "classic"),
    ("trumps", "policy", "off"), ("no_hearts", "heuristic", "classic")])  # fmt: skip
def test_batches_equal_reference_replay(contract: str, declare: str, doubling: str) -> None:
    rules = Rules() if doubling == "classic" else Rules(doubling="off")
    roles = [LEARNER, SNAPSHOT, LEARNER, LEARNER]
    sp = VectorSelfPlay(contract, rules, 6, np.random.default_rng(0), lambda r: list(r.permutation(roles)),
                        double_prob=0.5, declare=declare)  # fmt: skip
    log = logged_run(sp, 150)
    want = expected_batch(log, contract, rules, declare, sp.scale)
    check_batch(sp, want)
    assert all(i < len(sp.batch) for o in sp.open for idx in o.values() for i in idx)  # pending, renumbered
    actions = np.stack([a for *_, a, _ in log])
    assert (actions > DOUBLE_BASE).any() == (doubling == "classic")  # double_prob 0.5 takes real doubles
    declared = [m[DECLARE_BASE:DOUBLE_BASE].any() for t, _ in want for _, m, _ in t]
    assert any(declared) == (declare == "policy")  # the learner's declarations are recorded in policy mode


@pytest.mark.parametrize(("contract", "declare"), [("no_king", "heuristic"), ("trumps", "policy"),
                                                   ("fantan", "heuristic")])  # fmt: skip
def test_mixed_seats_heuristic_and_random(contract: str, declare: str) -> None:
    """Each seat of each deal drawn among learner, snapshot, heuristic and random: the heuristic seats' actions are
    the heuristic agent's on the replayed deal, the learner batch is the replay's learner decisions."""
    sp = VectorSelfPlay(contract, Rules(), 8, np.random.default_rng(5),
                        lambda r: list(r.choice([LEARNER, SNAPSHOT, HEURISTIC, RANDOM], 4)), double_prob=0.3,
                        declare=declare)  # fmt: skip
    log = logged_run(sp, 200)
    roles = np.stack([r for _, _, r, *_ in log])
    assert {LEARNER, SNAPSHOT, HEURISTIC, RANDOM} <= set(np.unique(roles).tolist())
    check_batch(sp, expected_batch(log, contract, Rules(), declare, sp.scale))


def test_declarations_recorded_only_with_policy_mode() -> None:
    for declare, recorded in (("heuristic", False), ("policy", True)):
        sp = VectorSelfPlay("trumps", Rules(doubling="off"), 4, np.random.default_rng(3), lambda r: [LEARNER] * 4,
                            declare=declare)  # fmt: skip
        for _ in range(60):
            sp.step(random_policy(0))
        masks = np.stack(sp.take_batch().mask)
        assert masks[:, DECLARE_BASE:DOUBLE_BASE].any() == recorded


def test_no_doubles_taken_with_double_prob_zero() -> None:
    sp = VectorSelfPlay("no_hearts", Rules(), 8, np.random.default_rng(4), lambda r: [LEARNER] * 4)
    log = logged_run(sp, 80)
    actions = np.concatenate([a for *_, a, _ in log])
    assert (actions == DOUBLE_BASE).sum() > 0 and not (actions > DOUBLE_BASE).any()


def test_errors() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"4 seat roles among LEARNER, HEURISTIC, SNAPSHOT, RANDOM.*got \[0, 7, 0\]"):
        VectorSelfPlay("no_queens", Rules(), 2, rng, lambda r: [LEARNER, 7, LEARNER])
    with pytest.raises(ValueError, match=r"bad declare 'random'.*\['heuristic', 'policy'\]"):
        VectorSelfPlay("trumps", Rules(), 2, rng, lambda r: [LEARNER] * 4, declare="random")
    sp = VectorSelfPlay("no_queens", Rules(doubling="off"), 2, rng, lambda r: [SNAPSHOT, LEARNER] * 2)
    with pytest.raises(ValueError, match="need a policy"):
        for _ in range(4):
            sp.step(random_policy(0))
    with pytest.raises(ValueError, match=r"engine 'rust'.*\['python', 'vector'\]"):
        load_config(TrainConfig, None, ["engine=rust"])
    with pytest.raises(ValueError, match="declare='policy' needs engine='vector'"):
        load_config(TrainConfig, None, ["declare=policy"])


def test_vector_config_loads() -> None:
    cfg = load_config(TrainConfig, ROOT / "configs" / "ppo_vector.yaml")
    assert cfg.engine == "vector" and cfg.p_heuristic == 0


@pytest.mark.slow
@pytest.mark.parametrize(("contract", "declare", "p_heuristic"), [
    ("trumps", "heuristic", 0.0), ("fantan", "policy", 0.0), ("no_hearts", "heuristic", 0.5)])  # fmt: skip
def test_ppo_smoke_run_on_vector_engine(tmp_path: Path, contract: str, declare: str, p_heuristic: float) -> None:
    """training/ppo.py with engine=vector: imitation (SelfPlay), PPO on VectorDeals (with heuristic opponents
    when ``p_heuristic`` > 0), checkpoint, resume."""
    cfg = load_config(TrainConfig, None, [f"out_dir={tmp_path}", f"contracts=[{contract}]", "num_games=8",
                                          "engine=vector", f"declare={declare}", f"p_heuristic={p_heuristic}",
                                          "p_snapshot=0.3", "snapshot_every=1",
                                          "bc_decisions=200", "bc_epochs=1", "ppo_decisions=600",
                                          "rollout_decisions=200", "minibatch=128", "update_epochs=1",
                                          "eval_every=2", "eval_boards=2", "hidden=[16]"])  # fmt: skip
    paths = ppo.train(cfg)
    _, ckpt = load_checkpoint(paths[contract])
    assert ckpt["contract"] == contract and ckpt["config"]["engine"] == "vector"
    assert ckpt["config"]["declare"] == declare
    rows = (tmp_path / contract / "metrics.csv").read_text()
    assert "losses/policy" in rows and "charts/points_per_deal" in rows
    assert ppo.train(cfg, resume=True).keys() == paths.keys()
