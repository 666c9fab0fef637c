"""Duplicate boards on the batched engine, and which engine an evaluation plays on.

:func:`batched_player` is a :data:`~.boards.PlayFn` that plays deal-mode boards on
:class:`~barbu_env.vector.VectorDeals` (:func:`barbu_env.vector.duplicate.play_games`): every seating of a
contract's boards at once, the compiled heuristic for heuristic seats, ``RandomAgent``'s own draws (seeded by
:func:`~.boards.game_seed`, as the env runner seeds its agents) for random seats, and one batched network call
per step for greedy checkpoint agents (:meth:`~barbu_env.agents.neural.NeuralAgent.card_actions`), whose other
decisions (doubling) go to their heuristic or random fallback as in the env, and for greedy SB3 models, every
decision theirs (:meth:`~barbu_env.wrappers.sb3.ModelAgent.card_actions`). Every game then has the scores it
has through ``barbu_env.env``, so the per-board numbers are those of the env runner (:mod:`.runner`).

:func:`select_engine` picks the engine of ``engine="auto"``: batched when the evaluation is in deal mode,
under rules the batched engine plays (:func:`barbu_env.vector.check_rules`, numba installed) and every agent has
a batched form (:func:`seat_player`); the env runner otherwise. Match mode (declarations, several deals a
board) plays through the env.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, cast

import numpy as np

from ..agents import Agent, HeuristicAgent, RandomAgent
from .boards import Board, Game, PlayFn, Seating
from .config import EvalConfig
from .pool import in_processes

if TYPE_CHECKING:
    from ..vector.duplicate import CardPolicy, Player

#: ``engine`` values: ``auto`` (batched where possible), ``batched``, ``python`` (through ``barbu_env.env``).
ENGINES = ("auto", "batched", "python")
#: Boards played per :func:`~barbu_env.vector.duplicate.play_games` call (a progress step).
CHUNK = 2000
#: The fewest boards a worker process plays at a time (fewer games than a batch of the engine waste its width).
PART = 1000


def seat_player(agent: Agent, doubling: bool = False, declaring: bool = False) -> Player | None:
    """What plays ``agent``'s seats in ``play_games``: ``"heuristic"``, ``"random"``, the agent itself (a greedy
    checkpoint agent whose fallback is one of those and whose doubles, if ``doubling`` is on, and declarations, if
    ``declaring``, are the fallback's: a ``CardPolicy``), a greedy SB3 model (a ``CardPolicy`` without a fallback:
    every decision its own), or None: no batched form. Deal-mode boards name their contract, so no one declares
    there."""
    if type(agent) is HeuristicAgent:
        return "heuristic"
    if type(agent) is RandomAgent:
        return "random"
    if agent.name == "sb3" and getattr(agent, "greedy", False):
        return cast("CardPolicy", agent)
    if (agent.name == "neural" and getattr(agent, "greedy", False) and agent.fallback_spec in ("heuristic", "random")
            and not getattr(agent, "endgame", 0)
            and not (doubling and "double" in getattr(agent, "bidding_roles", ()))
            and not (declaring and "declare" in getattr(agent, "bidding_roles", ()))):  # fmt: skip
        return cast("CardPolicy", agent)
    return None


def batched_unavailable(cfg: EvalConfig, agents: Sequence[Agent]) -> str | None:
    """Why ``cfg`` cannot play on the batched engine (``agents``: its agents, built), or None when it can."""
    from ..vector import check_rules
    from ..vector.backend import numba_available

    if cfg.mode != "deal":
        return "match mode plays through the env (the batched engine plays deal-mode boards)"
    if not numba_available():
        return "numba is not installed (pip install barbu_env[fast])"
    try:
        check_rules(cfg.make_rules())
    except ValueError as e:
        return str(e)
    doubling = cfg.make_rules().doubling != "off"
    for spec, agent in zip(cfg.agents, agents):
        if seat_player(agent, doubling) is None:
            return (f"agent {spec!r} has no batched form (batched: heuristic, random, checkpoints with greedy=true, "
                    "a heuristic or random fallback and no endgame search, and with doubling on, the fallback's "
                    "doubles; greedy sb3 models)")  # fmt: skip
    return None


def select_engine(cfg: EvalConfig, engine: str, agents: Sequence[Agent]) -> tuple[str, str]:
    """``(engine played: "batched" or "python", why)`` for ``engine`` (one of :data:`ENGINES`); ``ValueError``
    for an unknown engine, or ``"batched"`` where the evaluation has no batched form (naming why)."""
    if engine not in ENGINES:
        raise ValueError(f"bad engine {engine!r}: expected one of {list(ENGINES)}")
    if engine == "python":
        return "python", "asked for"
    why = batched_unavailable(cfg, agents)
    if why is None:
        return "batched", "VectorDeals: compiled heuristic, seeded random draws, batched networks"
    if engine == "batched":
        raise ValueError(f"engine 'batched' cannot play this evaluation: {why}")
    return "python", why


def _worker_player(cfg: EvalConfig) -> PlayFn:
    """A worker process's :func:`batched_player`, with ``cfg``'s agents built there."""
    from ..agents import make

    return batched_player(cfg, [make(spec) for spec in cfg.agents])


def _play_part(play: PlayFn, task: tuple[Sequence[Board], Sequence[Seating]]) -> list[tuple[Board, list[Game]]]:
    return list(play(*task))


def batched_player(cfg: EvalConfig, agents: Sequence[Agent], batch: int = 2048, workers: int = 1) -> PlayFn:
    """A :data:`~.boards.PlayFn` playing ``cfg``'s deal-mode boards on the batched engine (``agents``: built from
    ``cfg.agents``, each with a :func:`seat_player`), up to :data:`CHUNK` boards per batch run; ``batch``: games
    stepped at once. With ``workers`` > 1 the boards are cut into parts of at least :data:`PART` boards, played by
    that many processes (each building the agents once); a board's games are the same whichever part it is in (random
    seats draw from per-game seeds, and a network's choice on a row never depends on the other rows)."""
    from ..vector.duplicate import game_seeds, play_games

    rules = cfg.make_rules()
    players: list[Player] = []
    for spec, a in zip(cfg.agents, agents):
        p = seat_player(a, rules.doubling != "off")
        if p is None:
            raise ValueError(f"agent {spec!r} has no batched form")
        players.append(p)
    draws = any(p == "random" or getattr(p, "fallback_spec", None) == "random" for p in players)

    def play(boards: Sequence[Board], seats: Sequence[Seating]) -> Iterator[tuple[Board, list[Game]]]:
        if workers > 1 and len(boards) > PART:
            size = min(CHUNK, max(PART, -(-len(boards) // (2 * workers))))  # about two parts a worker
            parts = [(boards[i : i + size], seats) for i in range(0, len(boards), size)]
            for done in in_processes(min(workers, len(parts)), _worker_player, (cfg,), _play_part, parts):
                yield from done
            return
        rows = [[players[a] for a in seating] for seating in seats]  # one list per seating, shared by its games
        n = len(seats)
        for start in range(0, len(boards), CHUNK):
            chunk = boards[start : start + CHUNK]
            seeds = None
            if draws:  # game_seed(seed, contract, board, seating, seat), as the env runner seeds its agents
                seeds = np.zeros((len(chunk) * n, 4), np.uint64)
                contract_of = np.array([b.contract_idx for b in chunk])
                index = np.array([b.index for b in chunk])
                for ci in np.unique(contract_of).tolist():
                    at = np.flatnonzero(contract_of == ci)
                    seeds[(at[:, None] * n + np.arange(n)).ravel()] = game_seeds(cfg.seed, ci, index[at], n)
            scores = play_games(
                rules,
                np.array([b.hands for b in chunk], np.uint64).repeat(n, axis=0),
                [b.declarer for b in chunk for _ in seats],
                [b.text for b in chunk for _ in seats],
                rows * len(chunk),
                seeds,
                batch,
            )
            for b, g in zip(chunk, scores.reshape(len(chunk), n, 4).tolist()):
                yield b, [Game(seating, s) for seating, s in zip(seats, g)]

    return play
