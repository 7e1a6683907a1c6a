"""The live workload's measurement, as arithmetic (no server): processlist tallies,
performance_schema deltas, the /proc process check, the inputs with their sources, and
what the fit makes of them."""

from __future__ import annotations

import math
import os
from collections import Counter
from dataclasses import replace

import pytest

from innoflush.advisor import sleep_cost as sc
from innoflush.advisor.candidates import candidate_changes, mark_advised
from innoflush.advisor.device import device_from_profile
from innoflush.advisor.fit import Check, model_checks
from innoflush.advisor.measured import measured_workload
from innoflush.advisor.predict import SPREAD, _variant
from innoflush.advisor.rules import Finding
from innoflush.advisor.sleep_cost import client_sleep_cost_us, server_sleep_cost_us, without_sleep
from innoflush.live import perfschema
from innoflush.live.activity import (
    ConnectionTally,
    is_client_connection,
    sampling_period,
    summarize,
)
from innoflush.live.evidence import Input, WorkloadEvidence, evidence
from innoflush.live.facts import facts_from_variables
from innoflush.live.observed import observe
from innoflush.live.procfs import local_server_pid
from innoflush.live.sampling import Interval
from innoflush.simulator import Workload
from tests.helpers.scripts_loader import load_script

MARIADB = {"version": "10.11.19-MariaDB", "version_comment": "Debian", "innodb_version":
           "10.11.19", "innodb_flush_method": "O_DIRECT",
           "innodb_flush_log_at_trx_commit": "1", "innodb_flush_log_at_timeout": "1",
           "log_bin": "OFF", "sync_binlog": "0", "innodb_doublewrite": "ON",
           "datadir": "/var/lib/mysql/", "pid_file": "/run/mysqld/mysqld.pid"}


# ---- processlist ------------------------------------------------------------------------

def _tally(seen, busy, commit=0, tid=None, user="app"):
    t = ConnectionTally(user=user, seen=seen, busy=busy, commit_wait=commit, tid=tid)
    t.states = Counter({"Commit": commit, "Update": busy - commit})
    return t


def test_busy_share_over_the_active_connections_only():
    tallies = {1: _tally(100, 80, 60, tid=11), 2: _tally(100, 60, 40, tid=12),
               3: _tally(100, 0)}                     # a pool member that only slept
    a = summarize(tallies, source="SHOW FULL PROCESSLIST", samples=100, period_s=0.02,
                  cost_ms=1.0, sees_all=True, queries=102)
    assert a.connections == 2 and a.idle_connections == 1
    assert a.busy_share == pytest.approx(0.7)
    assert a.commit_wait_share == pytest.approx(0.5)
    assert a.tids == [11, 12]
    assert a.usable
    assert not summarize(tallies, source="x", samples=10, period_s=0.02, cost_ms=1.0,
                         sees_all=True, queries=10).usable       # too few samples


def test_background_threads_are_not_client_connections():
    assert is_client_connection("app", "Query")
    assert is_client_connection("app", "Sleep")
    assert not is_client_connection("system user", "Query")
    assert not is_client_connection("repl", "Binlog Dump GTID")
    assert not is_client_connection("event_scheduler", "Daemon")
    assert not is_client_connection("app", None)


def test_sampling_period_bounds():
    assert sampling_period(6.0) == pytest.approx(0.02)       # the lab's windows
    assert sampling_period(10.0) == pytest.approx(10.0 / 300)  # advise's default
    assert sampling_period(60.0) == pytest.approx(0.1)
    assert sampling_period(600.0) == pytest.approx(0.1)
    assert sampling_period(1.0) == pytest.approx(1 / 150)
    assert sampling_period(0.1) == pytest.approx(0.005)


# ---- performance_schema -------------------------------------------------------------------

def _pfs(data_misc, data_ps, binlog, commits, trx):
    s = perfschema.PfsSnapshot()
    s.files = {perfschema.DATA_FILE: (data_misc, data_ps, 0),
               perfschema.BINLOG: (binlog, binlog * 10**9, binlog)}
    s.instrumented = {perfschema.DATA_FILE, perfschema.BINLOG}
    s.commit_stmt = (commits, commits * 2 * 10**9)
    s.transactions = trx
    return s


def test_pfs_delta_counts_and_microseconds():
    d = perfschema.delta(_pfs(10, 10 * 10**6, 5, 100, 1000),
                         _pfs(110, 110 * 10**6 + 100 * 4_000 * 10**6, 25, 300, 3000))
    assert d.data_file_syncs == 100
    assert d.data_file_sync_us == pytest.approx(4001.0)      # picoseconds -> µs
    assert d.binlog_syncs == 20 and d.binlog_sync_us == pytest.approx(1000.0)
    assert d.redo_syncs is None                 # MariaDB: no redo-log instrument
    assert d.transactions == 2000
    assert d.commit_statements == 200 and d.commit_statement_us == pytest.approx(2000.0)
    assert perfschema.delta(None, _pfs(1, 1, 1, 1, 1)) is None


# ---- /proc ----------------------------------------------------------------------------------

