"""Information states and hidden-card sampling (barbu_env/engine/infostate.py; RULES.md R5.3, R4.1,
R4.4, R5.1, R5.4, R5.5, R7.3).

A seat's InfoState holds its own hand and the public record only. Sampled deals must give every
seat its hand size, keep the observer's hand, never give a seat a card it has shown it cannot hold
(``Deal.excluded``), and — the strongest check — be worlds in which the public history was legal:
replaying the history from the sampled hands is accepted by the engine and leads to the same
InfoState.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import SUIT_HANDS, make_deal, play, random_playout

from barbu_env import Deal, InfoState, Rules, sample_hidden
from barbu_env.actions import DECLARE_BASE, DOUBLE_BASE
from barbu_env.cards import SUIT_MASK, above, deck_mask, mask_of, parse_card, parse_cards
from barbu_env.engine.deal import Phase

H = 2
KH = parse_card("KH")

#: Option sets whose play produces public inferences.
INFERENCE_OPTIONS = [
    ("no_hearts", {}),  # voids, R4.1 heart leads
    ("no_king", {"king_discard": "forced"}),  # R4.4 forced discards
    ("no_king", {"hearts_lead": "until_broken", "king_discard": "forced"}),
    ("trumps:S", {}),  # R5.4 trump leads, R5.5 trump duties
    ("trumps:H", {"overtrump": "yes"}),  # R5.5 overtrump
    ("trumps:C", {"trump_lead": "free", "overtrump": "yes"}),
    ("salad", {"salad": True, "hearts_lead": "until_broken"}),
    ("fantan:7", {}),  # R7.3 forced passes
    ("fantan:K", {"ace_plays_again": True}),
    ("fantan:9", {"scoring": "basic32"}),
]


def replay_from(sample: Deal, original: Deal) -> Deal:
    """The deal whose initial hands are ``sample``'s hands plus each seat's played cards, with
    ``original``'s public history replayed on it (raises if any action is illegal there)."""
    initial = [sample.hands[s] | original.played_by[s] for s in range(4)]
    history = list(original.history)
    declared = bool(history) and DECLARE_BASE <= history[0][1] < DOUBLE_BASE
    contract = None if declared else original.contract_text
    d = Deal.from_hands(initial, original.declarer, contract, original.rules,
                        available=original.available, must_double=original.must_double)  # fmt: skip
    for seat, a in history:
        assert d.current_player == seat
        d.apply(a)
    return d


def check_sample(deal: Deal, seat: int, rng: np.random.Generator) -> None:
    info = InfoState.of(deal, seat)
    s = info.sample(rng)
    sizes = [h.bit_count() for h in deal.hands]
    assert [h.bit_count() for h in s.hands] == sizes
    assert s.hands[seat] == deal.hands[seat]
    assert s.hands[0] | s.hands[1] | s.hands[2] | s.hands[3] | deal.played == deck_mask(deal.rules.deck_size)
    for q in range(4):
        assert s.hands[q] & deal.excluded[q] == 0
    replayed = replay_from(s, deal)
    assert replayed.hands == s.hands
    assert InfoState.of(replayed, seat) == info
    assert replayed.excluded == deal.excluded


@pytest.mark.parametrize(("contract", "options"), INFERENCE_OPTIONS, ids=lambda x: str(x))
def test_inferences_sound_and_samples_consistent(contract: str, options: dict) -> None:
    """Over many random deals: real hands never intersect ``excluded`` (sound inferences), and every
    sample is a world in which the public history was legal."""
    rules = Rules(**options)
    rng = np.random.default_rng(hash(contract) % 1000)
    inferred = 0
    for k in range(12):
        deal = Deal.random(rng, k % 4, contract, rules)
        step = 0

        def check(d: Deal) -> None:
            nonlocal step, inferred
            for q in range(4):
                assert d.hands[q] & d.excluded[q] == 0, f"seat {q} holds a card it was shown not to hold"
            if step % 7 == 3 and d.phase in (Phase.PLAY, Phase.FANTAN):
                check_sample(d, d.current_player, rng)
                check_sample(d, (d.current_player + 1) % 4, rng)
            step += 1
            inferred += sum(e.bit_count() for e in d.excluded)

        random_playout(deal, rng, check)
    assert inferred > 0  # the option set did produce inferences


