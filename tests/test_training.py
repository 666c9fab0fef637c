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
from barbu_env.vector.core import COLUMNS  # noqa: E402
from training import ppo, rollout_q  # noqa: E402
from training.common import load_config  # noqa: E402
from training.dmc_selfplay import SelfPlayConfig  # noqa: E402
from training.ppo import TrainConfig, tensors  # noqa: E402
from training.rollout_q import RolloutQConfig  # noqa: E402
from training.selfplay import HEURISTIC, LEARNER, SelfPlay  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(("name", "cls"), [("smoke", RolloutQConfig), ("full", RolloutQConfig),
                                          ("default", RolloutQConfig), ("ppo", TrainConfig),
                                          ("ppo_vector", TrainConfig),
                                          ("dmc_selfplay", SelfPlayConfig)])  # fmt: skip
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
    cfg = load_config(RolloutQConfig, None, ["states=10", "per_contract={trumps: {states: 20, bc_coef: 0.5}}"])
    assert cfg.for_contract("trumps").states == 20 and cfg.for_contract("trumps").bc_coef == 0.5
    assert cfg.for_contract("no_hearts").states == 10
    with pytest.raises(ValueError, match=r"per_contract.trumps: unknown .*\['learning_rate'\]"):
        load_config(RolloutQConfig, None, ["per_contract={trumps: {learning_rate: 1}}"])
    with pytest.raises(ValueError, match="unknown contract"):
        load_config(RolloutQConfig, None, ["per_contract={no_jokers: {states: 1}}"])


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
    """configs/smoke.yaml (training/rollout_q.py, what CI runs): train, save, reload through the agent protocol,
    evaluate with barbu-eval's API, resume to a longer run (``workers=2``: one process per contract)."""
    cfg = load_config(RolloutQConfig, ROOT / "configs" / "smoke.yaml",
                      [f"out_dir={tmp_path / 'run'}", f"export_dir={tmp_path / 'ck'}"])  # fmt: skip
    paths = rollout_q.train(cfg)
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
    state = tmp_path / "run" / "no_queens" / "state.pt"
    done = torch.load(state, weights_only=False)["states"]
    assert done >= cfg.states
    where = [f"out_dir={tmp_path / 'run'}", f"export_dir={tmp_path / 'ck'}", f"states={done + 2000}", "workers=2"]
    longer = load_config(RolloutQConfig, ROOT / "configs" / "smoke.yaml", where)
    again = rollout_q.train(longer, resume=True)  # the two contracts in two processes at once
    assert list(again) == cfg.contracts
    assert torch.load(state, weights_only=False)["states"] >= done + 2000


@pytest.mark.parametrize("contract", ["no_tricks", "trumps"])
def test_learner_playout_policy_plays_the_networks_greedy_move(contract: str) -> None:
    """``rollout: learner``: the playout policy is a frozen copy of the network (later training leaves it), its
    moves the torch network's argmax on the learner's observations (the fixed-contract block set, R3.2)."""
    from barbu_env.vector import VectorDeals, random_actions
    from barbu_env.vector.encode import unpack_observations
    from training.dmc_selfplay import apply_patch, fixed_contract_patch

    torch.manual_seed(0)
    net = PolicyNet(hidden=(32,), card_hidden=8).eval()
    policy = rollout_q.LearnerPolicy(contract, Rules())
    policy.load(net)
    v = VectorDeals(contract, Rules(), batch=64, seed=3)
    v.reset()
    rng = np.random.default_rng(0)
    patch = fixed_contract_patch(contract, Rules())
    checked = 0
    for _ in range(30):
        bits, numeric, mask, seat = v.observe_packed()
        card = (mask[:, :52].any(1)) & (seat >= 0)
        if card.any():
            obs = unpack_observations(bits[card], numeric[card])
            got = policy.card_actions(contract, obs, mask[card])
            apply_patch(bits, card, patch)
            logits, _ = net(torch.from_numpy(unpack_observations(bits[card], numeric[card])),
                            torch.from_numpy(mask[card]))  # fmt: skip
            top2 = logits.topk(2, dim=1).values
            clear = ((top2[:, 0] - top2[:, 1]) > 1e-4).numpy() | (mask[card].sum(1) == 1)
            assert np.array_equal(got[clear], logits.argmax(1).numpy()[clear])
            checked += int(clear.sum())
        v.step(random_actions(mask, rng))
    assert checked > 300
    before = policy.card_actions(contract, obs, mask[card])
    with torch.no_grad():
        for param in net.parameters():
            param.add_(torch.randn_like(param))
    assert np.array_equal(policy.card_actions(contract, obs, mask[card]), before)


