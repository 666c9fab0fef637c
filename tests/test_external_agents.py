"""Agents of the user's own code as specs (``module:Name``, ``file.py:Name``; ``barbu_env.agents.external``): made,
played, evaluated (one process and worker processes, CLI and Python), and every refusal naming what is wrong.
The agent module is docs/ENVIRONMENT.md's example ("Your own agent"), so the documented code runs as written."""

from __future__ import annotations

import re
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

import barbu_env
from barbu_env.agents import Agent, ExternalAgent, is_checkpoint_spec, make, split_external
from barbu_env.evaluation import evaluate
from barbu_env.evaluation.cli import main as eval_main

ROOT = Path(__file__).resolve().parent.parent

#: A duck-typed player (no Agent base class) and a factory, beside the documented class.
EXTRA = """

class Plain:
    def __init__(self, step=0):
        self.step, self.resets = step, []

    def reset(self, seed):
        self.resets.append(seed)

    def act(self, env, agent_name):
        legal = np.flatnonzero(env.observe(agent_name)["action_mask"])
        return int(legal[-1 - min(self.step, len(legal) - 1)])


def plain_factory(seed=None):
    return Plain(step=1)


def not_an_agent():
    return 42


TABLE = {"size": 3}
"""


def documented_bots() -> str:
    """The ``my_bots.py`` block of docs/ENVIRONMENT.md's "Your own agent"."""
    text = (ROOT / "docs" / "ENVIRONMENT.md").read_text(encoding="utf-8")
    section = text[text.index("### Your own agent") :]
    return re.findall(r"^```python\n(.*?)^```", section, flags=re.M | re.S)[0]


@pytest.fixture
def bots(tmp_path, monkeypatch):
    """The module's name (unique per test, so a module imported by an earlier test is not reused), written into the
    test's working folder; ``sys.path`` restored after the test."""
    name = f"bots_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(documented_bots() + EXTRA, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    return name


def play_deal(players: dict[str, Agent]) -> barbu_env.env:
    env = barbu_env.env(mode="deal", contract="no_queens")
    env.reset(seed=3)
    for name in env.agent_iter():
        _, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else players[name].act(env, name))
    return env


def test_the_spec_forms_are_told_apart():
    assert split_external("bots:Lowest") == ("bots", "Lowest")
    assert split_external("pkg.bots:Zoo.greedy") == ("pkg.bots", "Zoo.greedy")
    assert split_external("some/dir/bots.py:Lowest") == ("some/dir/bots.py", "Lowest")
    for name in ("heuristic", "checkpoints", "runs/a/no_queens.pt", "some/dir:Lowest", "bots:1x"):
        assert split_external(name) is None, name
    assert not is_checkpoint_spec("some/dir/bots.py:Lowest")  # a '/' no longer makes it a checkpoint path
    assert is_checkpoint_spec("runs/a/no_queens.pt")


def test_the_documented_class_plays_its_rule(bots):
    """The file and module forms make the same class, seeded and with its option; it plays the lowest legal action
    (the ``offset``-th with ``offset``) at every decision of a deal."""
    a = make(f"{bots}.py:Lowest", seed=4)
    b = make(f"{bots}:Lowest:offset=1", seed=5)
    assert type(a).__name__ == type(b).__name__ == "Lowest" and isinstance(a, Agent)
    assert (a.seed, a.offset, b.seed, b.offset) == (4, 0, 5, 1)
    env = barbu_env.env(mode="deal", contract="no_queens")
    env.reset(seed=1)
    checked = 0
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        action = (a if name == "player_0" else b).act(env, name)
        assert action == legal[0 if name == "player_0" else min(1, len(legal) - 1)]
        checked += 1
        env.step(action)
    assert checked >= 13 and not env.agents  # No queens may end once the four queens are out (R4)


