"""The seated players of a duplicate batch as one kernel: :func:`seat_actions` (``vector.duplicate``).

Per game, the seat on move is played by the player of its (board, seat): the compiled heuristic, a random
player drawing from its own numpy-compatible generator (:mod:`.nprandom`: ``RandomAgent``'s draws) or a
policy, whose games are handed back to the caller.
"""

from __future__ import annotations

import numpy as np

from ...actions import DECLARE_BASE
from ..tables import FANTAN_PLAY, OVER, PLAY, U64
from .common import PHASE, TO_MOVE, U1, _popcount, helper, kernel
from .heuristic import _heuristic_game
from .nprandom import integers

#: Player kinds of :func:`seat_actions`: heuristic, random, then policy j as ``POLICY + j``.
HEURISTIC, RANDOM, POLICY = 0, 1, 2


@helper
def _nth_legal(low: np.uint64, high: np.uint64, k: int) -> int:
    """The k-th legal action (0-based, ascending) of the legal words ``low`` (actions 0..52) and ``high``."""
    for a in range(DECLARE_BASE):
        if (low >> U64(a)) & U1:
            if k == 0:
                return a
            k -= 1
    for a in range(64):
        if (high >> U64(a)) & U1:
            if k == 0:
                return DECLARE_BASE + a
            k -= 1
    return -1


@kernel()
def seat_actions(x: np.ndarray, t: np.ndarray, hv: np.ndarray, board_of: np.ndarray, kinds: np.ndarray,
                 low: np.ndarray, high: np.ndarray, gens: np.ndarray, actions: np.ndarray,
                 policy: np.ndarray) -> int:  # fmt: skip
    """For each game g not over, the player ``kinds[board_of[g], seat, 0]`` for card decisions (R5, R7) or
    ``kinds[board_of[g], seat, 1]`` for the others (``kinds`` int64 [boards, 4, 2], seat: on move) decides:
    the heuristic writes ``actions[g]``, a random player ``actions[g]`` = its legal actions (ascending)
    ``[integers(n)]`` from generator ``gens[board_of[g], seat]``; ``policy[g]`` is j for policy j, -1 else.
    Returns the number of games handed to policies."""
    handed = 0
    for g in range(board_of.shape[0]):
        policy[g] = -1
        phase = x[g, PHASE]
        if phase == OVER:
            actions[g] = 0
            continue
        b, s = board_of[g], x[g, TO_MOVE]
        k = kinds[b, s, 0 if phase == PLAY or phase == FANTAN_PLAY else 1]
        if k == HEURISTIC:
            actions[g] = _heuristic_game(x, t, hv, g)
        elif k == RANDOM:
            lo, hi = low[g], high[g]
            n = _popcount(lo) + _popcount(hi)
            actions[g] = _nth_legal(lo, hi, integers(gens[b, s], n))
        else:
            actions[g] = 0
            policy[g] = k - POLICY
            handed += 1
    return handed


__all__ = ["HEURISTIC", "POLICY", "RANDOM", "seat_actions"]
