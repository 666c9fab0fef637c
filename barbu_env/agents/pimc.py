"""Perfect-Information Monte-Carlo (PIMC) search for card play (Ginsberg's GIB; Buro et al. for Skat).

For a card decision the agent samples ``samples`` deals consistent with its information state (own
hand, hand sizes, played cards and known voids respected; :func:`sample_world`), plays each
candidate card on each sample and finishes the deal with the heuristic in every seat
(:func:`barbu_env.agents.heuristic.rollout`, bitmask play on ``Deal`` clones, no observation
encoding), and keeps the card with the best mean score. The same samples serve every
candidate (common random numbers), and cards that are equivalent (same suit, no unseen card between
them, same point value) are evaluated once. ``rollouts="compiled"`` (default) plays all the samples'
rollouts as one batch on the compiled engine (:class:`barbu_env.vector.rollout.Rollouts`, the compiled
heuristic): the same samples and the same playouts, hence the same decisions, many times faster;
``rollouts="python"`` plays them on ``Deal`` clones. Rules the batched engine does not cover (Barbu King,
R11) always use the Python rollouts.

``rollout`` names the player of the rollouts: ``"heuristic"`` (default) or a checkpoint file or folder
(``pimc:rollout=checkpoints``: the shipped networks, one per contract; loaded by
:class:`~barbu_env.agents.neural.NeuralAgent`, which imports torch). With networks, every seat of every
rollout plays the contract's network greedily, all the rollouts of one decision stepped together on the
batched engine with one forward pass per step over the live games
(:class:`barbu_env.vector.policy_rollout.PolicyRollouts`). Contracts without a network and rules the batched
engine does not cover fall back to the heuristic rollouts above. ``weighting="policy"`` (with networks) weights
each sampled world by the likelihood of the other seats' card play so far under the network, sampling from
``softmax(logits / temperature)`` (``temperature``, default 1; the shipped networks' logits are the seat's
expected score as a fraction of the size of the contract's total, up to a constant per decision), instead of
counting every world once (``"uniform"``). ``prior=K`` (with networks; default 0) also counts the network's own
value of each candidate move as K more worlds: a move's value is ``(sum over the worlds of its playout scores +
K * size * logit) / (samples + K)``, ``size`` the size of the contract's total (``Contract.scale``; the logits,
up to a constant per decision that no choice depends on, are expected scores in that unit: those of
``training/rollout_q.py``'s checkpoints; a network whose logits are not move values gives this no meaning). With
``weighting=policy`` the sum over the worlds is their weighted mean times ``samples``.

Objective: the seat's own deal score, settlement included (``Deal.scores``, R8.1). Every contract's
scores sum to a fixed total (E5) and settlement is zero-sum (R6.5), so the own score and the own
score relative to the table mean differ by a constant and rank moves identically.

Declaration and doubling are delegated to the heuristic (a one-off decision per deal).
"""

from __future__ import annotations

from math import inf
from typing import Any

import numpy as np

from ..actions import NUM_ACTIONS
from ..cards import FULL_DECK, SUIT_MASK, copies_add, copies_cards
from ..contracts import Contract
from ..engine import InfoState
from ..engine.deal import Deal, Phase, mask_to_list
from ..observation import encode
from ..rules import Rules
from .base import Agent
from .heuristic import heuristic_action, rollout

_PLAY, _FANTAN = int(Phase.PLAY), int(Phase.FANTAN)
#: Rejection tries before :func:`sample_world` falls back on the engine's sampler.
REJECTION_TRIES = 16
#: Default number of sampled deals per card decision (a few ms per decision: ``benchmark`` rows pimc-*).
DEFAULT_SAMPLES = 16
#: Where the rollouts run (see the module docstring).
ROLLOUTS = ("compiled", "python")
#: How the sampled worlds are weighted (see the module docstring).
WEIGHTINGS = ("uniform", "policy")


def sample_world(info: InfoState, rng: np.random.Generator, tries: int = REJECTION_TRIES) -> Deal:
    """A full deal consistent with ``info``: the unseen cards are shuffled and dealt to the other seats
    until no seat gets a card it has shown it cannot hold (rejection: exactly uniform over consistent
    deals, and fast); after ``tries`` failures, the engine's sampler (:meth:`InfoState.sample`)."""
    hands = sample_hands(info, rng, tries)
    world = info.view.clone()
    world.set_hands(hands)
    return world


def sample_hands(info: InfoState, rng: np.random.Generator, tries: int = REJECTION_TRIES) -> list[int]:
    """The hand masks of :func:`sample_world` (the same draws), without building the deal; copies masks with two
    packs (R11.5)."""
    view, seat = info.view, info.seat
    if view.n == 6:
        return _sample_two_packs(info, rng, tries)
    bits = [1 << c for c in mask_to_list(view.deck & ~info.hand & ~info.played)]
    others = [s for s in range(view.n) if s != seat]
    sizes, excluded = info.hand_sizes, info.excluded
    for _ in range(tries):
        perm = bits[:]
        rng.shuffle(perm)  # the swaps of rng.permutation(cards): the same order
        hands = [0] * view.n
        hands[seat] = info.hand
        i = 0
        for s in others:
            m = sum(perm[i : i + sizes[s]])  # distinct bits: the sum is their union
            i += sizes[s]
            if m & excluded[s]:
                break
            hands[s] = m
        else:
            return hands
    return info.sample(rng).hands


