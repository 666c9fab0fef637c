"""The observation kernel of Barbu King (R11, 3 to 5 seats): one seat's row under ``observation.layout(rules)``
from the fields of an engine ``Deal`` (gathered by :func:`barbu_env.vector.king.king_encode`).

The fields come as one int64 vector (``F_*``: the deal's scalars, then its per-seat lists, ``n`` entries each)
and the layout's block offsets as another (``A_*``, in :data:`OFFSET_BLOCKS` order). The row is what
``observation.encode`` gives without the match blocks (tests compare them on every step).
"""

from __future__ import annotations

import numpy as np

from ...cards import SUIT_MASK
from ...contracts import CONTRACT_NAMES
from ...observation import CARDS, KING_FLAGS, POINT_SCALE, RULE_FLAGS
from ..tables import U64
from .common import _popcount, helper, kernel

#: The deal's fields in the vector: its scalars, then from ``F_SEATS`` the trick's cards and the Fantan
#: finishing order (padded with -1), the hands, cards played, captured, excluded, tricks won, points and passes.
(F_N, F_SEAT, F_PHASE, F_TO_MOVE, F_DECLARER, F_LEADER, F_TRICK_NO, F_NUM_TRICKS, F_CONTRACT, F_FANTAN_RANK,
 F_AVAILABLE, F_HEARTS_BROKEN, F_PLAYABLE, F_RULES, F_KING, F_DECK, F_PLAYED, F_TRICK_LEN,
 F_SEATS) = range(19)  # fmt: skip
#: The blocks whose offsets the kernel takes, in order (``A_*``).
OFFSET_BLOCKS = ("hand", "played", "trick", "captured", "unseen", "excluded", "void", "trick_no", "contract",
                 "fantan_rank", "declarer", "leader", "to_move", "phase", "available", "hearts_broken",
                 "fantan_playable", "finished", "rules", "king", "tricks_won", "cards_left", "points",
                 "passes")  # fmt: skip
(A_HAND, A_PLAYED, A_TRICK, A_CAPTURED, A_UNSEEN, A_EXCLUDED, A_VOID, A_TRICK_NO, A_CONTRACT, A_FANTAN_RANK,
 A_DECLARER, A_LEADER, A_TO_MOVE, A_PHASE, A_AVAILABLE, A_HEARTS_BROKEN, A_PLAYABLE, A_FINISHED, A_RULES, A_KING,
 A_TRICKS_WON, A_CARDS_LEFT, A_POINTS, A_PASSES) = range(len(OFFSET_BLOCKS))  # fmt: skip
SUITS = np.array(SUIT_MASK, np.int64)
NUM_CONTRACTS = len(CONTRACT_NAMES)


@helper
def _bits(out: np.ndarray, off: int, m: int, width: int) -> None:
    """``out[off + i] = 1`` for each set bit i < ``width`` of ``m``."""
    for i in range(width):
        if (m >> i) & 1:
            out[off + i] = 1.0


@kernel()
def king_row(f: np.ndarray, at: np.ndarray, out: np.ndarray) -> None:
    """``out`` (float32 [layout size]): the observation of seat ``f[F_SEAT]`` of the deal ``f`` under the block
    offsets ``at``, the match blocks zero (``observation.encode`` without a match)."""
    out[:] = 0.0
    n, seat = f[F_N], f[F_SEAT]
    trick, fin, hands, played_by = F_SEATS, F_SEATS + n, F_SEATS + 2 * n, F_SEATS + 3 * n
    captured, excluded, tricks_won = F_SEATS + 4 * n, F_SEATS + 5 * n, F_SEATS + 6 * n
    points, passes = F_SEATS + 7 * n, F_SEATS + 8 * n
    hand = f[hands + seat]
    open_ = f[F_DECK] & ~f[F_PLAYED] & ~hand  # the cards another seat may hold, before what it showed (R5.4)
    _bits(out, at[A_HAND], hand, CARDS)
    _bits(out, at[A_UNSEEN], open_, CARDS)
    for r in range(n):
        s = (seat + r) % n
        _bits(out, at[A_PLAYED] + CARDS * r, f[played_by + s], CARDS)
        _bits(out, at[A_CAPTURED] + CARDS * r, f[captured + s], CARDS)
        _bits(out, at[A_EXCLUDED] + CARDS * r, f[excluded + s], CARDS)
        could = hand if r == 0 else open_ & ~f[excluded + s]
        for u in range(4):
            if could & SUITS[u] == 0:
                out[at[A_VOID] + 4 * r + u] = 1.0
    leader = f[F_LEADER]
    for k in range(f[F_TRICK_LEN]):
        out[at[A_TRICK] + CARDS * ((leader + k - seat) % n) + f[trick + k]] = 1.0
    out[at[A_TRICK_NO] + min(f[F_TRICK_NO], f[F_NUM_TRICKS] - 1)] = 1.0
    if f[F_CONTRACT] >= 0:
        out[at[A_CONTRACT] + f[F_CONTRACT]] = 1.0
        if f[F_FANTAN_RANK] >= 0:
            out[at[A_FANTAN_RANK] + f[F_FANTAN_RANK]] = 1.0
    out[at[A_DECLARER] + (f[F_DECLARER] - seat) % n] = 1.0
    if leader >= 0:
        out[at[A_LEADER] + (leader - seat) % n] = 1.0
    if f[F_PHASE] != 4:
        out[at[A_TO_MOVE] + (f[F_TO_MOVE] - seat) % n] = 1.0
    out[at[A_PHASE] + f[F_PHASE]] = 1.0
    _bits(out, at[A_AVAILABLE], f[F_AVAILABLE], NUM_CONTRACTS)
    if f[F_HEARTS_BROKEN]:
        out[at[A_HEARTS_BROKEN]] = 1.0
    _bits(out, at[A_PLAYABLE], f[F_PLAYABLE], CARDS)
    for place in range(n):
        s = f[fin + place]
        if s >= 0:
            out[at[A_FINISHED] + n * ((s - seat) % n) + place] = 1.0
    _bits(out, at[A_RULES], f[F_RULES], RULE_FLAGS)
    _bits(out, at[A_KING], f[F_KING], KING_FLAGS)
    nt = float(f[F_NUM_TRICKS])
    for r in range(n):
        s = (seat + r) % n
        out[at[A_TRICKS_WON] + r] = f[tricks_won + s] / nt
        out[at[A_CARDS_LEFT] + r] = _popcount(U64(f[hands + s])) / nt
        out[at[A_POINTS] + r] = f[points + s] / POINT_SCALE
        out[at[A_PASSES] + r] = f[passes + s] / nt
