"""`innoflush lab run`: real servers under a workload, measured beside predicted.

For every combination of flush method × trx_commit × sync_binlog × connections:

1. start a fresh server (``LocalServer`` or ``DockerServer``, both ``LabServer``) in a
   work directory under ``datadir_on`` (removed afterwards, always);
2. read its settings back (SHOW GLOBAL VARIABLES through the advisor's ``gather_facts``):
   the report shows what the server really ran with, and the prediction uses that;
3. create the workload's table and preload it; time ``SELECT 1`` round trips (the
   loopback estimate); start the client processes and let them connect;
4. release the clients; after the warm-up (``warmup_s``, if any) snapshot SHOW GLOBAL
   STATUS, the server's CPU time (``/proc/PID/stat``, per thread too) and run-queue waits
   (``/proc/PID/task/*/schedstat``), the machine's CPU (``/proc/stat``) and the InnoDB
   files' sizes and mtimes; run ``advise`` (sampling and rules, no simulation) in a thread
   while the clients run; collect the clients; snapshot again;
5. stop the server; then **predict**: ``simulate`` the read-back configuration on the
   device profile with a Workload built from independently measured quantities (see
   ``derive_workload``), and compare (``compare``: predicted / measured − 1).

Nothing here fits the model to the measured TPS: the server CPU, client time, redo,
page writes, tablespaces and growth per transaction are measured, and the TPS,
latencies and counter rates are then predicted from them.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InnoflushError, UsageError
from ..simulator.flavors import FLUSH_METHODS
from .local import ServerOptions, port_in_use
from .workload import KINDS, WorkloadError, WorkloadResult, WorkloadSpec, prepare, run_workload

BACKENDS = ("local", "docker")
SIM_MIN_S = 3.0               # at least this many simulated seconds (page cleaner and
SIM_WARMUP_S = 1.0            #    checkpoint run about once a second)
LOOPBACK_ROUND_TRIPS = 500
# Keyword arguments for innoflush.measure.measure_profile; None: its --quick preset.
MEASURE_KW: dict | None = None


class LabError(InnoflushError):
    """A lab run failed (server, workload, sampling); carries the cause's exit code."""

    def __init__(self, msg: str, exit_code: int = 1):
        super().__init__(msg)
        self.exit_code = exit_code


@dataclass
class LabOptions:
    backend: str = "local"
    image: str | None = None
    basedir: str | None = None
    flush_methods: list[str] = field(default_factory=lambda: ["O_DIRECT"])
    trx_commits: list[int] = field(default_factory=lambda: [1])
    sync_binlogs: list[int | None] = field(default_factory=lambda: [None])
    log_bin: bool = False
    connections: list[int] = field(default_factory=lambda: [1])
    duration_s: float = 10.0
    warmup_s: float = 0.0
    workload: str = "insert"
    rows_per_trx: tuple[int, int] = (1, 10)
    datadir_on: str | None = None
    profile_ref: str | None = None
    measure: bool = False
    buffer_pool: str = "256M"
    port: int | None = None
    extra: dict = field(default_factory=dict)
    advise: bool = True
    seed: int = 1
    emulate: str | None = None        # a device profile to emulate (lab/emulate.py)
    emulate_channels: int = 1         # 1: one cache-flush channel, as the model
    workload_ref: str | None = None   # a workload profile to predict with (lab calibrate)
    preload_rows: int | None = None   # rows loaded before a run (None: the workload's 10,000)
    watch_extensions: bool = False    # poll the InnoDB files' sizes: the extension step

    def validate(self) -> None:
        if self.backend not in BACKENDS:
            raise UsageError(f"--backend must be {' or '.join(BACKENDS)} (got {self.backend!r})")
        if self.backend == "local" and self.image:
            raise UsageError("--image is for --backend docker")
        if self.backend == "docker" and self.basedir:
            raise UsageError("--basedir is for --backend local")
        for m in self.flush_methods:
            if m not in FLUSH_METHODS:
                raise UsageError(f"--flush-method {m!r}: choose from {', '.join(FLUSH_METHODS)} "
                                 "(the methods the model simulates)")
        for t in self.trx_commits:
            if t not in (0, 1, 2):
                raise UsageError(f"--trx-commit {t}: use 0, 1 or 2")
        for s in self.sync_binlogs:
            if s is not None and s < 0:
                raise UsageError(f"--sync-binlog {s}: must be 0 or more")
        for c in self.connections:
            if not 1 <= c <= 1024:
                raise UsageError(f"--connections {c}: must be between 1 and 1024")
        if not 1 <= self.duration_s <= 3600:
            raise UsageError(f"--duration must be between 1 and 3600 s (got {self.duration_s:g})")
        if not 0 <= self.warmup_s <= 3600:
            raise UsageError(f"--warmup must be between 0 and 3600 s (got {self.warmup_s:g})")
        if self.workload not in KINDS:
            raise UsageError(f"--workload must be {' or '.join(KINDS)}")
        if self.profile_ref and self.measure:
            raise UsageError("give --profile or --measure, not both")
        if self.emulate_channels not in (0, 1):
            raise UsageError("emulate channels must be 0 (independent) or 1 (one flush "
                             "channel)")
        if self.port is not None and not 0 < self.port < 65536:
            raise UsageError(f"--port {self.port} is out of range")
        if self.port is not None and port_in_use(self.port):
            raise UsageError(f"--port {self.port} on 127.0.0.1 is in use: choose another "
                             "port or leave --port out to get a free one")
        spec = self.spec(self.connections[0])
        spec.validate()

    def spec(self, connections: int) -> WorkloadSpec:
        extra = {} if self.preload_rows is None else {"preload_rows": self.preload_rows}
        return WorkloadSpec(kind=self.workload, connections=connections,
                            duration_s=self.duration_s, warmup_s=self.warmup_s,
                            rows_per_trx=tuple(self.rows_per_trx),
                            seed=self.seed, **extra)


@dataclass(frozen=True)
class RunPlan:
    index: int
    total: int
    flush_method: str
    trx_commit: int
    sync_binlog: int | None
    connections: int

    @property
    def commits_sleep(self) -> bool:
        """Whether a commit waits for a sync (and its threads go to sleep)."""
        return self.trx_commit == 1 or bool(self.sync_binlog)

    @property
    def label(self) -> str:
        s = f"{self.flush_method}, trx_commit={self.trx_commit}"
        if self.sync_binlog is not None:
            s += f", sync_binlog={self.sync_binlog}"
        return s + f", {self.connections} conn"

    def requested(self, opts: LabOptions) -> dict:
        return {"innodb_flush_method": self.flush_method,
                "innodb_flush_log_at_trx_commit": self.trx_commit,
                "log_bin": opts.log_bin, "sync_binlog": self.sync_binlog,
                "innodb_buffer_pool_size": opts.buffer_pool, "connections": self.connections,
                "extra": dict(opts.extra)}


def plan_runs(opts: LabOptions) -> list[RunPlan]:
    combos = list(itertools.product(opts.flush_methods, opts.trx_commits, opts.sync_binlogs,
                                    opts.connections))
    return [RunPlan(i + 1, len(combos), m, t, s, c) for i, (m, t, s, c) in enumerate(combos)]


# ---- measuring on the host: process CPU, machine CPU, the InnoDB files -----------------

def proc_cpu_seconds(pid: int, stat_path: str | None = None) -> float | None:
    """utime + stime of a process (all its threads), from /proc/PID/stat; None if gone."""
    path = stat_path or f"/proc/{pid}/stat"
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()
    try:
        ticks = int(fields[11]) + int(fields[12])   # fields 14 and 15 of proc(5)
    except (IndexError, ValueError):
        return None
    return ticks / os.sysconf("SC_CLK_TCK")


def thread_cpu(pid: int, task_dir: str | None = None) -> dict[int, float]:
    """{thread id: utime + stime seconds} of every thread of a process ({} if unreadable)."""
    root = task_dir or f"/proc/{pid}/task"
    out: dict[int, float] = {}
    try:
        tids = os.listdir(root)
    except OSError:
        return out
    for tid in tids:
        sec = proc_cpu_seconds(0, os.path.join(root, tid, "stat"))
        if sec is not None and tid.isdigit():
            out[int(tid)] = sec
    return out


