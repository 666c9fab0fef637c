"""Trick play (RULES.md R5.1–R5.5, worked examples E1 and E2)."""

from __future__ import annotations

import pytest
from helpers import SUIT_HANDS, cards, legal_names, make_deal, play

from barbu_env import Rules
from barbu_env.cards import mask_of, parse_cards

#: E1 / E2 deal, spades trump. A=0, B=1, C=2, D=3. B holds only hearts; C's only trump is the 9♠;
#: D's trumps are 2♠ 3♠ 7♠; A holds the other nine spades.
E_HANDS = [
    "JC QC KC AC 4S 5S 6S 8S TS JS QS KS AS",
    "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH",
    "9S 2D 3D 5D 6D 7D 8D 9D TD JD QD KD AD",
    "2S 3S 7S 4D 2C 3C 4C 5C 6C 7C 8C 9C TC",
]


def test_follow_suit_and_void() -> None:
    """R5.1: followers must follow the led suit if able; a void player may play any card. R5.2: the
    highest card of the led suit wins (an off-suit ace does not) and leads next."""
    hands = [
        "AC 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD",
        "KC QC 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH",
        "2C 3C 4C 5C 6C 7C 8C 9C TC JC KH AH AD",
        "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS",
    ]
    deal = make_deal(hands, 0, "no_tricks")
    play(deal, "AC")
    assert legal_names(deal) == {"KC", "QC"}
    play(deal, "QC")
    assert legal_names(deal) == cards("2C 3C 4C 5C 6C 7C 8C 9C TC JC")
    play(deal, "2C")
    assert legal_names(deal) == cards(hands[3])  # void in clubs: anything
    play(deal, "AS")
    assert deal.last_trick == (0, parse_cards("AC QC 2C AS"), 0) and deal.current_player == 0
    play(deal, "2D")
    assert legal_names(deal) == cards(hands[1]) - {"QC"}  # void now: anything left
    play(deal, "QH")
    assert legal_names(deal) == {"AD"}
    play(deal, "AD KS")
    assert deal.last_trick[2] == 2 and deal.current_player == 2 and deal.points == [-2, 0, -2, 0]


def test_void_player_may_play_anything_and_offsuit_never_wins() -> None:
    """R5.1 and R5.2: seat 0 leads the 2♣, everyone else is void and discards an ace; the 2♣ wins."""
    deal = make_deal(SUIT_HANDS, 0, "no_tricks")
    play(deal, "2C")
    assert len(legal_names(deal)) == 13
    play(deal, "AD AH AS")
    assert deal.last_trick == (0, parse_cards("2C AD AH AS"), 0)
    assert deal.leader == 0 and deal.current_player == 0 and deal.tricks_won == [1, 0, 0, 0]
    # R5.3: captured cards and who played what are public
    assert deal.captured == [mask_of(parse_cards("2C AD AH AS")), 0, 0, 0]
    assert deal.played_by[2] == mask_of(parse_cards("AH"))


def test_e2_trump_lead_must_if_able() -> None:
    """E2 (R5.4): Trumps, spades trump, declarer A holds spades: A must lead a spade.
    Option trump_lead=free lifts it."""
    deal = make_deal(E_HANDS, 0, "trumps:S")
    assert legal_names(deal) == cards("4S 5S 6S 8S TS JS QS KS AS")
    deal = make_deal(E_HANDS, 0, "trumps:S", rules=Rules(trump_lead="free"))
    assert legal_names(deal) == cards(E_HANDS[0])
    # a leader without trumps leads anything
    deal = make_deal(E_HANDS, 1, "trumps:S")
    assert legal_names(deal) == cards(E_HANDS[1])


@pytest.mark.parametrize("overtrump", ["no", "yes"])
def test_e1_void_with_only_lower_trumps_plays_anything(overtrump: str) -> None:
    """E1 (R5.5): B leads a heart; C, void, must trump (9♠); D, void, holds only 2♠ 3♠ 7♠, all below
    the 9♠, so may play any card (D plays 4♦). Then A, void, holds higher spades: must trump — any
    spade with overtrump=no (default), only spades above the 9♠ with overtrump=yes."""
    deal = make_deal(E_HANDS, 1, "trumps:S", rules=Rules(overtrump=overtrump))
    play(deal, "AH")
    assert legal_names(deal) == {"9S"}  # R5.5: void and holding a trump: must trump
    play(deal, "9S")
    assert legal_names(deal) == cards(E_HANDS[3])  # E1: D may play any card
    play(deal, "4D")
    if overtrump == "no":
        assert legal_names(deal) == cards("4S 5S 6S 8S TS JS QS KS AS")
        play(deal, "4S")  # a lower trump is legal under the default; C's 9♠ still wins
        assert deal.last_trick[2] == 2 and deal.points == [0, 0, 5, 0]
    else:
        assert legal_names(deal) == cards("TS JS QS KS AS")
        play(deal, "TS")
        assert deal.last_trick[2] == 0 and deal.points == [5, 0, 0, 0]  # R5.2: highest trump wins


def test_overtrump_following_a_trump_lead() -> None:
    """R5.5 overtrump=yes also binds a player following a trump lead: beat the best trump in the
    trick if able; unable, any trump. With overtrump=no (default) any trump follows."""
    hands = [
        "TS 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC",
        "9S JS 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD",
        "8S 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH",
        "QS 2S 3S 4S 5S 6S 7S KS AS AC KD AD AH",
    ]
    for option, seat1, seat3 in (
        ("no", "9S JS", "QS 2S 3S 4S 5S 6S 7S KS AS"),
        ("yes", "JS", "QS KS AS"),
    ):
        deal = make_deal(hands, 0, "trumps:S", rules=Rules(overtrump=option))
        assert legal_names(deal) == {"TS"}  # R5.4: the only trump must be led
        play(deal, "TS")
        assert legal_names(deal) == cards(seat1)
        play(deal, "JS")
        assert legal_names(deal) == {"8S"}  # cannot beat the J♠: any trump (its only one)
        play(deal, "8S")
        assert legal_names(deal) == cards(seat3)
        play(deal, "KS")
        assert deal.last_trick[2] == 3 and deal.points == [0, 0, 0, 5]


def test_trumping_in_and_overtrumping_wins() -> None:
    """R5.5: void with trumps, must trump (any trump under overtrump=no, even below the trick's best);
    R5.2: among several trumps the highest wins, whatever the led suit's cards."""
    hands = [
        "AC KC 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD",
        "3S 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH",
        "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KD AD",
        "2S 4S 5S 6S 7S 8S 9S TS JS QS KS AS AH",
    ]
    deal = make_deal(hands, 0, "trumps:S")
    assert legal_names(deal) == cards(hands[0])  # no trump to lead: anything
    play(deal, "AC")
    assert legal_names(deal) == {"3S"}
    play(deal, "3S QC")
    assert legal_names(deal) == cards("2S 4S 5S 6S 7S 8S 9S TS JS QS KS AS")  # 2♠ included (default)
    play(deal, "5S")
    assert deal.last_trick == (0, parse_cards("AC 3S QC 5S"), 3) and deal.points == [0, 0, 0, 5]
    assert legal_names(deal) == cards("2S 4S 6S 7S 8S 9S TS JS QS KS AS")  # R5.4: must lead a trump
