"""Page cleaner: the flush list, the doublewrite buffer and the tablespace fsyncs.

Each second MySQL's page cleaner decides how many dirty pages to flush (the adaptive
flushing recommendation of buf0flu.cc, capped at innodb_io_capacity_max), or flushes
without limit when the checkpoint age passed the sync flush point (MariaDB's:
mariadb_page_cleaner.py; the batches below serve both). A batch goes through
the doublewrite buffer in segments: one write of the segment to the doublewrite file
(+ a sync where the flavor and method require it), the in-place page writes, and then
an fsync of every tablespace file written, except under O_DIRECT_NO_FSYNC (MariaDB's:
after a segment it doublewrote pages of, and at the checkpoint that ends its pass).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .events import SimGen, wake
from .flavors import PAGE_BYTES
from .redo import log_flush_for_page_write

if TYPE_CHECKING:
    from .server import Server

# page_cleaner_flush_pages_recommendation: pages_for_lsn looks this many seconds of
# redo ahead of the oldest modification (buf_flush_lsn_scan_factor).
LSN_SCAN_FACTOR = 3
FLUSHING_AVG_LOOPS = 30


def pct_for_dirty(srv: Server) -> float:
    """af_get_pct_for_dirty: how hard to flush for the share of dirty pages."""
    cfg = srv.config
    dirty_pct = srv.buf_pool.dirty_share()
    lwm = cfg.innodb_max_dirty_pages_pct_lwm
    if lwm == 0:
        return 100.0 if dirty_pct >= cfg.innodb_max_dirty_pages_pct else 0.0
    if dirty_pct >= lwm:
        return dirty_pct * 100.0 / (cfg.innodb_max_dirty_pages_pct + 1)
    return 0.0


def pct_for_lsn(srv: Server, age: int) -> float:
    """af_get_pct_for_lsn: how hard to flush for the checkpoint age."""
    cfg = srv.config
    async_flush_age = srv.redo.async_flush_age
    lwm = async_flush_age * cfg.innodb_adaptive_flushing_lwm / 100.0
    if age < lwm:
        return 0.0
    factor = age * 100.0 / async_flush_age
    return (cfg.innodb_io_capacity_max / cfg.innodb_io_capacity
            * factor * math.sqrt(factor)) / 7.5


def flush_pages_recommendation(srv: Server, age: int, lsn_rate: float,
                               avg_page_rate: float) -> int:
    """page_cleaner_flush_pages_recommendation: the pages to flush this second."""
    cfg = srv.config
    flush_list = srv.buf_pool.flush_list
    pct = max(pct_for_dirty(srv), pct_for_lsn(srv, age))
    oldest = flush_list.oldest_lsn()
    pages_for_lsn = 0
    if oldest is not None:
        pages_for_lsn = flush_list.pages_older_than(
            int(oldest + lsn_rate * LSN_SCAN_FACTOR), cfg.innodb_io_capacity_max)
    n = (cfg.innodb_io_capacity * pct / 100.0 + avg_page_rate + pages_for_lsn) / 3.0
    return int(min(n, cfg.innodb_io_capacity_max))


def page_cleaner(srv: Server) -> SimGen[None]:
    """MySQL's page cleaner coordinator: one flush-list batch per second, or more when
    pressed. (MariaDB's is mariadb_page_cleaner.py.)"""
    env, log, buf_pool = srv.env, srv.redo, srv.buf_pool
    last_lsn = log.lsn
    last_t = env.now
    last_dirtied = 0
    avg_page_rate = 0.0
    warm = False
    while True:
        start = env.now
        age = log.checkpoint_age()
        dt = max(1e-6, start - last_t)
        lsn_rate = (log.lsn - last_lsn) / dt
        last_lsn, last_t = log.lsn, start
        dirtied = buf_pool.pages_dirtied - last_dirtied
        last_dirtied = buf_pool.pages_dirtied
        if not warm and start > 0:
            # A server that has run a while flushes about what it dirties: start the
            # moving average there rather than at zero, or a short run measures the
            # cold start of adaptive flushing instead of the steady state.
            avg_page_rate = min(dirtied / dt, srv.config.innodb_io_capacity_max)
            warm = True
        furious = age >= log.sync_flush_age
        if furious:
            # sync flush: everything older than what brings the age back under the point
            target = log.lsn - int(log.async_flush_age * 0.9)
            n = max(srv.config.innodb_io_capacity,
                    buf_pool.flush_list.pages_older_than(target, 1 << 62))
            srv.count("sync_flush_batches")
        else:
            n = flush_pages_recommendation(srv, age, lsn_rate, avg_page_rate)
        flushed = 0
        if n > 0 and buf_pool.flush_list.pages > 0:
            flushed = yield from flush_batch(srv, n)
        avg_page_rate += (flushed - avg_page_rate) / FLUSHING_AVG_LOOPS
        if furious or log.stalled_users:
            wake(log.checkpoint_request)
        elapsed = env.now - start
        if furious and flushed:
            continue
        yield env.timeout(max(0.0, 1.0 - elapsed) if not furious else 0.01)


class _Batch:
    """A flush batch shared by its doublewrite instances: pages left to take, taken."""

    __slots__ = ("left", "flushed")

    def __init__(self, n: int) -> None:
        self.left = n
        self.flushed = 0


def flush_batch(srv: Server, n: int) -> SimGen[int]:
    """Flush up to n of the oldest dirty pages through the doublewrite buffer.

    One worker per doublewrite instance serving flush-list batches (one segment in
    flight each). Pages leave the flush list segment by segment and stay "in flight",
    holding back the checkpoint, until their segment and its syncs have completed.
    """
    # The write-ahead rule: the batch's first page changed since the last redo sync waits
    # for one; the sync covers all the redo written, so the rest of a batch that takes
    # milliseconds seldom needs another (one per batch, not per page or segment).
    yield from log_flush_for_page_write(srv)
    parallel = srv.flavor.dblwr_parallel_segments if srv.config.innodb_doublewrite else 4
    batch = _Batch(n)
    workers = min(parallel, -(-n // srv.dblwr_segment_pages))
    if workers <= 1:
        yield from dblwr_instance(srv, batch)
    else:
        yield srv.env.all_of([srv.env.process(dblwr_instance(srv, batch))
                              for _ in range(workers)])
    srv.count("flush_batches")
    return batch.flushed


def dblwr_instance(srv: Server, batch: _Batch) -> SimGen[None]:
    """One doublewrite instance: takes the next segment of the batch until none is left,
    and writes it. A segment is as many pages as fill dblwr_segment_pages slots of the
    doublewrite buffer (the pages that bypass it take none); of its pages, `rewrites`
    were written before (MariaDB doublewrites them whatever dblwr_page_share says of
    the first writes)."""
    buf_pool, device, c = srv.buf_pool, srv.device, srv.counters
    flush_list, unflushed = buf_pool.flush_list, buf_pool.unflushed
    fl, cfg = srv.flavor, srv.config
    dblwr = cfg.innodb_doublewrite
    share = srv.workload.dblwr_page_share if dblwr else 1.0
    segment_pages, block = srv.dblwr_segment_pages, fl.dblwr_block_pages
    dblwr_sync = fl.dblwr_sync_required(cfg.innodb_flush_method)
    data_syncs = (not fl.data_file_sync_skipped(cfg.innodb_flush_method)
                  and not srv.data_write_through)
    direct, sync_op = srv.data_direct, srv.sync_op
    # (the segment's writes inline, not a step of their own: a generator less per
    # segment, and a frame less each time the instance is resumed)
    log = srv.redo
    lazy_commits = fl.mariadb_page_cleaner and cfg.innodb_flush_log_at_trx_commit != 1
    at_checkpoint = fl.files_synced_at_checkpoint and dblwr
    d = 0
    while batch.left > 0 and flush_list.pages > 0:
        # the newest change the segment's pages can carry: the log's end as it is taken
        newest = log.lsn
        oldest, k, hot, rewrites = buf_pool.take_segment(batch.left, segment_pages, share)
        batch.left -= k
        batch.flushed += k
        if dblwr:
            # pages re-initialised since their last write go straight to their file
            # (their redo rebuilds them: MariaDB's buf_page_t::flush); the rest are
            # doublewritten
            d = rewrites + buf_pool.dblwr_carry.take((k - rewrites) * share, k - rewrites)
            if d:
                for i in range(0, d, block):
                    b = d - i if d - i < block else block
                    yield from device.write(b * PAGE_BYTES, direct)
                    c["Innodb_data_writes"] += 1
                    c["Innodb_data_written"] += b * PAGE_BYTES
                c["Innodb_dblwr_writes"] += 1
                c["Innodb_dblwr_pages_written"] += d
                if dblwr_sync:
                    yield from device.sync(sync_op, d * PAGE_BYTES, direct)
                    c["Innodb_data_fsyncs"] += 1
                    c["dblwr_syncs"] += 1
        # The write-ahead rule is each page's: a segment taken after the batch's first
        # sync holds pages changed since (hot leaves, the tablespace header), and waits
        # for another where commits do not sync the redo themselves. MariaDB 10.11 under
        # sysbench inserts at trx_commit=2 synced the redo 2 times in a page-cleaner pass
        # at 1 connection, 2-7 at 4 (perf, per thread, 2026-11-28). Where commits sync,
        # the page's change is covered by the group commit it came with. MySQL's rule is
        # the page's too (buf_flush_write_block_low), but unmeasured here, and taken a
        # 4-page segment at a time it would sync for nearly every one.
        if lazy_commits and log.flushed_lsn < newest:
            yield from log_flush_for_page_write(srv, newest)
        # in-place page writes, each to a tablespace of the workload
        spaces = buf_pool.spaces_written(k)
        yield from device.write_many(k, PAGE_BYTES, direct)
        c["Innodb_data_writes"] += k
        c["Innodb_data_written"] += k * PAGE_BYTES
        c["Innodb_pages_written"] += k
        if data_syncs:
            buf_pool.mark_unflushed(spaces)
        # fil_flush_file_spaces, inline: at the end of a doublewrite batch, or of every
        # segment where the flavor syncs each (a batch of re-initialised pages alone
        # waits for the checkpoint's: files_synced_at_checkpoint)
        while unflushed and (d or not at_checkpoint):
            yield from device.sync(sync_op, unflushed.popitem()[1], direct)
            c["Innodb_data_fsyncs"] += 1
            c["data_file_syncs"] += 1
        buf_pool.segment_written(oldest, hot)
