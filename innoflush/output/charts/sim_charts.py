"""simulate and tps: TPS and commit p99 against connections (a line per durability
setting), the syncs per second by kind (stacked), and the connections a target needs."""

from __future__ import annotations

from .figure import empty_note, log_axis, new_figure, tag
from .page import Chart, Page, Table

SYNC_KINDS = (("redo_syncs", "redo"), ("binlog_syncs", "binlog"),
              ("dblwr_syncs", "doublewrite"), ("data_file_syncs", "data files"),
              ("extension_syncs", "file extension"), ("checkpoint_syncs", "checkpoint"))
# the simulate table's columns (the --csv columns) and their headings
SIM_COLUMNS = (("flush_method", "flush_method"), ("trx_commit", "trx_commit"),
               ("sync_binlog", "sync_binlog"), ("connections", "conns"), ("tps", "TPS"),
               ("tps_ci95", "TPS ±95%"), ("commit_p50_ms", "commit p50 ms"),
               ("commit_p99_ms", "p99 ms"), ("commits_per_redo_sync", "commits/redo sync"),
               ("data_fsyncs_per_s", "data fsyncs/s"),
               ("data_fsyncs_per_data_write", "fsyncs/write"),
               ("device_flush_util", "flush busy"), ("cpu_util", "CPU"),
               ("checkpoint_stall_s", "stall s"))


def setting_of(row: dict) -> str:
    """A row's durability setting: flush method × trx_commit × sync_binlog."""
    sb = "binlog off" if row.get("sync_binlog") is None else f"sync_binlog={row['sync_binlog']}"
    return f"{row['flush_method']}, trx_commit={row['trx_commit']}, {sb}"


def settings(data: dict) -> list[str]:
    return list(dict.fromkeys(setting_of(r) for r in data.get("rows", [])))


def _vs_connections(data: dict, key: str, ylabel: str, name: str, title: str,
                    err_key: str | None = None) -> Chart:
    fig, ax = new_figure()
    rows = data.get("rows", [])
    for i, s in enumerate(settings(data)):
        pts = sorted((r["connections"], r[key], r.get(err_key) if err_key else None)
                     for r in rows if setting_of(r) == s and r.get(key) is not None)
        xs, ys, errs = zip(*pts, strict=True) if pts else ((), (), ())
        if any(e is not None for e in errs):
            cont = ax.errorbar(xs, ys, yerr=[e or 0 for e in errs], marker="o", capsize=3,
                               label=s)
            tag(cont.lines[0], i)
        else:
            (line,) = ax.plot(xs, ys, marker="o", label=s)
            tag(line, i)
    if rows:
        log_axis(ax, "x", base=2)
        conns = sorted({r["connections"] for r in rows})
        ax.set_xticks(conns, [str(c) for c in conns])
        ax.set_xlabel("connections")
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize="small")
    else:
        empty_note(ax, "no row simulated")
    return Chart(name, title, fig, "a line per flush method × trx_commit × sync_binlog")


def tps_chart(data: dict) -> Chart:
    return _vs_connections(data, "tps", "commits per second", "tps-vs-connections",
                           "TPS against connections", "tps_ci95")


def p99_chart(data: dict) -> Chart:
    return _vs_connections(data, "commit_p99_ms", "commit latency p99, ms",
                           "commit-p99-vs-connections", "Commit p99 against connections")


def row_syncs(row: dict) -> dict[str, float]:
    """The row's syncs per second by kind, the mean over its replications."""
    runs = row.get("runs") or []
    return {k: sum(r["syncs_per_s"].get(k, 0.0) for r in runs) / len(runs) if runs else 0.0
            for k, _ in SYNC_KINDS}


def sync_kinds_present(data: dict) -> list[str]:
    per_row = [row_syncs(r) for r in data.get("rows", [])]
    return [k for k, _ in SYNC_KINDS if any(s[k] > 0 for s in per_row)]


def syncs_chart(data: dict) -> Chart:
    """Stacked bars: each row's syncs per second, a series per kind of sync."""
    rows = data.get("rows", [])
    fig, ax = new_figure(4.8)
    per_row = [row_syncs(r) for r in rows]
    bottom = [0.0] * len(rows)
    names = dict(SYNC_KINDS)
    for i, kind in enumerate(sync_kinds_present(data)):
        ys = [s[kind] for s in per_row]
        tag(ax.bar(range(len(rows)), ys, bottom=bottom, label=names[kind]), i)
        bottom = [b + y for b, y in zip(bottom, ys, strict=True)]
    if any(bottom):
        labels = [f"{r['flush_method']} tc={r['trx_commit']} sb={r['sync_binlog']}"
                  f" · {r['connections']}c" for r in rows]
        ax.set_xticks(range(len(rows)), labels, rotation=35, ha="right", fontsize="x-small")
        ax.set_ylabel("syncs per second")
        ax.legend(fontsize="small")
    else:
        empty_note(ax, "no sync simulated")
    return Chart("syncs-by-kind", "Syncs per second by kind", fig,
                 "stacked: redo, binlog, doublewrite, data files, extension, checkpoint")


