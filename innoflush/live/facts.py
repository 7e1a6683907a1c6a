"""What the server is: product, version, the simulator flavor, durability settings, role.

``facts_from_variables`` is pure (variables in, ``ServerFacts`` out) so the rules test on
captured variable sets; ``gather_facts`` reads them from a live server through the
read-only session.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, overload

from ..errors import InnoflushError
from ..measure.facts import mount_facts
from .replication import ReplicaSafety, replica_safety

if TYPE_CHECKING:
    from .connect import ReadOnlySession

# SHOW GLOBAL VARIABLES the advisor keeps (the rest are not read).
VARIABLES = (
    "version", "version_comment", "version_with_update", "innodb_version", "datadir",
    "innodb_data_home_dir",
    "innodb_log_group_home_dir", "innodb_doublewrite_dir",
    "innodb_flush_method", "innodb_data_file_buffering", "innodb_data_file_write_through",
    "innodb_log_file_buffering", "innodb_log_file_write_through",
    "innodb_flush_log_at_trx_commit", "innodb_flush_log_at_timeout", "log_bin", "sync_binlog",
    "binlog_format", "log_slave_updates", "log_replica_updates", "innodb_doublewrite",
    "innodb_doublewrite_pages", "innodb_doublewrite_batch_size", "innodb_use_fdatasync",
    "innodb_io_capacity", "innodb_io_capacity_max", "innodb_redo_log_capacity",
    "innodb_log_file_size", "innodb_log_files_in_group", "innodb_buffer_pool_size",
    "innodb_page_size", "innodb_max_dirty_pages_pct", "innodb_max_dirty_pages_pct_lwm",
    "innodb_adaptive_flushing_lwm", "innodb_use_atomic_writes", "innodb_dedicated_server",
    "binlog_group_commit_sync_delay", "read_only", "super_read_only", "wsrep_on",
    "wsrep_provider", "have_innodb", "default_storage_engine", "innodb_log_write_ahead_size",
    "hostname", "pid_file", "port", "server_uuid",   # which server (advise --check)
    # a replica's crash safety (live/replication.py)
    "relay_log_recovery", "gtid_mode", "enforce_gtid_consistency", "relay_log_info_repository",
    "gtid_slave_pos", "gtid_strict_mode",
)


class NoInnoDB(InnoflushError):
    """The server has no InnoDB: nothing to advise on (exit 1)."""


def _on(value: object) -> bool | None:
    if value is None:
        return None
    v = str(value).strip().upper()
    if v in ("ON", "1", "YES", "TRUE", "FORCE", "FORCE_PLUS_PERMANENT"):
        return True
    if v in ("OFF", "0", "NO", "FALSE", "", "DISABLED"):
        return False
    return None


@overload
def _int(value: object) -> int | None: ...
@overload
def _int(value: object, default: int) -> int: ...
def _int(value: object, default: int | None = None) -> int | None:
    try:
        return int(float(str(value).strip()))
    except (TypeError, ValueError):
        return default


@overload
def _float(value: object) -> float | None: ...
@overload
def _float(value: object, default: float) -> float: ...
def _float(value: object, default: float | None = None) -> float | None:
    try:
        return float(str(value).strip())
    except (TypeError, ValueError):
        return default


def parse_version(text: str) -> tuple[int, int, int]:
    m = re.search(r"(\d+)\.(\d+)\.(\d+)", text or "")
    if not m:
        m2 = re.search(r"(\d+)\.(\d+)", text or "")
        if not m2:
            return (0, 0, 0)
        return (int(m2.group(1)), int(m2.group(2)), 0)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)))


def detect_product(version: str, comment: str) -> tuple[str, tuple[int, int, int]]:
    """('mysql'|'percona'|'mariadb', (major, minor, patch)) from VERSION() and the comment."""
    v = version or ""
    if v.startswith("5.5.5-") and "mariadb" in v.lower():
        v = v[len("5.5.5-"):]  # the handshake's compatibility prefix
    if "mariadb" in v.lower() or "mariadb" in (comment or "").lower():
        return "mariadb", parse_version(v)
    if "percona" in (comment or "").lower():
        return "percona", parse_version(v)
    return "mysql", parse_version(v)


def sim_flavor_for(product: str, vt: tuple[int, int, int]) -> tuple[str, list[str]]:
    """The simulator flavor (innoflush.simulator.FLAVORS key) and notes on the fit."""
    notes: list[str] = []
    if product == "mariadb":
        if vt >= (11, 8, 0):
            if vt >= (11, 9, 0):
                notes.append(f"MariaDB {'.'.join(map(str, vt))} is newer than any modelled "
                             "version: the MariaDB 11.8 LTS model is used")
            return "mariadb-11.8", notes
        if vt >= (11, 0, 0):
            return "mariadb-11", notes
        if vt < (10, 6, 0):
            notes.append(f"MariaDB {'.'.join(map(str, vt))} is older than the 10.6-10.11 I/O "
                         "model used; figures are approximate")
        return "mariadb-10.11", notes
    name = "Percona Server" if product == "percona" else "MySQL"
    if vt < (5, 7, 0):
        notes.append(f"{name} {'.'.join(map(str, vt))} is older than any modelled version "
                     "(5.7 used)")
        return "mysql-5.7", notes
    if vt < (8, 0, 0):
        return "mysql-5.7", notes
    if vt < (8, 1, 0):
        if vt < (8, 0, 20):
            notes.append("before 8.0.20 the doublewrite buffer lived in ibdata1: the 8.0 "
                         "model's doublewrite figures are approximate")
        return "mysql-8.0", notes
    if vt < (9, 0, 0):
        return "mysql-8.4", notes   # 8.1-8.4 share 8.4's I/O path and defaults
    if vt >= (9, 8, 0):
        # the Innovation releases after 9.7 are numbered 26.x (26.7: 2026-07)
        notes.append(f"{name} {'.'.join(map(str, vt))} is newer than any modelled version: "
                     "the MySQL 9.7 LTS model is used")
    return "mysql-9.7", notes   # 9.0-9.7: 8.4's I/O path, 9.5's log writer threads rule


@dataclass
class ServerFacts:
    product: str                      # mysql | percona | mariadb
    version: str
    version_comment: str
    version_tuple: tuple[int, int, int]
    sim_flavor: str
    flush_method: str                 # effective, as the simulator names it
    flush_method_source: str          # which variable(s) it was read from
    trx_commit: int
    flush_log_at_timeout: float
    log_bin: bool
    sync_binlog: int
    doublewrite: str                  # the variable's value: ON, OFF, fast, DETECT_ONLY, ...
    use_fdatasync: bool | None        # None: the server has no such variable
    io_capacity: int | None
    io_capacity_max: int | None
    redo_capacity_bytes: int | None
    buffer_pool_bytes: int | None
    page_size: int
    datadir: str
    doublewrite_dir: str | None
    read_only: bool
    super_read_only: bool
    galera: bool
    role: str                         # primary | replica | galera | read-only
    role_detail: str
    replica_status_readable: bool | None   # None: not asked
    variables: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # MariaDB's information_schema.SYSTEM_VARIABLES: name -> {enum_values, read_only}
    sysvar_meta: dict = field(default_factory=dict)
    # a replica's crash-safety evidence (None: not a replica)
    replication: ReplicaSafety | None = None

    @property
    def title(self) -> str:
        name = {"mysql": "MySQL", "percona": "Percona Server",
                "mariadb": "MariaDB"}[self.product]
        return f"{name} {'.'.join(map(str, self.version_tuple))}"

    @property
    def version_with_update(self) -> str | None:
        """MySQL 9.7+'s four-part version (9.7.4.0-2: MAJOR.MINOR.PATCH.UPDATE, then the
        build suffix), where the server has the variable; None elsewhere."""
        return self.variables.get("version_with_update") or None

    @property
    def is_mariadb(self) -> bool:
        return self.product == "mariadb"

    @property
    def mariadb11_io_variables(self) -> bool:
        """MariaDB 11.0+: innodb_flush_method deprecated for innodb_data_file_* etc."""
        return self.is_mariadb and "innodb_data_file_buffering" in self.variables

    @property
    def doublewrite_fast_supported(self) -> bool:
        """innodb_doublewrite=fast (MDEV-33545: 11.0.6, 11.1.5, 11.2.4, 11.4.2 and later).

        The server's own list of values (information_schema.SYSTEM_VARIABLES) wins over
        the version rule when it was readable."""
        if not self.is_mariadb:
            return False
        meta = self.sysvar_meta.get("innodb_doublewrite")
        if meta and meta.get("enum_values"):
            return "fast" in [x.lower() for x in meta["enum_values"]]
        v = self.version_tuple
        return (v >= (11, 4, 2) or (11, 2, 4) <= v < (11, 3, 0)
                or (11, 1, 5) <= v < (11, 2, 0) or (11, 0, 6) <= v < (11, 1, 0))

    def dynamic(self, name: str, default: bool) -> bool:
        """Whether SET GLOBAL can change the variable (the server says, where readable)."""
        meta = self.sysvar_meta.get(name)
        if meta and meta.get("read_only") is not None:
            return not meta["read_only"]
        return default

    @property
    def doublewrite_protects(self) -> bool:
        return self.doublewrite.upper() in ("ON", "1", "DETECT_AND_RECOVER", "FAST")

    @property
    def replica_like(self) -> bool:
        return self.role in ("replica", "galera")

    @property
    def redo_write_through(self) -> bool:
        """The redo log is opened synchronous (O_DSYNC, or MariaDB 11's
        innodb_log_file_write_through): its writes need no separate sync."""
        return (self.flush_method == "O_DSYNC" or str(self.variables.get(
            "innodb_log_file_write_through", "")).upper() == "ON")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["replication"] = self.replication.to_dict() if self.replication else None
        d["version_tuple"] = list(self.version_tuple)
        d["title"] = self.title
        return d


def effective_flush_method(product: str, variables: dict) -> tuple[str, str]:
    """The flush method as the simulator names it, and where it was read from."""
    v = variables
    if product == "mariadb" and "innodb_data_file_buffering" in v:
        # MariaDB 11.0+ (MDEV-30136, MDEV-33545)
        dw = str(v.get("innodb_doublewrite", "ON")).strip().lower()
        if dw == "fast":
            return "O_DIRECT_NO_FSYNC", "innodb_doublewrite=fast"
        if _on(v.get("innodb_data_file_buffering")):
            return "fsync", "innodb_data_file_buffering=ON"
        if _on(v.get("innodb_data_file_write_through")):
            return "O_DSYNC", "innodb_data_file_write_through=ON"
        return "O_DIRECT", "innodb_data_file_buffering=OFF"
    raw = str(v.get("innodb_flush_method") or "").strip()
    if not raw:
        # MySQL 5.7 shows the default (fsync) as an empty value
        return "fsync", "innodb_flush_method (empty: the default, fsync)"
    return raw, "innodb_flush_method"


def facts_from_variables(variables: dict, replica_rows: list[dict] | None = None,
                         replica_status_readable: bool | None = None) -> ServerFacts:
    """ServerFacts from SHOW GLOBAL VARIABLES (name -> value; any case of names)."""
    v = {str(k).lower(): ("" if val is None else str(val)) for k, val in variables.items()}
    if "innodb_version" not in v and "innodb_flush_log_at_trx_commit" not in v:
        raise NoInnoDB("the server has no InnoDB (no innodb_* variables): innoflush advises "
                       "on InnoDB durability only")
    if str(v.get("have_innodb", "YES")).upper() in ("NO", "DISABLED"):
        raise NoInnoDB("InnoDB is disabled on this server (have_innodb="
                       f"{v['have_innodb']}): nothing to advise on")
    product, vt = detect_product(v.get("version", ""), v.get("version_comment", ""))
    flavor, notes = sim_flavor_for(product, vt)
    method, method_src = effective_flush_method(product, v)
    trx_commit = _int(v.get("innodb_flush_log_at_trx_commit"), 1)
    log_bin = bool(_on(v.get("log_bin")))
    redo = _int(v.get("innodb_redo_log_capacity"))
    if not redo:
        size = _int(v.get("innodb_log_file_size"))
        files = _int(v.get("innodb_log_files_in_group"), 1) or 1
        redo = size * files if size else None
    use_fdatasync = _on(v["innodb_use_fdatasync"]) if "innodb_use_fdatasync" in v else None
    galera = bool(_on(v.get("wsrep_on")))
    read_only = bool(_on(v.get("read_only")))
    super_ro = bool(_on(v.get("super_read_only")))
    rows = replica_rows or []
    replication = None
    if galera:
        role, detail = "galera", "Galera cluster node (wsrep_on=ON)"
    elif rows:
        replication = replica_safety(product, vt, v, rows)
        role = "replica"
        detail = "replica of " + "; ".join(
            f"{c.source}{' (' + repr(c.name) + ')' if c.name else ''} "
            f"(IO {c.io_running}, SQL {c.sql_running})" for c in replication.channels)
        if len(rows) > 1:
            detail += f"; {len(rows)} replication connections"
    elif read_only or super_ro:
        role = "read-only"
        detail = "read_only=ON" + (", super_read_only=ON" if super_ro else "")
        if replica_status_readable is False:
            detail += " (replica status not readable: a replica?)"
    else:
        role, detail = "primary", "no replication source configured"
        if replica_status_readable is False:
            role = "primary"
            detail = ("replica status not readable (needs REPLICATION CLIENT / SLAVE "
                      "MONITOR): assumed not a replica")
    if method in ("littlesync", "nosync"):
        notes.append(f"innodb_flush_method={method} is for testing only")
    return ServerFacts(
        product=product, version=v.get("version", ""), version_comment=v.get(
            "version_comment", ""), version_tuple=vt, sim_flavor=flavor,
        flush_method=method, flush_method_source=method_src, trx_commit=trx_commit,
        flush_log_at_timeout=_float(v.get("innodb_flush_log_at_timeout"), 1.0) or 1.0,
        log_bin=log_bin, sync_binlog=_int(v.get("sync_binlog"), 0),
        doublewrite=str(v.get("innodb_doublewrite", "ON")).strip() or "ON",
        use_fdatasync=use_fdatasync,
        io_capacity=_int(v.get("innodb_io_capacity")),
        io_capacity_max=_int(v.get("innodb_io_capacity_max")),
        redo_capacity_bytes=redo,
        buffer_pool_bytes=_int(v.get("innodb_buffer_pool_size")),
        page_size=_int(v.get("innodb_page_size"), 16384) or 16384,
        datadir=v.get("datadir", ""),
        doublewrite_dir=(v.get("innodb_doublewrite_dir") or None),
        read_only=read_only, super_read_only=super_ro, galera=galera, role=role,
        role_detail=detail, replica_status_readable=replica_status_readable,
        variables={k: v[k] for k in VARIABLES if k in v},
        notes=notes, replication=replication)


# ---- reading a live server ------------------------------------------------------------

_ER_SPECIFIC_ACCESS_DENIED = 1227
_ER_TABLEACCESS_DENIED = 1142
_ER_ACCESS_DENIED_NO_PASSWORD = 1698
_ER_PARSE = 1064


def _mysql_error_code(exc: Exception) -> int | None:
    if exc.args and isinstance(exc.args[0], int):
        return exc.args[0]
    return None


def read_replica_status(session: ReadOnlySession, mariadb: bool = False
                        ) -> tuple[list[dict], bool]:
    """Rows of the replica status, one per replication connection, and whether it was
    readable. MariaDB: SHOW ALL SLAVES STATUS (its named connections; SHOW SLAVE STATUS
    shows only the default one). MySQL: SHOW REPLICA STATUS (a row per channel), SHOW
    SLAVE STATUS on servers older than 8.0.22."""
    import pymysql

    order = (("SHOW ALL SLAVES STATUS", "SHOW SLAVE STATUS") if mariadb
             else ("SHOW REPLICA STATUS", "SHOW SLAVE STATUS"))
    for sql in order:
        try:
            return session.query_dicts(sql), True
        except pymysql.err.ProgrammingError as exc:
            if _mysql_error_code(exc) == _ER_PARSE:
                continue  # older server: no REPLICA synonym
            if _mysql_error_code(exc) in (_ER_SPECIFIC_ACCESS_DENIED, _ER_TABLEACCESS_DENIED):
                return [], False
            raise
        except pymysql.err.OperationalError as exc:
            if _mysql_error_code(exc) in (_ER_SPECIFIC_ACCESS_DENIED, _ER_TABLEACCESS_DENIED):
                return [], False
            raise
    return [], False


def read_variables(session: ReadOnlySession) -> dict[str, Any]:
    rows = session.query("SHOW GLOBAL VARIABLES")
    out = {str(k).lower(): v for k, v in rows}
    got = session.query("SELECT VERSION(), @@version_comment")
    if got:
        out["version"], out["version_comment"] = got[0][0], got[0][1]
    return out


def read_sysvar_meta(session: ReadOnlySession,
                     names: Sequence[str] = ("innodb_doublewrite", "innodb_flush_method",
                                             "innodb_data_file_buffering",
                                             "innodb_data_file_write_through",
                                             "innodb_log_file_buffering",
                                             "innodb_log_file_write_through",
                                             "innodb_flush_log_at_trx_commit", "sync_binlog")
                     ) -> dict[str, dict]:
    """MariaDB: enum values and whether each variable is dynamic; {} where not readable."""
    import pymysql

    marks = ", ".join(["%s"] * len(names))
    try:
        rows = session.query(
            "SELECT VARIABLE_NAME, ENUM_VALUE_LIST, READ_ONLY FROM "
            f"information_schema.SYSTEM_VARIABLES WHERE VARIABLE_NAME IN ({marks})",
            [n.upper() for n in names])
    except pymysql.err.MySQLError:
        return {}
    out = {}
    for name, enum_list, read_only in rows:
        out[str(name).lower()] = {
            "enum_values": [x for x in str(enum_list).split(",") if x] if enum_list else [],
            "read_only": str(read_only).upper() == "YES" if read_only is not None else None}
    return out


def gather_facts(session: ReadOnlySession) -> ServerFacts:
    variables = read_variables(session)
    mariadb = detect_product(str(variables.get("version", "")),
                             str(variables.get("version_comment", "")))[0] == "mariadb"
    rows, readable = read_replica_status(session, mariadb)
    facts = facts_from_variables(variables, rows, readable)
    if facts.is_mariadb:
        facts.sysvar_meta = read_sysvar_meta(session)
    if readable is False:
        facts.notes.append("SHOW REPLICA STATUS needs REPLICATION CLIENT (MySQL) or SLAVE "
                           "MONITOR (MariaDB); without it the role comes from read_only only")
    return facts


# ---- the datadir's filesystem, when the server runs on this host -------------------------

def filesystem_of(path: str, mountinfo: str = "/proc/self/mountinfo") -> str | None:
    """The filesystem type of the mount holding path (Linux), or None when unknown."""
    try:
        real = os.path.realpath(path)
        with open(mountinfo, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    return mount_facts(real, text)["fs_type"]


def local_datadir(facts: ServerFacts, is_local_connection: bool) -> str | None:
    """The datadir path if the server evidently runs on this host (its files are here)."""
    if not is_local_connection or not facts.datadir:
        return None
    host = facts.variables.get("hostname")
    if host and host != socket.gethostname():
        return None  # e.g. a container behind a local port: its datadir is not ours
    d = facts.datadir
    for marker in ("ibdata1", "mysql", "ib_logfile0", "#innodb_redo", "undo_001"):
        if os.path.exists(os.path.join(d, marker)):
            return d
    return None


def same_filesystem(a: str, b: str) -> bool | None:
    try:
        return os.stat(a).st_dev == os.stat(b).st_dev
    except OSError:
        return None
