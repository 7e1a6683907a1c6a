"""The "Exit codes" section of each command's page (docs/commands/*.md) against what the
command does.

- Each documented bad input that needs no server (a phrase of the page's exit-code 2 text,
  quoted here as written there) is run as a concrete command line, in a process of its
  own as a user runs it, and must exit with the documented code — with one error line
  where the page promises one. A phrase that leaves the page fails the test: the example
  then follows the page's new words.
- Every code a page lists must be one the command can return: the codes every command
  has (0, innoflush/errors.py's, 128 + each stop signal of innoflush/signals.py) and the
  command's own (advise's report codes, the fleet's exit).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from innoflush import errors, signals
from innoflush.advisor import check
from innoflush.advisor.report import EXIT_NOTHING, EXIT_RECOMMENDATIONS, EXIT_UNEXPLAINED
from innoflush.fleet.table import fleet_exit

pytestmark = pytest.mark.processes

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "commands"
BUILTIN = ROOT / "innoflush" / "profiles" / "builtin" / "samsung-990-pro.json"
SP = ["--profile", "samsung-990-pro"]


def exit_section(page: str) -> str:
    """The page's "## Exit codes" section, its whitespace folded."""
    text = (DOCS / f"{page}.md").read_text()
    m = re.search(r"^## Exit codes\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert m, f"{page}.md has no '## Exit codes' section"
    return " ".join(m.group(1).split())


_MEANING = ("done", "success", "usage", "bad", "failure", "another", "other", "interrupted",
            "terminated", "hung", "nothing", "recommendations", "every", "at least")


def documented_codes(section: str) -> set[int]:
    """The codes a section lists: a table's first column, or prose ("0 done; 2 usage
    error (...); 130 interrupted")."""
    codes = {int(c) for c in re.findall(r"(?:^|\s)\|\s*(\d+)\s*\|", section)}
    words = "|".join(re.escape(w) for w in _MEANING)
    codes |= {int(c) for c in re.findall(rf"(?<![\w.+-])(\d{{1,3}}) (?:{words})\b",
                                         section)}
    return codes


_COMMON = ({0, errors.EXIT_FAILURE, errors.EXIT_USAGE, errors.EXIT_INTERRUPTED}
           | {signals.exit_code(s) for s in signals.STOP_SIGNALS})
_ADVISE = {EXIT_NOTHING, EXIT_RECOMMENDATIONS, EXIT_UNEXPLAINED}
_CHECK = {check.EXIT_HELD, check.EXIT_NOT_HELD, check.EXIT_NO_VERDICT}
# the fleet's exit over every mix of host results: ok with advise's codes, or failed
_FLEET = {fleet_exit([{"status": "ok", "exit": code}]) for code in _ADVISE} | {
    fleet_exit([{"status": "failed", "exit": errors.EXIT_FAILURE}])}

PAGES = {"measure": _COMMON, "profiles": _COMMON, "simulate": _COMMON, "tps": _COMMON,
         "advise": _COMMON | _ADVISE | _CHECK, "advise-check": _COMMON | _CHECK,
         "advise-inventory": _COMMON | _FLEET,
         "lab-run": _COMMON, "lab-calibrate": _COMMON, "lab-validate": _COMMON}


@pytest.mark.parametrize("page", sorted(PAGES))
def test_every_documented_code_is_one_the_command_returns(page):
    codes = documented_codes(exit_section(page))
    assert {0, 2} <= codes, (page, codes)      # the section was read at all
    assert codes <= PAGES[page], f"{page}.md lists {sorted(codes - PAGES[page])}, which " \
                                 "the command never returns"


# (page, the phrase of its exit-code text, the command line, the code, one error line?)
# Placeholders: {cwd} an empty working directory, {inputs} the files of _inputs(),
# {port} a port nothing listens on, {busy} a port something listens on.
EXAMPLES = [
    ("measure", "bad input: path", ["measure", "{cwd}/nope"], 2, True),
    ("measure", "option", ["measure", "{cwd}", "--jobs", "0"], 2, True),
    ("measure", "a `--prom` or `--html` file whose directory is missing",
     ["measure", "{cwd}", "--prom", "{cwd}/no/m.prom"], 2, True),
    ("measure", "not a regular file — a directory", ["measure", "{cwd}", "--html", "{cwd}"],
     2, True),
    ("measure", "a test plan that measures nothing (O_DIRECT only with unaligned sizes",
     ["measure", "{cwd}", "--sizes", "1k", "--direct", "on"], 2, True),
    ("profiles", "an unknown profile", ["profiles", "show", "nope"], 2, True),
    ("profiles", "an invalid file", ["profiles", "import", "{inputs}/zero.json"], 2, True),
    ("profiles", "an existing name or file without `--force`",
     ["profiles", "export", "samsung-990-pro", "-o", "{inputs}/good.json"], 2, True),
    ("profiles", "an `-o` file whose directory is missing",
     ["profiles", "export", "samsung-990-pro", "-o", "{cwd}/no/x.json"], 2, True),
    ("simulate", "an unknown profile or flavor", ["simulate", "--profile", "nope"], 2, True),
    ("simulate", "an invalid combination or value", ["simulate", *SP, "--trx-commit", "5"],
     2, True),
    ("simulate", "a `--profile` or `--workload` file that is invalid",
     ["simulate", "--profile", "{inputs}/zero.json"], 2, True),
    ("simulate", "a `--png` path that is not a directory",
     ["simulate", *SP, "--png", "{inputs}/good.json"], 2, True),
    ("simulate", "any number option given `nan` or `inf`",
     ["simulate", *SP, "--duration", "nan"], 2, True),
    ("simulate", "`--connections` outside 1-4096", ["simulate", *SP, "--connections", "5000"],
     2, True),
    ("simulate", "`--seed` outside 0-4294967295", ["simulate", *SP, "--seed", "-1"], 2, True),
    ("simulate", "`--tablespaces` above 100000", ["simulate", *SP, "--tablespaces", "100001"],
     2, True),
    ("tps", "an unknown profile or flavor", ["tps", *SP, "--flavor", "mysql-6"], 2, True),
    ("tps", "`nan` or `inf` for any number", ["tps", *SP, "--cpu-us", "inf"], 2, True),
    ("tps", "`--cpu-us` or `--client-us` above 6e+07 µs", ["tps", *SP, "--client-us", "1e9"],
     2, True),
    ("tps", "`--redo-bytes` above 1G", ["tps", *SP, "--redo-bytes", "2G"], 2, True),
    ("tps", "an `--html` file that is not a regular file", ["tps", *SP, "--html", "{cwd}"], 2,
     True),
    ("advise", "a password given on the command line", ["advise", "-pSECRET"], 2, True),
    ("advise", "`--connect-timeout` not above 0",
     ["advise", "--port", "{port}", "--connect-timeout", "0"], 2, True),
    ("advise", "`VERIFY_CA`/`VERIFY_IDENTITY` without `--ssl-ca`",
     ["advise", "--port", "{port}", "--ssl-mode", "VERIFY_CA"], 2, True),
    ("advise", "`--interval` outside 1-3600 s", ["advise", "--port", "{port}", "--interval",
                                                 "7200"], 2, True),
    ("advise", "`--samples` outside 1-1000", ["advise", "--port", "{port}", "--samples", "0"],
     2, True),
    ("advise", "`--seed` outside 0-4294967295", ["advise", "--port", "{port}", "--seed",
                                                 "-1"], 2, True),
    ("advise", "refused port", ["advise", "-H", "127.0.0.1", "-P", "{port}"], 2, True),
    ("advise", "an invalid host name", ["advise", "-h", ".db1", "-P", "{port}"], 2, True),
    ("advise", "a `--prom` or `--html` file whose directory is missing or not writable",
     ["advise", "--port", "{port}", "--prom", "{cwd}/no/a.prom"], 2, True),
    ("advise-inventory", "at least one host failed",
     ["advise", "--inventory", "{inputs}/refused.ini"], 2, False),
    ("advise-inventory", "a bad inventory",
     ["advise", "--inventory", "{inputs}/port-not-number.ini"], 2, True),
    ("advise-inventory", "a range or a file of more than 4096 hosts",
     ["advise", "--inventory", "{inputs}/big-range.ini"], 2, True),
    ("advise-inventory", "`--concurrency` below 1 or without `--inventory`",
     ["advise", "--concurrency", "4"], 2, True),
    ("advise-inventory", "an option that cannot go with `--inventory`",
     ["advise", "--inventory", "{inputs}/refused.ini", "-h", "db1"], 2, True),
    ("advise-inventory", "a missing `--defaults-file`",
     ["advise", "--inventory", "{inputs}/refused.ini", "--defaults-file", "{cwd}/none.cnf"],
     2, True),
    ("advise-check", "is not JSON (truncated)",
     ["advise", "--check", "{inputs}/refused.ini"], 2, True),
    ("advise-check", "an option `--check` does not take",
     ["advise", "--check", "{inputs}/refused.ini", "--profile", "mine"], 2, True),
    ("lab-run", "a bad option or value", ["lab", "run", *SP, "--connections", "0"], 2, True),
    ("lab-run", "a `--seed` outside 0-4294967295", ["lab", "run", *SP, "--seed", "-1"], 2,
     True),
    ("lab-run", "a `--server-option` that is not `NAME=VALUE` or that sets what the lab sets",
     ["lab", "run", *SP, "--server-option", "bind-address=0.0.0.0"], 2, True),
    ("lab-run", "a `--basedir` without a server in it",
     ["lab", "run", *SP, "--basedir", "{inputs}"], 2, True),
    ("lab-run", "an unknown profile or workload", ["lab", "run", "--profile", "nope"], 2,
     True),
    ("lab-run", "an unknown `--workload-cmd` placeholder",
     ["lab", "run", *SP, "--workload-cmd", "true {nope}"], 2, True),
    ("lab-run", "`--datadir-on` missing", ["lab", "run", *SP, "--datadir-on", "{cwd}/nope"],
     2, True),
    ("lab-run", "on a kernel pseudo-filesystem", ["lab", "run", *SP, "--datadir-on", "/proc"],
     2, True),
    ("lab-run", "`--port` in use", ["lab", "run", *SP, "--port", "{busy}"], 2, True),
    ("lab-calibrate", "a bad option", ["lab", "calibrate", "--connections", "x"], 2, True),
    ("lab-calibrate", "a `--server-option` that is not `NAME=VALUE`",
     ["lab", "calibrate", "--server-option", "garbage"], 2, True),
    ("lab-calibrate", "a `--basedir` without a server",
     ["lab", "calibrate", "--basedir", "{inputs}"], 2, True),
    ("lab-calibrate", "an unknown profile", ["lab", "calibrate", "--emulate", "nope"], 2,
     True),
    ("lab-calibrate", "`insert`/`oltp` as a name", ["lab", "calibrate", "--save", "insert"],
     2, True),
    ("lab-validate", "bad option", ["lab", "validate", "--replicates", "9"], 2, True),
    ("lab-validate", "a `--seed` outside 0-4294967295", ["lab", "validate", "--seed", "-1"],
     2, True),
    ("lab-validate", "unknown profile or workload",
     ["lab", "validate", "--devices", "local,nope"], 2, True),
    ("lab-validate", "an unknown `--workload-cmd` placeholder or `--changes` entry",
     ["lab", "validate", "--workload-cmd", "true", "--changes", "nope"], 2, True),
    ("lab-validate", "an option that does not apply with `--workload-cmd`",
     ["lab", "validate", "--workload-cmd", "true", "--trx-commit", "1"], 2, True),
    ("lab-validate", "a `--markdown` or `--html` file whose directory is missing",
     ["lab", "validate", "--markdown", "{cwd}/no/r.md"], 2, True),
]


def _ids(example) -> str:
    page, phrase = example[0], example[1]
    return f"{page}:{re.sub(r'[^a-z0-9]+', '-', phrase.lower()).strip('-')[:60]}"


def _inputs(port: int) -> dict[str, str]:
    good = json.loads(BUILTIN.read_text())
    good["name"] = "mine"
    zero = json.loads(BUILTIN.read_text())
    next(t for t in zero["tests"] if "sync" in t)["sync"]["p50_ns"] = 0
    return {"good.json": json.dumps(good), "zero.json": json.dumps(zero),
            "refused.ini": f"[db]\n127.0.0.1:{port}\n",
            "port-not-number.ini": "[db]\ndb1:x\n", "big-range.ini": "[db]\nh[0:999999]\n"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every example run once, several at a time: its id -> the finished process."""
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()

    def run(example) -> subprocess.CompletedProcess:
        root = tmp_path_factory.mktemp("exit")
        box = {k: root / k for k in ("cwd", "inputs", "home", "tmp")}
        for d in box.values():
            d.mkdir()
        port = _free_port()
        for name, text in _inputs(port).items():
            (box["inputs"] / name).write_text(text)
        values = {"cwd": str(box["cwd"]), "inputs": str(box["inputs"]), "port": str(port),
                  "busy": str(busy.getsockname()[1])}
        argv = [re.sub(r"\{(\w+)\}", lambda m: values.get(m[1], m[0]), a) for a in example[2]]
        env = {k: v for k, v in os.environ.items()
               if k not in ("INNOFLUSH_HOME", "XDG_DATA_HOME") and not k.startswith("MYSQL")}
        env.update(HOME=str(box["home"]), XDG_DATA_HOME=str(box["home"] / "share"),
                   TMPDIR=str(box["tmp"]), PYTHONPATH=str(ROOT), COLUMNS="100")
        return subprocess.run([sys.executable, "-m", "innoflush", *argv], cwd=box["cwd"],
                              env=env, capture_output=True, text=True, timeout=180,
                              stdin=subprocess.DEVNULL, check=False)

    try:
        with ThreadPoolExecutor(max_workers=max(2, 2 * (os.cpu_count() or 1))) as pool:
            yield dict(zip(map(_ids, EXAMPLES), pool.map(run, EXAMPLES), strict=True))
    finally:
        busy.close()


@pytest.mark.parametrize("page, phrase, argv, code, one_line", EXAMPLES,
                         ids=[_ids(e) for e in EXAMPLES])
def test_a_documented_bad_input_exits_as_documented(runs, page, phrase, argv, code, one_line):
    assert phrase in exit_section(page), f"{page}.md's exit codes no longer say {phrase!r}"
    r = runs[_ids((page, phrase))]
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == code, (argv, r.returncode, r.stderr)
    if one_line:
        lines = r.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("innoflush: error: "), r.stderr
        assert r.stdout == ""


def test_every_page_has_a_code_2_example():
    assert {e[0] for e in EXAMPLES if e[3] == 2} == set(PAGES)
