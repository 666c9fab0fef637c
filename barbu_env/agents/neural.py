"""Neural agents: trained policies loaded from checkpoints (torch is imported only here).

``make("checkpoints/no_queens.pt")`` plays the card play (and Fantan passes) of the contract its
checkpoint was trained for; ``make("checkpoints/")`` loads every ``<contract>.pt`` of a folder and
plays each contract with its own network. Everything no network covers — the declaration and the
doubling decisions (unless the ``bidding`` option hands them to the bidding networks of :mod:`.bidding`)
and contracts without a checkpoint — is played by the ``fallback`` agent (``heuristic`` by default). The
network reads exactly the env's observation and action mask (:func:`barbu_env.observation.encode`), so a
checkpoint plays in any ``barbu_env.env`` game of the sizes it was trained on (other layouts, e.g. 3 or 5
players or option ``positive``, are refused with a ``ValueError``).

Options (``"path.pt:greedy=false,fallback=random"``): ``greedy`` (default true: the most likely
legal action; false samples from the policy with the agent's seeded RNG; true/false/yes/no/1/0),
``fallback``, and ``bidding``: ``learned`` (the bidding networks of :mod:`.bidding` declare and double),
``heuristic`` (the fallback declares and doubles), ``declare`` or ``double`` (only that one learned), or ``auto``
(default: ``learned`` where both networks are found, else ``heuristic``; so ``make("checkpoints")`` is the
full-match agent and ``"checkpoints:bidding=heuristic"`` keeps the heuristic's bidding); the networks are read
from ``bidding_dir`` (default: the ``bidding`` folder beside the card-play checkpoints, e.g.
``checkpoints/bidding/``). :meth:`NeuralAgent.fallback_contracts` names the contracts whose card play would
go to the fallback (``barbu-eval`` refuses to evaluate a checkpoint on those).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..actions import NUM_ACTIONS
from ..engine import InfoState
from ..engine.deal import DECLARE, DOUBLE, FANTAN_PLAY, PLAY
from ..observation import encode, phase_and_contract
from ..options import as_bool
from .base import Agent

#: Relative gap under which a choice of the compiled pass is taken again from the network's sums in float64
#: (``nn.greedy_choices``, which :meth:`NeuralAgent.card_actions` and the trainers' playouts use):
#: 20 times the largest gap measured between the float32 pass's logits and the float64 ones on the shipped networks
#: (2.2e-7 of ``1 + |largest logit|``; ``tests/test_policy_kernel.py`` checks it stays under a tenth of this).
TIE = 4e-6


def masked_choice(logits: np.ndarray, mask: np.ndarray, greedy: bool, rng: np.random.Generator) -> int:
    """The legal action (``mask`` non-zero) with the largest of ``logits`` (float64 [A]) if ``greedy``, else one
    drawn with ``rng`` from their softmax over the legal actions."""
    legal = np.flatnonzero(mask)
    if greedy:
        return int(legal[np.argmax(logits[legal])])
    z = logits[legal] - logits[legal].max()
    p = np.exp(z) / np.exp(z).sum()
    return int(rng.choice(legal, p=p))


class NeuralAgent(Agent):
    """Plays card decisions with per-contract policy networks, the rest with a fallback agent."""

    name = "neural"

    def __init__(self, path: str, seed: int | None = None, greedy: bool = True, fallback: str = "heuristic",
                 bidding: str = "auto", bidding_dir: str | None = None) -> None:  # fmt: skip
        super().__init__(seed)
        import torch

        from ..nn import flat_policy, greedy_choices, load_checkpoint
        from ..vector.jit import greedy_actions
        from . import make

        if not isinstance(fallback, str):
            raise ValueError(f"bad value {fallback!r} for option 'fallback': expected an agent spec, e.g. 'heuristic'")
        self._torch = torch
        self.path, self.greedy, self.fallback_spec = str(path), as_bool(greedy, "greedy"), fallback
        p = Path(path)
        if not p.exists():
            raise ValueError(f"checkpoint {str(path)!r} not found")
        files = sorted(p.glob("*.pt")) if p.is_dir() else [p]
        if not files:
            raise ValueError(f"no checkpoint (*.pt) found in folder {str(p)!r}")
        self.nets: dict[str, Any] = {}
        self.meta: dict[str, dict[str, Any]] = {}
        for f in files:
            net, ckpt = load_checkpoint(f)
            if ckpt["contract"] in self.nets:
                raise ValueError(f"two checkpoints for contract {ckpt['contract']!r} in {str(p)!r}")
            self.nets[ckpt["contract"]] = net
            self.meta[ckpt["contract"]] = ckpt.get("meta", {})
        #: Per contract its network as :meth:`card_actions`' compiled pass reads it; the pass itself.
        self._flat = {c: flat_policy(net) for c, net in self.nets.items()}
        self._greedy_choices = greedy_choices
        #: The compiled pass (one row at a time in :meth:`_decide`) and its output buffers: logits, choice, near tie.
        self._pass = greedy_actions
        self._row = (np.empty((1, 0), np.float32), np.empty(1, np.int64), np.empty(1, np.bool_))
        try:
            self.fallback = make(fallback, seed=seed)
        except ValueError as e:
            raise ValueError(f"bad value {fallback!r} for option 'fallback': {e}") from None
        from .bidding import BIDDING_OPTIONS, LearnedBidding, resolve

        if bidding not in BIDDING_OPTIONS:
            raise ValueError(f"bad value {bidding!r} for option 'bidding': expected one of {list(BIDDING_OPTIONS)}")
        if bidding_dir is not None and not isinstance(bidding_dir, str):
            raise ValueError(f"bad value {bidding_dir!r} for option 'bidding_dir': expected a folder path")
        folder = Path(bidding_dir) if bidding_dir is not None else (p if p.is_dir() else p.parent) / "bidding"
        #: The option as given (the spec repeats it) and what it resolved to (``auto``: by ``folder``'s files).
        self.bidding_option, self.bidding = bidding, resolve(bidding, folder)
        self.bidding_dir = bidding_dir
        #: The bidding decisions the networks take (``"declare"``, ``"double"``); the fallback takes the others.
        self.bidding_roles = BIDDING_OPTIONS[self.bidding]
        self.learned = LearnedBidding(folder, self.bidding_roles) if self.bidding_roles else None

    @property
    def spec(self) -> str:
        opts = [k for k, v in (("greedy=false", not self.greedy),
                               (f"fallback={self.fallback_spec}", self.fallback_spec != "heuristic"),
                               (f"bidding={self.bidding_option}", self.bidding_option != "auto"),
                               (f"bidding_dir={self.bidding_dir}", self.bidding_dir is not None)) if v]  # fmt: skip
        return self.path + (":" + ",".join(opts) if opts else "")

    def fallback_contracts(self, contracts: Sequence[str]) -> list[str]:
        """The contracts of ``contracts`` that no network covers (their card play goes to the fallback)."""
        return [c for c in contracts if c not in self.nets]

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.fallback.reset(seed)

    def _check(self, net: Any, obs: np.ndarray, mask: np.ndarray) -> None:
        """``ValueError`` where the rules' observation or action count is not the network's."""
        if obs.shape[-1] != net.obs_size or mask.shape[-1] != net.num_actions:
            raise ValueError(
                f"agent {self.spec!r}: its network reads {net.obs_size} observation entries and {net.num_actions} "
                f"actions, these rules have {obs.shape[-1]} and {mask.shape[-1]} (a checkpoint plays the layout it "
                "was trained on, layout(rules) and num_actions(rules): train one for these rules)"
            )

    def _logits(self, net: Any, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The masked logits (float64 [n, A]) of ``net`` for n observations and masks, one forward pass;
        ``ValueError`` where the rules' observation or action count is not the network's."""
        self._check(net, obs, mask)
        from ..nn import one_thread

        torch = self._torch
        with torch.no_grad(), one_thread():
            logits, _ = net(torch.from_numpy(obs), torch.from_numpy(mask))
        return logits.numpy().astype(np.float64)

    def _decide(self, contract: str, obs: np.ndarray, mask: np.ndarray) -> int:
        """One card decision of ``contract``'s network: greedy, the choice :meth:`card_actions` makes for this row (the
        compiled pass into the agent's one-row buffers, a near tie taken again through ``nn.greedy_choices``); else
        drawn from the policy's softmax with the agent's generator."""
        net = self._net(contract)
        if not self.greedy:
            return masked_choice(self._logits(net, obs[None], mask[None])[0], mask, False, self.rng)
        self._check(net, obs, mask)
        o, m = np.ascontiguousarray(obs, np.float32)[None], np.ascontiguousarray(mask, np.int8)[None]
        if self._row[0].shape[1] != m.shape[1]:
            self._row = (np.empty(m.shape, np.float32), np.empty(1, np.int64), np.empty(1, np.bool_))
        flat, (logits, best, near) = self._flat[contract], self._row
        self._pass(o, m, *flat, TIE, logits, best, near)
        if near[0]:
            return int(self._greedy_choices(flat, o, m)[0][0])
        return int(best[0])

    def card_actions(self, contract: str, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The greedy choices (int64 [n]) of ``contract``'s network for n card decisions at once (observations
        float32 [n, OBS_SIZE], masks int8 [n, A], as ``VectorDeals.observe`` gives them): on every row the largest
        legal logit of the network's sums taken in float64, so a row's choice never depends on the other rows.
        The network runs as one compiled pass over the rows (:func:`barbu_env.vector.jit.policy.greedy_actions`,
        which skips zero inputs) in float32; the rows whose two best legal logits are within :data:`TIE`
        (relative) are passed again in float64. The batched form of ``barbu_env.vector.duplicate`` (a
        ``CardPolicy``); greedy agents only."""
        if not self.greedy:
            raise ValueError(f"agent {self.spec!r} samples each choice from its own generator: no batched form")
        self._check(self._net(contract), obs, mask)
        return self._greedy_choices(self._flat[contract], obs, mask)[0]

    def _bidding_role(self, phase: int) -> str | None:
        """The bidding network's role that takes a decision of ``phase``, or None."""
        role = "declare" if phase == DECLARE else "double" if phase == DOUBLE else None
        return role if role in self.bidding_roles else None

    def card_logits(self, contract: str, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The logits (float64 [n, A], -inf for the illegal actions) of ``contract``'s network for n card
        decisions (observations float32 [n, OBS_SIZE], masks int8 [n, A]), one forward pass."""
        return np.where(mask.astype(bool), self._logits(self._net(contract), obs, mask), -np.inf)

    def _net(self, contract: str) -> Any:
        net = self.nets.get(contract)
        if net is None:
            raise ValueError(f"agent {self.spec!r} has no network for {contract!r}: it has {sorted(self.nets)}")
        return net

    def choose(self, env: Any, agent_name: str) -> int:
        """The decision from the env's observation and mask alone (phase and contract read from it,
        :func:`~barbu_env.observation.phase_and_contract`): the agent never asks for the env's ``Deal``, so a deal
        the env plays on its compiled copy stays there (``barbu_env.inplay``). The fallback's decisions are its own."""
        u = env.unwrapped
        o = u.observe(agent_name)
        obs, mask = o["observation"], o["action_mask"]
        phase, contract = phase_and_contract(obs, u.rules)
        role = self._bidding_role(phase)
        if role is not None and self.learned is not None:
            return self.learned.choose(role, obs, mask)
        if phase not in (PLAY, FANTAN_PLAY) or contract not in self.nets:  # None: an R2.4 tie-break deal
            return self.fallback.act(env, agent_name)
        return self._decide(contract, obs, mask)

    def act_info(self, info: InfoState) -> int:
        """Engine-level play (no env): the observation of ``info.seat`` is encoded from a deal
        consistent with its information (an observation never depends on hidden cards)."""
        deal = info.view
        role = self._bidding_role(deal.phase)
        contract = deal.contract.name if deal.phase in (PLAY, FANTAN_PLAY) and deal.contract else ""
        net = self.nets.get(contract)
        if net is None and (role is None or self.learned is None):
            return self.fallback.act_info(info)
        full = info.sample(self.rng)
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        mask[full.legal_actions()] = 1
        if role is not None and self.learned is not None:
            return self.learned.choose(role, encode(full, info.seat), mask)
        return self._decide(contract, encode(full, info.seat), mask)


def make_neural(path: str, seed: int | None = None, **options: Any) -> NeuralAgent:
    """The agent of a checkpoint file or folder; unknown options raise ``ValueError``."""
    allowed = ("greedy", "fallback", "bidding", "bidding_dir")
    bad = sorted(set(options) - set(allowed))
    if bad:
        raise ValueError(f"unknown option(s) {bad} for a checkpoint agent: valid options are {list(allowed)}")
    return NeuralAgent(path, seed=seed, **options)
