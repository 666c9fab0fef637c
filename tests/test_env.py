"""barbu_v0 behaviour: scripted rule scenarios played through the env (card strings), masks equal to the
engine's legal actions, reset options and their errors, rewards, illegal-action modes, render, the
agent-facing accessors (RULES.md R2, R3, R4, R5, R6, R7, R8)."""

from __future__ import annotations

import numpy as np
import pytest

import barbu_env
from barbu_env import action_id, action_name
from barbu_env.engine import InfoState
from barbu_env.observation import encode

#: Every seat holds one whole suit: seat 0 clubs, 1 diamonds, 2 hearts, 3 spades.
SUIT_HANDS = [" ".join(r + s for r in "23456789TJQKA") for s in "CDHS"]


def act(e, *names):
    """Step the env with actions written as text, each by the agent on move."""
    for n in names:
        e.step(action_id(n))


def random_episode(e, rng, check=None):
    """Play random legal moves (from the mask) to the end; returns the summed rewards per agent."""
    total = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        obs, reward, term, trunc, _ = e.last()
        total[agent] += reward
        if term or trunc:
            e.step(None)
            continue
        if check is not None:
            check(e, agent, obs)
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(legal[rng.integers(len(legal))]))
    return total


# ----------------------------------------------------------------------------- scripted scenarios
def test_no_tricks_with_double_and_redouble_scores_and_rewards():
    """R4 No tricks −2 per trick; R6.5 settlement with a double and a redouble; R8.1 rewards."""
    e = barbu_env.env(mode="deal", contract="no_tricks")
    e.reset(options={"hands": SUIT_HANDS, "declarer": 0})
    assert e.agent_selection == "player_1"  # R6.1: left of the declarer first
    act(e, "double:right")  # seat 1 doubles seat 0 (its right, R1.3)
    act(e, "double:none", "double:none")
    assert e.unwrapped.deal.legal_actions() == [action_id("double:none"), action_id("double:left")]  # R6.2
    act(e, "double:left")  # the declarer redoubles seat 1 (R6.3)
    for rank in "23456789TJQKA":  # seat 0 leads clubs; nobody can follow: seat 0 takes 13 tricks
        act(e, rank + "C", rank + "D", rank + "H", rank + "S")
    assert all(e.terminations.values())
    # contract: seat 0 −26; settlement k=2, d=26: seat 0 −52 more, seat 1 +52
    assert e.unwrapped.deal.scores == [-78, 52, 0, 0]
    assert {a: e.rewards[a] for a in e.agents} == {"player_0": -78, "player_1": 52, "player_2": 0, "player_3": 0}


def test_trumps_e1_discard_when_trumps_all_lower():
    """RULES.md E1 (R5.5): C trumps 9♠ on a heart lead; D, holding only lower trumps, may play any card."""
    hands = [
        "AH KH QH JH TH 2C 3C 4C 5C 6C 7C 8C 9C",
        "9S TC JC QC KC AC 2D 3D 4D 5D 6D 7D 8D",
        "2S 3S 7S 9D TD JD QD KD AD 4S 5S 6S 8S",
        "TS JS QS KS AS 2H 3H 4H 5H 6H 7H 8H 9H",
    ]
    e = barbu_env.env(mode="deal", contract="trumps:S", doubling="off")
    e.reset(options={"hands": hands, "declarer": 0})
    act(e, "AH", "9S")  # R5.4 does not bind seat 0 (no trumps); seat 1 is void in hearts: must trump
    obs = e.observe("player_2")
    legal = {action_name(a) for a in np.flatnonzero(obs["action_mask"])}
    # seat 2 holds 2S 3S 4S 5S 6S 7S 8S: all below 9S → any card (E1)
    assert legal == {"2S", "3S", "7S", "9D", "TD", "JD", "QD", "KD", "AD", "4S", "5S", "6S", "8S"}
    act(e, "9D")
    assert all(e.observe(a)["action_mask"].sum() == 0 for a in ("player_0", "player_1", "player_2"))


