"""Classic Barbu for three or five players (RULES.md R12.1–R12.7).
Seats 0..n-1 clockwise; doubling names offsets (+1 is the seat to the left, R12.2)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import agents_env_play, expected_total
from pettingzoo.test import api_test, seed_test

import barbu_env
from barbu_env import Match, Rules, action_id, action_name, agents, load_rules, observation
from barbu_env.actions import num_actions
from barbu_env.cards import cards_of, format_card
from barbu_env.contracts import contract_table
from barbu_env.engine.deal import Deal, validate_hands
from barbu_env.engine.doubling import settlement
from barbu_env.evaluation import evaluate
from barbu_env.observation import block_of, encode, layout
from barbu_env.vector import check_rules


def names(deal: Deal) -> set[str]:
    return {action_name(a, deal.n) for a in deal.legal_actions()}


def play(deal: Deal, moves: str) -> None:
    for m in moves.split():
        deal.apply(action_id(m, players=deal.n))


@pytest.mark.parametrize(
    ("options", "removed", "hand"),
    [
        ({"players": 3}, {"2D"}, 17),
        ({"players": 5}, {"2C", "2D"}, 10),
        ({"players": 3, "scoring": "basic32"}, {"7C", "7D"}, 10),
        ({"players": 5, "scoring": "basic32"}, {"7C", "7D"}, 6),
    ],
)
def test_r12_1_removed_cards(options: dict, removed: set[str], hand: int) -> None:
    rules = Rules(**options)
    full = Rules(scoring=rules.scoring).deck
    assert {format_card(c) for c in cards_of(full & ~rules.deck)} == removed
    assert rules.hand_size == hand and rules.deck_size == hand * rules.players
    hands = Deal.random(np.random.default_rng(1), 0, None, rules).hands
    assert all(h.bit_count() == hand for h in hands) and sum(hands) == rules.deck


def test_r12_1_a_removed_card_in_a_hand_is_refused() -> None:
    rules = Rules(players=3)
    hands = [cards_of(rules.deck)[17 * s : 17 * s + 17] for s in range(3)]
    hands[0][0] = 13  # 2D
    with pytest.raises(ValueError, match=r"card 2D \(seat 0\) is not in the 51-card deck.*R12\.1"):
        validate_hands(hands, rules)


def test_r12_2_action_layout_by_count() -> None:
    assert num_actions(Rules(players=3)) == 83 and num_actions(Rules(players=5)) == 95 and num_actions(Rules()) == 87
    assert num_actions(Rules(players=5, salad=True, positive=["salad"])) == 96
    three = [action_name(a, players=3) for a in range(79, 83)]
    assert three == ["double:none", "double:+1", "double:+2", "double:+1+2"]
    assert action_name(79 + 9, players=5) == "double:+2+4" and action_id("double:+4+2", players=5) == 88
    assert action_id("double:left+right") == 84  # four players keep R1.3's names and ids
    with pytest.raises(ValueError, match=r"offsets from \+1\.\.\+2"):
        action_id("double:+3", players=3)


@pytest.mark.parametrize(("n", "deals"), [(3, 21), (5, 35)])
def test_r12_3_match_length_and_blocks(n: int, deals: int) -> None:
    m = Match(Rules(players=n), rng=0, first_declarer=1)
    assert m.num_deals == deals
    assert [m.declarer_of(k) for k in range(0, deals, 7)] == [(1 + i) % n for i in range(n)]
    assert Match(Rules(players=n, salad=True), rng=0).num_deals == 8 * n


def test_r12_4_contract_totals() -> None:
    """R12.4's table of classic totals."""
    expect = {
        3: {"no_tricks": -34, "no_hearts": -30, "no_queens": -24, "no_king": -20, "no_last_two": -30,
            "trumps": 85, "fantan": 70},
        5: {"no_tricks": -20, "no_hearts": -30, "no_queens": -24, "no_king": -20, "no_last_two": -30,
            "trumps": 50, "fantan": 60},
    }  # fmt: skip
    for n, totals in expect.items():
        rules = Rules(players=n)
        assert {name: c.total(rules) for name, c in contract_table(rules).items()} == totals
        assert contract_table(rules)["fantan"].fantan_points == (45, 20, 5, -5, -5)[:n]


