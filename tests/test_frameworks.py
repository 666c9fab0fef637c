"""The framework adapters (issue 7): Stable-Baselines3 / sb3-contrib, TorchRL and RLlib.

Rewards are checked against the engine's own scores (R8.1 deal score = contract + settlement, R8.3
match totals), never against the adapter's arithmetic. Each framework test skips when the framework
is not installed (extras ``sb3``, ``torchrl``, ``rllib``); the single-agent wrapper and the RLlib
env's reward logic are also checked without a training run.
"""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

import barbu_env
from barbu_env.cards import cards_of
from barbu_env.observation import block
from barbu_env.wrappers import BarbuSingleAgentEnv
from barbu_env.wrappers.common import supported_variants


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
        # classic Barbu for 5 players (R12) and positive scoring (R10.3): their own layouts and action counts
        ({"mode": "deal", "rules": "classic5", "opponents": ["random"] * 4, "contracts": ["no_king", "fantan"]}, 8),
        ({"mode": "deal", "rules": "positive1", "opponents": "random", "contracts": ["anti_salad", "no_tricks"]}, 8),
        # match mode, normalize: every deal's points over the rules' largest |contract total| (30 in basic32)
        ({"mode": "match", "rules": "basic32", "normalize": True, "opponents": "heuristic", "seat": 3}, 1),
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
        scale = 30 if kwargs.get("normalize") else 1
        assert total == pytest.approx(raw.rules.score_sign * expected / scale)
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


def test_gymnasium_id_builds_the_single_agent_env(one_torch_thread):
    """``gymnasium.make(barbu_env.GYM_ID, ...)`` is ``BarbuSingleAgentEnv`` behind Gymnasium's own checks: an
    episode's rewards sum to the learner's deal score (R8.1); SB3's ``make_vec_env`` builds it from the id and
    MaskablePPO reads its masks through the wrappers."""
    import gymnasium

    env = gymnasium.make(barbu_env.GYM_ID, opponents="heuristic", contracts=["no_queens"], doubling="off")
    assert isinstance(env.unwrapped, BarbuSingleAgentEnv)
    rng = np.random.default_rng(0)
    _, _ = env.reset(seed=3)
    total, done = 0.0, False
    while not done:
        _, r, done, _, _ = env.step(_random_masked(rng, env.unwrapped.action_masks()))
        total += r
    raw = env.unwrapped.raw
    assert total == raw.deal.scores[env.unwrapped.seat]
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(barbu_env.GYM_ID, n_envs=2, seed=0, env_kwargs={"opponents": "random", "doubling": "off",
                                                                         "contracts": ["trumps"]})  # fmt: skip
    model = sb3_contrib.MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=32, seed=0, device="cpu").learn(64)
    assert model.num_timesteps >= 64


def _tiny(algo, env, policy="MlpPolicy", **kwargs):
    """A model of ``algo`` trained for 64 steps (enough to have weights of its own, not to play well)."""
    return algo(policy, env, seed=0, device="cpu", policy_kwargs={"net_arch": [32]}, **kwargs).learn(64)


def test_sb3_model_agent_plays_the_models_own_choices(tmp_path, one_torch_thread):
    """``sb3:source=model.zip`` (``wrappers.sb3.ModelAgent``) takes, at every decision of a match (declarations,
    doubles, cards), the action ``MaskablePPO.predict`` gives with the mask and ``deterministic=True``; with the Dict
    observation of ``dict_obs=True`` too; and it plays in the duplicate evaluation."""
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from barbu_env.agents import make
    from barbu_env.evaluation import evaluate

    for dict_obs, policy in ((False, "MlpPolicy"), (True, "MultiInputPolicy")):
        env = BarbuSingleAgentEnv(opponents="random", contracts=["no_queens"], doubling="off", dict_obs=dict_obs,
                                  seed=0)  # fmt: skip
        model = _tiny(sb3_contrib.MaskablePPO, env, policy, n_steps=64, batch_size=32)
        model.save(tmp_path / f"model{int(dict_obs)}")
        agent = make(f"sb3:source={tmp_path}/model{int(dict_obs)}.zip", seed=0)
        game = barbu_env.env(mode="match")
        game.reset(seed=1)
        decisions = 0
        for name in game.agent_iter(200):
            obs, _, term, trunc, _ = game.last()
            if term or trunc:
                game.step(None)
                continue
            action = agent.act(game, name)
            expected, _ = model.predict(obs if dict_obs else obs["observation"], action_masks=obs["action_mask"],
                                        deterministic=True)  # fmt: skip
            assert action == int(expected)
            decisions += 1
            game.step(action)
        assert decisions > 150
    spec = f"sb3:source={tmp_path}/model0.zip"
    result = evaluate([spec, "random"], contracts="no_queens", boards=2)
    assert result["agents"] == [spec, "random"] and result["finished"] == 2