def test_no_queens_ends_when_fourth_queen_falls_and_fantan_finish_order():
    """R4.2 early end through the env; R7 Fantan scoring by finishing order."""
    e = barbu_env.env(mode="deal", contract="no_queens", doubling="off")
    e.reset(options={"hands": SUIT_HANDS})
    for rank in "23456789TJQ":
        act(e, rank + "C", rank + "D", rank + "H", rank + "S")
    assert all(e.terminations.values())  # 11 tricks played, all four queens taken by seat 0
    assert e.unwrapped.deal.scores == [-24, 0, 0, 0]

    e = barbu_env.env(mode="deal", contract="fantan:2", doubling="off")
    e.reset(options={"hands": SUIT_HANDS})
    act(e, "2C", "2D", "2H", "2S")
    for rank in "3456789TJQK":
        act(e, rank + "C", rank + "D", rank + "H", rank + "S")
    act(e, "AC", "AD", "AH")  # three players out: the deal ends (R7.4)
    assert e.unwrapped.deal.scores == [45, 20, 5, -5]
    assert [e.rewards[a] for a in e.possible_agents] == [45, 20, 5, -5]


def test_declaration_in_deal_mode_and_match_schedule():
    """Deal mode without contract: the declarer chooses (R3); match mode: R2.2 blocks schedule."""
    e = barbu_env.env(mode="deal")
    e.reset(seed=3, options={"declarer": 2})
    assert e.agent_selection == "player_2"
    mask = e.observe("player_2")["action_mask"]
    assert {action_name(a) for a in np.flatnonzero(mask)} == (
        {f"declare:{c}" for c in ("no_tricks", "no_hearts", "no_queens", "no_king", "no_last_two")}
        | {f"declare:trumps:{s}" for s in "CDHS"} | {f"declare:fantan:{r}" for r in "23456789TJQKA"}
    )  # fmt: skip
    act(e, "declare:fantan:9")
    assert e.unwrapped.deal.contract_text == "fantan:9"

    e = barbu_env.env(doubling="off")
    e.reset(seed=0, options={"first_declarer": 1})
    m = e.unwrapped.match
    assert e.agent_selection == "player_1" and m.declarer_of(7) == 2
    act(e, "declare:no_queens")
    rng = np.random.default_rng(0)
    while m.deal_no == 0:  # R3.1: once played, the contract is gone from seat 1's choices
        legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
        e.step(int(legal[rng.integers(len(legal))]))
    assert "no_queens" not in m.remaining_contracts(1)
    assert action_id("declare:no_queens") not in e.unwrapped.deal.legal_actions()


# ----------------------------------------------------------------------------- masks and observations
@pytest.mark.parametrize(
    "kwargs",
    [
        {"mode": "deal"},
        {"mode": "deal", "contract": "fantan:6", "fantan_pass": "free", "ace_plays_again": True},
        {"mode": "deal", "rules": "online", "contract": "no_hearts"},
        {"mode": "deal", "ravage_city": True, "doubling": "declarer_only"},
    ],
)
def test_mask_equals_engine_legal_actions_and_obs_equals_encode(kwargs):
    rng = np.random.default_rng(5)
    e = barbu_env.env(**kwargs)

    def check(e, agent, obs):
        u = e.unwrapped
        seat = u.agent_name_mapping[agent]
        assert seat == u.deal.current_player
        assert np.flatnonzero(obs["action_mask"]).tolist() == u.deal.legal_actions()
        assert obs["action_mask"].dtype == np.int8 and obs["observation"].dtype == np.float32
        for other in range(4):
            o = e.observe(f"player_{other}")
            assert np.array_equal(o["observation"], encode(u.deal, other, u.match))
            if other != seat:
                assert not o["action_mask"].any()  # all zero off move
        assert np.array_equal(obs["observation"], encode(u.deal, seat, u.match))

    for seed in range(6):
        e.reset(seed=seed)
        random_episode(e, rng, check)


