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
