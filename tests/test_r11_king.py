"""Barbu King (RULES.md R11): options, contracts, schedule, Domino, 3/5 players, env, agents, barbu-eval.

The reference below (legal cards and deal scores for n seats) is written from R11, not from the engine:
plain sets and lists recomputed from each deal's public history.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import SUIT_HANDS
from pettingzoo.test import api_test, seed_test

import barbu_env
from barbu_env import agents
from barbu_env.actions import FANTAN_BASE, PASS, action_id, action_name
from barbu_env.cards import cards_of, parse_card, parse_cards
from barbu_env.contracts import contract_table
from barbu_env.engine import Deal, Match
from barbu_env.evaluation import evaluate
from barbu_env.observation import OBS_SIZE, block_of, encode, layout
from barbu_env.rules import PRESETS, Rules, load_rules

KING = load_rules("king")
H = 2
KH, AH = parse_card("KH"), parse_card("AH")
QUEENS = set(parse_cards("QC QD QH QS"))
ORDER = ["no_tricks", "no_hearts", "no_queens", "no_king", "salad", "take_tricks", "no_first_last", "fantan"]
#: R11.2 / R11.4 contract totals by number of players (Domino: sum of its places).
TOTALS = {
    4: [65, 65, 80, 80, 290, -65, 80, -10],
    3: [85, 65, 80, 80, 310, -85, 80, 0],
    5: [50, 65, 80, 80, 275, -50, 80, 0],
}
DOMINO = {3: [-40, 0, 40], 4: [-50, -20, 20, 40], 5: [-50, -25, 0, 25, 50]}
PRESET_OF = {3: "king3", 4: "king", 5: "king5"}


# ------------------------------------------------------------------ reference (written from R11)
def ref_tricks(deal: Deal) -> list[list[tuple[int, int]]]:
    n = deal.n
    out: list[list[tuple[int, int]]] = [[]]
    for seat, a in deal.history:
        if 0 <= a < 52:
            if len(out[-1]) == n:
                out.append([])
            out[-1].append((seat, a))
    return out if out[0] else []


def ref_legal(deal: Deal) -> set[int]:
    """R5.1 follow suit, no trumps; R11.2: no heart lead in No hearts, No King, Salad unless only hearts."""
    hand = set(cards_of(deal.hands[deal.current_player]))
    tricks = ref_tricks(deal)
    current = tricks[-1] if tricks and len(tricks[-1]) < deal.n else []
    if not current:
        if deal.contract.name in ("no_hearts", "no_king", "salad"):
            non_hearts = {c for c in hand if c // 13 != H}
            return non_hearts or hand
        return hand
    led = current[0][1] // 13
    follow = {c for c in hand if c // 13 == led}
    return follow or hand


def ref_scores(deal: Deal) -> list[int]:
    """R11.2 / R11.4 scores of a finished King deal, from its history."""
    n = deal.n
    name = deal.contract.name
    out = [0] * n
    if name == "fantan":
        left = [deal.rules.hand_size] * n
        order = []
        for seat, a in deal.history:
            if 0 <= a < 52:
                left[seat] -= 1
                if left[seat] == 0:
                    order.append(seat)
        order += [s for s in range(n) if s not in order]
        for place, seat in enumerate(order):
            out[seat] = DOMINO[n][place]
        return out
    tricks = ref_tricks(deal)
    assert len(tricks) == deal.rules.hand_size  # R11.2: no early ends
    per_trick = {"no_tricks": 5, "salad": 5, "take_tricks": -5}.get(name, 0)
    for i, tr in enumerate(tricks):
        led = tr[0][1] // 13
        w = max((c, s) for s, c in tr if c // 13 == led)[1]
        cs = [c for _, c in tr]
        out[w] += per_trick
        if name in ("no_hearts", "salad"):
            out[w] += 5 * sum(1 for c in cs if c // 13 == H)
        if name in ("no_queens", "salad"):
            out[w] += 20 * sum(1 for c in cs if c in QUEENS)
        if name in ("no_king", "salad") and KH in cs:
            out[w] += 80
        if name == "no_first_last" and i in (0, len(tricks) - 1):
            out[w] += 40
    return out


def play_lowest(deal: Deal) -> None:
    while not deal.is_over:
        deal.apply(deal.legal_actions()[0])


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


# ------------------------------------------------------------------ options (R11, R11.3, R11.4)
def test_presets_are_king_options() -> None:
    for name in ("king", "king_short", "king_choose", "king3", "king5"):
        r = load_rules(name)
        assert r.game == "king" and r.king and r.score_sign == -1 and r.doubling == "off"
        assert load_rules(f"configs/rules/{name}.yaml") == r == Rules(**PRESETS[name])
    assert load_rules("king_short").short and load_rules("king_choose").choose
    assert Rules().score_sign == 1 and not Rules().king


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"players": 6}, "'players'"),  # R12.1: 3, 4 or 5
        ({"players": 7, "game": "king", "doubling": "off"}, "players"),  # R11.4 / R11.5: 3 to 6
        ({"short": True}, "Barbu King option"),
        ({"choose": True}, "Barbu King option"),
        ({"game": "king"}, "doubling"),
        ({"game": "king", "doubling": "off", "salad": True}, "salad"),
        ({"game": "king", "doubling": "off", "scoring": "basic32"}, "scoring"),
        ({"game": "king", "doubling": "off", "ravage_city": True}, "ravage_city"),
        ({"game": "king", "doubling": "off", "schedule": "rotate"}, "choose=True"),
        ({"game": "king", "doubling": "off", "tiebreak": "extra_deals"}, "extra_deals"),
        ({"game": "hearts"}, "game"),
    ],
)
def test_bad_king_options_are_clear_errors(options, words) -> None:
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        Rules(**options)


def test_deck_and_hand_sizes_r11_4() -> None:
    """R11.4: 3 players without 2♣, 17 cards each; 5 players without 2♣ and 2♦, 10 each."""
    r3, r5 = load_rules("king3"), load_rules("king5")
    assert (KING.deck_size, KING.hand_size) == (52, 13)
    assert (r3.deck_size, r3.hand_size) == (51, 17) and not r3.deck >> parse_card("2C") & 1
    assert (r5.deck_size, r5.hand_size) == (50, 10)
    assert not r5.deck & (1 << parse_card("2C") | 1 << parse_card("2D")) and r5.deck >> parse_card("2H") & 1
    d = Deal.random(np.random.default_rng(0), 0, "no_tricks", r3)
    assert len(d.hands) == 3 and all(h.bit_count() == 17 for h in d.hands)
    with pytest.raises(ValueError, match="3 lists"):
        Deal.from_hands(SUIT_HANDS, 0, "no_tricks", r3)


@pytest.mark.parametrize("n", [3, 4, 5])
def test_contract_table_totals(n) -> None:
    """R11.2 / R11.4: the eight contracts in order with their totals; game totals 585 / 615 / 580."""
    rules = load_rules(PRESET_OF[n])
    table = contract_table(rules)
    assert list(table) == ORDER
    assert [c.total(rules) for c in table.values()] == TOTALS[n]
    assert sum(TOTALS[n]) == {3: 615, 4: 585, 5: 580}[n]
    assert list(table["fantan"].fantan_points) == DOMINO[n]
    assert not any(c.end_when_captured for c in table.values())  # R11.2: no early ends
    assert list(contract_table(rules.replace(short=True))) == ORDER[:5]


# ------------------------------------------------------------------ scripted deals (R11.2)
@pytest.mark.parametrize(
    ("contract", "scores"),
    [
        ("no_tricks", [65, 0, 0, 0]),
        ("no_hearts", [65, 0, 0, 0]),
        ("no_queens", [80, 0, 0, 0]),
        ("no_king", [80, 0, 0, 0]),
        ("salad", [290, 0, 0, 0]),
        ("take_tricks", [-65, 0, 0, 0]),
        ("no_first_last", [80, 0, 0, 0]),
    ],
)
def test_one_suit_each_leader_takes_everything(contract, scores) -> None:
    """Each seat holds one suit; seat 0 leads clubs and wins all 13 tricks: it takes every point (R11.2)."""
    d = Deal.from_hands(SUIT_HANDS, 0, contract, KING)
    play_lowest(d)
    assert d.scores == scores and d.trick_no == 13


def test_no_queens_and_no_king_play_all_13_tricks() -> None:
    """R11.2 Decision: no early end once all queens / the K♥ are taken."""
    for contract, first in (("no_queens", "QC QD QH QS"), ("no_king", "2C 2D KH 2S")):
        d = Deal.from_hands(SUIT_HANDS, 0, contract, KING)
        for c in first.split():
            d.apply(action_id(c))
        assert d.trick_no == 1 and not d.is_over
        play_lowest(d)
        assert d.trick_no == 13 and d.scores[0] == 80


def test_hearts_lead_rule_in_king() -> None:
    """R11.2: No hearts, No King and Salad forbid leading a heart while holding another suit."""
    hands = [SUIT_HANDS[2], SUIT_HANDS[1], SUIT_HANDS[0], SUIT_HANDS[3]]
    hands[0] = "2S 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH"
    hands[3] = "2H 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS"
    for contract in ("no_hearts", "no_king", "salad"):
        d = Deal.from_hands(hands, 0, contract, KING)
        assert [action_name(a) for a in d.legal_actions()] == ["2S"]
    d = Deal.from_hands(hands, 0, "no_tricks", KING)
    assert len(d.legal_actions()) == 13


def test_no_first_last_different_winners() -> None:
    """R11.2: +40 for the first trick and +40 for the last, to whoever takes each."""
    hands = [
        "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC 2D",
        "AC 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD",
        "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH",
        "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS",
    ]
    d = Deal.from_hands(hands, 0, "no_first_last", KING)
    # trick 1: 2C AC 2H 2S -> seat 1 wins; seat 1 then leads diamonds and wins every diamond trick;
    # seat 0 ends with 2D... scripted by lowest legal cards, checked against the reference.
    play_lowest(d)
    assert d.scores == ref_scores(d)
    assert d.scores[1] >= 40 and sum(d.scores) == 80


def test_domino_scoring_4_players() -> None:
    """R11.2 Domino: the declarer names the rank (only fantan:* legal) and plays first; each seat holds
    one suit, so they go out in seat order: -50, -20, +20, +40 (total -10)."""
    d = Deal.from_hands(SUIT_HANDS, 0, None, KING, available=("fantan",))
    assert d.legal_actions() == list(range(FANTAN_BASE, FANTAN_BASE + 13))
    d.apply(action_id("declare:fantan:7"))
    assert d.current_player == 0 and [action_name(a) for a in d.legal_actions()] == ["7C"]
    play_lowest(d)
    assert d.finished == [0, 1, 2, 3] and d.scores == [-50, -20, 20, 40]


def test_domino_3_players_without_2c() -> None:
    """R11.4: 3 players, 2♣ removed: the club run stops at 3♣; places score -40 / 0 / +40."""
    rules = load_rules("king3")
    d = Deal.from_hands(
        [
            "3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC 2D 3D 4D 5D 6D",
            "7D 8D 9D TD JD QD KD AD 2H 3H 4H 5H 6H 7H 8H 9H TH",
            "JH QH KH AH 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS",
        ],
        1, None, rules, available=("fantan",),
    )  # fmt: skip
    assert action_id("declare:fantan:2") in d.legal_actions()  # rank 2 exists in three suits
    d.apply(action_id("declare:fantan:3"))
    assert d.current_player == 1
    steps = 0
    while not d.is_over:
        legal = d.legal_actions()
        assert parse_card("2C") not in legal
        d.apply(legal[0])
        steps += 1
    assert sorted(d.scores) == [-40, 0, 40] and d.scores == ref_scores(d)
    assert d.fantan_lo[0] == 1  # clubs run down to 3C only


def test_renege_penalty_is_bad_points_in_king() -> None:
    """R8.2 in King (seed 001): the offender scores +|total| (points are bad), the others 0."""
    d = Deal.from_hands(SUIT_HANDS, 0, "take_tricks", KING)
    d.renege(2)
    assert d.scores == [0, 0, 65, 0]
    d = Deal.random(np.random.default_rng(1), 0, "no_tricks", load_rules("king5"))
    d.renege(4)
    assert d.scores == [0, 0, 0, 0, 50]


# ------------------------------------------------------------------ random play against the reference
@pytest.mark.parametrize("n", [3, 4, 5])
def test_random_matches_follow_the_reference(n) -> None:
    """Random legal play: every legal set equals the reference's, every deal scores as the reference
    and sums to its contract total (R11.2, R11.4); the match totals sum to the game's total."""
    rules = load_rules(PRESET_OF[n])
    for seed in range(3):
        rng = np.random.default_rng(seed)
        m = Match(rules, rng, first_declarer=seed % n)
        while not m.is_over:
            d = m.deal
            if d.phase == 2:
                assert set(d.legal_actions()) == ref_legal(d)
            legal = m.legal_actions()
            a = legal[int(rng.integers(len(legal)))]
            if d.phase == 3 and a == PASS:
                assert not d.legal_card_mask()
            rec = m.apply(a)
            if rec is not None:
                assert list(rec.scores) == ref_scores(d)
        assert [sum(r.scores) for r in m.records] == TOTALS[n]
        assert sum(m.totals) == sum(TOTALS[n])
        assert m.winners == [s for s in range(n) if m.totals[s] == min(m.totals)]


