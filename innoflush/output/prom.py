"""Prometheus text exposition of `measure` and `advise` results (``--prom FILE``).

Built from the JSON form of a result (MeasureResult.to_dict(), the advise report dict), so
a live advise run and one from a capture (``advise --from``) export the same way. The file
is meant for node_exporter's textfile collector (also PMM's), which reads every ``*.prom``
file in its directory on each scrape: write_prom() writes a temporary file beside it
(innoflush/outfile.py) and renames it over the target, so a scrape never sees half a file.

Every metric is a gauge (a one-shot run has no counters to accumulate), names under
``innoflush_`` with the unit last (``_seconds``, ``_bytes``, ``_ratio``, ``_per_second``),
as https://prometheus.io/docs/practices/naming/ asks. Metric names, labels, units and help
text are listed in docs/prometheus.md (tests/output/test_prom.py checks the page against them).
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from prometheus_client import CollectorRegistry, Gauge, generate_latest

from ..measure.result import unbacked_keys
from ..outfile import check_output_target, write_output

# The latency quantiles exported, from a latency summary's keys; 0 and 1 are the min and
# max, which are quantiles too and keep the gauge in one unit.
_QUANTILES = (("0", "min_ns"), ("0.5", "p50_ns"), ("0.9", "p90_ns"), ("0.99", "p99_ns"),
              ("0.999", "p99_9_ns"), ("1", "max_ns"))

# The calls of a measure test, as (JSON key, metric word, what it times).
_CALLS = (("write", "write", "the write call (for op dsync it includes the O_DSYNC sync)"),
          ("sync", "sync", "the fsync/fdatasync call after the write (ops fsync, fdatasync)"),
          ("total", "op", "one op: the write plus its sync (built-in engine only)"))

_TEST_LABELS = ("path", "op", "size_bytes", "direct", "jobs")

# observed-block key -> (metric name after innoflush_advise_observed_, help)
_OBSERVED = {
    "commits_per_s": ("commits_per_second", "Transactions committed per second"),
    "data_fsyncs_per_s": ("data_fsyncs_per_second",
                          "Innodb_data_fsyncs per second (includes the redo log's syncs)"),
    "redo_syncs_per_s": ("redo_syncs_per_second", "Redo log syncs per second"),
    "other_fsyncs_per_s": ("other_fsyncs_per_second",
                           "Data-file and doublewrite syncs per second (data fsyncs minus "
                           "redo syncs)"),
    "data_writes_per_s": ("data_writes_per_second", "Innodb_data_writes per second"),
    "pages_written_per_s": ("pages_written_per_second", "Innodb_pages_written per second"),
    "pages_flushed_per_s": ("pages_flushed_per_second",
                            "Buffer pool pages flushed per second"),
    "dblwr_writes_per_s": ("doublewrite_writes_per_second",
                           "Innodb_dblwr_writes per second"),
    "dblwr_pages_per_s": ("doublewrite_pages_per_second",
                          "Pages written through the doublewrite buffer per second"),
    "commits_per_redo_sync": ("commits_per_redo_sync",
                              "Commits per redo log sync (group-commit size)"),
    "redo_bytes_per_commit": ("redo_per_commit_bytes",
                              "Redo log bytes written per commit (Innodb_os_log_written)"),
    "page_writes_per_commit": ("page_writes_per_commit", "Page writes per commit"),
    "threads_running_avg": ("threads_running", "Threads_running, average over the samples "
                            "(the advisor's own connection excluded)"),
    "pending_fsyncs_max": ("pending_fsyncs_max", "Innodb_data_pending_fsyncs, the highest "
                           "value sampled"),
    "seconds": ("window_seconds", "Seconds of valid sampling the figures cover"),
}

# Settings reported as innoflush_advise_setting_info (the durability settings advised on).
_SETTINGS = ("innodb_flush_method", "innodb_flush_log_at_trx_commit", "sync_binlog",
             "innodb_doublewrite", "innodb_use_fdatasync", "innodb_flush_log_at_timeout")

# predicted["change"] key -> (metric name after innoflush_advise_predicted_, help)
_CHANGES = {
    "tps_pct": ("tps_change_ratio", "Predicted relative change of transactions per "
                "second with the recommendation (0.25 = 25 % more)"),
    "commit_latency_p99_pct": ("commit_latency_p99_change_ratio",
                               "Predicted relative change of the commit latency p99"),
    "data_fsyncs_per_s_pct": ("data_fsyncs_change_ratio",
                              "Predicted relative change of Innodb_data_fsyncs per second"),
}


class MetricRegistry:
    """A CollectorRegistry whose gauges are made on first use, each with its labels."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self._gauges: dict[str, Gauge] = {}

    def set(self, name: str, help_text: str, value: float | int | bool | None, /,
            **labels: Any) -> None:
        if value is None:
            return
        g = self._gauges.get(name)
        if g is None:
            g = self._gauges[name] = Gauge(name, help_text, list(labels),
                                           registry=self.registry)
        child = g.labels(**{k: _label(v) for k, v in labels.items()}) if labels else g
        child.set(float(value))