def test_mask_and_obs_in_match_mode():
    rng = np.random.default_rng(9)
    e = barbu_env.env(mode="match", ravage_city=True)
    e.reset(seed=1)
    steps = 0
    for agent in e.agent_iter(400):  # a few deals: obligations, totals and contracts left change
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
            continue
        u = e.unwrapped
        assert np.flatnonzero(obs["action_mask"]).tolist() == u.match.legal_actions()
        assert np.array_equal(obs["observation"], encode(u.deal, u.agent_name_mapping[agent], u.match))
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(legal[rng.integers(len(legal))]))
        steps += 1
    assert e.unwrapped.match.deal_no >= 4


def test_observation_arrays_are_not_mutated_later():
    e = barbu_env.env(mode="deal", contract="no_hearts")
    e.reset(seed=0)
    first = e.observe(e.agent_selection)
    again = e.observe(e.agent_selection)
    kept = first["observation"].copy(), first["action_mask"].copy()
    again["observation"][:] = 7  # a user scribbling on an observation does not affect others
    act(e, "double:none")
    assert np.array_equal(first["observation"], kept[0]) and np.array_equal(first["action_mask"], kept[1])


@pytest.mark.parametrize("contract", ["no_queens", "trumps:H", "fantan:7"])
def test_observations_kept_through_a_deal_stay_unchanged(contract):
    """Arrays handed out at every step (each agent's, on move or not) keep their values until the deal ends,
    though the env updates its own buffers in place."""
    e = barbu_env.raw_env(mode="deal", contract=contract)
    e.reset(seed=3)
    kept = []
    for _agent in e.agent_iter():
        for other in e.agents:
            o = e.observe(other)
            kept.append((o, {k: v.copy() for k, v in o.items()}))
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    assert len(kept) > 200
    for o, copy in kept:
        assert all(np.array_equal(o[k], copy[k]) for k in copy)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"mode": "match", "illegal_action": "renege"},
        {"mode": "deal", "contract": "fantan:9", "illegal_action": "renege", "fantan_pass": "forced"},
        {"mode": "deal", "rules": "basic32", "illegal_action": "terminate"},
        {"mode": "match", "rules": "king"},
        {"mode": "deal", "rules": "king3"},
    ],
)
def test_observations_equal_encode_when_agents_look_now_and_then(kwargs):
    """Observations are kept up to date between looks: each agent observes at its own random rate (some
    steps nobody looks, some several times), illegal moves included (R8.2 renege, terminate), and every
    observation equals ``encode`` of the state it was taken in, for classic and Barbu King (R11) layouts."""
    rng = np.random.default_rng(21)
    e = barbu_env.env(**kwargs)
    for seed in range(3):
        e.reset(seed=seed)
        rates = rng.random(len(e.possible_agents))
        for agent in e.agent_iter(600):
            u = e.unwrapped
            for other in e.possible_agents:
                for _ in range(int(rng.random() < rates[u.agent_name_mapping[other]]) * 2):
                    o = e.observe(other)["observation"]
                    assert np.array_equal(o, encode(u.deal, u.agent_name_mapping[other], u.match)), other
            obs, _, term, trunc, _ = e.last()
            assert np.array_equal(obs["observation"], encode(u.deal, u.agent_name_mapping[agent], u.match))
            if term or trunc:
                e.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            if u.illegal_action != "raise" and rng.random() < 0.02 and u.deal.phase in (2, 3):  # now and then
                e.step(int(np.flatnonzero(obs["action_mask"][:52] == 0)[0]))
            else:
                e.step(int(legal[rng.integers(len(legal))]))


