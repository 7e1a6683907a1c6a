"""Counter deltas: restarts, resets, commits, the sampling loop (no server needed)."""

from __future__ import annotations

import pytest

from innoflush.errors import UsageError
from innoflush.live.observed import estimate_commits, observe
from innoflush.live.sampling import SamplingError, Snapshot, combine, interval_between, sample

BASE = {"Uptime": 1000, "Uptime_since_flush_status": 1000, "Com_insert": 500,
        "Innodb_data_fsyncs": 900, "Innodb_log_writes": 880, "Innodb_os_log_written": 10**6,
        "Innodb_data_writes": 100, "Threads_running": 3, "Innodb_buffer_pool_pages_dirty": 50}


def snap(t, **changes):
    return Snapshot(t, {**BASE, **changes})


def test_valid_interval_deltas():
    iv = interval_between(0, snap(0), snap(2.0, Uptime=1002, Uptime_since_flush_status=1002,
                                           Com_insert=700, Innodb_data_fsyncs=1100,
                                           Innodb_buffer_pool_pages_dirty=40))
    assert iv.valid and iv.problem is None
    assert iv.deltas["Com_insert"] == 200 and iv.deltas["Innodb_data_fsyncs"] == 200
    assert "Threads_running" not in iv.deltas           # a gauge, not differenced
    assert iv.gauge_deltas["Innodb_buffer_pool_pages_dirty"] == -10   # gauges may fall


def test_restart_detected():
    iv = interval_between(0, snap(0), snap(2.0, Uptime=1, Uptime_since_flush_status=1,
                                           Com_insert=3, Innodb_data_fsyncs=5))
    assert not iv.valid and "restart" in iv.problem and iv.deltas == {}


def test_flush_status_detected():
    iv = interval_between(0, snap(0), snap(2.0, Uptime=1002, Uptime_since_flush_status=1,
                                           Com_insert=0))
    assert not iv.valid and "FLUSH STATUS" in iv.problem


def test_any_counter_decreasing_is_a_reset():
    # Uptime_since_flush_status missing (old server): a counter going down still counts
    a = Snapshot(0, {"Uptime": 10, "Innodb_data_fsyncs": 500, "Com_insert": 9})
    b = Snapshot(2, {"Uptime": 12, "Innodb_data_fsyncs": 20, "Com_insert": 12})
    iv = interval_between(0, a, b)
    assert not iv.valid and "Innodb_data_fsyncs" in iv.problem


def test_combine_skips_invalid_and_never_goes_negative():
    good = interval_between(0, snap(0), snap(2, Uptime=1002, Uptime_since_flush_status=1002,
                                             Com_insert=600))
    bad = interval_between(1, snap(2, Uptime=1002, Uptime_since_flush_status=1002,
                                   Com_insert=600),
                           snap(4, Uptime=1, Uptime_since_flush_status=1, Com_insert=1))
    total = combine([good, bad])
    assert total.seconds == 2 and total.deltas["Com_insert"] == 100
    assert all(v >= 0 for v in total.deltas.values())
    with pytest.raises(SamplingError, match="restart"):
        combine([bad])


@pytest.mark.parametrize("d, product, log_bin, expect, source", [
    ({"Binlog_commits": 40, "Com_insert": 40}, "mariadb", True, 40, "Binlog_commits"),
    ({"Binlog_cache_use": 30, "Com_commit": 30}, "mysql", True, 30, "Binlog_cache_use"),
    ({"Com_insert": 70, "Com_update": 20, "Com_delete": 10, "Handler_commit": 400},
     "mysql", False, 100, "autocommit"),
    ({"Com_commit": 25, "Com_insert": 75}, "mariadb", False, 25, "Com_commit"),
    ({"Binlog_commits": 0, "Com_insert": 5}, "mariadb", False, 5, "autocommit"),
])
def test_estimate_commits(d, product, log_bin, expect, source):
    commits, src, note = estimate_commits(d, product, log_bin)
    assert commits == expect and source in src
    if source == "Com_commit":
        assert note and "lower bound" in note


def test_observe_mariadb_redo_estimates():
    iv = interval_between(0, snap(0), snap(2, Uptime=1002, Uptime_since_flush_status=1002,
                                           Com_insert=700, Innodb_data_fsyncs=1090,
                                           Innodb_log_writes=1060))
    o = observe(iv, "mariadb", False, 1)
    assert o.redo_syncs_per_s == 90 and o.other_fsyncs_per_s == 5
    o2 = observe(iv, "mariadb", False, 2, flush_log_at_timeout=1.0)
    assert o2.redo_syncs_per_s == 1 and "flush_log_at_timeout" in o2.redo_syncs_source
    o3 = observe(iv, "mariadb", False, 1, redo_write_through=True)
    assert o3.redo_syncs_per_s == 0


class FakeStatusSession:
    def __init__(self, statuses):
        self.statuses = list(statuses)
        self.statements = []

    def query(self, sql, args=None):
        self.statements.append(sql)
        if sql == "SHOW GLOBAL STATUS":
            return list(self.statuses.pop(0).items())
        if sql.startswith("SHOW GLOBAL STATUS WHERE"):
            return [("Threads_running", 4), ("Innodb_data_pending_fsyncs", 1)]
        raise AssertionError(sql)


def test_sample_loop_with_polls(fake_clock):
    s0 = dict(BASE)
    s1 = {**BASE, "Uptime": 1003, "Uptime_since_flush_status": 1003, "Com_insert": 800}
    s2 = {**BASE, "Uptime": 1006, "Uptime_since_flush_status": 1006, "Com_insert": 1100}
    sess = FakeStatusSession([s0, s1, s2])
    ivs = sample(sess, interval_s=3, samples=2, poll_s=0.5)
    assert len(ivs) == 2 and all(iv.valid for iv in ivs)
    assert [iv.deltas["Com_insert"] for iv in ivs] == [300, 300]
    assert all(len(iv.polls["Threads_running"]) >= 4 for iv in ivs)
    assert all(s.startswith("SHOW") for s in sess.statements)
    o = observe(combine(ivs), "mysql", False, 1)
    assert o.commits_per_s == pytest.approx(100) and o.threads_running_avg == 3.0
    assert o.pending_fsyncs_max == 1


def test_interval_below_one_second_is_a_usage_error():
    with pytest.raises(UsageError, match="at least 1 second"):
        sample(FakeStatusSession([]), interval_s=0.5)
    with pytest.raises(UsageError):
        sample(FakeStatusSession([]), interval_s=2, samples=0)
