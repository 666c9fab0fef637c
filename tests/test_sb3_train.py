"""``training.sb3_train``: MaskablePPO on the batched engine's vector env, saved, resumed and evaluated (tiny
budgets)."""

from __future__ import annotations

import json

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


def test_self_play_refreshes_the_frozen_copy(tmp_path, monkeypatch):
    """``--opponents self self heuristic``: two seats play a frozen copy of the learner (``opponent.zip``, on the
    batched engine), taken again every ``--refresh`` decisions, each piece on fresh deals; the third the heuristic."""
    import training.sb3_train as sb3_train

    built, real = [], sb3_train.make_env
    monkeypatch.setattr(sb3_train, "make_env", lambda args, c, o, specs, seed: built.append((specs, seed)) or real(
        args, c, o, specs, seed))  # fmt: skip
    out = tmp_path / "self"
    main([*TINY, "--timesteps", "700", "--refresh", "256", "--opponents", "self", "self", "heuristic",
          "--out", str(out)])  # fmt: skip
    copy = f"sb3:source={out / 'no_queens' / 'opponent.zip'}"
    assert built[0] == (["random"], 0)  # the untrained model's first env
    assert [specs for specs, _ in built[1:]] == [[copy, copy, "heuristic"]] * 3  # 256 decisions a piece: 3 pieces
    assert len({seed for _, seed in built[1:]}) == 3 and (out / "no_queens" / "opponent.zip").is_file()
    assert json.loads((out / "no_queens" / "run.json").read_text())["timesteps"] >= 700
    with pytest.raises(SystemExit):
        main([*TINY, "--refresh", "0", "--out", str(out)])
