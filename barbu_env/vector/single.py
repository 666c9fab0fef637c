"""One deal as a compiled mirror of the engine: the AEC env's observations and masks by numba (RULES.md R3-R9).

:class:`Mirror` holds the :class:`~.core.State` of a single game (batch 1) and the per-rules tables of the
numba backend (:mod:`.jit`) in one byte buffer, so that each kernel call takes one array for all of them
(numba unboxes every array of an argument tuple on each call: the state and table tuples cost ~0.6 us, one
buffer ~0.15 us). ``load(deal)`` copies a fresh ``Deal``; ``step(action)`` applies the action with the
kernels of :mod:`.jit` and, in the same call, writes the observation row and the action mask of the seat
now on move into :attr:`Mirror.row` / :attr:`Mirror.mask`; ``observe(seat)`` writes another seat's row.
Each is the array of ``observation.encode`` / ``Deal.legal_actions`` (the tests compare them).

Importing this module imports numba (``pip install barbu_env[fast]``): the env imports it only when it
builds a mirror. Kernels are compiled on first use and cached on disk (``cache=True``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
from numba import njit

from ..actions import DECLARE_BASE, NUM_ACTIONS
from ..engine.deal import Deal
from ..observation import NUM_PART, OBS_SIZE, names_bits
from ..rules import Rules
from . import jit
from .core import CARD_SEAT_FIELDS, INT_SEAT_FIELDS, SCALAR_FIELDS, SCALAR_START, WORD_FIELDS
from .encode import FILLED, NUM_WORDS
from .jit import (
    AVAIL_DECL,
    AVAIL_NAMES,
    CONTRACT,
    DECLARER,
    FANTAN_RANK,
    FIN_PLACE,
    HANDS,
    LAST_WORD_BITS,
    LEADER,
    MUST_DOUBLE,
    PHASE,
    PLAYABLE,
    TO_MOVE,
    TRUMP,
    _apply_game,
    _is_legal,
    _legal_game,
    _mask_row,
    _pack,
    jit_tables,
)
from .tables import DECLARE, OVER, U64, Tables, build_tables


def jit_source_hash() -> str:
    """A hash of ``jit.py``'s text. The kernels below compile ``jit``'s helpers into their own disk cache, which
    numba invalidates only when *this* file changes: :data:`JIT_SOURCE` must follow ``jit.py`` (and editing
    it invalidates the cache). While they differ, :data:`STALE` is true and the env does not use this module."""
    return hashlib.sha256(Path(jit.__file__).read_bytes()).hexdigest()[:16]


JIT_SOURCE = "69f8d7cc03e5a604"
STALE = jit_source_hash() != JIT_SOURCE
I64 = np.int64
U0 = U64(0)
U1 = U64(1)
#: int64 words of the buffer's header: offsets (bytes) and shapes of the blocks that follow.
HEADER = 32
_NC, _NI, _NW, _NS = len(CARD_SEAT_FIELDS), len(INT_SEAT_FIELDS), len(WORD_FIELDS), len(SCALAR_FIELDS)
# header entries: byte offsets of 0..5 the state blocks, 6..12 the tables, 13 the packed-words scratch, 14 the
# legal words; from 16, (rows, columns) of each table (``jit_tables``; flags: (1, 11))
H_TABLES, H_WORDS, H_LEGAL, H_SHAPE = 6, 13, 14, 16
#: The fields of :meth:`Mirror.load`'s set-up vector, in order.
INIT_FIELDS = ("hand0", "hand1", "hand2", "hand3", "phase", "to_move", "declarer", "leader", "contract", "trump",
               "fantan_rank", "must_double", "avail_decl", "avail_names", "playable")  # fmt: skip


def _layout(tables: tuple[np.ndarray, ...]) -> np.ndarray:
    """The buffer (uint8): its header (byte offsets of the blocks, table shapes), the zero state, the tables."""
    sizes = [8 * _NC * 4, 8 * _NI * 4, 8 * _NW, 8 * _NS, 8, 8 * 4]  # cards4, ints4, words, scalars, hb, scores
    sizes += [a.nbytes for a in tables] + [8 * NUM_WORDS, 16]
    offs, o = [], 8 * HEADER
    for s in sizes:
        offs.append(o)
        o += (s + 7) // 8 * 8
    buf = np.zeros(o, np.uint8)
    head = buf[: 8 * HEADER].view(I64)
    head[: len(offs)] = offs
    for i, a in enumerate(tables):
        head[H_SHAPE + 2 * i : H_SHAPE + 2 * i + 2] = a.reshape(-1, a.shape[-1]).shape
    for a, off in zip(tables, offs[H_TABLES : H_TABLES + 7], strict=True):
        buf[off : off + a.nbytes] = np.ascontiguousarray(a).view(np.uint8).reshape(-1)
    return buf


@njit(cache=True, _nrt=False, inline="always")
def _table(buf: np.ndarray, h: np.ndarray, i: int) -> np.ndarray:
    """Table ``i`` of ``jit_tables`` (int64 [rows, columns]) in the buffer."""
    rows, cols = h[H_SHAPE + 2 * i], h[H_SHAPE + 2 * i + 1]
    o = h[H_TABLES + i]
    return buf[o : o + 8 * rows * cols].view(np.int64).reshape((rows, cols))


@njit(cache=True, _nrt=False)
def _views(buf: np.ndarray) -> tuple:
    """``(st, tb, words, legal)``: the state blocks and tables as :mod:`.jit` takes them, the packed-words
    scratch (uint64 [1, NUM_WORDS]) and the legal words of the seat on move (uint64 [2])."""
    h = buf[: 8 * HEADER].view(np.int64)
    c4 = buf[h[0] : h[0] + 8 * _NC * 4].view(np.uint64).reshape((1, _NC, 4))
    i4 = buf[h[1] : h[1] + 8 * _NI * 4].view(np.int64).reshape((1, _NI, 4))
    w = buf[h[2] : h[2] + 8 * _NW].view(np.uint64).reshape((_NW, 1))
    sc = buf[h[3] : h[3] + 8 * _NS].view(np.int64).reshape((_NS, 1))
    hb = buf[h[4] : h[4] + 1].view(np.bool_)
    scores = buf[h[5] : h[5] + 32].view(np.int64).reshape((1, 4))
    kint = _table(buf, h, 0)
    kcard = _table(buf, h, 1).view(np.uint64)
    kpts, pos, fpts, decl = _table(buf, h, 2), _table(buf, h, 3), _table(buf, h, 4), _table(buf, h, 5)
    flags = _table(buf, h, 6)[0]
    words = buf[h[H_WORDS] : h[H_WORDS] + 8 * NUM_WORDS].view(np.uint64).reshape((1, NUM_WORDS))
    legal = buf[h[H_LEGAL] : h[H_LEGAL] + 16].view(np.uint64)
    return (c4, i4, w, sc, hb, scores), (kint, kcard, kpts, pos, fpts, decl, flags), words, legal


@njit(cache=True, _nrt=False)
def _row(st: tuple, tb: tuple, words: np.ndarray, s: int, row: np.ndarray) -> None:
    """``row`` (float32 [OBS_SIZE]): the observation of seat ``s`` (``jit.observe`` for one game)."""
    obs = row.reshape((1, OBS_SIZE))
    _pack(st, tb, 0, s, words, obs, NUM_PART)
    for i in range(NUM_WORDS - 1):  # the binary entries, 64 per word
        x = words[0, i]
        for b in range(64):
            obs[0, 64 * i + b] = np.float32((x >> U64(b)) & U1)
    x = words[0, NUM_WORDS - 1]
    for b in range(LAST_WORD_BITS):
        obs[0, 64 * (NUM_WORDS - 1) + b] = np.float32((x >> U64(b)) & U1)
    for i in range(FILLED, NUM_PART):  # match-only blocks
        obs[0, i] = 0.0
    for i in range(NUM_PART + 16, OBS_SIZE):
        obs[0, i] = 0.0


@njit(cache=True, _nrt=False)
def _emit(st: tuple, tb: tuple, words: np.ndarray, legal: np.ndarray, row: np.ndarray, mask: np.ndarray) -> int:
    """The legal words (``legal[0]``, ``legal[1]``: ``jit.legal_words``), mask and observation of the seat on
    move; returns that seat, or -1 once the deal is over."""
    if st[3][PHASE, 0] == OVER:
        legal[0] = U0
        legal[1] = U0
        return -1
    low, high = legal[:1], legal[1:]
    _legal_game(st, tb, 0, low, high)
    _mask_row(low, high, 0, True, mask.reshape((1, NUM_ACTIONS)))
    s = st[3][TO_MOVE, 0]
    _row(st, tb, words, s, row)
    return s


@njit(cache=True, _nrt=False)
def load(buf: np.ndarray, init: np.ndarray, row: np.ndarray, mask: np.ndarray) -> int:
    """A fresh deal from ``init`` (int64, :data:`INIT_FIELDS`); then :func:`_emit`."""
    st, tb, words, legal = _views(buf)
    c4, i4, w, sc, hb, scores = st
    c4[:] = U0
    i4[:] = 0
    i4[0, FIN_PLACE, :] = -1
    w[:] = U0
    for i in range(_NS):
        sc[i, 0] = SCALAR_START[i]
    hb[0] = False
    scores[:] = 0
    for q in range(4):
        c4[0, HANDS, q] = U64(init[q])
    sc[PHASE, 0], sc[TO_MOVE, 0], sc[DECLARER, 0], sc[LEADER, 0] = init[4], init[5], init[6], init[7]
    sc[CONTRACT, 0], sc[TRUMP, 0], sc[FANTAN_RANK, 0], sc[MUST_DOUBLE, 0] = init[8], init[9], init[10], init[11]
    sc[AVAIL_DECL, 0], sc[AVAIL_NAMES, 0] = init[12], init[13]
    w[PLAYABLE, 0] = U64(init[14])
    return _emit(st, tb, words, legal, row, mask)


@njit(cache=True, _nrt=False)
def step(buf: np.ndarray, row: np.ndarray, mask: np.ndarray, a: int) -> int:
    """Apply action ``a`` of the seat on move (``jit.apply`` for one game), then :func:`_emit`. Returns the
    seat now on move, -1 once the deal is over, -2 (nothing applied) if ``a`` is illegal."""
    st, tb, words, legal = _views(buf)
    if st[3][PHASE, 0] == OVER or not _is_legal(legal[:1], legal[1:], 0, a):
        return -2
    _apply_game(st, tb, 0, a)
    return _emit(st, tb, words, legal, row, mask)


@njit(cache=True, _nrt=False)
def observe(buf: np.ndarray, row: np.ndarray, s: int) -> None:
    """``row``: the observation of seat ``s``."""
    st, tb, words, _ = _views(buf)
    _row(st, tb, words, s, row)


class Mirror:
    """A compiled copy of one deal under ``rules`` (classic Barbu, the rules :func:`.tables.check_rules`
    accepts; a ``ValueError`` otherwise). :attr:`row` (float32 [OBS_SIZE]) and :attr:`mask` (int8 [87]) hold
    the observation and mask of :attr:`seat`, the seat on move (-1 once the deal is over), after
    :attr:`steps` actions since :meth:`load`; :meth:`observe` writes other seats' rows into :attr:`other`."""

    def __init__(self, rules: Rules) -> None:
        self.tables: Tables = build_tables(rules)
        self._buf = _layout(jit_tables(self.tables))
        self.row = np.zeros(OBS_SIZE, np.float32)
        self.other = np.zeros(OBS_SIZE, np.float32)
        self.mask = np.zeros(NUM_ACTIONS, np.int8)
        self._init = np.zeros(len(INIT_FIELDS), I64)
        self.seat = -1
        self.steps = 0
        step(self._buf, self.row, self.mask, -1)  # load (or compile) the kernels now, not in the first deal
        observe(self._buf, self.other, 0)
        load(self._buf, self._init, self.row, self.mask)

    def load(self, deal: Deal) -> None:
        """Copy ``deal``, which must be fresh (nothing played or declared after its set-up, R2.3)."""
        rules = self.tables.rules
        if deal.history or (deal.rules is not rules and deal.rules != rules):
            raise ValueError("Mirror.load takes a fresh deal (empty history) under the mirror's rules")
        decl = 0
        if deal.phase == DECLARE:
            for a in deal.legal_actions():
                decl |= 1 << (a - DECLARE_BASE)
        k = -1 if deal.contract is None else self.tables.names.index(deal.contract.name)
        h = deal.hands
        self._init[:] = (h[0], h[1], h[2], h[3], deal.phase, deal.to_move, deal.declarer, deal.leader, k,
                         deal.trump, deal.fantan_rank, deal.must_double, decl, names_bits(deal.available),
                         deal.playable)  # fmt: skip
        self.seat = load(self._buf, self._init, self.row, self.mask)
        self.steps = 0

    def step(self, action: int) -> int:
        """Apply ``action``; the seat now on move (-1: over; -2: ``action`` is illegal, nothing changed)."""
        s = step(self._buf, self.row, self.mask, action)
        if s != -2:
            self.seat = s
            self.steps += 1
        return s

    def observe(self, seat: int) -> np.ndarray:
        """The observation of ``seat``, written into :attr:`other` (returned)."""
        observe(self._buf, self.other, seat)
        return self.other
