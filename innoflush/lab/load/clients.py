"""The lab's load generator: N client processes committing the workload's transactions
(lab/load/workload.py), and what they measured.

Each connection is its own **process** (multiprocessing: fork on Linux, so a caller's
script needs no ``if __name__ == "__main__"`` guard; spawn elsewhere) with its own PyMySQL
connection, opened in the child — the GIL would make threads the bottleneck. A process
records, per transaction, ``time.perf_counter_ns`` at its start, before COMMIT and after
COMMIT (CLOCK_MONOTONIC: comparable across the processes), and over the measured part its
own CPU time (``time.process_time_ns``), wall time and run-queue wait (time it was ready
but had no CPU, /proc/thread-self/schedstat), and returns them to the parent as numpy
arrays. An optional warm-up (``warmup_s``) runs before the measured ``duration_s`` and is
not reported. The parent gathers them into a ``WorkloadResult``
(lab/load/workload_result.py: commits, TPS, latencies, client CPU and whether the client
was the bottleneck).

Failures are never dropped silently: a deadlock or lock-wait timeout is rolled back and
counted in ``retries`` (the transaction is then replaced by a new one); any other error
is counted in ``errors`` (its first messages kept) and the process reconnects once before
giving up. Every run is bounded in time (``duration_s``; the parent waits at most
``duration_s`` + ``grace_s`` before terminating the processes) and in count
(``max_trx_per_connection``). The processes ignore SIGINT and SIGHUP and run in a process
group of their own: on Ctrl-C, SIGTERM or SIGHUP (innoflush/signals.py) the parent sets
the stop event, joins them, and kills the group if one is still there.

    spec = WorkloadSpec(kind="insert", connections=4, duration_s=10)
    prepare(conn, spec)                        # schema and preload, in the parent
    with LoadRunner(server_params, spec) as runner:
        runner.wait_ready()
        runner.go()                            # all processes start together
        result = runner.collect()              # WorkloadResult
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import queue
import signal
import time
from array import array

import numpy as np
import pymysql

from ... import signals
from .workload import WorkloadError, WorkloadSpec, transactions
from .workload_result import ClientRun, WorkloadResult

# MySQL error codes a transaction is retried on (rolled back, replaced by a new one)
RETRY_CODES = (1205, 1213)   # lock wait timeout, deadlock


# ---- one client process ------------------------------------------------------------------

def runq_wait_ns() -> int:
    """Nanoseconds this thread has waited on a run queue for a CPU (/proc/thread-self/
    schedstat, second field); 0 where the kernel does not report it."""
    try:
        with open("/proc/thread-self/schedstat", encoding="ascii") as f:
            return int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _err_code(exc: BaseException) -> int | None:
    args = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


def _worker(idx: int, params: dict, spec: WorkloadSpec, start_ev, stop_ev, out_q) -> None:
    """One client process: connect, report ready, wait for start, commit until the end."""
    # the parent stops us (stop_ev; terminate() is SIGTERM): none of its handlers here
    signals.child_dispositions()
    make = transactions(spec, idx)

    def connect():
        return pymysql.connect(**params, autocommit=False, connect_timeout=10,
                               read_timeout=120, write_timeout=120)
    try:
        conn = connect()
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        out_q.put(("error", idx, f"client {idx} cannot connect: {exc}"))
        return
    out_q.put(("ready", idx, os.getpid()))
    if not start_ev.wait(spec.ready_timeout_s + spec.grace_s) or stop_ev.is_set():
        conn.close()
        out_q.put(("done", idx, _payload(idx, [], 0, 0, 0, 0, 0, [], True)))
        return

    perf = time.perf_counter_ns
    trx_start, commit_start, commit_end = array("q"), array("q"), array("q")
    errors = retries = 0
    messages: list[str] = []
    max_trx = spec.max_trx_per_connection
    cpu0 = time.process_time_ns()
    wait0 = runq_wait_ns()
    t0 = perf()
    warm_end = t0 + int(spec.warmup_s * 1e9)
    deadline = warm_end + int(spec.duration_s * 1e9)
    measuring = warm_end <= t0
    n0 = 0                      # transactions of the warm-up (not reported)
    next_stop_check = t0 + 50_000_000
    stopped_early = False
    cur = conn.cursor()
    n = 0
    now = t0
    while now < deadline and n < max_trx:
        if not measuring and now >= warm_end:
            measuring = True
            cpu0 = time.process_time_ns()
            wait0 = runq_wait_ns()
            t0 = perf()
            n0 = n
        if now >= next_stop_check:
            if stop_ev.is_set():
                stopped_early = True
                break
            next_stop_check = now + 50_000_000
        statements = make()
        ts = perf()
        try:
            for sql in statements:
                cur.execute(sql)
            tc = perf()
            conn.commit()
            te = perf()
        except pymysql.err.MySQLError as exc:
            code = _err_code(exc)
            with contextlib.suppress(Exception):
                conn.rollback()
            if code in RETRY_CODES:
                retries += 1
            else:
                errors += 1
                if len(messages) < 5:
                    messages.append(f"client {idx}: {exc}")
                if not conn.open or code in (2006, 2013, 2014):
                    with contextlib.suppress(Exception):
                        conn.close()
                    try:
                        conn = connect()
                        cur = conn.cursor()
                    except Exception as exc2:  # noqa: BLE001
                        messages.append(f"client {idx}: reconnect failed: {exc2}")
                        now = perf()
                        break
            now = perf()
            continue
        trx_start.append(ts)
        commit_start.append(tc)
        commit_end.append(te)
        n += 1
        now = te
    t1 = perf()
    cpu = time.process_time_ns() - cpu0
    wait = runq_wait_ns() - wait0
    with contextlib.suppress(Exception):
        conn.close()
    if not measuring:           # stopped during the warm-up: nothing measured
        n0, t0, cpu, wait = n, t1, 0, 0
    arrays = tuple(a[n0:] for a in (trx_start, commit_start, commit_end))
    out_q.put(("done", idx, _payload(idx, arrays, t0, t1, cpu, errors, retries, messages,
                                     stopped_early, n0, wait)))


def _payload(idx, arrays, t0, t1, cpu_ns, errors, retries, messages, stopped_early,
             warmup_commits: int = 0, runq_wait: int = 0) -> dict:
    if arrays:
        ts, tc, te = (np.frombuffer(a, dtype=np.int64).copy() for a in arrays)
    else:
        ts = tc = te = np.zeros(0, dtype=np.int64)
    return {"idx": idx, "pid": os.getpid(), "trx_start_ns": ts, "commit_start_ns": tc,
            "commit_end_ns": te, "start_ns": t0, "end_ns": t1, "cpu_ns": cpu_ns,
            "errors": errors, "retries": retries, "messages": messages,
            "stopped_early": stopped_early, "warmup_commits": warmup_commits,
            "runq_wait_ns": runq_wait}


# ---- the parent side ----------------------------------------------------------------------

class LoadRunner:
    """Starts the client processes, releases them together, collects their results.

    ``params``: PyMySQL connect keywords (host, port, user, password). Always use as a
    context manager (or call ``close()``): no client process outlives it.
    """

    def __init__(self, params: dict, spec: WorkloadSpec, cpu_cores: int | None = None,
                 context: str | None = None):
        spec.validate()
        self.params = dict(params)
        self.spec = spec
        self.cpu_cores = cpu_cores or os.cpu_count() or 1
        if context is None:
            context = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
        self.ctx = mp.get_context(context)
        self.start_ev = self.ctx.Event()
        self.stop_ev = self.ctx.Event()
        self.out_q = self.ctx.Queue()
        self.procs: list = []
        self._results: dict[int, dict] = {}
        self._ready: set[int] = set()
        self.pids: dict[int, int] = {}
        self.started_at: float | None = None
        self.pgid: int | None = None        # the client processes' group (start())

    def start(self) -> LoadRunner:
        # The children start with the stop signals blocked (they set their own
        # dispositions first: a SIGTERM meant for the parent must not run its handler in
        # a child) and in a process group of their own, the first one's: a Ctrl-C in the
        # terminal or a `timeout` reaches the parent only, which stops them in order, and
        # close() ends the whole group. Deferred too: a signal another thread takes is
        # raised once each started process is in self.procs, which close() stops.
        try:
            with signals.blocked(), signals.deferred():
                for i in range(self.spec.connections):
                    p = self.ctx.Process(target=_worker, name=f"innoflush-client-{i}",
                                         args=(i, self.params, self.spec, self.start_ev,
                                               self.stop_ev, self.out_q), daemon=True)
                    p.start()
                    self.procs.append(p)
                    self._join_group(p.pid)
        except BaseException:
            # __exit__ does not run when __enter__ raises
            self.close()
            raise
        return self

    def _join_group(self, pid: int | None) -> None:
        if pid is None:
            return
        try:
            os.setpgid(pid, self.pgid or pid)
        except OSError:
            # gone already, or a spawned child that has exec'd: it is stopped one by one
            return
        self.pgid = self.pgid or pid

    def _signal_group(self, sig: int) -> None:
        # only while one of them is unreaped: the group's id cannot have been reused
        if self.pgid is not None and any(p.exitcode is None for p in self.procs):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pgid, sig)

    def _take(self, timeout: float) -> bool:
        # each step of the wait: a stop signal whose first raise CPython dropped
        signals.check()
        try:
            msg = self.out_q.get(timeout=timeout)
        except queue.Empty:
            return False
        kind, idx = msg[0], msg[1]
        if kind == "ready":
            self._ready.add(idx)
            self.pids[idx] = msg[2]
        elif kind == "done":
            self._results[idx] = msg[2]
        elif kind == "error":
            raise WorkloadError(msg[2])
        return True

    def wait_ready(self) -> None:
        """Returns when every client process is connected and waiting for go()."""
        deadline = time.monotonic() + self.spec.ready_timeout_s
        while len(self._ready) < self.spec.connections:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkloadError(f"only {len(self._ready)} of {self.spec.connections} "
                                    f"client processes were ready after "
                                    f"{self.spec.ready_timeout_s:g} s")
            dead = [p for p in self.procs if p.exitcode not in (None, 0)]
            if dead and not self._take(0.05):
                raise WorkloadError(f"client process {dead[0].name} exited with code "
                                    f"{dead[0].exitcode} before it was ready")
            self._take(min(0.2, left))

    def go(self) -> None:
        self.started_at = time.monotonic()
        self.start_ev.set()

    def wait_warmup(self) -> None:
        """Sleep through the warm-up; WorkloadError if a client process fails in it."""
        end = (self.started_at or time.monotonic()) + self.spec.warmup_s
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            if self._take(min(0.25, left)) and len(self._results) == len(self.procs):
                return   # all done already (count bound reached in the warm-up)
            dead = [p for p in self.procs if p.exitcode not in (None, 0)]
            if dead:
                raise WorkloadError(f"client process {dead[0].name} exited with code "
                                    f"{dead[0].exitcode} during the warm-up")

    def stop(self) -> None:
        self.stop_ev.set()
        self.start_ev.set()   # anyone still waiting for the start leaves at once

    def collect(self, timeout: float | None = None) -> WorkloadResult:
        """Waits for every process's result (at most duration + grace), then joins them."""
        if timeout is None:
            timeout = self.spec.warmup_s + self.spec.duration_s + self.spec.grace_s
        deadline = time.monotonic() + timeout
        while len(self._results) < len(self.procs):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            got = self._take(min(0.5, left))
            if not got and all(not p.is_alive() for p in self.procs) \
                    and len(self._results) < len(self.procs):
                # a process died without reporting; drain what is left, then give up
                while self._take(0.1):
                    pass
                break
        missing = [i for i in range(len(self.procs)) if i not in self._results]
        self.close()
        if missing:
            raise WorkloadError(f"client process(es) {', '.join(map(str, missing))} returned "
                                "no result (killed, or over the time bound)")
        clients = [ClientRun(**{k: v for k, v in self._results[i].items()})
                   for i in range(len(self.procs))]
        notes = []
        if any(c.stopped_early for c in clients):
            notes.append("stopped before the end of the duration")
        return WorkloadResult(self.spec, clients, self.cpu_cores, notes)

    def close(self) -> None:
        """Stop and reap every client process: the stop event, then after 5 s SIGKILL to
        their process group (and to each, if one is not in it)."""
        self.stop()
        for p in self.procs:
            p.join(timeout=5)
        self._signal_group(signal.SIGKILL)
        for p in self.procs:
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)
            if p.is_alive():
                p.kill()
                p.join(timeout=5)
        with contextlib.suppress(Exception):
            self.out_q.close()
            self.out_q.join_thread()

    def alive(self) -> list[int]:
        return [p.pid for p in self.procs if p.is_alive()]

    def __enter__(self) -> LoadRunner:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()


def run_workload(params: dict, spec: WorkloadSpec, cpu_cores: int | None = None,
                 at_start=None, during=None) -> WorkloadResult:
    """Start, release and collect in one call. at_start(): called when the measured part
    begins — just before the processes are released, or after the warm-up (take the
    status snapshot there); during(): called right after it (e.g. starts an advisor
    thread)."""
    with LoadRunner(params, spec, cpu_cores) as runner:
        runner.wait_ready()
        if spec.warmup_s <= 0:
            if at_start:
                at_start()
            runner.go()
        else:
            runner.go()
            runner.wait_warmup()
            if at_start:
                at_start()
        if during:
            during()
        return runner.collect()


__all__ = ["LoadRunner", "run_workload", "runq_wait_ns"]
