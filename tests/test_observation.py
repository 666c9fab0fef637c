"""The observation encoder (barbu_env/observation.py): layout, pinned observations over seeded play of every
preset, bounds, hidden information (RULES.md R5.3: only own hand and public play), seat-relativity (R1.3)."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pytest
from helpers import finish_with_tie

from barbu_env import observation as ob
from barbu_env.actions import action_id
from barbu_env.cards import parse_cards
from barbu_env.engine import Deal, Match, sample_hidden
from barbu_env.observation import layout
from barbu_env.rules import Rules, load_rules


def test_docstring_table_matches_blocks():
    rows = re.findall(r"^(\w+)\s+(\d+)\s+(\d+)\s", ob.__doc__, re.M)
    table = {name: (int(off), int(size)) for name, off, size in rows}
    assert table == ob.BLOCKS
    assert ob.OBS_SIZE == 1228 and ob.NUM_BITS == 1187
    assert f"OBS_SIZE` = {ob.OBS_SIZE}" in ob.__doc__
    low, high = ob.observation_bounds()
    assert low.shape == high.shape == (ob.OBS_SIZE,) and (low < high).all()


# ----------------------------------------------------------------------------- pinned observations
#: SHA-256 (first 16 hex digits) of every seat's observation over 400 seeded steps of random play per preset and
#: mode, with an R8.2 renege now and then (see ``_digest``). A deliberate change of the observation updates these
#: and the env version.
GOLDEN = {
    ("basic32", "deal"): "cacb21b754913f0e", ("basic32", "match"): "c4150b699c2f21d3",
    ("basic52", "deal"): "380108145c228bd7", ("basic52", "match"): "9ed46919f90b19da",
    ("classic", "deal"): "f40a8f9a898dbb81", ("classic", "match"): "4b99152420be7e92",
    ("king", "deal"): "afa6fa2317a84e25", ("king", "match"): "fdb16be6e32c29a6",
    ("king3", "deal"): "eb6c211b75ee1644", ("king3", "match"): "08897e00775361d8",
    ("king5", "deal"): "44b276d444ef7d08", ("king5", "match"): "4037714f83f389a8",
    ("king_choose", "deal"): "b51c68f190fa3bfc", ("king_choose", "match"): "2c1c33dfd5af1e37",
    ("king_short", "deal"): "ff2be34c9a5855f1", ("king_short", "match"): "ffa1aee3c3ccefea",
    ("online", "deal"): "a6bcc38a21663188", ("online", "match"): "f8d3d8793dc9f5e2",
    ("ravage_city", "deal"): "75736a99f7ca979e", ("ravage_city", "match"): "75fe71c9b4c9dee2",
    ("rotate", "deal"): "6b845afd09a8e101", ("rotate", "match"): "1e925aa862934fe1",
    ("salad", "deal"): "58f17f945970a914", ("salad", "match"): "6904df1657168812",
    ("spanish", "deal"): "53f7c6b2d8b1bf09", ("spanish", "match"): "892f24dd3023fd3b",
}  # fmt: skip


def _digest(preset: str, mode: str, steps: int = 400) -> str:
    rules = load_rules(preset)
    rng = np.random.default_rng(0)
    h = hashlib.sha256()
    m = Match(rules, rng, 1) if mode == "match" else None
    deal = m.deal if m else Deal.random(rng, 0, None, rules)
    for k in range(steps):
        for s in range(rules.players):
            h.update(ob.encode(deal, s, m).tobytes())
        if m.is_over if m else deal.is_over:
            if m:
                break
            deal = Deal.random(rng, k % rules.players, None, rules)
            continue
        legal = deal.legal_actions()
        if deal.phase in (2, 3) and k % 97 == 5:
            deal.renege(deal.to_move)  # R8.2
            if m:
                m.end_deal()
                deal = m.deal
            continue
        a = legal[int(rng.integers(len(legal)))]
        if m:
            m.apply(a)
            deal = m.deal
        else:
            deal.apply(a)
    return h.hexdigest()[:16]


@pytest.mark.parametrize("preset, mode", sorted(GOLDEN))
def test_observations_are_the_pinned_ones(preset, mode):
    assert _digest(preset, mode) == GOLDEN[preset, mode]


@pytest.mark.parametrize("rules", [Rules(), load_rules("king5"), Rules(players=3),
                                   Rules(salad=True, positive=["salad"]), Rules(tiebreak="extra_deals")])  # fmt: skip
def test_phase_and_contract_are_read_from_the_observation(rules):
    """``phase_and_contract``: every seat's observation names the deal's phase (R2.3) and its declared contract
    (None before the declaration, R2.3, and in an R2.4 tie-break deal), along seeded matches of random play."""
    rng = np.random.default_rng(5)
    seen: set[tuple[int, str | None]] = set()
    for k in range(2):
        m = finish_with_tie(rules) if k == 0 and rules.tiebreak == "extra_deals" else Match(rules, rng)
        while not m.is_over:
            d = m.deal
            name = None if d.contract is None or d.contract_text == "extra_deal" else d.contract.name
            for seat in range(rules.players):
                assert ob.phase_and_contract(ob.encode(d, seat, m), rules) == (int(d.phase), name)
            seen.add((int(d.phase), name))
            legal = m.legal_actions()
            m.apply(legal[int(rng.integers(len(legal)))])
    assert (0, None) in seen and any(p == 3 for p, _ in seen) == ("fantan" in {n for _, n in seen})
    assert len({n for _, n in seen}) >= 8
    assert ((2, None) in seen) == (rules.tiebreak == "extra_deals")  # the tie-break deals' play


def test_observations_in_bounds_along_random_deals():
    rng = np.random.default_rng(7)
    for rules in (Rules(), Rules(scoring="basic32", overtrump="yes"), Rules(ace_plays_again=True)):
        low, high = layout(rules).bounds()
        m = Match(rules, rng)
        for _ in range(300):
            for seat in range(4):
                o = ob.encode(m.deal, seat, m)
                assert o.dtype == np.float32 and (o >= low).all() and (o <= high).all()
            legal = m.legal_actions()
            m.apply(legal[int(rng.integers(len(legal)))])


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
        assert np.array_equal(
            ob.block(o, "hand").nonzero()[0],
            parse_cards(hands[seat]) if seat != 2 else sorted(set(parse_cards(hands[2])) - {parse_cards("2H")[0]}),
        )
    # seats 0, 1 and 3 are void in hearts from everyone's view once seat 2 ... they hold no hearts (R5.1)
    o = ob.encode(deal, 0)
    assert ob.block(o, "void").reshape(4, 4)[0].tolist() == [0, 1, 1, 1]


def test_encode_rejects_bad_seat():
    deal = Deal.random(np.random.default_rng(0), 0, "no_tricks", Rules())
    with pytest.raises(ValueError, match="seat"):
        ob.encode(deal, 4)
