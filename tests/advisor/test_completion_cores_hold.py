"""advise's fit keeps the completion-core split only where the connection threads fit
on those cores (advisor.fit.completion_cores_hold; pure)."""

from innoflush.advisor.fit import completion_cores_hold
from innoflush.live.evidence import Input, unknown
from innoflush.simulator import ServerConfig

SPLIT = ServerConfig(cpu_cores=2, io_completion_cores=1)


def test_threads_that_fit_on_the_completion_core_keep_the_split():
    # 120 us a commit at 4,000 commits/s: 0.48 of a core
    cfg, why = completion_cores_hold(SPLIT, Input(120.0, "/proc", "threads"), 4000.0)
    assert cfg.io_completion_cores == 1 and why is None


def test_threads_that_used_more_than_the_completion_core_run_on_every_core():
    # sysbench oltp_insert, 16 threads, this host's disk: 123 us x 9,163 commits/s
    cfg, why = completion_cores_hold(SPLIT, Input(123.0, "/proc", "threads"), 9163.0)
    assert cfg.io_completion_cores is None
    assert "1.13 cores" in why and "(/proc)" in why
    assert cfg.cpu_cores == 2 and cfg.innodb_flush_method == SPLIT.innodb_flush_method


def test_the_boundary_is_the_cores_capacity():
    at = completion_cores_hold(SPLIT, Input(250.0, "/proc", "t"), 4000.0)[0]
    above = completion_cores_hold(SPLIT, Input(250.1, "/proc", "t"), 4000.0)[0]
    assert at.io_completion_cores == 1 and above.io_completion_cores is None


def test_two_completion_cores_hold_more():
    four = ServerConfig(cpu_cores=4, io_completion_cores=2)
    assert completion_cores_hold(four, Input(150.0, "/proc", "t"), 9000.0)[0] \
        .io_completion_cores == 2          # 1.35 cores of 2
    assert completion_cores_hold(four, Input(250.0, "/proc", "t"), 9000.0)[0] \
        .io_completion_cores is None       # 2.25 of 2


def test_a_cpu_figure_nobody_measured_changes_nothing():
    for cpu in (unknown("no /proc"), Input(900.0, "estimated", "a bound"),
                Input(900.0, "default", "d")):
        cfg, why = completion_cores_hold(SPLIT, cpu, 9000.0)
        assert cfg is SPLIT and why is None
    no_split = ServerConfig(cpu_cores=2)
    assert completion_cores_hold(no_split, Input(900.0, "/proc", "t"), 9000.0) == \
        (no_split, None)
    assert completion_cores_hold(SPLIT, Input(900.0, "/proc", "t"), 0.0) == (SPLIT, None)


def test_threads_that_never_slept_say_nothing_of_sleeping_ones():
    # trx_commit=2, binlog off: no commit sleeps, 1.8 cores used; the price of
    # trx_commit=1 is simulated with the split
    no_sleep = ServerConfig(cpu_cores=2, io_completion_cores=1,
                            innodb_flush_log_at_trx_commit=2, log_bin=False)
    assert completion_cores_hold(no_sleep, Input(150.0, "/proc", "t"), 12000.0) == \
        (no_sleep, None)
    binlog_sync = ServerConfig(cpu_cores=2, io_completion_cores=1,
                               innodb_flush_log_at_trx_commit=2, log_bin=True, sync_binlog=1)
    assert completion_cores_hold(binlog_sync, Input(150.0, "/proc", "t"), 12000.0)[0] \
        .io_completion_cores is None       # its commits sleep on the binlog's sync
