"""Whether a replica is crash-safe: the evidence the advisor needs before it lets a replica
relax the commit syncs under ``--durability strict``.

A replica may run with innodb_flush_log_at_trx_commit=2 / sync_binlog=0 only because the
transactions a crash loses can be fetched again from its source. That holds only when all
of these are read from the server (nothing is assumed):

- ``relay_log_recovery=ON``: after a crash the replica drops its relay log and fetches again
  from the applier's position, rather than replaying a relay log that may be torn or ahead
  of what InnoDB kept;
- GTID positioning on every connection (MySQL: ``gtid_mode=ON`` and ``Auto_Position=1``;
  MariaDB: ``Using_Gtid`` is ``Slave_Pos`` or ``Current_Pos``, the position kept in
  ``mysql.gtid_slave_pos`` with each transaction): the replica re-asks the source for
  what it lacks, whatever its files say;
- MySQL before 8.0.23: ``relay_log_info_repository=TABLE`` (the applier position committed
  with each transaction; from 8.0.23 the option is deprecated and TABLE is the only
  supported repository);
- both replication threads (IO and SQL) running on every connection: a stopped replica is
  not catching up from anywhere, and may be in use as something else;
- ``read_only`` (or ``super_read_only``) ON: otherwise clients may write to it directly, and
  what they commit there exists nowhere else. (Direct writes seen during the interval are
  checked by the rules, which see the counters.)

Sources: MySQL 8.0 Reference Manual, "Handling an Unexpected Halt of a Replica"
(https://dev.mysql.com/doc/refman/8.0/en/replication-solutions-unexpected-replica-halt.html)
and "Startup Options for Replication Channels" (relay_log_info_repository deprecated from
8.0.23, https://dev.mysql.com/doc/refman/8.0/en/channels-startup-options.html); MariaDB
documentation, "mysql.gtid_slave_pos Table" (the replica's GTID position, updated as part
of each transaction it commits, https://mariadb.com/kb/en/mysqlgtid_slave_pos-table).
"""

from __future__ import annotations

from dataclasses import dataclass, field

MYSQL_CRASH_SAFE = ("MySQL 8.0 Reference Manual, Handling an Unexpected Halt of a Replica "
                    "(https://dev.mysql.com/doc/refman/8.0/en/"
                    "replication-solutions-unexpected-replica-halt.html)")
MARIADB_GTID = ("MariaDB documentation, mysql.gtid_slave_pos Table "
                "(https://mariadb.com/kb/en/mysqlgtid_slave_pos-table)")


def _on(value: object) -> bool | None:
    v = str(value).strip().upper() if value is not None else None
    if v in ("ON", "1", "YES", "TRUE"):
        return True
    if v in ("OFF", "0", "NO", "FALSE", ""):
        return False
    return None


@dataclass
class ReplicationChannel:
    """One replication connection (MySQL channel, MariaDB named connection)."""

    name: str                  # '' for the default one
    source: str                # host:port of its source
    io_running: str            # Yes | No | Connecting | ?
    sql_running: str
    positioning: str           # auto-position | Slave_Pos | Current_Pos | file position | ?
    gtid: bool | None          # GTID positioning in use (None: not shown)

    @property
    def label(self) -> str:
        return f"connection '{self.name}'" if self.name else "the default connection"

    @property
    def running(self) -> bool:
        return self.io_running == "Yes" and self.sql_running == "Yes"


@dataclass
class ReplicaSafety:
    """What was read about the replica's crash safety; ``missing`` empty = crash-safe."""

    relay_log_recovery: bool | None
    gtid_mode: str | None                     # MySQL's gtid_mode; MariaDB: None
    relay_log_info_repository: str | None     # as read; None where the server has none
    read_only: bool
    channels: list[ReplicationChannel] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)   # read, and as needed
    missing: list[str] = field(default_factory=list)    # absent or against

    @property
    def crash_safe(self) -> bool:
        return not self.missing

    @property
    def threads_running(self) -> bool:
        return bool(self.channels) and all(c.running for c in self.channels)

    def to_dict(self) -> dict:
        return {"crash_safe": self.crash_safe, "relay_log_recovery": self.relay_log_recovery,
                "gtid_mode": self.gtid_mode,
                "relay_log_info_repository": self.relay_log_info_repository,
                "read_only": self.read_only, "threads_running": self.threads_running,
                "channels": [{"name": c.name, "source": c.source,
                              "io_running": c.io_running, "sql_running": c.sql_running,
                              "positioning": c.positioning, "gtid": c.gtid}
                             for c in self.channels],
                "evidence": list(self.evidence), "missing": list(self.missing)}


