"""Self-play on the batched engine: :class:`VectorSelfPlay`, PPO's collector with ``engine: vector``.

The same interface as :class:`training.selfplay.SelfPlay` where PPO needs it (``step(policy, snapshot)``,
``take_batch()``, ``batch``, ``results``, ``scale``), but the ``num_games`` deals are stepped at once by
:class:`barbu_env.vector.VectorDeals`, whose observations and masks are the AEC env's
(``observation.encode`` and ``Deal.legal_actions``). Each seat of each deal has a role, drawn per deal:
the learning policy (its decisions are recorded), a frozen snapshot, the heuristic agent (compiled on the
batched engine, ``VectorDeals.heuristic_actions``: the same choices as ``agents.heuristic``) or a uniformly
random player (``RANDOM``, from the collector's RNG). Decisions outside the card play:

- declaration (Trumps / Fantan, R3.2): ``declare="heuristic"`` (default) lets the heuristic name the trump
  suit / Fantan rank from the declarer's hand, as ``SelfPlay`` does and as the neural agent does when it
  plays (it leaves declarations to its fallback); these decisions are not recorded. ``declare="policy"``
  lets the declarer's seat choose among the legal declarations by its role (network, heuristic or random):
  a learner's declaration is recorded and trained like its card play (same observation and reward);
- doubling (R6): each player takes a uniformly random legal double with probability ``double_prob``,
  otherwise ``double:none``, drawn from the collector's RNG, not recorded — as in ``SelfPlay``.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from barbu_env.actions import DECLARE_BASE, DOUBLE_BASE
from barbu_env.contracts import contract_scale
from barbu_env.rules import Rules
from barbu_env.vector import VectorDeals, random_actions

from .selfplay import HEURISTIC, LEARNER, SNAPSHOT, Batch, PolicyFn, split_complete

#: Who names the trump suit / Fantan rank.
DECLARE_MODES = ("heuristic", "policy")
#: The role of a uniformly random seat (VectorSelfPlay only; beside ``selfplay``'s LEARNER, HEURISTIC, SNAPSHOT).
RANDOM = 3
ROLES = (LEARNER, HEURISTIC, SNAPSHOT, RANDOM)


class VectorSelfPlay:
    """``num_games`` deals of ``contract`` stepped at once on ``VectorDeals``; finished deals restart at once."""

    def __init__(self, contract: str, rules: Rules, num_games: int, rng: np.random.Generator,
                 roles: Callable[[np.random.Generator], list[int]], double_prob: float = 0.0,
                 declare: str = "heuristic", backend: str = "auto") -> None:  # fmt: skip
        """``roles(rng)`` draws the 4 seat roles (:data:`ROLES`) of each new deal; ``declare``
        is ``"heuristic"`` or ``"policy"`` (module docstring); ``backend`` is VectorDeals' backend."""
        if declare not in DECLARE_MODES:
            raise ValueError(f"bad declare {declare!r}: choose from {list(DECLARE_MODES)}")
        if not 0.0 <= double_prob <= 1.0:
            raise ValueError(f"double_prob must be in [0, 1], got {double_prob}")
        self.contract, self.rules, self.rng = contract, rules, rng
        self.roles_fn, self.double_prob, self.declare = roles, double_prob, declare
        self.scale = contract_scale(contract, rules)
        # numba's default OpenMP pool busy-waits between kernels; beside torch's OpenMP runtime that slowed
        # collection ~10x on 2 cores once torch had run first (PPO after imitation). The workqueue layer does
        # not spin. Read when numba is first imported (by VectorDeals, below); a value set by the user wins.
        os.environ.setdefault("NUMBA_THREADING_LAYER", "workqueue")
        self.env = VectorDeals(contract, rules, batch=num_games, seed=int(rng.integers(2**63)), backend=backend)
        self.env.reset()
        self.roles = np.zeros((num_games, 4), np.int64)
        self.open: list[dict[int, list[int]]] = [{} for _ in range(num_games)]  # learner seat -> decision indices
        self.results: list[tuple[int, list[int], list[float]]] = []  # (-1, roles, scores) of ended deals
        self.batch = Batch()
        for g in range(num_games):
            self._new_roles(g)

    def _new_roles(self, g: int) -> None:
        roles = [int(r) for r in self.roles_fn(self.rng)]
        if len(roles) != 4 or any(r not in ROLES for r in roles):
            raise ValueError(f"VectorSelfPlay needs 4 seat roles among LEARNER, HEURISTIC, SNAPSHOT, RANDOM "
                             f"{list(ROLES)}, got {roles}")  # fmt: skip
        self.roles[g] = roles
        self.open[g] = {s: [] for s in range(4) if roles[s] == LEARNER}

    def _doubles(self, mask: np.ndarray) -> np.ndarray:
        """Per row: a uniformly random legal double with probability ``double_prob``, else ``double:none``
        (or the first legal double where it is not legal)."""
        n = mask.shape[0]
        legal = mask[:, DOUBLE_BASE:].astype(bool)
        pick = self.rng.random(n) < self.double_prob
        u = self.rng.random(n)
        counts = legal.sum(1)
        k = np.minimum((u * counts).astype(np.int64), counts - 1)
        random_double = (legal.cumsum(1) > k[:, None]).argmax(1)  # the k-th legal double
        default = np.where(legal[:, 0], 0, legal.argmax(1))
        return DOUBLE_BASE + np.where(pick, random_double, default)

    # ------------------------------------------------------------------ stepping
    def step(self, policy: PolicyFn | None, snapshot: PolicyFn | None = None) -> int:
        """One decision in every game, networks batched by role. Returns the learner decisions recorded."""
        obs, mask, seat = self.env.observe()
        n = mask.shape[0]
        games = np.arange(n)
        role = self.roles[games, seat]
        actions = np.zeros(n, np.int64)
        doubling = mask[:, DOUBLE_BASE:].any(1)
        other = doubling.copy()
        if doubling.any():
            actions[doubling] = self._doubles(mask[doubling])
        heuristic = (role == HEURISTIC) & ~other
        if self.declare == "heuristic":
            declaring = mask[:, DECLARE_BASE:DOUBLE_BASE].any(1)
            heuristic |= declaring
            other |= declaring
        if heuristic.any():  # the compiled heuristic: declarations in heuristic mode, heuristic seats
            actions[heuristic] = self.env.heuristic_actions(heuristic)[heuristic]
        rand = (role == RANDOM) & ~other
        if rand.any():
            actions[rand] = random_actions(mask[rand], self.rng)
        recorded = 0
        for fn, r in ((policy, LEARNER), (snapshot, SNAPSHOT)):
            idx = np.flatnonzero((role == r) & ~other)
            if not idx.size:
                continue
            if fn is None:
                raise ValueError(f"seats with role {r} need a policy")
            o, m = obs[idx], mask[idx]  # fancy indexing copies out of VectorDeals' reused buffers
            a, logp, value = fn(o, m)
            actions[idx] = a
            if r == LEARNER:
                self._record(idx, seat[idx], o, m, a, logp, value)
                recorded = idx.size
        rewards, done = self.env.step(actions)
        for g in np.flatnonzero(done):
            self._end_deal(int(g), rewards[g])
        return recorded

    def _record(self, games: np.ndarray, seats: np.ndarray, obs: np.ndarray, mask: np.ndarray,
                action: np.ndarray, logp: np.ndarray, value: np.ndarray) -> None:  # fmt: skip
        b = self.batch
        start = len(b.action)
        for k, (g, s) in enumerate(zip(games.tolist(), seats.tolist())):
            self.open[g][s].append(start + k)
        b.obs.extend(obs)
        b.mask.extend(mask)
        b.action.extend(np.asarray(action, np.int64).tolist())
        b.logp.extend(np.asarray(logp, np.float64).tolist())
        b.value.extend(np.asarray(value, np.float64).tolist())
        b.reward.extend([0.0] * len(games))

    def _end_deal(self, g: int, scores: np.ndarray) -> None:
        """Close the learner trajectories of the deal that ended in game ``g`` (already restarted)."""
        b = self.batch
        for seat, idx in self.open[g].items():
            if idx:
                b.reward[idx[-1]] = float(scores[seat]) / self.scale
                b.trajectories.append(idx)
        self.results.append((-1, self.roles[g].tolist(), scores.tolist()))
        self._new_roles(g)

    def take_batch(self) -> Batch:
        """The complete trajectories recorded so far; decisions of deals still running stay pending."""
        done, self.batch = split_complete(self.batch, self.open)
        return done


__all__ = ["DECLARE_MODES", "RANDOM", "ROLES", "VectorSelfPlay"]
