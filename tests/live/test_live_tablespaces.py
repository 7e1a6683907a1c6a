"""The extension step read from a real MariaDB's own list of its tablespaces."""

from __future__ import annotations

from innoflush.live.connect import ReadOnlySession
from innoflush.live.tablespaces import extend_step


def _session(server, user="root", password=""):
    return ReadOnlySession(server.connect(user, password))


def test_the_largest_file_per_table_tablespace_sets_the_step(mariadb_server):
    conn = mariadb_server.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS growth")
        cur.execute("CREATE TABLE IF NOT EXISTS growth.t (id INT PRIMARY KEY, "
                    "pad CHAR(200)) ENGINE=InnoDB")
        cur.execute("SELECT MAX(FILE_SIZE) FROM information_schema.INNODB_SYS_TABLESPACES "
                    "WHERE NAME LIKE '%/%'")
        (largest,) = cur.fetchone()
    conn.close()
    with _session(mariadb_server) as s:
        step, source, detail = extend_step(s, {"innodb_file_per_table": "ON"}, "mariadb")
        assert s.statements and all(q.startswith("SELECT") for q in s.statements)
        assert len(s.statements) == 1   # MariaDB's own list asked first
    assert source == "measured" and "INNODB_SYS_TABLESPACES" in detail
    # the suite's tables are small: one extent at a time, as fsp_get_pages_to_extend_ibd
    assert largest < 32 * 1024 * 1024
    assert step == 1024 * 1024


def test_without_process_privilege_the_step_is_unknown_and_says_why(mariadb_server,
                                                                    server_accounts):
    user, pw = server_accounts["usage"]
    with _session(mariadb_server, user, pw) as s:
        step, source, detail = extend_step(s, {"innodb_file_per_table": "ON"}, "mariadb")
    assert step is None and source == "unknown"
    assert "INNODB_SYS_TABLESPACES" in detail


def test_the_tables_a_window_changes_are_counted_from_innodbs_own_counters(mariadb_server):
    from innoflush.live.tablespaces import modified_counters, tablespaces_written
    conn = mariadb_server.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS spread")
        for t in ("a", "b", "c"):
            # no automatic statistics recalculation: it would set the counter back to 0
            # mid-window (what effective_tables allows for, but not what this checks)
            cur.execute(f"CREATE TABLE IF NOT EXISTS spread.{t} (id INT AUTO_INCREMENT "
                        "PRIMARY KEY, pad CHAR(20)) ENGINE=InnoDB STATS_AUTO_RECALC=0")
    conn.commit()
    with _session(mariadb_server) as s:
        before = modified_counters(s, "mariadb")
        with conn.cursor() as cur:
            for t in ("a", "b"):     # two tables written alike, the third not at all
                cur.executemany(f"INSERT INTO spread.{t} (pad) VALUES (%s)", [("x",)] * 50)
        conn.commit()
        after = modified_counters(s, "mariadb")
        assert all(q.startswith(("SELECT", "SHOW")) for q in s.statements)
    conn.close()
    assert before[0] is not None and "INNODB_SYS_TABLESTATS" in after[1]
    n, source, detail = tablespaces_written(before, after, {"innodb_undo_tablespaces": "0"},
                                            "mariadb")
    # the two tables, and the system tablespace that holds the undo logs
    assert (n, source) == (3.0, "measured") and "2 table(s)" in detail


def test_without_process_privilege_the_tables_written_are_unknown(mariadb_server,
                                                                 server_accounts):
    from innoflush.live.tablespaces import modified_counters
    user, pw = server_accounts["usage"]
    with _session(mariadb_server, user, pw) as s:
        counters, why = modified_counters(s, "mariadb")
    assert counters is None and "INNODB_SYS_TABLESTATS" in why


def test_a_server_with_many_tables_open_is_not_walked(mariadb_server):
    from innoflush.live.tablespaces import modified_counters
    with _session(mariadb_server) as s:
        counters, why = modified_counters(s, "mariadb", max_open=1)
        # only the status was asked: InnoDB's dictionary was not listed
        assert len(s.statements) == 1 and s.statements[0].startswith("SHOW")
    assert counters is None and "table definitions are open" in why
