"""Redo log: log_writer, log_flusher, leader-based log_write_up_to, log_checkpointer.

MySQL 8.0 runs dedicated log_writer and log_flusher threads (log0write.cc): the writer
writes whatever the log buffer holds, the flusher fsyncs up to what was written, and a
commit with innodb_flush_log_at_trx_commit=1 waits until flushed_lsn covers its LSN —
one sync releases every commit it covers (group commit). MySQL 5.7 and MariaDB have no
writer threads: the first committer to find the log unflushed becomes the leader, writes
and syncs for everybody queued behind it (log_write_up_to).
"""

from __future__ import annotations

from .events import wake

REDO_BLOCK = 512
LOG_WRITE_MAX_SIZE = 4096  # INNODB_LOG_WRITE_MAX_SIZE_DEFAULT (log0constants.h)
# How long after a redo write the log_flusher starts its sync: it spins or sleeps on an
# event, either way it notices a few µs late, and a write finished meanwhile joins the
# sync (log0write.cc; the spin-vs-sleep details are below this model's resolution).
FLUSHER_NOTICE_S = 5e-6
CHECKPOINT_WRITE_BYTES = 4096


def _round_block(n: int) -> int:
    return max(REDO_BLOCK, -(-n // REDO_BLOCK) * REDO_BLOCK)


def redo_write(srv, upto: int):
    """Write the log buffer up to `upto` (one write call), or write-and-sync under O_DSYNC."""
    size = _round_block(upto - srv.write_lsn)
    c = srv.counters
    c["Innodb_log_writes"] += 1
    c["Innodb_os_log_written"] += size
    if srv.flavor.data_writes_include_redo:
        c["Innodb_data_writes"] += 1
        c["Innodb_data_written"] += size
    if srv.redo_write_through:
        yield from srv.device.dsync_write(size, srv.redo_direct)
        yield from srv.woken()
        srv.write_lsn = max(srv.write_lsn, upto)
        srv.unsynced_redo_bytes = 0
        srv.mark_flushed(upto)
        srv.count("redo_syncs")
    else:
        yield from srv.device.write(size, srv.redo_direct)
        srv.write_lsn = max(srv.write_lsn, upto)
        srv.unsynced_redo_bytes += size
    srv.mark_written()


def redo_sync(srv, upto: int, pre_cpu: bool = True):
    """fsync/fdatasync the redo log; makes everything written up to `upto` durable.
    pre_cpu=False: the caller charged the first half of the call's CPU already."""
    if srv.redo_write_through:
        return
    size = max(REDO_BLOCK, srv.unsynced_redo_bytes)
    srv.unsynced_redo_bytes = 0
    yield from srv.commit_sync(srv.sync_op, size, srv.redo_direct, pre_cpu)
    c = srv.counters
    c["Innodb_data_fsyncs"] += 1
    c["Innodb_os_log_fsyncs"] += 1
    c["redo_syncs"] += 1
    srv.mark_flushed(upto)


def log_writer(srv):
    """MySQL 8.0's log_writer thread: writes as soon as there is something to write.

    Following the links of the recent-written buffer it stops once it has at least
    innodb_log_write_max_size (4 KB) to write (log0write.cc), so a write covers whole
    mini-transactions of about 4 KB: heavy redo means many writes, each counted.
    """
    chunk = max(LOG_WRITE_MAX_SIZE, srv.workload.redo_bytes_per_trx)
    while True:
        if srv.lsn <= srv.write_lsn:
            srv.writer_wakeup = srv.env.event()
            yield srv.writer_wakeup
            continue
        yield from redo_write(srv, min(srv.lsn, srv.write_lsn + chunk))
        if srv.trx_commit == 1:
            wake(srv.flusher_wakeup)


def log_flusher(srv):
    """MySQL 8.0's log_flusher: on every write for trx_commit=1, else once per timeout —
    or at once for a page write that needs its redo durable (the write-ahead rule)."""
    env = srv.env
    tick = env.now + srv.config.innodb_flush_log_at_timeout
    while True:
        if srv.trx_commit == 1:
            if srv.flushed_lsn >= srv.write_lsn:
                srv.flusher_wakeup = env.event()
                yield srv.flusher_wakeup
                if srv.lsn > srv.write_lsn:  # the writer has more: it may finish meanwhile
                    yield env.timeout(FLUSHER_NOTICE_S)
                continue
        else:
            if not srv.redo_flush_requested:
                srv.flusher_wakeup = env.event()
                yield env.any_of([env.timeout(max(0.0, tick - env.now)), srv.flusher_wakeup])
            if env.now >= tick:
                tick = env.now + srv.config.innodb_flush_log_at_timeout
            if srv.redo_flush_requested:
                upto, srv.redo_flush_requested = srv.redo_flush_requested, 0
                while srv.write_lsn < upto:  # the writer is at it: sync what it wrote
                    yield srv.written_event
            if srv.flushed_lsn >= srv.write_lsn:
                continue
        yield from redo_sync(srv, srv.write_lsn)


def log_write_up_to(srv, upto: int, flush: bool, on_cpu=None):
    """Wait until the redo is written (and synced, if flush) up to `upto`.

    With writer threads this only waits for them. Without, the caller becomes the group
    commit leader when nobody else is at it, as in MySQL 5.7 / MariaDB log_write_up_to.
    on_cpu: the pool of the core the caller still holds (the one it ran its transaction
    on), or None; a leader makes its write and sync calls from it, anyone who blocks
    gives it up.
    """
    if srv.flavor.redo_writer_threads:
        if on_cpu:
            srv.cpu_release(on_cpu)
        # The log_writer/log_flusher threads do the work; a commit only wakes and waits.
        # (A flush request only comes with trx_commit=1, when the flusher runs on demand.)
        wake(srv.writer_wakeup)
        while (srv.flushed_lsn if flush else srv.write_lsn) < upto:
            yield srv.flushed_event if flush else srv.written_event
            yield from srv.woken()
        return
    while (srv.flushed_lsn if flush else srv.write_lsn) < upto:
        if srv.redo_leader_busy:
            if on_cpu:
                srv.cpu_release(on_cpu)
                on_cpu = None
            # asleep until the leader releases the group; whoever is still not covered
            # then becomes the next leader, a wake-up later (group_commit_lock)
            yield srv.flushed_event if flush else srv.written_event
            yield from srv.woken()
            continue
        srv.redo_leader_busy = True
        # The leader takes everything buffered so far. (MariaDB's writes up to the LSN
        # of the moment it writes, after its call's CPU; but the model's transactions
        # have no jitter, and two connections that could join in that window would
        # stay in lockstep, sharing every sync, where a real server's alternate.)
        target = srv.lsn
        pre = srv.sync_cpu_half_s if flush and not srv.redo_write_through else 0.0
        if on_cpu:
            if pre:
                yield from srv.still_on_cpu(pre)
            srv.cpu_release(on_cpu)
            on_cpu = None
        elif pre:  # a woken follower that became the leader
            yield from srv.on_cpu(pre, pool=srv.server_cpu)
        if srv.write_lsn < target:
            yield from redo_write(srv, target)
        if flush and srv.flushed_lsn < target:
            yield from redo_sync(srv, target, pre_cpu=False)
        srv.redo_leader_busy = False
        # wake anyone who queued for the other event kind: a write-only leader leaves
        # the group to whoever needs a sync (a page write, a checkpoint)
        srv.mark_written()
        if not flush:
            srv.mark_flushed(srv.flushed_lsn)
    if on_cpu:
        srv.cpu_release(on_cpu)


def log_flush_for_page_write(srv):
    """The write-ahead rule (buf_page_t::flush, buf_flush_write_block_low): a page is
    written only once the redo up to its newest modification is durable. A flush batch
    holds pages modified a moment ago (index roots, the tablespace header, hot leaves),
    so unless commits keep the redo synced the batch waits for a sync of all of it."""
    upto = srv.lsn
    if srv.flushed_lsn >= upto:
        return
    srv.count("page_write_log_flushes")
    if not srv.flavor.redo_writer_threads:
        yield from log_write_up_to(srv, upto, flush=True)
        return
    srv.redo_flush_requested = max(srv.redo_flush_requested, upto)
    wake(srv.writer_wakeup)
    wake(srv.flusher_wakeup)
    while srv.flushed_lsn < upto:
        yield srv.flushed_event


def srv_master_log_flush(srv):
    """Once per innodb_flush_log_at_timeout: write and sync the redo (trx_commit 0 and 2)."""
    while True:
        yield srv.env.timeout(srv.config.innodb_flush_log_at_timeout)
        if srv.flushed_lsn >= srv.lsn or srv.redo_leader_busy:
            continue
        srv.redo_leader_busy = True
        target = srv.lsn
        if srv.write_lsn < target:
            yield from redo_write(srv, target)
        if srv.flushed_lsn < target:
            yield from redo_sync(srv, target)
        srv.redo_leader_busy = False
        srv.mark_written()


def log_checkpointer(srv):
    """Advance the checkpoint once per interval, or at once when users wait for redo space.
    MariaDB's page cleaner checkpoints after each of its passes itself: there this thread
    only answers the users' requests."""
    interval = srv.flavor.checkpoint_interval_s
    while True:
        srv.checkpoint_request = srv.env.event()
        if srv.flavor.mariadb_page_cleaner:
            yield srv.checkpoint_request
        else:
            yield srv.env.any_of([srv.env.timeout(interval), srv.checkpoint_request])
        yield from log_checkpoint(srv)


def log_checkpoint(srv):
    target = min(srv.oldest_dirty_lsn(), srv.flushed_lsn)
    if srv.flavor.mariadb_page_cleaner:
        oldest = srv.oldest_dirty_lsn()
        if oldest <= srv.checkpoint_lsn:
            return
        # log_checkpoint_low: the FILE_CHECKPOINT record is appended and the redo made
        # durable up to it — to the current end of the log, an extra sync whenever commits
        # do not sync themselves (trx_commit 0 and 2)
        if srv.flushed_lsn < srv.lsn and not srv.redo_write_through:
            yield from log_write_up_to(srv, srv.lsn, flush=True)
        target = min(oldest, srv.flushed_lsn)
    if target <= srv.checkpoint_lsn:
        return
    srv.count("checkpoints")
    srv.count("Innodb_log_writes")
    if srv.flavor.data_writes_include_redo:
        srv.count("Innodb_data_writes")
        srv.count("Innodb_data_written", CHECKPOINT_WRITE_BYTES)
    if srv.redo_write_through:
        yield from srv.device.dsync_write(CHECKPOINT_WRITE_BYTES, srv.redo_direct)
    else:
        yield from srv.device.write(CHECKPOINT_WRITE_BYTES, srv.redo_direct)
        yield from srv.device.sync(srv.sync_op, CHECKPOINT_WRITE_BYTES, srv.redo_direct)
        srv.count("Innodb_data_fsyncs")
        srv.count("Innodb_os_log_fsyncs")
        srv.count("checkpoint_syncs")
    srv.checkpoint_lsn = max(srv.checkpoint_lsn, target)
    ev = srv.checkpoint_event
    if ev.callbacks:
        srv.checkpoint_event = srv.env.event()
        ev.succeed()

