"""The observation encoder (barbu_env/observation.py): layout, a slow block-by-block reference, hidden
information (RULES.md R5.3: only own hand and public play), seat-relativity (R1.3)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from barbu_env import observation as ob
from barbu_env.actions import action_id
from barbu_env.cards import SUIT_MASK, cards_of, parse_cards
from barbu_env.contracts import CONTRACT_NAMES
from barbu_env.engine import Deal, Match, sample_hidden
from barbu_env.engine.doubling import doubling_order
from barbu_env.obs_state import SeatObservations
from barbu_env.rules import BOOL_OPTIONS, CHOICES, Rules


def test_docstring_table_matches_blocks():
    rows = re.findall(r"^(\w+)\s+(\d+)\s+(\d+)\s", ob.__doc__, re.M)
    table = {name: (int(off), int(size)) for name, off, size in rows}
    assert table == ob.BLOCKS
    assert ob.OBS_SIZE == 1228 and ob.NUM_BITS == 1187
    assert f"OBS_SIZE` = {ob.OBS_SIZE}" in ob.__doc__
    low, high = ob.observation_bounds()
    assert low.shape == high.shape == (ob.OBS_SIZE,) and (low < high).all()


# ----------------------------------------------------------------------------- slow reference
def reference(deal: Deal, seat: int, match: Match | None = None) -> np.ndarray:
    """The observation written block by block from the module docstring, with plain loops."""
    o = np.zeros(ob.OBS_SIZE, np.float32)

    def put(name, idx, value=1.0):
        off, size = ob.BLOCKS[name]
        assert 0 <= idx < size
        o[off + idx] = value

    def rel(s):
        return (s - seat) % 4

    n = deal.num_tricks
    hand = set(cards_of(deal.hands[seat]))
    played = set(cards_of(deal.played))
    deck = set(cards_of(deal.deck))
    for c in hand:
        put("hand", c)
    for s in range(4):
        for c in cards_of(deal.played_by[s]):
            put("played", 52 * rel(s) + c)
        for c in cards_of(deal.captured[s]):
            put("captured", 52 * rel(s) + c)
        for c in cards_of(deal.excluded[s]):
            put("excluded", 52 * rel(s) + c)
    for k, c in enumerate(deal.trick):
        put("trick", 52 * rel(deal.leader + k) + c)
    for c in deck - hand - played:
        put("unseen", c)
    for s in range(4):
        for u in range(4):
            suit = set(cards_of(SUIT_MASK[u]))
            if s == seat:
                void = not (hand & suit)
            else:
                possible = deck - played - hand - set(cards_of(deal.excluded[s]))
                void = not (possible & suit)
            if void:
                put("void", 4 * rel(s) + u)
    put("trick_no", min(deal.trick_no, n - 1))
    if deal.contract is not None:
        if deal.contract.name in CONTRACT_NAMES:
            put("contract", CONTRACT_NAMES.index(deal.contract.name))
        else:
            put("extra_deal", 0)
    if deal.trump >= 0:
        put("trump", deal.trump)
    if deal.fantan_rank >= 0:
        put("fantan_rank", deal.fantan_rank)
    put("declarer", rel(deal.declarer))
    put("leader", rel(deal.leader))
    if not deal.is_over:
        put("to_move", rel(deal.current_player))
    put("phase", int(deal.phase))
    for s in range(4):
        for t in range(4):
            if deal.doubles[s] >> t & 1:
                put("doubles", 4 * rel(s) + rel(t))
        if deal.must_double >> s & 1:
            put("must_double", rel(s))
    for s in doubling_order(deal.declarer)[: deal.double_step]:
        put("doubled_done", rel(s))
    for name in deal.available:
        put("available", CONTRACT_NAMES.index(name))
    if deal.hearts_broken:
        put("hearts_broken", 0)
    for c in cards_of(deal.playable):
        put("fantan_playable", c)
    for place, s in enumerate(deal.finished):
        put("finished", 4 * rel(s) + place)
    i = 0
    for name, values in CHOICES.items():
        put("rules", i + values.index(getattr(deal.rules, name)))
        i += len(values)
    for name in BOOL_OPTIONS:
        if getattr(deal.rules, name):
            put("rules", i)
        i += 1
    for s in range(4):
        r = rel(s)
        put("tricks_won", r, deal.tricks_won[s] / n)
        put("cards_left", r, deal.hands[s].bit_count() / n)
        put("points", r, deal.points[s] / 100)
        put("passes", r, deal.passes[s] / n)
    if match is not None:
        put("is_match", 0)
        for s in range(4):
            for name in match.remaining_contracts(s):
                put("remaining", 11 * rel(s) + CONTRACT_NAMES.index(name))
            put("totals", rel(s), match.totals[s] / 100)
            k = min(match.deal_no, match.num_deals)
            left = sum(1 for j in range(k, match.num_deals) if match.declarer_of(j) == s)
            put("deals_left", rel(s), left / match.per_declarer)
            for t in range(4):
                owed = 0 if t == s else max(0, 2 - match.doubled[s][t])
                if match.rules.doubling == "off":
                    owed = 0
                put("outstanding", 4 * rel(s) + rel(t), owed / 2)
        put("deal_no", 0, match.deal_no / match.num_deals)
    return o


def _check_all_seats(deal, match=None):
    low, high = ob.observation_bounds()
    for seat in range(4):
        got = ob.encode(deal, seat, match)
        want = reference(deal, seat, match)
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, [
            (name, i - off) for i in bad[:5] for name, (off, size) in ob.BLOCKS.items() if off <= i < off + size
        ]
        assert (got >= low).all() and (got <= high).all()


@pytest.mark.parametrize(
    "rules, contract",
    [
        (Rules(), None),  # declaration + classic doubling
        (Rules(doubling="declarer_only", hearts_lead="until_broken"), "no_hearts"),
        (Rules(scoring="basic32", overtrump="yes"), "trumps:D"),
        (Rules(ravage_city=True, king_discard="forced"), None),
        (Rules(ace_plays_again=True, fantan_pass="free"), "fantan:5"),
        (Rules(salad=True, doubling="off"), "salad"),
    ],
)
def test_encode_equals_reference_along_random_deals(rules, contract):
    rng = np.random.default_rng(7)
    for g in range(3):
        deal = Deal.random(rng, g % 4, contract, rules)
        while not deal.is_over:
            _check_all_seats(deal)
            legal = deal.legal_actions()
            deal.apply(legal[int(rng.integers(len(legal)))])
        _check_all_seats(deal)


def test_encode_equals_reference_in_a_match():
    rng = np.random.default_rng(3)
    m = Match(Rules(), rng, first_declarer=2)
    steps = 0
    while m.deal_no < 3:  # R6.4 obligations, remaining contracts and totals move between deals
        if steps % 7 == 0:
            _check_all_seats(m.deal, m)
        legal = m.legal_actions()
        m.apply(legal[int(rng.integers(len(legal)))])
        steps += 1
    _check_all_seats(m.deal, m)


def test_hidden_information_swap_and_resample():
    """Another seat's cards never reach the observation: swapping two opponents' hands (or re-dealing
    all hidden cards consistently with the public record) leaves seat 0's observation unchanged."""
    rng = np.random.default_rng(11)
    for contract in ("no_queens", "trumps:H", "fantan:8"):
        deal = Deal.random(rng, 1, contract, Rules())
        for _ in range(4):
            deal.apply(action_id("double:none"))
        for step in range(18):
            before = ob.encode(deal, 0)
            swapped = deal.clone()
            swapped.hands[1], swapped.hands[2] = deal.hands[2], deal.hands[1]
            swapped._legal = None
            if deal.hands[1].bit_count() == deal.hands[2].bit_count():
                assert np.array_equal(ob.encode(swapped, 0), before), step
            resampled = sample_hidden(deal, 0, rng)
            assert resampled.hands[1] != deal.hands[1] or step > 10 or deal.is_over
            assert np.array_equal(ob.encode(resampled, 0), before), step
            if deal.is_over:
                break
            legal = deal.legal_actions()
            deal.apply(legal[int(rng.integers(len(legal)))])


