"""Batched observations and action masks, bit for bit those of ``observation.encode`` and ``Deal.legal_actions``.

The binary part of the observation is first packed, every block at its documented offset, into 18
``uint64`` words per game (52-bit card masks: hand, played, trick, captured, unseen, excluded; then the
small one-hot blocks and the Fantan table), then unpacked into the ``float32`` buffer in one pass.
Seat rotation to the observer is an index array ``(seat + r) % 4`` (R1.3). Deal mode only: the
match blocks stay 0, as ``encode(deal, seat)`` leaves them without a match.
"""

from __future__ import annotations

import numpy as np

from ..actions import NUM_ACTIONS
from ..observation import BLOCKS, NUM_PART, OBS_SIZE, POINT_SCALE
from .core import I64, State, popcount
from .tables import OVER, SUIT, U64, Tables, xp

#: Packed words per game: the binary entries 0 .. FILLED - 1 (all blocks before the match-only ``remaining``).
FILLED = BLOCKS["remaining"][0]
NUM_WORDS = (FILLED + 63) // 64
PACKED_BYTES = (FILLED + 7) // 8
SEATS = np.arange(4)
SUIT4 = SUIT[:4]
#: ``DONE_ABS[declarer, step]``: absolute seats that took their doubling decision after ``step`` decisions.
DONE_ABS = np.array([[sum(1 << ((d + 1 + i) & 3) for i in range(k)) for k in range(5)] for d in range(4)], np.int64)
#: The small blocks travel in four values, each laid out from its first block's offset.
SMALL = (
    ("void", ("void", "trick_no", "contract", "trump", "fantan_rank", "declarer")),
    ("leader", ("leader", "to_move", "phase", "doubles", "doubled_done", "must_double", "available", "hearts_broken")),
    ("fantan_playable", ("fantan_playable",)),
    ("finished", ("finished", "rules", "extra_deal", "is_match")),
)
SH = {b: BLOCKS[b][0] - BLOCKS[first][0] for first, blocks in SMALL for b in blocks}
#: Card blocks read from the rotated ``State.cards4`` (order of ``core.CARD_SEAT_FIELDS``): block name per row.
CARD_ROWS = (("hand", 1), ("played", 4), ("trick", 4), ("captured", 4), ("excluded", 4))


def _placements() -> tuple[tuple[str, int, int, int, int], ...]:
    """(value key, row, column, word, shift) for each 52-bit card block and small value, in offset order."""
    out = []
    for k, (name, rows) in enumerate(CARD_ROWS):
        for r in range(rows):
            out.append(("card", k, r, BLOCKS[name][0] + 52 * r, 52))
    out.append(("unseen", 0, 0, BLOCKS["unseen"][0], 52))
    for i, (first, blocks) in enumerate(SMALL):
        last = blocks[-1]
        out.append(("small", i, 0, BLOCKS[first][0], BLOCKS[last][0] + BLOCKS[last][1] - BLOCKS[first][0]))
    return tuple(out)


PLACEMENTS = _placements()


_BASES: dict[int, np.ndarray] = {}


def _rotation_index(s: np.ndarray) -> np.ndarray:
    """Flat indices into a ``[B, 5, 4]`` block that read row k, relative seat r at absolute ``(s + r) % 4``."""
    n = s.shape[0]
    base = _BASES.get(n)
    if base is None:
        base = _BASES[n] = (xp.arange(n) * 20)[:, None, None] + (xp.arange(5) * 4)[None, :, None]
    return base + ((s[:, None, None] + SEATS[None, None, :]) & 3)


def rot4(m: np.ndarray, s: np.ndarray) -> np.ndarray:
    """A 4-bit absolute-seat mask seen from seat ``s``: bit r = absolute seat ``(s + r) % 4``."""
    return ((m | (m << 4)) >> s) & 15


