"""Checks of the AEC env's input: keyword arguments, reset options, seats, contracts and actions.

Each check returns the value in its canonical form (numpy scalars become Python ``int``/``float``) or raises a
``ValueError``/``TypeError`` that names the argument, what it got and what is allowed. The rule options are
checked by :class:`barbu_env.rules.Rules`, hands by :func:`barbu_env.engine.deal.validate_hands`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from .contracts import contract_table
from .engine.deal import Deal, deal_hands
from .render import HAND_CHOICES
from .rules import OPTION_NAMES, Rules

MODES = ("match", "deal")
ILLEGAL_MODES = ("raise", "renege", "terminate")
RENDER_MODES = ("ansi", "human", "rgb_array")
ENV_OPTIONS = (
    "mode", "contract", "declarer", "rules", "reward_scale", "illegal_action", "illegal_penalty",
    "render_mode", "render_hands",
)  # fmt: skip
RESET_OPTIONS = ("hands", "contract", "declarer", "first_declarer")


def check_options(mode: Any, illegal_action: Any, render_mode: Any, render_hands: Any, reward_scale: Any,
                  illegal_penalty: Any, rule_options: dict[str, Any]) -> tuple[float, float]:  # fmt: skip
    """The env's keyword arguments (the rules themselves are checked by ``rules.load_rules``); returns
    ``(reward_scale, illegal_penalty)`` as floats.

    ``reward_scale`` must be > 0 (0 would erase every reward, a negative one reverse the objective);
    ``illegal_penalty`` >= 0 (a negative one would make an illegal move pay under ``"terminate"``)."""
    unknown = sorted(str(k) for k in rule_options if k not in OPTION_NAMES)
    if unknown:
        raise ValueError(
            f"unknown keyword argument(s) {unknown}: valid are the env options {list(ENV_OPTIONS)} "
            f"and the rule options {list(OPTION_NAMES)}"
        )
    check_choice("mode", mode, MODES)
    check_choice("illegal_action", illegal_action, ILLEGAL_MODES)
    if render_mode is not None and not (isinstance(render_mode, str) and render_mode in RENDER_MODES):
        raise ValueError(f"bad render_mode {render_mode!r}: expected None or one of {RENDER_MODES}")
    check_choice("render_hands", render_hands, HAND_CHOICES)
    return check_number("reward_scale", reward_scale, positive=True), check_number("illegal_penalty", illegal_penalty)


def agent_seat(mapping: dict[str, int], agent: Any) -> int:
    """The seat of an agent name; ``ValueError`` listing the agents for anything else."""
    try:
        return mapping[agent]
    except (KeyError, TypeError):
        raise unknown_agent(agent, list(mapping)) from None


def check_seat(value: Any, what: str, n: int = 4) -> int | str:
    """A seat 0..n-1 (as an int) or ``"random"``."""
    if isinstance(value, str) and value == "random":
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


def check_choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    """``value`` as a ``str`` if it is one of ``allowed``; else ``ValueError`` listing them."""
    if isinstance(value, str) and value in allowed:
        return str(value)
    raise ValueError(f"bad {name} {value!r}: expected one of {allowed}")


def check_number(name: str, value: Any, *, positive: bool = False) -> float:
    """A finite real number (Python or numpy, not a bool) as a ``float``, ``> 0`` with ``positive``, else ``>= 0``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"bad {name} {value!r}: expected a number, got {type(value).__name__}")
    try:
        x = float(value)
    except OverflowError:  # an int beyond float's range
        x = math.inf
    if not math.isfinite(x) or x < 0 or (positive and x == 0):
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"bad {name} {value!r}: expected a finite number {bound}")
    return x


def check_seed(seed: Any) -> int | None:
    """``reset``'s ``seed``: ``None`` or a non-negative int (numpy integers too), as an ``int``."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"bad seed {seed!r}: expected None or a non-negative int, got {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"bad seed {seed!r}: expected None or a non-negative int")
    return int(seed)


def check_reset_options(options: Any) -> dict[str, Any]:
    """``reset``'s ``options`` as a new dict: ``None`` or a mapping of option names to values."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise TypeError(f"bad reset options {options!r}: expected None or a dict of option names to values")
    return dict(options)


def bad_action_type(action: Any, num_actions: int) -> ValueError:
    """The error for an action that is not an action id at all (a wrong type), in every ``illegal_action`` mode;
    ``num_actions`` is the size of the env's action space."""
    return ValueError(f"bad action {action!r}: expected an int action id in 0..{num_actions - 1}")


def not_running(call: str, started: bool) -> RuntimeError:
    """The error for ``call`` (``"step()"``, ``"last()"``, ...) before the first ``reset`` or, once ``started``,
    after every agent of the episode is done."""
    if not started:
        return RuntimeError(f"{call}: the env has not been reset: call reset() first")
    return RuntimeError(f"{call}: the episode is over (every agent is done): call reset() to start a new one")


def unknown_agent(agent: Any, agents: list[str]) -> ValueError:
    """The error for an agent name that is not one of the env's ``agents``."""
    return ValueError(f"unknown agent {agent!r}: the agents are {agents}")


class ActionSpace(spaces.Discrete):
    """``Discrete(87)`` whose ``contains`` answers a plain in-range ``int`` without numpy (PettingZoo's
    ``AssertOutOfBoundsWrapper`` calls it on every step); anything else goes to ``Discrete.contains``."""

    def __init__(self, n: int) -> None:
        super().__init__(n)
        self._size = int(n)

    def contains(self, x: Any) -> bool:
        if type(x) is int:
            return 0 <= x < self._size  # (Discrete.contains converts to int64: an OverflowError beyond it)
        return super().contains(x)
