"""The lab's pure parts: workload derivation, comparison, host readings, report, options."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from innoflush.commands.root import main
from innoflush.errors import UsageError
from innoflush.lab.experiments import hostprobe
from innoflush.lab.experiments.hostprobe import files_delta, machine_usage, split_server_cpu
from innoflush.lab.experiments.options import LabError, LabOptions, plan_runs
from innoflush.lab.experiments.predict import (
    COMPARED,
    compare,
    derive_workload,
    error_pct,
    predict,
    predicted_figures,
)
from innoflush.lab.load.workload import WorkloadSpec, schema_sql
from innoflush.lab.load.workload_result import (
    ClientRun,
    WorkloadResult,
    client_cpu_summary,
    latency_ms,
)
from innoflush.lab.reports.report import SCHEMA, num, pct, render_text, to_json
from innoflush.lab.server.for_run import settings_mismatch
from innoflush.live.observed import observe
from innoflush.live.procfs import machine_cpu, proc_cpu_seconds
from innoflush.live.sampling import Snapshot, interval_between

# ---- workload derivation ---------------------------------------------------------------


def _observed(commits=1000, seconds=2.0, **extra):
    a = {"Uptime": 10, "Com_commit": 0, "Com_insert": 0, "Innodb_data_fsyncs": 0,
         "Innodb_data_writes": 0, "Innodb_os_log_written": 0, "Innodb_log_writes": 0,
         "Innodb_pages_written": 0, "Innodb_buffer_pool_pages_flushed": 0,
         "Innodb_buffer_pool_pages_dirty": 100, "Innodb_rows_inserted": 0}
    b = dict(a, Uptime=12, Com_commit=commits, Com_insert=commits,
             Innodb_data_fsyncs=commits + 10, Innodb_data_writes=200,
             Innodb_os_log_written=commits * 2000, Innodb_log_writes=commits,
             Innodb_pages_written=150, Innodb_buffer_pool_pages_flushed=150,
             Innodb_buffer_pool_pages_dirty=150, Innodb_rows_inserted=commits * 5)
    b.update(extra)
    iv = interval_between(0, Snapshot(0.0, a), Snapshot(seconds, b))
    assert iv.valid
    return observe(iv, "mariadb", False, 1)


def test_derive_workload_from_measured_quantities():
    obs = _observed()
    files = {"files_written": ["ibdata1", "db/t.ibd"], "tablespaces_written": 2,
             "growth_bytes": 4_000_000}
    wl, lines = derive_workload(connections=4, commits=1000, server_cpu_s=0.25,
                                client_cpu_s=0.1, statements_per_trx=2, round_trip_us=15.0,
                                observed=obs, files=files)
    assert wl.connections == 4
    assert wl.cpu_us_per_trx == pytest.approx(250.0)          # 0.25 s / 1000
    assert wl.client_us_per_trx == pytest.approx(100.0 + 2 * 15.0)
    assert wl.redo_bytes_per_trx == 2000                       # Innodb_os_log_written / commits
    # pages: the larger of written (150) and flushed + dirty growth (150 + 50), / commits
    assert wl.pages_dirtied_per_trx == pytest.approx(0.2)
    assert wl.tablespaces == 2
    assert wl.growth_bytes_per_trx == pytest.approx(4000.0)
    text = "\n".join(lines)
    assert "0.250 s / 1,000 commits" in text and "db/t.ibd" in text


def test_derive_workload_extension_step_from_the_polled_file_sizes():
    obs = _observed()
    files = {"files_written": ["db/t.ibd"], "tablespaces_written": 1,
             "growth_bytes": 6 * 1024 * 1024}
    ext = {"extensions": 4, "grown_bytes": 6 * 1024 * 1024, "polls": 100,
           "interval_s": 0.025, "mean_step_bytes": 1536 * 1024}
    wl, lines = derive_workload(connections=1, commits=1000, server_cpu_s=0.1,
                                client_cpu_s=0.1, statements_per_trx=2, round_trip_us=0.0,
                                observed=obs, files=files, extensions=ext)
    assert wl.extend_bytes == 1536 * 1024
    assert any("grew 4 times" in x for x in lines)
    wl, lines = derive_workload(connections=1, commits=1000, server_cpu_s=0.1,
                                client_cpu_s=0.1, statements_per_trx=2, round_trip_us=0.0,
                                observed=obs, files=files,
                                extensions={**ext, "extensions": 0, "mean_step_bytes": None})
    assert wl.extend_bytes == 4 * 1024 * 1024                # the simulator's default
    assert any("no file grew" in x for x in lines)


def test_derive_workload_doublewrite_share_from_the_runs_counters():
    obs = _observed()
    kw = dict(connections=1, commits=1000, server_cpu_s=0.1, client_cpu_s=0.1,
              statements_per_trx=2, round_trip_us=0.0, observed=obs, files=None)
    wl, lines = derive_workload(**kw, deltas={"Innodb_pages_written": 400,
                                              "Innodb_dblwr_pages_written": 60})
    assert wl.dblwr_page_share == pytest.approx(0.15)
    assert any("dblwr_page_share = 0.15" in x for x in lines)
    wl, lines = derive_workload(**kw, deltas={"Innodb_pages_written": 40,
                                              "Innodb_dblwr_pages_written": 40})
    assert wl.dblwr_page_share == 1.0 and any("fewer than 100" in x for x in lines)


def test_page_reentry_splits_first_entries_from_pages_that_come_back():
    from innoflush.live.pages import page_reentry

    # an insert run on MariaDB: 10,000 pages created, 11,600 flushed of which 1,700
    # doublewritten (rewrites: first writes of new pages bypass the doublewrite)
    fit = page_reentry(94_000, 10_000, 11_600, 2_100, 1_700)
    assert fit["pages_dirtied_per_trx"] == pytest.approx(10_000 / 94_000, abs=1e-4)
    # 13,700 entries - 10,000 created = 3,700 re-entries; 1,700 of them were rewritten
    assert fit["hot_page_share"] == pytest.approx(2_000 / 9_900, abs=1e-4)
    assert fit["dblwr_page_share"] == 0.0
    # an update workload on a preloaded table: nothing created, every flushed page comes
    # back; the dirty growth is what it changed for the first time
    fit = page_reentry(50_000, 5, 3_000, 200, 3_000)
    assert fit["pages_dirtied_per_trx"] == pytest.approx(200 / 50_000, abs=1e-4)
    assert fit["hot_page_share"] == 1.0 and fit["dblwr_page_share"] == 1.0
    # MySQL (every page doublewritten), nothing comes back
    fit = page_reentry(10_000, 1_000, 900, 100, 900)
    assert fit["hot_page_share"] == 0.0 and fit["dblwr_page_share"] == 1.0
    # too few pages flushed, or a count missing: no fit
    assert page_reentry(10_000, 1_000, 99, 900, 0) is None
    assert page_reentry(10_000, None, 900, 100, 0) is None
    assert page_reentry(10_000, 1_000, 900, None, 0) is None


def test_new_page_dblwr_share_leaves_the_new_pages_out_of_the_doublewrite():
    from innoflush.live.pages import new_page_dblwr_share

    # inserts: every page first dirtied is one the tablespace grows by
    assert new_page_dblwr_share(0.0192, 0.019)["dblwr_page_share"] == 0.0
    # a quarter of the first entries are new pages, the rest existing ones
    est = new_page_dblwr_share(0.005, 0.02)
    assert est["dblwr_page_share"] == pytest.approx(0.75)
    assert "straight to their files" in est["line"]
    # deletes balance the inserts (no growth): every first write is doublewritten
    assert new_page_dblwr_share(0.0, 0.006)["dblwr_page_share"] == 1.0
    # nothing dirtied: nothing to say
    assert new_page_dblwr_share(0.01, 0.0) is None


def test_derive_workload_takes_the_first_entries_and_hot_pages_from_the_counters():
    obs = _observed()
    kw = dict(connections=2, commits=94_000, server_cpu_s=0.1, client_cpu_s=0.1,
              statements_per_trx=2, round_trip_us=0.0, observed=obs, files=None)
    deltas = {"Innodb_pages_written": 11_600, "Innodb_buffer_pool_pages_flushed": 11_600,
              "Innodb_dblwr_pages_written": 1_700, "Innodb_pages_created": 10_000}
    wl, lines = derive_workload(**kw, deltas=deltas, dirty_growth=2_100)
    assert wl.pages_dirtied_per_trx == pytest.approx(0.1064, abs=1e-4)
    assert wl.hot_page_share == pytest.approx(0.202, abs=1e-3)
    assert wl.dblwr_page_share == 0.0
    assert any(x.startswith("hot_page_share = 0.202") for x in lines)
    # without the dirty growth the split cannot be made: the advisor's pages dirtied
    wl, lines = derive_workload(**kw, deltas=deltas)
    assert wl.hot_page_share == 0.0
    assert wl.pages_dirtied_per_trx == obs.pages_dirtied_per_commit
    assert any("hot_page_share = 0 (simulator default" in x for x in lines)


def test_work_cv_from_the_transactions_times_without_the_slowest_percent():
    from types import SimpleNamespace as NS

    import numpy as np

    from innoflush.lab.experiments.calibrate import work_cv

    rng = np.random.default_rng(3)
    took = rng.gamma(4.0, 50_000.0, size=5000)         # ns: mean 200 µs, cv 0.5
    took[:10] = 50e6                                   # ten 50-ms hiccups
    start = np.cumsum(np.full(5000, 1e6))
    client = NS(trx_start_ns=start, commit_end_ns=start + took, commits=5000)
    cv, line = work_cv(NS(clients=[client]))
    assert cv == pytest.approx(0.47, abs=0.04)          # the hiccups left out
    assert line.startswith("work_cv = ") and "slowest 1 %" in line
    few = NS(trx_start_ns=start[:50], commit_end_ns=start[:50] + took[:50], commits=50)
    assert work_cv(NS(clients=[few])) is None


def test_derive_workload_fallbacks_and_no_commits():
    obs = _observed()
    wl, lines = derive_workload(connections=1, commits=1000, server_cpu_s=None,
                                client_cpu_s=0.05, statements_per_trx=7, round_trip_us=0.0,
                                observed=obs, files=None)
    assert wl.cpu_us_per_trx == 150.0                          # the simulator's default
    assert wl.client_us_per_trx == pytest.approx(50.0)
    assert wl.tablespaces == 8
    assert any("could not be read" in x for x in lines)
    assert any("not readable" in x for x in lines)
    with pytest.raises(LabError, match="committed no transaction"):
        derive_workload(connections=1, commits=0, server_cpu_s=1.0, client_cpu_s=0.0,
                        statements_per_trx=2, round_trip_us=0.0, observed=obs, files=None)


# ---- comparison ----------------------------------------------------------------------------

def test_error_pct():
    assert error_pct(100.0, 110.0) == 10.0
    assert error_pct(200.0, 50.0) == -75.0
    assert error_pct(3.0, 3.0) == 0.0
    assert error_pct(0, 5.0) is None            # nothing measured: no relative error
    assert error_pct(None, 5.0) is None
    assert error_pct(5.0, None) is None


def test_compare_every_figure():
    measured = {"tps": 1000.0, "commit_latency_p50_ms": 0.5, "commit_latency_p99_ms": 2.0,
                "data_fsyncs_per_s": 1000.0, "data_writes_per_s": 0,
                "data_fsyncs_per_data_write": None}
    predicted = {"tps": 1500.0, "commit_latency_p50_ms": 0.25, "commit_latency_p99_ms": 2.2,
                 "data_fsyncs_per_s": 900.0, "data_writes_per_s": 12.0,
                 "data_fsyncs_per_data_write": 3.0}
    e = compare(measured, predicted)
    assert set(e) == set(COMPARED)
    assert e == {"tps": 50.0, "commit_latency_p50_ms": -50.0, "commit_latency_p99_ms": 10.0,
                 "data_fsyncs_per_s": -10.0, "data_writes_per_s": None,
                 "data_fsyncs_per_data_write": None}


class _FakeSim:
    duration_s = 2.0
    tps = 500.0
    commits = 1000
    commit_latency_ms = {"mean": 0.2, "p50": 0.1, "p95": 0.3, "p99": 0.5}
    trx_latency_ms = {"mean": 2.0, "p50": 1.9, "p95": 2.5, "p99": 3.0}
    status = {"Innodb_data_fsyncs": 1200, "Innodb_data_writes": 400}
    syncs_per_s = {"redo_syncs": 500.0}
    group_commit = {"commits_per_redo_sync": 1.0}
    cpu_util = 0.5
    device_flush_util = 0.25
    checkpoint_stall_s = 0.0
    seed = 1
    profile = "p"
    notes: list = []


def test_predicted_figures_add_the_commit_round_trip():
    p = predicted_figures(_FakeSim(), commit_round_trip_ms=0.08)
    assert p["tps"] == 500.0
    assert p["commit_latency_p50_ms"] == pytest.approx(0.18)
    assert p["commit_latency_p99_ms"] == pytest.approx(0.58)
    assert p["sim_commit_latency_ms"]["p50"] == 0.1
    assert p["data_fsyncs_per_s"] == 600.0 and p["data_writes_per_s"] == 200.0
    assert p["data_fsyncs_per_data_write"] == 3.0


@pytest.mark.slow
def test_predict_follows_the_runs_timeline():
    """The prediction simulates the run's warm-up and then its measured seconds (at least
    SIM_MIN_S): MariaDB's page cleaner wakes only once the checkpoint age has grown."""
    from innoflush.profiles import load_profile
    from innoflush.simulator import ServerConfig, Workload

    cfg = ServerConfig(flavor="mariadb-10.11", innodb_flush_log_at_trx_commit=2,
                       log_bin=False, innodb_redo_log_capacity=96 * 1024 * 1024,
                       innodb_max_dirty_pages_pct_lwm=0.0)
    wl = Workload(connections=2, cpu_us_per_trx=100, client_us_per_trx=100,
                  redo_bytes_per_trx=1024, pages_dirtied_per_trx=0.5)
    prof = load_profile("samsung-990-pro")
    short = predict(cfg, wl, prof, 2.0, warmup_s=0.0)
    assert short.duration_s == pytest.approx(3.0)        # SIM_MIN_S
    late = predict(cfg, wl, prof, 4.0, warmup_s=8.0)
    assert late.duration_s == pytest.approx(4.0)
    # ~10 MB of redo a second, the async point at ~67 MB: the cleaner sleeps through
    # the first seconds (no page written), and is flushing after 8 s of warm-up
    assert short.status.get("Innodb_pages_written", 0) == 0
    assert late.status.get("Innodb_pages_written", 0) > 0