def split_server_cpu(total_s: float | None, before_clients: dict, at_start: dict,
                     at_end: dict) -> dict | None:
    """The server's CPU over the run split into its connection threads (the threads that
    appeared while the clients connected) and the rest (background threads: page
    cleaner, purge, I/O, timers; also threads that exited during the run)."""
    if total_s is None or not at_start or not at_end:
        return None
    conn_tids = set(at_start) - set(before_clients)
    fg = sum(max(0.0, at_end[t] - at_start[t]) for t in conn_tids if t in at_end)
    return {"connection_threads": len(conn_tids), "connection_threads_s": round(fg, 3),
            "background_s": round(max(0.0, total_s - fg), 3)}


def machine_cpu(stat_path: str = "/proc/stat") -> dict | None:
    """All CPUs since boot, in seconds: ``busy`` (user, nice, system, irq, softirq),
    ``steal`` (taken by the hypervisor), ``total``; None if unreadable."""
    try:
        with open(stat_path, encoding="ascii") as f:
            first = f.readline().split()
    except OSError:
        return None
    if not first or first[0] != "cpu":
        return None
    vals = [int(x) for x in first[1:9]] + [0] * 8
    user, nice, system, idle, iowait, irq, softirq, steal = vals[:8]
    hz = os.sysconf("SC_CLK_TCK")
    return {"busy": (user + nice + system + irq + softirq) / hz, "steal": steal / hz,
            "total": (user + nice + system + idle + iowait + irq + softirq + steal) / hz}


def machine_usage(before: dict | None, after: dict | None, server_cpu_s: float | None,
                  client_cpu_s: float) -> dict | None:
    """Over the run, as fractions of all the machine's CPU time: ``busy``, ``steal``, and
    ``other`` — busy time that was neither the server's nor the clients' (other processes,
    interrupts, kernel threads)."""
    if not before or not after:
        return None
    total = after["total"] - before["total"]
    if total <= 0:
        return None
    busy = after["busy"] - before["busy"]
    ours = (server_cpu_s or 0.0) + client_cpu_s
    return {"busy": round(busy / total, 3),
            "steal": round((after["steal"] - before["steal"]) / total, 3),
            "other": round(max(0.0, busy - ours) / total, 3) if server_cpu_s is not None
            else None}


def _is_innodb_file(name: str) -> bool:
    return (name.endswith(".ibd") or name.startswith("ibdata") or name.startswith("undo")) \
        and not name.startswith("#")


def innodb_files(datadir: str | os.PathLike) -> dict[str, tuple[int, int]] | None:
    """{relative path: (size, mtime_ns)} of the tablespace files (ibdata*, undo*, *.ibd;
    not the temporary tablespace); None when the datadir cannot be read."""
    root = Path(datadir)
    out: dict[str, tuple[int, int]] = {}
    try:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if not d.startswith("#")]
            for name in filenames:
                if not _is_innodb_file(name):
                    continue
                p = os.path.join(dirpath, name)
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                out[os.path.relpath(p, root)] = (st.st_size, st.st_mtime_ns)
    except OSError:
        return None
    return out if out else None


def files_delta(before: dict | None, after: dict | None) -> dict | None:
    """Tablespace files written (mtime moved, or new) and bytes grown between snapshots."""
    if before is None or after is None:
        return None
    written, grown = [], 0
    for name, (size, mtime) in after.items():
        old = before.get(name)
        if old is None:
            written.append(name)
            grown += size
            continue
        if mtime != old[1] or size != old[0]:
            written.append(name)
        grown += max(0, size - old[0])
    return {"files_written": sorted(written), "tablespaces_written": len(written),
            "growth_bytes": grown}


def _schedstat(pid: int | None) -> dict[int, tuple[int, int]]:
    """{thread id: (ns on a CPU, ns waiting on a run queue)} (/proc/PID/task/*/schedstat:
    ns resolution, unlike the 10 ms ticks of /proc/PID/stat); {} if unreadable."""
    out: dict[int, tuple[int, int]] = {}
    if not pid:
        return out
    root = f"/proc/{pid}/task"
    try:
        tids = os.listdir(root)
    except OSError:
        return out
    for tid in tids:
        try:
            with open(os.path.join(root, tid, "schedstat"), encoding="ascii") as f:
                a = f.read().split()
            out[int(tid)] = (int(a[0]), int(a[1]))
        except (OSError, ValueError, IndexError):
            continue
    return out


def threads_runtime_ns(pid: int | None) -> int | None:
    """Nanoseconds on a CPU, summed over a process's live threads; None if unreadable."""
    st = _schedstat(pid)
    return sum(v[0] for v in st.values()) if st else None


def runq_wait_delta_s(before: dict, after: dict) -> float | None:
    """Seconds the threads present in both snapshots waited on a run queue between them."""
    if not before or not after:
        return None
    return sum(max(0, after[t][1] - before[t][1]) for t in after if t in before) / 1e9


