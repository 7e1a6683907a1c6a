"""A lab server for a planned run: made for the backend (``make_server``: local binaries,
or a container), started with the plan's settings (``server_options``), and read back
(``read_back``, ``settings_mismatch``: what it really ran with, through the live layer's
``gather_facts``); the keywords a client process connects with, the ``SELECT 1``
round trips on it (``loopback``), its status snapshots, and ``advise`` against it
while the workload runs (``AdviseThread``).

The docker backend is imported only when ``--backend docker`` asks for it
(``docker_server_class``): it drives the Docker SDK, which is slow to import
(requests, urllib3) — a cost every local run would pay — and a build without it still
runs the local backend (the error then says so in one line).
"""

from __future__ import annotations

import inspect
import threading
import time
from pathlib import Path

from ...advisor.advise import advise
from ...advisor.request import AdviseRequest
from ...errors import InnoflushError, OptionError, UsageError
from ...executor import InProcessExecutor
from ...live.connect import ReadOnlySession
from ...live.procfs import threads_runtime_ns
from ...live.sampling import Snapshot, read_status
from ...units import parse_size
from ..experiments.options import LabOptions, RunPlan
from .backend import LabServer
from .local import LocalServer, ServerOptions

LOOPBACK_ROUND_TRIPS = 500


def docker_server_class() -> type:
    """innoflush.lab.server.docker_backend.DockerServer, imported only when asked for (see the
    module doc)."""
    try:
        from .docker_backend import DockerServer
    except ImportError as exc:
        raise UsageError(f"--backend docker is not available in this build "
                         f"(innoflush.lab.server.docker_backend cannot be imported: {exc}); use "
                         "--backend local") from None
    return DockerServer


def make_server(opts: LabOptions, workdir: Path, options: ServerOptions,
                **backend_kw) -> LabServer:
    """A LabServer for the backend (DockerServer imported only when asked for).

    backend_kw: more keyword arguments for the backend's class (the device emulation's:
    ``env`` for LocalServer, ``environment`` and ``volumes`` for DockerServer)."""
    if opts.backend == "local":
        return LocalServer(workdir, options, basedir=opts.basedir, port=opts.port,
                           server_root=opts.server_root,
                           remove_on_stop=True, **backend_kw)
    DockerServer = docker_server_class()
    try:
        params = inspect.signature(DockerServer).parameters
    except (TypeError, ValueError):
        params = {}
    kw: dict = {"remove_on_stop": True} if "remove_on_stop" in params else {}
    if opts.image:
        kw["image"] = opts.image
    if opts.port is not None:
        if "port" not in params:
            raise OptionError("--port is not supported by the docker backend")
        kw["port"] = opts.port
    for name in backend_kw:
        if params and name not in params:
            raise UsageError(f"--emulate is not supported by this docker backend (no "
                             f"{name!r} parameter)")
    return DockerServer(workdir, options, **kw, **backend_kw)


def server_options(opts: LabOptions, plan: RunPlan) -> ServerOptions:
    return ServerOptions(innodb_flush_method=plan.flush_method,
                         innodb_flush_log_at_trx_commit=plan.trx_commit, log_bin=opts.log_bin,
                         sync_binlog=plan.sync_binlog, innodb_buffer_pool_size=opts.buffer_pool,
                         extra=dict(opts.extra))


def read_back(facts) -> dict:
    """What the server really ran with (from SHOW GLOBAL VARIABLES)."""
    v = facts.variables
    return {"version": facts.version, "product": facts.product, "sim_flavor": facts.sim_flavor,
            "innodb_flush_method": facts.flush_method,
            "flush_method_source": facts.flush_method_source,
            "innodb_flush_log_at_trx_commit": facts.trx_commit,
            "log_bin": facts.log_bin, "sync_binlog": facts.sync_binlog,
            "innodb_buffer_pool_size": facts.buffer_pool_bytes,
            "innodb_doublewrite": facts.doublewrite,
            "innodb_use_fdatasync": facts.use_fdatasync,
            "innodb_io_capacity": facts.io_capacity,
            "innodb_io_capacity_max": facts.io_capacity_max,
            "redo_capacity_bytes": facts.redo_capacity_bytes,
            "innodb_page_size": facts.page_size,
            "datadir": v.get("datadir")}


def settings_mismatch(requested: dict, back: dict) -> list[str]:
    """The requested settings the server did not run with (each as one line)."""
    out = []
    if back["innodb_flush_method"] != requested["innodb_flush_method"]:
        out.append(f"innodb_flush_method: requested {requested['innodb_flush_method']}, the "
                   f"server ran with {back['innodb_flush_method']} "
                   f"({back['flush_method_source']})")
    if back["innodb_flush_log_at_trx_commit"] != requested["innodb_flush_log_at_trx_commit"]:
        out.append(f"innodb_flush_log_at_trx_commit: requested "
                   f"{requested['innodb_flush_log_at_trx_commit']}, ran with "
                   f"{back['innodb_flush_log_at_trx_commit']}")
    if bool(back["log_bin"]) != bool(requested["log_bin"]):
        out.append(f"log_bin: requested {'ON' if requested['log_bin'] else 'OFF'}, ran with "
                   f"{'ON' if back['log_bin'] else 'OFF'}")
    if requested["sync_binlog"] is not None and back["sync_binlog"] != requested["sync_binlog"]:
        out.append(f"sync_binlog: requested {requested['sync_binlog']}, ran with "
                   f"{back['sync_binlog']}")
    try:
        want = parse_size(requested["innodb_buffer_pool_size"])
    except InnoflushError:
        want = None
    if want and back["innodb_buffer_pool_size"] and back["innodb_buffer_pool_size"] != want:
        out.append(f"innodb_buffer_pool_size: requested {requested['innodb_buffer_pool_size']}"
                   f", ran with {back['innodb_buffer_pool_size']}")
    return out