@pytest.mark.parametrize("n", [3, 5])
def test_r12_4_random_deals_total_the_table(n: int) -> None:
    """Random hands, doubles and play: every contract's scores sum to R12.4's total (E5), settlement is zero-sum."""
    rules = Rules(players=n, salad=True)
    rng = np.random.default_rng(n)
    for name in contract_table(rules):
        text = {"trumps": "trumps:H", "fantan": "fantan:2"}.get(name, name)
        for k in range(4):
            deal = Deal.random(rng, k % n, text, rules)
            while not deal.is_over:
                legal = deal.legal_actions()
                deal.apply(legal[int(rng.integers(len(legal)))])
            assert sum(deal.contract_scores) == expected_total(name, rules), (n, name)
            assert sum(deal.settlement) == 0


def test_r12_5_three_player_fantan_removed_start_card() -> None:
    """Fantan on twos with three players: 2D is out of the pack, so 3D opens diamonds (R12.5); the deal ends
    when two players are out (R7.4) and scores +45 +20 +5 (R12.4)."""
    rules = Rules(players=3, doubling="off")
    hands = [
        "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC 3D 4D 5D 6D",
        "7D 8D 9D TD JD QD KD AD 2H 3H 4H 5H 6H 7H 8H 9H TH",
        "JH QH KH AH 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS",
    ]
    deal = Deal.from_hands([h.split() for h in hands], 0, "fantan:2", rules)
    assert names(deal) == {"2C", "3D"}  # not 4D: 3D must come first
    play(deal, "3D")
    assert names(deal) == {"2H"}  # seat 1: 7D is not next to 3D
    play(deal, "2H 2S 4D 3H 3S 5D 4H 4S 6D 5H 5S")
    assert names(deal) == {"2C"}  # seat 0: its diamonds are out; 7D is seat 1's
    play(deal, "2C 6H 6S 3C 7D 7S 4C 8D 8S 5C 9D 9S 6C TD TS 7C JD JS 8C QD QS 9C KD KS TC AD AS")
    # seat 2 has JH QH KH AH; seat 1 7H 8H 9H TH; seat 0 JC QC KC AC
    play(deal, "JC 7H pass QC 8H pass KC 9H pass AC")
    assert deal.finished[:1] == [0] and not deal.is_over
    play(deal, "TH")
    assert deal.is_over and deal.finished == [0, 1, 2]
    assert deal.contract_scores == [45, 20, 5]


def test_r12_6_five_player_doubling_and_settlement() -> None:
    """Five players, No queens, declarer A=0. B (1) doubles A (+4) and E (+3); C none; D (3) doubles C (+4);
    E none; A may redouble only B (+1) and does. A -6, B -12, C 0, D -6, E 0 (R4: -24):
    pair A-B: k=2, d=6 -> A +12, B -12; pair B-E: k=1, d=12 -> E +12, B -12; pair C-D: k=1, d=6 -> C +6, D -6."""
    scores = [-6, -12, 0, -6, 0]
    doubles = [1 << 1, 1 << 0 | 1 << 4, 0, 1 << 2, 0]
    assert settlement(scores, doubles) == [12, -24, 6, -6, 12]
    rules = Rules(players=5)
    deal = Deal.random(np.random.default_rng(3), 0, "no_queens", rules)
    assert len(names(deal)) == 16  # B may double any subset of the four others (R6.2)
    play(deal, "double:+3+4 double:none double:+4 double:none")
    assert names(deal) == {"double:none", "double:+1"}  # A: only B doubled A (R6.2)
    play(deal, "double:+1")
    assert deal.doubles == doubles
    rng = np.random.default_rng(0)
    while not deal.is_over:
        legal = deal.legal_actions()
        deal.apply(legal[int(rng.integers(len(legal)))])
    s = deal.contract_scores
    pairs = {(0, 1): 2, (1, 4): 1, (2, 3): 1}
    want = [0] * 5
    for (i, j), k in pairs.items():
        want[i] += k * (s[i] - s[j])
        want[j] -= k * (s[i] - s[j])
    assert deal.settlement == want and deal.scores == [a + b for a, b in zip(s, want)]