def test_swapping_two_opponents_hands_keeps_the_info_state() -> None:
    """Seat 0 cannot tell apart deals that differ only in how two opponents' unseen cards lie."""
    rng = np.random.default_rng(2)
    deal = Deal.random(rng, 0, "no_tricks")
    play(deal, ["double:none"] * 4)
    swapped = Deal.from_hands([deal.hands[0], deal.hands[2], deal.hands[1], deal.hands[3]], 0, "no_tricks")
    play(swapped, ["double:none"] * 4)
    assert InfoState.of(swapped, 0) == InfoState.of(deal, 0)
    assert InfoState.of(swapped, 3) == InfoState.of(deal, 3)
    assert InfoState.of(swapped, 1) != InfoState.of(deal, 1)  # seat 1's own hand changed
    # mid-deal, after a void was shown: swap only what is consistent (sample), same info state
    deal = make_deal(SUIT_HANDS, 0, "no_tricks")
    play(deal, "2C 2D 2H 2S")
    info = InfoState.of(deal, 0)
    assert info == InfoState.of(replay_from(info.sample(rng), deal), 0)


def test_info_state_hides_other_hands() -> None:
    """The InfoState keeps the seat's hand, hand sizes and the public record, not others' cards."""
    rng = np.random.default_rng(4)
    deal = Deal.random(rng, 1, "trumps:D")
    play(deal, ["double:none"] * 4)
    info = InfoState.of(deal, 2)
    assert info.hand == deal.hands[2]
    assert info.hand_sizes == (13, 13, 13, 13)
    assert info.view.hands == [0, 0, deal.hands[2], 0]
    assert info.contract == "trumps:D" and info.declarer == 1 and info.to_move == 1
    assert info.unseen(deal.deck) == deal.deck & ~deal.hands[2]
    deal.apply(deal.legal_actions()[0])
    assert len(info.history) == 4  # a snapshot: later play does not change it


def test_inference_void_and_trump_duties() -> None:
    """E1 (R5.5): C trumps with 9S; D, holding only 2S 3S 7S as trumps, discards 4D. D is shown void
    in hearts and holding no spade above the 9; 2S..8S stay possible."""
    hands = [
        "JC QC KC AC 4S 5S 6S 8S TS JS QS KS AS",
        "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH",
        "9S 2D 3D 5D 6D 7D 8D 9D TD JD QD KD AD",
        "2S 3S 7S 4D 2C 3C 4C 5C 6C 7C 8C 9C TC",
    ]
    deal = make_deal(hands, 1, "trumps:S")
    play(deal, "AH")
    assert deal.legal_actions() == [parse_card("9S")]  # R5.5: C, void, must trump
    play(deal, "9S")
    assert set(deal.legal_actions()) == set(parse_cards(hands[3]))  # E1: D may play any card
    play(deal, "4D")
    ex = deal.excluded[3]
    assert ex & SUIT_MASK[H] == SUIT_MASK[H]
    assert ex & above(parse_card("9S")) == above(parse_card("9S"))
    assert ex & mask_of(parse_cards("2S 3S 7S 8S")) == 0
    assert deal.excluded[2] & SUIT_MASK[H] == SUIT_MASK[H]  # C showed a heart void too
    for _ in range(30):
        s = sample_hidden(deal, 0, np.random.default_rng(_))
        assert s.hands[3] & above(parse_card("9S")) == 0


def test_inference_overtrump_yes_following_low() -> None:
    """R5.5 overtrump=yes: following a trump lead with a trump below the trick's best proves the
    player holds no higher trump."""
    rules = Rules(overtrump="yes")
    deal = make_deal({0: "KS 2C", 1: "3S 4S 2D", 2: "AS"}, 0, "trumps:S", rules=rules)
    play(deal, "KS")
    assert deal.legal_actions() == parse_cards("3S 4S")  # none beats KS: any spade
    play(deal, "3S")
    assert deal.excluded[1] & above(parse_card("KS")) == above(parse_card("KS"))
    assert deal.legal_actions() == [parse_card("AS")]  # seat 2 can beat KS, so must