# ---- host readings -----------------------------------------------------------------------------

def test_proc_cpu_seconds(tmp_path):
    import os

    hz = os.sysconf("SC_CLK_TCK")
    stat = tmp_path / "stat"
    # pid (comm with ) and spaces) state ppid ... utime=field 14, stime=field 15
    fields = ["S"] + ["0"] * 10 + [str(3 * hz), str(hz)] + ["0"] * 30
    stat.write_text(f"1234 (mariadbd) x) {' '.join(fields)}\n")
    assert proc_cpu_seconds(0, str(stat)) == pytest.approx(4.0)
    assert proc_cpu_seconds(0, str(tmp_path / "missing")) is None
    me = proc_cpu_seconds(os.getpid())
    assert me is not None and me >= 0


def test_machine_cpu_and_usage(tmp_path):
    import os

    hz = os.sysconf("SC_CLK_TCK")
    st = tmp_path / "stat"
    st.write_text(f"cpu  {10 * hz} 0 {5 * hz} {80 * hz} {5 * hz} 0 0 0 0 0\ncpu0 1 2 3\n")
    m0 = machine_cpu(str(st))
    assert m0 == {"busy": 15.0, "steal": 0.0, "total": 100.0}
    st.write_text(f"cpu  {20 * hz} 0 {15 * hz} {90 * hz} {5 * hz} 0 0 {10 * hz} 0 0\n")
    m1 = machine_cpu(str(st))
    u = machine_usage(m0, m1, server_cpu_s=8.0, client_cpu_s=4.0)
    # 40 s passed: 20 busy (50%), 10 steal (25%), 20 - 12 ours = 8 others (20%)
    assert u == {"busy": 0.5, "steal": 0.25, "other": 0.2}
    assert machine_usage(None, m1, 1.0, 1.0) is None
    assert machine_cpu(str(tmp_path / "nope")) is None


