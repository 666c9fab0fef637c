"""Suit-permutation data augmentation: relabelling the suits of a deal gives another deal of the
same contract with the same values, so one labelled state teaches up to 24 (RULES.md R1.2, R4).

All suits are interchangeable in No tricks, No queens, No last two, Ravage City and Fantan, and in
Trumps when the trump suit is relabelled with them (the ``trump`` block follows). In the hearts
contracts (No hearts, No King, Salad) hearts stay hearts and the other three suits permute.

A permutation ``perm`` maps old suit ``s`` to new suit ``perm[s]``; :func:`obs_index` and
:func:`action_index` give gather indices so that ``obs[..., obs_index(perm)]`` is the observation of
the relabelled deal (a test checks it against :func:`barbu_env.observation.encode` of the relabelled
deal) and ``x[..., action_index(perm)]`` relabels masks and per-action values.
"""

from __future__ import annotations

from functools import cache
from itertools import permutations

import numpy as np

from barbu_env.actions import NUM_ACTIONS, TRUMPS_BASE
from barbu_env.cards import HEARTS
from barbu_env.observation import BLOCKS, OBS_SIZE

#: Observation blocks made of rows of 52 card entries, and of rows of 4 suit entries.
CARD_BLOCKS = ("hand", "played", "trick", "captured", "unseen", "excluded", "fantan_playable")
SUIT_BLOCKS = ("void", "trump")
HEARTS_CONTRACTS = ("no_hearts", "no_king", "salad")


def suit_permutations(contract: str) -> list[tuple[int, ...]]:
    """The suit relabellings that leave ``contract`` unchanged (identity first)."""
    perms = list(permutations(range(4)))
    if contract in HEARTS_CONTRACTS:
        perms = [p for p in perms if p[HEARTS] == HEARTS]
    return perms


def _card_source(perm: tuple[int, ...]) -> np.ndarray:
    """``src[new_card] = old_card`` under ``perm``."""
    inv = [perm.index(s) for s in range(4)]
    return np.array([13 * inv[c // 13] + c % 13 for c in range(52)])


@cache
def obs_index(perm: tuple[int, ...]) -> np.ndarray:
    """Gather index over the observation: ``new_obs = obs[..., obs_index(perm)]``."""
    idx = np.arange(OBS_SIZE)
    cards = _card_source(perm)
    suits = np.array([perm.index(s) for s in range(4)])
    for name in CARD_BLOCKS:
        off, size = BLOCKS[name]
        for row in range(off, off + size, 52):
            idx[row : row + 52] = row + cards
    for name in SUIT_BLOCKS:
        off, size = BLOCKS[name]
        for row in range(off, off + size, 4):
            idx[row : row + 4] = row + suits
    return idx


@cache
def action_index(perm: tuple[int, ...]) -> np.ndarray:
    """Gather index over the actions (cards and ``declare:trumps:*`` move with their suit)."""
    idx = np.arange(NUM_ACTIONS)
    idx[:52] = _card_source(perm)
    idx[TRUMPS_BASE : TRUMPS_BASE + 4] = TRUMPS_BASE + np.array([perm.index(s) for s in range(4)])
    return idx


def action_map(perm: tuple[int, ...]) -> np.ndarray:
    """``new_action = action_map(perm)[old_action]`` (the inverse of :func:`action_index`)."""
    inv = np.empty(NUM_ACTIONS, dtype=np.int64)
    inv[action_index(perm)] = np.arange(NUM_ACTIONS)
    return inv