def _fake_proc(root, pid, exe, start_ticks, uptime_s):
    (root / str(pid)).mkdir(parents=True)
    fields = ["S"] + ["0"] * 18 + [str(start_ticks)] + ["0"] * 30
    (root / str(pid) / "stat").write_text(f"{pid} (mariadbd) " + " ".join(fields))
    os.symlink(exe, root / str(pid) / "exe")
    (root / "uptime").write_text(f"{uptime_s} 0.0\n")


def test_local_server_pid_checks_executable_and_age(tmp_path):
    hz = os.sysconf("SC_CLK_TCK")
    proc = tmp_path / "proc"
    _fake_proc(proc, 4242, "/usr/sbin/mariadbd", start_ticks=100 * hz, uptime_s=1100.0)
    pidf = tmp_path / "mysqld.pid"
    pidf.write_text("4242\n")
    pid, why = local_server_pid(str(pidf), 1000.0, proc=str(proc))
    assert pid == 4242 and "age matches" in why
    pid, why = local_server_pid(str(pidf), 50.0, proc=str(proc))   # another server
    assert pid is None and "Uptime" in why
    pid, why = local_server_pid(str(tmp_path / "none.pid"), 1000.0, proc=str(proc))
    assert pid is None and "not readable" in why
    _fake_proc(proc, 777, "/usr/bin/python3", start_ticks=0, uptime_s=1100.0)
    pidf.write_text("777\n")
    pid, why = local_server_pid(str(pidf), None, proc=str(proc))
    assert pid is None and "not a server" in why


# ---- the inputs and their sources ------------------------------------------------------------

def _interval(deltas, seconds=10.0):
    return Interval(0, seconds, True, None, deltas, {}, {}, {})


def _activity(conns=4, busy=0.8, commit=0.6, tids=(11, 12, 13, 14)):
    tallies = {i: _tally(500, int(500 * busy), int(500 * commit), tid=t)
               for i, t in zip(range(conns), tids, strict=False)}
    return summarize(tallies, source="performance_schema.threads", samples=500,
                     period_s=0.02, cost_ms=0.8, sees_all=True, queries=503)


def test_evidence_divides_a_transactions_time():
    facts = facts_from_variables(MARIADB)
    deltas = {"Com_insert": 40_000, "Questions": 40_600, "Innodb_data_fsyncs": 20_100,
              "Innodb_log_writes": 20_000}
    ev = evidence(facts, _interval(deltas), _activity(), None, None, None, 600)
    # 4 connections, 4,000 commits/s: 1,000 µs of a connection per transaction
    assert ev.connections.value == 4 and ev.connections.source == "measured"
    assert ev.inside_us_per_trx.value == pytest.approx(800.0)
    assert ev.outside_us_per_trx.value == pytest.approx(200.0)
    assert ev.commit_wait_us_per_trx.value == pytest.approx(600.0)
    assert ev.statements_per_trx.value == pytest.approx(1.0)     # our own 600 left out
    assert ev.redo_syncs_per_s.value == pytest.approx(2000.0)    # trx_commit=1
    assert ev.data_file_syncs_per_s.value == pytest.approx(10.0)
    # not local (no /proc figures): the CPU is only bounded by the processlist
    assert ev.server_cpu_us_per_trx.source == "bound"
    assert ev.server_cpu_us_per_trx.value == pytest.approx(200.0)


def test_evidence_at_trx_commit_2_gives_a_range_for_the_redo_syncs():
    facts = facts_from_variables({**MARIADB, "innodb_flush_log_at_trx_commit": "2"})
    deltas = {"Com_insert": 40_000, "Questions": 40_000, "Innodb_data_fsyncs": 390,
              "Innodb_log_writes": 2623, "Innodb_dblwr_writes": 55}
    ev = evidence(facts, _interval(deltas), _activity(), None, None, None, 0)
    r = ev.redo_syncs_per_s
    assert r.source == "estimated"
    assert r.value == pytest.approx(6.5)                  # 10 timer syncs + 55 batches
    assert (r.low, r.high) == (pytest.approx(1.0), pytest.approx(39.0))
    d = ev.data_file_syncs_per_s
    assert d.low == pytest.approx(0.0) and d.high == pytest.approx(38.0)


def test_evidence_with_performance_schema_splits_the_syncs_exactly():
    facts = facts_from_variables({**MARIADB, "innodb_flush_log_at_trx_commit": "2"})
    deltas = {"Com_insert": 40_000, "Questions": 40_000, "Innodb_data_fsyncs": 390}
    pfs = perfschema.PfsDelta(data_file_syncs=315, data_file_sync_us=2500.0,
                              transactions=40_000)
    ev = evidence(facts, _interval(deltas), _activity(), pfs, None, None, 0)
    assert ev.redo_syncs_per_s.source == "performance_schema"
    assert ev.redo_syncs_per_s.value == pytest.approx(7.5)
    assert ev.data_file_syncs_per_s.value == pytest.approx(31.5)
    assert ev.data_file_sync_us.value == 2500.0


