"""Duplicate evaluation (barbu_env.evaluation): seat rotation, paired CIs, determinism, the CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from barbu_env import evaluation as ev
from barbu_env.cards import SUITS
from barbu_env.rules import Rules


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
