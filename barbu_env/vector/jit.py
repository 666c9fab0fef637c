"""Compiled (numba) backend of the batched engine: one game at a time in ``@njit`` kernels, games in ``prange``.

The kernels work on the same :class:`~.core.State` arrays (its blocks, :meth:`State.blocks`) and the same
:class:`~.tables.Tables` as the numpy reference (``core`` and ``encode``), so the two backends are
interchangeable on one state and the set-up code of ``deals`` serves both. Each per-game function below
is the scalar form of the array function of ``core`` / ``encode`` it names, itself a mirror of the
reference ``engine.deal.Deal`` (RULES.md R3-R9); the differential tests run both backends against
``Deal`` and ``observation.encode``.

Observations are written straight into the ``float32`` rows: the binary entries are packed into 18
``uint64`` words per game (as ``encode.pack`` lays them out) and expanded in the same pass, so each row
is written once (no zero fill, no separate unpack). The per-game loops are ``prange`` loops: they run on
``VectorDeals(threads=...)`` threads of numba's pool (one by default).

Importing this module imports numba (``pip install barbu_env[fast]``); ``barbu_env.vector`` does so only
when the backend is chosen. Kernels are compiled on first use and cached on disk (``cache=True``).
"""

from __future__ import annotations

import hashlib

import numpy as np
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

from ..actions import DECLARE_BASE, DOUBLE_BASE, NUM_ACTIONS, PASS
from ..observation import BLOCKS, NUM_PART, OBS_SIZE, POINT_SCALE
from .core import CARD_SEAT_FIELDS, INT_SEAT_FIELDS, SCALAR_FIELDS, SCALAR_START, WORD_FIELDS, State
from .dealing import GAMMA, MIX1, MIX2, SLOTS
from .encode import DONE_ABS, FILLED, NUM_WORDS, PACKED_BYTES, SH
from .tables import (
    ABOVE,
    AH,
    DECLARE,
    DOUBLE,
    DOUBLE_SUBSETS_ARR,
    FANTAN_PLAY,
    HEARTS_ID,
    KH,
    KH_ID,
    NON_HEARTS,
    NOT_ACES,
    NOT_TWOS,
    NUM_DECL,
    OVER,
    PASS_BIT,
    PLAY,
    RANK_CARDS,
    REL_TO_ABS_ARR,
    SUIT,
    U64,
    Tables,
)

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
GAMMA_U, MIX1_U, MIX2_U = U64(GAMMA), U64(MIX1), U64(MIX2)
M1, M2, M4, H01 = U64(0x5555555555555555), U64(0x3333333333333333), U64(0x0F0F0F0F0F0F0F0F), U64(0x0101010101010101)


def layout_fingerprint() -> str:
    """A hash of every constant this module takes from other modules (observation layout, state rows, card
    and action tables). The kernels freeze them at compile time, and numba's disk cache is invalidated only
    when *this* file changes: :data:`LAYOUT_FINGERPRINT` must be updated with them (which edits this file)."""
    blob = repr((sorted(BLOCKS.items()), sorted(SH.items()), FILLED, NUM_WORDS, OBS_SIZE, NUM_PART, POINT_SCALE,
                 CARD_SEAT_FIELDS, INT_SEAT_FIELDS, WORD_FIELDS, SCALAR_FIELDS, DECLARE, DOUBLE, PLAY, FANTAN_PLAY,
                 OVER, DECLARE_BASE, DOUBLE_BASE, PASS, NUM_ACTIONS, PASS_BIT, NUM_DECL, HEARTS_ID, KH_ID,
                 int(KH), int(AH), int(NON_HEARTS), int(NOT_ACES), int(NOT_TWOS), GAMMA, MIX1, MIX2,
                 SLOTS)).encode()  # fmt: skip
    for a in (ABOVE, SUIT, RANK_CARDS, REL_TO_ABS_ARR, DOUBLE_SUBSETS_ARR, DONE_ABS, SCALAR_START):
        blob += a.tobytes()
    return hashlib.sha256(blob).hexdigest()[:16]


LAYOUT_FINGERPRINT = "20ba34c1ea6b584c"
if layout_fingerprint() != LAYOUT_FINGERPRINT:
    raise ImportError(f"barbu_env.vector.jit: constants of other modules changed (observation layout, state rows or "
                      f"tables); check the kernels, then set LAYOUT_FINGERPRINT = {layout_fingerprint()!r} in "
                      f"{__file__} (editing this file invalidates numba's cached kernels)")  # fmt: skip


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


# ------------------------------------------------------------------------------------------ helpers
#: Per-game functions: compiled without reference counting (numba's ``_nrt=False``). They only read and
#: write arrays their caller holds and never allocate, and counting references to every array of the
#: state and table tuples on each call cost up to 10x the work (legality of 4096 games: 116 -> 12 us).
helper = njit(cache=True, _nrt=False)


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
    """A 4-bit absolute-seat mask seen from seat ``s`` (``encode.rot4``, R1.3)."""
    return ((m | (m << 4)) >> s) & 15


