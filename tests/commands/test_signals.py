"""SIGTERM and SIGHUP end every long command as Ctrl-C does (innoflush/signals.py): the
work stops, what the command created is removed — the probe file, servers, containers,
datadirs, client processes — and it exits 128 + the signal (143, 129) with one line on
stderr. A second signal during the cleanup does not cut it short.

Real processes, real signals: each command runs as ``python -m innoflush`` in a session of
its own and gets the signal at start-up (while its server starts; measure: while the
probe file is laid out) and mid-run (while the workload commits; measure: while it
syncs). SIGTERM goes to the process, as systemd, ``docker stop`` or a CI cancel send it;
SIGHUP to its process group, as a terminal that hangs up does. Then the test looks for
anything left: the command's processes as they were just before the signal (its
descendants in /proc), any process naming the test's directory (the lab's servers and its
forked clients carry it on their command line), files under the directory, containers.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pymysql
import pytest

from tests.helpers.processes import processes_mentioning

ROOT = Path(__file__).resolve().parents[2]
SERVER_NAMES = ("mariadbd", "mysqld")
START_TIMEOUT_S = 300        # a busy CI host has taken over 60 s to start a lab server

STOPS = [pytest.param(signal.SIGTERM, 143, "innoflush: terminated (SIGTERM)", id="SIGTERM"),
         pytest.param(signal.SIGHUP, 129, "innoflush: hung up (SIGHUP)", id="SIGHUP")]


# ---- /proc ------------------------------------------------------------------------------

def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a process, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()
    return fields[0], int(fields[1])


def descendants(pid: int) -> set[int]:
    parents: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and (st := _stat(int(d.name))) is not None:
            parents.setdefault(st[1], []).append(int(d.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def mentioning(text: str) -> list[tuple[int, str]]:
    """(pid, command line) of every live process whose command line contains text."""
    return [(p, c) for p, c in processes_mentioning(text)
            if (st := _stat(p)) is not None and st[0] not in ("Z", "X")]


def alive(pids: set[int]) -> list[int]:
    return [p for p in pids if (st := _stat(p)) is not None and st[0] not in ("Z", "X")]


def wait_for(what: str, predicate: Callable[[], object], proc: subprocess.Popen,
             timeout: float = START_TIMEOUT_S, poll: float = 0.05):
    """predicate()'s first true value; fails when the command ends or the time is up."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        if proc.poll() is not None:
            break
        time.sleep(poll)
    pytest.fail(f"never saw {what} (the command's exit: {proc.poll()})")


# ---- the command ------------------------------------------------------------------------

