"""Shared fixtures: a real MariaDB/MySQL started from the local binaries, and a workload.

The server runs in a temporary datadir on 127.0.0.1 and a free port. Without the server
binaries the tests that need it are skipped with a loud reason — except under CI=true,
where they fail: CI must have the server (``make system-deps`` installs it).
Servers never leak: each fixture's finaliser stops its server and asserts the process is
gone and the port no longer listens.

Nothing is left behind either: the suite has its own INNOFLUSH_HOME (saved profiles, the
lab's emulation library) in its temporary directory, and at the end of the session every
server datadir there is removed, whether its test passed or not: the logs beside it stay
for a failed test (pytest keeps a failed run's directories: tmp_path_retention_policy).
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from innoflush.lab.server.backend import ServerError
from innoflush.lab.server.docker_engine import (
    LABEL,
    OFFLINE_IMAGE,
    DockerServerError,
    docker_client,
    get_image,
)
from innoflush.lab.server.local import LocalServer, ServerOptions, is_listening
from innoflush.lab.server.server_binaries import find_binaries

# A suite started in the background (`make test &`, nohup) inherits SIGINT or SIGHUP ignored,
# and innoflush keeps an ignored signal ignored, as nohup asks: the tests that send them
# (Ctrl-C during a start, SIGHUP to lab and measure) would test nothing. The suite runs
# with the dispositions of a terminal; a child inherits them.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
    signal.signal(signal.SIGHUP, signal.SIG_DFL)

# ---- nothing left behind ----------------------------------------------------------------

# Files only a server datadir has: InnoDB's system tablespace and redo, Aria's control file.
DATADIR_MARKERS = ("ibdata1", "ib_logfile0", "#innodb_redo", "aria_log_control")


def remove_server_datadirs(root: Path) -> list[Path]:
    """Remove every server datadir under root (100+ MB each: the redo log alone is 96 MB),
    keeping what sits beside it (error.log, server.out): a failed test's post-mortem needs
    the logs, not the tablespaces. Returns the directories removed."""
    removed: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        if any(m in filenames or m in dirnames for m in DATADIR_MARKERS):
            shutil.rmtree(dirpath, ignore_errors=True)
            removed.append(Path(dirpath))
            dirnames[:] = []
    return removed


@pytest.fixture(scope="session", autouse=True)
def _suite_leaves_nothing_behind(tmp_path_factory):
    """The suite's own INNOFLUSH_HOME (not the user's store: `lab run --emulate` builds its
    library there, `measure --save` writes there), and no server datadir after the session.
    Autouse and session-scoped, so it is set up first and finalised last, after the
    fixtures that stop the servers."""
    home = tmp_path_factory.mktemp("innoflush-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("INNOFLUSH_HOME", str(home))
        # Dask's scratch space (/tmp/dask-scratch-space by default, never removed) in
        # the suite's own directory, for this process and the schedulers and workers
        mp.setenv("DASK_TEMPORARY_DIRECTORY", str(tmp_path_factory.mktemp("dask")))
        if "dask" in sys.modules:
            sys.modules["dask"].config.refresh()
        yield home
    remove_server_datadirs(tmp_path_factory.getbasetemp())


# Accounts the server fixture creates (test-only secrets, on a throwaway server).
PW_USER = "advisor_pw"
PW_USER_PASSWORD = "Corr3ct-h0rse-batt3ry"
NOPRIV_USER = "advisor_usage"
NOPRIV_PASSWORD = "usage-0nly-pw"


def _no_server_binaries(reason: str):
    msg = f"NO MARIADB/MYSQL SERVER BINARIES: {reason} — real-server tests not run"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(msg + " (CI=true: the server is required)", pytrace=False)
    pytest.skip(msg)


@pytest.fixture(scope="session")
def server_binaries():
    try:
        return find_binaries()
    except ServerError as exc:
        _no_server_binaries(str(exc))


def assert_stopped(pid: int | None, port: int | None) -> None:
    if pid is not None:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    if port is not None:
        assert not is_listening(port), f"something still listens on port {port}"


@contextlib.contextmanager
def running_server(workdir, options: ServerOptions | None = None, **server_kw):
    """A started LocalServer; stopped (and checked stopped) on exit, whatever happens.
    server_kw: more LocalServer arguments (datadir_from=...)."""
    srv = LocalServer(workdir, options or ServerOptions(innodb_buffer_pool_size="64M"),
                      **server_kw)
    try:
        srv.start()
        pid, port = srv.pid, srv.port
        yield srv
    finally:
        pid, port = srv.pid, srv.port
        srv.stop()
        assert_stopped(pid, port)


@pytest.fixture(scope="session")
def mariadb_server(server_binaries, tmp_path_factory):
    """One real server for the session: O_DIRECT, trx_commit=1, binlog off; two accounts."""
    opts = ServerOptions(innodb_flush_method="O_DIRECT", innodb_flush_log_at_trx_commit=1,
                         innodb_buffer_pool_size="64M")
    with running_server(tmp_path_factory.mktemp("mariadb"), opts) as srv:
        conn = srv.connect()
        with conn.cursor() as cur:
            for user, pw in ((PW_USER, PW_USER_PASSWORD), (NOPRIV_USER, NOPRIV_PASSWORD)):
                cur.execute(f"CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY %s", (pw,))
                cur.execute(f"CREATE USER '{user}'@'localhost' IDENTIFIED BY %s", (pw,))
            # PROCESS-like reads need nothing special; only the replica status needs a grant
            cur.execute(f"GRANT SELECT ON *.* TO '{PW_USER}'@'127.0.0.1'")
        conn.close()
        yield srv


class InsertLoad:
    """Threads doing autocommit INSERTs into a table with a secondary index, until stopped."""

    def __init__(self, server: LocalServer, threads: int = 2, database: str | None = None,
                 pad_bytes: int = 100):
        self.server = server
        self.threads = threads
        self.database = database or f"load_{os.getpid()}_{random.randrange(1 << 30)}"
        self.pad_bytes = pad_bytes
        self.stop_event = threading.Event()
        self.counts = [0] * threads
        self.errors: list[BaseException] = []
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> InsertLoad:
        conn = self.server.connect()
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE IF NOT EXISTS `{self.database}`")
            cur.execute(f"CREATE TABLE IF NOT EXISTS `{self.database}`.t ("
                        "id BIGINT AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL, "
                        "pad VARCHAR(8000) NOT NULL, KEY k (k)) ENGINE=InnoDB")
        conn.close()
        for i in range(self.threads):
            t = threading.Thread(target=self._work, args=(i,), daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def _work(self, i: int) -> None:
        rng = random.Random(i)
        try:
            conn = self.server.connect()
            sql = f"INSERT INTO `{self.database}`.t (k, pad) VALUES (%s, REPEAT('x', %s))"
            with conn.cursor() as cur:
                while not self.stop_event.is_set():
                    cur.execute(sql, (rng.randrange(1_000_000), self.pad_bytes))
                    self.counts[i] += 1
            conn.close()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.errors.append(exc)

    def wait_started(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while sum(self.counts) == 0 and time.monotonic() < deadline and not self.errors:
            time.sleep(0.05)
        assert not self.errors, f"workload failed: {self.errors[0]!r}"
        assert sum(self.counts) > 0, "workload did not start"

    def __exit__(self, *exc) -> None:
        self.stop_event.set()
        for t in self._threads:
            t.join(timeout=30)
        assert not self.errors, f"workload failed: {self.errors[0]!r}"


@pytest.fixture(scope="session")
def insert_load():
    """The InsertLoad class (a fixture, so test modules need not import conftest)."""
    return InsertLoad


@pytest.fixture(scope="session")
def server_stopped_check():
    """assert_stopped(pid, port): the process is gone and nothing listens on the port."""
    return assert_stopped


@pytest.fixture(scope="session")
def start_server(server_binaries):
    """running_server(workdir, options): a context manager giving a started server."""
    return running_server


# ---- advisor fixtures: captured variable/status sets and device profiles ---------------

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


@pytest.fixture(scope="session")
def load_fixture():
    """load_fixture('mysql-8.0') -> the dict of tests/fixtures/mysql-8.0.json."""
    import json

    def load(name: str) -> dict:
        with open(os.path.join(FIXTURES, f"{name}.json"), encoding="utf-8") as f:
            return json.load(f)
    return load


def _dist(p50_ns: float) -> dict:
    return {"count": 1000, "mean_ns": p50_ns * 1.1, "min_ns": p50_ns * 0.6, "p50_ns": p50_ns,
            "p90_ns": p50_ns * 1.5, "p99_ns": p50_ns * 3, "max_ns": p50_ns * 6}


def make_profile_dict(name: str, fsync_ns: float, fdatasync_ns: float, verdict: str,
                      safe, plp: str, filesystem: str = "ext4") -> dict:
    """A small but complete device profile (innoflush.device-profile/1) for tests."""
    tests = []
    for op, sync in (("none", None), ("fsync", fsync_ns), ("fdatasync", fdatasync_ns)):
        for size, write_ns in ((16384, 20_000), (2 * 1024 * 1024, 900_000)):
            t = {"op": op, "write_bytes": size, "direct": True, "jobs": 1,
                 "write": _dist(write_ns), "source": "measured"}
            if sync is not None:
                t["sync"] = _dist(sync * (1 if size == 16384 else 2))
            tests.append(t)
    return {"schema": "innoflush.device-profile/1", "name": name, "title": f"test {name}",
            "provenance": {"kind": "derived", "source": "tests/conftest.py"},
            "device": {"class": "test NVMe", "plp": plp, "filesystem": filesystem},
            "plp_verdict": {"verdict": verdict, "o_direct_no_fsync_safe": safe,
                            "reasons": [f"test profile: fsync {fsync_ns / 1e3:.0f} µs"]},
            "tests": tests}


@pytest.fixture(scope="session")
def profile_files(tmp_path_factory):
    """Paths of test device profiles: 'volatile' (consumer, 2.9 ms fsync), 'plp'
    (enterprise, 40 µs fsync, fdatasync 25 µs), 'unknown' (no verdict), 'very-slow'
    (250 ms syncs: no disk here)."""
    import json

    d = tmp_path_factory.mktemp("profiles")
    specs = {
        "volatile": make_profile_dict("test-volatile", 2_900_000, 2_800_000, "volatile-cache",
                                      False, "no"),
        "plp": make_profile_dict("test-plp", 40_000, 25_000,
                                 "non-volatile-cache-or-flush-ignored", True, "yes"),
        "unknown": make_profile_dict("test-unknown", 800_000, 790_000, "unknown", None,
                                     "unknown"),
        # slower than any disk this suite runs on, even one shared with a CI run: more
        # than the fit's SCALE_LIMIT (5) from what a server here waits on a commit
        "very-slow": make_profile_dict("test-very-slow", 250_000_000, 250_000_000,
                                       "volatile-cache", False, "no"),
    }
    out = {}
    for key, spec in specs.items():
        path = d / f"{spec['name']}.json"
        path.write_text(json.dumps(spec), encoding="utf-8")
        out[key] = str(path)
    return out


@pytest.fixture(scope="module")
def volatile_server(server_binaries, tmp_path_factory, profile_files):
    """A real server whose syncs take the 'volatile' test profile's time (2.9 ms: the
    lab's device emulation, a preloaded library): advise predicts only where the profile
    it is given is the server's storage, and this one is."""
    from innoflush.lab.emulation.emulate import build_library, preload_env
    from innoflush.profiles import load_profile

    d = tmp_path_factory.mktemp("volatile")
    env = preload_env(load_profile(profile_files["volatile"]), build_library(d / "lib"))
    opts = ServerOptions(innodb_flush_method="O_DIRECT", innodb_flush_log_at_trx_commit=1,
                         innodb_buffer_pool_size="64M")
    srv = LocalServer(d / "server", opts, env=env)
    try:
        srv.start()
        yield srv
    finally:
        pid, port = srv.pid, srv.port
        srv.stop()
        assert_stopped(pid, port)


