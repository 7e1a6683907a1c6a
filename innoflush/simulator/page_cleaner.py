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


# log_free_check_margin at a server's defaults: the redo the threads that may write at
# once reserve (log_concurrency_margin, INNODB_METRICS, read off MySQL 9.7.4 at its
# defaults: 5,303,808 bytes); log_files_capacity_get_limits takes it off both limits
FREE_CHECK_MARGIN = 5_303_808


def free_check_margin(srv: Server) -> int:
    """The margin both limits lose (a small log's at most a quarter of its capacity)."""
    return min(FREE_CHECK_MARGIN, srv.redo.stop_age // 4)


def adaptive_flush_lwm(srv: Server) -> float:
    """The oldest dirty page's age past which MySQL's adaptive flushing works:
    innodb_adaptive_flushing_lwm % of the free-check limit (the soft capacity less the
    margin; log_files_capacity_get_limits)."""
    return ((srv.redo.stop_age - free_check_margin(srv))
            * srv.config.innodb_adaptive_flushing_lwm / 100.0)


def pct_for_lsn(srv: Server, age: int) -> float:
    """get_pct_for_lsn (buf0flu.cc): how hard to flush for the oldest dirty page's age.
    Nothing below innodb_adaptive_flushing_lwm % of the free-check limit (the soft
    capacity less the margin); past it, a share of innodb_io_capacity that grows as the
    age's share of the dirty-page limit (the async point less the margin) to the 1.5th
    power — about 10 % at the low-water mark of a 100M log."""
    cfg, log = srv.config, srv.redo
    if age < adaptive_flush_lwm(srv):
        return 0.0
    factor = age * 100.0 / (log.async_flush_age - free_check_margin(srv))
    # integer division of the two capacities, and a whole percent, as the server has it
    return int(cfg.innodb_io_capacity_max // cfg.innodb_io_capacity
               * factor * math.sqrt(factor) / 7.5)


class AdaptiveFlush:
    """MySQL 8.0.19+'s Adaptive_flush (buf0flu.cc: page_recommendation, set_average,
    set_flush_target_by_lsn), called once a second by the page cleaner.

    Its averages (redo per second, pages flushed per second) are refreshed every
    innodb_flushing_avg_loops (30) calls, each time halfway from the last value to the
    rate since the last refresh; they start at zero. So a fresh server asks for almost
    nothing in its first half minute unless the dirty pages or the checkpoint age call
    for it (as a fresh MySQL 9.7.4 server did: docs/model.md, 'MySQL 9.7 LTS'; a warm
    model asked for far more). ``uptime_s``: how long the server had run when the
    simulated load began (None: long, its averages warm — set from the first simulated
    second)."""

    def __init__(self, uptime_s: float | None) -> None:
        self.warm = uptime_s is None or uptime_s >= FLUSHING_AVG_LOOPS
        self.lsn_avg_rate = 0.0
        self.page_avg_rate = 0.0
        # calls since the last refresh: a cold server made one a second since it started
        self.n_iterations = 0 if self.warm else int(uptime_s or 0)
        self.sum_pages = 0
        self.prev_lsn: int | None = None
        self.prev_time = 0.0
        self.iter_lsn: int | None = None

    def set_average(self, lsn: int, now: float, last_pages: int) -> None:
        assert self.prev_lsn is not None    # initialised by the first call
        self.n_iterations += 1
        self.sum_pages += last_pages
        elapsed = max(1.0, now - self.prev_time)
        if self.n_iterations < FLUSHING_AVG_LOOPS and elapsed < FLUSHING_AVG_LOOPS:
            return
        self.page_avg_rate = (self.sum_pages / elapsed + self.page_avg_rate) / 2
        self.lsn_avg_rate = (self.lsn_avg_rate + (lsn - self.prev_lsn) / elapsed) / 2
        self.prev_lsn, self.prev_time = lsn, now
        self.n_iterations = self.sum_pages = 0

    def recommendation(self, srv: Server, last_pages: int, lsn_per_s: float,
                       dirtied_per_s: float) -> int:
        """page_recommendation: the pages to flush this second."""
        log, now, cfg = srv.redo, srv.env.now, srv.config
        if self.prev_lsn is None:
            # (initialize(), the idle first call, was at the server's start, before the
            # load: the simulated server goes on from a later call)
            self.prev_lsn, self.prev_time = log.lsn, now
            if self.warm:   # a server that has run a while: the load's own rates
                self.lsn_avg_rate = lsn_per_s
                self.page_avg_rate = min(dirtied_per_s, cfg.innodb_io_capacity_max)
        skip_lsn = self.iter_lsn == log.lsn
        self.iter_lsn = log.lsn
        self.set_average(log.lsn, now, last_pages)
        if skip_lsn:
            return 0
        flush_list = srv.buf_pool.flush_list
        oldest = flush_list.oldest_lsn()
        # the age it flushes for is the oldest dirty page's (buf_pool_get_oldest_
        # modification_approx), not the checkpoint's, which lags it by up to a
        # checkpointer interval: an empty flush list asks for nothing
        age = log.lsn - oldest if oldest is not None else 0
        pct = max(pct_for_dirty(srv), pct_for_lsn(srv, age))
        sum_max = 2 * cfg.innodb_io_capacity_max
        pages_for_lsn = 1
        if oldest is not None:
            older = flush_list.pages_older_than(
                int(oldest + self.lsn_avg_rate * LSN_SCAN_FACTOR),
                sum_max * LSN_SCAN_FACTOR * 2)
            pages_for_lsn = min(max(1, older // LSN_SCAN_FACTOR), sum_max)
        n = (cfg.innodb_io_capacity * pct / 100.0 + self.page_avg_rate + pages_for_lsn) / 3
        return int(min(n, cfg.innodb_io_capacity_max))


def page_cleaner(srv: Server) -> SimGen[None]:
    """MySQL's page cleaner coordinator: one flush-list batch per second, or more when
    pressed. (MariaDB's is mariadb_page_cleaner.py.)"""
    env, log, buf_pool = srv.env, srv.redo, srv.buf_pool
    adaptive = AdaptiveFlush(srv.start_uptime_s)
    last_t, last_lsn = env.now, log.lsn
    last_dirtied = 0
    last_pages = 0
    while True:
        start = env.now
        age = log.checkpoint_age()
        dt = max(1e-6, start - last_t)
        dirtied_per_s = (buf_pool.pages_dirtied - last_dirtied) / dt
        lsn_per_s = (log.lsn - last_lsn) / dt
        last_dirtied, last_t, last_lsn = buf_pool.pages_dirtied, start, log.lsn
        furious = age >= log.sync_flush_age
        if furious:
            # sync flush: everything older than what brings the age back under the point
            target = log.lsn - int(log.async_flush_age * 0.9)
            n = max(srv.config.innodb_io_capacity,
                    buf_pool.flush_list.pages_older_than(target, 1 << 62))
            srv.count("sync_flush_batches")
        else:
            n = adaptive.recommendation(srv, last_pages, lsn_per_s, dirtied_per_s) \
                if start > 0 else 0
        flushed = 0
        if n > 0 and buf_pool.flush_list.pages > 0:
            flushed = yield from flush_batch(srv, n)
        last_pages = flushed
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
    began = srv.env.now
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
    srv.measurement.flushed(began, batch.flushed)
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
    dblwr_sync, data_syncs = srv.io.dblwr_sync, srv.io.data_syncs
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
        # for another where commits do not sync the redo themselves, so a MariaDB pass
        # syncs the redo more than once (docs/model.md, 'Redo', has the count). Where
        # commits sync, the page's change is covered by the group commit it came with.
        # MySQL's rule is the page's too (buf_flush_write_block_low), but unmeasured here,
        # and taken a 4-page segment at a time it would sync for nearly every one.
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