def test_sb3_model_agent_other_algorithms_and_refusals(tmp_path, one_torch_thread):
    """Unmasked learners (PPO, DQN) play legal actions only; a Q-learner is greedy only; every refusal names what
    is wrong."""
    sb3 = pytest.importorskip("stable_baselines3")
    from barbu_env.agents import make

    env = BarbuSingleAgentEnv(opponents="random", contracts=["no_queens"], doubling="off", seed=0)
    _tiny(sb3.PPO, env, n_steps=64, batch_size=32).save(tmp_path / "ppo")
    _tiny(sb3.DQN, env, learning_starts=16).save(tmp_path / "dqn")
    for spec in (f"sb3:source={tmp_path}/ppo.zip,algo=PPO,greedy=false", f"sb3:source={tmp_path}/dqn.zip,algo=DQN"):
        agent = make(spec, seed=3)
        game = barbu_env.env(mode="deal", declarer="random", illegal_action="raise")  # declaring and doubling too
        game.reset(seed=2)
        for name in game.agent_iter():
            _, _, term, trunc, _ = game.last()
            game.step(None if term or trunc else agent.act(game, name))  # an illegal action would raise
        assert not game.agents  # the deal was played to its end
    refusals = {
        f"sb3:source={tmp_path}/none.zip": "model file .*none.zip' not found",
        f"sb3:source={tmp_path}/dqn.zip": "dqn.zip' is not a MaskablePPO model",
        f"sb3:source={tmp_path}/ppo.zip,algo=SAC": r"bad value 'SAC' for option 'algo': expected one of \['Mask",
        f"sb3:source={tmp_path}/dqn.zip,algo=DQN,greedy=false": r"a Q-learner plays its largest Q-value \(greedy=",
        "sb3": r"needs option\(s\) \['source'\]",
    }
    for spec, message in refusals.items():
        with pytest.raises(ValueError, match=message):
            make(spec)
    agent = make(f"sb3:source={tmp_path}/ppo.zip,algo=PPO")
    king = barbu_env.env(mode="deal", rules="king3")
    king.reset(seed=0)
    with pytest.raises(ValueError, match=r"reads observations of \d+ values, this env gives \d+"):
        agent.act(king, king.agent_selection)


