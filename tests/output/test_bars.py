"""The terminal glance: bars and sparklines, when they are drawn and when never; the tail
quantiles too few samples cannot back."""

from __future__ import annotations

import io
import itertools
import json

import pytest
from click.testing import CliRunner

from innoflush.bars import FULL, MARK, SPARKS, bar, log_bar, sparkline, want_bars
from innoflush.commands.root import main
from innoflush.measure.result import tail_note, unbacked_quantiles

BLOCK_CHARS = set(SPARKS) | set("▏▎▍▌▋▊▉") | {MARK}


def _has_blocks(text: str) -> bool:
    return bool(BLOCK_CHARS & set(text))


# ---- bar -------------------------------------------------------------------------------
def test_bar_scales_to_the_top():
    assert bar(100, 100, width=10) == FULL * 10
    assert bar(50, 100, width=10) == FULL * 5
    assert bar(200, 100, width=10) == FULL * 10  # clipped at the column's max


def test_bar_ends_on_an_eighth():
    # 1/16 of 10 cells is 0.625 cell: five eighths
    assert bar(1, 16, width=10) == "▋"
    assert bar(3, 16, width=2) == "▍"  # 3/16 * 2 cells = 3 eighths


@pytest.mark.parametrize("value,top", [(None, 10), (0, 10), (-1, 10), (5, 0), (5, None),
                                       (float("nan"), 10), (float("inf"), 10)])
def test_bar_of_nothing_is_empty(value, top):
    assert bar(value, top) == ""


def test_bars_grow_with_the_value():
    lengths = [len(bar(v, 100, width=20).rstrip()) for v in (10, 30, 60, 100)]
    assert lengths == sorted(lengths) and lengths[0] < lengths[-1]


# ---- log bar with a mark ---------------------------------------------------------------
def test_log_bar_decades_are_equal_steps():
    # 1 µs floor, 1 ms top, 30 cells: 10 cells per decade
    assert log_bar(10_000, 1_000_000, 1000, width=30) == FULL * 10
    assert log_bar(100_000, 1_000_000, 1000, width=30) == FULL * 20
    assert log_bar(1_000_000, 1_000_000, 1000, width=30) == FULL * 30


def test_log_bar_mark_sits_at_the_p99():
    text = log_bar(10_000, 1_000_000, 1000, mark=100_000, width=30)
    assert text.index(MARK) == 20 and text.startswith(FULL * 10)
    # a p99 in the bar's last cell still shows, just past the bar
    text = log_bar(10_000, 1_000_000, 1000, mark=10_500, width=30)
    assert text == FULL * 10 + MARK


def test_log_bar_below_the_floor_or_without_scale():
    assert log_bar(500, 1_000_000, 1000, width=30) == ""
    assert log_bar(500, 1_000_000, 1000, mark=10_000, width=30) == " " * 10 + MARK
    assert log_bar(10_000, 1000, 1000) == ""  # top not above the floor
    assert log_bar(None, 1_000_000, 1000) == ""


# ---- sparkline -------------------------------------------------------------------------
def test_sparkline_shape():
    assert sparkline([1, 2, 4, 8]) == "▂▃▅█"
    assert sparkline([8, 4, 2, 1]) == "█▅▃▂"
    assert sparkline([5, 5, 5]) == "███"  # flat at the top: no invented spread
    assert len(sparkline(list(range(40)))) == 40


def test_sparkline_missing_and_zero_values():
    assert sparkline([None, 4, 0]) == " █▁"
    assert sparkline([0, 0]) == "▁▁"
    assert sparkline([]) == ""


# ---- when bars are drawn ---------------------------------------------------------------
class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_want_bars(monkeypatch):
    monkeypatch.delenv("TERM", raising=False)
    assert want_bars(None, stream=_Tty()) is True
    assert want_bars(None, stream=io.StringIO()) is False  # piped: none
    assert want_bars(True, stream=io.StringIO()) is True  # --bars asks for them
    assert want_bars(False, stream=_Tty()) is False  # --no-bars
    assert want_bars(True, machine_output=True, stream=_Tty()) is False  # --json / --csv
    monkeypatch.setenv("TERM", "dumb")
    assert want_bars(None, stream=_Tty()) is False


SIM = ["simulate", "--profile", "samsung-990-pro", "--connections", "1,4", "--trx-commit",
       "1,2", "--duration", "0.5"]


