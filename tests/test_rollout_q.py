"""Self-play with rollout-labelled Q targets (training/rollout_q.py).

The compiled playouts from a copied game row end with the scores of ``agents.heuristic.rollout`` on ``Deal``
clones (R8.1); every labelled state carries, for each legal move, the acting seat's deal score / |contract total|
after that move and heuristic play (checked against the ``Deal`` replayed from the game's actions), and the
observation of that seat (``observation.encode``); resampled worlds keep what the seat on move knows. The end-to-end
run (train, save, reload, evaluate, resume) is tests/test_training.py's smoke test.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from barbu_env.actions import DECLARE_BASE  # noqa: E402
from barbu_env.agents.heuristic import heuristic_action, rollout  # noqa: E402
from barbu_env.contracts import contract_scale  # noqa: E402
from barbu_env.engine.deal import FANTAN_PLAY, OVER, PLAY, Deal  # noqa: E402
from barbu_env.nn import PolicyNet  # noqa: E402
from barbu_env.observation import encode  # noqa: E402
from barbu_env.rules import Rules  # noqa: E402
from barbu_env.vector.backend import numba_available  # noqa: E402
from barbu_env.vector.encode import unpack_observations  # noqa: E402
from barbu_env.vector.rollout import Rollouts, state_of_deal  # noqa: E402
from barbu_env.vector.tables import build_tables  # noqa: E402
from training.common import load_config  # noqa: E402
from training.rollout_q import Labeller, RolloutQConfig  # noqa: E402

pytestmark = pytest.mark.skipif(not numba_available(), reason="numba not installed (pip install barbu_env[fast])")


@pytest.mark.parametrize("contract", ["no_queens", "trumps:D", "fantan:9", "no_king"])
def test_play_out_from_game_rows_equals_python_rollouts(contract):
    rules = Rules(doubling="classic")
    t = build_tables(rules)
    ro = Rollouts(t)
    rng = np.random.default_rng(3)
    for k in range(12):
        d = Deal.random(rng, k % 4, contract, rules)
        for _ in range(int(rng.integers(4, 30))):
            if d.phase == OVER:
                break
            legal = d.legal_actions()
            d.apply(heuristic_action(d, d.to_move) if rng.random() < 0.5 else legal[int(rng.integers(len(legal)))])
        if d.phase not in (PLAY, FANTAN_PLAY):
            continue
        legal = d.legal_actions()
        row = state_of_deal(d, t).data
        before = row.copy()
        got = ro.play_out(np.repeat(row, len(legal), axis=0), np.array(legal))
        assert (row == before).all()  # the rows are copied, not played in place
        for i, a in enumerate(legal):
            w = d.clone()
            w.apply(a)
            assert got[i].tolist() == list(rollout(w).scores), (contract, k, a)


def replayed(start: tuple[list[int], int], actions: list[int], contract: str, rules: Rules) -> Deal:
    d = Deal.from_hands(start[0], start[1], contract, rules)
    for a in actions:
        d.apply(a)
    return d


@pytest.mark.parametrize("contract", ["no_queens", "no_hearts", "trumps:S"])
def test_labels_are_the_value_of_every_legal_move_and_the_observation_is_the_seats(contract):
    """One game, every card decision labelled: replay its actions on a ``Deal`` and check each label (R8.1)."""
    rules = Rules(doubling="off", undoubled_negative="play")
    cfg = RolloutQConfig(label_prob=1.0, epsilon=0.3, p_heuristic=0.5)
    lab = Labeller(contract, rules, 1, np.random.default_rng(1), cfg)
    env, scale = lab.env, contract_scale(contract, rules)
    taken: list[int] = []
    step = env.step

    def recording_step(actions):
        taken.append(int(actions[0]))
        return step(actions)

    env.step = recording_step
    start = ([int(h) for h in env.state.hands[0]], int(env.state.declarer[0]))
    net = PolicyNet()
    checked = 0
    while checked < 60:
        history = list(taken)
        part = lab.step(net, None)
        if part is not None:
            d = replayed(start, history, contract, rules)
            seat = d.to_move
            legal = d.legal_actions()
            assert np.flatnonzero(part["mask"][0]).tolist() == legal
            assert (unpack_observations(part["bits"], part["numeric"])[0] == encode(d, seat)).all()
            for a in legal:
                w = d.clone()
                w.apply(a)
                want = rollout(w).scores[seat] / scale
                assert part["q"][0, a] == pytest.approx(want, abs=1e-3), (a, want)
            assert part["teacher"][0] == heuristic_action(d, seat)
            checked += 1
        if replayed(start, taken, contract, rules).phase == OVER:  # the game restarted with a new deal
            start = ([int(h) for h in env.state.hands[0]], int(env.state.declarer[0]))
            taken.clear()


def test_config_refuses_out_of_range_settings():
    with pytest.raises(ValueError, match="doubled"):
        load_config(RolloutQConfig, None, ["doubled=1.5"])
    with pytest.raises(ValueError, match="chunk"):
        load_config(RolloutQConfig, None, ["chunk=0"])


@pytest.mark.parametrize("contract", ["no_hearts", "trumps:C", "fantan:7"])
def test_resampled_worlds_keep_what_the_seat_on_move_knows(contract):
    """PIMC's sampler on game rows: own hand, hand sizes, the hidden cards and the shown voids (R5, R7) kept."""
    from barbu_env.vector import VectorDeals
    from barbu_env.vector.core import COLUMNS
    from barbu_env.vector.worlds import resample_hands

    env = VectorDeals(contract, Rules(doubling="off"), batch=256, seed=5)
    env.reset()
    for _ in range(22):
        env.step(env.heuristic_actions())
    rows = env.state.data.copy()
    new = resample_hands(rows, np.random.default_rng(0))
    h, e = COLUMNS["hands"], COLUMNS["excluded"]
    old_h, new_h = rows[:, h : h + 4].view(np.uint64), new[:, h : h + 4].view(np.uint64)
    excluded = rows[:, e : e + 4].view(np.uint64)
    me = rows[:, COLUMNS["to_move"]]
    g = np.arange(rows.shape[0])
    assert (old_h[g, me] == new_h[g, me]).all()
    assert (np.bitwise_or.reduce(old_h, 1) == np.bitwise_or.reduce(new_h, 1)).all()
    sizes = np.vectorize(lambda m: int(m).bit_count())
    assert (sizes(old_h) == sizes(new_h)).all()
    assert not (new_h & excluded).any()
    other = np.ones(rows.shape[1], bool)
    other[h : h + 4] = False
    assert (new[:, other] == rows[:, other]).all()
    assert (old_h != new_h).any(1).mean() > 0.5  # most rows get another deal
    assert (resample_hands(rows, np.random.default_rng(0)) == new).all()  # a function of the generator