# ------------------------------------------------------------------------------------------ legality
@helper
def _legal_cards(st: Blocks, tb: Blocks, g: int) -> np.uint64:
    """``core.legal_cards`` for game g: R4.1, R4.4, R5.1, R5.4, R5.5; Fantan R7.2."""
    c4, _, w, sc, hb, _ = st
    kint, _, _, _, _, _, flags = tb
    phase = sc[PHASE, g]
    hand = c4[g, HANDS, sc[TO_MOVE, g]]
    if phase == FANTAN_PLAY:
        return hand & w[PLAYABLE, g]
    if phase != PLAY:
        return U0
    k, trump, led, top = sc[CONTRACT, g], sc[TRUMP, g], sc[LED, g], sc[TOP_TRUMP, g]
    trump_m = SUIT[trump]  # SUIT[-1] == 0
    if led < 0:  # leading (R4.1, R5.4)
        m = hand
        nh = hand & NON_HEARTS
        if kint[k, K_HEARTS_RULE] != 0 and not (hb[g] and flags[F_UNTIL_BROKEN] != 0) and nh != 0:
            m = nh
        if flags[F_MUST_LEAD_TRUMP] != 0 and m & trump_m != 0:
            m = m & trump_m
        return m
    fk = kint[k, K_FORCE_KING] != 0
    has_kh = hand & KH != 0
    f = hand & SUIT[led]
    if f != 0:  # following suit (R5.1, R5.5, R4.4)
        m = f
        if flags[F_OVERTRUMP] != 0 and led == trump and top >= 0 and f & ABOVE[top] != 0:
            m = f & ABOVE[top]
        if fk and led == HEARTS_ID and has_kh and w[TRICK_MASK, g] & AH != 0:
            m = KH
        return m
    tr = hand & trump_m
    if tr != 0:  # void, holding trumps (R5.5)
        if top < 0:
            return tr
        hi = tr & ABOVE[top]
        if hi == 0:
            return hand
        return hi if flags[F_OVERTRUMP] else tr
    return KH if fk and has_kh else hand  # void (R4.4)


@helper
def _legal_doubles(st: Blocks, tb: Blocks, g: int) -> int:
    """``core.legal_doubles`` for game g: mask over the 8 doubling actions (R6.2-R6.4, R6.7)."""
    _, i4, _, sc, _, _ = st
    kint, _, _, _, _, _, flags = tb
    s, d = sc[TO_MOVE, g], sc[DECLARER, g]
    is_decl = s == d
    decl_rel = 1 << max(((d - s) & 3) - 1, 0)
    if is_decl:  # redoubles only, of the seats that doubled the declarer (R6.2)
        allowed = 0
        for i in range(3):
            if (i4[g, DOUBLES, (s + 1 + i) & 3] >> d) & 1:
                allowed |= 1 << i
    elif kint[sc[CONTRACT, g], K_POSITIVE] != 0 or flags[F_DECLARER_ONLY] != 0:
        allowed = decl_rel
    else:
        allowed = 7
    must = not is_decl and (sc[MUST_DOUBLE, g] >> s) & 1 == 1
    out = 0
    for j in range(8):
        m = DOUBLE_SUBSETS_ARR[j]
        ok = m & ~allowed == 0
        if flags[F_DECLARER_ONLY] != 0 and is_decl:
            ok = ok and (m == 0 or m == allowed)
        if must:
            ok = ok and m & decl_rel != 0
        if ok:
            out |= 1 << j
    return out


@helper
def _legal_game(st: Blocks, tb: Blocks, g: int, low: np.ndarray, high: np.ndarray) -> None:
    """``core.legal_words`` for game g into ``low[g]``, ``high[g]``."""
    sc = st[3]
    phase = sc[PHASE, g]
    cards = _legal_cards(st, tb, g)
    if phase == FANTAN_PLAY and (cards == 0 or tb[6][F_FREE_PASS] != 0):  # R7.3
        cards |= U1 << U64(PASS_BIT)
    low[g] = cards
    if phase == DECLARE:
        high[g] = U64(sc[AVAIL_DECL, g])
    elif phase == DOUBLE:
        high[g] = U64(_legal_doubles(st, tb, g) << NUM_DECL)
    else:
        high[g] = U0


@njit(cache=True, parallel=True)
def legal_words(st: Blocks, tb: Blocks, low: np.ndarray, high: np.ndarray) -> None:
    """``core.legal_words`` into ``low``, ``high`` (uint64 [B])."""
    for g in prange(low.shape[0]):
        _legal_game(st, tb, g, low, high)


@helper
def _is_legal(low: np.ndarray, high: np.ndarray, g: int, a: int) -> bool:
    if a < 0 or a >= DOUBLE_BASE + 8:
        return False
    if a < DECLARE_BASE:
        return (low[g] >> U64(a)) & U1 == U1
    return (high[g] >> U64(a - DECLARE_BASE)) & U1 == U1


# ------------------------------------------------------------------------------------------ transitions
@helper
def _finish(st: Blocks, tb: Blocks, g: int) -> None:
    """``core._finish`` for game g: contract scores (R4, R7.4, R9.1), doubling settlement (R6.5, R8.1)."""
    c4, i4, _, sc, _, scores = st
    kint, _, _, _, fantan_pts, _, _ = tb
    k = sc[CONTRACT, g]
    for q in range(4):
        scores[g, q] = i4[g, POINTS, q]
    rav = kint[k, K_RAVAGE]
    if rav != 0:  # R9.1: the largest single-suit count shares the penalty
        top, losers = -1, 0
        for q in range(4):
            n = _longest_suit(c4[g, CAPTURED, q])
            if n > top:
                top, losers = n, 0
            losers += n == top
        for q in range(4):
            if _longest_suit(c4[g, CAPTURED, q]) == top:
                scores[g, q] += rav // losers
    if kint[k, K_FANTAN]:  # R7.4
        for q in range(4):
            scores[g, q] = fantan_pts[k, max(i4[g, FIN_PLACE, q], 0)]
    cs = (scores[g, 0], scores[g, 1], scores[g, 2], scores[g, 3])
    for i in range(4):  # R6.5: sum over j of k_ij (s_i - s_j), k_ij = directions doubled between i and j
        settle = 0
        for j in range(4):
            kk = ((i4[g, DOUBLES, i] >> j) & 1) + ((i4[g, DOUBLES, j] >> i) & 1)
            settle += kk * (cs[i] - cs[j])
        scores[g, i] = cs[i] + settle
    sc[PHASE, g] = OVER


