"""Six-player Barbu King with two packs (RULES.md R11.5): hands that hold two copies of a card.

Cards keep their 52 ids and playing either copy is the same action. :class:`TwoPackDeal` is a
:class:`~barbu_env.engine.deal.Deal` whose per-seat masks keep their meaning, "at least one copy"
(``hands``, ``played_by``, ``captured``), so legality is decided by the same code, and which adds the
second copies beside them: ``hands2[s]`` (cards seat ``s`` holds twice), ``played2_by[s]`` (cards it has
played twice), ``captured2[s]`` (cards whose two copies it has captured) and ``deck2`` (the cards in play
twice: all but 2♣ and K♥, whose id the Barbu takes). Of two identical cards in a trick the later one
wins (the ``>=`` of :meth:`Deal.apply`'s best-card test); in Domino the second copy of a card stays
playable once the first is on the table (R7.2).

Hands enter and leave as copies masks (:mod:`barbu_env.cards`): ``lo | hi << 52``.
"""

from __future__ import annotations

import operator
from typing import Any, ClassVar

import numpy as np

from ..cards import ACE, FULL_DECK, SECOND, copies_add, copies_cards, copies_remove, format_card
from ..rules import Rules
from .deal import _BELOW, _BIT, _MOVE, _RANK, _SUIT, PLAY, Deal, _hand_cards

_FULL = FULL_DECK


def validate_two_pack_hands(hands: Any, rules: Rules) -> list[int]:
    """Copies masks of the six hands of two packs (R11.5), each a list or text of cards, repeats for a second
    copy, or a copies mask int; ``ValueError`` naming the card and the rule for a third copy or a second copy
    of 2♣ / K♥, and the seat for a wrong count."""
    n, size = rules.players, rules.hand_size
    deck, deck2 = rules.deck, rules.deck2
    counts: dict[int, list[int]] = {}  # card -> the seats holding a copy
    masks = []
    for seat, hand in enumerate(hands):
        cards = _copies_hand_cards(hand, seat, size)
        if len(cards) != size:
            count = f"more than {size}" if len(cards) > size else len(cards)
            raise ValueError(
                f"hand of seat {seat} has {count} cards; each hand needs {size} (R11.5: two packs, "
                f"{rules.deck_size} cards, {size} to each of {n} seats)"
            )
        m = 0
        for c in cards:
            seats = counts.setdefault(c, [])
            seats.append(seat)
            allowed = (deck >> c & 1) + (deck2 >> c & 1)
            if len(seats) > allowed:
                where = ", ".join(str(s) for s in seats)
                why = (
                    "the two packs hold at most 2 copies of a card"
                    if allowed == 2
                    else "one 2C is taken out of the two packs and the Barbu is the only KH, so the pack holds one"
                )
                raise ValueError(
                    f"card {format_card(c)} is dealt {len(seats)} times (seats {where}): {why} (R11.5, {n} players)"
                )
            m = copies_add(m, 1 << c)
        masks.append(m)
    return masks


def _copies_hand_cards(hand: object, seat: int, size: int) -> list[int]:
    """The card ids of one seat's hand of two packs, a card held twice listed twice."""
    if isinstance(hand, (int, np.integer)) and not isinstance(hand, (bool, np.bool_)):
        m = int(hand)
        if m < 0 or m >> 2 * SECOND:
            got = "a negative int" if m < 0 else f"bit {m.bit_length() - 1} set"
            raise ValueError(
                f"bad copies mask for the hand of seat {seat}: {got}; bit c (0..51) holds a copy of card c, "
                f"bit {SECOND} + c a second copy (R11.5)"
            )
        lonely = m >> SECOND & ~m
        if lonely:
            c = (lonely & -lonely).bit_length() - 1
            raise ValueError(
                f"bad copies mask for the hand of seat {seat}: bit {SECOND + c} (a second {format_card(c)}) is set "
                f"without bit {c} (the first copy)"
            )
        return copies_cards(m)
    return _hand_cards(hand, seat, size)


def deal_two_packs(rng: np.random.Generator, rules: Rules) -> list[int]:
    """Shuffle the 102 cards of two packs with ``rng`` and deal 17 to each of the six seats (R1.4, R11.5), as
    copies masks."""
    cards = copies_cards(rules.deck | rules.deck2 << SECOND)
    rng.shuffle(cards)
    k = rules.hand_size
    hands = []
    for i in range(0, len(cards), k):
        m = 0
        for c in cards[i : i + k]:
            m = copies_add(m, 1 << c)
        hands.append(m)
    return hands


