"""Observation kernels: each game's observation row (packed into ``uint64`` words, then expanded) and
action mask, and the batch kernels :func:`observe`, :func:`observe_rows`, :func:`observe_packed`, :func:`masks` and
:func:`random_actions`.

The binary entries are packed into :data:`~..encode.NUM_WORDS` words per game at their offsets of
``observation.BLOCKS`` (:mod:`..encode`) and expanded in the same pass, so each ``float32`` row is written
once. The rows equal ``observation.encode(deal, seat)`` (tests/test_vector.py).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ...actions import DECLARE_BASE, NUM_ACTIONS
from ...observation import BLOCKS, NUM_PART, OBS_SIZE, POINT_SCALE
from ..encode import DONE_ABS, FILLED, NUM_WORDS, SH
from ..tables import OVER, SUIT, U64
from .common import (
    AVAIL_NAMES,
    CAPTURED,
    CONTRACT,
    DECLARER,
    DOUBLE_STEP,
    DOUBLES,
    EXCLUDED,
    F_DECK,
    F_HAND_SIZE,
    F_RULES_WORD,
    FANTAN_RANK,
    FIN_PLACE,
    HANDS,
    HEARTS_BROKEN,
    K_NAME,
    LEADER,
    MUST_DOUBLE,
    PASSES,
    PHASE,
    PLAYABLE,
    PLAYED,
    PLAYED_BY,
    POINTS,
    TO_MOVE,
    TRICK_BY,
    TRICK_NO,
    TRICKS_WON,
    TRUMP,
    U0,
    U1,
    _krow,
    _popcount,
    _rot4,
    helper,
    parallel,
)

# observation offsets (observation.BLOCKS); the small blocks as laid out by encode.pack
OFF = {name: BLOCKS[name][0] for name in ("hand", "played", "trick", "captured", "unseen", "excluded", "void",
                                           "leader", "fantan_playable", "finished")}  # fmt: skip
O_HAND, O_PLAYED, O_TRICK, O_CAPTURED, O_UNSEEN, O_EXCLUDED = (OFF[n] for n in (
    "hand", "played", "trick", "captured", "unseen", "excluded"))  # fmt: skip
O_SMALL_A, O_SMALL_C, O_PLAYABLE, O_SMALL_F = OFF["void"], OFF["leader"], OFF["fantan_playable"], OFF["finished"]
S_TRICK_NO, S_CONTRACT, S_TRUMP, S_FANTAN_RANK, S_DECLARER = (SH[n] for n in (
    "trick_no", "contract", "trump", "fantan_rank", "declarer"))  # fmt: skip
S_TO_MOVE, S_PHASE, S_DOUBLES, S_DOUBLED_DONE, S_MUST_DOUBLE, S_AVAILABLE, S_HEARTS_BROKEN, S_RULES = (SH[n] for n in (
    "to_move", "phase", "doubles", "doubled_done", "must_double", "available", "hearts_broken", "rules"))  # fmt: skip
LAST_WORD_BITS = FILLED - 64 * (NUM_WORDS - 1)


@helper
def _put(words: np.ndarray, g: int, v: np.uint64, off: int) -> None:
    """OR the bits of ``v`` (at most 64 wide) into game g's packed words at entry ``off``."""
    i, sh = off >> 6, off & 63
    words[g, i] |= v << U64(sh)
    if sh:
        words[g, i + 1] |= v >> U64(64 - sh)