def test_split_server_cpu():
    before = {1: 5.0, 2: 1.0}                         # server threads before the clients
    start = {1: 5.5, 2: 1.0, 10: 0.01, 11: 0.02}      # 10, 11: the connection threads
    end = {1: 6.0, 2: 1.2, 10: 2.01, 11: 1.52}
    s = split_server_cpu(4.5, before, start, end)
    assert s == {"connection_threads": 2, "connection_threads_s": 3.5, "background_s": 1.0}
    assert split_server_cpu(None, before, start, end) is None


def test_files_delta():
    before = {"ibdata1": (100, 1), "db/t.ibd": (1000, 5), "mysql/x.ibd": (10, 7)}
    after = {"ibdata1": (100, 2), "db/t.ibd": (5000, 9), "mysql/x.ibd": (10, 7),
             "db/new.ibd": (300, 9)}
    d = files_delta(before, after)
    assert d["files_written"] == ["db/new.ibd", "db/t.ibd", "ibdata1"]
    assert d["tablespaces_written"] == 3
    assert d["growth_bytes"] == 4000 + 300
    assert files_delta(None, after) is None


def test_innodb_files(tmp_path):
    (tmp_path / "db").mkdir()
    (tmp_path / "#innodb_redo").mkdir()
    for p in ("ibdata1", "undo001", "db/t.ibd", "db/t.frm", "ib_logfile0", "ibtmp1",
              "#innodb_redo/x.ibd"):
        (tmp_path / p).write_bytes(b"x" * 10)
    got = hostprobe.innodb_files(tmp_path)
    assert sorted(got) == ["db/t.ibd", "ibdata1", "undo001"]
    assert hostprobe.innodb_files(tmp_path / "missing") is None


