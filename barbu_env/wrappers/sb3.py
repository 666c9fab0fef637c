"""A single-agent Gymnasium view of Barbu for Stable-Baselines3 / sb3-contrib ``MaskablePPO``.

The learner sits in one seat (fixed, or drawn per episode); the three other seats are played by
agents made with :func:`barbu_env.agents.make` (``"random"``, ``"heuristic"``, ``"pimc"``, a
checkpoint path). Only numpy and gymnasium are imported here: SB3 itself is not needed to use it.

Reward accounting (the bug of PettingZoo issue 1147 avoided): the reward returned by :meth:`step`
is the learner's own points — the env's ``rewards[learner]`` summed over every underlying step from
its action up to its next decision (or the end of the episode), opponents' moves included. Over an
episode the rewards therefore sum to the learner's deal score (R8.1) or match total (R8.3), times
``reward_scale`` (and divided by :func:`~barbu_env.wrappers.common.reward_normaliser` with ``normalize=True``).

    from sb3_contrib import MaskablePPO
    from barbu_env.wrappers import BarbuSingleAgentEnv

    env = BarbuSingleAgentEnv(opponents="heuristic", contracts=["no_queens"], doubling="off")
    model = MaskablePPO("MlpPolicy", env).learn(10_000)   # masks from env.action_masks()
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..agents import Agent, make
from ..agents.neural import masked_choice
from ..env import env as make_env
from ..options import as_bool
from .common import check_contracts, check_supported, env_rules, reward_normaliser, sample_deal

#: Resets that end before the learner's first decision are retried this many times.
_MAX_EMPTY_RESETS = 100


class BarbuSingleAgentEnv(gym.Env):
    """One seat of ``barbu_env.env(**env_kwargs)`` as a Gymnasium env; the other seats are agents.

    Args:
        opponents: one agent spec for all the other seats, or one spec per other seat (given in seat order
            after the learner: left, across, right, R1.3; 2 or 4 for 3 or 5 players, R11.4, R12.1).
        seat: the learner's seat 0..n-1, or ``"random"`` (default) for a fresh seat each episode.
        contracts: deal mode only: draw each episode's contract uniformly from these names (family names
            ``"trumps"``/``"fantan"`` get the parameter the heuristic names, see
            :func:`barbu_env.wrappers.common.sample_deal`), with fresh hands and a random declarer.
            ``None`` (default) leaves the deal to the env (its ``contract``/``declarer`` kwargs).
        normalize: divide rewards by the deal's ``|contract total|`` in deal mode (one value scale for
            every contract), by the rules' largest one in match mode
            (:func:`barbu_env.wrappers.common.reward_normaliser`).
        dict_obs: observations as ``{"observation", "action_mask"}`` (the env's Dict space) instead of
            the bare float vector.
        seed: seeds the deals, the seat draw and the opponents (``reset(seed=...)`` re-seeds).
        env_kwargs: passed to :func:`barbu_env.env` (``rules``, rule options such as ``doubling="off"``,
            ``reward_scale`` ...). Two defaults differ from the env's: ``mode="deal"`` and
            ``illegal_action="terminate"`` (an illegal learner action ends the episode with
            ``-illegal_penalty``, so algorithms without masking, e.g. plain PPO, can train; MaskablePPO
            never picks one).
    """

    # gymnasium declares metadata as an instance variable; here it is the class's (ruff RUF012 asks for ClassVar)
    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 1}  # type: ignore[misc]

    def __init__(
        self,
        opponents: str | Sequence[str] = "random",
        seat: int | str = "random",
        contracts: Sequence[str] | str | None = None,
        normalize: bool = False,
        dict_obs: bool = False,
        seed: int | None = None,
        **env_kwargs: Any,
    ) -> None:
        super().__init__()
        env_kwargs.setdefault("mode", "deal")
        env_kwargs.setdefault("illegal_action", "terminate")
        self._declarer = env_kwargs.get("declarer", "random")  # with contracts: random unless one is given
        check_supported(env_rules(env_kwargs), "BarbuSingleAgentEnv")
        self.aec = make_env(**env_kwargs)
        self.raw = self.aec.unwrapped
        n = self.n = self.raw.num_players
        self.agents = list(self.raw.possible_agents)
        if seat != "random" and not (isinstance(seat, (int, np.integer)) and 0 <= int(seat) < n):
            raise ValueError(f"bad seat {seat!r}: expected 0..{n - 1} or 'random'")
        self.seat_choice = seat if seat == "random" else int(seat)
        specs = [opponents] * (n - 1) if isinstance(opponents, str) else list(opponents)
        if len(specs) != n - 1:
            raise ValueError(
                f"bad opponents {opponents!r}: expected one agent spec or {n - 1} (one per other seat of {n})"
            )
        self.opponent_specs = specs
        self.opponents: list[Agent] = [make(s) for s in specs]
        if contracts is not None and self.raw.mode != "deal":
            raise ValueError("contracts= draws one contract per deal-mode episode: use it with mode='deal'")
        self.contracts = check_contracts(contracts, self.raw.rules)
        self.normalize = bool(normalize)
        self.dict_obs = bool(dict_obs)
        self.render_mode = self.raw.render_mode
        self.action_space = spaces.Discrete(int(self.raw.action_space(self.agents[0]).n))  # the env's action ids
        space = self.raw.observation_space(self.agents[0])  # laid out by layout(rules): n seats
        self.observation_space = space if dict_obs else space["observation"]
        self._rng = np.random.default_rng(seed)
        self.seat = 0
        self.agent = self.agents[0]
        self._mask = np.zeros(int(self.action_space.n), np.int8)
        self._done = True
        self._pending = 0.0

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Start an episode and play the opponents up to the learner's first decision. ``options`` go to
        the env's ``reset`` (``hands``, ``contract``, ``declarer`` ...), over those of ``contracts``."""
        super().reset(seed=seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        for _ in range(_MAX_EMPTY_RESETS):
            self.seat = int(self._rng.integers(self.n)) if isinstance(self.seat_choice, str) else self.seat_choice
            self.agent = self.agents[self.seat]
            opts: dict[str, Any] = {}
            if self.contracts is not None:
                opts = sample_deal(self._rng, self.raw.rules, self.contracts, self._declarer)
            opts.update(options or {})
            env_seed = int(self._rng.integers(2**63))
            self.aec.reset(seed=env_seed, options=opts)
            for i, agent in enumerate(self.opponents):
                agent.reset(int(self._rng.integers(2**63)) + i)
            self._done = False
            self._pending, over = self._play_opponents()  # credited with the learner's first step
            if not over:
                return self._obs(), self._info()
        raise RuntimeError(f"{_MAX_EMPTY_RESETS} episodes in a row ended before seat {self.seat} had a decision")

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Apply the learner's action, then the opponents' moves up to its next decision. The reward is
        the learner's points from this action to its next decision (see the module docstring)."""
        if self._done:
            raise RuntimeError("step() called on a finished episode: call reset() first")
        self.aec.step(int(action))
        reward = self._pending + self._take_reward()
        self._pending = 0.0
        more, over = self._play_opponents()
        reward += more
        self._done = over
        info = self._info()
        if over:
            info["points"] = self._points()
        return self._obs(), reward, over, False, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner now (bool[A], the env's action ids), for sb3-contrib's ``MaskablePPO``."""
        return self._mask.astype(bool)

    def render(self) -> str | np.ndarray | None:  # type: ignore[override]  # gymnasium's: a free type variable
        return self.raw.render()

    def close(self) -> None:
        self.aec.close()

    # ------------------------------------------------------------------ internals
    def _take_reward(self) -> float:
        r = float(self.raw.rewards[self.agent])
        if self.normalize and r:
            r /= reward_normaliser(self.raw)
        return r

    def _play_opponents(self) -> tuple[float, bool]:
        """Opponents move until the learner is on move or the episode is over: (learner's reward, over). Their
        actions (legal: the agents' own) go to the raw env, past PettingZoo's checking wrappers."""
        raw = self.raw
        reward = 0.0
        while True:
            if not raw.agents or all(raw.terminations.values()) or all(raw.truncations.values()):
                return reward, True
            current = raw.agent_selection
            if current == self.agent:
                return reward, False
            seat = raw.agent_name_mapping[current]
            agent = self.opponents[(seat - self.seat - 1) % self.n]
            raw.step(agent.act(raw, current))
            reward += self._take_reward()

    def _obs(self) -> Any:
        o = self.raw.observe(self.agent)  # the mask is all zeros once the episode is over
        self._mask = o["action_mask"]
        return o if self.dict_obs else o["observation"]

    def _points(self) -> float:
        """The learner's raw points of the episode: its deal score or match total (R8.1, R8.3), or
        ``-illegal_penalty`` when an illegal action ended it."""
        if "illegal_action" in self.raw.infos.get(self.agent, {}):
            return -self.raw.illegal_penalty
        match = self.raw.match
        return float(match.totals[self.seat] if match is not None else self.raw.deal_scores[self.seat])

    def _info(self) -> dict[str, Any]:
        return {"seat": self.seat, "contract": self.raw.contract_text}


# ================================================================================= playing
#: Relative gap (of ``1 + |best score|``) under which :meth:`ModelAgent.card_actions` scores a row again alone.
BATCH_TIE = 1e-4
#: The algorithms :class:`ModelAgent` loads, by class name: their module, and how their policy scores the actions
#: (``"policy"``: the logits of its action distribution; ``"q"``: its Q-values; ``"quantiles"``: the mean of its
#: quantiles).
SB3_ALGOS: dict[str, tuple[str, str]] = {
    "MaskablePPO": ("sb3_contrib", "policy"), "PPO": ("stable_baselines3", "policy"),
    "A2C": ("stable_baselines3", "policy"), "TRPO": ("sb3_contrib", "policy"), "DQN": ("stable_baselines3", "q"),
    "QRDQN": ("sb3_contrib", "quantiles"),
}  # fmt: skip


class ModelAgent(Agent):
    """A trained Stable-Baselines3 model as a project agent (spec ``"sb3:source=model.zip"``, options ``algo`` and
    ``greedy``): every decision of its seat — declaration (R3), doubling (R6), card, Fantan pass — is the model's on
    the env's observation (the bare vector, or the Dict where the model was trained with ``dict_obs=True``), among
    the legal actions only: the largest of the policy's logits (``greedy=True``, the action ``MaskablePPO.predict``
    gives with the mask and ``deterministic=True``) or one drawn from their softmax over the legal actions with the
    agent's seeded generator; Q-learners (``DQN``, ``QRDQN``) take the largest Q-value and are greedy only.
    ``source``: a model saved with ``model.save`` (``.zip``) or a model object; ``algo``: its class, one of
    :data:`SB3_ALGOS` (default ``MaskablePPO``). So a policy trained on :class:`BarbuSingleAgentEnv` meets the
    baselines in ``barbu-eval``'s duplicate evaluation and sits at the ``barbu-play`` table. SB3's ``load`` unpickles
    parts of the file: load only models you trust."""

    name = "sb3"

    def __init__(self, source: Any, algo: str = "MaskablePPO", seed: int | None = None, greedy: Any = True) -> None:
        super().__init__(seed)
        if algo not in SB3_ALGOS:
            raise ValueError(f"bad value {algo!r} for option 'algo': expected one of {list(SB3_ALGOS)}")
        self.algo, self.greedy = algo, as_bool(greedy, "greedy")
        module, self._kind = SB3_ALGOS[algo]
        if self._kind != "policy" and not self.greedy:
            raise ValueError(f"agent 'sb3' with algo={algo}: a Q-learner plays its largest Q-value (greedy=true) only")
        try:
            import torch

            cls = getattr(importlib.import_module(module), algo)
        except ModuleNotFoundError as e:
            raise ValueError(f"agent 'sb3' needs {e.name!r}, which is not installed (pip install -e '.[sb3]')") from e
        self._torch = torch
        self.source = str(source) if isinstance(source, (str, Path)) else None
        if self.source is not None:
            path = Path(self.source)
            if not path.is_file() and not path.with_suffix(".zip").is_file():
                raise ValueError(f"agent 'sb3': model file {self.source!r} not found")
            try:
                self.model = cls.load(self.source, device="cpu")
            except Exception as e:  # a file of another algorithm, a corrupt zip ...
                raise ValueError(f"agent 'sb3': {self.source!r} is not a {algo} model: {type(e).__name__}: {e}") from e
        else:
            self.model = source
        space = self.model.observation_space
        self._dict = isinstance(space, spaces.Dict)
        self.obs_size = int((space["observation"] if self._dict else space).shape[0])

    def options(self) -> dict[str, Any]:
        out: dict[str, Any] = {} if self.source is None else {"source": self.source}
        if self.algo != "MaskablePPO":
            out["algo"] = self.algo
        return out if self.greedy else {**out, "greedy": False}

    def scores(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        """The model's score of every action (float64 [A]) for one observation of the env (its Dict): the logits of
        its policy, or its Q-values."""
        return self._scores(obs["observation"][None], obs["action_mask"][None])[0]

    def _scores(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """:meth:`scores` of n observations (float32 [n, size]) and masks (int8 [n, A]) in one pass (float64 [n, A])."""
        if obs.shape[1] != self.obs_size:
            raise ValueError(
                f"SB3 model {self.source or self.algo!r} reads observations of {self.obs_size} values, this env gives "
                f"{obs.shape[1]}: play it under the rules it was trained with"
            )
        policy, torch = self.model.policy, self._torch
        x, _ = policy.obs_to_tensor({"observation": obs, "action_mask": mask} if self._dict else obs)
        with torch.no_grad():
            if self._kind == "policy":
                out = policy.get_distribution(x).distribution.logits
            elif self._kind == "q":
                out = policy.q_net(x)
            else:
                out = policy.quantile_net(x).mean(dim=1)
        return out.double().cpu().numpy()

    def card_actions(self, contract: str, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The choices (int64 [n]) :meth:`choose` makes for n decisions (observations float32 [n, size], masks int8
        [n, A], as ``VectorDeals.observe_games`` gives them), from one batched pass: a row whose two best legal scores
        lie within :data:`BATCH_TIE` (relative), where the batch's float32 rounding could part from one row's, is
        scored again alone, as :meth:`choose` scores it. Greedy models only: the batched form of ``barbu-eval``
        (``evaluation.batched.seat_player``) and of ``BarbuVectorEnv``'s opponents, for every decision of the model's
        seats (declarations and doubles too: it has no fallback). ``contract`` is not read (one model plays them
        all)."""
        if not self.greedy:
            raise ValueError(f"agent {self.spec!r} samples each choice from its own generator: no batched form")
        legal = mask != 0
        scores = np.where(legal, self._scores(obs, mask), -np.inf)
        rows = np.arange(len(obs))
        best = scores.argmax(1)
        top = scores[rows, best]
        scores[rows, best] = -np.inf
        near = np.flatnonzero(top - scores.max(1) <= BATCH_TIE * (1.0 + np.abs(top)))  # a forced move: never near
        for i in near:
            best[i] = masked_choice(self._scores(obs[i : i + 1], mask[i : i + 1])[0], mask[i], True, self.rng)
        return best.astype(np.int64)

    def choose(self, env: Any, agent_name: str) -> int:
        o = env.observe(agent_name)
        return masked_choice(self.scores(o), o["action_mask"], self.greedy, self.rng)

    def act_info(self, info: Any) -> int:
        """Refused: the model reads the env's observation, whose match blocks (R8.3) an ``InfoState`` does not hold;
        play it through ``barbu_env.env`` with :meth:`act`."""
        raise ValueError("ModelAgent plays through barbu_env.env (agent.act(env, agent_name)): an InfoState holds no "
                         "match state, which its observation encodes")  # fmt: skip