def connection_params(server) -> dict:
    """PyMySQL keywords for a client process: the backend's own (DockerServer has a
    password and maybe TLS), else root without a password on HOST:port (LocalServer)."""
    get = getattr(server, "connection_args", None)
    if callable(get):
        return dict(get())
    return {"host": server.HOST, "port": server.port, "user": "root", "password": ""}




def loopback(conn, n: int = LOOPBACK_ROUND_TRIPS, server_pid: int | None = None) -> dict:
    """Time n ``SELECT 1`` round trips on an idle server: the median wall time, the
    median client CPU per round trip (CLOCK_PROCESS_CPUTIME_ID), the server's CPU per
    round trip (all its threads, from schedstat, when server_pid is given), and what is
    left: ``outside_client_us`` = wall − client CPU (the loopback and the server), and
    ``wait_us`` = wall − client CPU − server CPU (the part no process's CPU time counts:
    wake-ups, the loopback's softirq work where it is not charged to either), all in µs.
    """
    perf, cpu = time.perf_counter_ns, time.process_time_ns
    walls, cpus = [], []
    with conn.cursor() as cur:
        for _ in range(20):
            cur.execute("SELECT 1")
            cur.fetchall()
        s0 = threads_runtime_ns(server_pid)
        for _ in range(n):
            c = cpu()
            t = perf()
            cur.execute("SELECT 1")
            cur.fetchall()
            walls.append(perf() - t)
            cpus.append(cpu() - c)
        s1 = threads_runtime_ns(server_pid)
    walls.sort()
    cpus.sort()
    wall_us = walls[len(walls) // 2] / 1e3
    cpu_us = cpus[len(cpus) // 2] / 1e3
    server_us = (s1 - s0) / n / 1e3 if s0 is not None and s1 is not None else None
    outside = max(0.0, wall_us - cpu_us)
    wait = max(0.0, outside - server_us) if server_us is not None else None
    return {"round_trips": n, "wall_us": round(wall_us, 2), "client_cpu_us": round(cpu_us, 2),
            "server_cpu_us": round(server_us, 2) if server_us is not None else None,
            "outside_client_us": round(outside, 2),
            "wait_us": round(wait, 2) if wait is not None else None}


# ---- advise during a run ----------------------------------------------------------------------

class AdviseThread(threading.Thread):
    """advise() on its own session, during the run: sampling and rules, and with predict
    (an external workload's run: lab/load/external.py) its fit and predictions on `profile`
    too. connections None: advise measures them. observe: measure the workload as a
    predicting advise does (its processlist sampler, its /proc reads) without
    predicting, so that a run compared with a predicting one carries the same observer.
    window_closed: the fit and predictions wait for it (the run's measured window)."""

    def __init__(self, server, profile, interval_s: float, connections: int | None,
                 is_local: bool, predict: bool = False, observe: bool = False,
                 window_closed: threading.Event | None = None):
        super().__init__(name="innoflush-lab-advise", daemon=True)
        self.server, self.profile, self.is_local = server, profile, is_local
        self.interval_s, self.connections = interval_s, connections
        self.predict = predict and profile is not None
        self.observe = observe or self.predict
        self.window_closed = window_closed
        self.result: dict | None = None
        self.error: str | None = None

    def _second_session(self) -> ReadOnlySession:
        return ReadOnlySession(self.server.connect(autocommit=None))

    def _after_window(self) -> None:
        # the fit's and the predictions' simulations take a core: not inside the window
        # (advise's sampling ends a second before it), nor before the run's counters are
        # read; bounded, in case the run ends without saying so
        if self.window_closed is not None:
            self.window_closed.wait(timeout=self.interval_s + 60.0)

    def run(self) -> None:
        session = None
        try:
            session = ReadOnlySession(self.server.connect(autocommit=None))
            self.result = advise(session, conn_public={
                "target": f"{self.server.HOST}:{self.server.port}", "user": "root",
                "tls": False, "password_source": "none"}, is_local=self.is_local,
                request=AdviseRequest(interval_s=self.interval_s, samples=1,
                                      profile=self.profile, predict=self.predict,
                                      connections=self.connections),
                # the workload is measured (processlist samples) only where advise is
                # to predict, or to observe alike: the lab's own generator knows its
                # connections and costs
                open_session=self._second_session if self.observe else None,
                # one after the other in this thread, as before: a pool's processes
                # would take more of the cores the measured run is using
                executor=InProcessExecutor(), after_window=self._after_window)
        except Exception as exc:  # noqa: BLE001 - reported in the run, not fatal
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            if session is not None:
                session.close()


def advise_summary(report: dict | None, error: str | None) -> dict:
    if report is None:
        return {"findings": [], "cannot_judge": [], "warnings": [],
                "error": error or "advise did not finish"}
    return {"findings": [{"id": f["id"], "setting": f["setting"], "current": f["current"],
                          "recommended": f["recommended"], "severity": f["severity"],
                          "why": f["why"], "risk": f["risk"]}
                         for f in report["findings"]],
            "cannot_judge": report["cannot_judge"], "warnings": report["warnings"],
            "error": None}


def status_snapshot(session) -> Snapshot:
    """SHOW GLOBAL STATUS now, with the monotonic time it was read at."""
    return Snapshot(time.monotonic(), read_status(session))



__all__ = ["AdviseThread", "advise_summary", "connection_params", "docker_server_class",
           "loopback", "make_server", "read_back", "server_options", "settings_mismatch",
           "status_snapshot"]
