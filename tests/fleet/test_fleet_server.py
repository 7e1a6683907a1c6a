"""`innoflush advise --inventory` against a fleet of real MariaDB servers started here.

Ten small servers (three flavours of settings), plus three hosts that must fail, each
its own way: a port where an eleventh server was and is no more (refused), a real server
reached with a wrong password from its own option-file section (auth), and a plain TCP
listener that answers with an HTTP line (not-mysql). The rest are advised; one server is
listed under several names, so its Max_used_connections shows the --concurrency bound.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from innoflush.lab.server.local import ServerOptions, initialized_datadir

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parents[2]
SERVERS = 10
USER, PASSWORD = "fleet_adv", "Fl33t-0nly-pw"
ALIASES = 4            # extra names of server 0
CONCURRENCY = 3


def _options(i: int) -> ServerOptions:
    """Small servers, three kinds of settings so the fleet table has several ranks."""
    flush, trx = [("O_DIRECT", 1), ("fsync", 2), ("O_DIRECT", 0)][i % 3]
    return ServerOptions(innodb_flush_method=flush, innodb_flush_log_at_trx_commit=trx,
                         innodb_buffer_pool_size="8M",
                         extra={"innodb_log_file_size": "8M", "max_connections": "40"})


class _NotMySQL:
    """A TCP listener on 127.0.0.1 that answers every connection with an HTTP error."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with contextlib.suppress(OSError):
                conn.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n")
            conn.close()

    def close(self) -> None:
        self.sock.close()
        self.thread.join(timeout=5)


@pytest.fixture(scope="module")
def fleet(start_server, tmp_path_factory):
    """{'servers': [...], 'stopped_port': int, 'garbage_port': int}; all stopped after."""
    base = tmp_path_factory.mktemp("fleet")
    template = initialized_datadir(base / "template")   # one mariadb-install-db for all
    cms = [start_server(base / f"s{i}", _options(i), datadir_from=template)
           for i in range(SERVERS + 1)]
    entered: list = []
    lock = threading.Lock()

    def enter(cm):
        srv = cm.__enter__()
        with lock:
            entered.append(cm)
        return srv

    listener = None
    try:
        with ThreadPoolExecutor(4) as pool:
            servers = list(pool.map(enter, cms))
        for srv in servers:
            conn = srv.connect()
            with conn.cursor() as cur:
                cur.execute(f"CREATE USER '{USER}'@'127.0.0.1' IDENTIFIED BY %s", (PASSWORD,))
                cur.execute(f"GRANT SELECT, PROCESS, SLAVE MONITOR ON *.* TO "
                            f"'{USER}'@'127.0.0.1'")
            conn.close()
        gone = servers.pop()
        stopped_port = gone.port
        cm = cms[SERVERS]
        cm.__exit__(None, None, None)   # stopped and checked stopped by the fixture
        entered.remove(cm)
        listener = _NotMySQL()
        yield {"servers": servers, "stopped_port": stopped_port,
               "garbage_port": listener.port}
    finally:
        if listener is not None:
            listener.close()
        for cm in entered:
            cm.__exit__(None, None, None)


def _files(tmp_path: Path, fleet: dict, aliases: int = ALIASES) -> tuple[Path, Path]:
    """The inventory (YAML) and the option file with its per-group and per-host sections:
    [client] is wrong for everyone, [client_fleet] (the group) right, [client_badpw]
    (one host) wrong again."""
    s = fleet["servers"]
    hosts = {f"db{i:02d}": {"mysql_port": srv.port} for i, srv in enumerate(s)}
    for k in range(aliases):
        hosts[f"alias{k}"] = {"mysql_port": s[0].port}
    hosts["badpw"] = {"mysql_port": s[1].port}
    hosts["stopped"] = {"mysql_port": fleet["stopped_port"]}
    hosts["notmysql"] = {"mysql_port": fleet["garbage_port"]}
    inv = tmp_path / "inventory.yml"
    lines = ["all:", "  vars:", "    ansible_host: 127.0.0.1", "  children:", "    fleet:",
             "      hosts:"]
    for name, v in hosts.items():
        lines += [f"        {name}:", f"          mysql_port: {v['mysql_port']}"]
    inv.write_text("\n".join(lines) + "\n")
    cnf = tmp_path / "fleet.cnf"
    cnf.write_text(f"[client]\nuser=nobody\npassword=nothing\n\n"
                   f"[client_fleet]\nuser={USER}\npassword={PASSWORD}\n\n"
                   f"[client_badpw]\npassword=Wr0ng-pw-123\n")
    return inv, cnf


