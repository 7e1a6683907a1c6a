"""A live workload's evidence: each input the simulator needs, with where it came from
(``Input.source``: the sources are described in innoflush/live/workload.py, which
measures them), and how what was read becomes those inputs (pure: no server, no /proc)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from . import perfschema
from .activity import Activity
from .facts import ServerFacts
from .observed import estimate_commits
from .procfs import (
    process_name,
    redo_o_direct,
)
from .sampling import Interval

SOURCES = ("measured", "/proc", "performance_schema", "estimated", "bound", "option",
           "default", "unknown")


@dataclass
class Input:
    """One workload figure with where it came from; low/high where only a range is known."""

    value: float | None
    source: str
    detail: str
    low: float | None = None
    high: float | None = None

    def to_dict(self) -> dict:
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 3)
        return {"value": r(self.value), "source": self.source, "detail": self.detail,
                "low": r(self.low), "high": r(self.high)}


def unknown(why: str) -> Input:
    return Input(None, "unknown", why)


@dataclass
class WorkloadEvidence:
    seconds: float
    commits: int
    commits_per_s: float
    connections: Input
    inside_us_per_trx: Input
    outside_us_per_trx: Input
    commit_wait_us_per_trx: Input
    server_cpu_us_per_trx: Input
    background_cpu_us_per_trx: Input
    other_cpu_us_per_trx: Input
    statements_per_trx: Input
    cpu_cores: Input
    redo_syncs_per_s: Input
    data_file_syncs_per_s: Input
    binlog_syncs_per_s: Input
    data_file_sync_us: Input
    commit_statement_us: Input
    activity: Activity
    pfs: perfschema.PfsDelta | None
    server_process: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # the processes at the other end of the server's connections (a load generator here);
    # other_cpu_us_per_trx is then the rest of the host, which does not grow per commit
    client_cpu_us_per_trx: Input = field(
        default_factory=lambda: unknown("the clients were not looked for"))
    # bytes a growing tablespace is extended by at a time (live/tablespaces.py): its
    # inserts' growth over this is how often a commit path waits for the extension syncs
    extend_bytes: Input = field(
        default_factory=lambda: unknown("the tablespaces' sizes were not read"))
    # the files the window's page writes spread over (live/tablespaces.py): how many a
    # page flush batch syncs
    tablespaces_written: Input = field(
        default_factory=lambda: unknown("the tables' row changes were not read"))
    # the hand-off probe on the server's host (live/handoff.py, Handoff.to_dict()): what
    # a lone connection's statements cost there once its commits do not sleep; None: not
    # measured, handoff_note says why
    handoff: dict | None = None
    handoff_note: str = "not measured"

    INPUTS = ("connections", "inside_us_per_trx", "outside_us_per_trx",
              "commit_wait_us_per_trx", "server_cpu_us_per_trx",
              "background_cpu_us_per_trx", "client_cpu_us_per_trx", "other_cpu_us_per_trx",
              "extend_bytes", "tablespaces_written", "statements_per_trx",
              "cpu_cores", "redo_syncs_per_s", "data_file_syncs_per_s",
              "binlog_syncs_per_s", "data_file_sync_us", "commit_statement_us")

    def to_dict(self) -> dict:
        d: dict = {"seconds": round(self.seconds, 3), "commits": self.commits,
                   "commits_per_s": round(self.commits_per_s, 3)}
        d.update({k: getattr(self, k).to_dict() for k in self.INPUTS})
        d["activity"] = self.activity.to_dict()
        d["performance_schema"] = self.pfs.to_dict() if self.pfs else None
        d["server_process"] = self.server_process
        d["handoff"] = self.handoff if self.handoff else {"problem": self.handoff_note}
        d["notes"] = list(self.notes)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> WorkloadEvidence:
        """The evidence of a report's ``workload`` (to fit it again, offline)."""
        a = dict(d.get("activity") or {})
        period_ms = a.pop("period_ms", None)
        a.pop("tids", None)
        activity = Activity(**{**a, "period_s": period_ms / 1e3 if period_ms else None})
        pfs = d.get("performance_schema")
        handoff = d.get("handoff") or {}
        return cls(seconds=d["seconds"], commits=d["commits"],
                   commits_per_s=d["commits_per_s"],
                   **{k: Input(**d[k]) if d.get(k) else unknown("not in this report")
                      for k in cls.INPUTS},
                   activity=activity,
                   pfs=perfschema.PfsDelta(**pfs) if pfs else None,
                   server_process=dict(d.get("server_process") or {}),
                   handoff=handoff if handoff.get("round_trip_us") else None,
                   handoff_note=handoff.get("problem") or "not in this report",
                   notes=list(d.get("notes") or []))


