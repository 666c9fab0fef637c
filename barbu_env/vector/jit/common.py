"""What every kernel module shares: the decorators, the columns of the state and the offsets of the
tables (:func:`jit_tables`), and bit helpers.

The kernels take the state as ``State.data`` (int64 [B, NUM_COLUMNS], one row per game, :mod:`..core`) and
the per-rules tables as ``jit_tables(build_tables(rules))`` (one int64 array); each per-game function
handles game ``g`` of a batch and takes those two arrays (numba reference-counts every array argument of a
call, so a call costs in proportion to the arrays it takes). Card sets are stored in the int64 columns
with their bits (cards 0..51: never the sign bit) and read as ``U64(x[g, col])``. Every kernel is compiled
on first use and cached on disk (``cache=True``); the cache is invalidated from
:data:`barbu_env.vector.jit.FINGERPRINT`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit

from ..core import COLUMNS
from ..tables import NUM_DECL, U64, Tables

#: Every kernel and helper of the package, in definition order (their disk cache is managed together).
DISPATCHERS: list[Any] = []


def kernel(**options: Any) -> Callable[[Callable[..., Any]], Any]:
    """``numba.njit(cache=True, nogil=True, **options)``, the function recorded in :data:`DISPATCHERS` (without the
    GIL: a trainer's second thread runs torch while its first runs the engine)."""

    def wrap(fn: Callable[..., Any]) -> Any:
        d = njit(cache=True, nogil=True, **options)(fn)
        DISPATCHERS.append(d)
        return d

    return wrap


#: Per-game functions, called from the kernels.
helper = kernel()
#: Kernels whose per-game loop is a ``prange`` (run on ``numba.set_num_threads`` threads).
parallel = kernel(parallel=True)

I64 = np.int64
U0 = U64(0)
U1 = U64(1)
# first columns of the state's fields (core.COLUMNS; a per-seat field: + absolute seat)
HANDS, PLAYED_BY, TRICK_BY, CAPTURED, EXCLUDED, PLAYED, TRICK_MASK, PLAYABLE = (COLUMNS[n] for n in (
    "hands", "played_by", "trick_by", "captured", "excluded", "played", "trick_mask", "playable"))  # fmt: skip
TRICKS_WON, POINTS, PASSES, DOUBLES, FIN_PLACE, SCORES = (COLUMNS[n] for n in (
    "tricks_won", "points", "passes", "doubles", "fin_place", "scores"))  # fmt: skip
PHASE, TO_MOVE, DECLARER, LEADER, LED, BEST, WINNER, TOP_TRUMP, TRICK_LEN, TRICK_NO = (
    COLUMNS[n] for n in ("phase", "to_move", "declarer", "leader", "led", "best", "winner", "top_trump",
                         "trick_len", "trick_no"))  # fmt: skip
CONTRACT, TRUMP, FANTAN_RANK, DOUBLE_STEP, MUST_DOUBLE, NUM_FIN, AVAIL_DECL, AVAIL_NAMES, PASS_RUN, HEARTS_BROKEN = (
    COLUMNS[n] for n in ("contract", "trump", "fantan_rank", "double_step", "must_double", "num_fin",
                         "avail_decl", "avail_names", "pass_run", "hearts_broken"))  # fmt: skip
# the tables (jit_tables): the rule switches, then the declaration columns, then one row per contract
(F_UNTIL_BROKEN, F_MUST_LEAD_TRUMP, F_OVERTRUMP, F_FREE_PASS, F_ACE_AGAIN, F_DOUBLING_OFF, F_DECLARER_ONLY, F_SPLIT,
 F_HAND_SIZE, F_DECK, F_RULES_WORD, F_CARD_POINTS) = range(12)  # fmt: skip
#: Offsets of the declaration columns (contract row, trump, Fantan rank of each of the 26 declarations).
T_DECL_K = 12
T_DECL_TRUMP = T_DECL_K + NUM_DECL
T_DECL_RANK = T_DECL_TRUMP + NUM_DECL
#: Offset of contract row 0; row k starts at ``T_ROWS + k * K_WIDTH`` (:func:`_krow`).
T_ROWS = T_DECL_RANK + NUM_DECL
#: Card-point masks per contract at most; tricks per deal at most.
MAX_CARD_POINTS, MAX_TRICKS = 8, 13
# entries of a contract row: flags and counts, the end mask, the card-point masks and their points, the
# points of each trick position, the Fantan points by finishing place
K_POSITIVE, K_FANTAN, K_HEARTS_RULE, K_FORCE_KING, K_PER_TRICK, K_RAVAGE, K_TOTAL, K_NAME, K_END = range(9)
K_CP_MASK = 9
K_CP_PTS = K_CP_MASK + MAX_CARD_POINTS
K_POS_VALS = K_CP_PTS + MAX_CARD_POINTS
K_FANTAN_PTS = K_POS_VALS + MAX_TRICKS
K_WIDTH = K_FANTAN_PTS + 4
M1, M2, M4, H01 = U64(0x5555555555555555), U64(0x3333333333333333), U64(0x0F0F0F0F0F0F0F0F), U64(0x0101010101010101)


def jit_tables(t: Tables) -> np.ndarray:
    """The tables of ``t`` as the kernels read them: one int64 array, the rule switches at ``F_*``, the
    declarations at ``T_DECL_*``, contract row k at ``T_ROWS + k * K_WIDTH`` (entries ``K_*``; masks as
    their bits)."""
    k, j = len(t.names), t.cp_mask.shape[1]
    if j > MAX_CARD_POINTS or t.hand_size > MAX_TRICKS:
        raise ValueError(f"{j} card-point masks, {t.hand_size} tricks: the kernels' tables hold at most "
                         f"{MAX_CARD_POINTS} and {MAX_TRICKS}")  # fmt: skip
    out = np.zeros(T_ROWS + k * K_WIDTH, I64)
    out[: F_CARD_POINTS + 1] = [
        t.until_broken,
        t.must_lead_trump,
        t.overtrump,
        t.fantan_free_pass,
        t.ace_again,
        t.doubling_off,
        t.declarer_only,
        t.split,
        t.hand_size,
        int(t.deck),
        t.rules_word,
        j,
    ]
    out[T_DECL_K:T_DECL_TRUMP] = t.decl_k
    out[T_DECL_TRUMP:T_DECL_RANK] = t.decl_trump
    out[T_DECL_RANK:T_ROWS] = t.decl_rank
    rows = out[T_ROWS:].reshape(k, K_WIDTH)
    rows[:, :K_END] = np.stack([t.positive, t.fantan, t.hearts_rule, t.force_king, t.per_trick, t.ravage, t.total,
                                t.name_idx], axis=1)  # fmt: skip
    rows[:, K_END] = t.end_mask.view(I64)
    rows[:, K_CP_MASK : K_CP_MASK + j] = t.cp_mask.view(I64)
    rows[:, K_CP_PTS : K_CP_PTS + j] = t.cp_pts
    rows[:, K_POS_VALS : K_POS_VALS + t.hand_size] = t.pos_vals
    rows[:, K_FANTAN_PTS : K_FANTAN_PTS + 4] = t.fantan_pts
    return out


@helper
def _krow(k: int) -> int:
    """Offset of contract row ``k`` in the tables."""
    return T_ROWS + k * K_WIDTH


@helper
def _bit(c: int) -> np.uint64:
    return U1 << U64(c)


@helper
def _popcount(x: np.uint64) -> np.int64:
    """Set bits of a uint64 (SWAR; LLVM turns it into ``popcnt``)."""
    x = x - ((x >> U1) & M1)
    x = (x & M2) + ((x >> U64(2)) & M2)
    x = (x + (x >> U64(4))) & M4
    return I64((x * H01) >> U64(56))


@helper
def _rot4(m: int, s: int) -> int:
    """A 4-bit absolute-seat mask seen from seat ``s`` (R1.3)."""
    return ((m | (m << 4)) >> s) & 15
