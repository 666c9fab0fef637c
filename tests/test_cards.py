"""Cards and the action layout (RULES.md R1.1, R1.2, R3.3)."""

from __future__ import annotations

import numpy as np
import pytest

from barbu_env.actions import NUM_ACTIONS, PASS, action_id, action_name, declare_id
from barbu_env.cards import (
    DECK32,
    FULL_DECK,
    SUIT_MASK,
    above,
    card,
    cards_of,
    deck_mask,
    format_card,
    format_mask,
    mask_of,
    parse_card,
    parse_cards,
    rank_of,
    suit_of,
)


@pytest.mark.parametrize(
    ("text", "cid"),
    [("2C", 0), ("AC", 12), ("2D", 13), ("TD", 21), ("10D", 21), ("td", 21), ("QH", 36), ("KH", 37),
     ("AH", 38), ("2S", 39), ("QS", 49), ("AS", 51), (" 9c ", 7)],
)  # fmt: skip
def test_card_ids(text: str, cid: int) -> None:
    """R1.2: card_id = 13 * suit + rank, suits C D H S, rank 0 = two … 12 = ace; "10" means ten."""
    assert parse_card(text) == cid
    assert suit_of(cid) * 13 + rank_of(cid) == cid


def test_every_card_round_trips() -> None:
    """format_card / parse_card are inverse over the 52 ids; the text is rank then suit letter."""
    for s, suit in enumerate("CDHS"):
        for r, rank in enumerate("23456789TJQKA"):
            c = card(r, s)
            assert c == 13 * s + r
            assert format_card(c) == rank + suit
            assert parse_card(format_card(c)) == c
    assert format_card(parse_card("QS"), symbols=True) == "Q♠"


@pytest.mark.parametrize("bad", ["1D", "11D", "QX", "Q", "", "ZZ", "AH2", "10"])
def test_parse_error_names_the_token(bad: str) -> None:
    """A parse error says which token was wrong and what is expected."""
    with pytest.raises(ValueError) as e:
        parse_card(bad)
    assert repr(bad) in str(e.value)
    assert "C, D, H, S" in str(e.value)


def test_parse_cards_names_the_bad_token() -> None:
    """parse_cards: spaces or commas; the error names the one bad token among good ones."""
    assert parse_cards("AS KH, 2C 10D") == [51, 37, 0, 21]
    assert parse_cards(["QS", 3]) == [49, 3]
    with pytest.raises(ValueError, match="'XQ'"):
        parse_cards("AS XQ 2C")
    with pytest.raises(ValueError, match="52"):
        parse_cards([52])
    with pytest.raises(ValueError, match="bad card id"):
        format_card(-1)


def test_masks() -> None:
    """Hands are bitmasks (bit = card id); suits are 13-bit blocks; the 32-card deck is 7..A."""
    m = mask_of(parse_cards("AS KH 2C"))
    assert cards_of(m) == [0, 37, 51]
    assert format_mask(m) == "AS  KH  2C"
    assert format_mask(0) == "-"
    assert SUIT_MASK[2] == mask_of(range(26, 39))
    assert FULL_DECK.bit_count() == 52 and deck_mask(52) == FULL_DECK
    assert DECK32.bit_count() == 32 and deck_mask(32) == DECK32
    assert {format_card(c)[0] for c in cards_of(DECK32)} == set("789TJQKA")
    assert above(parse_card("9S")) == mask_of(parse_cards("TS JS QS KS AS"))
    assert above(parse_card("AC")) == 0
    with pytest.raises(ValueError, match="52 or 32"):
        deck_mask(36)


def test_action_layout() -> None:
    """R3.3: 87 flat actions — 52 cards, pass, 9 plain declarations, 4 trumps, 13 fantan, 8 doubles."""
    assert NUM_ACTIONS == 87
    names = [action_name(a) for a in range(NUM_ACTIONS)]
    assert len(set(names)) == 87
    for a, n in enumerate(names):
        assert action_id(n) == a
    assert action_name(PASS) == "pass" and PASS == 52
    assert action_id("10D") == 21 and action_id("declare:fantan:10") == action_id("declare:fantan:T")
    assert action_name(declare_id("trumps:S")) == "declare:trumps:S"
    assert action_id("double:right+left") == action_id("double:left+right")
    assert names[79] == "double:none" and names[86] == "double:left+across+right"
    with pytest.raises(ValueError, match="'declare:whist'"):
        action_id("declare:whist")
    assert action_name(87) == "declare:anti_salad"  # R10.3: the id past the doubling ones
    with pytest.raises(ValueError, match=r"0\.\.87 at 4 players"):
        action_name(88)
    with pytest.raises(ValueError, match=r"0\.\.83 at 3 players"):
        action_name(84, players=3)


def test_numpy_card_ids() -> None:
    """Card ids may come as numpy integers (e.g. a (4, 13) array of hands); booleans are refused."""
    ids = parse_cards(np.array([0, 21, 51], dtype=np.int16))
    assert ids == [0, 21, 51] and all(type(c) is int for c in ids)
    with pytest.raises(ValueError, match="True"):
        parse_cards([True])