class Command:
    """`python -m innoflush ARGS` in a session of its own, output to files."""

    def __init__(self, args: list[str], tmp_path: Path) -> None:
        self.out_path, self.err_path = tmp_path / "stdout", tmp_path / "stderr"
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "innoflush", *args], stdin=subprocess.DEVNULL,
                stdout=out, stderr=err, start_new_session=True, cwd=tmp_path,
                env={**os.environ, "PYTHONPATH": str(ROOT)})
        self.before: set[int] = set()

    def send(self, signum: int) -> None:
        """SIGHUP to the process group (a terminal hanging up), others to the process."""
        if not self.before:
            self.before = descendants(self.proc.pid)
        if signum == signal.SIGHUP:
            os.killpg(self.proc.pid, signum)
        else:
            os.kill(self.proc.pid, signum)

    def finish(self, timeout: float = 120) -> tuple[int, str, str]:
        try:
            rc = self.proc.wait(timeout=timeout)
        finally:
            self.kill()
        return rc, self.out_path.read_text(), self.err_path.read_text()

    def kill(self) -> None:
        """The test's own cleanup, should the command hang: the group and what it left."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


@pytest.fixture
def command(tmp_path):
    started: list[Command] = []

    def start(*args: str) -> Command:
        c = Command(list(args), tmp_path)
        started.append(c)
        return c
    yield start
    for c in started:
        c.kill()


def assert_stopped(rc: int, out: str, err: str, code: int, line: str,
                   lab: bool = False) -> None:
    """The exit code, one line on stderr (the lab's names what it cleaned up), nothing
    on stdout."""
    assert rc == code, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    if lab:
        assert err == (f"{line}: the client processes and the server were stopped and the "
                       "work directory removed\n")
    else:
        assert err == line + "\n"
    assert out == ""


def assert_nothing_left(cmd: Command, tmp_path: Path, data: Path) -> None:
    """No process of the command's, none naming the test's directory, nothing under
    data."""
    deadline = time.monotonic() + 15
    while (alive(cmd.before) or mentioning(str(tmp_path))) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(cmd.before), [(p, _stat(p)) for p in alive(cmd.before)]
    assert not mentioning(str(tmp_path)), mentioning(str(tmp_path))
    assert not list(data.iterdir()), f"left under {data}: {list(data.iterdir())}"


# ---- measure (no server) ----------------------------------------------------------------

def _probe_files(d: Path) -> list[Path]:
    return [p for p in d.iterdir() if p.name.startswith(".innoflush-probe-")]


def _syscw(pid: int) -> int:
    """Write system calls the process has made (/proc/PID/io)."""
    try:
        for line in Path(f"/proc/{pid}/io").read_text().splitlines():
            if line.startswith("syscw:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _waits(pid: int) -> int:
    """How often the process's main thread has waited (/proc/PID/status)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


MEASURE = ["--sizes", "16k", "--ops", "fsync", "--direct", "off", "--duration", "60"]


@pytest.mark.parametrize("signum,code,line", STOPS)
def test_measure_at_start_up(command, tmp_path, signum, code, line):
    data = tmp_path / "data"
    data.mkdir()
    # a large probe file: the signal lands while it is being laid out
    cmd = command("measure", str(data), "--file-size", "256M", *MEASURE)
    wait_for("the probe file", lambda: _probe_files(data), cmd.proc, timeout=60, poll=0.005)
    cmd.send(signum)
    assert_stopped(*cmd.finish(), code, line)
    assert_nothing_left(cmd, tmp_path, data)


@pytest.mark.parametrize("signum,code,line", STOPS)
def test_measure_mid_run(command, tmp_path, signum, code, line):
    data = tmp_path / "data"
    data.mkdir()
    size = 4 * 1024 * 1024
    cmd = command("measure", str(data), "--file-size", "4M", *MEASURE)

    def laid_out() -> int:
        files = _probe_files(data)
        with contextlib.suppress(OSError):
            if files and files[0].stat().st_size == size:
                return _syscw(cmd.proc.pid) or 1
        return 0
    at_layout = wait_for("the probe file laid out", laid_out, cmd.proc, timeout=60)
    # the measured writes (16 KB each, with an fsync) are under way
    wait_for("the measured writes", lambda: _syscw(cmd.proc.pid) > at_layout + 50, cmd.proc,
             timeout=60)
    cmd.send(signum)
    assert_stopped(*cmd.finish(), code, line)
    assert_nothing_left(cmd, tmp_path, data)


def test_measure_second_signal_during_cleanup(command, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    cmd = command("measure", str(data), "--file-size", "256M", *MEASURE)
    wait_for("the probe file", lambda: _probe_files(data), cmd.proc, timeout=60, poll=0.005)
    cmd.send(signal.SIGTERM)
    cmd.send(signal.SIGHUP)        # recorded, the cleanup goes on; the first one counts
    cmd.send(signal.SIGINT)
    rc, out, err = cmd.finish()
    # the first one Python ran counts (of signals pending together, the lowest number);
    # never a death by a later one
    code, line = {143: (143, "innoflush: terminated (SIGTERM)"),
                  129: (129, "innoflush: hung up (SIGHUP)"),
                  130: (130, "innoflush: interrupted")}.get(rc, (None, None))
    assert code is not None, (rc, err)
    assert_stopped(rc, out, err, code, line)
    assert_nothing_left(cmd, tmp_path, data)


def test_nohup_keeps_sighup_ignored(tmp_path):
    # a caller's SIG_IGN is kept: under nohup a hang-up does not stop the measurement
    data = tmp_path / "data"
    data.mkdir()
    code = ("import signal, sys; signal.signal(signal.SIGHUP, signal.SIG_IGN); "
            "from innoflush.commands.root import main; sys.argv[0] = 'innoflush'; main()")
    proc = subprocess.Popen([sys.executable, "-c", code, "measure", str(data), "--sizes", "4k",
                             "--ops", "none", "--direct", "off", "--file-size", "1M",
                             "--duration", "1", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)},
                            start_new_session=True)
    try:
        wait_for("the probe file", lambda: _probe_files(data), proc, timeout=60, poll=0.005)
        os.kill(proc.pid, signal.SIGHUP)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, err
    assert '"tests"' in out
    assert not _probe_files(data)


# ---- the lab: local servers ---------------------------------------------------------------

LAB = ["--buffer-pool", "64M", "--duration", "60", "--warmup", "0"]


def _server(tmp_path: Path) -> list[tuple[int, str]]:
    """The lab's server (not the datadir's initialisation) under the test's directory."""
    return [(p, c) for p, c in mentioning(str(tmp_path))
            if any(n in c for n in SERVER_NAMES) and "--port=" in c]


def _port(cmdline: str) -> int:
    return int(cmdline.split("--port=")[1].split()[0])


def _cmdline(pid: int) -> bytes | None:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None


def _clients(cmd: Command, n: int) -> set[int] | None:
    """The lab's n client processes: children forked without an exec (its own command
    line), there on two looks 0.2 s apart — a child between its fork and its exec (the
    server, mariadb-install-db) has the same command line for a moment."""
    def look() -> set[int]:
        own = _cmdline(cmd.proc.pid)
        return {p for p in alive(descendants(cmd.proc.pid))
                if (st := _stat(p)) is not None and st[1] == cmd.proc.pid
                and _cmdline(p) == own}
    first = look()
    if len(first) < n:
        return None
    time.sleep(0.2)
    both = first & look()
    return both if len(both) >= n else None


def _commits(port: int) -> int:
    try:
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                               connect_timeout=2, read_timeout=5)
    except pymysql.err.MySQLError:
        return 0
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW GLOBAL STATUS LIKE 'Com_commit'")
            row = cur.fetchone()
        return int(row[1]) if row else 0
    finally:
        conn.close()