def test_wrappers_see_the_raw_env_attributes_also_after_copies():
    """env()'s wrappers (PettingZoo's own) read the AEC attributes the raw env mirrors into them: they stay
    equal to the raw env's through steps, dead steps, resets, deepcopy and pickle; before reset the
    OrderEnforcingWrapper still refuses them."""
    import copy
    import pickle

    from pettingzoo.utils import wrappers

    e = barbu_env.env(mode="deal", contract="no_queens")
    assert isinstance(e, wrappers.OrderEnforcingWrapper) and isinstance(e.env, wrappers.AssertOutOfBoundsWrapper)
    with pytest.raises(AttributeError, match="before reset"):
        _ = e.agent_selection
    e.unwrapped.reset(seed=0)  # reset behind the wrappers' back: the outer one still says "not reset"
    with pytest.raises(AttributeError, match="before reset"):
        _ = e.agents
    names = ("agents", "agent_selection", "rewards", "_cumulative_rewards", "terminations", "truncations", "infos")

    def same(env):
        u = env.unwrapped
        for w in (env, env.env):
            for name in names:
                assert getattr(w, name) is getattr(u, name) or getattr(w, name) == getattr(u, name), name

    rng = np.random.default_rng(0)
    e.reset(seed=1)
    same(e)
    copies = []
    for _agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        same(e)
        if term or trunc:
            e.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(legal[rng.integers(len(legal))]))
        if len(copies) < 2 and e.unwrapped.deal.trick_no == 3 + 3 * len(copies):
            copies.append(copy.deepcopy(e) if not copies else pickle.loads(pickle.dumps(e)))
    assert e.agents == [] and e.unwrapped.agents == []
    for c in copies:  # an independent env that plays on by itself, its wrappers in step with it
        before = e.unwrapped.deal.played
        same(c)
        random_episode(c, rng, lambda env, agent, obs: same(env))
        same(c)
        assert c.unwrapped.deal.is_over and e.unwrapped.deal.played == before
    e.reset(seed=2)
    same(e)
    assert e.env.action_space("player_0").contains(86) and not e.env.action_space("player_0").contains(87)
    assert e.env.action_space("player_0").contains(np.int64(3)) and not e.env.action_space("player_0").contains(-1)


# ----------------------------------------------------------------------------- rewards
def test_reward_sums_equal_match_totals_with_scale():
    rng = np.random.default_rng(2)
    e = barbu_env.env(mode="match", reward_scale=0.5, rules="basic32")
    e.reset(seed=4)
    total = random_episode(e, rng)
    m = e.unwrapped.match
    assert m.is_over and len(m.records) >= m.num_deals
    assert [total[a] for a in e.possible_agents] == pytest.approx([0.5 * t for t in m.totals])
    assert sum(m.totals) == pytest.approx(sum(sum(r.scores) for r in m.records))


def test_reward_sums_equal_deal_scores():
    rng = np.random.default_rng(8)
    e = barbu_env.env(mode="deal")
    for seed in range(5):
        e.reset(seed=seed)
        total = random_episode(e, rng)
        assert [total[a] for a in e.possible_agents] == e.unwrapped.deal.scores


# ----------------------------------------------------------------------------- reset options
def test_reset_seed_reproducible_and_stream_continues():
    e = barbu_env.env(mode="deal", contract="no_tricks")
    e.reset(seed=42)
    h1 = list(e.unwrapped.deal.hands)
    e.reset()
    h2 = list(e.unwrapped.deal.hands)
    e.reset(seed=42)
    assert e.unwrapped.deal.hands == h1 and h2 != h1
    e2 = barbu_env.raw_env(mode="deal", contract="no_tricks")
    e2.reset(seed=42)
    assert e2.deal.hands == h1


def test_reset_options_hands_ids_declarer_contract():
    e = barbu_env.env(mode="deal")
    ids = [barbu_env.parse_cards(h) for h in SUIT_HANDS]
    e.reset(options={"hands": ids, "declarer": 3, "contract": "trumps:H"})
    d = e.unwrapped.deal
    assert d.declarer == 3 and d.contract_text == "trumps:H" and d.hands[2] == sum(1 << c for c in ids[2])
    e = barbu_env.env(mode="match", doubling="off")
    e.reset(options={"hands": SUIT_HANDS, "declarer": 2, "contract": "no_king"})
    d = e.unwrapped.deal
    assert d.declarer == 2 and d.contract_text == "no_king" and e.agent_selection == "player_2"
    e.reset(seed=1, options={"first_declarer": "random"})
    assert e.unwrapped.match.first_declarer in range(4)


