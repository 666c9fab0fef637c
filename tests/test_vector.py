"""The batched engine (``barbu_env.vector``) against the reference engine, step by step.

Differential tests: B games run in ``VectorDeals`` and, side by side, B reference ``Deal`` objects built
from the same hands and declarer; every step the seat on move, the action mask (``Deal.legal_actions``),
the observation (``observation.encode``), the rewards (``Deal.scores``, R8.1) and the deal ends must be
identical. Random legal actions drive both; every contract is played under each rule option that matters
in deal mode (R4.1, R4.4, R5.4, R5.5, R6.6, R6.7, R7.3, R7.5, R9, R10), through ``observe`` (float32
rows, of the seat on move and of another seat) and ``observe_packed`` (bits + numeric part, unpacked).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from barbu_env.actions import NUM_ACTIONS, action_id
from barbu_env.cards import parse_cards
from barbu_env.engine.deal import OVER, Deal
from barbu_env.observation import OBS_SIZE, encode
from barbu_env.rules import Rules, load_rules
from barbu_env.vector import BACKENDS, VectorDeals, random_actions, unpack_observations

# numba's OpenMP workers (test_numba_threads) busy-wait by default, which stalls on shared CI cores; read
# when numba starts its thread pool, i.e. at the first parallel kernel of this process
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

TRICK_CONTRACTS = ["no_tricks", "no_hearts", "no_queens", "no_king", "no_last_two"]
#: Per game, round-robin: full declaration, each contract with its parameter chosen by the declarer.
SPECS = [None, *TRICK_CONTRACTS, "trumps", "fantan"]


def reference(v: VectorDeals, g: int, spec: str | None) -> Deal:
    """The reference deal of game ``g``, from its hands and declarer."""
    hands = [int(h) for h in v.state.hands[g]]
    declarer = int(v.state.declarer[g])
    if spec in ("trumps", "fantan"):
        return Deal.from_hands(hands, declarer, None, v.rules, available=(spec,))
    return Deal.from_hands(hands, declarer, spec, v.rules)


def ref_mask(deal: Deal) -> np.ndarray:
    m = np.zeros(NUM_ACTIONS, np.int8)
    m[deal.legal_actions()] = 1
    return m


def run_differential(rules: Rules, specs: list, batch: int, steps: int, seed: int, packed: bool = False) -> int:
    """Play ``steps`` batched steps, checking every game against its reference; returns deals finished.
    ``packed``: the observations of the seats on move come from ``observe_packed`` (unpacked) instead."""
    v = VectorDeals(specs, rules, batch=batch, seed=seed)
    v.reset()
    spec_of = [specs[g % len(specs)] for g in range(batch)]
    refs = [reference(v, g, spec_of[g]) for g in range(batch)]
    rng = np.random.default_rng(seed)
    finished = 0
    for step in range(steps):
        other = step % 5 == 4  # now and then observe the next seat instead of the one on move
        seats = (v.seat + 1) % 4 if other else None
        if packed and not other:
            bits, numeric, mask, seat = v.observe_packed()
            obs = unpack_observations(bits, numeric)
        else:
            obs, mask, seat = v.observe(seats)
        want_seat = np.array([d.current_player for d in refs])
        np.testing.assert_array_equal(seat, want_seat)
        obs_seats = want_seat if seats is None else seats
        want_obs = np.stack([encode(d, int(s)) for d, s in zip(refs, obs_seats)])
        bad = np.flatnonzero((obs != want_obs).any(axis=1))
        if bad.size:
            wrong = np.flatnonzero(obs[bad[0]] != want_obs[bad[0]])
            raise AssertionError(f"step {step} game {bad[0]}: observation entries {wrong} differ")
        if not other:
            want_mask = np.stack([ref_mask(d) for d in refs])
            np.testing.assert_array_equal(mask, want_mask, err_msg=f"step {step}")
        else:
            assert not mask.any()  # seats not on move get a zero mask
            mask = v.action_masks()
        actions = random_actions(mask, rng)
        rewards, done = v.step(actions)
        for g, d in enumerate(refs):
            d.apply(int(actions[g]))
            assert done[g] == (d.phase == OVER), f"step {step} game {g}: done"
            if done[g]:
                np.testing.assert_array_equal(rewards[g], d.scores, err_msg=f"step {step} game {g}")
                refs[g] = reference(v, g, spec_of[g])
                finished += 1
            else:
                assert not rewards[g].any()
            np.testing.assert_array_equal(v.state.hands[g], refs[g].hands, err_msg=f"step {step} game {g}: hands")
    return finished


def test_classic_every_contract():
    """Classic rules (R3-R8): declaration, doubling, all seven contracts; thousands of deals."""
    assert run_differential(Rules(), SPECS, batch=320, steps=480, seed=1) > 2000


OPTIONS = [
    pytest.param({"hearts_lead": "until_broken", "king_discard": "forced"}, id="R4.1-until_broken+R4.4-forced"),
    pytest.param({"hearts_lead": "free", "trump_lead": "free", "overtrump": "yes"}, id="R4.1-free+R5.4-free+R5.5-over"),
    pytest.param({"overtrump": "yes", "king_discard": "forced"}, id="R5.5-overtrump+R4.4"),
    pytest.param({"fantan_pass": "free", "ace_plays_again": True}, id="R7.3-free+R7.5"),
    pytest.param({"doubling": "declarer_only", "undoubled_negative": "split"}, id="R6.7-declarer_only+R6.6-split"),
    pytest.param({"doubling": "off"}, id="R6.7-off"),
    pytest.param({"scoring": "basic52"}, id="R10-basic52"),
    pytest.param({"scoring": "basic32", "ravage_city": True}, id="R10-basic32+R9"),
    pytest.param({"ravage_city": True, "salad": True}, id="R9+R10.2-salad"),
    pytest.param("online", id="online-preset"),
]


def option_rules(options: dict | str) -> tuple[Rules, list]:
    """The rules of an ``OPTIONS`` entry and the contract specs to play under them."""
    rules = load_rules(options) if isinstance(options, str) else Rules(**options)
    return rules, SPECS + [c for c in ("ravage_city", "salad") if getattr(rules, c)]


@pytest.mark.parametrize("options", OPTIONS)
def test_rule_options(options):
    rules, specs = option_rules(options)
    assert run_differential(rules, specs, batch=96, steps=240, seed=7) > 200


def test_fixed_contracts_with_parameters():
    """``trumps:S`` / ``fantan:7`` skip the declaration, as ``env(contract=...)`` does."""
    specs = ["trumps:S", "fantan:7", "no_king", "trumps:H", "fantan:A"]
    assert run_differential(Rules(), specs, 80, 160, 3) > 100


@pytest.mark.parametrize("options", [{}, *OPTIONS])
def test_packed_observations_equal_reference(options):
    """``observe_packed`` (unpacked) of the seats on move against ``encode`` of the reference deals, with the
    masks, rewards and hands, under every rule option."""
    rules, specs = option_rules(options)
    assert run_differential(rules, specs, batch=128, steps=300, seed=11, packed=True) > 300


def test_backend_names():
    """``backend``: ``"auto"`` or ``"numba"`` (the compiled kernels); other names fail, naming the valid ones."""
    assert BACKENDS == ("auto", "numba")
    for name in BACKENDS:
        assert VectorDeals("no_queens", backend=name).backend.name == "numba"
    for bad in ("numpy", "torch"):
        with pytest.raises(ValueError, match=rf"unknown backend '{bad}': valid are \['auto', 'numba'\]"):
            VectorDeals("no_queens", backend=bad)
        with pytest.raises(ValueError, match=rf"unknown backend '{bad}'"):
            random_actions(np.ones((2, 5), np.int8), np.random.default_rng(0), bad)
    with pytest.raises(ValueError, match="bad threads"):
        VectorDeals("no_queens", threads=0)


def test_numba_not_imported_by_package():
    """numba is imported when kernels are first needed, never by ``import barbu_env(.vector)``."""
    code = "import sys, barbu_env, barbu_env.vector; assert 'numba' not in sys.modules, 'numba imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_numba_threads():
    """``threads`` sets the kernels' thread count; results do not depend on it."""
    import numba

    many = numba.config.NUMBA_NUM_THREADS
    one = VectorDeals(SPECS, Rules(), batch=64, seed=5)
    assert one.backend.num_threads() == 1
    other = VectorDeals(SPECS, Rules(), batch=64, seed=5, threads=many)
    assert other.backend.num_threads() == many
    with pytest.raises(ValueError, match="exceeds NUMBA_NUM_THREADS"):
        VectorDeals(SPECS, Rules(), batch=64, threads=many + 1)
    for v in (one, other):
        v.reset()
    rng = np.random.default_rng(0)
    for _ in range(120):
        for x, y in zip(one.observe(), other.observe()):
            np.testing.assert_array_equal(x, y)
        actions = random_actions(one.mask, rng)
        for x, y in zip(one.step(actions), other.step(actions)):
            np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(one.state.data, other.state.data)


