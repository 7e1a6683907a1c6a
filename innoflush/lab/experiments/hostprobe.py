"""Measuring on this host while a lab server runs, beside the /proc readers of
innoflush.live.procfs: the server's CPU split into connection and background threads,
the machine's use, run-queue waits, the InnoDB files'
sizes and mtimes (``innodb_files``, polled during a run by ``ExtensionWatch``), and the
CPUs that take the storage's completion interrupts."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from ...measure.facts import completion_cores, gather_facts


def split_server_cpu(total_s: float | None, before_clients: dict, at_start: dict,
                     at_end: dict) -> dict | None:
    """The server's CPU over the run split into its connection threads (the threads that
    appeared while the clients connected) and the rest (background threads: page
    cleaner, purge, I/O, timers; also threads that exited during the run)."""
    if total_s is None or not at_start or not at_end:
        return None
    conn_tids = set(at_start) - set(before_clients)
    fg = sum(max(0.0, at_end[t] - at_start[t]) for t in conn_tids if t in at_end)
    return {"connection_threads": len(conn_tids), "connection_threads_s": round(fg, 3),
            "background_s": round(max(0.0, total_s - fg), 3)}


def machine_usage(before: dict | None, after: dict | None, server_cpu_s: float | None,
                  client_cpu_s: float) -> dict | None:
    """Over the run, as fractions of all the machine's CPU time: ``busy``, ``steal``, and
    ``other`` — busy time that was neither the server's nor the clients' (other processes,
    interrupts, kernel threads)."""
    if not before or not after:
        return None
    total = after["total"] - before["total"]
    if total <= 0:
        return None
    busy = after["busy"] - before["busy"]
    ours = (server_cpu_s or 0.0) + client_cpu_s
    return {"busy": round(busy / total, 3),
            "steal": round((after["steal"] - before["steal"]) / total, 3),
            "other": round(max(0.0, busy - ours) / total, 3) if server_cpu_s is not None
            else None}


def _is_innodb_file(name: str) -> bool:
    return (name.endswith(".ibd") or name.startswith("ibdata") or name.startswith("undo")) \
        and not name.startswith("#")


def innodb_files(datadir: str | os.PathLike) -> dict[str, tuple[int, int]] | None:
    """{relative path: (size, mtime_ns)} of the tablespace files (ibdata*, undo*, *.ibd;
    not the temporary tablespace); None when the datadir cannot be read."""
    root = Path(datadir)
    out: dict[str, tuple[int, int]] = {}
    try:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if not d.startswith("#")]
            for name in filenames:
                if not _is_innodb_file(name):
                    continue
                p = os.path.join(dirpath, name)
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                out[os.path.relpath(p, root)] = (st.st_size, st.st_mtime_ns)
    except OSError:
        return None
    return out if out else None


def files_delta(before: dict | None, after: dict | None) -> dict | None:
    """Tablespace files written (mtime moved, or new) and bytes grown between snapshots."""
    if before is None or after is None:
        return None
    written, grown = [], 0
    for name, (size, mtime) in after.items():
        old = before.get(name)
        if old is None:
            written.append(name)
            grown += size
            continue
        if mtime != old[1] or size != old[0]:
            written.append(name)
        grown += max(0, size - old[0])
    return {"files_written": sorted(written), "tablespaces_written": len(written),
            "growth_bytes": grown}


def runq_wait_delta_s(before: dict, after: dict) -> float | None:
    """Seconds the threads present in both snapshots waited on a run queue between them."""
    if not before or not after:
        return None
    return sum(max(0, after[t][1] - before[t][1]) for t in after if t in before) / 1e9



def storage_completion_cores(path: str | os.PathLike) -> int | None:
    """How many CPUs take the completion interrupts of the storage under `path` (its
    disks' hardware queues); None when sysfs does not tell."""
    try:
        return completion_cores(gather_facts(str(path)))
    except Exception:  # noqa: BLE001 - sysfs facts are optional
        return None



class ExtensionWatch(threading.Thread):
    """Polls the sizes of the InnoDB files while the workload runs and counts each
    increase as one extension: the mean step is the workload's ``extend_bytes`` (InnoDB
    extends a young .ibd file by one extent, a larger one by 4; each extension is an
    fsync in every flush method)."""

    def __init__(self, datadir, interval_s: float = 0.025):
        super().__init__(name="innoflush-lab-extensions", daemon=True)
        self.datadir, self.interval_s = datadir, interval_s
        self.stop_event = threading.Event()
        self.extensions = 0
        self.grown = 0
        self.polls = 0

    def run(self) -> None:
        last = innodb_files(self.datadir) or {}
        while not self.stop_event.wait(self.interval_s):
            now = innodb_files(self.datadir) or {}
            self.polls += 1
            for name, (size, _) in now.items():
                old = last.get(name)
                if old is not None and size > old[0]:
                    self.extensions += 1
                    self.grown += size - old[0]
            last = now

    def result(self) -> dict:
        return {"extensions": self.extensions, "grown_bytes": self.grown, "polls": self.polls,
                "interval_s": self.interval_s,
                "mean_step_bytes": (round(self.grown / self.extensions)
                                    if self.extensions else None)}



__all__ = ["ExtensionWatch", "files_delta", "innodb_files", "machine_usage",
           "runq_wait_delta_s", "split_server_cpu", "storage_completion_cores"]
