"""Training pipeline: configs, the smoke run end to end (train, save, reload, evaluate), checkpoints."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from barbu_env import agents  # noqa: E402
from barbu_env.evaluation import evaluate  # noqa: E402
from barbu_env.nn import PolicyNet, load_checkpoint, save_checkpoint  # noqa: E402
from barbu_env.rules import Rules  # noqa: E402
from training import dmc, ppo  # noqa: E402
from training.common import load_config  # noqa: E402
from training.dmc_selfplay import SelfPlayConfig  # noqa: E402
from training.ppo import TrainConfig, tensors  # noqa: E402
from training.selfplay import HEURISTIC, LEARNER, SelfPlay  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(("name", "cls"), [("smoke", dmc.DMCConfig), ("dmc", dmc.DMCConfig), ("full", dmc.DMCConfig),
                                          ("ppo", TrainConfig), ("ppo_vector", TrainConfig),
                                          ("default", SelfPlayConfig)])  # fmt: skip
def test_shipped_configs_load(name: str, cls: type) -> None:
    cfg = load_config(cls, ROOT / "configs" / f"{name}.yaml")
    assert cfg.contracts


def test_unknown_config_key_lists_valid_keys(tmp_path: Path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text("lr: 0.1\nlearning_rate: 0.2\n")
    with pytest.raises(ValueError, match=r"unknown config key\(s\) \['learning_rate'\].*valid keys"):
        load_config(TrainConfig, p)
    with pytest.raises(ValueError, match="unknown contract"):
        load_config(TrainConfig, None, ["contracts=[no_jokers]"])


def test_per_contract_settings_apply_to_their_contract_only(tmp_path: Path) -> None:
    cfg = load_config(dmc.DMCConfig, None, ["states=10", "per_contract={trumps: {states: 20, bc_coef: 0.5}}"])
    assert cfg.for_contract("trumps").states == 20 and cfg.for_contract("trumps").bc_coef == 0.5
    assert cfg.for_contract("no_hearts").states == 10
    with pytest.raises(ValueError, match=r"per_contract.trumps: unknown .*\['learning_rate'\]"):
        load_config(dmc.DMCConfig, None, ["per_contract={trumps: {learning_rate: 1}}"])
    with pytest.raises(ValueError, match="unknown contract"):
        load_config(dmc.DMCConfig, None, ["per_contract={no_jokers: {states: 1}}"])


def test_gae_with_terminal_reward_only() -> None:
    """gamma = 1: the return of every decision is the deal's final reward; lambda = 1 gives A = G - V."""
    from training.selfplay import Batch

    b = Batch(obs=[np.zeros(3, np.float32)] * 3, mask=[np.ones(2, np.int8)] * 3, action=[0, 1, 0],
              logp=[0.0] * 3, value=[0.1, 0.2, 0.3], reward=[0.0, 0.0, -1.0], trajectories=[[0, 1, 2]])  # fmt: skip
    t = tensors(b, lam=1.0)
    assert t["ret"].tolist() == [-1.0, -1.0, -1.0]
    assert np.allclose(t["adv"].numpy(), [-1.1, -1.2, -1.3])


def test_selfplay_records_only_learner_seats_and_rewards_their_scores() -> None:
    sp = SelfPlay("no_hearts", Rules(), 4, np.random.default_rng(0), lambda r: [LEARNER, HEURISTIC] * 2, 0.5)
    while not sp.results:
        sp.step(lambda o, m: (m.argmax(-1), np.zeros(len(m)), np.zeros(len(m))))
    batch = sp.take_batch()
    assert batch.trajectories and batch.complete == len(batch)
    _, roles, scores = sp.results[0]
    assert roles == [LEARNER, HEURISTIC, LEARNER, HEURISTIC]
    ends = sorted(batch.reward[t[-1]] for t in batch.trajectories[:2])
    assert all(r * sp.scale in scores for r in ends)


