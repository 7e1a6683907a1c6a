"""advise: current against recommended (predicted TPS with its range, commit p99), and the
evidence counters per sampled interval."""

from __future__ import annotations

import textwrap

from .figure import empty_note, log_axis, new_figure, tag
from .page import Chart, Page

# SHOW GLOBAL STATUS counters the findings rest on, as rates per interval
EVIDENCE = ("Com_commit", "Handler_commit", "Binlog_commits", "Binlog_group_commits",
            "Innodb_os_log_fsyncs", "Innodb_data_fsyncs", "Innodb_data_writes",
            "Innodb_dblwr_writes", "Innodb_log_writes")


def predictions(data: dict) -> list[tuple[str, dict]]:
    """(label, prediction) of each finding with one, then all recommendations at once."""
    out = [(f"{f['setting']} {f['current']} → {f['recommended']}", f["predicted"])
           for f in data.get("findings", []) if f.get("predicted")]
    if data.get("combined_prediction"):
        out.append(("all at once", data["combined_prediction"]))
    return out


def _pair_bars(ax, labels, cur, rec, rec_err=None) -> None:
    xs = range(len(labels))
    tag(ax.bar([x - 0.2 for x in xs], cur, width=0.4, label="current"), 0)
    bars = ax.bar([x + 0.2 for x in xs], rec, width=0.4, label="recommended",
                  yerr=rec_err, capsize=4)
    tag(bars, 1)
    ax.set_xticks(list(xs), [textwrap.fill(lbl, 26) for lbl in labels], fontsize="small")
    ax.legend(fontsize="small")


def tps_chart(data: dict) -> Chart:
    fig, ax = new_figure()
    preds = predictions(data)
    if preds:
        cur = [p["current"]["tps"] for _, p in preds]
        rec = [p["recommended"]["tps"] for _, p in preds]
        lo, hi = [], []
        for (_, p), c, r in zip(preds, cur, rec, strict=True):
            # what to expect (the model's error on validated changes) where there is
            # one, else the inputs' range
            span = ((p.get("interval") or {}).get("tps_pct")
                    or (p.get("range") or {}).get("tps_pct"))
            if span and None not in span and c:
                low, high = c * (1 + min(span) / 100), c * (1 + max(span) / 100)
                lo.append(max(r - low, 0.0))
                hi.append(max(high - r, 0.0))
            else:
                lo.append(0.0)
                hi.append(0.0)
        _pair_bars(ax, [lbl for lbl, _ in preds], cur, rec, [lo, hi])
        ax.set_ylabel("predicted commits per second")
    else:
        empty_note(ax, "no prediction (see the report's warnings)")
    return Chart("predicted-tps", "Predicted TPS, current and recommended", fig,
                 "error bars: the likely interval (the model's error on validated changes) "
                 "where there is one, else the range over the workload's cost variants")


def latency_chart(data: dict) -> Chart:
    fig, ax = new_figure()
    preds = [(lbl, p) for lbl, p in predictions(data)
             if p["current"].get("commit_latency_p99_ms") is not None
             and p["recommended"].get("commit_latency_p99_ms") is not None]
    if preds:
        _pair_bars(ax, [lbl for lbl, _ in preds],
                   [p["current"]["commit_latency_p99_ms"] for _, p in preds],
                   [p["recommended"]["commit_latency_p99_ms"] for _, p in preds])
        ax.set_ylabel("predicted commit latency p99, ms")
    else:
        empty_note(ax, "no prediction (see the report's warnings)")
    return Chart("predicted-commit-p99", "Predicted commit p99, current and recommended", fig)


def evidence_counters(data: dict) -> list[str]:
    intervals = [i for i in data.get("sampling", {}).get("intervals", []) if i.get("valid")]
    return [c for c in EVIDENCE if any((i.get("deltas") or {}).get(c) for i in intervals)]


def evidence_chart(data: dict) -> Chart:
    """Each counter's rate per valid interval, a series per counter."""
    intervals = [i for i in data.get("sampling", {}).get("intervals", []) if i.get("valid")]
    fig, ax = new_figure()
    counters = evidence_counters(data)
    for k, counter in enumerate(counters):
        xs = [i["index"] + 1 for i in intervals]
        ys = [(i["deltas"].get(counter) or 0) / i["seconds"] for i in intervals]
        (line,) = ax.plot(xs, ys, marker="o", label=counter)
        tag(line, k)
    if counters:
        log_axis(ax, "y")    # a zero rate leaves a gap in its line
        ax.set_xticks([i["index"] + 1 for i in intervals])
        ax.set_xlabel("interval")
        ax.set_ylabel("per second (SHOW GLOBAL STATUS deltas; log)")
        ax.legend(fontsize="small", ncol=2)
    else:
        empty_note(ax, "no valid interval")
    return Chart("evidence-per-interval", "Evidence counters per interval", fig,
                 "the status counters' rates in each sampled interval")


def advise_page(data: dict, text: str | None) -> Page:
    server = data.get("server", {})
    device = data.get("device") or {}
    src = data.get("source") or {}
    inputs = [("server", server.get("title")), ("role", server.get("role")),
              ("source", f"{src.get('kind')}" + (f" {src['path']}" if src.get("path") else "")
               if src else None),
              ("device", f"{device.get('name')}: {device.get('title')}" if device else None),
              ("durability", data.get("durability")),
              ("interval s", data.get("sampling", {}).get("interval_s")),
              ("intervals", data.get("sampling", {}).get("samples"))]
    sections = [("Findings", [f"[{f['severity']}] {f['setting']}: {f['current']} → "
                              f"{f['recommended']} ({f['id']})"
                              for f in data.get("findings", [])] or ["nothing to change"])]
    if data.get("warnings"):
        sections.append(("Warnings", list(data["warnings"])))
    return Page("advise", f"innoflush advise: {server.get('title')}", inputs,
                [tps_chart(data), latency_chart(data), evidence_chart(data)], text=text,
                sections=sections)
