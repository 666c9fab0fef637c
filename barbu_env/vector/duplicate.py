"""Duplicate games on the batched engine: many explicit deals played at once by compiled players (RULES.md R4-R8).

:func:`play_games` plays G games, each an explicit deal (hands, declarer, fixed contract such as ``"no_queens"``,
``"trumps:S"`` or ``"fantan:7"``, as ``barbu-eval`` builds its boards) with a player per seat, on
:class:`~.deals.VectorDeals` (one batch per contract text, the deals queued as boards), and returns every game's
deal scores (contract + settlement, R8.1), the ``Deal.scores`` of the same game played through the env. Players:

- ``"heuristic"``: the compiled heuristic (``jit.heuristic``), the choices of ``agents.heuristic``;
- ``"random"``: ``RandomAgent``'s choices: per decision ``legal[rng.integers(len(legal))]`` over the legal actions
  in ascending order, with the seat's own ``np.random.default_rng(seed)``, one draw per decision as the agent
  makes, drawn by the compiled copy of numpy's generator (``jit.nprandom``);
- a :class:`CardPolicy` (a neural agent's batched form): its card decisions (card play and Fantan passes, R5, R7)
  from one ``card_actions`` call per step over the observations of the games where one of its seats is on move
  (``VectorDeals.observe_games``, the env's observations); every other decision (doubling, R6) by its
  ``fallback_spec``, or by ``card_actions`` too where that is None (a greedy SB3 model).

Each step one kernel (``jit.players.seat_actions``) plays every heuristic and random seat on move and names the
games a policy decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from ..engine.deal import parse_contract, validate_hands
from ..rules import Rules, load_rules
from .deals import VectorDeals
from .heuristic import heuristic_tables
from .jit.nprandom import GEN_WORDS, seed_generators
from .jit.nprandom import game_seeds as _game_seeds
from .jit.players import HEURISTIC, POLICY, RANDOM, seat_actions

#: The players :func:`play_games` seats by name (besides :class:`CardPolicy` objects).
PLAYERS = ("heuristic", "random")
#: Their kinds in ``jit.players.seat_actions``.
KINDS = {"heuristic": HEURISTIC, "random": RANDOM}


class CardPolicy(Protocol):
    """A batched player of card decisions; its other decisions are played by :attr:`fallback_spec` (a player of
    :data:`PLAYERS`), or by :meth:`card_actions` too where it is None."""

    fallback_spec: str | None

    def card_actions(self, contract: str, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The actions (int64 [n]) for n observations (float32 [n, OBS_SIZE]) and masks (int8 [n, 87]) of card
        decisions in contract ``contract`` (a name: ``"trumps"``, not ``"trumps:S"``)."""
        ...


Player = str | CardPolicy


def play_games(rules: Rules | str | dict | None, hands: np.ndarray | Sequence[Sequence[Any]],
               declarers: Sequence[int], contracts: Sequence[str], players: Sequence[Sequence[Player]],
               seeds: np.ndarray | Sequence[Sequence[int]] | None = None, batch: int = 1024) -> np.ndarray:  # fmt: skip
    """``int64 [G, 4]``: the deal scores of games ``i`` = deal ``hands[i]`` (4 card lists or masks), declared by
    ``declarers[i]`` in contract ``contracts[i]`` (fixed: no declaration), seat s played by ``players[i][s]`` (one
    of :data:`PLAYERS` or a :class:`CardPolicy`), a random seat (or a policy's random fallback) seeded with
    ``seeds[i][s]`` (ints 0 .. 2**64 - 1, ``[G, 4]``; see :func:`game_seeds`). ``batch``: games stepped at once
    per contract."""
    rules = load_rules(rules)
    g_all = len(contracts)
    if not (len(hands) == len(declarers) == len(players) == g_all) or (seeds is not None and len(seeds) != g_all):
        raise ValueError(f"play_games: {len(hands)} hands, {len(declarers)} declarers, {g_all} contracts, "
                         f"{len(players)} player rows{'' if seeds is None else f', {len(seeds)} seed rows'}: "
                         "expected one of each per game")  # fmt: skip
    policies: list[CardPolicy] = []  # kind POLICY + j: policies[j]
    kinds: dict[tuple[int, ...], list[int]] = {}  # a row's players, by identity -> their kinds
    kind = np.zeros((g_all, 4), np.int64)
    for i, row in enumerate(players):
        key = tuple(map(id, row))
        if key not in kinds:
            kinds[key] = _kinds(i, row, policies)
        kind[i] = kinds[key]
    fallback = np.array([HEURISTIC, RANDOM] + [POLICY + j if p.fallback_spec is None else KINDS[p.fallback_spec]
                                               for j, p in enumerate(policies)], np.int64)  # fmt: skip
    # per game and seat: the player of card decisions (R5, R7), then of the others (R6)
    both = np.stack([kind, fallback[kind]], axis=2)
    draws = (both == RANDOM).any(axis=2)
    if seeds is None and draws.any():
        raise ValueError("random players need seeds (seeds[i][s] for the random seat s of game i)")
    seed_rows = np.zeros((g_all, 4), np.uint64) if seeds is None else _seed_array(seeds, g_all)
    masks = _masks(hands, rules)
    scores = np.zeros((g_all, 4), np.int64)
    by_contract: dict[str, list[int]] = {}
    for i, c in enumerate(contracts):
        by_contract.setdefault(c, []).append(i)
    for contract, idx in by_contract.items():
        gens = np.zeros((len(idx), 4, GEN_WORDS), np.uint64)
        seed_generators(seed_rows[idx], draws[idx], gens)
        scores[idx] = _play_contract(rules, contract, masks[idx], [int(declarers[i]) for i in idx], both[idx], gens,
                                     policies, batch)  # fmt: skip
    return scores


