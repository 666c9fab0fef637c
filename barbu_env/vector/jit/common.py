"""What every kernel module shares: the decorators, the rows of the state blocks, the columns of the
tables (:func:`jit_tables`) and bit helpers.

The kernels take the state as ``State.blocks()`` (:class:`~..core.State`) and the per-rules tables as
``jit_tables(build_tables(rules))``, both tuples of arrays; each per-game function handles game ``g`` of
a batch. Every kernel is compiled on first use and cached on disk (``cache=True``); the cache is
invalidated from :data:`barbu_env.vector.jit.FINGERPRINT`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit

from ..core import CARD_SEAT_FIELDS, INT_SEAT_FIELDS, SCALAR_FIELDS, WORD_FIELDS
from ..tables import U64, Tables

#: Every kernel and helper of the package, in definition order (their disk cache is managed together).
DISPATCHERS: list[Any] = []


def kernel(**options: Any) -> Callable[[Callable[..., Any]], Any]:
    """``numba.njit(cache=True, **options)``, the function recorded in :data:`DISPATCHERS`."""

    def wrap(fn: Callable[..., Any]) -> Any:
        d = njit(cache=True, **options)(fn)
        DISPATCHERS.append(d)
        return d

    return wrap


#: Per-game functions, called from the kernels.
helper = kernel()
#: Kernels whose per-game loop is a ``prange`` (run on ``numba.set_num_threads`` threads).
parallel = kernel(parallel=True)

I64 = np.int64
#: The kernels take the state as ``State.blocks()`` and the tables as :func:`jit_tables` (tuples of arrays).
Blocks = tuple[np.ndarray, ...]
U0 = U64(0)
U1 = U64(1)
# rows of the state blocks (core.State)
HANDS, PLAYED_BY, TRICK_BY, CAPTURED, EXCLUDED = (CARD_SEAT_FIELDS.index(n) for n in (
    "hands", "played_by", "trick_by", "captured", "excluded"))  # fmt: skip
TRICKS_WON, POINTS, PASSES, DOUBLES, FIN_PLACE = (INT_SEAT_FIELDS.index(n) for n in (
    "tricks_won", "points", "passes", "doubles", "fin_place"))  # fmt: skip
PLAYED, TRICK_MASK, PLAYABLE = (WORD_FIELDS.index(n) for n in ("played", "trick_mask", "playable"))
PHASE, TO_MOVE, DECLARER, LEADER, LED, BEST, WINNER, TOP_TRUMP, TRICK_LEN, TRICK_NO = (
    SCALAR_FIELDS.index(n) for n in ("phase", "to_move", "declarer", "leader", "led", "best", "winner", "top_trump",
                                     "trick_len", "trick_no"))  # fmt: skip
CONTRACT, TRUMP, FANTAN_RANK, DOUBLE_STEP, MUST_DOUBLE, NUM_FIN, AVAIL_DECL, AVAIL_NAMES, PASS_RUN = (
    SCALAR_FIELDS.index(n) for n in ("contract", "trump", "fantan_rank", "double_step", "must_double", "num_fin",
                                     "avail_decl", "avail_names", "pass_run"))  # fmt: skip
# columns of the per-contract table ``kint`` and entries of ``flags`` (see :func:`jit_tables`)
K_POSITIVE, K_FANTAN, K_HEARTS_RULE, K_FORCE_KING, K_PER_TRICK, K_RAVAGE, K_TOTAL, K_NAME = range(8)
(F_UNTIL_BROKEN, F_MUST_LEAD_TRUMP, F_OVERTRUMP, F_FREE_PASS, F_ACE_AGAIN, F_DOUBLING_OFF, F_DECLARER_ONLY, F_SPLIT,
 F_HAND_SIZE, F_DECK, F_RULES_WORD) = range(11)  # fmt: skip
M1, M2, M4, H01 = U64(0x5555555555555555), U64(0x3333333333333333), U64(0x0F0F0F0F0F0F0F0F), U64(0x0101010101010101)


def jit_tables(t: Tables) -> tuple[np.ndarray, ...]:
    """The arrays of ``t`` the kernels read: ``(kint [K, 8], kcard [K, 1 + J], kpts [K, J], pos_vals [K, n],
    fantan_pts [K, 4], decl [3, 26], flags [11])`` (kcard: the end mask, then the scoring card masks)."""
    kint = np.stack([t.positive, t.fantan, t.hearts_rule, t.force_king, t.per_trick, t.ravage, t.total, t.name_idx],
                    axis=1).astype(I64)  # fmt: skip
    kcard = np.concatenate([t.end_mask[:, None], t.cp_mask], axis=1).astype(U64)
    decl = np.stack([t.decl_k, t.decl_trump, t.decl_rank]).astype(I64)
    flags = np.array([t.until_broken, t.must_lead_trump, t.overtrump, t.fantan_free_pass, t.ace_again, t.doubling_off,
                      t.declarer_only, t.split, t.hand_size, int(t.deck), t.rules_word], I64)  # fmt: skip
    arrays = (kint, kcard, t.cp_pts.astype(I64), t.pos_vals.astype(I64), t.fantan_pts.astype(I64), decl, flags)
    return tuple(np.ascontiguousarray(a) for a in arrays)


@helper
def _bit(c: int) -> np.uint64:
    return U1 << U64(c)


@helper
def _popcount(x: np.uint64) -> int:
    """Set bits of a uint64 (SWAR; LLVM turns it into ``popcnt``)."""
    x = x - ((x >> U1) & M1)
    x = (x & M2) + ((x >> U64(2)) & M2)
    x = (x + (x >> U64(4))) & M4
    return I64((x * H01) >> U64(56))


@helper
def _rot4(m: int, s: int) -> int:
    """A 4-bit absolute-seat mask seen from seat ``s`` (R1.3)."""
    return ((m | (m << 4)) >> s) & 15