def _label(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _epoch(iso: str | None) -> float | None:
    if not iso:
        return None
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def measure_metrics(result: Any) -> CollectorRegistry:
    """The metrics of a measurement (a MeasureResult or its to_dict())."""
    r = result if isinstance(result, dict) else result.to_dict()
    reg = MetricRegistry()
    path = r["path"]
    facts = r.get("facts") or {}
    disks = ",".join(d.get("name") or "?" for d in facts.get("disks") or [])
    device = facts.get("block_device") or disks
    reg.set("innoflush_measure_info", "The measurement's identity (value 1)", 1, path=path,
            host=r.get("host"), engine=r.get("engine"),
            engine_version=r.get("engine_version"), version=r.get("version"),
            fs_type=facts.get("fs_type"), mount_point=facts.get("mount_point"),
            device=device, disks=disks)
    reg.set("innoflush_measure_timestamp_seconds",
            "When the measurement started, seconds since the Unix epoch",
            _epoch(r.get("date")), path=path)
    reg.set("innoflush_measure_duration_seconds", "How long the whole measurement took",
            r.get("wall_s"), path=path)
    v = r.get("plp_verdict") or {}
    safe = v.get("o_direct_no_fsync_safe")
    reg.set("innoflush_device_plp_verdict",
            "The device's power-loss protection verdict (value 1; the verdict is the label)",
            1, path=path, device=device, verdict=v.get("verdict"),
            o_direct_no_fsync_safe="unknown" if safe is None else safe)
    for t in r.get("tests") or []:
        key = dict(path=path, op=t["op"], size_bytes=t["write_bytes"], direct=t["direct"],
                   jobs=t["jobs"])
        reg.set("innoflush_device_test_supported",
                "1 if the test ran, 0 if it could not (e.g. O_DIRECT refused)",
                t.get("unsupported") is None, **key)
        if t.get("unsupported") is not None:
            continue
        reg.set("innoflush_device_ops_per_second",
                "Write+sync ops per second, all jobs of the test", t.get("ops_per_s"), **key)
        reg.set("innoflush_device_measured_ops", "Ops measured in the test, all jobs",
                t.get("count"), **key)
        for json_key, word, what in _CALLS:
            s = t.get(json_key)
            if not s:
                continue
            unbacked = unbacked_keys(s)   # a tail too few samples back is not exported
            for q, field in _QUANTILES:
                if s.get(field) is not None and field not in unbacked:
                    reg.set(f"innoflush_device_{word}_latency_seconds",
                            f"Latency quantiles of {what}", round(s[field] / 1e9, 10), **key,
                            quantile=q)
            reg.set(f"innoflush_device_{word}_latency_mean_seconds",
                    f"Mean latency of {what}",
                    round(s["mean_ns"] / 1e9, 10) if s.get("mean_ns") is not None else None, **key)
    return reg.registry


def _server_label(report: dict) -> str:
    """Which server a report is about: host:port or the socket (never the user or password),
    or the capture it was read from."""
    conn = (report.get("server") or {}).get("connection")
    if conn and conn.get("target"):
        return conn["target"]
    src = report.get("source") or {}
    return f"capture {src.get('path')}" if src.get("path") else "unknown"


def advise_metrics(report: dict, now: float | None = None) -> CollectorRegistry:
    """The metrics of an advise report (the dict advise()/advise_capture() return); now:
    when the run ended (default: the current time)."""
    from ..advisor.rules.model import SEVERITIES

    reg = MetricRegistry()
    server = _server_label(report)
    s = report.get("server") or {}
    src = report.get("source") or {}
    reg.set("innoflush_advise_info", "The advised server's identity (value 1)", 1,
            server=server, product=s.get("product"), version=s.get("version"),
            role=s.get("role"), source=src.get("kind"), durability=report.get("durability"))
    reg.set("innoflush_advise_timestamp_seconds",
            "When the advise run ended, seconds since the Unix epoch",
            time.time() if now is None else now, server=server)
    reg.set("innoflush_advise_exit_code", "The run's exit code (0 nothing to change, "
            "3 recommendations made, 4 the model cannot explain the workload)",
            report.get("exit_code"), server=server)
    findings = report.get("findings") or []
    for sev in SEVERITIES:
        reg.set("innoflush_advise_findings", "Findings of each severity",
                sum(1 for f in findings if f["severity"] == sev), server=server, severity=sev)
    for f in findings:
        reg.set("innoflush_advise_finding", "One series per finding (value 1)", 1,
                server=server, id=f["id"], severity=f["severity"], setting=f["setting"],
                current=f.get("current"), recommended=f.get("recommended"),
                restart_needed=bool(f.get("restart_needed")))
        _predicted(reg, server, f["id"], f.get("predicted"))
    _predicted(reg, server, "all", report.get("combined_prediction"))
    st = report.get("settings") or {}
    for name in _SETTINGS:
        if name in st and st[name] is not None:
            reg.set("innoflush_advise_setting_info", "A durability setting's current value "
                    "(value 1; the value is the label)", 1, server=server, setting=name,
                    value=st[name])
    d = report.get("device")
    if d:
        reg.set("innoflush_advise_device_info", "The device profile the advice used "
                "(value 1)", 1, server=server, name=d.get("name"), device_class=d.get("class"),
                plp=d.get("plp"), verdict=d.get("verdict"))
    o = report.get("observed") or {}
    for key, (name, help_text) in _OBSERVED.items():
        reg.set(f"innoflush_advise_observed_{name}", help_text, o.get(key), server=server)
    fit = report.get("fit")
    if fit:
        reg.set("innoflush_advise_model_explains_workload", "1 if the simulator reproduces "
                "the observed workload (predictions are made), 0 if not",
                bool(fit.get("explained")), server=server)
    return reg.registry


def _predicted(reg: MetricRegistry, server: str, finding_id: str, p: dict | None) -> None:
    if not p:
        return
    change = p.get("change") or {}
    for key, (name, help_text) in _CHANGES.items():
        if change.get(key) is not None:
            reg.set(f"innoflush_advise_predicted_{name}", help_text, change[key] / 100,
                    server=server, id=finding_id)
    rng = (p.get("range") or {}).get("tps_pct")
    if rng:
        reg.set("innoflush_advise_predicted_tps_change_low_ratio", "Low end of the "
                "predicted TPS change's range", rng[0] / 100, server=server, id=finding_id)
        reg.set("innoflush_advise_predicted_tps_change_high_ratio", "High end of the "
                "predicted TPS change's range", rng[1] / 100, server=server, id=finding_id)
    likely = (p.get("interval") or {}).get("tps_pct")
    if likely:
        reg.set("innoflush_advise_predicted_tps_change_likely_low_ratio", "Low end of the "
                "TPS change to expect (the prediction with the model's validated error)",
                likely[0] / 100, server=server, id=finding_id)
        reg.set("innoflush_advise_predicted_tps_change_likely_high_ratio", "High end of the "
                "TPS change to expect (the prediction with the model's validated error)",
                likely[1] / 100, server=server, id=finding_id)


def check_prom_path(path: str) -> None:
    """Before a run: path can be written as a regular file — its directory exists and is
    writable, and it is not a directory, device or FIFO (innoflush/outfile.py) —, so a
    long run does not end in an error (UsageError, exit 2)."""
    check_output_target(path, "--prom")


def write_prom(path: str, registry: CollectorRegistry) -> None:
    """Write the registry to path atomically (a temporary file, not ending in .prom so the
    textfile collector never reads it, renamed over the file)."""
    write_output(path, generate_latest(registry), "--prom")
