"""MariaDB's page cleaner (10.6+, buf0flu.cc buf_flush_page_cleaner) and the flush-ahead
requests of its mini-transaction commits (mtr0mtr.cc log_close, buf_flush_ahead).

What sets it apart from MySQL's, read from the 10.11 source and checked against a
10.11.19 server's counters sampled every 0.25 s:

- A mini-transaction that finds the checkpoint age past the async point
  (``max_modified_age_async``, 7/8 of the log's margin) asks for the pages older than
  ``lsn - max_modified_age_async`` to be flushed: a soft target that never wakes a
  cleaner in its one-second sleep. Past ``max_checkpoint_age`` the same target becomes
  furious: the cleaner is woken at once and flushes it without limit.
- With ``innodb_max_dirty_pages_pct_lwm=0`` the cleaner sleeps until such a request (or
  dirty pages at ``innodb_max_dirty_pages_pct``); awake, each pass flushes up to
  ``innodb_io_capacity_max`` pages older than the soft target — so the checkpoint age
  settles just above the async point instead of being flushed down — and once the
  target is met, adaptive passes while the oldest dirty page is more than
  ``innodb_adaptive_flushing_lwm`` % of the log capacity old.
- The adaptive recommendation keeps its averages in function statics that start at zero
  and are refreshed every ``innodb_flushing_avg_loops`` (30) calls: in a server's first
  half minute it asks for ``innodb_io_capacity / 3`` pages a pass.
- Every pass ends with the doublewrite batch closed and a checkpoint.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from simpy.events import Event

from .buffer_pool import fil_flush_file_spaces
from .events import SimGen, wake
from .page_cleaner import LSN_SCAN_FACTOR, flush_batch
from .redo import log_checkpoint

if TYPE_CHECKING:
    from .server import Server

FLUSHING_AVG_LOOPS = 30   # innodb_flushing_avg_loops


class FlushAhead:
    """The flush targets MariaDB's mini-transactions ask for (buf_flush_async_lsn,
    buf_flush_sync_lsn; 0: none) and its page cleaner's idle state."""

    __slots__ = ("async_target", "sync_target", "cleaner_idle", "cleaner_wakeup")

    def __init__(self) -> None:
        self.async_target = 0
        self.sync_target = 0
        self.cleaner_idle = True
        self.cleaner_wakeup: Event | None = None


def buf_flush_ahead(srv: Server, lsn: int) -> None:
    """log_close + buf_flush_ahead at a commit whose checkpoint age is past the async
    point: raise the soft (or, past max_checkpoint_age, the furious) flush target."""
    log, ahead = srv.redo, srv.flush_ahead
    target = lsn - log.async_flush_age
    if lsn - log.checkpoint_lsn >= log.sync_flush_age:
        if ahead.sync_target < target:
            ahead.sync_target = target
            wake_page_cleaner(ahead)
    elif ahead.async_target < target:
        ahead.async_target = target
        if ahead.cleaner_idle:
            # wakes a cleaner from its indefinite wait, never from its 1-second sleep
            wake_page_cleaner(ahead)


def wake_page_cleaner(ahead: FlushAhead) -> None:
    ahead.cleaner_idle = False
    wake(ahead.cleaner_wakeup)


def af_needed_for_redo(srv: Server, oldest: int) -> bool:
    log = srv.redo
    return log.lsn - oldest > log.capacity * srv.config.innodb_adaptive_flushing_lwm / 100.0


