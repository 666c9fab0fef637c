"""Resampled hidden hands for game rows of the batched engine: PIMC's sampler (``agents.pimc.sample_hands``) for
many states at once (numba).

For the seat on move of each row, the cards it cannot see (the other seats' hands) are shuffled and dealt back to
the other seats with their hand sizes, in seat order; a deal giving a seat a card it has shown it cannot hold
(``State.excluded``: voids, trump duties, heart leads, forced passes; RULES.md R5, R7) is drawn again, up to
``tries`` times, then the row keeps its true hands. Accepted deals are uniform over the consistent deals.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .core import COLUMNS

HANDS, EXCLUDED, TO_MOVE = COLUMNS["hands"], COLUMNS["excluded"], COLUMNS["to_move"]


@njit(cache=True)
def _resample(x: np.ndarray, seed: int, tries: int) -> None:  # pragma: no cover - compiled
    np.random.seed(seed)  # numba's own generator: the draws are a function of the seed
    cards = np.empty(52, np.int64)
    for g in range(x.shape[0]):
        me = x[g, TO_MOVE]
        n = 0
        sizes = np.zeros(4, np.int64)
        for s in range(4):
            if s != me:
                h = x[g, HANDS + s]
                for c in range(52):
                    if (h >> c) & 1:
                        cards[n] = c
                        n += 1
                        sizes[s] += 1
        for _ in range(tries):
            for i in range(n - 1, 0, -1):  # Fisher-Yates from the row's draws
                j = int(np.random.random() * (i + 1))
                cards[i], cards[j] = cards[j], cards[i]
            new = np.zeros(4, np.int64)
            k = 0
            ok = True
            for s in range(4):
                if s == me:
                    continue
                m = 0
                for _ in range(sizes[s]):
                    m |= 1 << cards[k]
                    k += 1
                if m & x[g, EXCLUDED + s]:
                    ok = False
                    break
                new[s] = m
            if ok:
                for s in range(4):
                    if s != me:
                        x[g, HANDS + s] = new[s]
                break


def resample_hands(rows: np.ndarray, rng: np.random.Generator, tries: int = 16) -> np.ndarray:
    """A copy of the game rows ``rows`` (``int64 [G, NUM_COLUMNS]``) whose hands other than the seat on move's are
    redealt at random, consistently with what that seat knows (see the module docstring)."""
    out = np.array(rows, np.int64, order="C", copy=True)
    _resample(out, int(rng.integers(2**31)), tries)
    return out


__all__ = ["resample_hands"]
