"""What is simulated: the server's settings and the workload that drives it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any, TypeVar

from ..errors import UsageError
from .flavors import Flavor, get_flavor

MiB = 1024 * 1024
_D = TypeVar("_D", "ServerConfig", "Workload", "ServerStart")


@dataclass(frozen=True)
class ServerConfig:
    """The my.cnf settings the model reads (names follow the server variables)."""

    flavor: str = "mysql-8.0"
    innodb_flush_method: str = "O_DIRECT"
    innodb_flush_log_at_trx_commit: int = 1
    innodb_flush_log_at_timeout: float = 1.0
    innodb_use_fdatasync: bool | None = None   # None: the flavor's default
    innodb_log_file_buffering: bool | None = None  # MariaDB; None: the flavor's default
    innodb_log_writer_threads: bool | None = None  # MySQL 8.0.22+; None: the flavor's rule
    log_bin: bool = True
    sync_binlog: int = 1
    binlog_group_commit_sync_delay: int = 0    # microseconds, as the server variable
    innodb_doublewrite: bool = True
    innodb_doublewrite_pages: int | None = None  # None: the flavor's default
    innodb_io_capacity: int = 200
    innodb_io_capacity_max: int = 2000
    innodb_redo_log_capacity: int = 100 * MiB
    innodb_buffer_pool_size: int = 1024 * MiB
    innodb_max_dirty_pages_pct: float = 90.0
    innodb_max_dirty_pages_pct_lwm: float = 10.0
    innodb_adaptive_flushing_lwm: float = 10.0
    cpu_cores: int = 2
    # cores that take the data device's completion interrupts (its hardware queues' CPUs):
    # threads that sleep on a sync every commit are woken there and stay for the statement
    # that commits (a transaction's others run on any core); None: every core
    io_completion_cores: int | None = None

    def validate(self) -> Flavor:
        flavor = get_flavor(self.flavor)
        if self.innodb_flush_method not in flavor.flush_methods:
            raise UsageError(f"{flavor.title} has no innodb_flush_method "
                             f"{self.innodb_flush_method!r}; choose from "
                             f"{', '.join(flavor.flush_methods)}")
        if self.innodb_flush_log_at_trx_commit not in (0, 1, 2):
            raise UsageError("innodb_flush_log_at_trx_commit must be 0, 1 or 2")
        if not 0 < self.innodb_flush_log_at_timeout <= 2700:
            raise UsageError("innodb_flush_log_at_timeout must be in (0, 2700] seconds")
        if self.sync_binlog < 0:
            raise UsageError("sync_binlog must be >= 0")
        if self.binlog_group_commit_sync_delay < 0:
            raise UsageError("binlog_group_commit_sync_delay must be >= 0")
        if self.innodb_io_capacity < 100 or self.innodb_io_capacity_max < self.innodb_io_capacity:
            raise UsageError("need 100 <= innodb_io_capacity <= innodb_io_capacity_max")
        if self.innodb_redo_log_capacity < 8 * MiB:
            raise UsageError("innodb_redo_log_capacity must be at least 8M")
        if self.innodb_buffer_pool_size < 8 * MiB:
            raise UsageError("innodb_buffer_pool_size must be at least 8M")
        if self.cpu_cores < 1:
            raise UsageError("cpu_cores must be >= 1")
        if self.innodb_doublewrite_pages is not None and self.innodb_doublewrite_pages < 1:
            raise UsageError("innodb_doublewrite_pages must be >= 1")
        if self.io_completion_cores is not None and not \
                1 <= self.io_completion_cores <= self.cpu_cores:
            raise UsageError("io_completion_cores must be between 1 and cpu_cores")
        return flavor

    def to_dict(self) -> dict:
        return asdict(self)

    def commit_syncs(self) -> float:
        """The syncs on a commit's path: the redo's at trx_commit=1, the binary log's
        every sync_binlog groups."""
        redo = 1.0 if self.innodb_flush_log_at_trx_commit == 1 else 0.0
        return redo + (1.0 / self.sync_binlog if self.log_bin and self.sync_binlog > 0
                       else 0.0)


@dataclass(frozen=True)
class Workload:
    """What each transaction costs and does. Fitted from a live server by the advisor."""

    connections: int = 1
    cpu_us_per_trx: float = 150.0       # server CPU per transaction (parse, execute, commit)
    client_us_per_trx: float = 100.0    # outside the server: network round trips, client
    # client CPU burnt on the server's cores (a load generator on the same host); it is
    # part of the transaction's time outside the server, so at most client_us_per_trx
    client_cpu_us_per_trx: float = 0.0
    # SQL round trips per transaction (the COMMIT's included): each one a run of the
    # client's CPU, the wire and the server's CPU, queueing for a core on its own
    statements_per_trx: int = 1
    # coefficient of variation of a transaction's work (its CPU, client and wire time
    # drawn from a gamma distribution around the means above); 0: all alike
    work_cv: float = 0.0
    redo_bytes_per_trx: int = 2048
    binlog_bytes_per_trx: int = 1024
    # pages a transaction adds to the flush list for the first time (new pages, pages
    # first changed); with hot_page_share 0 the page writes it needs in the long run
    pages_dirtied_per_trx: float = 1.0
    # share of those the workload goes on changing (random secondary-index leaves, a
    # small table's pages): after each write one re-enters the flush list at the next
    # commit, so such pages are written once per checkpoint cycle, not once
    hot_page_share: float = 0.0
    tablespaces: int = 8                # files the dirty pages spread over
    # share of the first writes of those pages that go through the doublewrite buffer:
    # MariaDB writes a page re-initialised since its last write (a new page, a freed and
    # reused one) straight to its file — a young insert workload's pages mostly are; a
    # hot page's rewrite always goes through it
    dblwr_page_share: float = 1.0
    growth_bytes_per_trx: float = 400.0  # tablespace growth (inserts)
    extend_bytes: int = 4 * MiB          # file extension step (4 extents of 1 MiB)
    # What the host charges a sync in the commit path besides the device (lab calibrate
    # measures them; 0: nothing charged). The syncing thread burns CPU around the call
    # (syscall, submission, completion: half before the device, half after, when it
    # queues for a core again), more CPU goes elsewhere (interrupts, other threads'
    # wake-ups), and a thread that slept on the device or on a group-commit leader runs
    # again only after a wake-up; meanwhile later commits queue for the next group.
    # CPU per transaction whose commit slept on a sync (trx_commit=1) when that is more
    # than the above: its threads then sleep and wake every time, as one connection's do
    # (lab calibrate: the one-connection run); 0: no different
    cpu_us_per_trx_sleeping: float = 0.0
    client_cpu_us_per_trx_sleeping: float = 0.0
    sync_cpu_us: float = 0.0       # CPU per redo/binlog sync on the syncing thread's path
    sync_side_cpu_us: float = 0.0  # further CPU per sync, off that path
    sleep_cpu_us: float = 0.0      # CPU per commit that sleeps on a sync, on its path
    sleep_side_cpu_us: float = 0.0  # further CPU per such commit, off that path
    # The syncs a commit slept on where the sleeping figures above were measured: 1, or
    # more with the binary log on and synced as well as the redo (a group's leader sleeps
    # on both, its followers on the group once). A setting that keeps one sync of the two
    # keeps 1 / commit_sleeps of what sleeping cost (commit_sleep_share)
    commit_sleeps: float = 1.0
    wakeup_us: float = 0.0         # from the event a thread slept on to it running again
    # CPU every commit runs on its own path once its redo (and binlog) calls return,
    # whatever the durability setting: the commit's processing, which a live server's
    # CPU per transaction includes but its statements' time inside the server does not
    # (advise measures both and gives the difference here)
    commit_cpu_us: float = 0.0
    # The least wall time a statement's round trip takes at a lone connection whose
    # commits do not sleep on a sync: client and server then hand off to each other at
    # full speed, and on a host whose idle cores wake slowly (a VM whose vCPUs halt)
    # each hand-off waits for one (advise measures it: live/handoff.py); 0: no floor
    round_trip_floor_us: float = 0.0

    def validate(self) -> None:
        if self.connections < 1:
            raise UsageError("connections must be >= 1")
        for f in ("cpu_us_per_trx", "client_us_per_trx", "client_cpu_us_per_trx",
                  "pages_dirtied_per_trx", "growth_bytes_per_trx", "sync_cpu_us",
                  "sync_side_cpu_us", "sleep_cpu_us", "sleep_side_cpu_us", "wakeup_us",
                  "commit_cpu_us", "round_trip_floor_us",
                  "cpu_us_per_trx_sleeping", "client_cpu_us_per_trx_sleeping"):
            if getattr(self, f) < 0:
                raise UsageError(f"{f} must be >= 0")
        if self.commit_sleeps < 1:
            raise UsageError("commit_sleeps must be >= 1")
        if self.client_cpu_us_per_trx > self.client_us_per_trx:
            raise UsageError("client_cpu_us_per_trx is part of client_us_per_trx: "
                             "it cannot be larger")
        if not 1 <= self.statements_per_trx <= 1000:
            raise UsageError("statements_per_trx must be in [1, 1000]")
        if not 0.0 <= self.dblwr_page_share <= 1.0:
            raise UsageError("dblwr_page_share must be in [0, 1]")
        if not 0.0 <= self.work_cv <= 3.0:
            raise UsageError("work_cv must be in [0, 3]")
        if not 0.0 <= self.hot_page_share <= 1.0:
            raise UsageError("hot_page_share must be in [0, 1]")
        if self.redo_bytes_per_trx < 1:
            raise UsageError("redo_bytes_per_trx must be >= 1")
        if self.binlog_bytes_per_trx < 0:
            raise UsageError("binlog_bytes_per_trx must be >= 0")
        if self.tablespaces < 1:
            raise UsageError("tablespaces must be >= 1")
        if self.extend_bytes < 64 * 1024:
            raise UsageError("extend_bytes must be at least 64k")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Workload:
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise UsageError(f"unknown workload keys: {', '.join(sorted(unknown))}")
        return cls(**d)


@dataclass(frozen=True)
class ServerStart:
    """The state a simulated server starts in: what a real one had when its load began
    (the lab reads it before the warm-up: the preload's redo and dirty pages)."""

    checkpoint_age: int = 0     # redo bytes written since the last checkpoint
    dirty_pages: int = 0        # pages in the flush list, spread over that redo
    # MariaDB's page cleaner already at work (it sleeps, once idle, until the checkpoint
    # age reaches the async point; a server that was made to flush — an index build, a
    # checkpoint — goes on with adaptive passes while the age is past its low-water mark)
    cleaner_active: bool = False
    # how long the server had run when the load began (status Uptime; None: long enough
    # for MySQL's adaptive flushing averages to be warm — page_cleaner.AdaptiveFlush)
    uptime_s: float | None = None

    def validate(self) -> None:
        if self.checkpoint_age < 0 or self.dirty_pages < 0 or (self.uptime_s or 0) < 0:
            raise UsageError("a server's start state cannot be negative")

    def to_dict(self) -> dict:
        return asdict(self)


def with_(obj: _D, **changes: Any) -> _D:
    """dataclasses.replace, re-exported so callers need not import dataclasses."""
    return replace(obj, **changes)


def commit_sleep_share(config: ServerConfig, workload: Workload) -> float:
    """The share of what sleeping commits cost (the workload's sleeping figures) that a
    commit pays at `config`: all of it where its path holds as many syncs as where it
    was measured; with one sync of two, the follower's one sleep a commit always has
    (1 / commit_sleeps). A commit thread that syncs sleeps in the call until the device
    completes and is woken; a group's leader does so per sync, its followers once."""
    extra = workload.commit_sleeps - 1.0
    if extra <= 0:
        return 1.0
    syncs = max(1.0, min(2.0, config.commit_syncs()))
    return (1.0 + (syncs - 1.0) * extra) / workload.commit_sleeps
