"""`innoflush lab validate`'s report: text tables, and the Markdown validation report.

JSON keys (``--json``; schema ``innoflush.lab-validate/1``):

- ``schema``, ``date`` (UTC), ``command`` (the command line), ``wall_s``;
- ``backend``, ``image``, ``server`` {``version``, ``sim_flavor``};
- ``host``: ``hostname``, ``kernel``, ``cpu_model``, ``cpu_cores``, ``memory_bytes``,
  ``filesystem``, ``mount_options``, ``block_device``, ``disk`` {``name``, ``model``,
  ``vendor``, ``rotational``, ``write_cache``, ``virtual``}, ``python``;
  ``storage`` {``datadir_on``, ``filesystem``};
- ``matrix``: ``devices``, ``connections``, ``flush_methods``, ``trx_commits``,
  ``replicates`` (times every cell is measured), ``duration_s``, ``warmup_s``,
  ``buffer_pool``, ``extra``, ``workload`` (the load's spec), ``description``;
- ``calibration``: ``workload_profile`` (the profile the predictions used, as saved by
  ``lab calibrate``), ``runs`` (one per connection count: ``connections``, ``commits``,
  ``tps``, ``server_cpu_us_per_trx``, ``client_cpu_us_per_trx``, ... ``workload``),
  ``derivation``, ``saved``, ``save_error`` (only when --save-workload could not write
  it: the matrix ran, the command exits 1 after the report), ``duration_s``, ``warmup_s``
  (or ``source``: the ``--workload`` given instead);
- ``targets_pct``: the issue's targets per figure;
- ``devices``: one per device: ``name``, ``kind`` (local|emulated), ``profile``
  {``name``, ``title``, ``source``}, ``emulation`` (emulated: ``profile``,
  ``sync_p50_us``, ``channels``, ``host_check`` {``verdict``, ``ops``, ``writes``,
  ``notes``}), ``skipped`` (why, when this host cannot emulate it), ``cells`` and
  ``summary``:
  - a cell: ``device``, ``connections``, ``flush_method``, ``trx_commit``,
    ``replicate`` (1.. ``replicates``), ``settings_match``, ``read_back``, ``measured`` (``tps``,
    ``commit_latency_p50_ms``, ``commit_latency_p99_ms``, ``data_fsyncs_per_s``,
    ``data_writes_per_s``, ``data_fsyncs_per_data_write``, ``data_fsyncs_per_commit``,
    ``commits``, ``seconds``, ``commits_per_redo_sync``, ``server_cpu_us_per_trx``,
    ``client_cpu_us_per_trx``, ``trx_latency_p50_ms``, ``machine_cpu``, ``runq_wait``,
    ``pages_written``, ``status_deltas``, ``loopback_wall_us``), ``predicted`` (the
    same figures, ``commit_round_trip_ms``, ``cpu_util``, ``device_flush_util``,
    ``checkpoint_stall_s``, ``sim_duration_s``, ``group_commit``, ``syncs_per_s``),
    ``errors_pct`` (predicted / measured − 1, %, per figure; null when the measured
    value is 0), ``workload`` (what the model was given, ``source``),
    ``derived_workload`` + ``predicted_derived`` + ``errors_pct_derived`` (the model
    with the cell's own measured costs, as ``lab run``), ``predicted_single`` +
    ``errors_pct_single`` (with the calibration at its first connection count only),
    ``sim_config``, ``emulation`` (the library's counters for the server), ``notes``;
    a failed cell has ``error`` instead of the figures;
  - ``summary``: ``cells``, ``measured_cells``, ``failed_cells``, ``mape`` {figure:
    {``mape_pct``, ``cells``, ``excluded`` (measured 0), ``max_abs_pct``,
    ``target_pct``, ``within_target``, ``met`` (null: no cell to judge)}}, ``mape_derived``,
    ``mape_single_calibration``, ``direction`` [{``connections``, ``trx_commit``,
    ``measured_change_per_s_pct``, ``predicted_change_per_s_pct``, ``right_per_s``,
    ``measured_change_per_commit_pct``, ``predicted_change_per_commit_pct``,
    ``right_per_commit``, ``measured_flat``, ``sign_agrees_per_s``, ``replicates``,
    ``replicate_changes_per_s_pct`` and ``replicate_changes_per_commit_pct`` (each
    replicate's own change), ``replicates_agree_per_s`` and ``replicates_agree_per_commit``
    (every replicate's change in the same class), ``undetermined`` (the per-second
    classes disagree: noise, not judged)}] (each change classed down / flat (within ±3%)
    / up, a side being the mean of its replicates; right: the same class; null when
    undetermined), ``direction_right`` ("k/n" over the judged pairs),
    ``direction_all_right`` (null without a judged pair), ``direction_right_per_commit``,
    ``direction_sign_agrees``,
    ``direction_right_not_flat`` (right among the pairs whose measured change is beyond
    ±3%), ``direction_undetermined`` (pairs whose replicates disagree);
- ``warnings``.
"""