def test_unknown_connections_without_the_processlist():
    facts = facts_from_variables(MARIADB)
    a = summarize({}, source="SHOW FULL PROCESSLIST", samples=500, period_s=0.02,
                  cost_ms=1.0, sees_all=False, queries=500)
    ev = evidence(facts, _interval({"Com_insert": 100}), a, None, None, None, 0)
    assert ev.connections.value is None and ev.connections.source == "unknown"
    assert any("PROCESS" in n for n in ev.notes)
    assert Input(4, "option", "--connections").to_dict()["source"] == "option"


# ---- the fitted workload -----------------------------------------------------------------

def _ev_with_cpu(cpu, inside=800.0, wait=600.0, outside=200.0):
    facts = facts_from_variables(MARIADB)
    ev = evidence(facts, _interval({"Com_insert": 40_000, "Questions": 40_000}),
                  _activity(), None, None, None, 0)
    ev.server_cpu_us_per_trx = Input(cpu, "/proc", "test")
    ev.background_cpu_us_per_trx = Input(10.0, "/proc", "test")
    ev.other_cpu_us_per_trx = Input(50.0, "/proc", "test")
    ev.inside_us_per_trx = Input(inside, "measured", "test")
    ev.commit_wait_us_per_trx = Input(wait, "measured", "test")
    ev.outside_us_per_trx = Input(outside, "measured", "test")
    return ev


def _observed():
    return observe(_interval({"Com_insert": 40_000, "Innodb_os_log_written": 16_000_000}),
                   "mariadb", False, 1)


def test_cpu_beyond_the_statements_time_ran_in_the_commit():
    # 300 µs of CPU, but only 200 µs inside the server outside the commit wait
    wl, inputs, _, missing = measured_workload(_ev_with_cpu(300.0), _observed(), True)
    assert not missing
    assert wl.cpu_us_per_trx == pytest.approx(200.0)   # background threads left out
    assert wl.sleep_cpu_us == pytest.approx(100.0)     # gone without a sync
    assert wl.cpu_us_per_trx_sleeping == 0.0   # the commit states' CPU covers the sleep's
    assert wl.commit_cpu_us == 0.0
    assert wl.client_us_per_trx == pytest.approx(200.0)
    assert wl.client_cpu_us_per_trx == pytest.approx(50.0)
    assert wl.connections == 4 and wl.redo_bytes_per_trx == 400
    assert inputs["cpu_us_per_trx"]["source"] == "/proc"
    assert inputs["work_cv"]["source"] == "default"
    # where commits do not sleep, that CPU stays with every commit
    wl2, inputs2, _, _ = measured_workload(_ev_with_cpu(300.0), _observed(), False)
    assert wl2.commit_cpu_us == pytest.approx(100.0)
    assert inputs2["sleep_cpu_us"]["source"] == "default"


def test_cpu_the_commit_states_cannot_hold_goes_with_the_time_outside():
    """MySQL 9.7, one connection, oltp_write_only on a fast disk: 639 µs of thread CPU a
    transaction, 188 µs inside the server of which 124 in the commit: the commit holds at
    most its 124 µs; the rest ran between statements, with the time outside (1,010 µs),
    where it takes a core and no time of its own."""
    ev = _ev_with_cpu(639.0, inside=188.0, wait=124.0, outside=1010.0)
    wl, inputs, _, _ = measured_workload(ev, _observed(), True)
    assert wl.cpu_us_per_trx + wl.sleep_cpu_us <= 188.0 + 1e-6
    assert wl.sleep_cpu_us == pytest.approx(124.0)
    assert wl.client_cpu_us_per_trx == pytest.approx(50.0 + 639.0 - 188.0)
    assert wl.client_us_per_trx == pytest.approx(1010.0)
    assert "could not hold" in inputs["client_cpu_us_per_trx"]["detail"]
    # what fits (a slow device's long commit wait) is left as it was
    wl2, _, _, _ = measured_workload(_ev_with_cpu(300.0), _observed(), True)
    assert wl2.sleep_cpu_us == pytest.approx(100.0) and wl2.client_cpu_us_per_trx == 50.0


