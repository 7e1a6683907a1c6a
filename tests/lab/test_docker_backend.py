"""DockerServer against a real Docker engine: start, read the settings back, write, stop,
leave nothing — and each way it can go wrong, with a clear one-line error.

The image is the offline MariaDB image (`make docker-ready` builds it), or the one named by
INNOFLUSH_TEST_DOCKER_IMAGE. Without an engine or the image these tests skip loudly, and
fail under CI=true.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from innoflush.errors import InnoflushError
from innoflush.lab.server.docker_backend import DockerServer, container_args
from innoflush.lab.server.docker_engine import (
    LABEL,
    LABEL_VALUE,
    OFFLINE_IMAGE,
    DockerEngineError,
    DockerServerError,
    ImageNotFoundError,
    image_facts,
    lab_containers,
    remove_lab_containers,
)
from innoflush.lab.server.local import ServerOptions, free_port, is_listening

SMALL = "32M"   # buffer pool: keeps each start quick


def _read(srv, sql):
    conn = srv.connect()
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return cur.fetchall()
    finally:
        conn.close()


# ---- a real server in a container ------------------------------------------------------

@pytest.mark.docker
@pytest.mark.parametrize("method,trx_commit,log_bin", [
    ("O_DIRECT", 1, True),
    ("O_DIRECT_NO_FSYNC", 2, False),
])
def test_flush_method_read_back_insert_and_leave_nothing(
        docker_image, docker_engine, docker_stopped_check, tmp_path, method, trx_commit,
        log_bin):
    storage = tmp_path / "measured-storage"        # what --datadir-on would give
    opts = ServerOptions(innodb_flush_method=method, innodb_flush_log_at_trx_commit=trx_commit,
                         log_bin=log_bin, sync_binlog=1 if log_bin else None,
                         innodb_buffer_pool_size=SMALL)
    srv = DockerServer(storage / "server", opts, image=docker_image,
                       environment={"MYSQL_DATABASE": "lab"})
    with srv:
        assert srv.is_running()
        assert srv.datadir == storage / "server" / "data"
        # the server's files are on the storage we gave, while it runs
        names = {p.name for p in srv.datadir.iterdir()}
        assert {"ibdata1", "mysql"} <= names, names
        assert any(n.startswith("ib_logfile") or n == "#innodb_redo" for n in names), names
        if log_bin:
            assert any(n.startswith("binlog.") for n in names), names

        row = _read(srv, "SELECT VERSION(), @@innodb_flush_method, "
                         "@@innodb_flush_log_at_trx_commit, @@log_bin, @@bind_address, "
                         "@@port, @@datadir")[0]
        version, got_method, got_trx, got_log_bin, bind, port, datadir = row
        assert got_method == method
        assert int(got_trx) == trx_commit
        assert int(got_log_bin) == int(log_bin)
        assert bind == "127.0.0.1" and int(port) == srv.port
        assert datadir.rstrip("/") == "/var/lib/mysql"
        assert srv.flavor == ("mariadb" if "mariadb" in version.lower() else "mysql")
        assert srv.version and srv.version[0] >= 5

        # the host PID of the server, for CPU accounting
        pid = srv.server_pid()
        assert pid and pid == srv.pid
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
        assert comm in ("mariadbd", "mysqld"), comm

        # MYSQL_DATABASE made a database (the images' contract); a few commits
        conn = srv.connect(database="lab")
        with conn.cursor() as cur:
            cur.execute("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, k INT, "
                        "pad VARCHAR(200), KEY k (k)) ENGINE=InnoDB")
            for i in range(50):
                cur.execute("INSERT INTO t (k, pad) VALUES (%s, REPEAT('x', 100))", (i,))
            cur.execute("SELECT COUNT(*) FROM t")
            assert cur.fetchone()[0] == 50
            cur.execute("SHOW GLOBAL STATUS LIKE 'Innodb_data_fsyncs'")
            assert int(cur.fetchone()[1]) > 0
        conn.close()

        c = docker_engine.containers.get(srv.container_id)
        assert c.labels[LABEL] == LABEL_VALUE
        assert c.attrs["HostConfig"]["NetworkMode"] == "host"
        password = srv.root_password
        assert password not in repr(srv)

    assert not srv.is_running() and srv.server_pid() is None
    docker_stopped_check(srv)
    # the datadir stays (not asked to remove it), with the server's log beside it
    assert (srv.datadir / "ibdata1").exists()
    log = srv.error_log.read_text()
    assert "ready for connections" in log
    assert password not in log
    srv.stop()                                     # idempotent
    with pytest.raises(DockerServerError, match="not running"):
        srv.connect()


@pytest.mark.docker
def test_ctrl_c_in_the_block_stops_and_removes(docker_image, docker_stopped_check, tmp_path):
    srv = DockerServer(tmp_path / "w", ServerOptions(innodb_buffer_pool_size=SMALL),
                       image=docker_image, remove_on_stop=True)
    with pytest.raises(KeyboardInterrupt):
        with srv:
            port = srv.port
            assert is_listening(port)
            assert any(srv.datadir.iterdir())
            raise KeyboardInterrupt
    docker_stopped_check(srv)
    # remove_on_stop: the workdir is gone, files the container's user wrote included
    assert not (tmp_path / "w").exists()


@pytest.mark.docker
@pytest.mark.parametrize("delay_s", [0.1, 1.0])
def test_ctrl_c_during_start(docker_image, docker_stopped_check, tmp_path, delay_s):
    # a real SIGINT, early (creating the container) and later (waiting for the server)
    srv = DockerServer(tmp_path / "w", ServerOptions(innodb_buffer_pool_size=SMALL),
                       image=docker_image)
    timer = threading.Timer(delay_s, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        timer.start()
        try:
            srv.start()
            time.sleep(30)   # not reached unless the server was faster than the timer
        finally:
            timer.join()
    assert time.monotonic() - t0 < 20      # killed, not a clean shutdown's wait
    assert srv.container is None
    docker_stopped_check(srv)


@pytest.mark.docker
def test_datadir_owned_by_the_container_user(docker_image, docker_stopped_check, tmp_path):
    # how a non-root caller runs (user = its uid:gid): the files stay the caller's
    uid = gid = 4321
    data = tmp_path / "w" / "data"
    data.mkdir(parents=True)
    if os.geteuid() == 0:
        os.chown(data, uid, gid)
    else:
        uid, gid = os.getuid(), os.getgid()
    srv = DockerServer(tmp_path / "w", ServerOptions(innodb_buffer_pool_size=SMALL),
                       image=docker_image, user=f"{uid}:{gid}")
    with srv:
        assert os.stat(srv.datadir / "ibdata1").st_uid == uid
        assert os.stat(f"/proc/{srv.server_pid()}").st_uid == uid
    docker_stopped_check(srv)


# ---- errors: one clear line, nothing left behind -----------------------------------------

@pytest.mark.docker
def test_bad_option_fails_with_the_log_tail(docker_image, docker_stopped_check, tmp_path):
    srv = DockerServer(tmp_path / "w", ServerOptions(innodb_flush_method="bogus",
                                                     innodb_buffer_pool_size=SMALL),
                       image=docker_image)
    t0 = time.monotonic()
    with pytest.raises(DockerServerError) as info:
        srv.start()
    msg = str(info.value)
    assert "exited" in msg or "did not accept" in msg
    assert "bogus" in msg                     # the server's own complaint, from its log
    assert "\n" not in msg
    assert time.monotonic() - t0 < 60
    assert not srv.is_running()
    docker_stopped_check(srv)


@pytest.mark.docker
def test_image_missing(docker_engine, tmp_path):
    image = "innoflush-test/no-such-image:0"
    with pytest.raises(ImageNotFoundError) as info:
        DockerServer(tmp_path / "w", image=image).start()
    msg = str(info.value)
    assert image in msg and f"docker pull {image}" in msg
    assert "build-offline-image.sh" in msg and "\n" not in msg
    assert not (tmp_path / "w").exists()        # nothing created
    # the offline image: how to build it
    with pytest.raises(ImageNotFoundError, match="build-offline-image.sh"):
        DockerServer(tmp_path / "w", image="innoflush/mariadb:no-such-tag").start()
    assert isinstance(info.value, InnoflushError)


def test_engine_unreachable(monkeypatch, tmp_path):
    # no socket at all
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")
    with pytest.raises(DockerEngineError) as info:
        DockerServer(tmp_path / "w", image=OFFLINE_IMAGE).start()
    msg = str(info.value)
    assert "cannot reach the Docker engine" in msg and "no-docker.sock" in msg
    assert "docker-engine.sh start" in msg and "\n" not in msg
    # a dead socket: the file is there, nobody answers
    path = tmp_path / "dead.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.bind(str(path))
        monkeypatch.setenv("DOCKER_HOST", f"unix://{path}")
        with pytest.raises(DockerEngineError, match="connection refused"):
            DockerServer(tmp_path / "w", image=OFFLINE_IMAGE).start()
    assert not (tmp_path / "w").exists()


@pytest.mark.docker
def test_port_in_use(docker_image, docker_stopped_check, tmp_path):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        srv = DockerServer(tmp_path / "w", image=docker_image, port=port)
        with pytest.raises(DockerServerError, match=f"port {port} .*in use"):
            srv.start()
    docker_stopped_check(srv)


@pytest.mark.docker
def test_port_taken_after_it_was_chosen(docker_image, docker_stopped_check, tmp_path,
                                        monkeypatch):
    # the race a free port can lose: someone binds it before the server does. The server
    # fails to bind, and start() tries again on another port, with a fresh datadir.
    import innoflush.lab.server.docker_backend as backend

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        taken = s.getsockname()[1]
        ports = iter([taken])
        monkeypatch.setattr(backend, "free_port", lambda host: next(ports, None) or free_port())
        with DockerServer(tmp_path / "w", ServerOptions(innodb_buffer_pool_size=SMALL),
                          image=docker_image) as srv:
            assert srv.port != taken
            assert _read(srv, "SELECT @@port")[0][0] == srv.port
    docker_stopped_check(srv)


@pytest.mark.docker
def test_datadir_not_writable(docker_image, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    mounted = False
    if os.geteuid() == 0:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(ro)],
                       check=True)
        mounted = True
    else:
        ro.chmod(0o555)
    try:
        with pytest.raises(DockerServerError) as info:
            DockerServer(ro / "w", image=docker_image).start()
        msg = str(info.value)
        assert "not writable" in msg and str(ro / "w" / "data") in msg and "\n" not in msg
    finally:
        if mounted:
            subprocess.run(["umount", str(ro)], check=True)
        else:
            ro.chmod(0o755)


@pytest.mark.docker
def test_remove_leftover_lab_containers(docker_engine, docker_image):
    dead = subprocess.Popen(["true"])
    dead.wait()                                   # a pid that no longer runs
    made = []
    try:
        for owner in (dead.pid, os.getpid()):
            made.append(docker_engine.containers.create(
                docker_image, command=["--version"], name=f"innoflush-lab-test-{owner}",
                labels={LABEL: LABEL_VALUE, f"{LABEL}.pid": str(owner)}))
        assert {c.id for c in made} <= {c.id for c in lab_containers(docker_engine)}
        removed = remove_lab_containers(docker_engine)      # orphans only
        assert f"innoflush-lab-test-{dead.pid}" in removed
        assert f"innoflush-lab-test-{os.getpid()}" not in removed
        ids = {c.id for c in lab_containers(docker_engine)}
        assert made[0].id not in ids and made[1].id in ids
    finally:
        for c in made:
            try:
                c.remove(v=True, force=True)
            except Exception:  # noqa: BLE001 - already removed
                pass


# ---- the offline image keeps the official images' contract --------------------------------

@pytest.mark.docker
def test_offline_image_contract(docker_engine, docker_image, tmp_path):
    import docker
    import pymysql

    if docker_image != OFFLINE_IMAGE:
        pytest.skip(f"checks the offline image; the tests run {docker_image}")
    # no password option: refuses to initialise, says why
    with pytest.raises(docker.errors.ContainerError) as info:
        docker_engine.containers.run(docker_image, remove=True, network_mode="host",
                                     command=["--port=1"], labels={LABEL: LABEL_VALUE})
    assert info.value.exit_status == 1
    assert b"no password option is given" in info.value.stderr
    # empty root password allowed, a database and a user of it
    port = free_port()
    data = tmp_path / "data"
    data.mkdir()
    c = docker_engine.containers.run(
        docker_image, command=[f"--port={port}", "--bind-address=127.0.0.1"], detach=True,
        network_mode="host", labels={LABEL: LABEL_VALUE},
        volumes={str(data): {"bind": "/var/lib/mysql", "mode": "rw"}},
        environment={"MARIADB_ALLOW_EMPTY_ROOT_PASSWORD": "1", "MYSQL_DATABASE": "app",
                     "MARIADB_USER": "app", "MARIADB_PASSWORD": "app-pw"})
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                conn = pymysql.connect(host="127.0.0.1", port=port, user="app",
                                       password="app-pw", database="app")
                break
            except pymysql.err.MySQLError:
                c.reload()
                assert c.status == "running", c.logs()[-2000:]
                assert time.monotonic() < deadline, c.logs()[-2000:]
                time.sleep(0.2)
        conn.close()
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="")
        with conn.cursor() as cur:
            cur.execute("SELECT user, host FROM mysql.user WHERE user IN ('', 'root') "
                        "ORDER BY host")
            assert cur.fetchall() == (("root", "%"), ("root", "localhost"))
        conn.close()
        assert os.stat(data / "mysql").st_uid == (999 if os.geteuid() == 0 else os.getuid())
    finally:
        c.remove(v=True, force=True)


# ---- pure logic ---------------------------------------------------------------------------

class _Image:
    def __init__(self, env, tags=()):
        self.attrs = {"Config": {"Env": env}}
        self.tags = list(tags)


@pytest.mark.parametrize("env,image,expected", [
    (["MARIADB_VERSION=1:11.4.5+maria~ubu2404"], "mariadb:11.4", ("mariadb", (11, 4, 5))),
    (["MARIADB_VERSION=1:10.11.19-0+deb12u1"], OFFLINE_IMAGE, ("mariadb", (10, 11, 19))),
    (["MYSQL_MAJOR=8.4", "MYSQL_VERSION=8.4.3-1.el9"], "mysql:8.4", ("mysql", (8, 4, 3))),
    (["MYSQL_VERSION=8.0.40-1.el9"], "mysql:8.0", ("mysql", (8, 0, 40))),
    ([], "registry.example/mariadb:10.6", ("mariadb", (10, 6))),
    ([], "percona/percona-server:8.0", ("mysql", (8, 0))),
])
def test_image_facts(env, image, expected):
    assert image_facts(_Image(env), image) == expected


def test_container_args():
    opts = ServerOptions(innodb_flush_method="O_DIRECT", log_bin=True, sync_binlog=1,
                         extra={"innodb_doublewrite": "OFF"})
    args = container_args(opts, "mysql", (8, 4, 3), 40001)
    assert args[:3] == ["--port=40001", "--bind-address=127.0.0.1", "--mysqlx=OFF"]
    assert "--log-bin=/var/lib/mysql/binlog" in args and "--server-id=1" in args
    assert "--innodb-flush-method=O_DIRECT" in args and "--innodb-doublewrite=OFF" in args
    args = container_args(ServerOptions(), "mysql", (8, 0, 40), 40002)
    assert "--skip-log-bin" in args            # MySQL 8 has the binlog on by default
    args = container_args(ServerOptions(), "mariadb", (10, 11, 19), 40003)
    assert "--mysqlx=OFF" not in args and "--skip-log-bin" not in args
