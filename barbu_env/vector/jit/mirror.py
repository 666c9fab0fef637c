"""The env's compiled copy of one deal (:class:`..single.Mirror`): its buffer layout and kernels.

The batch-1 state row, the legal words of the seat on move, the packed-words scratch and the tables live in
one int64 buffer (:func:`layout`), so each call unboxes one array; the kernels take views of it.
"""

from __future__ import annotations

import numpy as np

from ...actions import NUM_ACTIONS
from ...observation import OBS_SIZE
from ..core import NUM_COLUMNS
from ..encode import NUM_WORDS
from ..tables import OVER, U64
from .common import (
    AVAIL_DECL,
    AVAIL_NAMES,
    CONTRACT,
    DECLARER,
    FANTAN_RANK,
    HANDS,
    I64,
    LEADER,
    MUST_DOUBLE,
    PHASE,
    PLAYABLE,
    TO_MOVE,
    TRUMP,
    kernel,
)
from .obs import _mask_row, _obs_row
from .rules import _apply_game, _clear_game, _is_legal, _legal_game

#: Offsets in the buffer: the state row (``core.COLUMNS``), the legal words (low, high), the packed words, the tables.
B_LEGAL = NUM_COLUMNS
B_WORDS = B_LEGAL + 2
B_TABLES = B_WORDS + NUM_WORDS
#: The fields of :func:`mirror_load`'s set-up vector, in order.
INIT_FIELDS = ("hand0", "hand1", "hand2", "hand3", "phase", "to_move", "declarer", "leader", "contract", "trump",
               "fantan_rank", "must_double", "avail_decl", "avail_names", "playable")  # fmt: skip


def layout(tables: np.ndarray) -> np.ndarray:
    """The buffer of a mirror under ``tables`` (``jit_tables``): a zero state row, legal words and packed words,
    then the tables."""
    buf = np.zeros(B_TABLES + tables.shape[0], I64)
    buf[B_TABLES:] = tables
    return buf


@kernel()
def _emit(buf: np.ndarray, row: np.ndarray, mask: np.ndarray) -> int:
    """The legal words, mask and observation of the seat on move; returns that seat, or -1 once the deal is over."""
    x, t = buf[:NUM_COLUMNS].reshape((1, NUM_COLUMNS)), buf[B_TABLES:]
    if x[0, PHASE] == OVER:
        buf[B_LEGAL] = 0
        buf[B_LEGAL + 1] = 0
        return -1
    low, high = _legal_game(x, t, 0)
    buf[B_LEGAL] = I64(low)
    buf[B_LEGAL + 1] = I64(high)
    _mask_row(low, high, 0, mask.reshape((1, NUM_ACTIONS)))
    s = x[0, TO_MOVE]
    words = buf[B_WORDS:B_TABLES].view(np.uint64).reshape((1, NUM_WORDS))
    _obs_row(x, t, 0, s, words, row.reshape((1, OBS_SIZE)))
    return s


@kernel()
def mirror_load(buf: np.ndarray, init: np.ndarray, row: np.ndarray, mask: np.ndarray) -> int:
    """A fresh deal from ``init`` (int64, :data:`INIT_FIELDS`); then the seat on move as :func:`mirror_step`."""
    x = buf[:NUM_COLUMNS].reshape((1, NUM_COLUMNS))
    _clear_game(x, 0)
    for q in range(4):
        x[0, HANDS + q] = init[q]
    x[0, PHASE], x[0, TO_MOVE], x[0, DECLARER], x[0, LEADER] = init[4], init[5], init[6], init[7]
    x[0, CONTRACT], x[0, TRUMP], x[0, FANTAN_RANK], x[0, MUST_DOUBLE] = init[8], init[9], init[10], init[11]
    x[0, AVAIL_DECL], x[0, AVAIL_NAMES] = init[12], init[13]
    x[0, PLAYABLE] = init[14]
    return _emit(buf, row, mask)


@kernel()
def mirror_step(buf: np.ndarray, row: np.ndarray, mask: np.ndarray, a: int) -> int:
    """Apply action ``a`` of the seat on move, then write the legal words, ``mask`` (int8 [NUM_ACTIONS]) and
    ``row`` (float32 [OBS_SIZE]) of the seat now on move. Returns that seat, -1 once the deal is over, -2
    (nothing applied) if ``a`` is illegal."""
    if buf[PHASE] == OVER or not _is_legal(U64(buf[B_LEGAL]), U64(buf[B_LEGAL + 1]), a):
        return -2
    _apply_game(buf[:NUM_COLUMNS].reshape((1, NUM_COLUMNS)), buf[B_TABLES:], 0, a)
    return _emit(buf, row, mask)


@kernel()
def mirror_observe(buf: np.ndarray, row: np.ndarray, s: int) -> None:
    """``row``: the observation of seat ``s``."""
    words = buf[B_WORDS:B_TABLES].view(np.uint64).reshape((1, NUM_WORDS))
    _obs_row(buf[:NUM_COLUMNS].reshape((1, NUM_COLUMNS)), buf[B_TABLES:], 0, s, words, row.reshape((1, OBS_SIZE)))