@helper
def _longest_suit(cards: np.uint64) -> int:
    """The most cards of one suit in ``cards``."""
    n = 0
    for s in range(4):
        n = max(n, _popcount(cards & SUIT[s]))
    return n


@helper
def _end_trick(st: Blocks, tb: Blocks, g: int) -> bool:
    """``core._end_trick`` for game g (R5.2, R5.3; the deal may end, R4.2, R4.3); True if it ended."""
    c4, i4, w, sc, _, _ = st
    kint, kcard, kpts, pos_vals, _, _, flags = tb
    win, k, tm, no = sc[WINNER, g], sc[CONTRACT, g], w[TRICK_MASK, g], sc[TRICK_NO, g]
    pts = kint[k, K_PER_TRICK] + pos_vals[k, no]
    for j in range(kpts.shape[1]):
        pts += kpts[k, j] * _popcount(tm & kcard[k, 1 + j])
    i4[g, POINTS, win] += pts
    c4[g, CAPTURED, win] |= tm
    i4[g, TRICKS_WON, win] += 1
    sc[TRICK_NO, g] = no + 1
    for q in range(4):
        c4[g, TRICK_BY, q] = U0
    w[TRICK_MASK, g] = U0
    sc[TRICK_LEN, g] = 0
    sc[LED, g] = -1
    sc[BEST, g] = -1
    sc[WINNER, g] = -1
    sc[TOP_TRUMP, g] = -1
    sc[LEADER, g] = win
    sc[TO_MOVE, g] = win
    end = kcard[k, 0]
    if no + 1 == flags[F_HAND_SIZE] or (end != 0 and w[PLAYED, g] & end == end):
        _finish(st, tb, g)
        return True
    return False


