"""The text of `innoflush simulate` and `innoflush tps`: the data their --json prints, as a
person reads it.

By default the tables keep the columns that answer the command's question (simulate: the
settings, TPS, commit latency, data fsyncs; tps: the setting, its durability, the
transaction's time, TPS per connection and the connections a target takes) and the text
is wrapped to the width; width None (--wide) gives every column and unwrapped lines, the
output of earlier versions.
"""

from __future__ import annotations

from tabulate import tabulate

from ..bars import BAR_WIDTH, bar, sparkline
from ..simulator.flavors import get_flavor
from ..simulator.tps import SETTINGS, TOLERANCE
from ..terminal import footnotes, table, tabulated, vertical, widest, wrap

# A bar narrower than this says little: the column is left out on a narrow terminal.
MIN_BAR = 8


def fmt(v, digits=2) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.{digits}f}"
    return str(v)


def _notes(notes: list[str], width: int | None) -> list[str]:
    return [line for n in notes for line in wrap(n, width, "note: ")]


# ---- simulate ------------------------------------------------------------------------------

def render_simulate(data: dict, log_bin: bool, duration: float, seed: int, replications: int,
                    bars: bool = False, width: int | None = None) -> str:
    """simulate's text: its head, one row per combination, the notes."""
    rows = data["rows"]
    binlogs = {r["sync_binlog"] for r in rows}
    # one sync_binlog in every row: said in the head, not repeated in a column
    one_binlog = width is not None and len(binlogs) == 1
    head = (f"flavor {data['flavor']}, log_bin {'ON' if log_bin else 'OFF'}"
            + (f", sync_binlog {fmt(next(iter(binlogs)))}" if one_binlog and log_bin else "")
            + f", {duration:g} simulated s per run, seed {seed}, replications {replications}")
    out = wrap(f"profile {data['profile']}: {data['title']}", width)
    out += wrap(head, width)
    out += wrap(f"workload: {data['workload_source']}", width, hang="  ")
    if width is None:
        out.append(_simulate_wide(rows, bars))
    else:
        out.append(_simulate_narrow(rows, not one_binlog, bars, width))
    if bars:
        for spark in tps_sparklines(rows):
            out += wrap(spark, width, hang="  ")
    out += _notes(data["notes"], width)
    return "\n".join(out) + "\n"


def _tps_cell(r: dict) -> str:
    tps = fmt(r["tps"], 0)
    if r["tps_ci95"] is not None:
        tps += f" ±{r['tps_ci95']:,.0f}"
    return tps


def _simulate_wide(rows: list[dict], bars: bool) -> str:
    table_rows = []
    for r in rows:
        table_rows.append([r["flush_method"], r["trx_commit"], fmt(r["sync_binlog"]),
                           r["connections"], _tps_cell(r), fmt(r["commit_p50_ms"], 3),
                           fmt(r["commit_p99_ms"], 3), fmt(r["commits_per_redo_sync"], 1),
                           fmt(r["data_fsyncs_per_s"], 1),
                           fmt(r["data_fsyncs_per_data_write"], 4),
                           f"{100 * r['device_flush_util']:.0f}%", f"{100 * r['cpu_util']:.0f}%",
                           fmt(r["checkpoint_stall_s"], 2)])
    headers = ["flush_method", "trx_commit", "sync_binlog", "conns", "TPS", "commit p50 ms",
               "p99 ms", "commits/redo sync", "data fsyncs/s", "fsyncs/write", "flush busy",
               "CPU", "stall s"]
    align: tuple[str, ...] = ("left",) + ("right",) * 12
    if bars:
        top = max((r["tps"] for r in rows), default=0)
        for line, r in zip(table_rows, rows, strict=True):
            line.append(bar(r["tps"], top))
        headers.append("TPS (bar: the column's max)")
        align += ("left",)
    return tabulate(table_rows, headers=headers, disable_numparse=True, colalign=align)