from __future__ import annotations

import json

from ...terminal import fit_lines
from .report import md_table, num, pair, pct, report_table

LABELS = {"tps": "TPS", "commit_latency_p50_ms": "commit p50", "commit_latency_p99_ms":
          "commit p99", "data_fsyncs_per_s": "data fsyncs/s", "data_writes_per_s":
          "data writes/s"}


def to_json(report: dict) -> str:
    return json.dumps(report, indent=2, default=str) + "\n"


def _mp(x) -> str:
    return "-" if x is None else f"{x:.1f}%"


def _pair(c: dict, key: str, width: int | None = None) -> str:
    m, p, e = c["measured"].get(key), c["predicted"].get(key), c["errors_pct"].get(key)
    return pair(num(m), num(p), pct(e), width)


def _flags(c: dict) -> str:
    out = []
    mc = (c["measured"].get("machine_cpu") or {})
    if (mc.get("other") or 0) >= 0.1:
        out.append(f"other load {mc['other']:.0%}")
    if not c.get("settings_match", True):
        out.append("settings differ")
    if any(n.startswith("tried ") for n in c.get("notes", [])):
        out.append("retried")
    emu = c.get("emulation") or {}
    if emu.get("delayed_calls") and emu.get("host_slower_calls", 0) >= \
            0.1 * emu["delayed_calls"]:
        out.append("host slower than emulation")
    return ", ".join(out)


def cell_rows(cells: list[dict], width: int | None = None) -> list[list]:
    """One row per cell; with replicates the connections read "4 #2" (replicate 2); the
    measured / predicted cells compact when fitted to a width (report.pair)."""
    replicated = any(c.get("replicate", 1) > 1 for c in cells)
    rows = []
    for c in cells:
        conns = (f"{c['connections']} #{c.get('replicate', 1)}" if replicated
                 else c["connections"])
        if "measured" not in c:
            rows.append([conns, c["flush_method"], c["trx_commit"],
                         "FAILED: " + c.get("error", "?")[:60], "", "", "", "", ""])
            continue
        rows.append([conns, c["flush_method"], c["trx_commit"],
                     *(_pair(c, k, width) for k in ("tps", "commit_latency_p50_ms",
                                                     "commit_latency_p99_ms",
                                                     "data_fsyncs_per_s", "data_writes_per_s")),
                     _flags(c)])
    return rows


CELL_HEADERS = ["conns", "flush_method", "trx", "TPS", "commit p50 ms", "commit p99 ms",
                "data fsyncs/s", "data writes/s", "flags"]


def summary_rows(report: dict, which: str = "mape") -> list[list]:
    rows = []
    for d in report["devices"]:
        s = d["summary"]
        row = [d["name"] + (" (emulated)" if d["kind"] == "emulated" else "")]
        for k in ("tps", "commit_latency_p50_ms", "commit_latency_p99_ms",
                  "data_fsyncs_per_s", "data_writes_per_s"):
            m = s[which][k]
            cell = _mp(m["mape_pct"])
            if m.get("target_pct") is not None and which == "mape" \
                    and m.get("met") is not None:
                cell += " ✓" if m["met"] else " ✗"
            if m["excluded"]:
                cell += f" ({m['cells']} cells; {m['excluded']} measured 0)"
            row.append(cell)
        if which == "mape":
            und = s.get("direction_undetermined") or 0
            if not s["direction"]:
                row.append("- (no O_DIRECT/O_DIRECT_NO_FSYNC pair)")
            elif s["direction_all_right"] is None:
                row.append(f"- (all {und} undetermined: the replicates disagree)")
            else:
                row.append(s["direction_right"] + (" ✓" if s["direction_all_right"] else " ✗")
                           + f" ({s.get('direction_right_not_flat', '-')} beyond ±3%"
                           + (f"; {und} undetermined" if und else "") + ")")
        rows.append(row)
    return rows