def at_start_up(cmd: Command, tmp_path: Path) -> None:
    """Returns once the lab has spawned its server (still starting, most likely)."""
    wait_for("the lab's server process", lambda: _server(tmp_path), cmd.proc)


def mid_run(cmd: Command, tmp_path: Path, connections: int = 1) -> set[int]:
    """Returns (their pids) once the lab's client processes are committing."""
    clients = wait_for("the client processes", lambda: _clients(cmd, connections), cmd.proc)
    # (the preload committed before they started: the count goes on growing)
    servers = wait_for("the lab's server", lambda: _server(tmp_path), cmd.proc)
    port = _port(servers[0][1])
    before = _commits(port)
    wait_for("commits on the lab's server", lambda: _commits(port) > before, cmd.proc,
             poll=0.2)
    assert not set(clients) - set(alive(clients))
    return clients


def _data(tmp_path: Path) -> Path:
    d = tmp_path / "data"      # (mariadb-install-db cannot take a path with spaces)
    d.mkdir()
    return d


def lab_run(command, data: Path, connections: int = 2, *extra: str) -> Command:
    return command("lab", "run", "--profile", "samsung-990-pro", "--datadir-on", str(data),
                   "--connections", str(connections), *LAB, *extra)


def lab_calibrate(command, data: Path) -> Command:
    return command("lab", "calibrate", "--datadir-on", str(data), "--connections", "1", *LAB)


def lab_validate(command, data: Path) -> Command:
    # its calibration run first: the first server and the first workload are its
    return command("lab", "validate", "--devices", "local", "--profile", "samsung-990-pro",
                   "--datadir-on", str(data), "--connections", "1", "--flush-method",
                   "O_DIRECT", "--trx-commit", "1", "--preload-rows", "1000", *LAB)


LABS = {"run": lab_run, "calibrate": lab_calibrate, "validate": lab_validate}


