"""Duplicate evaluation (barbu_env.evaluation): seat rotation, paired CIs, determinism, the CLI."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from barbu_env import evaluation as ev
from barbu_env.cards import SUITS
from barbu_env.rules import Rules

ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- statistics
def test_confidence_interval_on_known_data():
    ci = ev.confidence_interval([1, 2, 3, 4, 5])
    sd = math.sqrt(2.5)
    assert ci["n"] == 5 and ci["mean"] == 3 and ci["sd"] == pytest.approx(sd)
    assert ci["half_width"] == pytest.approx(2.776445 * sd / math.sqrt(5), rel=1e-4)  # t(0.975, 4)
    assert ci["low"] == pytest.approx(3 - ci["half_width"]) and ci["high"] == pytest.approx(3 + ci["half_width"])
    one = ev.confidence_interval([2.0])
    assert one["mean"] == 2 and math.isnan(one["half_width"])
    with pytest.raises(ValueError, match="at least one board"):
        ev.confidence_interval([])


@pytest.mark.parametrize(
    "df, q", [(1, 12.70620), (2, 4.30265), (3, 3.18245), (5, 2.57058), (10, 2.22814), (30, 2.04227), (10**6, 1.95996)]
)
def test_t_quantile_matches_tables(df, q):
    assert ev.t_quantile(0.975, df) == pytest.approx(q, abs=1e-4)


def test_t_quantile_rejects_bad_input():
    with pytest.raises(ValueError):
        ev.t_quantile(0.3, 5)
    with pytest.raises(ValueError):
        ev.t_quantile(0.975, 0)


# ----------------------------------------------------------------------------- duplicate rotation
@pytest.mark.parametrize("lineup, n_seatings", [("1v3", 4), ("2v2", 2), ("4", 4)])
def test_each_agent_holds_each_hand_exactly_once(lineup, n_seatings):
    """Over the seatings of a board, each agent of the line-up (A in 1v3; both in 2v2; all four in
    '4') sits exactly once in each seat, i.e. plays each hand once."""
    s = ev.seatings(ev.LINEUPS[lineup])
    assert len(s) == n_seatings
    for agent in range(max(ev.LINEUPS[lineup]) + 1):
        seats = [seat for seating in s for seat in range(4) if seating[seat] == agent]
        if lineup == "1v3" and agent == 1:
            assert sorted(seats) == sorted(list(range(4)) * 3)  # B: each hand three times
        else:
            assert sorted(seats) == [0, 1, 2, 3]


def test_boards_replay_the_same_hands_in_every_seating():
    out = ev.evaluate(["random", "heuristic"], contracts="no_hearts", boards=3, seed=4)
    for r in out["boards"]:
        games = r["games"]
        assert [g["seating"] for g in games] == [list(s) for s in ev.seatings(ev.LINEUPS["1v3"])]
        # one board = one deal: every seating plays the same contract total (R4, E5)
        assert {sum(g["scores"]) for g in games} == {-30}
        # 1 vs 3: A's per-board number and 3 x B's cancel (relative to the table)
        assert r["rel"][0] + 3 * r["rel"][1] == pytest.approx(0)


def test_deal_boards_fix_declarer_and_contract_parameter():
    rules = Rules(doubling="off")
    hands0, decl0, text0 = ev.deal_board(7, 2, "trumps", rules)
    hands1, decl1, text1 = ev.deal_board(7, 2, "no_queens", rules)
    assert hands0 == hands1 and decl0 == decl1 == 2  # same board, same hands for every contract
    assert text0.startswith("trumps:") and text0[-1] in SUITS and text1 == "no_queens"
    assert ev.deal_board(7, 3, "fantan", rules)[2].startswith("fantan:")
    assert ev.deal_board(8, 2, "trumps", rules)[0] != hands0


def test_identical_agents_score_exactly_zero():
    """Duplicate removes the luck of the cards: a deterministic agent against itself scores exactly 0
    relative to the table on every board."""
    out = ev.evaluate(["heuristic", "heuristic"], contracts=["no_queens", "trumps"], boards=4, seed=1)
    for r in out["boards"]:
        assert r["rel"] == pytest.approx([0.0, 0.0], abs=1e-12)
    assert out["agents"] == ["heuristic#1", "heuristic#2"]


def test_deal_mode_doubling_defaults_off_and_can_be_turned_on():
    out = ev.evaluate(["random", "random"], contracts="no_tricks", boards=1)
    assert out["config"]["rules"]["doubling"] == "off"
    out = ev.evaluate(["random", "random"], contracts="no_tricks", boards=1, doubling="classic")
    assert out["config"]["rules"]["doubling"] == "classic"


# ----------------------------------------------------------------------------- determinism
def test_same_seed_same_results_whatever_the_workers():
    kw = dict(contracts=["no_king", "fantan"], boards=3, seed=5)
    a = ev.evaluate(["pimc:samples=2", "random"], **kw)
    b = ev.evaluate(["pimc:samples=2", "random"], **kw)
    c = ev.evaluate(["pimc:samples=2", "random"], workers=2, **kw)
    assert a == b == c
    d = ev.evaluate(["pimc:samples=2", "random"], contracts=["no_king", "fantan"], boards=3, seed=6)
    assert d["boards"] != a["boards"]


def test_match_mode_win_rates_and_totals():
    out = ev.evaluate(["heuristic", "random"], mode="match", boards=1, seed=2)
    r = out["boards"][0]
    assert len(r["games"]) == 4
    assert r["win"][0] + 3 * r["win"][1] == pytest.approx(1)  # one win (shared on ties) per game
    assert 0 <= out["contracts"]["match"]["agents"]["heuristic"]["win_rate"]["mean"] <= 1
    assert set(out["by_contract"]) == {"no_tricks", "no_hearts", "no_queens", "no_king", "no_last_two", "trumps",
                                       "fantan"}  # fmt: skip
    assert out["config"]["rules"]["doubling"] == "classic"


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(agents=["random"]), ["needs 2 agents"]),
        (dict(agents=["random", "nobody"]), ["unknown agent"]),
        (dict(agents=["random", "random"], contracts="no_spades"), ["unknown contract", "no_queens"]),
        (dict(agents=["random", "random"], mode="tournament"), ["bad mode"]),
        (dict(agents=["random", "random"], boards=0), ["boards"]),
        (dict(agents=["random", "random"], lineup="3v1"), ["unknown line-up", "1v3"]),
    ],
)
def test_bad_arguments_are_clear_errors(kwargs, words):
    with pytest.raises(ValueError) as e:
        ev.evaluate(**kwargs)
    for w in words:
        assert w in str(e.value)


# ----------------------------------------------------------------------------- CLI
def test_cli_writes_markdown_json_and_png(tmp_path, capsys):
    out = tmp_path / "eval"
    rc = ev.main(["--agents", "heuristic", "random", "--contract", "all", "--deals", "2", "--seed", "0",
                  "--out", str(out), "--no-progress"])  # fmt: skip
    assert rc == 0
    md = (out / "results.md").read_text()
    assert "| no_tricks | 2 |" in md and "| fantan | 2 |" in md and "**all**" in md
    data = json.loads((out / "results.json").read_text())
    assert set(data["contracts"]) == set(ev.SEVEN) and data["agents"] == ["heuristic", "random"]
    assert (out / "results.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "heuristic" in capsys.readouterr().out


def test_cli_match_mode_and_rule_pass_through(tmp_path):
    rc = ev.main(["--agents", "random", "heuristic", "--mode", "match", "--matches", "1", "--lineup", "2v2",
                  "--rule", "schedule=rotate", "--out", str(tmp_path), "--no-progress"])  # fmt: skip
    assert rc == 0
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["config"]["rules"]["schedule"] == "rotate" and data["config"]["lineup"] == "2v2"
    assert len(data["boards"][0]["games"]) == 2


def test_cli_reports_bad_agents(capsys):
    assert ev.main(["--agents", "heuristic", "grandmaster", "--deals", "1", "--no-progress"]) == 2
    assert "unknown agent 'grandmaster'" in capsys.readouterr().err


def test_results_are_numbers():
    out = ev.evaluate(["random", "heuristic"], contracts="no_last_two", boards=2, seed=0)
    e = out["contracts"]["no_last_two"]["agents"]["heuristic"]
    assert all(np.isfinite([e["mean"], e["half_width"], e["raw_mean"]]))


# ----------------------------------------------------------------------------- the duplicate core
def test_core_margins_from_any_player_of_boards():
    """The core turns any PlayFn's games into margins: here every seat scores its own seat number, so in
    1v3 agent A (seats 0..3 once each) scores the table mean and the margin is 0; with scores 10 for
    the seat of agent 0 and 0 elsewhere, A's margin is 10 - 10/4 and B's is -10/4."""
    rules = Rules(doubling="off")
    boards = ev.make_boards(3, ["no_queens"], 2, rules)
    seats = ev.seatings(ev.LINEUPS["1v3"])

    def play(bs, ss):
        for b in reversed(bs):  # any order
            yield b, [ev.Game(s, [10.0 if s[seat] == 0 else 0.0 for seat in range(4)]) for s in ss]

    out = list(ev.duplicate(boards, seats, play, 2))
    assert [b.index for b, _ in out] == [1, 0]
    for _, r in out:
        assert r["rel"] == pytest.approx([7.5, -2.5]) and r["raw"] == pytest.approx([10.0, 0.0])
    with pytest.raises(ValueError, match="seatings"):
        list(ev.duplicate(boards, seats, lambda bs, ss: [(bs[0], [])], 2))


def test_resuming_from_finished_boards_gives_the_full_run():
    kw = dict(contracts=["no_hearts", "fantan"], boards=3, seed=2)
    full = ev.evaluate(["heuristic", "random"], **kw)
    part = ev.evaluate(["heuristic", "random"], **{**kw, "boards": 2})
    assert part["boards"] == [r for r in full["boards"] if r["board"] < 2]
    resumed = ev.evaluate(["heuristic", "random"], finished=part["boards"][1:], **kw)
    assert resumed == full and not full["partial"] and full["finished"] == full["total"] == 6


def test_partial_summaries_mark_what_is_missing():
    cfg, _ = ev.make_config(["heuristic", "random"], contracts=["no_hearts", "no_king"], boards=2)
    full = ev.evaluate(["heuristic", "random"], contracts=["no_hearts", "no_king"], boards=2)
    s = ev.summarise(cfg, full["boards"][:1], 4)
    assert s["partial"] and s["finished"] == 1 and s["total"] == 4
    assert s["contracts"]["no_king"] == {"boards": 0, "agents": {}} and "overall" not in s
    md = ev.markdown(s)
    assert "PARTIAL RESULTS" in md and "| no_king | 0 | — | — |" in md
    assert ev.markdown(ev.summarise(cfg, [], 4)).count("—") == 4


# ----------------------------------------------------------------------------- checkpoints in evaluation
def test_checkpoint_on_a_contract_it_has_no_network_for_is_refused():
    """Issue 15.4: a No queens checkpoint evaluated on Trumps would play as its fallback heuristic."""
    pytest.importorskip("torch")
    with pytest.raises(ValueError, match=r"no network for \['trumps'\].*fallback 'heuristic'"):
        ev.evaluate(["checkpoints/no_queens.pt", "heuristic"], contracts="trumps", boards=1)
    spec = "checkpoints/no_queens.pt:bidding=heuristic"
    cfg, made = ev.make_config([spec, "heuristic"], mode="match", boards=1)
    (note,) = ev.fallback_notes(cfg, made)
    assert f"{spec!r} hands these decisions to 'heuristic': declaration, doubling" in note
    assert "card play of trumps" in note and "card play of no_queens" not in note
    cfg, made = ev.make_config(["checkpoints/no_queens.pt", "heuristic"], mode="match", boards=1)
    (note,) = ev.fallback_notes(cfg, made)  # bidding=auto: the networks of checkpoints/bidding/ bid
    assert "declaration" not in note and "doubling" not in note and "card play of trumps" in note
    cfg, made = ev.make_config(["checkpoints", "heuristic"], contracts="all", boards=1)
    assert ev.fallback_notes(cfg, made) == []


def test_cli_refuses_a_checkpoint_for_another_contract(capsys):
    pytest.importorskip("torch")
    rc = ev.main(["--agents", "checkpoints/no_queens.pt", "heuristic", "--contract", "trumps", "--deals", "1",
                  "--no-progress"])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "no network for ['trumps']" in err


# ----------------------------------------------------------------------------- CLI: bad arguments, before the run
@pytest.mark.parametrize("where", ["file", "below_file", "proc"])
def test_cli_out_that_cannot_be_a_folder_fails_before_the_run(tmp_path, capsys, monkeypatch, where):
    """Issue 15.2: the output path is checked before any board is played, with a one-line error."""
    from barbu_env.evaluation import cli

    (tmp_path / "f").write_text("x")
    out = {"file": tmp_path / "f", "below_file": tmp_path / "f" / "sub", "proc": Path("/proc/barbu_eval_x")}[where]
    monkeypatch.setattr(cli, "run", lambda *a, **k: pytest.fail("the run started"))
    rc = ev.main(["--agents", "heuristic", "random", "--deals", "1", "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "bad --out" in err and str(out) in err


@pytest.mark.parametrize("flags", [["--deals", "5"], ["--contract", "trumps"], ["--deals", "5", "--contract", "all"]])
def test_cli_match_mode_refuses_deal_mode_flags(flags, capsys):
    """Issue 15.10: match mode plays whole matches; --deals and --contract would be silently ignored."""
    with pytest.raises(SystemExit) as e:
        ev.main(["--agents", "heuristic", "random", "--mode", "match", *flags, "--no-progress"])
    assert e.value.code == 2 and "to deal mode only" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        ev.main(["--agents", "heuristic", "random", "--matches", "3", "--no-progress"])


def test_cli_resume_checks_what_it_resumes(tmp_path, capsys):
    args = ["--agents", "heuristic", "random", "--contract", "no_king", "--seed", "3", "--out", str(tmp_path),
            "--no-progress"]  # fmt: skip
    assert ev.main([*args, "--resume", "--deals", "2"]) == 2
    assert "nothing to resume" in capsys.readouterr().err
    assert ev.main([*args, "--deals", "2"]) == 0
    assert ev.main([*args, "--resume", "--deals", "3"]) == 0
    resumed = json.loads((tmp_path / "results.json").read_text())
    assert resumed == ev.evaluate(["heuristic", "random"], contracts="no_king", boards=3, seed=3)
    assert ev.main([*args, "--seed", "4", "--resume", "--deals", "3"]) == 2
    assert "different ['seed']" in capsys.readouterr().err
    rows = (tmp_path / "results.csv").read_text().splitlines()
    assert rows[0] == "contract,board,agent,rel,raw" and len(rows) == 1 + 3 * 2


# ----------------------------------------------------------------------------- Ctrl-C
def _interrupt(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run barbu-eval in a subprocess, send SIGINT once its progress bar shows a finished board."""
    import re
    import threading
    import time

    cmd = [sys.executable, "-m", "barbu_env.evaluation", *args]
    # the child starts with Ctrl-C's default action even where this process ignores it (a background job of a
    # non-interactive shell does, and a Python started so never raises KeyboardInterrupt)
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env={**os.environ, "PYTHONPATH": str(ROOT)},
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    err = bytearray()

    def read() -> None:
        while chunk := os.read(p.stderr.fileno(), 4096):
            err.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.time() + 240
    while not re.search(rb"\| *[1-9]\d*/\d+", bytes(err)) and time.time() < deadline and p.poll() is None:
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    out = p.stdout.read()
    p.wait(120)
    reader.join(10)
    return subprocess.CompletedProcess(cmd, p.returncode, out.decode(), bytes(err).decode(errors="replace"))


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_writes_finished_boards_and_resume_completes_them(tmp_path, workers):
    """Issue 15.3: SIGINT stops the run without a traceback, writes the finished boards marked partial,
    says how to resume; --resume then gives exactly the results of an uninterrupted run."""
    out = tmp_path / "out"
    agent = "pimc:samples=2,rollouts=python"  # slow enough that 400 boards cannot finish before the interrupt
    args = ["--agents", agent, "random", "--contract", "no_queens", "--seed", "1", "--out", str(out),
            "--workers", str(workers)]  # fmt: skip
    r = _interrupt([*args, "--deals", "400"], tmp_path)
    assert r.returncode == 130, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and "KeyboardInterrupt" not in r.stderr
    assert "--resume" in r.stderr and "PARTIAL RESULTS" in r.stdout
    data = json.loads((out / "results.json").read_text())
    assert data["partial"] and 1 <= data["finished"] < 400 and data["total"] == 400
    assert data["finished"] == len(data["boards"]) == data["contracts"]["no_queens"]["boards"]
    keep = sorted(b["board"] for b in data["boards"])[:3]
    n = max(keep) + 2  # resume a shorter run: the finished boards below n are kept, the rest played
    assert ev.main([*args, "--deals", str(n), "--resume", "--no-progress"]) == 0
    resumed = json.loads((out / "results.json").read_text())
    fresh = ev.evaluate([agent, "random"], contracts="no_queens", boards=n, seed=1)
    assert resumed == fresh


