"""Six-player Barbu King with two packs (RULES.md R11.5): the pack, two identical cards in a trick, Domino
with two copies, the score table, bad hands, the observation's copy counts, the env, agents and barbu-eval.

The reference below (legal cards, trick winners and deal scores) is written from R11.5, not from the engine:
plain lists and counters recomputed from each deal's public history.
"""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pytest
from helpers import agents_env_play
from pettingzoo.test import api_test, seed_test

import barbu_env
from barbu_env.actions import PASS, action_id, action_name
from barbu_env.cards import copies_cards, parse_card, parse_cards
from barbu_env.contracts import contract_table
from barbu_env.engine import Deal, InfoState, Match
from barbu_env.engine.infostate import sample_hidden
from barbu_env.evaluation import evaluate
from barbu_env.observation import block_of, encode, layout
from barbu_env.render import render_text
from barbu_env.rules import Rules, load_rules

K6 = load_rules("king6")
H = 2
KH = parse_card("KH")
QUEENS = set(parse_cards("QC QD QH QS"))
ORDER = ["no_tricks", "no_hearts", "no_queens", "no_king", "salad", "take_tricks", "no_first_last", "fantan"]
#: R11.5 contract totals (the Decision: 25 hearts, so No hearts +125 and Salad +530; Domino sums to 0).
TOTALS = [85, 125, 160, 160, 530, -85, 80, 0]
DOMINO = [-60, -40, -20, 20, 40, 60]
#: R11.5: copies of each card in the six-player pack (one 2♣, one K♥ — the Barbu —, two of every other card).
COPIES = {c: 1 if c in (parse_card("2C"), KH) else 2 for c in range(52)}


def two_pack_hands(spec: dict[int, str]) -> list[list[int]]:
    """Six hands of 17: the cards ``spec`` gives each seat, the rest filled with the pack's unused copies (first
    copies in ascending id order, then second ones), seat 0 first, a card the seat already holds only when nothing
    else is left (only where the filled cards do not matter to the test)."""
    hands = [parse_cards(spec.get(s, "")) for s in range(6)]
    left = Counter(COPIES)
    left.subtract(Counter(c for h in hands for c in h))
    assert min(left.values()) >= 0, "a card is given more often than the pack holds it"
    rest = [c for k in (2, 1) for c in range(52) if left[c] >= k]
    for h in hands:
        while len(h) < 17:
            h.append(rest.pop(next((i for i, c in enumerate(rest) if c not in h), 0)))
    return hands


# ------------------------------------------------------------------ reference (written from R11.5)
def ref_tricks(deal: Deal) -> list[list[tuple[int, int]]]:
    out: list[list[tuple[int, int]]] = [[]]
    for seat, a in deal.history:
        if 0 <= a < 52:
            if len(out[-1]) == 6:
                out.append([])
            out[-1].append((seat, a))
    return out if out[0] else []