@pytest.mark.parametrize(
    "mode, options, message",
    [
        ("deal", {"hands": SUIT_HANDS[:3]}, "4 lists"),
        ("deal", {"hands": [*SUIT_HANDS[:3], "2C 3C"]}, "has 2 cards"),
        ("deal", {"hands": [SUIT_HANDS[0]] * 4}, "dealt twice"),
        ("deal", {"hands": [*SUIT_HANDS[:3], "XX " * 13]}, "bad card"),
        ("deal", {"declarer": 4}, "seat 0..3"),
        ("deal", {"declarer": True}, "seat 0..3"),
        ("deal", {"contract": "no_foo"}, "unknown contract"),
        ("deal", {"contract": "ravage_city"}, "not played under these rules"),
        ("deal", {"first_declarer": 1}, "match-mode"),
        ("match", {"declarer": 1, "first_declarer": 2}, "disagree"),
        ("match", {"hands": [*SUIT_HANDS[:3], "2C"]}, "has 1 cards"),
    ],
)
def test_reset_option_errors(mode, options, message):
    e = barbu_env.env(mode=mode)
    with pytest.raises(ValueError, match=message):
        e.reset(options=options)


def test_unknown_reset_option_warns():
    e = barbu_env.env(mode="deal")
    with pytest.warns(UserWarning, match="hand"):
        e.reset(options={"hand": SUIT_HANDS})


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"colour": "red"}, "valid are the env options"),
        ({"mode": "tournament"}, "bad mode"),
        ({"contract": "no_queens"}, "mode='deal'"),
        ({"mode": "deal", "contract": "trumps:X"}, "unknown contract"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"doubling": "sometimes"}, "doubling"),
        ({"rules": "no_such_preset"}, "unknown rules"),
        ({"reward_scale": float("nan")}, "reward_scale"),
        ({"render_mode": "rgb"}, r"expected None or one of \('ansi', 'human', 'rgb_array'\)"),
    ],
)
def test_constructor_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        barbu_env.env(**kwargs)


def test_rule_options_reach_the_engine():
    e = barbu_env.env(mode="deal", rules="basic32", doubling="off", contract="no_tricks")
    e.reset(seed=0)
    u = e.unwrapped
    assert u.rules.scoring == "basic32" and u.rules.doubling == "off"
    assert u.deal.hands[0].bit_count() == 8 and u.deal.phase == barbu_env.Phase.PLAY


# ----------------------------------------------------------------------------- illegal actions
def test_illegal_raise_names_legal_actions_and_keeps_state():
    e = barbu_env.env(mode="deal", contract="no_tricks", doubling="off")
    e.reset(options={"hands": SUIT_HANDS})
    with pytest.raises(ValueError, match="legal actions are 2C"):
        e.step(action_id("2D"))  # seat 0 does not hold 2D
    assert e.agent_selection == "player_0" and e.unwrapped.deal.played == 0
    raw = barbu_env.raw_env(mode="deal", contract="no_tricks", doubling="off")
    raw.reset(options={"hands": SUIT_HANDS})
    with pytest.raises(ValueError, match="expected an int"):
        raw.step("2C")


def test_illegal_renege_penalty_deal_and_match():
    """R8.2: the offender loses the absolute contract total; no one else scores; the deal ends."""
    e = barbu_env.env(mode="deal", contract="no_hearts", illegal_action="renege")
    e.reset(options={"hands": SUIT_HANDS})
    act(e, "double:left", "double:none", "double:none", "double:none")
    act(e, "2C")
    act(e, "3C")  # seat 1 holds only diamonds: 3C is a renege
    assert all(e.terminations.values())
    assert [e.rewards[a] for a in e.possible_agents] == [0, -30, 0, 0]  # doubles are not settled

    e = barbu_env.env(mode="match", illegal_action="renege", doubling="off")
    e.reset(options={"hands": SUIT_HANDS, "contract": "trumps:C"})
    act(e, "2C", "2H")  # seat 1 holds diamonds only: 2H is not in its hand
    m = e.unwrapped.match
    assert m.deal_no == 1 and m.totals == [0, -65, 0, 0] and not any(e.terminations.values())
    assert e.rewards["player_1"] == -65
    with pytest.raises(ValueError, match="legal actions"):  # no R8.2 penalty for a bad declaration
        e.step(action_id("2C"))


