"""Advisor safety against real MariaDB servers started by the suite: a replica's crash
safety read from the server (a second server replicating from a first, set up by the
test's own root connection — the advisor itself only reads), and the sampling loop across
a server restart and a FLUSH STATUS during an interval.
"""

from __future__ import annotations

import json
import threading
import time

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main
from innoflush.lab.server.ctrl_c import StartInterrupts
from innoflush.lab.server.local import ServerOptions
from innoflush.live import sampling
from tests.helpers.server_sql import sql

pytestmark = pytest.mark.server

ROOT_ENV = {"MYSQL_PWD": "", "HOME": "/nonexistent"}
REPL_USER, REPL_PASSWORD = "repl", "repl-test-only-pw"


def advise(server, *args, as_json: bool = True):
    r = CliRunner().invoke(
        main, ["advise", "--host", "127.0.0.1", "--port", str(server.port), "--user", "root",
               *(["--json"] if as_json else []), *args], env=ROOT_ENV,
        catch_exceptions=False)
    assert "Traceback" not in r.stderr
    return r


def restart(server) -> None:
    """Stop the server and start it again on the same datadir and port (LocalServer.start
    wants a fresh datadir)."""
    server._terminate()
    with StartInterrupts() as interrupts:
        server._launch(interrupts)
        server._wait_ready(interrupts)


def replica_threads(server) -> tuple[str, str]:
    conn = server.connect()
    try:
        import pymysql

        with conn.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute("SHOW SLAVE STATUS")
            row = cur.fetchone()
        return row["Slave_IO_Running"], row["Slave_SQL_Running"]
    finally:
        conn.close()


