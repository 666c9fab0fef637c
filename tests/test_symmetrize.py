"""``training.symmetrize``: the suit-symmetrised ensemble is equivariant, distillation moves the network towards it,
and the result is recorded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from barbu_env.nn import PolicyNet, load_checkpoint, save_checkpoint  # noqa: E402
from training import prune, symmetrize  # noqa: E402
from training.common import suit_gathers  # noqa: E402
from training.prune import card_decisions  # noqa: E402
from training.rollout_q import centred, centred_mse  # noqa: E402


def _net(seed: int = 0) -> PolicyNet:
    torch.manual_seed(seed)
    return PolicyNet(hidden=(32, 16), card_hidden=4).eval()


def _states(net: PolicyNet, contract: str, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    obs, mask = (np.concatenate(x) for x in zip(*card_decisions(net, contract, 8, seed), strict=True))
    return torch.from_numpy(obs), torch.from_numpy(mask).bool()


@pytest.mark.parametrize("contract", ["no_hearts", "no_queens"])
def test_symmetrised_logits_are_the_same_for_every_relabelling_of_a_state(contract: str) -> None:
    """Relabelling the suits of a state (hearts kept in No hearts, any in No queens) relabels the ensemble's
    logits alike; a single network's do not."""
    net = _net()
    views = suit_gathers(contract)
    assert len(views) == (6 if contract == "no_hearts" else 24)
    obs, mask = _states(net, contract, 0)
    base = symmetrize.symmetrised_logits(net, obs, mask, views)
    plain = net(obs, mask)[0].detach()
    single_differs = False
    for oi, ai, _ in views[1:]:
        legal = mask[:, ai]
        got = symmetrize.symmetrised_logits(net, obs[:, oi], legal, views)
        assert torch.allclose(torch.where(legal, got, 0.0), torch.where(legal, base[:, ai], 0.0), atol=1e-5)
        other = net(obs[:, oi], legal)[0].detach()
        single_differs |= not torch.allclose(torch.where(legal, other, 0.0), torch.where(legal, plain[:, ai], 0.0))
    assert single_differs


def test_distillation_brings_the_network_towards_its_ensemble() -> None:
    """On deals it did not train on, the fine-tuned network's centred logits are closer to the source's ensemble."""
    net = _net(1)
    views = suit_gathers("no_hearts")
    obs, mask = _states(net, "no_hearts", 99)
    count = mask.sum(1, keepdim=True)
    target = centred(symmetrize.symmetrised_logits(net, obs, mask, views), mask, count)

    def gap(m: PolicyNet) -> float:
        with torch.no_grad():
            return float(centred_mse(m(obs, mask)[0], target, mask, count))

    student, stats = symmetrize.distil(net, "no_hearts", games=60, lr=3e-3, seed=0, buffer=200)
    assert stats["states"] > 1000 and stats["minibatches"] > 1
    assert gap(student) < 0.5 * gap(net)
    assert all(torch.equal(a, b) for a, b in zip(net.state_dict().values(), _net(1).state_dict().values(), strict=True))


def test_held_out_loss_is_measured_and_keep_best_returns_the_lowest() -> None:
    """The held-out loss is taken at the start, every ``check_every`` minibatches and at the end, on deals of
    another seed; ``keep="best"`` returns the student as it was at its lowest: the source itself when a far too
    large step size only makes it worse, where ``keep="last"`` returns the worse network."""
    net = _net(2)
    kw = {"games": 40, "lr": 0.5, "seed": 3, "buffer": 200, "holdout": 6, "check_every": 2}
    last, s_last = symmetrize.distil(net, "no_queens", keep="last", **kw)
    best, s_best = symmetrize.distil(net, "no_queens", keep="best", **kw)
    checks = s_last["holdout"]
    assert checks[0][0] == 0 and checks[-1][0] == s_last["minibatches"] and len(checks) >= 3
    assert [c[0] for c in checks[1:-1]] == list(range(2, s_last["minibatches"], 2))[: len(checks) - 2]
    assert s_best["holdout"] == checks and s_last["kept"] == s_last["minibatches"]
    held = symmetrize.Holdout([net], "no_queens", 6, 4, ("off",), suit_gathers("no_queens"))
    assert len(held.obs) == s_last["holdout_states"] > 0
    assert held.loss(net) == pytest.approx(checks[0][1], rel=1e-5)
    lowest = min(range(len(checks)), key=lambda k: checks[k][1])
    assert s_best["kept"] == checks[lowest][0]
    assert held.loss(best) == pytest.approx(checks[lowest][1], rel=1e-5) and held.loss(best) <= held.loss(last)
    assert checks[-1][1] > checks[0][1]  # the step size is far too large: the last network is the worse
    with pytest.raises(ValueError, match="keep must be one of"):
        symmetrize.distil(net, "no_queens", keep="first", **kw)


