"""SHOW GLOBAL STATUS over an interval: snapshots, deltas, rates, restarts and resets.

Counters are cumulative since start-up (or since FLUSH STATUS); the advisor works on
their *deltas* over ``--interval`` seconds, ``--samples`` times in a row. A server restart
during an interval (``Uptime`` went down, or the connection was lost and came back: the
interval is "lost" and sampling goes on) or a counter reset (``Uptime_since_flush_status``
went down or rose less than ``Uptime``, or any cumulative counter decreased) makes that
interval invalid: it is reported and never turned into a negative rate.

Commits, and what the deltas mean: innoflush/live/observed.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
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
