"""Server flavors: where MySQL 5.7, MySQL 8.0/8.4 and MariaDB differ in their I/O.

A flavor is data plus a few small functions, read by one model. Sources (the server
source files named; docs/model.md gives the references in full):
- MySQL 8.0.20+ (buf0dblwr.cc): doublewrite files, segments of innodb_doublewrite_pages,
  fsynced only for fsync/O_DSYNC; every tablespace written is fsynced when a segment's
  pages complete (fil_flush_file_spaces), except under O_DIRECT_NO_FSYNC.
- MySQL 5.7: one doublewrite area in ibdata1 (~120 pages a batch, two blocks of 64),
  fsynced under O_DIRECT too; data files fsynced at the end of each batch.
- MariaDB 10.6+: doublewrite in ibdata1, fsynced per batch (buf_dblwr_t::
  flush_buffered_writes), then every data file the batch wrote, neither under
  O_DIRECT_NO_FSYNC nor write-through (and the data files again at checkpoint); redo
  opened O_DIRECT; fdatasync wherever possible; Innodb_data_writes excludes redo (as a
  10.11.19 server counts them: docs/model.md, 'Counters') but counts one write per
  doublewrite batch; a page re-initialised since its last write bypasses the
  doublewrite buffer (Workload.dblwr_page_share).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import UsageError

PAGE_BYTES = 16384


@dataclass(frozen=True)
class IoPolicy:
    """How a flush method has InnoDB open and sync its files, as the model asks it."""

    method: str
    data_direct: bool          # data files opened O_DIRECT (their writes skip the cache)
    # tablespaces synced after a flush batch; else only on a size change
    # (O_DIRECT_NO_FSYNC: fil_flush_file_spaces skips them)
    data_file_syncs: bool
    # data files opened O_DSYNC: a write returns durable, no sync follows (MariaDB's
    # innodb_data_file_write_through, which its O_DSYNC sets)
    data_write_through: bool
    dblwr_sync: bool           # the doublewrite file synced after each batch's write
    redo_write_through: bool   # redo opened O_DSYNC: its writes need no sync

    @property
    def data_syncs(self) -> bool:
        """Whether a flush batch syncs the tablespaces it wrote."""
        return self.data_file_syncs and not self.data_write_through


@dataclass(frozen=True)
class Flavor:
    name: str
    title: str
    flush_methods: tuple[str, ...]
    # redo
    redo_direct: bool                 # redo file opened O_DIRECT
    # MySQL 8.0.22+: innodb_log_writer_threads (log_writer/log_flusher run on their own when
    # ON; OFF: the committing threads write and sync, log_self_write_up_to, as in 5.7).
    # Its default: "none" (no such threads: 5.7, MariaDB), "on" (8.0/8.4's manual), or
    # "cpus" (9.5+: with the binlog ON only at 32 CPUs or more, without it above 4)
    log_writer_threads_default: str
    default_use_fdatasync: bool       # fdatasync for InnoDB files where the server may
    has_use_fdatasync_variable: bool
    # doublewrite
    dblwr_segment_pages: int          # pages per doublewrite batch (one sync at most)
    dblwr_block_pages: int            # pages per doublewrite write call within it
    dblwr_parallel_segments: int      # doublewrite instances serving flush-list batches
    dblwr_sync_methods: tuple[str, ...]   # methods under which the dblwr file is synced
    # counters
    data_writes_include_redo: bool
    has_os_log_fsyncs: bool
    has_binlog_group_commit_counters: bool
    # binlog: MySQL's flush stage syncs redo for the group; MariaDB syncs at prepare
    redo_sync_in_binlog_flush_stage: bool
    checkpoint_interval_s: float = 1.0
    # MySQL 8.0+: a redo write that ends inside a log block is two calls, the complete
    # blocks and the incomplete one (redo.py: redo_write; so a 9.7.4 server counted its
    # Innodb_log_writes: docs/model.md, 'MySQL 9.7 LTS')
    redo_last_block_apart: bool = False
    # MariaDB maps O_DSYNC to innodb_data_file_write_through: no data-file syncs at all
    o_dsync_data_write_through: bool = False
    # MariaDB 10.6+: its page cleaner and flush-ahead requests (mariadb_page_cleaner.py:
    # buf0flu.cc buf_flush_page_cleaner, mtr0mtr.cc log_close), its checkpoint after
    # each pass, and its capacity points (log_t::set_capacity, log0log.cc)
    mariadb_page_cleaner: bool = False
    # syncs per tablespace extension: MariaDB syncs the file after setting its new size
    # and again after writing the new pages' headers (a 10.11 server's count:
    # docs/model.md, 'MariaDB 10.6-10.11')
    extension_syncs: int = 1
    # MariaDB 10.5+: a flush batch syncs the data files when a doublewrite batch completes
    # (buf_dblwr_t::write_completed) and its checkpoint syncs them again
    # (log_checkpoint: fil_flush_file_spaces): pages written straight to their files
    # (re-initialised ones) wait for either, so a pass that doublewrites nothing syncs its
    # files once, at its checkpoint. False: every segment syncs what it wrote.
    files_synced_at_checkpoint: bool = False
    # MariaDB 10.5+ writes a page re-initialised since its last write (one it created)
    # straight to its file, its redo able to rebuild it (buf_page_t::flush: REINIT): what
    # share of first writes is doublewritten follows from the pages it creates
    new_pages_skip_dblwr: bool = False

    def io_policy(self, method: str) -> IoPolicy:
        """What innodb_flush_method `method` means on this flavor: the one place the
        model reads a setting's name (fil0fil.cc's os_file_create, os0file.cc's SRV_*
        cases in MySQL; MariaDB 11.8 spells the same choices as the four
        innodb_*_buffering / *_write_through booleans and innodb_doublewrite=fast)."""
        return IoPolicy(
            method=method,
            data_direct=method in ("O_DIRECT", "O_DIRECT_NO_FSYNC"),
            data_file_syncs=method != "O_DIRECT_NO_FSYNC",
            data_write_through=method == "O_DSYNC" and self.o_dsync_data_write_through,
            dblwr_sync=method in self.dblwr_sync_methods,
            redo_write_through=method == "O_DSYNC")

    def redo_is_direct(self, trx_commit: int, log_file_buffering: bool | None) -> bool:
        """Whether redo writes bypass the page cache.

        MySQL never opens the redo O_DIRECT. MariaDB does, unless innodb_log_file_buffering
        is ON — which MariaDB switches on by itself with trx_commit=2 (MDEV-28766).
        """
        if not self.redo_direct:
            return False
        if log_file_buffering is not None:
            return not log_file_buffering
        return trx_commit != 2

    def log_writer_threads(self, configured: bool | None, cpus: int, log_bin: bool) -> bool:
        """Whether the log_writer/log_flusher threads do the redo I/O (else the committing
        threads do it themselves, one leader per group)."""
        rule = self.log_writer_threads_default
        if rule == "none":
            return False
        if configured is not None:
            return configured
        if rule == "cpus":   # the MySQL 9.5 manual, "What Is New": innodb_log_writer_threads
            return cpus >= 32 if log_bin else cpus > 4
        return True

    def use_fdatasync(self, configured: bool | None) -> bool:
        if configured is None or not self.has_use_fdatasync_variable:
            return self.default_use_fdatasync
        return configured


FLUSH_METHODS = ("fsync", "O_DSYNC", "O_DIRECT", "O_DIRECT_NO_FSYNC")

_MYSQL_80 = Flavor(
    name="mysql-8.0", title="MySQL 8.0.30+ (also 8.0.20-8.0.29 for page flushing)",
    flush_methods=FLUSH_METHODS, redo_direct=False, log_writer_threads_default="on",
    default_use_fdatasync=False, has_use_fdatasync_variable=True,
    dblwr_segment_pages=4, dblwr_block_pages=4, dblwr_parallel_segments=2,
    dblwr_sync_methods=("fsync", "O_DSYNC"),
    data_writes_include_redo=True, has_os_log_fsyncs=True,
    has_binlog_group_commit_counters=False, redo_sync_in_binlog_flush_stage=True,
    redo_last_block_apart=True)
_MARIADB_10_11 = Flavor(
    name="mariadb-10.11", title="MariaDB 10.6-10.11",
    flush_methods=FLUSH_METHODS, redo_direct=True, log_writer_threads_default="none",
    default_use_fdatasync=True, has_use_fdatasync_variable=False,
    dblwr_segment_pages=128, dblwr_block_pages=128, dblwr_parallel_segments=1,
    dblwr_sync_methods=("fsync", "O_DIRECT"),
    data_writes_include_redo=False, has_os_log_fsyncs=False,
    has_binlog_group_commit_counters=True, redo_sync_in_binlog_flush_stage=False,
    o_dsync_data_write_through=True, mariadb_page_cleaner=True, extension_syncs=2,
    files_synced_at_checkpoint=True, new_pages_skip_dblwr=True)

FLAVORS: dict[str, Flavor] = {
    "mysql-8.0": _MYSQL_80,
    # 8.0's I/O with 8.4's defaults: fdatasync, doublewrite segments of 128 pages
    "mysql-8.4": replace(_MYSQL_80, name="mysql-8.4", title="MySQL 8.4 LTS",
                         default_use_fdatasync=True, dblwr_segment_pages=128,
                         dblwr_block_pages=128),
    "mysql-5.7": Flavor(
        name="mysql-5.7", title="MySQL 5.7.25+",
        flush_methods=FLUSH_METHODS, redo_direct=False, log_writer_threads_default="none",
        default_use_fdatasync=False, has_use_fdatasync_variable=False,
        dblwr_segment_pages=120, dblwr_block_pages=64, dblwr_parallel_segments=1,
        dblwr_sync_methods=("fsync", "O_DSYNC", "O_DIRECT"),
        data_writes_include_redo=True, has_os_log_fsyncs=True,
        has_binlog_group_commit_counters=False, redo_sync_in_binlog_flush_stage=True),
    # 8.4's I/O (read off 9.7.4: fdatasync ON, 2 doublewrite files of 128 pages, 100M redo
    # capacity in 32 files) with 9.5's rule for the log writer threads
    "mysql-9.7": replace(_MYSQL_80, name="mysql-9.7", title="MySQL 9.7 LTS",
                         default_use_fdatasync=True, dblwr_segment_pages=128,
                         dblwr_block_pages=128, log_writer_threads_default="cpus"),
    "mariadb-10.11": _MARIADB_10_11,
    # 11.x writes and syncs as 10.6-10.11 do
    "mariadb-11": replace(_MARIADB_10_11, name="mariadb-11",
                          title="MariaDB 11.x (O_DIRECT_NO_FSYNC = innodb_doublewrite=fast)"),
    # 11.8 LTS: the 10.11 I/O path, its flush method as four booleans
    # (innodb_{data,log}_file_{buffering,write_through}) and innodb_doublewrite=fast
    "mariadb-11.8": replace(_MARIADB_10_11, name="mariadb-11.8", title="MariaDB 11.8 LTS"),
}
ALIASES = {"mysql": "mysql-8.0", "mysql-8": "mysql-8.0", "mysql-9": "mysql-9.7",
           "mariadb": "mariadb-10.11", "mariadb-10.6": "mariadb-10.11",
           "mariadb-11.4": "mariadb-11"}


def get_flavor(name: str) -> Flavor:
    key = ALIASES.get(name.lower(), name.lower())
    try:
        return FLAVORS[key]
    except KeyError:
        raise UsageError(f"unknown flavor {name!r}; choose from "
                         f"{', '.join(FLAVORS)}") from None
