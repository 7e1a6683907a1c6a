"""What the lab's client processes (lab/load/clients.py) measured: one process's
transactions and CPU (``ClientRun``), and the run's figures (``WorkloadResult``): commits,
client-side TPS, commit latency (the COMMIT round trip) and transaction latency (first
statement to COMMIT done) as mean/p50/p95/p99 in ms, client CPU per transaction, and
whether the client was the bottleneck (a process at >= 80% of a core, or all of them at
>= 90% of the machine's cores)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .workload import WorkloadSpec

# "the client was the bottleneck" thresholds
BUSY_PER_PROCESS = 0.80      # one process busy this fraction of a core
BUSY_TOTAL = 0.90            # all client processes together, fraction of the machine's cores
MACHINE_SATURATED = 0.90     # clients + server, fraction of the machine's cores


def latency_ms(ns: np.ndarray) -> dict:
    """mean/p50/p95/p99 in ms of an array of nanosecond durations (None when empty)."""
    if ns.size == 0:
        return {"mean": None, "p50": None, "p95": None, "p99": None}
    a = ns.astype(np.float64) / 1e6
    p50, p95, p99 = np.percentile(a, [50, 95, 99])
    return {"mean": round(float(a.mean()), 4), "p50": round(float(p50), 4),
            "p95": round(float(p95), 4), "p99": round(float(p99), 4)}


@dataclass
class ClientRun:
    """What one client process did (arrays: per committed transaction, perf_counter_ns)."""

    idx: int
    pid: int
    trx_start_ns: np.ndarray
    commit_start_ns: np.ndarray
    commit_end_ns: np.ndarray
    start_ns: int
    end_ns: int
    cpu_ns: int
    errors: int
    retries: int
    messages: list[str]
    stopped_early: bool
    warmup_commits: int = 0
    runq_wait_ns: int = 0       # time it waited for a CPU (run queue), /proc schedstat

    @property
    def commits(self) -> int:
        return int(self.commit_end_ns.size)

    @property
    def wall_s(self) -> float:
        return max(0.0, (self.end_ns - self.start_ns) / 1e9)

    @property
    def busy(self) -> float:
        """CPU seconds / wall seconds: the fraction of a core this process used."""
        return self.cpu_ns / 1e9 / self.wall_s if self.wall_s > 0 else 0.0


def client_cpu_summary(clients: list[ClientRun], commits: int, cores: int) -> dict:
    """Client CPU figures and the bottleneck verdict (pure arithmetic, see thresholds)."""
    cpu_s = sum(c.cpu_ns for c in clients) / 1e9
    wait_s = sum(c.runq_wait_ns for c in clients) / 1e9
    wall = max((c.wall_s for c in clients), default=0.0)
    busy = [c.busy for c in clients]
    busy_max = max(busy, default=0.0)
    share = cpu_s / (wall * cores) if wall > 0 and cores > 0 else 0.0
    reasons = []
    if busy_max >= BUSY_PER_PROCESS:
        reasons.append(f"a client process used {busy_max:.0%} of a core "
                       f"(>= {BUSY_PER_PROCESS:.0%})")
    if share >= BUSY_TOTAL:
        reasons.append(f"the client processes used {share:.0%} of the machine's {cores} "
                       f"core(s) (>= {BUSY_TOTAL:.0%})")
    return {"cpu_s": round(cpu_s, 4),
            "cpu_us_per_trx": round(cpu_s * 1e6 / commits, 2) if commits else None,
            "runq_wait_us_per_trx": round(wait_s * 1e6 / commits, 2) if commits else None,
            "busy_max": round(busy_max, 3),
            "busy_mean": round(sum(busy) / len(busy), 3) if busy else 0.0,
            "share_of_machine": round(share, 3),
            "bottleneck": bool(reasons),
            "bottleneck_reasons": reasons}


@dataclass
class WorkloadResult:
    spec: WorkloadSpec
    clients: list[ClientRun]
    cpu_cores: int
    notes: list[str] = field(default_factory=list)

    @property
    def commits(self) -> int:
        return sum(c.commits for c in self.clients)

    @property
    def errors(self) -> int:
        return sum(c.errors for c in self.clients)

    @property
    def retries(self) -> int:
        return sum(c.retries for c in self.clients)

    @property
    def window_s(self) -> float:
        """From the first process's start to the last one's end (one monotonic clock)."""
        ran = [c for c in self.clients if c.end_ns > c.start_ns]
        if not ran:
            return 0.0
        return (max(c.end_ns for c in ran) - min(c.start_ns for c in ran)) / 1e9

    @property
    def tps(self) -> float:
        w = self.window_s
        return self.commits / w if w > 0 else 0.0

    def _cat(self, name: str) -> np.ndarray:
        arrays = [getattr(c, name) for c in self.clients]
        return np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)

    def commit_latency_ns(self) -> np.ndarray:
        return self._cat("commit_end_ns") - self._cat("commit_start_ns")

    def trx_latency_ns(self) -> np.ndarray:
        return self._cat("commit_end_ns") - self._cat("trx_start_ns")

    def cpu(self) -> dict:
        return client_cpu_summary(self.clients, self.commits, self.cpu_cores)

    def to_dict(self) -> dict:
        msgs = [m for c in self.clients for m in c.messages]
        return {"seconds": round(self.window_s, 3), "commits": self.commits,
                "tps": round(self.tps, 2),
                "commit_latency_ms": latency_ms(self.commit_latency_ns()),
                "trx_latency_ms": latency_ms(self.trx_latency_ns()),
                "warmup_s": self.spec.warmup_s,
                "warmup_commits": sum(c.warmup_commits for c in self.clients),
                "errors": self.errors, "retries": self.retries, "error_messages": msgs[:10],
                "client_cpu": self.cpu(),
                "per_connection_commits": [c.commits for c in self.clients],
                "notes": list(self.notes)}


__all__ = ["ClientRun", "WorkloadResult", "client_cpu_summary", "latency_ms"]