def ref_winner(trick: list[tuple[int, int]]) -> int:
    """R5.2 with R11.5: the highest card of the led suit; of two identical cards the later one."""
    led = trick[0][1] // 13
    best = max(range(len(trick)), key=lambda i: (trick[i][1] if trick[i][1] // 13 == led else -1, i))
    return trick[best][0]


def ref_hand(deal: Deal, seat: int, dealt: list[int]) -> Counter:
    """The seat's cards now: the dealt ones less those it played (a card held twice counts twice)."""
    left = Counter(dealt)
    left.subtract(Counter(a for s, a in deal.history if s == seat and 0 <= a < 52))
    return +left


def ref_legal(deal: Deal, hand: Counter) -> set[int]:
    """R5.1 follow suit (no trumps); R4.1 via R11.2 in No hearts, No King and Salad."""
    cards = set(hand)
    tricks = ref_tricks(deal)
    current = tricks[-1] if tricks and len(tricks[-1]) < 6 else []
    if not current:
        if deal.contract.name in ("no_hearts", "no_king", "salad"):
            return {c for c in cards if c // 13 != H} or cards
        return cards
    led = current[0][1] // 13
    return {c for c in cards if c // 13 == led} or cards


def ref_scores(deal: Deal) -> list[int]:
    """R11.5 scores of a finished six-player deal, from its history."""
    name = deal.contract.name
    out = [0] * 6
    if name == "fantan":
        left = [17] * 6
        order = []
        for seat, a in deal.history:
            if 0 <= a < 52:
                left[seat] -= 1
                if left[seat] == 0:
                    order.append(seat)
        order += [s for s in range(6) if s not in order]
        for place, seat in enumerate(order):
            out[seat] = DOMINO[place]
        return out
    tricks = ref_tricks(deal)
    assert len(tricks) == 17
    per_trick = {"no_tricks": 5, "salad": 5, "take_tricks": -5}.get(name, 0)
    for i, tr in enumerate(tricks):
        w = ref_winner(tr)
        cs = [c for _, c in tr]
        out[w] += per_trick
        if name in ("no_hearts", "salad"):
            out[w] += 5 * sum(1 for c in cs if c // 13 == H)
        if name in ("no_queens", "salad"):
            out[w] += 20 * sum(1 for c in cs if c in QUEENS)
        if name in ("no_king", "salad") and KH in cs:
            out[w] += 160
        if name == "no_first_last" and i in (0, 16):
            out[w] += 40
    return out


def ref_domino_playable(deal: Deal, dealt: list[list[int]]) -> set[int]:
    """R11.5 Domino: a card is playable with the named rank or next to a card of its suit on the table, while a
    copy of it is still in a hand."""
    table = {a for _, a in deal.history if 0 <= a < 52}
    out = set()
    for c in range(52):
        played = sum(1 for _, a in deal.history if a == c)
        if played == COPIES[c]:
            continue
        r = c % 13
        if r == deal.fantan_rank or (r > 0 and c - 1 in table) or (r < 12 and c + 1 in table):
            out.add(c)
    return out


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


# ------------------------------------------------------------------ the pack and the table
def test_r11_5_pack_of_102_cards() -> None:
    """Two packs less one 2♣ and both K♥, plus the Barbu: 102 cards, 17 to each of six seats."""
    assert (K6.players, K6.deck_size, K6.hand_size, K6.two_packs) == (6, 102, 17, True)
    assert K6.deck.bit_count() == 52 and K6.deck2.bit_count() == 50
    assert not K6.deck2 >> parse_card("2C") & 1 and not K6.deck2 >> KH & 1
    assert load_rules("configs/rules/king6.yaml") == K6 == Rules(game="king", doubling="off", players=6)
    assert not load_rules("king5").two_packs and load_rules("king5").deck2 == 0
    d = Deal.random(np.random.default_rng(0), 0, "no_tricks", K6)
    counts = Counter(c for s in range(6) for c in copies_cards(d.held(s)))
    assert counts == Counter(COPIES) and all(d.held(s).bit_count() == 17 for s in range(6))
    assert any(d.hands2), "some seat holds two copies of a card (likely with 102 cards)"


def test_r11_5_score_table() -> None:
    """R11.5: the eight contracts with their six-player totals; game total +1055 (the Decision)."""
    table = contract_table(K6)
    assert list(table) == ORDER
    assert [c.total(K6) for c in table.values()] == TOTALS and sum(TOTALS) == 1055
    assert list(table["fantan"].fantan_points) == DOMINO
    assert table["no_king"].card_values()[KH] == 160 and table["no_queens"].card_values()[parse_card("QS")] == 20
    with pytest.raises(ValueError, match=r"'players' with game='barbu'.*R11\.5"):
        Rules(players=6)  # six players are Barbu King's only


# ------------------------------------------------------------------ two identical cards in a trick
def test_r11_5_later_of_two_identical_cards_wins_the_trick() -> None:
    """No tricks: seat 0 leads 5♠, seats 1 and 3 play the two aces of spades; seat 3's, played later, wins."""
    hands = two_pack_hands({0: "5S", 1: "AS", 2: "7S", 3: "AS", 4: "2S", 5: "3S"})
    d = Deal.from_hands(hands, 0, "no_tricks", K6)
    for card in "5S AS 7S AS 2S 3S".split():
        d.apply(action_id(card))
    assert d.trick_no == 1 and d.leader == d.current_player == 3
    assert d.tricks_won == [0, 0, 0, 1, 0, 0] and d.points == [0, 0, 0, 5, 0, 0]
    assert d.last_trick == (0, parse_cards("5S AS 7S AS 2S 3S"), 3)
    assert d.captured2[3] == 1 << parse_card("AS")  # seat 3 holds both aces in its tricks
    assert ref_winner(ref_tricks(d)[0]) == 3


def test_r11_5_a_seat_holding_both_copies_keeps_one() -> None:
    """Playing a card held twice is one action and leaves the other copy in the hand; the first copy played
    still loses to the second copy played later by another seat (Take tricks)."""
    hands = two_pack_hands({0: "KD KD 3D", 1: "4D", 2: "AD", 3: "5D", 4: "AD", 5: "6D"})
    d = Deal.from_hands(hands, 0, "take_tricks", K6)
    ad = parse_card("AD")
    assert d.hands2[0] == 1 << parse_card("KD") and d.held(0).bit_count() == 17
    d.apply(action_id("KD"))
    assert d.hands[0] >> parse_card("KD") & 1 and not d.hands2[0] and d.held(0).bit_count() == 16
    for card in "4D AD 5D AD 6D".split():
        d.apply(action_id(card))
    assert d.current_player == 4 and d.points[4] == -5  # the later A♦ (seat 4) beats seat 2's
    assert d.captured2[4] == 1 << ad and d.played_by[2] == d.played_by[4] == 1 << ad
    assert Counter(copies_cards(d.held(0)))[parse_card("KD")] == 1 and d.hands[0] >> parse_card("3D") & 1


def test_r11_5_clone_copies_the_second_copies() -> None:
    d = Deal.from_hands(two_pack_hands({0: "KD KD"}), 0, "no_tricks", K6)
    c = d.clone()
    c.apply(action_id("KD"))
    assert type(c) is type(d) and d.hands2[0] and not c.hands2[0] and not d.played_by[0] and c.played_by[0]


# ------------------------------------------------------------------ Domino with two copies
def test_r11_5_domino_second_copy_stays_playable() -> None:
    """Domino from 7: after the first 7♥ the second is still playable (R7.2 reading of R11.5), as are 6♥ and
    8♥; once both 7♥ are down only the run's ends are playable in hearts."""
    hands = two_pack_hands({0: "7H 7H 8H", 1: "6H 2C", 2: "8H"})
    d = Deal.from_hands(hands, 0, None, K6, available=("fantan",))
    d.apply(action_id("declare:fantan:7"))
    h = {parse_card(x): x for x in ("6H", "7H", "8H")}
    d.apply(action_id("7H"))
    assert {h[c] for c in h if d.playable >> c & 1} == {"6H", "7H", "8H"}
    assert d.hands[0] >> parse_card("7H") & 1  # seat 0 still holds the second copy
    assert d.fantan_lo[H] == d.fantan_hi[H] == 5
    while d.current_player != 0:  # the others play or pass
        d.apply(d.legal_actions()[0])
    d.apply(action_id("7H"))
    assert not d.playable >> parse_card("7H") & 1 and d.fantan_lo[H] <= 5 <= d.fantan_hi[H]
    assert sum(1 for s, a in d.history if a == parse_card("7H")) == 2


def test_r11_5_random_domino_follows_the_reference() -> None:
    """Random Domino deals: every legal set is the reference's (cards with a copy left in hand that are
    playable), the deal ends with five seats out and scores -60 .. +60 by finishing order."""
    for seed in range(4):
        dealt = Deal.random(np.random.default_rng(seed), seed % 6, f"fantan:{'37TQ'[seed]}", K6)
        d = dealt.clone()
        hands0 = [copies_cards(dealt.held(s)) for s in range(6)]
        rng = np.random.default_rng(seed + 10)
        while not d.is_over:
            seat = d.current_player
            hand = set(ref_hand(d, seat, hands0[seat]))
            want = hand & ref_domino_playable(d, hands0)
            legal = d.legal_actions()
            assert set(legal) == (want or {PASS}), (seed, d.history[-3:])
            d.apply(legal[int(rng.integers(len(legal)))])
        assert d.scores == ref_scores(d) and sorted(d.scores) == DOMINO and sum(d.scores) == 0


# ------------------------------------------------------------------ random play against the table
def test_r11_5_random_matches_total_the_table() -> None:
    """Seeded random matches: every legal set is the reference's, every deal scores as the reference and sums
    to its R11.5 total, and the match totals sum to +1055."""
    for seed in range(3):
        rng = np.random.default_rng(seed)
        m = Match(K6, rng, first_declarer=seed)
        dealt: list[list[int]] = []
        while not m.is_over:
            d = m.deal
            if not d.history:
                dealt = [copies_cards(d.held(s)) for s in range(6)]
            if d.phase == 2:
                seat = d.current_player
                hand = ref_hand(d, seat, dealt[seat])
                assert set(d.legal_actions()) == ref_legal(d, hand)
                assert Counter(copies_cards(d.held(seat))) == hand
            legal = m.legal_actions()
            rec = m.apply(legal[int(rng.integers(len(legal)))])
            if rec is not None:
                assert list(rec.scores) == ref_scores(d)
        assert [sum(r.scores) for r in m.records] == TOTALS
        assert sum(m.totals) == 1055 and m.winners == [s for s in range(6) if m.totals[s] == min(m.totals)]


# ------------------------------------------------------------------ bad hands
@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({0: "AS AS", 3: "AS"}, r"card AS is dealt 3 times \(seats 0, 0, 3\): the two packs hold at most 2 .*R11\.5"),
        ({0: "2C", 1: "2C"}, r"card 2C is dealt 2 times \(seats 0, 1\).*one 2C is taken out.*R11\.5"),
        ({2: "KH KH"}, r"card KH is dealt 2 times \(seats 2, 2\).*Barbu is the only KH.*R11\.5"),
    ],
)
def test_r11_5_a_copy_too_many_is_refused_naming_the_card(spec, words) -> None:
    hands = [parse_cards(spec.get(s, "")) for s in range(6)]
    given = {x for h in hands for x in h}
    pad = [c for c in range(52) if c not in given for _ in range(COPIES[c])]  # the pack less the given cards
    for h in hands:
        while len(h) < 17:
            h.append(pad.pop())
    with pytest.raises(ValueError, match=words):
        Deal.from_hands(hands, 0, "no_tricks", K6)
    e = barbu_env.env(rules="king6", mode="deal", contract="no_tricks")
    with pytest.raises(ValueError, match=words):  # the env's reset options are checked the same way
        e.reset(options={"hands": [" ".join(action_name(c) for c in h) for h in hands]})


def test_r11_5_wrong_counts_and_masks_are_refused() -> None:
    hands = two_pack_hands({})
    short = r"hand of seat 5 has 16 cards; each hand needs 17 \(R11\.5: two packs, 102 cards"
    with pytest.raises(ValueError, match=short):
        Deal.from_hands([*hands[:5], hands[5][:16]], 0, "no_tricks", K6)
    with pytest.raises(ValueError, match="6 lists of cards"):
        Deal.from_hands(hands[:4], 0, "no_tricks", K6)
    lonely = (1 << 52 + parse_card("AS")) | sum(1 << c for c in range(16))
    with pytest.raises(ValueError, match=r"bit 103 \(a second AS\) is set without bit 51"):
        Deal.from_hands([lonely, *hands[1:]], 0, "no_tricks", K6)
    masks = Match(K6, 0).deal  # copies masks are accepted as hands
    again = Deal.from_hands([masks.held(s) for s in range(6)], 0, "no_tricks", K6)
    assert again.hands == masks.hands and again.hands2 == masks.hands2


# ------------------------------------------------------------------ what a seat knows
def test_r11_5_sampled_worlds_keep_every_copy() -> None:
    """The hidden-card samplers (engine's and PIMC's) deal exactly the unseen copies, keep the seat's own hand
    and never give a seat a card it showed it cannot hold."""
    from barbu_env.agents.pimc import sample_world

    d = Deal.random(np.random.default_rng(3), 0, "no_hearts", K6)
    rng = np.random.default_rng(4)
    for _ in range(40):
        d.apply(d.legal_actions()[int(rng.integers(len(d.legal_actions())))])
    seat = d.current_player
    info = InfoState.of(d, seat)
    assert info.hand == d.held(seat) and info.hand_sizes == tuple(d.held(s).bit_count() for s in range(6))
    truth = Counter(c for s in range(6) for c in copies_cards(d.held(s)))
    for k in range(10):
        for w in (sample_hidden(info.view, seat, np.random.default_rng(k), info.hand_sizes),
                  sample_world(info, np.random.default_rng(k))):  # fmt: skip
            assert Counter(c for s in range(6) for c in copies_cards(w.held(s))) == truth
            assert w.held(seat) == d.held(seat)
            assert all(not w.hands[s] & d.excluded[s] for s in range(6))


def test_r11_5_observation_counts_copies() -> None:
    """The king6 layout: card blocks say "at least one copy", the ``*2`` blocks "both copies"; for every card,
    own copies + unseen copies + played copies = the pack's copies, and never another seat's hand."""
    lay = layout(K6)
    assert lay.size == 2402 and lay.blocks["played2"][1] == lay.blocks["captured2"][1] == 6 * 52
    m = Match(K6, np.random.default_rng(1))
    rng = np.random.default_rng(2)
    for _ in range(60):
        m.apply(m.legal_actions()[int(rng.integers(len(m.legal_actions())))])
    d = m.deal
    for seat in range(6):
        obs = encode(d, seat, m)

        def count(name: str, rows: int = 1, o: np.ndarray = obs) -> np.ndarray:
            one = block_of(o, name, K6).reshape(rows, 52)
            two = block_of(o, name + "2", K6).reshape(rows, 52)
            return (one + two).sum(axis=0)

        total = count("hand") + count("unseen") + count("played", 6)
        assert total.tolist() == [COPIES[c] for c in range(52)]
        assert Counter(np.flatnonzero(block_of(obs, "hand2", K6))) == Counter(copies_cards(d.hands2[seat]))
        cards_left = block_of(obs, "cards_left", K6) * 17
        assert np.allclose(cards_left, [d.held((seat + r) % 6).bit_count() for r in range(6)])
        captured = count("captured", 6).sum()
        assert captured == sum(len(t) for t in ref_tricks(d) if len(t) == 6)
    # another seat's hands do not change what seat 0 sees (same public history, hands swapped)
    swapped = d.clone()
    swapped.set_hands([d.held(0), d.held(2), d.held(1), *[d.held(s) for s in range(3, 6)]])
    assert np.array_equal(encode(d, 0, m), encode(swapped, 0, m))


# ------------------------------------------------------------------ env, agents, evaluation, render
def test_r11_5_env_api_and_seed() -> None:
    _quiet(api_test, barbu_env.env(rules="king6"), num_cycles=300)
    _quiet(seed_test, lambda: barbu_env.env(rules="king6"), num_cycles=300)
    _quiet(api_test, barbu_env.env(rules="king6", mode="deal", contract="fantan:7"), num_cycles=100)
    e = barbu_env.env(rules="king6")
    e.reset(seed=0)
    assert e.possible_agents == [f"player_{i}" for i in range(6)]
    assert e.observation_space("player_0")["observation"].shape == (2402,)


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["random", "heuristic", "pimc:samples=1"])
def test_r11_5_agents_play_legal_and_reward_is_negated_score(spec) -> None:
    """Every agent plays only legal actions (the env raises otherwise); rewards sum to minus the totals (R11)."""
    pimc = spec.startswith("pimc")  # (PIMC's Python rollouts: one deal keeps the test short)
    e = barbu_env.env(rules="king6", mode="deal" if pimc else "match", contract="no_queens" if pimc else None)
    e.reset(seed=4)
    total = agents_env_play(e, spec)
    raw = e.unwrapped
    scores = raw.match.totals if raw.match is not None else raw.deal.scores
    assert [total[a] for a in e.possible_agents] == [-t for t in scores]


@pytest.mark.slow
def test_r11_5_barbu_eval_and_render(tmp_path) -> None:
    from barbu_env.evaluation import main

    s = evaluate(["heuristic", "random"], rules="king6", contracts=["no_queens", "fantan"], boards=1, seed=0)
    assert list(s["contracts"]) == ["no_queens", "fantan"] and s["config"]["seatings"][0] == [0, 1, 1, 1, 1, 1]
    rc = main(["--agents", "heuristic", "random", "--rules", "king6", "--contract", "take_tricks", "--deals", "1",
               "--no-progress", "--out", str(tmp_path)])  # fmt: skip
    assert rc == 0 and "Barbu King" in (tmp_path / "results.md").read_text()
    d = Deal.from_hands(two_pack_hands({0: "KD KD"}), 0, "no_tricks", K6)
    text = render_text(d, hands="all", symbols=False)
    assert "Barbu King (6 players, two packs)" in text and "KD KD" in text
    assert all(f"P{s}  cards 17" in text for s in range(6))


def test_r11_5_adapters_deal_two_packs() -> None:
    """The adapters' deal-mode episodes (``wrappers.common.sample_deal``) hand the env two-pack hands, a card
    held twice listed twice; the SB3 wrapper plays them and its rewards are minus the seat's points."""
    from barbu_env.wrappers.common import sample_deal
    from barbu_env.wrappers.sb3 import BarbuSingleAgentEnv

    opts = sample_deal(np.random.default_rng(0), K6, ["no_queens"])
    assert Counter(c for h in opts["hands"] for c in h) == Counter(COPIES)
    e = BarbuSingleAgentEnv(opponents="heuristic", rules="king6", mode="deal", contracts=["no_queens"], seed=0)
    obs, _ = e.reset()
    rng, total, done = np.random.default_rng(1), 0.0, False
    while not done:
        obs, r, done, _, _ = e.step(int(rng.choice(np.flatnonzero(e.action_masks()))))
        total += r
    assert obs.shape == (2402,) and total == -e.raw.deal.scores[e.seat]


def test_r11_5_batched_engine_and_openspiel_refuse_king6() -> None:
    from barbu_env.vector import check_rules

    with pytest.raises(ValueError, match="not supported by the batched engine"):
        check_rules(K6)
    pyspiel = pytest.importorskip("pyspiel")
    import barbu_env.openspiel  # noqa: F401  (registers python_barbu)

    with pytest.raises(ValueError, match=r"two packs .*R11\.5"):
        pyspiel.load_game("python_barbu(rules=king6)")
