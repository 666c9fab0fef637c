"""Rules kernels: legality, transitions, scoring and new deals of each game, and the batch kernels
:func:`legal_words`, :func:`step` and :func:`start` (RULES.md R3-R9).

Each per-game function follows the reference engine ``engine.deal.Deal`` (the method named in its
docstring); tests/test_vector.py checks every step against it.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ...actions import DECLARE_BASE, DOUBLE_BASE, PASS
from ..core import NUM_COLUMNS, START_ROW
from ..dealing import GAMMA, MIX1, MIX2, SLOTS
from ..tables import (
    ABOVE,
    AH,
    DECLARE,
    DOUBLE,
    DOUBLE_SUBSETS_ARR,
    FANTAN_PLAY,
    HEARTS_ID,
    HOLD,
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
    F_CARD_POINTS,
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
    HEARTS_BROKEN,
    I64,
    K_CP_MASK,
    K_CP_PTS,
    K_END,
    K_FANTAN,
    K_FANTAN_PTS,
    K_FORCE_KING,
    K_HEARTS_RULE,
    K_PER_TRICK,
    K_POS_VALS,
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
    SCORES,
    T_DECL_K,
    T_DECL_RANK,
    T_DECL_TRUMP,
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
    _bit,
    _krow,
    _popcount,
    helper,
    kernel,
    parallel,
)

GAMMA_U, MIX1_U, MIX2_U = U64(GAMMA), U64(MIX1), U64(MIX2)


# ------------------------------------------------------------------------------------------ legality
@helper
def _legal_cards(x: np.ndarray, t: np.ndarray, g: int) -> np.uint64:
    """The cards the seat on move in game g may play: R4.1, R4.4, R5.1, R5.4, R5.5; Fantan R7.2."""
    phase = x[g, PHASE]
    hand = U64(x[g, HANDS + x[g, TO_MOVE]])
    if phase == FANTAN_PLAY:
        return hand & U64(x[g, PLAYABLE])
    if phase != PLAY:
        return U0
    r, trump, led, top = _krow(x[g, CONTRACT]), x[g, TRUMP], x[g, LED], x[g, TOP_TRUMP]
    trump_m = SUIT[trump]  # SUIT[-1] == 0
    if led < 0:  # leading (R4.1, R5.4)
        m = hand
        nh = hand & NON_HEARTS
        if t[r + K_HEARTS_RULE] != 0 and not (x[g, HEARTS_BROKEN] != 0 and t[F_UNTIL_BROKEN] != 0) and nh != 0:
            m = nh
        if t[F_MUST_LEAD_TRUMP] != 0 and m & trump_m != 0:
            m = m & trump_m
        return m
    fk = t[r + K_FORCE_KING] != 0
    has_kh = hand & KH != 0
    f = hand & SUIT[led]
    if f != 0:  # following suit (R5.1, R5.5, R4.4)
        m = f
        if t[F_OVERTRUMP] != 0 and led == trump and top >= 0 and f & ABOVE[top] != 0:
            m = f & ABOVE[top]
        if fk and led == HEARTS_ID and has_kh and U64(x[g, TRICK_MASK]) & AH != 0:
            m = KH
        return m
    tr = hand & trump_m
    if tr != 0:  # void, holding trumps (R5.5)
        if top < 0:
            return tr
        hi = tr & ABOVE[top]
        if hi == 0:
            return hand
        return hi if t[F_OVERTRUMP] else tr
    return KH if fk and has_kh else hand  # void (R4.4)


@helper
def _legal_doubles(x: np.ndarray, t: np.ndarray, g: int) -> int:
    """The doubling actions of the seat on move in game g, mask over the 8 doubling actions (R6.2-R6.4, R6.7)."""
    s, d = x[g, TO_MOVE], x[g, DECLARER]
    is_decl = s == d
    decl_rel = 1 << max(((d - s) & 3) - 1, 0)
    if is_decl:  # redoubles only, of the seats that doubled the declarer (R6.2)
        allowed = 0
        for i in range(3):
            if (x[g, DOUBLES + ((s + 1 + i) & 3)] >> d) & 1:
                allowed |= 1 << i
    elif t[_krow(x[g, CONTRACT]) + K_POSITIVE] != 0 or t[F_DECLARER_ONLY] != 0:
        allowed = decl_rel
    else:
        allowed = 7
    must = not is_decl and (x[g, MUST_DOUBLE] >> s) & 1 == 1
    out = 0
    for j in range(8):
        m = DOUBLE_SUBSETS_ARR[j]
        ok = m & ~allowed == 0
        if t[F_DECLARER_ONLY] != 0 and is_decl:
            ok = ok and (m == 0 or m == allowed)
        if must:
            ok = ok and m & decl_rel != 0
        if ok:
            out |= 1 << j
    return out


@helper
def _legal_game(x: np.ndarray, t: np.ndarray, g: int) -> tuple[np.uint64, np.uint64]:
    """The legal actions of game g (``Deal.legal_actions``) as two words: ``low`` (bit a for a in 0..52:
    cards, pass), ``high`` (bit a - 53 for a in 53..86: declarations, doubles)."""
    phase = x[g, PHASE]
    cards = _legal_cards(x, t, g)
    if phase == FANTAN_PLAY and (cards == 0 or t[F_FREE_PASS] != 0):  # R7.3
        cards |= U1 << U64(PASS_BIT)
    if phase == DECLARE:
        return cards, U64(x[g, AVAIL_DECL])
    if phase == DOUBLE:
        return cards, U64(_legal_doubles(x, t, g) << NUM_DECL)
    return cards, U0


@parallel
def legal_words(x: np.ndarray, t: np.ndarray, low: np.ndarray, high: np.ndarray) -> None:
    """The legal words of every game (:func:`_legal_game`) into ``low``, ``high`` (uint64 [B])."""
    for g in prange(low.shape[0]):
        low[g], high[g] = _legal_game(x, t, g)


@helper
def _is_legal(low: np.uint64, high: np.uint64, a: int) -> bool:
    """Whether action ``a`` is set in the legal words ``low``, ``high`` (:func:`_legal_game`)."""
    if a < 0 or a >= DOUBLE_BASE + 8:
        return False
    if a < DECLARE_BASE:
        return (low >> U64(a)) & U1 == U1
    return (high >> U64(a - DECLARE_BASE)) & U1 == U1


# ------------------------------------------------------------------------------------------ transitions
@helper
def _contract_scores(x: np.ndarray, t: np.ndarray, g: int, out: np.ndarray, o: int) -> None:
    """``out[o : o + 4]``: the contract scores of game g's finished play (R4, R7.4, R9.1), before the doubling
    settlement."""
    r = _krow(x[g, CONTRACT])
    for q in range(4):
        out[o + q] = x[g, POINTS + q]
    rav = t[r + K_RAVAGE]
    if rav != 0:  # R9.1: the largest single-suit count shares the penalty
        top, losers = -1, 0
        for q in range(4):
            n = _longest_suit(U64(x[g, CAPTURED + q]))
            if n > top:
                top, losers = n, 0
            losers += n == top
        for q in range(4):
            if _longest_suit(U64(x[g, CAPTURED + q])) == top:
                out[o + q] += rav // losers
    if t[r + K_FANTAN]:  # R7.4
        for q in range(4):
            out[o + q] = t[r + K_FANTAN_PTS + max(x[g, FIN_PLACE + q], 0)]


@helper
def _finish(x: np.ndarray, t: np.ndarray, g: int) -> None:
    """The end of game g's deal: contract scores (R4, R7.4, R9.1), doubling settlement (R6.5, R8.1)."""
    _contract_scores(x, t, g, x[g], SCORES)
    cs = (x[g, SCORES], x[g, SCORES + 1], x[g, SCORES + 2], x[g, SCORES + 3])
    for i in range(4):  # R6.5: sum over j of k_ij (s_i - s_j), k_ij = directions doubled between i and j
        settle = 0
        for j in range(4):
            kk = ((x[g, DOUBLES + i] >> j) & 1) + ((x[g, DOUBLES + j] >> i) & 1)
            settle += kk * (cs[i] - cs[j])
        x[g, SCORES + i] = cs[i] + settle
    x[g, PHASE] = OVER


