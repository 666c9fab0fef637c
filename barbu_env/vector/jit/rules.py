"""Rules kernels: legality, transitions, scoring and new deals of each game, and the batch kernels
:func:`legal_words`, :func:`step` and :func:`start` (RULES.md R3-R9).

Each per-game function follows the reference engine ``engine.deal.Deal`` (the method named in its
docstring); tests/test_vector.py checks every step against it.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ...actions import DECLARE_BASE, DOUBLE_BASE, PASS
from ..core import SCALAR_START
from ..dealing import GAMMA, MIX1, MIX2, SLOTS
from ..tables import (
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
)
from .common import (
    AVAIL_DECL,
    AVAIL_NAMES,
    BEST,
    CAPTURED,
    CONTRACT,
    DECLARER,
    DOUBLE_STEP,
    DOUBLES,
    EXCLUDED,
    F_ACE_AGAIN,
    F_DECK,
    F_DECLARER_ONLY,
    F_DOUBLING_OFF,
    F_FREE_PASS,
    F_HAND_SIZE,
    F_MUST_LEAD_TRUMP,
    F_OVERTRUMP,
    F_SPLIT,
    F_UNTIL_BROKEN,
    FANTAN_RANK,
    FIN_PLACE,
    HANDS,
    I64,
    K_FANTAN,
    K_FORCE_KING,
    K_HEARTS_RULE,
    K_PER_TRICK,
    K_POSITIVE,
    K_RAVAGE,
    K_TOTAL,
    LEADER,
    LED,
    MUST_DOUBLE,
    NUM_FIN,
    PASS_RUN,
    PASSES,
    PHASE,
    PLAYABLE,
    PLAYED,
    PLAYED_BY,
    POINTS,
    TO_MOVE,
    TOP_TRUMP,
    TRICK_BY,
    TRICK_LEN,
    TRICK_MASK,
    TRICK_NO,
    TRICKS_WON,
    TRUMP,
    U0,
    U1,
    WINNER,
    Blocks,
    _bit,
    _popcount,
    helper,
    kernel,
    parallel,
)

GAMMA_U, MIX1_U, MIX2_U = U64(GAMMA), U64(MIX1), U64(MIX2)


# ------------------------------------------------------------------------------------------ legality
@helper
def _legal_cards(st: Blocks, tb: Blocks, g: int) -> np.uint64:
    """The cards the seat on move in game g may play: R4.1, R4.4, R5.1, R5.4, R5.5; Fantan R7.2."""
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
    """The doubling actions of the seat on move in game g, mask over the 8 doubling actions (R6.2-R6.4, R6.7)."""
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
    """The legal actions of game g (``Deal.legal_actions``) as two words: ``low[g]`` (bit a for a in 0..52:
    cards, pass), ``high[g]`` (bit a - 53 for a in 53..86: declarations, doubles)."""
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


@parallel
def legal_words(st: Blocks, tb: Blocks, low: np.ndarray, high: np.ndarray) -> None:
    """The legal words of every game (:func:`_legal_game`) into ``low``, ``high`` (uint64 [B])."""
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
    """The end of game g's deal: contract scores (R4, R7.4, R9.1), doubling settlement (R6.5, R8.1)."""
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
    """A complete trick of game g (R5.2, R5.3; the deal may end, R4.2, R4.3); True if it ended."""
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
    """A card played to the trick in game g (R5): the card, what it proves, the trick so far; True if the deal ended."""
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
    """A Fantan move in game g (R7): a card onto the table or a pass; True if the deal ended."""
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
    """The start of play: the declarer leads (R2.3); Fantan's table opens at the named rank (R7.2)."""
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
    """The declaration (R3): contract, trump suit or Fantan rank; then doubling or play."""
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
    """One doubling decision (R6.1); after the declarer's decision: R6.6 split or play. True if the deal ended."""
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
    """Action ``a`` (legal) of the seat on move in game g (``Deal.apply``); True if the deal ended."""
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
    """Game g's state before its set-up (before its set-up): empty, no trick, no Fantan place."""
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
def _setup_game(st: Blocks, tb: Blocks, g: int, declarer: int, must_double: int, specs: np.ndarray) -> None:
    """The set-up of game g once its hands are dealt (``Deal.from_hands``): the declarer leads, R6.4
    ``must_double``; ``specs[g % len(specs)]`` is its (contract row or -1, trump, rank, declaration-action
    mask, available-names mask). A fixed contract is declared at once: doubling (R6) or play."""
    sc = st[3]
    flags = tb[6]
    sc[DECLARER, g] = declarer
    sc[LEADER, g] = declarer
    sc[TO_MOVE, g] = declarer
    sc[MUST_DOUBLE, g] = must_double
    row = g % specs.shape[0]
    sc[CONTRACT, g] = specs[row, 0]
    sc[TRUMP, g] = specs[row, 1]
    sc[FANTAN_RANK, g] = specs[row, 2]
    sc[AVAIL_DECL, g] = specs[row, 3]
    sc[AVAIL_NAMES, g] = specs[row, 4]
    sc[PHASE, g] = DECLARE
    if specs[row, 0] >= 0:
        if flags[F_DOUBLING_OFF]:
            _start_play(st, tb, g)
        else:
            sc[PHASE, g] = DOUBLE
            sc[TO_MOVE, g] = (declarer + 1) & 3


@kernel()
def start(st: Blocks, tb: Blocks, games: np.ndarray, hands: np.ndarray, declarer: np.ndarray,
          must_double: np.ndarray, specs: np.ndarray) -> None:  # fmt: skip
    """Fresh deals in ``games`` (int64 [n]) from ``hands`` (uint64 [n, 4]), ``declarer`` and ``must_double``
    (int64 [n]): :func:`_setup_game` of each."""
    c4 = st[0]
    for i in range(games.shape[0]):
        g = games[i]
        _clear_game(st, g)
        for q in range(4):
            c4[g, HANDS, q] = hands[i, q]
        _setup_game(st, tb, g, declarer[i], must_double[i], specs)


@helper
def _start_game(st: Blocks, tb: Blocks, g: int, key: np.uint64, k: int, declarer: int, specs: np.ndarray,
                order: np.ndarray) -> None:  # fmt: skip
    """A fresh game g with deal ``k`` of the stream (``dealing.deal_stream``; ``declarer`` < 0: drawn);
    ``order[g]`` is scratch for the shuffle (R1.4)."""
    c4 = st[0]
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
    _setup_game(st, tb, g, declarer if declarer >= 0 else I64(_draw(key, k, 0) >> U64(62)), 0, specs)


@parallel
def step(st: Blocks, tb: Blocks, low: np.ndarray, high: np.ndarray, actions: np.ndarray, done: np.ndarray,
         rewards: np.ndarray, specs: np.ndarray, deal: np.ndarray, dealt: np.ndarray,
         order: np.ndarray) -> int:  # fmt: skip
    """One step of every game (``backend.Kernels.step``): check, apply, rewards, restarts, then the new legal
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
