"""docs/library.md: each Python example run as written, beside the command the page
names under it — its document equal to what the command prints with --json, or (for a
measurement) with the same keys."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "library.md"
EXAMPLE = re.compile(r"```python\n(?P<code>.*?)```\n\n(?P<how>is exactly|has the keys of) "
                     r"what `innoflush (?P<cmd>[^`]+)` prints", re.S)


def _examples() -> dict[str, tuple[str, str, list[str]]]:
    out = {}
    for m in EXAMPLE.finditer(PAGE.read_text(encoding="utf-8")):
        args = shlex.split(m["cmd"])
        out[args[0] if args[0] != "lab" else "lab " + args[1]] = (m["code"], m["how"], args)
    return out


EXAMPLES = _examples()


def _shape(value):
    """The keys of a document, all the way down: a list of objects by its first element,
    a list of strings or numbers as a list (a run's notes may be empty in one run and not
    in the next: what they say is the host's, their key is the document's)."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value and isinstance(value[0], dict) else []
    return None


def _both(name: str, monkeypatch) -> tuple[dict, dict, str]:
    code, how, args = EXAMPLES[name]
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, f"docs/library.md ({name})", "exec"), namespace)   # noqa: S102
    assert printed.getvalue().strip(), "the example prints nothing"
    r = CliRunner().invoke(main, args)
    assert r.exit_code in (0, 3), r.output
    return namespace["doc"], json.loads(r.stdout), how


def test_the_page_has_an_example_per_command():
    assert set(EXAMPLES) == {"simulate", "tps", "advise", "measure", "lab run"}


@pytest.mark.parametrize("name", ["simulate", "tps", "advise"])
def test_a_library_call_returns_what_the_command_prints(name, monkeypatch):
    doc, printed, how = _both(name, monkeypatch)
    assert how == "is exactly"
    assert doc == printed


def test_measure_from_python_has_the_commands_keys(monkeypatch):
    doc, printed, how = _both("measure", monkeypatch)
    assert how == "has the keys of"
    assert _shape(doc) == _shape(printed)
    assert len(doc["tests"]) == 2


@pytest.mark.server
def test_lab_run_from_python_has_the_commands_keys(server_binaries, monkeypatch):
    doc, printed, how = _both("lab run", monkeypatch)
    assert how == "has the keys of"
    assert doc["schema"] == printed["schema"] == "innoflush.lab-run/1"
    assert _shape(doc) == _shape(printed)
