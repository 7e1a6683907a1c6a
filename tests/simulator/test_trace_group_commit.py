"""scripts/trace_group_commit.py's reading of `perf script` output (pure: no perf here)."""

from __future__ import annotations

import pytest

from tests.helpers.scripts_loader import load_script


def line(comm: str, tid: int, t: float, event: str, rest: str) -> str:
    return f"{comm:>16} {tid:5d} [000] {t:.6f}: {event:>28}: {rest}"


def cycle(t0: float, tid: int, fd: int = 12) -> list[str]:
    """One leader: its O_DIRECT write sleeps 100 µs and waits 50 to run; its fdatasync
    sleeps 200 µs and waits 30."""
    return [
        line("mariadbd", tid, t0, "syscalls:sys_enter_pwrite64",
             f"fd: 0x{fd:08x}, buf: 0x1, count: 0x00001000, pos: 0x0"),
        line("swapper", 0, t0 + 100e-6, "sched:sched_wakeup",
             f"comm=mariadbd pid={tid} prio=120 target_cpu=000"),
        line("mariadbd", tid, t0 + 150e-6, "syscalls:sys_exit_pwrite64", "0x1000"),
        line("mariadbd", tid, t0 + 160e-6, "syscalls:sys_enter_fdatasync", f"fd: 0x{fd:08x}"),
        line("swapper", 0, t0 + 360e-6, "sched:sched_wakeup",
             f"comm=mariadbd pid={tid} prio=120 target_cpu=001"),
        line("mariadbd", tid, t0 + 390e-6, "syscalls:sys_exit_fdatasync", "0x0"),
    ]


def test_redo_cycle_splits_each_call_at_the_wake_up():
    mod = load_script("trace_group_commit")
    lines = []
    for i in range(5):   # a sync every 500 µs, leaders taking turns
        lines += cycle(1.0 + i * 500e-6, 100 + i % 2)
    # another file's sync (the binlog) is not the redo log's
    lines += cycle(1.0001, 200, fd=21)
    r = mod.redo_cycle("\n".join(lines), redo_fd=12)
    assert r["write_device_us"] == pytest.approx(100, abs=0.2)
    assert r["write_wait_us"] == pytest.approx(50, abs=0.2)
    assert r["sync_device_us"] == pytest.approx(200, abs=0.2)
    assert r["sync_wait_us"] == pytest.approx(30, abs=0.2)
    assert r["cycle_us"] == pytest.approx(500, abs=0.2)
    assert r["syncs_per_s"] == pytest.approx(5 / r["seconds"])


def test_a_call_that_never_slept_has_no_device_part():
    mod = load_script("trace_group_commit")
    lines = [line("mariadbd", 7, 2.0, "syscalls:sys_enter_fdatasync", "fd: 0x0000000c"),
             line("mariadbd", 7, 2.00001, "syscalls:sys_exit_fdatasync", "0x0")]
    r = mod.redo_cycle("\n".join(lines), redo_fd=12)
    assert r["sync_device_us"] is None and r["sync_wait_us"] is None
    assert r["cycle_us"] is None


def test_run_queue_wait_per_run_counts_threads_present_at_both_ends():
    mod = load_script("trace_group_commit")
    before = {1: (0, 1_000, 10), 2: (0, 5_000, 4), 3: (0, 0, 1)}
    after = {1: (9, 301_000, 20), 2: (9, 105_000, 14), 4: (9, 900_000, 99)}
    # threads 1 and 2: 400 µs waited over 20 runs; 3 ended, 4 started meanwhile
    assert mod.runqueue_us_per_run(before, after) == pytest.approx(20.0)
    assert mod.runqueue_us_per_run({}, after) is None


