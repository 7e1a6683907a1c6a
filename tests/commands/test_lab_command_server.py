"""``--workload-cmd`` against real servers: a fake load generator (a Python script that
INSERTs with PyMySQL, its placeholders filled in by the lab), its prepare command, the
SIGTERM at the window's end; a command that fails, one that commits nothing, Ctrl-C; a
calibration; and a real short ``lab validate --workload-cmd`` with sysbench. Nothing
is left running or behind."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main
from innoflush.lab.experiments import run_setup
from innoflush.lab.load import external
from innoflush.lab.server import for_run as servers
from innoflush.measure import quick_tests
from tests.helpers.docs_keys import compare_keys, example_json
from tests.helpers.processes import assert_no_leak, processes_mentioning

pytestmark = pytest.mark.server

GENERATOR = r'''
import os, signal, sys, time
n = 0
def stop(sig, frame):
    print(f"stopped by signal {sig} after {n} inserts", flush=True)
    sys.exit(0)
# first: on a loaded host the window's end can come before the connection is made
signal.signal(signal.SIGTERM, stop)
import pymysql
host, port, user, pwfile, threads, seconds, db, mode = sys.argv[1:9]
with open(pwfile) as f:
    pw = f.read()
print(f"args threads={threads} seconds={seconds} db={db} "
      f"pwmode={oct(os.stat(pwfile).st_mode & 0o777)}", flush=True)
conn = pymysql.connect(host=host, port=int(port), user=user, password=pw, database=db,
                       autocommit=True)
cur = conn.cursor()
if mode == "prepare":
    cur.execute("CREATE TABLE fake (id INT AUTO_INCREMENT PRIMARY KEY, v INT) ENGINE=InnoDB")
    print("prepared", flush=True)
    sys.exit(0)
cur.execute("SELECT COUNT(*) FROM fake")          # the prepare command made it
end = time.monotonic() + float(seconds)
while time.monotonic() < end:
    cur.execute("INSERT INTO fake (v) VALUES (1)")
    n += 1
print("ran out of time", flush=True)
'''
ARGS = "{host} {port} {user} {password_file} {threads} {seconds} {database}"


@pytest.fixture
def generator(tmp_path) -> str:
    """The fake generator's command, without its mode (run|prepare)."""
    script = tmp_path / "fake gen.py"          # a space: the lab quotes only placeholders
    script.write_text(GENERATOR, encoding="utf-8")
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {ARGS}"


@pytest.fixture
def quick_measure(monkeypatch):
    monkeypatch.setattr(run_setup, "MEASURE_KW", {"tests": quick_tests()[:6], "duration_s": 0.15,
                                                  "quick": True})


def _data(tmp_path: Path) -> Path:
    d = tmp_path / "data"     # (mariadb-install-db cannot take a path with spaces)
    d.mkdir()
    return d


