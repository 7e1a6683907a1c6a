"""`advise --check --prom FILE`: the check as Prometheus metrics, beside advise's own
(innoflush/output/prom.py: the same registry, the same atomic write). docs/prometheus.md
lists them; tests/output/test_prom.py checks the page against them."""

from __future__ import annotations

import time

from prometheus_client import CollectorRegistry

from .prom import MetricRegistry

VERDICTS = ("held", "did not hold", "not comparable", "nothing applied", "not priced",
            "not judged")


def check_metrics(doc: dict, now: float | None = None) -> CollectorRegistry:
    """The metrics of a check document (innoflush.advisor.check.check)."""
    reg = MetricRegistry()
    server = doc["server"].get("target") or "unknown"
    change = ", ".join(f"{k}={v}" for k, v in sorted(
        ((doc.get("prediction") or {}).get("changes") or {}).items()))
    for verdict in VERDICTS:
        reg.set("innoflush_check_verdict", "1 for the check's verdict, 0 for the others",
                doc["verdict"] == verdict, server=server, verdict=verdict, change=change)
    reg.set("innoflush_check_exit_code", "The check's exit code (0 held, 5 did not hold, "
            "4 no verdict)", doc["exit_code"], server=server)
    reg.set("innoflush_check_timestamp_seconds", "When the check ended, seconds since the "
            "Unix epoch", time.time() if now is None else now, server=server)
    for f in doc.get("figures") or []:
        labels = {"server": server, "figure": f["figure"]}
        reg.set("innoflush_check_predicted_ratio", "The figure's predicted ratio, after the "
                "change over before", f.get("predicted_ratio"), **labels)
        reg.set("innoflush_check_measured_ratio", "The figure's measured ratio, now over "
                "the report's", f.get("measured_ratio"), **labels)
        if f.get("interval"):
            reg.set("innoflush_check_interval_low_ratio", "Low end of the interval the "
                    "report quoted, as a ratio", f["interval"][0], **labels)
            reg.set("innoflush_check_interval_high_ratio", "High end of the interval the "
                    "report quoted, as a ratio", f["interval"][1], **labels)
        if f.get("held") is not None:
            reg.set("innoflush_check_held", "1 if the measured ratio is in the quoted "
                    "interval, 0 if not (judged figures only)", f["held"], **labels)
    for w in doc["workload"]["figures"]:
        if w.get("moved") is not None:
            reg.set("innoflush_check_workload_moved", "1 if the workload figure moved "
                    "beyond its limit since the report, 0 if not", w["moved"],
                    server=server, figure=w["figure"])
    return reg.registry
