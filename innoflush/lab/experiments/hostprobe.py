"""Measuring on this host while a lab server runs, beside the /proc readers of
innoflush.live.procfs: the server's CPU split into connection and background threads,
the machine's use, run-queue waits, the InnoDB files'
sizes and mtimes (``innodb_files``, polled during a run by ``ExtensionWatch``), and the
CPUs that take the storage's completion interrupts."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
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
           "runq_wait_delta_s", "split_server_cpu", "storage_completion_cores",
           "RunAccounts", "run_accounts"]


@dataclass
class RunAccounts:
    """What a run's host readings add up to, and the notes they call for."""

    server_cpu_s: float | None
    split: dict | None
    files: dict | None
    runq: dict
    usage: dict | None
    client: dict                 # the load's result as the report holds it
    notes: list[str]


def run_accounts(snaps: dict, threads_pre: dict, wr, cores: int, mismatch: list[str],
                 observed, emu: dict | None) -> RunAccounts:
    """The server's CPU over the window and its split by thread, the files written, the
    run queue's waits and the machine's use, from the readings taken at the window's ends
    (snaps: cpu0/1, threads0/1, sched0/1, mach0/1, files0/1); and what in them, in the
    load's result (wr), the settings (mismatch), the counters (observed) or the emulation
    (emu) a reader of the run must know."""
    notes: list[str] = []
    server_cpu_s = None
    if snaps.get("cpu0") is not None and snaps.get("cpu1") is not None:
        server_cpu_s = round(snaps["cpu1"] - snaps["cpu0"], 3)
    else:
        notes.append("the server's CPU time was not readable (/proc/PID/stat): the model's "
                     "server CPU per transaction is its default")
    split = split_server_cpu(server_cpu_s, threads_pre, snaps.get("threads0") or {},
                             snaps.get("threads1") or {})
    files = files_delta(snaps.get("files0"), snaps.get("files1"))
    client = wr.to_dict()
    ccpu = client["client_cpu"]
    server_wait = runq_wait_delta_s(snaps.get("sched0") or {}, snaps.get("sched1") or {})
    runq = {"server_us_per_trx": (round(server_wait * 1e6 / wr.commits, 2)
                                  if server_wait is not None and wr.commits else None),
            "clients_us_per_trx": ccpu.get("runq_wait_us_per_trx")}
    waited = (runq["server_us_per_trx"] or 0.0) + (runq["clients_us_per_trx"] or 0.0)
    trx_mean_us = (client["trx_latency_ms"]["mean"] or 0.0) * 1e3
    if trx_mean_us and waited >= 0.2 * trx_mean_us:
        notes.append(f"threads waited {waited:,.0f} µs per transaction for a CPU (run queue: "
                     f"server {runq['server_us_per_trx'] or 0:,.0f}, clients "
                     f"{runq['clients_us_per_trx'] or 0:,.0f}), {waited / trx_mean_us:.0%} of "
                     "the mean transaction time: the model's cores are FIFO pools of "
                     "statement slices that never idle while a thread waits in them, so it "
                     "misses part of these waits")
    usage = machine_usage(snaps.get("mach0"), snaps.get("mach1"), server_cpu_s, ccpu["cpu_s"])
    machine = usage["busy"] if usage else None
    if wr.errors:
        notes.append(f"{wr.errors} transaction(s) failed (counted, not in the commits): "
                     + "; ".join(client["error_messages"][:2]))
    if wr.retries:
        notes.append(f"{wr.retries} transaction(s) rolled back on deadlock/lock wait and "
                     "replaced")
    if ccpu["bottleneck"]:
        notes.append("the load generator may have been the bottleneck: "
                     + "; ".join(ccpu["bottleneck_reasons"]))
    if machine is not None and machine >= 0.9:
        share = ccpu["share_of_machine"]
        notes.append(f"the machine's CPU was saturated ({machine:.0%} busy over {cores} "
                     f"core(s); the clients took {share:.0%} of it): clients and server "
                     "competed for the CPU")
    if usage and usage["other"] is not None and usage["other"] >= 0.1:
        notes.append(f"other load on this machine: {usage['other']:.0%} of its CPU was busy "
                     "outside the server and the clients (other processes, interrupts, "
                     "kernel threads); the model assumed all cores free")
    if usage and usage["steal"] >= 0.05:
        notes.append(f"the hypervisor took {usage['steal']:.0%} of the CPU time (steal): "
                     "the cores were not all ours")
    if mismatch:
        notes.append("the server did not run with the requested settings: "
                     + "; ".join(mismatch) + " (the prediction uses what it ran with)")
    if observed.commits and abs(observed.commits - wr.commits) > max(2, 0.01 * wr.commits):
        notes.append(f"server-side commits ({observed.commits:,}, {observed.commits_source}) "
                     f"differ from the client's ({wr.commits:,})")
    if emu and emu["host_slower_calls"] and emu["delayed_calls"] and \
            emu["host_slower_calls"] >= 0.1 * emu["delayed_calls"]:
        notes.append(f"{emu['host_slower_calls']:,} of the server's "
                     f"{emu['delayed_calls']:,} syncs took longer on this host than the "
                     "emulated draw: the emulated device was slower than its profile")
    return RunAccounts(server_cpu_s=server_cpu_s, split=split, files=files, runq=runq,
                       usage=usage, client=client, notes=notes)
