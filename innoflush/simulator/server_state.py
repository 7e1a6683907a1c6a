"""A simulated server's state as its settings build it: what its threads read (derived
from the config, the workload and the flavor), the host's cores and device, and the
state by concern they share. The threads that run on it are server.py's Server."""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..profiles import DeviceProfile
from .binlog import Binlog
from .buffer_pool import BufferPool
from .config import ServerConfig, Workload
from .device import Device
from .events import Environment
from .mariadb_page_cleaner import FlushAhead
from .measurement import Measurement
from .redo import RedoLog
from .semaphore import Semaphore


class ServerState:
    """The settings the threads read, the host's cores and device, and the state they
    share: the redo log (redo.py), the buffer pool (buffer_pool.py), MariaDB's flush
    requests (mariadb_page_cleaner.py), the binlog (binlog.py), the measurement
    (measurement.py) and the counters; on env, the environment the threads run on."""

    def __init__(self, env: Environment, config: ServerConfig, workload: Workload,
                 profile: DeviceProfile, seed: int, queue_depth: int = 32):
        self.flavor = config.validate()
        workload.validate()
        self.config = config
        self.workload = workload
        self.env = env
        self.rng = np.random.default_rng(seed)
        self.device = Device(env, profile, self.rng, queue_depth)
        self.cpu = Semaphore(env, config.cpu_cores)
        self.server_cpu = self.cpu
        # every commit sleeps on a sync: the redo's (trx_commit=1) or the binlog's
        self.commits_sleep = (config.innodb_flush_log_at_trx_commit == 1
                              or (config.log_bin and config.sync_binlog > 0))
        io_cores = config.io_completion_cores
        if io_cores and io_cores < config.cpu_cores and self.commits_sleep:
            # Every commit sleeps on a device completion, and the woken thread runs where
            # the interrupt was taken (wake-affine); the scheduler then leaves these
            # cache-hot threads there: the server's connection threads share the
            # completion cores, the clients and the background work get the others.
            self.server_cpu = Semaphore(env, io_cores)
            self.cpu = Semaphore(env, config.cpu_cores - io_cores)
        self.counters: Counter[str] = Counter()

        method = config.innodb_flush_method
        fl = self.flavor
        self.trx_commit = config.innodb_flush_log_at_trx_commit
        self.sync_op = "fdatasync" if fl.use_fdatasync(config.innodb_use_fdatasync) else "fsync"
        self.log_writer_threads = fl.log_writer_threads(config.innodb_log_writer_threads,
                                                        config.cpu_cores, config.log_bin)
        self.io = fl.io_policy(method)
        self.data_direct = self.io.data_direct
        self.dblwr_segment_pages = config.innodb_doublewrite_pages or fl.dblwr_segment_pages
        self.sync_cpu_half_s = workload.sync_cpu_us * 0.5e-6
        self.sync_side_cpu_s = workload.sync_side_cpu_us * 1e-6
        self.wakeup_s = workload.wakeup_us * 1e-6
        self.sleep_cpu_s = workload.sleep_cpu_us * 1e-6
        self.sleep_side_cpu_s = workload.sleep_side_cpu_us * 1e-6
        # Who waits for a core when the device completes its redo I/O (Server.device_woken):
        # the connection that leads the group commit (MySQL 5.7, MariaDB), not MySQL
        # 8.0's log_writer/log_flusher, which spin on their core between requests
        # (innodb_log_spin_cpu_abs_lwm) and were never measured here.
        self.redo_io_requeues = not self.log_writer_threads

        self.redo = RedoLog(env, fl, config)
        self.buf_pool = BufferPool(config, workload, self.rng)
        self.flush_ahead = FlushAhead()   # read by MariaDB's flavors only
        self.start_uptime_s: float | None = None   # Server.preload(): a fresh server's age
        self.binlog = Binlog(fl.redo_sync_in_binlog_flush_stage,
                             fl.has_binlog_group_commit_counters)
        self.measurement = Measurement()
        self.cpu_slots = self._fifo_cpu_slots()
        # A lone connection finds its core free whenever it asks when no other thread
        # runs on the server's cores between its statements: no side CPU slices, and
        # no sync calls' CPU (the log flusher's and the binlog's, in the background at
        # trx_commit 0/2). Its wire time and its statement's CPU are then one wait.
        wl = workload
        self.lone_connection = (wl.connections == 1 and not self.sync_cpu_half_s
                                and not self.sync_side_cpu_s and not wl.sleep_side_cpu_us)

    def _fifo_cpu_slots(self) -> list[float] | None:
        """When the cores run nothing but the statements' CPU slices — fixed lengths,
        first come first served, nobody keeping a core or jumping the queue — a slice's
        start is known when it queues: the time the first core comes free. Then the
        cores are a heap of those times and a slice is one timeout, not a wait for a
        hand-off then a timeout: the same schedule, one event less per queued slice.
        None where anything else runs on them (the list of what does is Server.on_cpu's
        callers)."""
        wl, cfg = self.workload, self.config
        hold = (not cfg.log_bin and self.trx_commit in (1, 2)
                and not self.log_writer_threads)
        # where commits do not sleep a wire is paid on an idle core only (Server.connection):
        # the heap cannot tell whether a slice that ends this instant has let go of its
        # core yet, the semaphore can
        idle_wire = (wl.client_us_per_trx > wl.client_cpu_us_per_trx
                     and not self.commits_sleep)
        if (self.server_cpu is not self.cpu or hold or idle_wire or wl.connections < 2
                or wl.client_cpu_us_per_trx or wl.client_cpu_us_per_trx_sleeping
                or wl.sync_cpu_us or wl.sync_side_cpu_us or wl.sleep_cpu_us
                or wl.sleep_side_cpu_us or wl.commit_cpu_us):
            return None
        return [0.0] * self.cpu.capacity