def _simulate_narrow(rows: list[dict], with_binlog: bool, bars: bool, width: int) -> str:
    headers = ["flush_method", "trx\ncommit", "sync\nbinlog", "conns", "TPS",
               "commit\np50 ms", "commit\np99 ms", "data\nfsyncs/s"]
    cells = [[r["flush_method"], r["trx_commit"], fmt(r["sync_binlog"]), r["connections"],
              _tps_cell(r), fmt(r["commit_p50_ms"], 3), fmt(r["commit_p99_ms"], 3),
              fmt(r["data_fsyncs_per_s"], 1)] for r in rows]
    if not with_binlog:
        headers.pop(2)
        for c in cells:
            c.pop(2)
    align = ["left"] + ["right"] * (len(headers) - 1)
    text = tabulated(cells, headers, align)
    if widest(text) > width:   # a block a combination, headed by its settings
        return vertical(cells, headers, width, tuple(range(3 if not with_binlog else 4)))
    # the bars take what room the columns leave, up to their full width
    room = width - widest(text) - 2
    if not bars or room < MIN_BAR:
        return text
    top = max((r["tps"] for r in rows), default=0)
    for c, r in zip(cells, rows, strict=True):
        c.append(bar(r["tps"], top, min(BAR_WIDTH, room)))
    return tabulated(cells, [*headers, "TPS\nbar"], [*align, "left"])