@helper
def _play(st: Blocks, tb: Blocks, g: int, c: int) -> bool:
    """``core._play`` for game g (R5): the card, what it proves, the trick so far; True if the deal ended."""
    c4, _, w, sc, hb, _ = st
    kint, _, _, _, _, _, flags = tb
    p = sc[TO_MOVE, g]
    bt = _bit(c)
    c4[g, HANDS, p] ^= bt
    w[PLAYED, g] |= bt
    c4[g, PLAYED_BY, p] |= bt
    c4[g, TRICK_BY, p] = bt
    suit = c // 13
    k, trump, led, top, best = sc[CONTRACT, g], sc[TRUMP, g], sc[LED, g], sc[TOP_TRUMP, g], sc[BEST, g]
    lead = sc[TRICK_LEN, g] == 0
    fk = kint[k, K_FORCE_KING] != 0
    # what the card proves (Deal.apply, Deal._infer_follow)
    ex = U0
    if lead:
        if suit == HEARTS_ID and kint[k, K_HEARTS_RULE] != 0 and not (hb[g] and flags[F_UNTIL_BROKEN] != 0):
            ex = NON_HEARTS
        if flags[F_MUST_LEAD_TRUMP] != 0 and trump >= 0 and suit != trump:
            ex |= SUIT[trump]
    else:
        if suit != led:
            ex = SUIT[led]
            if trump >= 0 and suit != trump:
                ex |= SUIT[trump] if top < 0 else ABOVE[top]
            if fk and c != KH_ID:
                ex |= KH
        elif fk and led == HEARTS_ID and w[TRICK_MASK, g] & AH != 0 and c != KH_ID:
            ex = KH
        if flags[F_OVERTRUMP] != 0 and suit == trump and top >= 0 and c < top:
            ex |= ABOVE[top]
    c4[g, EXCLUDED, p] |= ex
    # trick state (R5.2)
    if lead or (suit == best // 13 and c > best) or (suit == trump and best // 13 != trump):
        sc[BEST, g] = c
        sc[WINNER, g] = p
    if suit == trump and c > top:
        sc[TOP_TRUMP, g] = c
    if lead:
        sc[LED, g] = suit
        sc[LEADER, g] = p
    elif suit == HEARTS_ID and led != HEARTS_ID:
        hb[g] = True
    w[TRICK_MASK, g] |= bt
    n = sc[TRICK_LEN, g] + 1
    sc[TRICK_LEN, g] = n
    if n < 4:
        sc[TO_MOVE, g] = (p + 1) & 3
        return False
    return _end_trick(st, tb, g)


@helper
def _fantan(st: Blocks, tb: Blocks, g: int, a: int) -> bool:
    """``core._fantan`` for game g (R7): a card onto the table or a pass; True if the deal ended."""
    c4, i4, w, sc, _, _ = st
    flags = tb[6]
    p = sc[TO_MOVE, g]
    again = False
    ended = False
    if a == PASS:  # R7.3
        i4[g, PASSES, p] += 1
        sc[PASS_RUN, g] += 1
        if not flags[F_FREE_PASS]:
            c4[g, EXCLUDED, p] |= w[PLAYABLE, g]
    else:  # R7.2
        sc[PASS_RUN, g] = 0
        bt = _bit(a)
        deck = U64(flags[F_DECK])
        c4[g, HANDS, p] ^= bt
        played = w[PLAYED, g] | bt
        w[PLAYED, g] = played
        c4[g, PLAYED_BY, p] |= bt
        neigh = ((bt >> U1) & NOT_ACES & deck) | ((bt << U1) & NOT_TWOS & deck)
        w[PLAYABLE, g] = (w[PLAYABLE, g] & ~bt) | (neigh & ~played)
        out = c4[g, HANDS, p] == 0
        if out:  # R7.4: finishing order
            i4[g, FIN_PLACE, p] = sc[NUM_FIN, g]
            sc[NUM_FIN, g] += 1
            if sc[NUM_FIN, g] == 3:
                for q in range(4):
                    if i4[g, FIN_PLACE, q] < 0:
                        i4[g, FIN_PLACE, q] = 3
                sc[NUM_FIN, g] = 4
                _finish(st, tb, g)
                ended = True
        again = flags[F_ACE_AGAIN] != 0 and a % 13 == 12 and not out  # R7.5
    if not ended and not again:  # the next seat still holding cards (R7.4)
        q = (p + 1) & 3
        while c4[g, HANDS, q] == 0:
            q = (q + 1) & 3
        sc[TO_MOVE, g] = q
    return ended


@helper
def _start_play(st: Blocks, tb: Blocks, g: int) -> None:
    """``core._start_play``: the declarer leads (R2.3); Fantan's table opens at the named rank (R7.2)."""
    w, sc = st[2], st[3]
    kint, flags = tb[0], tb[6]
    d = sc[DECLARER, g]
    sc[TO_MOVE, g] = d
    sc[LEADER, g] = d
    if kint[sc[CONTRACT, g], K_FANTAN]:
        sc[PHASE, g] = FANTAN_PLAY
        w[PLAYABLE, g] = RANK_CARDS[max(sc[FANTAN_RANK, g], 0)] & U64(flags[F_DECK])
    else:
        sc[PHASE, g] = PLAY
        w[PLAYABLE, g] = U0


@helper
def _declare(st: Blocks, tb: Blocks, g: int, a: int) -> None:
    """``core._declare`` (R3): contract, trump suit or Fantan rank; then doubling or play."""
    sc = st[3]
    decl, flags = tb[5], tb[6]
    i = a - DECLARE_BASE
    sc[CONTRACT, g] = decl[0, i]
    sc[TRUMP, g] = decl[1, i]
    sc[FANTAN_RANK, g] = decl[2, i]
    if flags[F_DOUBLING_OFF]:
        _start_play(st, tb, g)
    else:
        sc[PHASE, g] = DOUBLE
        sc[DOUBLE_STEP, g] = 0
        sc[TO_MOVE, g] = (sc[DECLARER, g] + 1) & 3


@helper
def _double(st: Blocks, tb: Blocks, g: int, a: int) -> bool:
    """``core._double`` (R6.1); after the declarer's decision: R6.6 split or play. True if the deal ended."""
    _, i4, _, sc, _, scores = st
    kint, flags = tb[0], tb[6]
    s = sc[TO_MOVE, g]
    i4[g, DOUBLES, s] = REL_TO_ABS_ARR[s, a - DOUBLE_BASE]
    step = sc[DOUBLE_STEP, g] + 1
    sc[DOUBLE_STEP, g] = step
    d = sc[DECLARER, g]
    if step < 4:
        sc[TO_MOVE, g] = (d + 1 + step) & 3
        return False
    k = sc[CONTRACT, g]
    doubled = i4[g, DOUBLES, 0] | i4[g, DOUBLES, 1] | i4[g, DOUBLES, 2] | i4[g, DOUBLES, 3]
    if flags[F_SPLIT] != 0 and kint[k, K_POSITIVE] == 0 and doubled == 0:  # R6.6: not played
        total = kint[k, K_TOTAL]
        share = total // 3
        for q in range(4):
            scores[g, q] = share
        scores[g, d] = total - 3 * share
        sc[PHASE, g] = OVER
        return True
    _start_play(st, tb, g)
    return False


@helper
def _apply_game(st: Blocks, tb: Blocks, g: int, a: int) -> bool:
    """``core.apply`` for game g (on move, ``a`` legal); True if the deal ended."""
    phase = st[3][PHASE, g]
    if phase == PLAY:
        return _play(st, tb, g, a)
    if phase == FANTAN_PLAY:
        return _fantan(st, tb, g, a)
    if phase == DOUBLE:
        return _double(st, tb, g, a)
    if phase == DECLARE:
        _declare(st, tb, g, a)
    return False


# ------------------------------------------------------------------------------------------ new deals
@helper
def _draw(key: np.uint64, k: int, i: int) -> np.uint64:
    """Draw ``i`` of deal ``k`` of the stream ``key`` (``dealing.draws``: SplitMix64)."""
    z = key + U64(SLOTS * k + i + 1) * GAMMA_U
    z = (z ^ (z >> U64(30))) * MIX1_U
    z = (z ^ (z >> U64(27))) * MIX2_U
    return z ^ (z >> U64(31))


@helper
def _clear_game(st: Blocks, g: int) -> None:
    """Game g's state before its set-up (``core.start``'s first lines): empty, no trick, no Fantan place."""
    c4, i4, w, sc, hb, scores = st
    for r in range(c4.shape[1]):
        for q in range(4):
            c4[g, r, q] = U0
    for r in range(i4.shape[1]):
        for q in range(4):
            i4[g, r, q] = -1 if r == FIN_PLACE else 0
    for r in range(w.shape[0]):
        w[r, g] = U0
    for r in range(sc.shape[0]):
        sc[r, g] = SCALAR_START[r]
    for q in range(4):
        scores[g, q] = 0
    hb[g] = False


@helper
def _start_game(st: Blocks, tb: Blocks, g: int, key: np.uint64, k: int, declarer: int, specs: np.ndarray,
                order: np.ndarray) -> None:  # fmt: skip
    """``core.start`` of game g with deal ``k`` of the stream (``dealing.deal_stream``; ``declarer`` < 0:
    drawn); ``order[g]`` is scratch for the shuffle (R1.4)."""
    c4, sc = st[0], st[3]
    flags = tb[6]
    _clear_game(st, g)
    deck = U64(flags[F_DECK])
    n = 0
    for c in range(64):
        if (deck >> U64(c)) & U1:
            order[g, n] = c
            n += 1
    for i in range(n - 1, 0, -1):  # Fisher-Yates
        j = I64(((_draw(key, k, i) >> U64(32)) * U64(i + 1)) >> U64(32))
        c = order[g, i]
        order[g, i] = order[g, j]
        order[g, j] = c
    hs = flags[F_HAND_SIZE]
    for q in range(4):
        h = U0
        for i in range(q * hs, (q + 1) * hs):
            h |= U1 << U64(order[g, i])
        c4[g, HANDS, q] = h
    d = declarer if declarer >= 0 else I64(_draw(key, k, 0) >> U64(62))
    sc[DECLARER, g] = d
    sc[LEADER, g] = d
    sc[TO_MOVE, g] = d
    row = g % specs.shape[0]
    sc[CONTRACT, g] = specs[row, 0]
    sc[TRUMP, g] = specs[row, 1]
    sc[FANTAN_RANK, g] = specs[row, 2]
    sc[AVAIL_DECL, g] = specs[row, 3]
    sc[AVAIL_NAMES, g] = specs[row, 4]
    sc[PHASE, g] = DECLARE
    if specs[row, 0] >= 0:  # fixed contract, declared at once: doubling (R6) or play
        if flags[F_DOUBLING_OFF]:
            _start_play(st, tb, g)
        else:
            sc[PHASE, g] = DOUBLE
            sc[TO_MOVE, g] = (d + 1) & 3


@njit(cache=True, parallel=True)
def step(st: Blocks, tb: Blocks, low: np.ndarray, high: np.ndarray, actions: np.ndarray, done: np.ndarray,
         rewards: np.ndarray, specs: np.ndarray, deal: np.ndarray, dealt: np.ndarray,
         order: np.ndarray) -> int:  # fmt: skip
    """One step of every game (``NumpyBackend.step``): check, apply, rewards, restarts, then the new legal
    words into ``low``, ``high``. ``deal``: int64 ``[restart, key (its bits), declarer or -1]``; ``dealt``:
    deals started per game; ``order`` uint8 [B, 64] scratch. Returns the number of deals that ended, or -1
    (nothing applied) if an action of a game on move is illegal. One parallel loop (a check is cheaper
    serial than a second loop's start-up on several threads)."""
    sc, scores = st[3], st[5]
    n = actions.shape[0]
    for g in range(n):
        if sc[PHASE, g] != OVER and not _is_legal(low, high, g, actions[g]):
            return -1
    restart, key, declarer = deal[0] != 0, U64(deal[1]), deal[2]
    for g in prange(n):
        over = sc[PHASE, g] != OVER and _apply_game(st, tb, g, actions[g])
        done[g] = over
        if over:
            for q in range(4):
                rewards[g, q] = scores[g, q]
            if restart:
                _start_game(st, tb, g, key, dealt[g] * n + g, declarer, specs, order)
                dealt[g] += 1
        _legal_game(st, tb, g, low, high)
    ended = 0
    for g in range(n):
        ended += done[g]
    return ended


# ------------------------------------------------------------------------------------------ observations
@helper
def _put(words: np.ndarray, g: int, v: np.uint64, off: int) -> None:
    """OR the bits of ``v`` (at most 64 wide) into game g's packed words at entry ``off``."""
    i, sh = off >> 6, off & 63
    words[g, i] |= v << U64(sh)
    if sh:
        words[g, i + 1] |= v >> U64(64 - sh)


@helper
def _pack(st: Blocks, tb: Blocks, g: int, s: int, words: np.ndarray, num: np.ndarray, at: int) -> None:
    """``encode.pack`` for game g seen from seat s (rotated, R1.3): binary entries into ``words[g]`` (uint64
    [B, NUM_WORDS], entry i = bit i % 64 of word i // 64), the numeric deal part into ``num[g, at : at + 16]``."""
    c4, i4, w, sc, hb, _ = st
    kint, _, _, _, _, _, flags = tb
    for i in range(NUM_WORDS):
        words[g, i] = U0
    if s < 0:
        for i in range(16):
            num[g, at + i] = 0.0
        return
    hand = c4[g, HANDS, s]
    open_ = U64(flags[F_DECK]) & ~w[PLAYED, g] & ~hand
    _put(words, g, hand, O_HAND)
    _put(words, g, open_, O_UNSEEN)
    void = 0
    dbl = 0
    fin = 0
    hn = float(flags[F_HAND_SIZE])
    for r in range(4):
        q = (s + r) & 3
        _put(words, g, c4[g, PLAYED_BY, q], O_PLAYED + 52 * r)
        _put(words, g, c4[g, TRICK_BY, q], O_TRICK + 52 * r)
        _put(words, g, c4[g, CAPTURED, q], O_CAPTURED + 52 * r)
        _put(words, g, c4[g, EXCLUDED, q], O_EXCLUDED + 52 * r)
        x = hand if r == 0 else open_ & ~c4[g, EXCLUDED, q]  # void: no open card the seat may hold
        for j in range(4):
            if x & SUIT[j] == 0:
                void |= 1 << (4 * r + j)
        dbl |= _rot4(i4[g, DOUBLES, q], s) << (4 * r)
        fp = i4[g, FIN_PLACE, q]
        if fp >= 0:
            fin |= 1 << (4 * r + fp)
        # numeric part: tricks won, cards left, running points, passes (R5.3, R7.3)
        num[g, at + r] = i4[g, TRICKS_WON, q] / hn
        num[g, at + 4 + r] = _popcount(c4[g, HANDS, q]) / hn
        num[g, at + 8 + r] = i4[g, POINTS, q] / POINT_SCALE
        num[g, at + 12 + r] = i4[g, PASSES, q] / hn
    k, phase = sc[CONTRACT, g], sc[PHASE, g]
    a = void | 1 << (S_TRICK_NO + min(sc[TRICK_NO, g], flags[F_HAND_SIZE] - 1))
    if k >= 0:
        a |= 1 << (S_CONTRACT + kint[k, K_NAME])
    if sc[TRUMP, g] >= 0:
        a |= 1 << (S_TRUMP + sc[TRUMP, g])
    if sc[FANTAN_RANK, g] >= 0:
        a |= 1 << (S_FANTAN_RANK + sc[FANTAN_RANK, g])
    a |= 1 << (S_DECLARER + ((sc[DECLARER, g] - s) & 3))
    c = 1 << ((sc[LEADER, g] - s) & 3)
    if phase != OVER:
        c |= 1 << (S_TO_MOVE + ((sc[TO_MOVE, g] - s) & 3))
    c |= 1 << (S_PHASE + phase)
    c |= dbl << S_DOUBLES
    c |= _rot4(DONE_ABS[sc[DECLARER, g], sc[DOUBLE_STEP, g]], s) << S_DOUBLED_DONE
    c |= _rot4(sc[MUST_DOUBLE, g], s) << S_MUST_DOUBLE
    c |= sc[AVAIL_NAMES, g] << S_AVAILABLE
    if hb[g]:
        c |= 1 << S_HEARTS_BROKEN
    _put(words, g, U64(a), O_SMALL_A)
    _put(words, g, U64(c), O_SMALL_C)
    _put(words, g, w[PLAYABLE, g], O_PLAYABLE)
    _put(words, g, U64(fin | (flags[F_RULES_WORD] << S_RULES)), O_SMALL_F)


@helper
def _mask_row(low: np.ndarray, high: np.ndarray, g: int, on_move: bool, out: np.ndarray) -> None:
    """``encode.masks_into`` for one game; a zero row unless ``on_move``."""
    lo = low[g] if on_move else U0
    hi = high[g] if on_move else U0
    for a in range(DECLARE_BASE):
        out[g, a] = (lo >> U64(a)) & U1
    for a in range(DECLARE_BASE, NUM_ACTIONS):
        out[g, a] = (hi >> U64(a - DECLARE_BASE)) & U1


@helper
def _obs_row(st: Blocks, tb: Blocks, g: int, s: int, words: np.ndarray, obs: np.ndarray) -> None:
    """``encode.observe_into`` for game g: row g of ``obs`` (float32 [B, OBS_SIZE]) is the observation of seat
    ``s`` (zero if -1), written whole, via the packed words ``words[g]``."""
    _pack(st, tb, g, s, words, obs, NUM_PART)
    for i in range(NUM_WORDS - 1):  # the binary entries, 64 per word
        x = words[g, i]
        for b in range(64):
            obs[g, 64 * i + b] = np.float32((x >> U64(b)) & U1)
    x = words[g, NUM_WORDS - 1]
    for b in range(LAST_WORD_BITS):
        obs[g, 64 * (NUM_WORDS - 1) + b] = np.float32((x >> U64(b)) & U1)
    for i in range(FILLED, NUM_PART):  # match-only blocks
        obs[g, i] = 0.0
    for i in range(NUM_PART + 16, OBS_SIZE):
        obs[g, i] = 0.0


@njit(cache=True, parallel=True)
def observe(st: Blocks, tb: Blocks, seat: np.ndarray, low: np.ndarray, high: np.ndarray, words: np.ndarray,
            obs: np.ndarray, mask: np.ndarray) -> None:  # fmt: skip
    """``encode.observe_into`` + ``masks_into``: row g of ``obs`` (float32 [B, OBS_SIZE]) is the observation of
    ``seat[g]`` (zero if -1), written whole; row g of ``mask`` the legal actions if that seat is on move.
    ``words`` (uint64 [B, NUM_WORDS]) is scratch, left holding the packed observations."""
    sc = st[3]
    for g in prange(seat.shape[0]):
        s = seat[g]
        _obs_row(st, tb, g, s, words, obs)
        _mask_row(low, high, g, s >= 0 and s == sc[TO_MOVE, g] and sc[PHASE, g] != OVER, mask)


@njit(cache=True, parallel=True)
def observe_packed(st: Blocks, tb: Blocks, seat: np.ndarray, low: np.ndarray, high: np.ndarray, words: np.ndarray,
                   num: np.ndarray, mask: np.ndarray) -> None:  # fmt: skip
    """``encode.pack`` + ``masks_into``: ``words`` uint64 [B, NUM_WORDS], ``num`` float32 [B, 16], ``mask``."""
    for g in prange(seat.shape[0]):
        s = seat[g]
        _pack(st, tb, g, s, words, num, 0)
        _mask_row(low, high, g, s >= 0, mask)


@njit(cache=True, parallel=True)
def masks(low: np.ndarray, high: np.ndarray, out: np.ndarray) -> None:
    """``encode.masks_into``."""
    for g in prange(low.shape[0]):
        _mask_row(low, high, g, True, out)


@njit(cache=True, parallel=True)
def random_actions(mask: np.ndarray, u: np.ndarray, out: np.ndarray) -> None:
    """``backend.random_choice`` given the uniforms ``u``, as numpy computes it: with ``n`` the row's sum and
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


# ------------------------------------------------------------------------------------------ one game
# The AEC env's compiled mirror of one deal (:class:`.single.Mirror`): the batch-1 state, the tables, the
# packed-words scratch and the legal words live in one byte buffer, so each call unboxes one array (the state
# and table tuples cost ~0.6 us a call, one buffer ~0.15 us); the kernels rebuild the views inside. Kept in
# this file so that numba's disk cache, invalidated only when the defining file changes, follows the helpers.

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


@intrinsic
def _as_shape(typingctx: object, arr: types.Array, shape: types.UniTuple) -> tuple:
    """The C-contiguous 1-D ``arr`` seen with ``shape`` (ints whose product is its length), without
    ``reshape``'s checks and helper call (about 10 ns each, a dozen per mirror call)."""
    if not isinstance(arr, types.Array) or arr.ndim != 1 or arr.layout != "C":
        return None  # (a typing error)
    sig = types.Array(arr.dtype, len(shape), "C")(arr, shape)

    def codegen(context: object, builder: object, signature: object, args: tuple) -> object:
        a_ty, sh_ty = signature.args
        src = make_array(a_ty)(context, builder, value=args[0])
        out = make_array(signature.return_type)(context, builder)
        dims = [context.cast(builder, d, t, types.intp) for d, t in zip(cgutils.unpack_tuple(builder, args[1]), sh_ty)]
        stride, strides = src.itemsize, []
        for d in reversed(dims):
            strides.insert(0, stride)
            stride = builder.mul(stride, d)
        populate_array(out, data=src.data, shape=cgutils.pack_array(builder, dims),
                       strides=cgutils.pack_array(builder, strides), itemsize=src.itemsize, meminfo=None)  # fmt: skip
        return out._getvalue()

    return sig, codegen


@njit(cache=True, _nrt=False, inline="always")
def _table(buf: np.ndarray, h: np.ndarray, i: int) -> np.ndarray:
    """Table ``i`` of ``jit_tables`` (int64 [rows, columns]) in the buffer."""
    rows, cols = h[H_SHAPE + 2 * i], h[H_SHAPE + 2 * i + 1]
    o = h[H_TABLES + i]
    return _as_shape(buf[o : o + 8 * rows * cols].view(np.int64), (rows, cols))


@njit(cache=True, _nrt=False)
def _views(buf: np.ndarray) -> tuple:
    """``(st, tb, words, legal)``: the state blocks and tables as the kernels above take them, the packed-words
    scratch (uint64 [1, NUM_WORDS]) and the legal words of the seat on move (uint64 [2])."""
    h = buf[: 8 * HEADER].view(np.int64)
    c4 = _as_shape(buf[h[0] : h[0] + 8 * NC * 4].view(np.uint64), (1, NC, 4))
    i4 = _as_shape(buf[h[1] : h[1] + 8 * NI * 4].view(np.int64), (1, NI, 4))
    w = _as_shape(buf[h[2] : h[2] + 8 * NW].view(np.uint64), (NW, 1))
    sc = _as_shape(buf[h[3] : h[3] + 8 * NS].view(np.int64), (NS, 1))
    hb = buf[h[4] : h[4] + 1].view(np.bool_)
    scores = _as_shape(buf[h[H_SCORES] : h[H_SCORES] + 32].view(np.int64), (1, 4))
    kint = _table(buf, h, 0)
    kcard = _table(buf, h, 1).view(np.uint64)
    kpts, pos, fpts, decl = _table(buf, h, 2), _table(buf, h, 3), _table(buf, h, 4), _table(buf, h, 5)
    flags = _table(buf, h, 6)[0]
    words = _as_shape(buf[h[H_WORDS] : h[H_WORDS] + 8 * NUM_WORDS].view(np.uint64), (1, NUM_WORDS))
    legal = buf[h[H_LEGAL] : h[H_LEGAL] + 16].view(np.uint64)
    return (c4, i4, w, sc, hb, scores), (kint, kcard, kpts, pos, fpts, decl, flags), words, legal


@njit(cache=True, _nrt=False)
def _emit(st: Blocks, tb: Blocks, words: np.ndarray, legal: np.ndarray, row: np.ndarray, mask: np.ndarray) -> int:
    """The legal words (``legal[0]``, ``legal[1]``), mask and observation of the seat on move; returns that
    seat, or -1 once the deal is over."""
    if st[3][PHASE, 0] == OVER:
        legal[0] = U0
        legal[1] = U0
        return -1
    low, high = legal[:1], legal[1:]
    _legal_game(st, tb, 0, low, high)
    _mask_row(low, high, 0, True, _as_shape(mask, (1, NUM_ACTIONS)))
    s = st[3][TO_MOVE, 0]
    _obs_row(st, tb, 0, s, words, _as_shape(row, (1, OBS_SIZE)))
    return s


@njit(cache=True, _nrt=False)
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


@njit(cache=True, _nrt=False)
def mirror_step(buf: np.ndarray, row: np.ndarray, mask: np.ndarray, a: int) -> int:
    """Apply action ``a`` of the seat on move, then write the legal words, ``mask`` (int8 [NUM_ACTIONS]) and
    ``row`` (float32 [OBS_SIZE]) of the seat now on move. Returns that seat, -1 once the deal is over, -2
    (nothing applied) if ``a`` is illegal."""
    st, tb, words, legal = _views(buf)
    if st[3][PHASE, 0] == OVER or not _is_legal(legal[:1], legal[1:], 0, a):
        return -2
    _apply_game(st, tb, 0, a)
    return _emit(st, tb, words, legal, row, mask)


@njit(cache=True, _nrt=False)
def mirror_observe(buf: np.ndarray, row: np.ndarray, s: int) -> None:
    """``row``: the observation of seat ``s``."""
    st, tb, words, _ = _views(buf)
    _obs_row(st, tb, 0, s, words, _as_shape(row, (1, OBS_SIZE)))


class NumbaBackend:
    """The compiled backend of :class:`~.deals.VectorDeals` (interface: :class:`.backend.NumpyBackend`).
    ``threads``: threads of the parallel loops, set before each kernel call (at most ``NUMBA_NUM_THREADS``)."""

    name = "numba"

    def __init__(self, t: Tables, batch: int, threads: int = 1) -> None:
        import numba

        if threads > numba.config.NUMBA_NUM_THREADS:
            raise ValueError(f"threads={threads} exceeds NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS}")
        self.tb = jit_tables(t)
        self.threads = int(threads)
        self._set_threads = numba.set_num_threads
        self.words = np.zeros((batch, NUM_WORDS), U64)
        self.order = np.zeros((batch, 64), np.uint8)  # a shuffled deck per game
        self.dealt = np.zeros(batch, I64)  # stands in for VectorDeals' deal counts when not restarting

    def num_threads(self) -> int:
        """Threads the kernels run on."""
        return self.threads

    def nbytes(self) -> int:
        """Bytes of the scratch buffers."""
        return self.words.nbytes + self.order.nbytes + self.dealt.nbytes

    def _threads(self) -> None:
        self._set_threads(self.threads)

    def legal(self, st: State, t: Tables) -> tuple[np.ndarray, np.ndarray]:
        b = st.phase.shape[0]
        low, high = np.empty(b, U64), np.empty(b, U64)
        self._threads()
        legal_words(st.blocks(), self.tb, low, high)
        return low, high

    def observe(self, st: State, t: Tables, seat: np.ndarray, low: np.ndarray, high: np.ndarray,
                obs: np.ndarray, mask: np.ndarray) -> None:  # fmt: skip
        self._threads()
        observe(st.blocks(), self.tb, seat, low, high, self.words, obs, mask)

    def observe_packed(self, st: State, t: Tables, seat: np.ndarray, low: np.ndarray, high: np.ndarray,
                       mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        b = seat.shape[0]
        words, num = np.empty((b, NUM_WORDS), U64), np.empty((b, 16), np.float32)
        self._threads()
        observe_packed(st.blocks(), self.tb, seat, low, high, words, num, mask)
        return words.view(np.uint8)[:, :PACKED_BYTES], num

    def masks(self, low: np.ndarray, high: np.ndarray, mask: np.ndarray) -> None:
        self._threads()
        masks(low, high, mask)

    def step(self, st: State, t: Tables, low: np.ndarray, high: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
             done: np.ndarray, specs: np.ndarray, stream: tuple[int, int, int] | None,
             ) -> tuple[int, tuple[np.ndarray, np.ndarray] | None]:  # fmt: skip
        """``NumpyBackend.step`` in one kernel call, which also computes the new legal words."""
        key, dealt, declarer = stream if stream is not None else (0, self.dealt, -1)
        deal = np.array([stream is not None, key - (1 << 64) if key >= 1 << 63 else key, declarer], I64)
        new_low, new_high = low.copy(), high.copy()
        self._threads()
        ended = step(st.blocks(), self.tb, new_low, new_high, np.ascontiguousarray(actions, I64), done, rewards,
                     specs, deal, dealt, self.order)  # fmt: skip
        return ended, (new_low, new_high) if ended >= 0 else None
