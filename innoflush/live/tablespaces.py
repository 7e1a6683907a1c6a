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

import re
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


# Where each server shows how many rows each table in InnoDB's dictionary cache has
# changed (dict_table_t::stat_modified_counter) and its row count; the first that answers
# is used. row_update_statistics_if_needed sets the counter back to 0 when it passes a
# tenth of the rows (persistent statistics) or 16 + a sixteenth (transient ones) and
# queues a recalculation.
_MODIFIED_MYSQL8 = ("information_schema.INNODB_TABLESTATS",
                    "SELECT TABLE_ID, MODIFIED_COUNTER, NUM_ROWS FROM "
                    "information_schema.INNODB_TABLESTATS")
_MODIFIED_SYS = ("information_schema.INNODB_SYS_TABLESTATS",   # MariaDB, MySQL 5.7
                 "SELECT TABLE_ID, MODIFIED_COUNTER, NUM_ROWS FROM "
                 "information_schema.INNODB_SYS_TABLESTATS")
# the list is a walk of InnoDB's dictionary cache under its latch: on a server with more
# table definitions open than this, it is not read (the cost to the server comes first)
MAX_OPEN_TABLES = 10_000


def modified_counters(session: Any, product: str = "mysql", max_open: int = MAX_OPEN_TABLES
                      ) -> tuple[dict[int, tuple[int, int]] | None, str]:
    """({table id: (MODIFIED_COUNTER, NUM_ROWS)} of every table in InnoDB's dictionary
    cache, or None; where from or why not). Not read with more than max_open table
    definitions open."""
    try:
        rows = session.query("SHOW GLOBAL STATUS LIKE 'Open_table_definitions'")
        open_defs = int(rows[0][1]) if rows else 0
    except Exception:  # noqa: BLE001 - a status the server may not have
        open_defs = 0
    if open_defs > max_open:
        return None, (f"not read: {open_defs:,} table definitions are open, and listing "
                      "InnoDB's dictionary would hold its latch that long")
    problems = []
    for where, sql in ((_MODIFIED_SYS, _MODIFIED_MYSQL8) if product == "mariadb"
                       else (_MODIFIED_MYSQL8, _MODIFIED_SYS)):
        try:
            rows = session.query(sql)
        except Exception as e:  # noqa: BLE001 - absent here, or no PROCESS privilege
            problems.append(f"{where}: {str(e).splitlines()[0][:120]}")
            continue
        return {int(t): (int(c), int(n or 0)) for t, c, n in rows}, where
    return None, "; ".join(problems)


def reset_point(rows: int, persistent: bool = True) -> float:
    """The count a table's MODIFIED_COUNTER passes before it is set back to 0: a tenth
    of its rows with persistent statistics (innodb_stats_persistent, on by default),
    16 + a sixteenth with transient ones."""
    return rows / 10 if persistent else 16 + rows / 16


def effective_tables(before: dict[int, tuple[int, int]], after: dict[int, tuple[int, int]],
                     persistent: bool = True) -> tuple[float, int]:
    """(how many equally written tables the changes amount to, tables changed) between two
    reads of modified_counters. A counter that went down was set back to 0 meanwhile: it
    changed at least up to its reset point and then what it counts now. The effective
    count is the inverse Simpson index of the tables' shares, (Σc)² / Σc²: four tables
    written alike count 4, and a statistics table touched twice beside them adds next
    to nothing — the model spreads page writes uniformly over its files, and what
    matters is how often a flush batch finds a file written."""
    changes = []
    for table, (now, rows) in after.items():
        was = before.get(table, (0, rows))[0]
        c = now - was if now >= was else max(0.0, reset_point(rows, persistent) - was) + now
        if c > 0:
            changes.append(c)
    total = sum(changes)
    if not total:
        return 0.0, 0
    return total * total / sum(c * c for c in changes), len(changes)


def undo_files(variables: dict, product: str = "mysql") -> tuple[int, str]:
    """(files the undo logs are written to, how that was found): innodb_undo_tablespaces
    where the server has them, else the system tablespace (MariaDB, MySQL 5.7), or MySQL
    8.0's two undo tablespaces, made at initialisation whatever the variable said."""
    try:
        n = int(variables.get("innodb_undo_tablespaces", 0) or 0)
    except (TypeError, ValueError):
        n = 0
    major = re.match(r"(\d+)\.", str(variables.get("version", "")))
    if n > 0:
        return n, f"innodb_undo_tablespaces = {n}"
    if product != "mariadb" and major and int(major[1]) >= 8:
        return 2, "MySQL 8.0's two undo tablespaces"
    return 1, "the system tablespace (innodb_undo_tablespaces = 0)"


def tablespaces_written(before: tuple[dict[int, tuple[int, int]] | None, str],
                        after: tuple[dict[int, tuple[int, int]] | None, str], variables: dict,
                        product: str = "mysql") -> tuple[float | None, str, str]:
    """(tablespaces the window's page writes spread over, source, detail) from two reads
    of modified_counters around it: the tables it changed, counted as equally written
    ones (effective_tables), and the undo logs' files beside them."""
    (c0, where0), (c1, where1) = before, after
    if c0 is None or c1 is None:
        return None, "unknown", where0 if c0 is None else where1
    persistent = str(variables.get("innodb_stats_persistent", "ON")).upper() in ("ON", "1")
    eff, changed = effective_tables(c0, c1, persistent)
    if not changed:
        return None, "unknown", f"no table's row changes were counted in {where1}"
    undo, how = undo_files(variables, product)
    n = max(1, round(eff)) + undo
    return (float(n), "measured", f"{changed} table(s) changed rows in the window ({where1}: "
            f"MODIFIED_COUNTER), as many as {eff:.1f} written alike, and {undo} undo "
            f"file(s): {how}")