@pytest.mark.slow
def test_smoke_config_end_to_end(tmp_path: Path) -> None:
    """configs/smoke.yaml (DMC, what CI runs): train, save, reload through the agent protocol,
    evaluate with barbu-eval's API, resume."""
    cfg = load_config(dmc.DMCConfig, ROOT / "configs" / "smoke.yaml",
                      [f"out_dir={tmp_path / 'run'}", f"export_dir={tmp_path / 'ck'}"])  # fmt: skip
    paths = dmc.train(cfg)
    assert set(paths) == set(cfg.contracts)
    for contract in cfg.contracts:
        assert (tmp_path / "run" / contract / "metrics.csv").is_file()
        assert (tmp_path / "run" / contract / "curve.png").is_file()
        _, ckpt = load_checkpoint(tmp_path / "ck" / f"{contract}.pt")
        assert ckpt["contract"] == contract and ckpt["config"]["hidden"] == cfg.hidden
    agent = agents.make(str(tmp_path / "ck"), seed=0)
    assert agent.nets.keys() == set(cfg.contracts)
    summary = evaluate([str(tmp_path / "ck"), "heuristic"], contracts="no_queens", boards=2, seed=0)
    assert summary["contracts"]["no_queens"]["boards"] == 2
    again = dmc.train(cfg, resume=True)  # data and finished epochs are reused
    assert again.keys() == paths.keys()


@pytest.mark.slow
def test_ppo_smoke_run(tmp_path: Path) -> None:
    """training/ppo.py end to end on a tiny budget: imitation, PPO updates, checkpoint, resume."""
    cfg = load_config(TrainConfig, None, [f"out_dir={tmp_path}", "contracts=[no_queens]", "num_games=8",
                                          "bc_decisions=300", "bc_epochs=1", "ppo_decisions=600",
                                          "rollout_decisions=200", "minibatch=128", "update_epochs=1",
                                          "eval_every=2", "eval_boards=2", "hidden=[16]"])  # fmt: skip
    paths = ppo.train(cfg)
    _, ckpt = load_checkpoint(paths["no_queens"])
    assert ckpt["contract"] == "no_queens"
    assert ppo.train(cfg, resume=True).keys() == paths.keys()


def test_dmc_targets_are_rollout_returns_of_each_legal_action() -> None:
    """Every legal action gets the return of playing it out with heuristic players; illegal ones 0."""
    from training.selfplay import rollout_targets

    obs, mask, target, teacher = rollout_targets("no_tricks", Rules(), 20, seed=0, double_prob=0.0, label_prob=0.5)
    assert obs.shape == (20, obs.shape[1]) and mask.shape == target.shape == (20, 87)
    assert np.all(target[mask == 0] == 0)
    assert np.all(mask.sum(1) > 1)  # only real choices are labelled
    assert np.all(mask[np.arange(20), teacher] == 1)
    assert np.all((target <= 0) & (target >= -1))  # No tricks: own score in [-26, 0] / 26, no doubles


def test_dmc_data_extended_on_resume_equals_data_generated_at_once(tmp_path: Path, monkeypatch) -> None:
    """--resume with more ``states`` than data.npz holds generates only the missing chunks, and the
    result is the data a single run would have made; a changed recipe is refused."""
    monkeypatch.setattr(dmc, "CHUNK", 5)
    base = ["contracts=[trumps]", "workers=1", "label_prob=0.5", "hidden=[8]"]

    def data(out: str, states: int, resume: bool, extra: tuple[str, ...] = ()) -> tuple:
        cfg = load_config(dmc.DMCConfig, None, [*base, f"out_dir={tmp_path / out}", f"states={states}", *extra])
        return dmc.Run(cfg, "trumps", resume).data(resume)

    once = data("once", 12, False)
    data("grown", 7, False)
    grown = data("grown", 12, True)
    assert len(grown[0]) == 12
    for a, b in zip(once, grown):
        assert torch.equal(a, b)
    with pytest.raises(ValueError, match="generated with"):
        data("grown", 14, True, ("double_prob=0.9",))


