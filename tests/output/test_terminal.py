"""innoflush/terminal.py: the width a command's text fits, and the wrapping and tables
that keep it within."""

from __future__ import annotations

import io

import pytest

from innoflush import terminal
from innoflush.terminal import (
    DEFAULT_WIDTH,
    MIN_WIDTH,
    bullets,
    fit_lines,
    footnotes,
    kv_lines,
    table,
    vertical,
    widest,
    wrap,
)


class _Tty(io.StringIO):
    def isatty(self):
        return True

    def fileno(self):
        return 1


def test_width_is_columns_then_the_terminal_then_100(monkeypatch):
    monkeypatch.setenv("COLUMNS", "132")
    assert terminal.width(io.StringIO()) == 132
    monkeypatch.setenv("COLUMNS", "10")            # too narrow to wrap anything
    assert terminal.width(io.StringIO()) == MIN_WIDTH
    monkeypatch.delenv("COLUMNS")
    assert terminal.width(io.StringIO()) == DEFAULT_WIDTH == 100   # piped: no terminal
    monkeypatch.setattr(terminal.os, "get_terminal_size",
                        lambda fd: terminal.os.terminal_size((90, 40)))
    assert terminal.width(_Tty()) == 90
    monkeypatch.setenv("COLUMNS", "not-a-number")  # ignored, as the shell's junk
    assert terminal.width(_Tty()) == 90


def test_wrap_never_cuts_a_word_and_keeps_phrases_whole():
    text = "see /a/very/long/path/that/is/longer/than/the/line/itself/for/sure and more"
    lines = wrap(text, 20, "note: ")
    assert lines[0] == "note: see"
    assert lines[1].strip() == "/a/very/long/path/that/is/longer/than/the/line/itself/for/sure"
    assert all(len(ln) <= 20 for ln in lines if " " in ln.strip())
    assert wrap(text, None, "x ") == ["x " + text]          # --wide: one line
    phrase = "innoflush measure /tmp/x:"
    got = wrap(f"{phrase} engine builtin, 1 s per test", 20, whole=[phrase])
    assert got[0] == phrase and "\0" not in "".join(got)


def test_bullets_footnotes_and_key_values_hang_under_their_text():
    assert bullets(["one two three four"], 12) == ["  - one two", "    three", "    four"]
    assert footnotes(["alpha beta gamma"], 12, start=9) == ["[9] alpha", "    beta", "    gamma"]
    assert kv_lines([("a", "b c d e f"), ("long key", "x")], 16) == [
        "a         b c d", "          e f", "long key  x"]


def test_fit_lines_wraps_only_the_long_lines_under_their_indent():
    lines = fit_lines(["short", "  - a b c d e f g h", "t1\nt2"], 12)
    assert lines == ["short", "  - a b c d", "    e f g h", "t1", "t2"]
    assert fit_lines(["x " * 40], None) == ["x " * 40]


ROWS = [["O_DIRECT", "1", "1,234", "the page cleaner's writes share the device"],
        ["O_DIRECT_NO_FSYNC", "2", "5,678", "short"]]
HEADERS = ["flush_method", "trx", "TPS", "why"]


def test_a_table_that_fits_is_left_alone():
    text = table(ROWS, HEADERS, 120)
    assert widest(text) <= 120 and "the page cleaner's writes share the device" in text
    assert text.splitlines()[0].startswith("flush_method")


def test_a_prose_column_gives_its_long_sentences_to_footnotes():
    text = table(ROWS, HEADERS, 60, prose=3)
    assert widest(text) <= 60
    lines = text.splitlines()
    assert lines[2].rstrip().endswith("[1]") and lines[3].rstrip().endswith("short")
    assert lines[-1] == "[1] the page cleaner's writes share the device"


def test_no_room_for_the_prose_column_marks_the_cell_before_it():
    text = table(ROWS, HEADERS, 40, prose=3)
    assert widest(text) <= 40 and "why" not in text.splitlines()[0]
    assert "1,234 [1]" in text and "5,678 [2]" in text and text.endswith("[2] why: short")


def test_too_wide_a_table_becomes_a_block_per_row():
    text = table(ROWS, HEADERS, 30)
    assert widest(text) <= 30
    assert text.splitlines()[:4] == ["O_DIRECT", "  trx: 1", "  TPS: 1,234",
                                     "  why: the page cleaner's"]
    assert "\n\nO_DIRECT_NO_FSYNC\n" in text


def test_vertical_continues_a_block_for_a_row_without_a_title():
    text = vertical([["fsync 16k", "write", "60"], ["", "fsync", "55"]],
                    ["test", "call", "p50\nµs"], 80)
    assert text.splitlines() == ["fsync 16k", "  call: write", "  p50 µs: 60",
                                 "  call: fsync", "  p50 µs: 55"]


@pytest.mark.parametrize("width", [None, 200])
def test_a_wide_table_keeps_tabulates_padding_only_without_a_width(width):
    text = table([["1"]], ["a long header"], width)
    assert text.splitlines()[1] == ("-" * 15 if width is None else "-" * 13)
