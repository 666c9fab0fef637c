"""The framework adapters (issue 7): Stable-Baselines3 / sb3-contrib, TorchRL and RLlib.

Rewards are checked against the engine's own scores (R8.1 deal score = contract + settlement, R8.3
match totals), never against the adapter's arithmetic. Each framework test skips when the framework
is not installed (extras ``sb3``, ``torchrl``, ``rllib``); the single-agent wrapper and the RLlib
env's reward logic are also checked without a training run.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import barbu_env
from barbu_env.cards import cards_of
from barbu_env.observation import block
from barbu_env.wrappers import BarbuSingleAgentEnv


@pytest.fixture
def one_torch_thread():
    """Torch on one thread (the CI machine has 2 shared cores); restored afterwards."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(before)


def _random_masked(rng, mask) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def test_wrappers_import_no_framework():
    """``import barbu_env`` and the single-agent wrapper import neither torch nor any RL framework."""
    import subprocess
    import sys

    code = (
        "import sys, barbu_env, barbu_env.wrappers; from barbu_env.wrappers import BarbuSingleAgentEnv; "
        "print([m for m in ('torch', 'ray', 'torchrl', 'tensordict', 'stable_baselines3', 'sb3_contrib') "
        "if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ================================================================== single-agent wrapper (SB3)
def test_gymnasium_check_env_passes():
    from gymnasium.utils.env_checker import check_env

    for dict_obs in (False, True):
        env = BarbuSingleAgentEnv(opponents="random", contracts=["no_queens", "trumps", "fantan"], doubling="off",
                                  dict_obs=dict_obs, seed=0)  # fmt: skip
        check_env(env, skip_render_check=True)
    env = BarbuSingleAgentEnv(opponents="heuristic", rules="king5", seed=0)
    check_env(env, skip_render_check=True)
    assert env.observation_space.shape == (1427,) and len(env.opponents) == 4  # R11.4: 5 seats
    for rules, size, actions in (("classic3", 977, 83), ("classic5", 1489, 95), ("positive1", 1238, 88)):
        env = BarbuSingleAgentEnv(opponents="heuristic", rules=rules, seed=0)  # R12, R10.3
        check_env(env, skip_render_check=True)
        assert env.observation_space.shape == (size,) and env.action_space.n == actions == len(env.action_masks())


@pytest.mark.parametrize(
    ("kwargs", "episodes"),
    [
        # doubling on: the R6 settlement is part of the deal score (R8.1); the deal is declared in-episode (R3)
        ({"mode": "deal", "opponents": "heuristic"}, 12),
        (
            {
                "mode": "deal",
                "opponents": ["random", "heuristic", "random"],
                "seat": 2,
                "contracts": ["no_hearts", "no_last_two", "trumps", "fantan"],
            },
            12,
        ),
        ({"mode": "match", "opponents": "heuristic", "seat": "random"}, 1),
        # Barbu King (R11.4): 3 and 5 seats, its own observation layout, rewards = minus the points (R11)
        ({"mode": "deal", "rules": "king3", "opponents": "heuristic"}, 8),
        ({"mode": "deal", "rules": "king5", "opponents": ["random"] * 4, "contracts": ["no_hearts", "fantan"]}, 8),
        ({"mode": "match", "rules": "king3", "short": True, "opponents": "heuristic", "seat": 1}, 1),
        # classic Barbu for 3 and 5 players (R12) and positive scoring (R10.3): their own layouts and action counts
        ({"mode": "deal", "rules": "classic3", "opponents": "heuristic"}, 8),
        ({"mode": "deal", "rules": "classic5", "opponents": ["random"] * 4, "contracts": ["no_king", "fantan"]}, 8),
        ({"mode": "deal", "rules": "positive1", "opponents": "random", "contracts": ["anti_salad", "no_tricks"]}, 8),
    ],
)
def test_single_agent_rewards_are_the_learners_own_points(kwargs, episodes):
    """PettingZoo issue 1147: the reward of step() is the learner's own points since its last decision,
    so an episode's rewards sum to its deal score (R8.1) or match total (R8.3) — also when the deal ends
    on an opponent's card, which happens in some of these episodes (checked, so the test can fail)."""
    env = BarbuSingleAgentEnv(seed=1, **kwargs)
    rng = np.random.default_rng(1)
    ended_on_opponent = 0
    for _ in range(episodes):
        env.reset()
        total, done = 0.0, False
        while not done:
            assert env.raw.agent_selection == env.agent
            _, reward, done, truncated, info = env.step(_random_masked(rng, env.action_masks()))
            assert not truncated
            total += reward
        raw, seat = env.raw, env.seat
        expected = raw.match.totals[seat] if raw.match is not None else raw.deal.scores[seat]
        assert total == pytest.approx(raw.rules.score_sign * expected)
        assert info["points"] == expected
        assert env.observation_space.contains(env._obs())
        if raw.match is None:
            ended_on_opponent += raw.deal.history[-1][0] != seat
    if kwargs["mode"] == "deal":
        assert ended_on_opponent > 0


def test_single_agent_normalized_rewards_and_seat_rotation():
    env = BarbuSingleAgentEnv(opponents="random", contracts=["no_queens", "no_king"], normalize=True, doubling="off",
                              seed=3)  # fmt: skip
    rng = np.random.default_rng(3)
    seats, declarers = set(), set()
    for _ in range(12):
        env.reset()
        seats.add(env.seat)
        total, done = 0.0, False
        while not done:
            _, r, done, _, _ = env.step(_random_masked(rng, env.action_masks()))
            total += r
        deal = env.raw.deal
        assert total == pytest.approx(deal.scores[env.seat] / abs(deal.contract.total(deal.rules)))
        declarers.add(deal.declarer)
    assert len(seats) > 1  # seat="random" (default) moves the learner
    assert len(declarers) > 1  # contracts=[...] deals with a random declarer unless declarer= is given


def test_single_agent_mask_and_errors():
    env = BarbuSingleAgentEnv(opponents="random", contract="no_queens", declarer=0, doubling="off", seat=1, seed=0)
    env.reset()
    legal = env.raw.deal.legal_actions()
    assert np.flatnonzero(env.action_masks()).tolist() == legal  # built from Deal.legal_actions only
    with pytest.raises(ValueError, match="seat"):
        BarbuSingleAgentEnv(seat=4)
    with pytest.raises(ValueError, match="opponents"):
        BarbuSingleAgentEnv(opponents=["random", "random"])
    with pytest.raises(ValueError, match="mode='deal'"):
        BarbuSingleAgentEnv(mode="match", contracts=["no_queens"])
    with pytest.raises(ValueError, match="unknown contract"):
        BarbuSingleAgentEnv(contracts=["no_jacks"])


def test_single_agent_illegal_action_terminates_with_penalty():
    """Default illegal_action='terminate' for the single-agent view: unmasked algorithms can train."""
    env = BarbuSingleAgentEnv(opponents="random", contract="no_queens", doubling="off", seat=0, declarer=0, seed=0)
    env.reset()
    illegal = int(np.flatnonzero(env.action_masks() == 0)[0])
    _, reward, done, _, info = env.step(illegal)
    assert done and reward == -100.0 and info["points"] == -100.0


@pytest.mark.slow
def test_maskable_ppo_trains(one_torch_thread):
    sb3_contrib = pytest.importorskip("sb3_contrib")
    # illegal_action="raise": an unmasked (illegal) choice would fail the test instead of ending the episode
    env = BarbuSingleAgentEnv(opponents="random", contracts=["no_queens", "trumps"], doubling="off", normalize=True,
                              illegal_action="raise", seed=0)  # fmt: skip
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=512, batch_size=128, n_epochs=2, seed=0, device="cpu",
                                    policy_kwargs={"net_arch": [64, 64]})  # fmt: skip
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048
    assert any(not torch_equal(a, b) for a, b in zip(before, model.policy.parameters()))
    obs, _ = env.reset(seed=5)
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(action)]


