"""Advising the hosts of an inventory concurrently, a bounded pool of threads.

Each host is advised as ``innoflush advise`` would advise it alone (``advise_host``),
with its own connection options (``host_options``). Its credentials follow the mysql
clients' ``--defaults-group-suffix`` convention: the option file's ``[client]``, then
``[client_<group>]`` for each of the host's groups, the most general first (as the
inventory merges group variables), then ``[client_<host>]`` (the inventory name); a
later section wins. The inventory's ``mysql_user``, ``mysql_port``, ``mysql_socket``,
``ansible_host`` act as the command line for that host (``-u`` on the command line is
every host's default user, below ``mysql_user``); ``mysql_login_path`` (else
``--login-path``) names the login path.

A host's failure — refused, timed out, access denied, not a MySQL server, lost, a
missing privilege, anything a lone ``advise`` reports as an error — is that host's
result, with its kind and message; the other hosts go on. Ctrl-C stops launching,
closes every open connection (a worker still sampling then fails at its next read and
its result is dropped) and returns what finished.

The worker threads sleep most of the time (sampling waits out ``--interval``), so
threads fit; the simulated predictions are CPU-bound and go to the one executor of the
fleet (``FleetSettings.executor``: a local process pool, or Dask with ``--scheduler``).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..advisor.advise import advise
from ..advisor.request import AdviseRequest
from ..errors import InnoflushError, OptionError
from ..live.client_options import ConnectionOptions, resolve_options, scrub
from ..live.connect import ConnectError, ReadOnlySession, connect, server_error
from .inventory import Host

DEFAULT_CONCURRENCY = 8


@dataclass
class FleetSettings:
    """What applies to every host: the command line's connection defaults and the one
    AdviseRequest (interval_s, samples, profile, durability, predict, ...)."""

    user: str | None = None
    defaults_file: str | None = None
    login_path: str | None = None
    password: str | None = field(default=None, repr=False)   # prompted once (-p), or None
    ssl_mode: str | None = None
    ssl_ca: str | None = None
    ssl_cert: str | None = None
    ssl_key: str | None = None
    connect_timeout: float = 10.0
    request: AdviseRequest = field(default_factory=AdviseRequest)
    # where the predictions run (innoflush.executor; its map may be called from several
    # threads): one for the whole fleet, not a process pool per host; None: advise()'s own
    executor: Any = None


def option_groups(host: Host) -> list[str]:
    """The option-file group suffixes read for host, after [client], in order: its groups
    (most general first), then its own name."""
    return [f"_{g}" for g in host.groups] + [f"_{host.name}"]


def host_options(host: Host, s: FleetSettings) -> ConnectionOptions:
    opts = resolve_options(host=host.address, port=host.port, socket=host.socket,
                           user=host.user or s.user, defaults_file=s.defaults_file,
                           login_path=host.login_path or s.login_path, ssl_mode=s.ssl_mode,
                           ssl_ca=s.ssl_ca, ssl_cert=s.ssl_cert, ssl_key=s.ssl_key,
                           connect_timeout=s.connect_timeout,
                           group_suffixes=option_groups(host))
    if s.password is not None:   # -p: the one password typed, for every host
        opts.password, opts.password_source = s.password, "prompt"
    return opts


class Sessions:
    """Every session the workers open, so that Ctrl-C can close them all; once stopped,
    no new one is opened."""

    def __init__(self) -> None:
        self.stopped = threading.Event()
        self._lock = threading.Lock()
        self._open: set[ReadOnlySession] = set()

    def open(self, opts: ConnectionOptions, read_tls: bool = True) -> ReadOnlySession:
        if self.stopped.is_set():
            raise ConnectError("interrupted", "interrupted")
        session = connect(opts, read_tls=read_tls)
        with self._lock:
            self._open.add(session)
        return session

    def close(self, session: ReadOnlySession) -> None:
        with self._lock:
            self._open.discard(session)
        session.close()

    def stop(self) -> None:
        self.stopped.set()
        with self._lock:
            sessions, self._open = list(self._open), set()
        for s in sessions:
            s.close()


def _advise(session: ReadOnlySession, opts: ConnectionOptions, sessions: Sessions,
            s: FleetSettings) -> dict:
    """The one call of advise() for a host of the fleet."""
    return advise(session, s.request, conn_public=opts.public(session.tls),
                  is_local=opts.is_local,
                  open_session=lambda: sessions.open(opts, read_tls=False),
                  executor=s.executor)


def advise_host(host: Host, settings: FleetSettings, sessions: Sessions | None = None
                ) -> dict:
    """One host's result, never an exception (but KeyboardInterrupt): {host, address,
    port, socket, groups, status ok|failed, exit (what `advise` alone would exit with),
    error {kind, message} or null, report (advise's report) or null, seconds}."""
    import pymysql

    sessions = sessions or Sessions()
    t0 = time.monotonic()
    out: dict[str, Any] = {"host": host.name, "address": host.address, "port": host.port,
                           "socket": host.socket, "groups": list(host.groups),
                           "status": "failed", "exit": 1, "error": None, "report": None}
    opts = None
    try:
        opts = host_options(host, settings)
        out.update(address=opts.host, port=None if opts.socket else opts.port,
                   socket=opts.socket)
        session = sessions.open(opts)
        try:
            report = _advise(session, opts, sessions, settings)
        except pymysql.err.MySQLError as exc:
            raise server_error(exc, opts) from None
        finally:
            sessions.close(session)
        out.update(status="ok", exit=report["exit_code"], report=report)
    except InnoflushError as exc:
        out.update(exit=exc.exit_code, error={"kind": _kind(exc), "message": str(exc)})
    except Exception as exc:  # noqa: BLE001 - one host's bug must not stop the fleet
        msg = scrub(f"{exc.__class__.__name__}: {exc}", opts.password if opts else None)
        out.update(exit=1, error={"kind": "internal", "message": msg})
    out["seconds"] = round(time.monotonic() - t0, 3)
    return out


def _kind(exc: InnoflushError) -> str:
    from ..live.connect import PrivilegeError

    kind = getattr(exc, "kind", None)
    if kind:
        return kind
    if isinstance(exc, PrivilegeError):
        return "privilege"
    if type(exc) is InnoflushError:
        return "failure"
    if isinstance(exc, OptionError):   # a host's value of an option (its port, its TLS)
        return "usage"
    # UsageError -> usage, SamplingError -> sampling, ProfileError -> profile
    return exc.__class__.__name__.removesuffix("Error").lower() or "failure"


@dataclass
class FleetRun:
    results: list[dict]          # in the order they finished
    not_done: list[str]          # hosts not finished (Ctrl-C)
    interrupted: bool
    max_concurrent: int          # most hosts being advised at once
    seconds: float


def advise_fleet(hosts: Sequence[Host], settings: FleetSettings, concurrency: int,
                 on_result: Callable[[dict], object] | None = None,
                 work: Callable[[Host, FleetSettings, Sessions], dict] = advise_host
                 ) -> FleetRun:
    """Advise every host, at most concurrency at once; on_result is called (in this
    thread) with each result as it comes. Ctrl-C: see the module doc."""
    todo: queue.Queue[Host] = queue.Queue()
    for h in hosts:
        todo.put(h)
    done_q: queue.Queue[dict] = queue.Queue()
    sessions = Sessions()
    lock = threading.Lock()
    active = [0, 0]   # now, most

    def worker() -> None:
        while not sessions.stopped.is_set():
            try:
                h = todo.get_nowait()
            except queue.Empty:
                return
            with lock:
                active[0] += 1
                active[1] = max(active[1], active[0])
            try:
                r = work(h, settings, sessions)
            finally:
                with lock:
                    active[0] -= 1
            if not sessions.stopped.is_set():
                done_q.put(r)

    t0 = time.monotonic()
    # daemon threads: after Ctrl-C a worker inside a simulation is not waited for
    threads = [threading.Thread(target=worker, name=f"advise-{i}", daemon=True)
               for i in range(max(1, min(concurrency, len(hosts))))]
    for t in threads:
        t.start()
    results: list[dict] = []
    interrupted = False
    try:
        while len(results) < len(hosts):
            try:
                r = done_q.get(timeout=0.2)
            except queue.Empty:
                if not any(t.is_alive() for t in threads) and done_q.empty():
                    break   # a worker died of something advise_host does not catch
                continue
            results.append(r)
            if on_result is not None:
                on_result(r)
    except KeyboardInterrupt:
        interrupted = True
        sessions.stop()
    finished = {r["host"] for r in results}
    return FleetRun(results=results, not_done=[h.name for h in hosts if h.name not in finished],
                    interrupted=interrupted, max_concurrent=active[1],
                    seconds=round(time.monotonic() - t0, 3))