def test_a_sleeping_commits_cpu_comes_off_without_a_sync():
    # one connection's worth: 300 commits/s, each asleep 3 ms on its sync
    ev = _ev_with_cpu(300.0, inside=3200.0, wait=3000.0)
    ev.client_cpu_us_per_trx = Input(40.0, "/proc", "sysbench (123)")
    ev.commits_per_s = 300.0
    wl, inputs, _, _ = measured_workload(ev, _observed(), True)
    # 0.9 commits asleep, syncs not counted (one a commit): 60 + 0.07 x 0.9 cores / 300
    # commits/s = 270 µs, of 300 measured, so the transaction keeps its floor: at a 3-ms
    # commit wait 0.49 - 0.06 ln 30 = 28.6 % of it
    assert server_sleep_cost_us(3000.0, 300.0) == pytest.approx(270.0, abs=0.1)
    assert sc.floor_share(3000.0) == pytest.approx(0.2859, abs=1e-4)
    assert wl.cpu_us_per_trx == pytest.approx(300.0 * sc.floor_share(3000.0), abs=1e-3)
    assert wl.cpu_us_per_trx_sleeping == pytest.approx(200.0)   # the statements' part
    assert wl.sleep_cpu_us == pytest.approx(100.0)
    assert "sleep_cost.py" in inputs["cpu_us_per_trx"]["detail"]
    # the clients found at the connections' other end, not the host's other processes:
    # 0.96 transactions inside the server, 0.015 x 0.96^0.6 cores: 48.8 µs of their 40
    assert wl.client_cpu_us_per_trx_sleeping == pytest.approx(40.0)
    assert wl.client_cpu_us_per_trx == pytest.approx(20.0)
    # the wire is what it was: the outside time less the clients' CPU saved
    assert wl.client_us_per_trx - wl.client_cpu_us_per_trx == pytest.approx(200.0 - 40.0,
                                                                             abs=1e-2)
    assert "sysbench" in inputs["client_cpu_us_per_trx"]["detail"]
    # many commits a second: the rate spread over them is less than the commit states'
    # CPU, which is all that comes off
    ev.commits_per_s = 5000.0
    wl, _, _, _ = measured_workload(ev, _observed(), True)
    assert wl.cpu_us_per_trx == pytest.approx(200.0) and wl.cpu_us_per_trx_sleeping == 0.0
    # nor where commits do not sleep
    ev.commits_per_s = 300.0
    wl, _, _, _ = measured_workload(ev, _observed(), False)
    assert wl.cpu_us_per_trx == pytest.approx(200.0) and wl.cpu_us_per_trx_sleeping == 0.0


def test_the_sleep_cost_is_a_rate_not_a_factor():
    # the same wait and commit rate: the same CPU given back, whatever the transaction costs
    small = without_sleep(500.0, server_sleep_cost_us(3000.0, 300.0), 0.25)
    large = without_sleep(2000.0, server_sleep_cost_us(3000.0, 300.0), 0.25)
    assert 2000.0 - large == pytest.approx(500.0 - small)
    # more asleep at once, more — up to as many as the host has cores
    assert server_sleep_cost_us(6000.0, 300.0, cpu_cores=2) > server_sleep_cost_us(
        3000.0, 300.0, cpu_cores=2)
    assert server_sleep_cost_us(6000.0, 1000.0, cpu_cores=2) == pytest.approx(
        server_sleep_cost_us(12000.0, 1000.0, cpu_cores=2))
    # past that, spread over more commits a second, each pays less
    assert server_sleep_cost_us(3000.0, 3000.0, cpu_cores=2) < server_sleep_cost_us(
        3000.0, 300.0, cpu_cores=2)
    # a wake-up per sync the commits sleep on: four commits a sync pay a quarter of it
    assert (server_sleep_cost_us(3000.0, 300.0, syncs_per_s=300.0)
            - server_sleep_cost_us(3000.0, 300.0, syncs_per_s=75.0)) == pytest.approx(45.0)
    # nothing asleep, nothing to give back
    assert server_sleep_cost_us(0.0, 300.0) == 0.0
    assert server_sleep_cost_us(3000.0, 0.0) == 0.0
    assert client_sleep_cost_us(0.0, 300.0) == 0.0
    # never below the floor, which is lower the longer the commits slept
    assert without_sleep(100.0, 1e6, 0.3) == pytest.approx(30.0)
    assert sc.floor_share(50.0) == sc.floor_share(100.0) == pytest.approx(0.49)
    assert sc.floor_share(340.0) == pytest.approx(0.417, abs=1e-3)
    assert sc.floor_share(6400.0) == pytest.approx(0.240, abs=1e-3)
    assert sc.floor_share(1e9) == pytest.approx(sc.FLOOR_SHARE_MIN)


def test_missing_inputs_are_named():
    ev = _ev_with_cpu(100.0)
    ev.connections = Input(None, "unknown", "only this account's connections")
    wl, _, _, missing = measured_workload(ev, _observed())
    assert wl is None and any("connections" in m for m in missing)


def test_growth_is_the_pages_created_where_no_delete_balances_the_inserts():
    from innoflush.advisor.measured import growth_per_commit
    inserts = observe(_interval({"Com_insert": 1000, "Innodb_pages_created": 20}),
                      "mariadb", False, 1)
    growth, how = growth_per_commit(inserts)
    assert growth == pytest.approx(20 / 1000 * 16384)
    assert "Innodb_pages_created" in how and "insert/delete statements" in how
    # sysbench write_only: a delete for every insert, pages created but the files stay
    churn = observe(_interval({"Com_insert": 1000, "Com_delete": 1000, "Com_update": 2000,
                               "Innodb_pages_created": 20}), "mariadb", False, 1)
    assert growth_per_commit(churn)[0] == 0.0
    # rows, where the server counts them, over statements (a multi-row insert)
    rows = observe(_interval({"Com_insert": 1000, "Com_delete": 1000, "Innodb_pages_created":
                              20, "Innodb_rows_inserted": 4000, "Innodb_rows_deleted": 1000}),
                   "mysql", False, 1)
    growth, how = growth_per_commit(rows)
    assert growth == pytest.approx(20 / rows.commits * 16384 * 0.75) and "Innodb_rows" in how