def test_scripted_trump_lead_e2():
    """E2 / R5.4: a declarer holding trumps must lead one; R5.5: a void follower must trump."""
    hands = [
        "AS KS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH",
        "2S 3S AC KC QC JC TC 9C 8C 7C 6C 5C 4C",
        "3C 2C AD KD QD JD TD 9D 8D 7D 6D 5D 4D",
        "4S 5S 6S 7S 8S 9S TS JS QS KH AH 2D 3D",
    ]
    v = VectorDeals("trumps:S", Rules(doubling="off"), batch=2, seed=0)
    v.reset_games([0, 1], hands=[hands, hands], declarer=[0, 1])
    _, mask, seat = v.observe()
    assert list(seat) == [0, 1]
    assert sorted(np.flatnonzero(mask[0])) == parse_cards("KS AS")  # R5.4
    assert sorted(np.flatnonzero(mask[1])) == parse_cards("2S 3S")
    v.step(np.array([action_id("AS"), action_id("2S")]))
    _, mask, seat = v.observe()
    assert list(seat) == [1, 2]
    assert sorted(np.flatnonzero(mask[0])) == parse_cards("2S 3S")  # R5.1: follow the trump lead
    held = v.state.hands[1, 2] >> np.arange(52, dtype=np.uint64) & np.uint64(1)
    assert sorted(np.flatnonzero(mask[1])) == sorted(np.flatnonzero(held))  # void in spades, no trump: any card (R5.1)


