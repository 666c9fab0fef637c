"""What one seat knows, and sampling the hidden cards consistently with it (for search agents).

An :class:`InfoState` is the seat's own hand plus the public record: contract, declarer, doubles,
every action with its seat, the current trick, the hand sizes, and per seat the cards it has
publicly shown it cannot hold (``Deal.excluded``: voids, trump duties, heart leads, forced passes).
It never holds another seat's hidden cards.

:func:`sample_hidden` deals the unseen cards to the other seats so that every seat gets its hand
size and no seat gets a card it has shown it cannot hold. Cards are placed one by one; before each
placement, Hall's condition over the subsets of the hidden seats (8 for 4 players) checks that the rest can
still be placed, so sampling never fails on a consistent state. Each card goes to an allowed seat
with probability proportional to that seat's free places (close to uniform, not exactly uniform
over all consistent deals).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from ..cards import copies_add, copies_cards
from .deal import Deal


@dataclass(frozen=True)
class InfoState:
    """The information of ``seat``: own hand and public history, never another seat's cards."""

    seat: int
    hand: int  # own cards, bitmask (a copies mask with two packs, R11.5)
    contract: str | None
    declarer: int
    phase: int
    to_move: int
    history: tuple[tuple[int, int], ...]  # (seat, action) for every action so far (all public)
    trick: tuple[int, ...]  # cards of the current trick, in play order
    leader: int
    hand_sizes: tuple[int, ...]
    played: int  # every card played so far (a copies mask with two packs)
    excluded: tuple[int, ...]  # per seat: cards it has shown it cannot hold
    doubles: tuple[int, ...]  # per seat: the seats it doubled
    available: tuple[str, ...]  # contracts the declarer may still choose
    must_double: int
    #: The deal as this seat sees it: other seats' hands emptied (rebuilt by :meth:`sample`).
    view: Deal = field(compare=False, repr=False)

    @classmethod
    def of(cls, deal: Deal, seat: int) -> InfoState:
        """The information state of ``seat`` in ``deal``."""
        view = deal.clone()
        held = [deal.held(s) for s in range(deal.n)]
        view.set_hands([h if s == seat else 0 for s, h in enumerate(held)])
        return cls(
            seat, held[seat], deal.contract_text, deal.declarer, deal.phase, deal.current_player,
            tuple(deal.history), tuple(deal.trick), deal.leader, tuple(h.bit_count() for h in held),
            deal.played_copies(), tuple(deal.excluded), tuple(deal.doubles), tuple(deal.available), deal.must_double,
            view,
        )  # fmt: skip

    def sample(self, rng: np.random.Generator) -> Deal:
        """A full deal consistent with this information (see :func:`sample_hidden`)."""
        return sample_hidden(self.view, self.seat, rng, self.hand_sizes)

    def unseen(self, deck: int) -> int:
        """Cards of ``deck`` that this seat has not seen: not in its hand and not played (one pack)."""
        return deck & ~self.hand & ~self.played


@cache
def _subsets(k: int) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
    """Per non-empty subset S of ``k`` hidden seats (as a mask): the non-empty masks T inside S, the seats of S."""
    full = 1 << k
    return tuple((tuple(t for t in range(1, full) if t & ~s == 0), tuple(i for i in range(k) if s >> i & 1))
                 for s in range(1, full))  # fmt: skip


def _feasible(counts: list[int], caps: list[int]) -> bool:
    """Hall's condition: for every subset S of the hidden seats, the cards allowed only in S fit."""
    for inside, seats in _subsets(len(caps)):
        need = 0
        for t in inside:
            need += counts[t]
        cap = 0
        for i in seats:
            cap += caps[i]
        if need > cap:
            return False
    return counts[0] == 0


def weighted_order(rng: np.random.Generator, weights: list[float]) -> list[int]:
    """``rng.choice(k, size=k, replace=False, p=w / w.sum()).tolist()`` for the ``k`` positive ``weights``: the
    same draws and the same answer (numpy's algorithm: rounds of ``rng.random(k - found)`` against the renormalised
    cumulative weights of the entries not yet found, new ones kept in order of first occurrence), in plain
    Python, without numpy's per-call overhead on these few entries (the tests compare it with ``rng.choice``)."""
    k = len(weights)
    total = 0.0
    for w in weights:
        total += w
    p = [w / total for w in weights]
    found: list[int] = []
    while len(found) < k:
        x = rng.random(k - len(found)).tolist()
        for i in found:
            p[i] = 0.0
        cdf, acc = [], 0.0
        for v in p:
            acc += v
            cdf.append(acc)
        cdf = [c / acc for c in cdf]
        for u in x:
            j = bisect_right(cdf, u)
            if j not in found:
                found.append(j)
    return found


def sample_hidden(deal: Deal, seat: int, rng: np.random.Generator, hand_sizes: tuple[int, ...] | None = None) -> Deal:
    """A clone of ``deal`` whose other seats' hands are re-dealt consistently with what ``seat`` knows.

    Uses only ``seat``'s information (own hand, hand sizes, played cards, ``excluded``); the other
    hands of ``deal`` are ignored except for their sizes when ``hand_sizes`` is not given. Raises
    ``ValueError`` if no consistent deal exists (which cannot happen for a state reached by play).
    """
    n = len(deal.hands)
    others = [s for s in range(n) if s != seat]
    sizes = hand_sizes if hand_sizes is not None else [deal.held(s).bit_count() for s in range(n)]
    caps = [sizes[s] for s in others]
    cards = copies_cards(deal.unseen(seat))  # with two packs (R11.5) a card may be unseen twice
    if len(cards) != sum(caps):
        raise ValueError("inconsistent state: unseen cards do not match the hidden hand sizes")
    allowed_of = []
    counts = [0] * (1 << len(others))
    for c in cards:
        t = sum(1 << i for i, s in enumerate(others) if not deal.excluded[s] >> c & 1)
        allowed_of.append(t)
        counts[t] += 1
    if not _feasible(counts, caps):
        raise ValueError(f"no deal of the hidden cards is consistent with seat {seat}'s information")
    order = rng.permutation(len(cards))
    hands = [0] * n
    hands[seat] = deal.held(seat)
    for idx in order:
        c, t = cards[idx], allowed_of[idx]
        counts[t] -= 1
        choices = [i for i in range(len(others)) if t >> i & 1 and caps[i] > 0]
        for j in weighted_order(rng, [float(caps[i]) for i in choices]):
            i = choices[j]
            caps[i] -= 1
            if _feasible(counts, caps):
                hands[others[i]] = copies_add(hands[others[i]], 1 << c)
                break
            caps[i] += 1
        else:  # unreachable when the state was feasible before this card
            raise ValueError("hidden-card sampling failed")
    clone = deal.clone()
    clone.set_hands(hands)
    return clone
