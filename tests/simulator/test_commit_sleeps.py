"""A commit's path with two syncs (redo and binary log): how often its commits slept,
and the share of the sleeping cost a setting with one sync of the two keeps."""

from __future__ import annotations

from dataclasses import replace

import pytest

from innoflush.advisor.measured import commit_sleeps
from innoflush.live.observed import Observed
from innoflush.simulator import ServerConfig, Workload, simulate
from innoflush.simulator.config import commit_sleep_share
from tests.helpers.simprofiles import plp_ssd


def _observed(per_redo_sync: float | None, per_binlog_group: float | None = None) -> Observed:
    return Observed.from_dict({
        "seconds": 5.0, "intervals": 1, "commits": 5000, "commits_per_s": 1000.0,
        "commits_source": "test", "commits_note": None, "data_fsyncs_per_s": 1000.0,
        "data_writes_per_s": 2000.0, "data_fsyncs_per_data_write": 0.5,
        "data_writes_include_redo": True, "redo_syncs_per_s": 1000.0,
        "redo_syncs_source": "test", "other_fsyncs_per_s": 0.0,
        "log_writes_per_commit": 1.0, "os_log_fsyncs_per_commit": 1.0,
        "redo_bytes_per_commit": 800.0, "commits_per_redo_sync": per_redo_sync,
        "binlog_commits_per_group": per_binlog_group, "binlog_bytes_per_commit": None,
        "dblwr_writes_per_s": 0.0, "dblwr_pages_per_s": 0.0, "dblwr_pages_per_write": None,
        "pages_written_per_s": 0.0, "pages_flushed_per_s": 0.0,
        "page_writes_per_commit": 0.0, "pages_dirtied_per_commit": 0.0,
        "rows_inserted_per_commit": 1.0, "threads_running_avg": 1.0,
        "pending_fsyncs_max": 1, "pending_fsyncs_avg": 0.5, "deltas": {},
        "gauge_deltas": {}, "start_gauges": {}, "notes": []})


def test_commit_syncs_counts_the_redo_and_the_binlog():
    assert ServerConfig(innodb_flush_log_at_trx_commit=1, log_bin=False).commit_syncs() == 1
    assert ServerConfig(innodb_flush_log_at_trx_commit=1, log_bin=True,
                        sync_binlog=1).commit_syncs() == 2
    assert ServerConfig(innodb_flush_log_at_trx_commit=2, log_bin=True,
                        sync_binlog=1).commit_syncs() == 1
    assert ServerConfig(innodb_flush_log_at_trx_commit=1, log_bin=True,
                        sync_binlog=4).commit_syncs() == 1.25
    assert ServerConfig(innodb_flush_log_at_trx_commit=2, log_bin=True,
                        sync_binlog=0).commit_syncs() == 0


@pytest.mark.parametrize("per_sync, expected", [(0.98, 2.0), (1.0, 2.0), (4.0, 1.25),
                                                (None, 2.0)])
def test_a_leader_sleeps_twice_its_followers_once(per_sync, expected):
    assert commit_sleeps(_observed(per_sync), 2.0) == expected


def test_one_sync_on_the_path_is_one_sleep():
    assert commit_sleeps(_observed(1.0), 1.0) == 1.0


def test_the_binlog_groups_count_where_the_server_shows_them():
    # MariaDB counts its binary log groups: they, not the redo syncs, make the group
    assert commit_sleeps(_observed(0.5, 5.0), 2.0) == 1.2


def test_share_kept_by_a_setting_with_one_sync_of_two():
    wl = Workload(commit_sleeps=2.0)
    both = ServerConfig(innodb_flush_log_at_trx_commit=1, log_bin=True, sync_binlog=1)
    assert commit_sleep_share(both, wl) == 1.0
    assert commit_sleep_share(replace(both, sync_binlog=0), wl) == 0.5
    assert commit_sleep_share(replace(both, innodb_flush_log_at_trx_commit=2), wl) == 0.5
    # measured with one sync: whatever the setting, all of it (nothing to scale from)
    assert commit_sleep_share(replace(both, sync_binlog=0), Workload()) == 1.0


def test_sync_binlog_off_gives_back_the_binlog_sleep():
    """A commit that slept twice (one connection: always the leader) costs 300 µs of
    CPU asleep; with sync_binlog 1 -> 0 half of it goes, and the transactions speed up
    beyond what the binlog's sync alone was worth."""
    wl = Workload(connections=1, cpu_us_per_trx=100.0, client_us_per_trx=50.0,
                  sleep_cpu_us=300.0, pages_dirtied_per_trx=0.01, tablespaces=2)
    cfg = ServerConfig(flavor="mysql-9.7", innodb_flush_log_at_trx_commit=1, log_bin=True,
                       sync_binlog=0, cpu_cores=2)
    once = simulate(cfg, wl, plp_ssd(), duration_s=1.0, seed=3)
    twice = simulate(cfg, replace(wl, commit_sleeps=2.0), plp_ssd(), duration_s=1.0,
                     seed=3)
    assert twice.tps > once.tps * 1.2


def test_commit_sleeps_below_one_is_refused():
    from innoflush.errors import UsageError
    with pytest.raises(UsageError):
        Workload(commit_sleeps=0.5).validate()
