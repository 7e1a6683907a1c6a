"""Fully populated measure results and advise reports (every branch of innoflush.output.prom
taken), for the unit tests of the exporter and of docs/prometheus.md."""

from __future__ import annotations


def latency(p50_ns: float) -> dict:
    # 20,000 samples: enough to back p99.9 (innoflush.measure.result.TAIL_MIN_COUNT)
    return {"count": 20_000, "mean_ns": p50_ns * 1.1, "min_ns": p50_ns * 0.5, "p50_ns": p50_ns,
            "p90_ns": p50_ns * 1.5, "p99_ns": p50_ns * 3, "p99_9_ns": p50_ns * 5,
            "max_ns": p50_ns * 8, "shape": "quantiles"}


def measure_dict() -> dict:
    test = {"op": "fsync", "write_bytes": 16384, "direct": True, "jobs": 1, "count": 100,
            "ops_per_s": 2500.0, "duration_s": 0.04, "warmup_ops": 3,
            "write": latency(20_000), "sync": latency(380_000), "total": latency(400_000),
            "unsupported": None}
    refused = {"op": "dsync", "write_bytes": 4096, "direct": True, "jobs": 4, "count": 0,
               "ops_per_s": None, "duration_s": None, "warmup_ops": 0, "write": None,
               "sync": None, "total": None, "unsupported": "O_DIRECT refused"}
    return {"tool": "innoflush", "version": "0.1.0", "engine": "builtin",
            "engine_version": None, "path": "/var/lib/mysql", "host": "db1",
            "date": "2026-11-25T20:00:00Z", "wall_s": 12.5, "settings": {},
            "facts": {"fs_type": "ext4", "mount_point": "/var/lib/mysql",
                      "block_device": "nvme0n1p1",
                      "disks": [{"name": "nvme0n1", "model": "Samsung 990"}]},
            "plp_verdict": {"verdict": "volatile-cache", "o_direct_no_fsync_safe": False,
                            "reasons": [], "basis": []},
            "warnings": [], "tests": [test, refused]}


def prediction(tps_pct: float, with_range: bool = True) -> dict:
    p = {"current": {}, "recommended": {},
         "change": {"tps_pct": tps_pct, "commit_latency_p50_pct": -10.0,
                    "commit_latency_p99_pct": -20.0, "data_fsyncs_per_s_pct": -40.0},
         "range": {"tps_pct": [tps_pct - 5, tps_pct + 5],
                   "data_fsyncs_per_s_pct": [-45.0, -35.0]} if with_range else None,
         "interval": {"tps_pct": [tps_pct - 20, tps_pct + 30], "coverage_pct": 80,
                      "basis": "test"} if with_range else
                     {"tps_pct": None, "coverage_pct": 80, "basis": "not validated: test"},
         "sim": {}}
    return p


def advise_dict(live: bool = True) -> dict:
    observed_keys = ("seconds", "commits_per_s", "data_fsyncs_per_s", "redo_syncs_per_s",
                     "other_fsyncs_per_s", "data_writes_per_s", "pages_written_per_s",
                     "pages_flushed_per_s", "dblwr_writes_per_s", "dblwr_pages_per_s",
                     "commits_per_redo_sync", "redo_bytes_per_commit",
                     "page_writes_per_commit", "threads_running_avg", "pending_fsyncs_max")
    findings = [
        {"id": "flush-method.no-fsync-on-volatile-cache", "severity": "data-safety",
         "setting": "innodb_flush_method", "current": "O_DIRECT_NO_FSYNC",
         "recommended": "O_DIRECT", "restart_needed": True, "predicted": prediction(-3.0)},
        {"id": "use-fdatasync.cheaper-than-fsync", "severity": "performance",
         "setting": "innodb_use_fdatasync", "current": "OFF", "recommended": "ON",
         "restart_needed": False, "predicted": prediction(4.0, with_range=False)},
    ]
    conn = {"target": "db1:3306", "user": "monitor", "tls": None} if live else None
    return {"schema": "innoflush.advice/1",
            "source": ({"kind": "live", "path": None, "snapshots": 2} if live else
                       {"kind": "capture", "path": "/srv/db1-capture", "snapshots": 3}),
            "exit_code": 3,
            "server": {"title": "MariaDB", "product": "mariadb", "version": "10.11.6",
                       "role": "primary", "connection": conn},
            "settings": {"innodb_flush_method": "O_DIRECT_NO_FSYNC",
                         "innodb_flush_log_at_trx_commit": 1, "sync_binlog": 1,
                         "innodb_doublewrite": "ON", "innodb_use_fdatasync": False,
                         "innodb_flush_log_at_timeout": 1},
            "device": {"name": "mine", "class": "nvme", "plp": "no",
                       "verdict": "volatile-cache"},
            "durability": "strict",
            "observed": {k: float(i + 1) for i, k in enumerate(observed_keys)},
            "fit": {"explained": True},
            "findings": findings, "combined_prediction": prediction(1.0)}
