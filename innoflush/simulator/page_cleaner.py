"""Page cleaner: the flush list, the doublewrite buffer and the tablespace fsyncs.

Each second MySQL's page cleaner decides how many dirty pages to flush (the adaptive
flushing recommendation of buf0flu.cc, capped at innodb_io_capacity_max), or flushes
without limit when the checkpoint age passed the sync flush point (MariaDB's:
mariadb_page_cleaner.py; the batches below serve both). A batch goes through
the doublewrite buffer in segments: one write of the segment to the doublewrite file
(+ a sync where the flavor and method require it), the in-place page writes, and then
an fsync of every tablespace file written, except under O_DIRECT_NO_FSYNC.
"""

from __future__ import annotations

import math
from collections import deque

from .events import wake
from .flavors import PAGE_BYTES
from .redo import log_flush_for_page_write

# page_cleaner_flush_pages_recommendation: pages_for_lsn looks this many seconds of
# redo ahead of the oldest modification (buf_flush_lsn_scan_factor).
LSN_SCAN_FACTOR = 3
FLUSHING_AVG_LOOPS = 30


class FlushList:
    """Dirty pages in oldest-modification order, as [lsn, pages, hot, rewrites] chunks.

    Of a chunk's pages, `hot` are pages the workload goes on modifying (after a write
    one is dirtied again by the next commits: Workload.hot_page_share), and `rewrites`
    (a part of the hot ones) were written before: MariaDB writes a page re-initialised
    since its last write — a page first dirtied as a new page — straight to its file,
    a rewrite through the doublewrite buffer."""

    __slots__ = ("chunks", "pages")

    def __init__(self):
        self.chunks: deque[list] = deque()
        self.pages = 0

    def add(self, lsn: int, pages: int, hot: int = 0, rewrites: int = 0) -> None:
        if self.chunks and self.chunks[-1][0] == lsn:
            c = self.chunks[-1]
            c[1] += pages
            c[2] += hot
            c[3] += rewrites
        else:
            self.chunks.append([lsn, pages, hot, rewrites])
        self.pages += pages

    def oldest_lsn(self) -> int | None:
        return self.chunks[0][0] if self.chunks else None

    def take(self, n: int, slots: float | None = None,
             first_share: float = 1.0) -> tuple[int, int, int]:
        """Remove up to n of the oldest pages, and no more than fill `slots` doublewrite
        slots (a rewrite takes one, a first write `first_share`; None: no limit).
        Returns (pages, hot, rewrites); within a chunk (one LSN) rewrites go first, then
        the hot pages' first writes."""
        taken = hot_taken = rew_taken = 0
        left = float(1 << 62) if slots is None else slots
        while self.chunks and taken < n and left >= 1:
            c = self.chunks[0]
            r = min(c[3], n - taken, int(left))
            left -= r
            first_cap = n - taken - r
            if first_share > 0:
                first_cap = min(first_cap, int(left / first_share))
            f = min(c[1] - c[3], first_cap)
            h = min(c[2] - c[3], f)     # the hot pages' first writes go before the cold
            left -= f * first_share
            c[1] -= r + f
            c[2] -= r + h
            c[3] -= r
            taken += r + f
            hot_taken += r + h
            rew_taken += r
            if c[1] == 0:
                self.chunks.popleft()
            elif r + f == 0:
                break
        self.pages -= taken
        return taken, hot_taken, rew_taken

    def pages_older_than(self, lsn: int, limit: int) -> int:
        n = 0
        for chunk_lsn, pages, _, _ in self.chunks:
            if chunk_lsn > lsn or n >= limit:
                break
            n += pages
        return min(n, limit)


def dirty_share(srv) -> float:
    """Dirty pages, % of the buffer pool."""
    return 100.0 * srv.flush_list.pages / srv.buffer_pool_pages


def pct_for_dirty(srv) -> float:
    """af_get_pct_for_dirty: how hard to flush for the share of dirty pages."""
    cfg = srv.config
    dirty_pct = dirty_share(srv)
    lwm = cfg.innodb_max_dirty_pages_pct_lwm
    if lwm == 0:
        return 100.0 if dirty_pct >= cfg.innodb_max_dirty_pages_pct else 0.0
    if dirty_pct >= lwm:
        return dirty_pct * 100.0 / (cfg.innodb_max_dirty_pages_pct + 1)
    return 0.0


def pct_for_lsn(srv, age: int) -> float:
    """af_get_pct_for_lsn: how hard to flush for the checkpoint age."""
    cfg = srv.config
    lwm = srv.async_flush_age * cfg.innodb_adaptive_flushing_lwm / 100.0
    if age < lwm:
        return 0.0
    factor = age * 100.0 / srv.async_flush_age
    return (cfg.innodb_io_capacity_max / cfg.innodb_io_capacity
            * factor * math.sqrt(factor)) / 7.5


def flush_pages_recommendation(srv, age: int, lsn_rate: float) -> int:
    cfg = srv.config
    pct = max(pct_for_dirty(srv), pct_for_lsn(srv, age))
    oldest = srv.flush_list.oldest_lsn()
    pages_for_lsn = 0
    if oldest is not None:
        pages_for_lsn = srv.flush_list.pages_older_than(
            int(oldest + lsn_rate * LSN_SCAN_FACTOR), cfg.innodb_io_capacity_max)
    n = (cfg.innodb_io_capacity * pct / 100.0 + srv.avg_page_rate + pages_for_lsn) / 3.0
    return int(min(n, cfg.innodb_io_capacity_max))


