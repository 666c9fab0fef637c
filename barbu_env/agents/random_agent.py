"""The uniform random baseline: every legal action equally likely."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine import InfoState
from .base import Agent


class RandomAgent(Agent):
    """Uniform over the legal actions (the env's action mask, or the engine's legal list)."""

    name = "random"

    def choose(self, env: Any, agent_name: str) -> int:
        mask = np.asarray(env.observe(agent_name)["action_mask"])
        legal = np.flatnonzero(mask)
        if len(legal) == 0:
            raise ValueError(f"{agent_name} has no legal action: is it this agent's turn?")
        return int(legal[self.rng.integers(len(legal))])

    def act_info(self, info: InfoState) -> int:
        legal = info.view.legal_actions()
        if not legal:
            raise ValueError(f"seat {info.seat} has no legal action: is it this seat's turn?")
        return int(legal[self.rng.integers(len(legal))])
