"""Where simulations run: in this process, a local process pool, or a Dask cluster.

One interface for the simulations behind ``simulate`` sweeps, ``advise``'s predictions and
``lab validate``'s: ``make_executor(scheduler, jobs)`` gives a SimExecutor whose
``map(fn, items)`` returns ``[fn(x) for x in items]`` in the order of ``items``, wherever
they ran. No scheduling of our own: concurrent.futures' ProcessPoolExecutor locally,
``dask.distributed.Client`` with ``--scheduler tcp://HOST:PORT`` (or INNOFLUSH_SCHEDULER).

The results are the same whichever runs them: a simulation depends only on its
arguments and its seed (its own numpy Generator; nothing measured on the host it runs
on), so ``fn`` and ``items`` must carry every input — top-level functions and picklable
arguments, since they travel to other processes or hosts. A Dask cluster's workers must
run the same innoflush and the same numpy and simpy (checked on connecting).

dask is imported only when a scheduler is named: ``innoflush --help`` and the local
runs never load it.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

from .errors import OptionError, UsageError

ENV_SCHEDULER = "INNOFLUSH_SCHEDULER"
CONNECT_TIMEOUT_S = 10.0   # connecting to the scheduler, and waiting for a first worker
INSTALL_HINT = "pip install 'innoflush[dask]' (the dask and distributed packages)"

Progress = Callable[[int, int], None]


class SchedulerError(UsageError):
    """The scheduler named cannot be used: unreachable, no worker, or workers that would
    not give the same results. Exit 2, like any other bad --scheduler."""


class SimExecutor:
    """map() blocks and returns the results in the order of the items; several threads
    may call it at once. Close it (or use it as a context manager) when done."""

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any],
            progress: Progress | None = None) -> list:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def describe(self) -> str:
        raise NotImplementedError

    def __enter__(self) -> SimExecutor:
        return self

    def __exit__(self, exc_type: type | None, *exc: object) -> None:
        self.close()


def _in_process(fn: Callable, items: list, progress: Progress | None) -> list:
    out = []
    for i, item in enumerate(items):
        out.append(fn(item))
        if progress:
            progress(i + 1, len(items))
    return out


class InProcessExecutor(SimExecutor):
    """Each item in the calling thread, one after the other."""

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any],
            progress: Progress | None = None) -> list:
        return _in_process(fn, list(items), progress)

    def describe(self) -> str:
        return "in-process"


def _ignore_sigint() -> None:
    # Ctrl-C and a terminal's hang-up go to the whole process group: the parent stops the
    # pool (innoflush/signals.py), the workers must not each print a KeyboardInterrupt
    # traceback or die first, a broken pool in its place. SIGTERM stays: terminate() ends
    # them with it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


class LocalPoolExecutor(SimExecutor):
    """A concurrent.futures process pool of `jobs` processes, started on the first map
    that has two items or more (a single item runs in the calling thread: a process
    would only add its start)."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def _get_pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                # forkserver, not fork: the fleet calls map from several threads while
                # others may start processes (as advise's wake-up probe once did); a
                # worker forked at that moment keeps the other child's exec pipe open,
                # and that Popen waits forever (seen in bench/fleet.py: docs/benchmarks.md,
                # 'advise --inventory: a fleet')
                self._pool = ProcessPoolExecutor(
                    max_workers=self.jobs, initializer=_ignore_sigint,
                    mp_context=multiprocessing.get_context("forkserver"))
            return self._pool

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any],
            progress: Progress | None = None) -> list:
        items = list(items)
        if self.jobs <= 1 or len(items) <= 1:
            return _in_process(fn, items, progress)
        pool = self._get_pool()
        futures = [pool.submit(fn, item) for item in items]
        try:
            pending = set(futures)
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    if f.exception() is not None:
                        raise f.exception()  # type: ignore[misc]
                if progress:
                    progress(len(items) - len(pending), len(items))
            return [f.result() for f in futures]
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                # the pool cancels what has not started itself (in its manager thread):
                # a future cancelled here, then failed by the manager as the workers are
                # ended, raised InvalidStateError in that thread (Python 3.11's
                # terminate_broken sets an exception on every pending item)
                self._shutdown(abort=True)
            else:
                for f in futures:
                    f.cancel()
            raise

    def close(self) -> None:
        self._shutdown(abort=False)

    def __exit__(self, exc_type: type | None, *exc: object) -> None:
        # Ctrl-C: the simulations under way are not waited for (seconds each)
        self._shutdown(abort=exc_type is not None and issubclass(exc_type, KeyboardInterrupt))

    def _shutdown(self, abort: bool) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is None:
            return
        if abort:
            # what has not started is cancelled first (by the pool's manager thread);
            # concurrent.futures has no public way to stop a running call: end the
            # workers (they ignore SIGINT), then let the pool reap them
            procs = list((getattr(pool, "_processes", None) or {}).values())
            manager = getattr(pool, "_executor_manager_thread", None)
            pool.shutdown(wait=False, cancel_futures=True)   # it forgets both
            for proc in procs:
                proc.terminate()
            if manager is not None:
                manager.join()   # the workers reaped
            return
        pool.shutdown(wait=True, cancel_futures=True)

    def describe(self) -> str:
        return f"local process pool ({self.jobs} process{'es' if self.jobs != 1 else ''})"


