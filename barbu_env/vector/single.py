"""One deal as a compiled mirror of the engine: the AEC env's observations and masks by numba (RULES.md R3-R9).

:class:`Mirror` holds the :class:`~.core.State` of a single game (batch 1) and the per-rules tables of the
kernels in one int64 buffer (laid out here, read by the ``mirror_*`` kernels of :mod:`.jit.mirror`), so that
each kernel call takes one array for all of them. ``load(deal)`` copies a fresh ``Deal``; ``step(action)``
applies the action and, in the same call, writes the observation row and the action mask of the seat now
on move into :attr:`Mirror.row` / :attr:`Mirror.mask`; ``observe(seat)`` writes another seat's row. Each is
the array of ``observation.encode`` / ``Deal.legal_actions`` (the tests compare them); ``heuristic()`` gives
the heuristic agent's action for the seat on move. In a match, ``load`` takes each seat's match blocks of the
observation (constant within a deal) and the kernels write them into the rows; once the deal is over,
:meth:`Mirror.result` gives its score sheet without building the ``Deal``.

Importing this module imports numba: the env imports it only when it builds a mirror. Kernels are
compiled on first use and cached on disk (``cache=True``).
"""

from __future__ import annotations

import numpy as np

from ..actions import DECLARE_BASE, NUM_ACTIONS
from ..engine.deal import Deal, contract_text
from ..observation import OBS_SIZE, names_bits
from ..rules import Rules
from .jit import jit_tables
from .jit.common import CONTRACT, FANTAN_RANK, PHASE, SCORES, TRUMP
from .jit.mirror import (
    B_LEGAL,
    B_MATCH,
    B_TABLES,
    INIT_FIELDS,
    M_SIZE,
    layout,
    mirror_heuristic,
    mirror_load,
    mirror_observe,
    mirror_result,
    mirror_step,
)
from .tables import DECLARE, FANTAN_PLAY, PLAY, Tables, build_tables

#: The legal words' 64 bits (they are stored as int64).
_WORD = (1 << 64) - 1

I64 = np.int64


