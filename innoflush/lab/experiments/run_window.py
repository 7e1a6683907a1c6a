"""A lab run's measured window (``run.measure_one``): the readings taken at its start and
at its end, the watch on the InnoDB files' extensions, and advise measuring the server
while the load runs."""

from __future__ import annotations

import threading

from ...live.connect import ReadOnlySession
from ...live.procfs import machine_cpu, proc_cpu_seconds, schedstat, thread_cpu
from ..server.for_run import AdviseThread, status_snapshot
from .hostprobe import ExtensionWatch, innodb_files
from .options import LabOptions


class RunWindow:
    """A run's measured window: what is read at its start and at its end (the status
    counters, the server's CPU in all and per thread, its threads' run-queue waits, the
    machine's CPU, the InnoDB files: ``hostprobe.run_accounts`` takes them apart), the
    watch on the files' extensions, and advise, started once the clients are released."""

    def __init__(self, server, session: ReadOnlySession, pid: int | None,
                 watch_extensions: bool):
        self.server, self.session, self.pid = server, session, pid
        self.watch = ExtensionWatch(server.datadir) if watch_extensions else None
        self.snaps: dict = {}
        self.advisor: AdviseThread | None = None
        self.closed = threading.Event()   # advise's fit and predictions wait for it

    def at_start(self) -> None:
        snaps, pid = self.snaps, self.pid
        snaps["files0"] = innodb_files(self.server.datadir)
        snaps["cpu0"] = proc_cpu_seconds(pid) if pid else None
        snaps["threads0"] = thread_cpu(pid) if pid else {}
        snaps["sched0"] = schedstat(pid)
        snaps["mach0"] = machine_cpu()
        snaps["a"] = status_snapshot(self.session)
        if self.watch is not None:
            self.watch.start()

    def at_end(self) -> None:
        snaps, pid = self.snaps, self.pid
        snaps["b"] = status_snapshot(self.session)
        snaps["cpu1"] = proc_cpu_seconds(pid) if pid else None
        snaps["threads1"] = thread_cpu(pid) if pid else {}
        snaps["sched1"] = schedstat(pid)
        snaps["mach1"] = machine_cpu()
        snaps["files1"] = innodb_files(self.server.datadir)
        self.closed.set()

    def start_advise(self, opts: LabOptions, profile, duration_s: float,
                     connections: int | None, predict: bool, observe: bool) -> None:
        # connections None: an external command's connections are advise's to measure
        self.advisor = AdviseThread(self.server, profile, max(1.0, duration_s - 1.0),
                                    connections, is_local=opts.backend == "local",
                                    predict=predict, observe=observe,
                                    window_closed=self.closed)
        self.advisor.start()

    def stop_watch(self) -> None:
        if self.watch is not None and self.watch.is_alive():
            self.watch.stop_event.set()
            self.watch.join(timeout=5)


__all__ = ["RunWindow"]
