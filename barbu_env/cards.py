"""Cards as integers and hands as bitmasks (RULES.md R1).

A card id is ``13 * suit + rank`` (R1.2): suits clubs=0, diamonds=1, hearts=2, spades=3; rank 0 is
the two, 8 the ten, 12 the ace. A hand or any set of cards is a Python ``int`` with bit ``card_id``
set for each card it holds, so following suit is ``hand & SUIT_MASK[s]``.

Six-player Barbu King plays with two packs (R11.5): a hand may hold two copies of a card, which keep the
card's id. Such a hand travels as a *copies mask*: bit ``c`` says it holds a copy of card ``c``, bit
``SECOND + c`` that it holds a second one (never without bit ``c``), so ``bit_count()`` is the number of
cards and ``mask & FULL_DECK`` the cards held at least once. A one-pack hand is its own copies mask.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable

SUITS = "CDHS"
RANKS = "23456789TJQKA"
SUIT_SYMBOLS = "♣♦♥♠"
CLUBS, DIAMONDS, HEARTS, SPADES = range(4)
NUM_CARDS = 52
ACE = 12
QUEEN = 10
KING = 11

SUIT_MASK: tuple[int, ...] = tuple(((1 << 13) - 1) << (13 * s) for s in range(4))
FULL_DECK: int = (1 << NUM_CARDS) - 1
#: The 32-card deck of R10.1: ranks 7..A (rank indices 5..12) of each suit.
DECK32: int = sum(((1 << 8) - 1) << (13 * s + 5) for s in range(4))
QUEENS: int = sum(1 << (13 * s + QUEEN) for s in range(4))
#: Bit offset of the second copies in a copies mask (R11.5).
SECOND = NUM_CARDS


def card(rank: int, suit: int) -> int:
    """The id of the card of ``rank`` (0 = two … 12 = ace) in ``suit`` (R1.2)."""
    return 13 * suit + rank


KING_OF_HEARTS = card(KING, HEARTS)
ACE_OF_HEARTS = card(ACE, HEARTS)


def suit_of(c: int) -> int:
    """Suit index of card id ``c``."""
    return c // 13


def rank_of(c: int) -> int:
    """Rank index of card id ``c`` (0 = two … 12 = ace)."""
    return c % 13


def parse_rank(token: str) -> int:
    """Rank index of a rank symbol: ``2``..``9``, ``T`` or ``10``, ``J``, ``Q``, ``K``, ``A``."""
    t = token.strip().upper()
    if t == "10":
        t = "T"
    if len(t) != 1 or t not in RANKS:
        raise ValueError(f"bad rank {token!r}: expected one of 2..9, T (or 10), J, Q, K, A")
    return RANKS.index(t)


def parse_card(token: str) -> int:
    """Card id of a text card such as ``"QS"``, ``"TD"`` or ``"10D"`` (R1.2), case-insensitive."""
    t = token.strip().upper()
    if len(t) < 2 or t[-1] not in SUITS:
        raise ValueError(f"bad card {token!r}: expected rank (2..9, T or 10, J, Q, K, A) then suit (C, D, H, S)")
    try:
        rank = parse_rank(t[:-1])
    except ValueError:
        raise ValueError(
            f"bad card {token!r}: expected rank (2..9, T or 10, J, Q, K, A) then suit (C, D, H, S)"
        ) from None
    return card(rank, SUITS.index(t[-1]))


def parse_cards(text: str | Iterable[str | int]) -> list[int]:
    """Card ids from ``"AS KH 2C"`` (spaces or commas) or an iterable of strings / ids."""
    if isinstance(text, str):
        tokens: Iterable[str | int] = text.replace(",", " ").split()
    else:
        tokens = text
    out = []
    for t in tokens:
        if isinstance(t, str):
            out.append(parse_card(t))
        elif not isinstance(t, bool) and hasattr(t, "__index__") and 0 <= operator.index(t) < NUM_CARDS:
            out.append(operator.index(t))  # ints, numpy integers
        else:
            raise ValueError(f"bad card {t!r}: expected a card string like 'QS' or an id 0..51")
    return out


def format_card(c: int, symbols: bool = False) -> str:
    """Text form of card id ``c``: ``"QS"``, or ``"Q♠"`` with ``symbols=True`` (display only)."""
    if not 0 <= c < NUM_CARDS:
        raise ValueError(f"bad card id {c!r}: expected 0..51")
    return RANKS[c % 13] + (SUIT_SYMBOLS if symbols else SUITS)[c // 13]


def mask_of(cards: Iterable[int]) -> int:
    """Bitmask of an iterable of card ids."""
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def cards_of(mask: int) -> list[int]:
    """Card ids of a bitmask, ascending; ``ValueError`` for a negative mask (it has no finite set of bits)."""
    if mask < 0:
        raise ValueError(f"bad card mask {mask!r}: a set of cards is a non-negative int (bit c set for card id c)")
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def format_mask(mask: int, symbols: bool = False) -> str:
    """Cards of a bitmask (or a copies mask, a second copy written twice) as text, grouped by suit from spades
    down, high cards first."""
    parts = []
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        cs = [format_card(c, symbols) for c in reversed(copies_cards(mask & (SUIT_MASK[s] | SUIT_MASK[s] << SECOND)))]
        if cs:
            parts.append(" ".join(cs))
    return "  ".join(parts) if parts else "-"


def popcount(mask: int) -> int:
    """Number of cards in a bitmask."""
    return mask.bit_count()


def above(c: int) -> int:
    """Mask of the cards of ``c``'s suit ranked higher than ``c``."""
    return SUIT_MASK[c // 13] & ~((2 << c) - 1)


def deck_mask(num_cards: int) -> int:
    """The deck of a scoring preset: 52 cards, or 32 (ranks 7..A, R10.1)."""
    if num_cards == 52:
        return FULL_DECK
    if num_cards == 32:
        return DECK32
    raise ValueError(f"bad deck size {num_cards}: expected 52 or 32")


# ------------------------------------------------------------------ copies masks (two packs, R11.5)
def copies_cards(mask: int) -> list[int]:
    """Card ids of a copies mask, ascending, a card held twice listed twice."""
    once, twice = mask & FULL_DECK, mask >> SECOND
    out = []
    for c in cards_of(once):
        out.append(c)
        if twice >> c & 1:
            out.append(c)
    return out


def copies_add(a: int, b: int) -> int:
    """The copies mask of the cards of ``a`` and of ``b`` together (at most two copies of a card in all)."""
    a1, b1 = a & FULL_DECK, b & FULL_DECK
    return a1 | b1 | (a >> SECOND | b >> SECOND | a1 & b1) << SECOND


def copies_remove(a: int, b: int) -> int:
    """The copies mask of the cards of ``a`` less those of ``b`` (``b`` a part of ``a``)."""
    a1, a2, b1, b2 = a & FULL_DECK, a >> SECOND, b & FULL_DECK, b >> SECOND
    return (a1 & ~b1 | a2 & ~b2) | (a2 & ~b1) << SECOND
