"""Many concurrent deals of one contract, played by a mix of seats, with batched network inference.

Shared by the imitation warm start, PPO and the duplicate evaluation used for model selection
(:func:`selfplay_player` plays the boards of :mod:`barbu_env.evaluation`'s duplicate core).
Each seat of each game has a role: the learning policy (its decisions are recorded), the heuristic
agent, or a frozen snapshot of an earlier policy. Declaration and doubling are not learned here:
the declarer's heuristic names the trump suit / Fantan rank (R3.2) and each player takes a random
legal double with probability ``double_prob`` (so the policy sees varied doubling situations, R6).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from barbu_env.actions import DOUBLE_BASE, NUM_ACTIONS
from barbu_env.agents.heuristic import heuristic_action, rollout
from barbu_env.agents.pimc import sample_world
from barbu_env.contracts import contract_scale
from barbu_env.engine import InfoState
from barbu_env.engine.deal import DOUBLE, OVER, Deal, deal_hands
from barbu_env.evaluation.boards import Board, Game, PlayFn, Seating, named_contract
from barbu_env.observation import OBS_SIZE, encode
from barbu_env.rules import Rules

LEARNER, HEURISTIC, SNAPSHOT = 0, 1, 2
#: A batched policy: (obs [n, OBS_SIZE], mask [n, NUM_ACTIONS]) -> (actions, log-probs, values).
PolicyFn = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


def draw_roles(rng: np.random.Generator, n: int, p_heuristic: float, p_snapshot: float,
               one_learner: bool) -> np.ndarray:  # fmt: skip
    """``int64 [n, 4]`` seat roles of ``n`` deals: each seat the heuristic with probability ``p_heuristic``, a
    snapshot with ``p_snapshot``, else the learner; with ``one_learner``, a deal without a learner seat gets one
    at a random seat."""
    u = rng.random((n, 4))
    roles = np.where(u < p_heuristic, HEURISTIC, np.where(u < p_heuristic + p_snapshot, SNAPSHOT, LEARNER))
    if one_learner:
        none = ~(roles == LEARNER).any(1)
        roles[none, rng.integers(4, size=int(none.sum()))] = LEARNER
    return roles


@dataclass
class Batch:
    """Recorded decisions of the learning seats, in the order they were taken."""

    obs: list[np.ndarray] = field(default_factory=list)
    mask: list[np.ndarray] = field(default_factory=list)
    action: list[int] = field(default_factory=list)
    logp: list[float] = field(default_factory=list)
    value: list[float] = field(default_factory=list)
    reward: list[float] = field(default_factory=list)
    trajectories: list[list[int]] = field(default_factory=list)  # complete (game, seat) index lists

    def __len__(self) -> int:
        return len(self.action)

    @property
    def complete(self) -> int:
        """Decisions that belong to finished deals (ready for training)."""
        return sum(len(t) for t in self.trajectories)


class SelfPlay:
    """``num_games`` deals of ``contract`` played concurrently; finished deals restart at once."""

    def __init__(self, contract: str, rules: Rules, num_games: int, rng: np.random.Generator,
                 roles: Callable[[np.random.Generator], list[int]], double_prob: float = 0.0,
                 boards: list[tuple[list[int], int, list[int]]] | None = None) -> None:  # fmt: skip
        """``roles(rng)`` draws the 4 seat roles of each new deal; ``boards`` (hands, declarer, roles)
        replaces random deals by a fixed list, each played once (for evaluation)."""
        self.contract, self.rules, self.rng = contract, rules, rng
        self.roles_fn, self.double_prob = roles, double_prob
        self.scale = contract_scale(contract, rules)
        self.boards = list(boards) if boards is not None else None
        self.next_board = 0
        self.games: list[Deal | None] = []
        self.roles: list[list[int]] = []
        self.board_of: list[int] = []
        self.open: list[dict[int, list[int]]] = []  # per game: learner seat -> its decision indices
        self.results: list[tuple[int, list[int], list[int]]] = []  # (board, roles, scores) of ended deals
        self.batch = Batch()
        for _ in range(num_games):
            self.games.append(None)
            self.roles.append([])
            self.board_of.append(-1)
            self.open.append({})
            self._new_deal(len(self.games) - 1)

    # ------------------------------------------------------------------ deals
    def _new_deal(self, g: int) -> None:
        if self.boards is not None:
            if self.next_board >= len(self.boards):
                self.games[g] = None
                return
            hands, declarer, roles = self.boards[self.next_board]
            self.board_of[g] = self.next_board
            self.next_board += 1
        else:
            hands = deal_hands(self.rng, self.rules)
            declarer = int(self.rng.integers(4))
            roles = self.roles_fn(self.rng)
        self.games[g] = start_deal(self.contract, self.rules, hands, declarer, self.rng, self.double_prob)
        self.roles[g] = list(roles)
        self.open[g] = {s: [] for s in range(4) if roles[s] == LEARNER}

    def _end_deal(self, g: int) -> None:
        deal = self.games[g]
        b = self.batch
        for seat, idx in self.open[g].items():
            if idx:
                b.reward[idx[-1]] = deal.scores[seat] / self.scale
                b.trajectories.append(idx)
        self.results.append((self.board_of[g], self.roles[g], list(deal.scores)))
        self._new_deal(g)

    def _advance(self, g: int, teacher: bool) -> None:
        """Play heuristic seats up to the next learner/snapshot decision. In teacher mode the heuristic
        also takes one learner decision, recorded as the imitation label."""
        while True:
            deal = self.games[g]
            if deal is None:
                return
            if deal.phase == OVER:
                self._end_deal(g)
                continue
            seat = deal.to_move
            role = self.roles[g][seat]
            if role == HEURISTIC:
                deal.apply(heuristic_action(deal, seat))
            elif role == LEARNER and teacher:
                a = heuristic_action(deal, seat)
                self._record(g, seat, deal, a, 0.0, 0.0)
                deal.apply(a)
                return
            else:
                return

    def _record(self, g: int, seat: int, deal: Deal, action: int, logp: float, value: float,
                obs: np.ndarray | None = None, mask: np.ndarray | None = None) -> None:  # fmt: skip
        b = self.batch
        if obs is None:
            obs = encode(deal, seat)
            mask = legal_mask(deal)
        self.open[g][seat].append(len(b.action))
        b.obs.append(obs)
        b.mask.append(mask)
        b.action.append(int(action))
        b.logp.append(float(logp))
        b.value.append(float(value))
        b.reward.append(0.0)

    # ------------------------------------------------------------------ stepping
    def step(self, policy: PolicyFn | None, snapshot: PolicyFn | None = None, teacher: bool = False) -> int:
        """Advance every game to its next network decision and take those decisions in one batch.
        Returns the number of learner decisions recorded."""
        before = len(self.batch)
        for g in range(len(self.games)):
            self._advance(g, teacher)
        if teacher:
            return len(self.batch) - before
        rows = [(g, self.games[g].to_move) for g in range(len(self.games)) if self.games[g] is not None]
        if not rows:
            return len(self.batch) - before
        obs = np.stack([encode(self.games[g], s) for g, s in rows])
        mask = np.stack([legal_mask(self.games[g]) for g, _ in rows])
        for fn, role in ((policy, LEARNER), (snapshot, SNAPSHOT)):
            idx = [i for i, (g, s) in enumerate(rows) if self.roles[g][s] == role]
            if not idx:
                continue
            if fn is None:
                raise ValueError(f"seats with role {role} need a policy")
            actions, logps, values = fn(obs[idx], mask[idx])
            for j, i in enumerate(idx):
                g, s = rows[i]
                if role == LEARNER:
                    self._record(g, s, self.games[g], actions[j], logps[j], values[j], obs[i], mask[i])
                self.games[g].apply(int(actions[j]))
        return len(self.batch) - before

    @property
    def finished(self) -> bool:
        """True once a fixed list of boards has been played out."""
        return all(g is None for g in self.games)

    def take_batch(self) -> Batch:
        """The complete trajectories recorded so far; decisions of deals still running stay pending."""
        done, self.batch = split_complete(self.batch, self.open)
        return done


def split_complete(batch: Batch, open_: list[dict[int, list[int]]]) -> tuple[Batch, Batch]:
    """``(complete, pending)``: the complete trajectories of ``batch`` (renumbered from 0) and the decisions
    of deals still running; ``open_`` (per game: seat -> decision indices) is renumbered into ``pending``."""
    done = _subset(batch, [i for t in batch.trajectories for i in t])
    start = 0
    for t in batch.trajectories:
        done.trajectories.append(list(range(start, start + len(t))))
        start += len(t)
    pending = sorted(i for o in open_ for idx in o.values() for i in idx)
    remap = {i: k for k, i in enumerate(pending)}
    for o in open_:
        for seat in o:
            o[seat] = [remap[i] for i in o[seat]]
    return done, _subset(batch, pending)


def _subset(b: Batch, indices: list[int]) -> Batch:
    out = Batch()
    for name in ("obs", "mask", "action", "logp", "value", "reward"):
        src = getattr(b, name)
        setattr(out, name, [src[i] for i in indices])
    return out


def start_deal(contract: str, rules: Rules, hands: list[int], declarer: int, rng: np.random.Generator,
               double_prob: float) -> Deal:  # fmt: skip
    """A deal of ``contract`` ready for card play, set up as barbu-eval's boards are (so its observations are
    theirs): the declarer's heuristic names the trump suit or Fantan rank (R3.2, ``named_contract``), then each
    player takes a random legal double with probability ``double_prob``."""
    deal = Deal.from_hands(hands, declarer, named_contract(contract, hands[declarer], rules), rules)
    while deal.phase == DOUBLE:
        legal = deal.legal_actions()
        a = legal[int(rng.integers(len(legal)))] if rng.random() < double_prob else DOUBLE_BASE
        deal.apply(a if a in legal else legal[0])
    return deal


def rollout_targets(contract: str, rules: Rules, states: int, seed: int, double_prob: float,
                    label_prob: float, samples: int = 0) -> tuple[np.ndarray, ...]:  # fmt: skip
    """Deep Monte-Carlo data: in heuristic-vs-heuristic deals, a decision (with more than one legal
    action) is sampled with probability ``label_prob``; each legal action is played out to the end of
    the *real* deal by heuristic players, and its return (own final score / |contract total|) is the
    target. Returns ``(obs float16 [n, OBS_SIZE], mask int8 [n, A], targets float32 [n, A], teacher
    int64 [n])`` with targets 0 where the action is illegal and ``teacher`` the heuristic's choice
    (the action the deal went on with). The network that regresses these sees only observations,
    so it learns the expected return over the hidden cards. With ``samples`` > 0, each target is the
    mean over the real deal and ``samples`` more deals drawn consistent with the player's information
    (the PIMC sampler), which lowers the noise of the targets at ``1 + samples`` times the cost."""
    rng = np.random.default_rng(seed)
    scale = contract_scale(contract, rules)
    obs, masks, targets, teacher = [], [], [], []
    while len(obs) < states:
        deal = start_deal(contract, rules, deal_hands(rng, rules), int(rng.integers(4)), rng, double_prob)
        while deal.phase != OVER and len(obs) < states:
            seat = deal.to_move
            legal = deal.legal_actions()
            choice = heuristic_action(deal, seat)
            if len(legal) > 1 and rng.random() < label_prob:
                t = np.zeros(NUM_ACTIONS, dtype=np.float32)
                info = InfoState.of(deal, seat) if samples else None
                worlds = [deal] + [sample_world(info, rng) for _ in range(samples)]
                for world in worlds:
                    for a in legal:
                        d = world.clone()
                        d.apply(a)
                        t[a] += rollout(d).scores[seat] / scale / len(worlds)
                obs.append(encode(deal, seat).astype(np.float16))
                masks.append(legal_mask(deal))
                targets.append(t)
                teacher.append(choice)
            deal.apply(choice)
    return np.stack(obs), np.stack(masks), np.stack(targets), np.array(teacher, dtype=np.int64)


def legal_mask(deal: Deal) -> np.ndarray:
    """The int8 action mask of the player on move, from the engine's one legality function."""
    m = np.zeros(NUM_ACTIONS, dtype=np.int8)
    m[deal.legal_actions()] = 1
    return m