class TwoPackDeal(Deal):
    """A deal of two packs (R11.5): :class:`Deal` with the second copies of each seat's cards beside its masks."""

    __slots__ = ("captured2", "deck2", "hands2", "played2_by")
    _state: ClassVar[tuple[str, ...]] = (*Deal.__slots__, *__slots__)
    hands2: list[int]
    played2_by: list[int]
    captured2: list[int]
    deck2: int

    def _init_copies(self, masks: list[int], deck2: int) -> None:
        """Split the copies masks of the hands into ``hands`` and ``hands2``; nothing is played or captured yet."""
        self.hands = [m & _FULL for m in masks]
        self.hands2 = [m >> SECOND for m in masks]
        n = self.n
        self.played2_by = [0] * n
        self.captured2 = [0] * n
        self.deck2 = deck2

    # ----------------------------------------------------------------- copies
    def held(self, seat: int) -> int:
        return self.hands[seat] | self.hands2[seat] << SECOND

    def set_hands(self, held: list[int]) -> None:
        self.hands = [m & _FULL for m in held]
        self.hands2 = [m >> SECOND for m in held]
        self._legal = None

    @property
    def played(self) -> int:
        """Mask of the cards of which at least one copy has been played."""
        m = 0
        for p in self.played_by:
            m |= p
        return m

    def played_copies(self) -> int:
        """Copies mask of every card played so far."""
        m = 0
        for p, p2 in zip(self.played_by, self.played2_by, strict=True):
            m = copies_add(m, p | p2 << SECOND)
        return m

    def unseen(self, seat: int) -> int:
        return copies_remove(copies_remove(self.deck | self.deck2 << SECOND, self.held(seat)), self.played_copies())

    # ----------------------------------------------------------------- transitions
    def apply(self, action: int) -> None:
        """:meth:`Deal.apply`; a card a seat holds twice leaves one copy in its hand, a card it plays a second
        time goes to ``played2_by``."""
        if type(action) is not int:
            try:
                action = int(operator.index(action))  # numpy integers
            except TypeError:
                super().apply(action)  # raises naming the legal actions
                return
        if self.phase != PLAY or not 0 <= action < SECOND:
            super().apply(action)  # Fantan's cards are placed by _fantan_card; anything else is not a card
            return
        p = self.to_move
        bit = _BIT[action]
        second = self.hands2[p] & bit
        again = self.played_by[p] & bit
        super().apply(action)  # raises, changing nothing, if the card is illegal
        if second:  # the base took the card out of hands: the other copy stays there
            self.hands2[p] -= bit
            self.hands[p] += bit
        if again:  # the base added the bit a second time: it belongs in played2_by
            self.played_by[p] -= bit
            self.played2_by[p] += bit

    def _end_trick(self, trick: list[int]) -> None:
        """:meth:`Deal._end_trick` where a trick may hold both copies of a card (R11.5); no early end in King."""
        w = self.winner
        k = self.trick_no
        pts = self._trick_base[k]
        vals = self.card_vals
        tm = two = 0
        for c in trick:
            b = _BIT[c]
            two |= tm & b
            tm |= b
            if vals:
                pts += vals[c]
        self.points[w] += pts
        cap = self.captured[w]
        self.captured2[w] |= cap & tm | two
        self.captured[w] = cap | tm
        self.tricks_won[w] += 1
        k += 1
        self.trick_no = k
        self.last_trick = (self.leader, trick, w)
        self.trick = []
        self.led = self.best = self.winner = self.top_trump = -1
        self.leader = self.to_move = w
        if k == self.num_tricks:
            self._finish()

    def _fantan_card(self, c: int, bit: int) -> None:
        """Domino with two copies (R11.5, R7.2): a card's rank opens its run once; its second copy stays playable
        until it is played too."""
        p = self.to_move
        hands, hands2 = self.hands, self.hands2
        if hands2[p] & bit:
            hands2[p] -= bit
        else:
            hands[p] -= bit
        first = not self.played & bit
        if self.played_by[p] & bit:
            self.played2_by[p] |= bit
        else:
            self.played_by[p] |= bit
        self.history.append(_MOVE[p][c])
        self._mask = None
        pl = self.playable
        if not (first and self.deck2 & bit):  # no copy of c is left to play
            pl &= ~bit
        if first:  # a new rank of its suit on the table: the run grows (R7.2)
            s, r = _SUIT[c], _RANK[c]
            lo = self.fantan_lo
            if lo[s] < 0:
                lo[s] = self.fantan_hi[s] = r
                pl |= _BELOW[c] & self.deck
                if r < ACE:
                    pl |= bit << 1
            elif r < lo[s]:
                lo[s] = r
                pl |= _BELOW[c] & self.deck
            else:
                self.fantan_hi[s] = r
                if r < ACE:
                    pl |= bit << 1
        self.playable = pl
        self._fantan_next(p, _RANK[c])


__all__ = ["TwoPackDeal", "deal_two_packs", "validate_two_pack_hands"]
