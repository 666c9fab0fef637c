""":class:`~barbu_env.wrappers.vector_env.BarbuVectorEnv` under Stable-Baselines3's ``VecEnv`` API (imports
stable_baselines3): :func:`sb3_vec_env`.

SB3 resets a sub-env in the step that ends its episode and keeps the last observation in
``infos[i]["terminal_observation"]``: the vector env runs with ``autoreset_mode="SameStep"``. sb3-contrib's
``MaskablePPO`` reads the learner's legal actions through ``env_method("action_masks")``.

    from sb3_contrib import MaskablePPO
    from barbu_env.wrappers.sb3_vec import sb3_vec_env

    env = sb3_vec_env(num_envs=256, opponents="heuristic", contracts=["no_queens"], doubling="off", seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=32).learn(100_000)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvStepReturn

from .vector_env import BarbuVectorEnv


class BarbuSB3VecEnv(VecEnv):
    """A :class:`BarbuVectorEnv` (SameStep autoreset) as an SB3 ``VecEnv``: ``step`` returns the observations,
    rewards, dones and one info dict per sub-env (``seat``; at a deal's end ``points``, the learner's raw deal
    score, and ``terminal_observation``). ``env_method`` calls ``action_masks`` (each sub-env's row) and nothing
    else; ``get_attr`` reads it and the vector env's attributes (one value for every sub-env)."""

    def __init__(self, venv: BarbuVectorEnv) -> None:
        if venv.autoreset_mode.value != "SameStep":
            raise ValueError("BarbuSB3VecEnv needs a BarbuVectorEnv with autoreset_mode='SameStep' (SB3 resets a "
                             f"sub-env in the step that ends it), got {venv.autoreset_mode.value!r}")  # fmt: skip
        self.venv = venv
        self.render_mode = None
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self._actions: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        seed = self._seeds[0]
        obs, info = self.venv.reset(seed=seed)
        self._reset_seeds()
        self.reset_infos = [{"seat": int(s)} for s in info["seat"]]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(-1).astype(np.int64)

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise ValueError("step_wait() without step_async(actions)")
        obs, rewards, terminated, _truncated, info = self.venv.step(self._actions)
        self._actions = None
        infos: list[dict[str, Any]] = [{"seat": int(s)} for s in info["seat"]]
        for g in np.flatnonzero(terminated):
            infos[g]["terminal_observation"] = info["final_obs"][g]
            infos[g]["points"] = float(info["final_info"]["points"][g])
        return obs, rewards, terminated, infos

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions (bool [N, 87])."""
        return self.venv.action_masks()

    def close(self) -> None:
        self.venv.close()

    def _indices(self, indices: VecEnvIndices) -> list[int]:
        return list(self._get_indices(indices))

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        if attr_name == "action_masks":
            return [self.action_masks] * len(self._indices(indices))
        value = getattr(self.venv, attr_name)  # AttributeError where it has none, as SB3 expects
        return [value] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        raise ValueError(f"BarbuSB3VecEnv: its sub-envs share one engine, set {attr_name!r} on the vector env")

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:  # fmt: skip
        if method_name != "action_masks":
            raise ValueError(f"BarbuSB3VecEnv has one per-env method, 'action_masks', not {method_name!r}")
        masks = self.action_masks()
        return [masks[i] for i in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return [False] * len(self._indices(indices))


def sb3_vec_env(num_envs: int = 256, opponents: str | Sequence[str] = "heuristic", **kwargs: Any) -> BarbuSB3VecEnv:
    """A :class:`BarbuVectorEnv` of these arguments (SameStep autoreset) as an SB3 ``VecEnv``."""
    return BarbuSB3VecEnv(BarbuVectorEnv(num_envs, opponents, autoreset_mode="SameStep", **kwargs))
