"""The seven contracts and their scores (RULES.md R4, R4.1–R4.5, E5)."""

from __future__ import annotations

import pytest
from helpers import SUIT_HANDS, cards, legal_names, make_deal, play

from barbu_env import Rules
from barbu_env.contracts import contract_table

R4_TABLE = {  # name: (sign, total)
    "no_tricks": ("-", -26),
    "no_hearts": ("-", -30),
    "no_queens": ("-", -24),
    "no_king": ("-", -20),
    "no_last_two": ("-", -30),
    "trumps": ("+", 65),
    "fantan": ("+", 65),
}

CLUBS = "AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2C".split()
DIAMONDS = [c[0] + "D" for c in reversed(CLUBS)]  # ascending
SPADES = [c[0] + "S" for c in reversed(CLUBS)]
HEARTS = [c[0] + "H" for c in CLUBS]  # descending


def test_contract_table_is_r4() -> None:
    """R4: seven contracts in declaration order, signs and totals; the totals sum to 0 (R4 note)."""
    table = contract_table(Rules())
    assert list(table) == list(R4_TABLE)
    for name, (sign, total) in R4_TABLE.items():
        assert table[name].positive == (sign == "+")
        assert table[name].total(Rules()) == total
    assert sum(c.total(Rules()) for c in table.values()) == 0
    assert table["trumps"].trumps and not table["no_tricks"].trumps
    assert {n for n, c in table.items() if c.hearts_lead} == {"no_hearts", "no_king"}  # R4.1


def test_no_tricks_every_trick_minus_two() -> None:
    """R4 No tricks: seat 0 leads clubs, nobody can follow, so seat 0 takes all 13 tricks: -26."""
    deal = make_deal(SUIT_HANDS, 0, "no_tricks")
    for i in range(13):
        play(deal, [CLUBS[i], DIAMONDS[i], HEARTS[i], SPADES[i]])
        assert deal.points == [-2 * (i + 1), 0, 0, 0]
    assert deal.is_over and deal.contract_scores == [-26, 0, 0, 0] and deal.scores == [-26, 0, 0, 0]


NO_HEARTS_HANDS = [
    "AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2H",
    " ".join(DIAMONDS),
    "AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2C",
    " ".join(SPADES),
]


def test_no_hearts_scores_and_plays_thirteen_tricks() -> None:
    """R4 No hearts: -2 per heart, A♥ -6; R4.1 the declarer may not lead its 2♥ while holding clubs;
    R4.5 all 13 tricks are played."""
    deal = make_deal(NO_HEARTS_HANDS, 0, "no_hearts")
    assert legal_names(deal) == cards("AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C")  # no 2H lead
    play(deal, "AC 2D 2C 2S")  # seat 2 must follow with its club
    assert deal.points == [0, 0, 0, 0]
    play(deal, "KC 3D AH 3S")  # A♥ discarded: -6
    assert deal.points == [-6, 0, 0, 0]
    for i, (c, h) in enumerate(zip(CLUBS[2:12], HEARTS[1:11])):
        play(deal, [c, DIAMONDS[i + 2], h, SPADES[i + 2]])
    assert deal.points == [-6 - 20, 0, 0, 0] and deal.trick_no == 12
    assert legal_names(deal) == {"2H"}  # only hearts left: may lead it
    play(deal, "2H AD 3H AS")  # seat 2's 3♥ wins the last trick
    assert deal.is_over and deal.trick_no == 13
    assert deal.contract_scores == [-26, 0, -4, 0]
    assert sum(deal.contract_scores) == -30  # E5


@pytest.mark.parametrize(
    ("option", "trick1", "trick3"),
    [
        ("only_hearts_left", False, False),  # R4.1 default: never while holding a non-heart
        ("until_broken", False, True),  # A♥ discarded on trick 2: hearts may be led from trick 3
        ("free", True, True),
    ],
)
def test_hearts_lead_options(option: str, trick1: bool, trick3: bool) -> None:
    """R4.1 option hearts_lead, in No hearts and in No King."""
    for contract in ("no_hearts", "no_king"):
        deal = make_deal(NO_HEARTS_HANDS, 0, contract, rules=Rules(hearts_lead=option))
        assert ("2H" in legal_names(deal)) == trick1
        play(deal, "AC 2D 2C 2S")
        assert ("2H" in legal_names(deal)) == trick1  # no heart discarded yet
        play(deal, "KC 3D JH 3S")  # seat 2 discards a heart (not the K♥)
        assert ("2H" in legal_names(deal)) == trick3
        assert len(legal_names(deal)) == 10 + trick3


def test_until_broken_needs_a_discarded_heart() -> None:
    """R4.1 until_broken: hearts followed on a heart lead (led by a player holding only hearts) do not
    break hearts; only a heart discarded on another suit's lead does."""
    hands = [
        "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC 2D 3D",
        "4D 5D 6D 7D 8D 9D TD JD QD KD AD 2S 3S",
        "AC KC 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH",
        "KH AH 4S 5S 6S 7S 8S 9S TS JS QS KS AS",
    ]
    for option, may_lead_king in (("until_broken", False), ("free", True)):
        deal = make_deal(hands, 2, "no_hearts", rules=Rules(hearts_lead=option))
        play(deal, "AC 4S 2C 4D  KC 5S 3C 5D")
        assert legal_names(deal) >= {"2H"}  # seat 2 holds only hearts now
        play(deal, "2H AH 4C 6D")
        assert deal.current_player == 3 and deal.points == [0, 0, 0, -8]
        assert ("KH" in legal_names(deal)) == may_lead_king


