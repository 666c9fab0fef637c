"""Duplicate games on the batched engine: many explicit deals played at once by compiled players (RULES.md R4-R8).

:func:`play_games` plays G games, each an explicit deal (hands, declarer, fixed contract such as ``"no_queens"``,
``"trumps:S"`` or ``"fantan:7"``, as ``barbu-eval`` builds its boards) with a player per seat, on
:class:`~.deals.VectorDeals` (one batch per contract text, the deals queued as boards), and returns every game's
deal scores (contract + settlement, R8.1), the ``Deal.scores`` of the same game played through the env. Players:

- ``"heuristic"``: the compiled heuristic (``VectorDeals.heuristic_actions``), the choices of ``agents.heuristic``;
- ``"random"``: ``RandomAgent``'s choices: per decision ``legal[rng.integers(len(legal))]`` over the legal actions
  in ascending order, with the seat's own ``np.random.default_rng(seed)``, one draw per decision as the agent makes;
- a :class:`CardPolicy` (a neural agent's batched form): its card decisions (card play and Fantan passes, R5, R7)
  from one ``card_actions`` call per step over the observations of every game where one of its seats is on move
  (``VectorDeals.observe``, the env's observations); every other decision (doubling, R6) by its ``fallback_spec``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from ..actions import PASS
from ..engine.deal import parse_contract, validate_hands
from ..rules import Rules, load_rules
from .deals import VectorDeals

#: The players :func:`play_games` seats by name (besides :class:`CardPolicy` objects).
PLAYERS = ("heuristic", "random")


class CardPolicy(Protocol):
    """A batched player of card decisions; its other decisions are played by :attr:`fallback_spec` (a player of
    :data:`PLAYERS`)."""

    fallback_spec: str

    def card_actions(self, contract: str, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The actions (int64 [n]) for n observations (float32 [n, OBS_SIZE]) and masks (int8 [n, 87]) of card
        decisions in contract ``contract`` (a name: ``"trumps"``, not ``"trumps:S"``)."""
        ...


Player = str | CardPolicy


class SeatSeeds(Protocol):
    """One game's agent seeds by seat (a ``Sequence[int]`` or anything indexed by seat)."""

    def __len__(self) -> int: ...

    def __getitem__(self, seat: int, /) -> int: ...


def play_games(rules: Rules | str | dict | None, hands: np.ndarray | Sequence[Sequence[Any]],
               declarers: Sequence[int], contracts: Sequence[str], players: Sequence[Sequence[Player]],
               seeds: Sequence[SeatSeeds] | None = None, batch: int = 1024) -> np.ndarray:  # fmt: skip
    """``int64 [G, 4]``: the deal scores of games ``i`` = deal ``hands[i]`` (4 card lists or masks), declared by
    ``declarers[i]`` in contract ``contracts[i]`` (fixed: no declaration), seat s played by ``players[i][s]`` (one
    of :data:`PLAYERS` or a :class:`CardPolicy`), a random seat (or a policy's random fallback) seeded with
    ``seeds[i][s]``. ``batch``: games stepped at once per contract."""
    rules = load_rules(rules)
    g_all = len(contracts)
    if not (len(hands) == len(declarers) == len(players) == g_all) or (seeds is not None and len(seeds) != g_all):
        raise ValueError(f"play_games: {len(hands)} hands, {len(declarers)} declarers, {g_all} contracts, "
                         f"{len(players)} player rows{'' if seeds is None else f', {len(seeds)} seed rows'}: "
                         "expected one of each per game")  # fmt: skip
    policies: list[CardPolicy] = []  # kind 2 + j: policies[j]
    kinds: dict[tuple[int, ...], list[int]] = {}  # a row's players, by identity -> their kinds
    kind = np.zeros((g_all, 4), np.int64)
    for i, row in enumerate(players):
        key = tuple(map(id, row))
        if key not in kinds:
            kinds[key] = _kinds(i, row, policies)
        kind[i] = kinds[key]
    fallback = np.array([0, 1] + [PLAYERS.index(p.fallback_spec) for p in policies], np.int64)
    if seeds is None and (fallback[kind] == 1).any():
        raise ValueError("random players need seeds (seeds[i][s] for the random seat s of game i)")
    masks = _masks(hands, rules)
    scores = np.zeros((g_all, 4), np.int64)
    by_contract: dict[str, list[int]] = {}
    for i, c in enumerate(contracts):
        by_contract.setdefault(c, []).append(i)
    for contract, idx in by_contract.items():
        scores[idx] = _play_contract(rules, contract, masks[idx], [int(declarers[i]) for i in idx], kind[idx],
                                     policies, None if seeds is None else [seeds[i] for i in idx], batch)  # fmt: skip
    return scores