# ---- the workload's arithmetic ---------------------------------------------------------------

def _client(idx, commits, start=0, wall_ns=2_000_000_000, cpu_ns=500_000_000):
    ts = np.arange(commits, dtype=np.int64) * 1000 + start
    return ClientRun(idx=idx, pid=100 + idx, trx_start_ns=ts, commit_start_ns=ts + 300,
                     commit_end_ns=ts + 500, start_ns=start, end_ns=start + wall_ns,
                     cpu_ns=cpu_ns, errors=0, retries=0, messages=[], stopped_early=False)


def test_workload_result_figures():
    spec = WorkloadSpec(connections=2, duration_s=2)
    wr = WorkloadResult(spec, [_client(0, 1000), _client(1, 3000, start=10_000_000)], 2)
    assert wr.commits == 4000
    assert wr.window_s == pytest.approx(2.01)
    assert wr.tps == pytest.approx(4000 / 2.01)
    assert latency_ms(wr.commit_latency_ns())["p50"] == pytest.approx(0.0002)
    assert latency_ms(wr.trx_latency_ns())["p99"] == pytest.approx(0.0005)
    d = wr.to_dict()
    assert d["per_connection_commits"] == [1000, 3000]
    assert d["client_cpu"]["cpu_us_per_trx"] == pytest.approx(250.0)   # 1 s / 4000
    assert d["client_cpu"]["bottleneck"] is False
    assert latency_ms(np.zeros(0, dtype=np.int64))["p50"] is None