@pytest.fixture(scope="session")
def server_accounts():
    """The accounts mariadb_server creates: {'password': (user, pw), 'usage': (user, pw)}."""
    return {"password": (PW_USER, PW_USER_PASSWORD), "usage": (NOPRIV_USER, NOPRIV_PASSWORD)}


# ---- Docker fixtures: a real engine and the lab's image --------------------------------

# The image the Docker tests run: the offline MariaDB image `make docker-ready` builds
# (docker/build-offline-image.sh), or another with the same contract (mysql:8.4 ...).
DOCKER_TEST_IMAGE = os.environ.get("INNOFLUSH_TEST_DOCKER_IMAGE") or OFFLINE_IMAGE


def _no_docker(reason: str):
    msg = (f"NO DOCKER FOR THE LAB: {reason} — Docker tests not run "
           "(`make docker-ready` starts the engine and builds the image)")
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(msg + " (CI=true: Docker is required)", pytrace=False)
    pytest.skip(msg)


@pytest.fixture(scope="session")
def docker_engine():
    """A Docker SDK client of a running engine (skip loudly without one; fail under CI)."""
    try:
        client = docker_client()
    except DockerServerError as exc:
        _no_docker(str(exc))
    yield client
    client.close()


@pytest.fixture(scope="session")
def docker_image(docker_engine):
    """The name of the image the Docker tests run, present on the engine."""
    try:
        get_image(docker_engine, DOCKER_TEST_IMAGE)
    except DockerServerError as exc:
        _no_docker(str(exc))
    return DOCKER_TEST_IMAGE