def test_boards_queue_and_duplicate():
    """A board queue is dealt in order; games go inactive once it is used up."""
    rng = np.random.default_rng(5)
    src = VectorDeals("no_queens", Rules(doubling="off"), batch=3, seed=9)
    src.reset()
    hands = src.state.hands.copy()
    v = VectorDeals("no_queens", Rules(doubling="off"), batch=2, seed=0, boards=(hands, [0, 1, 2]))
    v.reset()
    assert list(v.board_of) == [0, 1]
    np.testing.assert_array_equal(v.state.hands, hands[:2])
    ended = []
    while not v.finished:
        _, mask, seat = v.observe()
        assert ((seat >= 0) == v.active).all()
        before = v.board_of.copy()
        _, done = v.step(random_actions(mask, rng))
        ended += list(before[done])
    assert sorted(ended) == [0, 1, 2]
    assert (v.seat == -1).all() and not v.observe()[1].any()


def test_errors():
    if "game" in Rules.__dataclass_fields__:  # Barbu King (R11) is not batched
        with pytest.raises(ValueError, match=r"not supported by the batched engine.*supported: hearts_lead="):
            VectorDeals(None, Rules(game="king", doubling="off"))
    with pytest.raises(ValueError, match="not played under these rules"):
        VectorDeals("salad", Rules())
    with pytest.raises(ValueError, match=r"needs a parameter|unknown contract"):
        VectorDeals("trumps:", Rules())
    v = VectorDeals("no_queens", Rules(doubling="off"), batch=2, seed=0)
    with pytest.raises(ValueError, match="reset"):
        v.observe()
    _, mask, _ = v.reset()
    bad = np.array([int(np.flatnonzero(mask[0] == 0)[0]), int(np.flatnonzero(mask[1])[0])])
    hands = v.state.hands.copy()
    with pytest.raises(ValueError, match=r"game 0: .* is illegal .* legal are"):
        v.step(bad)
    np.testing.assert_array_equal(v.state.hands, hands)  # nothing moved
    with pytest.raises(ValueError, match="do not deal"):
        v.reset_games([0], hands=np.zeros((1, 4), np.uint64))
    with pytest.raises(ValueError, match="bad seats"):
        v.observe(np.array([0, 4]))


def test_packed_observations_unpack_to_observe():
    """``observe_packed`` + ``unpack_observations`` give exactly ``observe``'s arrays, every phase."""
    v = VectorDeals(SPECS, Rules(), batch=64, seed=4)
    v.reset()
    rng = np.random.default_rng(4)
    for _ in range(90):
        bits, numeric, mask_p, seat_p = v.observe_packed()
        unpacked = unpack_observations(bits, numeric)
        mask_p = mask_p.copy()
        obs, mask, seat = v.observe()
        np.testing.assert_array_equal(unpacked, obs)
        np.testing.assert_array_equal(mask_p, mask)
        np.testing.assert_array_equal(seat_p, seat)
        v.step(random_actions(mask, rng))


