"""The server process on this host, from /proc: is the server we are connected to running
here (its pid file, its executable, its age against ``Uptime``), and the CPU time it and
its threads use (``/proc/PID/stat``, ``/proc/PID/task/*/stat``; nanoseconds from
``schedstat``), beside the machine's (``/proc/stat``).

A pid file names a process of this host's pid namespace: a server in a container, or on
another host with the same path, is told apart by the executable's name and by the
process's age, which must match the server's ``Uptime``.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass


@dataclass(frozen=True)
class ProcStat:
    """The parts of /proc/PID/stat this project reads (proc(5) fields 3, 5, 14-17)."""

    state: str
    pgid: int
    cpu_s: float            # utime + stime, all its threads
    children_cpu_s: float   # cutime + cstime: the children it has reaped


def read_stat(path: str) -> ProcStat | None:
    """One /proc/PID/stat (or /proc/PID/task/TID/stat); None if gone or unreadable."""
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    rest = text[text.rfind(")") + 2:].split()   # after the command name, which may hold ")"
    try:
        hz = os.sysconf("SC_CLK_TCK")
        return ProcStat(rest[0], int(rest[2]), (int(rest[11]) + int(rest[12])) / hz,
                        (int(rest[13]) + int(rest[14])) / hz)
    except (IndexError, ValueError):
        return None


def proc_cpu_seconds(pid: int, stat_path: str | None = None) -> float | None:
    """utime + stime of a process (all its threads), from /proc/PID/stat; None if gone."""
    st = read_stat(stat_path or f"/proc/{pid}/stat")
    return st.cpu_s if st else None


def process_stats(proc: str = "/proc") -> dict[int, ProcStat]:
    """{pid: its stat} of every process visible here."""
    try:
        pids = [int(p) for p in os.listdir(proc) if p.isdigit()]
    except OSError:
        return {}
    out: dict[int, ProcStat] = {}
    for pid in pids:
        st = read_stat(f"{proc}/{pid}/stat")
        if st is not None:
            out[pid] = st
    return out


def processes_cpu(proc: str = "/proc") -> dict[int, float]:
    """{pid: utime + stime seconds} of every process visible here."""
    return {pid: st.cpu_s for pid, st in process_stats(proc).items()}


def process_name(pid: int, proc: str = "/proc") -> str:
    """A process's command name (/proc/PID/comm), "?" if gone."""
    try:
        with open(f"{proc}/{pid}/comm", encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return "?"


def thread_cpu(pid: int, task_dir: str | None = None) -> dict[int, float]:
    """{thread id: utime + stime seconds} of every thread of a process ({} if unreadable)."""
    root = task_dir or f"/proc/{pid}/task"
    out: dict[int, float] = {}
    try:
        tids = os.listdir(root)
    except OSError:
        return out
    for tid in tids:
        sec = proc_cpu_seconds(0, os.path.join(root, tid, "stat"))
        if sec is not None and tid.isdigit():
            out[int(tid)] = sec
    return out


def machine_cpu(stat_path: str = "/proc/stat") -> dict | None:
    """All CPUs since boot, in seconds: ``busy`` (user, nice, system, irq, softirq),
    ``steal`` (taken by the hypervisor), ``total``; None if unreadable."""
    try:
        with open(stat_path, encoding="ascii") as f:
            first = f.readline().split()
    except OSError:
        return None
    if not first or first[0] != "cpu":
        return None
    vals = [int(x) for x in first[1:9]] + [0] * 8
    user, nice, system, idle, iowait, irq, softirq, steal = vals[:8]
    hz = os.sysconf("SC_CLK_TCK")
    return {"busy": (user + nice + system + irq + softirq) / hz, "steal": steal / hz,
            "total": (user + nice + system + idle + iowait + irq + softirq + steal) / hz}


def schedstat(pid: int | None) -> dict[int, tuple[int, int, int]]:
    """{thread id: (ns on a CPU, ns waiting on a run queue, times run)}
    (/proc/PID/task/*/schedstat: ns resolution, unlike the 10 ms ticks of
    /proc/PID/stat); {} if unreadable."""
    out: dict[int, tuple[int, int, int]] = {}
    if not pid:
        return out
    root = f"/proc/{pid}/task"
    try:
        tids = os.listdir(root)
    except OSError:
        return out
    for tid in tids:
        try:
            with open(os.path.join(root, tid, "schedstat"), encoding="ascii") as f:
                a = f.read().split()
            out[int(tid)] = (int(a[0]), int(a[1]), int(a[2]))
        except (OSError, ValueError, IndexError):
            continue
    return out


def threads_runtime_ns(pid: int | None) -> int | None:
    """Nanoseconds on a CPU, summed over a process's live threads; None if unreadable."""
    st = schedstat(pid)
    return sum(v[0] for v in st.values()) if st else None

O_DIRECT = 0o40000   # x86-64, arm64: 0o200000
REDO_FILES = ("ib_logfile0", "#ib_redo")


def fd_links(pid: int, proc: str = "/proc") -> dict[str, str] | None:
    """{fd: what it points at} of a process (/proc/PID/fd); None if not readable."""
    root = f"{proc}/{pid}/fd"
    try:
        fds = os.listdir(root)
    except OSError:
        return None
    out: dict[str, str] = {}
    for fd in fds:
        try:
            out[fd] = os.readlink(os.path.join(root, fd))
        except OSError:
            continue
    return out


def redo_o_direct(pid: int, proc: str = "/proc") -> bool | None:
    """Whether the server holds its redo log with O_DIRECT (the open flags in
    /proc/PID/fdinfo, as the server opened it — MariaDB switches innodb_log_file_buffering
    by itself and its variable can lag what the file is); None when no redo file is
    open or the fds are not readable."""
    flag = 0o200000 if platform.machine() in ("aarch64", "arm64") else O_DIRECT
    for fd, link in (fd_links(pid, proc) or {}).items():
        if os.path.basename(link).startswith(REDO_FILES):
            try:
                with open(f"{proc}/{pid}/fdinfo/{fd}", encoding="ascii") as f:
                    for line in f:
                        if line.startswith("flags:"):
                            return bool(int(line.split()[1], 8) & flag)
            except (OSError, ValueError, IndexError):
                return None
    return None


SERVER_EXECUTABLES = ("mariadbd", "mysqld")
AGE_TOLERANCE_S = 3.0


def process_age_s(pid: int, proc: str = "/proc") -> float | None:
    """Seconds since the process started (its starttime against /proc/uptime)."""
    try:
        with open(f"{proc}/{pid}/stat", encoding="ascii", errors="replace") as f:
            text = f.read()
        with open(f"{proc}/uptime", encoding="ascii") as f:
            up = float(f.read().split()[0])
        start = int(text[text.rfind(")") + 2:].split()[19])   # field 22 of proc(5)
    except (OSError, IndexError, ValueError):
        return None
    return up - start / os.sysconf("SC_CLK_TCK")


def local_server_pid(pid_file: str | None, uptime_s: float | None,
                     proc: str = "/proc") -> tuple[int | None, str]:
    """The pid of the server we are connected to when it runs on this host, and why (or
    why not): the pid file is readable here, names a mariadbd/mysqld process, and that
    process is as old as the server's Uptime (a server in a container or on another host
    with the same path fails one of these)."""
    if not pid_file:
        return None, "the server reports no pid_file"
    try:
        with open(pid_file, encoding="ascii") as f:
            pid = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None, f"its pid file {pid_file} is not readable on this host"
    try:
        exe = os.path.basename(os.readlink(f"{proc}/{pid}/exe"))
    except OSError:
        return None, f"process {pid} (from {pid_file}) is not visible on this host"
    if exe.replace(" (deleted)", "") not in SERVER_EXECUTABLES:
        return None, f"process {pid} (from {pid_file}) is {exe}, not a server"
    age = process_age_s(pid, proc)
    if uptime_s is not None and age is not None and abs(age - uptime_s) > AGE_TOLERANCE_S:
        return None, (f"process {pid} started {age:.0f} s ago but the server's Uptime is "
                      f"{uptime_s:.0f} s: not the server we are connected to")
    return pid, f"process {pid} ({exe}, from {pid_file}; age matches Uptime)"