def test_client_bottleneck_verdicts():
    busy = [_client(0, 10, cpu_ns=1_700_000_000)]          # 85% of a core
    s = client_cpu_summary(busy, 10, cores=8)
    assert s["bottleneck"] and "85%" in s["bottleneck_reasons"][0]
    many = [_client(i, 10, cpu_ns=1_500_000_000) for i in range(4)]   # 4 x 75% on 2 cores
    s = client_cpu_summary(many, 40, cores=2)
    assert s["bottleneck"] and s["share_of_machine"] == pytest.approx(1.5)
    assert any("machine" in r for r in s["bottleneck_reasons"])
    idle = [_client(0, 10, cpu_ns=200_000_000)]
    assert client_cpu_summary(idle, 10, cores=2)["bottleneck"] is False


def test_workload_spec_checks():
    WorkloadSpec().validate()
    assert WorkloadSpec(kind="insert").statements_per_trx == 2
    assert WorkloadSpec(kind="oltp", updates_per_trx=4).statements_per_trx == 7
    for bad in (dict(kind="read"), dict(connections=0), dict(duration_s=0),
                dict(rows_per_trx=(5, 2)), dict(kind="oltp", connections=8, preload_rows=4),
                dict(warmup_s=-1)):
        with pytest.raises(UsageError):
            WorkloadSpec(**bad).validate()
    sql = " ".join(schema_sql(WorkloadSpec()))
    assert sql.count("KEY ") == 3 and "AUTO_INCREMENT PRIMARY KEY" in sql


# ---- options, plan, settings ----------------------------------------------------------------

def test_plan_runs_every_combination():
    opts = LabOptions(flush_methods=["O_DIRECT", "O_DIRECT_NO_FSYNC"], trx_commits=[1, 2],
                      connections=[1, 4])
    plans = plan_runs(opts)
    assert len(plans) == 8 and plans[-1].index == 8 and plans[0].total == 8
    assert plans[0].label == "O_DIRECT, trx_commit=1, 1 conn"
    assert {(p.flush_method, p.trx_commit, p.connections) for p in plans} == {
        (m, t, c) for m in ("O_DIRECT", "O_DIRECT_NO_FSYNC") for t in (1, 2) for c in (1, 4)}


@pytest.mark.parametrize("kw, match", [
    (dict(flush_methods=["bogus"]), "flush-method"),
    (dict(trx_commits=[3]), "trx-commit"),
    (dict(connections=[0]), "connections"),
    (dict(duration_s=0.5), "duration"),
    (dict(image="mysql:8.4"), "--image is for --backend docker"),
    (dict(backend="docker", basedir="/x"), "--basedir is for --backend local"),
    (dict(profile_ref="x", measure=True), "not both"),
])
def test_options_validate(kw, match):
    with pytest.raises(UsageError, match=match):
        LabOptions(**kw).validate()


def test_settings_mismatch():
    req = {"innodb_flush_method": "O_DIRECT", "innodb_flush_log_at_trx_commit": 1,
           "log_bin": False, "sync_binlog": None, "innodb_buffer_pool_size": "256M"}
    back = {"innodb_flush_method": "O_DIRECT", "flush_method_source": "innodb_flush_method",
            "innodb_flush_log_at_trx_commit": 1, "log_bin": False, "sync_binlog": 0,
            "innodb_buffer_pool_size": 256 * 1024 * 1024}
    assert settings_mismatch(req, back) == []
    back2 = dict(back, innodb_flush_method="fsync", innodb_flush_log_at_trx_commit=2)
    out = settings_mismatch(req, back2)
    assert len(out) == 2 and "ran with fsync" in out[0]


# ---- the report -------------------------------------------------------------------------------