def test_r12_6_positive_contract_and_split() -> None:
    deal = Deal.random(np.random.default_rng(0), 2, "trumps:S", Rules(players=5))
    assert names(deal) == {"double:none", "double:+4"}  # seat 3: only the declarer (seat 2) in a positive contract
    split = Rules(players=5, undoubled_negative="split")
    deal = Deal.random(np.random.default_rng(0), 1, "no_hearts", split)
    play(deal, "double:none " * 5)
    assert deal.split and deal.contract_scores == [-8, 2, -8, -8, -8]  # floor(-30 / 4) = -8; declarer -30 + 32
    deal = Deal.random(np.random.default_rng(0), 0, "no_tricks", Rules(players=3, undoubled_negative="split"))
    play(deal, "double:none " * 3)
    assert deal.contract_scores == [0, -17, -17]


@pytest.mark.parametrize("n", [3, 5])
def test_r12_6_obligation_over_a_match(n: int) -> None:
    """R6.4 at n seats: after a random match every other player has doubled every declarer twice."""
    rng = np.random.default_rng(n)
    m = Match(Rules(players=n), rng=rng)
    while not m.is_over:
        legal = m.legal_actions()
        m.apply(legal[int(rng.integers(len(legal)))])
    assert len(m.records) == 7 * n and all(m.outstanding(d) == [0] * n for d in range(n))
    for d in range(n):
        for s in range(n):
            if s != d:
                got = sum(1 for r in m.records if r.declarer == d and r.doubles[s] >> d & 1)
                assert got >= 2, (d, s)
    assert m.totals == [sum(r.scores[s] for r in m.records) for s in range(n)]


def test_r12_7_ravage_city_needs_four_players() -> None:
    with pytest.raises(ValueError, match=r"ravage_city=True needs players=4 \(R12\.7\)"):
        Rules(players=5, ravage_city=True)
    with pytest.raises(ValueError, match=r"R12\.7"):
        load_rules("ravage_city", players=3)


@pytest.mark.parametrize("rules", [Rules(players=3), Rules(players=5), load_rules("positive1")])
def test_batched_engine_refuses_the_new_variants(rules: Rules) -> None:
    with pytest.raises(ValueError, match="not supported by the batched engine"):
        check_rules(rules)


# ------------------------------------------------------------------ the env, agents, evaluation (R12 in the env)
def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


@pytest.mark.parametrize("preset", ["classic3", "classic5"])
@pytest.mark.parametrize("mode", ["deal", "match"])
def test_r12_env_api_and_seed(preset: str, mode: str) -> None:
    _quiet(api_test, barbu_env.env(rules=preset, mode=mode), num_cycles=400)
    _quiet(seed_test, lambda: barbu_env.env(rules=preset, mode=mode), num_cycles=400)