def test_resampling_past_its_tries_deals_as_the_engines_sampler():
    """A late No hearts state where seats have shown voids (R5): with no rejection tries left, ``resample_hands``
    deals by ``engine.infostate.sample_hidden``'s procedure (never the true hands): each hidden card lands in each
    seat about as often as that sampler puts it there, and never in a seat that cannot hold it."""
    from barbu_env.agents.heuristic import heuristic_action
    from barbu_env.engine.infostate import sample_hidden
    from barbu_env.vector.core import COLUMNS
    from barbu_env.vector.worlds import resample_hands

    rules, rng = Rules(doubling="off"), np.random.default_rng(11)
    for _ in range(50):  # a state 30 cards in with at least two seats void somewhere
        d = Deal.random(rng, 0, "no_hearts", rules)
        while d.phase != PLAY or len(d.history) < 30:
            d.apply(heuristic_action(d, d.to_move))
        if sum(d.excluded[s] != 0 for s in range(4) if s != d.to_move) >= 2:
            break
    seat, n = d.to_move, 3000
    rows = np.repeat(state_of_deal(d, build_tables(rules)).data, n, axis=0)
    hands = resample_hands(rows, np.random.default_rng(0), tries=0)[:, COLUMNS["hands"] : COLUMNS["hands"] + 4]
    cards = np.arange(52)
    got = np.stack([((hands[:, s, None] >> cards) & 1).mean(0) for s in range(4)])
    want = np.zeros((4, 52))
    for _ in range(n):
        w = sample_hidden(d, seat, rng)
        want += [[(w.held(s) >> c) & 1 for c in cards] for s in range(4)]
    want /= n
    assert np.abs(got - want).max() < 0.06
    hidden = got[[s for s in range(4) if s != seat]]
    assert (got[seat] == want[seat]).all() and ((hidden > 0.05) & (hidden < 0.95)).any()
    for s in range(4):
        assert not (got[s] * ((d.excluded[s] >> cards) & 1)).any()
    assert not (hands == [d.held(s) for s in range(4)]).all(1).all()


