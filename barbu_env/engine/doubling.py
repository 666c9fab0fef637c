"""Doubling (RULES.md R6): who may double whom, the R6.4 obligation in the mask, and settlement.

Doubles are stored per seat as a bitmask of the absolute seats that seat doubled. Decisions are
taken in the order left of declarer, across, right, declarer (R6.1).
"""

from __future__ import annotations

from ..actions import DOUBLE_OF_SUBSET, DOUBLE_SUBSETS
from ..rules import Rules

#: ``REL_TO_ABS[seat][m]``: absolute-seat mask of relative subset ``m`` (bit 0 left, 1 across, 2 right).
REL_TO_ABS: tuple[tuple[int, ...], ...] = tuple(
    tuple(sum(1 << ((seat + 1 + i) % 4) for i in range(3) if m >> i & 1) for m in range(8)) for seat in range(4)
)


def doubling_order(declarer: int) -> tuple[int, int, int, int]:
    """R6.1: left of the declarer first, the declarer last."""
    return ((declarer + 1) % 4, (declarer + 2) % 4, (declarer + 3) % 4, declarer)


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
    if seat == declarer:
        bit_d = 1 << declarer
        for s in range(4):
            if s != seat and doubles[s] & bit_d:
                doubled_me |= 1 << s
    # the answer depends on these few values only: computed once per combination
    key = (seat, declarer, bool(positive), rules.doubling, doubled_me, bool(must_double))
    out = _LEGAL_DOUBLES.get(key)
    if out is None:
        declarer_only = rules.doubling == "declarer_only"
        out = _LEGAL_DOUBLES[key] = _legal_doubles(seat, declarer, positive, declarer_only, doubled_me, must_double)
    return out


_LEGAL_DOUBLES: dict[tuple[int, int, bool, str, int, bool], tuple[int, ...]] = {}


def _legal_doubles(
    seat: int, declarer: int, positive: bool, declarer_only: bool, doubled_me: int, must_double: bool
) -> tuple[int, ...]:
    bit_d = 1 << declarer
    if seat == declarer:
        if declarer_only:  # R6.7: redouble all who doubled, or none
            allowed_sets = {0, doubled_me}
        else:
            allowed_sets = None
        allowed = doubled_me
    else:
        allowed = bit_d if (positive or declarer_only) else 0b1111 & ~(1 << seat)
        allowed_sets = None
    out = []
    for m in DOUBLE_SUBSETS:
        targets = REL_TO_ABS[seat][m]
        if targets & ~allowed:
            continue
        if allowed_sets is not None and targets not in allowed_sets:
            continue
        if must_double and not targets & bit_d:  # R6.4: the obligation is due now
            continue
        out.append(DOUBLE_OF_SUBSET[m])
    return tuple(out)


def settlement(scores: list[int], doubles: list[int]) -> list[int]:
    """R6.5: for each pair, k directions doubled times the score difference, to the higher scorer."""
    n = len(scores)
    if n == 4:  # the pairs 01 02 03 12 13 23 written out (a deal's only settlement of classic Barbu)
        a, b, c, d = doubles
        if not (a | b | c | d):
            return [0, 0, 0, 0]
        s0, s1, s2, s3 = scores
        x01 = ((a >> 1 & 1) + (b & 1)) * (s0 - s1)
        x02 = ((a >> 2 & 1) + (c & 1)) * (s0 - s2)
        x03 = ((a >> 3 & 1) + (d & 1)) * (s0 - s3)
        x12 = ((b >> 2 & 1) + (c >> 1 & 1)) * (s1 - s2)
        x13 = ((b >> 3 & 1) + (d >> 1 & 1)) * (s1 - s3)
        x23 = ((c >> 3 & 1) + (d >> 2 & 1)) * (s2 - s3)
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


def split_scores(total: int, declarer: int) -> list[int]:
    """R6.6 ``split``: each non-declarer scores floor(total / 3), the declarer the remainder."""
    share = total // 3
    out = [share] * 4
    out[declarer] = total - 3 * share
    return out
