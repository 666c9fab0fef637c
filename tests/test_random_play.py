"""Seeded random play over every contract and the rule options that change play or scoring.

At every step the engine's legal actions are compared with the independent reference of
``tests/helpers.py`` (RULES.md R4.1, R4.4, R5.1–R5.5, R7.2–R7.3), cards are conserved (R1.4), and
the public inferences (``Deal.excluded``) never contradict the real hands. At the end, contract
scores are recomputed from the history (R4, R7.4, R9.1, R10.1), sum to the contract total (E5),
settlement is zero-sum (R6.5), and the deal ends within its bound.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import (
    expected_total,
    random_playout,
    ref_contract_scores,
    ref_legal_actions,
    trick_winner,
    tricks_of,
)

from barbu_env import Deal, Match, Rules
from barbu_env.actions import PASS, action_id, action_name
from barbu_env.contracts import contract_table
from barbu_env.engine.deal import Phase

#: Option sets that change legality, inferences or scoring (each on top of the defaults).
OPTION_SETS: list[dict] = [
    {},
    {"hearts_lead": "until_broken"},
    {"hearts_lead": "free"},
    {"king_discard": "forced"},
    {"trump_lead": "free"},
    {"overtrump": "yes"},
    {"overtrump": "yes", "trump_lead": "free"},
    {"doubling": "declarer_only"},
    {"doubling": "off"},
    {"undoubled_negative": "split"},
    {"fantan_pass": "free", "ace_plays_again": True},
    {"ace_plays_again": True},
    {"ravage_city": True, "salad": True},
    {"scoring": "basic52", "salad": True},
    {"scoring": "basic32", "ravage_city": True, "overtrump": "yes"},
    {"scoring": "basic32", "king_discard": "forced", "hearts_lead": "until_broken", "salad": True},
    {"salad": True, "positive": ("no_tricks", "salad")},  # R10.3, the three presets
    {"salad": True, "positive": ("no_tricks", "no_hearts", "salad"), "undoubled_negative": "split"},
    {"salad": True, "positive": ("no_tricks", "no_hearts", "no_queens", "salad"), "scoring": "basic52"},
    {"positive": ("no_queens",), "doubling": "declarer_only"},
    {"players": 3},  # R12
    {"players": 5},
    {"players": 3, "scoring": "basic32", "undoubled_negative": "split", "salad": True},
    {"players": 5, "scoring": "basic52", "doubling": "declarer_only", "fantan_pass": "free"},
    {"players": 5, "scoring": "basic32", "salad": True, "positive": ("no_tricks", "salad")},
]
DEALS_PER_CONTRACT = 6


def contract_texts(rules: Rules, rng: np.random.Generator) -> list[str]:
    """Every contract of ``rules``; trumps with every suit, fantan with a random rank of the deck."""
    out = []
    for name in contract_table(rules):
        if name == "trumps":
            out += [f"trumps:{s}" for s in "CDHS"]
        elif name == "fantan":
            ranks = "23456789TJQKA" if rules.deck_size == 52 else "789TJQKA"
            out += [f"fantan:{ranks[int(rng.integers(len(ranks)))]}" for _ in range(3)]
        else:
            out.append(name)
    return out


def check_step(deal: Deal) -> None:
    """Invariants before every action."""
    deck = deal.rules.deck  # R10.1, R12.1
    hands = deal.hands
    n = deal.n
    # R1.4: hands and played cards partition the deck
    union = deal.played
    for h in hands:
        union |= h
    assert union == deck
    assert sum(h.bit_count() for h in hands) + deal.played.bit_count() == deck.bit_count()
    assert all(h & deal.played == 0 for h in hands)
    assert all(deal.played_by[s] & hands[s] == 0 for s in range(n))
    # inferences are sound: no seat holds a card it has shown it cannot hold
    for s in range(n):
        assert hands[s] & deal.excluded[s] == 0, f"seat {s} holds an excluded card"
    if deal.phase in (Phase.PLAY, Phase.FANTAN):
        engine = set(deal.legal_actions())
        ref = ref_legal_actions(deal)
        assert engine == ref, (
            f"{deal!r}: engine {sorted(action_name(a) for a in engine)} "
            f"!= reference {sorted(action_name(a) for a in ref)}"
        )
        assert deal.legal_card_mask() == sum(1 << a for a in engine if a != PASS)


def expected_next(deal: Deal, p: int, action: int, phase_before: int) -> int:
    """Who moves after seat ``p`` took ``action`` (R2.3, R5.2, R6.1, R7.4, R7.5), from the state after."""
    if deal.is_over:
        return -1
    n = deal.n
    if phase_before == Phase.DECLARE:
        return deal.declarer if deal.rules.doubling == "off" else (deal.declarer + 1) % n
    if phase_before == Phase.DOUBLE:
        return deal.declarer if p == deal.declarer else (p + 1) % n
    if phase_before == Phase.PLAY:
        last = tricks_of(deal)[-1]
        return trick_winner(last, deal.trump) if len(last) == n else (p + 1) % n
    if action != PASS and action % 13 == 12 and deal.rules.ace_plays_again and deal.hands[p]:
        return p
    q = (p + 1) % n
    while not deal.hands[q]:
        q = (q + 1) % n
    return q


def play_checked(deal: Deal, rng: np.random.Generator, max_steps: int = 5000) -> int:
    """Random play with the per-step invariants and the turn order checked; returns the action count."""
    n = 0
    while not deal.is_over:
        check_step(deal)
        legal = deal.legal_actions()
        a = legal[int(rng.integers(len(legal)))]
        p, phase = deal.current_player, deal.phase
        deal.apply(a)
        assert deal.current_player == expected_next(deal, p, a, phase), (deal, p, action_name(a))
        n += 1
        assert n <= max_steps
    return n


def ref_settlement(scores: list[int], doubles: list[int]) -> list[int]:
    """R6.5 written out: each doubled direction moves the difference to the higher scorer."""
    n = len(scores)
    out = [0] * n
    for i in range(n):
        for j in range(n):
            if i != j and doubles[i] >> j & 1:
                diff = scores[i] - scores[j]
                out[i] += diff
                out[j] -= diff
    return out


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "classic")
def test_random_deals_follow_the_rules(options: dict) -> None:
    """Every contract, random hands, random doubles and play: legality, conservation, scores (E5)."""
    rules = Rules(**options)
    rng = np.random.default_rng(1234)
    for text in contract_texts(rules, rng):
        for k in range(DEALS_PER_CONTRACT):
            declarer = k % rules.players
            deal = Deal.random(rng, declarer, None if k == 0 else text, rules)
            if k == 0:  # declare through the action, as a match does
                deal.apply(action_id("declare:" + text, players=rules.players))
            n = play_checked(deal, rng) + (k == 0)
            assert deal.is_over and deal.current_player == -1 and deal.legal_actions() == []
            name = deal.contract.name
            total = expected_total(name, rules)
            assert deal.contract.total(rules) == total
            assert sum(deal.contract_scores) == total, (text, deal.contract_scores)  # E5
            assert sum(deal.settlement) == 0  # R6.5 zero-sum
            assert deal.scores == [a + b for a, b in zip(deal.contract_scores, deal.settlement)]  # R8.1
            doublings = (0 if rules.doubling == "off" else rules.players) + (k == 0)
            if deal.split:  # R6.6: no one doubled a negative contract, the deal was not played
                assert not deal.contract.positive and not any(deal.doubles) and deal.played == 0
                share = total // (rules.players - 1)  # R6.6 / R12.6
                others = rules.players - 1
                assert deal.contract_scores == [
                    total - others * share if s == declarer else share for s in range(rules.players)
                ]
                continue
            assert deal.contract_scores == ref_contract_scores(deal), (text, deal.history)
            assert deal.settlement == ref_settlement(deal.contract_scores, deal.doubles)
            if deal.contract.play == "tricks":
                assert n <= doublings + rules.players * rules.hand_size
                full = name not in ("no_queens", "no_king")  # R4.5: the others play all tricks
                if full:
                    assert deal.trick_no == rules.hand_size and deal.played == rules.deck
            else:
                assert sorted(deal.finished) == list(range(rules.players))
                if rules.fantan_pass == "forced":  # a pass needs no playable card: <= 3 in a row
                    cards_played = deal.played.bit_count()
                    assert n - doublings - cards_played <= 3 * (cards_played + 1)


def test_early_ends_still_total_the_contract() -> None:
    """R4.2/R4.3: No queens and No King end once their cards are captured, with cards left in hands,
    and still score the whole contract total (E5)."""
    rng = np.random.default_rng(7)
    early = {"no_queens": 0, "no_king": 0}
    for k in range(200):
        name = "no_queens" if k % 2 else "no_king"
        deal = Deal.random(rng, k % 4, name, Rules())
        random_playout(deal, rng)
        if deal.trick_no < 13:
            early[name] += 1
            assert any(deal.hands)
            assert sum(h.bit_count() for h in deal.hands) == 4 * (13 - deal.trick_no)
        assert sum(deal.contract_scores) == expected_total(name, Rules())
    assert early["no_queens"] > 0 and early["no_king"] > 0


def play_seeded_match(seed: int, rules: Rules) -> Match:
    m = Match(rules, np.random.default_rng(seed))
    pick = np.random.default_rng(seed + 1)
    while not m.is_over:
        legal = m.legal_actions()
        m.apply(legal[int(pick.integers(len(legal)))])
    return m


def test_same_seed_same_game() -> None:
    """Determinism: the same seeds give identical deals, histories and records; another seed differs."""
    a = Deal.random(np.random.default_rng(5), 2, "no_hearts")
    b = Deal.random(np.random.default_rng(5), 2, "no_hearts")
    assert a.hands == b.hands
    random_playout(a, np.random.default_rng(9))
    random_playout(b, np.random.default_rng(9))
    assert a.history == b.history and a.scores == b.scores
    rules = Rules(ravage_city=True)
    m1, m2, m3 = play_seeded_match(3, rules), play_seeded_match(3, rules), play_seeded_match(4, rules)
    assert m1.records == m2.records and m1.totals == m2.totals and m1.winners == m2.winners
    assert m1.records != m3.records


def test_clone_replays_identically() -> None:
    """A clone taken mid-deal, given the same actions, reaches the same end; the original is untouched."""
    rng = np.random.default_rng(11)
    deal = Deal.random(rng, 1, "trumps:H")
    for _ in range(20):
        legal = deal.legal_actions()
        deal.apply(legal[int(rng.integers(len(legal)))])
    copy = deal.clone()
    hands_before, history_before = deal.hands[:], list(deal.history)
    random_playout(copy, np.random.default_rng(3))
    assert deal.hands == hands_before and deal.history == history_before and not deal.is_over
    random_playout(deal, np.random.default_rng(3))
    assert deal.history == copy.history and deal.scores == copy.scores


@pytest.mark.parametrize("phase_steps", [0, 2, 10])
def test_illegal_action_names_the_legal_ones(phase_steps: int) -> None:
    """R8.2 (illegal_action=raise): an illegal action raises ValueError listing every legal action."""
    rng = np.random.default_rng(phase_steps)
    deal = Deal.random(rng, 0, None, Rules())
    for _ in range(phase_steps):
        legal = deal.legal_actions()
        deal.apply(legal[int(rng.integers(len(legal)))])
    legal = deal.legal_actions()
    bad = next(a for a in range(87) if a not in legal)
    before = deal.clone()
    with pytest.raises(ValueError) as e:
        deal.apply(bad)
    msg = str(e.value)
    assert action_name(bad) in msg
    for a in legal:
        assert f"{action_name(a)} ({a})" in msg
    assert deal.history == before.history and deal.hands == before.hands  # nothing changed


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8])
def test_numpy_actions(dtype) -> None:
    """Actions may be numpy integers of any dtype (an agent's argmax); the state stays plain ints."""
    for contract in ("no_tricks", "fantan:7"):
        deal = Deal.from_hands(np.arange(52).reshape(4, 13), 0, None)
        deal.apply(dtype(action_id("declare:" + contract)))
        rng = np.random.default_rng(0)
        while not deal.is_over:
            legal = deal.legal_actions()
            deal.apply(dtype(legal[int(rng.integers(len(legal)))]))
        assert all(type(h) is int for h in deal.hands) and type(deal.played) is int
        assert all(type(a) is int for _, a in deal.history)
    with pytest.raises(ValueError, match="legal actions are"):
        Deal.from_hands(SUIT_HANDS_IDS, 0, None).apply(1.5)


SUIT_HANDS_IDS = [list(range(13 * s, 13 * s + 13)) for s in range(4)]
