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
    out = [0] * n
    seats_of = _SEATS_OF
    others = _OTHERS[n] if n <= 8 else tuple(((1 << n) - 1) & ~(1 << i) for i in range(n))  # every seat but i
    for i in range(n):
        m = doubles[i] & others[i]
        if m:
            # one pass per doubled direction i -> j: each direction moves the score difference once, from the
            # lower scorer to the higher, so a pair doubled both ways moves it twice
            si = scores[i]
            gain = 0
            for j in seats_of[m]:
                d = si - scores[j]
                gain += d
                out[j] -= d
            out[i] += gain
    return out


#: ``_SEATS_OF[m]``: the seats (bits) of the seat mask ``m``, ascending (any table of up to 8 seats).
_SEATS_OF: tuple[tuple[int, ...], ...] = tuple(tuple(j for j in range(8) if m >> j & 1) for m in range(256))


#: ``_OTHERS[n][i]``: the mask of the ``n`` seats but seat ``i`` (what settlement keeps of ``doubles[i]``).
_OTHERS: tuple[tuple[int, ...], ...] = tuple(tuple(((1 << n) - 1) & ~(1 << i) for i in range(n)) for n in range(9))


def split_scores(total: int, declarer: int) -> list[int]:
    """R6.6 ``split``: each non-declarer scores floor(total / 3), the declarer the remainder."""
    share = total // 3
    out = [share] * 4
    out[declarer] = total - 3 * share
    return out
