"""Match-mode duplicate evaluation (barbu_env.evaluation, RULES.md R2, R6.5): every seating of a match board
gets the same deals, and the doubling breakdown adds up to the settlement."""

from __future__ import annotations

import pytest

from barbu_env import evaluation as ev
from barbu_env.agents import make
from barbu_env.engine.match import DealRecord
from barbu_env.env import env as make_env
from barbu_env.evaluation.boards import DOUBLING_OUTCOMES, make_board, settlement_by_outcome
from barbu_env.rules import Rules


def _deals_of(board_kwargs: dict, agents: list[str], seed: int) -> tuple[list[tuple[int, ...]], list[int]]:
    """The hands of every deal of one match (at each deal's start) and every action taken."""
    e = make_env(mode="match")
    players = [make(spec, seed=seed + s) for s, spec in enumerate(agents)]
    e.reset(**board_kwargs)
    m = e.unwrapped.match
    hands = [tuple(m.deal.hands)]
    actions: list[int] = []
    while not all(e.terminations.values()):
        agent = e.agent_selection
        a = players[e.unwrapped.agent_name_mapping[agent]].act(e, agent)
        actions.append(a)
        before = m.deal_no
        e.step(a)
        if m.deal_no != before and not m.is_over:
            hands.append(tuple(m.deal.hands))
    return hands, actions


def test_every_seating_of_a_match_board_gets_the_same_deals():
    """R2.1: a match board is a seed; deal k's hands depend on it and k only, never on the agents' choices."""
    board = make_board(3, 0, "match", 1, Rules())
    a_hands, a_actions = _deals_of(board.reset_kwargs(), ["random"] * 4, seed=10)
    b_hands, b_actions = _deals_of(board.reset_kwargs(), ["random", "heuristic", "random", "heuristic"], seed=20)
    assert a_actions != b_actions  # different declarations, doubles and plays ...
    assert len(a_hands) == len(b_hands) == 28
    assert a_hands == b_hands  # ... and the same 28 deals
    other = make_board(3, 0, "match", 2, Rules())
    assert _deals_of(other.reset_kwargs(), ["random"] * 4, seed=10)[0][0] != a_hands[0]


def test_settlement_by_outcome_on_the_r6_5_example():
    """R6.5's example: B (seat 1) doubled C (seat 2); B made -6, C 0 -> B -12 ... from C's side, +6 per direction."""
    rec = DealRecord(0, 0, "no_queens", (0, 0b100, 0, 0), (0, -6, 0, -18), (0, -6, 6, 0), (0, -12, 6, -18))
    assert settlement_by_outcome(rec, 1) == {"doubled": -6, "was_doubled": 0, "redoubled": 0}
    assert settlement_by_outcome(rec, 2) == {"doubled": 0, "was_doubled": 6, "redoubled": 0}
    redoubled = DealRecord(0, 0, "no_queens", (0, 0b100, 0b10, 0), (0, -6, 0, -18), (0, -12, 12, 0), (0, -18, 12, -18))
    assert settlement_by_outcome(redoubled, 1) == {"doubled": 0, "was_doubled": 0, "redoubled": -12}
    assert settlement_by_outcome(redoubled, 3) == dict.fromkeys(DOUBLING_OUTCOMES, 0)


@pytest.mark.slow
def test_match_mode_reports_settlement_by_doubling_outcome():
    out = ev.evaluate(["random", "random"], mode="match", boards=2, seed=4)
    for r in out["boards"]:
        assert set(r["by_doubling"]) == set(DOUBLING_OUTCOMES)
        for a in range(2):
            assert r["settlement"][a] == pytest.approx(sum(r["by_doubling"][k][a] for k in DOUBLING_OUTCOMES))
    # the breakdown adds up to the settlements the engine recorded, deal by deal
    e = make_env(mode="match")
    board = make_board(4, 0, "match", 0, Rules())
    players = [make("random", seed=s) for s in range(4)]
    e.reset(**board.reset_kwargs())
    while not all(e.terminations.values()):
        agent = e.agent_selection
        e.step(players[e.unwrapped.agent_name_mapping[agent]].act(e, agent))
    for rec in e.unwrapped.match.records:
        assert [sum(settlement_by_outcome(rec, s).values()) for s in range(4)] == list(rec.settlement)
    assert any(any(rec.settlement) for rec in e.unwrapped.match.records)
    assert set(out["by_doubling"]) == {"settlement", *DOUBLING_OUTCOMES}
    assert "Doubling (R6.5 settlement" in ev.markdown(out)