@pytest.fixture(scope="session")
def docker_stopped_check(docker_engine):
    """check(server): its container is gone (by id and by its workdir's label) and nothing
    listens on its port any more."""
    import docker

    def check(server) -> None:
        if server.container_id is not None:
            with pytest.raises(docker.errors.NotFound):
                docker_engine.containers.get(server.container_id)
        left = docker_engine.containers.list(
            all=True, filters={"label": f"{LABEL}.workdir={server.workdir}"})
        assert not left, f"containers left behind: {[c.name for c in left]}"
        if server.port is not None:
            assert not is_listening(server.port), f"something still listens on {server.port}"
    return check


@pytest.fixture
def fake_clock(monkeypatch):
    """The sampling loop's clock and sleep, driven by the test (no real waiting)."""
    from innoflush.live import sampling

    now = [100.0]
    monkeypatch.setattr(sampling, "CLOCK", lambda: now[0])

    def sleep(s):
        now[0] += s
    monkeypatch.setattr(sampling, "SLEEP", sleep)
    return now


# ---- the servers users run: MySQL 9.7 LTS and MariaDB 11.8 LTS, each in its Debian root --

def _no_server_root(name: str, reason: str):
    msg = (f"NO {name.upper()} SERVER ROOT: {reason} — its real-server tests not run "
           "(`make server-roots` builds it from Debian's packages, as root)")
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(msg + " (CI=true: the server is required)", pytrace=False)
    pytest.skip(msg)