def test_the_extension_step_is_fsp_get_pages_to_extend_ibd():
    from innoflush.live.tablespaces import extend_step, extension_step
    assert extension_step(2 * 1024 * 1024) == 1024 * 1024
    assert extension_step(32 * 1024 * 1024) == 4 * 1024 * 1024
    # without file-per-table the system tablespace grows by innodb_autoextend_increment
    step, source, _ = extend_step(None, {"innodb_file_per_table": "OFF",
                                         "innodb_autoextend_increment": "8"})
    assert (step, source) == (8 * 1024 * 1024, "estimated")


def test_the_measured_extension_step_goes_to_the_model():
    ev = _ev_with_cpu(300.0)
    wl, inputs, _, _ = measured_workload(ev, _observed(), True)
    assert wl.extend_bytes == Workload().extend_bytes
    assert inputs["extend_bytes"]["source"] == "default"
    ev.extend_bytes = Input(1024.0 * 1024, "measured", "the largest is 2.5 MiB")
    wl, inputs, _, _ = measured_workload(ev, _observed(), True)
    assert wl.extend_bytes == 1024 * 1024 and inputs["extend_bytes"]["source"] == "measured"


def test_tables_written_alike_count_as_many_and_a_stray_one_barely():
    from innoflush.live.tablespaces import effective_tables, reset_point
    # four tables written alike, a statistics table touched twice, one untouched
    rows = 100_000
    before = {18: (100, rows), 19: (100, rows), 20: (100, rows), 21: (100, rows),
              14: (0, 10), 15: (7, 10)}
    after = {18: (1100, rows), 19: (1100, rows), 20: (1100, rows), 21: (1100, rows),
             14: (2, 10), 15: (7, 10)}
    eff, changed = effective_tables(before, after)
    assert changed == 5 and 4.0 < eff < 4.05
    # a counter set back to 0 meanwhile changed up to its reset point (a tenth of 10,000
    # rows with persistent statistics, 16 + a sixteenth with transient ones) and then
    # what it counts now: beside a table that changed as much without a reset, the two
    # count as two alike
    assert (reset_point(10_000), reset_point(10_000, persistent=False)) == (1000, 641)
    eff, changed = effective_tables({18: (600, 10_000), 19: (0, 10_000)},
                                    {18: (40, 10_000), 19: (440, 10_000)})
    assert (eff, changed) == (2.0, 2)
    eff, _ = effective_tables({18: (241, 10_000), 19: (0, 10_000)},
                              {18: (40, 10_000), 19: (440, 10_000)}, persistent=False)
    assert eff == 2.0
    # a table loaded into the cache during the window counts from 0
    assert effective_tables({}, {30: (40, 10_000)}) == (1.0, 1)
    assert effective_tables({18: (5, 10)}, {18: (5, 10)}) == (0.0, 0)


def test_the_tablespaces_written_add_the_undo_logs_files():
    from innoflush.live.tablespaces import tablespaces_written, undo_files
    assert undo_files({"innodb_undo_tablespaces": "0"}, "mariadb")[0] == 1
    assert undo_files({"innodb_undo_tablespaces": "3"}, "mariadb")[0] == 3
    assert undo_files({"version": "8.0.36"}, "mysql")[0] == 2
    assert undo_files({"version": "5.7.44"}, "mysql")[0] == 1
    reads = ({1: (0, 1000), 2: (0, 1000), 3: (0, 1000)}, "INNODB_SYS_TABLESTATS")
    n, source, detail = tablespaces_written(reads, ({1: (50, 1000), 2: (50, 1000),
                                                     3: (0, 1000)}, "X"),
                                            {"innodb_undo_tablespaces": "0"}, "mariadb")
    assert (n, source) == (3.0, "measured") and "2 table(s)" in detail
    # nothing counted, or a read that failed: unknown, and why
    assert tablespaces_written(reads, reads, {}, "mariadb")[:2] == (None, "unknown")
    n, source, detail = tablespaces_written((None, "no PROCESS"), reads, {}, "mariadb")
    assert (n, source, detail) == (None, "unknown", "no PROCESS")


def test_the_measured_tablespaces_go_to_the_model():
    ev = _ev_with_cpu(300.0)
    wl, inputs, _, _ = measured_workload(ev, _observed(), True)
    assert wl.tablespaces == Workload().tablespaces
    assert inputs["tablespaces"]["source"] == "default"
    ev.tablespaces_written = Input(5.0, "measured", "4 table(s) changed rows")
    wl, inputs, _, _ = measured_workload(ev, _observed(), True)
    assert wl.tablespaces == 5 and inputs["tablespaces"]["source"] == "measured"
    # and a report read back keeps it
    back = WorkloadEvidence.from_dict(ev.to_dict())
    assert back.tablespaces_written.value == 5.0