# ------------------------------------------------------------------ schedule (R11.1, R11.3)
def _play_random(m: Match, rng: np.random.Generator) -> None:
    while not m.is_over:
        legal = m.legal_actions()
        m.apply(legal[int(rng.integers(len(legal)))])


@pytest.mark.parametrize("n", [3, 4, 5])
def test_fixed_order_and_dealer_moves_left(n) -> None:
    """R11.1: the eight contracts in order, no declaration except Domino's rank; the player to the dealer's
    left leads, and the dealer moves one seat left each deal."""
    m = Match(load_rules(PRESET_OF[n]), np.random.default_rng(5), first_declarer=1)
    leaders = []
    while not m.is_over:
        d = m.deal
        k = m.deal_no
        assert m.declarer_of(k) == (1 + k) % n and m.dealer_of(k) == (m.declarer_of(k) - 1) % n
        if ORDER[k] == "fantan":
            assert d.phase == 0 and d.current_player == d.declarer
            assert all(FANTAN_BASE <= a < FANTAN_BASE + 13 for a in d.legal_actions())
            assert m.remaining_contracts(0) == ["fantan"]
        else:
            assert d.phase == 2 and d.contract.name == ORDER[k]
        leaders.append(d.current_player)
        legal = m.legal_actions()
        m.apply(legal[0])
        while m.deal_no == k and not m.is_over:
            m.apply(m.legal_actions()[0])
    assert [r.contract.split(":")[0] for r in m.records] == ORDER
    assert leaders == [(1 + k) % n for k in range(8)]
    assert [r.declarer for r in m.records] == leaders