def torch_equal(a, b) -> bool:
    return bool((a == b).all())


# ================================================================== TorchRL
def _torchrl_env(**kwargs):
    pytest.importorskip("torchrl")
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper

    return PettingZooWrapper(env=barbu_env.env(**kwargs), use_mask=True, seed=0)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"mode": "deal", "contract": "no_queens", "doubling": "off"},
        {"mode": "deal", "declarer": "random"},  # declaration (R3) and doubling (R6) phases included
    ],
)
def test_torchrl_masked_random_rollouts_match_env_rewards(one_torch_thread, kwargs):
    """Full deals through TorchRL with masked random actions (TorchRL's rand_action honours the mask):
    per-agent reward sums equal the engine's deal scores; only the agent on move is unmasked; each
    agent's observation shows its own hand only (TorchRL observes all four agents every step)."""
    torch = one_torch_thread
    torch.manual_seed(0)
    env = _torchrl_env(**kwargs)
    agents = [f"player_{i}" for i in range(4)]
    for _ in range(3):
        td0 = env.reset()
        raw = env._env.unwrapped
        hands = [set(cards_of(h)) for h in raw.deal.hands]
        td = env.rollout(400, auto_reset=False, tensordict=td0, break_when_any_done=True)
        assert bool(td["next", "done"][-1])
        deal = raw.deal
        assert deal.is_over
        for i, a in enumerate(agents):
            assert td["next", a, "reward"].sum().item() == pytest.approx(deal.scores[i])
        acting = torch.stack([td[a, "mask"].reshape(-1) for a in agents], dim=1)
        assert (acting.sum(dim=1) == 1).all()  # one agent on move per step
        played = [set() for _ in range(4)]
        for t in range(td.shape[0]):
            seat = int(acting[t].nonzero())
            a = agents[seat]
            action = int(td[a, "action"][t])
            assert bool(td[a, "action_mask"][t].reshape(-1)[action])  # a legal action by the env's mask
            for i, b in enumerate(agents):
                obs = td[b, "observation", "observation"][t].reshape(-1).numpy()
                assert set(np.flatnonzero(block(obs, "hand"))) == hands[i] - played[i]
            if action < 52:
                played[seat].add(action)