@helper
def _pack(x: np.ndarray, t: np.ndarray, g: int, s: int, words: np.ndarray, num: np.ndarray, at: int) -> None:
    """The observation of seat s in game g (rotated to s, R1.3), packed: binary entries into ``words[g]``
    (uint64 [B, NUM_WORDS], entry i = bit i % 64 of word i // 64), the numeric deal part into
    ``num[g, at : at + 16]``."""
    for i in range(NUM_WORDS):
        words[g, i] = U0
    if s < 0:
        for i in range(16):
            num[g, at + i] = 0.0
        return
    hand = U64(x[g, HANDS + s])
    open_ = U64(t[F_DECK]) & ~U64(x[g, PLAYED]) & ~hand
    _put(words, g, hand, O_HAND)
    _put(words, g, open_, O_UNSEEN)
    void = 0
    dbl = 0
    fin = 0
    hn = float(t[F_HAND_SIZE])
    for r in range(4):
        q = (s + r) & 3
        _put(words, g, U64(x[g, PLAYED_BY + q]), O_PLAYED + 52 * r)
        _put(words, g, U64(x[g, TRICK_BY + q]), O_TRICK + 52 * r)
        _put(words, g, U64(x[g, CAPTURED + q]), O_CAPTURED + 52 * r)
        excl = U64(x[g, EXCLUDED + q])
        _put(words, g, excl, O_EXCLUDED + 52 * r)
        held = hand if r == 0 else open_ & ~excl  # void: no open card the seat may hold
        for j in range(4):
            if held & SUIT[j] == 0:
                void |= 1 << (4 * r + j)
        dbl |= _rot4(x[g, DOUBLES + q], s) << (4 * r)
        fp = x[g, FIN_PLACE + q]
        if fp >= 0:
            fin |= 1 << (4 * r + fp)
        # numeric part: tricks won, cards left, running points, passes (R5.3, R7.3)
        num[g, at + r] = x[g, TRICKS_WON + q] / hn
        num[g, at + 4 + r] = _popcount(U64(x[g, HANDS + q])) / hn
        num[g, at + 8 + r] = x[g, POINTS + q] / POINT_SCALE
        num[g, at + 12 + r] = x[g, PASSES + q] / hn
    k, phase = x[g, CONTRACT], x[g, PHASE]
    a = void | 1 << (S_TRICK_NO + min(x[g, TRICK_NO], t[F_HAND_SIZE] - 1))
    if k >= 0:
        a |= 1 << (S_CONTRACT + t[_krow(k) + K_NAME])
    if x[g, TRUMP] >= 0:
        a |= 1 << (S_TRUMP + x[g, TRUMP])
    if x[g, FANTAN_RANK] >= 0:
        a |= 1 << (S_FANTAN_RANK + x[g, FANTAN_RANK])
    a |= 1 << (S_DECLARER + ((x[g, DECLARER] - s) & 3))
    c = 1 << ((x[g, LEADER] - s) & 3)
    if phase != OVER:
        c |= 1 << (S_TO_MOVE + ((x[g, TO_MOVE] - s) & 3))
    c |= 1 << (S_PHASE + phase)
    c |= dbl << S_DOUBLES
    c |= _rot4(DONE_ABS[x[g, DECLARER], x[g, DOUBLE_STEP]], s) << S_DOUBLED_DONE
    c |= _rot4(x[g, MUST_DOUBLE], s) << S_MUST_DOUBLE
    c |= x[g, AVAIL_NAMES] << S_AVAILABLE
    if x[g, HEARTS_BROKEN] != 0:
        c |= 1 << S_HEARTS_BROKEN
    _put(words, g, U64(a), O_SMALL_A)
    _put(words, g, U64(c), O_SMALL_C)
    _put(words, g, U64(x[g, PLAYABLE]), O_PLAYABLE)
    _put(words, g, U64(fin | (t[F_RULES_WORD] << S_RULES)), O_SMALL_F)


@helper
def _mask_row(low: np.uint64, high: np.uint64, g: int, out: np.ndarray) -> None:
    """Row g of ``out`` (int8 [B, NUM_ACTIONS]): the legal words ``low``, ``high`` as a mask."""
    for a in range(DECLARE_BASE):
        out[g, a] = (low >> U64(a)) & U1
    for a in range(DECLARE_BASE, NUM_ACTIONS):
        out[g, a] = (high >> U64(a - DECLARE_BASE)) & U1