def _run(args: list[str], tmp_path: Path, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    env.pop("MYSQL_PWD", None)
    return subprocess.Popen([sys.executable, "-m", "innoflush", "advise", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=tmp_path, **kw)


def _max_used(srv) -> int:
    conn = srv.connect()
    with conn.cursor() as cur:
        cur.execute("SHOW GLOBAL STATUS LIKE 'Max_used_connections'")
        n = int(cur.fetchone()[1])
    conn.close()
    return n


def _flush_status(servers) -> None:
    for srv in servers:
        conn = srv.connect()
        with conn.cursor() as cur:
            cur.execute("FLUSH STATUS")   # Max_used_connections back to what is open now
        conn.close()


def test_fleet_json_lines(fleet, tmp_path):
    inv, cnf = _files(tmp_path, fleet)
    _flush_status(fleet["servers"])
    p = _run(["--inventory", str(inv), "--defaults-file", str(cnf), "--interval", "1",
              "--connect-timeout", "3", "--concurrency", str(CONCURRENCY), "--json"],
             tmp_path)
    out, err = p.communicate(timeout=240)
    assert p.returncode == 2, err
    assert "Traceback" not in out + err
    assert PASSWORD not in out + err and "Wr0ng-pw-123" not in out + err
    results = {r["host"]: r for r in map(json.loads, out.splitlines())}
    assert len(results) == SERVERS + ALIASES + 3
    failed = {h: r["error"]["kind"] for h, r in results.items() if r["status"] != "ok"}
    assert failed == {"stopped": "refused", "badpw": "auth", "notmysql": "not-mysql"}
    assert results["stopped"]["exit"] == results["badpw"]["exit"] == 2
    assert "access denied" in results["badpw"]["error"]["message"]
    keys = {"host", "address", "port", "socket", "groups", "status", "exit", "error",
            "report", "seconds"}   # as docs/commands/advise-inventory.md lists them
    for h, r in results.items():
        assert set(r) == keys
        if h in failed:
            assert r["report"] is None
            continue
        rep = r["report"]
        assert r["exit"] == rep["exit_code"] in (0, 3, 4)
        assert rep["schema"] == "innoflush.advice/1"
        assert rep["server"]["product"] == "mariadb"
        assert rep["server"]["connection"]["user"] == USER
        assert "[client_fleet]" in rep["server"]["connection"]["password_source"]
        assert rep["sampling"]["intervals"][0]["valid"]
        assert r["groups"] == ["fleet"]
    # the settings read are each server's own
    for i in range(len(fleet["servers"])):
        st = results[f"db{i:02d}"]["report"]["settings"]
        want = _options(i)
        assert st["innodb_flush_log_at_trx_commit"] == want.innodb_flush_log_at_trx_commit
        assert st["innodb_flush_method"] == want.innodb_flush_method
    # trx_commit=2 or 0 are durability findings: those hosts advise a change (exit 3)
    assert results["db01"]["exit"] == 3 and results["db02"]["exit"] == 3
    # the bound: at most CONCURRENCY hosts at once, seen by the tool and by server 0,
    # listed 1 + ALIASES times (each advise holds two sessions; the reading one is +1)
    assert f"at most {CONCURRENCY} at once" in err or \
        any(f"at most {n} at once" in err for n in range(1, CONCURRENCY))
    assert 2 <= _max_used(fleet["servers"][0]) <= 2 * CONCURRENCY + 1


def test_fleet_table_worst_first(fleet, tmp_path):
    inv, cnf = _files(tmp_path, fleet, aliases=0)
    # --wide: a row a host, whatever the reasons' length (the default may fit them as
    # footnotes or as blocks)
    p = _run(["--inventory", str(inv), "--defaults-file", str(cnf), "--interval", "1",
              "--connect-timeout", "3", "--concurrency", "6", "--wide"], tmp_path)
    out, err = p.communicate(timeout=240)
    assert p.returncode == 2, err
    assert "Traceback" not in out + err
    rows = [ln.split()[0] for ln in out.splitlines()[2:] if ln.strip() and
            not ln.startswith(str(SERVERS + 3) + " hosts")]
    assert set(rows[:3]) == {"stopped", "badpw", "notmysql"}
    assert rows.index("db01") < rows.index("db00")   # a durability finding before none
    assert f"{SERVERS + 3} hosts: {SERVERS} advised" in out
    assert "3 failed (auth 1, not-mysql 1, refused 1)" in out


def test_fleet_ctrl_c(fleet, tmp_path):
    """Ctrl-C: what finished is printed, exit 130, one line, no traceback, and every
    connection the run opened is closed."""
    inv, cnf = _files(tmp_path, fleet, aliases=0)
    p = _run(["--inventory", str(inv), "--defaults-file", str(cnf), "--interval", "20",
              "--concurrency", "2", "--json"], tmp_path)
    time.sleep(4)   # the first hosts are sampling their 20 s interval
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == "innoflush: interrupted"
    assert "not finished (interrupted)" in err
    for srv in fleet["servers"]:
        deadline = time.monotonic() + 10
        while True:
            conn = srv.connect()
            with conn.cursor() as cur:
                cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                            "WHERE USER = %s", (USER,))
                left = cur.fetchone()[0]
            conn.close()
            if left == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert left == 0, f"{srv}: {left} sessions of the run still open"
