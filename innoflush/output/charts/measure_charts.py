"""measure and profiles compare: latency CDFs (log x), ops/s bars, the PLP verdict.

A measurement keeps each latency distribution as its quantiles (min, p50, p90, p99,
p99.9, max: innoflush.stats), not its samples, so a CDF here runs through the quantiles
p50, p90, p99 and p99.9, straight between them, on a logit probability axis where the
tail is as wide as the median; min and max are in the table. A profile that publishes
a mean only is one marked point at its mean.
"""

from __future__ import annotations

from matplotlib.ticker import FixedLocator, FuncFormatter

from ...measure.result import unbacked_keys
from ...units import format_size
from .figure import empty_note, log_axis, new_figure, pad_log_limits, tag
from .page import Chart, Page

CDF_POINTS = (("p50_ns", 0.5), ("p90_ns", 0.9), ("p99_ns", 0.99), ("p99_9_ns", 0.999))
MARKED = {"p50_ns": ("o", "p50"), "p99_ns": ("s", "p99"), "p99_9_ns": ("^", "p99.9")}
OP_ORDER = ("none", "fsync", "fdatasync", "dsync")
OP_TITLE = {"none": "write alone (no sync)", "fsync": "fsync after the write",
            "fdatasync": "fdatasync after the write", "dsync": "write with O_DSYNC"}


def test_label(t: dict) -> str:
    mode = "O_DIRECT" if t.get("direct") else "buffered"
    jobs = f" ×{t['jobs']} jobs" if t.get("jobs", 1) != 1 else ""
    return f"{format_size(t['write_bytes'])} {mode}{jobs}"


def charted_latency(t: dict) -> tuple[str, dict | None]:
    """The call a test's CDF shows: the sync after the write, else the write (which for
    dsync includes its O_DSYNC sync)."""
    if t.get("sync"):
        return t["op"], t["sync"]
    return ("write+O_DSYNC" if t["op"] == "dsync" else "write"), t.get("write")


def _logit_axes(ax) -> None:
    log_axis(ax, "x")
    ax.set_yscale("logit")
    ticks = [0.5, 0.9, 0.99, 0.999]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(FixedLocator([]))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"p{100 * v:g}"))
    ax.set_ylim(0.3, 0.9995)
    ax.set_xlabel("latency, µs (log)")
    ax.set_ylabel("share of ops at or below")


def summary_values_us(summary: dict) -> list[float]:
    keys = [k for k, _ in CDF_POINTS] + ["mean_ns"]
    return [summary[k] / 1000.0 for k in keys if summary.get(k)]


def plot_summary(ax, summary: dict, label: str, index: int, color=None) -> bool:
    """One distribution as series `index`: its CDF through the quantiles it has, with
    p50/p99/p99.9 marked, or its mean as one point; False when it has neither."""
    # a tail quantile too few samples back is left out, as the text report leaves it out
    summary = {k: v for k, v in summary.items() if k not in unbacked_keys(summary)}
    pts = [(summary[k] / 1000.0, p) for k, p in CDF_POINTS if summary.get(k) is not None]
    if summary.get("shape") == "mean-only" or not pts:
        if summary.get("mean_ns") is None:
            return False
        sc = ax.scatter([summary["mean_ns"] / 1000.0], [0.5], marker="D", s=45, color=color,
                        label=f"{label} (mean only)", zorder=3)
        tag(sc, index)
        return True
    (line,) = ax.plot([x for x, _ in pts], [p for _, p in pts], color=color, label=label)
    tag(line, index)
    for key, (marker, _name) in MARKED.items():
        if summary.get(key) is not None:
            mark = ax.plot([summary[key] / 1000.0], [dict(CDF_POINTS)[key]], marker=marker,
                           color=line.get_color(), linestyle="none")
            tag(mark, index)
    return True


def _plot_cdfs(ax, series: list[tuple[str, dict | None]], empty_text: str) -> None:
    """Each (label, summary) drawn as a series on the CDF axes, the axis limits fitted and
    the legend set (or a note when nothing could be drawn)."""
    n = 0
    values: list[float] = []
    for label, summary in series:
        if summary and plot_summary(ax, summary, label, n):
            values += summary_values_us(summary)
            n += 1
    pad_log_limits(ax, values)
    if n:
        ax.legend(fontsize="small", loc="lower right")
    else:
        empty_note(ax, empty_text)


def latency_cdf(data: dict, op: str) -> Chart:
    """The CDF of one op's charted latency, a series per size/mode/jobs."""
    fig, ax = new_figure()
    _logit_axes(ax)
    call = op
    series = []
    for t in data.get("tests", []):
        if t["op"] != op or t.get("unsupported"):
            continue
        call, summary = charted_latency(t)
        series.append((test_label(t), summary))
    _plot_cdfs(ax, series, "no test of this op ran")
    return Chart(f"latency-cdf-{op}", f"{OP_TITLE.get(op, op)}: {call} latency CDF",
                 fig, "markers: ○ p50, □ p99, △ p99.9; straight between the quantiles the "
                 "run keeps")


