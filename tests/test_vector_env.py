"""``wrappers.vector_env.BarbuVectorEnv`` (one learner seat per game on the batched engine, a Gymnasium vector env)
against the AEC env: every learner decision's observation and mask, every reward and the last observation of each
deal (R3-R8) equal those of the same deal played through ``barbu_env.env`` by the same agents; plus its API, its
SB3 form and its refusals."""

from __future__ import annotations

from dataclasses import dataclass, field

import gymnasium
import numpy as np
import pytest

import barbu_env
from barbu_env.agents import make
from barbu_env.cards import cards_of
from barbu_env.contracts import contract_scale
from barbu_env.vector import random_actions
from barbu_env.vector.dealing import deal_stream, stream_key
from barbu_env.wrappers.vector_env import BarbuVectorEnv

SEED = 11


@dataclass
class Episode:
    """One deal of one sub-env as the learner saw it."""

    seat: int
    obs: list[np.ndarray] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    reward: float = 0.0
    points: float = 0.0
    final: np.ndarray | None = None
    states: list[np.ndarray] = field(default_factory=list)


def run(venv: BarbuVectorEnv, steps: int) -> list[list[Episode]]:
    """Random legal learner actions for ``steps`` steps; each sub-env's finished deals."""
    same_step = venv.autoreset_mode.value == "SameStep"
    rng = np.random.default_rng(5)
    obs, info = venv.reset(seed=SEED)
    n = venv.num_envs
    current = [Episode(int(info["seat"][g])) for g in range(n)]
    done: list[list[Episode]] = [[] for _ in range(n)]
    waiting = np.zeros(n, bool)  # NextStep: the deal ended, the next step starts the next one
    for _ in range(steps):
        mask = info["action_mask"]
        assert (mask[waiting] == 0).all() and (mask[~waiting].sum(1) > 0).all()
        a = random_actions(mask, rng)
        for g in np.flatnonzero(~waiting):
            current[g].obs.append(obs[g])
            current[g].masks.append(mask[g])
            current[g].actions.append(int(a[g]))
            if venv.with_state:
                current[g].states.append(info["state"][g])
        obs, r, term, trunc, info = venv.step(a)
        assert not trunc.any() and (r[~term] == 0).all()
        for g in np.flatnonzero(waiting):
            assert not term[g]
            current[g] = Episode(int(info["seat"][g]))
        for g in np.flatnonzero(term):
            e = current[g]
            e.reward = float(r[g])
            e.points = float(info["points"][g]) if not same_step else float(info["final_info"]["points"][g])
            e.final = info["final_obs"][g] if same_step else obs[g]
            if venv.with_state:
                e.states.append(info["final_info"]["state"][g] if same_step else info["state"][g])
            done[g].append(e)
            if same_step:
                current[g] = Episode(int(info["seat"][g]))
        waiting = term & (not same_step)
    return done


def replay(venv: BarbuVectorEnv, episodes: list[list[Episode]], specs: list[str], contracts: list[str] | None,
           doubling: str, normalize: bool) -> int:  # fmt: skip
    """Each finished deal through the AEC env: the same hands and declarer (the engine's deal stream), the learner's
    actions, the opponents' agents; returns the learner decisions compared."""
    n, checked = venv.num_envs, 0
    ids = np.arange(52)
    for g, eps in enumerate(episodes):
        for j, ep in enumerate(eps):
            hands, declarer = deal_stream(stream_key(SEED), np.array([j * n + g]), ids, 13)
            opts = {"hands": [cards_of(int(h)) for h in hands[0]], "declarer": int(declarer[0])}
            if contracts is not None:
                opts["contract"] = contracts[g % len(contracts)]
            env = barbu_env.env(mode="deal", doubling=doubling)
            env.reset(seed=0, options=opts)
            players = {s: make(specs[(s - ep.seat - 1) % 4], seed=s) for s in range(4) if s != ep.seat}
            k = 0
            for agent in env.agent_iter():
                o, _r, term, trunc, _i = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                s = env.unwrapped.agent_name_mapping[agent]
                if s == ep.seat:
                    np.testing.assert_array_equal(o["observation"], ep.obs[k])
                    if ep.states:  # the learner's seat, then left, across, right
                        np.testing.assert_array_equal(ep.states[k], _state(env, ep.seat))
                    np.testing.assert_array_equal(o["action_mask"], ep.masks[k])
                    env.step(ep.actions[k])
                    k += 1
                else:
                    env.step(players[s].act(env, agent))
            raw = env.unwrapped
            assert k == len(ep.actions)
            points = raw.deal_scores[ep.seat]
            assert ep.points == points
            assert ep.reward == pytest.approx(points / contract_scale(raw.contract_text, raw.rules) if normalize
                                              else points)  # fmt: skip
            last = raw.observe(raw.possible_agents[ep.seat])
            np.testing.assert_array_equal(last["observation"], ep.final)
            if ep.states:
                np.testing.assert_array_equal(ep.states[-1], _state(env, ep.seat))
            checked += k
    return checked


