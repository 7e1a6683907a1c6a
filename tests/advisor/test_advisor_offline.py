"""`innoflush advise --from`: the CLI on the real captures of tests/fixtures/captures/
(the live-versus-capture comparison is tests/advisor/test_advisor_offline_server.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from innoflush.advisor.advise import OFFLINE_CANNOT_JUDGE
from innoflush.commands.root import main

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"
BINLOG = CAPTURES / "mariadb-10.11-binlog"     # fsync, trx_commit=2, sync_binlog=0
ODIRECT = CAPTURES / "mariadb-10.11-odirect"   # O_DIRECT, trx_commit=1, binlog off
FORMATS = ("tab", "mysqladmin", "pt-stalk")


def advise(*args: str):
    return CliRunner().invoke(main, ["advise", *args])


def report(*args: str) -> tuple[int, dict]:
    r = advise(*args, "--json")
    assert r.exit_code in (0, 3, 4), r.stderr
    return r.exit_code, json.loads(r.stdout)


def one_line_error(r) -> str:
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("innoflush: error: ")
    assert "Traceback" not in r.stdout + r.stderr
    return lines[0]


def ids(rep: dict) -> set[tuple[str, str]]:
    return {(f["id"], f["severity"]) for f in rep["findings"]}


def test_every_format_of_one_server_gives_the_same_advice():
    got = {fmt: report("--from", str(BINLOG / fmt)) for fmt in FORMATS}
    for fmt, (code, rep) in got.items():
        assert code == 3, fmt
        assert rep["source"]["kind"] == "capture"
        assert rep["source"]["path"] == str(BINLOG / fmt)
        assert rep["server"]["connection"] is None
        assert rep["settings"]["innodb_flush_log_at_trx_commit"] == 2
        assert rep["settings"]["log_bin"] is True and rep["settings"]["sync_binlog"] == 0
        assert rep["observed"]["commits_source"] == "Binlog_commits"
        assert rep["observed"]["commits"] > 0
        assert rep["sampling"]["samples"] == rep["source"]["snapshots"] - 1
        assert [c for c in rep["cannot_judge"] if c.startswith("offline capture:")] == \
            list(OFFLINE_CANNOT_JUDGE)
        assert rep["workload"]["connections"]["source"] == "unknown"
    first = ids(got["tab"][1])
    assert {"trx-commit.strict-requires-1", "sync-binlog.strict-requires-1"} <= \
        {i for i, _ in first}
    assert all(ids(rep) == first for _, rep in got.values())
    assert got["mysqladmin"][1]["source"]["mysqladmin_relative"] is True
    assert got["pt-stalk"][1]["source"]["mysqladmin_relative"] is False


def test_relaxed_goal_and_ignore_rule_work_offline():
    _, strict = report("--from", str(BINLOG / "tab"))
    _, ignored = report("--from", str(BINLOG / "tab"), "--ignore-rule",
                        "sync-binlog.strict-requires-1")
    assert ids(strict) - ids(ignored) == {("sync-binlog.strict-requires-1", "durability")}
    assert ignored["ignored_rules"] == ["sync-binlog.strict-requires-1"]
    _, relaxed = report("--from", str(BINLOG / "tab"), "--durability", "relaxed")
    assert not any(i.startswith("trx-commit.") for i, _ in ids(relaxed))


def test_text_report_names_the_capture():
    r = advise("--from", str(ODIRECT / "mysqladmin"), "--wide")   # the head on one line
    assert r.exit_code == 0, r.stderr
    head = r.stdout.splitlines()[0]
    assert "MariaDB 10.11" in head and f"from the capture {ODIRECT / 'mysqladmin'}" in head
    assert "(4 status snapshots)" in head
    assert "no SHOW REPLICA STATUS in the capture" in r.stdout
    assert "offline capture:" in r.stdout and "observed over 6.0 s" in r.stdout


def test_profile_and_connections_reach_the_fit(profile_files):
    code, rep = report("--from", str(ODIRECT / "tab"), "--profile", profile_files["plp"],
                       "--connections", "4", "--cpu-cores", "2")
    assert rep["device"]["name"] == "test-plp"
    assert rep["workload"]["connections"] == {**rep["workload"]["connections"],
                                              "value": 4.0, "source": "option"}
    assert rep["fit"] is not None and rep["fit"]["source"] == "measured"
    # explained or not, the report says which (exit 4: the model cannot explain it)
    assert (code == 4) == (not rep["fit"]["explained"])
    if not rep["fit"]["explained"]:
        assert any(w.startswith("cannot predict this workload") for w in rep["warnings"])


def test_without_connections_the_fit_says_what_it_lacks(profile_files):
    """A capture has no processlist samples and no /proc: the fit names each input it
    lacks with what supplies it, instead of saying the model does not explain."""
    code, rep = report("--from", str(ODIRECT / "tab"), "--profile", profile_files["plp"])
    assert code == 4 and rep["fit"]["explained"] is False
    assert rep["fit"]["inputs_missing"] is True and rep["fit"]["checks"] == []
    conns, costs = rep["fit"]["reasons"]
    assert conns.startswith("the connections:") and conns.endswith("give --connections N")
    assert costs.startswith("the time outside the server and the server's CPU per "
                            "transaction:") and "--workload NAME|FILE" in costs
    assert all(f["predicted"] is None for f in rep["findings"])
    # --connections supplies the first; the costs are still named, alone
    code, rep = report("--from", str(ODIRECT / "tab"), "--profile", profile_files["plp"],
                       "--connections", "4")
    assert code == 4 and rep["fit"]["inputs_missing"] is True
    assert [r.split(":")[0] for r in rep["fit"]["reasons"]] == [
        "the time outside the server and the server's CPU per transaction"]
    text = advise("--from", str(ODIRECT / "tab"), "--profile", profile_files["plp"])
    assert "cannot be fitted: the evidence lacks inputs it needs" in text.stdout
    assert "does NOT explain" not in text.stdout


@pytest.mark.parametrize("args, text", [
    (["--host", "db1"], "drop --host"),
    (["--port", "3307", "--user", "me"], "drop --port, --user"),
    (["--samples", "3"], "drop --samples"),
    (["--measure"], "give the device as --profile"),
])
def test_live_only_options_are_refused(args, text):
    r = advise("--from", str(ODIRECT / "tab"), *args)
    assert r.exit_code == 2
    assert text in one_line_error(r)


def test_unreadable_capture_is_one_line(tmp_path):
    r = advise("--from", str(tmp_path / "nope"))
    assert r.exit_code == 2 and "no such file or directory" in one_line_error(r)
    (tmp_path / "status.txt").write_text((ODIRECT / "tab" / "status-1.tsv").read_text())
    r = advise("--from", str(tmp_path / "status.txt"))
    assert r.exit_code == 2 and "no SHOW GLOBAL VARIABLES" in one_line_error(r)


def test_fit_reason_when_nothing_was_observed():
    """A capture's short window can hold no page writes while the model has some: the
    reason says so instead of failing on the missing error (it raised TypeError)."""
    from types import SimpleNamespace

    from innoflush.advisor.fit import Check, _reason

    c = Check("page_writes_per_s", 0.0, 85.1, 50.0, False)
    text = _reason(c, SimpleNamespace(name="crucial-t500"))
    assert "85.1 page writes/s" in text and "0.0 observed (none observed" in text


def test_replica_status_in_the_capture(tmp_path):
    """pt-stalk's -slave-status: the statement as a title, then its \\G rows (none on a
    primary). A captured empty answer is a primary; rows make a replica."""
    import shutil

    cap = tmp_path / "cap"
    shutil.copytree(BINLOG / "tab", cap)
    (cap / "slave-status").write_text("\nSHOW SLAVE STATUS\\G\n\n")
    _, rep = report("--from", str(cap))
    assert rep["server"]["role"] == "primary"
    assert rep["server"]["role_detail"] == "no replication source configured"
    assert "SHOW REPLICA STATUS\\G" in rep["source"]["formats"]
    (cap / "slave-status").write_text(
        "\nSHOW SLAVE STATUS\\G\n\n*************************** 1. row ***************"
        "************\n                Slave_IO_State: Waiting for master to send event\n"
        "                   Master_Host: db-primary-1\n"
        "              Slave_IO_Running: Yes\n             Slave_SQL_Running: Yes\n")
    _, rep = report("--from", str(cap))
    assert rep["server"]["role"] == "replica"
    assert rep["server"]["role_detail"] == "replica of db-primary-1 (IO Yes, SQL Yes)"
    (cap / "slave-status").unlink()
    _, rep = report("--from", str(cap))
    assert "no SHOW REPLICA STATUS in the capture" in rep["server"]["role_detail"]


@pytest.mark.parametrize("name", ["mariadb-10.11-odirect", "mariadb-10.11-binlog",
                                  "mysql-9.7", "mariadb-11.8"])
def test_capture_and_live_path_agree_on_the_same_data(name, load_fixture, monkeypatch,
                                                      profile_files):
    """The JSON fixture is the tab capture converted (scripts/capture_to_fixture.py):
    served live by the fake server over its interval, and read from the raw files, the
    two paths must see the same server and the same figures, and advise the same."""
    from innoflush.advisor.advise import advise as advise_live
    from innoflush.advisor.advise import advise_capture
    from innoflush.advisor.request import AdviseRequest
    from innoflush.live import sampling
    from innoflush.live.capture import read_capture
    from innoflush.live.connect import ReadOnlySession
    from innoflush.profiles import load_profile
    from tests.helpers.scripted_server import FakeServer

    fx = load_fixture(name)
    now = [1000.0]
    monkeypatch.setattr(sampling, "CLOCK", lambda: now[0])
    monkeypatch.setattr(sampling, "SLEEP", lambda s: now.__setitem__(0, now[0] + s))
    profile = load_profile(profile_files["plp"])
    live = advise_live(ReadOnlySession(FakeServer(fx)),
                       AdviseRequest(interval_s=fx["interval_s"], profile=profile,
                                     predict=False),
                       conn_public={"target": "t"}, is_local=False)
    off = advise_capture(read_capture(str(CAPTURES / name / "tab")),
                         AdviseRequest(profile=profile, predict=False))
    assert live["source"]["kind"] == "live" and off["source"]["kind"] == "capture"
    assert off["settings"] == live["settings"]
    for key in ("seconds", "commits", "commits_per_s", "commits_source",
                "data_fsyncs_per_s", "redo_syncs_per_s", "redo_syncs_source",
                "log_writes_per_commit", "redo_bytes_per_commit", "pages_written_per_s",
                "binlog_commits_per_group", "deltas"):
        assert off["observed"][key] == live["observed"][key], key
    assert off["observed"]["commits"] > 0
    assert ids(off) == ids(live)
    assert off["exit_code"] == live["exit_code"]
