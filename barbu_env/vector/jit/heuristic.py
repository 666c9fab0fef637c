"""The heuristic agent as kernels: ``agents.heuristic``'s decisions over the batched state (RULES.md R3-R9).

:func:`heuristic_actions` writes, for each game on move, the action ``agents.heuristic.heuristic_action``
takes for the seat on move: the declaration (R3), doubling (R6, with the R6.4 obligation through the legal
doubles), trick play (R4, R5, R9, R10.2) and Fantan (R7) under every rule option of classic Barbu the batched
engine supports; :func:`rollout_scores` plays deals out with it in every seat (PIMC's rollouts). Each function
below is the scalar form of the Python function it names, with the same floating-point operations in the same
order, so that both make *exactly* the same choice (the tests compare them decision by decision). The one fact
the Python rules read from the history, "the last three actions were passes" (Fantan with
``fantan_pass=free``), is the state's ``pass_run`` counter. The extra table (``hv``) is
``vector.heuristic.heuristic_tables``: per contract row, the points of each card, then whether any card scores.
"""

from __future__ import annotations

import numpy as np
from numba import prange
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros

from ...actions import DECLARE_BASE, DOUBLE_BASE, FANTAN_BASE, PASS, TRUMPS_BASE
from ...cards import NUM_CARDS, SUIT_MASK
from ..tables import DECLARE, DOUBLE, FANTAN_PLAY, OVER, PLAY, RANK_CARDS, REL_TO_ABS_ARR, SUIT, U64
from .common import (
    AVAIL_DECL,
    BEST,
    CONTRACT,
    DECLARER,
    EXCLUDED,
    F_DECK,
    F_FREE_PASS,
    F_HAND_SIZE,
    FANTAN_RANK,
    HANDS,
    I64,
    K_FANTAN,
    K_FANTAN_PTS,
    K_PER_TRICK,
    K_POS_VALS,
    K_POSITIVE,
    K_RAVAGE,
    K_TOTAL,
    LED,
    PASS_RUN,
    PHASE,
    PLAYED,
    SCORES,
    T_DECL_K,
    TO_MOVE,
    TRICK_BY,
    TRICK_LEN,
    TRICK_NO,
    TRUMP,
    U0,
    U1,
    _krow,
    _popcount,
    helper,
    parallel,
)
from .rules import _apply_game, _legal_cards, _legal_doubles