def test_illegal_renege_in_fantan_is_a_pass():
    """R8.2: in Fantan an unplayable card is taken back and the player passes (the pass proves nothing)."""
    e = barbu_env.env(mode="deal", contract="fantan:5", doubling="off", illegal_action="renege")
    e.reset(options={"hands": SUIT_HANDS})
    act(e, "5C", "9D")  # seat 1 could play 5D; 9D is unplayable: it counts as a pass
    d = e.unwrapped.deal
    assert d.passes == [0, 1, 0, 0] and e.agent_selection == "player_2" and not d.is_over
    assert d.excluded[1] == 0 and d.hands[1].bit_count() == 13


def test_illegal_terminate():
    e = barbu_env.env(mode="match", illegal_action="terminate", reward_scale=2.0)
    e.reset(seed=0)
    e.step(action_id("AS"))  # a card during the declaration
    assert all(e.terminations.values())
    assert e.rewards == {"player_0": -200.0, "player_1": 0.0, "player_2": 0.0, "player_3": 0.0}
    obs, reward, term, _, _ = e.last()
    assert term and reward == -200.0 and not obs["action_mask"].any()
    for _agent in e.agent_iter():
        e.step(None)
    assert e.agents == []


# ----------------------------------------------------------------------------- render and accessors
def test_render_ansi_and_human(capsys):
    e = barbu_env.env(mode="deal", contract="trumps:S", render_mode="ansi", doubling="off")
    e.reset(options={"hands": SUIT_HANDS})
    text = e.render()
    assert "trumps:S" in text and "A♣" in text and "A♦" not in text  # only the hand of the seat on move
    e = barbu_env.env(mode="match", render_mode="ansi", render_hands="all")
    e.reset(seed=0)
    text = e.render()
    assert "deal 1/28" in text and all(s in text for s in "♣♦♥♠") and "declare:no_tricks" in text
    e = barbu_env.env(mode="deal", contract="no_tricks", render_mode="human", doubling="off")
    e.reset(options={"hands": SUIT_HANDS})
    e.step(action_id("2C"))
    assert "trick 1: P0:2♣" in capsys.readouterr().out


def test_accessors_for_agents():
    e = barbu_env.env(mode="deal", contract="no_king")
    e.reset(seed=0)
    u = e.unwrapped
    assert u.match is None and u.rules == barbu_env.Rules()
    info = u.information_state("player_2")
    assert isinstance(info, InfoState) and info.seat == 2 and info.hand == u.deal.hands[2]
    assert info.view.hands[1] == 0 and info.contract == "no_king"  # no other seat's cards
    e = barbu_env.env()
    e.reset(seed=0)
    assert e.unwrapped.match is not None and e.unwrapped.deal is e.unwrapped.match.deal


def _obs_bytes(e) -> bytes:
    return e.observe(e.agent_selection)["observation"].tobytes()


@pytest.mark.parametrize("mode", ["deal", "match"])
@pytest.mark.parametrize(
    "bad",
    [{"declarer": "random", "contract": "no_such_contract"}, {"declarer": 9}, {"hands": [["AS"], ["KS"], [], []]}],
)
def test_a_failing_reset_changes_nothing(mode, bad):
    """A reset that raises leaves the RNG and the episode in progress as they were: the episode plays on, and
    the next bare reset deals what it would have dealt without the failing call (issue 15, item 8)."""
    a, b = barbu_env.raw_env(mode=mode), barbu_env.raw_env(mode=mode)
    for e in (a, b):
        e.reset(seed=1)
        for _ in range(5):
            e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[-1]))
    with pytest.raises(ValueError):
        a.reset(seed=77, options=bad)
    assert a.agent_selection == b.agent_selection and _obs_bytes(a) == _obs_bytes(b)
    for e in (a, b):
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
        e.reset()
    assert a.agent_selection == b.agent_selection and _obs_bytes(a) == _obs_bytes(b)
    c = barbu_env.raw_env(mode=mode)
    c.reset(seed=77)
    assert _obs_bytes(a) != _obs_bytes(c)


