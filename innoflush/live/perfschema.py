"""The server's own account of its I/O and commits, from performance_schema when it is on.

Read before and after the interval (summary tables are cumulative); the advisor never
changes setup tables, so what is available is what the server was started with. MySQL
turns performance_schema on by default; MariaDB ships it off.

- File I/O (``file_summary_by_event_name``): syncs are counted with the other
  "miscellaneous" operations (open, close, stat), COUNT_MISC / SUM_TIMER_MISC, timers in
  picoseconds. MySQL instruments its redo log (``wait/io/file/innodb/innodb_log_file``);
  MariaDB 10.11 does not, so there the redo syncs are Innodb_data_fsyncs less the data
  files' syncs (checked against strace: docs/commands/advise.md, 'The workload').
- Commits: ``events_transactions_summary_global_by_event_name`` COUNT_STAR counts them
  exactly when the ``transaction`` instrument is on (MySQL's default; MariaDB needs
  ``--performance-schema-instrument='transaction=ON'``). Its timer is not the commit
  latency of an autocommit statement (the durable wait comes after the event ends).
- Commit latency: ``statement/sql/commit`` in
  ``events_statements_summary_global_by_event_name`` for explicit COMMITs over the text
  protocol; prepared statements are summarised only as ``statement/com/Execute``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DATA_FILE = "wait/io/file/innodb/innodb_data_file"
LOG_FILE = "wait/io/file/innodb/innodb_log_file"
BINLOG = "wait/io/file/sql/binlog"
FILE_EVENTS = (DATA_FILE, LOG_FILE, BINLOG)
COMMIT_STATEMENT = "statement/sql/commit"
PS_PER_US = 1e6


@dataclass
class PfsSnapshot:
    files: dict = field(default_factory=dict)        # event -> (count_misc, ps_misc, count_write)
    instrumented: set = field(default_factory=set)   # file events the server instruments
    commit_stmt: tuple | None = None                 # (count, ps)
    transactions: int | None = None
    statements: int | None = None                    # all statement events (COUNT_STAR)


@dataclass
class PfsDelta:
    """performance_schema over the interval; None where the server does not say."""

    data_file_syncs: int | None = None       # an upper bound: opens and closes count too
    data_file_sync_us: float | None = None
    redo_syncs: int | None = None            # MySQL's own count of redo syncs
    redo_sync_us: float | None = None
    binlog_syncs: int | None = None
    binlog_sync_us: float | None = None
    transactions: int | None = None
    commit_statements: int | None = None
    commit_statement_us: float | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {k: (round(v, 2) if isinstance(v, float) else v)
                for k, v in self.__dict__.items()}


def enabled(session: Any) -> bool:
    try:
        return str(session.query("SELECT @@performance_schema")[0][0]) in ("1", "ON")
    except Exception:  # noqa: BLE001 - a server without the variable
        return False


def snapshot(session: Any) -> PfsSnapshot | None:
    """The cumulative figures now, or None when performance_schema is off or unreadable."""
    if not enabled(session):
        return None
    snap = PfsSnapshot()
    try:
        names = ", ".join(f"'{e}'" for e in FILE_EVENTS)
        for ev, cm, pm, cw in session.query(
                "SELECT EVENT_NAME, COUNT_MISC, SUM_TIMER_MISC, COUNT_WRITE FROM "
                f"performance_schema.file_summary_by_event_name WHERE EVENT_NAME IN ({names})"):
            snap.files[ev] = (int(cm), int(pm), int(cw))
        for (ev,) in session.query(
                "SELECT NAME FROM performance_schema.setup_instruments WHERE NAME IN "
                f"({names}) AND ENABLED = 'YES'"):
            snap.instrumented.add(ev)
    except Exception:  # noqa: BLE001 - no SELECT on performance_schema
        return None
    try:
        rows = session.query(
            "SELECT COUNT_STAR, SUM_TIMER_WAIT FROM "
            "performance_schema.events_statements_summary_global_by_event_name "
            "WHERE EVENT_NAME = %s", (COMMIT_STATEMENT,))
        if rows:
            snap.commit_stmt = (int(rows[0][0]), int(rows[0][1]))
        rows = session.query(
            "SELECT SUM(COUNT_STAR) FROM "
            "performance_schema.events_statements_summary_global_by_event_name")
        snap.statements = int(rows[0][0]) if rows and rows[0][0] is not None else None
    except Exception:  # noqa: BLE001
        pass
    try:
        rows = session.query(
            "SELECT SUM(COUNT_STAR) FROM "
            "performance_schema.events_transactions_summary_global_by_event_name")
        if rows and rows[0][0] is not None:
            snap.transactions = int(rows[0][0])
    except Exception:  # noqa: BLE001 - MariaDB before 10.5 has no transaction summary
        pass
    return snap


def _file_delta(a: PfsSnapshot, b: PfsSnapshot, event: str
                ) -> tuple[int | None, float | None]:
    if event not in a.files or event not in b.files or event not in b.instrumented:
        return None, None
    (c0, p0, _), (c1, p1, _) = a.files[event], b.files[event]
    n = c1 - c0
    if n < 0:
        return None, None
    return n, ((p1 - p0) / n / PS_PER_US if n else None)


def delta(a: PfsSnapshot | None, b: PfsSnapshot | None) -> PfsDelta | None:
    """What performance_schema saw between two snapshots (None if either is missing)."""
    if a is None or b is None:
        return None
    d = PfsDelta()
    d.data_file_syncs, d.data_file_sync_us = _file_delta(a, b, DATA_FILE)
    d.redo_syncs, d.redo_sync_us = _file_delta(a, b, LOG_FILE)
    d.binlog_syncs, d.binlog_sync_us = _file_delta(a, b, BINLOG)
    if d.data_file_sync_us is not None:
        d.notes.append("performance_schema counts opens and closes with the syncs "
                       "(COUNT_MISC): the data-file sync count is an upper bound and its "
                       "mean latency a rough one")
    if a.transactions is not None and b.transactions is not None:
        n = b.transactions - a.transactions
        d.transactions = n if n > 0 else None
    if a.commit_stmt and b.commit_stmt:
        n = b.commit_stmt[0] - a.commit_stmt[0]
        if n > 0:
            d.commit_statements = n
            d.commit_statement_us = (b.commit_stmt[1] - a.commit_stmt[1]) / n / PS_PER_US
    return d
