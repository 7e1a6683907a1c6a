"""Every command's default text output fits the terminal (issue 47): run at COLUMNS=80 and
COLUMNS=120, no line is wider — tps, simulate and advise included, whose tables were 160
to 300 columns wide — while --wide keeps the full tables of earlier versions.

Allowed, and only this: a line that is one unbreakable token (a path, a mount's option
string) on a line of its own may be longer; the wrapping never cuts it.

The commands that need a server (advise on a live server, the lab) are checked through
their renderers, on reports they printed before (tests/fixtures/reports/, the lab's
validation reports under docs/validation/) and on the synthetic ones of
tests/helpers/lab_reports.py.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main
from innoflush.fleet.table import render_table
from innoflush.lab.reports import calibrate_report, change_report, validate_report
from innoflush.lab.reports import report as run_report
from innoflush.output.advise_text import render_text as advise_text
from tests.helpers.lab_reports import replicated_report, synthetic_report

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT / "tests" / "fixtures" / "captures"
REPORTS = ROOT / "tests" / "fixtures" / "reports"
CHECKS = ROOT / "tests" / "fixtures" / "checks" / "mariadb-10.11-trx-commit"
WIDTHS = (80, 120)


def too_wide(text: str, width: int) -> list[str]:
    """The lines longer than width, but for a single token on a line of its own."""
    return [ln for ln in text.splitlines() if len(ln) > width and " " in ln.strip()]


def widest(text: str) -> int:
    return max((len(ln) for ln in text.splitlines()), default=0)


_RUNS: dict[tuple, str] = {}


def run(width: int, *args: str) -> str:
    """The command's stdout at COLUMNS=width; each command line run once in the module
    (tps simulates for a second: the same text serves every test that reads it)."""
    key = (width, *args)
    if key not in _RUNS:
        r = CliRunner().invoke(main, list(args), env={"COLUMNS": str(width)})
        assert r.exit_code in (0, 3, 4, 5), (args, r.output)   # advise: 3, 4, 5 its verdicts
        _RUNS[key] = r.stdout
    return _RUNS[key]


SIMULATE = ("simulate", "--profile", "samsung-990-pro", "--flush-method",
            "O_DIRECT,O_DIRECT_NO_FSYNC", "--trx-commit", "1,2", "--connections", "1,16",
            "--duration", "0.5", "--jobs", "1")
COMMANDS = {
    # tps: nine columns and bracketed footnotes made 258 (300+ with a long note)
    "tps": ("tps", "--profile", "hdd-wd2502abys", "--target-tps", "200"),
    "tps --no-check": ("tps", "--profile", "samsung-pm9a3", "--no-check",
                       "--flavor", "mariadb-10.11"),
    "simulate": SIMULATE,
    "simulate --bars": (*SIMULATE, "--bars"),   # what a terminal gets
    "profiles list": ("profiles", "list"),
    "profiles show": ("profiles", "show", "optane-p4800x"),
    "profiles compare": ("profiles", "compare", "samsung-990-pro", "samsung-pm9a3",
                         "hdd-wd2502abys"),
    "advise --check": ("advise", "--from", str(CHECKS / "applied"), "--check",
                       str(CHECKS / "report.json")),
}
ADVISE = {f"advise --from {c.name}{' --profile' if p else ''}":
          ("advise", "--from", str(c / "tab"),
           *(("--profile", "samsung-990-pro", "--connections", "4") if p else ()))
          for c in sorted(CAPTURES.iterdir()) if c.is_dir() for p in (False, True)}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", [*COMMANDS, *ADVISE])
def test_a_commands_default_text_fits(name, width, monkeypatch, tmp_path):
    monkeypatch.setenv("INNOFLUSH_HOME", str(tmp_path / "home"))
    text = run(width, *{**COMMANDS, **ADVISE}[name])
    assert text.strip()
    assert too_wide(text, width) == []


@pytest.mark.parametrize("width", WIDTHS)
def test_measure_fits(width, tmp_path, monkeypatch):
    monkeypatch.setenv("INNOFLUSH_HOME", str(tmp_path / "home"))
    probe = tmp_path / "probe"
    probe.mkdir()
    text = run(width, "measure", str(probe), "--sizes", "16k", "--file-size", "1M",
               "--ops", "none,fsync,fdatasync,dsync", "--direct", "both", "--count", "30",
               "--bars")
    assert "p50 µs" in text and "PLP verdict" in text
    assert too_wide(text, width) == []


@pytest.mark.parametrize("width", WIDTHS)
def test_tps_and_simulate_keep_what_answers_the_question(width):
    tps = run(width, "tps", "--profile", "hdd-wd2502abys", "--target-tps", "200")
    rows = [ln.split() for ln in tps.splitlines() if ln.lstrip().startswith(("1 ", "2 "))]
    assert len(rows) == 6                       # a row per durability setting, on one line
    assert rows[0][:4] == ["1", "fsync", "off", "yes"]
    assert "TPS per" in tps and "conns for" in tps
    sim = run(width, *SIMULATE)
    assert "flush_method" in sim and "p50 ms" in sim and "fsyncs/s" in sim
    assert "commits/redo sync" not in sim       # --wide's


def test_wide_prints_the_full_tables():
    text = run(80, "tps", "--profile", "hdd-wd2502abys", "--no-check", "--wide")
    header = next(ln for ln in text.splitlines() if ln.startswith("durability setting"))
    assert "bound" in header and "TPS / connection" in header and widest(text) > 200
    text = run(80, *SIMULATE, "--wide")
    assert "commits/redo sync" in text and "stall s" in text


def test_json_and_csv_ignore_the_width():
    for args in (("profiles", "list", "--json"), (*SIMULATE, "--csv")):
        assert run(80, *args) == run(120, *args) == run(200, *args, "--wide")


# ---- the renderers of the commands that need a server ------------------------------------

def _saved(name: str) -> dict:
    path = ROOT / "docs" / "validation" / name
    with (gzip.open(path, "rt") if path.suffix == ".gz" else path.open()) as f:
        return json.load(f)


def _fixture(name: str) -> dict:
    return json.loads((REPORTS / name).read_text())


RENDERED = {
    "advise (live, with predictions)": lambda w: advise_text(_fixture("advise.json"), w),
    "lab run": lambda w: run_report.render_text(_fixture("lab-run.json"), w),
    "lab calibrate": lambda w: calibrate_report.render_text(_fixture("lab-calibrate.json"), w),
    "lab validate": lambda w: validate_report.render_text(_fixture("lab-validate.json"), w),
    "lab validate --workload-cmd (synthetic)":
        lambda w: change_report.render_text(synthetic_report(), w),
    "lab validate --workload-cmd (replicated)":
        lambda w: change_report.render_text(replicated_report(), w),
    "lab validate --workload-cmd (saved, 721 wide)":
        lambda w: change_report.render_text(_saved("sysbench-wal-check.json.gz"), w),
    "lab validate --workload-cmd (saved, repeatability)":
        lambda w: change_report.render_text(_saved("mysql97-multi.json.gz"), w),
}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", RENDERED)
def test_a_servers_report_fits(name, width):
    text = RENDERED[name](width)
    assert too_wide(text, width) == []
    assert widest(RENDERED[name](None)) > width     # it needed fitting


def test_the_fleet_table_fits():
    ok = {"host": "db01.example.com", "status": "ok", "exit": 3, "error": None, "report": {
        "findings": [{"id": "flush-method.o-direct-no-fsync-on-plp", "severity": "performance",
                      "current": "O_DIRECT", "recommended": "O_DIRECT_NO_FSYNC",
                      "predicted": {"change": {"tps_pct": 12.0,
                                               "commit_latency_p99_pct": -40.0}}}],
        "server": {"product": "mariadb", "version": "10.11.6-MariaDB"},
        "settings": {"innodb_flush_method": "O_DIRECT", "innodb_flush_log_at_trx_commit": 1,
                     "log_bin": True, "sync_binlog": 0}}}
    failed = {"host": "db02.example.com", "status": "failed", "exit": 2, "report": None,
              "error": {"kind": "refused", "message": "cannot connect to db02.example.com:3306: "
                        "connection refused (is the server running, and on this port?)"}}
    for width in WIDTHS:
        assert too_wide(render_table([ok, failed], width), width) == []
    assert widest(render_table([ok, failed])) > 120
