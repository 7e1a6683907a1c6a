"""lab run and lab validate: predicted against measured per cell (the ±15 % band around
predicted = measured), and the errors per device (validate) or per setting (run)."""

from __future__ import annotations

from .figure import BAND, empty_note, log_axis, new_figure, tag
from .page import Chart, Page

FIGURE_TITLE = {"tps": "TPS", "commit_latency_p50_ms": "commit p50",
                "commit_latency_p99_ms": "commit p99", "data_fsyncs_per_s": "data fsyncs/s",
                "data_writes_per_s": "data writes/s",
                "data_fsyncs_per_data_write": "fsyncs/write"}
ERROR_FIGURES = ("tps", "commit_latency_p50_ms", "commit_latency_p99_ms", "data_fsyncs_per_s",
                 "data_writes_per_s")


def points(data: dict) -> list[dict]:
    """Every measured cell as {group, measured, predicted, errors_pct}: grouped by device
    in a validation, by setting in a run; a change validation's cells give the TPS after
    the change (its simulate_after)."""
    out = []
    if "runs" in data:                                   # lab run
        for r in data["runs"]:
            if "measured" not in r or "predicted" not in r:
                continue
            q = r.get("requested", {})
            group = (f"{q.get('innodb_flush_method')}, "
                     f"trx_commit={q.get('innodb_flush_log_at_trx_commit')}")
            out.append({"group": group, "measured": r["measured"],
                        "predicted": r["predicted"], "errors_pct": r.get("errors_pct", {})})
        return out
    for d in data.get("devices", []):
        for c in d.get("cells", []):
            if "measured" in c and "predicted" in c:
                out.append({"group": d["name"], "measured": c["measured"],
                            "predicted": c["predicted"], "errors_pct": c.get("errors_pct", {})})
            elif isinstance(c.get("simulate_after"), dict) and \
                    c["simulate_after"].get("predicted_tps") is not None:
                s = c["simulate_after"]
                out.append({"group": d["name"], "measured": {"tps": s["measured_tps"]},
                            "predicted": {"tps": s["predicted_tps"]},
                            "errors_pct": {"tps": s.get("error_pct")}})
    return out


def groups(data: dict) -> list[str]:
    return list(dict.fromkeys(p["group"] for p in points(data)))


def scatter_chart(data: dict, figure: str = "tps") -> Chart:
    """Predicted against measured of one figure, a series per group, with the band."""
    fig, ax = new_figure(4.8)
    pts = [p for p in points(data) if p["measured"].get(figure) and
           p["predicted"].get(figure)]
    for i, g in enumerate(dict.fromkeys(p["group"] for p in pts)):
        mine = [p for p in pts if p["group"] == g]
        sc = ax.scatter([p["measured"][figure] for p in mine],
                        [p["predicted"][figure] for p in mine], label=g, zorder=3)
        tag(sc, i)
    name = FIGURE_TITLE.get(figure, figure)
    if pts:
        vals = [p[s][figure] for p in pts for s in ("measured", "predicted")]
        lo, hi = min(vals) / 1.4, max(vals) * 1.4
        ax.plot([lo, hi], [lo, hi], color="0.3", linewidth=1, label="predicted = measured")
        ax.fill_between([lo, hi], [lo * (1 - BAND), hi * (1 - BAND)],
                        [lo * (1 + BAND), hi * (1 + BAND)], color="0.5", alpha=0.15,
                        label=f"±{BAND:.0%}")
        log_axis(ax, "x")
        log_axis(ax, "y")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.set_xlabel(f"measured {name}")
        ax.set_ylabel(f"predicted {name}")
        ax.legend(fontsize="small")
    else:
        empty_note(ax, f"no cell has both a measured and a predicted {name}")
    return Chart(f"predicted-vs-measured-{figure.replace('_', '-')}",
                 f"Predicted against measured {name}", fig,
                 f"a point per cell; the band: within ±{BAND:.0%} of measured")


def error_chart(data: dict) -> Chart:
    """Mean absolute error per figure, a bar series per group."""
    pts = points(data)
    figs = [f for f in ERROR_FIGURES if any(p["errors_pct"].get(f) is not None for p in pts)]
    gs = list(dict.fromkeys(p["group"] for p in pts))
    fig, ax = new_figure()
    width = 0.8 / max(len(gs), 1)
    for i, g in enumerate(gs):
        ys = []
        for f in figs:
            errs = [abs(p["errors_pct"][f]) for p in pts
                    if p["group"] == g and p["errors_pct"].get(f) is not None]
            ys.append(sum(errs) / len(errs) if errs else 0.0)
        xs = [k + (i - (len(gs) - 1) / 2) * width for k in range(len(figs))]
        tag(ax.bar(xs, ys, width=width, label=g), i)
    if figs:
        ax.axhline(100 * BAND, color="0.3", linestyle="--", linewidth=1)
        ax.set_xticks(range(len(figs)), [FIGURE_TITLE[f] for f in figs])
        ax.set_ylabel("mean |predicted − measured| / measured, %")
        ax.legend(fontsize="small")
    else:
        empty_note(ax, "no error computed")
    what = "setting" if "runs" in data else "device"
    return Chart(f"errors-by-{what}", f"Prediction errors per {what}", fig,
                 f"the dashed line: {BAND:.0%}")


def _page(command: str, data: dict, text: str | None, inputs: list) -> Page:
    charts = [scatter_chart(data, "tps")]
    if any(p["measured"].get("commit_latency_p99_ms") for p in points(data)):
        charts.append(scatter_chart(data, "commit_latency_p99_ms"))
    charts.append(error_chart(data))
    sections = [("Warnings", list(data["warnings"]))] if data.get("warnings") else []
    return Page(command, f"innoflush {command}", inputs, charts, text=text,
                sections=sections)


def run_page(data: dict, text: str | None) -> Page:
    server = data.get("server") or {}
    prof = data.get("profile") or {}
    inputs = [("server", server.get("version")), ("simulated as", server.get("sim_flavor")),
              ("profile", f"{prof.get('name')} ({prof.get('source')})" if prof else None),
              ("runs", len(data.get("runs", [])))]
    return _page("lab run", data, text, inputs)


def validate_page(data: dict, text: str | None) -> Page:
    m = data.get("matrix") or {}
    inputs = [("command", data.get("command")), ("date", data.get("date")),
              ("devices", ", ".join(d["name"] for d in data.get("devices", []))),
              ("connections", m.get("connections")), ("flush methods", m.get("flush_methods")),
              ("replicates", m.get("replicates"))]
    return _page("lab validate", data, text, inputs)