def _labelled(cfg: RolloutQConfig, steps: int) -> tuple[list[dict[str, np.ndarray]], list[int], list[int]]:
    """Steps a 32-game ``Labeller`` (No hearts, R8.1); its labelled parts, and per step the card decisions with more
    than one legal move before trick 9 (counted from 0) and from trick 9 on."""
    from barbu_env.vector.core import COLUMNS

    lab = Labeller("no_hearts", Rules(doubling="off"), 32, np.random.default_rng(3), cfg)
    parts, early, late = [], [], []
    torch.manual_seed(0)
    net = PolicyNet()
    for _ in range(steps):
        _, _, mask, _ = lab.env.observe_packed()
        card = ~mask[:, DECLARE_BASE:].any(1) & (mask.sum(1) > 1)
        trick = lab.env.state.data[:, COLUMNS["trick_no"]]
        early.append(int((card & (trick < 9)).sum()))
        late.append(int((card & (trick >= 9)).sum()))
        part = lab.step(net, None)
        parts.append(part if part is not None else {})
    return parts, early, late


def test_late_tricks_take_their_own_labelling_share():
    """``late_trick`` 9: with ``label_prob`` 0 and ``late_label_prob`` 1 exactly the card decisions of tricks 9-12
    with a choice are labelled (R4), valued in the true deal or (``late_true_world`` false) in a redealt one;
    ``late_trick`` past the last trick labels as the default does, draw for draw."""
    cfg = load_config(RolloutQConfig, None, ["label_prob=0", "late_trick=9", "late_label_prob=1", "late_worlds=3"])
    parts, early, late = _labelled(cfg, 120)
    assert sum(early) > 0 and sum(late) > 0
    assert [len(p.get("q", ())) for p in parts] == late
    for p in parts:
        if p:  # each move's target is a share of the contract total, on the legal moves only
            legal = p["mask"].astype(bool)
            assert (p["q"][~legal] == 0).all() and (np.abs(p["q"][legal]) <= 1.0001).all()
    base = ["label_prob=0", "late_trick=9", "late_label_prob=1", "late_worlds=1"]
    true, _, _ = _labelled(load_config(RolloutQConfig, None, base), 40)
    redealt, _, _ = _labelled(load_config(RolloutQConfig, None, [*base, "late_true_world=false"]), 40)
    first = next(i for i, p in enumerate(true) if p)  # the same states; valued in the true deal or another one
    assert (true[first]["bits"] == redealt[first]["bits"]).all() and (true[first]["q"] != redealt[first]["q"]).any()
    off, _, _ = _labelled(load_config(RolloutQConfig, None, ["label_prob=0.3"]), 60)
    past, _, _ = _labelled(load_config(RolloutQConfig, None, ["label_prob=0.3", "late_trick=13", "late_worlds=5"]), 60)
    assert len(off) == len(past)
    for a, b in zip(off, past, strict=True):
        assert a.keys() == b.keys() and all((a[k] == b[k]).all() for k in a)


def test_imitation_weight_falls_to_bc_final_over_bc_states():
    """The warm start's weight: ``bc_coef`` at the start, linear to ``bc_final`` at ``bc_states``, then held."""
    from training.rollout_q import imitation_weight

    cfg = load_config(RolloutQConfig, None, ["bc_coef=1.0", "bc_final=0.01", "bc_states=1000"])
    assert imitation_weight(cfg, 0) == 1.0
    assert imitation_weight(cfg, 500) == pytest.approx(0.505)
    assert imitation_weight(cfg, 1000) == imitation_weight(cfg, 5000) == pytest.approx(0.01)
    with pytest.raises(ValueError, match="bc_final"):
        load_config(RolloutQConfig, None, ["bc_final=-1"])


def test_belief_labels_name_the_holder_of_each_hidden_card_relative_to_the_seat_on_move():
    """``belief``'s labels (R1.3 four hands, R4 play): after "2C 5C" of a No hearts deal dealt by seat 0, seat 2 is on
    move; each card of seats 3, 0, 1 is labelled 0, 1, 2 (next, opposite, previous), its own and the played ones -1."""
    from helpers import make_deal, play

    from barbu_env.cards import parse_cards
    from training.rollout_q import hidden_owners

    hands = ["2C 3C 4C 5S 6S 7S 8S 9S TS JS QS KS AS", "5C 6C 7C 8C 2S 3S 4S 2D 3D 4D 5D 6D 7D",
             "9C TC JC QC KC AC 8D 9D TD JD QD KD AD", "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH"]  # fmt: skip
    d = make_deal(hands, declarer=0, contract="no_hearts", rules=Rules(doubling="off"))
    play(d, "2C 5C")
    assert d.to_move == 2
    owner = hidden_owners(state_of_deal(d, build_tables(Rules(doubling="off"))).data)[0]
    want = np.full(52, -1)
    for label, seat in enumerate((3, 0, 1)):
        want[[c for c in parse_cards(hands[seat]) if c not in parse_cards("2C 5C")]] = label
    np.testing.assert_array_equal(owner, want)