@pytest.mark.parametrize("engine", ["python", "batched"])
def test_workers_of_a_script_without_main_guard_stop_the_run(tmp_path, engine):
    """A script that starts workers outside ``if __name__ == "__main__":`` makes each spawned worker run it again and
    fail: the run stops with an error that says so, instead of waiting for workers that never come."""
    script = tmp_path / "unguarded.py"
    script.write_text("from barbu_env.evaluation import evaluate\n"
                      f"evaluate(['heuristic', 'random'], boards=2, workers=2, engine={engine!r})\n")  # fmt: skip
    if engine == "batched":  # two parts, so that the batched engine starts workers
        script.write_text("import barbu_env.evaluation.batched as b\nb.PART = 1\n" + script.read_text())
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=180,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert r.returncode == 1
    assert "RuntimeError: a worker process of the evaluation stopped" in r.stderr
    assert "'if __name__ == \"__main__\":' guard" in r.stderr


def test_run_takes_any_player_of_boards():
    """A batched runner plugs in as ``play``: the summary is built from its games alone."""
    cfg, _ = ev.make_config(["heuristic", "random"], contracts=["no_queens", "no_king"], boards=3)

    def play(bs, ss):
        for b in bs:
            yield b, [ev.Game(s, [float(b.index) if s[seat] == 0 else 0.0 for seat in range(4)]) for s in ss]

    out = ev.run(cfg, play=play)
    assert [r["board"] for r in out["boards"]] == [0, 1, 2, 0, 1, 2]
    assert out["contracts"]["no_king"]["agents"]["heuristic"]["mean"] == pytest.approx(0.75)  # mean of 0, .75, 1.5