def tps_sparklines(rows: list[dict]) -> list[str]:
    """One line per setting (flush method × trx_commit × sync_binlog) simulated at two or
    more connection counts: TPS over connections as a sparkline, first and last value."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["flush_method"], r["trx_commit"], r["sync_binlog"]), []).append(r)
    out = []
    for (method, trx, sb), rs in groups.items():
        rs = sorted(rs, key=lambda r: r["connections"])
        if len(rs) < 2:
            continue
        setting = f"{method} trx_commit={trx}" + ("" if sb is None else f" sync_binlog={sb}")
        out.append(f"TPS over connections {rs[0]['connections']}→{rs[-1]['connections']}: "
                   f"{sparkline([r['tps'] for r in rs])}  {setting} "
                   f"({rs[0]['tps']:,.0f} → {rs[-1]['tps']:,.0f})")
    return out


# ---- tps -----------------------------------------------------------------------------------

BOUND_TEXT = ("durable: every commit's redo is synced when COMMIT returns (trx_commit=1). "
              "bound: what the rate per connection waits for most, the device's writes and "
              "syncs or the CPU (the workload's server CPU, client and wire time); with no "
              "sync at commit it is the CPU's.")
NARROW_TEXT = ("redo sync: what a commit waits for (-: none; trx_commit=2 syncs the redo about "
               "once a second). binlog: off, or synced at each commit. durable: every commit's "
               "redo is synced when COMMIT returns. TPS per conn: 1 / trx ms, one transaction's "
               "work, writes and syncs in series. --wide: what bounds the rate (device or CPU), "
               "and the simulation beside the closed form.")


def render_tps(out: dict, target_tps: float | None, check: bool, cpu_cores: int,
               width: int | None = None) -> str:
    """tps's text: its head, one row per durability setting, what the columns mean, the
    notes and the footnotes."""
    lines = wrap(f"profile {out['profile']}: {out['title']}  (flavor {out['flavor']})", width)
    lines += wrap(f"workload: {out['workload_source']}", width, hang="  ")
    if width is None:
        text, notes = _tps_wide(out, target_tps, check)
    else:
        text, notes = _tps_narrow(out, target_tps, check, width)
    lines.append(text)
    lines += wrap(BOUND_TEXT if width is None else NARROW_TEXT, width)
    for r in out["settings"]:
        if target_tps and r["connections_for_target"] is None and r["cpu_ceiling_tps"]:
            lines += _notes([f"{r['setting']}: {target_tps:g} TPS is beyond what "
                             f"{cpu_cores} core(s) give at this CPU per transaction "
                             f"({r['cpu_ceiling_tps']:,.0f}/s)"], width)
    if width is None:
        lines += [f"[{i}] the simulation differs from the closed form by more than "
                  f"{TOLERANCE:.0%}: {w}" for i, w in enumerate(notes, 1)]
    else:
        lines += footnotes(notes, width)
    lines += _notes(out["notes"], width)
    return "\n".join(lines) + "\n"


def _simulated_conns(r: dict) -> str:
    if r.get("simulated_connections_for_target"):
        return fmt(r["simulated_connections_for_target"], 0)
    return "> 1024" if r["connections_for_target"] else "-"


def _tps_wide(out: dict, target_tps: float | None, check: bool) -> tuple[str, list[str]]:
    headers = ["durability setting", "durable", "bound", "trx ms", "TPS / connection"]
    if target_tps:
        headers.append(f"conns for {target_tps:g} TPS (at least)")
    if check:
        headers += ["simulated, 1 conn", "vs closed form"]
        if target_tps:
            headers += ["simulated at those conns", "conns needed, simulated"]
    rows = []
    why: list[str] = []
    for r in out["settings"]:
        row = [r["title"], "yes" if r["durable"] else "no", r["bound"].upper()
               if r["bound"] == "cpu" else r["bound"], fmt(r["commit_latency_ms"], 3),
               fmt(r["tps_per_connection"], 1)]
        if target_tps:
            row.append(fmt(r["connections_for_target"]) if r["connections_for_target"]
                       else "-")
        if check:
            row.append(fmt(r["simulated_tps_1_connection"], 1))
            pct = r["simulated_vs_closed_form_pct"]
            mark = "" if r["agrees"] else f" [{len(why) + 1}]"
            row.append(("-" if pct is None else f"{pct:+.0f}%") + mark)
            if not r["agrees"]:
                why.append(r["why"])
            if target_tps:
                row.append(fmt(r.get("simulated_tps_at_target_connections",
                                     r["simulated_tps_1_connection"]), 1))
                row.append(_simulated_conns(r))
        rows.append(row)
    return tabulate(rows, headers=headers, disable_numparse=True), why


def _tps_narrow(out: dict, target_tps: float | None, check: bool, width: int
                ) -> tuple[str, list[str]]:
    """The setting as three short columns instead of its 60-character title; a rate the
    simulation does not confirm is marked, its footnote says by how much and why."""
    flavor = get_flavor(out["flavor"])
    settings = {s.key: s for s in SETTINGS}
    headers = ["trx\ncommit", "redo\nsync", "binlog", "durable", "trx ms", "TPS per\nconn"]
    if target_tps:
        headers.append(f"conns for\n{target_tps:g} TPS")
        if check:
            headers.append("simulated\nconns")
    rows, notes = [], []
    for r in out["settings"]:
        s = settings[r["setting"]]
        sync = ("fdatasync" if flavor.use_fdatasync(s.use_fdatasync) else "fsync") \
            if s.trx_commit == 1 else "-"
        per_conn = fmt(r["tps_per_connection"], 1)
        if check and not r["agrees"]:
            pct = r["simulated_vs_closed_form_pct"]
            notes.append(f"simulated at one connection: "
                         f"{fmt(r['simulated_tps_1_connection'], 1)}/s"
                         + ("" if pct is None else f" ({pct:+.0f}%)")
                         + f", beyond ±{TOLERANCE:.0%} of the closed form: {r['why']}")
            per_conn += f" [{len(notes)}]"
        row = [s.trx_commit, sync, "synced" if s.log_bin else "off",
               "yes" if r["durable"] else "no", fmt(r["commit_latency_ms"], 3), per_conn]
        if target_tps:
            row.append(fmt(r["connections_for_target"]) if r["connections_for_target"]
                       else "-")
            if check:
                row.append(_simulated_conns(r))
        rows.append(row)
    align = ["right", "left", "left", "left"] + ["right"] * (len(headers) - 4)
    return table(rows, headers, width, align, title=(0, 1, 2)), notes