SUMMARY_HEADERS = ["device", "TPS (≤15%)", "commit p50 (≤20%)", "commit p99", "data fsyncs/s "
                   "(≤25%)", "data writes/s (≤25%)", "O_DIRECT→NO_FSYNC fsyncs direction right"]


def _right(r: dict, per: str) -> str:
    if not r.get(f"replicates_agree_{per}", True):
        return "undetermined"
    return {True: "yes", False: "NO", None: "-"}[r[f"right_{per}"]]


def _replicate_changes(r: dict) -> str:
    reps = r.get("replicate_changes_per_s_pct") or []
    if len(reps) < 2:
        return "-"
    return ", ".join(pct(x) for x in reps) + ("" if r["replicates_agree_per_s"]
                                              else " (disagree)")


def direction_rows(report: dict) -> list[list]:
    rows = []
    for d in report["devices"]:
        for r in d["summary"]["direction"]:
            rows.append([d["name"], r["connections"], r["trx_commit"],
                         pct(r["measured_change_per_s_pct"]), _replicate_changes(r),
                         pct(r["predicted_change_per_s_pct"]),
                         _right(r, "per_s")
                         + (" (measured flat)" if r["measured_flat"]
                            and r.get("replicates_agree_per_s", True) else ""),
                         {True: "yes", False: "no", None: "-"}[r.get("sign_agrees_per_s")],
                         pct(r["measured_change_per_commit_pct"]),
                         pct(r["predicted_change_per_commit_pct"]),
                         _right(r, "per_commit")])
    return rows


DIRECTION_HEADERS = ["device", "conns", "trx", "fsyncs/s measured", "per replicate",
                     "predicted", "right",
                     "bare signs agree", "fsyncs/commit measured", "predicted", "right"]


def calibration_rows(report: dict) -> list[list]:
    rows = []
    for r in (report.get("calibration") or {}).get("runs") or []:
        w = r["workload"]
        rows.append([r["connections"], f"{r['commits']:,}", num(r["tps"]),
                     num(w["cpu_us_per_trx"]), num(w["client_cpu_us_per_trx"]),
                     num(w["client_us_per_trx"]), num(w["redo_bytes_per_trx"]),
                     num(w["pages_dirtied_per_trx"]), num(w["growth_bytes_per_trx"]),
                     w["tablespaces"], num(w.get("extend_bytes")),
                     num((r.get("commit_latency_ms") or {}).get("p50"))])
    return rows


SHARED_KEYS = ("hot_page_share", "dblwr_page_share", "work_cv")


def calibration_shared(report: dict) -> str | None:
    """The calibrated keys every connection count shares (the first run's), one line."""
    runs = (report.get("calibration") or {}).get("runs") or []
    if not runs:
        return None
    w = runs[0].get("workload") or {}
    parts = [f"{k} {num(w[k])}" for k in SHARED_KEYS if w.get(k) is not None]
    return ("shared by every count: " + ", ".join(parts)) if parts else None


CALIBRATION_HEADERS = ["conns", "commits", "TPS (trx_commit=0)", "server CPU µs/trx",
                       "client CPU µs/trx", "client µs/trx", "redo B/trx", "pages/trx",
                       "growth B/trx", "files", "extend B", "COMMIT p50 ms"]


def _times(m: dict) -> str:
    n = m.get("replicates") or 1
    return f", every cell measured {n} times" if n > 1 else ""