def wait_running(server, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if replica_threads(server) == ("Yes", "Yes"):
            return
        time.sleep(0.2)
    raise AssertionError(f"replication did not start: {replica_threads(server)} "
                         f"{server.error_log_tail()}")


@pytest.fixture(scope="module")
def primary(start_server, tmp_path_factory):
    opts = ServerOptions(log_bin=True, sync_binlog=1, innodb_buffer_pool_size="64M")
    with start_server(tmp_path_factory.mktemp("primary"), opts) as srv:
        sql(srv, f"CREATE USER '{REPL_USER}'@'127.0.0.1' IDENTIFIED BY '{REPL_PASSWORD}'",
            f"GRANT REPLICATION SLAVE ON *.* TO '{REPL_USER}'@'127.0.0.1'",
            "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY) ENGINE=InnoDB",
            "INSERT INTO app.t VALUES (1), (2), (3)")
        yield srv


@pytest.fixture(scope="module")
def replica(start_server, tmp_path_factory, primary):
    """A replica at trx_commit=2 (what a replica may run with when crash-safe), started
    with relay_log_recovery=OFF, replicating by GTID from `primary`."""
    opts = ServerOptions(innodb_flush_log_at_trx_commit=2, innodb_buffer_pool_size="64M",
                         extra={"server_id": 2, "relay_log_recovery": "OFF"})
    with start_server(tmp_path_factory.mktemp("replica"), opts) as srv:
        sql(srv, f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={primary.port}, "
                 f"MASTER_USER='{REPL_USER}', MASTER_PASSWORD='{REPL_PASSWORD}', "
                 "MASTER_USE_GTID=slave_pos", "START SLAVE")
        wait_running(srv)
        yield srv


def test_unsafe_stopped_replica_keeps_strict(replica):
    sql(replica, "STOP SLAVE", "SET GLOBAL read_only = OFF")
    assert replica_threads(replica) == ("No", "No")
    r = advise(replica, "--interval", "1")
    assert r.exit_code == 3, r.stderr          # recommendations made (documented)
    rep = json.loads(r.stdout)
    srv = rep["server"]
    assert srv["role"] == "replica"
    repl = srv["replication"]
    assert repl["crash_safe"] is False and repl["relay_log_recovery"] is False
    assert repl["threads_running"] is False
    assert repl["channels"][0]["positioning"] == "Slave_Pos"
    f = {x["id"]: x for x in rep["findings"]}["trx-commit.strict-requires-1"]
    assert (f["current"], f["recommended"]) == ("2", "1")
    why = " ".join(f["why"])
    assert "relay_log_recovery=OFF" in why
    assert "replication threads not both running (IO No, SQL No)" in why
    assert "read_only=OFF" in why
    assert not any("accepted" in n for n in rep["notes"])
    text = advise(replica, "--interval", "1", "--wide", as_json=False)   # a line unwrapped
    assert text.exit_code == 3
    assert "replication: not shown crash-safe, held to a primary's durability; missing: " \
        "relay_log_recovery=OFF" in text.stdout


def test_crash_safe_running_replica_may_relax(replica, primary):
    replica.options.extra["relay_log_recovery"] = "ON"
    restart(replica)
    sql(replica, "START SLAVE", "SET GLOBAL read_only = ON")
    wait_running(replica)
    sql(primary, "INSERT INTO app.t VALUES (4)")
    r = advise(replica, "--interval", "1")
    assert r.exit_code in (0, 3), r.stderr
    rep = json.loads(r.stdout)
    repl = rep["server"]["replication"]
    assert repl["crash_safe"] is True, repl["missing"]
    assert repl["relay_log_recovery"] is True and repl["threads_running"] is True
    assert "trx-commit.strict-requires-1" not in [x["id"] for x in rep["findings"]]
    assert any("innodb_flush_log_at_trx_commit=2 accepted on a crash-safe replica" in n
               and "relay_log_recovery=ON" in n for n in rep["notes"])


# ---- restarts and resets during the sampling ---------------------------------------------

@pytest.fixture
def own_server(start_server, tmp_path):
    opts = ServerOptions(innodb_flush_log_at_trx_commit=1, innodb_buffer_pool_size="64M")
    with start_server(tmp_path / "srv", opts) as srv:
        yield srv


def on_status_read(monkeypatch, actions: dict) -> list[BaseException]:
    """Run actions[n]() in a thread right after the n-th full SHOW GLOBAL STATUS read of
    the sampling loop (1: the first snapshot, 2: the end of interval 1, ...); actions[-n]
    runs in line just before it. Returns the list the threads' errors go to."""
    real = sampling.read_status
    calls = [0]
    errors: list[BaseException] = []

    def run(fn):
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    def read_status(session):
        calls[0] += 1
        if -calls[0] in actions:
            actions[-calls[0]]()
        out = real(session)
        if calls[0] in actions:
            threading.Thread(target=run, args=(actions[calls[0]],), daemon=True).start()
        return out
    monkeypatch.setattr(sampling, "read_status", read_status)
    return errors


def test_restart_during_interval_2_loses_only_it(own_server, monkeypatch):
    pid0 = own_server.pid

    def restart_soon():
        time.sleep(1.0)              # well inside interval 2
        restart(own_server)
    errors = on_status_read(monkeypatch, {2: restart_soon})
    r = advise(own_server, "--interval", "3", "--samples", "3")
    assert not errors, errors
    assert own_server.pid != pid0                      # it did restart
    assert r.exit_code != 1 and r.exit_code in (0, 3), r.stderr
    rep = json.loads(r.stdout)
    ivs = rep["sampling"]["intervals"]
    assert [iv["valid"] for iv in ivs] == [True, False, True], ivs
    assert ivs[1]["problem"].startswith("server restarted during interval 2: lost")
    assert any(w.startswith("interval 2 ignored: server restarted") for w in rep["warnings"])
    assert rep["observed"]["intervals"] == 2
    # the server's process restarted: its figures are left out, and the report says so
    assert any("opened again" in n for n in rep["workload"]["notes"])
    assert "restarted during the window" in rep["workload"]["server_cpu_us_per_trx"]["detail"]


def test_restart_in_every_interval_ends_the_run(own_server, monkeypatch):
    errors = on_status_read(monkeypatch, {1: lambda: (time.sleep(0.5),
                                                      restart(own_server))})
    r = advise(own_server, "--interval", "2", "--samples", "1")
    assert not errors, errors
    assert r.exit_code == 1
    assert r.stderr.startswith("innoflush: error: no usable interval: server restarted "
                               "during interval 1: lost")


def test_flush_status_during_an_interval_invalidates_it(own_server, monkeypatch):
    """FLUSH STATUS just before the first snapshot, and again 3 s into a 6 s interval:
    Uptime_since_flush_status does not go down over interval 1, it only rises less than
    Uptime. Both are whole seconds, so the margins must hold under rounding: it starts at
    0-1 s and ends at 2-3 s (never lower: the "went down" branch), rising 2-3 s while
    Uptime rises 5-7 s (more than 1 s apart: the "rose less" branch). A 4 s interval with
    the reset 3.2 s in ended at 0-1 s and took the other branch about one run in ten."""
    errors = on_status_read(monkeypatch, {
        -1: lambda: sql(own_server, "FLUSH STATUS"),
        1: lambda: (time.sleep(3.0), sql(own_server, "FLUSH STATUS"))})
    r = advise(own_server, "--interval", "6", "--samples", "2")
    assert not errors, errors
    assert r.exit_code in (0, 3), r.stderr
    ivs = json.loads(r.stdout)["sampling"]["intervals"]
    assert [iv["valid"] for iv in ivs] == [False, True], ivs
    assert "FLUSH STATUS" in ivs[0]["problem"] and "rose" in ivs[0]["problem"]