def test_a_window_without_page_writes_estimates_the_doublewrite_share():
    """MariaDB writes the pages it created straight to their files: where advise's
    window flushed too few pages to count, the share of first writes that go through the
    doublewrite buffer is the part of the first entries its tablespaces do not grow by."""
    deltas = {"Com_insert": 40_000, "Innodb_os_log_written": 16_000_000,
              "Innodb_rows_inserted": 40_000, "Innodb_rows_deleted": 0,
              "Innodb_pages_created": 760, "Innodb_pages_written": 0}
    iv = Interval(0, 10.0, True, None, deltas, {}, {"Innodb_buffer_pool_pages_dirty": 3000},
                  {"Innodb_buffer_pool_pages_dirty": 800})
    obs = observe(iv, "mariadb", False, 1)
    ev = _ev_with_cpu(300.0)
    wl, _, lines, _ = measured_workload(ev, obs, True, new_pages_skip_dblwr=True)
    # 800 pages first dirtied, 760 of them new: 5 % doublewritten
    assert wl.pages_dirtied_per_trx == pytest.approx(0.02)
    assert wl.dblwr_page_share == pytest.approx(0.05)
    assert any(line.startswith("dblwr_page_share = 0.05 (estimated") for line in lines)
    # a server that doublewrites every page keeps the simulator's share
    wl, _, lines, _ = measured_workload(ev, obs, True, new_pages_skip_dblwr=False)
    assert wl.dblwr_page_share == 1.0
    assert not any(line.startswith("dblwr_page_share") for line in lines)


class _R:
    duration_s = 10.0
    tps = 1000.0
    group_commit = {"commits_per_redo_sync": 2.0}
    status = {"Innodb_data_fsyncs": 5000, "Innodb_pages_written": 2}
    internal: dict = {}


def test_model_checks_tolerances_and_noise_floor():
    o = _observed()
    o.commits_per_s = 1100.0
    o.commits_per_redo_sync = 3.0
    o.redo_syncs_source = "estimated: Innodb_log_writes"
    o.data_fsyncs_per_s = 510.0
    o.pages_written_per_s = 1.0
    c = {x.figure: x for x in model_checks(o, _R())}
    assert c["tps"].ok is True                     # -9 % within 15 %
    assert c["commits_per_redo_sync"].ok is False  # -33 %
    assert c["data_fsyncs_per_s"].ok is True
    assert c["page_writes_per_s"].ok is None       # noise-sized on both sides
    assert Check("tps", 100.0, 80.0, 15.0, None).error_pct == pytest.approx(-20.0)


def test_page_writes_within_one_cleaner_burst_are_phase_not_error():
    """Page writes come in the page cleaner's bursts of back-to-back passes: which bursts a
    window catches is phase, so the model's largest burst over the window is allowed
    beside the tolerance; more than that apart is a miss."""
    class R(_R):
        status = {"Innodb_data_fsyncs": 5000, "Innodb_pages_written": 4000}
        internal = {"flush_batches": 4, "flush_burst_max_pages": 1000}   # 400/s over 10 s
    o = _observed()
    o.commits_per_s = 1000.0
    o.seconds = 10.0
    o.pages_written_per_s = 200.0     # -50 % beyond ... within a burst (100/s) + 50 % of 200
    c = {x.figure: x for x in model_checks(o, R())}["page_writes_per_s"]
    assert c.model == pytest.approx(400.0) and c.ok is True
    o.pages_written_per_s = 150.0     # 250/s apart: more than 100 + 75
    assert {x.figure: x for x in model_checks(o, R())}["page_writes_per_s"].ok is False
    R.internal = {}                   # no burst recorded: the plain tolerance
    o.pages_written_per_s = 300.0
    assert {x.figure: x for x in model_checks(o, R())}["page_writes_per_s"].ok is True
    o.pages_written_per_s = 200.0
    assert {x.figure: x for x in model_checks(o, R())}["page_writes_per_s"].ok is False


def test_a_window_between_bursts_is_not_a_miss():
    """A server that wrote nothing in the window, against a model that wrote one burst."""
    class R(_R):
        status = {"Innodb_data_fsyncs": 5000, "Innodb_pages_written": 600}
        internal = {"flush_batches": 2, "flush_burst_max_pages": 600}
    o = _observed()
    o.commits_per_s, o.seconds, o.pages_written_per_s = 1000.0, 6.0, 0.0
    assert {x.figure: x for x in model_checks(o, R())}["page_writes_per_s"].ok is True
    R.internal = {"flush_batches": 2, "flush_burst_max_pages": 300}   # two bursts apart
    assert {x.figure: x for x in model_checks(o, R())}["page_writes_per_s"].ok is False


def test_largest_burst_joins_passes_a_second_apart():
    from innoflush.simulator.measurement import largest_burst
    assert largest_burst([]) == 0
    assert largest_burst([(1.0, 400), (2.0, 300), (3.0, 300), (7.0, 500)]) == 1000
    assert largest_burst([(1.0, 400), (4.0, 450)]) == 450