def _device_head(d: dict) -> str:
    p = d["profile"]
    if d["kind"] == "local":
        return f"{d['name']}: this host's storage, profile {p['name']} [{p['source']}]"
    e = d["emulation"]
    chk = e["host_check"]
    return (f"{d['name']} (emulated): {p['title']}; sync p50 fsync "
            f"{num(e['sync_p50_us']['fsync'])} µs, fdatasync "
            f"{num(e['sync_p50_us']['fdatasync'])} µs "
            f"({'one flush channel' if e['channels'] == 1 else 'independent delays'}); "
            f"host check {chk['verdict']}")


# a cell's figures fitted to a terminal: TPS, commit p50, data fsyncs/s and the flags
# (--wide adds commit p99 and data writes/s)
NARROW_CELLS = (0, 1, 2, 3, 4, 6, 8)


def render_text(report: dict, width: int | None = None) -> str:
    """The report, fitted to width (None, --wide: every column, nothing wrapped)."""
    out = []
    m = report["matrix"]
    out.append(f"innoflush lab validate — {report['backend']} backend, "
               f"{report['server'].get('version') or '?'} (model flavor "
               f"{report['server'].get('sim_flavor') or '?'}), {report['date']}")
    out.append(f"matrix: connections {m['connections']} × {m['flush_methods']} × "
               f"trx_commit {m['trx_commits']}, {m['duration_s']:g} s per cell after "
               f"{m['warmup_s']:g} s of warm-up{_times(m)}; {m['description']}")
    out.append(f"wall time {report['wall_s']:.0f} s")
    out.append("")
    rows = calibration_rows(report)
    if rows:
        out.append("calibration (innodb_flush_log_at_trx_commit=0, this host's storage):")
        out.append(report_table(rows, CALIBRATION_HEADERS, width))
        shared = calibration_shared(report)
        if shared:
            out.append(shared)
        out.append("")
    for d in report["devices"]:
        out.append(_device_head(d))
        if d.get("skipped"):
            out.append(f"  skipped: {d['skipped']}")
            out.append("")
            continue
        out.append("measured / predicted (error = predicted / measured − 1):")
        out.append(report_table(cell_rows(d["cells"], width), CELL_HEADERS, width, NARROW_CELLS, 3,
                                prose_last=True))
        out.append("")
    out.append("mean absolute percentage error per device (✓/✗: the issue's target):")
    out.append(report_table(summary_rows(report), SUMMARY_HEADERS, width, prose_last=True))
    out.append("")
    out.append("the same, predicting with the costs measured in each cell's own run "
               "(lab run's derivation; not a calibration):")
    out.append(report_table(summary_rows(report, "mape_derived"), SUMMARY_HEADERS[:-1],
                            width))
    out.append("")
    rows = direction_rows(report)
    if rows:
        out.append("O_DIRECT → O_DIRECT_NO_FSYNC: change of Innodb_data_fsyncs")
        out.append(report_table(rows, DIRECTION_HEADERS, width, keys=3))
    for w in report.get("warnings", []):
        out.append(f"warning: {w}")
    return "\n".join(fit_lines(out, width)) + "\n"


def _gib(n) -> str:
    return f"{n / 2**30:.1f} GiB" if n else "?"