@pytest.mark.server
@pytest.mark.parametrize("lab", list(LABS))
@pytest.mark.parametrize("signum,code,line", STOPS)
def test_lab_at_start_up(server_binaries, command, tmp_path, lab, signum, code, line):
    data = _data(tmp_path)
    cmd = LABS[lab](command, data)
    at_start_up(cmd, tmp_path)
    t0 = time.monotonic()
    cmd.send(signum)
    assert_stopped(*cmd.finish(), code, line, lab=True)
    # a server that never got ready is killed, not given its clean shutdown: a mariadbd
    # still starting leaves SIGTERM to the end of the stop timeout (60 s)
    assert time.monotonic() - t0 < 30
    assert_nothing_left(cmd, tmp_path, data)


@pytest.mark.server
@pytest.mark.parametrize("lab", list(LABS))
@pytest.mark.parametrize("signum,code,line", STOPS)
def test_lab_mid_run(server_binaries, command, tmp_path, lab, signum, code, line):
    data = _data(tmp_path)
    cmd = LABS[lab](command, data)
    mid_run(cmd, tmp_path, 2 if lab == "run" else 1)
    cmd.send(signum)
    assert_stopped(*cmd.finish(), code, line, lab=True)
    assert_nothing_left(cmd, tmp_path, data)


@pytest.mark.server
def test_lab_run_second_signals_during_cleanup(server_binaries, command, tmp_path):
    data = _data(tmp_path)
    cmd = lab_run(command, data)
    clients = mid_run(cmd, tmp_path, 2)
    cmd.send(signal.SIGTERM)
    # the cleanup under way: the clients stopped first, the server's shutdown next
    wait_for("the clients stopped", lambda: not alive(clients), cmd.proc, timeout=30,
             poll=0.01)
    cmd.send(signal.SIGHUP)
    cmd.send(signal.SIGTERM)
    cmd.send(signal.SIGINT)
    assert_stopped(*cmd.finish(), 143, "innoflush: terminated (SIGTERM)", lab=True)
    assert_nothing_left(cmd, tmp_path, data)


@pytest.mark.server
def test_lab_run_command_workload_mid_run(server_binaries, command, tmp_path):
    # --workload-cmd: the user's command runs in a session of its own; SIGTERM stops it
    # with its whole process group
    data = _data(tmp_path)
    cmd = lab_run(command, data, 1, "--workload-cmd", "sleep 876541; sleep 876542")
    wait_for("the workload command", lambda: [
        p for p, c in mentioning("sleep 876541") if "innoflush" not in c], cmd.proc)
    cmd.send(signal.SIGTERM)
    assert_stopped(*cmd.finish(), 143, "innoflush: terminated (SIGTERM)", lab=True)
    assert_nothing_left(cmd, tmp_path, data)
    assert not mentioning("sleep 87654")


# ---- advise --inventory -------------------------------------------------------------------

