"""One simulated server: its threads on its state (server_state.py): the helpers they
share, its connections, and the wiring that starts its background threads."""

from __future__ import annotations

from collections.abc import Iterator
from heapq import heappop, heappush

from ..profiles import DeviceProfile
from .binlog import ordered_commit
from .config import ServerConfig, ServerStart, Workload, commit_sleep_share
from .events import Environment, SimGen, wake
from .flavors import PAGE_BYTES
from .histogram import PENDING
from .mariadb_page_cleaner import buf_flush_ahead, mariadb_page_cleaner
from .measurement import Window, largest_burst
from .page_cleaner import adaptive_flush_lwm, page_cleaner
from .redo import (
    log_checkpointer,
    log_flusher,
    log_free_check,
    log_write_up_to,
    log_writer,
    srv_master_log_flush,
)
from .semaphore import Semaphore
from .server_state import ServerState

# sched_migration_cost_ns (Linux, 0.5 ms): a task that ran more recently than this is
# cache-hot, and the load balancer leaves it on its run queue
MIGRATION_COST_S = 500e-6


class Server(ServerState):
    """A simulated server: its state (ServerState, server_state.py) and what its threads
    do with it: the helpers they share to run on the host's cores and sync, the user
    threads (connection, fsp_extend), and the wiring that starts the threads and runs
    the measured window."""

    def __init__(self, config: ServerConfig, workload: Workload, profile: DeviceProfile,
                 seed: int, queue_depth: int = 32):
        # the environment its threads run on: start() and measure() run it
        super().__init__(Environment(), config, workload, profile, seed, queue_depth)

    # ---- small helpers used by the thread functions -------------------------------
    def count(self, name: str, n: int = 1) -> None:
        self.counters[name] += n

    def work_draws(self) -> Iterator[float]:
        """Each transaction's work relative to the mean (work_cv > 0): gamma draws of
        mean 1 and that coefficient of variation, drawn in batches."""
        cv = self.workload.work_cv
        shape = 1.0 / (cv * cv)
        while True:
            yield from self.rng.gamma(shape, 1.0 / shape, size=1024).tolist()

    def on_cpu(self, seconds: float, keep: bool = False, pool: Semaphore | None = None,
               woken: bool = False) -> SimGen[Semaphore]:
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
        ev = self.env.pass_time(self.env._now + seconds)
        if ev is not None:
            yield ev
        if not keep:
            pool.release()
        self.measurement.ran(seconds)
        return pool

    def on_any_cpu(self, seconds: float) -> SimGen[None]:
        """A statement of a thread its client's socket woke, not the storage: it runs on
        whichever core comes free first, the completion cores' or the others' (only a
        commit's own statement is pulled to the completion cores)."""
        gen, io = self.cpu, self.server_cpu
        pool = gen
        a = gen.acquire()
        if a is not None:
            b = io.acquire()
            if b is None:
                gen.withdraw(a)
                pool = io
            else:
                yield a | b
                # the first grant wins; one made at the same instant is given back
                if a.triggered:
                    if not io.withdraw(b):
                        io.release()
                else:
                    if not gen.withdraw(a):
                        gen.release()
                    pool = io
        yield self.env.timeout(seconds)
        pool.release()
        self.measurement.ran(seconds)

    def still_on_cpu(self, seconds: float) -> SimGen[None]:
        """More work for a thread that holds its core (no queueing)."""
        yield self.env.timeout(seconds)
        self.measurement.ran(seconds)

    @staticmethod
    def cpu_release(pool: Semaphore) -> None:
        """A thread holding a core of `pool` (on_cpu's keep) blocks: the core is free."""
        pool.release()

    def woken(self) -> SimGen[None]:
        """A thread that slept on an event runs again after the host's wake-up."""
        if self.wakeup_s:
            yield self.env.timeout(self.wakeup_s)

    def commit_sync(self, op: str, size: int, direct: bool,
                    pre_cpu: bool = True, requeue: bool = True) -> SimGen[None]:
        """A sync in the commit path as the syncing thread lives it: the call's CPU (the
        first half unless the caller charged it, running on from its own work), the
        device, the wake-up when the device completes, then the second half — for which
        the woken thread queues for a core like any other; without a second half it
        still waits for a core (device_woken) unless not requeue."""
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
        elif requeue:
            yield from self.device_woken()

    def device_woken(self) -> SimGen[None]:
        """A thread the device woke (its write or sync complete) runs again once a core
        is free: it queues behind the threads already runnable, first come first served,
        not ahead of them. A real server's redo leader waits so after its write and its
        sync (perf, scripts/trace_group_commit.py), and its redo syncs come slower than
        the device alone would allow; without this wait the model's group commit cycled
        at the device's pace and, once sync_binlog 1 -> 0 freed the cycle, made about
        twice the redo syncs measured (docs/model.md, 'A thread the device woke waits
        for a core', has the waits and counts)."""
        slots = self.cpu_slots
        if slots is not None:
            # statements alone on the cores (ServerState._fifo_cpu_slots): the first core
            # comes free at the heap's head; a wait of no length leaves the heap as it is
            free = slots[0]
            if free > self.env.now:
                yield self.env.timeout(free - self.env.now)
            return
        if self.server_cpu is not self.cpu:
            yield from self.on_any_cpu(0.0)
            return
        ev = self.cpu.acquire()
        if ev is not None:
            yield ev
        self.cpu.release()

    # ---- the user threads ----------------------------------------------------------
    def fsp_extend(self) -> SimGen[None]:
        """A user thread that runs out of space in a tablespace extends it and syncs it:
        one fsync per extension in every flush method (the 8.0.14 / 5.7.25 fix), two in
        MariaDB's."""
        self.count("file_extensions")
        for _ in range(self.flavor.extension_syncs):
            yield from self.device.sync(self.sync_op, PAGE_BYTES, self.data_direct)
            self.count("Innodb_data_fsyncs")
            self.count("extension_syncs")

    def connection(self) -> SimGen[None]:
        """A client's connection: its transactions one after another, each statement's
        client CPU, wire and server CPU, then the transaction's redo and dirtied pages
        and its commit. The simulator's hot path, kept in one piece on purpose: inlined
        for speed, its commonest steps written out here rather than called
        (bench/sim_speed.py measures it)."""
        env, wl = self.env, self.workload
        log, buf_pool, meas = self.redo, self.buf_pool, self.measurement
        log_bin = self.config.log_bin
        trx_commit = self.trx_commit
        cpu_us, client_cpu_us = wl.cpu_us_per_trx, wl.client_cpu_us_per_trx
        sleeps = self.commits_sleep
        share = commit_sleep_share(self.config, wl) if sleeps else 0.0
        if sleeps:
            # every commit sleeps on a sync: the threads go idle and are woken each
            # time, which costs what one connection's transactions cost (as often as
            # they sleep: the share of the sleeps where it was measured)
            cpu_us += max(0.0, wl.cpu_us_per_trx_sleeping - cpu_us) * share
            client_cpu_us += max(0.0, wl.client_cpu_us_per_trx_sleeping
                                 - client_cpu_us) * share
        # what a commit's own sleep on the sync costs (leader or not: switched out and
        # back in, woken), on top of the sync calls' CPU its group shares
        server_cpu = self.server_cpu
        sleep_s = self.sleep_cpu_s * share
        # the commit's own CPU, on its path after the redo/binlog calls, at any setting
        post_commit_s = sleep_s + wl.commit_cpu_us * 1e-6
        sleep_side_s = self.sleep_side_cpu_s * share
        cpu_s = cpu_us * 1e-6
        client_cpu_s = client_cpu_us * 1e-6
        # the time outside both CPUs (the wire) is what the workload says it is
        client_s = (wl.client_us_per_trx - wl.client_cpu_us_per_trx) * 1e-6
        redo_at_prepare = log_bin and not self.flavor.redo_sync_in_binlog_flush_stage
        flush_ahead = self.flavor.mariadb_page_cleaner
        async_flush_age = log.async_flush_age
        # A committing thread runs on from its statement's CPU into the redo write and
        # sync calls it makes as the group commit leader; only the leader-based redo
        # path (no writer threads, no binlog) is modelled that way.
        hold = (not log_bin and trx_commit in (1, 2) and cpu_s > 0
                and not self.log_writer_threads)
        counters = self.counters
        # Each statement is a round trip: the client's CPU, the wire, the server's CPU.
        # Cut into statements, a transaction queues for a core as often as a real one
        # (a thread woken behind them waits for statements, not whole transactions).
        n = wl.statements_per_trx
        client_cpu_s /= n
        client_s /= n
        cpu_s /= n
        if wl.round_trip_floor_us and not sleeps and wl.connections == 1:
            # alone and never sleeping, the connection and its client hand off at full
            # speed: on a host whose idle cores wake slowly a statement's round trip takes
            # at least the floor, whatever its CPU (config.Workload.round_trip_floor_us)
            client_s = max(client_s, wl.round_trip_floor_us * 1e-6 - client_cpu_s - cpu_s)
        work = self.work_draws() if wl.work_cv else None
        m = 1.0
        held: Semaphore | None = None
        slots = self.cpu_slots
        lone = self.lone_connection and client_s > 0 and cpu_s > 0
        # With completion cores apart, only the statement that commits runs there (its
        # sleep on the sync ends on the completion interrupt's core, and perf sched saw
        # the threads stay); a transaction's other statements are woken by the client's
        # socket and run wherever a core is free (confined with the commit, sysbench's
        # many-statement transactions were modelled slow: docs/model.md, 'Where woken
        # threads run').
        split = server_cpu is not self.cpu
        redo_bytes = wl.redo_bytes_per_trx
        growth_per_trx, extend_bytes = wl.growth_bytes_per_trx, wl.extend_bytes
        # the measured window's latency histograms (what a commit records, below)
        commit_latencies, trx_latencies = meas.commit_latency, meas.trx_latency
        while True:
            t0 = env._now
            # this transaction's share of the mean work (rows, index pages: transactions
            # differ, and without that two connections fall into lockstep, never meeting
            # at a sync or a core the way real ones do)
            if work is not None:
                m = next(work)
            for i in range(n):
                if client_cpu_s:  # a client on this host takes a core for its share
                    yield from self.on_cpu(client_cpu_s * m)
                # the wire time; a lone connection's runs on into its statement's CPU
                # as one wait (Server.lone_connection) where no log_free_check is due
                # (the age cannot rise meanwhile: only this connection appends redo)
                wire = client_s * m if client_s > 0 else 0.0
                if wire and not (lone and (i < n - 1 or log.lsn - log.checkpoint_lsn
                                           < log.stop_age)):
                    # Once commits stop sleeping the wire is paid on an idle core only:
                    # measured while they slept it is mostly idle vCPUs waking, and with
                    # every core busy a client's request finds its thread a place in the
                    # run queue, the core queue below (with the wire kept, a busy
                    # server ran faster than the model allowed:
                    # docs/validation/notebook/2026-11-29-wire-paid-on-an-idle-core.md)
                    # (where commits do not sleep the cores are one pool: server_cpu)
                    if sleeps or server_cpu.free:
                        ev = env.pass_time(env._now + wire)
                        if ev is not None:
                            yield ev
                    wire = 0.0
                if (i == n - 1 and not wire
                        and log.lsn - log.checkpoint_lsn >= log.stop_age):
                    yield from log_free_check(self)
                if cpu_s:
                    keep = hold and i == n - 1
                    if slots is not None:
                        free_at = heappop(slots)
                        now = env._now
                        end = (free_at if free_at > now else now) + cpu_s * m
                        heappush(slots, end)
                        ev = env.pass_time(end)
                        if ev is not None:
                            yield ev
                        if meas.measuring:   # Measurement.ran, inlined
                            meas.cpu_busy_s += cpu_s * m
                    elif split and i < n - 1:
                        if wire:
                            yield env.timeout(wire)
                        yield from self.on_any_cpu(cpu_s * m)
                    elif server_cpu.free and not server_cpu.waiters:
                        # on_cpu inlined for a free core: the hottest call of the model
                        server_cpu.free -= 1
                        ev = env.pass_time(env._now + (wire + cpu_s * m))
                        if ev is not None:
                            yield ev
                        if not keep:
                            server_cpu.release()
                        if meas.measuring:
                            meas.cpu_busy_s += cpu_s * m
                        held = server_cpu
                    else:
                        if wire:   # not for a lone connection: its core is free
                            yield env.timeout(wire)
                        held = yield from self.on_cpu(cpu_s * m, keep=keep, pool=server_cpu)
            # the core the committing thread still holds (None: it holds none)
            on_cpu = held if hold else None
            # the transaction's mini-transactions (mtr_t::commit): its redo enters the
            # log buffer (log_buffer_reserve, MariaDB's log_t::append_prepare), its pages
            # are dirtied
            lsn = log.lsn = log.lsn + redo_bytes
            age = lsn - log.checkpoint_lsn
            if age > meas.max_age:
                meas.max_age = age
            if flush_ahead and age > async_flush_age:
                buf_flush_ahead(self, lsn)
            buf_pool.note_modification(lsn)
            # its inserts grow its tablespace: when they fill the space the last
            # extension added, fsp_reserve_free_extents extends the file (the carry
            # is the buffer pool's; here, not a call per commit)
            growth = buf_pool.growth_carry + growth_per_trx
            full = growth >= extend_bytes
            buf_pool.growth_carry = growth - extend_bytes if full else growth
            if full:
                if on_cpu:
                    self.cpu_release(on_cpu)
                    on_cpu = None
                yield from self.fsp_extend()
            # commit
            t1 = env._now
            if not log_bin:
                if trx_commit == 1:
                    yield from log_write_up_to(self, lsn, flush=True, on_cpu=on_cpu)
                elif trx_commit == 2:
                    yield from log_write_up_to(self, lsn, flush=False, on_cpu=on_cpu)
                else:
                    wake(log.writer_wakeup)
            else:
                if redo_at_prepare and trx_commit in (1, 2):
                    yield from log_write_up_to(self, lsn, flush=trx_commit == 1)
                yield from ordered_commit(self, lsn, wl.binlog_bytes_per_trx)
            if sleep_side_s:
                env.process(self.on_cpu(sleep_side_s, pool=server_cpu))
            if post_commit_s:
                # Back from its commit sleep the thread is scheduled ahead of the queued
                # statements (in FIFO order the model's COMMIT took longer than the
                # server's at many connections). The leader's second half of the sync
                # stays FIFO: run first, it ends groups sooner than the server's, and
                # makes too many redo syncs (docs/model.md, 'A woken thread runs first').
                yield from self.on_cpu(post_commit_s, pool=server_cpu, woken=sleeps)
            counters["commits"] = commits = counters["commits"] + 1
            # What the measurement records of a commit (Measurement), written here: the
            # window's commit cap, and while measuring the commit's and transaction's
            # latencies (LatencyHistogram.add, for both at once)
            done = meas.commits_done
            if done is not None and commits >= meas.commit_target:
                wake(done)
            if meas.measuring:
                now = env._now
                pending = commit_latencies.pending
                pending.append(now - t1)
                trx_latencies.pending.append(now - t0)
                if len(pending) >= PENDING:
                    commit_latencies.fold()
                    trx_latencies.fold()

    # ---- wiring --------------------------------------------------------------------
    def preload(self, start: ServerStart) -> None:
        """Start from a server that has redo since its last checkpoint and dirty pages
        (a ServerStart), before start(): the pages spread evenly over that redo."""
        start.validate()
        self.start_uptime_s = start.uptime_s
        age = int(start.checkpoint_age)
        self.redo.start_at(age)
        span = None
        if not self.flavor.mariadb_page_cleaner:
            # MySQL's checkpointer trails its oldest dirty page by seconds of redo, and its
            # page cleaner keeps that page near the adaptive low-water mark: the status
            # shows the checkpoint age only (the oldest page's is an INNODB_METRICS counter,
            # off by default), so the pages start no older than that mark
            span = int(adaptive_flush_lwm(self))
        self.buf_pool.preload(age, int(start.dirty_pages), span)
        if start.cleaner_active:
            self.flush_ahead.cleaner_idle = False

    def start(self) -> None:
        """Start the flavor's background threads and the workload's connections."""
        env, fl = self.env, self.flavor
        if self.log_writer_threads:
            env.process(log_writer(self))
            env.process(log_flusher(self))
        else:
            env.process(srv_master_log_flush(self))
        env.process(log_checkpointer(self))
        env.process(mariadb_page_cleaner(self) if fl.mariadb_page_cleaner
                    else page_cleaner(self))
        for _ in range(self.workload.connections):
            env.process(self.connection())

    def measure(self, duration_s: float, max_commits: int | None = None) -> Window:
        """Run the measured window: duration_s simulated seconds, or until max_commits
        more commits if that comes first. Returns what the window recorded."""
        env, dev, meas = self.env, self.device, self.measurement
        before = dict(self.counters)
        fb, wb = dev.flush_busy_s, dev.write_busy_s
        start = env.now
        end = env.timeout(duration_s)
        if max_commits is not None:
            commits_done = env.event()
            meas.begin(commits_done, self.counters["commits"] + max_commits)
            env.run(until=env.any_of([end, commits_done]))
        else:
            meas.begin()
            env.run(until=end)
        counters = {k: v - before.get(k, 0) for k, v in self.counters.items()}
        if meas.flush_passes:
            counters["flush_burst_max_pages"] = largest_burst(meas.flush_passes)
        return Window(
            duration_s=env.now - start,
            counters=counters,
            commit_latency=meas.commit_latency, trx_latency=meas.trx_latency,
            cpu_busy_s=meas.cpu_busy_s, stall_s=meas.stall_s, max_age=meas.max_age,
            device_flush_busy_s=dev.flush_busy_s - fb,
            device_write_busy_s=dev.write_busy_s - wb,
            device_queue_depth=dev.queue_depth, notes=sorted(dev.notes))
