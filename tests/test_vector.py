"""The batched engine (``barbu_env.vector``) against the reference engine, step by step.

Differential tests: B games run in ``VectorDeals`` and, side by side, B reference ``Deal`` objects built
from the same hands and declarer; every step the seat on move, the action mask (``Deal.legal_actions``),
the observation (``observation.encode``), the rewards (``Deal.scores``, R8.1) and the deal ends must be
identical. Random legal actions drive both; every contract is played under each rule option that matters
in deal mode (R4.1, R4.4, R5.4, R5.5, R6.6, R6.7, R7.3, R7.5, R9, R10). Every test runs on both backends
(``numpy`` and, when numba is installed, ``numba``), and a cross-backend test checks that they give the
same trajectories, observations, masks and rewards from the same seed.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from barbu_env.actions import NUM_ACTIONS, action_id
from barbu_env.cards import parse_cards
from barbu_env.engine.deal import OVER, Deal
from barbu_env.observation import OBS_SIZE, encode
from barbu_env.rules import Rules, load_rules
from barbu_env.vector import VectorDeals, random_actions, unpack_observations
from barbu_env.vector.backend import numba_available

# numba's OpenMP workers (test_numba_threads) busy-wait by default, which stalls on shared CI cores; read
# when numba starts its thread pool, i.e. at the first parallel kernel of this process
os.environ.setdefault("OMP_WAIT_POLICY", "passive")
needs_numba = pytest.mark.skipif(not numba_available(), reason="numba not installed (pip install barbu_env[fast])")
#: Every test taking ``backend`` runs once per backend.
BACKENDS = ["numpy", pytest.param("numba", marks=needs_numba)]

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


def run_differential(rules: Rules, specs: list, batch: int, steps: int, seed: int, backend: str) -> int:
    """Play ``steps`` batched steps, checking every game against its reference; returns deals finished."""
    v = VectorDeals(specs, rules, batch=batch, seed=seed, backend=backend)
    assert v.backend.name == backend
    v.reset()
    spec_of = [specs[g % len(specs)] for g in range(batch)]
    refs = [reference(v, g, spec_of[g]) for g in range(batch)]
    rng = np.random.default_rng(seed)
    finished = 0
    for step in range(steps):
        other = step % 5 == 4  # now and then observe the next seat instead of the one on move
        seats = (v.seat + 1) % 4 if other else None
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
        actions = random_actions(mask, rng, backend)
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
    return finished


@pytest.mark.parametrize("backend", BACKENDS)
def test_classic_every_contract(backend):
    """Classic rules (R3-R8): declaration, doubling, all seven contracts; thousands of deals."""
    assert run_differential(Rules(), SPECS, batch=320, steps=480, seed=1, backend=backend) > 2000


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


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("options", OPTIONS)
def test_rule_options(options, backend):
    rules, specs = option_rules(options)
    assert run_differential(rules, specs, batch=96, steps=240, seed=7, backend=backend) > 200


@pytest.mark.parametrize("backend", BACKENDS)
def test_fixed_contracts_with_parameters(backend):
    """``trumps:S`` / ``fantan:7`` skip the declaration, as ``env(contract=...)`` does."""
    specs = ["trumps:S", "fantan:7", "no_king", "trumps:H", "fantan:A"]
    assert run_differential(Rules(), specs, 80, 160, 3, backend) > 100


@needs_numba
@pytest.mark.parametrize("options", [{}, *OPTIONS])
def test_backends_identical(options):
    """numpy and numba, same seed: the same seats, observations (``observe`` of the seat on move and of
    another seat, ``observe_packed``), masks, actions, rewards and final state arrays, step after step."""
    rules, specs = option_rules(options)
    a, b = (VectorDeals(specs, rules, batch=128, seed=11, backend=name) for name in ("numpy", "numba"))
    a.reset()
    b.reset()
    rng_a, rng_b = np.random.default_rng(2), np.random.default_rng(2)
    finished = 0
    for step in range(300):
        seats = (a.seat + 1) % 4 if step % 5 == 4 else None
        for x, y in zip(a.observe(seats), b.observe(seats)):
            np.testing.assert_array_equal(x, y, err_msg=f"step {step}: observe")
        for x, y in zip(a.observe_packed(), b.observe_packed()):
            np.testing.assert_array_equal(x, y, err_msg=f"step {step}: observe_packed")
        mask = a.action_masks().copy()
        np.testing.assert_array_equal(mask, b.action_masks())
        actions = random_actions(mask, rng_a, "numpy")
        np.testing.assert_array_equal(actions, random_actions(mask, rng_b, "numba"))
        (ra, da), (rb, db) = a.step(actions), b.step(actions)
        np.testing.assert_array_equal(ra, rb, err_msg=f"step {step}: rewards")
        np.testing.assert_array_equal(da, db, err_msg=f"step {step}: done")
        finished += int(da.sum())
    for x, y in zip(a.state.blocks(), b.state.blocks()):
        np.testing.assert_array_equal(x, y)
    assert finished > 500


def test_backend_selection(monkeypatch):
    """``backend``: numpy / numba / auto; errors name the valid choices and the missing extra."""
    import barbu_env.vector.backend as backend_mod

    assert VectorDeals("no_queens", backend="numpy").backend.name == "numpy"
    with pytest.raises(ValueError, match=r"unknown backend 'torch': valid are \['auto', 'numpy', 'numba'\]"):
        VectorDeals("no_queens", backend="torch")
    with pytest.raises(ValueError, match="bad threads"):
        VectorDeals("no_queens", backend="numpy", threads=0)
    want = "numba" if numba_available() else "numpy"
    assert VectorDeals("no_queens").backend.name == want  # auto
    monkeypatch.setattr(backend_mod, "numba_available", lambda: False)
    assert VectorDeals("no_queens").backend.name == "numpy"
    with pytest.raises(ImportError, match=r"pip install barbu_env\[fast\]"):
        VectorDeals("no_queens", backend="numba")
    with pytest.raises(ImportError, match=r"pip install barbu_env\[fast\]"):
        random_actions(np.ones((2, 5), np.int8), np.random.default_rng(0), "numba")


def test_numba_not_imported_by_package():
    """numba is imported only when the numba backend is chosen, never by ``import barbu_env(.vector)``."""
    code = "import sys, barbu_env, barbu_env.vector; assert 'numba' not in sys.modules, 'numba imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


@needs_numba
def test_numba_threads():
    """``threads`` sets the numba backend's thread count; results do not depend on it."""
    import numba

    many = numba.config.NUMBA_NUM_THREADS
    one = VectorDeals(SPECS, Rules(), batch=64, seed=5, backend="numba")
    assert one.backend.num_threads() == 1
    other = VectorDeals(SPECS, Rules(), batch=64, seed=5, backend="numba", threads=many)
    assert other.backend.num_threads() == many
    with pytest.raises(ValueError, match="exceeds NUMBA_NUM_THREADS"):
        VectorDeals(SPECS, Rules(), batch=64, backend="numba", threads=many + 1)
    for v in (one, other):
        v.reset()
    rng = np.random.default_rng(0)
    for _ in range(120):
        for x, y in zip(one.observe(), other.observe()):
            np.testing.assert_array_equal(x, y)
        actions = random_actions(one.mask, rng)
        for x, y in zip(one.step(actions), other.step(actions)):
            np.testing.assert_array_equal(x, y)
    for x, y in zip(one.state.blocks(), other.state.blocks()):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_scripted_trump_lead_e2(backend):
    """E2 / R5.4: a declarer holding trumps must lead one; R5.5: a void follower must trump."""
    hands = [
        "AS KS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH",
        "2S 3S AC KC QC JC TC 9C 8C 7C 6C 5C 4C",
        "3C 2C AD KD QD JD TD 9D 8D 7D 6D 5D 4D",
        "4S 5S 6S 7S 8S 9S TS JS QS KH AH 2D 3D",
    ]
    v = VectorDeals("trumps:S", Rules(doubling="off"), batch=2, seed=0, backend=backend)
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