def _state(env, seat: int) -> np.ndarray:
    """The AEC env's observations of ``seat`` and the seats after it."""
    raw = env.unwrapped
    return np.concatenate([raw.observe(raw.possible_agents[(seat + r) % 4])["observation"] for r in range(4)])


@pytest.mark.parametrize("mode", ["NextStep", "SameStep"])
def test_deals_declared_and_doubled_as_the_env_plays_them(mode):
    """R3 declarations, R6 doubling and R4-R8 play: the learner declares and doubles in its turn like any seat; the
    global state (``state=True``) is every seat's observation from the learner's on."""
    venv = BarbuVectorEnv(8, opponents="heuristic", seed=SEED, autoreset_mode=mode, state=True)
    episodes = run(venv, 150)
    assert sum(len(e) for e in episodes) >= 8
    assert replay(venv, episodes, ["heuristic"] * 3, None, "classic", False) > 8 * 40


def test_fixed_contracts_normalized_rewards_fixed_seat():
    """Sub-env i plays ``contracts[i % 3]``; rewards are the deal score over ``|contract total|`` (E5)."""
    contracts = ["no_queens", "trumps:H", "fantan:7"]
    venv = BarbuVectorEnv(6, opponents="heuristic", seat=2, contracts=contracts, normalize=True, seed=SEED,
                          doubling="off")  # fmt: skip
    episodes = run(venv, 100)
    assert all(ep.seat == 2 for eps in episodes for ep in eps) and all(len(eps) >= 2 for eps in episodes)
    replay(venv, episodes, ["heuristic"] * 3, contracts, "off", True)


def test_checkpoint_opponent_plays_as_through_the_env():
    """A greedy checkpoint opponent (card play by its network, R5) beside heuristic seats, doubling by the fallback."""
    pytest.importorskip("torch")
    specs = ["heuristic", "checkpoints:bidding=heuristic", "heuristic"]
    venv = BarbuVectorEnv(4, opponents=specs, contracts=["no_hearts", "trumps:S"], seed=SEED)
    episodes = run(venv, 60)
    assert replay(venv, episodes, specs, ["no_hearts", "trumps:S"], "classic", False) > 100


def test_checkpoint_opponent_without_a_network_for_the_contract(tmp_path):
    """A folder with No queens only: its No hearts card play is its fallback's, as through the env."""
    pytest.importorskip("torch")
    import shutil
    from pathlib import Path

    shutil.copy(Path(__file__).resolve().parent.parent / "checkpoints" / "no_queens.pt", tmp_path)
    specs = [str(tmp_path), "heuristic", "heuristic"]
    venv = BarbuVectorEnv(4, opponents=specs, contracts=["no_hearts", "no_queens"], seed=SEED, doubling="off")
    assert "no_hearts" in venv.opponents[0].uncovered and "no_queens" not in venv.opponents[0].uncovered
    replay(venv, run(venv, 40), specs, ["no_hearts", "no_queens"], "off", False)


def test_sb3_model_opponent_plays_as_through_the_env(tmp_path):
    """A greedy SB3 model (``sb3:source=model.zip``) as an opponent: every decision its own (card play R5, R7;
    declaration R3; doubling R6) from one batched pass a step, the choices it makes through the env."""
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from barbu_env.wrappers import BarbuSingleAgentEnv

    env = BarbuSingleAgentEnv(opponents="random", seed=0)  # declaring and doubling too
    sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, seed=0, device="cpu",
                            policy_kwargs={"net_arch": [32]}).learn(64).save(tmp_path / "model")  # fmt: skip
    specs = [f"sb3:source={tmp_path}/model.zip", "heuristic", f"sb3:source={tmp_path}/model.zip"]
    contracts = ["no_queens", "fantan:9"]
    venv = BarbuVectorEnv(4, opponents=specs, contracts=contracts, seed=SEED, doubling="off")
    assert venv.opponents[0].kind is None
    assert replay(venv, run(venv, 40), specs, contracts, "off", False) > 40
    venv = BarbuVectorEnv(4, opponents=specs, seed=SEED)  # the declarer chooses; classic doubling
    assert replay(venv, run(venv, 60), specs, None, "classic", False) > 40