def page_cleaner(srv):
    """MySQL's page cleaner coordinator: one flush-list batch per second, or more when
    pressed. (MariaDB's is mariadb_page_cleaner.py.)"""
    env = srv.env
    last_lsn = srv.lsn
    last_t = env.now
    last_dirtied = 0
    warm = False
    while True:
        start = env.now
        age = srv.checkpoint_age()
        dt = max(1e-6, start - last_t)
        lsn_rate = (srv.lsn - last_lsn) / dt
        last_lsn, last_t = srv.lsn, start
        dirtied = srv.pages_dirtied - last_dirtied
        last_dirtied = srv.pages_dirtied
        if not warm and start > 0:
            # A server that has run a while flushes about what it dirties: start the
            # moving average there rather than at zero, or a short run measures the
            # cold start of adaptive flushing instead of the steady state.
            srv.avg_page_rate = min(dirtied / dt, srv.config.innodb_io_capacity_max)
            warm = True
        furious = age >= srv.sync_flush_age
        if furious:
            # sync flush: everything older than what brings the age back under the point
            target = srv.lsn - int(srv.async_flush_age * 0.9)
            n = max(srv.config.innodb_io_capacity,
                    srv.flush_list.pages_older_than(target, 1 << 62))
            srv.count("sync_flush_batches")
        else:
            n = flush_pages_recommendation(srv, age, lsn_rate)
        flushed = 0
        if n > 0 and srv.flush_list.pages > 0:
            flushed = yield from flush_batch(srv, n)
        srv.avg_page_rate += (flushed - srv.avg_page_rate) / FLUSHING_AVG_LOOPS
        if furious or srv.stalled_users:
            wake(srv.checkpoint_request)
        elapsed = env.now - start
        if furious and flushed:
            continue
        yield env.timeout(max(0.0, 1.0 - elapsed) if not furious else 0.01)


def flush_batch(srv, n: int):
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
    state = {"left": n, "flushed": 0}
    workers = min(parallel, -(-n // srv.dblwr_segment_pages))
    if workers <= 1:
        yield from dblwr_instance(srv, state)
    else:
        yield srv.env.all_of([srv.env.process(dblwr_instance(srv, state))
                              for _ in range(workers)])
    srv.count("flush_batches")
    return state["flushed"]


def dblwr_instance(srv, state: dict):
    """One doublewrite instance: takes the next segment of the batch until none is left.
    A segment is as many pages as fill dblwr_segment_pages slots of the doublewrite
    buffer (the pages that bypass it take none)."""
    dblwr = srv.config.innodb_doublewrite
    share = srv.workload.dblwr_page_share if dblwr else 1.0
    while state["left"] > 0 and srv.flush_list.pages > 0:
        oldest = srv.flush_list.oldest_lsn()
        k, hot, rewrites = srv.flush_list.take(state["left"], srv.dblwr_segment_pages,
                                               share)
        state["left"] -= k
        state["flushed"] += k
        srv.inflight_lsns.append(oldest)
        yield from flush_segment(srv, k, rewrites if dblwr else 0, oldest)
        # written and clean: the workload's next changes dirty its hot pages again
        srv.hot_pages_clean += hot


def flush_segment(srv, k: int, rewrites: int, oldest_lsn: int):
    """Write k pages of which `rewrites` were written before (MariaDB doublewrites them
    whatever dblwr_page_share says of the first writes)."""
    fl = srv.flavor
    method = srv.config.innodb_flush_method
    if srv.config.innodb_doublewrite:
        # pages re-initialised since their last write go straight to their file (their
        # redo rebuilds them: MariaDB's buf_page_t::flush); the rest are doublewritten
        d = rewrites + srv.dblwr_carry.take((k - rewrites) * srv.workload.dblwr_page_share,
                                            k - rewrites)
        if d:
            block = fl.dblwr_block_pages
            for i in range(0, d, block):
                b = min(block, d - i)
                yield from srv.device.write(b * PAGE_BYTES, srv.data_direct)
                srv.count("Innodb_data_writes")
                srv.count("Innodb_data_written", b * PAGE_BYTES)
            srv.count("Innodb_dblwr_writes")
            srv.count("Innodb_dblwr_pages_written", d)
            if fl.dblwr_sync_required(method):
                yield from srv.device.sync(srv.sync_op, d * PAGE_BYTES, srv.data_direct)
                srv.count("Innodb_data_fsyncs")
                srv.count("dblwr_syncs")
    # in-place page writes, each to a tablespace of the workload
    files = srv.rng_files(k)
    yield from srv.device.write_many(k, PAGE_BYTES, srv.data_direct)
    srv.count("Innodb_data_writes", k)
    srv.count("Innodb_data_written", k * PAGE_BYTES)
    srv.count("Innodb_pages_written", k)
    if not fl.data_file_sync_skipped(method) and not srv.data_write_through:
        for f in files:
            srv.unflushed[f] = srv.unflushed.get(f, 0) + PAGE_BYTES
    yield from srv.flush_unflushed_spaces()
    srv.inflight_lsns.remove(oldest_lsn)
