"""SHOW GLOBAL STATUS over an interval: snapshots, deltas, rates, restarts and resets.

Counters are cumulative since start-up (or since FLUSH STATUS); the advisor works on
their *deltas* over ``--interval`` seconds, ``--samples`` times in a row. A server restart
during an interval (``Uptime`` went down, or the connection was lost and came back: the
interval is "lost" and sampling goes on) or a counter reset (``Uptime_since_flush_status``
went down or rose less than ``Uptime``, or any cumulative counter decreased) makes that
interval invalid: it is reported and never turned into a negative rate.

Commits — what is counted, in this order (the first that applies):

1. MariaDB with the binary log on: ``Binlog_commits`` (transactions written to the binlog).
2. MySQL/Percona with the binary log on: ``Binlog_cache_use`` (transactions that went
   through the transactional binlog cache: every committed write transaction).
3. Otherwise no counter counts committed write transactions directly. ``Com_commit`` moves
   only for explicit COMMITs, so an autocommit workload shows 0; ``Handler_commit`` counts
   every statement's internal commit, reads included (a SELECT on InnoDB adds one, a
   3-statement transaction adds 4). So: without explicit COMMITs, the autocommit write
   statements (``Com_insert`` + ``Com_update`` + ``Com_delete`` + ``Com_replace`` + their
   ``_select``/``_multi`` forms + ``Com_load``) are the commits; with explicit COMMITs,
   ``Com_commit`` + ``Com_xa_commit`` are, and autocommit writes outside them cannot be
   told apart (the figure is then a lower bound, and the report says so).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any

from ..errors import InnoflushError, OptionError

if TYPE_CHECKING:
    from .connect import ReadOnlySession

# Cumulative counters the advisor reads (decrease = reset); absent ones are skipped.
COUNTERS = (
    "Uptime", "Uptime_since_flush_status", "Questions",
    "Com_commit", "Com_rollback", "Com_xa_commit", "Com_begin", "Com_select",
    "Com_insert", "Com_insert_select", "Com_update", "Com_update_multi", "Com_delete",
    "Com_delete_multi", "Com_replace", "Com_replace_select", "Com_load",
    "Handler_commit", "Handler_rollback", "Handler_prepare",
    "Innodb_data_fsyncs", "Innodb_data_writes", "Innodb_data_written", "Innodb_data_reads",
    "Innodb_log_writes", "Innodb_log_write_requests", "Innodb_log_waits",
    "Innodb_os_log_fsyncs", "Innodb_os_log_written",
    "Innodb_dblwr_writes", "Innodb_dblwr_pages_written",
    "Innodb_pages_written", "Innodb_buffer_pool_pages_flushed", "Innodb_pages_created",
    "Innodb_rows_inserted", "Innodb_rows_updated", "Innodb_rows_deleted",
    "Binlog_commits", "Binlog_group_commits", "Binlog_bytes_written", "Binlog_cache_use",
    "Binlog_stmt_cache_use",
)
# Gauges: a level now, polled during the interval (not differenced).
# The redo LSNs (MySQL 8.0.30+) and Uptime give the state a window opens on
# (start_state): the checkpoint age, and how long the server had run.
GAUGES = ("Threads_running", "Threads_connected", "Innodb_data_pending_fsyncs",
          "Innodb_os_log_pending_fsyncs", "Innodb_buffer_pool_pages_dirty",
          "Innodb_buffer_pool_pages_total", "Innodb_checkpoint_age",
          "Innodb_redo_log_current_lsn", "Innodb_redo_log_checkpoint_lsn", "Uptime")
POLLED = ("Threads_running", "Innodb_data_pending_fsyncs", "Innodb_os_log_pending_fsyncs")
WRITE_STATEMENTS = ("Com_insert", "Com_insert_select", "Com_update", "Com_update_multi",
                    "Com_delete", "Com_delete_multi", "Com_replace", "Com_replace_select",
                    "Com_load")

# Resolved at call time, so tests can substitute a fake clock.
CLOCK = time.monotonic
SLEEP = time.sleep

# Errors of a connection that went away: client-side (server gone, lost during a query,
# out of sync after a drop, lost at a packet boundary) and server-side (shutdown in
# progress; MariaDB's connection killed at shutdown; MySQL 8's disconnect notice)
CONNECTION_LOST = (2006, 2013, 2014, 2055, 1053, 1927, 4031)
# after a lost connection, how long to keep trying to reconnect, and how often
RECONNECT_WINDOW_S = 60.0
# an hour an interval, as measure's and the lab's --duration: past it a value is a typo
# (3600000 for 3600), not a sampling plan; a thousand intervals is 16 minutes at 1 s
MAX_INTERVAL_S = 3600.0
MAX_SAMPLES = 1000
RECONNECT_PAUSE_S = 1.0

_ER_SPECIFIC_ACCESS_DENIED = 1227
_ER_TABLEACCESS_DENIED = 1142


class SamplingError(InnoflushError):
    """No valid interval: the server restarted or its counters were reset throughout."""


@dataclass
class Snapshot:
    t: float                  # monotonic seconds
    status: dict              # name -> int (numeric status values only)


@dataclass
class Interval:
    index: int
    seconds: float
    valid: bool
    problem: str | None                       # restart / reset description
    deltas: dict = field(default_factory=dict)
    polls: dict = field(default_factory=dict)  # gauge -> list of polled values
    end_gauges: dict = field(default_factory=dict)
    gauge_deltas: dict = field(default_factory=dict)  # gauge -> end - start

    def to_dict(self) -> dict:
        return {"index": self.index, "seconds": round(self.seconds, 3), "valid": self.valid,
                "problem": self.problem, "deltas": self.deltas}


def numeric_status(rows: Iterable[tuple[Any, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, value in rows:
        try:
            out[str(name)] = int(value)
        except (TypeError, ValueError):
            try:
                out[str(name)] = int(float(value))
            except (TypeError, ValueError):
                continue
    return out


def read_status(session: ReadOnlySession) -> dict[str, int]:
    import pymysql

    try:
        return numeric_status(session.query("SHOW GLOBAL STATUS"))
    except (pymysql.err.ProgrammingError, pymysql.err.OperationalError) as exc:
        code = exc.args[0] if exc.args else None
        if code in (_ER_SPECIFIC_ACCESS_DENIED, _ER_TABLEACCESS_DENIED):
            from .connect import PrivilegeError
            raise PrivilegeError(
                "the account cannot read SHOW GLOBAL STATUS (MySQL 5.7 with "
                "show_compatibility_56=OFF needs SELECT on performance_schema.global_status): "
                "grant it, or use an account that can") from None
        raise


def read_polled(session: ReadOnlySession) -> dict[str, int]:
    names = ", ".join(f"'{n}'" for n in POLLED)
    rows = session.query(f"SHOW GLOBAL STATUS WHERE Variable_name IN ({names})")
    return numeric_status(rows)


def interval_between(index: int, a: Snapshot, b: Snapshot, polls: dict | None = None
                     ) -> Interval:
    """The deltas of b over a, or an invalid interval when a restart or reset came between."""
    seconds = b.t - a.t
    sa, sb = a.status, b.status
    problem = None
    if "Uptime" in sa and "Uptime" in sb and sb["Uptime"] < sa["Uptime"]:
        problem = (f"server restart during the interval (Uptime {sa['Uptime']} s -> "
                   f"{sb['Uptime']} s)")
    elif ("Uptime_since_flush_status" in sa and "Uptime_since_flush_status" in sb
          and sb["Uptime_since_flush_status"] < sa["Uptime_since_flush_status"]):
        problem = "status counters reset during the interval (FLUSH STATUS)"
    elif _flushed_between(sa, sb):
        # a reset soon after a previous one: Uptime_since_flush_status did not go down,
        # but it rose less than Uptime did (whole seconds each: 1 s of rounding allowed)
        flushed = sb["Uptime_since_flush_status"] - sa["Uptime_since_flush_status"]
        problem = ("status counters reset during the interval (FLUSH STATUS): "
                   f"Uptime_since_flush_status rose {flushed} s while Uptime rose "
                   f"{sb['Uptime'] - sa['Uptime']} s")
    else:
        down = [k for k in COUNTERS if k in sa and k in sb and sb[k] < sa[k]]
        if down:
            problem = ("cumulative counters decreased during the interval (reset?): "
                       + ", ".join(down[:6]) + (" ..." if len(down) > 6 else ""))
    end_gauges = {k: sb[k] for k in GAUGES if k in sb}
    if problem:
        return Interval(index, seconds, False, problem, {}, polls or {}, end_gauges)
    deltas = {k: sb[k] - sa[k] for k in COUNTERS if k in sa and k in sb}
    gauge_deltas = {k: sb[k] - sa[k] for k in GAUGES if k in sa and k in sb}
    return Interval(index, seconds, True, None, deltas, polls or {}, end_gauges, gauge_deltas)


def _flushed_between(sa: dict, sb: dict) -> bool:
    names = ("Uptime", "Uptime_since_flush_status")
    if not all(n in sa and n in sb for n in names):
        return False
    rose = sb["Uptime"] - sa["Uptime"]
    rose_since_flush = sb["Uptime_since_flush_status"] - sa["Uptime_since_flush_status"]
    return rose_since_flush < rose - 1


def connection_lost(exc: BaseException) -> bool:
    """Whether a query failed because the connection went away (a server restart, a
    network cut), not because of what was asked."""
    import pymysql

    if isinstance(exc, pymysql.err.InterfaceError):
        return True     # the connection was already closed
    code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
    return isinstance(exc, pymysql.err.OperationalError) and code in CONNECTION_LOST


def reconnect(open_session: Callable[[], Any], window_s: float,
              clock: Callable[[], float], sleep: Callable[[float], object]
              ) -> tuple[Any, Snapshot] | None:
    """A new session and its first snapshot, tried every RECONNECT_PAUSE_S for up to
    window_s seconds (each try bounded by the connect timeout open_session applies);
    None when none came. A server still shutting down may accept the connection and
    drop it again: the snapshot is part of the try."""
    deadline = clock() + window_s
    while True:
        new = None
        try:
            new = open_session()
            return new, Snapshot(clock(), read_status(new))
        except Exception:  # noqa: BLE001 - the server is still down: try again
            if new is not None:
                new.close()
            if clock() + RECONNECT_PAUSE_S >= deadline:
                return None
            sleep(RECONNECT_PAUSE_S)


def check_sampling(interval_s: float, samples: int) -> None:
    """--interval and --samples within their bounds, else exit 2 (before connecting)."""
    if not 1 <= interval_s <= MAX_INTERVAL_S:
        raise OptionError(f"--interval must be at least 1 second and at most "
                          f"{MAX_INTERVAL_S:g} s (got {interval_s:g})")
    if not 1 <= samples <= MAX_SAMPLES:
        raise OptionError(f"--samples must be at least 1 and at most {MAX_SAMPLES} "
                          f"(got {samples})")


def sample(session: ReadOnlySession, interval_s: float = 10.0, samples: int = 1,
           poll_s: float = 0.5, clock: Callable[[], float] | None = None,
           sleep: Callable[[float], object] | None = None,
           progress: Callable[[int, float], object] | None = None,
           open_session: Callable[[], Any] | None = None,
           on_reconnect: Callable[[Any], object] | None = None,
           reconnect_window_s: float | None = None) -> list[Interval]:
    """samples consecutive intervals of interval_s seconds; gauges polled every poll_s.

    When the connection is lost during an interval (the server restarted) and
    open_session is given, a new session is opened (a few tries, for at most
    reconnect_window_s), that interval is marked lost, on_reconnect gets the new session,
    and sampling goes on from a fresh snapshot. Without open_session, or when no
    connection comes back, the error is raised."""
    clock = clock or CLOCK
    sleep = sleep or SLEEP
    window = RECONNECT_WINDOW_S if reconnect_window_s is None else reconnect_window_s
    check_sampling(interval_s, samples)
    prev = Snapshot(clock(), read_status(session))
    out: list[Interval] = []
    for i in range(samples):
        polls: dict[str, list[int]] = {k: [] for k in POLLED}
        end = prev.t + interval_s
        try:
            while True:
                now = clock()
                if now >= end:
                    break
                sleep(min(poll_s, end - now))
                if clock() < end - 0.05:
                    for k, val in read_polled(session).items():
                        polls.setdefault(k, []).append(val)
                if progress:
                    progress(i, min(1.0, (clock() - prev.t) / interval_s))
            snap = Snapshot(clock(), read_status(session))
        except Exception as exc:
            if open_session is None or not connection_lost(exc):
                raise
            lost_at = clock()
            got = reconnect(open_session, window, clock, sleep)
            if got is None:
                raise
            session, snap = got
            if on_reconnect is not None:
                on_reconnect(session)
            out.append(lost_interval(i, prev, snap, snap.t - lost_at, polls))
            prev = snap
            continue
        out.append(interval_between(i, prev, snap, polls))
        prev = snap
    return out


def lost_interval(index: int, a: Snapshot, b: Snapshot, down_s: float,
                  polls: dict | None = None) -> Interval:
    """The interval during which the connection was lost; b: the first snapshot on the
    new connection."""
    ua, ub = a.status.get("Uptime"), b.status.get("Uptime")
    # restarted: Uptime (whole seconds, rounded down) rose less than the time that passed
    # less its rounding, or the server has been up no longer than the connection was
    # lost (so it came up meanwhile; this tells the restart of a server up for seconds)
    restarted = ua is not None and ub is not None and (
        ub < ua + (b.t - a.t) - 1.1 or ub <= down_s + 1)
    what = (f"server restarted during interval {index + 1}: lost (Uptime {ua} s -> {ub} s; "
            if restarted else
            f"connection lost during interval {index + 1}: lost (Uptime {ua} s -> {ub} s; ")
    return Interval(index, b.t - a.t, False,
                    what + f"reconnected after {down_s:.1f} s; sampling went on from there)",
                    {}, polls or {}, {k: b.status[k] for k in GAUGES if k in b.status})


def combine(intervals: list[Interval]) -> Interval:
    """The valid intervals summed into one; SamplingError when none is valid."""
    valid = [iv for iv in intervals if iv.valid]
    if not valid:
        problems = "; ".join(iv.problem or "?" for iv in intervals)
        raise SamplingError(f"no usable interval: {problems}. Run again once the server is "
                            "up and its counters are not being reset")
    deltas: dict[str, int] = {}
    gauge_deltas: dict[str, int] = {}
    polls: dict[str, list[int]] = {}
    for iv in valid:
        for k, v in iv.deltas.items():
            deltas[k] = deltas.get(k, 0) + v
        for k, v in iv.gauge_deltas.items():
            gauge_deltas[k] = gauge_deltas.get(k, 0) + v
        for k, vals in iv.polls.items():
            polls.setdefault(k, []).extend(vals)
    return Interval(-1, sum(iv.seconds for iv in valid), True, None, deltas, polls,
                    valid[-1].end_gauges, gauge_deltas)


def start_state(status: dict) -> dict | None:
    """The server's redo since its last checkpoint and its dirty pages, from SHOW GLOBAL
    STATUS (MariaDB: Innodb_checkpoint_age; MySQL 8.0.30+: the redo LSNs), and how long it
    had run (Uptime, where the status holds it); None when it does not tell."""
    def num(name: str) -> int | None:
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
    state = {"checkpoint_age": age, "dirty_pages": dirty}
    uptime = num("Uptime")
    if uptime is not None and uptime >= 0:
        state["uptime_s"] = uptime
    return state


# ---- what the deltas mean -------------------------------------------------------------

def estimate_commits(d: dict, product: str, log_bin: bool) -> tuple[int, str, str | None]:
    """(commits, counter used, caveat or None); see the module docstring."""
    if log_bin and product == "mariadb" and "Binlog_commits" in d:
        return d["Binlog_commits"], "Binlog_commits", None
    if log_bin and product != "mariadb" and d.get("Binlog_cache_use", 0) > 0:
        return d["Binlog_cache_use"], "Binlog_cache_use", None
    explicit = d.get("Com_commit", 0) + d.get("Com_xa_commit", 0)
    writes = sum(d.get(k, 0) for k in WRITE_STATEMENTS)
    if explicit == 0:
        return writes, "autocommit write statements (Com_insert+Com_update+Com_delete+...)", \
            None
    note = None
    if writes > explicit:
        note = ("explicit COMMITs seen: commits = Com_commit + Com_xa_commit; autocommit "
                "write statements outside them cannot be separated without the binary log, "
                "so the commit rate is a lower bound")
    return explicit, "Com_commit + Com_xa_commit", note


def _per(a: float | None, b: float | None, digits: int = 3) -> float | None:
    if a is None or not b:
        return None
    return round(a / b, digits)


@dataclass
class Observed:
    """Rates and ratios over the sampled interval(s), with the flavor's semantics."""

    seconds: float
    intervals: int
    commits: int
    commits_per_s: float
    commits_source: str
    commits_note: str | None
    data_fsyncs_per_s: float | None
    data_writes_per_s: float | None
    data_fsyncs_per_data_write: float | None
    data_writes_include_redo: bool
    redo_syncs_per_s: float | None
    redo_syncs_source: str
    other_fsyncs_per_s: float | None     # data fsyncs beyond the redo syncs
    log_writes_per_commit: float | None
    os_log_fsyncs_per_commit: float | None
    redo_bytes_per_commit: float | None
    commits_per_redo_sync: float | None   # group-commit size
    binlog_commits_per_group: float | None
    binlog_bytes_per_commit: float | None
    dblwr_writes_per_s: float | None
    dblwr_pages_per_s: float | None
    dblwr_pages_per_write: float | None
    pages_written_per_s: float | None
    pages_flushed_per_s: float | None
    page_writes_per_commit: float | None
    pages_dirtied_per_commit: float | None
    rows_inserted_per_commit: float | None
    threads_running_avg: float | None
    pending_fsyncs_max: int | None
    pending_fsyncs_avg: float | None
    deltas: dict = field(default_factory=dict)
    gauge_deltas: dict = field(default_factory=dict)   # gauge -> end - start
    start_gauges: dict = field(default_factory=dict)   # the gauges when the window opened
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Observed:
        """A report's ``observed`` (to fit it again, offline)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


def observe(iv: Interval, product: str, log_bin: bool, trx_commit: int,
            flush_log_at_timeout: float = 1.0, redo_write_through: bool = False,
            intervals: int = 1, redo_syncs_known: tuple[int, str] | None = None) -> Observed:
    """Observed figures from a (combined) valid interval. redo_syncs_known: the redo
    syncs and their source when the server counted them itself (performance_schema)."""
    d = iv.deltas
    s = iv.seconds if iv.seconds > 0 else 1e-9
    notes: list[str] = []
    commits, source, caveat = estimate_commits(d, product, log_bin)
    fsyncs = d.get("Innodb_data_fsyncs")
    writes = d.get("Innodb_data_writes")
    log_writes = d.get("Innodb_log_writes")
    mariadb = product == "mariadb"
    if redo_syncs_known is not None:
        redo_syncs, redo_src = redo_syncs_known
    elif "Innodb_os_log_fsyncs" in d:
        redo_syncs = d["Innodb_os_log_fsyncs"]
        redo_src = "Innodb_os_log_fsyncs"
    elif log_writes is not None:
        # MariaDB >= 10.8 has no redo-sync counter. With trx_commit=1 (or 3) every redo
        # write is followed by a sync (unless the log is write-through); otherwise the
        # log is synced about once per innodb_flush_log_at_timeout.
        if redo_write_through:
            redo_syncs = 0
            redo_src = "0: redo log is write-through (no fsync)"
        elif trx_commit in (1, 3):
            redo_syncs = log_writes
            redo_src = "estimated: Innodb_log_writes (one sync per redo write at trx_commit=1)"
        else:
            # Synced about once per innodb_flush_log_at_timeout — and before every
            # page-flush batch, whose pages' redo must be durable first (the write-ahead
            # rule): 10 -> 75 redo syncs in 10 s under flushing, counted with strace.
            timer = int(round(s / max(flush_log_at_timeout, 1e-3)))
            batches = d.get("Innodb_dblwr_writes", 0)
            redo_syncs = min(fsyncs if fsyncs is not None else log_writes,
                             log_writes, timer + batches)
            redo_src = (f"estimated: one per innodb_flush_log_at_timeout "
                        f"({flush_log_at_timeout:g} s) and one per doublewrite batch "
                        "(the write-ahead rule); performance_schema would count them")
    else:
        redo_syncs, redo_src = None, "unknown"
    other = None
    if fsyncs is not None and redo_syncs is not None:
        other = max(0, fsyncs - redo_syncs)
    pages_written = d.get("Innodb_pages_written")
    pages_flushed = d.get("Innodb_buffer_pool_pages_flushed")
    page_writes = pages_written if pages_written is not None else pages_flushed
    # Pages dirtied in the interval = pages flushed + growth of the dirty-page count: a
    # short interval may see the commits dirty pages that the page cleaner writes later.
    dirty_growth = iv.gauge_deltas.get("Innodb_buffer_pool_pages_dirty")
    pages_dirtied = None
    if dirty_growth is not None and (pages_flushed is not None or page_writes is not None):
        pages_dirtied = max(0, (pages_flushed if pages_flushed is not None else page_writes)
                            + dirty_growth)
    running = iv.polls.get("Threads_running") or []
    # every poll is itself a running thread (ours): subtract it
    running_avg = (round(max(0.0, sum(running) / len(running) - 1.0), 3) if running else None)
    pend = iv.polls.get("Innodb_data_pending_fsyncs") or []
    binlog_groups = d.get("Binlog_group_commits")
    if caveat:
        notes.append(caveat)
    if commits == 0:
        notes.append("no write transactions committed during the interval: rates per commit "
                     "are not available")
    if mariadb:
        notes.append("MariaDB: Innodb_data_writes excludes redo writes (10.5+); "
                     "Innodb_data_fsyncs includes redo syncs")
    else:
        notes.append("MySQL: Innodb_data_writes and Innodb_data_fsyncs include redo writes "
                     "and syncs; Innodb_os_log_fsyncs is the redo subset")
    return Observed(
        seconds=round(iv.seconds, 3), intervals=intervals, commits=commits,
        commits_per_s=round(commits / s, 3), commits_source=source, commits_note=caveat,
        data_fsyncs_per_s=_per(fsyncs, s), data_writes_per_s=_per(writes, s),
        data_fsyncs_per_data_write=_per(fsyncs, writes, 6),
        data_writes_include_redo=not mariadb,
        redo_syncs_per_s=_per(redo_syncs, s), redo_syncs_source=redo_src,
        other_fsyncs_per_s=_per(other, s),
        log_writes_per_commit=_per(log_writes, commits),
        os_log_fsyncs_per_commit=_per(d.get("Innodb_os_log_fsyncs"), commits),
        redo_bytes_per_commit=_per(d.get("Innodb_os_log_written"), commits, 1),
        commits_per_redo_sync=_per(commits, redo_syncs),
        binlog_commits_per_group=(_per(d.get("Binlog_commits"), binlog_groups)
                                  if log_bin else None),
        binlog_bytes_per_commit=(_per(d.get("Binlog_bytes_written"), commits, 1)
                                 if log_bin else None),
        dblwr_writes_per_s=_per(d.get("Innodb_dblwr_writes"), s),
        dblwr_pages_per_s=_per(d.get("Innodb_dblwr_pages_written"), s),
        dblwr_pages_per_write=_per(d.get("Innodb_dblwr_pages_written"),
                                   d.get("Innodb_dblwr_writes")),
        pages_written_per_s=_per(pages_written, s),
        pages_flushed_per_s=_per(pages_flushed, s),
        page_writes_per_commit=_per(page_writes, commits, 4),
        pages_dirtied_per_commit=_per(pages_dirtied, commits, 4),
        rows_inserted_per_commit=_per(d.get("Innodb_rows_inserted"), commits),
        threads_running_avg=running_avg,
        pending_fsyncs_max=max(pend) if pend else None,
        pending_fsyncs_avg=round(sum(pend) / len(pend), 3) if pend else None,
        deltas=dict(d), gauge_deltas=dict(iv.gauge_deltas),
        start_gauges={k: v - iv.gauge_deltas[k] for k, v in iv.end_gauges.items()
                      if k in iv.gauge_deltas},
        notes=notes)