def test_seat_relative_view():
    """R1.3: the observer is relative seat 0; the declarer appears at (declarer - observer) % 4."""
    hands = [" ".join(r + s for r in "23456789TJQKA") for s in "CDHS"]
    deal = Deal.from_hands(hands, declarer=2, contract="no_tricks", rules=Rules(doubling="off"))
    deal.apply(parse_cards("2H")[0])  # seat 2 leads (R2.3)
    for seat in range(4):
        o = ob.encode(deal, seat)
        assert ob.block(o, "declarer").tolist() == [float((2 - seat) % 4 == r) for r in range(4)]
        played = ob.block(o, "played").reshape(4, 52)
        assert played[(2 - seat) % 4, parse_cards("2H")[0]] == 1 and played.sum() == 1
        assert ob.block(o, "to_move")[(3 - seat) % 4] == 1
        assert np.array_equal(ob.block(o, "hand").nonzero()[0], parse_cards(hands[seat]) if seat != 2 else
                              sorted(set(parse_cards(hands[2])) - {parse_cards("2H")[0]}))
    # seats 0, 1 and 3 are void in hearts from everyone's view once seat 2 ... they hold no hearts (R5.1)
    o = ob.encode(deal, 0)
    assert ob.block(o, "void").reshape(4, 4)[0].tolist() == [0, 1, 1, 1]


