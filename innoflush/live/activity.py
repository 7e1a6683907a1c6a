"""Where the connections' time goes during the interval: processlist samples.

Between statements a connection shows Command ``Sleep``; inside one, ``Query`` (text
protocol) or ``Execute`` (prepared statements). Sampled every ~20 ms, the share ``f`` of a
connection's samples that are not Sleep is the share of its time inside the server
(close to what performance_schema's statement timers say: docs/commands/advise.md, 'The
workload'). With
N connections committing T transactions a second, a transaction takes N/T seconds of a
connection: ``f·N/T`` inside the server and ``(1 − f)·N/T`` outside it — the client's own
work, the network and the wake-ups, which no server counter shows.

At commit MariaDB shows the group-commit leader in state ``Commit`` (writing and syncing
the redo log) and its followers in ``Updating status``: 10.6+ holds the OK packet until
the group's sync (thd_async_state, sql/sql_class.h; thd_proc_info in dispatch_command,
sql/sql_parse.cc). MySQL 8.0 shows ``waiting for handler commit``. Their share is the
commit wait.

Sources, best first: ``performance_schema.threads`` (SELECT on performance_schema; sees
every account's connections and gives THREAD_OS_ID), then ``SHOW FULL PROCESSLIST`` (every
account's connections only with PROCESS). Never ``information_schema.PROCESSLIST`` in a
loop: each read builds an on-disk temporary table and costs ~10× SHOW's server CPU; it is
read once, at the end, for the thread ids (MariaDB's TID column) when performance_schema
is off.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

PERIOD_S = 0.02
MIN_PERIOD_S = 0.005  # a sample costs CPU on both sides (docs/commands/advise.md)
MAX_PERIOD_S = 0.1
LONG_WINDOW_SAMPLES = 300


def sampling_period(window_s: float) -> float:
    """About 150 samples over a short window, every 5 to 20 ms; from 6 s on, 300 over
    the window, up to every 100 ms. Every 20 ms over a whole minute would cost the server
    and advise a visible share of a core each (docs/commands/advise.md, 'The workload')
    for no better shares: samples further apart are the more independent."""
    short = min(PERIOD_S, max(MIN_PERIOD_S, window_s / 150))
    return min(MAX_PERIOD_S, max(short, window_s / LONG_WINDOW_SAMPLES))
MIN_SAMPLES = 40      # fewer and the shares are too coarse to divide a transaction's time
# Commands of server threads that are not client connections.
BACKGROUND_COMMANDS = frozenset({
    "Daemon", "Binlog Dump", "Binlog Dump GTID", "Slave_IO", "Slave_SQL", "Slave_worker",
    "Connect", "Register Slave", "Killed", "Delayed insert", "Table Dump"})
BACKGROUND_USERS = frozenset({"system user", "event_scheduler", "unauthenticated user"})
# A connection waiting for its commit to become durable.
COMMIT_STATES = frozenset({"Commit", "Updating status", "waiting for handler commit",
                           "Waiting for group commit", "commit", "Waiting for commit lock"})
SLEEP = "Sleep"

_PFS_THREADS = ("SELECT PROCESSLIST_ID, PROCESSLIST_USER, PROCESSLIST_COMMAND, "
                "PROCESSLIST_STATE, THREAD_OS_ID FROM performance_schema.threads "
                "WHERE PROCESSLIST_ID IS NOT NULL")


@dataclass
class ConnectionTally:
    user: str | None = None
    seen: int = 0
    busy: int = 0
    commit_wait: int = 0
    tid: int | None = None
    states: Counter = field(default_factory=Counter)


@dataclass
class Activity:
    """The connections seen during the interval, and how their time divided."""

    source: str | None                 # where the samples came from, None: not sampled
    samples: int = 0
    period_s: float | None = None      # mean spacing of the samples
    sample_cost_ms: float | None = None
    sees_all: bool | None = None       # False: only this account's connections are visible
    connections: int = 0               # client connections busy in at least one sample
    idle_connections: int = 0          # seen only asleep
    busy_share: float | None = None    # f over the active connections' samples
    commit_wait_share: float | None = None
    state_shares: dict = field(default_factory=dict)
    tids: list[int] = field(default_factory=list)
    queries: int = 0                   # statements the sampler itself sent
    problem: str | None = None

    @property
    def usable(self) -> bool:
        return (self.problem is None and self.samples >= MIN_SAMPLES
                and self.connections > 0 and self.busy_share is not None)

    def to_dict(self) -> dict:
        return {"source": self.source, "samples": self.samples,
                "period_ms": round(self.period_s * 1e3, 2) if self.period_s else None,
                "sample_cost_ms": self.sample_cost_ms, "sees_all": self.sees_all,
                "connections": self.connections, "idle_connections": self.idle_connections,
                "busy_share": self.busy_share, "commit_wait_share": self.commit_wait_share,
                "state_shares": self.state_shares, "queries": self.queries,
                "problem": self.problem}


def is_client_connection(user: str | None, command: str | None) -> bool:
    return bool(command) and command not in BACKGROUND_COMMANDS \
        and (user or "") not in BACKGROUND_USERS


def summarize(tallies: dict[int, ConnectionTally], *, source: str | None, samples: int,
              period_s: float | None, cost_ms: float | None, sees_all: bool | None,
              queries: int, problem: str | None = None) -> Activity:
    """The Activity of per-connection tallies (pure, so it tests without a server)."""
    active = [t for t in tallies.values() if t.busy > 0]
    idle = sum(1 for t in tallies.values() if t.busy == 0 and t.seen > 0)
    seen = sum(t.seen for t in active)
    states: Counter = Counter()
    for t in active:
        states.update(t.states)
    shares = {k: round(v / seen, 4) for k, v in states.most_common(12)} if seen else {}
    return Activity(
        source=source, samples=samples, period_s=period_s, sample_cost_ms=cost_ms,
        sees_all=sees_all, connections=len(active), idle_connections=idle,
        busy_share=round(sum(t.busy for t in active) / seen, 4) if seen else None,
        commit_wait_share=(round(sum(t.commit_wait for t in active) / seen, 4)
                           if seen else None),
        state_shares=shares,
        tids=sorted(t.tid for t in active if t.tid is not None), queries=queries,
        problem=problem)


class ActivitySampler(threading.Thread):
    """Samples the processlist on a session of its own until stop(); read-only.

    open_session: a callable giving a new ReadOnlySession (the sampler must not share
    the status session: it runs while that one sleeps). exclude_ids: connection ids not
    to count (the advisor's own)."""

    def __init__(self, open_session: Callable[[], Any], period_s: float = PERIOD_S,
                 exclude_ids: Iterable[int] = (),
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(name="innoflush-activity", daemon=True)
        self._open = open_session
        self.period_s = period_s
        self.exclude = set(exclude_ids)
        self._clock = clock
        self._halt = threading.Event()
        self._tallies: dict[int, ConnectionTally] = {}
        self._samples = 0
        self._cost_s = 0.0
        self._first: float | None = None
        self._last: float | None = None
        self._source: str | None = None
        self._sees_all: bool | None = None
        self._queries = 0
        self._problem: str | None = None

    # ---- the loop ----------------------------------------------------------------------
    def run(self) -> None:
        session = None
        try:
            session = self._open()
            read = self._choose_source(session)
            next_t = self._clock()
            while not self._halt.is_set():
                t0 = self._clock()
                rows = read(session)
                t1 = self._clock()
                self._queries += 1
                self._add(rows)
                self._samples += 1
                self._cost_s += t1 - t0
                self._first = t0 if self._first is None else self._first
                self._last = t0
                next_t += self.period_s
                delay = next_t - self._clock()
                if delay < 0:   # behind (a slow read): keep the spacing, never burst
                    next_t = self._clock()
                    delay = 0.0
                self._halt.wait(delay)
            self._read_tids(session)
        except Exception as exc:  # noqa: BLE001 - reported in the Activity, never fatal
            self._problem = f"processlist sampling failed: {type(exc).__name__}: {exc}"
        finally:
            if session is not None:
                session.close()

    def _choose_source(self, session: Any) -> Callable[[Any], list[tuple]]:
        own = session.query("SELECT CONNECTION_ID()")[0][0]
        self.exclude.add(int(own))
        self._queries += 1
        self._source, self._sees_all = processlist_scope(session)
        self._queries += 2 if self._source == "performance_schema.threads" else 4
        return _read_pfs if self._source == "performance_schema.threads" else _read_show

    def _add(self, rows: list[tuple]) -> None:
        for cid, user, command, state, tid in rows:
            if cid is None or int(cid) in self.exclude or not is_client_connection(user,
                                                                                   command):
                continue
            t = self._tallies.get(int(cid))
            if t is None:
                t = self._tallies[int(cid)] = ConnectionTally(user=user)
            t.seen += 1
            if tid:
                t.tid = int(tid)
            if command != SLEEP:
                t.busy += 1
                t.states[state or command] += 1
                if state in COMMIT_STATES:
                    t.commit_wait += 1

    def _read_tids(self, session: Any) -> None:
        """SHOW has no thread ids: one read of MariaDB's information_schema TID column."""
        if self._source == "performance_schema.threads":
            return
        try:
            rows = session.query("SELECT ID, TID FROM information_schema.PROCESSLIST")
            self._queries += 1
        except Exception:  # noqa: BLE001 - MySQL has no TID column: no thread split then
            return
        for cid, tid in rows:
            t = self._tallies.get(int(cid))
            if t is not None and tid:
                t.tid = int(tid)

    # ---- the result ----------------------------------------------------------------------
    def stop(self) -> Activity:
        self._halt.set()
        self.join(timeout=10)
        n = self._samples
        period = ((self._last - self._first) / (n - 1)
                  if n > 1 and self._first is not None and self._last is not None else None)
        return summarize(self._tallies, source=self._source, samples=n, period_s=period,
                         cost_ms=round(self._cost_s / n * 1e3, 3) if n else None,
                         sees_all=self._sees_all, queries=self._queries,
                         problem=self._problem)


def processlist_scope(session: Any) -> tuple[str, bool]:
    """(where the connections are read, whether every account's show there):
    performance_schema.threads when it is on and readable, else SHOW FULL PROCESSLIST —
    which, without the PROCESS privilege, shows only the account's own connections (told
    by Threads_connected counting more than one account's worth of them)."""
    if _pfs_threads_readable(session):
        return "performance_schema.threads", True
    rows = _read_show(session)
    users = {r[1] for r in rows}
    connected = _status_value(session, "Threads_connected")
    return "SHOW FULL PROCESSLIST", not (len(users) <= 1 and connected is not None
                                         and connected > len(rows) + 1)


def _pfs_threads_readable(session: Any) -> bool:
    try:
        on = session.query("SELECT @@performance_schema")[0][0]
        if str(on) not in ("1", "ON"):
            return False
        return bool(session.query(_PFS_THREADS + " LIMIT 1"))
    except Exception:  # noqa: BLE001 - no grant on performance_schema: use SHOW
        return False


def _read_pfs(session: Any) -> list[tuple]:
    return session.query(_PFS_THREADS)


def _read_show(session: Any) -> list[tuple]:
    return [(r.get("Id"), r.get("User"), r.get("Command"), r.get("State"), None)
            for r in session.query_dicts("SHOW FULL PROCESSLIST")]


def _status_value(session: Any, name: str) -> int | None:
    try:
        rows = session.query("SHOW GLOBAL STATUS LIKE %s", (name,))
        return int(rows[0][1]) if rows else None
    except Exception:  # noqa: BLE001
        return None
