"""PIMC card play for many game rows at once: ``agents.pimc``'s search (heuristic rollouts) on the batched engine.

For the seat on move of each row, ``samples`` worlds are redealt consistently with what it knows
(:func:`.worlds.resample_hands`, PIMC's sampler), every legal move is played out in every world by the compiled
heuristic (:class:`.rollout.Rollouts`), and the move with the best total own score is kept, ties going to the
heuristic's own move and then to the lowest action id, as :class:`~barbu_env.agents.pimc.PIMCAgent` breaks them.
Given the same worlds it makes the agent's decisions (``tests/test_pimc_rollouts.py``); its draws differ from the
agent's. ``training/rollout_q.py`` seats it as an opponent (``p_pimc_deal``).
"""

from __future__ import annotations

import numpy as np

from .core import COLUMNS
from .rollout import Rollouts
from .worlds import resample_hands

TO_MOVE = COLUMNS["to_move"]


def pimc_totals(rollouts: Rollouts, worlds: list[np.ndarray], mask: np.ndarray, threads: int = 1) -> np.ndarray:
    """``int64 [G, A]``: for each row and legal action (``mask`` ``[G, A]``, the legal actions of the seat on move),
    the seat's deal score summed over ``worlds`` (each ``int64 [G, NUM_COLUMNS]``: the rows with their hands
    redealt) after that action then heuristic play; 0 for illegal actions."""
    per, acts = np.nonzero(mask)
    rows = np.concatenate([w[per] for w in worlds])
    scores = rollouts.play_out(rows, np.tile(acts, len(worlds)), threads)
    seat = np.tile(worlds[0][per, TO_MOVE], len(worlds))
    own = scores[np.arange(rows.shape[0]), seat].reshape(len(worlds), -1).sum(0)
    totals = np.zeros(mask.shape, np.int64)
    totals[per, acts] = own
    return totals


def pimc_choice(totals: np.ndarray, mask: np.ndarray, heuristic: np.ndarray) -> np.ndarray:
    """``int64 [G]``: the legal action of best total per row; the heuristic's action where it ties for the best."""
    value = np.where(mask.astype(bool), totals, np.iinfo(np.int64).min)
    best = value.max(1)
    rows = np.arange(mask.shape[0])
    return np.where(value[rows, heuristic] >= best, heuristic, value.argmax(1))


def pimc_actions(rollouts: Rollouts, rows: np.ndarray, mask: np.ndarray, heuristic: np.ndarray, samples: int,
                 rng: np.random.Generator, threads: int = 1) -> np.ndarray:  # fmt: skip
    """``int64 [G]``: PIMC's card decision (``samples`` worlds from ``rng``) for the seat on move of each of the game
    rows ``rows`` (``int64 [G, NUM_COLUMNS]``), whose legal actions are ``mask`` and heuristic actions
    ``heuristic``."""
    if samples < 1:
        raise ValueError(f"PIMC needs samples >= 1 worlds, got {samples}")
    worlds = [resample_hands(rows, rng) for _ in range(samples)]
    return pimc_choice(pimc_totals(rollouts, worlds, mask, threads), mask, heuristic)


__all__ = ["pimc_actions", "pimc_choice", "pimc_totals"]
