"""Self-play with rollout-labelled Q targets on the batched engine: each contract's card play (RULES.md R4-R7).

    python -m training.rollout_q --config configs/default.yaml            # what `make train` runs
    python -m training.rollout_q --config configs/full.yaml               # the shipped checkpoints
    python -m training.rollout_q --config configs/default.yaml --resume   # continue an interrupted run

For each contract, one network (:class:`barbu_env.nn.PolicyNet`; its policy head read as Q-values over the 87
actions, illegal ones masked; the neural agent plays the argmax; with ``card_hidden`` > 0 a card head scores each
card from per-card features, ``barbu_env.nn.card_features``); with ``shared``, one network for all the contracts,
told apart by the observation's ``contract`` block, each round labelling an equal share of every contract. One
round:

1. **play**: ``num_games`` deals stepped at once on :class:`barbu_env.vector.VectorDeals`; each seat of each deal is,
   per deal, the learner (greedy on its Q, a uniformly random legal move with probability ``epsilon``), a frozen
   snapshot of it, the compiled heuristic, or PIMC (``p_pimc_deal``); all learner (and snapshot) seats of a step share
   one batched forward pass. A share ``doubled`` of the games is dealt under the doubling rules (doubles by the
   heuristic, random with probability ``double_prob``).
2. **label**: a share ``label_prob`` of the card decisions with more than one legal move (any seat) is
   labelled with the value of **every** legal move: the game's row of the engine state (all four true hands:
   perfect-information training, imperfect-information play) is copied once per move, the move is applied and
   the compiled heuristic plays every seat to the end of the deal (``vector.rollout.Rollouts.play_out``); the
   target is the acting seat's deal score / |contract total|. The heuristic is deterministic, so one playout per
   move is that move's exact value in that world; the network, which sees only the observation, learns its
   average over the hidden cards as the states of play distribute them (PIMC's estimate, learned with the true
   posterior and without its sampling noise). With ``rollout: learner`` a frozen copy of the learner (refreshed
   every round) plays every seat of the playouts instead (``vector.policy_rollout.PolicyRollouts``): the targets
   are the learner's own move values, and learning them is a step of policy iteration.
3. **learn**: minibatches drawn from a buffer of the last ``buffer`` labelled states, ``replay`` samples per new
   state; the loss is the MSE between the logits and the targets, both centred over the legal moves (only
   differences between moves matter to the argmax), plus the value head's MSE to the best move's target; each
   minibatch gets a random suit relabelling (training/augment.py: an exact symmetry of the deal). With ``ema`` a
   moving average of the weights is kept beside them; the evaluations play it and ``best.pt`` holds it. With
   ``belief`` an auxiliary head on the trunk learns who holds each card the seat cannot see (labels from the true
   deal); it is trained and resumed with the run, not saved with the policy.
4. every ``eval_every`` labelled states: barbu-eval's duplicate boards (seed ``seed + 10000``) on the batched
   engine, 1 greedy policy vs 3 compiled heuristic, seats rotated, doubling off; the best network is kept
   (``best.pt``) and the resume state saved. Before each round's learning, the new (unseen) labelled states
   measure ``holdout/gain_vs_heuristic``: the mean target of the greedy move minus that of the heuristic's
   move (cheap and low-noise), and ``holdout/regret``: the best move's target minus the greedy move's.

Why these targets rather than Deep Monte-Carlo's (``training/dmc_selfplay.py``, one episode return for the move
taken): measured on the same machine, Monte-Carlo self-play stayed behind the heuristic in five contracts after
2M decisions, while a labelled state here carries the exact value of every legal move in its world
(docs/TRAINING.md has the comparison). The states come from the learner's own play against itself, its
snapshots and the heuristic, so they follow the policy as it improves.

Declarations (R3.2) and doubling (R6) are the heuristic's (doubles random with probability ``double_prob``).

Outputs under ``out_dir/<contract>/``: ``best.pt`` (the agent checkpoint: its config, sizes and env version),
``state.pt`` (resume), ``metrics.csv``, TensorBoard events in ``tb/``, ``curve.png``; ``export_dir/<contract>.pt``
if set, then the evaluation table against the random and heuristic agents (``barbu_env.evaluation``).
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
from tqdm import tqdm

# numba's OpenMP pool busy-waits beside torch's OpenMP runtime; the workqueue layer does not (set before numba loads)
os.environ.setdefault("NUMBA_THREADING_LAYER", "workqueue")

from barbu_env.actions import DECLARE_BASE, DOUBLE_BASE, NUM_ACTIONS
from barbu_env.contracts import contract_scale
from barbu_env.nn import PolicyNet, flat_policy, greedy_choices, greedy_moves, save_checkpoint
from barbu_env.observation import BLOCKS
from barbu_env.rules import Rules, load_rules
from barbu_env.vector.core import COLUMNS
from barbu_env.vector.encode import unpack_observations
from barbu_env.vector.pimc import pimc_actions
from barbu_env.vector.worlds import resample_hands

from .common import (
    SEVEN,
    CommonConfig,
    Logger,
    finish_run,
    init_weights,
    load_resume,
    run_cli,
    save_resume,
    suit_gathers,
)
from .dmc_selfplay import apply_patch, eval_rules, fixed_contract_patch, greedy, vector_margin
from .selfplay import HEURISTIC, LEARNER, SNAPSHOT, draw_roles

#: The role of a seat played by PIMC (``p_pimc_deal``), beside ``selfplay``'s learner, heuristic and snapshot.
PIMC = 3
TRICK_NO = COLUMNS["trick_no"]


@dataclass
class RolloutQConfig(CommonConfig):
    """Training settings; every field can be set in the YAML config or with ``--set key=value``."""

    states: int = 4_000_000
    """Labelled states to generate per contract (the length of the run)."""
    num_games: int = 1024
    """Deals stepped concurrently."""
    label_prob: float = 0.5
    """Share of the card decisions (with more than one legal move) that get labelled."""
    chunk: int = 65_536
    """Labelled states per round (play and label, then learn)."""
    buffer: int = 1_000_000
    """Labelled states kept for learning (the most recent)."""
    replay: float = 6.0
    """Samples trained per new labelled state."""
    minibatch: int = 1_024
    """Minibatch size."""
    lr: float = 1e-3
    """Adam learning rate at the start; it falls linearly to ``lr_final`` x ``lr`` over ``states``."""
    lr_final: float = 0.1
    """Last learning rate as a share of ``lr``."""
    epsilon: float = 0.05
    """Probability that a learner decision is a uniformly random legal move (more varied states)."""
    p_heuristic: float = 0.4
    """Probability that a seat of a deal is the compiled heuristic."""
    p_snapshot: float = 0.2
    """Probability that a seat is a frozen snapshot of the learner (once the pool has one); the other seats are
    the learner (one seat at least)."""
    p_heuristic_deal: float = 0.0
    """Probability that a deal is the evaluation's table: the learner in one seat at random, the compiled heuristic
    in the other three; the other deals draw each seat by ``p_heuristic`` and ``p_snapshot``."""
    p_pimc_deal: float = 0.0
    """Probability that a deal is the acceptance's table: the learner in one seat at random, PIMC (heuristic
    playouts, ``pimc_samples`` worlds, batched: ``vector.pimc``) in the other three; drawn after
    ``p_heuristic_deal``, whose tables it replaces. In the labelling playouts of ``rollout: as_played`` the compiled
    heuristic plays PIMC's seats (as PIMC's own playouts assume), and PIMC's states are not labelled."""
    pimc_samples: int = 16
    """Worlds per decision of the PIMC seats of ``p_pimc_deal``."""
    snapshot_every: int = 500_000
    """Labelled states between snapshots added to the pool."""
    pool_size: int = 4
    """Snapshots kept in the pool (oldest dropped); one is drawn per round."""
    doubled: float = 0.2
    """Share of the games dealt under the doubling rules of ``rules`` (``classic`` where they have none), so that
    card play learns doubled deals too; the others are played without doubling, as the evaluation plays."""
    augment: bool = True
    """Relabel the suits of each minibatch at random (an exact symmetry: 24 relabellings, 6 with hearts fixed)."""
    eval_every: int = 500_000
    """Labelled states between duplicate evaluations against the heuristic (model selection, resume state)."""
    bc_coef: float = 0.0
    """Weight, at the start, of the cross-entropy of softmax(``bc_temp`` x logits) over the legal moves towards the
    compiled heuristic's move (a warm start by imitation); it falls linearly to ``bc_final`` over the first
    ``bc_states``. Its gradients are hundreds of times the Q loss's (centred move values differ by a few hundredths
    of the contract total): while the weight is above about 0.01 the network imitates rather than improves."""
    bc_final: float = 0.0
    """Imitation weight after ``bc_states`` (a weak prior towards the heuristic's move; 0: Q regression alone)."""
    bc_temp: float = 50.0
    """Inverse temperature turning the logits into the imitation term's probabilities."""
    bc_states: int = 500_000
    """Labelled states over which the imitation weight falls to 0."""
    init: str = ""
    """If set, a checkpoint file, or a folder holding ``<contract>.pt``, whose weights start the network: of the
    same sizes, or narrower (each hidden layer and the card head at most as wide, as many layers), in which case
    the wider network starts as the checkpoint plays (``training.common.init_weights``)."""
    worlds: int = 1
    """Deals each labelled state's moves are played out in: the true one, plus ``worlds - 1`` with the hidden hands
    redealt consistently with what the seat on move knows (PIMC's sampler, ``vector.worlds``); the target is the
    mean (more worlds: less noisy targets, at more playouts per state)."""
    late_trick: int = 0
    """If > 0, the card decisions from this trick on (counted from 0: 9 is the tenth trick) are labelled with share
    ``late_label_prob`` and their targets averaged over ``late_worlds`` worlds (endgame targets: more of them, less
    noisy, at small cost since few cards are left to play out); 0: every trick as ``label_prob`` and ``worlds``."""
    late_label_prob: float = 1.0
    """Labelled share of the card decisions from ``late_trick`` on."""
    late_worlds: int = 8
    """Worlds of each labelled state's targets from ``late_trick`` on."""
    late_true_world: bool = True
    """Whether the true deal is one of those worlds; false: all ``late_worlds`` are redealt (each move valued over
    deals drawn uniformly among those consistent with what the seat knows, as PIMC's search values it)."""
    rollout_threads: int = 1
    """Threads of the compiled playouts."""
    card_hidden: int = 0
    """Hidden units of the network's card head (``barbu_env.nn.card_features`` of each card scored by one small MLP
    shared by the 52 cards, added to the card's logit); 0: none, the plain MLP."""
    eval_pimc: int = 0
    """If > 0, boards (seed ``seed + 20000``) that each evaluation also plays 1 greedy policy vs 3 ``pimc``
    (16 samples, barbu-eval's harness, seats rotated, doubling off): the curve against search (about 0.1 s of
    one core per board)."""
    select: str = "heuristic"
    """What picks ``best.pt``: the best margin over the ``heuristic`` or ``pimc`` (needs ``eval_pimc`` > 0), or
    the ``last`` network evaluated (the run's end)."""
    rollout: str = "heuristic"
    """Who plays the labelling playouts after the labelled move: ``heuristic`` (the compiled heuristic in every
    seat: targets of one step of improvement over it), ``learner`` (a frozen copy of the learner, refreshed every
    round, greedy, in every seat: policy iteration on the learner's own values; about 70 times the playout cost)
    or ``learner_seat`` (that copy in the labelled seat, the compiled heuristic in the other three: the learner's
    own values against heuristic opponents, as it is trained with ``p_heuristic`` 1) or ``as_played`` (that copy in
    the labelled seat and in every seat the learner or a snapshot plays in that deal, the compiled heuristic in the
    heuristic's seats: the learner's values against the opponents it actually faces, for it to tell apart from
    what its observation shows of their play; only the learner's and snapshots' states are labelled)."""
    rollout_opponents: float = 1.0
    """With ``rollout: learner``, the probability that each of the other three seats of a labelled state's playouts
    is played by the learner's copy, drawn per labelled state and seat (the same for all its moves and worlds); the
    other seats are the compiled heuristic's. 1: the copy in every seat; 0: as ``learner_seat``. Between: the
    learner's values against a mix of itself and the heuristic."""
    ema: float = 0.0
    """If > 0, the decay per update of an exponential moving average of the network's weights
    (``torch.optim.swa_utils``): the average is what is evaluated, selected and saved, while the learner plays and
    labels with the trained weights. 0: no average."""
    belief: float = 0.0
    """If > 0, the weight of an auxiliary loss: a linear head on the trunk's output predicts, for each card the seat
    on move cannot see, which of the other three seats holds it (cross-entropy; labels from the true deal, free
    from the simulator). It shapes the trunk only: the head is not part of the saved policy. 0: no such head."""
    shared: bool = False
    """Train one network for all ``contracts`` (the observation's ``contract`` block tells it which it plays) instead
    of one each: each round labels ``chunk`` states in all, an equal share from each contract; each minibatch draws
    equally from each contract's buffer (of ``buffer`` states), relabelled by that contract's suit symmetries.
    ``states``, ``eval_every`` and ``snapshot_every`` still count per contract. Each contract keeps its own selection
    (``<contract>/best.pt``: the network at its best evaluation in that contract); the resume state is
    ``shared/state.pt``. Not with ``per_contract`` settings or ``init``."""
    workers: int = 1
    """Contracts trained at once, one process each (each with ``threads`` torch threads; the play and label phase of a
    process runs on one core); ``shared`` trains in one process."""


