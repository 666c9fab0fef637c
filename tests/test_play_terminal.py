"""``barbu-play`` driven by scripted input (RULES.md R3 declaring, R6 doubling, R5 trick play, R7 Fantan,
R8.1 scores, R11 Barbu King), and the Game it runs on."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rich", reason="barbu-play needs rich: pip install -e '.[play]'")

from rich.console import Console

from barbu_env.play.game import Game, IllegalMove, agent_specs
from barbu_env.play.terminal import action_text, main, parse_move
from barbu_env.records import load


def run_script(args: list[str], lines: list[str]) -> str:
    out = io.StringIO()
    console = Console(file=out, width=110, color_system=None, highlight=False)
    assert main(args, stdin=io.StringIO("".join(line + "\n" for line in lines)), console=console) == 0
    return out.getvalue()


def test_whole_deal_with_bad_input(tmp_path: Path) -> None:
    """A declared deal played to its end from a script; unparsable, out-of-range and illegal input is answered
    with the legal choices and changes nothing; the saved record replays to the scores printed (R8.1)."""
    path = tmp_path / "deal.json"
    script = ["garbage", "0", "99", "double:left", "declare:trumps:S", "XS", "h"] + ["1"] * 40
    text = run_script(["--seed", "3", "--agents", "heuristic", "random", "heuristic", "--hint", "heuristic",
                       "--save", str(path)], script)  # fmt: skip
    assert "'garbage' is not an action" in text
    assert "no choice 0: choose 1..22" in text and "no choice 99" in text  # 22 declarations (R3.2)
    assert "double:left is not legal now" in text
    assert "'XS' is not an action" in text
    assert re.search(r"hint \(heuristic\): \d+\) \S+", text)
    assert text.count("legal choices:") == 5
    rec = load(path)
    log = rec.deals[0]
    assert rec.finished and log.contract == "trumps:S" and rec.players == ["human", "heuristic", "random", "heuristic"]
    assert log.actions[0] == (0, "declare:trumps:S")  # the bad lines before it were not played
    printed = re.search(r"deal over \(trumps:S\): (.*)", text).group(1)
    assert [int(v) for v in re.findall(r"[+-]\d+", printed)] == log.scores
    assert f"record saved to {path}" in text


def test_fantan_deal_plays_by_name(tmp_path: Path) -> None:
    """R7: Fantan with a fixed start rank; moves typed as names (lower case, '10' for ten) or 'pass'."""
    path = tmp_path / "fantan.json"
    game = Game(seat=1, agents=["random"], contract="fantan:J", seed=5)
    lines = []
    while not game.over:  # answer every prompt with the last legal action's name, in lower case
        game.advance()
        if game.over:
            break
        name = game.legal()[-1]
        lines.append(name.lower().replace("t", "10") if len(name) == 2 else name)
        game.play(name)
    args = ["--seat", "1", "--agents", "random", "--contract", "fantan:J", "--seed", "5", "--save", str(path)]
    text = run_script(args, lines)
    assert "layout:" in text
    assert load(path).deals[0].actions == game.record.deals[0].actions


def test_end_of_input_saves_unfinished_game(tmp_path: Path) -> None:
    path = tmp_path / "part.json"
    text = run_script(["--mode", "match", "--rules", "king_short", "--seed", "1", "--agents", "random",
                       "--save", str(path)], ["1", "1", "1"])  # fmt: skip
    assert "(end of input)" in text and "a match of 5 deals" in text
    rec = load(path)
    assert rec.kind == "match" and not rec.finished
    assert sum(s == 0 for s, _ in rec.deals[-1].actions) == 3


def test_quit_and_bad_options(tmp_path: Path) -> None:
    text = run_script(["--no-save", "--seed", "2"], ["q"])
    assert "record saved" not in text
    out = io.StringIO()
    assert main(["--agents", "nobody"], stdin=io.StringIO(""), console=Console(file=out)) == 2
    assert "unknown agent 'nobody'" in out.getvalue()
    assert main(["--mode", "match", "--contract", "no_king"], stdin=io.StringIO(""), console=Console(file=out)) == 2
    assert "--mode deal" in out.getvalue()


def test_match_through_console_script(tmp_path: Path) -> None:
    """barbu-play as a program (its console script where installed): a Barbu King short match (R11.3) read from
    standard input."""
    path = tmp_path / "match.json"
    exe = Path(sys.executable).with_name("barbu-play")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "barbu_env.play.terminal"]
    out = subprocess.run([*cmd, "--mode", "match", "--rules", "king_short", "--seat", "2", "--agents", "random",
                          "--seed", "9", "--save", str(path)], input="1\n" * 200, capture_output=True, text=True,
                         check=True, timeout=300).stdout  # fmt: skip
    rec = load(path)
    assert rec.finished and len(rec.deals) == 5 and "match over" in out
    assert rec.totals == [sum(d.scores[s] for d in rec.deals) for s in range(4)]


def test_game_checks_moves() -> None:
    """The engine decides: an illegal or off-turn move raises IllegalMove with the legal actions."""
    game = Game(seat=0, agents=["random"], contract="no_hearts", seed=0)
    game.advance()
    assert game.human_to_move()
    legal = game.legal()
    with pytest.raises(IllegalMove) as e:
        game.play("declare:no_king")
    assert e.value.legal == legal and "legal now" in str(e.value)
    game.play(legal[0])
    assert game.human_to_move() or game.over
    with pytest.raises(ValueError, match="one per other seat"):
        agent_specs(["random", "random"], 0, 4)
    assert agent_specs(["a", "b", "c"], 2, 4) == ["a", "b", "human", "c"]


def test_double_names_its_seats() -> None:
    """R1.3 / R6: a double's targets are relative to the doubling seat (left = seat + 1)."""
    assert action_text("double:left+right", 2).plain == "double:left+right (P3 P1)"
    assert action_text("double:none", 2).plain == "double:none"
    assert action_text("TH").plain == "10♥"
    assert action_text("double:+1+4", 3, players=5).plain == "double:+1+4 (P4 P2)"  # R12.2: offsets


def test_three_player_game_by_name() -> None:
    """R12: a three-player deal through the Game: the human doubles by offset names; the deal plays out."""
    game = Game(seat=1, agents=["random"], rules="classic3", contract="no_queens", seed=2)
    game.advance()
    assert game.legal() == ["double:none", "double:+1", "double:+2", "double:+1+2"]  # seat 1 first (R6.1)
    events = game.play("double:+2")
    assert events[0].action == "double:+2" and events[0].view["doubles"] == [[1, 0]]
    while not game.over:
        game.play(game.legal()[0])
    assert game.raw.deal.is_over and len(game.raw.deal.scores) == 3


def test_parse_move() -> None:
    assert parse_move(" 2 ", ["AS", "KS"]) == "KS"
    assert parse_move("qs", ["QS"]) == "qs"  # names go to the engine's parser
    with pytest.raises(IllegalMove, match=r"choose 1\.\.2"):
        parse_move("3", ["AS", "KS"])
