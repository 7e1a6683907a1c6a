"""A MySQL or MariaDB server from the binaries on this host, in a directory of its own.

``LocalServer`` finds ``mariadbd``/``mysqld`` (on PATH, in /usr/sbin, or under a given
basedir: lab/server/server_binaries.py), initialises a fresh datadir in the work directory
it is given, starts the server with ``--no-defaults`` on 127.0.0.1 and a free port (and a
socket in the work directory), waits until it accepts connections, and stops it again —
always: it is a context manager, and ``stop()`` runs on failure and on Ctrl-C too.

    with LocalServer(tmpdir, options=ServerOptions(innodb_flush_method="O_DIRECT")) as srv:
        conn = srv.connect()           # PyMySQL, root, no password

The server runs in a session of its own, so a Ctrl-C in the terminal reaches us, not it,
and we shut it down in order (SIGTERM: a clean InnoDB shutdown; SIGKILL after a timeout).
``env`` adds variables to the server process's environment only (not to
mariadb-install-db's): the lab's device emulation preloads its library that way.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pymysql

from ... import signals
from .backend import ServerError
from .ctrl_c import StartInterrupts
from .error_log import start_failure, tail
from .server_binaries import Binaries, find_binaries
from .server_root import ServerRoot

_SOCKET_MAX = 100  # sun_path is 108 bytes on Linux; leave a margin


@dataclass
class ServerOptions:
    """Server settings passed on the command line (None: the server's own default)."""

    innodb_flush_method: str | None = None
    innodb_flush_log_at_trx_commit: int | None = None
    log_bin: bool = False
    sync_binlog: int | None = None
    innodb_buffer_pool_size: str | int | None = "128M"
    # any other option, as name -> value ("innodb_doublewrite": "OFF") or a bare flag (None)
    extra: dict[str, str | int | None] = field(default_factory=dict)

    def args(self, flavor: str, version: tuple[int, ...], workdir: Path) -> list[str]:
        out: list[str] = []
        if self.innodb_flush_method is not None:
            out.append(f"--innodb-flush-method={self.innodb_flush_method}")
        if self.innodb_flush_log_at_trx_commit is not None:
            out.append(f"--innodb-flush-log-at-trx-commit={self.innodb_flush_log_at_trx_commit}")
        if self.log_bin:
            out += [f"--log-bin={workdir / 'binlog'}", "--server-id=1"]
        elif flavor == "mysql" and version >= (8, 0):
            out.append("--skip-log-bin")  # on by default in MySQL 8
        if self.sync_binlog is not None:
            out.append(f"--sync-binlog={self.sync_binlog}")
        if self.innodb_buffer_pool_size is not None:
            out.append(f"--innodb-buffer-pool-size={self.innodb_buffer_pool_size}")
        for name, value in self.extra.items():
            opt = "--" + name.lstrip("-").replace("_", "-")
            out.append(opt if value is None else f"{opt}={value}")
        return out


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


def is_listening(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


class _StartFailed(ServerError):
    """A start attempt failed; start() decides whether to retry or to report it."""


class LocalServer:
    """One server process on a fresh datadir under ``workdir``; stop() is idempotent."""

    HOST = "127.0.0.1"

    def __init__(self, workdir: str | os.PathLike, options: ServerOptions | None = None,
                 basedir: str | os.PathLike | None = None, port: int | None = None,
                 start_timeout_s: float = 60.0, stop_timeout_s: float = 60.0,
                 remove_on_stop: bool = False, env: dict[str, str] | None = None,
                 datadir_from: str | os.PathLike | None = None,
                 server_root: str | os.PathLike | None = None):
        self.workdir = Path(workdir).absolute()
        # a Debian root to run the server in (lab/server/server_root.py), for a server this
        # host's release does not ship
        self.root = ServerRoot(server_root) if server_root is not None else None
        # an initialised datadir (initialized_datadir) copied instead of initialising one
        self.datadir_from = Path(datadir_from) if datadir_from is not None else None
        # more environment for the server process only (not for mariadb-install-db):
        # e.g. the device emulation's LD_PRELOAD (lab/emulation/emulate.py)
        self.env = dict(env or {})
        self.options = options or ServerOptions()
        self.basedir = basedir
        self.requested_port = port
        self.port: int | None = port
        self.start_timeout_s = start_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self.remove_on_stop = remove_on_stop
        self.datadir = self.workdir / "data"
        self.error_log = self.workdir / "error.log"
        self.pid_file = self.workdir / "mysqld.pid"
        self.socket = str(self.workdir / "mysqld.sock")
        self._socket_dir: str | None = None
        self.binaries: Binaries | None = None
        self.proc: subprocess.Popen | None = None
        self._out = None
        self._ready = False      # the server accepted a connection

    # ---- facts ---------------------------------------------------------------------
    @property
    def flavor(self) -> str:
        return self.binaries.flavor if self.binaries else "unknown"

    @property
    def version(self) -> tuple[int, ...]:
        return self.binaries.version if self.binaries else ()

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def is_running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    # ---- set up ----------------------------------------------------------------------
    def _prepare_dir(self) -> None:
        try:
            self.workdir.mkdir(parents=True, exist_ok=True)
            probe = self.workdir / ".innoflush-write-test"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            raise ServerError(f"work directory {self.workdir} is not writable: "
                              f"{exc.strerror or exc}") from None
        if self.datadir.exists() and any(self.datadir.iterdir()):
            raise ServerError(f"datadir {self.datadir} already exists and is not empty: "
                              "give an empty work directory")
        if len(self.socket) > _SOCKET_MAX:
            self._socket_dir = tempfile.mkdtemp(prefix="innoflush-")
            self.socket = os.path.join(self._socket_dir, "mysqld.sock")

    def _user_args(self) -> list[str]:
        return ["--user=root"] if os.geteuid() == 0 else []

    def _in_root(self, cmd: list[str]) -> list[str]:
        """cmd as it runs: in the server root (with every directory the server is given
        at its own path inside it), or as is."""
        if self.root is None:
            return cmd
        wanted = [self.workdir]
        if self._socket_dir:
            wanted.append(Path(self._socket_dir))
        # the device emulation's library and log (lab/emulation/emulate.py) are host paths too
        for name in ("LD_PRELOAD", "INNOFLUSH_EMULATE_LOG"):
            for item in self.env.get(name, "").split(":"):
                if item.startswith("/"):
                    wanted.append(Path(item).parent)
        dirs: list[Path] = []
        for d in sorted(set(wanted), key=lambda p: len(p.parts)):
            if not any(d == o or o in d.parents for o in dirs):
                dirs.append(d)
        return self.root.wrap(cmd, dirs)

    def initialize(self) -> None:
        b = self.binaries
        assert b is not None
        log = self.workdir / "initialize.log"
        # a temporary directory of its own: two initialisations sharing /tmp (another
        # test, another checkout) remove each other's temporary tables and one fails
        # ("Unknown table 'mysql.tmp_user_sys'")
        tmp = self.workdir / "init-tmp"
        tmp.mkdir(exist_ok=True)
        if b.flavor == "mariadb":
            cmd = [str(b.install_db), "--no-defaults", "--auth-root-authentication-method=normal",
                   f"--datadir={self.datadir}", "--skip-test-db", f"--tmpdir={tmp}",
                   *self._user_args()]
            if self.basedir is not None:
                cmd.append(f"--basedir={self.basedir}")
            if self.root is not None:
                # a minimal root has no /etc/hosts: install-db's look-up of this host's
                # name would fail, and the lab's servers are reached by address anyway
                cmd += ["--skip-name-resolve", "--cross-bootstrap"]
        else:
            cmd = [str(b.server), "--no-defaults", "--initialize-insecure",
                   f"--datadir={self.datadir}", f"--log-error={log}", f"--tmpdir={tmp}",
                   *self._user_args()]
            if self.basedir is not None:
                cmd.append(f"--basedir={self.basedir}")
        try:
            with open(log, "ab") as out:
                rc = _run_as_group(self._in_root(cmd), out, timeout=300)
        except subprocess.TimeoutExpired:
            raise ServerError(f"initialising {self.datadir} took over 300 s; "
                              f"log: {tail(log)}") from None
        except OSError as exc:
            raise ServerError(f"cannot run {cmd[0]}: {exc}") from None
        if rc != 0:
            raise ServerError(start_failure(f"initialising the datadir failed (exit {rc})",
                                            log))

    def _copy_datadir(self) -> None:
        try:
            shutil.copytree(self.datadir_from, self.datadir, dirs_exist_ok=True)
        except OSError as exc:
            raise ServerError(f"cannot copy the datadir {self.datadir_from} to "
                              f"{self.datadir}: {exc}") from None

    def command(self) -> list[str]:
        b = self.binaries
        assert b is not None and self.port is not None
        cmd = [str(b.server), "--no-defaults", f"--datadir={self.datadir}",
               f"--port={self.port}", f"--socket={self.socket}", "--skip-networking=0",
               f"--bind-address={self.HOST}", f"--pid-file={self.pid_file}",
               f"--log-error={self.error_log}", *self._user_args()]
        if self.basedir is not None:
            cmd.append(f"--basedir={self.basedir}")
        if b.flavor == "mysql" and b.version >= (8, 0):
            cmd.append("--mysqlx=OFF")  # else every server wants port 33060
            # no import/export directory: the compiled-in one (/var/lib/mysql-files)
            # need not exist, and without it mysqld refuses to start
            cmd.append("--secure-file-priv=NULL")
        cmd += self.options.args(b.flavor, b.version, self.workdir)
        return cmd

    def start(self) -> LocalServer:
        """Find, initialise and start; returns when the server accepts connections."""
        if self.is_running():
            return self
        self.binaries = find_binaries(self.basedir, self.root)
        self._prepare_dir()
        if self.requested_port is not None and port_in_use(self.requested_port, self.HOST):
            raise ServerError(f"port {self.requested_port} on {self.HOST} is in use: choose "
                              "another port or leave it out to get a free one")
        with StartInterrupts() as interrupts:
            try:
                if self.datadir_from is not None:
                    self._copy_datadir()
                else:
                    self.initialize()
                self._start_attempts(interrupts)
            except BaseException:
                self.stop()
                raise
        return self

    def _start_attempts(self, interrupts: StartInterrupts) -> None:
        attempts = 1 if self.requested_port is not None else 3
        for attempt in range(attempts):
            if self.requested_port is None:
                self.port = free_port(self.HOST)
            try:
                self._launch(interrupts)
                self._wait_ready(interrupts)
                interrupts.check()
                return
            except _StartFailed as exc:
                in_use = "already in use" in tail(self.error_log, 40).lower()
                self._terminate()
                if not in_use or attempt == attempts - 1:
                    what = f"port {self.port} on {self.HOST} is in use" if in_use \
                        else str(exc)
                    raise ServerError(start_failure(what, self.error_log)) from None

    def _launch(self, interrupts: StartInterrupts) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.pid_file.unlink()
        self._out = open(self.workdir / "server.out", "ab")  # noqa: SIM115 - closed in stop
        try:
            # deferred: spawned and assigned in one piece, so stop() can terminate it
            with interrupts.deferred():
                self.proc = subprocess.Popen(
                    self._in_root(self.command()), stdout=self._out, stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL, start_new_session=True,
                    env={**os.environ, **self.env} if self.env else None)
        except OSError as exc:
            raise ServerError(f"cannot start {self.binaries.server}: {exc}") from None

    def _wait_ready(self, interrupts: StartInterrupts) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        last = ""
        while time.monotonic() < deadline:
            interrupts.check()
            if self.proc.poll() is not None:
                raise _StartFailed(f"the server exited with code {self.proc.returncode} "
                                   "while starting")
            try:
                # read/write timeouts too: connect_timeout does not cover waiting for
                # the greeting of something else that took the port
                conn = pymysql.connect(host=self.HOST, port=self.port, user="root",
                                       password="", connect_timeout=2, read_timeout=5,
                                       write_timeout=5, autocommit=None)
                conn.close()
                self._ready = True
                return
            except pymysql.err.MySQLError as exc:
                last = str(exc)
            time.sleep(0.1)
        raise _StartFailed(f"the server did not accept connections within "
                           f"{self.start_timeout_s:.0f} s ({last})")

    def restart(self, options: ServerOptions | None = None) -> LocalServer:
        """A clean shutdown, then a start on the same datadir and port with options (a
        setting only a restart changes, as innodb_flush_method): a DBA's restart."""
        if options is not None:
            self.options = options
        self._terminate()
        with StartInterrupts() as interrupts:
            try:
                self._launch(interrupts)
                self._wait_ready(interrupts)
            except _StartFailed as exc:
                self._terminate()
                raise ServerError(start_failure(str(exc), self.error_log)) from None
        return self

    # ---- use -------------------------------------------------------------------------
    def connect(self, user: str = "root", password: str = "", **kw):
        if not self.is_running():
            raise ServerError("the server is not running")
        kw.setdefault("autocommit", True)
        return pymysql.connect(host=self.HOST, port=self.port, user=user, password=password,
                               **kw)

    # ---- stop ------------------------------------------------------------------------
    def _terminate(self) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None and not self._ready:
            # a start that failed or was stopped: its datadir is of no use, and a mariadbd
            # still starting acts on SIGTERM only once it is up (a stop signal during the
            # start waited the whole stop timeout): killed at once, as the Docker backend
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            proc.wait(timeout=30)
        elif proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)  # clean shutdown, as mysqladmin shutdown
            try:
                proc.wait(timeout=self.stop_timeout_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                proc.wait(timeout=30)
        self.proc = None
        self._ready = False
        if self._out is not None:
            self._out.close()
            self._out = None

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after stop_timeout_s). Idempotent."""
        try:
            self._terminate()
        except KeyboardInterrupt:
            # a second Ctrl-C while waiting for the shutdown: do not leave it running
            if self.proc is not None and self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(timeout=30)
            self.proc = None
            raise
        finally:
            if self._socket_dir:
                shutil.rmtree(self._socket_dir, ignore_errors=True)
                self._socket_dir = None
            if self.root is not None and self.proc is None:
                self.root.release()
            if self.remove_on_stop and self.proc is None:
                shutil.rmtree(self.workdir, ignore_errors=True)

    def server_pid(self) -> int | None:
        """Host PID of the server process (for its CPU time), None when stopped."""
        return self.pid if self.is_running() else None

    def error_log_tail(self, lines: int = 15) -> str:
        return tail(self.error_log, lines)

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f"pid {self.pid} port {self.port}" if self.is_running() else "stopped"
        return f"<LocalServer {self.flavor} {self.workdir} {state}>"


def _run_as_group(cmd: list[str], out, timeout: float) -> int:
    """cmd to its end in a session of its own; on a timeout or a stop signal its whole
    group is killed: mariadb-install-db is a script whose `mariadbd --bootstrap` a kill
    of the script alone would leave running on the datadir."""
    proc = None
    try:
        with signals.deferred():       # the child is ours before a signal lands
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        return proc.wait(timeout=timeout)
    except BaseException:
        if proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        raise


def initialized_datadir(workdir: str | os.PathLike,
                        basedir: str | os.PathLike | None = None,
                        server_root: str | os.PathLike | None = None) -> Path:
    """A fresh datadir under workdir (root without a password), for many servers to copy
    (LocalServer(datadir_from=...)): one initialisation (about 5 s) instead of one each."""
    srv = LocalServer(workdir, basedir=basedir, server_root=server_root)
    srv.binaries = find_binaries(basedir, srv.root)
    srv._prepare_dir()
    try:
        srv.initialize()
    finally:
        if srv.root is not None:
            srv.root.release()
    return srv.datadir


__all__ = ["LocalServer", "ServerOptions", "free_port", "initialized_datadir", "is_listening",
           "port_in_use"]