def selfplay_player(contract: str, rules: Rules, policy: PolicyFn, num_games: int = 256) -> PlayFn:
    """A :data:`barbu_env.evaluation.PlayFn` for duplicate evaluation: agent 0 of each seating is the
    batched ``policy`` (greedy or not, as given), agent 1 the heuristic; the boards of one call are
    played concurrently, ``num_games`` deals at a time."""

    def play(boards: Sequence[Board], seats: Sequence[Seating]) -> Iterator[tuple[Board, list[Game]]]:
        plan = [(list(b.hands), b.declarer, [LEARNER if who == 0 else HEURISTIC for who in seating])
                for b in boards for seating in seats]  # fmt: skip
        sp = SelfPlay(contract, rules, min(len(plan), num_games), np.random.default_rng(0), lambda r: [], 0.0, plan)
        while not sp.finished:
            sp.step(policy)
        scores = {i: s for i, _, s in sp.results}
        for k, b in enumerate(boards):
            yield b, [Game(seating, scores[k * len(seats) + j]) for j, seating in enumerate(seats)]

    return play


__all__ = ["HEURISTIC", "LEARNER", "OBS_SIZE", "SNAPSHOT", "Batch", "SelfPlay", "legal_mask",
           "selfplay_player"]  # fmt: skip
