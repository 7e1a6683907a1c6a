"""LocalServer: start a real server from the local binaries, use it, stop it, leave nothing."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from innoflush.errors import InnoflushError
from innoflush.lab.server.backend import ServerError
from innoflush.lab.server.local import LocalServer, ServerOptions
from innoflush.lab.server.server_binaries import find_binaries

pytestmark = pytest.mark.server


def test_start_query_stop(server_binaries, server_stopped_check, tmp_path):
    opts = ServerOptions(innodb_flush_method="O_DIRECT_NO_FSYNC",
                         innodb_flush_log_at_trx_commit=2, innodb_buffer_pool_size="32M")
    with LocalServer(tmp_path, opts) as srv:
        pid, port = srv.pid, srv.port
        assert srv.is_running()
        conn = srv.connect()
        with conn.cursor() as cur:
            cur.execute("SELECT VERSION(), @@innodb_flush_method, "
                        "@@innodb_flush_log_at_trx_commit, @@bind_address, @@port")
            version, method, trx_commit, bind, got_port = cur.fetchone()
        conn.close()
        assert version.split(".")[0].isdigit()
        assert ("MariaDB" in version) == (srv.flavor == "mariadb")
        assert method == "O_DIRECT_NO_FSYNC"
        assert int(trx_commit) == 2
        assert bind == "127.0.0.1"
        assert int(got_port) == port
    assert not srv.is_running()
    server_stopped_check(pid, port)
    assert (tmp_path / "data").is_dir()          # the datadir is kept unless asked
    srv.stop()                                   # idempotent


def test_stopped_when_the_block_fails(server_binaries, server_stopped_check, tmp_path):
    srv = LocalServer(tmp_path, ServerOptions(innodb_buffer_pool_size="32M"))
    with pytest.raises(RuntimeError, match="boom"):
        with srv:
            pid, port = srv.pid, srv.port
            raise RuntimeError("boom")
    server_stopped_check(pid, port)


def test_bad_option_fails_with_the_error_log(server_binaries, tmp_path):
    srv = LocalServer(tmp_path, ServerOptions(innodb_flush_method="bogus_method",
                                              innodb_buffer_pool_size="32M"))
    with pytest.raises(ServerError) as info:
        srv.start()
    first, *quoted, where = str(info.value).splitlines()
    assert first.endswith("; its error log says:")
    assert "exited" in first or "did not accept" in first
    # the log's [ERROR] lines, the cause among them, quoted short and indented
    assert 1 <= len(quoted) <= 5 and all(q.startswith("    [ERROR]") for q in quoted)
    assert any("bogus_method" in q for q in quoted), quoted
    # the whole log kept outside the removed work directory
    kept = Path(where.removeprefix("  full log: "))
    try:
        assert where.startswith("  full log: ") and not kept.is_relative_to(tmp_path)
        assert "bogus_method" in kept.read_text() and "[Note]" in kept.read_text()
    finally:
        kept.unlink(missing_ok=True)
    assert not srv.is_running()


def test_port_in_use(server_binaries, tmp_path):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        with pytest.raises(ServerError, match=f"port {port} .*in use"):
            LocalServer(tmp_path, port=port).start()


def test_binary_not_found(tmp_path):
    with pytest.raises(ServerError, match="no mariadbd or mysqld found"):
        find_binaries(tmp_path)
    with pytest.raises(InnoflushError):
        LocalServer(tmp_path / "w", basedir=tmp_path).start()


def test_workdir_not_writable(server_binaries, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(ServerError, match="not writable"):
        LocalServer(blocker / "sub").start()


def test_datadir_not_empty(server_binaries, tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "leftover").write_text("x")
    with pytest.raises(ServerError, match="not empty"):
        LocalServer(tmp_path).start()


def test_long_workdir_gets_a_short_socket(server_binaries, server_stopped_check, tmp_path):
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    with LocalServer(deep, ServerOptions(innodb_buffer_pool_size="32M")) as srv:
        assert len(srv.socket) < 108
        sock_dir = os.path.dirname(srv.socket)
        pid, port = srv.pid, srv.port
    server_stopped_check(pid, port)
    assert not os.path.exists(sock_dir)