class SilentListener:
    """Accepts connections on 127.0.0.1 and never says a word (a host that hangs the
    connect); records each accepted socket."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.1)      # accept() is not woken by a close()
        self.port = self.sock.getsockname()[1]
        self.accepted: list[socket.socket] = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted.append(conn)

    def close(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=5)
        self.sock.close()
        for c in self.accepted:
            c.close()


def _sessions(server, user: str) -> int:
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = %s",
                        (user,))
            return int(cur.fetchone()[0])
    finally:
        conn.close()


def _closed_by_peer(s: socket.socket) -> bool:
    s.settimeout(10)
    try:
        return s.recv(1) == b""
    except OSError:
        return True


@pytest.fixture
def inventory(mariadb_server, server_accounts, tmp_path):
    """(the inventory, its option file, the silent listener) — one real host, one that
    never answers."""
    user, password = server_accounts["password"]
    listener = SilentListener()
    inv = tmp_path / "inventory.yml"
    inv.write_text("all:\n  vars:\n    ansible_host: 127.0.0.1\n  hosts:\n"
                   f"    silent:\n      mysql_port: {listener.port}\n"
                   f"    real:\n      mysql_port: {mariadb_server.port}\n")
    cnf = tmp_path / "fleet.cnf"
    cnf.write_text(f"[client]\nuser={user}\npassword={password}\n")
    cnf.chmod(0o600)
    yield inv, cnf, listener
    listener.close()


@pytest.mark.server
@pytest.mark.parametrize("phase", ["start-up", "mid-run"])
@pytest.mark.parametrize("signum,code,line", STOPS)
def test_advise_inventory(mariadb_server, server_accounts, inventory, command, tmp_path,
                          phase, signum, code, line):
    inv, cnf, listener = inventory
    user = server_accounts["password"][0]
    assert _sessions(mariadb_server, user) == 0
    cmd = command("advise", "--inventory", str(inv), "--defaults-file", str(cnf),
                  "--interval", "60", "--connect-timeout", "60", "--concurrency", "2")
    if phase == "start-up":
        # the silent host holds its connect; the real one is being read
        wait_for("the connection to the silent host", lambda: listener.accepted, cmd.proc,
                 timeout=60)
    else:
        # the real host is sampling its 60-s interval
        wait_for("the advise session", lambda: _sessions(mariadb_server, user), cmd.proc,
                 timeout=60, poll=0.2)
        time.sleep(0.5)
    cmd.send(signum)
    rc, out, err = cmd.finish()
    assert rc == code, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert err == line + "\n"             # what finished is on stdout, as on Ctrl-C
    assert "not finished (interrupted)" in out
    assert alive(cmd.before) == []
    assert listener.accepted and _closed_by_peer(listener.accepted[0])
    deadline = time.monotonic() + 10
    while _sessions(mariadb_server, user) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _sessions(mariadb_server, user) == 0


@pytest.mark.server
@pytest.mark.parametrize("signum,code,line", STOPS)
def test_advise_live_mid_run(mariadb_server, server_accounts, inventory, command, signum,
                             code, line):
    _, cnf, _ = inventory
    user = server_accounts["password"][0]
    cmd = command("advise", "-h", "127.0.0.1", "-P", str(mariadb_server.port),
                  "--defaults-file", str(cnf), "--interval", "60")
    wait_for("the advise session", lambda: _sessions(mariadb_server, user), cmd.proc,
             timeout=60, poll=0.2)
    cmd.send(signum)
    assert_stopped(*cmd.finish(), code, line)        # one line, no report
    assert alive(cmd.before) == []
    deadline = time.monotonic() + 10
    while _sessions(mariadb_server, user) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _sessions(mariadb_server, user) == 0


# ---- the lab: Docker ----------------------------------------------------------------------

def _containers(engine, tmp_path: Path) -> list:
    from innoflush.lab.server.docker_engine import LABEL

    return [c for c in engine.containers.list(all=True, filters={"label": LABEL})
            if (c.labels or {}).get(f"{LABEL}.workdir", "").startswith(str(tmp_path))]


@pytest.mark.docker
@pytest.mark.parametrize("phase,signum,code,line", [
    pytest.param("mid-run", signal.SIGTERM, 143, "innoflush: terminated (SIGTERM)",
                 id="mid-run-SIGTERM"),
    pytest.param("start-up", signal.SIGHUP, 129, "innoflush: hung up (SIGHUP)",
                 id="start-up-SIGHUP"),
])
def test_lab_run_docker(docker_engine, docker_image, command, tmp_path, phase, signum, code,
                        line):
    data = _data(tmp_path)
    cmd = lab_run(command, data, 1, "--backend", "docker", "--image", docker_image)
    wait_for("the lab's container", lambda: _containers(docker_engine, tmp_path), cmd.proc)
    if phase == "mid-run":
        client, = wait_for("the client process", lambda: _clients(cmd, 1), cmd.proc)
        # (the container's root password is its own) the client's round trips: each
        # statement waits for the server's answer; connecting takes a handful
        wait_for("the client committing", lambda: _waits(client) > 200, cmd.proc)
    cmd.send(signum)
    assert_stopped(*cmd.finish(), code, line, lab=True)
    assert_nothing_left(cmd, tmp_path, data)
    assert _containers(docker_engine, tmp_path) == []