def _server_root(name: str) -> str:
    from innoflush.errors import UsageError
    from innoflush.lab.server.server_root import ServerRoot

    root = ServerRoot(name)
    try:
        root.check()
    except UsageError as exc:
        _no_server_root(name, str(exc))
    return str(root.path)


@pytest.fixture(scope="session")
def mysql97_root():
    """The Debian sid root holding MySQL 9.7 (LocalServer(server_root=...))."""
    return _server_root("mysql-9.7")


@pytest.fixture(scope="session")
def mariadb118_root():
    """The Debian 13 root holding MariaDB 11.8 (LocalServer(server_root=...))."""
    return _server_root("mariadb-11.8")


@pytest.fixture(scope="session", params=["mysql-9.7", "mariadb-11.8"])
def lts_root(request):
    """Each of the two LTS servers' roots in turn: (name, root path)."""
    return request.param, _server_root(request.param)


def _with_accounts(srv) -> None:
    """The accounts mariadb_server has (server_accounts), on another server."""
    conn = srv.connect()
    with conn.cursor() as cur:
        for user, pw in ((PW_USER, PW_USER_PASSWORD), (NOPRIV_USER, NOPRIV_PASSWORD)):
            for host in ("127.0.0.1", "localhost"):
                cur.execute(f"CREATE USER '{user}'@'{host}' IDENTIFIED BY %s", (pw,))
        cur.execute(f"GRANT SELECT ON *.* TO '{PW_USER}'@'127.0.0.1'")
    conn.close()


@pytest.fixture(scope="session")
def mysql97_server(mysql97_root, tmp_path_factory):
    """A real MySQL 9.7 for the session (O_DIRECT, trx_commit=1, binlog off), with the
    accounts of server_accounts."""
    opts = ServerOptions(innodb_flush_method="O_DIRECT", innodb_flush_log_at_trx_commit=1,
                         innodb_buffer_pool_size="64M")
    with running_server(tmp_path_factory.mktemp("mysql97"), opts,
                        server_root=mysql97_root) as srv:
        _with_accounts(srv)
        yield srv


@pytest.fixture(scope="session")
def mariadb118_server(mariadb118_root, tmp_path_factory):
    """A real MariaDB 11.8 for the session (its defaults, trx_commit=1, binlog off), with
    the accounts of server_accounts."""
    opts = ServerOptions(innodb_flush_log_at_trx_commit=1, innodb_buffer_pool_size="64M")
    with running_server(tmp_path_factory.mktemp("mariadb118"), opts,
                        server_root=mariadb118_root) as srv:
        _with_accounts(srv)
        yield srv