@helper
def _longest_suit(cards: np.uint64) -> int:
    """The most cards of one suit in ``cards``."""
    n = 0
    for s in range(4):
        n = max(n, _popcount(cards & SUIT[s]))
    return n


@helper
def _end_trick(x: np.ndarray, t: np.ndarray, g: int) -> bool:
    """A complete trick of game g (R5.2, R5.3; the deal may end, R4.2, R4.3); True if it ended."""
    win, r, tm, no = x[g, WINNER], _krow(x[g, CONTRACT]), U64(x[g, TRICK_MASK]), x[g, TRICK_NO]
    pts = t[r + K_PER_TRICK] + t[r + K_POS_VALS + no]
    for j in range(t[F_CARD_POINTS]):
        pts += t[r + K_CP_PTS + j] * _popcount(tm & U64(t[r + K_CP_MASK + j]))
    x[g, POINTS + win] += pts
    x[g, CAPTURED + win] |= x[g, TRICK_MASK]
    x[g, TRICKS_WON + win] += 1
    x[g, TRICK_NO] = no + 1
    for q in range(4):
        x[g, TRICK_BY + q] = 0
    x[g, TRICK_MASK] = 0
    x[g, TRICK_LEN] = 0
    x[g, LED] = -1
    x[g, BEST] = -1
    x[g, WINNER] = -1
    x[g, TOP_TRUMP] = -1
    x[g, LEADER] = win
    x[g, TO_MOVE] = win
    end = U64(t[r + K_END])
    if no + 1 == t[F_HAND_SIZE] or (end != 0 and U64(x[g, PLAYED]) & end == end):
        _finish(x, t, g)
        return True
    return False