def render_markdown(report: dict, title: str = "innoflush validation: measured beside "
                    "predicted") -> str:
    h = report["host"]
    m = report["matrix"]
    disk = h.get("disk") or {}
    out = [f"# {title}", ""]
    out.append(f"- **Date**: {report['date']} (UTC); wall time {report['wall_s'] / 60:.1f} min")
    out.append(f"- **Command**: `{report.get('command') or 'innoflush lab validate'}`")
    out.append(f"- **Server**: {report['server'].get('version')} ({report['backend']} "
               f"backend{', image ' + report['image'] if report.get('image') else ''}); "
               f"model flavor `{report['server'].get('sim_flavor')}`")
    out.append(f"- **Host**: {h.get('hostname')}, {h.get('cpu_model')} × "
               f"{h.get('cpu_cores')}, {_gib(h.get('memory_bytes'))}, {h.get('kernel')}")
    out.append(f"- **Storage**: {h.get('filesystem')} ({h.get('mount_options')}) on "
               f"{h.get('block_device')}"
               + (f" (vendor {disk.get('vendor')}, write cache {disk.get('write_cache')}"
                  + (", a virtual disk" if disk.get("virtual") else "") + ")" if disk else ""))
    out.append(f"- **Matrix**: connections {', '.join(map(str, m['connections']))} × "
               f"{', '.join(m['flush_methods'])} × trx_commit "
               f"{', '.join(map(str, m['trx_commits']))}; {m['duration_s']:g} s measured "
               f"per cell after {m['warmup_s']:g} s of warm-up; buffer pool "
               f"{m['buffer_pool']}; binlog off; a fresh server per cell{_times(m)}")
    out.append(f"- **Workload**: {m['description']}")
    out.append("")
    out.append("## Mean absolute percentage error per device")
    out.append("")
    out.append("Error = predicted / measured − 1 per cell; MAPE = the mean of |error| over "
               "the cells (cells where the measured value is 0 have no error and are left "
               "out, and counted). ✓/✗: the issue's target.")
    out.append("")
    out.append(md_table(SUMMARY_HEADERS, summary_rows(report)))
    out.append("")
    out.append("For comparison, the model fed with the costs measured in each cell's own "
               "run (`lab run`'s derivation, CPU including the syncs' own cost), and with "
               "one calibration at the first connection count for every cell:")
    out.append("")
    out.append(md_table(["device", "TPS", "commit p50", "commit p99", "data fsyncs/s",
                          "data writes/s"],
                         [["per-cell derivation: " + r[0]] + r[1:]
                          for r in summary_rows(report, "mape_derived")]
                         + [["one calibration: " + r[0]] + r[1:]
                            for r in summary_rows(report, "mape_single_calibration")]))
    out.append("")
    rows = calibration_rows(report)
    if rows:
        cal = report["calibration"]
        out.append("## Calibration")
        out.append("")
        out.append(f"`innodb_flush_log_at_trx_commit=0` (no sync in the commit path), this "
                   f"host's storage, {cal.get('duration_s', 0):g} s per run after "
                   f"{cal.get('warmup_s', 0):g} s of warm-up; the predictions of a cell use "
                   "the run at its connection count:")
        out.append("")
        out.append(md_table(CALIBRATION_HEADERS, rows))
        out.append("")
        shared = calibration_shared(report)
        if shared:
            out.append(shared[0].upper() + shared[1:] + ".")
            out.append("")
    out.append("## O_DIRECT → O_DIRECT_NO_FSYNC: the change of Innodb_data_fsyncs")
    out.append("")
    out.append("Each change is classed down, flat (within ±3%: noise-sized) or up; right = "
               "the predicted change is in the measured class. At trx_commit=1 the data "
               "fsyncs are nearly all redo syncs, which the flush method does not touch, so "
               "there both are flat. \"bare signs agree\" compares the signs alone. With "
               "replicates (each cell measured more than once, the pair's runs in A B B A "
               "order) a side is the mean of its runs, and a pair whose replicates disagree "
               "on the class is undetermined: its measured direction is noise, and it is "
               "neither right nor wrong.")
    out.append("")
    out.append(md_table(DIRECTION_HEADERS, direction_rows(report)))
    out.append("")
    for d in report["devices"]:
        out.append(f"## {d['name']}" + (" (emulated)" if d["kind"] == "emulated" else ""))
        out.append("")
        out.append(_device_head(d) + ".")
        if d.get("emulation"):
            for n in d["emulation"]["host_check"]["notes"]:
                out.append(f"{n[0].upper()}{n[1:]}.")
        out.append("")
        if d.get("skipped"):
            out.append(f"Skipped: {d['skipped']}.")
            out.append("")
            continue
        out.append("measured / predicted (error):")
        out.append("")
        out.append(md_table(CELL_HEADERS, cell_rows(d["cells"])))
        out.append("")
    if report.get("warnings"):
        out.append("## Warnings")
        out.append("")
        out += [f"- {w}" for w in report["warnings"]]
        out.append("")
    return "\n".join(out)


__all__ = ["render_markdown", "render_text", "to_json"]