def test_torchrl_match_rewards(one_torch_thread):
    """One short match (basic32 preset: 32-card deck) through TorchRL: reward sums are the match totals (R8.3)."""
    one_torch_thread.manual_seed(1)
    env = _torchrl_env(mode="match", rules="basic32")
    td = env.rollout(5000, break_when_any_done=True)
    raw = env._env.unwrapped
    assert raw.match.is_over
    for i in range(4):
        assert td["next", f"player_{i}", "reward"].sum().item() == pytest.approx(raw.match.totals[i])


@pytest.mark.parametrize(("rules", "actions"), [("classic3", 83), ("positive1", 88)])
def test_torchrl_variants_rewards_and_masks(one_torch_thread, rules, actions):
    """Classic Barbu for 3 players (R12) and positive scoring (R10.3) through TorchRL: the env's agents and action
    count reach its specs, and reward sums are the deal scores."""
    one_torch_thread.manual_seed(2)
    env = _torchrl_env(mode="deal", rules=rules, declarer="random")
    raw = env._env.unwrapped
    agents = raw.possible_agents
    for _ in range(2):
        td = env.rollout(400, break_when_any_done=True)
        assert td[agents[0], "action_mask"].shape[-1] == actions
        for i, a in enumerate(agents):
            assert td["next", a, "reward"].sum().item() == pytest.approx(raw.deal.scores[i])