def test_symmetrize_writes_the_network_and_records_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "src.pt"
    save_checkpoint(src, _net(), "no_king", {"lr": 0.1}, {"states": 7})
    symmetrize.main([str(tmp_path / "out.pt"), str(src), "--games", "6", "--lr", "1e-4"])
    net, ckpt = load_checkpoint(tmp_path / "out.pt")
    info = ckpt["meta"]["symmetrized"]
    assert info["relabellings"] == 6 and info["games"] == 6 and info["lr"] == 1e-4 and info["states"] > 0
    assert info["doublings"] == ["off"] and info["keep"] == "last" and info["holdout_games"] == 200
    assert info["holdout"][0][0] == 0 and info["holdout"][-1][0] == info["minibatches"]
    assert info["meta"] == {"states": 7} and ckpt["config"] == {"lr": 0.1} and ckpt["contract"] == "no_king"
    assert list(net.hidden) == [32, 16] and info["hidden"] == info["source_hidden"] == [32, 16]
    symmetrize.main([str(tmp_path / "small.pt"), str(src), "--games", "6", "--hidden", "8", "4", "--holdout", "2"])
    small, ckpt = load_checkpoint(tmp_path / "small.pt")
    assert small.hidden == (8, 4) and ckpt["meta"]["symmetrized"]["source_hidden"] == [32, 16]
    with pytest.raises(SystemExit):
        symmetrize.main([str(tmp_path / "bad.pt"), str(src), "--hidden", "8"])
    assert "give one per hidden layer of the network [32, 16]" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        symmetrize.main([str(tmp_path / "bad.pt"), str(src), "--games", "0"])
    assert "--games" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        symmetrize.main([str(tmp_path / "bad.pt"), str(tmp_path / "missing.pt")])
    assert "missing.pt" in capsys.readouterr().err


def test_shuffled_regroups_every_row_once_in_minibatches() -> None:
    """Runs of at least ``buffer`` rows are shuffled and cut in minibatches; every row comes out exactly once,
    paired with its own mask row; the same generator seed gives the same minibatches; buffer 0 passes through."""
    chunks = [(np.arange(k, k + 7, dtype=np.float32)[:, None], np.arange(k, k + 7)[:, None]) for k in range(0, 70, 7)]
    out = list(symmetrize.shuffled(iter(chunks), 20, 8, np.random.default_rng(0)))
    rows = np.concatenate([o[:, 0] for o, _ in out])
    assert sorted(rows.tolist()) == list(range(70)) and rows.tolist() != list(range(70))
    assert all(np.array_equal(o[:, 0], m[:, 0]) for o, m in out)
    assert [len(o) for o, _ in out] == [8, 8, 5] * 3 + [7]  # runs of 21 rows (3 chunks), then the last 7
    again = list(symmetrize.shuffled(iter(chunks), 20, 8, np.random.default_rng(0)))
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(out, again, strict=True))
    assert list(symmetrize.shuffled(iter(chunks), 0, 8, np.random.default_rng(0))) == chunks


def test_the_ensemble_target_is_the_mean_of_each_networks_centred_symmetrised_logits() -> None:
    """One network: its centred symmetrised logits (the self-distillation target); several: their mean, so a network
    whose logits are all shifted by a constant weighs the same."""
    a, b = _net(2), _net(3)
    views = suit_gathers("no_queens")
    obs, mask = _states(a, "no_queens", 5)
    count = mask.sum(1, keepdim=True)
    one = [centred(symmetrize.symmetrised_logits(n, obs, mask, views), mask, count) for n in (a, b)]
    assert torch.allclose(symmetrize.ensemble_target([a], obs, mask, views), one[0])
    assert torch.allclose(symmetrize.ensemble_target([a, b], obs, mask, views), (one[0] + one[1]) / 2, atol=1e-6)
    shifted = _net(3)
    with torch.no_grad():
        shifted.policy.bias += 5.0
    assert torch.allclose(symmetrize.ensemble_target([a, shifted], obs, mask, views), (one[0] + one[1]) / 2, atol=1e-5)


