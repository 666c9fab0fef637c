"""What a duplicate evaluation plays: :class:`EvalConfig`, checked by :func:`make_config` before any
board is played, and the decisions its checkpoint agents hand to their fallback agent."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..agents import Agent, make
from ..contracts import contract_table
from ..rules import Rules, load_rules
from .boards import LINEUPS, MODES, lineup_of


@dataclass
class EvalConfig:
    """What to evaluate (see :func:`evaluate`)."""

    agents: list[str]
    mode: str = "deal"
    contracts: list[str] = field(default_factory=lambda: ["no_queens"])
    boards: int = 100
    seed: int = 0
    lineup: str = "1v3"
    rules: dict[str, Any] = field(default_factory=dict)  # Rules fields (asdict), after defaults

    def make_rules(self) -> Rules:
        return Rules(**self.rules)


def make_config(
    agents: Sequence[str],
    mode: str = "deal",
    contracts: Sequence[str] | str = "no_queens",
    boards: int = 100,
    seed: int = 0,
    lineup: str = "1v3",
    rules: str | dict | Rules | None = None,
    **rule_options: Any,
) -> tuple[EvalConfig, list[Agent]]:
    """The checked :class:`EvalConfig` of an evaluation (arguments as :func:`evaluate`) and its agents,
    built once here (so a bad spec, or a checkpoint that would hand the evaluated contracts' card play
    to its fallback, fails before any board is played); ``ValueError`` naming the first bad argument."""
    if mode not in MODES:
        raise ValueError(f"bad mode {mode!r}: expected one of {MODES}")
    if isinstance(boards, bool) or not isinstance(boards, int) or boards < 1:
        raise ValueError(f"bad number of boards {boards!r}: expected an integer >= 1")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"bad seed {seed!r}: expected an integer >= 0")
    if isinstance(agents, str) or not all(isinstance(a, str) for a in agents):
        raise ValueError(f"bad agents {agents!r}: expected a list of agent specs")
    agents = list(agents)
    made = [make(spec) for spec in agents]  # a bad spec fails here, before any worker starts
    if mode == "deal" and "doubling" not in rule_options and not (isinstance(rules, dict) and "doubling" in rules):
        base = load_rules(rules)
        rule_options = {"doubling": "off" if base.undoubled_negative == "play" else base.doubling, **rule_options}
    the_rules = load_rules(rules, **rule_options)
    if not isinstance(lineup, str):
        raise ValueError(f"bad line-up {lineup!r}: expected one of {list(LINEUPS)}")
    lineup_of(lineup, len(agents), the_rules.players)
    table = contract_table(the_rules)
    if mode == "deal":
        names = list(table) if contracts == "all" else [contracts] if isinstance(contracts, str) else list(contracts)
        if not names:
            raise ValueError("no contract given: expected 'all' or contract names")
        for c in names:
            if c not in table:
                raise ValueError(f"unknown contract {c!r} under these rules: expected 'all' or one of {list(table)}")
        for spec, agent in zip(agents, made):
            uncovered = agent.fallback_contracts(names)
            if uncovered:
                raise ValueError(
                    f"agent {spec!r} has no network for {uncovered}: its card play there would be played by its "
                    f"fallback {agent.fallback_spec!r}; evaluate it on the contract(s) it was trained for, or give "
                    "a folder of checkpoints"
                )
    else:
        names = ["match"]
    # as JSON keeps them: the list option ``positive`` (R10.3) as a list
    options = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(the_rules).items()}
    return EvalConfig(agents, mode, names, boards, seed, lineup, options), made


def fallback_notes(cfg: EvalConfig, agents: Sequence[Agent]) -> list[str]:
    """One line per agent of ``cfg`` (built: ``agents``) that hands decisions of this evaluation to
    another agent, naming the decisions and that agent."""
    rules = cfg.make_rules()
    contracts = list(contract_table(rules)) if cfg.mode == "match" else cfg.contracts
    notes = []
    for spec, agent in dict(zip(cfg.agents, agents)).items():
        if agent.fallback_spec is None:
            continue
        learned = getattr(agent, "bidding_roles", ())
        handed = ["declaration"] if cfg.mode == "match" and "declare" not in learned else []
        if rules.doubling != "off" and "double" not in learned:
            handed.append("doubling")
        handed += [f"card play of {c}" for c in agent.fallback_contracts(contracts)]
        if handed:
            notes.append(f"agent {spec!r} hands these decisions to {agent.fallback_spec!r}: {', '.join(handed)}")
    return notes