def _kinds(i: int, row: Sequence[Player], policies: list[CardPolicy]) -> list[int]:
    """The kinds of game ``i``'s players (0 heuristic, 1 random, 2 + j ``policies[j]``, appended when new)."""
    if len(row) != 4 or not all(p in PLAYERS if isinstance(p, str) else _is_policy(p) for p in row):
        raise ValueError(f"game {i}: players {list(row)!r}: expected 4 of {list(PLAYERS)} or CardPolicy objects "
                         f"(with a fallback in {list(PLAYERS)})")  # fmt: skip
    out = []
    for p in row:
        if isinstance(p, str):
            out.append(PLAYERS.index(p))
            continue
        j = next((j for j, q in enumerate(policies) if q is p), len(policies))
        if j == len(policies):
            policies.append(p)
        out.append(2 + j)
    return out


def _is_policy(p: object) -> bool:
    return callable(getattr(p, "card_actions", None)) and getattr(p, "fallback_spec", None) in PLAYERS


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


def _play_contract(rules: Rules, contract: str, hands: np.ndarray, declarers: list[int], kind: np.ndarray,
                   policies: list[CardPolicy], seeds: list[SeatSeeds] | None,
                   batch: int) -> np.ndarray:  # fmt: skip
    """:func:`play_games` for games of one contract text (``kind``: 0 heuristic, 1 random, 2 + j ``policies[j]``)."""
    n = len(declarers)
    name = parse_contract(contract)[0]
    fallback = np.array([0, 1] + [PLAYERS.index(p.fallback_spec) for p in policies], np.int64)
    v = VectorDeals(contract, rules, batch=min(batch, n), boards=(hands, declarers))
    rngs: dict[tuple[int, int], np.random.Generator] = {}  # (game, seat) -> its generator, made at its first draw
    out = np.zeros((n, 4), np.int64)
    v.reset()
    while not v.finished:
        seat, board = v.seat, v.board_of.copy()
        live = seat >= 0
        who = np.where(live, kind[np.maximum(board, 0), np.maximum(seat, 0)], -1)
        actions = np.zeros(v.batch, np.int64)
        policy = who >= 2
        if policy.any():
            obs, mask, _ = v.observe()
            card = policy & mask[:, : PASS + 1].any(1)  # card play or a Fantan pass (R5, R7); else doubling (R6)
            for j, p in enumerate(policies):
                rows = np.flatnonzero(card & (who == 2 + j))
                if rows.size:
                    actions[rows] = p.card_actions(name, obs[rows], mask[rows])
            handed = policy & ~card
            who[handed] = fallback[who[handed]]
            who[card] = -1
        else:
            mask = v.action_masks()
        heuristic = who == 0
        if heuristic.any():
            actions[heuristic] = v.heuristic_actions(heuristic)[heuristic]
        rand = np.flatnonzero(who == 1)
        if rand.size:  # RandomAgent.act: legal[rng.integers(len(legal))], one draw per decision
            sub = mask[rand]
            counts = sub.sum(1, dtype=np.int64)
            legal = np.nonzero(sub)[1]  # row by row, ascending
            starts = np.cumsum(counts) - counts
            for g, b, s, k, n_legal in zip(rand.tolist(), board[rand].tolist(), seat[rand].tolist(), starts.tolist(),
                                           counts.tolist()):  # fmt: skip
                rng = rngs.get((b, s))
                if rng is None:
                    if seeds is None:
                        raise ValueError("random players need seeds (seeds[i][s] for the random seat s of game i)")
                    rng = rngs[b, s] = np.random.default_rng(int(seeds[b][s]))
                actions[g] = legal[k + rng.integers(n_legal)]
        rewards, done = v.step(actions)
        ended = np.flatnonzero(done)
        out[board[ended]] = rewards[ended].astype(np.int64)
    return out


__all__ = ["PLAYERS", "CardPolicy", "Player", "play_games"]
