"""Checks of the values a user hands to the environment: env keywords, seeds, reset options, actions.

Each check either returns the value in its canonical form (numpy scalars become Python ``int``/``float``)
or raises a ``ValueError``/``TypeError`` that names the argument, what it got and what is allowed.
The rules options are checked by :class:`barbu_env.rules.Rules`, hands by
:func:`barbu_env.engine.deal.validate_hands`, contracts by the engine.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .actions import NUM_ACTIONS
from .render import HAND_CHOICES

MODES = ("match", "deal")
ILLEGAL_MODES = ("raise", "renege", "terminate")
RENDER_MODES = ("ansi", "human", "rgb_array")


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


def check_env_kwargs(
    mode: Any, illegal_action: Any, render_mode: Any, render_hands: Any, reward_scale: Any, illegal_penalty: Any
) -> tuple[float, float]:
    """Check the env's keywords other than the rules and the seats; return ``(reward_scale, illegal_penalty)``.

    ``reward_scale`` must be > 0 (0 would erase every reward, a negative one reverse the objective);
    ``illegal_penalty`` >= 0 (a negative one would make an illegal move pay under ``"terminate"``)."""
    check_choice("mode", mode, MODES)
    check_choice("illegal_action", illegal_action, ILLEGAL_MODES)
    if render_mode is not None:
        try:
            check_choice("render_mode", render_mode, RENDER_MODES)
        except ValueError:
            raise ValueError(f"bad render_mode {render_mode!r}: expected None or one of {RENDER_MODES}") from None
    check_choice("render_hands", render_hands, HAND_CHOICES)
    return check_number("reward_scale", reward_scale, positive=True), check_number("illegal_penalty", illegal_penalty)


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


def bad_action_type(action: Any) -> ValueError:
    """The error for an action that is not an action id at all (a wrong type), in every ``illegal_action`` mode."""
    return ValueError(f"bad action {action!r}: expected an int action id in 0..{NUM_ACTIONS - 1}")


def not_running(call: str, started: bool) -> RuntimeError:
    """The error for ``call`` (``"step()"``, ``"last()"``, ...) before the first ``reset`` or, once ``started``,
    after every agent of the episode is done."""
    if not started:
        return RuntimeError(f"{call}: the env has not been reset: call reset() first")
    return RuntimeError(f"{call}: the episode is over (every agent is done): call reset() to start a new one")


def unknown_agent(agent: Any, agents: list[str]) -> ValueError:
    """The error for an agent name that is not one of the env's ``agents``."""
    return ValueError(f"unknown agent {agent!r}: the agents are {agents}")