def test_a_failing_first_reset_through_env_is_no_reset():
    """env(): after a first reset that raises, the wrappers still say the env was not reset; a good reset then
    plays (issue 15, item 8)."""
    e = barbu_env.env(mode="deal")
    with pytest.raises(ValueError):
        e.reset(seed=77, options={"declarer": 9})
    with pytest.raises(AttributeError, match="before reset"):
        _ = e.agent_selection
    e.reset(seed=77)
    obs, *_ = e.last()
    e.step(int(np.flatnonzero(obs["action_mask"])[0]))


def _pettingzoo_wrapped(**kwargs):
    """The raw env in PettingZoo's own ``OrderEnforcingWrapper`` and ``AssertOutOfBoundsWrapper``: the reference
    for ``env()``'s ``last``, ``agent_iter`` and ``step``, which read the raw env directly."""
    from pettingzoo.utils import wrappers

    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(barbu_env.raw_env(**kwargs)))


def _outcome(call, *args):
    """What ``call(*args)`` gives: ("ok", its value) or (exception type, message)."""
    try:
        return "ok", call(*args)
    except Exception as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("kwargs", [{"mode": "deal"}, {"mode": "match", "players": 3}, {"rules": "king"}])
def test_wrapped_env_steps_as_pettingzoos_own_wrappers(kwargs, caplog):
    """``env()``'s outer wrapper reads ``last()``, ``agent_iter()`` and ``step()``'s checks on the raw env: every
    value along seeded random episodes and every refusal (before reset, ``agent_iter`` without a step, a step once
    the episode is over, an action out of bounds) is PettingZoo's own wrappers' (R3-R9 play through both)."""
    from pettingzoo.utils.env import AECEnv

    ours, ref = barbu_env.env(**kwargs), _pettingzoo_wrapped(**kwargs)
    for call in (lambda e: e.last(), lambda e: e.agent_iter(), lambda e: e.step(0)):
        assert _outcome(call, ours) == _outcome(call, ref)
    rng = np.random.default_rng(0)
    steps = 0
    for seed in range(2):
        ours.reset(seed=seed)
        ref.reset(seed=seed)
        for agent, other in zip(ours.agent_iter(), ref.agent_iter(), strict=True):
            assert agent == other
            got, want = ours.last(), AECEnv.last(ref)
            assert got[0]["observation"].tobytes() == want[0]["observation"].tobytes()
            assert got[0]["action_mask"].tobytes() == want[0]["action_mask"].tobytes() and got[1:] == want[1:]
            assert ours.last(observe=False)[0] is None
            if got[2] or got[3]:
                ours.step(None)
                ref.step(None)
                continue
            legal = np.flatnonzero(got[0]["action_mask"])
            a = int(legal[rng.integers(len(legal))])
            if steps == 5:  # out of bounds: AssertOutOfBoundsWrapper's refusal, nothing changed
                assert _outcome(ours.step, 10_000) == _outcome(ref.step, 10_000)
            ours.step(a)
            ref.step(a)
            steps += 1
        logged = []
        for e in (ours, ref):  # PettingZoo logs its warning
            caplog.clear()
            e.step(0)
            logged.append([r.getMessage() for r in caplog.records])
        assert logged[0] == logged[1] != []
    ours.reset(seed=9)
    ref.reset(seed=9)
    it, it_ref = iter(ours.agent_iter()), iter(ref.agent_iter())
    assert next(it) == next(it_ref)
    assert _outcome(next, it) == _outcome(next, it_ref)  # no step in between
    assert steps > 100
