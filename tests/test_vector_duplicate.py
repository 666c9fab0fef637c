"""Duplicate games on the batched engine (``barbu_env.vector.duplicate``) against ``barbu-eval``'s games.

``evaluate`` plays every board of every contract in every seating through the env; ``play_games`` gets the
same boards (``deal_board``), seatings and agent seeds (``game_seed``) and must return the same deal scores
for every game (R8.1), hence the same per-board numbers, for heuristic and random players, with doubling off
(barbu-eval's deal-mode default) and classic (R6).
"""

from __future__ import annotations

import numpy as np
import pytest

from barbu_env.evaluation import evaluate
from barbu_env.evaluation.boards import deal_board, game_seed, lineup_of, seatings
from barbu_env.rules import Rules
from barbu_env.vector.duplicate import play_games

#: Games stepped at once per contract (small: several batches per contract).
BATCH = 16


def batched_games(result: dict, rules: Rules) -> np.ndarray:
    """The games of ``evaluate``'s result, replayed by ``play_games``: scores [games, 4] in the result's order."""
    cfg = result["config"]
    names = cfg["contracts"]
    seats = seatings(lineup_of(cfg["lineup"], len(cfg["agents"])))
    hands, declarers, contracts, players, seeds = [], [], [], [], []
    for r in result["boards"]:
        ci, b = names.index(r["contract"].split(":")[0]), r["board"]
        h, d, text = deal_board(cfg["seed"], b, names[ci], rules)
        assert text == r["contract"]
        for k, seating in enumerate(seats):
            hands.append(h)
            declarers.append(d)
            contracts.append(text)
            players.append([cfg["agents"][seating[s]] for s in range(4)])
            seeds.append([game_seed(cfg["seed"], ci, b, k, s) for s in range(4)])
    return play_games(rules, hands, declarers, contracts, players, seeds, batch=BATCH)


@pytest.mark.parametrize(
    ("agents", "doubling"),
    [(["heuristic", "random"], "off"), (["random", "heuristic"], "classic"), (["heuristic", "heuristic"], "classic")],
)
def test_same_scores_as_barbu_eval(agents, doubling):
    rules = Rules(doubling=doubling)
    result = evaluate(agents, contracts="all", boards=5, seed=4, doubling=doubling, engine="python")
    want = np.array([g["scores"] for r in result["boards"] for g in r["games"]])
    np.testing.assert_array_equal(batched_games(result, rules), want)


def test_errors():
    with pytest.raises(ValueError, match=r"players \['heuristic', 'pimc'.*expected 4 of \['heuristic', 'random'\]"):
        play_games(None, [[1, 2, 3, 4]], [0], ["no_queens"], [["heuristic", "pimc", "random", "random"]])
    with pytest.raises(ValueError, match="random players need seeds"):
        play_games(None, [[1, 2, 3, 4]], [0], ["no_queens"], [["heuristic", "random"] * 2])
    with pytest.raises(ValueError, match="expected one of each per game"):
        play_games(None, [[1, 2, 3, 4]], [0, 1], ["no_queens"], [["heuristic"] * 4])


def test_bad_seeds():
    with pytest.raises(ValueError, match=r"bad seeds: expected 4 ints in 0 \.\. 2\*\*64 - 1 per game"):
        play_games(None, [[1, 2, 3, 4]], [0], ["no_queens"], [["random"] * 4], [[1, 2, -3, 4]])
    with pytest.raises(ValueError, match=r"bad seeds: expected shape \(1, 4\), got \(1, 3\)"):
        play_games(None, [[1, 2, 3, 4]], [0], ["no_queens"], [["random"] * 4], np.zeros((1, 3), np.uint64))


def test_observe_games_are_rows_of_observe():
    """``VectorDeals.observe_games`` (the policy seats' observations) equals :meth:`observe`'s rows, games over
    included (zero rows), at every step of seeded heuristic games with doubling (R6) and Fantan (R7)."""
    from barbu_env.vector import VectorDeals

    v = VectorDeals(["no_hearts", "fantan:7", "trumps:D"], Rules(doubling="classic"), batch=24, seed=1,
                    auto_reset=False)  # fmt: skip
    v.reset()
    rng = np.random.default_rng(0)
    for _ in range(80):
        games = rng.permutation(v.batch)[: rng.integers(1, v.batch)]
        obs, mask = v.observe_games(games)
        want_obs, want_mask, _ = v.observe()
        np.testing.assert_array_equal(obs, want_obs[games])
        np.testing.assert_array_equal(mask, want_mask[games])
        v.step(np.maximum(v.heuristic_actions(), 0))
    assert (v.seat < 0).any()  # some deals were over while observed
    with pytest.raises(ValueError, match=r"bad games \[24\]: expected indices in 0\.\.23"):
        v.observe_games([24])
