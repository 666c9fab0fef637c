"""Resampled hidden hands for game rows of the batched engine: PIMC's sampler (``agents.pimc.sample_hands``) for
many states at once (numba).

For the seat on move of each row, the cards it cannot see (the other seats' hands) are shuffled and dealt back to
the other seats with their hand sizes, in seat order; a deal giving a seat a card it has shown it cannot hold
(``State.excluded``: voids, trump duties, heart leads, forced passes; RULES.md R5, R7) is drawn again, up to
``tries`` times (accepted deals are uniform over the consistent deals). After ``tries`` rejections the row is dealt
by the engine's sampler (``engine.infostate.sample_hidden``): the cards in random order, each to a seat that may
hold it, drawn in proportion to the room left in the hands, keeping a consistent completion possible (Hall's
condition over the three hidden hands). The true hands are never used beyond their sizes and union.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .core import COLUMNS

HANDS, EXCLUDED, TO_MOVE = COLUMNS["hands"], COLUMNS["excluded"], COLUMNS["to_move"]


@njit(cache=True)
def _feasible(counts: np.ndarray, caps: np.ndarray) -> bool:  # pragma: no cover - compiled
    """Hall's condition: for every set S of the three hidden seats, the cards allowed only in S fit in S's room;
    ``counts[t]``: the cards still to deal whose allowed seats are the mask ``t``."""
    if counts[0] > 0:
        return False
    for s in range(1, 8):
        need = 0
        for t in range(1, 8):
            if t & ~s == 0:
                need += counts[t]
        room = 0
        for i in range(3):
            if (s >> i) & 1:
                room += caps[i]
        if need > room:
            return False
    return True


@njit(cache=True)
def _deal_sequentially(  # pragma: no cover - compiled
    x: np.ndarray, g: int, me: int, cards: np.ndarray, n: int, sizes: np.ndarray
) -> None:
    """Row ``g``'s hidden cards ``cards[:n]`` dealt one by one, in random order, to the hidden seats (``sizes``: their
    hand sizes), each card to an allowed seat drawn in proportion to its room left among those keeping the rest
    feasible (``sample_hidden``'s procedure, numba's draws)."""
    others = np.empty(3, np.int64)
    k = 0
    for s in range(4):
        if s != me:
            others[k] = s
            k += 1
    caps = np.empty(3, np.int64)
    for i in range(3):
        caps[i] = sizes[others[i]]
    allowed = np.empty(n, np.int64)
    counts = np.zeros(8, np.int64)
    for j in range(n):
        t = 0
        for i in range(3):
            if not (x[g, EXCLUDED + others[i]] >> cards[j]) & 1:
                t |= 1 << i
        allowed[j] = t
        counts[t] += 1
    if not _feasible(counts, caps):
        return  # (a state reached by play is always feasible; the row is left as it is)
    for i in range(n - 1, 0, -1):
        j = int(np.random.random() * (i + 1))
        cards[i], cards[j] = cards[j], cards[i]
        allowed[i], allowed[j] = allowed[j], allowed[i]
    new = np.zeros(3, np.int64)
    for j in range(n):
        t = allowed[j]
        counts[t] -= 1
        tried = 0  # seats tried for this card (mask)
        while True:
            total = 0
            for i in range(3):
                if (t >> i) & 1 and caps[i] > 0 and not (tried >> i) & 1:
                    total += caps[i]
            if total == 0:
                return  # unreachable when the state was feasible before this card
            u = np.random.random() * total
            pick = -1
            for i in range(3):
                if (t >> i) & 1 and caps[i] > 0 and not (tried >> i) & 1:
                    pick = i
                    if u < caps[i]:
                        break
                    u -= caps[i]
            caps[pick] -= 1
            if _feasible(counts, caps):
                new[pick] |= 1 << cards[j]
                break
            caps[pick] += 1
            tried |= 1 << pick
    for i in range(3):
        x[g, HANDS + others[i]] = new[i]


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
        done = False
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
                done = True
                break
        if not done:
            _deal_sequentially(x, g, me, cards, n, sizes)


def resample_hands(rows: np.ndarray, rng: np.random.Generator, tries: int = 16) -> np.ndarray:
    """A copy of the game rows ``rows`` (``int64 [G, NUM_COLUMNS]``) whose hands other than the seat on move's are
    redealt at random, consistently with what that seat knows (see the module docstring)."""
    out = np.array(rows, np.int64, order="C", copy=True)
    _resample(out, int(rng.integers(2**31)), tries)
    return out


__all__ = ["resample_hands"]