def _worker_versions() -> dict:
    """What a result depends on besides its arguments: run on each Dask worker."""
    import platform

    import numpy
    import simpy

    from . import __version__
    return {"innoflush": __version__, "numpy": numpy.__version__,
            "simpy": getattr(simpy, "__version__", "?"),
            "python": platform.python_version()}


class DaskExecutor(SimExecutor):
    """A dask.distributed Client on a running scheduler (`dask scheduler`), whose
    workers (`dask worker`) run the items. `jobs` is not used: the workers' threads and
    processes are the cluster's."""

    def __init__(self, address: str, timeout_s: float | None = None) -> None:
        timeout_s = CONNECT_TIMEOUT_S if timeout_s is None else timeout_s
        try:
            import distributed
        except ImportError:
            raise UsageError(f"--scheduler {address}: Dask is not installed here: "
                             f"{INSTALL_HINT}") from None
        self.address = address
        self._distributed = distributed
        _quiet_dask_logs()
        try:
            self.client = distributed.Client(address, timeout=timeout_s,
                                             set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise SchedulerError(f"--scheduler {address}: cannot connect "
                                 f"({_first_line(exc)}); is a `dask scheduler` there?"
                                 ) from None
        try:
            self._check_workers(timeout_s)
        except BaseException:
            self.client.close()
            raise

    def _check_workers(self, timeout_s: float) -> None:
        try:
            self.client.wait_for_workers(1, timeout=timeout_s)
        except (TimeoutError, OSError):
            raise SchedulerError(f"--scheduler {self.address}: no worker joined within "
                                 f"{timeout_s:g} s (start one with `dask worker "
                                 f"{self.address}`)") from None
        try:
            seen = self.client.run(_worker_versions)
        except Exception as exc:  # noqa: BLE001 - any failure there is the workers' setup
            raise SchedulerError(f"--scheduler {self.address}: the workers cannot run "
                                 f"innoflush ({_first_line(exc)}): install it on them, "
                                 "the same version as here") from None
        here = _worker_versions()
        for worker, versions in sorted(seen.items()):
            diff = [f"{k} {versions.get(k)} (here {v})" for k, v in here.items()
                    if k != "python" and versions.get(k) != v]
            if diff:
                raise SchedulerError(f"--scheduler {self.address}: worker {worker} runs "
                                     f"{', '.join(diff)}: its results would differ from "
                                     "this host's; install the same versions")

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any],
            progress: Progress | None = None) -> list:
        items = list(items)
        if not items:
            return []
        # pure=False: every call is a task of its own (no hashing of the arguments, and
        # two threads mapping the same items do not share keys)
        futures = self.client.map(fn, items, pure=False)
        try:
            if progress:
                for n, _ in enumerate(self._distributed.as_completed(
                        futures, loop=self.client.loop), 1):
                    progress(n, len(items))
            return self.client.gather(futures)
        except BaseException:
            self.client.cancel(futures)
            raise

    def close(self) -> None:
        try:
            self.client.close(timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError):
            pass   # the scheduler went away: nothing left to close

    def describe(self) -> str:
        try:
            info = self.client.scheduler_info()
            workers = info.get("workers", {})
            threads = sum(w.get("nthreads", 0) for w in workers.values())
            return (f"dask {self.address} ({len(workers)} worker"
                    f"{'s' if len(workers) != 1 else ''}, {threads} threads)")
        except (OSError, TimeoutError):
            return f"dask {self.address}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def _quiet_dask_logs() -> None:
    """Dask logs a failed connection attempt as an error before raising it: the one
    line the CLI prints is ours."""
    import logging

    for name in ("distributed", "distributed.client", "distributed.core",
                 "distributed.comm"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def scheduler_address(scheduler: str | None) -> str | None:
    """The scheduler named (the argument, else INNOFLUSH_SCHEDULER), checked: None for
    local runs, else 'tcp://HOST:PORT'."""
    if scheduler is None:
        scheduler = os.environ.get(ENV_SCHEDULER) or None
    if scheduler is None:
        return None
    s = scheduler.strip()
    host, _, port = s.removeprefix("tcp://").rpartition(":")
    if not s.startswith("tcp://") or not host or not port.isdigit() \
            or not 0 < int(port) < 65536:
        raise OptionError(f"--scheduler {scheduler!r}: give the Dask scheduler as "
                         "tcp://HOST:PORT")
    return s


def make_executor(scheduler: str | None = None, jobs: int | None = None,
                  timeout_s: float | None = None) -> SimExecutor:
    """scheduler (else INNOFLUSH_SCHEDULER) 'tcp://HOST:PORT': a Dask client, connected
    now (SchedulerError within about timeout_s, default CONNECT_TIMEOUT_S, when it
    cannot be used); none: a local process pool of `jobs` processes (default: this
    host's cores), in-process with jobs=1."""
    address = scheduler_address(scheduler)
    if address is not None:
        return DaskExecutor(address, CONNECT_TIMEOUT_S if timeout_s is None else timeout_s)
    if jobs is not None and jobs < 1:
        raise OptionError(f"--jobs must be at least 1 (got {jobs})")
    jobs = jobs or os.cpu_count() or 1
    return InProcessExecutor() if jobs == 1 else LocalPoolExecutor(jobs)


__all__ = ["ENV_SCHEDULER", "DaskExecutor", "InProcessExecutor",
           "LocalPoolExecutor", "SchedulerError", "SimExecutor", "make_executor",
           "scheduler_address"]