def simulate_page(data: dict, text: str | None) -> Page:
    inputs = [("profile", f"{data.get('profile')}: {data.get('title')}"),
              ("flavor", data.get("flavor")),
              ("simulated seconds per run", data.get("duration_s")),
              ("seed", data.get("seed")), ("workload", data.get("workload_source"))]
    table = Table("Figures", [h for _, h in SIM_COLUMNS],
                  [[r.get(k) for k, _ in SIM_COLUMNS] for r in data.get("rows", [])])
    sections = [("Notes", list(data["notes"]))] if data.get("notes") else []
    return Page("simulate", f"innoflush simulate --profile {data.get('profile')}", inputs,
                [tps_chart(data), p99_chart(data), syncs_chart(data)], [table], text,
                sections)


# ---- tps --------------------------------------------------------------------------------

TPS_COLUMNS = (("title", "durability setting"), ("durable", "durable"), ("bound", "bound"),
               ("commit_latency_ms", "trx ms"), ("tps_per_connection", "TPS / connection"),
               ("connections_for_target", "conns for target"),
               ("simulated_tps_1_connection", "simulated, 1 conn"),
               ("simulated_vs_closed_form_pct", "vs closed form %"),
               ("simulated_tps_at_target_connections", "simulated at those conns"),
               ("simulated_connections_for_target", "conns needed, simulated"))


def _hbars(ax, labels: list[str], series: list[tuple[str, list]]) -> int:
    """Horizontal grouped bars; the series drawn (a series with no value is left out)."""
    drawn = [(name, vals) for name, vals in series if any(v is not None for v in vals)]
    height = 0.8 / max(len(drawn), 1)
    for i, (name, vals) in enumerate(drawn):
        ys = [k + (i - (len(drawn) - 1) / 2) * height for k in range(len(labels))]
        tag(ax.barh(ys, [v or 0 for v in vals], height=height, label=name), i)
    ax.set_yticks(range(len(labels)), labels, fontsize="small")
    ax.invert_yaxis()
    return len(drawn)


def tps_per_connection_chart(data: dict) -> Chart:
    rows = data.get("settings", [])
    fig, ax = new_figure(0.5 * len(rows) + 1.5)
    n = _hbars(ax, [r["setting"] for r in rows], [
        ("closed form", [r.get("tps_per_connection") for r in rows]),
        ("simulated, 1 connection", [r.get("simulated_tps_1_connection") for r in rows])])
    if n:
        log_axis(ax, "x")
        ax.set_xlabel("commits per second per connection (log)")
        ax.legend(fontsize="small")
    return Chart("tps-per-connection", "Commits per second one connection gets", fig,
                 "per durability setting; bound by the device where a sync is in the "
                 "commit path")


def connections_chart(data: dict) -> Chart:
    rows = data.get("settings", [])
    fig, ax = new_figure(0.5 * len(rows) + 1.5)
    n = _hbars(ax, [r["setting"] for r in rows], [
        ("closed form (at least)", [r.get("connections_for_target") for r in rows]),
        ("simulated", [r.get("simulated_connections_for_target") for r in rows])])
    if n:
        log_axis(ax, "x", base=2)
        ax.set_xlabel("connections (log)")
        ax.legend(fontsize="small")
    else:
        empty_note(ax, "the target is out of reach of every setting")
    return Chart("connections-for-target",
                 f"Connections for {data.get('target_tps'):g} TPS", fig,
                 "a setting with no bar cannot reach the target (CPU ceiling)")


def tps_page(data: dict, text: str | None) -> Page:
    inputs = [("profile", f"{data.get('profile')}: {data.get('title')}"),
              ("flavor", data.get("flavor")), ("target TPS", data.get("target_tps")),
              ("CPU cores", data.get("cpu_cores")), ("workload", data.get("workload_source"))]
    charts = [tps_per_connection_chart(data)]
    if data.get("target_tps"):
        charts.append(connections_chart(data))
    table = Table("Figures", [h for _, h in TPS_COLUMNS],
                  [[r.get(k) for k, _ in TPS_COLUMNS] for r in data.get("settings", [])])
    sections = [("Notes", list(data["notes"]))] if data.get("notes") else []
    return Page("tps", f"innoflush tps --profile {data.get('profile')}", inputs, charts,
                [table], text, sections)