def test_inference_heart_lead_and_forced_king() -> None:
    """R4.1: leading a heart (restriction on) proves holding only hearts; R4.4 forced: a void player
    who discards another card proves not holding the K♥."""
    deal = make_deal(SUIT_HANDS, 2, "no_hearts")
    play(deal, "5H")
    assert deal.excluded[2] == deck_mask(52) & ~SUIT_MASK[H]
    rules = Rules(king_discard="forced")
    deal = make_deal(SUIT_HANDS, 0, "no_king", rules=rules)
    play(deal, "2C 2D")  # seat 1 (void in clubs, no K♥) discards
    assert deal.excluded[1] >> KH & 1
    assert deal.legal_actions() == [KH]  # seat 2 holds the K♥ and is void: must discard it


def test_inference_fantan_forced_pass() -> None:
    """R7.3 (fantan_pass=forced): a pass proves holding none of the playable cards."""
    deal = make_deal(SUIT_HANDS, 0, "fantan:7")
    play(deal, "7C")
    assert deal.legal_actions() == [parse_card("7D")]  # no pass while able to play
    play(deal, "7D 7H 7S")
    assert deal.current_player == 0 and deal.excluded == [0, 0, 0, 0]  # no pass yet, nothing shown
    free = make_deal(SUIT_HANDS, 0, "fantan:7", rules=Rules(fantan_pass="free"))
    play(free, "7C pass")
    assert free.excluded[1] == 0  # a free pass proves nothing
    forced = make_deal({0: "7C 8C", 1: "2D 3D", 2: "7D"}, 0, "fantan:7")
    play(forced, "7C pass")
    playable = mask_of(parse_cards("6C 8C 7D 7H 7S"))
    assert forced.excluded[1] & playable == playable


def test_sampler_rejects_an_inconsistent_state() -> None:
    """sample_hidden raises ValueError when no deal fits the exclusions (cannot arise from play)."""
    deal = Deal.random(np.random.default_rng(0), 0, "no_tricks")
    deal.excluded = [0, deck_mask(52), deck_mask(52), 0]  # seats 1 and 2 hold nothing?
    with pytest.raises(ValueError, match="consistent"):
        sample_hidden(deal, 0, np.random.default_rng(0))


def test_sampling_is_seeded_and_varied() -> None:
    """Same rng seed, same sample; different seeds give different hidden hands."""
    deal = Deal.random(np.random.default_rng(8), 0, "no_queens")
    info = InfoState.of(deal, 0)
    a = info.sample(np.random.default_rng(1))
    b = info.sample(np.random.default_rng(1))
    assert a.hands == b.hands
    assert len({tuple(info.sample(np.random.default_rng(k)).hands) for k in range(10)}) > 1


def test_clone_is_independent() -> None:
    """Deal.clone: playing on the copy leaves every field of the original unchanged, and back."""
    rng = np.random.default_rng(6)
    deal = Deal.random(rng, 3, "trumps:C", Rules(overtrump="yes"))
    play(deal, ["double:none"] * 4)
    for _ in range(9):
        deal.apply(deal.legal_actions()[0])
    snapshot = {n: (v[:] if isinstance(v, list) else v) for n in Deal.__slots__ for v in [getattr(deal, n)]}
    copy = deal.clone()
    random_playout(copy, rng)
    for n in Deal.__slots__:
        assert getattr(deal, n) == snapshot[n], f"clone shares {n}"
    twin = deal.clone()
    random_playout(deal, np.random.default_rng(1))
    assert twin.history == snapshot["history"] and twin.hands == snapshot["hands"]


def test_weighted_order_draws_as_rng_choice():
    """The sampler's weighted order of the hidden seats is ``rng.choice(k, k, replace=False, p=...)``: the same
    answer and the same draws (the generator ends in the same state)."""
    from barbu_env.engine.infostate import weighted_order

    for seed in range(3000):
        k = 1 + seed % 4
        weights = [float(w) for w in np.random.default_rng(seed).integers(1, 14, k)]
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        for _ in range(3):
            p = np.array(weights) / np.sum(weights)
            assert weighted_order(b, weights) == a.choice(k, size=k, replace=False, p=p).tolist()
        assert a.random() == b.random()