def test_holdout_gain_is_the_paired_return_difference_of_greedy_and_heuristic_moves() -> None:
    torch.manual_seed(0)
    net = PolicyNet(hidden=(8,)).eval()
    rng = np.random.default_rng(0)
    obs = rng.random((6, net.obs_size)).astype(np.float16)
    mask = np.zeros((6, 87), np.int8)
    mask[:, [3, 7, 52]] = 1
    target = rng.random((6, 87)).astype(np.float32)
    with torch.no_grad():
        q = net.policy(net.trunk(torch.from_numpy(obs).float())).numpy()
    greedy = np.array([3, 7, 52])[q[:, [3, 7, 52]].argmax(1)]
    assert dmc.holdout_gain(net, (obs, mask, target, greedy))[::2] == (0.0, 1.0)
    other = np.where(greedy == 3, 7, 3)
    gain, _, agree = dmc.holdout_gain(net, (obs, mask, target, other))
    assert agree == 0.0 and np.isclose(gain, np.mean(target[np.arange(6), greedy] - target[np.arange(6), other]))


def test_corrupt_and_mismatched_checkpoints_are_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match=r"bad\.pt.*corrupt"):
        load_checkpoint(bad)
    with pytest.raises(ValueError, match="not found"):
        load_checkpoint(tmp_path / "missing.pt")
    small = PolicyNet(obs_size=10, num_actions=87, hidden=(4,))
    save_checkpoint(tmp_path / "small.pt", small, "no_queens", {})
    with pytest.raises(ValueError, match=r"small\.pt.*observations of 10"):
        load_checkpoint(tmp_path / "small.pt")
    with pytest.raises(ValueError, match=r"small\.pt"):
        agents.make(str(tmp_path / "small.pt"))


def test_neural_agent_plays_legal_moves_in_the_env(tmp_path: Path) -> None:
    import barbu_env

    torch.manual_seed(0)
    save_checkpoint(tmp_path / "no_king.pt", PolicyNet(hidden=(8,)), "no_king", {"note": "untrained"})
    agent = agents.make(f"{tmp_path / 'no_king.pt'}:greedy=false", seed=1)
    env = barbu_env.env(mode="deal", contract="no_king")
    env.reset(seed=3)
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        a = agent.act(env, name)
        assert obs["action_mask"][a] == 1
        env.step(a)
    with pytest.raises(ValueError, match="valid options"):
        agents.make(f"{tmp_path / 'no_king.pt'}:temperature=2")


@pytest.mark.parametrize("contract", ["no_queens", "no_hearts", "trumps:S", "fantan:7"])
def test_suit_permutation_of_observation_matches_the_relabelled_deal(contract: str) -> None:
    """Augmentation (training/augment.py): relabelling the suits of a deal and of every action gives
    exactly the gathered observation, mask and actions (R1.2), at every step of a random deal."""
    from barbu_env.cards import cards_of
    from barbu_env.engine import Deal
    from barbu_env.observation import BLOCKS, encode
    from training.augment import action_index, action_map, obs_index, suit_permutations
    from training.selfplay import legal_mask

    rng = np.random.default_rng(1)
    name = contract.split(":")[0]
    perms = suit_permutations(name)
    assert len(perms) == (6 if name == "no_hearts" else 24)
    perm = perms[-1]
    amap = action_map(perm)
    hb = BLOCKS["hearts_broken"][0]
    for _ in range(3):
        d = Deal.random(rng, 1, contract, Rules(doubling="off"))
        hands = [[int(amap[c]) for c in cards_of(h)] for h in d.hands]
        relabelled = contract if ":" not in contract or name == "fantan" else f"trumps:{'CDHS'[perm[3]]}"
        e = Deal.from_hands(hands, 1, relabelled, Rules(doubling="off"))
        while not d.is_over:
            seat = d.current_player
            got = encode(d, seat)[obs_index(perm)]
            want = encode(e, seat)
            keep = np.arange(len(want)) != hb  # hearts_broken follows hearts, not the relabelled suit
            assert np.array_equal(got[keep], want[keep])
            assert np.array_equal(legal_mask(d)[action_index(perm)], legal_mask(e))
            a = int(rng.choice(d.legal_actions()))
            d.apply(a)
            e.apply(int(amap[a]))
        assert d.scores == e.scores