@pytest.mark.parametrize("backend", BACKENDS)
def test_boards_queue_and_duplicate(backend):
    """A board queue is dealt in order; games go inactive once it is used up."""
    rng = np.random.default_rng(5)
    src = VectorDeals("no_queens", Rules(doubling="off"), batch=3, seed=9)
    src.reset()
    hands = src.state.hands.copy()
    v = VectorDeals("no_queens", Rules(doubling="off"), batch=2, seed=0, boards=(hands, [0, 1, 2]), backend=backend)
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


@pytest.mark.parametrize("backend", BACKENDS)
def test_errors(backend):
    if "game" in Rules.__dataclass_fields__:  # Barbu King (R11) is not batched
        with pytest.raises(ValueError, match=r"not supported by the batched engine.*supported: hearts_lead="):
            VectorDeals(None, Rules(game="king", doubling="off"))
    with pytest.raises(ValueError, match="not played under these rules"):
        VectorDeals("salad", Rules())
    with pytest.raises(ValueError, match=r"needs a parameter|unknown contract"):
        VectorDeals("trumps:", Rules())
    v = VectorDeals("no_queens", Rules(doubling="off"), batch=2, seed=0, backend=backend)
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


@pytest.mark.parametrize("backend", BACKENDS)
def test_packed_observations_unpack_to_observe(backend):
    """``observe_packed`` + ``unpack_observations`` give exactly ``observe``'s arrays, every phase."""
    v = VectorDeals(SPECS, Rules(), batch=64, seed=4, backend=backend)
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


