"""`innoflush lab run` end to end with the local backend (real MariaDB/MySQL), and its
failures: datadir not writable, port in use, server that does not start, Ctrl-C.
Servers never leak: every test checks no server process is left and the ports are free."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main
from innoflush.lab.experiments import run_setup
from innoflush.lab.experiments.predict import COMPARED
from innoflush.measure import quick_tests
from tests.helpers.processes import (
    SERVER_NAMES,
    assert_no_leak,
    processes_mentioning,
    servers_under,
)

pytestmark = pytest.mark.server


@pytest.fixture
def quick_measure(monkeypatch):
    """--measure in a fraction of the --quick preset's time."""
    monkeypatch.setattr(run_setup, "MEASURE_KW", {"tests": quick_tests()[:6], "duration_s": 0.15,
                                                  "quick": True})


def test_two_flush_methods_measured_beside_predicted(server_binaries, tmp_path,
                                                     quick_measure):
    r = CliRunner().invoke(main, [
        "lab", "run", "--backend", "local", "--measure", "--datadir-on", str(tmp_path),
        "--flush-method", "O_DIRECT,O_DIRECT_NO_FSYNC", "--trx-commit", "1",
        "--connections", "2", "--duration", "3", "--buffer-pool", "64M", "--json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    assert rep["schema"] == "innoflush.lab-run/1"
    assert rep["profile"]["source"] == "measure"
    assert rep["server"]["sim_flavor"]
    runs = rep["runs"]
    assert [x["requested"]["innodb_flush_method"] for x in runs] == \
        ["O_DIRECT", "O_DIRECT_NO_FSYNC"]
    for run in runs:
        back = run["read_back"]
        # the server really ran with each setting (read back from it)
        assert back["innodb_flush_method"] == run["requested"]["innodb_flush_method"]
        assert back["innodb_flush_log_at_trx_commit"] == 1
        assert back["innodb_buffer_pool_size"] == 64 * 1024 * 1024
        assert run["settings_match"] is True
        m, p, e = run["measured"], run["predicted"], run["errors_pct"]
        # the workload committed, the counters were captured
        assert m["client"]["commits"] > 0 and m["tps"] > 0
        assert m["client"]["errors"] == 0
        assert m["status_deltas"]["Innodb_data_fsyncs"] > 0
        assert m["status_deltas"]["Com_commit"] > 0
        assert m["server_cpu_s"] > 0 and m["loopback"]["wall_us"] > 0
        # measured and predicted, and the errors computed from them
        for k in COMPARED:
            assert k in m and k in p
        for k in ("tps", "commit_latency_p50_ms", "commit_latency_p99_ms",
                  "data_fsyncs_per_s"):
            assert m[k] > 0 and p[k] > 0
            assert e[k] == pytest.approx(100.0 * (p[k] / m[k] - 1), abs=0.11)
        assert run["workload"]["cpu_us_per_trx"] == pytest.approx(
            m["server_cpu_s"] * 1e6 / m["client"]["commits"], rel=1e-3)
        assert run["workload"]["connections"] == 2
        assert run["advise"]["error"] is None
        for f in run["advise"]["findings"]:
            assert {"setting", "current", "recommended", "severity"} <= set(f)
    assert_no_leak(tmp_path, runs)
    # the text report of the same data
    from innoflush.lab.reports.report import render_text

    text = render_text(rep)
    assert "measured / predicted" in text and "O_DIRECT_NO_FSYNC" in text


def test_datadir_not_writable(server_binaries, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a read-only tmpfs needs root")
    ro = tmp_path / "ro"
    ro.mkdir()
    got = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(ro)],
                         capture_output=True, text=True, check=False)
    if got.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {got.stderr.strip()}")
    try:
        r = CliRunner().invoke(main, ["lab", "run", "--profile", "samsung-990-pro",
                                      "--datadir-on", str(ro), "--duration", "1"])
    finally:
        subprocess.run(["umount", str(ro)], check=True)
    assert r.exit_code == 2, r.output
    assert "not writable" in r.output and "Read-only file system" in r.output
    assert "Traceback" not in r.output
    assert_no_leak(tmp_path)


def test_port_in_use(server_binaries, tmp_path):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        r = CliRunner().invoke(main, ["lab", "run", "--profile", "samsung-990-pro",
                                      "--datadir-on", str(tmp_path), "--port", str(port)])
    assert r.exit_code == 2, r.output
    assert f"--port {port}" in r.output and "in use" in r.output
    assert_no_leak(tmp_path)


def test_server_that_does_not_start(server_binaries, tmp_path):
    r = CliRunner().invoke(main, ["lab", "run", "--profile", "samsung-990-pro",
                                  "--datadir-on", str(tmp_path), "--duration", "1",
                                  "--server-option", "innodb_no_such_option=1"])
    assert r.exit_code == 1, r.output
    # one error line, the log's [ERROR] lines quoted, where the whole log is
    first, *quoted, where = r.stderr.strip().splitlines()
    assert first.startswith("innoflush: error: run 1/1 (O_DIRECT, trx_commit=1, 1 conn): "
                            "the server exited with code")
    assert 1 <= len(quoted) <= 5 and all(q.startswith("    [ERROR]") for q in quoted)
    assert "innodb_no_such_option" in quoted[0].replace("-", "_")   # mariadbd writes dashes
    assert "unknown" in quoted[0].lower()
    assert where.startswith("  full log: ")
    Path(where.removeprefix("  full log: ")).unlink()
    assert "Traceback" not in r.output and r.stdout == ""
    assert_no_leak(tmp_path)


def test_ctrl_c_stops_everything(server_binaries, tmp_path):
    exe = Path(sys.executable).parent / "innoflush"
    cmd = [str(exe), "lab", "run", "--profile", "samsung-990-pro", "--datadir-on",
           str(tmp_path), "--duration", "60", "--connections", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 300               # a busy CI host starts slowly
        clients = []
        while time.monotonic() < deadline and proc.poll() is None:
            # the workload runs once the client processes (children of the lab) exist
            clients = [p for p, c in processes_mentioning("innoflush") if p != proc.pid
                       and _parent(p) == proc.pid and not any(n in c for n in SERVER_NAMES)]
            if servers_under(tmp_path) and len(clients) >= 2:
                break
            time.sleep(0.1)
        assert proc.poll() is None, proc.communicate()
        assert servers_under(tmp_path), "the server never started"
        time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGINT)                 # as a terminal's Ctrl-C
        out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "stopped" in err
    assert "Traceback" not in err
    assert out == ""
    for pid in clients:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert_no_leak(tmp_path)


def _parent(pid: int) -> int | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(text[text.rfind(")") + 2:].split()[1])
