"""Connection options, passwords that never leak, and the read-only guard."""

from __future__ import annotations

import pytest

from innoflush.errors import UsageError
from innoflush.live.client_options import (
    ConnectionOptions,
    read_option_file,
    resolve_options,
    scrub,
)
from innoflush.live.connect import ReadOnlySession, WriteRefused, check_read_only, connect_error

SECRET = "pa55-w0rd-n3ver-shown"


# ---- the read-only guard -------------------------------------------------------------

@pytest.mark.parametrize("sql", [
    "SELECT VERSION(), @@version_comment",
    "  select @@innodb_flush_method;",
    "SHOW GLOBAL STATUS",
    "SHOW GLOBAL VARIABLES",
    "SHOW REPLICA STATUS",
    "/* innoflush */ SHOW GLOBAL STATUS WHERE Variable_name IN ('Threads_running')",
    "SELECT VARIABLE_NAME FROM information_schema.SYSTEM_VARIABLES WHERE VARIABLE_NAME "
    "IN ('X; DROP TABLE t')",
])
def test_reads_allowed(sql):
    check_read_only(sql)


@pytest.mark.parametrize("sql", [
    "SET GLOBAL innodb_flush_log_at_trx_commit = 2",
    "set session sql_log_bin=0",
    "INSERT INTO t VALUES (1)",
    "UPDATE t SET a = 1",
    "DELETE FROM t",
    "CREATE TABLE t (a INT)",
    "FLUSH STATUS",
    "SHUTDOWN",
    "SELECT 1; SET GLOBAL sync_binlog = 0",
    "SELECT * FROM t INTO OUTFILE '/tmp/x'",
    "SELECT * FROM t FOR UPDATE",
    "SELECT * FROM t LOCK IN SHARE MODE",
    "SELECT GET_LOCK('x', 1)",
    "SELECT SLEEP(10)",
    "/*!50000 SET GLOBAL read_only = 1 */ SELECT 1",
    "-- comment\nINSERT INTO t VALUES (1)",
    "",
    "DO 1",
    "CALL p()",
])
def test_writes_refused(sql):
    with pytest.raises(WriteRefused):
        check_read_only(sql)


class ExplodingConn:
    """A connection that fails the test if a statement ever reaches it."""

    def cursor(self, *a):
        raise AssertionError("a refused statement reached the connection")

    def close(self):
        pass


def test_session_refuses_a_write_before_it_reaches_the_server():
    s = ReadOnlySession(ExplodingConn())
    with pytest.raises(WriteRefused):
        s.query("SET GLOBAL innodb_flush_method = 'O_DIRECT'")
    with pytest.raises(WriteRefused):
        s.query_dicts("UPDATE mysql.user SET x = 1")
    assert s.statements == []


# ---- option files and precedence ----------------------------------------------------

def test_option_file(tmp_path):
    p = tmp_path / "my.cnf"
    p.write_text("!includedir /etc/mysql/conf.d/\n[mysqld]\nport = 9999\n"
                 "[client]\nuser = app\npassword = \"" + SECRET + "\"\nhost=db.example\n"
                 "ssl-ca = /nonexistent\n# comment\nport=3307\n", encoding="utf-8")
    opts = read_option_file(p)
    assert opts == {"user": "app", "password": SECRET, "host": "db.example",
                    "ssl_ca": "/nonexistent", "port": "3307"}


def test_option_file_errors_never_quote_lines(tmp_path):
    p = tmp_path / "bad.cnf"
    p.write_text(f"password = {SECRET}\n[client]\n", encoding="utf-8")   # no section first
    with pytest.raises(UsageError) as info:
        read_option_file(p)
    assert SECRET not in str(info.value)
    with pytest.raises(UsageError, match="no such option file"):
        read_option_file(tmp_path / "missing.cnf")


def test_precedence(tmp_path):
    f = tmp_path / "client.cnf"
    f.write_text(f"[client]\nuser=fileuser\npassword={SECRET}\nport=3310\nhost=filehost\n")
    o = resolve_options(defaults_file=str(f), env={"MYSQL_PWD": "from-env"})
    assert (o.user, o.host, o.port, o.password) == ("fileuser", "filehost", 3310, SECRET)
    assert o.password_source.startswith("option file")
    o = resolve_options(host="clihost", port=3999, user="cliuser", defaults_file=str(f),
                        env={})
    assert (o.user, o.host, o.port) == ("cliuser", "clihost", 3999)
    # ~/.my.cnf when no --defaults-file; MYSQL_PWD when no file password
    home = tmp_path / "home"
    home.mkdir()
    (home / ".my.cnf").write_text("[client]\nuser=homeuser\n")
    o = resolve_options(home=str(home), env={"MYSQL_PWD": "from-env"})
    assert (o.user, o.password, o.password_source) == ("homeuser", "from-env", "MYSQL_PWD")
    # the prompt wins over everything
    o = resolve_options(defaults_file=str(f), ask_password=True, prompt=lambda t: "typed",
                        env={"MYSQL_PWD": "x"})
    assert (o.password, o.password_source) == ("typed", "prompt")
    o = resolve_options(home=str(tmp_path / "nohome"), env={})
    assert o.password is None and o.host == "localhost" and o.port == 3306


def test_bad_tls_file_and_port(tmp_path):
    with pytest.raises(UsageError, match="ssl-ca"):
        resolve_options(ssl_ca=str(tmp_path / "nope.pem"), env={}, home=str(tmp_path))
    f = tmp_path / "c.cnf"
    f.write_text("[client]\nport=abc\n")
    with pytest.raises(UsageError, match="port"):
        resolve_options(defaults_file=str(f), env={})


def test_password_never_in_repr_or_public():
    o = ConnectionOptions(host="h", user="u", password=SECRET, password_source="MYSQL_PWD")
    assert SECRET not in repr(o)
    assert SECRET not in str(o.public())


@pytest.mark.parametrize("code, text, expect", [
    (1045, f"Access denied for user 'u'@'10.0.0.1' (using password: YES) {SECRET}",
     "access denied"),
    (2003, "Can't connect to MySQL server on 'h' ([Errno 111] Connection refused)",
     "connection refused"),
    (2003, "Can't connect to MySQL server on 'h' (timed out)", "timed out"),
    (1130, f"Host 'x' is not allowed to connect {SECRET}", "cannot connect"),
])
def test_connect_errors_are_one_line_without_the_password(code, text, expect):
    o = ConnectionOptions(host="h", port=3306, user="u", password=SECRET)
    err = connect_error(Exception(code, text), o)
    msg = str(err)
    assert expect in msg and SECRET not in msg and "\n" not in msg
    assert err.exit_code == 2


def test_scrub():
    assert scrub(f"x {SECRET} y", SECRET) == "x *** y"
    assert scrub("nothing", None) == "nothing"


def test_localhost_means_the_local_socket(tmp_path, monkeypatch):
    import socket

    from innoflush.live import client_options as connect_mod

    path = str(tmp_path / "mysqld.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    try:
        monkeypatch.setattr(connect_mod, "DEFAULT_SOCKETS", (str(tmp_path / "none"), path))
        o = resolve_options(env={}, home=str(tmp_path))
        assert o.socket == path and o.is_local and o.target == f"socket {path}"
        # an explicit port or a TCP address means TCP
        assert resolve_options(port=3306, env={}, home=str(tmp_path)).socket is None
        assert resolve_options(host="127.0.0.1", env={}, home=str(tmp_path)).socket is None
    finally:
        srv.close()