# ================================================================== RLlib
def _rllib_episode(env, rng):
    from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

    from barbu_env.wrappers.rllib import policy_for_agent

    obs, infos = env.reset()
    episode = MultiAgentEpisode(observation_space=env.observation_spaces, action_space=env.action_spaces,
                                agent_to_module_mapping_fn=policy_for_agent)  # fmt: skip
    episode.add_env_reset(observations=obs, infos=infos)
    sums: dict[str, float] = {}
    while True:
        assert len(obs) == 1  # turn-based: only the agent on move observes
        ((aid, o),) = obs.items()
        assert set(o) == {"observations", "action_mask"}
        a = _random_masked(rng, o["action_mask"])
        obs, rew, term, trunc, infos = env.step({aid: a})
        episode.add_env_step(observations=obs, actions={aid: a}, rewards=rew, infos=infos, terminateds=term,
                             truncateds=trunc)  # fmt: skip
        for k, v in rew.items():
            sums[k] = sums.get(k, 0.0) + v
        if term["__all__"]:
            assert len(obs) == env.raw.num_players and all(term[k] for k in obs)
            return sums, {k: e.get_return() for k, e in episode.agent_episodes.items()}, episode


@pytest.mark.parametrize(
    "config",
    [
        {"mode": "deal", "contracts": ["no_queens", "trumps", "fantan"], "agent_ids": "contract", "seed": 0},
        {"mode": "deal", "declarer": "random", "seed": 1},  # declared in-episode, doubling on
        {"mode": "match", "rules": "basic32", "seed": 2},
        {"mode": "deal", "rules": "king5", "contracts": ["no_tricks", "fantan"], "agent_ids": "contract", "seed": 3},
        {"mode": "match", "rules": "king3", "short": True, "seed": 4},  # R11.3, R11.4
        {"mode": "deal", "rules": "classic5", "declarer": "random", "seed": 5},  # R12: doubling by 5 seats
        {
            "mode": "deal",
            "rules": "positive2",
            "contracts": ["anti_salad", "salad"],
            "agent_ids": "contract",
            "seed": 6,
        },  # R10.3
    ],
)
def test_rllib_env_rewards_reach_every_seat(config):
    """Every seat's rewards, summed by RLlib's own MultiAgentEpisode, equal the engine's scores."""
    pytest.importorskip("ray.rllib")
    from barbu_env.wrappers.rllib import BarbuMultiAgentEnv, policy_for_agent

    env = BarbuMultiAgentEnv(config)
    rng = np.random.default_rng(0)
    for _ in range(3 if config["mode"] == "deal" else 1):
        sums, returns, episode = _rllib_episode(env, rng)
        raw = env.raw
        sign = raw.rules.score_sign  # R11: King's rewards are minus the points
        scores = [sign * p for p in (raw.match.totals if raw.match is not None else raw.deal.scores)]
        ids = env.agents
        assert len(ids) == raw.num_players
        assert [sums[a] for a in ids] == pytest.approx(scores)
        assert [returns[a] for a in ids] == pytest.approx(scores)
        if config.get("agent_ids") == "contract":
            family = raw.deal.contract_text.split(":")[0]
            assert {episode.module_for(a) for a in ids} == {family} == {policy_for_agent(a) for a in ids}


def test_rllib_env_errors():
    pytest.importorskip("ray.rllib")
    from barbu_env.wrappers.rllib import BarbuMultiAgentEnv

    with pytest.raises(ValueError, match="agent_ids"):
        BarbuMultiAgentEnv({"agent_ids": "team"})
    with pytest.raises(ValueError, match="contracts"):
        BarbuMultiAgentEnv({"mode": "deal", "agent_ids": "contract"})
    with pytest.raises(ValueError, match="mode='deal'"):
        BarbuMultiAgentEnv({"mode": "match", "normalize": True})
    env = BarbuMultiAgentEnv({"mode": "deal", "contract": "no_queens"})
    obs, _ = env.reset(seed=0)
    ((aid, o),) = obs.items()
    with pytest.raises(ValueError, match="on move"):
        env.step({"player_3" if aid != "player_3" else "player_2": 0})
    # illegal_action="terminate" (the adapter's default): the offender alone loses the penalty
    obs, rew, term, _, infos = env.step({aid: int(np.flatnonzero(o["action_mask"] == 0)[0])})
    assert term["__all__"] and rew[aid] == -100.0 and sum(rew.values()) == -100.0
    assert infos[aid]["points"] == -100.0