def test_random_opponents_and_gymnasium_make_vec():
    """``gymnasium.make_vec`` builds it from the registered id; random opponents play legal moves to each deal's end."""
    envs = gymnasium.make_vec(barbu_env.GYM_ID, num_envs=32, vectorization_mode="vector_entry_point",
                              opponents="random", contracts=["no_tricks"], doubling="off", seed=3)  # fmt: skip
    assert isinstance(envs, BarbuVectorEnv) and envs.metadata["autoreset_mode"].value == "NextStep"
    obs, info = envs.reset(seed=3)
    single = barbu_env.env().observation_space("player_0")["observation"]
    assert envs.single_observation_space == single and envs.observation_space.contains(obs)
    rng, ended = np.random.default_rng(0), 0
    for _ in range(14):
        obs, r, term, _, info = envs.step(random_actions(envs.action_masks().astype(np.int8), rng))
        ended += term.sum()
        assert ("points" in info) == term.any()
        if term.any():
            assert np.allclose(r[term], info["points"][term]) and (info["_points"] == term).all()
    assert ended == 32  # No tricks plays all 13 tricks (R4.5): every deal ends on the 13th step


def test_refusals():
    venv = BarbuVectorEnv(4, contracts=["no_queens"], doubling="off", seed=0)
    _, info = venv.reset(seed=0)
    bad = np.where(info["action_mask"][0] == 0)[0][0]
    a = random_actions(info["action_mask"], np.random.default_rng(0))
    before = venv.deals.state.data.copy()
    a[0] = bad
    with pytest.raises(ValueError, match=r"game 0: .* is illegal .* legal are"):
        venv.step(a)
    np.testing.assert_array_equal(venv.deals.state.data, before)
    with pytest.raises(ValueError, match="actions must be 4 ints"):
        venv.step(a[:3])
    with pytest.raises(ValueError, match=r"autoreset_mode .* expected one of"):
        BarbuVectorEnv(4, autoreset_mode="Disabled")
    with pytest.raises(ValueError, match="opponent 'pimc' has no batched form"):
        BarbuVectorEnv(4, opponents="pimc")
    with pytest.raises(ValueError, match="bad opponents"):
        BarbuVectorEnv(4, opponents=["heuristic", "random"])
    with pytest.raises(ValueError, match="bad seat"):
        BarbuVectorEnv(4, seat=4)
    with pytest.raises(ValueError, match="not supported by the batched engine"):
        BarbuVectorEnv(4, rules="king")
    with pytest.raises(ValueError, match="bad contracts"):
        BarbuVectorEnv(2, contracts=["no_queens", "no_king", "no_tricks"])
    with pytest.raises(ValueError, match="one int"):
        venv.reset(seed=[1, 2, 3, 4])


def test_learned_bidding_opponents_refused():
    """The shipped agent's declarations (R3) and doubles (R6) are its own networks': no batched form."""
    pytest.importorskip("torch")
    with pytest.raises(ValueError, match="'checkpoints' has no batched form"):
        BarbuVectorEnv(4, opponents="checkpoints", doubling="off")  # it would declare
    with pytest.raises(ValueError, match="'checkpoints' has no batched form"):
        BarbuVectorEnv(4, opponents="checkpoints", contracts=["no_queens"])  # it would double
    BarbuVectorEnv(4, opponents="checkpoints", contracts=["no_queens"], doubling="off")


def test_sb3_vec_env_trains_maskable_ppo():
    """SB3's ``VecEnv`` form: SameStep autoreset with ``terminal_observation``; MaskablePPO reads the masks."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    from barbu_env.wrappers.sb3_vec import BarbuSB3VecEnv, sb3_vec_env

    env = sb3_vec_env(num_envs=8, contracts=["no_tricks"], doubling="off", seed=1)  # 13 tricks a deal (R4.5)
    assert is_masking_supported(env)
    env.seed(1)
    obs = env.reset()
    np.testing.assert_array_equal(get_action_masks(env), env.venv.action_masks())
    ends = 0
    for _ in range(13):
        masks = get_action_masks(env)
        actions = np.array([np.flatnonzero(m)[0] for m in masks])
        obs, rewards, dones, infos = env.step(actions)
        for i in np.flatnonzero(dones):
            ends += 1
            assert infos[i]["terminal_observation"].shape == obs[i].shape and rewards[i] == infos[i]["points"]
    assert ends == 8
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=64, seed=0)
    model.learn(total_timesteps=256)
    with pytest.raises(ValueError, match="SameStep"):
        BarbuSB3VecEnv(BarbuVectorEnv(2, seed=0))