@dataclass
class HostSnapshot:
    process_s: float | None
    threads: dict[int, float]
    machine: dict | None
    own_s: float
    processes: dict[int, float] = field(default_factory=dict)   # pid -> CPU seconds
    clients: set[int] = field(default_factory=set)   # pids at the connections' other end


# ---- from what was read to the inputs (pure) --------------------------------------------

def evidence(facts: ServerFacts, total: Interval, activity: Activity,
             pfs: perfschema.PfsDelta | None, host0: HostSnapshot | None,
             host1: HostSnapshot | None, own_statements: int, *, pid: int | None = None,
             pid_reason: str = "", connections_option: int | None = None,
             cpu_cores_option: int | None = None) -> WorkloadEvidence:
    d = total.deltas
    s = max(total.seconds, 1e-9)
    commits, _, _ = estimate_commits(d, facts.product, facts.log_bin)
    if pfs is not None and pfs.transactions:
        commits = pfs.transactions
    t = commits / s
    notes: list[str] = []

    conns = _connections(activity, connections_option)
    n = conns.value
    per_trx_us = (n / t * 1e6) if n and t else None
    inside = outside = wait = unknown(
        "no commits" if not t else "the connections are unknown" if not n else
        activity.problem or "the processlist's samples are not usable")
    if per_trx_us is not None and activity.busy_share is not None and activity.usable:
        f = activity.busy_share
        what = (f"{activity.source}: {activity.samples} samples every "
                f"{(activity.period_s or 0) * 1e3:.0f} ms; busy {f:.1%} of the time")
        inside = Input(f * per_trx_us, "measured", f"{what} x N/T")
        outside = Input((1 - f) * per_trx_us, "measured",
                        f"{what}: the rest of N/T, outside the server (client, network)")
        wait = Input((activity.commit_wait_share or 0.0) * per_trx_us, "measured",
                     f"{activity.source}: share of samples in a commit state "
                     "('Commit', 'Updating status', 'waiting for handler commit') x N/T")

    server_cpu, background, client, other, cores = _cpu(facts, host0, host1, activity, commits,
                                                inside, wait, pid, pid_reason,
                                                cpu_cores_option)
    questions = d.get("Questions")
    if questions is not None and commits:
        stmts = max(1.0, (questions - own_statements) / commits)
        statements = Input(stmts, "measured", "(Questions - the advisor's own statements) "
                           "/ commits")
    else:
        statements = unknown("Questions not counted or no commits")

    redo, data, binlog = _sync_split(facts, d, s, pfs)
    data_us = (Input(pfs.data_file_sync_us, "performance_schema",
                     "SUM_TIMER_MISC / COUNT_MISC of wait/io/file/innodb/innodb_data_file "
                     "(opens and closes included: rough)")
               if pfs is not None and pfs.data_file_sync_us is not None
               else unknown("performance_schema off or no data-file syncs"))
    commit_us = (Input(pfs.commit_statement_us, "performance_schema",
                       "statement/sql/commit: AVG_TIMER_WAIT (explicit COMMITs over the "
                       "text protocol)")
                 if pfs is not None and pfs.commit_statement_us is not None
                 else unknown("no COMMIT statements timed by performance_schema"))
    if activity.problem:
        notes.append(activity.problem)
    elif activity.sees_all is False:
        notes.append("the account sees only its own connections (SHOW PROCESSLIST without "
                     "the PROCESS privilege, performance_schema not readable): grant PROCESS "
                     "or SELECT on performance_schema, or give --connections")
    return WorkloadEvidence(
        seconds=s, commits=commits, commits_per_s=t, connections=conns,
        inside_us_per_trx=inside, outside_us_per_trx=outside, commit_wait_us_per_trx=wait,
        server_cpu_us_per_trx=server_cpu, background_cpu_us_per_trx=background,
        other_cpu_us_per_trx=other, client_cpu_us_per_trx=client,
        statements_per_trx=statements, cpu_cores=cores,
        redo_syncs_per_s=redo, data_file_syncs_per_s=data, binlog_syncs_per_s=binlog,
        data_file_sync_us=data_us, commit_statement_us=commit_us, activity=activity, pfs=pfs,
        server_process={"pid": pid, "local": pid is not None, "reason": pid_reason,
                        "redo_o_direct": redo_o_direct(pid) if pid else None},
        notes=notes)


