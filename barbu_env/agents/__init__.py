"""Baseline agents behind one protocol: ``agent = make(spec, seed)``, then ``agent.act(env, agent_name)``.

Specs are the names used on the ``barbu-eval`` command line:

- ``"random"``: uniform over legal actions (:mod:`.random_agent`);
- ``"heuristic"``: the rule-based player (:mod:`.heuristic`);
- ``"pimc"`` or ``"pimc:samples=32"``: Perfect-Information Monte-Carlo card play (:mod:`.pimc`); with
  ``"pimc:rollout=checkpoints"`` its rollouts are played by the networks of a checkpoint folder or file;
- ``"rllib:source=PATH"``: a policy trained with RLlib (an algorithm checkpoint folder; options ``module``,
  ``greedy``), every decision its own (:class:`barbu_env.wrappers.rllib.ModuleAgent`; imports ray);
- ``"sb3:source=model.zip"``: a Stable-Baselines3 model (options ``algo``, default ``MaskablePPO``, and ``greedy``),
  every decision its own (:class:`barbu_env.wrappers.sb3.ModelAgent`; imports stable_baselines3);
- ``"module:Name"`` or ``"path/to/file.py:Name"`` (options after one more colon): an agent of your own, the
  class or factory ``Name`` of that module or file called with the options and the seed (:mod:`.external`);
- a checkpoint path (``"checkpoints/no_queens.pt"``, optionally ``"path.pt:key=value"``): a neural
  agent, built by ``barbu_env.agents.neural.make_neural(path, seed=..., **options)`` once that module
  exists (see :func:`is_checkpoint_spec`; torch is imported only then).

Options are ``name:key=value,key=value``, values read by :func:`barbu_env.options.parse_value`.
Unknown names and options raise ``ValueError`` listing the valid ones. See :mod:`.base` for the
protocol (what an agent may read) and :class:`Agent` for the methods.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any

from ..options import parse_option
from .base import Agent, seat_of
from .external import ExternalAgent, make_external, split_external
from .heuristic import HeuristicAgent
from .pimc import PIMCAgent
from .random_agent import RandomAgent

#: Agents made by name.
REGISTRY: dict[str, type[Agent]] = {"random": RandomAgent, "heuristic": HeuristicAgent, "pimc": PIMCAgent}
#: Agents whose module imports an RL framework, imported when first made: name -> (module, class name).
FRAMEWORK_AGENTS: dict[str, tuple[str, str]] = {
    "rllib": ("barbu_env.wrappers.rllib", "ModuleAgent"), "sb3": ("barbu_env.wrappers.sb3", "ModelAgent")}  # fmt: skip
#: File endings that mark a spec as a checkpoint path.
CHECKPOINT_SUFFIXES = (".pt", ".pth", ".ckpt")


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"pimc:samples=20"`` -> ``("pimc", {"samples": 20})``; raises ``ValueError`` on bad syntax."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"bad agent spec {spec!r}: expected a name such as {sorted(REGISTRY)} or a checkpoint path")
    head, sep, tail = spec.strip().rpartition(":")
    if not sep or "=" not in tail:  # no options (a checkpoint path may itself hold ':')
        return spec.strip(), {}
    if not head.strip():
        raise ValueError(f"bad agent spec {spec!r}: no agent name before the options ('name:key=value')")
    options: dict[str, Any] = {}
    for item in tail.split(","):
        try:
            key, value = parse_option(item)
        except ValueError:
            raise ValueError(f"bad option {item!r} in agent spec {spec!r}: expected key=value") from None
        options[key] = value
    return head.strip(), options


def is_checkpoint_spec(name: str) -> bool:
    """True when a spec's name is a checkpoint path rather than an agent name."""
    return (
        name not in REGISTRY
        and name not in FRAMEWORK_AGENTS
        and split_external(name) is None
        and (name.endswith(CHECKPOINT_SUFFIXES) or "/" in name or Path(name).exists())
    )


def agent_class(name: str) -> type[Agent]:
    """The class of a named agent (:data:`REGISTRY`, or :data:`FRAMEWORK_AGENTS` imported now)."""
    if name in REGISTRY:
        return REGISTRY[name]
    module, cls = FRAMEWORK_AGENTS[name]
    try:
        return getattr(importlib.import_module(module), cls)
    except ModuleNotFoundError as e:
        raise ValueError(
            f"agent {name!r} needs {e.name!r}, which is not installed (pip install -e '.[{name}]')"
        ) from None


def valid_options(name: str) -> list[str]:
    """Option names an agent accepts (its constructor's keyword arguments besides ``seed``)."""
    params = inspect.signature(agent_class(name).__init__).parameters
    return [p for p in params if p not in ("self", "seed")]


def make(spec: str, seed: int | None = None) -> Agent:
    """An agent from a spec (see the module docstring), seeded with ``seed``."""
    name, options = parse_spec(spec)
    if name in REGISTRY or name in FRAMEWORK_AGENTS:
        cls = agent_class(name)
        params = inspect.signature(cls.__init__).parameters
        allowed = valid_options(name)
        bad = sorted(set(options) - set(allowed))
        if bad:
            raise ValueError(f"unknown option(s) {bad} for agent {name!r}: valid options are {allowed}")
        missing = [p for p in allowed if params[p].default is inspect.Parameter.empty and p not in options]
        if missing:
            raise ValueError(f"agent {name!r} needs option(s) {missing}, e.g. '{name}:{missing[0]}=...'")
        return cls(seed=seed, **options)
    external = split_external(name)
    if external is not None and external[0] not in REGISTRY and external[0] not in FRAMEWORK_AGENTS:
        return make_external(spec.strip(), *external, seed, options, known=[*REGISTRY, *FRAMEWORK_AGENTS])
    if is_checkpoint_spec(name):
        return _make_checkpoint_agent(name, seed, options)
    raise ValueError(
        f"unknown agent {name!r}: expected one of {sorted([*REGISTRY, *FRAMEWORK_AGENTS])} (options as "
        f"'name:key=value', e.g. 'pimc:samples=20'), a checkpoint path ending in {CHECKPOINT_SUFFIXES} or an agent "
        "of your own as 'module:Name' or 'file.py:Name'"
    )


def _make_checkpoint_agent(path: str, seed: int | None, options: dict[str, Any]) -> Agent:
    """Extension point for neural agents: ``barbu_env.agents.neural.make_neural(path, seed, **options)``."""
    try:
        neural = importlib.import_module(f"{__name__}.neural")
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.neural":
            raise
        raise ValueError(
            f"cannot load checkpoint agent {path!r}: neural agents (barbu_env.agents.neural) are not "
            f"available yet; valid agents are {sorted(REGISTRY)}"
        ) from None
    return neural.make_neural(path, seed=seed, **options)


__all__ = [
    "FRAMEWORK_AGENTS", "REGISTRY", "Agent", "ExternalAgent", "HeuristicAgent", "PIMCAgent", "RandomAgent",
    "agent_class", "is_checkpoint_spec", "make", "parse_spec", "seat_of", "split_external", "valid_options",
]  # fmt: skip