def test_sb3_model_agent_batched_evaluation_same_boards_as_the_env(tmp_path, one_torch_thread, monkeypatch):
    """A greedy SB3 model has a batched form (``ModelAgent.card_actions``, every decision its own: one pass over the
    rows, near ties scored again alone): the batched engine gives exactly the env path's per-board numbers for
    MaskablePPO on the vector and the Dict observation and for DQN, with doubling off and on (R6: the model doubles),
    also with every row scored again alone. Sampling, it plays through the env."""
    sb3 = pytest.importorskip("stable_baselines3")
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from barbu_env import evaluation as ev
    from barbu_env.evaluation.batched import batched_unavailable
    from barbu_env.wrappers import sb3 as sb3_wrapper

    for name, dict_obs, algo, policy, kw in (
        ("ppo", False, sb3_contrib.MaskablePPO, "MlpPolicy", {"n_steps": 64, "batch_size": 32}),
        ("ppo_dict", True, sb3_contrib.MaskablePPO, "MultiInputPolicy", {"n_steps": 64, "batch_size": 32}),
        ("dqn", False, sb3.DQN, "MlpPolicy", {"learning_starts": 16}),
    ):
        env = BarbuSingleAgentEnv(opponents="random", contracts=["no_queens"], dict_obs=dict_obs, seed=0)
        _tiny(algo, env, policy, **kw).save(tmp_path / name)
        spec = f"sb3:source={tmp_path}/{name}.zip" + (",algo=DQN" if algo is sb3.DQN else "")
        for doubling in ("off", "classic"):
            opts = {"contracts": ["no_queens", "trumps", "fantan"], "boards": 2, "seed": 3, "doubling": doubling}
            python = ev.evaluate([spec, "heuristic"], engine="python", **opts)
            batched = ev.evaluate([spec, "heuristic"], engine="batched", **opts)
            assert batched["engine"] == "batched" and batched["boards"] == python["boards"], (name, doubling)
            with monkeypatch.context() as m:
                m.setattr(sb3_wrapper, "BATCH_TIE", 1e9)  # every row a near tie
                assert ev.evaluate([spec, "heuristic"], engine="batched", **opts)["boards"] == python["boards"], name
    spec = f"sb3:source={tmp_path}/ppo.zip,greedy=false"
    cfg, made = ev.make_config([spec, "heuristic"], boards=1)
    assert f"agent {spec!r} has no batched form" in batched_unavailable(cfg, made)


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


@pytest.mark.parametrize(("rules", "actions"), [("positive1", 88), ("positive3", 88)])
def test_torchrl_variants_rewards_and_masks(one_torch_thread, rules, actions):
    """Positive scoring (R10.3) through TorchRL: the env's action count (``declare:anti_salad``) reaches its specs,
    and reward sums are the deal scores."""
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
        {
            "mode": "deal",
            "rules": "positive2",
            "contracts": ["anti_salad", "salad"],
            "agent_ids": "contract",
            "seed": 6,
        },  # R10.3
        {"mode": "match", "rules": "king3", "short": True, "normalize": True, "seed": 5},  # / 310, King's Salad
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
        scale = 310 if config.get("normalize") else 1  # normalize in match mode: the rules' largest |total|
        scores = [sign * p / scale for p in (raw.match.totals if raw.match is not None else raw.deal.scores)]
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
        BarbuMultiAgentEnv({"mode": "match", "contracts": ["no_queens"]})
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


# ================================================================== every variant the env observes, in every adapter
#: (game, players) of every variant the adapters accept: what the env has an observation layout for (R11.4, R12)
VARIANTS = [(g, n) for g, counts in supported_variants().items() for n in counts]
#: Variants the rules define that the env may refuse: classic Barbu at 3 / 5 (R12), option positive (R10.3),
#: Barbu King at 6 (R11.5)
CANDIDATES = [{"rules": "classic3"}, {"rules": "classic5"}, {"rules": "positive1"}, {"rules": "king", "players": 6}]


def _variant(game: str, players: int) -> dict:
    return {"rules": "king" if game == "king" else "classic", "players": players}


def test_supported_variants_are_the_envs():
    """The adapters accept what the env observes: classic Barbu and Barbu King at 3 to 5 seats (R11.4, R12)."""
    assert {("barbu", 3), ("barbu", 4), ("barbu", 5), ("king", 3), ("king", 4), ("king", 5)} <= set(VARIANTS)
    for game, n in VARIANTS:
        env = barbu_env.env(mode="deal", **_variant(game, n))
        assert env.unwrapped.num_players == n and env.unwrapped.rules.game == game


