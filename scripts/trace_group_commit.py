"""Where a real server's redo group commit spends its cycle: the device, or the wait for a
core. A MariaDB of its own under sysbench oltp_insert, traced system-wide with perf
(sched_wakeup/sched_switch, pwrite64/fdatasync/fsync entry and exit) for a few seconds
mid-run, and /proc/PID/task/*/schedstat read around the trace.

For the redo log's write and sync calls it prints how long the calling thread slept on
the device (call entry to its wake-up) and how long it then waited to run (wake-up to
the call's return), and the cycle from one redo sync to the next. docs/model.md ("A
thread the device woke waits for a core") quotes its figures. Then the server's syncs
per second by file (the redo log, ibdata1, each table's .ibd), which
docs/validation/notebook/2026-11-28-files-a-flush-batch-syncs.md quotes at trx_commit=2,
and by the thread that made them (the one that writes the checkpoint, MariaDB's page
cleaner; the ones that write the redo's records; the rest), which
docs/validation/notebook/2026-11-28-write-ahead-rule-each-pages.md quotes.

    python scripts/trace_group_commit.py [--threads 4,16] [--sync-binlog 0,1]
        [--trx-commit 1] [--no-binlog] [--workload oltp_insert]
        [--seconds 3] [--workdir /var/tmp/innoflush-trace]
        [--device PROFILE] [--settle-after SECONDS] [--buffer-pool 128M]

--device runs the server on an emulated device (the lab's preloaded sync delay);
--settle-after traces once its page cleaner is at work, as `lab validate
--settle-after` measures (the checkpoint age at the async point, or falling), waiting
at most that long. Then the server's own counters over the trace: doublewrite batches,
pages written and created, tablespace extensions' files, the checkpoint age.

Needs root, perf, tracefs (mounted here when missing), sysbench and mariadbd.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tabulate import tabulate  # noqa: E402

from innoflush.errors import InnoflushError  # noqa: E402
from innoflush.lab.emulation.emulate import make_emulation  # noqa: E402
from innoflush.lab.experiments.hostprobe import runq_wait_delta_s  # noqa: E402
from innoflush.lab.experiments.predict import async_point  # noqa: E402
from innoflush.lab.load.external import wait_for_page_cleaner  # noqa: E402
from innoflush.lab.server.backend import ServerError  # noqa: E402
from innoflush.lab.server.local import LocalServer, ServerOptions  # noqa: E402
from innoflush.live.facts import facts_from_variables  # noqa: E402
from innoflush.live.procfs import REDO_FILES, fd_links, schedstat  # noqa: E402

EVENTS = ("syscalls:sys_enter_fdatasync", "syscalls:sys_exit_fdatasync",
          "syscalls:sys_enter_fsync", "syscalls:sys_exit_fsync",
          "syscalls:sys_enter_pwrite64", "syscalls:sys_exit_pwrite64",
          "sched:sched_wakeup", "sched:sched_switch")
LINE = re.compile(r"^\s*(?P<comm>\S.*?)\s+(?P<tid>\d+)\s+\[\d+\]\s+(?P<t>[\d.]+):\s+"
                  r"(?P<event>\S+):\s*(?P<rest>.*)$")


def call_fd(trace: str) -> int | None:
    """The fd argument of a syscall's entry in `perf script`'s trace field."""
    fd = re.search(r"fd: (0x[0-9a-f]+)", trace)
    return int(fd.group(1), 16) if fd else None


def redo_cycle(perf_script: str, redo_fd: int) -> dict:
    """Medians (µs) of the redo log's calls in `perf script -F comm,tid,cpu,time,event,trace`
    output: for pwrite64 and the sync, the sleep on the device (entry to the thread's
    wake-up) and the wait to run (wake-up to return); the sync-to-sync cycle; syncs/s."""
    wakes: dict[int, list[float]] = collections.defaultdict(list)
    open_calls: dict[int, tuple[str, int, float]] = {}
    calls: list[tuple[str, int, float, float]] = []   # (call, tid, entry, exit)
    first = last = None
    for line in perf_script.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        t, tid, event, rest = float(m["t"]), int(m["tid"]), m["event"], m["rest"]
        first = t if first is None else first
        last = t
        if event == "sched:sched_wakeup":
            wakes[int(re.search(r"pid=(\d+)", rest).group(1))].append(t)
        elif event.startswith("syscalls:sys_enter_"):
            if call_fd(rest) == redo_fd:
                open_calls[tid] = (event.removeprefix("syscalls:sys_enter_"), tid, t)
        elif event.startswith("syscalls:sys_exit_"):
            call = open_calls.pop(tid, None)
            if call and call[0] == event.removeprefix("syscalls:sys_exit_"):
                calls.append((call[0], tid, call[2], t))
    out: dict = {"seconds": (last - first) if first is not None else 0.0}
    for name, kinds in (("write", ("pwrite64",)), ("sync", ("fdatasync", "fsync"))):
        device, wait = [], []
        for _kind, tid, t0, t1 in (c for c in calls if c[0] in kinds):
            ws = wakes[tid]
            i = bisect.bisect_right(ws, t1) - 1      # the last wake-up inside the call
            if i >= 0 and ws[i] > t0:
                device.append(ws[i] - t0)
                wait.append(t1 - ws[i])
        out[f"{name}_device_us"] = _median_us(device)
        out[f"{name}_wait_us"] = _median_us(wait)
    syncs = sorted(c[2] for c in calls if c[0] in ("fdatasync", "fsync"))
    out["syncs_per_s"] = len(syncs) / out["seconds"] if out["seconds"] else 0.0
    out["cycle_us"] = _median_us([b - a for a, b in zip(syncs, syncs[1:], strict=False)])
    return out


SYNC_ENTRIES = ("syscalls:sys_enter_fdatasync", "syscalls:sys_enter_fsync")


def server_calls(perf_script: str, tids: set[int]) -> Iterator[tuple[int, str, str, int | None]]:
    """(tid, event, trace, fd) of every event of the server's threads (tids) in
    `perf script -F comm,tid,cpu,time,event,trace` output."""
    for line in perf_script.splitlines():
        m = LINE.match(line)
        if m and int(m["tid"]) in tids:
            yield int(m["tid"]), m["event"], m["rest"], call_fd(m["rest"])


def syncs_by_file(perf_script: str, links: dict[str, str], tids: set[int]) -> dict[str, int]:
    """{file name: sync calls (fdatasync, fsync)} of the server's threads (tids) in
    `perf script` output; links: the server's fds (procfs.fd_links)."""
    counts: collections.Counter[str] = collections.Counter()
    for _tid, event, _rest, fd in server_calls(perf_script, tids):
        if event in SYNC_ENTRIES and fd is not None:
            counts[os.path.basename(links.get(str(fd), "?"))] += 1
    return dict(counts)


