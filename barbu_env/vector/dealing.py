"""Random deals of the batched engine as a counter-based stream (R1.4: a shuffled deck, dealt evenly).

Deal ``k`` of a stream depends only on the stream's 64-bit key and on ``k``: its random numbers are the
SplitMix64 outputs number ``SLOTS * k + 1 ...`` of the key, so the numpy code here and the kernels
(``jit.rules._start_game``) deal exactly the same cards, one game at a time or in a batch, in any order.
``VectorDeals`` gives game ``g`` of ``B`` its ``n``-th deal as deal ``n * B + g``: no game waits for another.

Draw ``i`` of deal ``k``: slot 0 picks the declarer (its top two bits), slots ``1 .. N-1`` are the
Fisher-Yates swaps of the ``N``-card deck (ascending card ids): for ``i = N-1 .. 1``, position ``i`` swaps
with ``j = ((draw >> 32) * (i + 1)) >> 32`` (uniform on ``0..i`` up to ``(i + 1) / 2**32``). Seat ``s``
gets positions ``s * n .. s * n + n - 1`` (``n`` cards a hand).
"""

from __future__ import annotations

import numpy as np

U64 = np.uint64
#: SplitMix64's increment and mixing constants.
GAMMA, MIX1, MIX2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
#: Draws reserved per deal (a 52-card deck uses 52 of them).
SLOTS = 64


def stream_key(seed: int | None) -> int:
    """The 64-bit key of the stream of ``seed`` (``None``: fresh entropy), via numpy's ``SeedSequence``."""
    return int(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0])


def draws(key: int, k: np.ndarray, count: int) -> np.ndarray:
    """``uint64 [n, count]``: draws ``0 .. count-1`` of deals ``k`` (int array [n]) of stream ``key``."""
    n = k.astype(U64)[:, None] * U64(SLOTS) + np.arange(1, count + 1, dtype=U64)[None, :]
    z = U64(key) + n * U64(GAMMA)  # uint64 arithmetic wraps, as SplitMix64 wants
    z = (z ^ (z >> U64(30))) * U64(MIX1)
    z = (z ^ (z >> U64(27))) * U64(MIX2)
    return z ^ (z >> U64(31))


def deal_stream(key: int, k: np.ndarray, deck_ids: np.ndarray, hand_size: int,
                declarer: int = -1) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Deals ``k`` (int array [n]) of stream ``key``: ``(hands uint64 [n, 4], declarer int64 [n])``, the
    declarers drawn (``declarer < 0``) or all ``declarer``."""
    size, n = deck_ids.shape[0], k.shape[0]
    d = draws(key, k, size)
    order = np.tile(deck_ids.astype(np.int64), (n, 1))
    rows = np.arange(n)
    for i in range(size - 1, 0, -1):
        j = (((d[:, i] >> U64(32)) * U64(i + 1)) >> U64(32)).astype(np.intp)
        held = order[:, i].copy()
        order[:, i] = order[rows, j]
        order[rows, j] = held
    hands = np.bitwise_or.reduce(np.left_shift(U64(1), order.reshape(n, 4, hand_size).astype(U64)), axis=2)
    drawn = (d[:, 0] >> U64(62)).astype(np.int64)
    return hands, drawn if declarer < 0 else np.full(n, declarer, np.int64)