def _run_record():
    measured = {"tps": 1000.0, "commit_latency_p50_ms": 0.5, "commit_latency_p99_ms": 2.0,
                "data_fsyncs_per_s": 1000.0, "data_writes_per_s": 10.0,
                "data_fsyncs_per_data_write": 100.0}
    predicted = {**measured, "tps": 800.0, "sim_duration_s": 3.0, "cpu_util": 0.4,
                 "device_flush_util": 0.3, "group_commit": {"commits_per_redo_sync": 1.2}}
    client = {"seconds": 3.0, "commits": 3000, "trx_latency_ms": {"p50": 1.0, "p99": 3.0},
              "errors": 0, "retries": 0,
              "client_cpu": {"cpu_s": 0.3, "cpu_us_per_trx": 100.0, "busy_max": 0.1,
                             "share_of_machine": 0.05, "bottleneck": False}}
    return {"index": 1, "label": "x", "server_process": {"pid": 1, "port": 2},
            "requested": {"innodb_flush_method": "O_DIRECT",
                          "innodb_flush_log_at_trx_commit": 1, "log_bin": False,
                          "sync_binlog": None, "connections": 2},
            "read_back": {"innodb_flush_method": "O_DIRECT",
                          "innodb_flush_log_at_trx_commit": 1, "log_bin": False,
                          "sync_binlog": 0, "innodb_doublewrite": "ON",
                          "innodb_buffer_pool_size": 268435456},
            "settings_match": True,
            "measured": {**measured, "client": client, "server_cpu_s": 0.6,
                         "server_cpu_us_per_trx": 200.0,
                         "server_cpu_split": {"connection_threads_s": 0.5,
                                              "background_s": 0.1},
                         "machine_cpu_busy": 0.5, "machine_cpu": {"other": 0.0}},
            "workload": {"cpu_us_per_trx": 200.0, "client_us_per_trx": 120.0,
                         "redo_bytes_per_trx": 2000, "pages_dirtied_per_trx": 0.1,
                         "tablespaces": 2, "growth_bytes_per_trx": 500.0},
            "predicted": predicted, "errors_pct": compare(measured, predicted),
            "advise": {"findings": [{"id": "flush-method", "setting": "innodb_flush_method",
                                     "current": "O_DIRECT", "recommended": "O_DIRECT_NO_FSYNC",
                                     "severity": "performance"}], "error": None},
            "notes": ["a note"]}


def test_render_text_and_json():
    report = {"schema": SCHEMA, "backend": "local", "image": None,
              "server": {"version": "10.11.19-MariaDB", "sim_flavor": "mariadb-10.11"},
              "storage": {"datadir_on": "/x", "filesystem": "ext4"},
              "profile": {"name": "p", "source": "profile"},
              "device": {"fsync_median_us": 40.0, "fdatasync_median_us": 30.0,
                         "verdict": "unknown"},
              "host": {"cpu_cores": 2}, "workload": {"description": "insert", "duration_s": 3},
              "runs": [_run_record()], "warnings": []}
    text = render_text(report)
    assert "measured / predicted" in text
    assert "TPS" in text and "1,000" in text and "800.0" in text and "-20%" in text
    assert "advise [performance] innodb_flush_method: O_DIRECT -> O_DIRECT_NO_FSYNC" in text
    assert "as requested" in text and "note: a note" in text
    assert json.loads(to_json(report))["runs"][0]["errors_pct"]["tps"] == -20.0


def test_num_and_pct():
    assert num(None) == "-" and num(12345.6) == "12,346" and num(0.01234) == "0.0123"
    assert num(1.5) == "1.500" and num(0) == "0"
    assert pct(None) == "-" and pct(12.4) == "+12%" and pct(-3.6) == "-4%"


def test_report_docstring_names_every_key():
    import innoflush.lab.reports.report as rep

    doc = rep.__doc__
    for key in ("schema", "backend", "runs", "requested", "read_back", "settings_match",
                "measured", "workload", "predicted", "errors_pct", "advise", "findings",
                "server_process", "loopback", "client_cpu",
                "status_deltas", "server_cpu_s", "derivation", "warnings"):
        assert f"``{key}``" in doc, key


# ---- the command line: usage errors before anything runs ---------------------------------------

@pytest.mark.parametrize("args, match", [
    (["--flush-method", "bogus"], "flush-method 'bogus'"),
    (["--profile", "no-such-profile"], "unknown profile"),
    (["--image", "mysql:8.4"], "--image is for --backend docker"),
    (["--connections", "0"], "connections 0"),
    (["--rows-per-trx", "x"], "rows-per-trx"),
    (["--server-option", "a b"], "server-option"),
    (["--duration", "0"], "duration"),
])
def test_cli_usage_errors(args, match, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["lab", "run", "--profile", "samsung-990-pro", *args])
    assert r.exit_code == 2, r.output
    assert match in r.output
    assert "Traceback" not in r.output
    assert not list(tmp_path.iterdir())              # nothing created