@pytest.mark.parametrize("rollout", ["learner", "learner_seat"])
def test_learner_rollouts_label_every_legal_move_with_the_policys_playout(tmp_path: Path, rollout: str) -> None:
    """A tiny ``rollout: learner`` (``learner_seat``) run trains; its labels are the seat's score after each legal
    move then the frozen learner in every seat (in the labelled seat, the heuristic in the others:
    ``PolicyRollouts.play_out``'s ``seats``), and they differ from the heuristic playouts' labels."""
    from barbu_env.vector.policy_rollout import PolicyRollouts
    from barbu_env.vector.rollout import Rollouts

    cfg = load_config(RolloutQConfig, ROOT / "configs" / "smoke.yaml",
                      [f"out_dir={tmp_path / 'run'}", "contracts=[no_hearts]", f"rollout={rollout}",
                       "final_eval_deals=0", "card_hidden=8"])  # fmt: skip
    assert set(rollout_q.train(cfg)) == {"no_hearts"}
    torch.manual_seed(1)
    net = PolicyNet(hidden=(32,), card_hidden=8).eval()
    policy = rollout_q.LearnerPolicy("no_hearts", Rules())
    policy.load(net)
    lab = rollout_q.Labeller("no_hearts", Rules(), 32, np.random.default_rng(0), cfg.for_contract("no_hearts"), policy)
    part = None
    while part is None:
        before = lab.env.state.data.copy()
        bits, numeric, _, seat = lab.env.observe_packed()
        part = lab.step(net, None)
    games = [int(np.flatnonzero((bits == b).all(1) & (numeric == n).all(1))[0])
             for b, n in zip(part["bits"], part["numeric"], strict=True)]  # fmt: skip
    own, heur = [], []
    for j, g in enumerate(games):
        acts = np.flatnonzero(part["mask"][j])
        rows = np.repeat(before[g : g + 1], acts.size, axis=0)
        seats = np.zeros((acts.size, 4), bool)
        seats[:, seat[g]] = True
        by = seats if rollout == "learner_seat" else None
        own.append(PolicyRollouts(lab.env.tables, policy).play_out(rows, acts, by)[:, seat[g]] / lab.scale)
        heur.append(Rollouts(lab.env.tables).play_out(rows, acts, 1)[:, seat[g]] / lab.scale)
        assert np.allclose(part["q"][j, acts].astype(np.float32), own[-1], atol=2e-3)
    assert not np.allclose(np.concatenate(own), np.concatenate(heur), atol=2e-3)


def recording_labeller(cfg: RolloutQConfig) -> tuple[rollout_q.Labeller, PolicyNet, list]:
    """A 64-game No hearts labeller with learner playouts by a small network, and the list its playouts append
    ``(rows, seats)`` to (each call's game rows and who plays each seat)."""
    policy = rollout_q.LearnerPolicy("no_hearts", Rules())
    net = PolicyNet(hidden=(16,)).eval()
    policy.load(net)
    lab = rollout_q.Labeller("no_hearts", Rules(), 64, np.random.default_rng(0), cfg, policy)
    seen: list[tuple[np.ndarray, np.ndarray]] = []
    play_out = lab.rollouts.play_out

    def recording(rows, first, seats=None):
        seen.append((rows.copy(), np.array(seats)))
        return play_out(rows, first, seats)

    lab.rollouts.play_out = recording  # type: ignore[method-assign]
    return lab, net, seen


@pytest.mark.parametrize("share", [0.0, 0.5])
def test_rollout_opponents_draws_the_playout_seats_once_per_labelled_state(share: float) -> None:
    """``rollout_opponents``: the labelled seat's playouts are the learner's, each other seat the learner's with that
    probability, drawn once per labelled state (the same for its every move and world); 0 is ``learner_seat``."""
    cfg = RolloutQConfig(rollout="learner", rollout_opponents=share, worlds=2, label_prob=1.0)
    lab, net, seen = recording_labeller(cfg)
    others: list[int] = []
    while len(others) < 300:
        part = lab.step(net, None)
        if part is None:
            continue
        rows, seats = seen[-1]
        to_move = rows[:, COLUMNS["to_move"]]
        assert seats[np.arange(len(seats)), to_move].all()  # the labelled seat: always the learner
        counts = part["mask"].sum(1)
        per_world = seats.reshape(2, counts.sum(), 4)
        assert (per_world[0] == per_world[1]).all()
        for a, n in zip(np.cumsum(counts) - counts, counts, strict=True):
            block = per_world[0, a : a + n]
            assert (block == block[0]).all()  # every move of the state
            others.append(int(block[0].sum()) - 1)
    mean = np.mean(others) / 3
    assert (mean == 0.0) if share == 0 else (0.4 < mean < 0.6)
    with pytest.raises(ValueError, match=r"rollout_opponents < 1 \(no_hearts\) needs rollout=learner"):
        rollout_q.train(RolloutQConfig(rollout="heuristic", rollout_opponents=0.5, contracts=["no_hearts"]))


