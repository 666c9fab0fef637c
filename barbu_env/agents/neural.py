"""Neural agents: trained policies loaded from checkpoints (torch is imported only here).

``make("checkpoints/no_queens.pt")`` plays the card play (and Fantan passes) of the contract its
checkpoint was trained for; ``make("checkpoints/")`` loads every ``<contract>.pt`` of a folder and
plays each contract with its own network. Everything no network covers — the declaration and the
doubling decisions (unless the ``bidding`` option hands them to the bidding networks of :mod:`.bidding`)
and contracts without a checkpoint — is played by the ``fallback`` agent (``heuristic`` by default). The
network reads exactly the env's observation and action mask (:func:`barbu_env.observation.encode`), so a
checkpoint plays in any ``barbu_env.env`` game of the sizes it was trained on (other layouts, e.g. 3 or 5
players or option ``positive``, are refused with a ``ValueError``). Under ``fantan_pass=free`` (R7.3) a network
trained with forced passes (every shipped one) passes only with no playable card: it never met a pass beside a
playable card, and a seat that always passes can keep a Fantan deal from ending.

Options (``"path.pt:greedy=false,fallback=random"``): ``greedy`` (default true: the most likely
legal action; false samples from the policy with the agent's seeded RNG; true/false/yes/no/1/0),
``fallback``, and ``bidding``: ``learned`` (the bidding networks of :mod:`.bidding` declare and double),
``heuristic`` (the fallback declares and doubles), ``declare`` or ``double`` (only that one learned), or ``auto``
(default: ``learned`` where both networks are found, else ``heuristic``; so ``make("checkpoints")`` is the
full-match agent and ``"checkpoints:bidding=heuristic"`` keeps the heuristic's bidding); the networks are read
from ``bidding_dir`` (default: the ``bidding`` folder beside the card-play checkpoints, e.g.
``checkpoints/bidding/``). :meth:`NeuralAgent.fallback_contracts` names the contracts whose card play would
go to the fallback (``barbu-eval`` refuses to evaluate a checkpoint on those). ``endgame`` (default 0: off) hands the
card play from trick K on (once the seat holds 14 - K cards or fewer; in Fantan, which has no tricks, the same count
of cards left) to PIMC (:class:`~.pimc.PIMCAgent`, ``endgame_samples`` worlds, default 32, heuristic playouts):
``"checkpoints:endgame=9"`` searches the last five tricks, where a few cards make the search cheap and exact play
pays. Such an agent has no batched form.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..actions import NUM_ACTIONS, PASS
from ..engine import InfoState
from ..engine.deal import DECLARE, DOUBLE, FANTAN_PLAY, PLAY
from ..observation import NUM_TRICKS_MAX, OBS_SIZE, block, encode, phase_and_contract
from ..options import as_bool
from .base import Agent
from .pimc import PIMCAgent

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


def _trained_with_free_pass(ckpt: dict[str, Any]) -> bool:
    """Whether the checkpoint's training rules (its config's ``rules``: a preset, a YAML file or a mapping) let a seat
    pass in Fantan beside a playable card (``fantan_pass=free``, R7.3); False where they cannot be read."""
    from ..rules import load_rules

    config = ckpt.get("config")
    try:
        return isinstance(config, dict) and load_rules(config.get("rules")).fantan_pass == "free"
    except (ValueError, OSError, TypeError):
        return False


class NeuralAgent(Agent):
    """Plays card decisions with per-contract policy networks, the rest with a fallback agent."""

    name = "neural"

    def __init__(self, path: str, seed: int | None = None, greedy: bool = True, fallback: str = "heuristic",
                 bidding: str = "auto", bidding_dir: str | None = None, endgame: int = 0,
                 endgame_samples: int = 32) -> None:  # fmt: skip
        super().__init__(seed)
        if isinstance(endgame, bool) or not isinstance(endgame, int) or not 0 <= endgame <= NUM_TRICKS_MAX:
            raise ValueError(f"bad value {endgame!r} for option 'endgame': expected 0 (off) or the trick "
                             f"1..{NUM_TRICKS_MAX} from which PIMC plays the cards")  # fmt: skip
        if isinstance(endgame_samples, bool) or not isinstance(endgame_samples, int) or endgame_samples < 1:
            raise ValueError(f"bad value {endgame_samples!r} for option 'endgame_samples': expected an integer >= 1")
        #: The trick (1-based) from which the card play is PIMC's (:attr:`search`); 0: the networks' throughout.
        self.endgame, self.endgame_samples = endgame, endgame_samples
        #: The PIMC agent of the endgame (``endgame_samples`` worlds, heuristic playouts), or None.
        self.search = None if not endgame else PIMCAgent(seed, samples=endgame_samples)
        import torch

        from ..nn import flat_policy, greedy_choices, greedy_moves, load_checkpoint
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
        #: The contracts whose network was trained with ``fantan_pass=free`` (R7.3); see :meth:`_as_trained`.
        self._free_pass: set[str] = set()
        for f in files:
            net, ckpt = load_checkpoint(f)
            if ckpt["contract"] in self.nets:
                raise ValueError(f"two checkpoints for contract {ckpt['contract']!r} in {str(p)!r}")
            self.nets[ckpt["contract"]] = net
            self.meta[ckpt["contract"]] = ckpt.get("meta", {})
            if _trained_with_free_pass(ckpt):
                self._free_pass.add(ckpt["contract"])
        #: Per contract its network as :meth:`card_actions`' compiled pass reads it; the pass itself.
        self._flat = {c: flat_policy(net) for c, net in self.nets.items()}
        self._greedy_choices, self._greedy_moves = greedy_choices, greedy_moves
        #: The compiled pass (one row at a time in :meth:`_decide`) and its output buffers: logits, choice, near tie.
        self._pass = greedy_actions
        self._row = (np.empty((1, NUM_ACTIONS), np.float32), np.empty(1, np.int64), np.empty(1, np.bool_))
        #: The contracts whose network reads the env's compiled copy of a deal (its observation and action layout,
        #: every classic game's); the last copy read, with its row and mask as a batch of one (views).
        self._on_copy = {c for c, n in self.nets.items() if (n.obs_size, n.num_actions) == (OBS_SIZE, NUM_ACTIONS)}
        self._copy: tuple[Any, np.ndarray, np.ndarray] | None = None
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
                               (f"bidding_dir={self.bidding_dir}", self.bidding_dir is not None),
                               (f"endgame={self.endgame}", self.endgame),
                               (f"endgame_samples={self.endgame_samples}",
                                self.endgame and self.endgame_samples != 32)) if v]  # fmt: skip
        return self.path + (":" + ",".join(opts) if opts else "")

    def fallback_contracts(self, contracts: Sequence[str]) -> list[str]:
        """The contracts of ``contracts`` that no network covers (their card play goes to the fallback)."""
        return [c for c in contracts if c not in self.nets]

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.fallback.reset(seed)
        if self.search is not None:
            self.search.reset(seed)

    def _in_endgame(self, cards_in_hand: int) -> bool:
        """Whether a card decision with ``cards_in_hand`` is :attr:`endgame`'s: from trick K on a seat holds
        14 - K cards or fewer (in Fantan, R7, which has no tricks, the same count of cards left)."""
        return cards_in_hand <= NUM_TRICKS_MAX + 1 - self.endgame

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
        """One card decision of ``contract``'s network: greedy, :meth:`_decide_rows` on the row; else drawn from the
        policy's softmax with the agent's generator."""
        net = self._net(contract)
        self._check(net, obs, mask)
        mask = self._as_trained(contract, np.ascontiguousarray(mask, np.int8)[None])
        if not self.greedy:
            return masked_choice(self._logits(net, obs[None], mask)[0], mask[0], False, self.rng)
        if np.count_nonzero(mask) == 1:  # a forced move (one legal action): the rules', without the network
            return int(mask.argmax())
        return self._decide_rows(contract, np.ascontiguousarray(obs, np.float32)[None], mask)

    def _decide_rows(self, contract: str, obs: np.ndarray, mask: np.ndarray) -> int:
        """The greedy card decision of ``contract``'s network for one row (``obs`` float32 [1, OBS_SIZE], ``mask`` int8
        [1, A], sizes checked): the choice :meth:`card_actions` makes for it (the compiled pass into the agent's
        one-row buffers, a near tie taken again through ``nn.greedy_choices``)."""
        flat, (logits, best, near) = self._flat[contract], self._row
        if logits.shape != mask.shape:  # another layout's action count
            logits = np.empty(mask.shape, np.float32)
            self._row = logits, best, near
        self._pass(obs, mask, *flat, TIE, logits, best, near)
        if near[0]:
            return int(self._greedy_choices(flat, obs, mask)[0][0])
        return int(best[0])

    def card_actions(self, contract: str, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The greedy choices (int64 [n]) of ``contract``'s network for n card decisions at once (observations
        float32 [n, OBS_SIZE], masks int8 [n, A], as ``VectorDeals.observe`` gives them): on every row the largest
        legal logit of the network's sums taken in float64, so a row's choice never depends on the other rows.
        The network runs as one compiled pass over the rows (:func:`barbu_env.vector.jit.policy.greedy_actions`,
        which skips zero inputs) in float32; the rows whose two best legal logits are within :data:`TIE`
        (relative) are passed again in float64; a row with one legal action takes it without the pass
        (``nn.greedy_moves``). Legal: the mask as the network reads it (:meth:`_as_trained`). The
        batched form of ``barbu_env.vector.duplicate`` (a ``CardPolicy``); greedy agents only."""
        if not self.greedy:
            raise ValueError(f"agent {self.spec!r} samples each choice from its own generator: no batched form")
        self._check(self._net(contract), obs, mask)
        return self._greedy_moves(self._flat[contract], obs, self._as_trained(contract, mask))

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

    def _as_trained(self, contract: str, mask: np.ndarray) -> np.ndarray:
        """``mask`` (int8 [n, A]) as ``contract``'s network learnt to read it: unless it was trained with
        ``fantan_pass=free``, the Fantan pass is dropped from the rows with a legal card. Under ``fantan_pass=free``
        (R7.3) passing is legal beside a playable card, a choice such a network never met: its pass there means
        nothing, and a seat that always passes can keep a deal from ending. A new array where a row changes."""
        if contract != "fantan" or contract in self._free_pass or mask.shape[1] <= PASS:
            return mask
        if mask.shape[0] == 1 and not mask.item(0, PASS):  # one row, no pass legal (a scalar read, not numpy's)
            return mask
        free = (mask[:, PASS] != 0) & (mask[:, :PASS] != 0).any(1)
        if not free.any():
            return mask
        mask = mask.copy()
        mask[free, PASS] = 0
        return mask

    def _copy_decision(self, m: Any) -> int:
        """The greedy card decision of the seat on move of the env's compiled copy ``m`` (``vector.single.Mirror``),
        :meth:`_decide_rows` on the copy's own row and mask (the env's observation and mask of that seat), without
        the env's ``observe`` or reading the phase from the row (a forced move, ``Mirror.forced_action``, without the
        network); -1 where no network of the agent takes the decision (not a card decision, or no network of the
        contract for the copy's layout)."""
        k = m.card_contract()
        contract = None if k < 0 else m.tables.names[k]
        if contract not in self._on_copy:
            return -1
        a = m.forced_action()  # a forced move: the rules', without the network
        if a >= 0:
            return a
        if self._copy is None or self._copy[0] is not m:
            self._copy = (m, m.row[None], m.mask[None])
        return self._decide_rows(contract, self._copy[1], self._as_trained(contract, self._copy[2]))

    def choose(self, env: Any, agent_name: str) -> int:
        """The decision from the env's observation and mask alone (phase and contract read from it,
        :func:`~barbu_env.observation.phase_and_contract`), a greedy card decision of a deal on the env's compiled
        copy from the copy itself (:meth:`_copy_decision`, the same choice): the agent never asks for the env's
        ``Deal``, so such a deal stays on its copy (``barbu_env.inplay``). The fallback's decisions are its own."""
        u = env.unwrapped
        search, o = self.search, None
        if search is not None:  # the endgame's card decisions are the search's
            o = u.observe(agent_name)
            phase, contract = phase_and_contract(o["observation"], u.rules)
            hand = int(np.count_nonzero(block(o["observation"], "hand")))
            if phase in (PLAY, FANTAN_PLAY) and self._in_endgame(hand):
                return search.choose(env, agent_name)
        if self.greedy:
            m = u.compiled_deal
            if m is not None:
                a = self._copy_decision(m)
                if a >= 0:
                    return a
        if o is None:
            o = u.observe(agent_name)
            phase, contract = phase_and_contract(o["observation"], u.rules)
        obs, mask = o["observation"], o["action_mask"]
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
        if (self.search is not None and deal.phase in (PLAY, FANTAN_PLAY)
                and self._in_endgame(deal.hands[info.seat].bit_count())):  # fmt: skip
            return self.search.act_info(info)
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
    allowed = ("greedy", "fallback", "bidding", "bidding_dir", "endgame", "endgame_samples")
    bad = sorted(set(options) - set(allowed))
    if bad:
        raise ValueError(f"unknown option(s) {bad} for a checkpoint agent: valid options are {list(allowed)}")
    return NeuralAgent(path, seed=seed, **options)