def test_hearts_lead_rule_only_in_no_hearts_and_no_king() -> None:
    """R4.1 applies to No hearts and No King only (and Salad, R10.2); a hand of only hearts may lead one."""
    for contract in ("no_tricks", "no_queens", "no_last_two"):
        deal = make_deal(NO_HEARTS_HANDS, 0, contract)
        assert "2H" in legal_names(deal)
    for contract in ("no_hearts", "no_king"):
        deal = make_deal(SUIT_HANDS, 2, contract)
        assert legal_names(deal) == set(HEARTS)


def test_no_queens_ends_after_the_fourth_queen() -> None:
    """R4.2: No queens stops once the trick capturing the 4th queen is complete; cards stay in hands."""
    deal = make_deal(SUIT_HANDS, 0, "no_queens")
    play(deal, "2C QD QH QS")
    assert deal.points == [-18, 0, 0, 0] and not deal.is_over
    play(deal, "QC 2D 2H 2S")
    assert deal.is_over and deal.trick_no == 2
    assert deal.contract_scores == [-24, 0, 0, 0]
    assert [h.bit_count() for h in deal.hands] == [11, 11, 11, 11]
    assert deal.legal_actions() == [] and deal.current_player == -1


def test_no_king_ends_with_the_king_of_hearts() -> None:
    """R4.3: No King stops once the trick capturing the K♥ is complete (-20 to its taker)."""
    deal = make_deal(SUIT_HANDS, 0, "no_king")
    play(deal, "2C 2D 3H")
    assert not deal.is_over
    play(deal, "2S 3C 3D KH")
    assert not deal.is_over  # the trick is not complete yet
    play(deal, "3S")
    assert deal.is_over and deal.trick_no == 2
    assert deal.contract_scores == [-20, 0, 0, 0]
    assert [h.bit_count() for h in deal.hands] == [11, 11, 11, 11]


def test_king_discard_forced() -> None:
    """R4.4 forced: the K♥ holder, void in the led suit, must discard it; on a heart lead it must fall
    once the A♥ is in the trick (not before). With `free` (default) nothing is forced."""
    forced = Rules(king_discard="forced")
    deal = make_deal(SUIT_HANDS, 0, "no_king", rules=forced)
    play(deal, "2C 2D")
    assert legal_names(deal) == {"KH"}
    free = make_deal(SUIT_HANDS, 0, "no_king")
    play(free, "2C 2D")
    assert len(legal_names(free)) == 13
    # heart leads (hearts_lead=free lets seat 1 lead a heart from a mixed hand)
    for option, expect_only_king in (("forced", True), ("free", False)):
        rules = Rules(king_discard=option, hearts_lead="free")
        d = make_deal({1: "AH 2C", 2: "KH QH 3C"}, 1, "no_king", rules=rules)
        play(d, "AH")
        assert (legal_names(d) == {"KH"}) == expect_only_king
        assert "KH" in legal_names(d) and all(n.endswith("H") for n in legal_names(d))
    d = make_deal(
        {0: "AH 2C", 1: "5H 3C", 2: "KH QH 4C"}, 1, "no_king", rules=Rules(king_discard="forced", hearts_lead="free")
    )
    play(d, "5H")
    assert {"KH", "QH"} <= legal_names(d)  # the A♥ is not in the trick yet: any heart
    # forced does not apply outside No King (R4.4)
    d = make_deal(SUIT_HANDS, 0, "no_hearts", rules=forced)
    play(d, "2C 2D")
    assert len(legal_names(d)) == 13


def test_no_last_two() -> None:
    """R4 No last two: -10 for the 12th trick, -20 for the 13th; all tricks are played (R4.5)."""
    deal = make_deal(SUIT_HANDS, 0, "no_last_two")
    for i in range(13):
        play(deal, [CLUBS[i], DIAMONDS[i], HEARTS[i], SPADES[i]])
        expected = {11: -10, 12: -30}.get(i, 0)
        assert deal.points == [expected, 0, 0, 0], i
    assert deal.contract_scores == [-30, 0, 0, 0]


def test_trumps_five_per_trick() -> None:
    """R4 Trumps: +5 per trick. Spades trump: seat 0 leads a club, seat 3 trumps and then must lead
    trumps (R5.4), which nobody else holds: seat 3 takes every trick."""
    deal = make_deal(SUIT_HANDS, 0, "trumps:S")
    play(deal, "AC 2D AH")
    assert legal_names(deal) == set(SPADES)  # void in clubs with trumps: must trump (R5.5)
    play(deal, "2S")
    assert deal.leader == 3 and deal.points == [0, 0, 0, 5]
    for i in range(1, 13):
        play(deal, [SPADES[i], CLUBS[i], DIAMONDS[i], HEARTS[i]])
    assert deal.contract_scores == [0, 0, 0, 65]