def test_a_fake_generator_is_measured_by_the_server_s_counters(server_binaries, tmp_path,
                                                               generator):
    data = _data(tmp_path)
    r = CliRunner().invoke(main, [
        "lab", "run", "--profile", "samsung-990-pro", "--datadir-on", str(data),
        "--connections", "2", "--duration", "2", "--warmup", "0.5", "--buffer-pool", "64M",
        "--workload-prepare", generator + " prepare",
        "--workload-cmd", "fake=" + generator + " run", "--json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    assert rep["workload"]["kind"] == "command" and rep["workload"]["name"] == "fake"
    run, = rep["runs"]
    wc = run["workload_command"]
    assert wc["name"] == "fake" and wc["command"].endswith(" run") and "{port}" in wc["command"]
    assert wc["threads"] == 2 and wc["seconds"] >= 12 and wc["database"] == "innoflush_lab"
    # stopped at the window's end: the generator saw SIGTERM (and the lab waited for it)
    assert wc["stopped_by"] == "SIGTERM"
    assert any(line.startswith("stopped by signal 15 after") for line in wc["output_tail"])
    assert wc["statements_per_trx"] == 1
    # the placeholders as the generator received them, the password file private
    assert any(line.startswith("args threads=2 seconds=") and "db=innoflush_lab" in line
               and "pwmode=0o600" in line for line in wc["output_tail"])
    m = run["measured"]
    c = m["client"]
    assert c["commits"] > 0 and m["tps"] > 0
    assert c["commits"] == m["observed"]["commits"]     # the server's count
    assert "autocommit write statements" in m["observed"]["commits_source"]
    assert m["status_deltas"]["Com_insert"] >= c["commits"]
    assert c["seconds"] == pytest.approx(2.0, abs=0.6)
    # no client-side latency for an external command, every key still there
    assert c["commit_latency_ms"] == {"mean": None, "p50": None, "p95": None, "p99": None}
    assert m["commit_latency_p50_ms"] is None and run["errors_pct"]["commit_latency_p50_ms"] \
        is None
    assert any("client-side latency is unknown" in n for n in c["notes"])
    assert c["client_cpu"]["processes"] >= 1 and c["client_cpu"]["cpu_s"] > 0
    # the lab's own derivation of the workload is reported; advise's fit is read
    assert run["derived_workload"]["statements_per_trx"] == 1
    assert run["workload"]["source"] == "advise" and "fit" in run["advise"]
    assert set(run["predicted"]) >= {"tps", "data_fsyncs_per_s", "commit_latency_p50_ms"}
    # every key of a command run is documented (docs/commands/lab-run.md)
    compare_keys("lab-run", rep, example_json("lab-run-json"))
    assert not processes_mentioning("fake gen.py")
    assert_no_leak(data)
    text = CliRunner().invoke(main, [
        "lab", "run", "--profile", "samsung-990-pro", "--datadir-on", str(data),
        "--duration", "1", "--buffer-pool", "64M", "--no-advise",
        "--workload-prepare", generator + " prepare", "--workload-cmd", generator + " run",
        "--wide"])   # the lines unwrapped
    assert text.exit_code == 0, text.output
    assert "workload python" in text.output and "not run (--no-advise)" in text.output
    assert "predicted: none" in text.output
    assert_no_leak(data)


def test_a_workload_advise_cannot_explain_has_no_prediction(server_binaries, tmp_path,
                                                           generator, monkeypatch):
    """advise's reworked report (fit.explained, candidates), put on the real one's."""
    real = servers.advise

    def reworked(*args, **kw):
        report = real(*args, **kw)
        report["fit"] = {**(report.get("fit") or {}), "explained": False,
                         "reasons": ["the commit wait is not explained"], "checks": []}
        report["candidates"] = [{
            "id": "trx-commit.2", "setting": "innodb_flush_log_at_trx_commit", "current": "1",
            "candidate": "2", "changes": {"innodb_flush_log_at_trx_commit": 2},
            "advised": False, "finding": None, "unsafe": "loses up to 1 s of commits",
            "predicted": {"current": {"tps": 100.0}, "candidate": {"tps": 250.0},
                          "change": {"tps_pct": 150.0}, "range": {"tps_pct": [100, 200]},
                          "interval": {"tps_pct": [50, 400], "coverage_pct": 81}}}]
        return report
    monkeypatch.setattr(servers, "advise", reworked)
    data = _data(tmp_path)
    args = ["lab", "run", "--profile", "samsung-990-pro", "--datadir-on", str(data),
            "--duration", "2", "--buffer-pool", "64M",
            "--workload-prepare", generator + " prepare", "--workload-cmd", generator + " run"]
    r = CliRunner().invoke(main, [*args, "--json"])
    assert r.exit_code == 0, r.output
    run, = json.loads(r.output)["runs"]
    p = run["predicted"]
    assert "cannot explain this workload: the commit wait is not explained" in p["missing"]
    assert all(p[k] is None for k in ("tps", "data_fsyncs_per_s", "commit_latency_p50_ms"))
    assert all(v is None for v in run["errors_pct"].values())
    assert run["advise"]["fit"]["explained"] is False
    cand, = run["advise"]["candidates"]
    assert cand["ratio"] == 2.5 and cand["ratio_range"] == [2.0, 3.0]
    assert cand["ratio_interval"] == [1.5, 5.0]
    assert cand["unsafe"] == "loses up to 1 s of commits"
    text = CliRunner().invoke(main, [*args, "--wide"])   # the lines unwrapped
    assert text.exit_code == 0, text.output
    assert "the model CANNOT explain it" in text.output and "predicted: none" in text.output
    assert "advise candidate innodb_flush_log_at_trx_commit: 1 -> 2: TPS +150% " \
        "(likely ×1.50..×5.00); unsafe" in text.output
    assert_no_leak(data)


def test_a_failing_command_fails_the_run_with_its_log(server_binaries, tmp_path):
    data = _data(tmp_path)
    r = CliRunner().invoke(main, [
        "lab", "run", "--profile", "samsung-990-pro", "--datadir-on", str(data),
        "--duration", "2", "--buffer-pool", "64M",
        "--workload-cmd", "echo marker-7a1; echo 'ERROR 2002: cannot connect' >&2; exit 7"])
    assert r.exit_code == 1, r.output
    assert "exited with code 7 before its first commit" in r.output
    assert "echo marker-7a1" in r.output                      # the command, named
    assert "    marker-7a1\n    ERROR 2002: cannot connect" in r.output
    assert "Traceback" not in r.output
    kept = r.output.split("its log (")[1].split(")")[0]
    try:
        assert "marker-7a1" in Path(kept).read_text()
    finally:
        os.unlink(kept)
    assert_no_leak(data)


def test_a_command_that_commits_nothing(server_binaries, tmp_path, monkeypatch):
    monkeypatch.setattr(external, "READY_TIMEOUT_S", 2.0)
    data = _data(tmp_path)
    r = CliRunner().invoke(main, [
        "lab", "run", "--profile", "samsung-990-pro", "--datadir-on", str(data),
        "--duration", "2", "--buffer-pool", "64M",
        "--workload-cmd", "idle=echo waiting; sleep 876543"])
    assert r.exit_code == 1, r.output
    assert "the workload 'idle'" in r.output and "committed nothing in 2 s" in r.output
    assert "    waiting" in r.output
    os.unlink(r.output.split("its log (")[1].split(")")[0])
    assert not processes_mentioning("876543")
    assert_no_leak(data)


def test_ctrl_c_stops_the_command_too(server_binaries, tmp_path):
    exe = Path(sys.executable).parent / "innoflush"
    data = _data(tmp_path)
    cmd = [str(exe), "lab", "run", "--profile", "samsung-990-pro", "--datadir-on", str(data),
           "--duration", "60", "--workload-cmd", "sleep 987651"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)

    def command_processes():                  # the lab's own command line names it too
        return [p for p, _ in processes_mentioning("sleep 987651") if p != proc.pid]
    try:
        # the lab's own start (install, server, emulation) has taken over 60 s on a busy
        # CI host; the wait is bounded by the lab itself, which gives up 60 s after it
        # starts the command
        began = time.monotonic()
        deadline = began + 300
        while time.monotonic() < deadline and proc.poll() is None and not command_processes():
            time.sleep(0.1)
        waited = time.monotonic() - began
        assert command_processes(), (f"no command process after {waited:.0f} s",
                                     proc.communicate())
        os.killpg(proc.pid, signal.SIGINT)                 # as a terminal's Ctrl-C
        out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert not processes_mentioning("987651")
    assert_no_leak(data)


def test_calibrate_a_command(server_binaries, tmp_path, generator, quick_measure):
    data = _data(tmp_path)
    r = CliRunner().invoke(main, [
        "lab", "calibrate", "--datadir-on", str(data), "--connections", "1",
        "--duration", "1.5", "--warmup", "0.3", "--buffer-pool", "64M",
        "--workload-prepare", generator + " prepare",
        "--workload-cmd", "fake=" + generator + " run", "--save", "fake-cal", "--json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    assert rep["workload_spec"]["kind"] == "command" and rep["workload_spec"]["name"] == "fake"
    run = rep["runs"][0]
    assert run["commits"] > 0 and run["read_back"]["innodb_flush_log_at_trx_commit"] == 0
    w = rep["profile"]["workload"]
    assert w["statements_per_trx"] == 1 and w["cpu_us_per_trx"] > 0
    assert rep["profile"]["provenance"]["spec"]["kind"] == "command"
    assert any("not known" in line for line in rep["host_costs"]["derivation"])
    # a profile calibrated on a command cannot be driven by its name
    bad = CliRunner().invoke(main, ["lab", "run", "--workload", "fake-cal",
                                    "--datadir-on", str(data)])
    assert bad.exit_code == 2 and "calibrated on a command's load" in bad.output
    assert_no_leak(data)


def _sysbench() -> str:
    path = shutil.which("sysbench")
    if path is None:
        msg = "NO SYSBENCH: apt-get install sysbench (make system-deps) — its test not run"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg + " (CI=true: it is required)", pytrace=False)
        pytest.skip(msg)
    return path


@pytest.mark.slow
def test_validate_a_change_on_sysbench(server_binaries, tmp_path, quick_measure):
    sb = (f"{_sysbench()} oltp_insert --db-driver=mysql --mysql-user={{user}} "
          '--mysql-password="$(cat {password_file})" --mysql-db={database} --tables=1 '
          "--table-size=1000")
    data = _data(tmp_path)
    md = tmp_path / "changes.md"
    r = CliRunner().invoke(main, [
        "lab", "validate", "--devices", "local", "--connections", "2",
        "--changes", "trx-commit", "--duration", "3", "--warmup", "1", "--buffer-pool", "64M",
        "--datadir-on", str(data),
        # a small log, so that the after run gets to its async point within the settling
        "--server-option", "innodb_log_file_size=8M", "--settle-after", "30",
        "--workload-prepare", sb + " --mysql-socket={socket} prepare",
        "--workload-cmd", sb + " --mysql-host={host} --mysql-port={port} --threads={threads} "
        "--time={seconds} --report-interval=0 run", "--json", "--markdown", str(md)])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    assert rep["schema"] == "innoflush.lab-validate-changes/1"
    assert [w["name"] for w in rep["matrix"]["workloads"]] == ["sysbench oltp_insert"]
    dev, = rep["devices"]
    cell, = dev["cells"]
    assert cell["change"] == "trx-commit" and cell["connections"] == 2
    b, a = cell["before"], cell["after"]
    assert b["settings"]["innodb_flush_log_at_trx_commit"] == 1
    assert a["settings"]["innodb_flush_log_at_trx_commit"] == 2
    assert b["settings"]["innodb_flush_method"] == a["settings"]["innodb_flush_method"] \
        == "O_DIRECT"
    assert b["tps"] > 0 and a["tps"] > 0 and b["commits"] > 0
    assert cell["measured_ratio"] == pytest.approx(a["tps"] / b["tps"], rel=1e-3)
    assert a["data_fsyncs_per_s"] < b["data_fsyncs_per_s"]      # no redo sync per commit
    assert cell["data_fsyncs_after"]["measured"] == a["data_fsyncs_per_s"]
    # the after run settled: it ran on until the checkpoint age reached the async point of
    # the 8 MiB log, and its window began there; the before run is taken as it comes
    assert rep["matrix"]["settle_after_s"] == 30
    st = a["settle"]
    assert st["reached"] is True, st
    assert 0 < st["async_point_bytes"] < 8 * 1024 * 1024 and st["seconds"] < 30
    # at work: the age at the point, or falling (a checkpoint after a flush)
    assert st["how"] in ("async_point", "age_fell")
    if st["how"] == "async_point":
        assert st["age_bytes"] >= st["async_point_bytes"]
    assert b["settle"] is None
    assert cell["data_fsyncs_after"]["basis"] in ("settled", "window")
    assert cell["advise"]["ran"] is True
    # advise sampled both sides alike (its observer load), predicting from the before one
    assert b["observer"]["predicted"] is True and a["observer"]["predicted"] is False
    assert b["observer"]["processlist_samples"] > 0 and a["observer"]["processlist_samples"] > 0
    # whatever advise could say, the cell says it (a prediction, or why there is none)
    assert cell["predicted_ratio"] is not None or cell["advise"]["candidate"]["missing"]
    assert cell["simulate_after"]["measured_tps"] == a["tps"]
    # with a prediction, advise --check's own verdict on the two advise windows is there
    if cell["predicted_ratio"] is not None and cell["advise"]["explained"]:
        assert cell["check"]["applied"][0]["setting"] == "innodb_flush_log_at_trx_commit"
        assert cell["check"]["verdict"] in ("held", "did not hold", "not comparable"), \
            cell["check"]
    # advise found sysbench at the other end of the server's TCP connections and read
    # the redo log's open flags
    w = cell["advise_report"]["workload"]
    assert "sysbench" in w["client_cpu_us_per_trx"]["detail"], w["client_cpu_us_per_trx"]
    assert w["client_cpu_us_per_trx"]["value"] > 0
    assert w["server_process"]["redo_o_direct"] in (True, False)
    s = dev["summary"]
    assert s["measured_cells"] == 1 and s["failed_cells"] == 0
    assert rep["summary"]["by_change"]["trx-commit"]["measured_cells"] == 1
    # one cell, one run a side: no two runs of identical settings to say the host's noise
    assert rep["summary"]["repeatability"]["pairs"] == 0
    assert rep["summary"]["direction_beyond_noise"] is None
    assert "## local" in md.read_text() and "is not measured" in md.read_text()
    assert_no_leak(data)