def _sample_two_packs(info: InfoState, rng: np.random.Generator, tries: int) -> list[int]:
    """:func:`sample_hands` with two packs: the unseen copies are shuffled and dealt (a seat may get both copies of
    a card) until no seat gets a card it has shown it cannot hold; then the engine's sampler."""
    view, seat = info.view, info.seat
    cards = copies_cards(view.unseen(seat))
    sizes, excluded = info.hand_sizes, info.excluded
    for _ in range(tries):
        rng.shuffle(cards)
        hands = [0] * view.n
        hands[seat] = info.hand
        i = 0
        for s in range(view.n):
            if s == seat:
                continue
            m = 0
            for c in cards[i : i + sizes[s]]:
                m = copies_add(m, 1 << c)
            i += sizes[s]
            if m & excluded[s]:
                break
            hands[s] = m
        else:
            return hands
    world = info.sample(rng)
    return [world.held(s) for s in range(view.n)]


def candidate_moves(d: Deal, seat: int, legal: list[int]) -> dict[int, list[int]]:
    """Legal moves grouped into classes of equivalent cards: ``{representative: members}``.

    In trick play two cards of one suit are equivalent when every card ranked between them is in the
    hand or already played and both carry the same points (they win and lose the same tricks); with two packs
    (R11.5) no other copy of either may be unseen either (a later identical card beats it)."""
    if d.phase != _PLAY:
        return {a: [a] for a in legal}
    unseen = d.unseen(seat) & FULL_DECK  # (the cards with a copy unseen)
    vals = d.card_vals
    out: dict[int, list[int]] = {}
    prev = -1
    for c in legal:  # ascending ids: same-suit cards are consecutive
        if (
            prev >= 0
            and prev // 13 == c // 13
            and not unseen & SUIT_MASK[c // 13] & ((2 << c) - 1) & ~((1 << prev) - 1)  # none from prev to c
            and (not vals or vals[c] == vals[prev])
        ):
            rep = next(r for r, members in out.items() if prev in members)
            out[rep].append(c)
        else:
            out[c] = [c]
        prev = c
    return out


class PIMCAgent(Agent):
    """PIMC card play with heuristic or policy rollouts; heuristic declaration and doubling."""

    name = "pimc"

    def __init__(self, seed: int | None = None, samples: int = DEFAULT_SAMPLES, rollouts: str = "compiled",
                 rollout: str = "heuristic", weighting: str = "uniform", temperature: float = 1.0,
                 prior: float = 0.0) -> None:  # fmt: skip
        super().__init__(seed)
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise ValueError(f"bad pimc option samples={samples!r}: expected an integer >= 1")
        if rollouts not in ROLLOUTS:
            raise ValueError(f"bad pimc option rollouts={rollouts!r}: expected one of {list(ROLLOUTS)}")
        if not isinstance(rollout, str) or not rollout.strip():
            raise ValueError(f"bad pimc option rollout={rollout!r}: expected 'heuristic' or a checkpoint file or "
                             "folder (e.g. rollout=checkpoints)")  # fmt: skip
        if weighting not in WEIGHTINGS:
            raise ValueError(f"bad pimc option weighting={weighting!r}: expected one of {list(WEIGHTINGS)}")
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not 0 < temperature < inf:
            raise ValueError(f"bad pimc option temperature={temperature!r}: expected a number > 0")
        if isinstance(prior, bool) or not isinstance(prior, (int, float)) or not 0 <= prior < inf:
            raise ValueError(f"bad pimc option prior={prior!r}: expected a number >= 0 (the network's weight, in "
                             "worlds)")  # fmt: skip
        if prior and rollout == "heuristic":
            raise ValueError(
                f"bad pimc option prior={prior!r}: it counts a network's move values as worlds, so it needs policy "
                "rollouts (rollout=checkpoints or a checkpoint path)"
            )
        if rollout != "heuristic" and rollouts != "compiled":
            raise ValueError(f"bad pimc options rollout={rollout!r} with rollouts={rollouts!r}: policy rollouts "
                             "run on the batched engine only (rollouts=compiled)")  # fmt: skip
        if weighting == "policy" and rollout == "heuristic":
            raise ValueError(
                "bad pimc option weighting=policy: it weights worlds by a policy's likelihood of the "
                "observed play, so it needs policy rollouts (rollout=checkpoints or a checkpoint path)"
            )
        self.samples, self.rollouts, self.rollout = samples, rollouts, rollout
        self.weighting, self.temperature, self.prior = weighting, float(temperature), float(prior)
        self.policy: Any = None  # the NeuralAgent whose networks play the rollouts
        if rollout != "heuristic":
            from .neural import NeuralAgent

            try:
                self.policy = NeuralAgent(rollout, seed=seed)
            except ValueError as e:
                raise ValueError(f"bad pimc option rollout={rollout!r}: {e} (expected 'heuristic' or a checkpoint "
                                 "file or folder)") from None  # fmt: skip
        self._compiled: dict[Rules, tuple[Any, Any]] = {}  # rules -> (Rollouts, PolicyRollouts), None where not batched

    def options(self) -> dict[str, Any]:
        out: dict[str, Any] = {} if self.samples == DEFAULT_SAMPLES else {"samples": self.samples}
        if self.rollouts != "compiled":
            out["rollouts"] = self.rollouts
        if self.rollout != "heuristic":
            out["rollout"] = self.rollout
        if self.weighting != "uniform":
            out["weighting"] = self.weighting
        if self.temperature != 1.0:
            out["temperature"] = self.temperature
        if self.prior:
            out["prior"] = self.prior
        return out

    def _engines(self, rules: Rules) -> tuple[Any, Any]:
        """The compiled heuristic playouts and policy playouts for ``rules`` (built once); None where not used or
        not batched (Barbu King: the Python rollouts)."""
        if self.rollouts != "compiled":
            return None, None
        if rules not in self._compiled:
            from ..vector.tables import build_tables, check_rules

            try:
                check_rules(rules)
            except ValueError:  # not batched (Barbu King): the Python rollouts
                self._compiled[rules] = None, None
            else:
                from ..vector.policy_rollout import PolicyRollouts
                from ..vector.rollout import Rollouts

                t = build_tables(rules)
                self._compiled[rules] = Rollouts(t), None if self.policy is None else PolicyRollouts(t, self.policy)
        return self._compiled[rules]

    def act_info(self, info: InfoState) -> int:
        d, seat = info.view, info.seat
        if d.phase not in (_PLAY, _FANTAN):
            return heuristic_action(d, seat)
        legal = d.legal_actions()
        if len(legal) == 1:
            return legal[0]
        classes = candidate_moves(d, seat, legal)
        reps = list(classes)
        if len(reps) == 1:
            return legal[0]
        totals = np.zeros(len(reps))
        sign = d.rules.score_sign  # R11: Barbu King's points are bad
        compiled, by_policy = self._engines(d.rules)
        if by_policy is not None and d.contract is not None and d.contract.name in self.policy.nets:
            worlds = [sample_hands(info, self.rng) for _ in range(self.samples)]
            scores = by_policy.scores(d, worlds, reps, seat)
            if self.weighting == "policy":
                weights = world_weights(by_policy.log_likelihoods(d, worlds, seat, self.temperature))
                totals += sign * self.samples * (weights @ scores)
            else:
                totals += sign * scores.sum(axis=0)
            if self.prior:
                totals += self.prior * self._move_values(info, d.contract, legal, reps)
        elif compiled is not None:
            worlds = [sample_hands(info, self.rng) for _ in range(self.samples)]
            totals += (sign * compiled.scores(d, worlds, reps, seat)).sum(axis=0)  # int sums: exact
        else:
            for _ in range(self.samples):
                world = sample_world(info, self.rng)
                for i, a in enumerate(reps):
                    w = world.clone()
                    w.apply(a)
                    scores = rollout(w).scores
                    if scores is None:
                        raise RuntimeError("PIMC rollout stopped before the end of the deal")
                    totals[i] += sign * scores[seat]
        best = totals.max()
        h = heuristic_action(d, seat)
        for rep, members in classes.items():  # ties go to the heuristic's own choice
            if h in members and totals[reps.index(rep)] >= best - 1e-9:
                return h
        return reps[int(np.argmax(totals))]

    def _move_values(self, info: InfoState, contract: Contract, legal: list[int], reps: list[int]) -> np.ndarray:
        """``contract``'s network's values of the moves ``reps`` for ``info.seat`` (its logits times
        :meth:`Contract.scale`), from the seat's observation (encoded from any deal consistent with its information)."""
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        mask[legal] = 1
        obs = encode(info.sample(self.rng), info.seat)
        logits = self.policy.card_logits(contract.name, obs[None], mask[None])[0]
        return contract.scale(info.view.rules) * logits[reps]


def world_weights(log_likelihoods: np.ndarray) -> np.ndarray:
    """Weights summing to 1 proportional to ``exp(log_likelihoods)``; uniform when every world is impossible."""
    top = log_likelihoods.max()
    if not np.isfinite(top):
        return np.full(log_likelihoods.shape, 1 / log_likelihoods.size)
    w = np.exp(log_likelihoods - top)
    return w / w.sum()


__all__ = ["DEFAULT_SAMPLES", "ROLLOUTS", "WEIGHTINGS", "PIMCAgent", "candidate_moves", "sample_hands", "sample_world",
           "world_weights"]  # fmt: skip