@pytest.mark.parametrize(("game", "players"), VARIANTS)
def test_every_adapter_plays_every_variant(one_torch_thread, game, players):
    """One deal (declared in-episode, R3) of each accepted variant through the SB3 wrapper, RLlib's env,
    TorchRL's and Tianshou's PettingZoo wrappers: each returns the env's observation layout and mask, and
    the rewards sum to the engine's deal scores (King's rewards are minus the points, R11)."""
    kwargs = {"mode": "deal", **_variant(game, players)}
    rng = np.random.default_rng(players)
    sb3 = BarbuSingleAgentEnv(opponents="heuristic", seed=players, **kwargs)
    obs, _ = sb3.reset()
    size = sb3.raw.observation_space("player_0")["observation"].shape[0]
    assert obs.shape == (size,) and len(sb3.opponents) == players - 1
    total, done = 0.0, False
    while not done:
        _, r, done, _, _ = sb3.step(_random_masked(rng, sb3.action_masks()))
        total += r
    sign = sb3.raw.rules.score_sign
    assert total == pytest.approx(sign * sb3.raw.deal.scores[sb3.seat])

    if importlib.util.find_spec("ray") is not None:
        from barbu_env.wrappers.rllib import BarbuMultiAgentEnv

        rl = BarbuMultiAgentEnv({**kwargs, "seed": players})
        sums, returns, _ = _rllib_episode(rl, rng)
        expected = [sign * p for p in rl.raw.deal.scores]
        assert [sums[a] for a in rl.agents] == pytest.approx(expected) == [returns[a] for a in rl.agents]
        assert rl.observation_spaces["player_0"]["observations"].shape == (size,)
        assert rl.action_spaces["player_0"].n == sb3.action_space.n == sb3.raw.action_space("player_0").n

    if importlib.util.find_spec("torchrl") is not None:
        env = _torchrl_env(**kwargs)
        td = env.rollout(1000, break_when_any_done=True)
        deal = env._env.unwrapped.deal
        assert deal.is_over
        for i in range(players):
            assert td["next", f"player_{i}", "reward"].sum().item() == pytest.approx(sign * deal.scores[i])
            assert td[f"player_{i}", "observation", "observation"].shape[-1] == size

    if importlib.util.find_spec("tianshou") is not None:
        from tianshou.env import PettingZooEnv

        env = PettingZooEnv(barbu_env.env(**kwargs))
        o, _ = env.reset(seed=players)
        total_rewards, done = np.zeros(players), False
        while not done:
            raw = env.env.unwrapped
            assert o["obs"].shape == (size,) and o["agent_id"] == raw.agent_selection
            assert np.flatnonzero(o["mask"]).tolist() == raw.deal.legal_actions()
            o, rew, done, trunc, _ = env.step(_random_masked(rng, o["mask"]))
            total_rewards += rew
            assert not trunc
        assert total_rewards.tolist() == pytest.approx([sign * p for p in env.env.unwrapped.deal.scores])


@pytest.mark.parametrize("kwargs", CANDIDATES, ids=lambda k: "-".join(map(str, k.values())))
def test_adapters_refuse_what_the_env_cannot_observe_saying_what_they_accept(kwargs):
    """A variant is accepted by every adapter exactly when the env accepts it; a refusal names the adapter, what
    is wrong and the accepted variants (TorchRL and Tianshou wrap ``barbu_env.env``, whose own error refuses)."""
    try:
        barbu_env.env(mode="deal", **kwargs)
    except ValueError as e:
        reason = str(e)
    else:
        reason = None
    if reason is None:  # the env observes it: so do the adapters
        BarbuSingleAgentEnv(**kwargs)
        return
    accepted = "; ".join(f"game={g!r} with players in {c}" for g, c in supported_variants().items())
    observable = "observation" in reason  # refused by the env, not by the rules themselves (Rules lists the counts)
    assert ("the env supports" in reason) if observable else ("expected one of" in reason)
    adapters = [BarbuSingleAgentEnv]
    if importlib.util.find_spec("ray") is not None:
        from barbu_env.wrappers.rllib import BarbuMultiAgentEnv

        adapters.append(lambda **kw: BarbuMultiAgentEnv(kw))
    for adapter in adapters:
        with pytest.raises(ValueError) as err:
            adapter(**kwargs)
        assert reason in str(err.value)
        if observable:
            assert str(err.value).startswith(("BarbuSingleAgentEnv cannot", "BarbuMultiAgentEnv cannot"))
            assert accepted in str(err.value)