@pytest.mark.parametrize(("n", "size", "actions"), [(3, 977, 83), (5, 1489, 95)])
def test_r12_2_env_spaces_and_layout(n: int, size: int, actions: int) -> None:
    """R12.2: n agents, ``num_actions`` ids, the n-seat layout (the sizes the observation docstring gives)."""
    e = barbu_env.env(rules=f"classic{n}")
    e.reset(seed=0)
    assert e.possible_agents == [f"player_{i}" for i in range(n)]
    assert e.action_space("player_0").n == actions and e.unwrapped._mirror is None  # the engine plays (not batched)
    space = e.observation_space("player_0")
    assert space["observation"].shape == (size,) and space["action_mask"].shape == (actions,)
    lay = layout(e.unwrapped.rules)
    assert lay.size == size and f"{size} for {n}" in " ".join(observation.__doc__.split())
    assert lay.blocks["played"][1] == 52 * n and lay.blocks["doubles"][1] == n * n
    assert lay.blocks["remaining"][1] == 11 * n and lay.blocks["trick_no"][1] == max(13, 51 // n)
    assert "positive" not in lay.blocks and "king" not in lay.blocks


def test_r12_6_five_player_doubling_through_the_env() -> None:
    """The doubles of :func:`test_r12_6_five_player_doubling_and_settlement` by name through the env: masks, the
    doubles block seen from seat 1, an illegal double naming the legal ones, rewards = the deal's scores."""
    e = barbu_env.env(rules="classic5", mode="deal", contract="no_queens", declarer=0)
    e.reset(seed=3)
    raw = e.unwrapped
    for name in ("double:+3+4", "double:none", "double:+4", "double:none"):
        mask = e.observe(e.agent_selection)["action_mask"]
        assert mask.shape == (95,) and mask[action_id(name, players=5)] == 1
        assert all(not e.observe(a)["action_mask"].any() for a in e.agents if a != e.agent_selection)
        e.step(action_id(name, players=5))
    assert e.agent_selection == "player_0"
    legal = np.flatnonzero(e.observe("player_0")["action_mask"])
    assert [action_name(int(a), players=5) for a in legal] == ["double:none", "double:+1"]  # R6.2
    with pytest.raises(ValueError, match=r"illegal action 'double:\+2'.*double:none \(79\), double:\+1 \(80\)"):
        e.step(action_id("double:+2", players=5))
    e.step(action_id("double:+1", players=5))
    obs = e.observe("player_1")["observation"]
    doubles = block_of(obs, "doubles", raw.rules).reshape(5, 5)  # [r][t]: seat 1+r doubled seat 1+t
    want = np.zeros((5, 5))
    for s, m in enumerate([1 << 1, 1 << 0 | 1 << 4, 0, 1 << 2, 0]):
        for t in range(5):
            if m >> t & 1:
                want[(s - 1) % 5, (t - 1) % 5] = 1
    assert np.array_equal(doubles, want)
    assert block_of(obs, "declarer", raw.rules).tolist() == [0, 0, 0, 0, 1]  # seat 0 is seat 1's +4
    rng = np.random.default_rng(0)
    total = dict.fromkeys(e.possible_agents, 0.0)
    for ag in e.agent_iter():
        _, r, term, trunc, _ = e.last()
        total[ag] += r
        e.step(None if term or trunc else int(rng.choice(np.flatnonzero(e.observe(ag)["action_mask"]))))
    assert list(total.values()) == raw.deal.scores and sum(raw.deal.settlement) == 0


@pytest.mark.parametrize("n", [3, 5])
def test_r12_observation_is_seat_relative_and_hides_other_hands(n: int) -> None:
    """R1.3 / R12.2 over n seats: each seat sees its own hand and the others at offsets; swapping two other
    seats' hands (of equal size) leaves its observation unchanged; the env's observation is ``encode``'s."""
    rules = Rules(players=n)
    rng = np.random.default_rng(n)
    deal = Deal.random(rng, 1, "no_hearts", rules)
    for _ in range(n):
        deal.apply(action_id("double:none", players=n))
    for step in range(3 * n):
        for seat in range(n):
            obs = encode(deal, seat)
            assert set(np.flatnonzero(block_of(obs, "hand", rules))) == set(cards_of(deal.hands[seat]))
            assert block_of(obs, "to_move", rules)[(deal.to_move - seat) % n] == 1
            a, b = [(seat + k) % n for k in (1, 2)]
            swapped = deal.clone()
            swapped.hands[a], swapped.hands[b] = deal.hands[b], deal.hands[a]
            swapped._legal = None
            if deal.hands[a].bit_count() == deal.hands[b].bit_count():
                assert np.array_equal(encode(swapped, seat), obs), (step, seat)
        legal = deal.legal_actions()
        deal.apply(legal[int(rng.integers(len(legal)))])
    e = barbu_env.env(rules=rules, mode="match")
    e.reset(seed=1)
    for _ in range(40):
        ag = e.agent_selection
        o = e.observe(ag)
        raw = e.unwrapped
        assert np.array_equal(o["observation"], encode(raw.deal, raw.agent_name_mapping[ag], raw.match))
        e.step(int(np.flatnonzero(o["action_mask"])[0]))


@pytest.mark.parametrize(("preset", "spec"), [("classic3", "random"), ("classic3", "heuristic"),
                                             ("classic5", "random"), ("classic5", "heuristic")])  # fmt: skip
def test_r12_agents_play_whole_matches(preset: str, spec: str) -> None:
    """Agents play only legal actions (the env raises otherwise) through a whole match (R12.3: 21 or 35 deals);
    rewards sum to the match totals (R8.3) and every declarer met R6.4."""
    e = barbu_env.env(rules=preset)
    e.reset(seed=2)
    total = agents_env_play(e, spec)
    m = e.unwrapped.match
    assert m.is_over and len(m.records) == 7 * m.n and list(total.values()) == m.totals
    assert all(m.outstanding(d) == [0] * m.n for d in range(m.n))


@pytest.mark.parametrize("preset", ["classic3", "classic5"])
def test_r12_pimc_plays_deals(preset: str) -> None:
    """PIMC (Python rollouts: the batched engine does not cover R12) plays legal cards in every contract."""
    for contract in ("no_last_two", "trumps:D", "fantan:9"):
        e = barbu_env.env(rules=preset, mode="deal", contract=contract)
        e.reset(seed=1)
        players = {a: agents.make("pimc:samples=2", seed=i) for i, a in enumerate(e.possible_agents)}
        for ag in e.agent_iter():
            _, _, term, trunc, _ = e.last()
            e.step(None if term or trunc else players[ag].act(e, ag))
        assert e.unwrapped.deal.is_over


def test_r12_barbu_eval(tmp_path) -> None:
    """barbu-eval on three and five players: each agent holds each seat (3 or 5 seatings), margins are taken from
    the n-seat table mean; the CLI writes its report."""
    from barbu_env.evaluation import main

    s = evaluate(["heuristic", "random"], rules="classic3", contracts=["no_queens", "fantan"], boards=2, seed=0)
    assert s["config"]["seatings"] == [[0, 1, 1], [1, 1, 0], [1, 0, 1]]
    assert list(s["contracts"]) == ["no_queens", "fantan"]
    for name in ("no_queens", "fantan"):  # margins from the 3-seat table mean: heuristic + 2 x random = 0
        row = s["contracts"][name]
        assert row["boards"] == 2
        assert row["agents"]["heuristic"]["mean"] == pytest.approx(-2 * row["agents"]["random"]["mean"])
    rc = main(["--agents", "heuristic", "random", "--rules", "classic5", "--contract", "trumps", "--deals", "2",
               "--no-progress", "--out", str(tmp_path)])  # fmt: skip
    text = (tmp_path / "results.md").read_text()
    assert rc == 0 and "seat i % 5" in text and "'players': 5" in text


@pytest.mark.parametrize("n", [3, 5])
def test_r12_render_shows_n_seats(n: int) -> None:
    e = barbu_env.env(rules=f"classic{n}", mode="deal", contract="no_king", render_mode="ansi")
    e.reset(seed=0)
    text = e.render()
    assert text.splitlines()[0] == f"Barbu, {n} players" and f"P{n - 1}  cards {51 // n}" in text
    assert f"double:+1+{n - 1}" in text.splitlines()[-1]  # the doubling choices named by offsets (R12.2)
    image = barbu_env.env(rules=f"classic{n}", render_mode="rgb_array")
    image.reset(seed=0)
    assert image.render().shape[2] == 3


def test_r12_batched_paths_refuse_and_a_checkpoint_names_its_sizes() -> None:
    """VectorDeals refuses R12 listing what it supports (the env plays R12 on the engine); a four-player
    checkpoint refuses a three-player observation naming both sizes."""
    from barbu_env.vector import VectorDeals

    with pytest.raises(ValueError, match=r"players=3 is not supported by the batched engine.*players=\[4\]"):
        VectorDeals("no_queens", rules="classic3", batch=2)
    e = barbu_env.env(rules="classic3", mode="deal", contract="no_queens", doubling="off")
    e.reset(seed=0)
    net = agents.make("checkpoints/no_queens.pt")
    with pytest.raises(ValueError, match=r"reads 1228 observation entries and 87 actions, these rules have 977 and 83"):
        net.act(e, e.agent_selection)
