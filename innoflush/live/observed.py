"""What an interval's SHOW GLOBAL STATUS deltas mean: commits, syncs, writes and groups
per second, per commit and per sync (``Observed``), for the flavor that produced them.

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

from dataclasses import asdict, dataclass, field, fields

from .sampling import WRITE_STATEMENTS, Interval


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
    commits, source, caveat = estimate_commits(d, product, log_bin)
    fsyncs = d.get("Innodb_data_fsyncs")
    writes = d.get("Innodb_data_writes")
    log_writes = d.get("Innodb_log_writes")
    mariadb = product == "mariadb"
    redo_syncs: int | None
    if redo_syncs_known is not None:
        redo_syncs, redo_src = redo_syncs_known
    else:
        redo_syncs, redo_src = _redo_syncs(d, s, trx_commit, flush_log_at_timeout,
                                           redo_write_through)
    other = None
    if fsyncs is not None and redo_syncs is not None:
        other = max(0, fsyncs - redo_syncs)
    pages_written = d.get("Innodb_pages_written")
    pages_flushed = d.get("Innodb_buffer_pool_pages_flushed")
    page_writes = pages_written if pages_written is not None else pages_flushed
    pages_dirtied = _pages_dirtied(iv, pages_flushed, page_writes)
    running = iv.polls.get("Threads_running") or []
    # every poll is itself a running thread (ours): subtract it
    running_avg = (round(max(0.0, sum(running) / len(running) - 1.0), 3) if running else None)
    pend = iv.polls.get("Innodb_data_pending_fsyncs") or []
    binlog_groups = d.get("Binlog_group_commits")
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
        notes=_notes(caveat, commits, mariadb))


def _redo_syncs(d: dict, s: float, trx_commit: int, flush_log_at_timeout: float,
                redo_write_through: bool) -> tuple[int | None, str]:
    """(the redo log's syncs in the interval, where the figure comes from): the server's
    counter, else estimated from its redo writes and settings, else unknown."""
    if "Innodb_os_log_fsyncs" in d:
        return d["Innodb_os_log_fsyncs"], "Innodb_os_log_fsyncs"
    log_writes = d.get("Innodb_log_writes")
    if log_writes is None:
        return None, "unknown"
    # MariaDB >= 10.8 has no redo-sync counter. With trx_commit=1 (or 3) every redo
    # write is followed by a sync (unless the log is write-through); otherwise the
    # log is synced about once per innodb_flush_log_at_timeout.
    if redo_write_through:
        return 0, "0: redo log is write-through (no fsync)"
    if trx_commit in (1, 3):
        return log_writes, ("estimated: Innodb_log_writes (one sync per redo write at "
                            "trx_commit=1)")
    # Synced about once per innodb_flush_log_at_timeout — and before every
    # page-flush batch, whose pages' redo must be durable first (the write-ahead
    # rule), which under flushing makes them many times more (strace's count:
    # docs/commands/advise.md, 'The workload').
    timer = int(round(s / max(flush_log_at_timeout, 1e-3)))
    batches = d.get("Innodb_dblwr_writes", 0)
    fsyncs = d.get("Innodb_data_fsyncs")
    return (min(fsyncs if fsyncs is not None else log_writes, log_writes, timer + batches),
            f"estimated: one per innodb_flush_log_at_timeout ({flush_log_at_timeout:g} s) "
            "and one per doublewrite batch (the write-ahead rule); performance_schema "
            "would count them")


def _pages_dirtied(iv: Interval, pages_flushed: int | None,
                   page_writes: int | None) -> int | None:
    """Pages dirtied in the interval = pages flushed + growth of the dirty-page count: a
    short interval may see the commits dirty pages that the page cleaner writes later."""
    dirty_growth = iv.gauge_deltas.get("Innodb_buffer_pool_pages_dirty")
    if dirty_growth is None or (pages_flushed is None and page_writes is None):
        return None
    return max(0, (pages_flushed if pages_flushed is not None else page_writes)
               + dirty_growth)


def _notes(caveat: str | None, commits: int, mariadb: bool) -> list[str]:
    """What the figures mean that the numbers do not say: the commit count's caveat, and
    what the flavor's data counters include."""
    notes: list[str] = []
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
    return notes
