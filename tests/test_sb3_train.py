"""``training.sb3_train``: MaskablePPO on the batched engine's vector env, saved, resumed and evaluated (tiny
budgets)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from training.sb3_train import main

TINY = ["--contracts", "no_queens", "--num-envs", "32", "--n-steps", "8", "--batch", "256", "--hidden", "32"]


def test_train_resume_evaluate(tmp_path, capsys):
    out = tmp_path / "run"
    main([*TINY, "--timesteps", "512", "--out", str(out), "--eval-boards", "4"])
    run = json.loads((out / "no_queens" / "run.json").read_text())
    assert run["env_version"] == "barbu_v0" and run["timesteps"] >= 512 and run["rule_options"] == {"doubling": "off"}
    assert run["evaluation"]["boards"] == 4 and run["evaluation"]["half_width"] > 0
    assert "against 3 heuristic players (4 duplicate boards" in capsys.readouterr().out
    main([*TINY, "--timesteps", "1024", "--out", str(out), "--resume"])
    again = json.loads((out / "no_queens" / "run.json").read_text())
    assert again["timesteps"] >= 1024 and again["seconds"] >= run["seconds"]
    assert (out / "no_queens" / "progress.csv").is_file()
    assert (out / "no_queens" / f"progress_from_{run['timesteps']}.csv").is_file()


def test_deadline_and_refusals(tmp_path):
    main([*TINY, "--timesteps", "10000000", "--minutes", "0.002", "--out", str(tmp_path)])
    assert json.loads((tmp_path / "no_queens" / "run.json").read_text())["timesteps"] < 10_000_000
    main(["--contracts", "no_queens", "no_king", *TINY[2:], "--timesteps", "300", "--out", str(tmp_path), "--resume"])
    assert (tmp_path / "no_king" / "model.zip").is_file()  # resumed No queens, started No King
    with pytest.raises(SystemExit, match="no model to continue"):
        main([*TINY, "--out", str(tmp_path / "none"), "--resume"])
    with pytest.raises(ValueError, match="no batched form"):
        main([*TINY, "--out", str(tmp_path / "x"), "--opponents", "pimc"])


def test_self_play_refreshes_the_frozen_copies(tmp_path, monkeypatch):
    """``--opponents self self heuristic``: two seats play frozen copies of the learner (on the batched engine); every
    ``--refresh`` decisions the learner is copied into the pool (the newest ``--pool`` kept) and each self seat draws
    a copy from it; each piece plays fresh deals; the third seat is the heuristic."""
    import training.sb3_train as sb3_train

    built, real = [], sb3_train.make_env
    monkeypatch.setattr(sb3_train, "make_env", lambda args, c, o, specs, seed: built.append((specs, seed)) or real(
        args, c, o, specs, seed))  # fmt: skip
    out = tmp_path / "self"
    main([*TINY, "--timesteps", "1000", "--refresh", "256", "--pool", "2", "--opponents", "self", "self", "heuristic",
          "--out", str(out)])  # fmt: skip
    pool = out / "no_queens" / "pool"
    assert built[0] == (["random"], 0)  # the untrained model's first env
    assert len(built) == 5 and len({seed for _, seed in built[1:]}) == 4  # 256 decisions a piece: 4 pieces
    copies = [f"{t:012d}.zip" for t in (0, 256, 512, 768)]
    for k, (specs, _) in enumerate(built[1:]):
        assert specs[2] == "heuristic"
        drawn = [Path(spec.removeprefix("sb3:source=")) for spec in specs[:2]]
        assert all(d.parent == pool and d.name in copies[max(0, k - 1) : k + 1] for d in drawn), (k, specs)
    assert sorted(p.name for p in pool.iterdir()) == copies[2:]  # the newest two kept
    assert json.loads((out / "no_queens" / "run.json").read_text())["timesteps"] >= 1000
    for bad in (["--refresh", "0"], ["--pool", "0"]):
        with pytest.raises(SystemExit):
            main([*TINY, *bad, "--out", str(out)])