def test_as_played_rollouts_give_each_seat_to_whoever_plays_it_in_that_deal() -> None:
    """``rollout: as_played``: a labelled state's playouts are the learner's copy in the labelled seat and in every
    seat the learner or a snapshot plays in that deal, the heuristic in the heuristic's seats; the heuristic's own
    states are not labelled. ``p_heuristic_deal``: that share of the deals is one learner and three heuristic seats."""
    cfg = RolloutQConfig(rollout="as_played", p_heuristic_deal=0.5, p_heuristic=0.3, worlds=2, label_prob=1.0)
    lab, net, seen = recording_labeller(cfg)
    tables = opponents = 0
    for _ in range(150):
        roles, before = lab.roles.copy(), lab.env.state.data.copy()
        part = lab.step(net, None)
        heuristic = (roles == HEURISTIC).sum(1)
        tables += int(((heuristic == 3) & ((roles == LEARNER).sum(1) == 1)).sum())
        if part is None:
            continue
        rows, seats = seen[-1]
        n = int(part["mask"].sum())
        for row, by in zip(rows[:n], seats[:n], strict=True):
            g = int(np.flatnonzero((before == row).all(1))[0])
            me = int(row[COLUMNS["to_move"]])
            assert roles[g, me] != HEURISTIC  # only the learner's and snapshots' states are labelled
            want = roles[g] != HEURISTIC
            assert (by == want).all(), (roles[g], by)
            opponents += int(heuristic[g])
    assert opponents > 0 and tables > 64 * 150 * 0.4
    with pytest.raises(ValueError, match="p_heuristic_deal"):
        load_config(RolloutQConfig, None, ["p_heuristic_deal=2"])


def test_pimc_tables_seat_batched_pimc_whose_seats_play_out_as_the_heuristic(monkeypatch) -> None:
    """``p_pimc_deal``: that share of the deals is one learner and three PIMC seats; a PIMC seat's card decisions with
    a choice are ``vector.pimc``'s (``pimc_samples`` worlds), its other decisions the heuristic's; with ``rollout:
    as_played`` its states are not labelled and the heuristic plays its seat in the playouts."""
    cfg = RolloutQConfig(rollout="as_played", p_pimc_deal=0.5, pimc_samples=3, p_heuristic=0.3, worlds=2,
                         label_prob=1.0)  # fmt: skip
    lab, net, seen = recording_labeller(cfg)
    searched: list[tuple[np.ndarray, np.ndarray]] = []
    pimc_actions = rollout_q.pimc_actions

    def recording(ro, rows, mask, heuristic, samples, rng, threads=1):
        assert samples == 3
        out = pimc_actions(ro, rows, mask, heuristic, samples, rng, threads)
        searched.append((rows[:, COLUMNS["to_move"]].copy(), out))
        return out

    monkeypatch.setattr(rollout_q, "pimc_actions", recording)
    taken: list[np.ndarray] = []
    step = lab.env.step

    def recording_step(actions):
        taken.append(np.array(actions))
        return step(actions)

    lab.env.step = recording_step  # type: ignore[method-assign]
    tables = labelled = 0
    for _ in range(60):
        roles, before, n_searched = lab.roles.copy(), lab.env.state.data.copy(), len(searched)
        mask, seat = lab.env.observe_packed()[2:]
        part = lab.step(net, None)
        pimc = roles[np.arange(64), seat] == rollout_q.PIMC
        tables += int(((roles == rollout_q.PIMC).sum(1) == 3).sum())
        choice = pimc & (mask[:, :52].sum(1) > 1) & ~mask[:, 52:].any(1)
        if choice.any():
            seats, out = searched[n_searched]
            assert (seats == seat[choice]).all() and (taken[-1][choice] == out).all()
        else:
            assert len(searched) == n_searched
        if part is None:
            continue
        rows, by = seen[-1]
        for row, who in zip(rows[: int(part["mask"].sum())], by, strict=False):
            g = int(np.flatnonzero((before == row).all(1))[0])
            assert roles[g, int(row[COLUMNS["to_move"]])] == LEARNER  # no other roles than learner and PIMC here
            assert (who == (roles[g] == LEARNER)).all()
            labelled += 1
    assert labelled > 0 and 0.3 < tables / (64 * 60) < 0.7
    with pytest.raises(ValueError, match="pimc_samples"):
        load_config(RolloutQConfig, None, ["pimc_samples=0"])


