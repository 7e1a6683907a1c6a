"""Redo log: log_writer, log_flusher, leader-based log_write_up_to, log_checkpointer.

MySQL 8.0 runs dedicated log_writer and log_flusher threads (log0write.cc): the writer
writes whatever the log buffer holds, the flusher fsyncs up to what was written, and a
commit with innodb_flush_log_at_trx_commit=1 waits until flushed_lsn covers its LSN —
one sync releases every commit it covers (group commit). MySQL 5.7 and MariaDB have no
writer threads: the first committer to find the log unflushed becomes the leader, writes
and syncs for everybody queued behind it (log_write_up_to).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import simpy
from simpy.events import Event

from .buffer_pool import fil_flush_file_spaces
from .config import ServerConfig
from .events import SimGen, rearm, wake
from .flavors import PAGE_BYTES, Flavor
from .semaphore import Semaphore

if TYPE_CHECKING:
    from .server import Server

REDO_BLOCK = 512
LOG_WRITE_MAX_SIZE = 4096  # INNODB_LOG_WRITE_MAX_SIZE_DEFAULT (log0constants.h)
# How long after a redo write the log_flusher starts its sync: it spins or sleeps on an
# event, either way it notices a few µs late, and a write finished meanwhile joins the
# sync (log0write.cc; the spin-vs-sleep details are below this model's resolution).
FLUSHER_NOTICE_S = 5e-6
CHECKPOINT_WRITE_BYTES = 4096


def capacity_points(flavor: Flavor, log_bytes: int) -> tuple[int, int, int, int]:
    """(capacity, async flush age, sync flush age, stop age) of a redo log of log_bytes,
    checkpoint ages in bytes."""
    if flavor.mariadb_page_cleaner:
        # log_t::set_capacity (log0log.cc): capacity 90% of the file (less its header),
        # less 48 pages and 10%; async flush at 7/8 of that, sync flush at all of it
        capacity = log_bytes - 12288
        capacity -= capacity // 10
        margin = capacity - 48 * PAGE_BYTES
        margin -= margin // 10
        return capacity, margin - margin // 8, margin, margin
    # redo capacity points, as log0files_capacity.cc derives them from the capacity
    hard = log_bytes * 30 // 32
    soft = int(hard * 0.95)
    return hard, soft * 7 // 8, soft * 15 // 16, soft


class RedoLog:
    """The redo log: its LSNs (bytes), the events its waiters sleep on, its threads'
    wake-ups, the group commit leader's state and its capacity points."""

    __slots__ = ("env", "write_through", "direct", "lsn", "write_lsn", "flushed_lsn",
                 "checkpoint_lsn", "unsynced_bytes", "leader_busy", "flush_requested",
                 "stalled_users", "written_event", "flushed_event", "checkpoint_event",
                 "writer_wakeup", "flusher_wakeup", "checkpoint_request", "capacity",
                 "async_flush_age", "sync_flush_age", "stop_age", "in_data_writes",
                 "last_block_apart")

    def __init__(self, env: simpy.Environment, flavor: Flavor, config: ServerConfig):
        self.env = env
        self.write_through = flavor.io_policy(config.innodb_flush_method).redo_write_through
        self.direct = flavor.redo_is_direct(config.innodb_flush_log_at_trx_commit,
                                            config.innodb_log_file_buffering)
        self.lsn = self.write_lsn = self.flushed_lsn = self.checkpoint_lsn = 0
        self.unsynced_bytes = 0
        self.in_data_writes = flavor.data_writes_include_redo
        self.last_block_apart = flavor.redo_last_block_apart
        self.leader_busy = False
        self.flush_requested = 0   # an LSN a page write waits to see durable
        self.stalled_users = 0     # users waiting in log_free_check
        self.written_event = env.event()
        self.flushed_event = env.event()
        self.checkpoint_event = env.event()
        self.writer_wakeup: Event | None = None
        self.flusher_wakeup: Event | None = None
        self.checkpoint_request: Event | None = None
        (self.capacity, self.async_flush_age, self.sync_flush_age,
         self.stop_age) = capacity_points(flavor, config.innodb_redo_log_capacity)

    def start_at(self, age: int) -> None:
        """A log with `age` bytes of redo since its checkpoint, all of it durable."""
        self.lsn = self.write_lsn = self.flushed_lsn = age
        self.checkpoint_lsn = 0

    def checkpoint_age(self) -> int:
        return self.lsn - self.checkpoint_lsn

    def mark_written(self) -> None:
        ev = self.written_event
        if ev.callbacks:  # nobody waiting: keep the event, schedule nothing
            self.written_event = self.env.event()
            wake(ev)

    def mark_flushed(self, upto: int) -> None:
        if upto > self.flushed_lsn:
            self.flushed_lsn = upto
        ev = self.flushed_event
        if ev.callbacks:
            self.flushed_event = self.env.event()
            wake(ev)

    def mark_checkpoint(self, lsn: int) -> None:
        self.checkpoint_lsn = max(self.checkpoint_lsn, lsn)
        ev = self.checkpoint_event
        if ev.callbacks:
            self.checkpoint_event = self.env.event()
            wake(ev)