def test_belief_head_trains_beside_the_network_resumes_and_is_not_saved(tmp_path):
    """``belief`` > 0: the labelled states carry the owners, the auxiliary loss is logged, the resume state holds the
    head (a resume without it is refused, naming the setting), and the saved policy is the plain network."""
    import csv
    from pathlib import Path

    from barbu_env.nn import load_checkpoint
    from training import rollout_q

    root = Path(__file__).resolve().parents[1]
    over = [f"out_dir={tmp_path / 'run'}", "contracts=[no_hearts]", "final_eval_deals=0", "card_hidden=8", "belief=0.5"]
    rollout_q.train(load_config(RolloutQConfig, root / "configs" / "smoke.yaml", over))
    with open(tmp_path / "run" / "no_hearts" / "metrics.csv") as f:
        ce = [float(r["value"]) for r in csv.DictReader(f) if r["metric"] == "losses/belief_ce"]
    assert ce and all(0 < x < 2 for x in ce)  # ln 3 = 1.10 at chance
    state = torch.load(tmp_path / "run" / "no_hearts" / "state.pt", weights_only=False)
    assert state["belief"]["weight"].shape == (52 * 3, 32)
    net, _ = load_checkpoint(tmp_path / "run" / "no_hearts" / "best.pt")
    assert not any("belief" in k for k in net.state_dict())
    more = [*over, f"states={state['states'] + 1500}"]
    rollout_q.train(load_config(RolloutQConfig, root / "configs" / "smoke.yaml", more), resume=True)
    with pytest.raises(ValueError, match="belief"):
        rollout_q.train(load_config(RolloutQConfig, root / "configs" / "smoke.yaml", [*over[:-1], "belief=0"]),
                        resume=True)  # fmt: skip


def test_shared_network_learns_every_contract_from_equal_shares_and_resumes(tmp_path):
    """``shared``: one network for two contracts. Its minibatches hold an equal share of each contract's states, told
    apart by the observation's ``contract`` block; each contract keeps its own selection (``<contract>/best.pt``,
    marked shared) and curve; the one resume state (``shared/state.pt``) resumes; per_contract and init settings,
    which would make the contracts' networks differ, are refused."""
    from pathlib import Path

    from barbu_env.nn import load_checkpoint
    from barbu_env.observation import _CONTRACT_INDEX, BLOCKS
    from training import rollout_q

    root = Path(__file__).resolve().parents[1]
    both = ["no_queens", "trumps"]
    over = [f"out_dir={tmp_path / 'run'}", "contracts=[no_queens, trumps]", "final_eval_deals=0", "card_hidden=8",
            "shared=true", "states=1500"]  # fmt: skip
    cfg = load_config(RolloutQConfig, root / "configs" / "smoke.yaml", over)
    paths = rollout_q.train(cfg)
    assert set(paths) == set(both)
    for c in both:
        _, ckpt = load_checkpoint(paths[c])
        assert ckpt["contract"] == c and ckpt["meta"]["shared"] == both
        assert (tmp_path / "run" / c / "curve.png").is_file()
    state = torch.load(tmp_path / "run" / "shared" / "state.pt", weights_only=False)
    assert state["contract"] == "no_queens+trumps" and len(state["best"]) == 2 and state["states"] >= 2 * 1500
    assert not (tmp_path / "run" / "no_queens" / "state.pt").exists()
    rollout_q.train(load_config(RolloutQConfig, root / "configs" / "smoke.yaml", [*over, "states=3000"]), resume=True)
    assert torch.load(tmp_path / "run" / "shared" / "state.pt", weights_only=False)["states"] >= 2 * 3000

    run = rollout_q.Run(load_config(RolloutQConfig, root / "configs" / "smoke.yaml", [*over[1:], "minibatch=9",
                        f"out_dir={tmp_path / 'fresh'}"]), both, resume=False)  # fmt: skip
    snap = PolicyNet(hidden=(32,), card_hidden=8)
    for part in run.parts:
        run.label(part, run.labellers(part), 50, snap)
    off, size = BLOCKS["contract"]
    names = run.minibatch()["obs"][:, off : off + size].argmax(1).tolist()
    assert names == [_CONTRACT_INDEX["no_queens"]] * 5 + [_CONTRACT_INDEX["trumps"]] * 4
    for bad in ("per_contract={trumps: {lr: 0.01}}", f"init={paths['trumps']}"):
        with pytest.raises(ValueError, match="shared=true"):
            rollout_q.train(load_config(RolloutQConfig, root / "configs" / "smoke.yaml", [*over, bad]))
