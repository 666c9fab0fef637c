"""Playouts of many deals at once by a card policy in every seat, on the batched engine (RULES.md R5, R7, R8.1).

:class:`PolicyRollouts` is the counterpart of :class:`.rollout.Rollouts` for a learned policy: each of the B games
(a game row of :func:`.rollout.row_of_deal` or of the engine's own state, in any phase) plays one first action,
then every seat's card decisions (card play and Fantan passes) are the policy's greedy choices, one batched
``card_actions`` call per step and contract over the live games of that contract, and the declaration and
doubling decisions (R3, R6) are the compiled heuristic's, on :class:`.deals.VectorDeals`
(:meth:`~.deals.VectorDeals.load_states`), to the end of the deal (after :data:`MAX_STEPS` card decisions of a
game, which only free Fantan passes can reach, the compiled heuristic finishes it). :meth:`PolicyRollouts.scores`
plays out a deal in card play whose hands are replaced by sampled worlds (PIMC); :meth:`PolicyRollouts.play_out`
plays out game rows (the bidding labels of ``training/bidding.py``). :meth:`PolicyRollouts.log_likelihoods`
scores the sampled worlds by how likely the policy makes the play observed so far (PIMC's world weighting).

The policy is a :class:`CardPolicy`: a greedy ``agents.neural.NeuralAgent`` (torch is imported by that agent, not
here). The kernels (numba) are imported when the first :class:`~.deals.VectorDeals` is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from ..actions import DECLARE_BASE, DOUBLE_BASE
from ..contracts import Contract
from ..engine.deal import Deal
from .core import COLUMNS, NUM_COLUMNS, START_ROW
from .deals import VectorDeals
from .rollout import row_of_deal
from .tables import FANTAN_PLAY, OVER, PLAY, U64, Tables

I64 = np.int64
#: Policy card decisions per rollout game after its first action; past them the heuristic plays (only free Fantan
#: passes, R7.3, let a deal run longer: 52 cards and at most 3 passes before each).
MAX_STEPS = 4 * 52
_HANDS = slice(COLUMNS["hands"], COLUMNS["hands"] + 4)
_PLAYED_BY = slice(COLUMNS["played_by"], COLUMNS["played_by"] + 4)


class CardPolicy(Protocol):
    """A batched card player (``agents.neural.NeuralAgent``): greedy actions and logits per contract name."""

    def card_actions(self, contract: str, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """int64 [n]: the greedy actions for n observations and masks of card decisions."""
        ...

    def card_logits(self, contract: str, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """float64 [n, A]: the logits, -inf for illegal actions."""
        ...


def _over_row() -> np.ndarray:
    row = START_ROW.copy()
    row[COLUMNS["phase"]] = OVER
    row[COLUMNS["contract"]] = 0
    return row


#: The row of an unused game: over (seat -1), ignored by every step.
OVER_ROW = _over_row()


class PolicyRollouts:
    """Greedy playouts of ``policy`` under the rules of ``t`` (see the module docstring)."""

    def __init__(self, t: Tables, policy: CardPolicy) -> None:
        self.t = t
        self.policy = policy
        self._deals: VectorDeals | None = None
        self.decisions = 0
        """The policy's card decisions taken in playouts so far (one per game per step it plays)."""

    def _load(self, rows: np.ndarray) -> VectorDeals:
        """A ``VectorDeals`` (one kept, grown as needed) whose first games hold ``rows``, the others over."""
        n = rows.shape[0]
        v = self._deals
        if v is None or v.batch < n:
            v = self._deals = VectorDeals(None, self.t.rules, batch=max(n, 2 * v.batch if v else 64), auto_reset=False)
        data = np.empty((v.batch, rows.shape[1]), I64)
        data[:n] = rows
        data[n:] = OVER_ROW
        v.load_states(data)
        return v

    def scores(self, view: Deal, worlds: Sequence[Sequence[int]], actions: Sequence[int], seat: int) -> np.ndarray:
        """``int64 [len(worlds), len(actions)]``: ``seat``'s deal score (R8.1) after ``actions[j]`` then the policy's
        play in every seat, in the deal ``view`` (card play of ``view.contract``, which the policy must cover) with
        its hands replaced by ``worlds[i]`` (a hand mask per seat)."""
        if view.phase not in (PLAY, FANTAN_PLAY):
            raise ValueError(f"policy rollouts start in card play (R5, R7); this deal is in phase {view.phase}")
        w, a = len(worlds), len(actions)
        rows = np.repeat(row_of_deal(view, self.t)[None], w * a, axis=0)
        rows[:, _HANDS] = np.repeat(np.array(worlds, U64), a, axis=0).view(I64)
        first = np.tile(np.asarray(actions, I64), w)
        return self.play_out(rows, first)[:, seat].reshape(w, a)

    def play_out(self, rows: np.ndarray, first: np.ndarray, seats: np.ndarray | None = None) -> np.ndarray:
        """``int64 [G, 4]``: every seat's deal score (R8.1) after ``first[g]`` (legal for the seat on move) from each
        game row of ``rows`` (``int64 [G, NUM_COLUMNS]``, rows of ``State.data`` in any phase, true hands), then
        every card decision (R5, R7) by the policy, grouped by each game's contract (one ``card_actions`` call per
        contract per step), and every declaration and doubling decision (R3, R6) by the compiled heuristic. With
        ``seats`` (bool ``[G, 4]``) only the card decisions of game g's seats s with ``seats[g, s]`` are the
        policy's, the others' the compiled heuristic's. A game whose policy has taken :data:`MAX_STEPS` card
        decisions is finished by the heuristic. ``rows`` is left unchanged; the policy must cover every contract
        reached."""
        n = rows.shape[0]
        if seats is not None and np.shape(seats) != (n, 4):
            raise ValueError(f"seats must be a bool array of shape ({n}, 4), one row per game: got {np.shape(seats)}")
        v = self._load(np.asarray(rows, I64))
        act = np.zeros(v.batch, I64)
        act[:n] = first
        v.step(act)
        cards = np.zeros(v.batch, I64)  # the policy's card decisions per game
        while True:
            live = v.seat >= 0
            if not live.any():
                break
            phase = v.state.phase
            by_policy = live & ((phase == PLAY) | (phase == FANTAN_PLAY)) & (cards < MAX_STEPS)
            if seats is not None:
                by_policy[:n] &= seats[np.arange(n), np.maximum(v.seat[:n], 0)]
            by_heuristic = live & ~by_policy
            act[:] = 0
            if by_heuristic.any():
                act[by_heuristic] = v.heuristic_actions(by_heuristic)[by_heuristic]
            games = np.flatnonzero(by_policy)
            if games.size:
                obs, mask = v.observe_games(games)
                k = v.state.contract[games]
                for c in np.unique(k):
                    at = k == c
                    act[games[at]] = self.policy.card_actions(self.t.names[c], obs[at], mask[at])
                cards[games] += 1
                self.decisions += games.size
            v.step(act)
        return v.state.scores[:n].copy()

    def log_likelihoods(self, view: Deal, worlds: Sequence[Sequence[int]], seat: int,
                        temperature: float = 1.0) -> np.ndarray:  # fmt: skip
        """``float64 [len(worlds)]``: for each world (a hand mask per seat, consistent with ``view`` as ``seat`` sees
        it), the log-probability that the policy, sampling from ``softmax(logits / temperature)``, makes every card
        decision of the other seats in ``view``'s history (R5, R7), each seat then holding its world hand plus the
        cards it has played since. -inf for a world where one of those decisions is illegal. One batched forward
        pass over every (decision, world) pair; ``seat``'s own decisions do not depend on the world and are left out."""
        start = np.array(worlds, U64) | np.array(view.played_by, U64)  # [w, 4]: the hands at the deal's start
        rows, actions = self._past_decisions(view, seat, [int(h) for h in start[0]])
        w, k = start.shape[0], actions.shape[0]
        if not k:
            return np.zeros(w)
        played = rows[:, _PLAYED_BY].view(U64)  # [k, 4]: what each seat had played before each decision
        all_rows = np.repeat(rows, w, axis=0)  # decision-major: row d * w + i is decision d in world i
        all_rows[:, _HANDS] = (start[None] & ~played[:, None]).reshape(k * w, 4).view(I64)
        v = self._load(all_rows)
        obs, mask, _ = v.observe()
        n = k * w
        if view.contract is None:
            raise ValueError("policy likelihoods need a declared contract (card play, R4)")
        z = self.policy.card_logits(view.contract.name, obs[:n], mask[:n]) / temperature
        top = z.max(axis=1)
        log_z = top + np.log(np.exp(z - top[:, None]).sum(axis=1))
        taken = z[np.arange(n), np.repeat(actions, w)]
        return (taken - log_z).reshape(k, w).sum(axis=0)

    def _past_decisions(self, view: Deal, seat: int, hands: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """``(rows int64 [k, C], actions int64 [k])``: the state before each card decision (R5, R7) of the other
        seats in ``view``'s history, and the action taken: ``view``'s record replayed on a ``Deal`` dealt ``hands``
        (any hands consistent with the record; a state's hidden cards are replaced by the caller)."""
        contract: str | Contract | None = view.contract  # fixed at the start (deal mode), or declared (R3)
        if any(DECLARE_BASE <= a < DOUBLE_BASE for _, a in view.history[:1]):
            contract = None
        elif view.trump >= 0 or view.fantan_rank >= 0:
            contract = view.contract_text
        d = Deal.from_hands(hands, view.declarer, contract, view.rules, view.available, view.must_double, view.table)
        rows, actions = [], []
        for s, a in view.history:
            if d.phase in (PLAY, FANTAN_PLAY) and s != seat:
                rows.append(row_of_deal(d, self.t))
                actions.append(a)
            d.apply(a)
        if (d.played, d.to_move, d.phase, d.trick) != (view.played, view.to_move, view.phase, view.trick):
            raise RuntimeError("replaying the deal's history did not reach its current state")
        return np.array(rows, I64).reshape(-1, NUM_COLUMNS), np.array(actions, I64)


__all__ = ["MAX_STEPS", "OVER_ROW", "CardPolicy", "PolicyRollouts"]
