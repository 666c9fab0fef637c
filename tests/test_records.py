"""Game records (barbu_env.records): written by the recording wrapper, replayed through the engine, refused
with the file, deal, step and reason when corrupt (RULES.md R2, R3, R6, R8.1, R11)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

import barbu_env
from barbu_env import agents
from barbu_env.records import GameRecord, RecordError, RecordingEnv, load, replay, verify


def play_recorded(mode: str, rules: str, seed: int, **kwargs) -> RecordingEnv:
    env = RecordingEnv(barbu_env.env(mode=mode, rules=rules, **kwargs), players=None)
    players = {a: agents.make("random", seed=seed + i) for i, a in enumerate(env.possible_agents)}
    env.reset(seed=seed)
    for agent in env.agent_iter():
        _, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else players[agent].act(env, agent))
    return env


@pytest.mark.parametrize(
    ("mode", "rules", "kwargs"),
    [("deal", "classic", {}), ("deal", "ravage_city", {}), ("deal", "basic32", {"contract": "trumps:H"}),
     ("deal", "online", {"contract": "fantan:9"}), ("deal", "king5", {}), ("match", "classic", {}),
     ("match", "king", {}), ("match", "king3", {}), ("match", "salad", {"tiebreak": "extra_deals"}),
     ("deal", "classic5", {}), ("match", "classic3", {}), ("deal", "positive1", {"contract": "anti_salad"})],
)  # fmt: skip
def test_round_trip(tmp_path: Path, mode: str, rules: str, kwargs: dict) -> None:
    """A recorded game saved to JSON loads back equal, and its replay ends with the env's scores (R8.1, R8.3)."""
    env = play_recorded(mode, rules, seed=5, **kwargs)
    rec = env.record
    assert rec.finished
    path = env.save(tmp_path / "game.json")
    back = load(path)
    assert back.to_dict() == rec.to_dict()
    raw = env.unwrapped
    totals = raw.match.totals if raw.match is not None else raw.deal.scores
    assert back.totals == list(totals)
    steps = list(replay(back))
    assert sum(len(d.actions) for d in back.deals) == sum(s.step >= 0 for s in steps)
    assert steps[-1].deal.is_over


def test_match_record_has_every_deal_and_winners() -> None:
    """R2.1: a classic match record holds 28 deals; the winners are the highest totals (R2.4)."""
    rec = play_recorded("match", "classic", seed=2).record
    assert len(rec.deals) == 28 and rec.winners == [s for s, t in enumerate(rec.totals) if t == max(rec.totals)]
    assert sum(d.scores[0] for d in rec.deals) == rec.totals[0]


@pytest.fixture(scope="module")
def deal_record() -> dict:
    return play_recorded("deal", "classic", seed=11).record.to_dict()


def refused(data: dict, tmp_path: Path) -> RecordError:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(RecordError) as e:
        load(path)
    assert str(path) in str(e.value)
    return e.value


def test_tampered_action_refused(deal_record: dict, tmp_path: Path) -> None:
    """A card swapped for one the seat does not hold is refused at that step, with the legal actions."""
    data = copy.deepcopy(deal_record)
    actions = data["deals"][0]["actions"]
    i = next(i for i, (_, a) in enumerate(actions) if len(a) == 2)  # the first card played
    seat = actions[i][0]
    other = next(c for h, text in enumerate(data["deals"][0]["hands"]) if h != seat for c in text.split())
    actions[i] = [seat, other]
    e = refused(data, tmp_path)
    assert (e.deal, e.step) == (0, i) and "illegal action" in e.reason and "legal are" in e.reason


def test_tampered_seat_refused(deal_record: dict, tmp_path: Path) -> None:
    data = copy.deepcopy(deal_record)
    seat, name = data["deals"][0]["actions"][3]
    data["deals"][0]["actions"][3] = [(seat + 1) % 4, name]
    e = refused(data, tmp_path)
    assert e.step == 3 and "is on move" in e.reason


def test_tampered_score_refused(deal_record: dict, tmp_path: Path) -> None:
    """R8.1: a score that is not the engine's is refused, naming both."""
    data = copy.deepcopy(deal_record)
    data["deals"][0]["scores"][2] += 5
    e = refused(data, tmp_path)
    assert e.deal == 0 and e.step is None and "engine scores" in e.reason


