"""The load generator against a real server: processes, concurrency, bounds, stop."""

from __future__ import annotations

import os
import time

import pytest

from innoflush.lab.load.clients import LoadRunner, run_workload
from innoflush.lab.load.workload import WorkloadError, WorkloadSpec, prepare
from innoflush.lab.server.local import ServerOptions, free_port

pytestmark = pytest.mark.server

OPTS = ServerOptions(innodb_flush_method="O_DIRECT", innodb_flush_log_at_trx_commit=2,
                     innodb_buffer_pool_size="64M")


def _params(srv) -> dict:
    return {"host": srv.HOST, "port": srv.port, "user": "root", "password": ""}


def _fresh(srv, spec: WorkloadSpec) -> None:
    conn = srv.connect()
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS `{spec.database}`")
    prepare(conn, spec)
    conn.close()


@pytest.fixture(scope="module")
def lab_server(start_server, tmp_path_factory):
    with start_server(tmp_path_factory.mktemp("lab-workload"), OPTS) as srv:
        yield srv


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_processes_run_concurrently_and_return_latencies(lab_server):
    spec = WorkloadSpec(kind="insert", connections=3, duration_s=1.5, preload_rows=100)
    _fresh(lab_server, spec)
    wr = run_workload(_params(lab_server), spec)
    assert len(wr.clients) == 3
    pids = {c.pid for c in wr.clients}
    assert len(pids) == 3 and os.getpid() not in pids          # three processes, not us
    for c in wr.clients:
        assert c.commits > 0
        assert c.trx_start_ns.size == c.commit_start_ns.size == c.commit_end_ns.size
        assert (c.commit_end_ns >= c.commit_start_ns).all()
        assert (c.commit_start_ns >= c.trx_start_ns).all()
        assert c.cpu_ns > 0
    # their measured windows and their commits overlap in time (one monotonic clock)
    assert max(c.start_ns for c in wr.clients) < min(c.end_ns for c in wr.clients)
    first_ends = [int(c.commit_end_ns[0]) for c in wr.clients]
    last_ends = [int(c.commit_end_ns[-1]) for c in wr.clients]
    assert max(first_ends) < min(last_ends)
    d = wr.to_dict()
    assert d["commits"] == wr.commits and d["tps"] > 0
    assert 1.3 < d["seconds"] < 3.0
    for key in ("mean", "p50", "p95", "p99"):
        assert d["commit_latency_ms"][key] > 0
        assert d["trx_latency_ms"][key] >= d["commit_latency_ms"][key] * 0.99 or key == "mean"
    assert d["errors"] == 0 and d["client_cpu"]["cpu_us_per_trx"] > 0
    # the server saw the rows: 1..10 per commit
    conn = lab_server.connect()
    with conn.cursor() as cur:
        cur.execute(f"SELECT COUNT(*) FROM `{spec.database}`.ib")
        rows = cur.fetchone()[0]
    conn.close()
    assert wr.commits + 100 <= rows <= wr.commits * 10 + 100
    assert not any(_alive(p) for p in pids)


def test_count_bound_and_oltp(lab_server):
    spec = WorkloadSpec(kind="oltp", connections=2, duration_s=30, preload_rows=500,
                        max_trx_per_connection=40)
    _fresh(lab_server, spec)
    t = time.monotonic()
    wr = run_workload(_params(lab_server), spec)
    assert time.monotonic() - t < 20                         # stopped by the count, not 30 s
    assert [c.commits for c in wr.clients] == [40, 40]
    assert wr.errors == 0 and wr.retries == 0                # disjoint ids: no lock waits
    conn = lab_server.connect()
    with conn.cursor() as cur:
        cur.execute(f"SELECT COUNT(*) FROM `{spec.database}`.sbtest")
        assert cur.fetchone()[0] == 500                      # DELETE + INSERT keep the size
    conn.close()


def test_warmup_is_not_measured(lab_server):
    spec = WorkloadSpec(kind="insert", connections=1, duration_s=1.0, warmup_s=1.0,
                        preload_rows=0)
    _fresh(lab_server, spec)
    marks = []
    wr = run_workload(_params(lab_server), spec, at_start=lambda: marks.append(
        time.perf_counter_ns()))
    c = wr.clients[0]
    assert c.warmup_commits > 0 and c.commits > 0
    assert int(c.trx_start_ns[0]) >= c.start_ns
    assert abs(c.start_ns - marks[0]) < 0.5e9                # measuring began at the mark
    assert 0.8 < wr.window_s < 1.6


def test_stop_early_leaves_no_process(lab_server):
    spec = WorkloadSpec(kind="insert", connections=2, duration_s=60, preload_rows=0)
    _fresh(lab_server, spec)
    with LoadRunner(_params(lab_server), spec) as runner:
        runner.wait_ready()
        pids = list(runner.pids.values())
        runner.go()
        time.sleep(0.5)
        t = time.monotonic()
        runner.stop()
        wr = runner.collect()
        assert time.monotonic() - t < 10
    assert "stopped before the end of the duration" in wr.notes
    assert wr.commits > 0
    assert not any(_alive(p) for p in pids)


def test_client_cannot_connect():
    spec = WorkloadSpec(connections=2, duration_s=1, ready_timeout_s=20)
    params = {"host": "127.0.0.1", "port": free_port(), "user": "root", "password": ""}
    with pytest.raises(WorkloadError, match="cannot connect"):
        run_workload(params, spec)