class AdaptiveFlushing:
    """page_cleaner_flush_pages_recommendation with its function statics."""

    def __init__(self) -> None:
        self.prev_lsn = 0
        self.prev_time = 0
        self.sum_pages = 0
        self.avg_page_rate = 0
        self.n_iterations = 0
        self.lsn_avg_rate = 0

    def pct_for_lsn(self, srv: Server, age: int) -> int:
        cfg = srv.config
        if age < srv.redo.capacity * cfg.innodb_adaptive_flushing_lwm / 100.0:
            return 0
        factor = age * 100 // srv.redo.async_flush_age
        return int(cfg.innodb_io_capacity_max // cfg.innodb_io_capacity * factor
                   * math.sqrt(factor) / 7.5)

    def recommendation(self, srv: Server, last_pages: int, oldest: int, pct_lwm: float,
                       dirty: int, dirty_pct: float) -> int:
        cfg = srv.config
        cur_lsn = srv.redo.lsn
        pct_for_lsn = 0 if cur_lsn < oldest else self.pct_for_lsn(srv, cur_lsn - oldest)
        now = int(srv.env.now)   # time(): whole seconds
        max_pct = cfg.innodb_max_dirty_pages_pct
        if not self.prev_lsn or not pct_for_lsn:
            self.prev_time, self.prev_lsn = now, max(cur_lsn, 1)
            if cfg.innodb_io_capacity >= dirty:
                return dirty
            ratio = dirty_pct / max_pct if max_pct > 1.0 else dirty_pct
            n = int(ratio * cfg.innodb_io_capacity)
            return cfg.innodb_io_capacity if n < dirty else min(cfg.innodb_io_capacity_max,
                                                                 dirty)
        self.sum_pages += last_pages
        elapsed = max(now - self.prev_time, 1)
        self.n_iterations += 1
        if self.n_iterations >= FLUSHING_AVG_LOOPS or elapsed >= FLUSHING_AVG_LOOPS:
            self.avg_page_rate = (self.sum_pages // elapsed + self.avg_page_rate) // 2
            lsn_rate = (cur_lsn - self.prev_lsn) // elapsed
            self.lsn_avg_rate = (self.lsn_avg_rate + lsn_rate) // 2
            self.prev_lsn, self.prev_time = cur_lsn, now
            self.n_iterations = self.sum_pages = 0
        if pct_lwm == 0.0 or max_pct == 0.0:
            total_ratio = 1.0
        else:
            total_ratio = max(pct_for_lsn / 100.0, dirty_pct / max_pct)
        pages_for_lsn = srv.buf_pool.flush_list.pages_older_than(
            oldest + self.lsn_avg_rate * LSN_SCAN_FACTOR, cfg.innodb_io_capacity_max)
        pages_for_lsn = max(1, pages_for_lsn // LSN_SCAN_FACTOR)
        n = (int(cfg.innodb_io_capacity * total_ratio) + self.avg_page_rate
             + pages_for_lsn) // 3
        return min(n, cfg.innodb_io_capacity_max)


def flush_to(srv: Server, target: int, limit: int) -> SimGen[int]:
    """buf_flush_list(limit, target): up to limit of the pages older than target."""
    n = srv.buf_pool.flush_list.pages_older_than(target - 1, limit)
    if n <= 0:
        return 0
    return (yield from flush_batch(srv, n))


def buf_flush_sync_for_checkpoint(srv: Server) -> SimGen[tuple[int, bool]]:
    """Furious flushing: every page older than the target, io_capacity_max at a time,
    then the data files synced and a checkpoint; no sleep until the target is met."""
    ahead = srv.flush_ahead
    target = ahead.sync_target
    flushed = yield from flush_to(srv, target, srv.config.innodb_io_capacity_max)
    srv.count("sync_flush_batches")
    yield from fil_flush_file_spaces(srv)
    yield from log_checkpoint(srv)
    oldest = srv.buf_pool.oldest_modification()
    reached = oldest is None or oldest >= target
    if reached:
        ahead.sync_target = 0
        if oldest is None or oldest >= ahead.async_target:
            ahead.async_target = 0
    return flushed, reached


def mariadb_page_cleaner(srv: Server) -> SimGen[None]:
    """buf_flush_page_cleaner: furious flushing to the sync target, else a pass a
    second while there is work (the soft target, then adaptive flushing), else idle."""
    env, cfg, buf_pool, ahead = srv.env, srv.config, srv.buf_pool, srv.flush_ahead
    af = AdaptiveFlushing()
    last_pages = 0
    deadline = env.now + 1.0
    while True:
        if ahead.sync_target:
            flushed, reached = yield from buf_flush_sync_for_checkpoint(srv)
            last_pages = 0
            deadline = env.now + 1.0
            if not reached and not flushed:
                # nothing older than the target left to write yet: log_checkpoint_margin's
                # 10 ms sleep, rather than spinning at one instant
                yield env.timeout(0.01)
            continue
        ahead.cleaner_wakeup = wakeup = env.event()
        if ahead.cleaner_idle and (buf_pool.flush_list.pages == 0
                                   or cfg.innodb_max_dirty_pages_pct_lwm == 0):
            # an indefinite wait; page_cleaner_wakeup() at innodb_max_dirty_pages_pct is
            # a mini-transaction's check, looked at here once a second
            while ahead.cleaner_idle:
                yield env.any_of([wakeup, env.timeout(1.0)])
                if wakeup.triggered:
                    break
                if buf_pool.dirty_share() >= cfg.innodb_max_dirty_pages_pct:
                    ahead.cleaner_idle = False
        elif deadline > env.now:
            yield env.any_of([wakeup, env.timeout(deadline - env.now)])
        deadline = env.now + 1.0
        if ahead.sync_target:
            continue
        oldest = buf_pool.oldest_modification()
        if oldest is None:
            ahead.cleaner_idle = True
            yield from log_checkpoint(srv)
            continue
        soft = ahead.async_target
        if soft and oldest >= soft:
            soft = ahead.async_target = 0
        dirty_pct = buf_pool.dirty_share()
        pct_lwm = cfg.innodb_max_dirty_pages_pct_lwm
        if pct_lwm and dirty_pct < pct_lwm:
            pct_lwm = 0.0
        unemployed = (dirty_pct < cfg.innodb_max_dirty_pages_pct
                      if not cfg.innodb_max_dirty_pages_pct_lwm else pct_lwm == 0.0)
        if unemployed and not soft and not af_needed_for_redo(srv, oldest):
            ahead.cleaner_idle = True
            yield from log_checkpoint(srv)
            continue
        ahead.cleaner_idle = False
        if soft:
            yield from flush_to(srv, soft, cfg.innodb_io_capacity_max)
            srv.count("async_flush_batches")
        else:
            n = af.recommendation(srv, last_pages, oldest, pct_lwm, buf_pool.flush_list.pages,
                                  dirty_pct)
            last_pages = (yield from flush_batch(srv, n)) if n > 0 else 0
            srv.count("adaptive_flush_batches")
        oldest = buf_pool.oldest_modification()
        if oldest is None or oldest >= ahead.async_target:
            ahead.async_target = 0
        # set_almost_idle: the doublewrite batch is closed (flush_batch did), checkpoint
        yield from log_checkpoint(srv)