# ---------------------------------------------------------------------------- play and label
class LearnerPolicy:
    """The playout policy of ``rollout: learner`` (a ``vector.policy_rollout.CardPolicy``): a frozen copy of the
    learner, greedy by the compiled pass (``nn.greedy_choices``: near ties taken again in float64), its
    observations' ``available`` block set as the learner's are (Trumps, Fantan: ``fixed_contract_patch``)."""

    def __init__(self, contract: str, rules: Rules) -> None:
        self.flat: tuple[np.ndarray, ...] | None = None
        patch = fixed_contract_patch(contract, rules)
        off, size = BLOCKS["available"]
        self.block = slice(off, off + size)
        self.available = None if patch is None else np.unpackbits(patch[1], bitorder="little")[self.block]

    def load(self, net: PolicyNet) -> None:
        """Copy ``net``'s weights (later training does not change this policy)."""
        self.flat = flat_policy(net)

    def _observed(self, obs: np.ndarray) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
        """The frozen network and ``obs`` as the learner sees them (its ``available`` block set)."""
        if self.flat is None:
            raise RuntimeError("LearnerPolicy.load(net) must come before its first decision")
        if self.available is not None:
            obs = np.array(obs, np.float32)
            obs[:, self.block] = self.available
        return self.flat, obs

    def card_actions(self, contract: str, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return greedy_moves(*self._observed(obs), mask)

    def card_logits(self, contract: str, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        logits = greedy_choices(*self._observed(obs), mask)[1]
        return np.where(mask.astype(bool), logits.astype(np.float64), -np.inf)


class Labeller:
    """``num_games`` deals of one contract under one rules, seats played by role; labels sampled decisions."""

    def __init__(self, contract: str, rules: Rules, num_games: int, rng: np.random.Generator,
                 cfg: RolloutQConfig, policy: LearnerPolicy | None = None) -> None:  # fmt: skip
        from barbu_env.vector import VectorDeals, random_actions
        from barbu_env.vector.policy_rollout import PolicyRollouts
        from barbu_env.vector.rollout import Rollouts

        self.random_actions = random_actions
        self.rng, self.B, self.cfg = rng, num_games, cfg
        self.scale = contract_scale(contract, rules)
        self.env = VectorDeals(contract, rules, batch=num_games, seed=int(rng.integers(2**63)))
        self.by_policy = policy is not None
        self.rollouts = PolicyRollouts(self.env.tables, policy) if policy else Rollouts(self.env.tables)
        self.search = Rollouts(self.env.tables) if cfg.p_pimc_deal > 0 else None  # the PIMC seats' playouts
        self.patch = fixed_contract_patch(contract, rules)
        self.env.reset()
        self.roles = np.zeros((num_games, 4), np.int64)
        self.snapshots_on = False
        self._draw_roles(np.arange(num_games))
        self.learner_scores: list[float] = []
        self.decisions = 0  # decisions of every seat taken so far

    def playout_decisions(self) -> int:
        """Card decisions the learner's copy has taken in this labeller's playouts (0 with heuristic playouts)."""
        return self.rollouts.decisions if self.by_policy else 0

    def _draw_roles(self, games: np.ndarray) -> None:
        p_snap = self.cfg.p_snapshot if self.snapshots_on else 0.0
        self.roles[games] = draw_roles(self.rng, games.shape[0], self.cfg.p_heuristic, p_snap, True)
        for share, role in ((self.cfg.p_heuristic_deal, HEURISTIC), (self.cfg.p_pimc_deal, PIMC)):
            if share > 0:  # (no draw otherwise: runs without it keep their random streams)
                table = games[self.rng.random(games.shape[0]) < share]
                self.roles[table] = role
                self.roles[table, self.rng.integers(4, size=table.shape[0])] = LEARNER

    def step(self, net: PolicyNet, snapshot: PolicyNet | None) -> dict[str, np.ndarray] | None:
        """One decision in every game; returns the labelled states of this step (or None)."""
        env, B, cfg = self.env, self.B, self.cfg
        bits, numeric, mask, seat = env.observe_packed()
        role = self.roles[np.arange(B), seat]
        other = mask[:, DECLARE_BASE:].any(1)  # declarations and doubles: the heuristic's (or random doubles)
        apply_patch(bits, ~other, self.patch)
        counts = mask.sum(1)
        late = env.state.data[:, TRICK_NO] >= cfg.late_trick if cfg.late_trick > 0 else np.zeros(B, bool)
        share = np.where(late, cfg.late_label_prob, cfg.label_prob)
        label = ~other & (counts > 1) & (self.rng.random(B) < share)
        if cfg.rollout == "as_played":
            label &= (role == LEARNER) | (role == SNAPSHOT)
        search = (role == PIMC) & ~other
        teacher = env.heuristic_actions(other | (role == HEURISTIC) | label | search)
        actions = teacher.copy()
        search &= counts > 1
        if search.any() and self.search is not None:
            g = np.flatnonzero(search)
            actions[g] = pimc_actions(self.search, env.state.data[g], mask[g], teacher[g], cfg.pimc_samples,
                                      self.rng, cfg.rollout_threads)  # fmt: skip
        rand_double = mask[:, DOUBLE_BASE:].any(1) & (self.rng.random(B) < cfg.double_prob)
        if rand_double.any():
            actions[rand_double] = self.random_actions(mask[rand_double], self.rng)
        for r, model in ((LEARNER, net), (SNAPSHOT, snapshot)):
            idx = np.flatnonzero((role == r) & ~other)
            if idx.size and model is not None:
                a = greedy(model, unpack_observations(bits[idx], numeric[idx]), mask[idx])
                if r == LEARNER and cfg.epsilon > 0:
                    explore = self.rng.random(idx.size) < cfg.epsilon
                    if explore.any():
                        a[explore] = self.random_actions(mask[idx[explore]], self.rng)
                actions[idx] = a
        out = None
        if label.any():
            groups = ((False, cfg.worlds, True), (True, cfg.late_worlds, cfg.late_true_world))
            parts = [self._label(np.flatnonzero(label & (late == k)), n, true, bits, numeric, mask, seat, teacher)
                     for k, n, true in groups]  # fmt: skip
            parts = [x for x in parts if x is not None]
            out = parts[0] if len(parts) == 1 else {k: np.concatenate([x[k] for x in parts]) for k in parts[0]}
        self.decisions += B
        rewards, done = env.step(actions)
        ended = np.flatnonzero(done)
        if ended.size:
            learner = self.roles[ended] == LEARNER
            self.learner_scores.extend(rewards[ended][learner].tolist())
            self._draw_roles(ended)
        return out

    def _label(self, idx: np.ndarray, n_worlds: int, true_world: bool, bits: np.ndarray, numeric: np.ndarray,
               mask: np.ndarray, seat: np.ndarray, teacher: np.ndarray) -> dict[str, np.ndarray] | None:  # fmt: skip
        """The labelled states ``idx`` of this step, each move's target the mean of its playouts in ``n_worlds``
        worlds (the true deal if ``true_world``, the others redealt by PIMC's sampler); None if ``idx`` is empty."""
        if not idx.size:
            return None
        cfg, counts = self.cfg, mask.sum(1)
        base = self.env.state.data[idx]
        worlds = [base] * true_world + [resample_hands(base, self.rng) for _ in range(n_worlds - true_world)]
        per = np.repeat(np.arange(idx.size), counts[idx])  # the labelled state of each (state, move) pair
        acts = np.nonzero(mask[idx])[1]
        rows = np.concatenate([w[per] for w in worlds])
        first = np.tile(acts, n_worlds)
        pairs, acting = np.arange(rows.shape[0]), np.tile(seat[idx][per], n_worlds)
        if self.by_policy:
            seats = None
            if cfg.rollout != "learner" or cfg.rollout_opponents < 1:
                if cfg.rollout == "learner":
                    own = self.rng.random((idx.size, 4)) < cfg.rollout_opponents
                elif cfg.rollout == "as_played":
                    own = (self.roles[idx] == LEARNER) | (self.roles[idx] == SNAPSHOT)
                else:
                    own = np.zeros((idx.size, 4), bool)
                own[np.arange(idx.size), seat[idx]] = True
                seats = np.tile(own[per], (n_worlds, 1))
            scores = self.rollouts.play_out(rows, first, seats)
        else:
            scores = self.rollouts.play_out(rows, first, cfg.rollout_threads)
        own = scores[pairs, acting].reshape(n_worlds, -1)
        q = np.zeros((idx.size, NUM_ACTIONS), np.float32)
        q[per, acts] = own.mean(0) / self.scale
        out = {"bits": bits[idx], "numeric": numeric[idx], "mask": mask[idx].copy(), "q": q.astype(np.float16),
               "teacher": teacher[idx]}  # fmt: skip
        if cfg.belief > 0:
            out["owner"] = hidden_owners(base)
        return out


def hidden_owners(rows: np.ndarray) -> np.ndarray:
    """int8 ``[G, 52]``: for each game row of the batched engine and each card, which of the other seats holds it,
    relative to the seat on move (0, 1, 2: the next seat, the one opposite, the previous one), -1 for the cards
    that seat holds or that are out of every hand (the belief head's labels)."""
    me = rows[:, COLUMNS["to_move"]]
    owner = np.full((rows.shape[0], 52), -1, np.int8)
    bit = np.int64(1) << np.arange(52, dtype=np.int64)
    for r in range(1, 4):
        hand = rows[np.arange(rows.shape[0]), COLUMNS["hands"] + (me + r) % 4]
        owner[(hand[:, None] & bit) != 0] = r - 1
    return owner


class Buffer:
    """The most recent ``size`` labelled states, as a ring of numpy arrays."""

    def __init__(self, size: int, example: dict[str, np.ndarray]) -> None:
        self.size, self.n, self.pos = size, 0, 0
        self.data = {k: np.zeros((size, *v.shape[1:]), v.dtype) for k, v in example.items()}

    def add(self, part: dict[str, np.ndarray]) -> None:
        m = next(iter(part.values())).shape[0]
        idx = (self.pos + np.arange(m)) % self.size
        for k, v in part.items():
            self.data[k][idx] = v
        self.pos = (self.pos + m) % self.size
        self.n = min(self.n + m, self.size)

    def sample(self, rng: np.random.Generator, m: int) -> dict[str, np.ndarray]:
        j = rng.integers(self.n, size=m)
        return {k: v[j] for k, v in self.data.items()}


def centred(x: torch.Tensor, legal: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
    """``x`` minus its mean over the legal entries of each row (0 on illegal entries)."""
    x = torch.where(legal, x, 0.0)
    return torch.where(legal, x - (x.sum(1, keepdim=True) / count), 0.0)


def centred_mse(x: torch.Tensor, target: torch.Tensor, legal: torch.Tensor, count: torch.Tensor,
                weight: torch.Tensor | None = None) -> torch.Tensor:  # fmt: skip
    """The Q loss: mean over rows of the mean over the legal entries of (centred ``x`` - ``target``)², ``target``
    already centred; each row's term times ``weight`` (``[n]``) if given."""
    rows = ((centred(x, legal, count) - target) ** 2).sum(1).div(count[:, 0])
    return (rows if weight is None else rows.mul(weight)).mean()


@torch.no_grad()
def holdout(net: PolicyNet, part: dict[str, np.ndarray]) -> dict[str, float]:
    """On labelled states the network has not trained on: mean target of its greedy move minus the heuristic's,
    the best move's minus its, and how often it plays the heuristic's move."""
    q = part["q"].astype(np.float32)
    a = greedy(net, unpack_observations(part["bits"], part["numeric"]), part["mask"])
    rows = np.arange(q.shape[0])
    best = np.where(part["mask"].astype(bool), q, -np.inf).max(1)
    return {"holdout/gain_vs_heuristic": float((q[rows, a] - q[rows, part["teacher"]]).mean()),
            "holdout/regret": float((best - q[rows, a]).mean()),
            "holdout/agreement": float((a == part["teacher"]).mean())}  # fmt: skip


# ---------------------------------------------------------------------------- training
def imitation_weight(cfg: RolloutQConfig, states: int) -> float:
    """The imitation term's weight after ``states`` labelled states: ``bc_coef`` falling linearly to ``bc_final``
    over the first ``bc_states``, then ``bc_final``."""
    return cfg.bc_final + (cfg.bc_coef - cfg.bc_final) * max(0.0, 1 - states / max(cfg.bc_states, 1))


class Part:
    """One contract of a run: its folder and logs, suit symmetries, playout policy, selection and labelled states."""

    def __init__(self, cfg: RolloutQConfig, contract: str, rules: Rules, resumed: bool) -> None:
        self.contract = contract
        self.dir = Path(cfg.out_dir) / contract
        self.dir.mkdir(parents=True, exist_ok=True)
        self.gathers = suit_gathers(contract, cfg.augment)
        self.policy = LearnerPolicy(contract, rules) if cfg.rollout != "heuristic" else None
        self.logger = Logger(self.dir, fresh=not resumed)
        self.best = -float("inf")
        self.buf: Buffer | None = None

    def sample(self, rng: np.random.Generator, m: int) -> dict[str, torch.Tensor]:
        """``m`` labelled states from the buffer, relabelled by one of the contract's suit symmetries drawn at random:
        observations, legal moves, targets, the heuristic's moves (and the owners of ``belief``) in the new labels."""
        if self.buf is None:
            raise RuntimeError(f"no labelled states of {self.contract} to learn from yet")
        b = self.buf.sample(rng, m)
        oi, ai, am = self.gathers[int(rng.integers(len(self.gathers)))]
        out = {"obs": torch.from_numpy(unpack_observations(b["bits"], b["numeric"]))[:, oi],
               "legal": torch.from_numpy(b["mask"])[:, ai].bool(),
               "q": torch.from_numpy(b["q"].astype(np.float32))[:, ai],
               "teacher": am[torch.from_numpy(b["teacher"]).long()]}  # fmt: skip
        if "owner" in b:  # the owners' cards relabelled as the observation is
            out["owner"] = torch.from_numpy(b["owner"])[:, ai[:52]].long()
        return out


class Run:
    """Training of one network: play and label, learn, model selection, logging, resume. The network plays one
    contract, or with ``shared`` every contract of ``contracts`` (one :class:`Part` each)."""

    def __init__(self, cfg: RolloutQConfig, contracts: str | list[str], resume: bool) -> None:
        names = [contracts] if isinstance(contracts, str) else list(contracts)
        self.cfg, self.contract = cfg, "+".join(names)
        self.rules = load_rules(cfg.rules)
        self.dir = Path(cfg.out_dir) / (names[0] if len(names) == 1 else "shared")
        self.dir.mkdir(parents=True, exist_ok=True)
        torch.manual_seed(cfg.seed)
        self.rng = np.random.default_rng([cfg.seed, *(SEVEN.index(c) for c in names)])
        self.net = PolicyNet(hidden=tuple(cfg.hidden), card_hidden=cfg.card_hidden)
        width = cfg.hidden[-1] if cfg.hidden else self.net.obs_size
        #: The auxiliary head of ``belief`` (52 cards x 3 seats), trained beside the network, not saved with it.
        self.belief = torch.nn.Linear(width, 52 * 3) if cfg.belief > 0 else None
        params = list(self.net.parameters()) + (list(self.belief.parameters()) if self.belief is not None else [])
        self.opt = torch.optim.Adam(params, lr=cfg.lr, fused=True)
        self.ema: AveragedModel | None = None
        self.pool: list[dict[str, torch.Tensor]] = []
        #: ``states``, ``eval_every`` and ``snapshot_every`` count per contract: the run labels ``n`` times as many.
        self.n = len(names)
        self.goal = cfg.states * self.n
        self.states = self.updates = 0
        self.wall = 0.0
        #: Card decisions the learner's copy took in labelling playouts by this process's ``train`` calls.
        self.played_out = 0
        self.next_eval, self.next_snapshot = cfg.eval_every * self.n, cfg.snapshot_every * self.n
        state = self.dir / "state.pt"
        self.resumed = resume and state.is_file()
        self.parts = [Part(cfg, c, self.rules, self.resumed) for c in names]
        saved = self._load_state(state) if self.resumed else {}
        if not self.resumed and cfg.init:
            init_weights(self.net, cfg.init, self.contract)
        if cfg.ema > 0:
            self.ema = AveragedModel(self.net, multi_avg_fn=get_ema_multi_avg_fn(cfg.ema), use_buffers=True)
            if self.resumed:
                self.ema.load_state_dict(saved["ema"])
        if self.belief is not None and self.resumed:
            self.belief.load_state_dict(saved["belief"])

    # -- persistence
    _KEYS = ("states", "updates", "wall", "next_eval", "next_snapshot", "pool")

    def _load_state(self, path: Path) -> dict[str, Any]:
        """Restore the resume state at ``path``; returns it (its ``ema`` entry is read once the average exists)."""

        def same_heads(saved: dict[str, Any]) -> None:
            if ("belief" in saved) != (self.belief is not None):
                raise ValueError(
                    f"resume state {str(path)!r} was written with{'out' if self.belief else ''} the belief "
                    f"head: resume with belief {'0' if self.belief else '> 0'}, as the run was started"
                )

        s = load_resume(path, self.contract, self.net, self.opt, self.rng, check=same_heads)
        for k in self._KEYS:
            setattr(self, k, s[k])
        best = s["best"] if isinstance(s["best"], list) else [s["best"]]  # one float in single-contract states
        for part, b in zip(self.parts, best, strict=True):
            part.best = b
        return s

    def save_state(self) -> None:
        extra: dict[str, Any] = {"best": [p.best for p in self.parts]}
        if self.ema is not None:
            extra["ema"] = self.ema.state_dict()
        if self.belief is not None:
            extra["belief"] = self.belief.state_dict()
        save_resume(self.dir, self.contract, self.net, self.opt, self.rng,
                    {k: getattr(self, k) for k in self._KEYS} | extra)  # fmt: skip

    @property
    def kept(self) -> PolicyNet:
        """The network evaluated and saved: the weights' moving average if ``ema``, else the trained weights."""
        return self.net if self.ema is None else cast(PolicyNet, self.ema.module)

    def log(self, part: Part, metrics: dict[str, float]) -> None:
        part.logger.log(self.states, self.updates, self.wall, metrics)

    # -- learning
    def minibatch(self) -> dict[str, torch.Tensor]:
        """``minibatch`` labelled states, an equal share from each contract (:meth:`Part.sample`)."""
        m, n = self.cfg.minibatch, self.n
        shares = [p.sample(self.rng, m // n + (i < m % n)) for i, p in enumerate(self.parts)]
        return shares[0] if n == 1 else {k: torch.cat([s[k] for s in shares]) for k in shares[0]}

    def fit(self, samples: int) -> dict[str, float]:
        """``samples`` minibatch samples: centred Q regression over the legal moves + value MSE."""
        cfg = self.cfg
        lr = cfg.lr * (1 - (1 - cfg.lr_final) * min(self.states / max(self.goal, 1), 1.0))
        for group in self.opt.param_groups:
            group["lr"] = lr
        bc = imitation_weight(cfg, self.states // self.n)
        stats: dict[str, list[float]] = {"losses/q_mse": [], "losses/value_mse": []}
        self.net.train()
        for _ in range(max(1, samples // cfg.minibatch)):
            b = self.minibatch()
            obs, legal, q = b["obs"], b["legal"], b["q"]
            count = legal.sum(1, keepdim=True)
            z = self.net.body(obs)
            logits, v = self.net.heads(z, obs, legal)
            mse = centred_mse(logits, centred(q, legal, count), legal, count)
            vmse = ((v - torch.where(legal, q, -1e9).max(1).values) ** 2).mean()
            loss = mse + vmse
            if self.belief is not None:
                ce = torch.nn.functional.cross_entropy(self.belief(z).view(-1, 3), b["owner"].view(-1),
                                                       ignore_index=-1)  # fmt: skip
                loss = loss + cfg.belief * ce
                stats.setdefault("losses/belief_ce", []).append(ce.item())
            if bc > 0:
                ce = torch.nn.functional.cross_entropy(torch.where(legal, cfg.bc_temp * logits, -1e9), b["teacher"])
                loss = loss + bc * ce
                stats.setdefault("losses/cross_entropy", []).append(ce.item())
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            if self.ema is not None:
                self.ema.update_parameters(self.net)
            self.updates += 1
            stats["losses/q_mse"].append(mse.item())
            stats["losses/value_mse"].append(vmse.item())
        self.net.eval()
        return {k: float(np.mean(v)) for k, v in stats.items()} | {"charts/lr": lr, "charts/bc_coef": bc}

    def evaluate(self) -> None:
        """Duplicate margins over the heuristic (and PIMC, if ``eval_pimc``) on each contract's selection boards;
        keep each contract's best network by ``select``."""
        cfg = self.cfg
        net = self.kept.eval()
        for part in self.parts:
            mean, half, boards = vector_margin(net, part.contract, self.rules, cfg.eval_boards, cfg.seed + 10_000)
            row = {"eval/margin_vs_heuristic": mean, "eval/ci95": half}
            if cfg.eval_pimc:
                row |= self.pimc_margin(part)
            vs_pimc = cfg.select == "pimc"
            score, ci = (row["eval/margin_vs_pimc"], row["eval/pimc_ci95"]) if vs_pimc else (mean, half)
            if score > part.best or cfg.select == "last":
                part.best = score
                meta = {"states": self.states, "updates": self.updates, "wall_s": round(self.wall, 1),
                        "selection_eval": {"vs": "pimc" if vs_pimc else "heuristic", "select": cfg.select,
                                           "boards": cfg.eval_pimc if vs_pimc else boards, "margin": score,
                                           "ci95": ci},
                        "evaluation": row}  # fmt: skip
                if self.n > 1:
                    meta["shared"] = [p.contract for p in self.parts]
                save_checkpoint(part.dir / "best.pt", net, part.contract, dataclasses.asdict(self.cfg), meta)
            row["eval/best"] = part.best
            self.log(part, row)

    def pimc_margin(self, part: Part) -> dict[str, float]:
        """1 greedy policy vs 3 ``pimc`` on ``eval_pimc`` boards of seed ``seed + 20000`` (barbu-eval's harness)."""
        from barbu_env.evaluation import evaluate as duplicate

        path = part.dir / "eval.pt"
        save_checkpoint(path, self.kept.eval(), part.contract, dataclasses.asdict(self.cfg))
        s = duplicate([str(path), "pimc"], contracts=part.contract, boards=self.cfg.eval_pimc,
                      seed=self.cfg.seed + 20_000, rules=eval_rules(self.rules))  # fmt: skip
        ci = s["contracts"][part.contract]["agents"][s["agents"][0]]
        return {"eval/margin_vs_pimc": ci["mean"], "eval/pimc_ci95": ci["half_width"]}

    def labellers(self, part: Part) -> list[Labeller]:
        """The contract's undoubled games and (if ``doubled`` > 0) its doubled ones."""
        cfg = self.cfg
        n_doubled = round(cfg.num_games * cfg.doubled)
        plain = eval_rules(self.rules)
        doubling = self.rules if self.rules.doubling != "off" else self.rules.replace(doubling="classic")
        c, p = part.contract, part.policy
        out = [Labeller(c, plain, cfg.num_games - n_doubled, self.rng, cfg, p)]
        if n_doubled:
            out.append(Labeller(c, doubling, n_doubled, self.rng, cfg, p))
        return out

    def label(self, part: Part, labellers: list[Labeller], want: int, snap: PolicyNet) -> dict[str, float]:
        """Play ``part``'s games until ``want`` states are labelled; add them to its buffer; returns its metrics
        (``holdout`` on the new states, learner points per deal, decisions of every seat played, the learner
        copy's playout decisions)."""
        if part.policy is not None:
            part.policy.load(self.net)
        for lab in labellers:
            lab.snapshots_on = bool(self.pool)
        played0 = sum(lab.decisions for lab in labellers)
        out0 = sum(lab.playout_decisions() for lab in labellers)
        parts: list[dict[str, np.ndarray]] = []
        got = 0
        while got < want:
            for lab in labellers:
                new = lab.step(self.net, snap if self.pool else None)
                if new is not None:
                    parts.append(new)
                    got += new["q"].shape[0]
        chunk = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
        row = holdout(self.net, chunk)
        if part.buf is None:
            part.buf = Buffer(self.cfg.buffer, chunk)
        part.buf.add(chunk)
        scores = labellers[0].learner_scores
        if scores:
            row["charts/points_per_deal"] = float(np.mean(scores))
        for lab in labellers:
            lab.learner_scores.clear()
        return row | {
            "states": got,
            "played": sum(lab.decisions for lab in labellers) - played0,
            "played_out": sum(lab.playout_decisions() for lab in labellers) - out0,
        }

    def train(self, seconds: float | None = None, position: int = 0) -> tuple[int, int, float]:
        """Rounds until ``states`` states of each contract are labelled (or, if given, ``seconds`` have passed: the
        benchmark); ``position``: the progress bar's line. Returns (states labelled, decisions of every seat played,
        seconds)."""
        cfg = self.cfg
        start = time.perf_counter()
        labellers = [self.labellers(p) for p in self.parts]
        snap = PolicyNet(hidden=tuple(cfg.hidden), card_hidden=cfg.card_hidden).eval()
        if not self.resumed:
            self.evaluate()  # the starting network's margin: the curve's first point (and the best so far)
        bar = tqdm(total=self.goal, initial=min(self.states, self.goal), desc=self.contract, unit="state",
                   leave=False, position=position)  # fmt: skip
        new = played_all = 0
        while self.states < self.goal and (seconds is None or time.perf_counter() - start < seconds):
            t0 = time.time()
            if self.pool:
                snap.load_state_dict(self.pool[int(self.rng.integers(len(self.pool)))])
            rows = [self.label(p, labs, cfg.chunk // self.n + (i < cfg.chunk % self.n), snap)
                    for i, (p, labs) in enumerate(zip(self.parts, labellers, strict=True))]  # fmt: skip
            got, played, out = (int(sum(r.pop(k) for r in rows)) for k in ("states", "played", "played_out"))
            t_play = time.time() - t0
            row = self.fit(int(cfg.replay * got))
            self.states += got
            new += got
            played_all += played
            self.played_out += out
            dt = time.time() - t0
            self.wall += dt
            bar.update(got)
            row |= {"charts/states_per_s": got / max(dt, 1e-9), "charts/all_seat_decisions_per_s": played / dt,
                    "charts/playout_decisions_per_s": out / dt, "charts/play_share": t_play / dt}  # fmt: skip
            for part, own in zip(self.parts, rows, strict=True):
                self.log(part, own | row)
            if self.states >= self.next_snapshot:
                self.pool = [*self.pool, {k: v.clone() for k, v in self.net.state_dict().items()}][-cfg.pool_size :]
                self.next_snapshot += cfg.snapshot_every * self.n
            if self.states >= self.next_eval or self.states >= self.goal:
                self.evaluate()
                self.next_eval += cfg.eval_every * self.n
                self.save_state()
        bar.close()
        return new, played_all, time.perf_counter() - start

    def close_logs(self) -> None:
        """Close the TensorBoard writers (without drawing the curves)."""
        for part in self.parts:
            part.logger.tb.close()

    def finish(self) -> dict[str, Path]:
        """Close the logs, draw the curves, export; returns each contract's best checkpoint."""
        return {p.contract: finish_run(self.cfg, p.dir, p.contract, p.logger, "labelled states") for p in self.parts}


def train_run(cfg: RolloutQConfig, contracts: str | list[str], resume: bool) -> dict[str, Path]:
    """Train one network: one contract of ``cfg`` (its ``per_contract`` settings applied), or with ``shared`` all of
    ``contracts``; returns the best checkpoint of each contract."""
    if isinstance(contracts, str):
        cfg = cfg.for_contract(contracts)
    torch.set_num_threads(cfg.threads)
    run = Run(cfg, contracts, resume)
    run.train(position=0 if cfg.shared else cfg.contracts.index(run.contract) % cfg.workers)
    paths = run.finish()
    kept = {
        "heuristic": "best duplicate margin vs heuristic",
        "pimc": f"best margin vs PIMC-16 ({cfg.eval_pimc} boards)",
        "last": "last network's margin vs heuristic",
    }[cfg.select]
    for part in run.parts:
        print(f"{part.contract:12s} {kept} during training: {part.best:+.2f} points/deal ({run.states} labelled "
              f"states{' in all' if run.n > 1 else ''}, {run.wall:.0f} s)", flush=True)  # fmt: skip
    return paths


def train(cfg: RolloutQConfig, resume: bool = False) -> dict[str, Path]:
    """Train every contract of ``cfg``: one network for all (``shared``) or one each, ``workers`` contracts at a time
    (one process each); returns the best checkpoint path of each."""
    if cfg.shared and (cfg.per_contract or cfg.init):
        raise ValueError("config shared=true trains one network for every contract: it takes no per_contract "
                         f"settings (got {sorted(cfg.per_contract)}) and no init (got {cfg.init!r})")  # fmt: skip
    for c in cfg.contracts:
        cc = cfg.for_contract(c)
        if cc.select == "pimc" and not cc.eval_pimc:
            raise ValueError(f"config select=pimc ({c}) needs eval_pimc > 0: the boards of the PIMC evaluation")
        if cc.rollout_opponents < 1 and cc.rollout != "learner":
            raise ValueError(f"config rollout_opponents < 1 ({c}) needs rollout=learner: the other rollouts fix "
                             "who plays the opponents' seats")  # fmt: skip
    if cfg.shared:
        return train_run(cfg, list(cfg.contracts), resume)
    if cfg.workers == 1:
        return {c: train_run(cfg, c, resume)[c] for c in cfg.contracts}
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(cfg.workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        jobs = {c: pool.submit(train_run, cfg, c, resume) for c in cfg.contracts}
        return {c: job.result()[c] for c, job in jobs.items()}


def main(argv: list[str] | None = None) -> None:
    run_cli("rollout_q", __doc__, RolloutQConfig, train, argv, resume_help="continue from out_dir/<contract>/state.pt")


if __name__ == "__main__":
    main()