# ================================================================== RLlib match mode: one policy for every decision
def _play_match(env, agents, rng_seed=0):
    """Play ``env`` (match mode) to its end, ``agents[seat]`` choosing for each seat; returns the decisions made
    by action kind and seat: ``{"declare": [...], "double": [...], "card": [...], "pass": [...]}`` of (seat, id)."""
    from barbu_env.actions import DOUBLE_BASE, PASS

    env.reset(seed=rng_seed)
    raw = env.unwrapped
    kinds: dict[str, list[tuple[int, int]]] = {"declare": [], "double": [], "card": [], "pass": []}
    for name in env.agent_iter():
        if env.terminations[name] or env.truncations[name]:
            env.step(None)
            continue
        seat = raw.agent_name_mapping[name]
        action = agents[seat].act(env, name)
        kind = (
            "card" if action < PASS else "pass" if action == PASS else "declare" if action < DOUBLE_BASE else "double"
        )
        kinds[kind].append((seat, action))
        env.step(action)
    assert raw.match.is_over
    return kinds


def _check_match_decisions(raw, kinds, seats) -> None:
    """The declarations and doubling decisions of ``seats`` are the ones the score sheet holds: one declaration
    per deal by its declarer, each declarer's contracts distinct (R2.1, R3.1); one doubling decision per player
    and deal (R6.1, classic doubling), and a seat doubled someone exactly when it chose a doubling action other
    than "none" (R6)."""
    from barbu_env.actions import DOUBLE_BASE

    records = raw.match.records
    assert [s for s, _ in kinds["declare"]] == [r.declarer for r in records if r.declarer in seats]
    for seat in seats:
        mine = [r.contract.split(":")[0] for r in records if r.declarer == seat]
        assert sorted(mine) == sorted(raw.match.table)  # every contract once: 7 in basic32, 5 in short King
    if raw.rules.doubling == "off":
        assert not kinds["double"]
        return
    assert len(kinds["double"]) == len(seats) * len(records)
    doubled = sorted(s for r in records for s in seats if r.doubles[s])
    assert sorted(s for s, a in kinds["double"] if a != DOUBLE_BASE) == doubled


@pytest.mark.parametrize(
    "rules",
    [
        {"rules": "basic32"},  # declarations and doubling (R3, R6), 32 cards: 28 short deals
        {"rules": "king_choose", "players": 3, "short": True},  # R11.3: the dealer declares; no doubling in King
    ],
)
def test_rllib_module_agent_plays_whole_matches_declaring_and_doubling(one_torch_thread, rules):
    """A match-mode module (an untrained one, built from module_spec without Ray) plays every decision of
    every seat of whole matches through ModuleAgent: the env raises on any illegal choice, and every
    declaration and doubling decision in the score sheet is one the module chose."""
    pytest.importorskip("ray.rllib")
    from barbu_env.wrappers.rllib import BarbuMultiAgentEnv, ModuleAgent, module_spec

    one_torch_thread.manual_seed(0)
    module = module_spec((32,), BarbuMultiAgentEnv({"mode": "match", **rules})).build()
    env = barbu_env.env(mode="match", **rules)  # illegal_action="raise"
    n = env.unwrapped.num_players
    agents = [ModuleAgent(module, seed=s, greedy=False) for s in range(n)]
    kinds = _play_match(env, agents)
    _check_match_decisions(env.unwrapped, kinds, set(range(n)))
    assert kinds["declare"] and kinds["card"]
    greedy = ModuleAgent(module)
    assert greedy.spec == "rllib" and agents[0].spec == "rllib:greedy=False"
    # greedy: the most likely legal action of the module's masked logits
    env.reset(seed=1)
    o = env.observe(env.agent_selection)
    torch = one_torch_thread
    batch = {"obs": {"observations": torch.as_tensor(o["observation"])[None],
                     "action_mask": torch.as_tensor(o["action_mask"], dtype=torch.float32)[None]}}  # fmt: skip
    with torch.no_grad():
        logits = module.forward_inference(batch)["action_dist_inputs"][0]
    assert greedy.act(env, env.agent_selection) == int(logits.argmax())


