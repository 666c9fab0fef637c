"""Doubling (RULES.md R6, R12.6): who may double whom, the R6.4 obligation in the mask, and settlement.

Doubles are stored per seat as a bitmask of the absolute seats that seat doubled. Decisions are
taken in the order left of declarer, across, right, declarer (R6.1); with n seats, +1 … +(n−1), then
the declarer (R12.6).
"""

from __future__ import annotations

from functools import cache

from ..actions import DOUBLE_BASE, double_subsets
from ..rules import Rules


@cache
def rel_to_abs(n: int) -> tuple[tuple[int, ...], ...]:
    """``rel_to_abs(n)[seat][m]``: absolute-seat mask of relative subset ``m`` (bit i = offset +(i+1))."""
    return tuple(
        tuple(sum(1 << ((seat + 1 + i) % n) for i in range(n - 1) if m >> i & 1) for m in range(1 << (n - 1)))
        for seat in range(n)
    )


@cache
def double_targets(n: int) -> tuple[tuple[int, ...], ...]:
    """``double_targets(n)[seat][action - DOUBLE_BASE]``: the absolute seats a ``double:*`` action doubles."""
    return tuple(tuple(rel_to_abs(n)[s][m] for m in double_subsets(n)) for s in range(n))


#: Four seats' :func:`rel_to_abs` (bit 0 left, 1 across, 2 right).
REL_TO_ABS: tuple[tuple[int, ...], ...] = rel_to_abs(4)


def doubling_order(declarer: int, n: int = 4) -> tuple[int, ...]:
    """R6.1: left of the declarer first, the declarer last."""
    return (*((declarer + i) % n for i in range(1, n)), declarer)


def legal_doubles(
    rules: Rules, seat: int, declarer: int, positive: bool, doubles: list[int], must_double: bool
) -> list[int]:
    """Legal ``double:*`` action ids for ``seat`` (R6.2, R6.3, R6.4, R6.7), in action-id order."""
    return list(legal_double_ids(rules, seat, declarer, positive, doubles, must_double))


def legal_double_ids(
    rules: Rules, seat: int, declarer: int, positive: bool, doubles: list[int], must_double: bool
) -> tuple[int, ...]:
    """:func:`legal_doubles` as a shared tuple (computed once per combination of what it depends on)."""
    doubled_me = 0
    n = len(doubles)
    if seat == declarer:  # the seats that doubled the declarer
        x = doubles
        if n == 4:
            by = (x[0] >> seat & 1) | (x[1] >> seat & 1) << 1 | (x[2] >> seat & 1) << 2 | (x[3] >> seat & 1) << 3
        else:
            by = sum((x[s] >> seat & 1) << s for s in range(n))
        doubled_me = by & ~(1 << seat)
    # the answer depends on these few values only: computed once per combination
    key = (seat, declarer, bool(positive), rules.doubling, doubled_me, bool(must_double), n)
    out = _LEGAL_DOUBLES.get(key)
    if out is None:
        declarer_only = rules.doubling == "declarer_only"
        out = _LEGAL_DOUBLES[key] = _legal_doubles(seat, declarer, positive, declarer_only, doubled_me, must_double, n)
    return out


_LEGAL_DOUBLES: dict[tuple[int, int, bool, str, int, bool, int], tuple[int, ...]] = {}


def _legal_doubles(
    seat: int, declarer: int, positive: bool, declarer_only: bool, doubled_me: int, must_double: bool, n: int
) -> tuple[int, ...]:
    bit_d = 1 << declarer
    if seat == declarer:
        if declarer_only:  # R6.7: redouble all who doubled, or none
            allowed_sets = {0, doubled_me}
        else:
            allowed_sets = None
        allowed = doubled_me
    else:
        allowed = bit_d if (positive or declarer_only) else ((1 << n) - 1) & ~(1 << seat)
        allowed_sets = None
    out = []
    rel = rel_to_abs(n)[seat]
    for i, m in enumerate(double_subsets(n)):
        targets = rel[m]
        if targets & ~allowed:
            continue
        if allowed_sets is not None and targets not in allowed_sets:
            continue
        if must_double and not targets & bit_d:  # R6.4: the obligation is due now
            continue
        out.append(DOUBLE_BASE + i)
    return tuple(out)


def settlement(scores: list[int], doubles: list[int]) -> list[int]:
    """R6.5 / R12.6: for each pair, k directions doubled times the score difference, to the higher scorer."""
    n = len(scores)
    if n == 4:  # by pairs of seats, from the tables below (the settlement of every classic deal)
        a, b, c, d = doubles
        if not (a | b | c | d):
            return [0, 0, 0, 0]
        b0, b1, b2, b3 = _PAIR_BITS
        k01, k02, k03, k12, k13, k23 = _PAIR_COUNTS[b0[a & 15] + b1[b & 15] + b2[c & 15] + b3[d & 15]]
        s0, s1, s2, s3 = scores
        x01, x02, x03 = k01 * (s0 - s1), k02 * (s0 - s2), k03 * (s0 - s3)
        x12, x13, x23 = k12 * (s1 - s2), k13 * (s1 - s3), k23 * (s2 - s3)
        return [x01 + x02 + x03, x12 + x13 - x01, x23 - x02 - x12, -x03 - x13 - x23]
    out = [0] * n
    for i in range(n):
        for j in range(i + 1, n):
            k = (doubles[i] >> j & 1) + (doubles[j] >> i & 1)
            if k and scores[i] != scores[j]:
                d = k * abs(scores[i] - scores[j])
                hi, lo = (i, j) if scores[i] > scores[j] else (j, i)
                out[hi] += d
                out[lo] -= d
    return out


#: 4-seat settlement by the pairs of seats 01, 02, 03, 12, 13, 23: each pair's score difference moves once per
#: doubled direction (0, 1 or 2 times). ``_PAIR_BITS[i][m]``: seat ``i`` doubling the seats of mask ``m``, as a
#: 2-bit count per pair (pair p at bits 2p); the sum over the four seats holds every pair's count, and
#: ``_PAIR_COUNTS[sum]`` the six counts.
_PAIRS = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
_PAIR_BITS: tuple[tuple[int, ...], ...] = tuple(
    tuple(sum(1 << 2 * p for p, (a, b) in enumerate(_PAIRS) if i in (a, b) and m >> (a + b - i) & 1) for m in range(16))
    for i in range(4)
)
_PAIR_COUNTS: tuple[tuple[int, ...], ...] = tuple(tuple(k >> 2 * p & 3 for p in range(6)) for k in range(4096))


def split_scores(total: int, declarer: int, n: int = 4) -> list[int]:
    """R6.6 / R12.6 ``split``: each non-declarer scores floor(total / (n - 1)), the declarer the remainder."""
    share = total // (n - 1)
    out = [share] * n
    out[declarer] = total - (n - 1) * share
    return out