def game_seeds(seed: int, contract_idx: int, boards: Sequence[int] | np.ndarray, seatings: int) -> np.ndarray:
    """``uint64 [len(boards) * seatings, 4]``: row ``i * seatings + k``, column s is
    ``evaluation.boards.game_seed(seed, contract_idx, boards[i], k, s)`` (compiled: :mod:`.jit.nprandom`)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"bad seed {seed!r}: expected an integer >= 0")
    words = [int(seed) >> (32 * i) & 0xFFFFFFFF for i in range(max(1, (int(seed).bit_length() + 31) // 32))]
    b = np.ascontiguousarray(boards, np.int64).reshape(-1)
    out = np.zeros((b.size * seatings, 4), np.uint64)
    _game_seeds(np.array(words, np.uint64), int(contract_idx), b, int(seatings), out)
    return out


def _seed_array(seeds: np.ndarray | Sequence[Sequence[int]], n: int) -> np.ndarray:
    """``uint64 [n, 4]`` from ``seeds``; ``ValueError`` for anything but ints 0 .. 2**64 - 1, four a game."""
    try:
        if isinstance(seeds, np.ndarray) and seeds.dtype == np.uint64:
            out = seeds
        else:
            rows = [[int(seeds[i][s]) for s in range(4)] for i in range(n)]
            out = np.array(rows, np.uint64)
    except (OverflowError, TypeError, ValueError, IndexError):
        raise ValueError("bad seeds: expected 4 ints in 0 .. 2**64 - 1 per game (seeds[i][s] for seat s of game i)"
                         ) from None  # fmt: skip
    if out.shape != (n, 4):
        raise ValueError(f"bad seeds: expected shape ({n}, 4), got {out.shape}")
    return np.ascontiguousarray(out)


def _kinds(i: int, row: Sequence[Player], policies: list[CardPolicy]) -> list[int]:
    """The kinds of game ``i``'s players (HEURISTIC, RANDOM, POLICY + j ``policies[j]``, appended when new)."""
    if len(row) != 4 or not all(p in PLAYERS if isinstance(p, str) else _is_policy(p) for p in row):
        raise ValueError(f"game {i}: players {list(row)!r}: expected 4 of {list(PLAYERS)} or CardPolicy objects "
                         f"(with a fallback in {list(PLAYERS)}, or None)")  # fmt: skip
    out = []
    for p in row:
        if isinstance(p, str):
            out.append(KINDS[p])
            continue
        j = next((j for j, q in enumerate(policies) if q is p), len(policies))
        if j == len(policies):
            policies.append(p)
        out.append(POLICY + j)
    return out


def _is_policy(p: object) -> bool:
    return callable(getattr(p, "card_actions", None)) and getattr(p, "fallback_spec", None) in (*PLAYERS, None)


def _masks(hands: np.ndarray | Sequence[Sequence[Any]], rules: Rules) -> np.ndarray:
    """``uint64 [G, 4]`` hand masks from masks, card-id lists or card strings (VectorDeals checks the deal)."""
    if isinstance(hands, np.ndarray) and hands.dtype == np.uint64:
        return hands.reshape(-1, 4)
    out = np.zeros((len(hands), 4), np.uint64)
    for i, deal in enumerate(hands):
        if all(isinstance(h, (int, np.integer)) for h in deal):
            out[i] = [int(h) for h in deal]
        elif all(not isinstance(h, str) and all(isinstance(c, (int, np.integer)) for c in h) for h in deal):
            out[i] = [sum(1 << int(c) for c in h) for h in deal]
        else:
            out[i] = validate_hands(deal, rules)
    return out


def _play_contract(rules: Rules, contract: str, hands: np.ndarray, declarers: list[int], kinds: np.ndarray,
                   gens: np.ndarray, policies: list[CardPolicy], batch: int) -> np.ndarray:  # fmt: skip
    """:func:`play_games` for games of one contract text: ``kinds`` (int64 [n, 4, 2]) the player of each seat's
    card decisions and other decisions (``jit.players.seat_actions``), ``gens`` the random seats' generators."""
    n = len(declarers)
    name = parse_contract(contract)[0]
    v = VectorDeals(contract, rules, batch=min(batch, n), boards=(hands, declarers))
    tb, hv = v.backend.tb, heuristic_tables(v.tables)
    out = np.zeros((n, 4), np.int64)
    actions, policy = np.zeros(v.batch, np.int64), np.zeros(v.batch, np.int64)
    v.reset()
    while not v.finished:
        low, high = v.legal()
        board = v.board_of.copy()
        if seat_actions(v.state.data, tb, hv, board, kinds, low, high, gens, actions, policy):
            for j, p in enumerate(policies):
                rows = np.flatnonzero(policy == j)
                if rows.size:
                    actions[rows] = p.card_actions(name, *v.observe_games(rows))
        rewards, done = v.step(actions)
        ended = np.flatnonzero(done)
        out[board[ended]] = rewards[ended].astype(np.int64)
    return out


__all__ = ["PLAYERS", "CardPolicy", "Player", "game_seeds", "play_games"]