class Mirror:
    """A compiled copy of one deal under ``rules`` (classic Barbu, the rules :func:`.tables.check_rules`
    accepts; a ``ValueError`` otherwise). :attr:`row` (float32 [OBS_SIZE]) and :attr:`mask` (int8 [87]) hold
    the observation and mask of :attr:`seat`, the seat on move (-1 once the deal is over), after
    :attr:`steps` actions since :meth:`load`; :meth:`observe` writes other seats' rows into :attr:`other`."""

    def __init__(self, rules: Rules) -> None:
        self.tables: Tables = build_tables(rules)
        self._buf = layout(jit_tables(self.tables))
        self.row = np.zeros(OBS_SIZE, np.float32)
        self.other = np.zeros(OBS_SIZE, np.float32)
        self.mask = np.zeros(NUM_ACTIONS, np.int8)
        self._init = np.zeros(len(INIT_FIELDS), I64)
        self._starts: dict[tuple[int, str | None], np.ndarray] = {}  # (declarer, contract) -> set-up vector
        self.seat = -1
        self.steps = 0
        self._hv: np.ndarray | None = None  # the heuristic's card values, on its first call
        mirror_step(self._buf, self.row, self.mask, -1)  # load (or compile) the kernels now, not in the first deal
        mirror_observe(self._buf, self.other, 0)
        mirror_load(self._buf, self._init, self.row, self.mask)

    def load(self, deal: Deal, blocks: np.ndarray | None = None) -> None:
        """Copy ``deal``, which must be fresh (nothing played or declared after its set-up, R2.3); ``blocks``
        (float32 [4, M_SIZE], :func:`barbu_env.observation.match_rows`): each seat's match blocks, None outside
        a match (zeros)."""
        rules = self.tables.rules
        if deal.history or (deal.rules is not rules and deal.rules != rules):
            raise ValueError("Mirror.load takes a fresh deal (empty history) under the mirror's rules")
        decl = 0
        if deal.phase == DECLARE:
            for a in deal.legal_actions():
                decl |= 1 << (a - DECLARE_BASE)
        k = -1 if deal.contract is None else self.tables.names.index(deal.contract.name)
        h = deal.hands
        self._init[:] = (h[0], h[1], h[2], h[3], deal.phase, deal.to_move, deal.declarer, deal.leader, k,
                         deal.trump, deal.fantan_rank, deal.must_double, decl, names_bits(deal.available),
                         deal.playable)  # fmt: skip
        self._load(self._init, blocks)

    def _load(self, init: np.ndarray, blocks: np.ndarray | None = None) -> None:
        m = self._buf[B_MATCH:B_TABLES].view(np.float32)
        if blocks is None:
            m[:] = 0.0
        else:
            m[:] = blocks.reshape(4 * M_SIZE)
        self.seat = mirror_load(self._buf, init, self.row, self.mask)
        self.steps = 0

    def start(self, hands: list[int], declarer: int, contract: str | None) -> Deal | None:
        """Copy the fresh deal ``Deal.from_hands(hands, declarer, contract, rules)`` (``hands``: a valid card
        mask per seat) without building it where possible: apart from the hands, a fresh deal's set-up
        (phase, seat on move, contract, Fantan's playable cards, ...: R2.3, R3, R6.1, R7.1) depends only on
        the declarer and the contract, so it is learnt from the first such deal. Returns the ``Deal`` when it
        had to build one (then still fresh), else None."""
        init = self._starts.get((declarer, contract))
        if init is None:
            deal = Deal.from_hands(hands, declarer, contract, self.tables.rules)
            self.load(deal)
            self._starts[(declarer, contract)] = self._init.copy()
            return deal
        init[0], init[1], init[2], init[3] = hands
        self._load(init)
        return None

    @property
    def scores(self) -> np.ndarray:
        """The deal's scores (a fresh int64 [4]: contract + doubling settlement, R8.1), valid once it is over
        (:attr:`seat` -1). (Not a stored view: a copy or pickle of the mirror would not share the buffer.)"""
        return self._buf[SCORES : SCORES + 4].copy()

    def result(self) -> tuple[str, list[int], list[int], list[int], list[int]]:
        """The finished deal's score sheet (valid once it is over, :attr:`seat` -1): the contract text
        (``Deal.contract_text``), each seat's doubles (absolute-seat masks, R6), contract scores, settlement
        (R6.5) and scores (R8.1)."""
        text = self.contract_text()
        if text is None:
            raise ValueError("Mirror.result() is the score sheet of a finished deal: this one has no contract yet")
        out = np.zeros(12, I64)
        mirror_result(self._buf, out)
        return text, out[8:12].tolist(), out[:4].tolist(), out[4:8].tolist(), self.scores.tolist()

    def contract_text(self) -> str | None:
        """The declared contract as ``Deal.contract_text`` gives it (None before the declaration, R2.3)."""
        x = self._buf
        k = int(x[CONTRACT])
        return None if k < 0 else contract_text(self.tables.names[k], int(x[TRUMP]), int(x[FANTAN_RANK]))

    def step(self, action: int) -> int:
        """Apply ``action``; the seat now on move (-1: over; -2: ``action`` is illegal, nothing changed)."""
        s = mirror_step(self._buf, self.row, self.mask, action)
        if s != -2:
            self.seat = s
            self.steps += 1
        return s

    def card_contract(self) -> int:
        """The declared contract's index in ``tables.names`` while the seat on move plays a card (R4, R7: the play
        and Fantan phases), else -1 (declaration, doubling, over)."""
        x = self._buf
        return x.item(CONTRACT) if x.item(PHASE) in (PLAY, FANTAN_PLAY) else -1

    def forced_action(self) -> int:
        """The one legal action of the seat on move where it has exactly one (a forced move, e.g. the one card of the
        led suit, R5.1), else -1 (a choice, or the deal is over)."""
        x = self._buf
        low, high = x.item(B_LEGAL) & _WORD, x.item(B_LEGAL + 1) & _WORD
        if low.bit_count() + high.bit_count() != 1:
            return -1
        return low.bit_length() - 1 if low else DECLARE_BASE + high.bit_length() - 1

    def heuristic(self) -> int:
        """The heuristic agent's action for the seat on move (``agents.heuristic.heuristic_action``, compiled:
        ``vector.heuristic``), -1 once the deal is over."""
        if self._hv is None:
            from .heuristic import heuristic_tables

            self._hv = heuristic_tables(self.tables)
        return int(mirror_heuristic(self._buf, self._hv))

    def observe(self, seat: int) -> np.ndarray:
        """The observation of ``seat``, written into :attr:`other` (returned)."""
        mirror_observe(self._buf, self.other, seat)
        return self.other