def test_short_game() -> None:
    """R11.3 short: deals 1-5 only (total +580)."""
    m = Match(load_rules("king_short"), np.random.default_rng(0))
    _play_random(m, np.random.default_rng(1))
    assert [r.contract for r in m.records] == ORDER[:5] and sum(m.totals) == 580


@pytest.mark.parametrize(("options", "deals"), [({}, 32), ({"short": True}, 20), ({"schedule": "rotate"}, 32)])
def test_choose_each_contract_once_per_declarer(options, deals) -> None:
    """R11.3 choose: the dealer declares each contract once and leads; blocks or rotate; 32 or 20 deals."""
    rules = load_rules("king_choose", **options)
    m = Match(rules, np.random.default_rng(2), first_declarer=2)
    assert m.num_deals == deals
    rng = np.random.default_rng(3)
    while not m.is_over:
        d = m.deal
        k = m.deal_no
        assert d.phase == 0 and d.declarer == m.dealer_of(k) == m.declarer_of(k)
        if options.get("schedule") == "rotate":
            assert d.declarer == (2 + k) % 4
        else:
            assert d.declarer == (2 + k // (deals // 4)) % 4
        while m.deal_no == k and not m.is_over:
            legal = m.legal_actions()
            m.apply(legal[int(rng.integers(len(legal)))])
        assert m.records[-1].declarer == d.declarer
        first_play = next(s for s, a in d.history if a <= PASS)  # a card, or a Domino pass
        assert first_play == d.declarer  # the Declarante leads / plays first (seed 001)
    per = len(contract_table(rules))
    for s in range(4):
        names = sorted(r.contract.split(":")[0] for r in m.records if r.declarer == s)
        assert names == sorted(contract_table(rules)) and len(names) == per


def test_fixed_order_first_contract_option() -> None:
    with pytest.raises(ValueError, match="not available"):
        Match(KING, 0, contract="no_queens")
    assert Match(KING, 0, contract="no_tricks").deal.contract.name == "no_tricks"


# ------------------------------------------------------------------ observation
def test_classic_layout_unchanged() -> None:
    """The classic layout stays 1228 entries whatever the rule options."""
    assert OBS_SIZE == 1228 and layout(Rules()).size == 1228
    assert layout(load_rules("ravage_city")).size == layout(load_rules("basic32")).size == 1228


@pytest.mark.parametrize("n", [3, 4, 5])
def test_king_observation_blocks(n) -> None:
    rules = load_rules(PRESET_OF[n])
    lay = layout(rules)
    assert "doubles" not in lay.blocks and "trump" not in lay.blocks
    assert lay.size == {3: 951, 4: 1186, 5: 1427}[n]  # the sizes the observation docstring gives
    assert lay.blocks["played"][1] == 52 * n and lay.blocks["trick_no"][1] == max(13, rules.hand_size)
    m = Match(rules, np.random.default_rng(0))
    m.apply(m.legal_actions()[0])
    obs = encode(m.deal, 1, m)
    assert obs.shape == (lay.size,) and obs.dtype == np.float32
    assert block_of(obs, "king", rules).tolist() == [0, 0, 1]
    assert block_of(obs, "contract", rules)[0] == 1  # no_tricks
    hand = block_of(obs, "hand", rules)
    assert set(np.flatnonzero(hand)) == set(cards_of(m.deal.hands[1]))
    trick = block_of(obs, "trick", rules).reshape(n, 52)
    assert trick[(0 - 1) % n].sum() == 1  # seat 0 (relative n-1 for seat 1) led a card
    assert block_of(obs, "remaining", rules).reshape(n, 11).sum(axis=1).tolist() == [8] * n


# ------------------------------------------------------------------ env, agents, evaluation
@pytest.mark.parametrize("rules", ["king", "king3", "king5", "king_choose", "king_short"])
def test_env_api_and_seed(rules) -> None:
    _quiet(api_test, barbu_env.env(rules=rules), num_cycles=300)
    _quiet(seed_test, lambda: barbu_env.env(rules=rules), num_cycles=300)
    _quiet(api_test, barbu_env.env(rules=rules, mode="deal", contract="salad"), num_cycles=100)


@pytest.mark.parametrize(("rules", "spec"), [("king", "heuristic"), ("king3", "random"), ("king5", "heuristic"),
                                             ("king_choose", "heuristic"), ("king", "pimc:samples=2")])  # fmt: skip
def test_agents_play_legal_and_reward_is_negated_score(rules, spec) -> None:
    """Agents play only legal actions (the env raises otherwise); rewards sum to minus the totals (R11)."""
    e = barbu_env.env(rules=rules)
    e.reset(seed=4)
    n = load_rules(rules).players
    assert e.possible_agents == [f"player_{i}" for i in range(n)]
    players = {a: agents.make(spec, seed=i) for i, a in enumerate(e.possible_agents)}
    total = dict.fromkeys(e.possible_agents, 0.0)
    for ag in e.agent_iter():
        _, r, term, trunc, _ = e.last()
        total[ag] += r
        if not (term or trunc):
            a = players[ag].act(e, ag)
            assert e.observe(ag)["action_mask"][a] == 1
            e.step(a)
        else:
            e.step(None)
    m = e.unwrapped.match
    assert m.is_over and [total[a] for a in e.possible_agents] == [-t for t in m.totals]


def test_heuristic_beats_random_on_king() -> None:
    """barbu-eval smoke on King: the heuristic's per-board number (table mean minus its points) is
    positive against random players (deterministic for the seed)."""
    s = evaluate(["heuristic", "random"], rules="king", contracts="all", boards=3, seed=0)
    assert list(s["contracts"]) == ORDER
    assert s["overall"]["heuristic"]["mean"] > 0 > s["overall"]["random"]["mean"]
    s3 = evaluate(["heuristic", "random"], rules="king3", contracts=["no_queens"], boards=2, seed=0)
    assert s3["config"]["seatings"] == [[0, 1, 1], [1, 1, 0], [1, 0, 1]]


def test_barbu_eval_cli_on_king(tmp_path, capsys) -> None:
    from barbu_env.evaluation import main

    rc = main(["--agents", "heuristic", "random", "--rules", "king", "--rule", "players=5", "--contract",
               "take_tricks", "--deals", "2", "--no-progress", "--out", str(tmp_path)])  # fmt: skip
    assert rc == 0 and (tmp_path / "results.md").exists()
    assert "Barbu King" in (tmp_path / "results.md").read_text()


@pytest.mark.parametrize("preset", ["king3", "king5"])
def test_domino_start_card_out_of_the_pack(preset) -> None:
    """R11.4 Decision: Domino from rank 2 without 2♣ (and 2♦): the missing start card counts as on the
    table, so 3♣ is playable at once and the deal always ends."""
    rules = load_rules(preset)
    d = Deal.random(np.random.default_rng(0), 0, "fantan:2", rules)
    assert d.playable >> parse_card("3C") & 1 and not d.playable >> parse_card("2C") & 1
    assert d.playable >> parse_card("2H") & 1
    if preset == "king5":
        assert d.playable >> parse_card("3D") & 1
    rng = np.random.default_rng(1)
    steps = 0
    while not d.is_over:
        legal = d.legal_actions()
        d.apply(legal[int(rng.integers(len(legal)))])
        steps += 1
        assert steps < 2000
    assert sorted(d.scores) == sorted(DOMINO[rules.players]) and d.scores == ref_scores(d)