def test_cli_datadir_on_missing(tmp_path):
    r = CliRunner().invoke(main, ["lab", "run", "--profile", "samsung-990-pro",
                                  "--datadir-on", str(tmp_path / "nope")])
    assert r.exit_code == 2 and "no such directory" in r.output


def _mount_points_of(fs_types):
    """{fs type: a mount point of it} from this host's mountinfo, for the types asked."""
    found = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fs, point = right.split()[0], left.split()[4]
        if fs in fs_types and fs not in found and os.path.isdir(point):
            found[fs] = point
    return found


def test_cli_datadir_on_pseudo_filesystems():
    """/proc, /sys, /dev... are refused for what they are, not for an errno of mkdir."""
    points = _mount_points_of({"proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2"})
    assert {"proc", "sysfs"} <= set(points), points       # every Linux host has these
    for fs, point in points.items():
        r = CliRunner().invoke(main, ["lab", "run", "--profile", "samsung-990-pro",
                                      "--datadir-on", point])
        assert r.exit_code == 2, (point, r.output)
        assert r.stderr.strip() == (
            f"innoflush: error: --datadir-on {point} is on {fs}, a pseudo-filesystem of "
            "the kernel, not storage: no place for a datadir; give a directory on the "
            "storage to test"), r.stderr


def test_docker_backend_unavailable(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "innoflush.lab.server.docker_backend", None)  # import fails
    r = CliRunner().invoke(main, ["lab", "run", "--backend", "docker", "--profile",
                                  "samsung-990-pro"])
    assert r.exit_code == 2
    assert "--backend docker is not available" in r.output
    assert "--backend local" in r.output


def test_lab_help_lists_options():
    r = CliRunner().invoke(main, ["lab", "run", "--help"])
    assert r.exit_code == 0
    for opt in ("--backend", "--image", "--basedir", "--flush-method", "--trx-commit",
                "--sync-binlog", "--log-bin", "--connections", "--duration", "--workload",
                "--datadir-on", "--profile", "--measure", "--buffer-pool", "--json"):
        assert opt in r.output


# ---- the host's cost of a sync (lab calibrate) ---------------------------------------------

def _run_like(commits, cpu_us, commit_p50_ms, fsyncs, client_cpu_us=100.0, conns=1):
    from types import SimpleNamespace as NS

    return NS(wr=NS(commits=commits), server_cpu_s=cpu_us * commits / 1e6,
              iv=NS(deltas={"Innodb_data_fsyncs": fsyncs}),
              client={"commit_latency_ms": {"p50": commit_p50_ms},
                      "client_cpu": {"cpu_us_per_trx": client_cpu_us}},
              plan=NS(connections=conns))


@pytest.mark.parametrize("extra_ms, path, side, wake", [
    (0.056, 56.0, 29.0, 0.0),     # the COMMIT grew by less than the CPU: part of it is off
    (0.120, 85.0, 0.0, 35.0),     # grew by more: the rest is a wake-up
    (-0.050, 0.0, 85.0, 0.0),     # faster than the storage's own sync: all CPU is off-path
])
def test_host_costs_split_the_cpu_of_a_sync(extra_ms, path, side, wake):
    from innoflush.lab.experiments.calibrate import host_costs
    from innoflush.profiles import load_profile

    storage = load_profile("samsung-990-pro")
    w, _ = storage.resolve("write", "none", 4096, True)
    s, _ = storage.resolve("sync", "fdatasync", 4096, True)
    device_ms = (w.median_ns + s.median_ns) / 1e6
    idle = _run_like(1000, 150.0, 0.090, 3, client_cpu_us=104.0)
    synced = _run_like(1000, 235.0, 0.090 + device_ms + extra_ms, 1000)
    fields, lines = host_costs(idle, synced, storage, "mariadb-10.11")
    assert fields["sync_cpu_us"] == pytest.approx(path, abs=0.05)
    assert fields["sync_side_cpu_us"] == pytest.approx(side, abs=0.05)
    assert fields["wakeup_us"] == pytest.approx(wake, abs=0.05)
    assert fields["cpu_us_per_trx_sleeping"] == pytest.approx(150.0)
    assert fields["client_cpu_us_per_trx_sleeping"] == pytest.approx(104.0)
    assert any("CPU per sync T = 85.0" in line for line in lines)


