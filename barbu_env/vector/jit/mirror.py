"""The env's compiled copy of one deal (:class:`..single.Mirror`): its buffer layout and kernels.

The batch-1 state, the tables, the packed-words scratch and the legal words live in one byte buffer
(laid out by ``single._layout``), so each call unboxes one array; the kernels rebuild the views inside.
"""

from __future__ import annotations

import numpy as np

from ...actions import NUM_ACTIONS
from ...observation import OBS_SIZE
from ..core import CARD_SEAT_FIELDS, INT_SEAT_FIELDS, SCALAR_FIELDS, WORD_FIELDS
from ..encode import NUM_WORDS
from ..tables import OVER, U64
from .common import (
    AVAIL_DECL,
    AVAIL_NAMES,
    CONTRACT,
    DECLARER,
    FANTAN_RANK,
    HANDS,
    LEADER,
    MUST_DOUBLE,
    PHASE,
    PLAYABLE,
    TO_MOVE,
    TRUMP,
    U0,
    Blocks,
    kernel,
)
from .obs import _mask_row, _obs_row
from .rules import _apply_game, _clear_game, _is_legal, _legal_game

#: int64 words of the buffer's header: byte offsets of the blocks that follow (0..5 the state blocks, 6..12
#: the ``jit_tables`` tables, 13 the packed words, 14 the legal words), from 16 (rows, columns) of each table.
HEADER = 32
H_TABLES, H_WORDS, H_LEGAL, H_SHAPE = 6, 13, 14, 16
NC, NI, NW, NS = len(CARD_SEAT_FIELDS), len(INT_SEAT_FIELDS), len(WORD_FIELDS), len(SCALAR_FIELDS)
#: The fields of :func:`mirror_load`'s set-up vector, in order.
INIT_FIELDS = ("hand0", "hand1", "hand2", "hand3", "phase", "to_move", "declarer", "leader", "contract", "trump",
               "fantan_rank", "must_double", "avail_decl", "avail_names", "playable")  # fmt: skip
#: Byte offset of the scores block (int64 [4]: contract + settlement once the deal is over, R8.1) in the header.
H_SCORES = 5


@kernel(inline="always")
def _table(buf: np.ndarray, h: np.ndarray, i: int) -> np.ndarray:
    """Table ``i`` of ``jit_tables`` (int64 [rows, columns]) in the buffer."""
    rows, cols = h[H_SHAPE + 2 * i], h[H_SHAPE + 2 * i + 1]
    o = h[H_TABLES + i]
    return buf[o : o + 8 * rows * cols].view(np.int64).reshape((rows, cols))


@kernel()
def _views(buf: np.ndarray) -> tuple:
    """``(st, tb, words, legal)``: the state blocks and tables as the kernels above take them, the packed-words
    scratch (uint64 [1, NUM_WORDS]) and the legal words of the seat on move (uint64 [2])."""
    h = buf[: 8 * HEADER].view(np.int64)
    c4 = buf[h[0] : h[0] + 8 * NC * 4].view(np.uint64).reshape((1, NC, 4))
    i4 = buf[h[1] : h[1] + 8 * NI * 4].view(np.int64).reshape((1, NI, 4))
    w = buf[h[2] : h[2] + 8 * NW].view(np.uint64).reshape((NW, 1))
    sc = buf[h[3] : h[3] + 8 * NS].view(np.int64).reshape((NS, 1))
    hb = buf[h[4] : h[4] + 1].view(np.bool_)
    scores = buf[h[H_SCORES] : h[H_SCORES] + 32].view(np.int64).reshape((1, 4))
    kint = _table(buf, h, 0)
    kcard = _table(buf, h, 1).view(np.uint64)
    kpts, pos, fpts, decl = _table(buf, h, 2), _table(buf, h, 3), _table(buf, h, 4), _table(buf, h, 5)
    flags = _table(buf, h, 6)[0]
    words = buf[h[H_WORDS] : h[H_WORDS] + 8 * NUM_WORDS].view(np.uint64).reshape((1, NUM_WORDS))
    legal = buf[h[H_LEGAL] : h[H_LEGAL] + 16].view(np.uint64)
    return (c4, i4, w, sc, hb, scores), (kint, kcard, kpts, pos, fpts, decl, flags), words, legal


@kernel()
def _emit(st: Blocks, tb: Blocks, words: np.ndarray, legal: np.ndarray, row: np.ndarray, mask: np.ndarray) -> int:
    """The legal words (``legal[0]``, ``legal[1]``), mask and observation of the seat on move; returns that
    seat, or -1 once the deal is over."""
    if st[3][PHASE, 0] == OVER:
        legal[0] = U0
        legal[1] = U0
        return -1
    low, high = legal[:1], legal[1:]
    _legal_game(st, tb, 0, low, high)
    _mask_row(low, high, 0, True, mask.reshape((1, NUM_ACTIONS)))
    s = st[3][TO_MOVE, 0]
    _obs_row(st, tb, 0, s, words, row.reshape((1, OBS_SIZE)))
    return s


@kernel()
def mirror_load(buf: np.ndarray, init: np.ndarray, row: np.ndarray, mask: np.ndarray) -> int:
    """A fresh deal from ``init`` (int64, :data:`INIT_FIELDS`); then the seat on move as :func:`mirror_step`."""
    st, tb, words, legal = _views(buf)
    c4, w, sc = st[0], st[2], st[3]
    _clear_game(st, 0)
    for q in range(4):
        c4[0, HANDS, q] = U64(init[q])
    sc[PHASE, 0], sc[TO_MOVE, 0], sc[DECLARER, 0], sc[LEADER, 0] = init[4], init[5], init[6], init[7]
    sc[CONTRACT, 0], sc[TRUMP, 0], sc[FANTAN_RANK, 0], sc[MUST_DOUBLE, 0] = init[8], init[9], init[10], init[11]
    sc[AVAIL_DECL, 0], sc[AVAIL_NAMES, 0] = init[12], init[13]
    w[PLAYABLE, 0] = U64(init[14])
    return _emit(st, tb, words, legal, row, mask)


@kernel()
def mirror_step(buf: np.ndarray, row: np.ndarray, mask: np.ndarray, a: int) -> int:
    """Apply action ``a`` of the seat on move, then write the legal words, ``mask`` (int8 [NUM_ACTIONS]) and
    ``row`` (float32 [OBS_SIZE]) of the seat now on move. Returns that seat, -1 once the deal is over, -2
    (nothing applied) if ``a`` is illegal."""
    st, tb, words, legal = _views(buf)
    if st[3][PHASE, 0] == OVER or not _is_legal(legal[:1], legal[1:], 0, a):
        return -2
    _apply_game(st, tb, 0, a)
    return _emit(st, tb, words, legal, row, mask)


@kernel()
def mirror_observe(buf: np.ndarray, row: np.ndarray, s: int) -> None:
    """``row``: the observation of seat ``s``."""
    st, tb, words, _ = _views(buf)
    _obs_row(st, tb, 0, s, words, row.reshape((1, OBS_SIZE)))
