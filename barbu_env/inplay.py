"""A deal in play: what the AEC env needs of the deal being played, and its two implementations (RULES.md R3-R9).

:class:`DealInPlay` is the seam: ``apply(action)``, the seat on move, ``observe(seat)``, ``mask()``, the
scores once the deal is over, the declared contract's text, and ``deal()``, the engine
:class:`~barbu_env.engine.deal.Deal` it has reached.

- :class:`EnginePlay`: the engine ``Deal`` (the reference) and the reference encoder
  (:func:`barbu_env.observation.encode`; for Barbu King the compiled one that gives the same arrays,
  :func:`encoder_for`), for any rules: Barbu King (R11), R2.4 tie-break deals, and every
  deal from the moment something needs the ``Deal`` itself (a read of ``env.deal``, an illegal action, R8.2).
- :class:`CompiledPlay`: the compiled copy of the deal (:class:`~barbu_env.vector.single.Mirror`, classic
  Barbu under the rules :func:`~barbu_env.vector.tables.check_rules` accepts). It keeps its own list of actions
  and builds the ``Deal`` on request by replaying them on the fresh deal. In match mode the match blocks of the
  observation (``is_match``, ``remaining``, ``totals``, ``deal_no``, ``deals_left``, ``outstanding``) are
  constant within a deal: they are encoded once per deal and the kernels write them into the compiled rows; the
  finished deal's record (:meth:`CompiledPlay.record`) comes from the compiled copy, so a match goes on to its
  next deal without building the ``Deal``.

Arrays returned by ``observe`` and ``mask`` belong to the play (overwritten by its next call or action): the env
hands out copies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from .actions import NUM_ACTIONS
from .engine.deal import Deal, Phase
from .engine.match import DealRecord, Match
from .observation import encode, match_rows
from .rules import Rules

_OVER = int(Phase.OVER)
_PLAY = int(Phase.PLAY)
#: Action masks by mask size (the env's action count, :func:`~barbu_env.actions.num_actions`) and legal-action key
#: (read-only arrays; cleared when full): in trick play the legal card mask (an int: its bits are exactly the legal
#: actions), otherwise the tuple of legal actions.
_MASKS: dict[tuple[int, int | tuple[int, ...]], np.ndarray] = {}
_MASKS_MAX = 1 << 15


class DealInPlay(Protocol):
    """A deal being played."""

    @property
    def seat(self) -> int:
        """The seat on move, -1 once the deal is over."""
        ...

    def apply(self, action: int) -> bool:
        """Apply ``action`` (an id of the env's action space) if it is legal; False (nothing changed) if it is not."""
        ...

    def observe(self, seat: int) -> np.ndarray:
        """The observation of ``seat`` (the play's array: copy it before handing it out)."""
        ...

    def mask(self) -> np.ndarray:
        """The action mask of the seat on move (the play's array: copy it before handing it out)."""
        ...

    def scores(self) -> list[int]:
        """Each seat's score once the deal is over (contract + doubling settlement, R8.1)."""
        ...

    def contract_text(self) -> str | None:
        """The declared contract as ``Deal.contract_text`` gives it (None before the declaration, R2.3)."""
        ...

    def deal(self) -> Deal:
        """The engine ``Deal`` this play has reached."""
        ...


def mask_of(deal: Deal, size: int = NUM_ACTIONS) -> np.ndarray:
    """The action mask (``size`` entries, the env's action count) of the player on move, from
    ``Deal.legal_actions()`` (read-only, shared between calls)."""
    if deal.phase == _PLAY:  # the legal actions are the bits of the legal card mask (an int: a cheap key)
        key: tuple[int, int | tuple[int, ...]] = (size, deal.legal_card_mask())
        m = _MASKS.get(key)
        if m is not None:
            return m
        legal = deal.legal_actions()
    else:
        legal = deal.legal_actions()
        key = (size, tuple(legal))
        m = _MASKS.get(key)
    if m is None:
        if len(_MASKS) >= _MASKS_MAX:
            _MASKS.clear()
        m = np.zeros(size, np.int8)
        m[legal] = 1
        m.flags.writeable = False
        _MASKS[key] = m
    return m


class EnginePlay:
    """The engine ``Deal`` (the match's current deal in match mode) and the reference encoder. Observations are
    encoded once per state of the deal (its history length and phase) and seat; the deal may also be changed
    outside :meth:`apply` (a renege, a caller's own ``apply``). Masks have ``size`` entries, the env's action
    count (``num_actions(rules)``)."""

    def __init__(self, deal: Deal, match: Match | None = None, size: int = NUM_ACTIONS) -> None:
        self._deal = deal
        self._match = match
        self._size = size
        self._encode = encoder_for(deal.rules)
        self._obs: dict[int, np.ndarray] = {}
        self._key: tuple[int, int] = (-1, -1)

    @property
    def seat(self) -> int:
        d = self._deal
        return -1 if d.phase == _OVER else d.to_move

    def apply(self, action: int) -> bool:
        if not self._deal.is_legal(action):
            return False
        self._deal.apply(action)
        return True

    def observe(self, seat: int) -> np.ndarray:
        d = self._deal
        key = (len(d.history), int(d.phase))
        if key != self._key:
            self._obs.clear()
            self._key = key
        o = self._obs.get(seat)
        if o is None:
            o = self._obs[seat] = self._encode(d, seat, self._match)
        return o

    def mask(self) -> np.ndarray:
        return mask_of(self._deal, self._size)

    def scores(self) -> list[int]:
        return list(self._deal.scores or ())

    def contract_text(self) -> str | None:
        return self._deal.contract_text

    def deal(self) -> Deal:
        return self._deal


def encoder_for(rules: Rules) -> Callable[[Deal, int, Match | None], np.ndarray]:
    """The encoder of the engine play's observations under ``rules``: :func:`barbu_env.observation.encode`, or
    for Barbu King with one pack the same arrays by a compiled kernel (:func:`barbu_env.vector.king.king_encode`,
    imports numba; six-player King's second copies, R11.5, take the reference encoder)."""
    if not rules.king or rules.two_packs:
        return encode
    from .vector.king import king_encode

    return king_encode


def _mirror_step(*args: Any) -> int:
    """``vector.jit.mirror_step``: the first call imports it (numba) and puts it in this name's place, so a play
    unpickled in a fresh process steps too."""
    global _mirror_step
    from .vector.jit import mirror_step

    _mirror_step = mirror_step
    return mirror_step(*args)


def mirror_for(rules: Rules) -> Any:
    """A compiled :class:`~barbu_env.vector.single.Mirror` for deals under ``rules``, or None where it cannot
    follow them (rules outside the batched engine's, e.g. Barbu King). Imports numba."""
    from .vector.tables import check_rules

    try:
        check_rules(rules)
    except ValueError:
        return None
    from .vector.single import Mirror

    return Mirror(rules)


class CompiledPlay:
    """The deal as the compiled copy ``mirror`` (shared by the plays of one env: one deal in play at a time).
    Build one with :meth:`start` (deal mode) or :meth:`load` (a match's deal)."""

    def __init__(self, mirror: Any, fresh: Deal | None, setup: tuple) -> None:
        self._mirror = mirror
        self._buf, self._row, self._mask = mirror._buf, mirror.row, mirror.mask
        self.fresh = fresh  # the fresh Deal, or None: then Deal.from_hands(*setup) builds it
        self._setup = setup
        self.seat = mirror.seat
        self.actions: list[int] = []

    @classmethod
    def start(cls, mirror: Any, hands: list[int], declarer: int, contract: str | None, drawn: bool) -> CompiledPlay:
        """A fresh deal of deal mode: ``Deal.from_hands(hands, declarer, contract, rules)``; valid ``drawn`` hands
        are loaded without building the ``Deal`` where the mirror knows the set-up (``Mirror.start``)."""
        if drawn:
            fresh = mirror.start(hands, declarer, contract)
        else:  # the caller's hands: Deal.from_hands checks them
            fresh = Deal.from_hands(hands, declarer, contract, mirror.tables.rules)
            mirror.load(fresh)
        return cls(mirror, fresh, (hands, declarer, contract, mirror.tables.rules))

    @classmethod
    def load(cls, mirror: Any, deal: Deal, match: Match | None = None) -> CompiledPlay | None:
        """The fresh ``deal`` (``match``'s current deal, whose match blocks the observations show), or None where
        the mirror cannot copy it (an R2.4 tie-break deal is played under other rules)."""
        if deal.rules is not mirror.tables.rules:
            return None
        mirror.load(deal, None if match is None else match_rows(match))
        return cls(mirror, deal, ())

    def apply(self, action: int) -> bool:
        s = _mirror_step(self._buf, self._row, self._mask, action)
        if s == -2:  # illegal: nothing changed
            return False
        self.actions.append(action)
        self.seat = s
        return True

    def observe(self, seat: int) -> np.ndarray:
        if seat == self.seat:
            return self._row
        return self._mirror.observe(seat)

    def mask(self) -> np.ndarray:
        return self._mask

    def scores(self) -> list[int]:
        return self._mirror.scores.tolist()

    def contract_text(self) -> str | None:
        return self._mirror.contract_text()

    def record(self, number: int) -> DealRecord:
        """The finished deal's record as deal ``number`` of a match (``Match.score_deal``), from the compiled copy:
        no ``Deal`` is built."""
        if self.fresh is None:
            raise ValueError("record() gives the record of a match's deal: load the play with CompiledPlay.load")
        text, doubles, contract_scores, settlement, scores = self._mirror.result()
        return DealRecord(number, self.fresh.declarer, text, tuple(doubles), tuple(contract_scores),
                          tuple(settlement), tuple(scores))  # fmt: skip

    def deal(self) -> Deal:
        """A new ``Deal``: the fresh deal rebuilt (or cloned) and the actions replayed on it."""
        d = self.fresh.clone() if self.fresh is not None else Deal.from_hands(*self._setup)
        for a in self.actions:
            d.apply(a)
        return d
