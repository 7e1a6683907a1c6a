"""advise --check on a live MariaDB under sysbench: the README's recipe 2 report (binlog
on, sync_binlog=1, trx_commit=2, the profile measured on this disk), then the server
checked against it — nothing applied; the recommendation applied with SET GLOBAL (a
verdict, held or not); the same change under four times the threads, and under a
read-write script instead of the insert one (not comparable, naming what moved); a flush
method changed with a restart (the candidate's prediction checked) — and the track
record those checks leave, coverage beside what the interval claimed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from innoflush.lab.server.local import LocalServer, ServerOptions
from tests.helpers.recipe2 import innoflush, measured_home, require_sysbench, sysbench

pytestmark = [pytest.mark.server, pytest.mark.slow]


class Load:
    """A sysbench run in its own process group, stopped on exit."""

    def __init__(self, port: int, script: str, threads: int):
        self.proc = subprocess.Popen(
            sysbench(port, script, f"--threads={threads}", "--time=300", "run"),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(5)   # connected, the buffer pool warm

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


def test_check_after_a_change_on_a_live_server(server_binaries, tmp_path):
    require_sysbench()
    env = measured_home(tmp_path)
    opts = ServerOptions(innodb_flush_log_at_trx_commit=2, log_bin=True, sync_binlog=1,
                         innodb_buffer_pool_size="256M")
    report = tmp_path / "report.json"
    with LocalServer(tmp_path / "server", opts, remove_on_stop=True) as srv:
        conn = srv.connect()
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE sbtest")
        subprocess.run(sysbench(srv.port, "oltp_insert", "prepare"), check=True,
                       capture_output=True, timeout=120)
        tcp = ["-h", "127.0.0.1", "-P", str(srv.port), "-u", "root"]

        def check() -> tuple[int, dict]:
            r = innoflush("advise", *tcp, "--interval", "6", "--check", str(report),
                           "--json", env=env)
            assert r.stdout.startswith("{"), (r.returncode, r.stderr)
            return r.returncode, json.loads(r.stdout)

        with Load(srv.port, "oltp_insert", 4):
            a = innoflush("advise", *tcp, "--interval", "8", "--profile", "mine", "--json",
                           env=env)
            report.write_text(a.stdout)
            before = json.loads(a.stdout) if a.stdout.startswith("{") else {}
            assert a.returncode == 3, (a.stderr, (before.get("fit") or {}).get("reasons"))
            nothing = check()
            with conn.cursor() as cur:
                cur.execute("SET GLOBAL innodb_flush_log_at_trx_commit = 1")
            time.sleep(2)
            applied = check()
        with Load(srv.port, "oltp_insert", 16):
            more_threads = check()
        with Load(srv.port, "oltp_read_write", 4):
            read_write = check()
        conn.close()
        # a flush method is changed with a restart: the report's settings but that one
        srv.restart(ServerOptions(innodb_flush_method="fsync",
                                  innodb_flush_log_at_trx_commit=2, log_bin=True,
                                  sync_binlog=1, innodb_buffer_pool_size="256M"))
        with Load(srv.port, "oltp_insert", 4):
            time.sleep(5)   # the buffer pool warm again after the restart
            restarted = check()

    code, doc = nothing
    assert code == 4 and doc["verdict"] == "nothing applied" and doc["applied"] == []

    code, doc = applied
    assert doc["applied"] == [{"setting": "innodb_flush_log_at_trx_commit", "before": "2",
                               "now": "1", "recommended": True, "derived": False}]
    assert doc["prediction"]["kind"] == "finding"
    assert doc["workload"]["comparable"] is True, doc["workload"]
    assert doc["verdict"] in ("held", "did not hold") and code in (0, 5)
    assert code == (0 if doc["verdict"] == "held" else 5)
    tps = next(f for f in doc["figures"] if f["figure"] == "tps")
    assert tps["held"] is not None and tps["predicted_ratio"] < 1   # durability's price
    assert tps["measured_ratio"] == pytest.approx(tps["after"] / tps["before"], rel=1e-3)

    for code, doc in (more_threads, read_write):
        assert code == 4 and doc["verdict"] == "not comparable", doc["workload"]
    assert "connections" in more_threads[1]["workload"]["moved"]
    assert {"statements_per_trx", "selects_per_trx"} & set(read_write[1]["workload"]["moved"])

    code, doc = restarted
    assert doc["applied"] == [{"setting": "innodb_flush_method", "before": "O_DIRECT",
                               "now": "FSYNC", "recommended": False, "derived": False}]
    assert doc["prediction"]["kind"] == "candidate"
    assert doc["prediction"]["changes"] == {"innodb_flush_method": "fsync"}
    assert doc["verdict"] in ("held", "did not hold", "not comparable"), doc["notes"]
    if doc["verdict"] != "not comparable":   # a restart may move the CPU a transaction
        assert code in (0, 5) and any(f["held"] is not None for f in doc["figures"])

    r = innoflush("advise", "--track-record", "--json", env=env)
    assert r.returncode == 0, r.stderr
    rows = {(x["change"], x["connections"]): x for x in json.loads(r.stdout)["rows"]}
    row = rows[("innodb_flush_log_at_trx_commit=1", "2-4")]
    assert (row["checks"], row["not_comparable"], row["judged"]) == (3, 2, 1)
    assert row["tps_held_pct"] in (0, 100)
    assert row["claimed_coverage_pct"] == tps["coverage_pct"]
    text = innoflush("advise", "--track-record", env=env).stdout
    assert "innodb_flush_log_at_trx_commit=1" in text
