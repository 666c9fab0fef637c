"""Agents from your own code: the spec ``"module:Name"`` or ``"path/to/file.py:Name"``, options after one more
colon (``"my_bots.py:Greedy:depth=3"``), wherever an agent spec is read (``barbu-eval``, :func:`evaluate
<barbu_env.evaluation.evaluate>`, ``barbu-play``, the opponents of ``wrappers.sb3.BarbuSingleAgentEnv``).

``Name`` (dotted names reach inside the module: ``"bots:Zoo.greedy"``) is a class or any other callable. It is
called with the options as keyword arguments and ``seed=`` where its signature takes a seed (every
:class:`~barbu_env.agents.Agent` subclass does), and must return an agent: an :class:`~barbu_env.agents.Agent`, or any
object with ``act(env, agent_name) -> int`` (and, optionally, ``reset(seed)``, called before every game of an
evaluation), which :class:`ExternalAgent` wraps. A module that ``import`` does not find is looked for in the current
folder as well (as ``uvicorn main:app`` does); a file is loaded once per process. ``__main__:Name`` reads the running
script or notebook (one process only: worker processes cannot see it).

Every failure is a ``ValueError`` naming the spec and what is wrong: the file or module not found, the name missing
(with the agents the module defines), an option the callable does not take (with those it does), or a result that
is not an agent.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re
import reprlib
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from .base import Agent

#: ``source:Name``: a module's dotted name or a ``.py`` file, then a (dotted) attribute name.
_SPEC = re.compile(r"^(?P<source>[^:]+):(?P<attr>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)$")
_MODULE = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")


def split_external(name: str) -> tuple[str, str] | None:
    """``(source, attribute)`` of a spec name of the form ``module:Name`` or ``file.py:Name``; None otherwise."""
    m = _SPEC.match(name)
    if m is None or not (m["source"].endswith(".py") or _MODULE.match(m["source"])):
        return None
    return m["source"], m["attr"]


class ExternalAgent(Agent):
    """An object with ``act(env, agent_name)`` (and optionally ``reset(seed)``) as an :class:`Agent`: the turn is
    checked here, then the object decides."""

    name = "external"

    def __init__(self, player: Any, spec: str, seed: int | None = None) -> None:
        super().__init__(seed)
        self.player, self._spec = player, spec

    @property
    def spec(self) -> str:
        return self._spec

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        reset = getattr(self.player, "reset", None)
        if callable(reset):
            reset(seed)

    def choose(self, env: Any, agent_name: str) -> int:
        return int(self.player.act(env, agent_name))


def _load_file(spec: str, source: str) -> ModuleType:
    """The module of the file ``source``, executed once per process (kept in ``sys.modules`` under a name made from
    its resolved path)."""
    path = Path(source).resolve()
    if not path.is_file():
        raise ValueError(f"agent {spec!r}: file {source!r} not found (from the folder {os.getcwd()!r})")
    key = "barbu_env_agent_file_" + re.sub(r"\W", "_", str(path))
    if key in sys.modules:
        return sys.modules[key]
    loader_spec = importlib.util.spec_from_file_location(key, path)
    if loader_spec is None or loader_spec.loader is None:
        raise ValueError(f"agent {spec!r}: {source!r} cannot be loaded as a Python file")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[key] = module
    try:
        loader_spec.loader.exec_module(module)
    except Exception as e:
        del sys.modules[key]
        raise ValueError(f"agent {spec!r}: running {source!r} failed: {type(e).__name__}: {e}") from e
    return module


def _import(spec: str, source: str, known: Sequence[str]) -> ModuleType:
    """The module ``source``, looked for in the current folder too when ``import`` does not find it."""
    for attempt in range(2):
        try:
            return importlib.import_module(source)
        except ModuleNotFoundError as e:
            missing = e.name or ""
            if source != missing and not source.startswith(missing + "."):
                raise ValueError(f"agent {spec!r}: importing {source!r} failed: {e}") from e
            if attempt or os.getcwd() in sys.path:
                break
            sys.path.insert(0, os.getcwd())
        except Exception as e:  # the module's own error while it runs
            raise ValueError(f"agent {spec!r}: importing {source!r} failed: {type(e).__name__}: {e}") from e
    raise ValueError(
        f"unknown agent {spec!r}: no module {source!r} to import, here or in {os.getcwd()!r} (an agent of your own "
        f"is 'module:Name' or 'file.py:Name'; the named agents are {sorted(known)})"
    )


def _agents_in(module: ModuleType) -> list[str]:
    """The names of the agent classes a module defines (for error messages)."""
    mine = (k for k, v in vars(module).items() if inspect.isclass(v) and v.__module__ == module.__name__)
    return sorted(k for k in mine if callable(getattr(getattr(module, k), "act", None)))


def make_external(spec: str, source: str, attr: str, seed: int | None, options: dict[str, Any],
                  known: Sequence[str] = ()) -> Agent:  # fmt: skip
    """The agent of ``source:attr`` (see the module docstring), made with ``options`` and ``seed``; ``known``: the
    named agents, for the error when no such module exists."""
    module = _load_file(spec, source) if source.endswith(".py") else _import(spec, source, known)
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"agent {spec!r}: {source!r} has no {attr!r} (its agent classes: {_agents_in(module)})")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ValueError(f"agent {spec!r}: {attr!r} is a {type(obj).__name__}, not a class or function to call")
    try:
        params = dict(inspect.signature(obj).parameters)
        free = any(p.kind is p.VAR_KEYWORD for p in params.values())
    except (TypeError, ValueError):  # a callable without a signature: it gets everything
        params, free = {}, True
    allowed = [k for k, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and k != "seed"]
    bad = [] if free else sorted(set(options) - set(allowed))
    if bad:
        raise ValueError(f"unknown option(s) {bad} for agent {spec!r}: valid options are {allowed}")
    kwargs = dict(options, seed=seed) if free or "seed" in params else dict(options)
    try:
        made = obj(**kwargs)
    except TypeError as e:
        raise ValueError(f"agent {spec!r}: calling {attr}({', '.join(kwargs)}) failed: {e}") from e
    if isinstance(made, Agent):
        return made
    if not callable(getattr(made, "act", None)):
        raise ValueError(
            f"agent {spec!r}: {attr} returned {reprlib.repr(made)}, not an agent: expected a "
            "barbu_env.agents.Agent or an object with act(env, agent_name)"
        )
    return ExternalAgent(made, spec, seed)