def test_memory_and_shapes():
    v = VectorDeals(None, Rules(), batch=8, seed=0)
    obs, mask, seat = v.reset()
    assert obs.shape == (8, OBS_SIZE) and obs.dtype == np.float32
    assert mask.shape == (8, NUM_ACTIONS) and mask.dtype == np.int8 and seat.shape == (8,)
    sizes = v.nbytes()
    assert sizes["obs"] == 4 * OBS_SIZE and sizes["state"] < 1024


def test_deal_stream():
    """R1.4 dealing of the batched engine: every deal partitions the deck evenly, deal k depends only on
    (key, k), every card goes to every seat and every seat declares about a quarter of the time."""
    from barbu_env.vector.dealing import deal_stream, stream_key
    from barbu_env.vector.tables import build_tables

    key = stream_key(3)
    for rules in (Rules(), Rules(scoring="basic32")):
        t = build_tables(rules)
        ids, hand = t.deck_ids, t.hand_size
        hands, decl = deal_stream(key, np.arange(4000), ids, hand)
        union = hands[:, 0] | hands[:, 1] | hands[:, 2] | hands[:, 3]
        assert (union == t.deck).all()
        assert (np.bitwise_count(hands) == hand).all()
        some, _ = deal_stream(key, np.array([17, 3]), ids, hand)
        np.testing.assert_array_equal(some, hands[[17, 3]])
    assert (
        not (
            deal_stream(stream_key(4), np.arange(50), np.arange(52), 13)[0]
            == deal_stream(key, np.arange(50), np.arange(52), 13)[0]
        )
        .all(axis=1)
        .any()
    )
    hands, decl = deal_stream(key, np.arange(20000), np.arange(52), 13)
    share = np.stack([(hands[:, s, None] >> np.arange(52, dtype=np.uint64)) & np.uint64(1) for s in range(4)]).mean(1)
    assert np.abs(share - 0.25).max() < 0.015  # 20000 deals: one standard deviation is about 0.003
    assert np.abs(np.bincount(decl, minlength=4) / 20000 - 0.25).max() < 0.015
    assert (deal_stream(key, np.arange(5), np.arange(52), 13, declarer=2)[1] == 2).all()


def test_games_deal_from_the_stream():
    """Game g's n-th deal is deal ``n * B + g`` of the seed's stream (restarts included)."""
    from barbu_env.vector.dealing import deal_stream, stream_key

    batch, t = 6, load_rules("classic")
    v = VectorDeals("no_queens", t, batch=batch, seed=21)
    v.reset()
    k = np.arange(batch)
    np.testing.assert_array_equal(v.state.hands, deal_stream(stream_key(21), k, np.arange(52), 13)[0])
    np.testing.assert_array_equal(v.state.declarer, deal_stream(stream_key(21), k, np.arange(52), 13)[1])
    rng, seen = np.random.default_rng(0), np.ones(batch, np.int64)
    for _ in range(200):
        _, done = v.step(random_actions(v.action_masks(), rng))
        for g in np.flatnonzero(done):
            want = deal_stream(stream_key(21), np.array([seen[g] * batch + g]), np.arange(52), 13)[0][0]
            np.testing.assert_array_equal(v.state.hands[g], want)
            seen[g] += 1
    assert seen.sum() > 2 * batch
    again = VectorDeals("no_queens", t, batch=batch, seed=0)
    again.reset(seed=21)
    np.testing.assert_array_equal(again.state.hands, deal_stream(stream_key(21), k, np.arange(52), 13)[0])