@pytest.mark.parametrize("backend", BACKENDS)
def test_memory_and_shapes(backend):
    v = VectorDeals(None, Rules(), batch=8, seed=0, backend=backend)
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
    assert not (deal_stream(stream_key(4), np.arange(50), np.arange(52), 13)[0] == deal_stream(
        key, np.arange(50), np.arange(52), 13)[0]).all(axis=1).any()
    hands, decl = deal_stream(key, np.arange(20000), np.arange(52), 13)
    share = np.stack([(hands[:, s, None] >> np.arange(52, dtype=np.uint64)) & np.uint64(1) for s in range(4)]).mean(1)
    assert np.abs(share - 0.25).max() < 0.015  # 20000 deals: one standard deviation is about 0.003
    assert np.abs(np.bincount(decl, minlength=4) / 20000 - 0.25).max() < 0.015
    assert (deal_stream(key, np.arange(5), np.arange(52), 13, declarer=2)[1] == 2).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_games_deal_from_the_stream(backend):
    """Game g's n-th deal is deal ``n * B + g`` of the seed's stream, on both backends (restarts included)."""
    from barbu_env.vector.dealing import deal_stream, stream_key

    batch, t = 6, load_rules("classic")
    v = VectorDeals("no_queens", t, batch=batch, seed=21, backend=backend)
    v.reset()
    k = np.arange(batch)
    np.testing.assert_array_equal(v.state.hands, deal_stream(stream_key(21), k, np.arange(52), 13)[0])
    np.testing.assert_array_equal(v.state.declarer, deal_stream(stream_key(21), k, np.arange(52), 13)[1])
    rng, seen = np.random.default_rng(0), np.ones(batch, np.int64)
    for _ in range(200):
        _, done = v.step(random_actions(v.action_masks(), rng, backend))
        for g in np.flatnonzero(done):
            want = deal_stream(stream_key(21), np.array([seen[g] * batch + g]), np.arange(52), 13)[0][0]
            np.testing.assert_array_equal(v.state.hands[g], want)
            seen[g] += 1
    assert seen.sum() > 2 * batch
    again = VectorDeals("no_queens", t, batch=batch, seed=0, backend=backend)
    again.reset(seed=21)
    np.testing.assert_array_equal(again.state.hands, deal_stream(stream_key(21), k, np.arange(52), 13)[0])