def _connections(activity: Activity, option: int | None) -> Input:
    if option:
        return Input(float(option), "option", "--connections")
    if activity.usable and activity.sees_all is not False:
        return Input(float(activity.connections), "measured",
                     f"{activity.source}: client connections busy in at least one of "
                     f"{activity.samples} samples ({activity.idle_connections} only asleep, "
                     "left out)")
    why = activity.problem or (
        "the processlist shows only this account's connections" if activity.sees_all is False
        else f"too few processlist samples ({activity.samples}) or no busy connection")
    return unknown(why)


def _cpu(facts: ServerFacts, h0: HostSnapshot | None, h1: HostSnapshot | None,
         activity: Activity, commits: int, inside: Input, wait: Input, pid: int | None,
         pid_reason: str, cores_option: int | None
         ) -> tuple[Input, Input, Input, Input, Input]:
    if cores_option:
        cores = Input(float(cores_option), "option", "--cpu-cores")
    elif pid is not None:
        cores = Input(float(os.cpu_count() or 1), "/proc", "the server runs on this host")
    else:
        cores = Input(float(os.cpu_count() or 1), "default",
                      "the server's host is not this one: its cores are not known, this "
                      "host's count is assumed (--cpu-cores)")
    if (pid is None or h0 is None or h1 is None or h0.process_s is None
            or h1.process_s is None or not commits):
        if inside.value is not None and wait.value is not None:
            bound = Input(max(0.0, inside.value - wait.value), "bound",
                          "at most the time inside the server outside the commit wait "
                          f"(no /proc: {pid_reason})", high=inside.value - wait.value)
        else:
            bound = unknown(f"no /proc ({pid_reason}) and no processlist figures")
        none = unknown(f"no /proc: {pid_reason}")
        return bound, none, none, none, cores
    total_s = h1.process_s - h0.process_s
    per = 1e6 / commits
    tids = set(activity.tids)
    if tids:
        conn_s = sum(max(0.0, h1.threads[t] - h0.threads.get(t, 0.0))
                     for t in tids if t in h1.threads)
        server = Input(conn_s * per, "/proc", f"utime+stime of the {len(tids)} connection "
                       f"threads (/proc/{pid}/task) / commits")
        background = Input(max(0.0, total_s - conn_s) * per, "/proc",
                           "the server's other threads (page cleaner, purge, I/O) / commits")
    else:
        server = Input(total_s * per, "/proc", f"utime+stime of process {pid} / commits "
                       "(connection threads not told apart: no thread ids)")
        background = unknown("connection threads not told apart")
    client, client_s = _clients(h0, h1, per)
    other = unknown("/proc/stat not readable")
    if h0.machine and h1.machine:
        busy = h1.machine["busy"] - h0.machine["busy"]
        own = h1.own_s - h0.own_s
        rest = max(0.0, busy - total_s - own - client_s) * per
        other = (Input(rest, "/proc", "/proc/stat busy time less the server's, its clients' "
                       "and innoflush's own, / commits: the host's other processes, whose "
                       "CPU does not grow with the commits")
                 if client.value is not None else
                 Input(rest, "/proc", "/proc/stat busy time less the server's and innoflush's "
                       "own, / commits: the other processes on this host (the load "
                       "generator, if it runs here)"))
    return server, background, client, other, cores


