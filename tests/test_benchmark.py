"""``python -m barbu_env.benchmark``'s table: rounds with ``--repeat``, medians and ratio ranges (the rows' runners
replaced by fixed readings; speed itself is never asserted)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from barbu_env import benchmark


def _readings(values: list[float]) -> Callable[[float], float]:
    it: Iterator[float] = iter(values)
    return lambda seconds: next(it)


def test_repeat_interleaves_rounds_and_reports_medians(monkeypatch, capsys) -> None:
    order: list[str] = []

    def runner(row: str, values: list[float]) -> Callable[[float], float]:
        read = _readings(values)
        return lambda seconds: order.append(row) or read(seconds)

    monkeypatch.setitem(benchmark.RUNNERS, "nn-batched", runner("nn-batched", [100.0, 300.0, 200.0]))
    monkeypatch.setitem(benchmark.RUNNERS, "pimc-16", runner("pimc-16", [1.0, 2.0, 4.0]))
    got = benchmark.main(["--rows", "nn-batched", "pimc-16", "--repeat", "3", "--seconds", "0"])
    assert order == ["nn-batched", "pimc-16"] * 3
    assert got == {"nn-batched": 200.0, "pimc-16": 2.0}
    out = capsys.readouterr().out
    assert "(round 3 of 3)" in out
    line = next(s for s in out.splitlines() if s.startswith("nn-batched / pimc-16"))
    assert line.split()[3:] == ["100.00", "100.0", "yes", "50.00–150.00"]


def test_one_round_keeps_the_plain_table(monkeypatch, capsys) -> None:
    monkeypatch.setitem(benchmark.RUNNERS, "nn-single", _readings([900.0]))
    monkeypatch.setitem(benchmark.RUNNERS, "pimc-16", _readings([10.0]))
    assert benchmark.main(["--rows", "nn-single", "pimc-16", "--seconds", "0"]) == {"nn-single": 900.0,
                                                                                     "pimc-16": 10.0}  # fmt: skip
    out = capsys.readouterr().out
    assert "round" not in out and "median" not in out
    line = next(s for s in out.splitlines() if s.startswith("nn-single / pimc-16"))
    assert line.split()[3:] == ["90.00", "100.0", "no"]


def test_a_row_not_installed_has_no_median_and_no_ratio(monkeypatch, capsys) -> None:
    def missing(seconds: float) -> float:
        raise benchmark.NotInstalled("no such package")

    monkeypatch.setitem(benchmark.RUNNERS, "nn-batched", missing)
    monkeypatch.setitem(benchmark.RUNNERS, "pimc-16", _readings([1.0, 1.0]))
    got = benchmark.main(["--rows", "nn-batched", "pimc-16", "--repeat", "2", "--seconds", "0"])
    assert got == {"nn-batched": None, "pimc-16": 1.0}
    out = capsys.readouterr().out
    assert "not installed" in out and "nn-batched / pimc-16" not in out


def test_repeat_must_be_positive() -> None:
    with pytest.raises(SystemExit):
        benchmark.main(["--rows", "pimc-16", "--repeat", "0"])


def test_the_batched_rows_are_also_compared_with_each_other(monkeypatch, capsys) -> None:
    monkeypatch.setitem(benchmark.RUNNERS, "nn-batched", _readings([8000.0]))
    monkeypatch.setitem(benchmark.RUNNERS, "pimc-16", _readings([50.0]))
    monkeypatch.setitem(benchmark.RUNNERS, "pimc-16-batched", _readings([100.0]))
    benchmark.main(["--rows", "nn-batched", "pimc-16", "pimc-16-batched", "--seconds", "0"])
    lines = capsys.readouterr().out.splitlines()
    row = {s.split()[2]: s.split()[3:] for s in lines if s.startswith("nn-batched / ")}
    assert row == {"pimc-16": ["160.00", "100.0", "yes"], "pimc-16-batched": ["80.00", "100.0", "no"]}