def test_simulate_piped_has_no_bars():
    res = CliRunner().invoke(main, SIM)
    assert res.exit_code == 0, res.output
    assert "TPS" in res.output and not _has_blocks(res.output)
    assert "TPS over connections" not in res.output


def test_simulate_bars_on_request():
    res = CliRunner().invoke(main, [*SIM, "--bars"])
    assert res.exit_code == 0, res.output
    rows = [ln for ln in res.output.splitlines() if ln.startswith("O_DIRECT")]
    assert len(rows) == 4 and all(_has_blocks(ln) for ln in rows)
    assert sum(FULL * 20 in ln for ln in rows) == 1  # the column's max fills the bar
    lines = [ln for ln in res.output.splitlines() if ln.startswith("TPS over connections")]
    assert len(lines) == 2  # one per trx_commit setting, over 1 and 4 connections
    assert all(set(ln.split(": ", 1)[1][:2]) <= set(SPARKS) for ln in lines)


@pytest.mark.parametrize("fmt", ["--json", "--csv"])
def test_simulate_machine_output_never_has_bars(fmt):
    res = CliRunner().invoke(main, [*SIM, fmt, "--bars"])
    assert res.exit_code == 0, res.output
    assert not _has_blocks(res.output)
    if fmt == "--json":
        json.loads(res.output)


MEASURE = ["--sizes", "16k", "--ops", "none,fsync", "--direct", "off", "--count", "200"]


def test_measure_piped_has_no_bars(tmp_path):
    res = CliRunner().invoke(main, ["measure", str(tmp_path), *MEASURE])
    assert res.exit_code == 0, res.output
    assert "p50 µs" in res.output and not _has_blocks(res.output)


def test_measure_bars_and_unbacked_tail(tmp_path):
    res = CliRunner().invoke(main, ["measure", str(tmp_path), *MEASURE, "--bars"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("op "))
    assert "p50 bar" in lines[head]
    # the rows: after the headers (two lines of them) and the rule, none of the facts above
    rows = lines[head + 2:] if lines[head + 1].startswith("-") else lines[head + 3:]
    table = list(itertools.takewhile(lambda ln: ln.startswith(("none ", "fsync ", "      ")),
                                     rows))
    assert len(table) == 3  # none: write; fsync: write, fsync
    # the bar sits on the write of `none` and on the fsync of `fsync`, not on its write
    assert [_has_blocks(ln) or FULL in ln for ln in table] == [True, False, True]
    # 200 samples back neither p99 nor p99.9: dashes, no p99 mark, and the footnote
    assert not any(MARK in ln for ln in table)
    assert "—*" in res.output and "too few samples" in res.output


def test_measure_json_tail_note(tmp_path):
    res = CliRunner().invoke(main, ["measure", str(tmp_path), *MEASURE, "--json", "--bars"])
    assert res.exit_code == 0, res.output
    tests = json.loads(res.output)["tests"]
    for t in tests:
        assert t["tail_note"].startswith(f"n={t['count']:,} samples: not enough for p99")


def test_unbacked_quantiles_thresholds():
    assert unbacked_quantiles(999) == ["p99", "p99.9"]
    assert unbacked_quantiles(1000) == ["p99.9"]
    assert unbacked_quantiles(9999) == ["p99.9"]
    assert unbacked_quantiles(10_000) == []
    assert tail_note(10_000) is None
    note = tail_note(5_000)
    assert note.startswith("n=5,000 samples") and "p99.9 (needs 10,000)" in note
    assert "p99 (" not in note


def test_measure_p99_mark_when_backed(tmp_path):
    args = ["measure", str(tmp_path), "--sizes", "16k", "--ops", "none", "--direct", "off",
            "--count", "1000", "--bars", "--wide"]   # --wide: the p99.9 column
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    (row,) = [ln for ln in res.output.splitlines() if ln.startswith("none ")]
    assert row.rstrip().endswith(MARK)  # 1,000 samples back p99: its mark ends the bar
    assert row.count("—*") == 1  # p99.9 still is not backed


def test_saved_profile_says_its_tail_is_not_backed(tmp_path):
    from innoflush.measure import TestSpec, measure

    result = measure(str(tmp_path), tests=[TestSpec("fsync", 16384, False, 1)],
                     duration_s=None, count=300)
    (test,) = result.to_profile("probe").tests
    assert test.sync.p99_9_ns is not None  # the figure stays, for the profile's shape
    assert test.note == result.tests[0].tail_note
    assert test.note.startswith("n=300 samples: not enough for p99 ")
