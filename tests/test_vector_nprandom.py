"""The compiled copy of numpy's seeding and bounded integers (``vector.jit.nprandom``) against numpy itself:
the PCG64 state of ``default_rng(seed)``, the draws of ``Generator.integers(n)`` (what ``RandomAgent`` draws,
including ``n == 1``, which draws nothing) and ``evaluation.boards.game_seed`` (the agents' seeds of barbu-eval).
"""

from __future__ import annotations

import numpy as np
import pytest

from barbu_env.evaluation.boards import game_seed
from barbu_env.vector.duplicate import game_seeds
from barbu_env.vector.jit.nprandom import GEN_WORDS, draws, seed_generators

SEEDS = [0, 1, 7, 2**32 - 1, 2**32, 2**33 + 5, 2**63 + 11, 2**64 - 1] + [
    int(s) for s in np.random.default_rng(0).integers(0, 2**63, 60)
]


def generators(seeds: list[int]) -> np.ndarray:
    gens = np.zeros((len(seeds), 1, GEN_WORDS), np.uint64)
    seed_generators(np.array(seeds, np.uint64).reshape(-1, 1), np.ones((len(seeds), 1), bool), gens)
    return gens


def test_seeded_state_is_numpys():
    gens = generators(SEEDS)
    for seed, g in zip(SEEDS, gens[:, 0].tolist()):
        state = np.random.PCG64(seed).state["state"]
        assert (g[0] << 64 | g[1], g[2] << 64 | g[3], g[4]) == (state["state"], state["inc"], 0), seed


@pytest.mark.parametrize("seed", SEEDS[:20])
def test_integers_draw_what_numpy_draws(seed):
    ns = np.random.default_rng(seed % 1000).integers(1, 88, 3000)
    ns[::7] = 1  # one legal action: no draw
    ns[::11] = 2**31 + 3  # large ranges: rejection sampling is likelier
    rng = np.random.default_rng(seed)
    want = [rng.integers(int(n)) for n in ns]
    got = np.zeros(ns.size, np.int64)
    draws(generators([seed])[:, 0], ns, got)
    np.testing.assert_array_equal(got, want)


def test_game_seeds_are_barbu_evals():
    for seed in (0, 12345, 2**40 + 3, 2**70 + 9):
        for ci in (0, 3, 6):
            boards = [0, 1, 17, 1999]
            got = game_seeds(seed, ci, boards, 4)
            want = [[game_seed(seed, ci, b, k, s) for s in range(4)] for b in boards for k in range(4)]
            np.testing.assert_array_equal(got, np.array(want, np.uint64))
    with pytest.raises(ValueError, match="bad seed -1"):
        game_seeds(-1, 0, [0], 4)