def loopback(conn, n: int = LOOPBACK_ROUND_TRIPS, server_pid: int | None = None) -> dict:
    """Time n ``SELECT 1`` round trips on an idle server: the median wall time, the
    median client CPU per round trip (CLOCK_PROCESS_CPUTIME_ID), the server's CPU per
    round trip (all its threads, from schedstat, when server_pid is given), and what is
    left: ``outside_client_us`` = wall − client CPU (the loopback and the server), and
    ``wait_us`` = wall − client CPU − server CPU (the part no process's CPU time counts:
    wake-ups, the loopback's softirq work where it is not charged to either), all in µs.
    """
    perf, cpu = time.perf_counter_ns, time.process_time_ns
    walls, cpus = [], []
    with conn.cursor() as cur:
        for _ in range(20):
            cur.execute("SELECT 1")
            cur.fetchall()
        s0 = threads_runtime_ns(server_pid)
        for _ in range(n):
            c = cpu()
            t = perf()
            cur.execute("SELECT 1")
            cur.fetchall()
            walls.append(perf() - t)
            cpus.append(cpu() - c)
        s1 = threads_runtime_ns(server_pid)
    walls.sort()
    cpus.sort()
    wall_us = walls[len(walls) // 2] / 1e3
    cpu_us = cpus[len(cpus) // 2] / 1e3
    server_us = (s1 - s0) / n / 1e3 if s0 is not None and s1 is not None else None
    outside = max(0.0, wall_us - cpu_us)
    wait = max(0.0, outside - server_us) if server_us is not None else None
    return {"round_trips": n, "wall_us": round(wall_us, 2), "client_cpu_us": round(cpu_us, 2),
            "server_cpu_us": round(server_us, 2) if server_us is not None else None,
            "outside_client_us": round(outside, 2),
            "wait_us": round(wait, 2) if wait is not None else None}


# ---- pure arithmetic: the workload from what was measured, and the comparison ------------

def page_counts(deltas: dict) -> tuple[int | None, int | None, int]:
    """(pages created, pages flushed, pages doublewritten) of a run's status deltas: what
    page_reentry splits (flushed: Innodb_buffer_pool_pages_flushed, else pages written)."""
    return (deltas.get("Innodb_pages_created"),
            deltas.get("Innodb_buffer_pool_pages_flushed", deltas.get("Innodb_pages_written")),
            deltas.get("Innodb_dblwr_pages_written", 0))


def page_reentry(commits: int, created: int | None, flushed: int | None,
                 dirty_growth: int | None, dblwr_pages: int) -> dict | None:
    """Which pages come back to the flush list after their write, from a run's counters.

    The E pages a run added to the flush list (flushed F + dirty growth) are first
    entries — the pages it created (Innodb_pages_created), or where more, the dirty growth
    (clean pages changed for the first time: an update workload) — and re-entries R:
    pages changed again after a write. Of the pages flushed, the rewrites Rw went through
    the doublewrite buffer — where some pages bypass it (MariaDB: re-initialised ones,
    first writes of new pages), Rw = min(doublewritten, R) — and the rest were first
    writes. Then ``pages_dirtied_per_trx`` = first entries / commits,
    ``hot_page_share`` = (R − Rw) / (F − Rw), the first writes' pages that came back,
    and ``dblwr_page_share`` = (doublewritten − Rw) / (F − Rw) of first writes. None
    when a count is missing or fewer than 100 pages were flushed."""
    if created is None or flushed is None or dirty_growth is None or flushed < 100 \
            or commits <= 0:
        return None
    entries = max(0, flushed + dirty_growth)
    first_entries = min(entries, max(created, dirty_growth))
    reentries = entries - first_entries
    rewrites = min(dblwr_pages, reentries) if dblwr_pages < flushed else 0
    first = flushed - rewrites
    hot = round(min(1.0, max(0.0, (reentries - rewrites) / first)), 4)
    share = round(min(1.0, max(0.0, (dblwr_pages - rewrites) / first)), 4)
    pages = round(first_entries / commits, 4)
    return {"pages_dirtied_per_trx": pages, "hot_page_share": hot, "dblwr_page_share": share,
            "lines": [
                f"pages_dirtied_per_trx = {pages:.4g} (first entries {first_entries:,} / "
                f"commits: of the {entries:,} pages added to the flush list (flushed "
                f"{flushed:,} + dirty growth {dirty_growth:,}), the larger of "
                f"Innodb_pages_created {created:,} and the dirty growth)",
                f"hot_page_share = {hot:.3g} ({reentries:,} pages re-entered the flush list "
                f"after a write; {rewrites:,} of the flushed were rewrites (doublewritten), "
                f"{first:,} first writes: (re-entered − rewrites) / first writes)",
                f"dblwr_page_share = {share:.3g} (Innodb_dblwr_pages_written {dblwr_pages:,} "
                "less the rewrites, / first writes"
                + (": the rest went straight to their files)" if share < 1 else ")")]}


def derive_workload(*, connections: int, commits: int, server_cpu_s: float | None,
                    client_cpu_s: float, statements_per_trx: int, round_trip_us: float,
                    observed, files: dict | None,
                    round_trip_source: str = "SELECT 1 round trip",
                    extensions: dict | None = None, deltas: dict | None = None,
                    dirty_growth: int | None = None) -> tuple:
    """The simulator Workload from measured quantities (none fitted to the TPS).

    - ``cpu_us_per_trx`` = server process CPU seconds over the run / commits (all its
      threads: connection threads, page cleaner, log writer, purge);
    - ``client_us_per_trx`` = client CPU per commit + statements per transaction ×
      ``round_trip_us``: the part of a ``SELECT 1`` round trip that neither the client's
      nor the server's CPU time counts (``loopback()['wait_us']``; both CPUs are already
      in the two per-transaction CPU figures), or, where the server's CPU could not be
      read, the part outside the client's CPU (``outside_client_us``);
    - ``redo_bytes_per_trx``, ``pages_dirtied_per_trx``, ``binlog_bytes_per_trx``: the
      advisor's arithmetic on the status deltas (``fit.workload_from_observed``);
    - ``tablespaces`` = InnoDB files written during the run (mtime moved), at least 1;
    - ``growth_bytes_per_trx`` = bytes those files grew / commits;
    - ``extend_bytes`` = the mean size step of the files while the run went on (when
      ``extensions``, an ``ExtensionWatch`` result, saw any), else the simulator's
      default;
    - ``pages_dirtied_per_trx``, ``hot_page_share``, ``dblwr_page_share``: from
      ``page_reentry`` when the run flushed 100 pages or more (``dirty_growth``: the
      growth of Innodb_buffer_pool_pages_dirty); else the advisor's pages dirtied, no hot
      pages, and Innodb_dblwr_pages_written / Innodb_pages_written when 100 pages or
      more were written (else the default, all pages).

    Returns (Workload, derivation lines).
    """
    from ..advisor.fit import workload_from_observed
    from ..simulator import Workload

    if commits <= 0:
        raise LabError("the workload committed no transaction: nothing to derive a "
                       "workload from")
    base, _ = workload_from_observed(observed, connections)
    lines: list[str] = [f"connections = {connections} (client processes)"]
    if server_cpu_s is not None:
        cpu_us = server_cpu_s * 1e6 / commits
        lines.append(f"cpu_us_per_trx = {cpu_us:.1f} (server process CPU "
                     f"{server_cpu_s:.3f} s / {commits:,} commits)")
    else:
        cpu_us = Workload().cpu_us_per_trx
        lines.append(f"cpu_us_per_trx = {cpu_us:.1f} (default: the server's CPU time could "
                     "not be read)")
    client_cpu_us = client_cpu_s * 1e6 / commits
    client_us = client_cpu_us + statements_per_trx * round_trip_us
    lines.append(f"client_us_per_trx = {client_us:.1f} (client CPU {client_cpu_us:.1f} µs + "
                 f"{statements_per_trx} statements × {round_trip_us:.1f} µs: "
                 f"{round_trip_source})")
    lines.append(f"client_cpu_us_per_trx = {client_cpu_us:.1f} (the client processes run on "
                 "this host: their CPU competes with the server's for the same cores)")
    lines.append(f"statements_per_trx = {statements_per_trx} (round trips per transaction, "
                 "COMMIT included: each queues for a core on its own)")
    lines.append(f"redo_bytes_per_trx = {base.redo_bytes_per_trx} (Innodb_os_log_written / "
                 "commits)")
    lines.append(f"binlog_bytes_per_trx = {base.binlog_bytes_per_trx}"
                 + (" (Binlog_bytes_written / commits)" if observed.binlog_bytes_per_commit
                    else " (simulator default: not counted or binlog off)"))
    if files is not None:
        tablespaces = max(1, files["tablespaces_written"])
        growth = files["growth_bytes"] / commits
        lines.append(f"tablespaces = {tablespaces} (InnoDB files written during the run: "
                     f"{', '.join(files['files_written'][:6]) or 'none'})")
        lines.append(f"growth_bytes_per_trx = {growth:.1f} ({files['growth_bytes']:,} bytes "
                     f"of tablespace growth / commits)")
    else:
        tablespaces = Workload().tablespaces
        growth = base.growth_bytes_per_trx
        lines.append(f"tablespaces = {tablespaces} (default: the datadir was not readable)")
        lines.append(f"growth_bytes_per_trx = {growth:.1f} (400 B per inserted row, assumed: "
                     "the datadir was not readable)")
    extend = Workload().extend_bytes
    if extensions and extensions.get("extensions"):
        step = max(64 * 1024, int(extensions["mean_step_bytes"]))
        extend = step
        lines.append(f"extend_bytes = {step:,} (the InnoDB files grew {extensions['extensions']}"
                     f" times by {extensions['grown_bytes']:,} bytes in all, polled every "
                     f"{extensions['interval_s'] * 1e3:g} ms)")
    else:
        lines.append(f"extend_bytes = {extend:,} (simulator default"
                     + (": no file grew while polled" if extensions else "") + ")")
    d = deltas or {}
    created, flushed, dblwr_pages = page_counts(d)
    fit = page_reentry(commits, created, flushed, dirty_growth, dblwr_pages)
    if fit is not None:
        pages_dirtied = fit["pages_dirtied_per_trx"]
        hot_share, share = fit["hot_page_share"], fit["dblwr_page_share"]
        lines.extend(fit["lines"])
    else:
        pages_dirtied = base.pages_dirtied_per_trx
        hot_share = Workload().hot_page_share
        share = Workload().dblwr_page_share
        lines.append(f"pages_dirtied_per_trx = {pages_dirtied:.4g} (the larger of "
                     "Innodb_pages_written and pages flushed + growth of dirty pages, / "
                     "commits)")
        lines.append(f"hot_page_share = {hot_share:g} (simulator default: fewer than 100 "
                     "pages flushed, or a count missing)")
        pages = d.get("Innodb_pages_written", 0)
        if pages >= 100:
            dblwr = d.get("Innodb_dblwr_pages_written", 0)
            share = round(min(1.0, dblwr / pages), 4)
            lines.append(f"dblwr_page_share = {share:.3g} (Innodb_dblwr_pages_written "
                         f"{dblwr:,} / Innodb_pages_written {pages:,})")
        else:
            lines.append(f"dblwr_page_share = {share:g} (simulator default: fewer than 100 "
                         "pages written)")
    wl = Workload(connections=connections, cpu_us_per_trx=round(cpu_us, 3),
                  client_us_per_trx=round(client_us, 3),
                  statements_per_trx=max(1, statements_per_trx),
                  client_cpu_us_per_trx=round(min(client_cpu_us, client_us), 3),
                  redo_bytes_per_trx=base.redo_bytes_per_trx,
                  binlog_bytes_per_trx=base.binlog_bytes_per_trx,
                  pages_dirtied_per_trx=pages_dirtied, hot_page_share=hot_share,
                  tablespaces=tablespaces, growth_bytes_per_trx=round(growth, 3),
                  extend_bytes=extend, dblwr_page_share=share)
    wl.validate()
    return wl, lines


COMPARED = ("tps", "commit_latency_p50_ms", "commit_latency_p99_ms", "data_fsyncs_per_s",
            "data_writes_per_s", "data_fsyncs_per_data_write")


def error_pct(measured, predicted) -> float | None:
    """(predicted / measured - 1) in %, None when either is missing or measured is 0."""
    if measured is None or predicted is None:
        return None
    if measured == 0:
        return None
    return round(100.0 * (predicted / measured - 1.0), 1)


def compare(measured: dict, predicted: dict) -> dict:
    """errors_pct for each COMPARED figure (flat dicts with those keys)."""
    return {k: error_pct(measured.get(k), predicted.get(k)) for k in COMPARED}


def measured_figures(wr: WorkloadResult, observed) -> dict:
    lat = wr.to_dict()
    return {"tps": round(wr.tps, 2),
            "commit_latency_p50_ms": lat["commit_latency_ms"]["p50"],
            "commit_latency_p99_ms": lat["commit_latency_ms"]["p99"],
            "data_fsyncs_per_s": observed.data_fsyncs_per_s,
            "data_writes_per_s": observed.data_writes_per_s,
            "data_fsyncs_per_data_write": observed.data_fsyncs_per_data_write}


def _plus(x, y):
    return None if x is None else round(x + y, 4)


def predicted_figures(r, commit_round_trip_ms: float = 0.0) -> dict:
    """A SimResult as the flat figures compared, plus its detail.

    The simulator's commit latency is the wait for durability only; the client measures
    the COMMIT statement's round trip. So the compared commit latencies are the
    simulated ones plus ``commit_round_trip_ms`` (one measured ``SELECT 1`` round trip:
    what a COMMIT costs besides the wait); the raw ones are in ``sim_commit_latency_ms``.
    """
    d = r.duration_s or 1.0
    fsyncs = r.status.get("Innodb_data_fsyncs", 0)
    writes = r.status.get("Innodb_data_writes", 0)
    rt = commit_round_trip_ms
    return {"tps": round(r.tps, 2),
            "commit_latency_p50_ms": _plus(r.commit_latency_ms.get("p50"), rt),
            "commit_latency_p99_ms": _plus(r.commit_latency_ms.get("p99"), rt),
            "commit_round_trip_ms": round(rt, 4),
            "sim_commit_latency_ms": r.commit_latency_ms,
            "data_fsyncs_per_s": round(fsyncs / d, 2),
            "data_writes_per_s": round(writes / d, 2),
            "data_fsyncs_per_data_write": (round(fsyncs / writes, 6) if writes else None),
            "trx_latency_ms": r.trx_latency_ms,
            "commits": r.commits, "status_per_s": {k: round(v / d, 2)
                                                    for k, v in r.status.items()},
            "syncs_per_s": r.syncs_per_s, "group_commit": r.group_commit,
            "cpu_util": round(r.cpu_util, 4),
            "device_flush_util": round(r.device_flush_util, 4),
            "checkpoint_stall_s": round(r.checkpoint_stall_s, 4),
            "sim_duration_s": r.duration_s, "seed": r.seed, "profile": r.profile,
            "notes": list(r.notes)}


def start_state(status: dict) -> dict | None:
    """The server's redo since its last checkpoint and its dirty pages, from SHOW GLOBAL
    STATUS (MariaDB: Innodb_checkpoint_age; MySQL 8.0.30+: the redo LSNs); None when it
    does not tell."""
    def num(name):
        try:
            return int(status[name])
        except (KeyError, TypeError, ValueError):
            return None

    age = num("Innodb_checkpoint_age")
    if age is None:
        cur, ckpt = num("Innodb_redo_log_current_lsn"), num("Innodb_redo_log_checkpoint_lsn")
        if cur is None or ckpt is None:
            cur, ckpt = num("Innodb_lsn_current"), num("Innodb_lsn_last_checkpoint")
        age = cur - ckpt if cur is not None and ckpt is not None else None
    dirty = num("Innodb_buffer_pool_pages_dirty")
    if age is None or dirty is None or age < 0 or dirty < 0:
        return None
    return {"checkpoint_age": age, "dirty_pages": dirty}


def predict(config, workload, profile, run_s: float, seed: int = 1,
            warmup_s: float = 0.0, start: dict | None = None):
    """simulate() on the profile over the run's own timeline — its warm-up, then its
    measured seconds (at least SIM_WARMUP_S and SIM_MIN_S) — since what the page cleaner
    does depends on how long the server has been loaded (MariaDB's sleeps until the
    checkpoint age reaches its async point). Returns the SimResult."""
    from ..simulator import ServerStart, simulate

    return simulate(config, workload, profile, duration_s=max(SIM_MIN_S, run_s), seed=seed,
                    warmup_s=max(SIM_WARMUP_S, warmup_s),
                    start=ServerStart(**start) if start else None)


def sim_config(facts, cores: int, datadir: str | os.PathLike | None = None):
    """The simulator ServerConfig of the read-back settings: the advisor's
    ``config_from_facts``, with innodb_max_dirty_pages_pct_lwm and
    innodb_adaptive_flushing_lwm as the server has them (config_from_facts reads an lwm
    of 0 — MariaDB's default, "no pre-flushing" — as 10), and the CPUs that take the
    completion interrupts of the storage under `datadir` (``io_completion_cores``)."""
    from dataclasses import replace

    from ..advisor.fit import config_from_facts

    config, notes = config_from_facts(facts, cores)
    changes = {}
    for name in ("innodb_max_dirty_pages_pct_lwm", "innodb_adaptive_flushing_lwm"):
        try:
            value = float(facts.variables.get(name))
        except (TypeError, ValueError):
            continue
        if 0 <= value <= 99 and value != getattr(config, name):
            changes[name] = value
    io_cores = storage_completion_cores(datadir) if datadir is not None else None
    if io_cores is not None and io_cores < cores:
        changes["io_completion_cores"] = io_cores
        notes = notes + [f"io_completion_cores = {io_cores} (the storage's disks have "
                         f"{io_cores} hardware queue(s): their completion interrupts, and "
                         "the threads that sleep on them, run on that many of the "
                         f"{cores} cores)"]
    if changes:
        config = replace(config, **changes)
        config.validate()
    return config, notes


def storage_completion_cores(path: str | os.PathLike) -> int | None:
    from ..measure.facts import completion_cores, gather_facts

    try:
        return completion_cores(gather_facts(str(path)))
    except Exception:  # noqa: BLE001 - sysfs facts are optional
        return None


# ---- the backends ----------------------------------------------------------------------------

def docker_server_class():
    """innoflush.lab.docker_backend.DockerServer, imported only when asked for."""
    try:
        from .docker_backend import DockerServer
    except ImportError as exc:
        raise UsageError(f"--backend docker is not available in this build "
                         f"(innoflush.lab.docker_backend cannot be imported: {exc}); use "
                         "--backend local") from None
    return DockerServer


def make_server(opts: LabOptions, workdir: Path, options: ServerOptions, **backend_kw):
    """A LabServer for the backend (DockerServer imported only when asked for).

    backend_kw: more keyword arguments for the backend's class (the device emulation's:
    ``env`` for LocalServer, ``environment`` and ``volumes`` for DockerServer)."""
    if opts.backend == "local":
        from .local import LocalServer

        return LocalServer(workdir, options, basedir=opts.basedir, port=opts.port,
                           remove_on_stop=True, **backend_kw)
    DockerServer = docker_server_class()
    import inspect

    try:
        params = inspect.signature(DockerServer).parameters
    except (TypeError, ValueError):
        params = {}
    kw: dict = {"remove_on_stop": True} if "remove_on_stop" in params else {}
    if opts.image:
        kw["image"] = opts.image
    if opts.port is not None:
        if "port" not in params:
            raise UsageError("--port is not supported by the docker backend")
        kw["port"] = opts.port
    for name in backend_kw:
        if params and name not in params:
            raise UsageError(f"--emulate is not supported by this docker backend (no "
                             f"{name!r} parameter)")
    return DockerServer(workdir, options, **kw, **backend_kw)


def server_options(opts: LabOptions, plan: RunPlan) -> ServerOptions:
    return ServerOptions(innodb_flush_method=plan.flush_method,
                         innodb_flush_log_at_trx_commit=plan.trx_commit, log_bin=opts.log_bin,
                         sync_binlog=plan.sync_binlog, innodb_buffer_pool_size=opts.buffer_pool,
                         extra=dict(opts.extra))


def read_back(facts) -> dict:
    """What the server really ran with (from SHOW GLOBAL VARIABLES)."""
    v = facts.variables
    return {"version": facts.version, "product": facts.product, "sim_flavor": facts.sim_flavor,
            "innodb_flush_method": facts.flush_method,
            "flush_method_source": facts.flush_method_source,
            "innodb_flush_log_at_trx_commit": facts.trx_commit,
            "log_bin": facts.log_bin, "sync_binlog": facts.sync_binlog,
            "innodb_buffer_pool_size": facts.buffer_pool_bytes,
            "innodb_doublewrite": facts.doublewrite,
            "innodb_use_fdatasync": facts.use_fdatasync,
            "innodb_io_capacity": facts.io_capacity,
            "innodb_io_capacity_max": facts.io_capacity_max,
            "redo_capacity_bytes": facts.redo_capacity_bytes,
            "innodb_page_size": facts.page_size,
            "datadir": v.get("datadir")}


def settings_mismatch(requested: dict, back: dict) -> list[str]:
    """The requested settings the server did not run with (each as one line)."""
    from ..units import parse_size

    out = []
    if back["innodb_flush_method"] != requested["innodb_flush_method"]:
        out.append(f"innodb_flush_method: requested {requested['innodb_flush_method']}, the "
                   f"server ran with {back['innodb_flush_method']} "
                   f"({back['flush_method_source']})")
    if back["innodb_flush_log_at_trx_commit"] != requested["innodb_flush_log_at_trx_commit"]:
        out.append(f"innodb_flush_log_at_trx_commit: requested "
                   f"{requested['innodb_flush_log_at_trx_commit']}, ran with "
                   f"{back['innodb_flush_log_at_trx_commit']}")
    if bool(back["log_bin"]) != bool(requested["log_bin"]):
        out.append(f"log_bin: requested {'ON' if requested['log_bin'] else 'OFF'}, ran with "
                   f"{'ON' if back['log_bin'] else 'OFF'}")
    if requested["sync_binlog"] is not None and back["sync_binlog"] != requested["sync_binlog"]:
        out.append(f"sync_binlog: requested {requested['sync_binlog']}, ran with "
                   f"{back['sync_binlog']}")
    try:
        want = parse_size(requested["innodb_buffer_pool_size"])
    except InnoflushError:
        want = None
    if want and back["innodb_buffer_pool_size"] and back["innodb_buffer_pool_size"] != want:
        out.append(f"innodb_buffer_pool_size: requested {requested['innodb_buffer_pool_size']}"
                   f", ran with {back['innodb_buffer_pool_size']}")
    return out


def model_notes(facts, config) -> list[str]:
    """Where the server's read-back settings go beyond what the model knows."""
    notes = []
    method = facts.flush_method
    if method and method != config.innodb_flush_method:
        notes.append(f"innodb_flush_method={method} is simulated as "
                     f"{config.innodb_flush_method}")
    return notes


def connection_params(server) -> dict:
    """PyMySQL keywords for a client process: the backend's own (DockerServer has a
    password and maybe TLS), else root without a password on HOST:port (LocalServer)."""
    get = getattr(server, "connection_args", None)
    if callable(get):
        return dict(get())
    return {"host": server.HOST, "port": server.port, "user": "root", "password": ""}


# ---- advise during a run ----------------------------------------------------------------------

class _AdviseThread(threading.Thread):
    """advise() (sampling and rules, no simulation) on its own session, during the run."""

    def __init__(self, server, profile, interval_s: float, connections: int,
                 is_local: bool):
        super().__init__(name="innoflush-lab-advise", daemon=True)
        self.server, self.profile, self.is_local = server, profile, is_local
        self.interval_s, self.connections = interval_s, connections
        self.result: dict | None = None
        self.error: str | None = None

    def run(self) -> None:
        from ..advisor.advise import advise
        from ..live.connect import ReadOnlySession

        session = None
        try:
            session = ReadOnlySession(self.server.connect(autocommit=None))
            self.result = advise(session, conn_public={
                "target": f"{self.server.HOST}:{self.server.port}", "user": "root",
                "tls": False, "password_source": "none"}, is_local=self.is_local,
                interval_s=self.interval_s, samples=1, profile=self.profile, predict=False,
                connections=self.connections)
        except Exception as exc:  # noqa: BLE001 - reported in the run, not fatal
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            if session is not None:
                session.close()


def advise_summary(report: dict | None, error: str | None) -> dict:
    if report is None:
        return {"findings": [], "cannot_judge": [], "warnings": [],
                "error": error or "advise did not finish"}
    return {"findings": [{"id": f["id"], "setting": f["setting"], "current": f["current"],
                          "recommended": f["recommended"], "severity": f["severity"],
                          "why": f["why"], "risk": f["risk"]}
                         for f in report["findings"]],
            "cannot_judge": report["cannot_judge"], "warnings": report["warnings"],
            "error": None}


def _status_snapshot(session):
    from ..live.sampling import Snapshot, read_status

    return Snapshot(time.monotonic(), read_status(session))


# ---- device emulation in a run -----------------------------------------------------------

@dataclass
class Emulation:
    """A device emulated for the lab's servers (lab/emulate.py): the profile whose sync
    latencies a preloaded library imposes on the server, the built library, and whether
    this host's storage is fast enough for it (``emulate.host_check``)."""

    profile: object                 # the emulated DeviceProfile
    library: Path
    check: dict
    channels: int = 1
    seed: int = 1

    CONTAINER_LIB = "/innoflush-emulate/lib/libinnoflush_emulate.so"
    CONTAINER_LOG_DIR = "/innoflush-emulate/log"
    LOG_NAME = "emulate.log"

    def prepare(self, log_dir: Path, backend: str) -> tuple[dict, Path]:
        """(keyword arguments for the backend's server class, the log's path on this
        host). The log directory is the run's own; a container gets the library
        (read-only) and that directory (read-write: its server runs as another user)."""
        from .emulate import preload_env

        log_dir.mkdir(parents=True, exist_ok=True)
        log = log_dir / self.LOG_NAME
        log.touch()
        os.chmod(log_dir, 0o777)
        os.chmod(log, 0o666)
        if backend == "local":
            return {"env": preload_env(self.profile, self.library, self.seed, str(log),
                                       self.channels)}, log
        env = preload_env(self.profile, self.library, self.seed,
                          f"{self.CONTAINER_LOG_DIR}/{self.LOG_NAME}", self.channels,
                          library_in_server=self.CONTAINER_LIB)
        volumes = {str(self.library): {"bind": self.CONTAINER_LIB, "mode": "ro"},
                   str(log_dir): {"bind": self.CONTAINER_LOG_DIR, "mode": "rw"}}
        return {"environment": env, "volumes": volumes}, log

    def to_dict(self) -> dict:
        from .emulate import median_us, sync_distribution

        return {"profile": self.profile.name, "title": self.profile.title,
                "library": str(self.library), "channels": self.channels, "seed": self.seed,
                "sync_p50_us": {op: round(median_us(sync_distribution(self.profile, op)), 1)
                                for op in ("fsync", "fdatasync")},
                "host_check": self.check}


def make_emulation(ref: str, base: Path, host_profile=None, host_source: str | None = None,
                   seed: int = 1, channels: int = 1, progress_line=None) -> Emulation:
    """Load the profile to emulate, build the library, and check this host against it:
    with host_profile (the storage's --profile or --measure) as given, else a quick
    probe of the storage under base."""
    from ..profiles import load_profile
    from .emulate import build_library, host_check, host_probe

    profile = load_profile(ref)
    library = build_library()
    if host_profile is None:
        if progress_line:
            progress_line(f"probing this host's sync latency under {base} (to check that "
                          f"{profile.name} is slower)")
        host_profile = host_probe(str(base))
        host_source = "a quick probe of 16 KB O_DIRECT write + fsync/fdatasync under " \
            f"{base.parent}"
    return Emulation(profile, library, host_check(profile, host_profile, host_source or
                                                  host_profile.name), channels, seed)


def _preload_complaints(server) -> list[str]:
    """What the dynamic loader said about LD_PRELOAD in the server's output, if anything."""
    text = ""
    out = getattr(server, "workdir", None)
    if out is not None and (Path(out) / "server.out").is_file():
        try:
            text = (Path(out) / "server.out").read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
    else:
        try:
            text = server.error_log_tail(60).replace(" | ", "\n")
        except Exception:  # noqa: BLE001 - only for the message
            text = ""
    return [ln.strip() for ln in text.splitlines() if "LD_PRELOAD" in ln or "ld.so" in ln][:3]


def emulation_result(log: Path, backend: str, server_pid: int | None,
                     data_fsyncs: int | None, complaints: list[str]) -> dict:
    """The library's log for one run: the server's line (its own PID locally; PID 1 in a
    container, where the entrypoint execs the server), delayed calls; LabError when the
    server synced during the run but the library delayed nothing (preload refused)."""
    from .emulate import delayed_calls, read_log

    lines = read_log(log)
    want = 1 if backend == "docker" else server_pid
    server = next((ln for ln in reversed(lines) if ln.get("pid") == want), None)
    if server is None and lines:
        server = lines[-1]
    delayed = delayed_calls(server)
    if data_fsyncs and delayed == 0:
        raise LabError(
            f"the device emulation was not active: the server made {data_fsyncs:,} syncs "
            f"(Innodb_data_fsyncs) but the emulation log {log.name} shows "
            + ("no delayed call" if lines else "nothing (no preloaded process wrote it)")
            + (f"; the loader said: {'; '.join(complaints)}" if complaints else
               " — the library was not preloaded into the server (LD_PRELOAD refused or "
               "overridden?)"))
    return {"server": server, "delayed_calls": delayed,
            "delayed_fsync": (server or {}).get("fsync", 0),
            "delayed_fdatasync": (server or {}).get("fdatasync", 0),
            "delayed_dsync": (server or {}).get("dsync", 0),
            "slept_s": round((server or {}).get("slept_us", 0) / 1e6, 3),
            # how late the sleeps woke, in all: the host's wake-up, not the device's
            "overshoot_s": round((server or {}).get("overshoot_us", 0) / 1e6, 4),
            "host_slower_calls": (server or {}).get("host_slower", 0),
            "processes": len(lines), "active": delayed > 0}


# ---- one run (measure, then predict) ---------------------------------------------------

@dataclass
class Measured:
    """What one run measured on the real server, before any prediction."""

    plan: RunPlan
    spec: WorkloadSpec
    requested: dict
    facts: object
    back: dict
    mismatch: list
    observed: object
    iv: object
    wr: WorkloadResult
    rtt: dict
    pid: int | None
    port: int | None
    server_cpu_s: float | None
    split: dict | None
    files: dict | None
    usage: dict | None
    runq: dict
    notes: list
    advisor: object = None
    emulation: dict | None = None
    extensions: dict | None = None
    start: dict | None = None         # start_state(): before the warm-up

    @property
    def client(self) -> dict:
        return self.wr.to_dict()

    def figures(self) -> dict:
        return measured_figures(self.wr, self.observed)

    def doc(self) -> dict:
        """The report's ``measured`` object."""
        client = self.client
        wr, iv = self.wr, self.iv
        return {**self.figures(), "client": client,
                "status_seconds": round(iv.seconds, 3), "status_deltas": dict(iv.deltas),
                "observed": self.observed.to_dict(), "server_cpu_s": self.server_cpu_s,
                "server_cpu_us_per_trx": (round(self.server_cpu_s * 1e6 / wr.commits, 2)
                                          if self.server_cpu_s is not None and wr.commits
                                          else None),
                "server_cpu_split": self.split,
                "machine_cpu_busy": self.usage["busy"] if self.usage else None,
                "machine_cpu": self.usage, "runq_wait": self.runq, "loopback": self.rtt,
                "files": self.files, "start_state": self.start}

    def round_trip(self) -> tuple[float, str]:
        """The per-statement wait outside both CPUs (µs), and where it came from."""
        rtt = self.rtt
        if rtt.get("wait_us") is not None:
            return rtt["wait_us"], (
                f"a SELECT 1 round trip ({rtt['wall_us']:.1f} µs) less the client's "
                f"({rtt['client_cpu_us']:.1f}) and the server's ({rtt['server_cpu_us']:.1f})"
                " CPU")
        return rtt["outside_client_us"], (
            f"a SELECT 1 round trip ({rtt['wall_us']:.1f} µs) less the client's CPU "
            f"({rtt['client_cpu_us']:.1f}); the server's CPU was not readable")

    def derive(self) -> tuple:
        """derive_workload on this run's measurements: (Workload, derivation lines)."""
        rt_us, rt_src = self.round_trip()
        return derive_workload(
            connections=self.plan.connections, commits=self.wr.commits,
            server_cpu_s=self.server_cpu_s, client_cpu_s=self.client["client_cpu"]["cpu_s"],
            statements_per_trx=self.spec.statements_per_trx, round_trip_us=rt_us,
            round_trip_source=rt_src, observed=self.observed, files=self.files,
            extensions=self.extensions, deltas=dict(self.iv.deltas),
            dirty_growth=self.iv.gauge_deltas.get("Innodb_buffer_pool_pages_dirty"))


class ExtensionWatch(threading.Thread):
    """Polls the sizes of the InnoDB files while the workload runs and counts each
    increase as one extension: the mean step is the workload's ``extend_bytes`` (InnoDB
    extends a young .ibd file by one extent, a larger one by 4; each extension is an
    fsync in every flush method)."""

    def __init__(self, datadir, interval_s: float = 0.025):
        super().__init__(name="innoflush-lab-extensions", daemon=True)
        self.datadir, self.interval_s = datadir, interval_s
        self.stop_event = threading.Event()
        self.extensions = 0
        self.grown = 0
        self.polls = 0

    def run(self) -> None:
        last = innodb_files(self.datadir) or {}
        while not self.stop_event.wait(self.interval_s):
            now = innodb_files(self.datadir) or {}
            self.polls += 1
            for name, (size, _) in now.items():
                old = last.get(name)
                if old is not None and size > old[0]:
                    self.extensions += 1
                    self.grown += size - old[0]
            last = now

    def result(self) -> dict:
        return {"extensions": self.extensions, "grown_bytes": self.grown, "polls": self.polls,
                "interval_s": self.interval_s,
                "mean_step_bytes": (round(self.grown / self.extensions)
                                    if self.extensions else None)}


def measure_one(opts: LabOptions, plan: RunPlan, workdir: Path, progress,
                emulation: Emulation | None = None, profile=None) -> Measured:
    """Start a server (emulating a device if asked), drive the workload, take the
    deltas and the CPU times, stop it. Nothing is predicted here."""
    from ..live.connect import ReadOnlySession
    from ..live.facts import gather_facts
    from ..live.sampling import interval_between, observe

    spec = opts.spec(plan.connections)
    cores = os.cpu_count() or 1
    requested = plan.requested(opts)
    say = (lambda phase: progress(plan, phase)) if progress else (lambda phase: None)
    server_kw: dict = {}
    emu_log = None
    if emulation is not None:
        server_kw, emu_log = emulation.prepare(workdir.with_name(workdir.name + "-emulate"),
                                               opts.backend)
    server = make_server(opts, workdir, server_options(opts, plan), **server_kw)
    advisor = None
    complaints: list[str] = []
    try:
        say("starting the server" + (f" (emulating {emulation.profile.name})"
                                     if emulation else ""))
        try:
            server.start()
        except InnoflushError:
            raise
        except Exception as exc:  # noqa: BLE001 - a backend's own error: one line
            raise LabError(f"{opts.backend} backend: {type(exc).__name__}: {exc}") from None
        conn = server.connect()
        session = ReadOnlySession(conn)
        facts = gather_facts(session)
        back = read_back(facts)
        mismatch = settings_mismatch(requested, back)
        say("creating the schema and preloading")
        prepare(conn, spec)
        pid = server.server_pid()
        port = server.port
        rtt = loopback(conn, server_pid=pid)
        threads_pre = thread_cpu(pid) if pid else {}
        params = connection_params(server)
        snaps: dict = {}
        watch = ExtensionWatch(server.datadir) if opts.watch_extensions else None

        def at_start():
            snaps["files0"] = innodb_files(server.datadir)
            snaps["cpu0"] = proc_cpu_seconds(pid) if pid else None
            snaps["threads0"] = thread_cpu(pid) if pid else {}
            snaps["sched0"] = _schedstat(pid)
            snaps["mach0"] = machine_cpu()
            snaps["a"] = _status_snapshot(session)
            if watch is not None:
                watch.start()

        def during():
            nonlocal advisor
            say(f"measuring the {spec.kind} workload for {spec.duration_s:g} s")
            if opts.advise:
                advisor = _AdviseThread(server, profile, max(1.0, spec.duration_s - 1.0),
                                        plan.connections, is_local=opts.backend == "local")
                advisor.start()

        start = start_state(_status_snapshot(session).status)
        say("starting the client processes"
            + (f" ({spec.warmup_s:g} s of warm-up first)" if spec.warmup_s else ""))
        try:
            wr = run_workload(params, spec, cores, at_start=at_start, during=during)
        finally:
            if watch is not None and watch.is_alive():
                watch.stop_event.set()
                watch.join(timeout=5)
        b = _status_snapshot(session)
        cpu1 = proc_cpu_seconds(pid) if pid else None
        threads1 = thread_cpu(pid) if pid else {}
        sched1 = _schedstat(pid)
        mach1 = machine_cpu()
        files1 = innodb_files(server.datadir)
        if advisor is not None:
            advisor.join(timeout=max(5.0, spec.duration_s))
        iv = interval_between(0, snaps["a"], b)
        if not iv.valid:
            raise LabError(f"the status counters cannot be used: {iv.problem}")
        observed = observe(iv, facts.product, facts.log_bin, facts.trx_commit,
                           facts.flush_log_at_timeout, facts.redo_write_through)
        session.close()
        if emulation is not None:
            complaints = _preload_complaints(server)
        say("stopping the server")
    finally:
        server.stop()
        if advisor is not None:
            advisor.join(timeout=5)
    if server.is_running():
        raise LabError("the server is still running after stop()")
    emu = None
    if emulation is not None:
        emu = emulation_result(emu_log, opts.backend, pid,
                               iv.deltas.get("Innodb_data_fsyncs"), complaints)

    notes: list[str] = []
    server_cpu_s = None
    if snaps.get("cpu0") is not None and cpu1 is not None:
        server_cpu_s = round(cpu1 - snaps["cpu0"], 3)
    else:
        notes.append("the server's CPU time was not readable (/proc/PID/stat): the model's "
                     "server CPU per transaction is its default")
    split = split_server_cpu(server_cpu_s, threads_pre, snaps.get("threads0") or {},
                             threads1)
    files = files_delta(snaps.get("files0"), files1)
    client = wr.to_dict()
    ccpu = client["client_cpu"]
    server_wait = runq_wait_delta_s(snaps.get("sched0") or {}, sched1)
    runq = {"server_us_per_trx": (round(server_wait * 1e6 / wr.commits, 2)
                                  if server_wait is not None and wr.commits else None),
            "clients_us_per_trx": ccpu.get("runq_wait_us_per_trx")}
    waited = (runq["server_us_per_trx"] or 0.0) + (runq["clients_us_per_trx"] or 0.0)
    trx_mean_us = (client["trx_latency_ms"]["mean"] or 0.0) * 1e3
    if trx_mean_us and waited >= 0.2 * trx_mean_us:
        notes.append(f"threads waited {waited:,.0f} µs per transaction for a CPU (run queue: "
                     f"server {runq['server_us_per_trx'] or 0:,.0f}, clients "
                     f"{runq['clients_us_per_trx'] or 0:,.0f}), {waited / trx_mean_us:.0%} of "
                     "the mean transaction time: the model's cores are FIFO pools of "
                     "statement slices that never idle while a thread waits in them, so it "
                     "misses part of these waits")
    usage = machine_usage(snaps.get("mach0"), mach1, server_cpu_s, ccpu["cpu_s"])
    machine = usage["busy"] if usage else None
    if wr.errors:
        notes.append(f"{wr.errors} transaction(s) failed (counted, not in the commits): "
                     + "; ".join(client["error_messages"][:2]))
    if wr.retries:
        notes.append(f"{wr.retries} transaction(s) rolled back on deadlock/lock wait and "
                     "replaced")
    if ccpu["bottleneck"]:
        notes.append("the load generator may have been the bottleneck: "
                     + "; ".join(ccpu["bottleneck_reasons"]))
    if machine is not None and machine >= 0.9:
        share = ccpu["share_of_machine"]
        notes.append(f"the machine's CPU was saturated ({machine:.0%} busy over {cores} "
                     f"core(s); the clients took {share:.0%} of it): clients and server "
                     "competed for the CPU")
    if usage and usage["other"] is not None and usage["other"] >= 0.1:
        notes.append(f"other load on this machine: {usage['other']:.0%} of its CPU was busy "
                     "outside the server and the clients (other processes, interrupts, "
                     "kernel threads); the model assumed all cores free")
    if usage and usage["steal"] >= 0.05:
        notes.append(f"the hypervisor took {usage['steal']:.0%} of the CPU time (steal): "
                     "the cores were not all ours")
    if mismatch:
        notes.append("the server did not run with the requested settings: "
                     + "; ".join(mismatch) + " (the prediction uses what it ran with)")
    if observed.commits and abs(observed.commits - wr.commits) > max(2, 0.01 * wr.commits):
        notes.append(f"server-side commits ({observed.commits:,}, {observed.commits_source}) "
                     f"differ from the client's ({wr.commits:,})")
    if emu and emu["host_slower_calls"] and emu["delayed_calls"] and \
            emu["host_slower_calls"] >= 0.1 * emu["delayed_calls"]:
        notes.append(f"{emu['host_slower_calls']:,} of the server's "
                     f"{emu['delayed_calls']:,} syncs took longer on this host than the "
                     "emulated draw: the emulated device was slower than its profile")
    if wr.commits == 0:
        raise LabError(f"run {plan.index}/{plan.total} ({plan.label}): the workload "
                       "committed no transaction"
                       + (f" ({client['error_messages'][0]})" if client["error_messages"]
                          else ""))
    return Measured(plan=plan, spec=spec, requested=requested, facts=facts, back=back,
                    mismatch=mismatch, observed=observed, iv=iv, wr=wr, rtt=rtt, pid=pid,
                    port=port, server_cpu_s=server_cpu_s, split=split, files=files,
                    usage=usage, runq=runq, notes=notes, advisor=advisor, emulation=emu,
                    extensions=watch.result() if watch is not None else None, start=start)


def workload_for(base_workload, connections: int):
    """A calibrated workload (any connections) at this run's connections."""
    from dataclasses import replace

    return replace(base_workload, connections=connections)


def run_one(opts: LabOptions, plan: RunPlan, workdir: Path, profile, progress,
            emulation: Emulation | None = None, calibrated=None,
            calibrated_source: str | None = None,
            commit_base_ms: float | None = None) -> dict:
    """Start a server, drive the workload, take the deltas, stop it; then predict.

    profile: the device profile the prediction runs on (with emulation: the emulated
    one). calibrated: a Workload (from a workload profile, ``lab calibrate``) to predict
    with instead of the one derived from this run's own measurements (which is still
    reported, as ``derived_workload``). commit_base_ms: what a COMMIT costs besides the
    wait for durability (a calibration's COMMIT round trip at trx_commit=0), added to the
    simulated commit latencies; None: one measured SELECT 1 round trip."""
    m = measure_one(opts, plan, workdir, progress, emulation, profile)
    say = (lambda phase: progress(plan, phase)) if progress else (lambda phase: None)
    say("simulating the same configuration")
    cores = os.cpu_count() or 1
    derived, lines = m.derive()
    config, cfg_notes = sim_config(m.facts, cores, workdir.parent)
    lines += [f"cpu_cores = {cores} (this host)"] + cfg_notes
    if calibrated is not None:
        workload = workload_for(calibrated, plan.connections)
        source = calibrated_source or "calibrated"
        wl_lines = [f"the calibrated workload {source} at {plan.connections} connection(s)"]
    else:
        workload, wl_lines, source = derived, lines, "derived"
    sim = predict(config, workload, profile, opts.duration_s, seed=opts.seed,
                  warmup_s=opts.warmup_s, start=m.start)
    base = commit_base_ms if commit_base_ms is not None else m.rtt["wall_us"] / 1e3
    predicted = predicted_figures(sim, base)
    predicted["commit_round_trip_source"] = (
        "the calibration's COMMIT round trip at trx_commit=0" if commit_base_ms is not None
        else "one measured SELECT 1 round trip")
    measured = m.figures()
    notes = list(m.notes) + model_notes(m.facts, config)
    out = {
        "index": plan.index, "label": plan.label,
        "server_process": {"pid": m.pid, "port": m.port},
        "requested": m.requested, "read_back": m.back, "settings_match": not m.mismatch,
        "settings_mismatch": m.mismatch,
        "measured": m.doc(),
        "workload": {**workload.to_dict(), "source": source, "spec": m.spec.to_dict(),
                     "derivation": wl_lines if calibrated is not None else lines,
                     "sim_config": config.to_dict()},
        "predicted": predicted,
        "errors_pct": compare(measured, predicted),
        "advise": advise_summary(m.advisor.result if m.advisor else None,
                                 m.advisor.error if m.advisor else "not run (--no-advise)"),
        "emulation": m.emulation,
        "notes": notes,
    }
    if calibrated is not None:
        out["derived_workload"] = {**derived.to_dict(), "derivation": lines}
    return out


# ---- the whole lab ------------------------------------------------------------------------------

def _filesystem(path: str) -> str | None:
    from ..live.facts import filesystem_of

    return filesystem_of(path)


def make_base_dir(datadir_on: str | None) -> Path:
    """A fresh directory for the servers' work directories under datadir_on (or the
    current directory): UsageError when it does not exist or is not writable."""
    parent = Path(datadir_on) if datadir_on else Path.cwd()
    if not parent.exists():
        raise UsageError(f"--datadir-on {parent}: no such directory")
    if not parent.is_dir():
        raise UsageError(f"--datadir-on {parent}: not a directory")
    try:
        return Path(tempfile.mkdtemp(prefix="innoflush-lab-", dir=parent))
    except OSError as exc:
        raise UsageError(f"--datadir-on {parent} is not writable "
                         f"({exc.strerror or exc}): give a directory on the storage to "
                         "test that this user can write to") from None


def load_or_measure(opts: LabOptions, base: Path, progress_line, small_writes: bool = False):
    """The device profile of the storage: --profile, else measured now (--quick; with
    small_writes also 4 KB O_DIRECT write, fsync and fdatasync: redo writes are small)."""
    from ..profiles import load_profile

    if opts.profile_ref:
        return load_profile(opts.profile_ref), "profile"
    from ..measure import TestSpec, measure_profile, quick_tests
    from ..measure.run import QUICK_DURATION_S

    if progress_line:
        progress_line(f"measuring the storage under {base} (innoflush measure --quick"
                      + (" + 4k" if small_writes else "") + ")")
    kw = MEASURE_KW
    if kw is None:
        tests = quick_tests()
        if small_writes:
            tests = [TestSpec(op, 4096, True, 1) for op in ("none", "fsync", "fdatasync")] \
                + tests
        kw = {"tests": tests, "duration_s": QUICK_DURATION_S, "quick": True}
    profile = measure_profile(str(base), "lab-measured",
                              f"measured by innoflush lab run in {base.parent}", **kw)
    return profile, "measure"


def run_checked(plan: RunPlan, workdir: Path, warnings: list[str], fn):
    """fn() for one planned run, its errors as one LabError line naming the run; the
    run's work directories (and the emulation's beside it) removed whatever happens."""
    try:
        return fn()
    except WorkloadError as exc:
        raise LabError(f"run {plan.index}/{plan.total} ({plan.label}): {exc}") from None
    except LabError as exc:
        msg = str(exc)
        if not msg.startswith("run "):
            msg = f"run {plan.index}/{plan.total} ({plan.label}): {msg}"
        raise LabError(msg, exc.exit_code) from None
    except UsageError:
        raise
    except InnoflushError as exc:
        raise LabError(f"run {plan.index}/{plan.total} ({plan.label}): {exc}",
                       exc.exit_code) from None
    finally:
        for d in (workdir, workdir.with_name(workdir.name + "-emulate")):
            shutil.rmtree(d, ignore_errors=True)
            if d.exists():
                warnings.append(f"could not remove {d}")


def load_calibrated(ref: str | None):
    """(WorkloadProfile or None, its Workload or None); ProfileError (exit 2) if unknown."""
    if not ref:
        return None, None
    from ..simulator.workload_profile import load_workload

    wp = load_workload(ref)
    return wp, wp.workload


def _calibrated_at(wp, connections: int) -> tuple:
    """(the workload profile's Workload at these connections, its source text), or
    (None, None) without a profile."""
    if wp is None:
        return None, None
    from .calibrate import workload_at

    return workload_at(wp, connections)


def _commit_base_at(wp, plan: RunPlan) -> float | None:
    if wp is None:
        return None
    from .calibrate import commit_base_ms

    return commit_base_ms(wp, plan.connections, sleeping=plan.commits_sleep)


def calibrated_summary(wp) -> dict | None:
    if wp is None:
        return None
    wl = wp.workload.to_dict()
    wl.pop("connections", None)
    return {"name": wp.name, "title": wp.title, "workload": wl,
            "provenance": wp.provenance}


def lab_run(opts: LabOptions, progress=None, progress_line=None) -> dict:
    """Every planned run, then the report dict (see lab/report.py for its keys).

    progress(plan, phase) and progress_line(text) are called for progress messages.
    With opts.emulate the servers run with that device's sync latencies (a preloaded
    library) and the predictions use that profile; --profile/--measure then describe
    this host's storage, against which the emulation is checked (else a quick probe).
    With opts.workload_ref the predictions use that workload profile (lab calibrate)
    instead of the workload derived from each run.
    Always stops every server and removes every work directory it created."""
    from ..advisor.rules import device_from_profile
    from ..profiles import load_profile
    from .report import SCHEMA

    opts.validate()
    if opts.backend == "docker":
        docker_server_class()
    plans = plan_runs(opts)
    if opts.profile_ref:
        load_profile(opts.profile_ref)    # an unknown profile: exit 2 before anything runs
    if opts.emulate:
        load_profile(opts.emulate)
    wp, _ = load_calibrated(opts.workload_ref)
    base = make_base_dir(opts.datadir_on)
    warnings: list[str] = []
    runs: list[dict] = []
    emulation = None
    try:
        fs = _filesystem(str(base))
        if fs in ("tmpfs", "ramfs"):
            warnings.append(f"{base.parent} is on {fs}: memory, not storage — the figures "
                            "say nothing about a disk (give --datadir-on a directory on the "
                            "storage to test)")
        if opts.emulate:
            host_profile = host_source = None
            if opts.profile_ref or opts.measure:
                host_profile, src = load_or_measure(opts, base, progress_line)
                host_source = f"{host_profile.name} [{src}]"
            emulation = make_emulation(opts.emulate, base, host_profile, host_source,
                                       seed=opts.seed, channels=opts.emulate_channels,
                                       progress_line=progress_line)
            if emulation.check["verdict"] != "ok":
                warnings.append(emulation.check["notes"][0])
            profile, source = emulation.profile, "emulated"
        else:
            profile, source = load_or_measure(opts, base, progress_line)
        for plan in plans:
            workdir = base / f"run-{plan.index}"
            runs.append(run_checked(plan, workdir, warnings, lambda plan=plan, workdir=workdir:
                                    run_one(opts, plan, workdir, profile, progress,
                                            emulation, *_calibrated_at(wp, plan.connections),
                                            _commit_base_at(wp, plan))))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    first = runs[0]["read_back"] if runs else {}
    return {
        "schema": SCHEMA,
        "backend": opts.backend, "image": opts.image,
        "server": {"product": first.get("product"), "version": first.get("version"),
                   "sim_flavor": first.get("sim_flavor")},
        "storage": {"datadir_on": str(base.parent), "filesystem": fs},
        "profile": {"name": profile.name, "title": profile.title, "source": source},
        "device": device_from_profile(profile, source).to_dict(),
        "emulation": emulation.to_dict() if emulation else None,
        "host": {"cpu_cores": os.cpu_count() or 1},
        "workload": opts.spec(opts.connections[0]).to_dict() | {
            "connections": list(opts.connections), "description":
            opts.spec(opts.connections[0]).describe()},
        "calibrated_workload": calibrated_summary(wp),
        "runs": runs,
        "warnings": warnings,
    }


__all__ = ["COMPARED", "Emulation", "LabError", "LabOptions", "Measured", "RunPlan", "compare",
           "derive_workload", "make_emulation", "measure_one", "run_checked", "run_one",
           "error_pct", "files_delta", "innodb_files", "lab_run", "loopback",
           "machine_cpu", "plan_runs", "predict", "proc_cpu_seconds"]