def test_page_cleaner_bursts_are_counted_in_the_window():
    from innoflush.simulator import ServerConfig, ServerStart, Workload, simulate
    from tests.helpers.simprofiles import plp_ssd
    cfg = ServerConfig(flavor="mysql-9.7", log_bin=False, innodb_io_capacity=10000,
                       innodb_io_capacity_max=20000, innodb_buffer_pool_size=256 << 20)
    wl = Workload(connections=4, cpu_us_per_trx=100.0, client_us_per_trx=100.0,
                  pages_dirtied_per_trx=0.05, hot_page_share=0.3, tablespaces=4)
    r = simulate(cfg, wl, plp_ssd(), duration_s=6.0, seed=2,
                 start=ServerStart(checkpoint_age=12_000_000, dirty_pages=1200, uptime_s=4))
    burst = r.internal.get("flush_burst_max_pages", 0)
    assert 0 < burst <= r.status["Innodb_pages_written"]


# ---- candidates and ranges -----------------------------------------------------------------

def test_every_candidate_with_its_risk(profile_files):
    facts = facts_from_variables(MARIADB)
    from tests.helpers.simprofiles import consumer_ssd
    dev = device_from_profile(consumer_ssd())
    cands = {c.id: c for c in candidate_changes(facts, dev)}
    assert {"trx-commit=2", "trx-commit=0", "flush-method=fsync",
            "flush-method=O_DIRECT_NO_FSYNC"} <= set(cands)
    assert "power loss" in cands["trx-commit=2"].unsafe
    assert "volatile" in cands["flush-method=O_DIRECT_NO_FSYNC"].unsafe
    assert cands["flush-method=fsync"].unsafe is None
    f = Finding("trx-commit.relaxed-allows-2", "performance", "innodb_flush_log_at_trx_commit",
                "1", "2", [], "", False, [], sim_changes={"innodb_flush_log_at_trx_commit": 2})
    lst = list(cands.values())
    mark_advised(lst, [f])
    assert cands["trx-commit=2"].advised and cands["trx-commit=2"].finding == f.id
    assert not cands["trx-commit=0"].advised
    from innoflush.profiles import load_profile
    plp = device_from_profile(load_profile(profile_files["plp"]))
    safe = {c.id: c for c in candidate_changes(facts, plp)}
    assert safe["flush-method=O_DIRECT_NO_FSYNC"].unsafe is None


def test_range_variants_keep_or_drop_the_sleeping_commits_cpu():
    wl = Workload(connections=4, cpu_us_per_trx=100.0, client_us_per_trx=200.0,
                  client_cpu_us_per_trx=50.0, sleep_cpu_us=40.0)
    opt = _variant(wl, *SPREAD[0])
    pess = _variant(wl, *SPREAD[1])
    assert opt.cpu_us_per_trx < wl.cpu_us_per_trx < pess.cpu_us_per_trx
    assert opt.sleep_cpu_us > 0 and opt.commit_cpu_us == 0
    assert pess.sleep_cpu_us == 0 and pess.commit_cpu_us == pytest.approx(42.0)
    opt.validate()
    pess.validate()
    # a lone connection's floor at the quartiles of the days it was measured on
    from innoflush.advisor.round_trip import FLOOR_QUARTILES
    lone = replace(wl, connections=1, round_trip_floor_us=230.0)
    lo, hi = (_variant(lone, *v).round_trip_floor_us for v in SPREAD)
    assert lo < 230.0 < hi
    assert lo == pytest.approx(230.0 * FLOOR_QUARTILES[0])
    assert hi == pytest.approx(230.0 * FLOOR_QUARTILES[1])
    assert _variant(wl, *SPREAD[1]).round_trip_floor_us == 0.0   # no floor, none added


# ---- a lone connection's round trips (advisor/round_trip.py, live/handoff.py) ------------

def _handoff(free: float, pinned: float) -> dict:
    return {"round_trip_us": free, "pinned_us": pinned, "ratio": round(free / pinned, 2),
            "work_us": 10.0, "rounds": [[free, pinned]], "problem": None}