def test_rllib_module_agent_and_match_config_errors():
    pytest.importorskip("ray.rllib")
    from barbu_env.wrappers.rllib import BarbuMultiAgentEnv, ModuleAgent, masked_ppo_config, module_spec

    with pytest.raises(ValueError, match="contracts=None"):
        masked_ppo_config(["no_queens"], {"mode": "match"})
    module = module_spec((8,), BarbuMultiAgentEnv({"mode": "match", "rules": "king3"})).build()
    env = barbu_env.env(mode="match")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="1228"):  # trained on King's 3-seat layout, asked to play classic Barbu
        ModuleAgent(module).act(env, env.agent_selection)
    with pytest.raises(ValueError, match=r"plays through barbu_env\.env"):  # an InfoState has no match blocks
        ModuleAgent(module).act_deal(env.unwrapped.deal)
    # the agent spec "rllib:source=CHECKPOINT" (barbu-eval, barbu_env.agents.make)
    from barbu_env.agents import make

    with pytest.raises(ValueError, match=r"agent 'rllib' needs option\(s\) \['source'\]"):
        make("rllib")
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['samples'\] for agent 'rllib'.*'source', 'module'"):
        make("rllib:source=x,samples=3")
    with pytest.raises(ValueError, match="'nowhere' is not an RLlib algorithm checkpoint"):
        make("rllib:source=nowhere")
    with pytest.raises(ValueError, match=r"no RLlib module 'trumps'.*\['shared'\]"):
        from ray.rllib.core.rl_module.multi_rl_module import MultiRLModule

        ModuleAgent(MultiRLModule(rl_module_specs={"shared": module_spec((8,), BarbuMultiAgentEnv({}))}), "trumps")


@pytest.mark.slow
def test_rllib_match_mode_trains_and_the_policy_plays_whole_matches(tmp_path, one_torch_thread):
    """training/rllib_train.py --mode match, tiny config: two PPO iterations on whole basic32 matches with one
    shared policy (a match is about 1000 steps, so the second iteration finishes one) and one duplicate match
    against the heuristic through barbu-eval (agent "rllib:source=CHECKPOINT"); the trained policy, loaded
    from its RLlib checkpoint, plays whole matches against the heuristic making its own declarations and
    doubling decisions."""
    pytest.importorskip("ray.rllib")
    from barbu_env.agents import make
    from training.rllib_train import build_parser, train

    args = build_parser().parse_args(
        ["--mode", "match", "--rules", "basic32", "--iterations", "2", "--train-batch", "600", "--minibatch", "200",
         "--epochs", "1", "--hidden", "32", "--num-cpus", "1", "--out", str(tmp_path), "--eval-boards", "1"]
    )  # fmt: skip
    out = train(args)
    last = out["last"]
    assert last["env_steps"] >= 1200 and last["episodes"] >= 1 and set(last["module_return_mean"]) == {"shared"}
    assert set(last["agent_return_mean"]) == {f"player_{i}" for i in range(4)}
    assert out["policies"] == {}  # match mode: no per-contract checkpoints
    evaluation = out["evaluation"]
    assert evaluation["config"]["mode"] == "match" and evaluation["config"]["agents"][0] == (
        f"rllib:source={out['checkpoint']}"
    )
    assert evaluation["finished"] == 1 and evaluation["contracts"]["match"]["boards"] == 1

    trained = make(f"rllib:source={out['checkpoint']}")
    env = barbu_env.env(mode="match", rules="basic32")
    for seat in (0, 2):
        agents = [trained if s == seat else make("heuristic", seed=s) for s in range(4)]
        kinds = {k: [(s, a) for s, a in v if s == seat] for k, v in _play_match(env, agents, seat).items()}
        assert len(kinds["declare"]) == 7 and len(kinds["double"]) == 28  # R2.1: 7 declarations; R6.1
        _check_match_decisions(env.unwrapped, kinds, {seat})
    with pytest.raises(ValueError, match="--mode match"):
        train(build_parser().parse_args(["--mode", "match", "--contracts", "no_queens", "--out", str(tmp_path)]))