def test_save_games_writes_a_record_per_game_that_replays(tmp_path, capsys):
    """``--save-games DIR``: one record per game (board x seating), each replayed and checked by the engine,
    its scores those of the game played (R8.1); it plays on the python engine."""
    from barbu_env import records
    from barbu_env.evaluation.cli import main

    games = tmp_path / "games"
    rc = main(["--agents", "heuristic", "random", "--contract", "no_queens", "--deals", "2", "--save-games",
               str(games), "--out", str(tmp_path / "out"), "--no-progress"])  # fmt: skip
    assert rc == 0
    assert "engine: python (--save-games" in capsys.readouterr().err
    files = sorted(games.glob("*.json"))
    assert len(files) == 2 * 4  # two boards, four seatings of 1 v 3
    for f in files:
        rec = records.load(f)  # raises on any inconsistency
        assert sorted(rec.players) == ["heuristic", "random", "random", "random"]
        assert sum(rec.deals[0].scores) == -24  # No queens: four queens at -6 (R4)


def test_save_games_refuses_the_batched_engine(tmp_path, capsys):
    from barbu_env.evaluation.cli import main

    rc = main(["--agents", "heuristic", "random", "--deals", "1", "--engine", "batched", "--save-games",
               str(tmp_path / "g")])  # fmt: skip
    assert rc == 2
    assert "--save-games records games through the env" in capsys.readouterr().err