@helper
def _play(x: np.ndarray, t: np.ndarray, g: int, c: int) -> bool:
    """A card played to the trick in game g (R5): the card, what it proves, the trick so far; True if the deal ended."""
    p = x[g, TO_MOVE]
    bt = I64(1) << c
    x[g, HANDS + p] ^= bt
    x[g, PLAYED] |= bt
    x[g, PLAYED_BY + p] |= bt
    x[g, TRICK_BY + p] = bt
    suit = c // 13
    r, trump, led, top, best = _krow(x[g, CONTRACT]), x[g, TRUMP], x[g, LED], x[g, TOP_TRUMP], x[g, BEST]
    lead = x[g, TRICK_LEN] == 0
    fk = t[r + K_FORCE_KING] != 0
    hearts_rule = t[r + K_HEARTS_RULE] != 0 and not (x[g, HEARTS_BROKEN] != 0 and t[F_UNTIL_BROKEN] != 0)
    # what the card proves (Deal.apply, Deal._infer_follow)
    ex = U0
    if lead:
        if suit == HEARTS_ID and hearts_rule:
            ex = NON_HEARTS
        if t[F_MUST_LEAD_TRUMP] != 0 and trump >= 0 and suit != trump:
            ex |= SUIT[trump]
    else:
        if suit != led:
            ex = SUIT[led]
            if trump >= 0 and suit != trump:
                ex |= SUIT[trump] if top < 0 else ABOVE[top]
            if fk and c != KH_ID:
                ex |= KH
        elif fk and led == HEARTS_ID and U64(x[g, TRICK_MASK]) & AH != 0 and c != KH_ID:
            ex = KH
        if t[F_OVERTRUMP] != 0 and suit == trump and top >= 0 and c < top:
            ex |= ABOVE[top]
    x[g, EXCLUDED + p] |= I64(ex)
    # trick state (R5.2)
    if lead or (suit == best // 13 and c > best) or (suit == trump and best // 13 != trump):
        x[g, BEST] = c
        x[g, WINNER] = p
    if suit == trump and c > top:
        x[g, TOP_TRUMP] = c
    if lead:
        x[g, LED] = suit
        x[g, LEADER] = p
    elif suit == HEARTS_ID and led != HEARTS_ID:
        x[g, HEARTS_BROKEN] = 1
    x[g, TRICK_MASK] |= bt
    n = x[g, TRICK_LEN] + 1
    x[g, TRICK_LEN] = n
    if n < 4:
        x[g, TO_MOVE] = (p + 1) & 3
        return False
    return _end_trick(x, t, g)


@helper
def _fantan(x: np.ndarray, t: np.ndarray, g: int, a: int) -> bool:
    """A Fantan move in game g (R7): a card onto the table or a pass; True if the deal ended."""
    p = x[g, TO_MOVE]
    again = False
    ended = False
    if a == PASS:  # R7.3
        x[g, PASSES + p] += 1
        x[g, PASS_RUN] += 1
        if not t[F_FREE_PASS]:
            x[g, EXCLUDED + p] |= x[g, PLAYABLE]
    else:  # R7.2
        x[g, PASS_RUN] = 0
        bt = _bit(a)
        deck = U64(t[F_DECK])
        x[g, HANDS + p] ^= I64(bt)
        played = U64(x[g, PLAYED]) | bt
        x[g, PLAYED] = I64(played)
        x[g, PLAYED_BY + p] |= I64(bt)
        neigh = ((bt >> U1) & NOT_ACES & deck) | ((bt << U1) & NOT_TWOS & deck)
        x[g, PLAYABLE] = I64((U64(x[g, PLAYABLE]) & ~bt) | (neigh & ~played))
        out = x[g, HANDS + p] == 0
        if out:  # R7.4: finishing order
            x[g, FIN_PLACE + p] = x[g, NUM_FIN]
            x[g, NUM_FIN] += 1
            if x[g, NUM_FIN] == 3:
                for q in range(4):
                    if x[g, FIN_PLACE + q] < 0:
                        x[g, FIN_PLACE + q] = 3
                x[g, NUM_FIN] = 4
                _finish(x, t, g)
                ended = True
        again = t[F_ACE_AGAIN] != 0 and a % 13 == 12 and not out  # R7.5
    if not ended and not again:  # the next seat still holding cards (R7.4)
        q = (p + 1) & 3
        while x[g, HANDS + q] == 0:
            q = (q + 1) & 3
        x[g, TO_MOVE] = q
    return ended


@helper
def _start_play(x: np.ndarray, t: np.ndarray, g: int) -> None:
    """The start of play: the declarer leads (R2.3); Fantan's table opens at the named rank (R7.2)."""
    d = x[g, DECLARER]
    x[g, TO_MOVE] = d
    x[g, LEADER] = d
    if t[_krow(x[g, CONTRACT]) + K_FANTAN]:
        x[g, PHASE] = FANTAN_PLAY
        x[g, PLAYABLE] = I64(RANK_CARDS[max(x[g, FANTAN_RANK], 0)] & U64(t[F_DECK]))
    else:
        x[g, PHASE] = PLAY
        x[g, PLAYABLE] = 0


@helper
def _declare(x: np.ndarray, t: np.ndarray, g: int, a: int) -> None:
    """The declaration (R3): contract, trump suit or Fantan rank; then doubling or play."""
    i = a - DECLARE_BASE
    x[g, CONTRACT] = t[T_DECL_K + i]
    x[g, TRUMP] = t[T_DECL_TRUMP + i]
    x[g, FANTAN_RANK] = t[T_DECL_RANK + i]
    if t[F_DOUBLING_OFF]:
        _start_play(x, t, g)
    else:
        x[g, PHASE] = DOUBLE
        x[g, DOUBLE_STEP] = 0
        x[g, TO_MOVE] = (x[g, DECLARER] + 1) & 3


@helper
def _double(x: np.ndarray, t: np.ndarray, g: int, a: int) -> bool:
    """One doubling decision (R6.1); after the declarer's decision: R6.6 split or play. True if the deal ended."""
    s = x[g, TO_MOVE]
    x[g, DOUBLES + s] = REL_TO_ABS_ARR[s, a - DOUBLE_BASE]
    step = x[g, DOUBLE_STEP] + 1
    x[g, DOUBLE_STEP] = step
    d = x[g, DECLARER]
    if step < 4:
        x[g, TO_MOVE] = (d + 1 + step) & 3
        return False
    r = _krow(x[g, CONTRACT])
    doubled = x[g, DOUBLES] | x[g, DOUBLES + 1] | x[g, DOUBLES + 2] | x[g, DOUBLES + 3]
    if t[F_SPLIT] != 0 and t[r + K_POSITIVE] == 0 and doubled == 0:  # R6.6: not played
        total = t[r + K_TOTAL]
        share = total // 3
        for q in range(4):
            x[g, SCORES + q] = share
        x[g, SCORES + d] = total - 3 * share
        x[g, PHASE] = OVER
        return True
    _start_play(x, t, g)
    return False


@helper
def _apply_game(x: np.ndarray, t: np.ndarray, g: int, a: int) -> bool:
    """Action ``a`` (legal) of the seat on move in game g (``Deal.apply``); True if the deal ended."""
    phase = x[g, PHASE]
    if phase == PLAY:
        return _play(x, t, g, a)
    if phase == FANTAN_PLAY:
        return _fantan(x, t, g, a)
    if phase == DOUBLE:
        return _double(x, t, g, a)
    if phase == DECLARE:
        _declare(x, t, g, a)
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
def _clear_game(x: np.ndarray, g: int) -> None:
    """Game g's row before its set-up (``core.START_ROW``): empty, no trick, no Fantan place."""
    for c in range(NUM_COLUMNS):
        x[g, c] = START_ROW[c]


@helper
def _setup_game(x: np.ndarray, t: np.ndarray, g: int, declarer: int, must_double: int, specs: np.ndarray) -> None:
    """The set-up of game g once its hands are dealt (``Deal.from_hands``): the declarer leads, R6.4
    ``must_double``; ``specs[g % len(specs)]`` is its (contract row or -1, trump, rank, declaration-action
    mask, available-names mask). A fixed contract is declared at once: doubling (R6) or play."""
    x[g, DECLARER] = declarer
    x[g, LEADER] = declarer
    x[g, TO_MOVE] = declarer
    x[g, MUST_DOUBLE] = must_double
    row = g % specs.shape[0]
    x[g, CONTRACT] = specs[row, 0]
    x[g, TRUMP] = specs[row, 1]
    x[g, FANTAN_RANK] = specs[row, 2]
    x[g, AVAIL_DECL] = specs[row, 3]
    x[g, AVAIL_NAMES] = specs[row, 4]
    x[g, PHASE] = DECLARE
    if specs[row, 0] >= 0:
        if t[F_DOUBLING_OFF]:
            _start_play(x, t, g)
        else:
            x[g, PHASE] = DOUBLE
            x[g, TO_MOVE] = (declarer + 1) & 3


@kernel()
def start(x: np.ndarray, t: np.ndarray, games: np.ndarray, hands: np.ndarray, declarer: np.ndarray,
          must_double: np.ndarray, specs: np.ndarray) -> None:  # fmt: skip
    """Fresh deals in ``games`` (int64 [n]) from ``hands`` (uint64 [n, 4]), ``declarer`` and ``must_double``
    (int64 [n]): :func:`_setup_game` of each."""
    for i in range(games.shape[0]):
        g = games[i]
        _clear_game(x, g)
        for q in range(4):
            x[g, HANDS + q] = I64(hands[i, q])
        _setup_game(x, t, g, declarer[i], must_double[i], specs)


@kernel()
def restart(x: np.ndarray, t: np.ndarray, games: np.ndarray, deal: np.ndarray, dealt: np.ndarray, specs: np.ndarray,
            order: np.ndarray) -> None:  # fmt: skip
    """Fresh deals in ``games`` (int64 [n]): each game's next deal of the stream, as :func:`step` restarts a game
    (``deal``: int64 ``[key (its bits), declarer or -1]``; ``dealt``: deals started per game, counted)."""
    n = x.shape[0]
    key, declarer = U64(deal[0]), deal[1]
    for i in range(games.shape[0]):
        g = games[i]
        _start_game(x, t, g, key, dealt[g] * n + g, declarer, specs, order)
        dealt[g] += 1


@helper
def _start_game(x: np.ndarray, t: np.ndarray, g: int, key: np.uint64, k: int, declarer: int, specs: np.ndarray,
                order: np.ndarray) -> None:  # fmt: skip
    """A fresh game g with deal ``k`` of the stream (``dealing.deal_stream``; ``declarer`` < 0: drawn);
    ``order[g]`` is scratch for the shuffle (R1.4)."""
    _clear_game(x, g)
    deck = U64(t[F_DECK])
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
    hs = t[F_HAND_SIZE]
    for q in range(4):
        h = U0
        for i in range(q * hs, (q + 1) * hs):
            h |= U1 << U64(order[g, i])
        x[g, HANDS + q] = I64(h)
    _setup_game(x, t, g, declarer if declarer >= 0 else I64(_draw(key, k, 0) >> U64(62)), 0, specs)


@parallel
def step(x: np.ndarray, t: np.ndarray, low: np.ndarray, high: np.ndarray, actions: np.ndarray, done: np.ndarray,
         rewards: np.ndarray, specs: np.ndarray, deal: np.ndarray, dealt: np.ndarray,
         order: np.ndarray) -> int:  # fmt: skip
    """One step of every game (``backend.Kernels.step``): check, apply, rewards, restarts, then the new legal
    words into ``low``, ``high``. ``deal``: int64 ``[restart, key (its bits), declarer or -1, hold]``: with ``hold``
    set, a game whose action is :data:`HOLD` does not move (else HOLD is illegal); ``dealt``: deals started per game;
    ``order`` uint8 [B, 64] scratch. Returns the number of deals that ended, or -1 (nothing applied) if an action of
    a game on move is illegal. One parallel loop (a check is cheaper serial than a second loop's start-up on several
    threads)."""
    n = actions.shape[0]
    hold = deal[3] != 0
    for g in range(n):
        if x[g, PHASE] != OVER and not (hold and actions[g] == HOLD) and not _is_legal(low[g], high[g], actions[g]):
            return -1
    restart, key, declarer = deal[0] != 0, U64(deal[1]), deal[2]
    for g in prange(n):
        over = x[g, PHASE] != OVER and not (hold and actions[g] == HOLD) and _apply_game(x, t, g, actions[g])
        done[g] = over
        if over:
            for q in range(4):
                rewards[g, q] = x[g, SCORES + q]
            if restart:
                _start_game(x, t, g, key, dealt[g] * n + g, declarer, specs, order)
                dealt[g] += 1
        low[g], high[g] = _legal_game(x, t, g)
    ended = 0
    for g in range(n):
        ended += done[g]
    return ended