@helper
def _obs_row(x: np.ndarray, t: np.ndarray, g: int, s: int, words: np.ndarray, obs: np.ndarray) -> None:
    """Row g of ``obs`` (float32 [B, OBS_SIZE]) is the observation of seat
    ``s`` (zero if -1), written whole, via the packed words ``words[g]``."""
    _pack(x, t, g, s, words, obs, NUM_PART)
    for i in range(NUM_WORDS - 1):  # the binary entries, 64 per word
        w = words[g, i]
        for b in range(64):
            obs[g, 64 * i + b] = np.float32((w >> U64(b)) & U1)
    w = words[g, NUM_WORDS - 1]
    for b in range(LAST_WORD_BITS):
        obs[g, 64 * (NUM_WORDS - 1) + b] = np.float32((w >> U64(b)) & U1)
    for i in range(FILLED, NUM_PART):  # match-only blocks
        obs[g, i] = 0.0
    for i in range(NUM_PART + 16, OBS_SIZE):
        obs[g, i] = 0.0


@parallel
def observe(x: np.ndarray, t: np.ndarray, seat: np.ndarray, low: np.ndarray, high: np.ndarray, words: np.ndarray,
            obs: np.ndarray, mask: np.ndarray) -> None:  # fmt: skip
    """Row g of ``obs`` (float32 [B, OBS_SIZE]) is the observation of
    ``seat[g]`` (zero if -1), written whole; row g of ``mask`` the legal actions if that seat is on move.
    ``words`` (uint64 [B, NUM_WORDS]) is scratch, left holding the packed observations."""
    for g in prange(seat.shape[0]):
        s = seat[g]
        _obs_row(x, t, g, s, words, obs)
        on_move = s >= 0 and s == x[g, TO_MOVE] and x[g, PHASE] != OVER
        _mask_row(low[g] if on_move else U0, high[g] if on_move else U0, g, mask)


@parallel
def observe_rows(x: np.ndarray, t: np.ndarray, games: np.ndarray, low: np.ndarray, high: np.ndarray,
                 words: np.ndarray, obs: np.ndarray, mask: np.ndarray) -> None:  # fmt: skip
    """Row i of ``obs`` (float32 [n, OBS_SIZE]) and ``mask`` (int8 [n, NUM_ACTIONS]): the observation and legal
    actions of the seat on move in game ``games[i]`` (zero rows for a game over); ``words``: scratch
    (uint64 [n, NUM_WORDS])."""
    for i in prange(games.shape[0]):
        g = games[i]
        on = x[g, PHASE] != OVER
        _obs_row(x[g : g + 1], t, 0, x[g, TO_MOVE] if on else -1, words[i : i + 1], obs[i : i + 1])
        _mask_row(low[g] if on else U0, high[g] if on else U0, i, mask)


@parallel
def observe_packed(x: np.ndarray, t: np.ndarray, seat: np.ndarray, low: np.ndarray, high: np.ndarray,
                   words: np.ndarray, num: np.ndarray, mask: np.ndarray) -> None:  # fmt: skip
    """The packed observations of ``seat`` (``words`` uint64 [B, NUM_WORDS], ``num`` float32 [B, 16]) and
    the masks of the games whose seat on move is ``seat[g]`` (``mask``)."""
    for g in prange(seat.shape[0]):
        s = seat[g]
        _pack(x, t, g, s, words, num, 0)
        _mask_row(low[g] if s >= 0 else U0, high[g] if s >= 0 else U0, g, mask)


@parallel
def masks(low: np.ndarray, high: np.ndarray, out: np.ndarray) -> None:
    """``out`` (int8 [B, NUM_ACTIONS]): the masks of the legal words."""
    for g in prange(low.shape[0]):
        _mask_row(low[g], high[g], g, out)


@parallel
def random_actions(mask: np.ndarray, u: np.ndarray, out: np.ndarray) -> None:
    """``backend.random_choice`` given the uniforms ``u``: with ``n`` the row's sum and
    ``pick = uint8(u * n)``, the first action whose running sum exceeds ``pick`` (0 if none)."""
    for g in prange(mask.shape[0]):
        n = 0
        for a in range(mask.shape[1]):  # vectorised
            n += mask[g, a]
        pick = np.uint8(u[g] * n)
        out[g] = 0
        run = 0
        for a in range(mask.shape[1]):
            run += mask[g, a]
            if run > pick:
                out[g] = a
                break