def pack(st: State, t: Tables, seat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The observation of ``seat[g]`` in each game, packed: ``uint64 [NUM_WORDS, B]`` words holding entries
    ``0 .. FILLED - 1`` (entry i = bit i % 64 of word i // 64) and the ``float64 [B, 16]`` numeric deal part."""
    n_games = seat.shape[0]
    none = seat < 0
    s = xp.maximum(seat, 0)
    flat = _rotation_index(s)  # rotate the per-seat blocks to the observer (R1.3)
    cards = xp.take(st.cards4.reshape(-1), flat).transpose(1, 2, 0).copy()  # [5, 4, B]
    ints = xp.take(st.ints4.reshape(-1), flat)  # [B, 5, 4]
    hand = cards[0, 0]
    open_ = t.deck & ~st.played & ~hand
    # void: own row from the own hand; others: no open card outside what they have shown they lack
    x = open_[:, None] & ~cards[4].T
    x[:, 0] = hand
    void = (x[:, :, None] & SUIT4[None, None, :]) == 0
    void = xp.packbits(void.reshape(n_games, 16), axis=1, bitorder="little").view("<u2")[:, 0].astype(I64)
    k = st.contract
    declared = k >= 0
    a = void | xp.left_shift(1, SH["trick_no"] + xp.minimum(st.trick_no, t.hand_size - 1))
    a |= xp.where(declared, xp.left_shift(1, SH["contract"] + t.name_idx[xp.maximum(k, 0)]), 0)
    a |= xp.where(st.trump >= 0, xp.left_shift(1, SH["trump"] + st.trump), 0)
    a |= xp.where(st.fantan_rank >= 0, xp.left_shift(1, SH["fantan_rank"] + st.fantan_rank), 0)
    a |= xp.left_shift(1, SH["declarer"] + ((st.declarer - s) & 3))
    phase = st.phase
    c = xp.left_shift(1, (st.leader - s) & 3)
    c |= xp.where(phase != OVER, xp.left_shift(1, SH["to_move"] + ((st.to_move - s) & 3)), 0)
    c |= xp.left_shift(1, SH["phase"] + phase)
    dbl = rot4(ints[:, 3], s[:, None]) << (4 * SEATS[None, :])
    c |= (dbl[:, 0] | dbl[:, 1] | dbl[:, 2] | dbl[:, 3]) << SH["doubles"]
    c |= rot4(DONE_ABS[st.declarer, st.double_step], s) << SH["doubled_done"]
    c |= rot4(st.must_double, s) << SH["must_double"]
    c |= st.avail_names << SH["available"]
    c |= st.hearts_broken.astype(I64) << SH["hearts_broken"]
    fp = ints[:, 4]
    fin = xp.where(fp >= 0, xp.left_shift(1, 4 * SEATS[None, :] + xp.maximum(fp, 0)), 0).sum(axis=1)
    small = (a.astype(U64), c.astype(U64), st.playable, (fin | (t.rules_word << SH["rules"])).astype(U64))
    # pack every binary block at its offset into 64-bit words, then unpack them in one pass
    w = xp.zeros((NUM_WORDS, n_games), U64)
    for key, i, r, off, width in PLACEMENTS:
        v = cards[i, r] if key == "card" else open_ if key == "unseen" else small[i]
        word, sh = divmod(off, 64)
        w[word] |= v << U64(sh)
        if sh + width > 64:
            w[word + 1] |= v >> U64(64 - sh)
    # numeric part: tricks won, cards left, running points, passes (R5.3, R7.3); match part stays 0
    hn = float(t.hand_size)
    num = xp.empty((n_games, 16))
    num[:, 0:4] = ints[:, 0] / hn
    num[:, 4:8] = popcount(cards[0]).T / hn
    num[:, 8:12] = ints[:, 1] / POINT_SCALE
    num[:, 12:16] = ints[:, 2] / hn
    if none.any():
        w[:, none] = 0
        num[none] = 0.0
    return w, num


def observe_into(st: State, t: Tables, seat: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Fill ``out[B, OBS_SIZE]`` with the observation of ``seat[g]`` in each game (rows of seat -1 are 0).
    The entries of the match-only blocks are left as they are (see :func:`zero_tail`)."""
    w, num = pack(st, t, seat)
    out[:, :FILLED] = xp.unpackbits(w.T.copy().view(np.uint8), axis=1, count=FILLED, bitorder="little")
    out[:, NUM_PART : NUM_PART + 16] = num
    return out


def packed_bytes(w: np.ndarray) -> np.ndarray:
    """``uint8 [B, PACKED_BYTES]`` from packed words: entry i of the observation is bit ``i % 8``
    (little-endian bit order) of byte ``i // 8``, for i < FILLED."""
    return w.T.copy().view(np.uint8)[:, :PACKED_BYTES]


def unpack_observations(bits: np.ndarray, numeric: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The ``float32 [B, OBS_SIZE]`` observations from :meth:`VectorDeals.observe_packed`'s ``(bits, numeric)``.
    On a GPU the same is ``((bits[..., None] >> arange(8)) & 1).flatten(1)[:, :FILLED]`` for the binary
    entries ``0 .. FILLED - 1``, ``numeric`` at ``NUM_PART .. NUM_PART + 15`` and zeros elsewhere."""
    n = bits.shape[0]
    if out is None:
        out = np.zeros((n, OBS_SIZE), np.float32)
    else:
        zero_tail(out)
    out[:, :FILLED] = np.unpackbits(bits, axis=1, count=FILLED, bitorder="little")
    out[:, NUM_PART : NUM_PART + 16] = numeric
    return out


def masks_into(low: np.ndarray, high: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Fill ``out[B, NUM_ACTIONS]`` (int8) from the legal words of :func:`core.legal_words`."""
    words = xp.stack([low, high], axis=1)
    bits = xp.unpackbits(words.view(np.uint8).reshape(-1, 16), axis=1, bitorder="little")
    out[:, :53] = bits[:, :53]
    out[:, 53:NUM_ACTIONS] = bits[:, 64 : 64 + NUM_ACTIONS - 53]
    return out


def zero_tail(out: np.ndarray) -> None:
    """Zero the entries :func:`observe_into` never writes (the match blocks)."""
    out[:, FILLED:NUM_PART] = 0.0
    out[:, NUM_PART + 16 : OBS_SIZE] = 0.0


__all__ = [
    "FILLED",
    "PACKED_BYTES",
    "masks_into",
    "observe_into",
    "pack",
    "packed_bytes",
    "unpack_observations",
    "zero_tail",
]
