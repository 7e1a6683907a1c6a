"""One simulated server: its state, its background threads and its connections."""

from __future__ import annotations

from collections import Counter

import numpy as np
import simpy

from ..profiles import DeviceProfile
from .binlog import BinlogGroup, binlog_enqueue, binlog_flush_stage, binlog_sync_stage
from .carry import Carry
from .config import ServerConfig, Workload
from .device import Device
from .events import wake
from .flavors import PAGE_BYTES
from .mariadb_page_cleaner import buf_flush_ahead, mariadb_page_cleaner
from .page_cleaner import FlushList, page_cleaner
from .redo import (
    log_checkpointer,
    log_flusher,
    log_write_up_to,
    log_writer,
    srv_master_log_flush,
)
from .semaphore import Semaphore

# sched_migration_cost_ns (Linux, 0.5 ms): a task that ran more recently than this is
# cache-hot, and the load balancer leaves it on its run queue
MIGRATION_COST_S = 500e-6


class Server:
    def __init__(self, config: ServerConfig, workload: Workload, profile: DeviceProfile,
                 seed: int, queue_depth: int = 32):
        self.flavor = config.validate()
        workload.validate()
        self.config = config
        self.workload = workload
        self.env = env = simpy.Environment()
        self.rng = np.random.default_rng(seed)
        self.device = Device(env, profile, self.rng, queue_depth)
        self.cpu = Semaphore(env, config.cpu_cores)
        self.server_cpu = self.cpu
        io_cores = config.io_completion_cores
        if (io_cores and io_cores < config.cpu_cores
                and (config.innodb_flush_log_at_trx_commit == 1
                     or (config.log_bin and config.sync_binlog > 0))):
            # Every commit sleeps on a device completion, and the woken thread runs where
            # the interrupt was taken (wake-affine); the scheduler then leaves these
            # cache-hot threads there: the server's connection threads share the
            # completion cores, the clients and the background work get the others.
            self.server_cpu = Semaphore(env, io_cores)
            self.cpu = Semaphore(env, config.cpu_cores - io_cores)
        self.counters: Counter = Counter()

        method = config.innodb_flush_method
        fl = self.flavor
        self.trx_commit = config.innodb_flush_log_at_trx_commit
        self.sync_op = "fdatasync" if fl.use_fdatasync(config.innodb_use_fdatasync) else "fsync"
        self.redo_write_through = fl.redo_write_through(method)
        self.redo_direct = fl.redo_is_direct(self.trx_commit, config.innodb_log_file_buffering)
        self.data_direct = fl.data_direct(method)
        self.data_write_through = method == "O_DSYNC" and fl.o_dsync_data_write_through
        self.dblwr_segment_pages = config.innodb_doublewrite_pages or fl.dblwr_segment_pages
        self.sync_cpu_half_s = workload.sync_cpu_us * 0.5e-6
        self.sync_side_cpu_s = workload.sync_side_cpu_us * 1e-6
        self.wakeup_s = workload.wakeup_us * 1e-6
        self.sleep_cpu_s = workload.sleep_cpu_us * 1e-6
        self.sleep_side_cpu_s = workload.sleep_side_cpu_us * 1e-6

        # redo state (LSNs in bytes)
        self.lsn = self.write_lsn = self.flushed_lsn = self.checkpoint_lsn = 0
        self.unsynced_redo_bytes = 0
        self.redo_leader_busy = False
        self.redo_flush_requested = 0   # an LSN a page write waits to see durable
        self.written_event = env.event()
        self.flushed_event = env.event()
        self.checkpoint_event = env.event()
        self.writer_wakeup = None
        self.flusher_wakeup = None
        self.checkpoint_request = None
        if fl.mariadb_page_cleaner:
            # log_t::set_capacity (log0log.cc): capacity 90% of the file (less its header),
            # less 48 pages and 10%; async flush at 7/8 of that, sync flush at all of it
            capacity = config.innodb_redo_log_capacity - 12288
            capacity -= capacity // 10
            margin = capacity - 48 * PAGE_BYTES
            margin -= margin // 10
            self.log_capacity = capacity
            self.async_flush_age = margin - margin // 8
            self.sync_flush_age = margin
            self.stop_age = margin
        else:
            # redo capacity points, as log0files_capacity.cc derives them from the capacity
            hard = config.innodb_redo_log_capacity * 30 // 32
            soft = int(hard * 0.95)
            self.log_capacity = hard
            self.async_flush_age = soft * 7 // 8
            self.sync_flush_age = soft * 15 // 16
            self.stop_age = soft

        # buffer pool and tablespaces
        self.buffer_pool_pages = config.innodb_buffer_pool_size // PAGE_BYTES
        self.flush_list = FlushList()
        self.inflight_lsns: list[int] = []   # oldest LSN of each segment being written
        self.avg_page_rate = 0.0
        # MariaDB: the flush targets its mini-transactions ask for (buf_flush_async_lsn,
        # buf_flush_sync_lsn) and its cleaner's idle state
        self.flush_ahead = fl.mariadb_page_cleaner
        self.async_flush_target = self.sync_flush_target = 0
        self.cleaner_idle = True
        self.cleaner_wakeup = None
        self.unflushed: dict[int, int] = {}
        self.dirty_carry = Carry()
        self.hot_carry = Carry()
        self.hot_pages_clean = 0   # hot pages written back, dirtied again at the next commit
        self.dblwr_carry = Carry()
        self.pages_dirtied = 0
        self.growth_carry = 0.0
        self.next_extend_space = 0
        self.stalled_users = 0
        self._file_draws: list[int] = []

        # binlog
        self.binlog_forming = BinlogGroup(env)
        self.binlog_flush_wakeup = None
        self.binlog_sync_wakeup = None
        self.binlog_sync_queue: list = []
        self.binlog_unsynced_bytes = 0
        self.binlog_sync_counter = 0

        # measurement
        self.commits_done = None   # an event when a commit target is set (max_commits)
        self.commit_target = 0
        self.measuring = False
        self.commit_latencies: list[float] = []
        self.trx_latencies: list[float] = []
        self.stall_s = 0.0
        self.max_age = 0
        self.cpu_busy_s = 0.0

    def preload(self, start) -> None:
        """Start from a server that has redo since its last checkpoint and dirty pages
        (a ServerStart), before start(): the pages spread evenly over that redo."""
        start.validate()
        age = int(start.checkpoint_age)
        self.lsn = self.write_lsn = self.flushed_lsn = age
        self.checkpoint_lsn = 0
        pages = int(start.dirty_pages)
        chunks = min(pages, 16)
        for i in range(chunks):
            share = pages // chunks + (1 if i < pages % chunks else 0)
            self.flush_list.add(max(1, age * (i + 1) // chunks), share,
                                self.hot_pages(share))

    # ---- small helpers used by the thread functions -------------------------------
    def count(self, name: str, n: int = 1) -> None:
        self.counters[name] += n

    def mark_written(self) -> None:
        ev = self.written_event
        if ev.callbacks:  # nobody waiting: keep the event, schedule nothing
            self.written_event = self.env.event()
            ev.succeed()

    def mark_flushed(self, upto: int) -> None:
        if upto > self.flushed_lsn:
            self.flushed_lsn = upto
        ev = self.flushed_event
        if ev.callbacks:
            self.flushed_event = self.env.event()
            ev.succeed()

    def oldest_modification(self) -> int | None:
        """buf_pool.get_oldest_modification(0): the oldest page dirty or still being
        written; None when there is none."""
        oldest = self.flush_list.oldest_lsn()
        if self.inflight_lsns:
            inflight = min(self.inflight_lsns)
            oldest = inflight if oldest is None else min(oldest, inflight)
        return oldest

    def oldest_dirty_lsn(self) -> int:
        """The checkpoint may not pass a page that is dirty or still being written."""
        oldest = self.oldest_modification()
        return self.lsn if oldest is None else oldest

    def hot_pages(self, k: int) -> int:
        """How many of k pages dirtied for the first time the workload goes on changing."""
        share = self.workload.hot_page_share
        if not share:
            return 0
        return self.hot_carry.take(k * share, k)

    def work_draws(self):
        """Each transaction's work relative to the mean (work_cv > 0): gamma draws of
        mean 1 and that coefficient of variation, drawn in batches."""
        cv = self.workload.work_cv
        shape = 1.0 / (cv * cv)
        while True:
            yield from self.rng.gamma(shape, 1.0 / shape, size=1024).tolist()

    def checkpoint_age(self) -> int:
        return self.lsn - self.checkpoint_lsn

    def rng_files(self, k: int) -> set[int]:
        """The tablespaces k page writes land on (uniform over the workload's files)."""
        n = self.workload.tablespaces
        if n == 1:
            return {0}
        draws = self._file_draws
        if len(draws) < k:
            draws.extend(self.rng.integers(0, n, size=max(4096, k)).tolist())
        files = set(draws[-k:])
        del draws[-k:]
        return files

    def on_cpu(self, seconds: float, keep: bool = False, pool: Semaphore | None = None,
               woken: bool = False):
        """Run for `seconds` on one of the cores (FIFO when all are busy); with keep the
        thread goes on running afterwards: the core stays taken until cpu_release() of
        the pool returned. pool: the cores the thread may run on (default: the general
        ones). woken: a thread back from a sleep, which the kernel's scheduler runs
        before the threads that have been running (their lag is spent, its is not)."""
        pool = pool or self.cpu
        ev = pool.acquire(first=woken)
        if ev is not None:
            if pool is self.cpu:
                yield ev
            else:
                # A thread queued behind the completion cores is cache-hot there; once it
                # has waited sched_migration_cost the load balancer lets a free core pull it.
                yield ev | self.env.timeout(MIGRATION_COST_S)
                if not ev.triggered and pool.withdraw(ev):
                    pool = self.cpu
                    ev = pool.acquire(first=woken)
                    if ev is not None:
                        yield ev
        yield self.env.timeout(seconds)
        if not keep:
            pool.release()
        if self.measuring:
            self.cpu_busy_s += seconds
        return pool

    def still_on_cpu(self, seconds: float):
        """More work for a thread that holds its core (no queueing)."""
        yield self.env.timeout(seconds)
        if self.measuring:
            self.cpu_busy_s += seconds

    @staticmethod
    def cpu_release(pool: Semaphore) -> None:
        """A thread holding a core of `pool` (on_cpu's keep) blocks: the core is free."""
        pool.release()

    def woken(self):
        """A thread that slept on an event runs again after the host's wake-up."""
        if self.wakeup_s:
            yield self.env.timeout(self.wakeup_s)

    def commit_sync(self, op: str, size: int, direct: bool, pre_cpu: bool = True):
        """A sync in the commit path as the syncing thread lives it: the call's CPU (the
        first half unless the caller charged it, running on from its own work), the
        device, the wake-up when the device completes, then the second half — for which
        the woken thread queues for a core like any other."""
        if pre_cpu and self.sync_cpu_half_s:
            yield from self.on_cpu(self.sync_cpu_half_s, pool=self.server_cpu)
        yield from self.device.sync(op, size, direct)
        if self.sync_side_cpu_s:
            self.env.process(self.on_cpu(self.sync_side_cpu_s))
        if self.wakeup_s:
            yield self.env.timeout(self.wakeup_s)
        if self.sync_cpu_half_s:
            # a woken thread queues behind the statements of the running ones
            yield from self.on_cpu(self.sync_cpu_half_s, pool=self.server_cpu)

    def flush_unflushed_spaces(self):
        """fil_flush_file_spaces: one sync per tablespace written since its last sync."""
        while self.unflushed:
            space, nbytes = self.unflushed.popitem()
            yield from self.device.sync(self.sync_op, nbytes, self.data_direct)
            self.count("Innodb_data_fsyncs")
            self.count("data_file_syncs")

    # ---- the user threads ----------------------------------------------------------
    def log_free_check(self):
        """Users wait while the checkpoint age is past the point where redo would run out."""
        if self.checkpoint_age() < self.stop_age:
            return
        start = self.env.now
        self.stalled_users += 1
        wake(self.checkpoint_request)
        while self.checkpoint_age() >= self.stop_age:
            yield self.checkpoint_event
        self.stalled_users -= 1
        if self.measuring:
            self.stall_s += self.env.now - start

    def fsp_extend(self):
        """A user thread that runs out of space in a tablespace extends it and syncs it:
        one fsync per extension in every flush method (the 8.0.14 / 5.7.25 fix), two in
        MariaDB's."""
        self.next_extend_space = (self.next_extend_space + 1) % self.workload.tablespaces
        self.count("file_extensions")
        for _ in range(self.flavor.extension_syncs):
            yield from self.device.sync(self.sync_op, PAGE_BYTES, self.data_direct)
            self.count("Innodb_data_fsyncs")
            self.count("extension_syncs")

    def connection(self):
        env, wl = self.env, self.workload
        log_bin = self.config.log_bin
        trx_commit = self.trx_commit
        cpu_us, client_cpu_us = wl.cpu_us_per_trx, wl.client_cpu_us_per_trx
        sleeps = trx_commit == 1 or (log_bin and self.config.sync_binlog > 0)
        if sleeps:
            # every commit sleeps on a sync: the threads go idle and are woken each
            # time, which costs what one connection's transactions cost
            cpu_us = max(cpu_us, wl.cpu_us_per_trx_sleeping)
            client_cpu_us = max(client_cpu_us, wl.client_cpu_us_per_trx_sleeping)
        # what a commit's own sleep on the sync costs (leader or not: switched out and
        # back in, woken), on top of the sync calls' CPU its group shares
        server_cpu = self.server_cpu
        sleep_s = self.sleep_cpu_s if sleeps else 0.0
        sleep_side_s = self.sleep_side_cpu_s if sleeps else 0.0
        cpu_s = cpu_us * 1e-6
        client_cpu_s = client_cpu_us * 1e-6
        # the time outside both CPUs (the wire) is what the workload says it is
        client_s = (wl.client_us_per_trx - wl.client_cpu_us_per_trx) * 1e-6
        redo_at_prepare = log_bin and not self.flavor.redo_sync_in_binlog_flush_stage
        # A committing thread runs on from its statement's CPU into the redo write and
        # sync calls it makes as the group commit leader; only the leader-based redo
        # path (no writer threads, no binlog) is modelled that way.
        hold = (not log_bin and trx_commit in (1, 2) and cpu_s > 0
                and not self.flavor.redo_writer_threads)
        counters = self.counters
        # Each statement is a round trip: the client's CPU, the wire, the server's CPU.
        # Cut into statements, a transaction queues for a core as often as a real one
        # (a thread woken behind them waits for statements, not whole transactions).
        n = wl.statements_per_trx
        client_cpu_s /= n
        client_s /= n
        cpu_s /= n
        work = self.work_draws() if wl.work_cv else None
        m = 1.0
        while True:
            t0 = env.now
            # this transaction's share of the mean work (rows, index pages: transactions
            # differ, and without that two connections fall into lockstep, never meeting
            # at a sync or a core the way real ones do)
            if work is not None:
                m = next(work)
            for i in range(n):
                if client_cpu_s:  # a client on this host takes a core for its share
                    yield from self.on_cpu(client_cpu_s * m)
                if client_s > 0:
                    yield env.timeout(client_s * m)
                if i == n - 1 and self.checkpoint_age() >= self.stop_age:
                    yield from self.log_free_check()
                if cpu_s:
                    held = yield from self.on_cpu(cpu_s * m, keep=hold and i == n - 1,
                                                  pool=server_cpu)
            # the core the committing thread still holds (None: it holds none)
            on_cpu = held if hold else None
            # the transaction's mini-transactions: redo appended, pages dirtied
            self.lsn += wl.redo_bytes_per_trx
            lsn = self.lsn
            if self.lsn - self.checkpoint_lsn > self.max_age:
                self.max_age = self.lsn - self.checkpoint_lsn
            if self.flush_ahead and lsn - self.checkpoint_lsn > self.async_flush_age:
                buf_flush_ahead(self, lsn)
            k = self.dirty_carry.take(wl.pages_dirtied_per_trx)
            if k:
                self.flush_list.add(lsn, k, self.hot_pages(k))
                self.pages_dirtied += k
            if self.hot_pages_clean:
                # a hot page is changed again within a few hundred commits of its write:
                # at once, next to the redo the cleaner works in (tens of MB)
                k = self.hot_pages_clean
                self.hot_pages_clean = 0
                self.flush_list.add(lsn, k, k, k)
                self.pages_dirtied += k
            self.growth_carry += wl.growth_bytes_per_trx
            if self.growth_carry >= wl.extend_bytes:
                self.growth_carry -= wl.extend_bytes
                if on_cpu:
                    self.cpu_release(on_cpu)
                    on_cpu = None
                yield from self.fsp_extend()
            # commit
            t1 = env.now
            if not log_bin:
                if trx_commit == 1:
                    yield from log_write_up_to(self, lsn, flush=True, on_cpu=on_cpu)
                elif trx_commit == 2:
                    yield from log_write_up_to(self, lsn, flush=False, on_cpu=on_cpu)
                else:
                    wake(self.writer_wakeup)
            else:
                if redo_at_prepare and trx_commit in (1, 2):
                    yield from log_write_up_to(self, lsn, flush=trx_commit == 1)
                yield binlog_enqueue(self, lsn, wl.binlog_bytes_per_trx)
            if sleep_side_s:
                env.process(self.on_cpu(sleep_side_s, pool=server_cpu))
            if sleep_s:
                # Back from its commit sleep the thread is scheduled ahead of the queued
                # statements (16 connections, 2 vCPUs: COMMIT p50 measured 1.6-2.3 ms,
                # modelled 2.8 ms in FIFO order, 2.3 ms this way). The leader's second
                # half of the sync stays FIFO: run first, it ends groups sooner than the
                # server's (redo syncs at 16 connections +40 %).
                yield from self.on_cpu(sleep_s, pool=server_cpu, woken=True)
            counters["commits"] += 1
            if self.commits_done is not None and counters["commits"] >= self.commit_target:
                wake(self.commits_done)
            if self.measuring:
                t2 = env.now
                self.commit_latencies.append(t2 - t1)
                self.trx_latencies.append(t2 - t0)

    # ---- wiring --------------------------------------------------------------------
    def start(self) -> None:
        env, fl = self.env, self.flavor
        if fl.redo_writer_threads:
            env.process(log_writer(self))
            env.process(log_flusher(self))
        else:
            env.process(srv_master_log_flush(self))
        env.process(log_checkpointer(self))
        env.process(mariadb_page_cleaner(self) if fl.mariadb_page_cleaner
                    else page_cleaner(self))
        if self.config.log_bin:
            env.process(binlog_flush_stage(self))
            if fl.redo_sync_in_binlog_flush_stage:
                env.process(binlog_sync_stage(self))
        for _ in range(self.workload.connections):
            env.process(self.connection())