# MariaDB 10.8+ writes its checkpoint to these offsets of ib_logfile0 (log_t::CHECKPOINT_1,
# CHECKPOINT_2); the redo's records start at 12288
CHECKPOINT_OFFSETS = (4096, 8192)


def syncs_by_role(perf_script: str, links: dict[str, str], tids: set[int]
                  ) -> dict[str, dict[str, int]]:
    """{role: {"threads", "redo_syncs", "data_syncs"}} of the server's threads (tids):
    the one that writes the checkpoint (MariaDB's page cleaner: its redo syncs are the
    write-ahead rule's before a page is written and the checkpoint's), the ones that write
    the redo's records (connections, or a log writer), and the rest (the timer's
    once-a-second flush, the I/O completions)."""
    redo_fds = {fd for fd, link in links.items()
                if os.path.basename(link).startswith(REDO_FILES)}
    per_tid: dict[int, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for tid, event, rest, fd in server_calls(perf_script, tids):
        redo = fd is not None and str(fd) in redo_fds
        if event in SYNC_ENTRIES:
            per_tid[tid]["redo_syncs" if redo else "data_syncs"] += 1
        elif event == "syscalls:sys_enter_pwrite64" and redo:
            pos = re.search(r"pos: (0x[0-9a-f]+)", rest)
            at = int(pos.group(1), 16) if pos else None
            per_tid[tid]["checkpoint_writes" if at in CHECKPOINT_OFFSETS
                         else "redo_writes"] += 1
    roles: dict[str, dict[str, int]] = {}
    for counts in per_tid.values():
        role = ("writes the checkpoint" if counts["checkpoint_writes"]
                else "writes the redo's records" if counts["redo_writes"] else "other")
        r = roles.setdefault(role, {"threads": 0, "redo_syncs": 0, "data_syncs": 0})
        r["threads"] += 1
        r["redo_syncs"] += counts["redo_syncs"]
        r["data_syncs"] += counts["data_syncs"]
    return roles


def _median_us(xs: list[float]) -> float | None:
    return round(statistics.median(xs) * 1e6, 1) if xs else None


def runqueue_us_per_run(before: dict, after: dict) -> float | None:
    """µs a thread waited on a run queue per time it ran, over the threads present in
    both procfs.schedstat snapshots."""
    runs = sum(after[t][2] - before[t][2] for t in after if t in before)
    wait_s = runq_wait_delta_s(before, after)
    return round(wait_s * 1e6 / runs, 1) if runs and wait_s is not None else None


# the server's counters read around the trace (deltas per second), and its gauges
STATUS_RATES = ("Innodb_data_fsyncs", "Innodb_os_log_fsyncs", "Innodb_dblwr_writes",
                "Innodb_dblwr_pages_written", "Innodb_pages_written", "Innodb_pages_created")
STATUS_GAUGES = ("Innodb_checkpoint_age", "Innodb_buffer_pool_pages_dirty")


def read_status(cur) -> dict[str, int]:
    cur.execute("SHOW GLOBAL STATUS")
    out = {}
    for name, value in cur.fetchall():
        if name in STATUS_RATES or name in STATUS_GAUGES:
            try:
                out[name] = int(value)
            except (TypeError, ValueError):
                pass
    return out


def settle(cur, target: int | None, limit_s: float) -> dict:
    """Wait until the page cleaner is at work, at most limit_s, as lab validate
    --settle-after does (lab/load/external.py wait_for_page_cleaner)."""
    return wait_for_page_cleaner(lambda: read_status(cur).get("Innodb_checkpoint_age"),
                                 target, limit_s, time.sleep)


def table_sizes_mb(datadir: Path) -> dict[str, float]:
    return {f.name: round(f.stat().st_size / 2**20, 1)
            for f in sorted((datadir / "sbtest").glob("*.ibd"))}


def trace_one(workdir: Path, threads: int, sync_binlog: int, seconds: float,
              trx_commit: int = 1, log_bin: bool = True, workload: str = "oltp_insert",
              env: dict | None = None, settle_after: float = 0.0,
              buffer_pool: str = "128M") -> dict:
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.parent.mkdir(parents=True, exist_ok=True)
    opts = ServerOptions(innodb_flush_method="O_DIRECT",
                         innodb_flush_log_at_trx_commit=trx_commit,
                         log_bin=log_bin, sync_binlog=sync_binlog if log_bin else None,
                         innodb_buffer_pool_size=buffer_pool,
                         extra={"max_connections": 200})
    with LocalServer(workdir, opts, remove_on_stop=True, env=env).start() as srv:
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE sbtest")
            cur.execute("SHOW GLOBAL VARIABLES")
            target = async_point(facts_from_variables(dict(cur.fetchall())))
        sb = ["sysbench", workload, "--db-driver=mysql", "--mysql-user=root",
              "--mysql-password=", "--mysql-db=sbtest", f"--mysql-socket={srv.socket}",
              "--tables=4", "--table-size=10000"]
        subprocess.run(sb + ["prepare"], check=True, capture_output=True)
        run = subprocess.Popen(sb + [f"--threads={threads}",
                                     f"--time={int(seconds + settle_after) + 11}", "run"],
                               stdout=subprocess.PIPE, text=True)
        try:
            time.sleep(5)    # past the warm-up
            with srv.connect() as conn, conn.cursor() as cur:
                settled = settle(cur, target, settle_after) if settle_after else None
                pid = srv.server_pid()
                links = fd_links(pid) or {}
                redo_fd = next(int(fd) for fd, link in links.items()
                               if os.path.basename(link).startswith(REDO_FILES))
                data = workdir.parent / f"{workdir.name}.perf.data"
                sizes0 = table_sizes_mb(workdir / "data")
                st0, s0, t0 = read_status(cur), schedstat(pid), time.monotonic()
                subprocess.run(["perf", "record", "-q", "-a", "-e", ",".join(EVENTS), "-o",
                                str(data), "--", "sleep", str(seconds)], check=True,
                               capture_output=True)
                st1, s1, t1 = read_status(cur), schedstat(pid), time.monotonic()
                sizes1 = table_sizes_mb(workdir / "data")
            tids = set(s0) | set(s1)
        finally:
            out, _ = run.communicate()
    script = subprocess.run(["perf", "script", "-i", str(data), "-F",
                             "comm,tid,cpu,time,event,trace"], capture_output=True, text=True,
                            check=True).stdout
    data.unlink(missing_ok=True)
    tps = re.search(r"transactions:\s+\d+\s+\(([\d.]+) per sec", out)
    r = redo_cycle(script, redo_fd)
    r["syncs_by_file"] = {f: round(n / r["seconds"], 2) if r["seconds"] else None
                          for f, n in sorted(syncs_by_file(script, links, tids).items(),
                                             key=lambda kv: -kv[1])}
    r["syncs_by_role"] = {
        role: {k: (round(v / r["seconds"], 2) if k != "threads" and r["seconds"] else v)
               for k, v in counts.items()}
        for role, counts in syncs_by_role(script, links, tids).items()}
    r["status_per_s"] = {k.removeprefix("Innodb_"): round((st1[k] - st0[k]) / (t1 - t0), 2)
                         for k in STATUS_RATES if k in st0 and k in st1}
    r["gauges"] = {k.removeprefix("Innodb_"): (st0.get(k), st1.get(k)) for k in STATUS_GAUGES}
    r["table_mb"] = {f: (sizes0.get(f), sizes1.get(f)) for f in sizes1}
    r.update(threads=threads, sync_binlog=sync_binlog, trx_commit=trx_commit,
             tps=float(tps.group(1)) if tps else None, settle=settled,
             runqueue_us_per_run=runqueue_us_per_run(s0, s1))
    return r


def _ready() -> str | None:
    if os.geteuid() != 0:
        return "needs root (perf traces the whole system)"
    for tool in ("perf", "sysbench"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    tracing = Path("/sys/kernel/tracing")
    if not (tracing / "events").exists():
        subprocess.run(["mount", "-t", "tracefs", "nodev", str(tracing)], check=False,
                       capture_output=True)
        if not (tracing / "events").exists():
            return f"tracefs is not mounted on {tracing} and could not be"
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="4,16")
    ap.add_argument("--sync-binlog", default="0,1")
    ap.add_argument("--trx-commit", type=int, default=1, choices=(0, 1, 2),
                    help="innodb_flush_log_at_trx_commit")
    ap.add_argument("--no-binlog", action="store_true", help="the binary log off")
    ap.add_argument("--workload", default="oltp_insert", help="a sysbench test")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--workdir", default="/var/tmp/innoflush-trace")
    ap.add_argument("--device", default=None,
                    help="run the server on this emulated device profile (lab --devices)")
    ap.add_argument("--settle-after", type=float, default=0.0, metavar="SECONDS",
                    help="trace once the page cleaner is at work, waiting at most this long")
    ap.add_argument("--buffer-pool", default="128M", help="innodb_buffer_pool_size")
    a = ap.parse_args()
    problem = _ready()
    if problem:
        sys.exit(f"trace_group_commit: {problem}")
    rows, by_file, by_role, counters = [], [], [], []
    try:
        env = None
        if a.device:
            workdir = Path(a.workdir)
            workdir.mkdir(parents=True, exist_ok=True)
            emulation = make_emulation(a.device, workdir)
            env, _ = emulation.prepare(workdir / "emulate-log", "local")
            env = env["env"]
        for n in (int(x) for x in a.threads.split(",")):
            for sbv in (int(x) for x in a.sync_binlog.split(",")):
                r = trace_one(Path(a.workdir) / f"t{n}-sb{sbv}", n, sbv, a.seconds,
                              a.trx_commit, not a.no_binlog, a.workload, env=env,
                              settle_after=a.settle_after, buffer_pool=a.buffer_pool)
                counters.append([n, sbv, r["tps"], r["settle"], r["status_per_s"],
                                 r["gauges"], r["table_mb"]])
                by_file.append([n, sbv, r["tps"], ", ".join(
                    f"{f} {v}" for f, v in r["syncs_by_file"].items())])
                by_role += [[n, sbv, role, c["threads"], c["redo_syncs"], c["data_syncs"]]
                            for role, c in sorted(r["syncs_by_role"].items())]
                rows.append([n, sbv, r["tps"], round(r["syncs_per_s"]), r["write_device_us"],
                             r["write_wait_us"], r["sync_device_us"], r["sync_wait_us"],
                             r["cycle_us"], r["runqueue_us_per_run"]])
    except (ServerError, InnoflushError, subprocess.CalledProcessError) as exc:
        sys.exit(f"trace_group_commit: {exc}")
    except KeyboardInterrupt:
        sys.exit("trace_group_commit: interrupted")
    print(tabulate(rows, headers=["threads", "sync_binlog", "sysbench TPS", "redo syncs/s",
                                  "write: device µs", "write: wait to run µs",
                                  "sync: device µs", "sync: wait to run µs",
                                  "sync to sync µs", "run queue µs per run"]))
    print("medians; the device's part ends at the thread's wake-up, the wait to run at the "
          "call's return; the run queue from /proc/PID/task/*/schedstat over the trace")
    print()
    print(tabulate(by_file, headers=["threads", "sync_binlog", "sysbench TPS",
                                     "the server's syncs/s by file"]))
    print()
    print(tabulate(by_role, headers=["threads", "sync_binlog", "server thread",
                                     "how many", "redo syncs/s", "data-file syncs/s"]))
    print()
    for n, sbv, tps, settled, per_s, gauges, tables in counters:
        print(f"threads {n}, sync_binlog {sbv}, {tps} TPS; settle {settled}")
        print(f"  the server's counters per second: {per_s}")
        print(f"  gauges at the trace's start and end: {gauges}")
        print(f"  tables (MiB) at the trace's start and end: {tables}")


if __name__ == "__main__":
    main()
