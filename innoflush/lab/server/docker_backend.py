"""A MySQL or MariaDB server in a Docker container, its datadir on storage the user chose.

``DockerServer`` runs an image with the official images' contract — the official
``mysql:8.4`` (the default), ``mysql:8.0``, ``mariadb:11.4``, ``mariadb:10.11``, or the
offline MariaDB image that docker/build-offline-image.sh builds from Debian's packages
(``innoflush/mariadb:10.11-offline``, what the tests use) — through the Docker SDK:

    with DockerServer(workdir, ServerOptions(innodb_flush_method="O_DIRECT")) as srv:
        conn = srv.connect()        # PyMySQL, as root, with the server's own password

- The datadir is ``workdir/data`` on the host, bind-mounted at /var/lib/mysql, so the
  server writes to the storage being measured (the lab's ``--datadir-on PATH``); a binary
  log (``ServerOptions.log_bin``) goes into it too.
- The container uses the host's network and the server binds 127.0.0.1 on a free port
  (no bridge, NAT or port mapping in the measured path); ``server_pid()`` is the host PID
  of mysqld/mariadbd, for its CPU time.
- Each server gets a random root password, kept in memory only (``root_password``, used by
  ``connect()``): never printed, logged or written.
- ``stop()`` stops the container (SIGTERM: a clean InnoDB shutdown) and removes it with its
  anonymous volumes — always: it is a context manager, and stop() runs on failure and on
  Ctrl-C too. The server's log is kept as ``workdir/server.log`` (or the whole workdir is
  removed with ``remove_on_stop``). Containers carry the label ``innoflush=lab``;
  ``remove_lab_containers()`` (lab/server/docker_engine.py, with the engine's client and
  its images) removes any a killed process left behind.

Run as root, the image's entrypoint gives the datadir to its mysql user (uid 999); run as
another user, the container runs with that user's uid and gid, so the datadir's files stay
the caller's and removing them needs no root.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import ssl
import time
from pathlib import Path, PurePosixPath

import docker
import pymysql

from .ctrl_c import StartInterrupts
from .docker_engine import (
    DEFAULT_IMAGE,
    LABEL,
    LABEL_VALUE,
    DockerEngineError,
    DockerServerError,
    docker_client,
    engine_address,
    engine_reason,
    get_image,
    image_facts,
    parse_version,
)
from .local import ServerOptions, free_port, port_in_use

CONTAINER_DATADIR = PurePosixPath("/var/lib/mysql")


def _tail_text(text: str, lines: int) -> str:
    rows = [r.strip() for r in text.splitlines() if r.strip()]
    return " | ".join(rows[-lines:]) if rows else "(the container printed nothing)"


def container_args(options: ServerOptions, flavor: str, version: tuple[int, ...], port: int,
                   host: str = "127.0.0.1") -> list[str]:
    """The server's arguments in a container on the host's network: its own port on host,
    no X protocol port (MySQL 8 would want 33060 in every container), the binlog
    (``log_bin``) in the datadir as /var/lib/mysql/binlog.*, then ``options``."""
    args = [f"--port={port}", f"--bind-address={host}"]
    if flavor == "mysql" and version >= (8, 0):
        args.append("--mysqlx=OFF")
    args += options.args(flavor, version, CONTAINER_DATADIR)
    return args


class DockerServer:
    """One server container on a fresh datadir under ``workdir``; stop() is idempotent."""

    HOST = "127.0.0.1"

    def __init__(self, workdir: str | os.PathLike, options: ServerOptions | None = None,
                 image: str = DEFAULT_IMAGE, port: int | None = None,
                 start_timeout_s: float = 180.0, stop_timeout_s: float = 60.0,
                 remove_on_stop: bool = False, pull: bool = False,
                 environment: dict[str, str] | None = None, user: str | None = None,
                 volumes: dict[str, dict] | None = None):
        self.workdir = Path(workdir).absolute()
        self.options = options or ServerOptions()
        self.image = image
        self.requested_port = port
        self.port: int | None = port
        self.start_timeout_s = start_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self.remove_on_stop = remove_on_stop
        self.pull = pull
        self.environment = dict(environment or {})   # more of the image's variables
        # more bind mounts, {host path: {"bind": container path, "mode": "ro"|"rw"}}
        # (the device emulation's library and log directory, lab/emulation/emulate.py)
        self.volumes = dict(volumes or {})
        # the container's user: the caller's uid:gid unless root (see the module's doc)
        self.user = user if user is not None else (
            None if os.geteuid() == 0 else f"{os.getuid()}:{os.getgid()}")
        self.datadir = self.workdir / "data"
        self.error_log = self.workdir / "server.log"   # the container's log, kept at stop
        self.name = f"innoflush-lab-{secrets.token_hex(6)}"
        self.root_password = secrets.token_urlsafe(24)
        self.container = None
        self.container_id: str | None = None
        self._client = None
        self._pid: int | None = None
        self._flavor = "unknown"
        self._version: tuple[int, ...] = ()
        self._server_version_text = ""
        self._last_log = ""
        self._use_tls = False
        self._ready = False          # the server accepted a connection

    # ---- facts ---------------------------------------------------------------------
    @property
    def flavor(self) -> str:
        return self._flavor

    @property
    def version(self) -> tuple[int, ...]:
        return self._version

    @property
    def version_text(self) -> str:
        return self._server_version_text

    @property
    def pid(self) -> int | None:
        return self._pid if self.container is not None else None

    def is_running(self) -> bool:
        if self.container is None:
            return False
        try:
            self.container.reload()
        except Exception:  # noqa: BLE001 - gone, or the engine is: not running for us
            return False
        return self.container.status == "running"

    def server_pid(self) -> int | None:
        """Host PID of the server process (the container's main process), None when
        stopped."""
        if self.container is None:
            return None
        try:
            self.container.reload()
        except Exception:  # noqa: BLE001
            return None
        state = self.container.attrs.get("State") or {}
        pid = state.get("Pid") or None
        return pid if state.get("Running") else None

    def __repr__(self) -> str:
        state = f"port {self.port}" if self.container is not None else "stopped"
        return f"<DockerServer {self.image} {self.name} {self.workdir} {state}>"

    # ---- set up ----------------------------------------------------------------------
    def _prepare_dir(self) -> None:
        try:
            self.datadir.mkdir(parents=True, exist_ok=True)
            probe = self.datadir / ".innoflush-write-test"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            raise DockerServerError(
                f"datadir {self.datadir} is not writable: {exc.strerror or exc}: give a "
                "writable directory on the storage to test (--datadir-on)") from None
        if any(self.datadir.iterdir()):
            raise DockerServerError(f"datadir {self.datadir} already exists and is not "
                                    "empty: give an empty work directory")

    def server_args(self) -> list[str]:
        """The arguments the image's entrypoint passes to the server."""
        assert self.port is not None
        return container_args(self.options, self._flavor, self._version, self.port,
                              self.HOST)

    def _environment(self) -> dict[str, str]:
        env = {"MYSQL_ROOT_PASSWORD": self.root_password,
               "MARIADB_ROOT_PASSWORD": self.root_password}
        env.update(self.environment)
        return env

    def start(self) -> DockerServer:
        """Create and start the container; returns when the server accepts connections."""
        if self.container is not None and self.is_running():
            return self
        client = self._client = docker_client()
        image_obj = get_image(client, self.image, self.pull)
        self._flavor, self._version = image_facts(image_obj, self.image)
        self._prepare_dir()
        if self.requested_port is not None and port_in_use(self.requested_port, self.HOST):
            raise DockerServerError(f"port {self.requested_port} on {self.HOST} is in use: "
                                    "choose another port or leave it out to get a free one")
        with StartInterrupts() as interrupts:
            try:
                self._start_attempts(client, interrupts)
            except BaseException:
                self.stop()
                raise
        return self

    def _start_attempts(self, client, interrupts: StartInterrupts) -> None:
        attempts = 1 if self.requested_port is not None else 3
        for attempt in range(attempts):
            if self.requested_port is None:
                self.port = free_port(self.HOST)
            try:
                self._launch(client, interrupts)
                self._wait_ready(interrupts)
                interrupts.check()
                return
            except DockerServerError:
                log = self.error_log_tail(40).lower()
                in_use = "already in use" in log or "bind on tcp/ip port" in log
                if not in_use or attempt == attempts - 1:
                    if in_use:
                        raise DockerServerError(
                            f"port {self.port} on {self.HOST} is in use (server log: "
                            f"{self.error_log_tail(5)})") from None
                    raise
                self._remove_container()
                for p in self.datadir.iterdir():   # a fresh datadir for the next try
                    shutil.rmtree(p) if p.is_dir() else p.unlink()

    def _launch(self, client, interrupts: StartInterrupts) -> None:
        labels = {LABEL: LABEL_VALUE, f"{LABEL}.workdir": str(self.workdir),
                  f"{LABEL}.port": str(self.port), f"{LABEL}.pid": str(os.getpid())}
        kwargs = {}
        if self.user is not None:
            kwargs["user"] = self.user
        try:
            # deferred: created and assigned in one piece, so stop() knows about it
            with interrupts.deferred():
                self.container = client.containers.run(
                    self.image, command=self.server_args(), environment=self._environment(),
                    network_mode="host", name=self.name, labels=labels, detach=True,
                    volumes={str(self.datadir): {"bind": str(CONTAINER_DATADIR),
                                                 "mode": "rw"}, **self.volumes},
                    **kwargs)
        except docker.errors.APIError as exc:
            raise DockerServerError(f"cannot start a container of {self.image}: "
                                    f"{exc.explanation or exc}") from None
        except docker.errors.DockerException as exc:
            raise DockerEngineError(f"the Docker engine at {engine_address()} failed while "
                                    f"starting {self.image}: {engine_reason(exc)}") from None
        self.container_id = self.container.id

    def _wait_ready(self, interrupts: StartInterrupts) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        last = ""
        while time.monotonic() < deadline:
            interrupts.check()
            try:
                self.container.reload()
            except Exception as exc:  # noqa: BLE001
                raise DockerServerError(f"container {self.name} vanished while the server "
                                        f"was starting: {exc}") from None
            if self.container.status in ("exited", "dead"):
                code = (self.container.attrs.get("State") or {}).get("ExitCode")
                raise DockerServerError(
                    f"the server in container {self.name} ({self.image}) exited with code "
                    f"{code} while starting: {self.error_log_tail()}")
            try:
                # read_timeout: whatever else may listen there must not hold us forever
                conn = self._connect_root(connect_timeout=2, read_timeout=2, write_timeout=2)
            except pymysql.err.MySQLError as exc:
                last = str(exc)
            else:
                try:
                    with conn.cursor() as cur:
                        cur.execute("SELECT VERSION()")
                        (text,) = cur.fetchone()
                finally:
                    conn.close()
                self._server_version_text = text
                self._flavor = "mariadb" if "mariadb" in text.lower() else "mysql"
                self._version = parse_version(text) or self._version
                self._pid = self.server_pid()
                self._ready = True
                return
            time.sleep(0.2)
        raise DockerServerError(f"the server in container {self.name} did not accept "
                                f"connections within {self.start_timeout_s:.0f} s ({last}): "
                                f"{self.error_log_tail()}")

    # ---- use -------------------------------------------------------------------------
    def _tls_context(self) -> ssl.SSLContext:
        # the server's self-signed certificate on 127.0.0.1: encryption, no verification
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx

    def _connect_root(self, **kw):
        return self._pymysql_connect("root", self.root_password, **kw)

    def _pymysql_connect(self, user: str, password: str, **kw):
        args = {"host": self.HOST, "port": self.port, "user": user, "password": password}
        args.update(kw)
        if self._use_tls and "ssl" not in kw:
            args["ssl"] = self._tls_context()
        try:
            return pymysql.connect(**args)
        except RuntimeError as exc:
            # MySQL 8's caching_sha2_password: its first login per account needs either
            # TLS or the 'cryptography' package (RSA). TLS it is; later logins use the
            # server's cache and need neither, but staying on TLS keeps it simple.
            if "cryptography" not in str(exc) or "ssl" in kw:
                raise
            self._use_tls = True
            args["ssl"] = self._tls_context()
            return pymysql.connect(**args)

    def connect(self, user: str = "root", password: str | None = None, **kw):
        """A PyMySQL connection (autocommit unless told); as root with the server's own
        password unless another user or password is given."""
        if self.container is None:
            raise DockerServerError("the server is not running")
        if password is None:
            password = self.root_password if user == "root" else ""
        kw.setdefault("autocommit", True)
        return self._pymysql_connect(user, password, **kw)

    def connection_args(self) -> dict:
        """host, port, user, password for pymysql.connect (e.g. in a worker process)."""
        args = {"host": self.HOST, "port": self.port, "user": "root",
                "password": self.root_password}
        if self._use_tls:
            args["ssl"] = {"verify_mode": "none"}
        return args

    def error_log_tail(self, lines: int = 15) -> str:
        if self.container is not None:
            with contextlib.suppress(Exception):
                text = self.container.logs(stdout=True, stderr=True, tail=max(lines, 200))
                return _tail_text(text.decode("utf-8", "replace"), lines)
        if self._last_log:
            return _tail_text(self._last_log, lines)
        return "(no server log)"

    # ---- stop ------------------------------------------------------------------------
    def _find_container(self):
        """Our container, also when start() was interrupted before it returned it."""
        if self.container is not None:
            return self.container
        if self._client is None:
            return None
        try:
            return self._client.containers.get(self.name)
        except docker.errors.NotFound:
            return None
        except docker.errors.DockerException:
            return None

    def _keep_log(self, container) -> None:
        with contextlib.suppress(Exception):
            text = container.logs(stdout=True, stderr=True).decode("utf-8", "replace")
            self._last_log = text
            if not self.remove_on_stop and self.workdir.is_dir():
                self.error_log.write_text(text, encoding="utf-8")

    def _remove_container(self) -> None:
        container = self._find_container()
        if container is None:
            self.container = None
            return
        try:
            with contextlib.suppress(docker.errors.NotFound):
                container.reload()
                if self._ready and container.status in ("running", "restarting", "paused"):
                    # SIGTERM: InnoDB shuts down cleanly; SIGKILL after the timeout. A
                    # server that never got ready (a failed or interrupted start) is
                    # simply killed below: its datadir is of no use.
                    container.stop(timeout=int(self.stop_timeout_s))
            self._keep_log(container)
        finally:
            try:
                container.remove(v=True, force=True)
            except docker.errors.NotFound:
                pass
            except docker.errors.DockerException as exc:
                raise DockerServerError(f"cannot remove container {self.name}: {exc} "
                                        f"(remove it with: docker rm -fv {self.name})") \
                    from None
            self.container = None
            self._pid = None
            self._ready = False

    def stop(self) -> None:
        """Stop and remove the container (and the workdir with remove_on_stop).
        Idempotent; a second Ctrl-C while waiting for the shutdown kills it instead."""
        try:
            self._remove_container()
        except KeyboardInterrupt:
            container = self._find_container()
            if container is not None:
                with contextlib.suppress(Exception):
                    container.remove(v=True, force=True)
            self.container = None
            self._pid = None
            raise
        finally:
            if self.container is None and self._client is not None:
                with contextlib.suppress(Exception):
                    self._client.close()      # its connection pool holds a socket
                self._client = None
            if self.remove_on_stop and self.container is None:
                shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> DockerServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


__all__ = ["CONTAINER_DATADIR", "DockerServer", "container_args"]
