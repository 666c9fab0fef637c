"""Adapters to RL frameworks. Each framework is imported only by the module that needs it:

- :class:`BarbuSingleAgentEnv` (:mod:`.sb3`): one seat as a Gymnasium env, the other seats played
  by agents — for Stable-Baselines3 and sb3-contrib's ``MaskablePPO`` (needs only gymnasium);
- :class:`~.vector_env.BarbuVectorEnv` (:mod:`.vector_env`): the same learner's view for thousands of games at
  once on the compiled batched engine, a Gymnasium vector env; :mod:`.sb3_vec` gives it SB3's ``VecEnv`` API
  (imports stable_baselines3);
- :mod:`.rllib`: ``BarbuMultiAgentEnv`` (an RLlib ``MultiAgentEnv`` with RLlib's action-masking keys),
  the PPO config helper and the conversion of RLlib modules to :class:`barbu_env.nn.PolicyNet`
  (imports ray: ``from barbu_env.wrappers.rllib import ...``);
- TorchRL needs no adapter: ``torchrl.envs.libs.pettingzoo.PettingZooWrapper(env=barbu_env.env(...),
  use_mask=True)``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["BarbuSingleAgentEnv"]


def __getattr__(name: str) -> Any:
    if name == "BarbuSingleAgentEnv":
        from .sb3 import BarbuSingleAgentEnv

        return BarbuSingleAgentEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