def test_a_slow_hand_off_gives_a_lone_connection_a_floor():
    from innoflush.advisor.round_trip import HANDOFF_ROUND_TRIPS, RATIO_MIN
    ev = _ev_with_cpu(300.0, inside=3200.0, wait=3000.0)
    ev.connections = Input(1.0, "measured", "test")
    ev.handoff = _handoff(80.0, 32.0)             # wake-ups make the round trip
    wl, inputs, _, _ = measured_workload(ev, _observed(), True)
    # the statement's own CPU (the sleep's cost out) and the hand-offs beside it
    per_statement = wl.cpu_us_per_trx / wl.statements_per_trx
    assert per_statement > 0
    assert wl.round_trip_floor_us == pytest.approx(per_statement + HANDOFF_ROUND_TRIPS * 80.0,
                                                   abs=0.1)
    assert inputs["round_trip_floor_us"]["source"] == "measured"
    assert "80 µs" in inputs["round_trip_floor_us"]["detail"]
    assert f"{per_statement:.0f} µs of server CPU" in inputs["round_trip_floor_us"]["detail"]
    # a host whose idle cores wake at once: no floor, and the input says why
    ev.handoff = _handoff(RATIO_MIN * 30.0 * 0.9, 30.0)
    wl, inputs, _, _ = measured_workload(ev, _observed(), True)
    assert wl.round_trip_floor_us == 0.0
    assert "wake at once" in inputs["round_trip_floor_us"]["detail"]
    # not measured (another host): no floor, the reason kept
    ev.handoff, ev.handoff_note = None, "not measured: the server is on another host"
    wl, inputs, _, _ = measured_workload(ev, _observed(), True)
    assert wl.round_trip_floor_us == 0.0
    assert inputs["round_trip_floor_us"]["source"] == "unknown"
    assert "another host" in inputs["round_trip_floor_us"]["detail"]
    # four connections keep the cores busy: never a floor, whatever the probe said
    ev.connections = Input(4.0, "measured", "test")
    ev.handoff = _handoff(80.0, 32.0)
    wl, _, _, _ = measured_workload(ev, _observed(), True)
    assert wl.round_trip_floor_us == 0.0


def test_a_statement_with_more_cpu_has_a_higher_floor():
    # a write_only statement (36 µs of CPU) and an insert (79) on the same day's probe:
    # the floor is the statement's CPU and the hand-offs, not a multiple of the probe
    from innoflush.advisor.round_trip import HANDOFF_ROUND_TRIPS, round_trip_floor
    h = _handoff(65.0, 28.0)
    light, _ = round_trip_floor(h, 1, "", 36.0)
    heavy, _ = round_trip_floor(h, 1, "", 79.0)
    assert heavy - light == pytest.approx(43.0, abs=0.2)
    assert light == pytest.approx(36.0 + HANDOFF_ROUND_TRIPS * 65.0, abs=0.1)
    # a negative CPU (a fit that took more out than it measured) never lowers the floor
    assert round_trip_floor(h, 1, "", -5.0)[0] == pytest.approx(HANDOFF_ROUND_TRIPS * 65.0,
                                                                abs=0.1)
    assert round_trip_floor(h, 4, "", 79.0)[0] == 0.0


def test_the_hand_off_probe_survives_a_report_round_trip():
    from innoflush.live.evidence import WorkloadEvidence
    ev = _ev_with_cpu(300.0)
    ev.handoff = _handoff(80.0, 32.0)
    back = WorkloadEvidence.from_dict(ev.to_dict())
    assert back.handoff == ev.handoff
    ev.handoff, ev.handoff_note = None, "not measured: one core only"
    d = ev.to_dict()
    assert d["handoff"] == {"problem": "not measured: one core only"}
    back = WorkloadEvidence.from_dict(d)
    assert back.handoff is None and back.handoff_note == "not measured: one core only"


def test_the_text_report_shows_the_hand_off_probe():
    from innoflush.output.advise_text import _workload_text
    w = {"seconds": 7.0, "commits": 2100, "commits_per_s": 300.0,
         "handoff": _handoff(80.0, 32.0)}
    row = [ln for ln in _workload_text(w) if "hand-off" in ln]
    assert row and "80.0" in row[0] and "×2.50" in row[0]
    w["handoff"] = {"problem": "not measured: the server is on another host"}
    assert any("another host" in ln for ln in _workload_text(w))
    # a capture never had a probe: no row saying so
    assert not any("hand-off" in ln for ln in _workload_text(w, captured=True))


def test_the_sleep_cost_fit_prices_as_the_advisor_does():
    # scripts/sleep_cost_fit.py prices every cell through sleep_cost's own functions; its
    # figures must be the ones the advisor uses, or the constants it prints are fitted to
    # another formula
    fit = load_script("sleep_cost_fit")
    p = {"wake_us": sc.SYNC_WAKE_US, "cores": sc.SLEEP_CORES, "growth": sc.SLEEP_GROWTH,
         "floor_at": sc.FLOOR_SHARE_AT, "floor_fall": sc.FLOOR_SHARE_FALL}
    # (before µs, after µs, commits asleep, syncs per commit, cores; commits/s)
    cells = [((300.0, 150.0, 0.9, 1.0, 2.0), 300.0),    # one connection, below the cap
             ((120.0, 80.0, 9.0, 0.25, 2.0), 3000.0),   # past the cap, 4 commits a sync
             ((100.0, 90.0, 0.0, 1.0, 2.0), 500.0)]     # nothing asleep
    rows = [{"run": "r", "tps": tps, "server": cell} for cell, tps in cells]
    got = fit.errors(rows, "server", p)
    for (cell, tps), e in zip(cells, got, strict=True):
        before, after, busy, wakes, cores = cell
        cost = server_sleep_cost_us(busy / tps * 1e6, tps, wakes * tps, cores)
        share = sc.floor_share(busy / tps * 1e6)
        assert e == pytest.approx(math.log(without_sleep(before, cost, share) / after))