def test_pimc_evaluation_is_logged_and_selects_when_asked(tmp_path: Path) -> None:
    """``eval_pimc``: each evaluation also plays barbu-eval's boards against PIMC (the logged margin is
    barbu-eval's on the same boards and seed); ``select=pimc`` keeps the network by that margin."""
    over = [f"out_dir={tmp_path / 'run'}", "contracts=[no_queens]", "final_eval_deals=0", "eval_pimc=2",
            "select=pimc"]  # fmt: skip
    with pytest.raises(ValueError, match=r"select=pimc \(no_queens\) needs eval_pimc > 0"):
        rollout_q.train(load_config(RolloutQConfig, ROOT / "configs" / "smoke.yaml", [*over[:3], "select=pimc"]))
    cfg = load_config(RolloutQConfig, ROOT / "configs" / "smoke.yaml", over)
    best = rollout_q.train(cfg)["no_queens"]
    rows = [r.split(",") for r in (tmp_path / "run" / "no_queens" / "metrics.csv").read_text().splitlines()]
    pimc = [float(r[4]) for r in rows if r[3] == "eval/margin_vs_pimc"]
    assert len(pimc) >= 2
    _, ckpt = load_checkpoint(best)
    sel = ckpt["meta"]["selection_eval"]
    assert sel["vs"] == "pimc" and sel["margin"] == max(pimc)
    again = evaluate([str(best), "pimc"], contracts="no_queens", boards=2, seed=cfg.seed + 20_000)
    assert again["contracts"]["no_queens"]["agents"][again["agents"][0]]["mean"] == sel["margin"]


def test_select_last_keeps_the_runs_last_network(tmp_path: Path) -> None:
    cfg = load_config(RolloutQConfig, ROOT / "configs" / "smoke.yaml",
                      [f"out_dir={tmp_path}", "contracts=[trumps]", "final_eval_deals=0", "select=last"])  # fmt: skip
    _, ckpt = load_checkpoint(rollout_q.train(cfg)["trumps"])
    done = torch.load(tmp_path / "trumps" / "state.pt", weights_only=False)["states"]
    assert ckpt["meta"]["states"] == done >= cfg.states and ckpt["meta"]["selection_eval"]["select"] == "last"


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


def test_holdout_gain_is_the_paired_target_difference_of_greedy_and_heuristic_moves() -> None:
    from barbu_env.vector.encode import PACKED_BYTES, unpack_observations

    torch.manual_seed(0)
    net = PolicyNet(hidden=(8,)).eval()
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 256, (6, PACKED_BYTES)).astype(np.uint8)
    numeric = rng.random((6, 16)).astype(np.float32)
    mask = np.zeros((6, 87), np.int8)
    mask[:, [3, 7, 52]] = 1
    q = rng.random((6, 87)).astype(np.float16)
    with torch.no_grad():
        logits = net.policy(net.trunk(torch.from_numpy(unpack_observations(bits, numeric)))).numpy()
    greedy = np.array([3, 7, 52])[logits[:, [3, 7, 52]].argmax(1)]
    part = {"bits": bits, "numeric": numeric, "mask": mask, "q": q, "teacher": greedy}
    got = rollout_q.holdout(net, part)
    assert got["holdout/gain_vs_heuristic"] == 0.0 and got["holdout/agreement"] == 1.0
    other = np.where(greedy == 3, 7, 3)
    got = rollout_q.holdout(net, part | {"teacher": other})
    qf, rows = q.astype(np.float32), np.arange(6)
    assert got["holdout/agreement"] == 0.0
    assert np.isclose(got["holdout/gain_vs_heuristic"], np.mean(qf[rows, greedy] - qf[rows, other]))
    assert np.isclose(got["holdout/regret"], np.mean(qf[:, [3, 7, 52]].max(1) - qf[rows, greedy]))


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


