"""`advise --check DIR --inventory FILE` against a real MariaDB: each host matched to its
saved report in DIR, read again and checked; a host without a report, or whose report is
of another server, is a failed row with its reason; worst first; the fleet's exit code.

The saved report is the server's own live report (advise --json --no-predict) given the
prediction of a real one (tests/fixtures/checks/: a trx_commit change priced on this VM):
what is tested here is the fleet's matching and table — the check of a real prediction
on a live server is tests/advisor/test_advise_check_server.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parents[2]
PRICED = json.loads((ROOT / "tests" / "fixtures" / "checks" / "mariadb-10.11-trx-commit"
                     / "report.json").read_text())
ENV = {"MYSQL_PWD": "", "HOME": "/nonexistent"}


def advise(*args: str, home: Path):
    return CliRunner().invoke(main, ["advise", "-u", "root", *args],
                              env={**ENV, "INNOFLUSH_HOME": str(home)},
                              catch_exceptions=False)


@pytest.fixture
def reports(mariadb_server, tmp_path):
    """DIR with the server's report under its host_port name, a prediction in it."""
    r = advise("-h", "127.0.0.1", "-P", str(mariadb_server.port), "--interval", "1",
               "--no-predict", "--json", home=tmp_path / "home")
    report = json.loads(r.stdout)
    report["findings"].append(next(f for f in PRICED["findings"] if f.get("predicted")))
    d = tmp_path / "reports"
    d.mkdir()
    (d / f"127.0.0.1_{mariadb_server.port}.json").write_text(json.dumps(report))
    return d, report


def test_a_fleet_is_checked_host_by_host(mariadb_server, reports, tmp_path):
    d, _ = reports
    inv = tmp_path / "hosts.ini"
    inv.write_text(f"127.0.0.1 mysql_port={mariadb_server.port}\ndb-without-report\n")
    home = tmp_path / "home"
    r = advise("--inventory", str(inv), "--check", str(d), "--interval", "1", "--json",
               home=home)
    assert r.exit_code == 2, r.output                   # a host failed
    rows = {x["host"]: x for x in map(json.loads, r.stdout.splitlines())}
    ok = rows["127.0.0.1"]
    assert ok["status"] == "ok" and ok["report"] is None
    assert ok["check"]["verdict"] == "nothing applied" and ok["exit"] == 4
    missing = rows["db-without-report"]
    assert missing["status"] == "failed" and missing["error"]["kind"] == "no-report"
    assert "name it db-without-report.json" in missing["error"]["message"]
    assert "hosts checked: 1 nothing applied; 1 failed" in r.stderr
    assert len((home / "track-record.jsonl").read_text().splitlines()) == 1
    text = advise("--inventory", str(inv), "--check", str(d), "--interval", "1",
                  home=home).stdout
    first = [ln.split()[0] for ln in text.splitlines() if ln.startswith(("db-", "127."))]
    assert first == ["db-without-report", "127.0.0.1"]     # worst first


def test_a_report_of_another_server_is_that_hosts_failure(mariadb_server, reports,
                                                          tmp_path):
    d, report = reports
    report["server"]["datadir"] = "/elsewhere/data/"
    (d / f"127.0.0.1_{mariadb_server.port}.json").write_text(json.dumps(report))
    inv = tmp_path / "hosts.txt"
    inv.write_text(f"127.0.0.1:{mariadb_server.port}\n")
    r = advise("--inventory", str(inv), "--check", str(d), "--interval", "1", "--json",
               home=tmp_path / "home")
    assert r.exit_code == 2
    row = json.loads(r.stdout)
    assert row["error"]["kind"] == "another-server"
    assert "a report of another server (datadir" in row["error"]["message"]


def test_a_check_directory_without_reports_is_one_line(tmp_path):
    inv = tmp_path / "hosts.txt"
    inv.write_text("db1\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.json").write_text("{}")          # not a report: left aside
    (tmp_path / "report.json").write_text("{}")
    for target, needle in ((empty, "no advise report with predictions"),
                           (tmp_path / "report.json", "a directory of saved advise reports")):
        r = CliRunner().invoke(main, ["advise", "--inventory", str(inv), "--check",
                                      str(target)],
                               env={**ENV, "INNOFLUSH_HOME": str(tmp_path / "home")})
        assert r.exit_code == 2
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0], r.stderr
