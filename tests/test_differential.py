"""The env through the compiled deal in play and Barbu King's compiled encoder against the env on the engine and
the reference encoder alone (``inplay.mirror_for`` giving None, ``inplay.encoder_for`` giving
``observation.encode``): identical digests of every observation, mask, reward, termination and error over random
legal and illegal actions with information reads (``tests/tools/differential_env.py``; RULES.md R3-R9, R8.2,
R11)."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np
import pytest

import barbu_env
from barbu_env import inplay
from barbu_env.engine.match import Match
from barbu_env.observation import encode

sys.path.insert(0, str(Path(__file__).parent / "tools"))
import differential_env as diff

CONFIGS = dict(diff.configs())
LABELS = [
    "classic|deal|raise|raw_env", "classic|deal|renege|env", "classic|match|terminate|raw_env",
    "classic|match|renege|raw_env", "basic32|match|raise|env", "ravage_city|deal|terminate|raw_env",
    "spanish|match|renege|raw_env", "king|deal|renege|raw_env", "king3|deal|raise|env", "king5|match|terminate|raw_env",
    "king_choose|match|renege|env", "king_short|deal|terminate|raw_env",
]  # fmt: skip


def _both(label: str, steps: int, monkeypatch: pytest.MonkeyPatch) -> tuple[tuple[str, int], tuple[str, int]]:
    compiled = diff.run_config(CONFIGS[label], steps, seed=1)
    with monkeypatch.context() as m:
        _engine_only(m)
        engine = diff.run_config(CONFIGS[label], steps, seed=1)
    return compiled, engine


def _engine_only(m: pytest.MonkeyPatch) -> None:
    """The env on the engine and the reference encoder alone."""
    m.setattr(inplay, "mirror_for", lambda rules: None)
    m.setattr(inplay, "encoder_for", lambda rules: encode)


@pytest.mark.parametrize("label", LABELS)
def test_compiled_play_gives_what_the_engine_gives(label, monkeypatch):
    compiled, engine = _both(label, 600, monkeypatch)
    assert compiled == engine and compiled[1] == 600


@pytest.mark.slow
@pytest.mark.parametrize("label", [label for label in CONFIGS if "|match|" in label][::5])
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


MATCH_OPTIONS = [
    {"rules": "classic"}, {"rules": "rotate"}, {"rules": "ravage_city"}, {"rules": "classic", "doubling": "off"},
    {"rules": "classic", "tiebreak": "extra_deals"},
    {"rules": "classic", "doubling": "declarer_only", "undoubled_negative": "split"},
]  # fmt: skip


def _whole_matches(options: dict, seeds: range) -> list[tuple]:
    """Seeded whole matches of random legal play: a digest of every step's observation, mask and reward, and the
    score sheet (records, totals, winners: R2, R8.3)."""
    out = []
    for seed in seeds:
        e = barbu_env.raw_env(mode="match", **options)
        e.reset(seed=seed)
        rng = np.random.default_rng(seed)
        h = hashlib.sha256()
        for _agent in e.agent_iter():
            obs, reward, term, _, _ = e.last()
            h.update(obs["observation"].tobytes() + obs["action_mask"].tobytes() + repr(reward).encode())
            legal = np.flatnonzero(obs["action_mask"])
            e.step(None if term else int(legal[rng.integers(len(legal))]))
        m = e.match
        out.append((h.hexdigest(), m.records, m.totals, m.winners, m.deal_no, m.num_deals))
    return out


@pytest.mark.parametrize("options", MATCH_OPTIONS, ids=[str(sorted(o.values())) for o in MATCH_OPTIONS])
def test_whole_matches_compiled_score_sheet_equals_the_engines(options, monkeypatch):
    """Whole matches through the compiled copy, which scores each deal but the last without building the ``Deal``
    (``Match.score_deal``), give the observations, rewards and score sheet of the engine alone."""
    scored = []
    score_deal = Match.score_deal

    def spy(self, rec):
        scored.append(rec.number)
        return score_deal(self, rec)

    monkeypatch.setattr(Match, "score_deal", spy)
    compiled = _whole_matches(options, range(2))
    scheduled = sum(r[-1] - 1 for r in compiled)  # every deal but each match's last (R2.1)
    assert len(scored) == scheduled
    with monkeypatch.context() as m:
        _engine_only(m)
        engine = _whole_matches(options, range(2))
    assert len(scored) == scheduled  # the engine path scores the Deal (end_deal)
    assert compiled == engine