def test_encode_rejects_bad_seat():
    deal = Deal.random(np.random.default_rng(0), 0, "no_tricks", Rules())
    with pytest.raises(ValueError, match="seat"):
        ob.encode(deal, 4)


# ----------------------------------------------------------------------------- incremental state (the env's)
@pytest.mark.parametrize(
    "rules, contract",
    [
        (Rules(), None),  # declaration, classic doubling (R3, R6), then trick play or Fantan
        (Rules(doubling="declarer_only", hearts_lead="until_broken"), "no_hearts"),  # R4.1 heart leads
        (Rules(scoring="basic32", overtrump="yes"), "trumps:D"),  # R10.1 32 cards, R5.5 overtrump
        (Rules(ravage_city=True, king_discard="forced"), None),  # R9, R4.4
        (Rules(ace_plays_again=True, fantan_pass="free"), "fantan:5"),  # R7.3, R7.5
        (Rules(fantan_pass="forced"), "fantan:9"),  # R7.3: forced passes exclude cards
        (Rules(undoubled_negative="split"), "no_tricks"),  # R6.6: a deal that is not played
        (Rules(salad=True, doubling="off"), "salad"),
    ],
)
def test_observation_state_equals_encode_after_every_step(rules, contract):
    """SeatObservations (the seats' vectors, updated from the engine's changes) gives ``encode`` bit for
    bit for every seat after every kind of step, whether seats look every step or only now and then."""
    rng = np.random.default_rng(11)
    for g in range(6):
        state = SeatObservations()
        deal = Deal.random(rng, g % 4, contract, rules)
        looks = rng.random(4) * (g % 2) * (1 + g % 3)  # g even: every seat every step; odd: at its own rate
        while True:
            for seat in range(4):
                if rng.random() >= looks[seat] or deal.is_over:
                    got = state.observe(deal, seat)
                    assert got.dtype == np.float32 and np.array_equal(got, ob.encode(deal, seat)), (g, seat)
            if deal.is_over:
                break
            legal = deal.legal_actions()
            deal.apply(legal[int(rng.integers(len(legal)))])


def test_observation_state_in_a_match_and_after_renege():
    """Across deals (a new Deal, match blocks change: R2, R6.4) and an R8.2 renege, and a state that
    jumps between unrelated deals, the vectors stay equal to ``encode``."""
    rng = np.random.default_rng(4)
    m = Match(Rules(ravage_city=True), rng, first_declarer=1)
    state = SeatObservations()
    other = Deal.random(rng, 0, "no_queens", Rules())
    steps = 0
    while not m.is_over:
        seat = steps % 4
        assert np.array_equal(state.observe(m.deal, seat, m), ob.encode(m.deal, seat, m))
        if steps % 37 == 0:  # an unrelated deal in between: rebuilt from scratch, then back
            assert np.array_equal(state.observe(other, seat), ob.encode(other, seat))
        deal = m.deal
        if deal.phase == 2 and steps % 53 == 0:
            deal.renege(deal.to_move)  # R8.2: the deal ends at once
            assert np.array_equal(state.observe(deal, seat, m), ob.encode(deal, seat, m))
            m.end_deal()
        else:
            legal = m.legal_actions()
            m.apply(legal[int(rng.integers(len(legal)))])
        steps += 1
    for seat in range(4):
        assert np.array_equal(state.observe(m.deal, seat, m), ob.encode(m.deal, seat, m))


def test_observation_state_hands_out_fresh_arrays():
    deal = Deal.random(np.random.default_rng(0), 0, "no_hearts", Rules())
    state = SeatObservations()
    first = [state.observe(deal, seat) for seat in range(4)]
    kept = [o.copy() for o in first]
    state.observe(deal, 0)[:] = 9.0  # scribbling on one vector changes neither the state nor earlier vectors
    while not deal.is_over:
        deal.apply(deal.legal_actions()[0])
        state.observe(deal, deal.current_player if not deal.is_over else 0)
    assert all(np.array_equal(f, k) for f, k in zip(first, kept))
    assert np.array_equal(state.observe(deal, 0), ob.encode(deal, 0))
