"""barbu-compare (barbu_env.evaluation.compare): two barbu-eval runs on the same boards (or several such pairs,
pooled), the first agent's margins side by side and the per-board difference's interval; runs on other boards are
refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from barbu_env import evaluation as ev
from barbu_env.evaluation.compare import compare, main, pooled, read_results


def _run(out: Path, first: str, *extra: str, opponent: str = "random", seed: str = "3") -> Path:
    rc = ev.main(["--agents", first, opponent, "--contract", "no_queens", "trumps", "--deals", "12", "--seed", seed,
                  "--out", str(out), "--no-progress", *extra])  # fmt: skip
    assert rc == 0
    return out


def test_difference_is_taken_board_by_board(tmp_path, capsys):
    a = _run(tmp_path / "a", "heuristic")
    b = _run(tmp_path / "b", "random", "--deals", "8")  # fewer boards: the 8 in common are compared
    data_a, data_b = read_results(a), read_results(b)
    rows = compare(data_a, data_b)
    for name in ("no_queens", "trumps"):
        xs = {r["board"]: r["rel"][0] for r in data_a["boards"] if r["contract"].split(":")[0] == name}
        ys = {r["board"]: r["rel"][0] for r in data_b["boards"] if r["contract"].split(":")[0] == name}
        common = sorted(xs.keys() & ys.keys())
        assert rows[name]["boards"] == len(common) == 8
        want = ev.confidence_interval([xs[k] - ys[k] for k in common])
        assert rows[name]["diff"]["mean"] == pytest.approx(want["mean"])
        assert rows[name]["diff"]["half_width"] == pytest.approx(want["half_width"])
        assert rows[name]["a"]["mean"] == pytest.approx(sum(xs[k] for k in common) / 8)
    main([str(a), str(b / "results.json")])
    out = capsys.readouterr().out
    assert "A = heuristic, B = random, each vs random" in out and "| trumps | 8 |" in out


def test_runs_on_other_boards_or_opponents_are_refused(tmp_path):
    a = _run(tmp_path / "a", "heuristic")
    with pytest.raises(ValueError, match="differ in seed"):
        compare(read_results(a), read_results(_run(tmp_path / "s", "random", seed="4")))
    with pytest.raises(ValueError, match=r"differ in opponents \(\['random'\] and \['heuristic'\]\)"):
        compare(read_results(a), read_results(_run(tmp_path / "o", "random", opponent="heuristic")))
    with pytest.raises(ValueError, match="differ in rules"):
        compare(read_results(a), read_results(_run(tmp_path / "r", "random", "--doubling", "classic")))
    data = read_results(a)
    with pytest.raises(ValueError, match="differ in mode"):
        compare(data, {**data, "config": {**data["config"], "mode": "match"}})


def test_match_mode_runs_are_paired_match_by_match(tmp_path, capsys):
    """Match mode: a board is a match seed (the same 28 hands for both runs), compared in one row ``match``."""

    def run(out: Path, first: str, matches: str) -> Path:
        rc = ev.main(["--agents", first, "random", "--mode", "match", "--matches", matches, "--seed", "5", "--out",
                      str(out), "--no-progress"])  # fmt: skip
        assert rc == 0
        return out

    a, b = run(tmp_path / "a", "heuristic", "4"), run(tmp_path / "b", "random", "3")
    data_a, data_b = read_results(a), read_results(b)
    rows = compare(data_a, data_b)
    assert list(rows) == ["match"] and rows["match"]["boards"] == 3
    xs = {r["board"]: r["rel"][0] for r in data_a["boards"]}
    ys = {r["board"]: r["rel"][0] for r in data_b["boards"]}
    want = ev.confidence_interval([xs[k] - ys[k] for k in sorted(ys)])
    assert rows["match"]["diff"]["mean"] == pytest.approx(want["mean"])
    assert rows["match"]["diff"]["half_width"] == pytest.approx(want["half_width"])
    main([str(a), str(b)])
    assert "| match | 3 |" in capsys.readouterr().out
    with pytest.raises(ValueError, match="differ in seed"):
        compare(data_a, {**data_b, "config": {**data_b["config"], "seed": 6}})


def test_missing_or_corrupt_files_are_named(tmp_path):
    with pytest.raises(SystemExit, match="not found"):
        main([str(tmp_path / "none"), str(tmp_path / "none")])
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"config": {}}))
    with pytest.raises(SystemExit, match=r"bad\.json.*not a barbu-eval results file"):
        main([str(bad), str(bad)])


def test_several_pairs_are_pooled_board_by_board(tmp_path, capsys):
    """Pairs on other seeds: each pair's table, then one over every pair's boards (each board's difference once);
    an odd number of runs, a pair on different boards and pairs against other opponents or rules are refused."""
    a3, b3 = _run(tmp_path / "a3", "heuristic"), _run(tmp_path / "b3", "random")
    a4, b4 = _run(tmp_path / "a4", "heuristic", seed="4"), _run(tmp_path / "b4", "random", "--deals", "8", seed="4")
    runs = [(read_results(a3), read_results(b3)), (read_results(a4), read_results(b4))]
    rows = pooled(runs)
    for name in ("no_queens", "trumps"):
        diffs = []
        for a, b in runs:
            ys = {r["board"]: r["rel"][0] for r in b["boards"] if r["contract"].split(":")[0] == name}
            diffs += [r["rel"][0] - ys[r["board"]] for r in a["boards"]
                      if r["contract"].split(":")[0] == name and r["board"] in ys]  # fmt: skip
        want = ev.confidence_interval(diffs)
        assert rows[name]["boards"] == len(diffs) == 12 + 8
        assert rows[name]["diff"]["mean"] == pytest.approx(want["mean"])
        assert rows[name]["diff"]["half_width"] == pytest.approx(want["half_width"])
    main([str(a3), str(b3), str(a4), str(b4)])
    out = capsys.readouterr().out
    assert "(seed 3," in out and "(seed 4," in out and "pooled over the 2 pairs (seeds 3, 4)" in out
    assert "| trumps | 20 |" in out
    with pytest.raises(SystemExit, match=r"in pairs.*got 3"):
        main([str(a3), str(b3), str(a4)])
    with pytest.raises(SystemExit, match="differ in seed"):
        main([str(a3), str(b3), str(a4), str(b3)])
    h3, hh3 = (
        _run(tmp_path / "h3", "heuristic", opponent="heuristic"),
        _run(tmp_path / "hh3", "random", opponent="heuristic"),
    )
    with pytest.raises(SystemExit, match=r"pairs 1 and 2 differ in opponents \(\['random'\] and \['heuristic'\]\)"):
        main([str(a3), str(b3), str(h3), str(hh3)])
    d4, dd4 = (
        _run(tmp_path / "d4", "heuristic", "--doubling", "classic", seed="4"),
        _run(tmp_path / "dd4", "random", "--doubling", "classic", seed="4"),
    )
    with pytest.raises(SystemExit, match="pairs 1 and 2 differ in rules"):
        main([str(a3), str(b3), str(d4), str(dd4)])