def _first(row: dict, *names: str, default: str = "?") -> str:
    for n in names:
        if n in row and row[n] is not None:
            return str(row[n])
    return default


def channel_from_row(row: dict, mariadb: bool) -> ReplicationChannel:
    """A channel from one row of SHOW ALL SLAVES STATUS / SHOW REPLICA STATUS / SHOW SLAVE
    STATUS (any server's column names)."""
    name = _first(row, "Connection_name", "Channel_Name", "Channel_name", default="")
    host = _first(row, "Source_Host", "Master_Host")
    port = _first(row, "Source_Port", "Master_Port", default="")
    source = f"{host}:{port}" if port else host
    io = _first(row, "Replica_IO_Running", "Slave_IO_Running")
    sql = _first(row, "Replica_SQL_Running", "Slave_SQL_Running")
    if mariadb or "Using_Gtid" in row:
        using = _first(row, "Using_Gtid", default="?")
        gtid = None if using == "?" else using in ("Slave_Pos", "Current_Pos")
        positioning = using if gtid else ("file position" if using == "No" else "?")
    else:
        auto = _first(row, "Auto_Position", default="?")
        gtid = None if auto == "?" else auto.strip() == "1"
        positioning = ("auto-position" if gtid else
                       "file position" if gtid is False else "?")
    return ReplicationChannel(name, source, io, sql, positioning, gtid)


def replica_safety(product: str, version: tuple[int, int, int], variables: dict,
                   rows: list[dict]) -> ReplicaSafety:
    """The crash-safety evidence of a replica (rows: its replication status rows)."""
    v = variables
    mariadb = product == "mariadb"
    rlr = _on(v.get("relay_log_recovery")) if "relay_log_recovery" in v else None
    gtid_mode = None if mariadb else (str(v["gtid_mode"]) if "gtid_mode" in v else None)
    repo = v.get("relay_log_info_repository")
    read_only = bool(_on(v.get("read_only")) or _on(v.get("super_read_only")))
    channels = [channel_from_row(r, mariadb) for r in rows]
    s = ReplicaSafety(rlr, gtid_mode, str(repo) if repo is not None else None, read_only,
                      channels)
    if rlr:
        s.evidence.append("relay_log_recovery=ON")
    elif rlr is False:
        s.missing.append("relay_log_recovery=OFF: after a crash the replica replays its "
                         "relay log as it finds it instead of fetching again from the "
                         "applier's position")
    else:
        s.missing.append("relay_log_recovery not readable")
    if not mariadb:
        if gtid_mode is None:
            s.missing.append("gtid_mode not readable")
        elif gtid_mode.upper() != "ON":
            s.missing.append(f"gtid_mode={gtid_mode}: no GTID auto-positioning")
        else:
            s.evidence.append("gtid_mode=ON")
        if repo is not None:
            if str(repo).upper() == "TABLE":
                s.evidence.append("relay_log_info_repository=TABLE")
            else:
                s.missing.append(f"relay_log_info_repository={repo}: the applier position "
                                 "is not committed with the transactions (TABLE needed)")
        elif version < (8, 0, 23):
            s.missing.append("relay_log_info_repository not readable (needed before MySQL "
                             "8.0.23)")
        else:
            s.evidence.append("applier metadata in InnoDB tables (MySQL 8.0.23+)")
    if not channels:
        s.missing.append("no replication connection in the replica status")
    for c in channels:
        if c.gtid:
            s.evidence.append(f"{c.label}: GTID positioning ({c.positioning})")
        elif c.gtid is False:
            what = ("MASTER_USE_GTID=slave_pos" if mariadb else
                    "SOURCE_AUTO_POSITION=1")
            s.missing.append(f"{c.label}: file-position replication, no GTID positioning "
                             f"({what} would give it)")
        else:
            s.missing.append(f"{c.label}: GTID positioning not shown by the replica status")
        if c.running:
            s.evidence.append(f"{c.label}: IO and SQL threads running")
        else:
            s.missing.append(f"{c.label}: replication threads not both running (IO "
                             f"{c.io_running}, SQL {c.sql_running})")
    if read_only:
        s.evidence.append("read_only=ON")
    else:
        s.missing.append("read_only=OFF: clients may write to it directly, and what they "
                         "commit there exists on no source")
    return s