def test_kernel_cache_follows_fingerprint(tmp_path, monkeypatch):
    """The kernels' disk cache is kept only under the fingerprint computed at import: it changes with the
    kernel sources and with a constant the kernels freeze; a cache stamped with another one is deleted."""
    import types

    from barbu_env.vector import jit

    assert jit.fingerprint() == jit.FINGERPRINT
    for d in {d.stats.cache_path for d in jit.DISPATCHERS}:
        assert (Path(d) / jit.STAMP).read_text() == jit.FINGERPRINT
    monkeypatch.setattr(jit.obs, "O_HAND", jit.obs.O_HAND + 1)  # an observation offset moved
    assert jit.fingerprint() != jit.FINGERPRINT
    monkeypatch.undo()
    src = tmp_path / "kernels.py"
    mod = types.ModuleType("kernels")
    mod.__file__ = str(src)
    src.write_text("x = 1\n")
    before = jit.fingerprint((mod,))
    src.write_text("x = 2\n")  # a kernel's code changed
    assert jit.fingerprint((mod,)) != before
    cache = tmp_path / "cache"
    cache.mkdir()
    for name in ("k.f-1.py312.nbi", "k.f-1.py312.1.nbc", "k.cpython-312.pyc"):
        (cache / name).write_text("")
    assert [p.name for p in jit.drop_stale_cache({str(cache)}, "abc")] == ["k.f-1.py312.1.nbc", "k.f-1.py312.nbi"]
    assert (cache / jit.STAMP).read_text() == "abc" and (cache / "k.cpython-312.pyc").exists()
    (cache / "k.g-9.py312.nbi").write_text("")
    assert jit.drop_stale_cache({str(cache)}, "abc") == []  # the same fingerprint: the cache stays
    assert [p.name for p in jit.drop_stale_cache({str(cache)}, "def")] == ["k.g-9.py312.nbi"]


def test_kernel_tables_refuse_what_they_cannot_hold():
    """The flat kernel tables hold at most MAX_CARD_POINTS card-point masks per contract: wider tables are
    refused with the counts, not cut short (a contract would score less than its R4 card points)."""
    from dataclasses import replace

    from barbu_env.vector.jit.common import K_WIDTH, MAX_CARD_POINTS, T_ROWS, jit_tables
    from barbu_env.vector.tables import build_tables

    t = build_tables(load_rules(None))
    k = len(t.names)
    assert jit_tables(t).shape == (T_ROWS + k * K_WIDTH,)
    wide = replace(t, cp_mask=np.zeros((k, MAX_CARD_POINTS + 1), np.uint64), cp_pts=np.zeros((k, MAX_CARD_POINTS + 1)))
    with pytest.raises(ValueError, match=f"{MAX_CARD_POINTS + 1} card-point masks.*at most {MAX_CARD_POINTS}"):
        jit_tables(wide)


@pytest.mark.parametrize("options", [{}, {"doubling": "classic", "overtrump": "yes", "fantan_pass": "free"}],
                         ids=["default", "options"])  # fmt: skip
def test_load_states_plays_on_from_deals(options):
    """``load_states``: rows of ``state_of_deal`` (deals in every phase: declaration, doubling R6, trick play,
    Fantan R7) played on with random legal actions give the reference's seat, mask, observation and scores
    (R8.1) at every step; the games not loaded keep their deals."""
    from barbu_env.vector.rollout import state_of_deal

    rules = Rules(**options)
    rng = np.random.default_rng(4)
    deals = []
    contracts = [None, *TRICK_CONTRACTS, "trumps:D", "fantan:9"]
    for i in range(24):
        d = Deal.random(rng, i % 4, contracts[i % len(contracts)], rules)
        for _ in range(int(rng.integers(0, 45)) if i >= 8 else 0):
            if d.phase == OVER:
                break
            legal = d.legal_actions()
            d.apply(legal[int(rng.integers(len(legal)))])
        deals.append(d)
    assert {d.phase for d in deals} >= {0, 2}  # fresh declarations and trick play among them
    v = VectorDeals("no_queens", rules, batch=30, seed=1, auto_reset=False)
    v.reset()
    kept = v.state.data[24:].copy()
    v.load_states(np.concatenate([state_of_deal(d, v.tables).data for d in deals]), np.arange(24))
    np.testing.assert_array_equal(v.state.data[24:], kept)
    refs = [d.clone() for d in deals] + [reference(v, g, "no_queens") for g in range(24, 30)]
    while any(d.phase != OVER for d in refs):
        obs, mask, seat = v.observe()
        for g, d in enumerate(refs):
            assert seat[g] == d.current_player, f"game {g}"
            if d.phase != OVER:
                np.testing.assert_array_equal(mask[g], ref_mask(d), err_msg=f"game {g}")
                np.testing.assert_array_equal(obs[g], encode(d, d.to_move), err_msg=f"game {g}")
        actions = random_actions(mask, rng)
        rewards, done = v.step(actions)
        for g, d in enumerate(refs):
            if d.phase != OVER:
                d.apply(int(actions[g]))
                assert done[g] == (d.phase == OVER)
                if done[g]:
                    np.testing.assert_array_equal(rewards[g], d.scores, err_msg=f"game {g}")
                    np.testing.assert_array_equal(v.state.scores[g], d.scores)


