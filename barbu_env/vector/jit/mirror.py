"""The env's compiled copy of one deal (:class:`..single.Mirror`): its buffer layout and kernels.

The batch-1 state row, the legal words of the seat on move, the packed-words scratch, each seat's match blocks
of the observation (float32, constant within a deal: zeros outside a match) and the tables live in one int64
buffer (:func:`layout`), so each call unboxes one array; the kernels take views of it.
"""

from __future__ import annotations

import numpy as np

from ...actions import NUM_ACTIONS
from ...observation import OBS_SIZE, match_spans
from ...rules import Rules
from ..core import NUM_COLUMNS
from ..encode import NUM_WORDS
from ..tables import OVER, U64
from .common import (
    AVAIL_DECL,
    AVAIL_NAMES,
    CONTRACT,
    DECLARER,
    DOUBLES,
    FANTAN_RANK,
    HANDS,
    I64,
    LEADER,
    MUST_DOUBLE,
    PHASE,
    PLAYABLE,
    SCORES,
    TO_MOVE,
    TRUMP,
    kernel,
)
from .heuristic import _heuristic_game
from .obs import _mask_row, _obs_row
from .rules import _apply_game, _clear_game, _contract_scores, _is_legal, _legal_game

#: The two runs of match blocks in the classic observation (``observation.match_spans``): (start, end) each.
(M_A0, M_A1), (M_B0, M_B1) = match_spans(Rules())
#: Match-block entries of one seat's observation.
M_SIZE = M_A1 - M_A0 + M_B1 - M_B0
#: Offsets in the buffer: the state row (``core.COLUMNS``), the legal words (low, high), the packed words, the
#: match blocks (float32 [4, M_SIZE], two per int64), the tables.
B_LEGAL = NUM_COLUMNS
B_WORDS = B_LEGAL + 2
B_MATCH = B_WORDS + NUM_WORDS
B_TABLES = B_MATCH + 4 * M_SIZE // 2
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
def _match_entries(buf: np.ndarray, row: np.ndarray, s: int) -> None:
    """Seat s's match blocks (at ``B_MATCH``) written over their entries of ``row``."""
    m = buf[B_MATCH:B_TABLES].view(np.float32)
    o = s * M_SIZE
    for i in range(M_A1 - M_A0):
        row[M_A0 + i] = m[o + i]
    o += M_A1 - M_A0
    for i in range(M_B1 - M_B0):
        row[M_B0 + i] = m[o + i]


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
    words = buf[B_WORDS:B_MATCH].view(np.uint64).reshape((1, NUM_WORDS))
    _obs_row(x, t, 0, s, words, row.reshape((1, OBS_SIZE)))
    _match_entries(buf, row, s)
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
    words = buf[B_WORDS:B_MATCH].view(np.uint64).reshape((1, NUM_WORDS))
    _obs_row(buf[:NUM_COLUMNS].reshape((1, NUM_COLUMNS)), buf[B_TABLES:], 0, s, words, row.reshape((1, OBS_SIZE)))
    _match_entries(buf, row, s)


@kernel()
def mirror_heuristic(buf: np.ndarray, hv: np.ndarray) -> int:
    """The heuristic agent's action for the seat on move (``heuristic.heuristic_actions`` on the batch-1 state;
    ``hv``: ``vector.heuristic.heuristic_tables``), -1 once the deal is over."""
    return _heuristic_game(buf[:NUM_COLUMNS].reshape((1, NUM_COLUMNS)), buf[B_TABLES:], hv, 0)


@kernel()
def mirror_result(buf: np.ndarray, out: np.ndarray) -> None:
    """The finished deal's score sheet into ``out`` (int64 [12]): the contract scores, the doubling settlement
    (R6.5) and each seat's doubles (absolute-seat masks, R6), four entries each. Without a double nothing is
    settled: the scores are the contract scores (an R6.6 split deal's shares too)."""
    x = buf[:NUM_COLUMNS].reshape((1, NUM_COLUMNS))
    doubled = x[0, DOUBLES] | x[0, DOUBLES + 1] | x[0, DOUBLES + 2] | x[0, DOUBLES + 3]
    if doubled == 0:
        for q in range(4):
            out[q] = x[0, SCORES + q]
    else:
        _contract_scores(x, buf[B_TABLES:], 0, out, 0)
    for q in range(4):
        out[4 + q] = x[0, SCORES + q] - out[q]
        out[8 + q] = x[0, DOUBLES + q]