def test_a_duck_typed_player_is_wrapped(bots):
    """An object with act (and reset) becomes an ExternalAgent: reset forwarded, the turn checked before it acts."""
    agent = make(f"{bots}:Plain:step=2", seed=7)
    assert isinstance(agent, ExternalAgent) and agent.spec == f"{bots}:Plain:step=2"
    assert agent.player.step == 2
    agent.reset(9)
    assert agent.player.resets == [9] and agent.seed == 9
    assert make(f"{bots}:plain_factory", seed=1).player.step == 1  # a factory, called with the seed
    env = barbu_env.env(mode="deal", contract="no_queens")
    env.reset(seed=0)
    off_move = next(a for a in env.possible_agents if a != env.agent_selection)
    with pytest.raises(ValueError, match="is not on move"):
        agent.act(env, off_move)
    env = play_deal({a: make(f"{bots}:Plain", seed=i) for i, a in enumerate(env.possible_agents)})
    assert sum(env.unwrapped.deal.scores) == -24  # R4: the four queens, -6 each


def test_evaluation_one_process_workers_and_cli(bots, capsys):
    """The same boards give the same per-board numbers in one process and in two worker processes (which load the
    file and import the module themselves); the CLI labels the agent with its spec."""
    for spec in (f"{bots}.py:Lowest", f"{bots}:Plain:step=1"):
        one = evaluate([spec, "random"], contracts=["no_queens", "trumps"], boards=4, seed=2)
        two = evaluate([spec, "random"], contracts=["no_queens", "trumps"], boards=4, seed=2, workers=2)
        assert one["agents"] == [spec, "random"] and one["engine"] == "python"
        assert one["boards"] == two["boards"] and len(one["boards"]) == 8
    assert eval_main(["--agents", f"{bots}.py:Lowest", "heuristic", "--contract", "no_tricks", "--deals", "2",
                      "--no-progress"]) in (0, None)  # fmt: skip
    assert f"| {bots}.py:Lowest |" in capsys.readouterr().out


def test_main_module_agents_stay_in_one_process(bots, monkeypatch):
    monkeypatch.setattr(sys.modules["__main__"], "InMain", make(f"{bots}.py:Lowest").__class__, raising=False)
    assert type(make("__main__:InMain", seed=0)).__name__ == "Lowest"
    assert evaluate(["__main__:InMain", "random"], boards=1)["finished"] == 1
    with pytest.raises(ValueError, match="__main__, which worker processes cannot import: use workers=1"):
        evaluate(["__main__:InMain", "random"], boards=2, workers=2)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("missing.py:Lowest", r"agent 'missing.py:Lowest': file 'missing.py' not found"),
        ("{b}.py:Nope", r"'{b}.py' has no 'Nope' \(its agent classes: \['Lowest', 'Plain'\]\)"),
        (
            "{b}:Lowest:depth=3",
            r"unknown option\(s\) \['depth'\] for agent '{b}:Lowest:depth=3': valid options are "
            r"\['offset'\]",
        ),
        ("{b}:TABLE", r"'TABLE' is a dict, not a class or function to call"),
        ("{b}:np", r"'np' is a module, not a class or function to call"),
        (
            "{b}:not_an_agent",
            r"not_an_agent returned 42, not an agent: expected a barbu_env.agents.Agent or an "
            r"object with act\(env, agent_name\)",
        ),
        (
            "no_such_module_xyz:Bot",
            r"unknown agent 'no_such_module_xyz:Bot': no module 'no_such_module_xyz' to "
            r"import.*'module:Name' or 'file.py:Name'; the named agents are \[",
        ),
        ("heuristic:greedy", r"unknown agent 'heuristic:greedy': expected one of \['heuristic'"),
    ],
)
def test_refusals_name_what_is_wrong(bots, spec, message):
    with pytest.raises(ValueError, match=message.replace("{b}", bots)):
        make(spec.replace("{b}", bots))


def test_a_file_or_module_that_fails_to_run_is_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    name = f"broken_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text("raise RuntimeError('no GPU here')\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"agent '{name}.py:Bot': running '{name}.py' failed: RuntimeError: no GPU"):
        make(f"{name}.py:Bot")
    with pytest.raises(ValueError, match=rf"agent '{name}:Bot': importing '{name}' failed: RuntimeError: no GPU"):
        make(f"{name}:Bot")
    (tmp_path / f"{name}_dep.py").write_text("import not_installed_xyz\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"importing '{name}_dep' failed: No module named 'not_installed_xyz'"):
        make(f"{name}_dep:Bot")