def ops_per_s(data: dict) -> Chart:
    """Bars of write+sync ops per second, a series per op, grouped by size/mode/jobs."""
    tests = [t for t in data.get("tests", []) if not t.get("unsupported")
             and t.get("ops_per_s") is not None]
    groups = list(dict.fromkeys(test_label(t) for t in tests))
    ops = [op for op in OP_ORDER if any(t["op"] == op for t in tests)]
    fig, ax = new_figure()
    width = 0.8 / max(len(ops), 1)
    for i, op in enumerate(ops):
        xs, ys = [], []
        for t in tests:
            if t["op"] == op:
                xs.append(groups.index(test_label(t)) + (i - (len(ops) - 1) / 2) * width)
                ys.append(t["ops_per_s"])
        tag(ax.bar(xs, ys, width=width, label=op), i)
    if ops:
        ax.set_xticks(range(len(groups)), groups, rotation=20, ha="right", fontsize="small")
        log_axis(ax, "y")
        ax.set_ylabel("ops/s (write + sync, all jobs; log)")
        ax.legend(fontsize="small")
    else:
        empty_note(ax, "no test ran")
    return Chart("ops-per-s", "Operations per second", fig, "a bar per test, a colour per op")


def measure_page(data: dict, text: str | None) -> Page:
    s = data.get("settings", {})
    per = (f"{s['count']} ops per job" if s.get("count") is not None
           else f"{s.get('duration_s')} s per test")
    facts = data.get("facts", {})
    inputs = [("path", data.get("path")), ("host", data.get("host")),
              ("date", data.get("date")),
              ("engine", f"{data.get('engine')}" + (f" ({data['engine_version']})"
                                                   if data.get("engine_version") else "")),
              ("per test", per), ("warm-up ops dropped per job", s.get("warmup_ops")),
              ("probe file per job", format_size(s["file_size_bytes"])
               if s.get("file_size_bytes") else None),
              ("filesystem", f"{facts.get('fs_type') or '?'} on "
                             f"{facts.get('mount_point') or '?'}"),
              ("disks", ", ".join(d.get("model") or d.get("name") or "?"
                                  for d in facts.get("disks") or []) or None)]
    v = data.get("plp_verdict", {})
    safe = {True: "yes", False: "NO", None: "cannot tell"}[v.get("o_direct_no_fsync_safe")]
    sections = [(f"PLP verdict: {v.get('verdict')} (O_DIRECT_NO_FSYNC safe: {safe})",
                 list(v.get("reasons", [])))]
    if data.get("warnings"):
        sections.append(("Warnings", list(data["warnings"])))
    ops = [op for op in OP_ORDER if any(t["op"] == op for t in data.get("tests", []))]
    charts = [latency_cdf(data, op) for op in ops] + [ops_per_s(data)]
    return Page("measure", f"innoflush measure {data.get('path')}", inputs, charts,
                text=text, sections=sections)


# ---- profiles compare -------------------------------------------------------------------

SYNC_KEY = {"write_bytes": 16384, "direct": True, "jobs": 1}


def _sync_of(profile: dict, op: str) -> dict | None:
    for t in profile.get("tests", []):
        if t.get("op") == op and all(t.get(k) == v for k, v in SYNC_KEY.items()):
            return t.get("sync") or (t.get("total") if op != "none" else None)
    return None


def _compare_figure(compare: dict, name: str, op: str) -> dict | None:
    """The compare table's figure of a profile for op's sync after a 16 KB O_DIRECT write
    (stood in for when the profile lacks it), as a mean-only summary."""
    for row in compare.get("rows", []):
        if row.get("op") == op and row.get("part") == "sync" and \
                all(row.get(k) == v for k, v in SYNC_KEY.items()):
            for val in row.get("values", []):
                fig = val.get("figure")
                if val.get("profile") == name and fig and fig.get("us") is not None:
                    return {"mean_ns": fig["us"] * 1000.0, "shape": "mean-only"}
    return None


def compare_cdf(data: dict, op: str) -> Chart:
    """The profiles' sync latency after a 16 KB O_DIRECT write, a series per profile: a
    CDF where the profile keeps quantiles, else its marked mean."""
    fig, ax = new_figure()
    _logit_axes(ax)
    series = [(profile["name"], _sync_of(profile, op)
               or _compare_figure(data.get("compare", {}), profile["name"], op))
              for profile in data.get("profiles", [])]
    _plot_cdfs(ax, series, f"no profile has {op} after a 16 KB O_DIRECT write")
    return Chart(f"sync-cdf-{op}", f"{op} after a 16 KB O_DIRECT write, per device", fig,
                 "a CDF through the published or measured quantiles; ◆ a mean-only profile")


def compare_page(data: dict, text: str | None) -> Page:
    profiles = data.get("profiles", [])
    inputs = [(p["name"], p.get("title")) for p in profiles]
    charts = [compare_cdf(data, op) for op in ("fsync", "fdatasync")]
    return Page("profiles compare", "innoflush profiles compare "
                + " ".join(p["name"] for p in profiles), inputs, charts, text=text)