def test_symmetrize_with_other_networks_records_them_and_refuses_another_contract(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    src, other, wrong = tmp_path / "src.pt", tmp_path / "other.pt", tmp_path / "wrong.pt"
    save_checkpoint(src, _net(), "no_king", {}, {})
    other_net = PolicyNet(hidden=(24,), card_hidden=4)
    save_checkpoint(other, other_net, "no_king", {}, {})
    save_checkpoint(wrong, _net(), "no_queens", {}, {})
    symmetrize.main([str(tmp_path / "out.pt"), str(src), "--games", "6", "--ensemble", str(other)])
    net, ckpt = load_checkpoint(tmp_path / "out.pt")
    (entry,) = ckpt["meta"]["symmetrized"]["ensemble"]
    assert entry["file"] == str(other) and len(entry["sha256"]) == 64 and list(net.hidden) == [32, 16]
    assert "with 1 other network" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        symmetrize.main([str(tmp_path / "bad.pt"), str(src), "--ensemble", str(wrong)])
    assert "'no_queens'" in capsys.readouterr().err and not (tmp_path / "bad.pt").exists()


def test_a_smaller_student_starts_from_the_top_units_and_moves_towards_the_target() -> None:
    """``hidden``: the student has those sizes, starts as the source keeping ``prune.top_units``' units, and
    distillation brings it closer to the source's ensemble on held-out deals than where it started."""
    net = _net(5)
    student, stats = symmetrize.distil(net, "no_queens", games=60, lr=3e-3, seed=0, buffer=200, hidden=(12, 6),
                                       holdout=8, check_every=5)  # fmt: skip
    assert student.hidden == (12, 6) and net.hidden == (32, 16)
    checks = stats["holdout"]
    assert checks[-1][1] < checks[0][1]
    ranked = card_decisions(net, "no_queens", symmetrize.SHRINK_GAMES, 2, doublings=("off",))
    start = prune.pruned(net, prune.top_units(net, (12, 6), ranked)[0])
    held = symmetrize.Holdout([net], "no_queens", 8, 1, ("off",), suit_gathers("no_queens"))
    assert held.loss(start) == pytest.approx(checks[0][1], rel=1e-5)


def test_mixed_decisions_alternate_the_doublings() -> None:
    """With two doublings the steps alternate between their games (each doubling's deals as ``card_decisions``
    plays them alone); with one they are ``card_decisions``' own."""
    net = _net(6)
    mixed = list(symmetrize.mixed_decisions(net, "no_king", 8, 3, ("off", "classic")))
    off = list(card_decisions(net, "no_king", 4, 3, doublings=("off",)))
    classic = list(card_decisions(net, "no_king", 4, 3 + 7919, doublings=("classic",)))
    assert len(mixed) == len(off) + len(classic)
    expect = [s for pair in zip(off, classic, strict=False) for s in pair]
    expect += off[len(classic) :] + classic[len(off) :]
    assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) for a, b in zip(mixed, expect, strict=True))
    alone = list(symmetrize.mixed_decisions(net, "no_king", 4, 3, ("off",)))
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(alone, off, strict=True)) and len(alone) == len(off)


def test_balance_weighs_decisions_with_doubles_as_those_without(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:  # fmt: skip
    """``Holdout.balance``: decisions with doubles (the ``doubles`` block not all zero) get the weight that makes
    their mean squared target equal to that of the others (about 0.03 for the shipped No tricks file's ensemble);
    unbalanced, every weight is 1 and the loss is ``centred_mse``'s. ``--balance-doubles`` needs ``--doubled`` and
    is recorded with the weight."""
    net = _net(5)
    held = symmetrize.Holdout([net], "no_tricks", 12, 4, ("off", "classic"), suit_gathers("no_tricks"))
    doubled = symmetrize.with_doubles(held.obs)
    assert 0 < int(doubled.sum()) < len(doubled)
    assert held.weights(held.obs).eq(1.0).all()
    unweighted = centred_mse(net(held.obs, held.mask)[0], held.target, held.mask, held.count)
    assert held.loss(net) == float(unweighted)
    w = held.balance()
    square = (held.target**2).sum(1) / held.count[:, 0]
    assert w > 0 and w != 1.0  # an untrained network: the two kinds' targets differ only a little in scale
    assert float(square[doubled].mean()) * w == pytest.approx(float(square[~doubled].mean()), rel=1e-5)
    weights = held.weights(held.obs)
    assert weights[doubled].eq(w).all() and weights[~doubled].eq(1.0).all()
    assert held.loss(net) != float(unweighted)
    off = symmetrize.Holdout([net], "no_tricks", 4, 4, ("off",), suit_gathers("no_tricks"))
    with pytest.raises(ValueError, match="--doubled"):
        off.balance()
    src = tmp_path / "src.pt"
    save_checkpoint(src, net, "no_tricks", {})
    with pytest.raises(SystemExit):
        symmetrize.main([str(tmp_path / "bad.pt"), str(src), "--balance-doubles"])
    assert "--balance-doubles needs --doubled" in capsys.readouterr().err
    symmetrize.main([str(tmp_path / "out.pt"), str(src), "--games", "8", "--holdout", "12", "--doubled",
                     "--balance-doubles"])  # fmt: skip
    info = load_checkpoint(tmp_path / "out.pt")[1]["meta"]["symmetrized"]
    assert info["balance_doubles"] and info["doubled_weight"] > 0 and info["doubled_weight"] != 1.0