@pytest.mark.slow
def test_rllib_one_training_iteration_and_export(tmp_path, one_torch_thread):
    """training/rllib_train.py, tiny config, local Ray: one PPO iteration; every seat of both contracts
    received rewards (each contract's four seats sum to ±1 = contract total / |total|); the exported
    PolicyNet reproduces the RLlib module's masked logits and value."""
    pytest.importorskip("ray.rllib")
    torch = one_torch_thread
    from barbu_env.nn import load_checkpoint
    from barbu_env.wrappers.rllib import BarbuMultiAgentEnv, _modules_of
    from training.rllib_train import build_parser, train

    args = build_parser().parse_args(
        ["--contracts", "no_queens", "trumps", "--iterations", "1", "--train-batch", "256", "--minibatch", "64",
         "--epochs", "1", "--hidden", "32", "16", "--num-cpus", "1", "--out", str(tmp_path), "--eval-boards", "1"]
    )  # fmt: skip
    out = train(args)
    last = out["last"]
    assert last["env_steps"] >= 256 and last["episodes"] >= 1
    seats = {f"{c}:player_{i}" for c in ("no_queens", "trumps") for i in range(4)}
    assert set(last["agent_return_mean"]) == seats
    assert last["module_return_mean"] == pytest.approx({"no_queens": -1.0, "trumps": 1.0})
    # the exported folder plays through barbu-eval (the neural agent loads one network per contract)
    assert set(out["evaluation"]["contracts"]) == {"no_queens", "trumps"}

    modules = _modules_of(out["checkpoint"])
    env = BarbuMultiAgentEnv({"mode": "deal", "contracts": ["no_queens"], "doubling": "off", "seed": 4})
    obs, _ = env.reset()
    ((_, o),) = obs.items()
    for mid, path in out["policies"].items():
        net, ckpt = load_checkpoint(path)
        assert ckpt["contract"] == mid and ckpt["hidden"] == [32, 16]
        batch = {"obs": {k: torch.as_tensor(v)[None] for k, v in o.items()}}
        with torch.no_grad():
            rl_logits = modules[mid].forward_inference(batch)["action_dist_inputs"][0]
            logits, value = net(torch.as_tensor(o["observations"])[None], torch.as_tensor(o["action_mask"])[None])
            rl_value = modules[mid].compute_values({"obs": {k: torch.as_tensor(v)[None] for k, v in o.items()}})
        legal = o["action_mask"] > 0
        # checkpoints store float16 weights: agreement to half precision
        assert torch.allclose(logits[0][legal], rl_logits[legal], atol=2e-2)
        assert math.isclose(float(value[0]), float(rl_value.reshape(-1)[0]), abs_tol=2e-2)
        assert int(logits[0].argmax()) in np.flatnonzero(legal)


def test_adapters_refuse_untested_variants_saying_what_they_accept() -> None:
    """A game or player count the adapters are not tested with (e.g. a 6-player King) is refused with the list
    of accepted ones; every variant the rules accept today passes."""
    from types import SimpleNamespace

    from barbu_env.wrappers.common import SUPPORTED, check_supported

    presets = ("classic", "basic32", "ravage_city", "king", "king3", "king5", "king_short", "king_choose", "classic3",
               "classic5", "positive1", "positive2", "positive3")  # fmt: skip
    for preset in presets:
        check_supported(barbu_env.load_rules(preset), "BarbuMultiAgentEnv")
    with pytest.raises(ValueError, match=r"6 players: it accepts game='barbu' with players in \(3, 4, 5\); game="):
        check_supported(SimpleNamespace(game="king", players=6), "BarbuSingleAgentEnv")
    assert SUPPORTED == {"barbu": (3, 4, 5), "king": (3, 4, 5)}