def test_host_costs_split_per_sync_and_per_sleeping_commit():
    """With the calls' own CPU measured (S), T splits into S per sync (shared by a group)
    and T - S per commit that sleeps; the path R takes the calls' CPU first."""
    from innoflush.lab.experiments.calibrate import host_costs
    from innoflush.profiles import load_profile

    storage = load_profile("samsung-990-pro")
    w, _ = storage.resolve("write", "none", 4096, True)
    s, _ = storage.resolve("sync", "fdatasync", 4096, True)
    device_ms = (w.median_ns + s.median_ns) / 1e6
    idle = _run_like(1000, 150.0, 0.090, 3)
    synced = _run_like(1000, 247.0, 0.090 + device_ms + 0.058, 1000)   # T 97, R 58
    fields, lines = host_costs(idle, synced, storage, "mariadb-10.11", call_cpu_us=44.0)
    assert fields["sync_cpu_us"] == pytest.approx(44.0)
    assert fields["sync_side_cpu_us"] == pytest.approx(0.0)
    assert fields["sleep_cpu_us"] == pytest.approx(14.0, abs=0.05)
    assert fields["sleep_side_cpu_us"] == pytest.approx(39.0, abs=0.05)
    assert fields["wakeup_us"] == 0
    total = sum(fields[k] for k in ("sync_cpu_us", "sync_side_cpu_us", "sleep_cpu_us",
                                    "sleep_side_cpu_us"))
    assert total == pytest.approx(97.0, abs=0.1)
    assert any("calls' own CPU S = 44.0" in line for line in lines)
    # S larger than T: everything is the calls'
    fields, _ = host_costs(idle, synced, storage, "mariadb-10.11", call_cpu_us=500.0)
    assert fields["sleep_cpu_us"] == 0 and fields["sleep_side_cpu_us"] == 0


def test_host_costs_need_a_sync_per_commit():
    from innoflush.lab.experiments.calibrate import host_costs
    from innoflush.profiles import load_profile

    fields, lines = host_costs(_run_like(1000, 150.0, 0.09, 3), _run_like(1000, 160.0, 0.1, 10),
                               load_profile("samsung-990-pro"), "mariadb-10.11")
    assert fields == {} and "not measured" in lines[0]


def test_commit_base_of_a_sleeping_commit_is_at_least_one_connections():
    from innoflush.simulator import Workload
    from innoflush.simulator.workload_profile import WorkloadProfile

    wp = WorkloadProfile("t", "t", Workload(), provenance={"calibration": {
        "commit_base_ms": 0.09, "commit_base_ms_by_connections": {"1": 0.09, "2": 0.02,
                                                                  "16": 0.7}}})
    assert wp.commit_base_ms(2) == 0.02
    assert wp.commit_base_ms(2, sleeping=True) == 0.09     # its threads sleep and wake
    assert wp.commit_base_ms(16, sleeping=True) == 0.7     # the larger one
    assert wp.commit_base_ms(3) == 0.02                    # the nearest count


def test_start_state_from_mariadb_and_mysql_status():
    from innoflush.live.sampling import start_state

    assert start_state({"Innodb_checkpoint_age": 3113905,
                        "Innodb_buffer_pool_pages_dirty": 212}) == \
        {"checkpoint_age": 3113905, "dirty_pages": 212}
    assert start_state({"Innodb_redo_log_current_lsn": 5000, "Innodb_redo_log_checkpoint_lsn": 1000,
                        "Innodb_buffer_pool_pages_dirty": 7}) == \
        {"checkpoint_age": 4000, "dirty_pages": 7}
    assert start_state({"Innodb_buffer_pool_pages_dirty": 7}) is None
    assert start_state({"Innodb_checkpoint_age": "x", "Innodb_buffer_pool_pages_dirty": 7}) is None


def test_log_excerpt_puts_the_error_lines_first():
    from innoflush.lab.server.error_log import QUOTED_LOG_LINES, log_excerpt

    mariadb = ("2026-11-25 19:35:00 0 [Note] InnoDB: Using io_uring\n"
               + "2026-11-25 19:35:00 0 [Note] InnoDB: a note\n" * 40
               + "2026-11-25 19:35:00 0 [ERROR] /usr/sbin/mariadbd: unknown option '--garbage'\n"
               "2026-11-25 19:35:00 0 [ERROR] Aborting\n")
    assert log_excerpt(mariadb) == ["[ERROR] /usr/sbin/mariadbd: unknown option '--garbage'",
                                    "[ERROR] Aborting"]
    mysql = ("2026-11-25T19:35:00.1Z 0 [System] [MY-010116] [Server] starting\n"
             "2026-11-25T19:35:00.2Z 0 [ERROR] [MY-000067] [Server] unknown variable "
             "'garbage'.\n" * 9)
    got = log_excerpt(mysql)
    assert len(got) == QUOTED_LOG_LINES
    assert got[0] == "[ERROR] [MY-000067] [Server] unknown variable 'garbage'."
    # no [ERROR] line: the last lines, each cut to a readable length
    notes = "\n".join(f"line {i} " + "x" * 500 for i in range(10))
    got = log_excerpt(notes)
    assert [g.split()[1] for g in got] == ["5", "6", "7", "8", "9"]
    assert all(len(g) <= 200 and g.endswith("...") for g in got)
    assert log_excerpt("\n\n") == []
