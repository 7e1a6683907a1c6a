"""advise --check: the figures before, as predicted and after — each as its ratio to the
report's own measure (1 = before), the predicted one with the interval the report
quoted — and the workload then and now."""

from __future__ import annotations

from .figure import empty_note, log_axis, new_figure, tag
from .page import Chart, Page

NAMES = {"tps": "commits/s", "data_fsyncs_per_s": "data fsyncs/s",
         "redo_syncs_per_s": "redo syncs/s", "commits_per_redo_sync": "commits/redo sync",
         "commit_latency_us": "COMMIT µs"}


def ratios_chart(doc: dict) -> Chart:
    """A group per figure measured on both sides: before (1), predicted with its
    interval, measured after; log scale (a sync rate may fall a thousandfold)."""
    fig, ax = new_figure()
    figs = [f for f in doc.get("figures") or []
            if f.get("measured_ratio") and f.get("predicted_ratio")]
    if figs:
        xs = range(len(figs))
        tag(ax.bar([x - 0.27 for x in xs], [1.0] * len(figs), width=0.27,
                   label="before (the report)"), 0)
        pred = [f["predicted_ratio"] for f in figs]
        err = [[max(p - (f["interval"] or [p, p])[0], 0.0) for p, f in zip(pred, figs,
                                                                           strict=True)],
               [max((f["interval"] or [p, p])[1] - p, 0.0) for p, f in zip(pred, figs,
                                                                           strict=True)]]
        tag(ax.bar(list(xs), pred, width=0.27, yerr=err, capsize=4,
                   label="predicted (with the quoted interval)"), 1)
        tag(ax.bar([x + 0.27 for x in xs], [f["measured_ratio"] for f in figs], width=0.27,
                   label="measured after"), 2)
        ax.set_xticks(list(xs), [NAMES.get(f["figure"], f["figure"]) +
                                 {True: "\nheld", False: "\nNOT HELD", None: ""}[f["held"]]
                                 for f in figs], fontsize="small")
        log_axis(ax, "y")
        ax.set_ylabel("after / before (log)")
        ax.legend(fontsize="small")
    else:
        empty_note(ax, "no figure measured on both sides with a prediction")
    return Chart("before-predicted-after", "Before, predicted and after, as ratios to "
                 "before", fig, "error bars: the interval the report quoted (commits/s: "
                 "its validated interval; the others: the simulated range ×/÷1.3)")


def check_page(doc: dict, text: str | None) -> Page:
    rep, srv = doc.get("report") or {}, doc.get("server") or {}
    pred = doc.get("prediction") or {}
    inputs = [("server now", f"{srv.get('title')} ({srv.get('target')})"),
              ("report", f"{rep.get('path')} (read {rep.get('taken_at')})"),
              ("prediction", f"{pred.get('kind')} {pred.get('id')}" if pred else "none"),
              ("verdict", doc.get("verdict"))]
    applied = [f"{c['setting']}: {c['before']} → {c['now']}"
               + (" (recommended)" if c["recommended"] else "")
               for c in doc.get("applied") or []]
    workload = [f"{w['figure']}: {w['before']} → {w['now']}"
                + {True: " MOVED", False: "", None: " (not compared)"}[w["moved"]]
                for w in (doc.get("workload") or {}).get("figures") or []]
    sections = [("Applied since the report", applied or ["nothing"]),
                ("The workload, the report's and now", workload or ["not read"])]
    if doc.get("notes"):
        sections.append(("Notes", list(doc["notes"])))
    return Page("advise check", f"innoflush advise --check: {srv.get('title')}", inputs,
                [ratios_chart(doc)], text=text, sections=sections)
