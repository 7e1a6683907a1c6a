"""Running the model and reading it out: one run, and replications with confidence."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..profiles import DeviceProfile
from .config import ServerConfig, ServerStart, Workload
from .flavors import Flavor
from .histogram import LatencyHistogram
from .measurement import Window
from .server import Server

# SHOW GLOBAL STATUS names each flavor reports; the rest of the counters are ours.
_MYSQL_STATUS = ("Innodb_data_fsyncs", "Innodb_data_writes", "Innodb_data_written",
                 "Innodb_os_log_fsyncs", "Innodb_log_writes", "Innodb_os_log_written",
                 "Innodb_dblwr_writes", "Innodb_dblwr_pages_written", "Innodb_pages_written")
_MARIADB_STATUS = ("Innodb_data_fsyncs", "Innodb_data_writes", "Innodb_data_written",
                   "Innodb_log_writes", "Innodb_os_log_written", "Innodb_dblwr_writes",
                   "Innodb_dblwr_pages_written", "Innodb_pages_written", "Binlog_commits",
                   "Binlog_group_commits")
SYNC_KINDS = ("redo_syncs", "binlog_syncs", "dblwr_syncs", "data_file_syncs",
              "extension_syncs", "checkpoint_syncs")


@dataclass
class SimResult:
    config: ServerConfig
    workload: Workload
    profile: str
    seed: int
    duration_s: float
    commits: int
    tps: float
    commit_latency_ms: dict
    trx_latency_ms: dict
    status: dict             # SHOW GLOBAL STATUS deltas as the flavor reports them
    syncs_per_s: dict
    group_commit: dict
    data_fsyncs_per_data_write: float | None
    device_flush_util: float
    device_write_util: float
    cpu_util: float
    checkpoint_stall_s: float
    max_checkpoint_age_pct: float
    internal: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "profile": self.profile, "seed": self.seed, "duration_s": self.duration_s,
            "config": self.config.to_dict(), "workload": self.workload.to_dict(),
            "commits": self.commits, "tps": round(self.tps, 3),
            "commit_latency_ms": self.commit_latency_ms,
            "trx_latency_ms": self.trx_latency_ms,
            "status": self.status, "syncs_per_s": self.syncs_per_s,
            "group_commit": self.group_commit,
            "data_fsyncs_per_data_write": self.data_fsyncs_per_data_write,
            "device_flush_util": round(self.device_flush_util, 4),
            "device_write_util": round(self.device_write_util, 4),
            "cpu_util": round(self.cpu_util, 4),
            "checkpoint_stall_s": round(self.checkpoint_stall_s, 4),
            "max_checkpoint_age_pct": round(self.max_checkpoint_age_pct, 2),
            "notes": self.notes,
        }


def _latency_ms(hist: LatencyHistogram) -> dict:
    """Mean (exact) and percentiles (within histogram.MAX_RELATIVE_ERROR) in ms."""
    mean = hist.mean()
    if mean is None:
        return {"mean": None, "p50": None, "p95": None, "p99": None}
    p50, p95, p99 = (v * 1e3 for v in hist.percentiles([50, 95, 99]) if v is not None)
    return {"mean": round(mean * 1e3, 4), "p50": round(p50, 4),
            "p95": round(p95, 4), "p99": round(p99, 4)}


def simulate(config: ServerConfig, workload: Workload, profile: DeviceProfile,
             duration_s: float = 10.0, seed: int = 1, warmup_s: float | None = None,
             queue_depth: int = 32, max_commits: int | None = None,
             start: ServerStart | None = None) -> SimResult:
    """Run the model for warmup + duration simulated seconds; stats cover the duration.

    With max_commits the measured part also ends once that many commits are done (a
    cost cap for fast configurations); the result's duration_s is the time it took.
    start: the state the server starts in (redo since its last checkpoint, dirty pages);
    default an empty log and a clean buffer pool.
    """
    if duration_s <= 0:
        raise ValueError("duration_s must be positive")
    if max_commits is not None and max_commits < 1:
        raise ValueError("max_commits must be positive")
    if warmup_s is None:
        warmup_s = min(2.0, duration_s * 0.2)
    srv = Server(config, workload, profile, seed, queue_depth)
    if start is not None:
        srv.preload(start)
    srv.start()
    if warmup_s > 0:
        srv.env.run(until=warmup_s)
    window = srv.measure(duration_s, max_commits)
    return _result(config, workload, srv.flavor, window, seed, profile.name)


def _result(config: ServerConfig, workload: Workload, fl: Flavor, w: Window, seed: int,
            profile_name: str) -> SimResult:
    d = w.counters
    duration = w.duration_s
    commits = d.get("commits", 0)
    names = _MARIADB_STATUS if fl.has_binlog_group_commit_counters else _MYSQL_STATUS
    status = {n: int(d.get(n, 0)) for n in names
              if n != "Innodb_os_log_fsyncs" or fl.has_os_log_fsyncs}
    writes = status.get("Innodb_data_writes", 0)
    redo_syncs = d.get("redo_syncs", 0)
    groups = d.get("binlog_groups", 0)
    return SimResult(
        config=config, workload=workload, profile=profile_name, seed=seed,
        duration_s=duration, commits=commits, tps=commits / duration,
        commit_latency_ms=_latency_ms(w.commit_latency),
        trx_latency_ms=_latency_ms(w.trx_latency),
        status=status,
        syncs_per_s={k: round(d.get(k, 0) / duration, 3) for k in SYNC_KINDS},
        group_commit={
            "commits_per_redo_sync": round(commits / redo_syncs, 3) if redo_syncs else None,
            "commits_per_binlog_group": round(commits / groups, 3) if groups else None,
        },
        data_fsyncs_per_data_write=(round(status["Innodb_data_fsyncs"] / writes, 6)
                                    if writes else None),
        device_flush_util=w.device_flush_busy_s / duration,
        device_write_util=w.device_write_busy_s / (duration * w.device_queue_depth),
        cpu_util=w.cpu_busy_s / (duration * config.cpu_cores),
        checkpoint_stall_s=w.stall_s,
        max_checkpoint_age_pct=100.0 * w.max_age / config.innodb_redo_log_capacity,
        internal={k: int(v) for k, v in sorted(d.items())},
        notes=w.notes,
    )


# two-sided 95% Student t critical values by degrees of freedom
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 15: 2.131, 20: 2.086, 30: 2.042}


def t95(df: int) -> float:
    if df in _T95:
        return _T95[df]
    keys = sorted(k for k in _T95 if k <= df)
    return _T95[keys[-1]] if df < 60 else 1.96


def confidence(values: list[float]) -> dict:
    """Mean and 95% confidence half-width of replicated results."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return {"mean": mean, "ci95": None, "n": n}
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return {"mean": mean, "ci95": t95(n - 1) * sd / math.sqrt(n), "n": n}


def replicate(config: ServerConfig, workload: Workload, profile: DeviceProfile,
              replications: int = 3, seed: int = 1, **kw) -> tuple[list[SimResult], dict]:
    """Runs with seeds seed..seed+n-1; returns them and the CI of the headline figures."""
    runs = [simulate(config, workload, profile, seed=seed + i, **kw)
            for i in range(replications)]
    summary = {
        "tps": confidence([r.tps for r in runs]),
        "commit_latency_p50_ms": confidence(
            [r.commit_latency_ms["p50"] or 0.0 for r in runs]),
        "commit_latency_p99_ms": confidence(
            [r.commit_latency_ms["p99"] or 0.0 for r in runs]),
        "data_fsyncs_per_s": confidence(
            [r.status["Innodb_data_fsyncs"] / r.duration_s for r in runs]),
    }
    return runs, summary
