"""``training.prune``: dropping a network's dead ReLU units keeps its outputs, is checked, and is recorded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from barbu_env.nn import PolicyNet, compiled_greedy, flat_policy, load_checkpoint, save_checkpoint  # noqa: E402
from training import prune  # noqa: E402


def _net_with_dead_units(seed: int = 0) -> PolicyNet:
    """A small network whose first 8 units of layer 1 and first 4 of layer 2 can never be positive (a bias far
    below anything their inputs can add)."""
    torch.manual_seed(seed)
    net = PolicyNet(hidden=(32, 16), card_hidden=4).eval()
    first, second = prune._linears(net)
    with torch.no_grad():
        first.bias[:8] = -1e3
        second.bias[:4] = -1e3
    return net


def test_pruning_drops_the_dead_units_and_keeps_every_output() -> None:
    net = _net_with_dead_units()
    keep, seen = prune.active_units(net, prune.card_decisions(net, "no_hearts", games=20, seed=0))
    assert seen > 100
    assert not keep[0][:8].any() and not keep[1][:4].any()
    small = prune.pruned(net, keep)
    assert small.hidden == (int(keep[0].sum()), int(keep[1].sum())) and small.hidden[0] <= 24
    obs, mask = (np.concatenate(x) for x in zip(*prune.card_decisions(net, "no_hearts", 10, seed=1), strict=True))
    with torch.no_grad():
        a, _ = net(torch.from_numpy(obs), torch.from_numpy(mask))
        b, _ = small(torch.from_numpy(obs), torch.from_numpy(mask))
    legal = torch.from_numpy(mask).bool()
    assert torch.allclose(torch.where(legal, a, 0.0), torch.where(legal, b, 0.0), atol=1e-5)
    best_a = compiled_greedy(flat_policy(net), obs, mask, 0.0)[0]
    best_b = compiled_greedy(flat_policy(small), obs, mask, 0.0)[0]
    assert np.array_equal(best_a, best_b)
    assert prune.greedy_changes(net, small, [(obs, mask)])[:2] == (0, len(obs))


@pytest.mark.parametrize("contract", ["trumps", "fantan", "no_last_two"])
def test_card_decisions_are_card_plays_with_a_choice(contract: str) -> None:
    net = PolicyNet(hidden=(8,)).eval()
    rows = list(prune.card_decisions(net, contract, games=4, seed=0))
    mask = np.concatenate([m for _, m in rows])
    assert len(mask) > 10 and mask[:, :52].any(1).all() and (mask.sum(1) > 1).all()


def test_prune_writes_the_smaller_network_and_records_it(tmp_path: Path) -> None:
    src = tmp_path / "src.pt"
    save_checkpoint(src, _net_with_dead_units(), "no_queens", {"lr": 0.1}, {"states": 7})
    prune.main([str(tmp_path / "out.pt"), str(src), "--games", "12", "--check-games", "6"])
    net, ckpt = load_checkpoint(tmp_path / "out.pt")
    info = ckpt["meta"]["pruned"]
    assert list(net.hidden) == info["kept"] and info["hidden"] == [32, 16] and info["check_changed"] == 0
    assert info["meta"] == {"states": 7} and ckpt["config"] == {"lr": 0.1} and ckpt["contract"] == "no_queens"


def test_prune_is_seeded(tmp_path: Path) -> None:
    """The same file, games and seed give the same network; another seed sees other deals."""
    src = tmp_path / "src.pt"
    save_checkpoint(src, _net_with_dead_units(), "no_king", {})
    for name, seed in (("a", "0"), ("b", "0"), ("c", "5")):
        prune.main([str(tmp_path / f"{name}.pt"), str(src), "--games", "6", "--check-games", "2", "--seed", seed])
    a, b, c = (torch.load(tmp_path / f"{n}.pt", weights_only=True) for n in "abc")
    assert all(torch.equal(a["state_dict"][k], b["state_dict"][k]) for k in a["state_dict"])
    assert a["meta"]["pruned"] == b["meta"]["pruned"]
    assert c["meta"]["pruned"]["decisions"] != a["meta"]["pruned"]["decisions"]


def test_prune_refuses_to_write_a_network_that_plays_differently(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    src = tmp_path / "src.pt"
    torch.manual_seed(3)
    save_checkpoint(src, PolicyNet(hidden=(32, 16)), "no_queens", {})

    def live_units_dropped(net: PolicyNet, decisions: object) -> tuple[list[np.ndarray], int]:
        return [np.arange(m) < 2 for m in net.hidden], 1

    monkeypatch.setattr(prune, "active_units", live_units_dropped)
    with pytest.raises(SystemExit, match=r"changes the greedy choice of \d+ of \d+ check decisions"):
        prune.main([str(tmp_path / "out.pt"), str(src), "--games", "4", "--check-games", "4"])
    assert not (tmp_path / "out.pt").exists()


def test_prune_refuses_an_empty_layer_and_a_bad_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    net = PolicyNet(hidden=(8, 4))
    with pytest.raises(ValueError, match=r"leave a hidden layer empty \(units kept per layer: \[8, 0\]\)"):
        prune.pruned(net, [np.ones(8, bool), np.zeros(4, bool)])
    (tmp_path / "bad.pt").write_text("not a checkpoint")
    with pytest.raises(SystemExit):
        prune.main([str(tmp_path / "out.pt"), str(tmp_path / "bad.pt")])
    assert "bad.pt" in capsys.readouterr().err


def test_top_units_keeps_the_most_used_units_and_dead_ones_last() -> None:
    """``top_units`` keeps the asked number of units per layer, never a dead unit while a live one is left out, and
    ranks a unit whose output nothing reads (its outgoing weights zeroed) below every unit that is read."""
    net = _net_with_dead_units()
    with torch.no_grad():
        prune._linears(net)[1].weight[:, 8] = 0.0  # layer 1's unit 8: live, but layer 2 never reads it
    keep, seen = prune.top_units(net, (20, 10), prune.card_decisions(net, "no_hearts", games=20, seed=0))
    assert seen > 100 and [int(k.sum()) for k in keep] == [20, 10]
    assert not keep[0][:9].any() and not keep[1][:4].any()
    small = prune.pruned(net, keep)
    assert small.hidden == (20, 10)
    for bad in ((20,), (0, 10), (33, 10)):
        with pytest.raises(ValueError, match=r"give one per hidden layer of the network \[32, 16\]"):
            prune.top_units(net, bad, [])


def test_prune_to_given_sizes_counts_the_changed_choices(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--hidden`` drops live units too: the check's changed choices are refused beyond ``--max-changed`` and
    recorded when allowed."""
    src = tmp_path / "src.pt"
    torch.manual_seed(4)
    save_checkpoint(src, PolicyNet(hidden=(32, 16)), "no_queens", {})
    args = [str(tmp_path / "out.pt"), str(src), "--games", "4", "--check-games", "4", "--hidden", "4", "2"]
    with pytest.raises(SystemExit, match=r"changes the greedy choice of \d+ of \d+ check decisions \(at most 0"):
        prune.main(args)
    assert not (tmp_path / "out.pt").exists()
    prune.main([*args, "--max-changed", "100000"])
    net, ckpt = load_checkpoint(tmp_path / "out.pt")
    info = ckpt["meta"]["pruned"]
    assert net.hidden == (4, 2) and info["kept"] == [4, 2] and info["ranked"] and info["max_changed"] == 100000
    assert 0 < info["check_changed"] <= info["check_decisions"]
    with pytest.raises(SystemExit):
        prune.main([*args[:-2], "64", "2"])
    assert "give one per hidden layer of the network [32, 16]" in capsys.readouterr().err
