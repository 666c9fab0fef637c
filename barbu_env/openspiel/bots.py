"""The project's agents (:mod:`barbu_env.agents`) as OpenSpiel bots, for ``python_barbu`` states.

``bot("heuristic")``, ``bot("pimc:samples=16", seed=0)``: a ``pyspiel.Bot`` whose ``step`` asks the agent for the
seat on move, through that seat's information state only (:class:`barbu_env.engine.InfoState`).
"""

from __future__ import annotations

from typing import Any

import pyspiel

from ..agents import Agent, make
from ..engine.infostate import InfoState
from .game import BarbuState


class AgentBot(pyspiel.Bot):
    """An :class:`~barbu_env.agents.Agent` playing ``python_barbu`` as a ``pyspiel.Bot``."""

    def __init__(self, agent: Agent) -> None:
        pyspiel.Bot.__init__(self)
        self.agent = agent

    def step(self, state: BarbuState) -> int:
        deal = getattr(state, "deal", None)
        if deal is None or state.is_chance_node() or state.is_terminal():
            raise ValueError(f"{self.agent.spec} bot: step() needs a python_barbu state with a seat on move")
        return int(self.agent.act_info(InfoState.of(deal, state.current_player())))

    def restart_at(self, state: Any) -> None:
        """Nothing to forget: the agent reads the information state afresh at every step."""

    def inform_action(self, state: Any, player_id: int, action: int) -> None:
        """Other seats' actions reach the agent through the information state."""

    def __repr__(self) -> str:
        return f"AgentBot({self.agent!r})"


def bot(spec: str, seed: int | None = None) -> AgentBot:
    """The agent of ``spec`` (``"random"``, ``"heuristic"``, ``"pimc:samples=16"``, a checkpoint) as a bot."""
    return AgentBot(make(spec, seed))