# ----------------------------------------------------------------------------- typed config validation
@pytest.mark.parametrize("name", ["smoke", "default", "full", "ppo", "ppo_vector", "dmc_selfplay"])
def test_every_shipped_config_loads_with_its_script(name: str) -> None:
    scripts = {"ppo": TrainConfig, "ppo_vector": TrainConfig, "dmc_selfplay": SelfPlayConfig}
    cls = scripts.get(name, RolloutQConfig)
    cfg = load_config(cls, ROOT / "configs" / f"{name}.yaml")
    assert all(isinstance(h, int) for h in cfg.hidden) and 0 <= cfg.double_prob <= 1


@pytest.mark.parametrize(
    "override, words",
    [
        ("states=abc", ["config states", "expected an integer", "'abc'"]),
        ("chunk=1.5", ["config chunk", "expected an integer", "1.5"]),
        ("double_prob=2.5", ["config double_prob", "between 0.0 and 1.0", "2.5"]),
        ("label_prob=-0.1", ["config label_prob", "between 0.0 and 1.0"]),
        ("lr=0", ["config lr", ">="]),
        ("lr=nan", ["config lr", "expected a number"]),
        ("augment=maybe", ["config augment", "true or false"]),
        ("hidden=[64,0]", ["config hidden[1]", ">= 1"]),
        ("hidden=64", ["config hidden", "expected a list"]),
        ("seed=-3", ["config seed", ">= 0"]),
        ("rules=no_such_preset", ["config rules", "unknown rules"]),
        ("per_contract={trumps: {states: x}}", ["config per_contract.trumps.states", "expected an integer"]),
        ("states", ["bad override 'states'", "key=value"]),
        (
            "rollout=pimc",
            ["config rollout", "expected one of ['heuristic', 'learner', 'learner_seat', 'as_played']", "'pimc'"],
        ),
    ],
)
def test_bad_config_values_name_the_key_and_what_is_allowed(override: str, words: list[str]) -> None:
    """Issue 15.10: wrong types and out-of-range values are refused at load time, naming the key."""
    with pytest.raises(ValueError) as e:
        load_config(RolloutQConfig, None, [override])
    for w in words:
        assert w in str(e.value)


def test_config_overrides_read_numbers_lists_and_booleans() -> None:
    cfg = load_config(RolloutQConfig, None, ["lr=1e-3", "hidden=[64, 32]", "augment=no", "contracts=[trumps]"])
    assert cfg.lr == 0.001 and cfg.hidden == [64, 32] and cfg.augment is False and cfg.contracts == ["trumps"]


