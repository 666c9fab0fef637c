"""The env through the compiled deal in play against the env on the engine alone (``inplay.mirror_for`` giving
None): identical digests of every observation, mask, reward, termination and error over random legal and illegal
actions with information reads (``tests/tools/differential_env.py``; RULES.md R3-R9, R8.2)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from barbu_env import inplay

sys.path.insert(0, str(Path(__file__).parent / "tools"))
import differential_env as diff

CONFIGS = dict(diff.configs())
LABELS = [
    "classic|deal|raise|raw_env", "classic|deal|renege|env", "classic|match|terminate|raw_env",
    "classic|match|renege|raw_env", "basic32|match|raise|env", "ravage_city|deal|terminate|raw_env",
    "spanish|match|renege|raw_env", "king|deal|renege|raw_env",
]  # fmt: skip


def _both(label: str, steps: int, monkeypatch: pytest.MonkeyPatch) -> tuple[tuple[str, int], tuple[str, int]]:
    compiled = diff.run_config(CONFIGS[label], steps, seed=1)
    with monkeypatch.context() as m:
        m.setattr(inplay, "mirror_for", lambda rules: None)
        engine = diff.run_config(CONFIGS[label], steps, seed=1)
    return compiled, engine


@pytest.mark.parametrize("label", LABELS)
def test_compiled_play_gives_what_the_engine_gives(label, monkeypatch):
    compiled, engine = _both(label, 600, monkeypatch)
    assert compiled == engine and compiled[1] == 600


@pytest.mark.slow
@pytest.mark.parametrize("label", [label for label in CONFIGS if "|match|" in label and "king" not in label][::5])
def test_compiled_play_gives_what_the_engine_gives_matches(label, monkeypatch):
    compiled, engine = _both(label, 1500, monkeypatch)
    assert compiled == engine


def test_the_digest_sees_a_changed_observation(monkeypatch):
    """The digest can fail: one entry of one observation changed gives another digest."""
    label = "classic|deal|raise|raw_env"
    first = diff.run_config(CONFIGS[label], 200, seed=1)
    observe = inplay.CompiledPlay.observe

    def changed(self, seat):
        o = observe(self, seat).copy()
        o[5] = 1.0 - o[5]
        return o

    monkeypatch.setattr(inplay.CompiledPlay, "observe", changed)
    assert diff.run_config(CONFIGS[label], 200, seed=1) != first