def test_syncs_are_counted_by_the_file_their_fd_points_at():
    mod = load_script("trace_group_commit")
    links = {"12": "/var/tmp/d/ib_logfile0", "21": "/var/tmp/d/sbtest/sbtest1.ibd",
             "3": "/var/tmp/d/ibdata1"}
    lines = [line("mariadbd", 7, 1.0, "syscalls:sys_enter_fdatasync", "fd: 0x0000000c"),
             line("mariadbd", 7, 1.1, "syscalls:sys_exit_fdatasync", "0x0"),
             line("ib_pg_flush_co", 9, 1.2, "syscalls:sys_enter_fdatasync", "fd: 0x00000015"),
             line("ib_pg_flush_co", 9, 1.3, "syscalls:sys_enter_fsync", "fd: 0x00000003"),
             line("mariadbd", 7, 1.4, "syscalls:sys_enter_fdatasync", "fd: 0x0000000c"),
             # another process's sync on an fd of the same number is not the server's
             line("sysbench", 500, 1.5, "syscalls:sys_enter_fdatasync", "fd: 0x0000000c"),
             line("mariadbd", 7, 1.6, "syscalls:sys_enter_pwrite64", "fd: 0x0000000c")]
    counts = mod.syncs_by_file("\n".join(lines), links, tids={7, 9})
    assert counts == {"ib_logfile0": 2, "sbtest1.ibd": 1, "ibdata1": 1}


def test_syncs_are_told_apart_by_the_thread_that_made_them():
    mod = load_script("trace_group_commit")
    links = {"12": "/var/tmp/d/ib_logfile0", "21": "/var/tmp/d/sbtest/sbtest1.ibd"}

    def write(tid: int, t: float, pos: int) -> str:
        return line("mariadbd", tid, t, "syscalls:sys_enter_pwrite64",
                    f"fd: 0x0000000c, buf: 0x1, count: 0x00001000, pos: 0x{pos:x}")

    def sync(tid: int, t: float, fd: int) -> str:
        return line("mariadbd", tid, t, "syscalls:sys_enter_fdatasync", f"fd: 0x{fd:08x}")

    lines = [
        # the page cleaner: two write-ahead syncs, a data file, the checkpoint's two
        sync(5, 1.0, 12), sync(5, 1.003, 12), sync(5, 1.004, 21), sync(5, 1.005, 12),
        write(5, 1.006, 8192), sync(5, 1.007, 12),
        # a connection at trx_commit=2 writes the redo's records past 12288, and extends
        # its table (two syncs)
        write(7, 1.1, 12288), write(7, 1.2, 16384), sync(7, 1.3, 21), sync(7, 1.31, 21),
        # the timer's once-a-second flush, from a pool thread that writes nothing
        sync(9, 1.5, 12),
        # not the server's
        sync(500, 1.6, 12)]
    roles = mod.syncs_by_role("\n".join(lines), links, tids={5, 7, 9})
    assert roles == {
        "writes the checkpoint": {"threads": 1, "redo_syncs": 4, "data_syncs": 1},
        "writes the redo's records": {"threads": 1, "redo_syncs": 0, "data_syncs": 2},
        "other": {"threads": 1, "redo_syncs": 1, "data_syncs": 0}}


class _StatusCursor:
    """SHOW GLOBAL STATUS as a cursor returns it, one scripted checkpoint age per read."""

    def __init__(self, ages):
        self.ages = list(ages)

    def execute(self, sql):
        assert sql == "SHOW GLOBAL STATUS"

    def fetchall(self):
        age = self.ages.pop(0) if len(self.ages) > 1 else self.ages[0]
        return [("Innodb_checkpoint_age", "" if age is None else str(age)),
                ("Innodb_pages_written", "7"), ("Uptime", "9")]


def test_settle_waits_for_the_page_cleaner_at_work(monkeypatch):
    mod = load_script("trace_group_commit")
    monkeypatch.setattr(mod.time, "sleep", lambda s: None)   # no waits between reads
    # the age climbs to the async point
    r = mod.settle(_StatusCursor([10, 50, 100, 120]), target=100, limit_s=5)
    assert (r["reached"], r["how"]) == (True, "async_point")
    # a cleaner woken earlier: the age fell (a checkpoint) far below the point
    r = mod.settle(_StatusCursor([10, 20, 15]), target=100, limit_s=5)
    assert (r["reached"], r["how"]) == (True, "age_fell")
    # neither within the limit
    r = mod.settle(_StatusCursor([10, 11, 12, 13]), target=10**9, limit_s=0.01)
    assert r["reached"] is False and r["how"] is None
    # a server that shows no age
    assert mod.settle(_StatusCursor([None]), target=100, limit_s=1)["reached"] is None
    assert mod.read_status(_StatusCursor([5])) == {"Innodb_checkpoint_age": 5,
                                                    "Innodb_pages_written": 7}