def test_load_states_errors():
    """Bad rows and games are refused with the reason; nothing is loaded then."""
    from barbu_env.vector.core import COLUMNS, NUM_COLUMNS
    from barbu_env.vector.rollout import state_of_deal

    v = VectorDeals("no_queens", batch=2, seed=0, auto_reset=False)
    row = state_of_deal(Deal.random(np.random.default_rng(0), 0, "no_queens"), v.tables).data
    with pytest.raises(ValueError, match=rf"int64 \[n, {NUM_COLUMNS}\]"):
        v.load_states(row[:, :5])
    with pytest.raises(ValueError, match="1 rows for 2 games"):
        v.load_states(row)
    with pytest.raises(ValueError, match=r"distinct indices in 0\.\.1"):
        v.load_states(np.repeat(row, 2, axis=0), [0, 0])
    other_hand = int(row[0, COLUMNS["hands"] + 1])
    cases = (("phase", 7, "phase"), ("to_move", 4, "seats 0..3"), ("contract", 9, "contract"),
             ("contract", -1, "contract"), ("hands", other_hand, "a card in two places"))  # fmt: skip
    for column, value, what in cases:
        bad = row.copy()
        bad[0, COLUMNS[column]] = value
        with pytest.raises(ValueError, match=f"row 0 has bad .*{what}"):
            v.load_states(np.repeat(bad, 2, axis=0))
    with pytest.raises(ValueError, match="call reset"):
        v.observe()  # nothing was loaded
    with pytest.raises(ValueError, match="every game"):
        v.load_states(row, [1])  # game 0 would hold no deal
    v.reset()
    v.load_states(row, [1])
    assert v.seat[1] == 1 and v.state.data[1].tolist() == row[0].tolist()  # R6: the declarer's left doubles first


def test_step_moves_only_the_games_named():
    """``step(actions, games)``: the games not named stay as they are whatever their action; the others move as in a
    step of all games. The kernel's hold value is no action of a game: refused like any illegal action."""
    full, part = (VectorDeals(None, "classic", batch=8, seed=4) for _ in range(2))
    full.reset()
    part.reset()
    rng = np.random.default_rng(1)
    games = np.array([True, False] * 4)
    for _ in range(60):
        a = random_actions(full.action_masks(), rng)
        before = part.state.data.copy()
        r_part, done_part = part.step(np.where(games, a, 7), games)
        np.testing.assert_array_equal(part.state.data[~games], before[~games])
        r_full, done_full = full.step(a)
        np.testing.assert_array_equal(part.state.data[games], full.state.data[games])
        np.testing.assert_array_equal(r_part[games], r_full[games])
        assert not done_part[~games].any() and (done_part[games] == done_full[games]).all()
        full.load_states(part.state.data[~games], np.flatnonzero(~games))  # keep the held games alike
    with pytest.raises(ValueError, match="is illegal"):
        part.step(np.full(8, -2))
    with pytest.raises(ValueError, match="games must be a bool array of shape"):
        part.step(random_actions(part.action_masks(), rng), np.ones(8, np.int64))


def test_reset_games_deals_from_the_stream():
    """``reset_games(g)`` without hands gives each game its next deal of the stream (the compiled restart), the
    deal ``n * B + g`` that ``_deal`` would give; with hands, those hands."""
    from barbu_env.vector.dealing import deal_stream, stream_key

    v = VectorDeals(None, "classic", batch=5, seed=8, auto_reset=False)
    v.reset()
    v.reset_games([3, 1])
    v.reset_games([1])
    want = deal_stream(stream_key(8), np.array([5 + 3, 2 * 5 + 1]), np.arange(52), 13)
    np.testing.assert_array_equal(v.state.hands[[3, 1]], want[0])
    np.testing.assert_array_equal(v.state.declarer[[3, 1]], want[1])
    assert v._dealt.tolist() == [1, 3, 1, 2, 1]
    fresh = VectorDeals(None, "classic", batch=5, seed=8, auto_reset=False)
    fresh.reset()
    fresh.reset_games([3], hands=want[0][:1], declarer=int(want[1][0]))
    np.testing.assert_array_equal(fresh.state.data[3], v.state.data[3])