def redo_write(srv: Server, upto: int) -> SimGen[None]:
    """Write the log buffer up to `upto`: whole log blocks from the one the last write
    ended in (one write call), or write-and-sync under O_DSYNC. MySQL 8.0+ writes the
    complete blocks straight from the log buffer and the incomplete last one apart,
    through its write-ahead buffer (log0write.cc, log_writer_write_buffer): two calls
    once a write crosses a block (RedoLog.last_block_apart)."""
    log = srv.redo
    c = srv.counters
    apart = 0      # the incomplete last block's own call, where there is one
    if log.last_block_apart:
        blocks = max(1, -(-upto // REDO_BLOCK) - log.write_lsn // REDO_BLOCK)
        if blocks > 1 and upto % REDO_BLOCK:
            apart = REDO_BLOCK
            blocks -= 1
        size = blocks * REDO_BLOCK
    else:
        size = max(REDO_BLOCK, -(-(upto - log.write_lsn) // REDO_BLOCK) * REDO_BLOCK)
    calls = 2 if apart else 1
    c["Innodb_log_writes"] += calls
    c["Innodb_os_log_written"] += size + apart
    if log.in_data_writes:
        c["Innodb_data_writes"] += calls
        c["Innodb_data_written"] += size + apart
    if log.write_through:
        yield from srv.device.dsync_write(size, log.direct)
        if apart:
            yield from srv.device.dsync_write(apart, log.direct)
        yield from srv.woken()
        if srv.redo_io_requeues:
            yield from srv.device_woken()
        if upto > log.write_lsn:
            log.write_lsn = upto
        log.unsynced_bytes = 0
        log.mark_flushed(upto)
        srv.count("redo_syncs")
    else:
        yield from srv.device.write(size, log.direct, apart)
        if log.direct and srv.redo_io_requeues:
            # the O_DIRECT write slept on the device; buffered, it did not
            yield from srv.device_woken()
        if upto > log.write_lsn:
            log.write_lsn = upto
        log.unsynced_bytes += size + apart
    log.mark_written()


def redo_sync(srv: Server, upto: int, pre_cpu: bool = True) -> SimGen[None]:
    """fsync/fdatasync the redo log; makes everything written up to `upto` durable.
    pre_cpu=False: the caller charged the first half of the call's CPU already."""
    log = srv.redo
    if log.write_through:
        return
    size = log.unsynced_bytes if log.unsynced_bytes > REDO_BLOCK else REDO_BLOCK
    log.unsynced_bytes = 0
    yield from srv.commit_sync(srv.sync_op, size, log.direct, pre_cpu, srv.redo_io_requeues)
    c = srv.counters
    c["Innodb_data_fsyncs"] += 1
    c["Innodb_os_log_fsyncs"] += 1
    c["redo_syncs"] += 1
    log.mark_flushed(upto)


def log_writer(srv: Server) -> SimGen[None]:
    """MySQL 8.0's log_writer thread: writes as soon as there is something to write.

    Following the links of the recent-written buffer it stops once it has at least
    innodb_log_write_max_size (4 KB) to write (log0write.cc), so a write covers whole
    mini-transactions of about 4 KB: heavy redo means many writes, each counted.
    """
    log, env = srv.redo, srv.env
    chunk = max(LOG_WRITE_MAX_SIZE, srv.workload.redo_bytes_per_trx)
    on_demand = srv.trx_commit == 1
    wakeup = env.event()
    while True:
        if log.lsn <= log.write_lsn:
            log.writer_wakeup = rearm(wakeup)
            yield wakeup
            continue
        upto = log.write_lsn + chunk
        if log.lsn < upto:   # (min() spelt out: a call less per write)
            upto = log.lsn
        yield from redo_write(srv, upto)
        if on_demand:
            wake(log.flusher_wakeup)


def log_flusher(srv: Server) -> SimGen[None]:
    """MySQL 8.0's log_flusher: on every write for trx_commit=1, else once per timeout —
    or at once for a page write that needs its redo durable (the write-ahead rule)."""
    env, log = srv.env, srv.redo
    tick = env.now + srv.config.innodb_flush_log_at_timeout
    on_demand = env.event()   # (yielded alone: rearmed, where the timed wait's is not)
    while True:
        if srv.trx_commit == 1:
            if log.flushed_lsn >= log.write_lsn:
                log.flusher_wakeup = wakeup = rearm(on_demand)
                yield wakeup
                if log.lsn > log.write_lsn:  # the writer has more: it may finish meanwhile
                    yield env.timeout(FLUSHER_NOTICE_S)
                continue
        else:
            if not log.flush_requested:
                log.flusher_wakeup = wakeup = env.event()
                yield env.any_of([env.timeout(max(0.0, tick - env.now)), wakeup])
            if env.now >= tick:
                tick = env.now + srv.config.innodb_flush_log_at_timeout
            if log.flush_requested:
                upto, log.flush_requested = log.flush_requested, 0
                while log.write_lsn < upto:  # the writer is at it: sync what it wrote
                    yield log.written_event
            if log.flushed_lsn >= log.write_lsn:
                continue
        yield from redo_sync(srv, log.write_lsn)


def log_write_up_to(srv: Server, upto: int, flush: bool,
                    on_cpu: Semaphore | None = None) -> SimGen[None]:
    """Wait until the redo is written (and synced, if flush) up to `upto`.

    With writer threads this only waits for them. Without, the caller becomes the group
    commit leader when nobody else is at it, as in MySQL 5.7 / MariaDB log_write_up_to.
    on_cpu: the pool of the core the caller still holds (the one it ran its transaction
    on), or None; a leader makes its write and sync calls from it, anyone who blocks
    gives it up.
    """
    log = srv.redo
    if srv.log_writer_threads:
        if on_cpu:
            srv.cpu_release(on_cpu)
        # The log_writer/log_flusher threads do the work; a commit only wakes and waits.
        # (A flush request only comes with trx_commit=1, when the flusher runs on demand.)
        wake(log.writer_wakeup)
        while (log.flushed_lsn if flush else log.write_lsn) < upto:
            yield log.flushed_event if flush else log.written_event
            if srv.wakeup_s:   # Server.woken, inlined
                yield srv.env.timeout(srv.wakeup_s)
        return
    while (log.flushed_lsn if flush else log.write_lsn) < upto:
        if log.leader_busy:
            if on_cpu:
                srv.cpu_release(on_cpu)
                on_cpu = None
            # asleep until the leader releases the group; whoever is still not covered
            # then becomes the next leader, a wake-up later (group_commit_lock)
            yield log.flushed_event if flush else log.written_event
            yield from srv.woken()
            continue
        log.leader_busy = True
        # The leader takes everything buffered so far. (MariaDB's writes up to the LSN
        # of the moment it writes, after its call's CPU; but the model's transactions
        # have no jitter, and two connections that could join in that window would
        # stay in lockstep, sharing every sync, where a real server's alternate.)
        target = log.lsn
        pre = srv.sync_cpu_half_s if flush and not log.write_through else 0.0
        if on_cpu:
            if pre:
                yield from srv.still_on_cpu(pre)
            srv.cpu_release(on_cpu)
            on_cpu = None
        elif pre:  # a woken follower that became the leader
            yield from srv.on_cpu(pre, pool=srv.server_cpu)
        if log.write_lsn < target:
            yield from redo_write(srv, target)
        if flush and log.flushed_lsn < target:
            yield from redo_sync(srv, target, pre_cpu=False)
        log.leader_busy = False
        # wake anyone who queued for the other event kind: a write-only leader leaves
        # the group to whoever needs a sync (a page write, a checkpoint)
        log.mark_written()
        if not flush:
            log.mark_flushed(log.flushed_lsn)
    if on_cpu:
        srv.cpu_release(on_cpu)


def log_flush_for_page_write(srv: Server, upto: int | None = None) -> SimGen[None]:
    """The write-ahead rule (buf_page_t::flush, buf_flush_write_block_low): a page is
    written only once the redo up to its newest modification is durable. A flush batch
    holds pages modified a moment ago (index roots, the tablespace header, hot leaves),
    so unless commits keep the redo synced the batch waits for a sync of all of it.
    upto: the newest modification the pages to write can have (default: the log's end)."""
    log = srv.redo
    if upto is None:
        upto = log.lsn
    if log.flushed_lsn >= upto:
        return
    srv.count("page_write_log_flushes")
    if not srv.log_writer_threads:
        yield from log_write_up_to(srv, upto, flush=True)
        return
    log.flush_requested = max(log.flush_requested, upto)
    wake(log.writer_wakeup)
    wake(log.flusher_wakeup)
    while log.flushed_lsn < upto:
        yield log.flushed_event


def srv_master_log_flush(srv: Server) -> SimGen[None]:
    """Once per innodb_flush_log_at_timeout: write and sync the redo (trx_commit 0 and 2)."""
    log = srv.redo
    while True:
        yield srv.env.timeout(srv.config.innodb_flush_log_at_timeout)
        if log.flushed_lsn >= log.lsn or log.leader_busy:
            continue
        log.leader_busy = True
        target = log.lsn
        if log.write_lsn < target:
            yield from redo_write(srv, target)
        if log.flushed_lsn < target:
            yield from redo_sync(srv, target)
        log.leader_busy = False
        log.mark_written()


def log_free_check(srv: Server) -> SimGen[None]:
    """Users wait while the checkpoint age is past the point where redo would run out."""
    log = srv.redo
    if log.checkpoint_age() < log.stop_age:
        return
    start = srv.env.now
    log.stalled_users += 1
    wake(log.checkpoint_request)
    while log.checkpoint_age() >= log.stop_age:
        yield log.checkpoint_event
    log.stalled_users -= 1
    srv.measurement.stalled(srv.env.now - start)


def log_checkpointer(srv: Server) -> SimGen[None]:
    """Advance the checkpoint once per interval, or at once when users wait for redo space.
    MariaDB's page cleaner checkpoints after each of its passes itself: there this thread
    only answers the users' requests."""
    env, log = srv.env, srv.redo
    interval = srv.flavor.checkpoint_interval_s
    while True:
        log.checkpoint_request = request = env.event()
        if srv.flavor.mariadb_page_cleaner:
            yield request
        else:
            yield env.any_of([env.timeout(interval), request])
        yield from log_checkpoint(srv)


def oldest_dirty_lsn(srv: Server) -> int:
    """The checkpoint may not pass a page that is dirty or still being written."""
    oldest = srv.buf_pool.oldest_modification()
    return srv.redo.lsn if oldest is None else oldest


def log_checkpoint(srv: Server) -> SimGen[None]:
    log = srv.redo
    target = min(oldest_dirty_lsn(srv), log.flushed_lsn)
    if srv.flavor.files_synced_at_checkpoint:
        # log_checkpoint: the data files written since their last sync first (none are
        # marked under O_DIRECT_NO_FSYNC)
        yield from fil_flush_file_spaces(srv)
    if srv.flavor.mariadb_page_cleaner:
        oldest = oldest_dirty_lsn(srv)
        if oldest <= log.checkpoint_lsn:
            return
        # log_checkpoint_low: the FILE_CHECKPOINT record is appended and the redo made
        # durable up to it — to the current end of the log, an extra sync whenever commits
        # do not sync themselves (trx_commit 0 and 2)
        if log.flushed_lsn < log.lsn and not log.write_through:
            yield from log_write_up_to(srv, log.lsn, flush=True)
        target = min(oldest, log.flushed_lsn)
    if target <= log.checkpoint_lsn:
        return
    srv.count("checkpoints")
    srv.count("Innodb_log_writes")
    if srv.flavor.data_writes_include_redo:
        srv.count("Innodb_data_writes")
        srv.count("Innodb_data_written", CHECKPOINT_WRITE_BYTES)
    if log.write_through:
        yield from srv.device.dsync_write(CHECKPOINT_WRITE_BYTES, log.direct)
    else:
        yield from srv.device.write(CHECKPOINT_WRITE_BYTES, log.direct)
        yield from srv.device.sync(srv.sync_op, CHECKPOINT_WRITE_BYTES, log.direct)
        srv.count("Innodb_data_fsyncs")
        srv.count("Innodb_os_log_fsyncs")
        srv.count("checkpoint_syncs")
    log.mark_checkpoint(target)
