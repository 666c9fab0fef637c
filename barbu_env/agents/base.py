"""The agent protocol shared by every baseline, the evaluation harness and training opponents.

An agent is made with :func:`barbu_env.agents.make` and asked for a move with
``agent.act(env, agent_name)`` when it is ``agent_name``'s turn in a ``barbu_env.env(...)`` game
(:meth:`Agent.act` refuses any other seat, then asks :meth:`Agent.choose`). It may
read only what that seat may know: ``env.observe(agent_name)`` and, for search agents,
``env.unwrapped.information_state(agent_name)`` (own hand + public history, never hidden cards).

Every baseline here is built on :meth:`Agent.act_info`, a function of the seat's
:class:`~barbu_env.engine.InfoState`, so the same agent also plays against the bare engine
(:meth:`Agent.act_deal`) without a PettingZoo env. Agents use only numpy and are seeded: the same
seed and the same game give the same choices.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..engine import Deal, InfoState

if TYPE_CHECKING:
    from ..vector import VectorDeals


def seat_of(agent_name: str) -> int:
    """Seat index of a PettingZoo agent name (``"player_2"`` -> 2)."""
    try:
        prefix, _, idx = agent_name.rpartition("_")
        seat = int(idx)
    except (AttributeError, ValueError):
        seat = -1
    if not 0 <= seat < 5 or prefix != "player":
        raise ValueError(f"bad agent name {agent_name!r}: expected 'player_0' .. 'player_3' (.. 'player_4' in King)")
    return seat


def check_seed(seed: Any) -> int | None:
    """``seed`` if it is ``None`` or an integer >= 0 (what seeds numpy's generator); ``ValueError`` otherwise."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(f"bad agent seed {seed!r}: expected None or an integer >= 0")
    return None if seed is None else int(seed)


def check_turn(env: Any, agent_name: str) -> None:
    """``ValueError`` unless ``agent_name`` is the seat on move in the PettingZoo ``env`` and its game goes on."""
    env = getattr(env, "unwrapped", env)  # PettingZoo wrappers forward these attributes through slow __getattr__s
    on_move = getattr(env, "agent_selection", None)
    if agent_name != on_move:
        raise ValueError(f"{agent_name!r} is not on move: {on_move!r} is (an agent acts only for the seat on move)")
    done = getattr(env, "terminations", {}).get(agent_name) or getattr(env, "truncations", {}).get(agent_name)
    if done:
        raise ValueError(f"{agent_name!r} has no move to make: its game is over")


class Agent:
    """Base class: a seeded player. Subclasses implement :meth:`act_info` (or override :meth:`choose`)."""

    #: The name used in specs and tables (``"random"``, ``"heuristic"``, ``"pimc"``).
    name = "agent"
    #: Whether the agent has a compiled form on the batched engine (:meth:`vector_actions`).
    compiled = False
    #: The spec of the agent this one hands decisions to (declaration, doubling, :meth:`fallback_contracts`).
    fallback_spec: str | None = None

    def __init__(self, seed: int | None = None) -> None:
        self.seed = check_seed(seed)
        self.rng = np.random.default_rng(self.seed)

    @property
    def spec(self) -> str:
        """The spec string that makes an agent like this one (for tables and logs)."""
        opts = self.options()
        return self.name + (":" + ",".join(f"{k}={v}" for k, v in opts.items()) if opts else "")

    def options(self) -> dict[str, Any]:
        """Options that differ from the defaults (shown in :attr:`spec`)."""
        return {}

    def fallback_contracts(self, contracts: Sequence[str]) -> list[str]:
        """The contracts of ``contracts`` whose card play this agent hands to :attr:`fallback_spec` (none here)."""
        return []

    def reset(self, seed: int | None = None) -> None:
        """Re-seed and forget any per-game state (the harness calls it before each game)."""
        self.seed = check_seed(seed)
        self.rng = np.random.default_rng(self.seed)

    def act(self, env: Any, agent_name: str) -> int:
        """The action id for ``agent_name``, whose turn it is in the PettingZoo ``env`` (``ValueError``
        naming the seat on move otherwise). Subclasses override :meth:`choose`, not this check."""
        check_turn(env, agent_name)
        return self.choose(env, agent_name)

    def choose(self, env: Any, agent_name: str) -> int:
        """The action id for ``agent_name`` (on move, checked by :meth:`act`); default: :meth:`act_info`."""
        info = env.unwrapped.information_state(agent_name)
        return int(self.act_info(info))

    def act_info(self, info: InfoState) -> int:
        """The action id chosen from the seat's information state (on move)."""
        raise NotImplementedError

    def act_deal(self, deal: Deal, seat: int | None = None) -> int:
        """The action for ``seat`` (default: the player on move) in an engine ``Deal``, seen through
        that seat's information state only."""
        seat = deal.current_player if seat is None else seat
        if deal.current_player != seat:
            raise ValueError(f"seat {seat} is not on move (seat {deal.current_player} is)")
        return int(self.act_info(InfoState.of(deal, seat)))

    def vector_actions(self, deals: VectorDeals, games: np.ndarray | None = None) -> np.ndarray:
        """The agent's actions for the seats on move of a ``barbu_env.vector.VectorDeals`` batch (int64 [B]; only
        the games set in the bool mask ``games``, -1 elsewhere), for agents with :attr:`compiled`."""
        raise NotImplementedError(f"agent {self.spec!r} has no compiled form on VectorDeals (compiled=False)")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec!r}, seed={self.seed!r})"