def test_training_cli_config_errors_are_one_line(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("states: [unclosed\n")
    for argv in (["--config", str(bad)], ["--config", "configs/smoke.yaml", "--set", "double_prob=2.5"]):
        with pytest.raises(SystemExit) as e:
            rollout_q.main(argv)
        err = capsys.readouterr().err
        assert e.value.code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


# ----------------------------------------------------------------------------- checkpoint checks
def _saved(tmp_path: Path, **changes) -> Path:
    """A small valid checkpoint re-saved with ``changes`` (None deletes a key)."""
    path = tmp_path / "c.pt"
    save_checkpoint(path, PolicyNet(hidden=(4,)), "no_queens", {})
    ckpt = torch.load(path, weights_only=True)
    for k, v in changes.items():
        if v is None:
            del ckpt[k]
        else:
            ckpt[k] = v
    torch.save(ckpt, path)
    return path


def test_shipped_checkpoints_carry_the_env_version_and_layout_fingerprint() -> None:
    """Every shipped card-play checkpoint is of this env's version and layout, and they stay small: each under 2 MB
    (the largest, No hearts' [384, 192] network, is 1.2 MB), all of ``checkpoints/`` under 8 MB."""
    from barbu_env.nn import ENV_VERSION, OBS_LAYOUT

    for path in sorted((ROOT / "checkpoints").glob("*.pt")):
        _, ckpt = load_checkpoint(path)
        assert ckpt["env_version"] == ENV_VERSION == "barbu_v0" and ckpt["obs_layout"] == OBS_LAYOUT
        assert path.stat().st_size < 2_000_000, path
    assert sum(p.stat().st_size for p in (ROOT / "checkpoints").rglob("*") if p.is_file()) < 8_000_000


def test_the_manifest_describes_the_shipped_files() -> None:
    """``checkpoints/MANIFEST.json`` gives each card-play file's size in bytes and hidden sizes (``[256, 128]`` where
    it names none); a pruned file's entry (``training.prune``) is the file's own record of its pruning, whose check
    changed no more choices than it allowed."""
    import json

    manifest = json.loads((ROOT / "checkpoints" / "MANIFEST.json").read_text())
    assert sorted(manifest["contracts"]) == sorted(p.stem for p in (ROOT / "checkpoints").glob("*.pt"))
    for contract, entry in manifest["contracts"].items():
        path = ROOT / "checkpoints" / entry["file"]
        _, ckpt = load_checkpoint(path)
        assert (entry["bytes"], entry.get("hidden", [256, 128])) == (path.stat().st_size, ckpt["hidden"]), contract
        if "pruned" in entry:
            record = dict(ckpt["meta"]["pruned"])
            assert record.pop("meta") is not None and record["check_changed"] <= record.get("max_changed", 0)
            assert all(entry["pruned"][k] == v for k, v in record.items()), contract


@pytest.mark.parametrize(
    "changes, words",
    [
        (dict(env_version="barbu_v1"), ["trained on env 'barbu_v1'", "retrain"]),
        (dict(env_version=None), ["no 'env_version' entry"]),
        (dict(obs_layout=None), ["no 'obs_layout' entry"]),
        (dict(contract=None), ["no 'contract' entry"]),
        (dict(state_dict=None), ["no 'state_dict' entry"]),
        (dict(obs_size="1228"), ["'obs_size' is '1228'", "expected an integer"]),
        (dict(hidden=[4.5]), ["bad hidden sizes"]),
        (dict(hidden=[10**9]), ["bad hidden sizes"]),
        (dict(card_hidden=-1), ["bad card_hidden -1", "expected an integer 0.."]),
        (dict(card_hidden="64"), ["bad card_hidden '64'"]),
        (dict(contract="no_jokers"), ["unknown contract 'no_jokers'"]),
        (dict(meta=[1]), ["'meta' is not a mapping"]),
    ],
)
def test_checkpoint_headers_are_checked(tmp_path: Path, changes: dict, words: list[str]) -> None:
    """Issue 15.5: another env version, a missing or mistyped key, an unknown contract: a ValueError
    naming the file and the key (no bare KeyError)."""
    path = _saved(tmp_path, **changes)
    with pytest.raises(ValueError) as e:
        load_checkpoint(path)
    assert "c.pt" in str(e.value)
    for w in words:
        assert w in str(e.value)


def test_checkpoint_with_another_observation_layout_of_the_same_size_is_refused(tmp_path: Path) -> None:
    from barbu_env.nn import OBS_LAYOUT, layout_fingerprint
    from barbu_env.observation import BLOCKS

    swapped = dict(reversed(list(BLOCKS.items())))  # same blocks, same total size, another order
    assert layout_fingerprint(swapped) != OBS_LAYOUT
    with pytest.raises(ValueError, match=f"layout {layout_fingerprint(swapped)}"):
        load_checkpoint(_saved(tmp_path, obs_layout=layout_fingerprint(swapped)))


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_checkpoint_with_non_finite_weights_is_refused(tmp_path: Path, bad: float) -> None:
    path = tmp_path / "c.pt"
    save_checkpoint(path, PolicyNet(hidden=(4,)), "no_queens", {})
    ckpt = torch.load(path, weights_only=True)
    ckpt["state_dict"]["policy.bias"][3] = bad
    torch.save(ckpt, path)
    with pytest.raises(ValueError, match=r"c\.pt.*'policy\.bias' holds NaN or infinite"):
        load_checkpoint(path)


def test_checkpoint_errors_are_one_line_in_barbu_eval(tmp_path: Path, capsys) -> None:
    from barbu_env.evaluation import main

    path = _saved(tmp_path, contract=None)
    assert main(["--agents", str(path), "heuristic", "--contract", "no_queens", "--deals", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "no 'contract' entry" in err


@pytest.mark.parametrize("value, greedy", [("true", True), ("no", False), ("0", False), ("YES", True), ("1", True)])
def test_neural_boolean_options(value: str, greedy: bool) -> None:
    assert agents.make(f"checkpoints/no_queens.pt:greedy={value}").greedy is greedy


@pytest.mark.parametrize("value", ["maybe", "2", "0.5", ""])
def test_neural_boolean_options_refuse_other_values(value: str) -> None:
    with pytest.raises(ValueError, match=r"option 'greedy'.*true/false"):
        agents.make(f"checkpoints/no_queens.pt:greedy={value}")


@pytest.mark.parametrize("value", [";", "", "nobody", "3"])
def test_neural_fallback_option_is_named_when_bad(value: str) -> None:
    with pytest.raises(ValueError, match="option 'fallback'"):
        agents.make(f"checkpoints/no_queens.pt:fallback={value}")


def test_training_duplicate_eval_is_barbu_eval_on_the_same_boards() -> None:
    """One duplicate core: training's batched model-selection evaluation and barbu-eval give the same
    per-board margins and the same t interval for a checkpoint against the heuristic."""
    from training.common import duplicate_eval

    net, _ = load_checkpoint(ROOT / "checkpoints" / "no_hearts.pt")
    mean, half, n = duplicate_eval(net, "no_hearts", Rules(), 6, 77)
    s = evaluate([str(ROOT / "checkpoints" / "no_hearts.pt"), "heuristic"], contracts="no_hearts", boards=6, seed=77)
    ci = s["contracts"]["no_hearts"]["agents"][s["agents"][0]]
    assert (mean, half, n) == pytest.approx((ci["mean"], ci["half_width"], 6))


def test_init_weights_and_resume_state_refuse_another_contract_or_sizes(tmp_path: Path) -> None:
    """The helpers every trainer starts and resumes with: a checkpoint or a resume state of another contract or
    other sizes is refused, naming the file; a matching one restores the weights and the generators."""
    from training.common import init_weights, load_resume, save_resume

    net = PolicyNet(hidden=(16,))
    save_checkpoint(tmp_path / "no_king.pt", net, "no_king", {})
    other = PolicyNet(hidden=(16,))
    init_weights(other, str(tmp_path), "no_king")  # a folder: its <contract>.pt
    assert all(torch.equal(a, b.half().float()) for a, b in zip(other.parameters(), net.parameters()))
    with pytest.raises(ValueError, match=r"init checkpoint .*no_king\.pt' plays 'no_king'.*trains 'trumps'"):
        init_weights(PolicyNet(hidden=(16,)), str(tmp_path / "no_king.pt"), "trumps")
    with pytest.raises(ValueError, match=r"'hidden': \[16\], 'card_hidden': 0}; this run trains 'no_king' with sizes "
                       r"{'hidden': \[8\]"):  # fmt: skip
        init_weights(PolicyNet(hidden=(8,)), str(tmp_path / "no_king.pt"), "no_king")
    grown = PolicyNet(hidden=(16,), card_hidden=4)  # a plain checkpoint starts a card-head network of its sizes
    init_weights(grown, str(tmp_path), "no_king")
    obs, mask = torch.rand(3, net.obs_size), torch.ones(3, net.num_actions)
    assert torch.equal(grown(obs, mask)[0], other(obs, mask)[0])
    save_checkpoint(tmp_path / "trumps.pt", grown, "trumps", {})
    with pytest.raises(ValueError, match=r"with sizes {'hidden': \[16\], 'card_hidden': 4}; .* 'card_hidden': 0}"):
        init_weights(PolicyNet(hidden=(16,)), str(tmp_path), "trumps")  # not the other way
    opt, rng = torch.optim.Adam(net.parameters()), np.random.default_rng(3)
    save_resume(tmp_path, "no_king", net, opt, rng, {"states": 7})
    draw = rng.random()
    again = np.random.default_rng(99)
    s = load_resume(tmp_path / "state.pt", "no_king", other, torch.optim.Adam(other.parameters()), again)
    assert s["states"] == 7 and again.random() == draw
    with pytest.raises(ValueError, match=r"state\.pt' belongs to another run"):
        load_resume(tmp_path / "state.pt", "trumps", other, opt, again)


@pytest.mark.parametrize(("small", "large"), [(((16,), 0), ((32,), 4)), (((8, 4), 2), ((12, 6), 5)),
                                              (((8, 4), 0), ((8, 4), 3))])  # fmt: skip
def test_init_weights_widens_a_network_that_then_plays_as_the_checkpoint(tmp_path: Path, small, large) -> None:
    """A wider network (hidden layers, card head) started from a checkpoint gives the checkpoint's logits and value;
    its new units' incoming weights are not zero (they can learn) and their outgoing weights are."""
    from training.common import init_weights

    torch.manual_seed(0)
    net = PolicyNet(hidden=small[0], card_hidden=small[1])
    save_checkpoint(tmp_path / "no_king.pt", net, "no_king", {})
    net, _ = load_checkpoint(tmp_path / "no_king.pt")  # the float16 round trip the weights make
    wide = PolicyNet(hidden=large[0], card_hidden=large[1])
    init_weights(wide, str(tmp_path), "no_king")
    obs = (torch.rand(64, net.obs_size) < 0.1).float()
    mask = (torch.rand(64, net.num_actions) < 0.3).float()
    mask[:, 0] = 1
    (a, va), (b, vb) = net(obs, mask), wide(obs, mask)
    assert torch.allclose(a, b, atol=1e-5) and torch.allclose(va, vb, atol=1e-5)
    first, h = wide.trunk[0].weight, small[0][0]
    assert torch.equal(first[:h], net.trunk[0].weight) and (large[0][0] == h or first[h:].abs().sum() > 0)
    assert wide.policy.weight[:, small[0][-1] :].abs().sum() == 0
    if large[1] > small[1]:
        assert wide.card_head["out"].weight[:, small[1] :].abs().sum() == 0


def test_ema_weights_are_evaluated_saved_and_resumed(tmp_path: Path) -> None:
    """``ema``: the moving average of the weights (decay per update) is the network saved as ``best.pt`` and
    resumed from ``state.pt``; the trained weights go on separately."""
    from barbu_env.nn import load_checkpoint

    over = [f"out_dir={tmp_path}", "contracts=[no_queens]", "final_eval_deals=0", "select=last", "ema=0.5"]
    cfg = load_config(RolloutQConfig, ROOT / "configs" / "smoke.yaml", over)
    best = rollout_q.train(cfg)["no_queens"]
    state = torch.load(tmp_path / "no_queens" / "state.pt", weights_only=False)
    ema = {k.removeprefix("module."): v for k, v in state["ema"].items() if k.startswith("module.")}
    net, _ = load_checkpoint(best)
    saved = net.state_dict()
    assert saved.keys() == state["net"].keys() == ema.keys()
    for k in saved:
        torch.testing.assert_close(saved[k].float(), ema[k].half().float())
    assert any(not torch.allclose(ema[k], state["net"][k]) for k in ema)
    assert state["ema"]["n_averaged"] == state["updates"]
    longer = load_config(RolloutQConfig, ROOT / "configs" / "smoke.yaml", [*over, "states=4500"])
    rollout_q.train(longer, resume=True)
    again = torch.load(tmp_path / "no_queens" / "state.pt", weights_only=False)
    assert again["ema"]["n_averaged"] == again["updates"] > state["updates"]


def test_average_writes_the_mean_of_the_networks_and_refuses_other_sizes(tmp_path: Path) -> None:
    """``training.average``: every weight is the inputs' mean (or their weighted mean with ``--weights``); the
    inputs are recorded; other sizes and bad weights are refused."""
    from training import average

    paths = []
    for i in range(3):
        torch.manual_seed(i)
        save_checkpoint(tmp_path / f"{i}.pt", PolicyNet(hidden=(16,), card_hidden=4), "no_hearts", {}, {"states": i})
        paths.append(str(tmp_path / f"{i}.pt"))
    average.main([str(tmp_path / "avg.pt"), *paths])
    net, ckpt = load_checkpoint(tmp_path / "avg.pt")
    parts = [load_checkpoint(p)[0].state_dict() for p in paths]
    for k, v in net.state_dict().items():
        want = sum(p[k] for p in parts) / 3
        assert torch.allclose(v, want.half().float(), atol=1e-3), k
    assert [s["meta"]["states"] for s in ckpt["meta"]["averaged"]] == [0, 1, 2]
    save_checkpoint(tmp_path / "other.pt", PolicyNet(hidden=(8,)), "no_hearts", {})
    with pytest.raises(ValueError, match=r"other.pt' is \(contract, hidden, card_hidden\) \('no_hearts', \[8\], 0\)"):
        average.average([paths[0], str(tmp_path / "other.pt")])
    with pytest.raises(ValueError, match="at least two checkpoints, got 1"):
        average.average(paths[:1])
    average.main([str(tmp_path / "w.pt"), *paths[:2], "--weights", "1", "3"])
    net, ckpt = load_checkpoint(tmp_path / "w.pt")
    for k, v in net.state_dict().items():
        assert torch.allclose(v, (0.25 * parts[0][k] + 0.75 * parts[1][k]).half().float(), atol=1e-3), k
    assert [s["weight"] for s in ckpt["meta"]["averaged"]] == [0.25, 0.75]
    for bad in ([1.0], [1.0, 0.0], [1.0, float("nan")]):
        with pytest.raises(ValueError, match=r"for 2 checkpoints: give one positive finite number per checkpoint"):
            average.average(paths[:2], bad)