def test_tampered_match_deal_refused(tmp_path: Path) -> None:
    """A match record whose 4th deal has a tampered score, or a declarer out of the R2.2 schedule."""
    data = play_recorded("match", "king", seed=4).record.to_dict()
    bad = copy.deepcopy(data)
    bad["deals"][3]["scores"][0] -= 1
    assert refused(bad, tmp_path).deal == 3
    bad = copy.deepcopy(data)
    bad["deals"][5]["declarer"] = (bad["deals"][5]["declarer"] + 1) % 4
    e = refused(bad, tmp_path)
    assert e.deal == 5 and "R2.2" in e.reason
    bad = copy.deepcopy(data)
    bad["totals"][1] += 1
    assert "totals" in refused(bad, tmp_path).reason


def test_truncated_and_extended_deal_refused(deal_record: dict, tmp_path: Path) -> None:
    data = copy.deepcopy(deal_record)
    data["deals"][0]["actions"].pop()
    assert "not over" in refused(data, tmp_path).reason
    data = copy.deepcopy(deal_record)
    data["deals"][0]["actions"].append([0, "2C"])
    e = refused(data, tmp_path)
    assert e.step == len(deal_record["deals"][0]["actions"]) and "deal is over" in e.reason


def test_unfinished_record_replays(deal_record: dict) -> None:
    """A game saved before its end: the last deal without scores replays up to where it stopped."""
    data = copy.deepcopy(deal_record)
    data["deals"][0]["actions"] = data["deals"][0]["actions"][:10]
    data["deals"][0]["scores"] = data["deals"][0]["contract"] = data["totals"] = None
    rec = verify(data)
    assert not rec.finished


@pytest.mark.parametrize(
    ("change", "reason"),
    [(lambda d: d.update(format="other"), "not a game record"), (lambda d: d.update(kind="set"), "bad kind"),
     (lambda d: d.update(rules={"doubling": "twice"}), "bad rules"), (lambda d: d.update(extra=1), "unknown key"),
     (lambda d: d["deals"][0].update(hands=["AS"] * 4), "hand of seat 0 has 1 cards"),
     (lambda d: d["deals"][0]["actions"].__setitem__(0, [1, "double:sideways"]), "unknown action name"),
     (lambda d: d["deals"][0]["actions"].__setitem__(0, "QS"), "bad action entry")],
)  # fmt: skip
def test_corrupt_records_refused(deal_record: dict, tmp_path: Path, change, reason: str) -> None:
    data = copy.deepcopy(deal_record)
    change(data)
    assert reason in str(refused(data, tmp_path))


def test_not_json_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text("{not json")
    with pytest.raises(RecordError, match=r"x\.json: not valid JSON"):
        load(path)
    with pytest.raises(RecordError, match="cannot read"):
        load(tmp_path / "missing.json")


def test_recording_needs_raise_mode() -> None:
    with pytest.raises(ValueError, match="illegal_action='raise'"):
        RecordingEnv(barbu_env.env(illegal_action="renege"))


def test_from_dict_is_parse_only(deal_record: dict) -> None:
    """GameRecord.from_dict checks the shape; verify replays the play."""
    data = copy.deepcopy(deal_record)
    data["deals"][0]["scores"][0] += 1
    rec = GameRecord.from_dict(data)
    with pytest.raises(RecordError, match="engine scores"):
        verify(rec)


def test_import_needs_no_front_end_package() -> None:
    """``import barbu_env`` and the records module import none of the play extra's packages."""
    import subprocess
    import sys

    code = (
        "import sys, barbu_env, barbu_env.records, barbu_env.play.game; "
        "print([m for m in ('rich', 'starlette', 'uvicorn', 'httpx', 'playwright') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_environment_doc_snippet_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/ENVIRONMENT.md's records example runs as written: a recorded King short match (R11.3) loads back."""
    import re

    text = (Path(__file__).resolve().parent.parent / "docs" / "ENVIRONMENT.md").read_text(encoding="utf-8")
    [block] = [b for b in re.findall(r"^```python\n(.*?)^```", text, flags=re.M | re.S) if "RecordingEnv" in b]
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(block, "docs/ENVIRONMENT.md records", "exec"), namespace)
    record = namespace["record"]
    assert record.finished and len(record.deals) == 5 and (tmp_path / "game.json").is_file()