def _clients(h0: HostSnapshot, h1: HostSnapshot, per: float) -> tuple[Input, float]:
    """The CPU of the processes at the other end of the server's connections, per commit,
    and in seconds; unknown when none was found (the clients run elsewhere, or their fds
    are not readable: other_cpu_us_per_trx then holds them)."""
    pids = (h0.clients | h1.clients) & set(h1.processes)
    if not pids:
        return unknown("no process on this host holds the other end of the server's "
                       "connections (or their fds are not readable)"), 0.0
    sec = sum(max(0.0, h1.processes[p] - h0.processes.get(p, 0.0)) for p in pids)
    names = ", ".join(sorted(f"{process_name(p)} ({p})" for p in pids))
    return Input(sec * per, "/proc", "utime+stime of the processes at the other end of the "
                 f"server's connections, / commits: {names}"), sec


def _sync_split(facts: ServerFacts, d: dict, s: float, pfs: perfschema.PfsDelta | None
                ) -> tuple[Input, Input, Input]:
    total = d.get("Innodb_data_fsyncs")
    tc = facts.trx_commit
    redo: Input
    if pfs is not None and pfs.redo_syncs is not None:
        redo = Input(pfs.redo_syncs / s, "performance_schema",
                     "COUNT_MISC of wait/io/file/innodb/innodb_log_file (an upper bound)")
    elif pfs is not None and pfs.data_file_syncs is not None and total is not None:
        redo = Input(max(0, total - pfs.data_file_syncs) / s, "performance_schema",
                     "Innodb_data_fsyncs less the data files' syncs (COUNT_MISC of "
                     "innodb_data_file)")
    elif "Innodb_os_log_fsyncs" in d:
        redo = Input(d["Innodb_os_log_fsyncs"] / s, "measured", "Innodb_os_log_fsyncs")
    elif facts.redo_write_through:
        redo = Input(0.0, "estimated", "the redo log is write-through: no syncs")
    elif tc in (1, 3) and d.get("Innodb_log_writes") is not None:
        redo = Input(d["Innodb_log_writes"] / s, "estimated",
                     "Innodb_log_writes: one sync per redo write at trx_commit=1 "
                     "(within 2 % of strace's count)")
    elif total is not None:
        timer = s / max(facts.flush_log_at_timeout, 1e-3)
        batches = d.get("Innodb_dblwr_writes", 0)
        redo = Input(min(total, timer + batches) / s, "estimated",
                     "one per innodb_flush_log_at_timeout plus one per doublewrite batch "
                     "(the write-ahead rule); performance_schema would count them",
                     low=min(total, timer) / s, high=total / s)
    else:
        redo = unknown("Innodb_data_fsyncs not counted")
    if pfs is not None and pfs.data_file_syncs is not None:
        data = Input(pfs.data_file_syncs / s, "performance_schema",
                     "COUNT_MISC of wait/io/file/innodb/innodb_data_file (opens and closes "
                     "too: an upper bound)")
    elif total is not None and redo.value is not None:
        lo = None if redo.high is None else max(0.0, total / s - redo.high)
        hi = None if redo.low is None else max(0.0, total / s - redo.low)
        data = Input(max(0.0, total / s - redo.value), "estimated",
                     "Innodb_data_fsyncs less the redo syncs", low=lo, high=hi)
    else:
        data = unknown("the redo syncs are not known")
    if pfs is not None and pfs.binlog_syncs is not None:
        binlog = Input(pfs.binlog_syncs / s, "performance_schema",
                       "COUNT_MISC of wait/io/file/sql/binlog")
    elif facts.log_bin and facts.sync_binlog == 1 and "Binlog_group_commits" in d:
        binlog = Input(d["Binlog_group_commits"] / s, "estimated",
                       "Binlog_group_commits: one sync per group at sync_binlog=1")
    elif not facts.log_bin:
        binlog = Input(0.0, "estimated", "binary log off")
    else:
        binlog = unknown("sync_binlog is not 1 and performance_schema does not count them")
    return redo, data, binlog


def redo_syncs_known(ev: WorkloadEvidence | None) -> tuple[int, str] | None:
    """The redo syncs over the window when the server counted them itself (for observe)."""
    if ev is None or ev.redo_syncs_per_s.source != "performance_schema" \
            or ev.redo_syncs_per_s.value is None:
        return None
    return (int(round(ev.redo_syncs_per_s.value * ev.seconds)),
            f"performance_schema: {ev.redo_syncs_per_s.detail}")
