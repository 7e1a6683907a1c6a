"""The user's own load generator (``--workload-cmd``) run against a lab server.

``CommandLoad`` does for a ``WorkloadCommand`` (lab/load/command_spec.py) what the lab's
client processes do for its own workload, inside ``run.measure_one``:

1. ``prepare``: on the fresh server, create ``{database}``, write ``{password_file}``
   (0600, in the run's work directory: the password never goes on a command line) and
   run the prepare command (``--workload-prepare``) to its end;
2. ``drive``: start the command through ``sh -c`` in a process group of its own (a
   terminal's Ctrl-C does not reach it: the lab stops it), its stdout and stderr to a
   log file in the work directory; wait for its first commit (SHOW GLOBAL STATUS, the
   advisor's ``estimate_commits``), let it run ``--warmup`` seconds — and, with a
   settling time (``WorkloadSpec.settle_s``), on until the page cleaner is at work (the
   checkpoint age at its async point, or falling) or that time is up — then the measured
   window — the caller's ``at_start`` (status and CPU snapshots) and ``during`` (advise)
   at its start, ``at_end`` at its end, ``--duration`` seconds later — and stop it:
   SIGTERM to its group, SIGKILL after a grace period; also on any error and Ctrl-C;
3. ``result``: what the window measured, shaped as the lab's ``WorkloadResult``: the
   commits are the server's (the status deltas), the command's CPU that of its process
   group (/proc), and the client-side latencies unknown (None, with a note).

A command that exits non-zero before the window ended, exits before the window began,
or commits nothing, fails the run with a LabError that names it and shows the last
lines of its log (kept in the system's temporary directory, since the work directory
goes with the server). Its output is never shown with the password in it.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ... import signals
from ...live.observed import estimate_commits
from ...live.procfs import process_stats
from ..experiments.options import LabError
from ..experiments.predict import async_point
from .command_spec import WorkloadCommand, seconds_for, substitute
from .workload import DATABASE, WorkloadSpec

READY_TIMEOUT_S = 60.0       # from the start to the first commit
PREPARE_TIMEOUT_S = 3600.0
STOP_GRACE_S = 5.0           # SIGTERM, then SIGKILL
POLL_S = 0.1
SETTLE_POLL_S = 0.5          # between reads of the checkpoint age while settling
TAIL_LINES = 12
BUSY_TOTAL = 0.90            # the command's processes at this share of the machine: bound
LATENCY_NOTE = ("client-side latency is unknown for an external command (the lab does not "
                "see its transactions): commit and transaction latencies are null")
# statements the lab's and advise's reads add to Questions during a window
OWN_READS = ("Com_show_status", "Com_show_variables", "Com_show_processlist")


# ---- a command in a process group of its own ------------------------------------------

def group_cpu_seconds(pgid: int) -> dict[int, float]:
    """CPU seconds (user + system, and of the children they reaped) of every live process
    in the process group, by pid (/proc/PID/stat): a child's time moves to its parent
    when reaped, so the group's sum keeps it. Zombies (dead, not yet reaped) are left
    out."""
    return {pid: st.cpu_s + st.children_cpu_s for pid, st in process_stats().items()
            if st.pgid == pgid and st.state not in ("Z", "X")}


class CommandProcess:
    """``sh -c TEXT`` in a new session (its own process group), output to a log file."""

    def __init__(self, text: str, log: Path, cwd: Path):
        self.text, self.log, self.cwd = text, log, cwd
        self._proc: subprocess.Popen | None = None
        self.started: float = 0.0
        self.ended: float | None = None
        self.stopped_by: str | None = None    # None | "SIGTERM" | "SIGKILL"

    def start(self) -> CommandProcess:
        with open(self.log, "ab") as out:
            try:
                # deferred: a stop signal lands once the shell is ours to stop (in a
                # session of its own, nothing else would ever end it)
                with signals.deferred():
                    self._proc = subprocess.Popen(
                        ["/bin/sh", "-c", self.text], cwd=self.cwd, stdin=subprocess.DEVNULL,
                        stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
            except OSError as exc:
                raise LabError(f"cannot run /bin/sh: {exc}") from None
            except BaseException:
                self.stop()      # the caller never gets it
                raise
        self.started = time.monotonic()
        return self

    @property
    def proc(self) -> subprocess.Popen:
        """The shell (started)."""
        if self._proc is None:
            raise LabError("the workload command was not started")
        return self._proc

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode if self._proc is not None else None

    @property
    def pgid(self) -> int:
        """Its process group: the shell's pid (a session leader)."""
        return self.proc.pid

    def poll(self) -> int | None:
        rc = self._proc.poll() if self._proc is not None else None
        if rc is not None and self.ended is None:
            self.ended = time.monotonic()
        return rc

    def _group_alive(self) -> bool:
        """Whether a live (not zombie) process is left in the group."""
        return bool(group_cpu_seconds(self.proc.pid))

    def _signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """SIGTERM to the whole group (the shell and whatever it started), SIGKILL to
        what is left after grace_s; returns once the shell is reaped and the group gone."""
        if self._proc is None:
            return
        running = self.poll() is None
        if running or self._group_alive():
            if running:
                self.stopped_by = "SIGTERM"
            self._signal(signal.SIGTERM)
            deadline = time.monotonic() + grace_s
            while time.monotonic() < deadline:
                if self.poll() is not None and not self._group_alive():
                    break
                time.sleep(0.05)
            else:
                if self.poll() is None:
                    self.stopped_by = "SIGKILL"
                self._signal(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=grace_s)
        deadline = time.monotonic() + grace_s
        while self._group_alive() and time.monotonic() < deadline:
            self._signal(signal.SIGKILL)
            time.sleep(0.02)
        self.poll()

    def tail(self, lines: int = TAIL_LINES, secret: str = "") -> list[str]:
        try:
            with open(self.log, "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - 64 * 1024))
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return []
        if secret:
            text = text.replace(secret, "********")
        return [line.rstrip() for line in text.splitlines() if line.strip()][-lines:]


def keep_log(log: Path, name: str, secret: str = "") -> str | None:
    """A copy of a failed command's log that outlives the work directory (in the system's
    temporary directory, the password blanked); its path, or None."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "command"
    try:
        fd, path = tempfile.mkstemp(prefix=f"innoflush-workload-{safe}-", suffix=".log")
        with os.fdopen(fd, "wb") as out, open(log, "rb") as f:
            data = f.read()
            out.write(data.replace(secret.encode(), b"********") if secret else data)
        return path
    except OSError:
        return None


# ---- what a window measured -----------------------------------------------------------

_NO_LATENCY = {"mean": None, "p50": None, "p95": None, "p99": None}


@dataclass
class CommandResult:
    """A command's measured window, with the keys of the lab's WorkloadResult."""

    spec: WorkloadSpec
    commits: int
    seconds: float
    cpu_cores: int
    client_cpu: dict
    warmup_commits: int | None = None
    notes: list[str] = field(default_factory=list)
    settle: dict | None = None     # CommandLoad.settle's record, when it settled
    errors: int = 0
    retries: int = 0
    clients: list = field(default_factory=list)     # no per-transaction timings

    @property
    def window_s(self) -> float:
        return self.seconds

    @property
    def tps(self) -> float:
        return self.commits / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict:
        return {"seconds": round(self.seconds, 3), "commits": self.commits,
                "tps": round(self.tps, 2), "commit_latency_ms": dict(_NO_LATENCY),
                "trx_latency_ms": dict(_NO_LATENCY), "warmup_s": self.spec.warmup_s,
                "warmup_commits": self.warmup_commits, "errors": 0, "retries": 0,
                "error_messages": [], "client_cpu": dict(self.client_cpu),
                "per_connection_commits": None, "notes": list(self.notes)}


def command_cpu(cpu0: dict[int, float], cpu1: dict[int, float], seconds: float,
                commits: int, cores: int) -> dict:
    """The command's processes' CPU over the window (the lab's client_cpu keys; a
    process that started and ended inside the window and was not reaped by one of the
    group is missed)."""
    per = {pid: max(0.0, cpu1[pid] - cpu0.get(pid, 0.0)) for pid in cpu1}
    cpu_s = sum(per.values())
    busy = [v / seconds for v in per.values()] if seconds > 0 else []
    share = cpu_s / (seconds * cores) if seconds > 0 and cores > 0 else 0.0
    reasons = []
    if share >= BUSY_TOTAL:
        reasons.append(f"the command's processes used {share:.0%} of the machine's {cores} "
                       f"core(s) (>= {BUSY_TOTAL:.0%})")
    return {"cpu_s": round(cpu_s, 4),
            "cpu_us_per_trx": round(cpu_s * 1e6 / commits, 2) if commits else None,
            "runq_wait_us_per_trx": None,
            "busy_max": round(max(busy, default=0.0), 3),
            "busy_mean": round(sum(busy) / len(busy), 3) if busy else 0.0,
            "share_of_machine": round(share, 3), "bottleneck": bool(reasons),
            "bottleneck_reasons": reasons, "processes": len(per)}


def statements_per_trx(deltas: dict, commits: int) -> tuple[int, str]:
    """Round trips per transaction of a command the lab cannot see: Questions over the
    window less the lab's and advise's own reads, / commits (at least 1)."""
    q = deltas.get("Questions")
    if q is None or commits <= 0:
        return 1, "1 (Questions not counted: assumed)"
    own = sum(deltas.get(k, 0) for k in OWN_READS)
    n = max(1, round((q - own) / commits))
    return n, (f"{n} (Questions {q:,} less {own:,} status/processlist reads, / "
               f"{commits:,} commits)")


# ---- one run of a command ------------------------------------------------------------

class CommandLoad:
    """A WorkloadCommand against one started lab server (see the module doc)."""

    def __init__(self, wc: WorkloadCommand, server, workdir: Path, spec: WorkloadSpec,
                 params: dict, product: str, log_bin: bool, async_point: int | None = None):
        self.wc, self.spec, self.product, self.log_bin = wc, spec, product, log_bin
        self.async_point = async_point   # bytes of checkpoint age (settle's target)
        self.dir = Path(workdir) / "workload"
        self.password = str(params.get("password") or "")
        socket = getattr(server, "socket", None)
        self.values: dict[str, str | None] = {
                       "host": str(params.get("host") or server.HOST),
                       "port": str(params.get("port") or server.port),
                       "socket": str(socket) if socket else None,
                       "user": str(params.get("user") or "root"),
                       "password_file": str(self.dir / "password"),
                       "threads": str(spec.connections),
                       "seconds": str(self.seconds),
                       "database": DATABASE}
        self.process: CommandProcess | None = None
        self.window: dict = {}
        self.notes: list[str] = []

    @property
    def seconds(self) -> int:
        """``{seconds}``: the warm-up, the longest settling and the window, with a margin."""
        return seconds_for(self.spec.warmup_s + self.spec.settle_s, self.spec.duration_s)

    # -- before the run
    def prepare(self, conn) -> None:
        """The database, the password file, then the prepare command to its end."""
        self.dir.mkdir(parents=True, exist_ok=True)
        pw = self.dir / "password"
        fd = os.open(pw, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(self.password)
        os.chmod(pw, 0o600)
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE IF NOT EXISTS `{DATABASE}`")
        if not self.wc.prepare:
            return
        proc = CommandProcess(substitute(self.wc.prepare, self.values),
                              self.dir / "prepare.log", self.dir).start()
        try:
            deadline = time.monotonic() + PREPARE_TIMEOUT_S
            while proc.poll() is None:
                if time.monotonic() > deadline:
                    raise self._failed(proc, "prepare", f"did not end within "
                                       f"{PREPARE_TIMEOUT_S:g} s")
                time.sleep(POLL_S)
            if proc.returncode != 0:
                raise self._failed(proc, "prepare", f"exited with code {proc.returncode}")
        finally:
            proc.stop()

    # -- the run
    def drive(self, read_status, at_start, during, at_end) -> None:
        """Start the command, wait for its first commit, the warm-up, the measured window
        (at_start, during, ..., at_end), stop it. read_status(): SHOW GLOBAL STATUS."""
        proc = self.process = CommandProcess(substitute(self.wc.command, self.values),
                                             self.dir / "command.log", self.dir).start()
        try:
            s0 = read_status()
            began = proc.started
            while True:
                if proc.poll() is not None:
                    raise self._failed(proc, "command", f"exited with code "
                                       f"{proc.returncode} before its first commit")
                s = read_status()
                if self._commits(s0, s) > 0:
                    break
                if time.monotonic() - began > READY_TIMEOUT_S:
                    raise self._failed(proc, "command", f"committed nothing in "
                                       f"{READY_TIMEOUT_S:g} s")
                time.sleep(0.2)
            first = s
            self._wait(proc, self.spec.warmup_s, "the warm-up")
            if self.spec.settle_s > 0:
                self.window["settle"] = self.settle(proc, read_status)
            self.window["warmup_commits"] = self._commits(first, read_status())
            self.window["cpu0"] = group_cpu_seconds(proc.pgid)
            self.window["t0"] = time.monotonic()
            at_start()
            during()
            cut = self._wait(proc, self.spec.duration_s, "the measured window",
                             end_on_exit=True)
            at_end()
            self.window["cpu1"] = group_cpu_seconds(proc.pgid)
            self.window["t1"] = time.monotonic()
            if cut is not None:
                self.notes.append(f"the command ended on its own (exit 0) {cut:.1f} s into "
                                  f"the {self.spec.duration_s:g}-s window: the window ends "
                                  "there (give it {seconds} to run longer)")
        finally:
            proc.stop()
        self.window["tail"] = proc.tail(secret=self.password)

    def settle(self, proc: CommandProcess, read_status) -> dict:
        """Run on until the page cleaner is at work, at most settle_s
        (wait_for_page_cleaner). A fresh server's first seconds are not what a server
        kept at a setting does: MariaDB's page cleaner (innodb_max_dirty_pages_pct_lwm=0)
        sleeps until the checkpoint age reaches its async point, then passes every
        second, and goes on with adaptive passes while the age is past
        innodb_adaptive_flushing_lwm."""
        return wait_for_page_cleaner(
            lambda: read_status().get("Innodb_checkpoint_age"), self.async_point,
            self.spec.settle_s, lambda s: self._wait(proc, s, "the settling"))

    def _commits(self, a: dict, b: dict) -> int:
        d = {k: b[k] - a[k] for k in b if k in a and isinstance(b[k], int)}
        return estimate_commits(d, self.product, self.log_bin)[0]

    def _wait(self, proc: CommandProcess, seconds: float, phase: str,
              end_on_exit: bool = False) -> float | None:
        """Sleep `seconds` while the command runs: a non-zero exit fails; exit 0 fails
        too, unless end_on_exit (then: the seconds it lasted)."""
        t0 = time.monotonic()
        end = t0 + seconds
        while time.monotonic() < end:
            rc = proc.poll()
            if rc is not None:
                if rc == 0 and end_on_exit:
                    return time.monotonic() - t0
                raise self._failed(proc, "command", f"exited with code {rc} during {phase}"
                                   + (" (before the measured window began)" if rc == 0
                                      else ""))
            time.sleep(min(POLL_S, max(0.0, end - time.monotonic())))
            # a stop signal whose first raise CPython dropped (PyMySQL's __del__)
            signals.check()
        return None

    def _failed(self, proc: CommandProcess, which: str, what: str) -> LabError:
        proc.stop()
        text = self.wc.prepare if which == "prepare" else self.wc.command
        kept = keep_log(proc.log, self.wc.name, self.password)
        lines = proc.tail(secret=self.password)
        where = f"its log ({kept})" if kept else "its log"
        body = ("\n".join(f"    {line}" for line in lines) if lines
                else "    (no output)")
        label = "--workload-prepare" if which == "prepare" else "--workload-cmd"
        return LabError(f"the workload {self.wc.name!r} ({label} {text!r}) {what}; "
                        f"{where} ends:\n{body}")

    # -- after the run
    def result(self, observed, iv, cores: int) -> CommandResult:
        """The window's CommandResult (commits: the server's); LabError without any."""
        w = self.window
        seconds = iv.seconds
        commits = observed.commits
        if commits <= 0:
            proc = self.process
            kept = keep_log(proc.log, self.wc.name, self.password) if proc else None
            lines = w.get("tail") or []
            raise LabError(f"the workload {self.wc.name!r} (--workload-cmd "
                           f"{self.wc.command!r}) committed nothing in the measured window "
                           f"(counted from {observed.commits_source}); its log"
                           + (f" ({kept})" if kept else "") + " ends:\n"
                           + ("\n".join(f"    {line}" for line in lines) or "    (no output)"))
        cpu = command_cpu(w.get("cpu0") or {}, w.get("cpu1") or {}, seconds, commits, cores)
        n, source = statements_per_trx(dict(iv.deltas), commits)
        self.window["statements_per_trx"] = n
        self.window["statements_source"] = source
        notes = [LATENCY_NOTE] + list(self.notes)
        return CommandResult(spec=self.spec, commits=commits, seconds=seconds,
                             cpu_cores=cores, client_cpu=cpu,
                             warmup_commits=w.get("warmup_commits"), notes=notes,
                             settle=w.get("settle"))

    def doc(self) -> dict:
        """The report's ``workload_command``: the command as given (placeholders, never
        the password), how it ended, and the end of its output."""
        p = self.process
        return {**self.wc.to_dict(), "threads": self.spec.connections,
                "seconds": self.seconds,
                "database": DATABASE,
                "exit_code": p.returncode if p else None,
                "stopped_by": p.stopped_by if p else None,
                "statements_per_trx": self.window.get("statements_per_trx"),
                "statements_source": self.window.get("statements_source"),
                "output_tail": list(self.window.get("tail") or [])[-5:]}

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()


def wait_for_page_cleaner(read_age: Callable[[], object], target: int | None,
                          limit_s: float, wait: Callable[[float], object],
                          poll_s: float = SETTLE_POLL_S) -> dict:
    """Read the checkpoint age every poll_s until the page cleaner is at work, at most
    limit_s: the age at the async point (target), or falling (a checkpoint: only pages
    flushed move it; a cleaner woken earlier, by a prepare's index builds, keeps the age
    far below the point). wait(seconds) sleeps between reads. {``reached``, ``how``
    (async_point, age_fell, or null), ``seconds``, ``age_bytes`` (the last read),
    ``async_point_bytes``}; reached is None where the server shows no age."""
    t0 = time.monotonic()
    age = last = None
    reached: bool | None = None
    how = None
    while True:
        age = read_age()
        if not isinstance(age, int) or not target:
            reached = None
            break
        if age >= target or (last is not None and age < last):
            reached, how = True, ("async_point" if age >= target else "age_fell")
            break
        left = limit_s - (time.monotonic() - t0)
        if left <= 0:
            reached = False
            break
        last = age
        wait(min(poll_s, left))
    return {"reached": reached, "how": how, "seconds": round(time.monotonic() - t0, 1),
            "age_bytes": age if isinstance(age, int) else None, "async_point_bytes": target}


def command_load(opts, server, workdir: Path, spec: WorkloadSpec, params: dict,
                 facts) -> CommandLoad:
    """The CommandLoad of opts.command for this run's server."""
    return CommandLoad(opts.command, server, workdir, spec, params, facts.product,
                       facts.log_bin, async_point=async_point(facts) if spec.settle_s else None)


__all__ = ["CommandLoad", "CommandProcess", "CommandResult", "LATENCY_NOTE", "command_cpu",
           "command_load", "group_cpu_seconds", "keep_log", "statements_per_trx",
           "wait_for_page_cleaner"]
