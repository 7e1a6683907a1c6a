"""How far InnoDB extends a growing tablespace at a time, read from the server's own list
of its tablespaces (information_schema, read-only).

An insert that finds no free extent left extends the file (fsp_try_extend_data_file) and
syncs it before it goes on: MariaDB twice (fil_space_extend_must_retry: os_file_flush,
then fil_space_t::flush_low), MySQL 8.0 once (Fil_shard::space_extend: space_flush). How
often that happens is the table's growth over the step, and the step depends on the
file's size (fsp_get_pages_to_extend_ibd): one extent (1 MiB of 16 KiB pages) while the
file is under 32 extents, four extents above. A file-per-table server's largest
tablespace stands for the ones its inserts grow; without file-per-table the system
tablespace grows by innodb_autoextend_increment.
"""

from __future__ import annotations

from typing import Any

from ..simulator.config import MiB

EXTENT_BYTES = 1 * MiB           # FSP_EXTENT_SIZE pages of 16 KiB
SMALL_FILE_BYTES = 32 * EXTENT_BYTES
FSP_FREE_ADD = 4

# where each server lists its tablespaces' sizes; the first that answers is used
_MYSQL8 = ("information_schema.INNODB_TABLESPACES",
           "SELECT MAX(FILE_SIZE) FROM information_schema.INNODB_TABLESPACES "
           "WHERE SPACE_TYPE = 'Single'")
_SYS = ("information_schema.INNODB_SYS_TABLESPACES",   # MariaDB, MySQL 5.7
        "SELECT MAX(FILE_SIZE) FROM information_schema.INNODB_SYS_TABLESPACES "
        "WHERE NAME LIKE '%/%'")


def extension_step(file_bytes: int) -> int:
    """fsp_get_pages_to_extend_ibd, in bytes, for 16 KiB pages."""
    return EXTENT_BYTES if file_bytes < SMALL_FILE_BYTES else FSP_FREE_ADD * EXTENT_BYTES


def extend_step(session: Any, variables: dict, product: str = "mysql"
                ) -> tuple[int | None, str, str]:
    """(bytes per extension or None, source, detail) for the server behind session;
    product: mysql, percona or mariadb (which list to ask first)."""
    if str(variables.get("innodb_file_per_table", "ON")).upper() in ("OFF", "0"):
        try:
            mib = int(float(variables.get("innodb_autoextend_increment", 64)))
        except (TypeError, ValueError):
            mib = 64
        return (mib * MiB, "estimated", f"innodb_file_per_table=OFF: the system tablespace "
                f"grows by innodb_autoextend_increment ({mib} MiB)")
    problems = []
    for where, sql in ((_SYS, _MYSQL8) if product == "mariadb" else (_MYSQL8, _SYS)):
        try:
            rows = session.query(sql)
        except Exception as e:  # noqa: BLE001 - absent here, or no PROCESS privilege
            problems.append(f"{where}: {str(e).splitlines()[0][:120]}")
            continue
        size = rows[0][0] if rows else None
        if size is None:
            problems.append(f"{where}: no file-per-table tablespace listed")
            continue
        step = extension_step(int(size))
        return (step, "measured", f"the largest file-per-table tablespace is "
                f"{int(size) / MiB:,.1f} MiB ({where}): extended "
                f"{step // MiB} MiB at a time (fsp_get_pages_to_extend_ibd)")
    return None, "unknown", "; ".join(problems) or "not read"
