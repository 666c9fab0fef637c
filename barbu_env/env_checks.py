"""Checks of the AEC env's input: keyword arguments, reset options, seats, contracts and actions.

Each check raises a ``ValueError`` that names the bad value and what is allowed.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .contracts import contract_table
from .engine.deal import Deal, deal_hands
from .render import HAND_CHOICES
from .rules import OPTION_NAMES, Rules

MODES = ("match", "deal")
ILLEGAL_MODES = ("raise", "renege", "terminate")
RENDER_MODES = ("ansi", "human")
ENV_OPTIONS = (
    "mode", "contract", "declarer", "rules", "reward_scale", "illegal_action", "illegal_penalty",
    "render_mode", "render_hands",
)  # fmt: skip
RESET_OPTIONS = ("hands", "contract", "declarer", "first_declarer")


def check_options(mode: str, illegal_action: str, render_mode: str | None, render_hands: str, reward_scale: Any,
                  illegal_penalty: Any, rule_options: dict[str, Any]) -> None:  # fmt: skip
    """The env's keyword arguments (the rules themselves are checked by ``rules.load_rules``)."""
    unknown = sorted(k for k in rule_options if k not in OPTION_NAMES)
    if unknown:
        raise ValueError(
            f"unknown keyword argument(s) {unknown}: valid are the env options {list(ENV_OPTIONS)} "
            f"and the rule options {list(OPTION_NAMES)}"
        )
    if mode not in MODES:
        raise ValueError(f"bad mode {mode!r}: expected one of {MODES}")
    if illegal_action not in ILLEGAL_MODES:
        raise ValueError(f"bad illegal_action {illegal_action!r}: expected one of {ILLEGAL_MODES}")
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"bad render_mode {render_mode!r}: expected None or one of {list(RENDER_MODES)}")
    if render_hands not in HAND_CHOICES:
        raise ValueError(f"bad render_hands {render_hands!r}: expected one of {HAND_CHOICES}")
    for name, value in (("reward_scale", reward_scale), ("illegal_penalty", illegal_penalty)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"bad {name} {value!r}: expected a finite number")


def check_seat(value: Any, what: str, n: int = 4) -> int | str:
    """A seat 0..n-1 (as an int) or ``"random"``."""
    if value == "random" and isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 0 <= int(value) < n:
        return int(value)
    raise ValueError(f"bad {what} {value!r}: expected a seat 0..{n - 1} or 'random'")


def reset_options(opts: dict[str, Any], mode: str, contract: str | None, declarer: int | str,
                  n: int) -> tuple[Any, str | None, int | str]:  # fmt: skip
    """``(hands, contract, declarer)`` of a reset from its options and the env's ``contract`` and ``declarer``
    (unknown keys are ignored with a warning: PettingZoo's ``api_test`` passes a dummy option)."""
    unknown = sorted(str(k) for k in opts if k not in RESET_OPTIONS)
    if unknown:
        warnings.warn(f"ignoring unknown reset option(s) {unknown}: valid are {list(RESET_OPTIONS)}", stacklevel=4)
    hands = opts.get("hands")
    contract = opts.get("contract", contract if mode == "deal" else None)
    seat = declarer
    if "declarer" in opts:
        seat = check_seat(opts["declarer"], "declarer", n)
    if "first_declarer" in opts:
        if mode == "deal":
            raise ValueError("'first_declarer' is a match-mode reset option: use 'declarer' in deal mode")
        first = check_seat(opts["first_declarer"], "first_declarer", n)
        if "declarer" in opts and first != seat:
            raise ValueError(f"reset options 'declarer' ({seat!r}) and 'first_declarer' ({first!r}) disagree")
        seat = first
    return hands, contract, seat


def as_action(action: Any) -> int | None:
    """An action id from an int, numpy integer or integer array of one element; None for anything else."""
    if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
        return int(action)
    if isinstance(action, np.ndarray) and action.shape in ((), (1,)) and np.issubdtype(action.dtype, np.integer):
        return int(action.reshape(()))
    return None


class ContractCheck:
    """Checks contract texts under one ``Rules`` (R3, R4, R9, R10), remembering the texts it accepted."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self._good: set[str] = set()

    def __call__(self, contract: Any) -> None:
        """ValueError unless ``contract`` is a contract text played under the rules."""
        if not isinstance(contract, str):
            raise ValueError(f"bad contract {contract!r}: expected text such as 'no_queens', 'trumps:S' or 'fantan:5'")
        if type(contract) is str and contract in self._good:
            return
        rules = self.rules
        probe = np.random.default_rng(0)
        Deal.from_hands(deal_hands(probe, rules), 0, contract, rules, table=contract_table(rules))
        if type(contract) is str:
            self._good.add(contract)