#: ``LOWER[c]`` / ``HIGHER[c]``: the cards of c's suit ranked below / above c.
LOWER = np.array([SUIT_MASK[c // 13] & ((1 << c) - 1) for c in range(NUM_CARDS)], U64)
HIGHER = np.array([SUIT_MASK[c // 13] & ~((2 << c) - 1) for c in range(NUM_CARDS)], U64)
PLAYERS = 4  # classic Barbu (the batched engine)


# ------------------------------------------------------------------------------------------ bit helpers
@helper
def _low(m: np.uint64) -> int:
    """Lowest card id of a non-empty mask."""
    return I64(trailing_zeros(m))


@helper
def _high(m: np.uint64) -> int:
    """Highest card id of a non-empty mask."""
    return 63 - I64(leading_zeros(m))


@helper
def _suit_count(m: np.uint64, s: int) -> int:
    return _popcount(m & SUIT[s])


# ------------------------------------------------------------------------------------------ hand evaluation
@helper
def _exp(hand: np.uint64, c: int) -> float:
    """``heuristic._exposure(hand)[c]`` for a card c of ``hand``: c is the i-th lowest of its suit."""
    i = _popcount(hand & LOWER[c])
    return max(0.0, min(1.0, (c % 13 - 2 * i - 4) / 8))


@helper
def _estimate_negative(hand: np.uint64, k: int, num_tricks: int, declarer: bool, t: np.ndarray,
                       hv: np.ndarray) -> float:  # fmt: skip
    """``heuristic._estimate_negative`` (R4, R9, R10.2)."""
    total_exp = 0.0
    m = hand
    while m:
        c = _low(m)
        m &= m - U1
        total_exp += _exp(hand, c)
    est = 0.95 * total_exp + (0.6 if declarer else 0.3)
    tricks = est if est < num_tricks else float(num_tricks)
    share = tricks / num_tricks
    score = t[_krow(k) + K_PER_TRICK] * tricks
    if hv[k, NUM_CARDS]:
        for c in range(NUM_CARDS):
            v = hv[k, c]
            if v == 0:
                continue
            if (hand >> U64(c)) & U1:
                p = 0.15 + 0.75 * _exp(hand, c)
            else:
                above_mine = 0.0
                mm = hand & HIGHER[c]
                while mm:
                    x = _low(mm)
                    mm &= mm - U1
                    above_mine += _exp(hand, x)
                p = share * 0.8 + 0.25 * above_mine
            score += v * (p if p < 1.0 else 1.0)
    pos_sum, any_pos = 0, False
    for i in range(num_tricks):
        pos_sum += t[_krow(k) + K_POS_VALS + i]
        any_pos = any_pos or t[_krow(k) + K_POS_VALS + i] != 0
    if any_pos:
        long_high = 0
        for s in range(4):
            mm = hand & SUIT[s]
            i = 0
            while mm:
                c = _low(mm)
                mm &= mm - U1
                if i >= 4 and c % 13 >= 8:
                    long_high += 1
                i += 1
        p_end = share + 0.08 * long_high
        score += pos_sum * (p_end if p_end < 1.0 else 1.0)
    rav = t[_krow(k) + K_RAVAGE]
    if rav:
        longest = 0
        for s in range(4):
            longest = max(longest, _suit_count(hand, s))
        p = share + 0.05 * max(0, longest - 4)
        score += rav * (p if p < 1.0 else 1.0)
    return score


@helper
def _trump_tricks(hand: np.uint64, trump: int) -> float:
    """``heuristic._trump_tricks``: top cards, trump length, short side suits."""
    t = 0.0
    n_trumps = _suit_count(hand, trump)
    for s in range(4):
        ms = hand & SUIT[s]
        n = _popcount(ms)
        if s == trump:
            top = 0.0
            mm = ms
            for _ in range(min(3, n)):  # the three highest, highest first
                c = _high(mm)
                mm &= ~(U1 << U64(c))
                top += max(0.0, (c % 13 - 7) / 5)
            t += top
            t += max(0, n - 3) * 0.9
        else:
            if n and _high(ms) % 13 == 12:
                t += 0.9
            if n >= 2 and (ms >> U64(13 * s + 11)) & U1:
                t += 0.5
            if n_trumps >= 3 and n <= 1:
                t += 0.6 * (2 - n)
    return t


@helper
def _fantan_cost(hand: np.uint64, rank: int, deck: np.uint64) -> int:
    """``heuristic._fantan_cost``: rank distance from ``rank`` to the hand's cards."""
    out = 0
    m = hand & deck
    while m:
        c = _low(m)
        m &= m - U1
        out += abs(c % 13 - rank)
    return out


@helper
def _fantan_mean_cost(rank: int, deck: np.uint64) -> float:
    total, n = 0, 0
    for r in range(13):
        if deck & RANK_CARDS[r]:
            total += abs(r - rank)
            n += 1
    return total / n


@helper
def _best_trump(hand: np.uint64) -> int:
    """``heuristic.best_trump``: most estimated tricks, then longest, then the highest suit."""
    best, best_t, best_n = 0, _trump_tricks(hand, 0), _suit_count(hand, 0)
    for s in range(1, 4):
        t, n = _trump_tricks(hand, s), _suit_count(hand, s)
        if t > best_t or (t == best_t and n >= best_n):
            best, best_t, best_n = s, t, n
    return best


@helper
def _best_fantan_rank(hand: np.uint64, deck: np.uint64) -> int:
    """``heuristic.best_fantan_rank``: least travel relative to an average hand, then nearest the middle."""
    n = _popcount(hand & deck)
    best, best_v, best_d = -1, 0.0, 0
    for r in range(13):
        if not deck & RANK_CARDS[r]:
            continue
        v = _fantan_cost(hand, r, deck) - n * _fantan_mean_cost(r, deck)
        d = abs(r - 6)
        if best < 0 or v < best_v or (v == best_v and d < best_d):
            best, best_v, best_d = r, v, d
    return best


@helper
def _estimate(hand: np.uint64, k: int, declarer: bool, trump: int, rank: int, t: np.ndarray, hv: np.ndarray) -> float:
    """``heuristic.estimate``: the hand's estimated score in contract row ``k``."""
    num_tricks = t[F_HAND_SIZE]
    deck = U64(t[F_DECK])
    if t[_krow(k) + K_FANTAN]:
        n = _popcount(hand & deck)
        rel = n * _fantan_mean_cost(rank, deck) - _fantan_cost(hand, rank, deck)
        fp = _krow(k) + K_FANTAN_PTS
        f0, f1, f2, f3 = t[fp], t[fp + 1], t[fp + 2], t[fp + 3]
        mean = (f0 + f1 + f2 + f3) / 4
        lo, hi = min(min(f0, f1), min(f2, f3)), max(max(f0, f1), max(f2, f3))
        kf = (f0 - f3) / 50
        est = mean + kf * (0.8 * rel + (3.0 if declarer else 0.0))
        if kf >= 0:
            x = est if est > lo else float(lo)
            y = 0.8 * hi
            return x if x < y else y
        x = est if est < hi else float(hi)
        y = 0.8 * lo
        return x if x > y else y
    if t[_krow(k) + K_POSITIVE]:
        if trump >= 0:
            tricks = _trump_tricks(hand, trump)
        else:
            tricks = 0.0
            for s in range(4):
                if (hand >> U64(13 * s + 12)) & U1:
                    tricks += 0.9
        return t[_krow(k) + K_PER_TRICK] * (0.5 * tricks + 0.5 * num_tricks / PLAYERS + (0.3 if declarer else 0.0))
    return _estimate_negative(hand, k, num_tricks, declarer, t, hv)


@helper
def _declaration(x: np.ndarray, t: np.ndarray, hv: np.ndarray, g: int) -> int:
    """``heuristic.choose_declaration`` (R3): the available contract furthest above its table mean."""
    seat = x[g, TO_MOVE]
    hand = U64(x[g, HANDS + seat])
    deck = U64(t[F_DECK])
    avail = x[g, AVAIL_DECL]
    best_a, best_v = -1, -1e18
    trump_of_hand, rank_of_hand = _best_trump(hand), _best_fantan_rank(hand, deck)
    for i in range(26):
        if not (avail >> i) & 1:
            continue
        a = DECLARE_BASE + i
        trump, rank = -1, -1
        if a >= FANTAN_BASE:
            rank = a - FANTAN_BASE
            if rank != rank_of_hand:
                continue
        elif a >= TRUMPS_BASE:
            trump = a - TRUMPS_BASE
            if trump != trump_of_hand:
                continue
        k = t[T_DECL_K + i]
        v = _estimate(hand, k, True, trump, rank, t, hv) - t[_krow(k) + K_TOTAL] / PLAYERS
        if v > best_v:
            best_a, best_v = a, v
    return best_a


@helper
def _double(x: np.ndarray, t: np.ndarray, hv: np.ndarray, g: int) -> int:
    """``heuristic.choose_double`` (R6): double when the hand beats the table mean by a margin; the legal
    choice nearest that wish (the R6.4 obligation is in the legal doubles)."""
    legal = _legal_doubles(x, t, g)
    if legal & (legal - 1) == 0:
        return DOUBLE_BASE + _low(U64(legal))
    seat, declarer, k = x[g, TO_MOVE], x[g, DECLARER], x[g, CONTRACT]
    total = t[_krow(k) + K_TOTAL]
    mean = total / 4
    est = _estimate(U64(x[g, HANDS + seat]), k, seat == declarer, x[g, TRUMP], x[g, FANTAN_RANK], t, hv)
    adv = est - mean
    spread = abs(total) / 6
    scale = spread if spread > 4.0 else 4.0
    positive = t[_krow(k) + K_POSITIVE] != 0
    want = 0
    for q in range(4):
        if q == seat:
            continue
        if seat == declarer:
            wish = adv > 0.5 * scale
        elif q == declarer:
            wish = adv > (0.9 if positive else 0.6) * scale
        else:
            wish = adv > 0.6 * scale
        if wish:
            want |= 1 << q
    best_a, best_v = -1, -1e18
    for j in range(8):
        if not (legal >> j) & 1:
            continue
        v = -_popcount(U64(REL_TO_ABS_ARR[seat, j] ^ want))
        if best_a < 0 or v > best_v:
            best_a, best_v = DOUBLE_BASE + j, v
    return best_a


# ------------------------------------------------------------------------------------------ card play
@helper
def _expected_dumps(unseen: np.uint64, x: np.ndarray, g: int, seat: int, n_after: int, led: int, k: int,
                    hv: np.ndarray) -> float:  # fmt: skip
    """``heuristic._expected_dumps``: penalty points the ``n_after`` players after ``seat`` add to a trick of
    suit ``led`` (a known void dumps its worst possible card, the others follow with an average card)."""
    if not hv[k, NUM_CARDS]:
        return 0.0
    out = 0.0
    suit_cards = unseen & SUIT[led]
    n_suit = _popcount(suit_cards)
    avg_suit = 0.0
    if n_suit:
        total = 0
        m = suit_cards
        while m:
            c = _low(m)
            m &= m - U1
            total += hv[k, c]
        avg_suit = -total / n_suit
    for j in range(1, n_after + 1):
        could = unseen & ~U64(x[g, EXCLUDED + ((seat + j) & 3)])
        if could & SUIT[led]:
            out += avg_suit
        else:
            worst = 0
            m = could
            while m:
                c = _low(m)
                m &= m - U1
                if -hv[k, c] > worst:
                    worst = -hv[k, c]
            out += 0.8 * worst
    return out


@helper
def _negative_card(x: np.ndarray, t: np.ndarray, hv: np.ndarray, g: int, seat: int, m: np.uint64) -> int:
    """``heuristic._negative_card``: P(win) x cost of the trick minus the value of shedding the card."""
    k = x[g, CONTRACT]
    scoring = hv[k, NUM_CARDS] != 0
    hand = U64(x[g, HANDS + seat])
    deck = U64(t[F_DECK])
    unseen = deck & ~hand & ~U64(x[g, PLAYED])
    num_tricks = t[F_HAND_SIZE]
    tno = x[g, TRICK_NO]
    remaining = num_tricks - tno
    rav = t[_krow(k) + K_RAVAGE]
    ravage = rav / num_tricks if rav else 0.0
    per_trick = t[_krow(k) + K_PER_TRICK]
    base_now = -((per_trick + t[_krow(k) + K_POS_VALS + tno]) + ravage)
    future = 0
    for i in range(tno + 1, num_tricks):
        future += t[_krow(k) + K_POS_VALS + i]
    future_pos = -future - (per_trick + ravage) * (remaining - 1)
    pen_left = 0
    if scoring:
        mm = unseen | hand
        while mm:
            c = _low(mm)
            mm &= mm - U1
            pen_left -= hv[k, c]
    avg_cost = (future_pos + pen_left) / remaining if remaining else 0.0
    n_in = x[g, TRICK_LEN]
    n_after = 3 - n_in
    led, best = x[g, LED], x[g, BEST]
    trick_cost, add, can_hold_later = 0.0, 0.0, U0
    if n_in:
        in_trick = 0
        for q in range(4):
            b = U64(x[g, TRICK_BY + q])
            if b:
                in_trick += hv[k, _low(b)]
        trick_cost = base_now - in_trick
        add = _expected_dumps(unseen, x, g, seat, n_after, led, k, hv)
        for j in range(1, n_after + 1):
            can_hold_later |= unseen & ~U64(x[g, EXCLUDED + ((seat + j) & 3)])
    best_c, best_score = -1, 1e18
    mm = m
    while mm:
        c = _low(mm)
        mm &= mm - U1
        s = c // 13
        pen = -hv[k, c]
        su = unseen & SUIT[s]
        if not n_in:  # leading
            h = _popcount(su & HIGHER[c])
            lo = _popcount(su & LOWER[c])
            p_win = 1.0 if h == 0 else (lo / (lo + h)) ** 1.5
            cost_win = (base_now + pen) + _expected_dumps(unseen, x, g, seat, n_after, s, k, hv)
        elif s == led:
            if c < best:
                p_win = 0.0
            elif n_after == 0:
                p_win = 1.0
            else:
                h = _popcount(can_hold_later & HIGHER[c])
                lo = _popcount(can_hold_later & LOWER[c])
                p_win = 1.0 if h == 0 else (lo + 1) / (lo + h + 1)
            cost_win = (trick_cost + pen) + add
        else:
            p_win = 0.0
            cost_win = 0.0
        hi_unseen = _popcount(su & HIGHER[c])
        lo_unseen = _popcount(su & LOWER[c])
        exposure = 1.0 if su == U0 else lo_unseen / (lo_unseen + hi_unseen)
        lower_pen = 0.0
        if scoring and lo_unseen:
            lp = 0
            lows = su & LOWER[c]
            while lows:
                y = _low(lows)
                lows &= lows - U1
                lp -= hv[k, y]
            third = 3 * lp / lo_unseen
            lower_pen = third if third < lp else float(lp)
        shed = 0.45 * pen + exposure * (0.6 * avg_cost + 0.35 * lower_pen)
        if _suit_count(hand, s) == 1 and remaining > 2:
            shed += 0.15 * avg_cost
        score = p_win * cost_win - shed - 0.001 * (c % 13)
        if score < best_score:
            best_c, best_score = c, score
    return best_c


@helper
def _cheapest(m: np.uint64, tmask: np.uint64) -> int:
    """``heuristic._cheapest``: the lowest card, a side card before a trump."""
    side = m & ~tmask
    return _low(side) if side else _low(m)


@helper
def _positive_card(x: np.ndarray, g: int, seat: int, m: np.uint64, deck: np.uint64) -> int:
    """``heuristic._positive_card`` (Trumps, R5.4, R5.5): draw trumps, cash masters, win cheaply."""
    hand = U64(x[g, HANDS + seat])
    unseen = deck & ~hand & ~U64(x[g, PLAYED])
    trump = x[g, TRUMP]
    tmask = SUIT[trump]  # SUIT[-1] == 0
    n_in = x[g, TRICK_LEN]
    n_after = 3 - n_in
    can_hold = U0
    for j in range(1, n_after + 1):
        can_hold |= unseen & ~U64(x[g, EXCLUDED + ((seat + j) & 3)])
    if not n_in:  # leading
        tm = m & tmask
        if tm:
            top = _high(tm)
            if not unseen & HIGHER[top] or not unseen & tmask:
                return top
            return _low(tm)
        best_c, b0, b1, b2 = -1, 0, 0, 0
        mm = m
        while mm:
            c = _low(mm)
            mm &= mm - U1
            s = c // 13
            master = not unseen & HIGHER[c]
            ruff_risk = False
            if unseen & tmask:
                for j in range(1, n_after + 1):
                    ex = U64(x[g, EXCLUDED + ((seat + j) & 3)])
                    if not (unseen & SUIT[s] & ~ex) and unseen & tmask & ~ex:
                        ruff_risk = True
                        break
            k0 = 1 if master and not ruff_risk else 0
            k1 = c % 13 if master else -(c % 13)
            k2 = _suit_count(unseen, s)
            if best_c < 0 or k0 > b0 or (k0 == b0 and (k1 > b1 or (k1 == b1 and k2 > b2))):
                best_c, b0, b1, b2 = c, k0, k1, k2
        return best_c
    led, best = x[g, LED], x[g, BEST]
    best_suit = best // 13
    best_is_trump = trump >= 0 and best_suit == trump
    winners = U0
    mm = m
    while mm:
        c = _low(mm)
        mm &= mm - U1
        s = c // 13
        if (s == best_suit and c > best) or (s == trump and not best_is_trump):
            winners |= U1 << U64(c)
    if winners:
        if n_after == 0:
            return _cheapest(winners, tmask)
        safe = U0
        mm = winners
        while mm:
            c = _low(mm)
            mm &= mm - U1
            s = c // 13
            beaten = can_hold & HIGHER[c]
            ruff = False
            if s != trump and trump >= 0:
                for j in range(1, n_after + 1):
                    could = unseen & ~U64(x[g, EXCLUDED + ((seat + j) & 3)])
                    if not could & SUIT[led] and could & tmask:
                        ruff = True
            if not beaten and not ruff:
                safe |= U1 << U64(c)
        if safe:
            return _cheapest(safe, tmask)
        tw = winners & tmask
        if tw and best_suit != trump and led != trump:
            return _low(tw)
    # discard: the lowest side card, from the shortest side suit (``heuristic._discard_positive``)
    side = m & ~tmask
    pool = side if side else m
    best_c, b0, b1 = -1, 0, 0
    while pool:
        c = _low(pool)
        pool &= pool - U1
        k0, k1 = c % 13, _suit_count(hand, c // 13)
        if best_c < 0 or k0 < b0 or (k0 == b0 and k1 < b1):
            best_c, b0, b1 = c, k0, k1
    return best_c


@helper
def _fantan_card(x: np.ndarray, t: np.ndarray, g: int, seat: int, m: np.uint64) -> int:
    """``heuristic._fantan_card`` (R7): open one's own cards, not the others'; with ``fantan_pass=free``,
    pass rather than help the others, unless the last three actions were passes."""
    if not m:
        return PASS
    hand = U64(x[g, HANDS + seat])
    deck = U64(t[F_DECK])
    played = U64(x[g, PLAYED])
    unseen = deck & ~hand & ~played
    rank = x[g, FANTAN_RANK]
    best_c, best_score = -1, -1e18
    mm = m
    while mm:
        c = _low(mm)
        mm &= mm - U1
        s, r = c // 13, c % 13
        suit = SUIT[s]
        bt = U1 << U64(c)
        if not (played >> U64(13 * s + rank)) & U1:  # the start card opens both directions
            opened = ((bt >> U1) if r > 0 else U0) | ((bt << U1) if r < 12 else U0)
            beyond = suit & ~bt
        elif r < rank:
            opened = (bt >> U1) if r > 0 else U0
            beyond = LOWER[c]
        else:
            opened = (bt << U1) if r < 12 else U0
            beyond = HIGHER[c]
        opened &= suit & deck
        score = (1.5 * _popcount(opened & hand) - 1.5 * _popcount(opened & unseen)
                 + 0.8 * _popcount(hand & beyond) - 0.3 * _popcount(unseen & beyond))  # fmt: skip
        if score > best_score:
            best_c, best_score = c, score
    if t[F_FREE_PASS] and best_score < -1.5 and _popcount(hand) > 2 and x[g, PASS_RUN] < PLAYERS - 1:
        return PASS
    return best_c


@helper
def _heuristic_game(x: np.ndarray, t: np.ndarray, hv: np.ndarray, g: int) -> int:
    """``heuristic.heuristic_action`` for the seat on move of game g; -1 once the deal is over."""
    phase = x[g, PHASE]
    if phase == PLAY or phase == FANTAN_PLAY:
        seat = x[g, TO_MOVE]
        m = _legal_cards(x, t, g)
        if phase == FANTAN_PLAY:
            return _fantan_card(x, t, g, seat, m)
        if m & (m - U1) == U0:
            return _low(m)
        if t[_krow(x[g, CONTRACT]) + K_POSITIVE]:
            return _positive_card(x, g, seat, m, U64(t[F_DECK]))
        return _negative_card(x, t, hv, g, seat, m)
    if phase == DECLARE:
        return _declaration(x, t, hv, g)
    if phase == DOUBLE:
        return _double(x, t, hv, g)
    return -1


@parallel
def heuristic_actions(x: np.ndarray, t: np.ndarray, hv: np.ndarray, want: np.ndarray, out: np.ndarray) -> None:
    """``out[g]``: the heuristic's action for the seat on move of each game g with ``want[g]`` (-1 for games
    over); other entries are left as they are."""
    for g in prange(out.shape[0]):
        if want[g]:
            out[g] = _heuristic_game(x, t, hv, g)


@parallel
def rollout_scores(x: np.ndarray, t: np.ndarray, hv: np.ndarray, first: np.ndarray, seat: int, out: np.ndarray) -> None:
    """Per game g: apply ``first[g]`` (legal, for the seat on move), then the heuristic in every seat until the
    deal is over (``agents.heuristic.rollout``); ``out[g]``: the deal score of ``seat``."""
    for g in prange(out.shape[0]):
        over = _apply_game(x, t, g, first[g])
        while not over and x[g, PHASE] != OVER:
            over = _apply_game(x, t, g, _heuristic_game(x, t, hv, g))
        out[g] = x[g, SCORES + seat]


__all__ = ["heuristic_actions", "rollout_scores"]
