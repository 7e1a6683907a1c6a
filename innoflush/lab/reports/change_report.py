"""The report of `innoflush lab validate --workload-cmd`
(lab/experiments/change_validation.py): text tables, Markdown, JSON.

JSON keys (``--json``; schema ``innoflush.lab-validate-changes/1``):

- ``schema``, ``date`` (UTC), ``command``, ``wall_s``, ``backend``, ``image``,
  ``server`` {``version``, ``sim_flavor``}, ``host`` (as lab validate's), ``storage``
  {``datadir_on``, ``filesystem``};
- ``matrix``: ``devices``, ``workloads`` [{``name``, ``command``, ``prepare``}],
  ``connections``, ``changes`` [{``id``, ``setting``, ``before``, ``after``, ``title``,
  ``log_bin``, ``needs_nonvolatile_cache``}], ``duration_s``, ``warmup_s``,
  ``buffer_pool``, ``extra``, ``replicates``, ``factor`` (1.3), ``flat_band_pct`` (3);
- ``devices``: [{``name``, ``ref``, ``kind`` (local|emulated), ``profile`` {``name``,
  ``title``, ``source``}, ``emulation`` (emulated), ``nonvolatile_cache``, ``skipped``
  (when this host cannot emulate it), ``cells``, ``summary``}];
  - a cell: ``device``, ``workload``, ``connections``, ``change``, ``setting``,
    ``before_value``, ``after_value``, ``before`` and ``after`` (each run's ``tps``,
    ``data_fsyncs_per_s``, ``data_writes_per_s``, ``commits``, ``seconds``,
    ``commits_source``, ``server_cpu_us_per_trx``, ``command_cpu_us_per_trx``,
    ``settings`` {``innodb_flush_method``, ``innodb_flush_log_at_trx_commit``,
    ``log_bin``, ``sync_binlog``}, ``settings_match``, ``emulation``, ``version``,
    ``sim_flavor``, ``notes``; with replicates each side's ``tps``, data fsyncs/s and
    writes/s and CPU are the means, and ``replicates`` their count), ``replicates``
    (with more than one: [{``replicate``, ``before``, ``after`` {``tps``,
    ``data_fsyncs_per_s``, ``data_writes_per_s``}, ``ratio``}], else []),
    ``measured_spread_pct`` (half the replicates' ratios' range, % of the measured
    ratio; null with one), ``noise_band_pct`` (max of 3 and the spread),
    ``measured_ratio`` (mean after / mean before TPS),
    ``measured_change_pct``, ``advise`` {``ran``, ``error``, ``explained``, ``reasons``,
    ``fit_workload``, ``candidate`` {``id``, ``advised``, ``unsafe``, ``finding``,
    ``tps_pct``, ``ratio``, ``ratio_range``, ``ratio_interval``, ``tps_current``, ``tps_candidate``,
    ``data_fsyncs_per_s_current``, ``data_fsyncs_per_s_candidate``,
    ``data_fsyncs_per_s_settled``, ``missing``}},
    ``predicted_ratio``, ``predicted_range`` [lo, hi], ``predicted_interval`` [lo, hi]
    (the model's validated error; null where the change has none), ``interval_holds``
    (the measured ratio inside it), ``ratio_factor`` (predicted /
    measured), ``within_factor`` (within ×/÷1.3 of the measured ratio's spread),
    ``direction`` {``measured``, ``predicted`` (down, flat, up: flat within the noise
    band), ``right``, ``within_noise`` (flat only because of the replicates' spread)},
    ``data_fsyncs_after`` {``measured``, ``predicted``, ``basis`` (settled: advise's
    settled figure, the after runs' page cleaners having got to work; window: its
    window's), ``error_pct``}, ``simulate_before`` {``measured_tps``, ``predicted_tps``,
    ``error_pct``, ``missing``}, ``simulate_after`` {``measured_tps``, ``predicted_tps``,
    ``error_pct``}, ``notes``; a skipped cell has ``skipped`` and a failed
    one ``error`` instead of the figures;
  - ``summary``: ``cells``, ``measured_cells``, ``skipped_cells``, ``failed_cells``,
    ``within_factor`` ("k/n"), ``within_factor_share``, ``direction_right`` ("k/n"),
    ``measured_within_noise``, ``direction_beyond_noise`` ("k/n": the direction
    judged only where the measured change exceeds ``repeatability``'s 90th percentile
    and the cell's own ``noise_band_pct``; null without it), ``interval_holds`` ("k/n"),
    ``data_fsyncs_after_mape``, ``simulate_tps_mape``, ``simulate_after_tps_mape`` and
    ``simulate_all_tps_mape`` {``mape_pct``, ``cells``},
    ``not_explained``, ``no_prediction``;
- ``summary``: the same over every device, ``repeatability`` (runs of identical
  settings in this matrix, lab/experiments/repeatability.py: ``pairs``, ``within_factor`` ("k/n"),
  ``within_factor_share``, ``median_difference_pct``, ``p90_difference_pct``; the
  figures null without pairs) and ``by_change`` {change id: the same};
- ``warnings``.
"""

from __future__ import annotations

import json

from ...terminal import fit_lines
from .report import md_table, num, pct, report_table


def to_json(report: dict) -> str:
    return json.dumps(report, indent=2, default=str) + "\n"


def _x(r) -> str:
    return "-" if r is None else f"×{r:.2f}"


def _yes(v) -> str:
    return {True: "yes", False: "NO", None: "-"}[v]


def _advise_cell(c: dict) -> str:
    a = c["advise"]
    if not a["ran"]:
        return "did not finish"
    out = {True: "explains", False: "CANNOT explain",
           None: "explained: not said"}[a["explained"]]
    cand = a["candidate"]
    if cand.get("advised"):
        out += "; advised"
    if cand.get("unsafe"):
        out += "; unsafe"
    if c["predicted_ratio"] is None:
        out += "; no prediction"
    return out


def cell_rows(cells: list[dict]) -> list[list]:
    rows = []
    for c in cells:
        head = [c["workload"], c["connections"], c["change"]]
        if "skipped" in c or "error" in c:
            rows.append(head + ["skipped" if "skipped" in c else "FAILED"] + [""] * 9)
            continue
        rng, iv = c["predicted_range"], c.get("predicted_interval")
        # the interval (the model's validated error) where there is one: what to expect;
        # else the inputs' range
        pred = _x(c["predicted_ratio"]) + (
            f" [{iv[0]:.2f}..{iv[1]:.2f}]" if iv else
            f" (inputs {rng[0]:.2f}..{rng[1]:.2f})" if rng else "")
        d, fs, sb = c["direction"], c["data_fsyncs_after"], c["simulate_before"]
        sa = c.get("simulate_after") or {}
        spread = c.get("measured_spread_pct")
        measured = _x(c["measured_ratio"]) + (f" ±{spread:.0f}%" if spread is not None
                                              else "")
        m_dir = (d["measured"] or "-") + (" (within noise)" if d.get("within_noise") else "")
        rows.append(head + [
            num(c["before"]["tps"]), num(c["after"]["tps"]), measured, pred,
            _yes(c["within_factor"]),
            f"{m_dir} / {d['predicted'] or '-'} ({_yes(d['right'])})",
            f"{num(fs['measured'])} / {num(fs['predicted'])}"
            + ("s" if fs.get("basis") == "settled" else "") + f" ({pct(fs['error_pct'])})",
            f"{num(sb['measured_tps'])} / {num(sb['predicted_tps'])} ({pct(sb['error_pct'])})",
            f"{num(sa.get('measured_tps'))} / {num(sa.get('predicted_tps'))} "
            f"({pct(sa.get('error_pct'))})",
            _advise_cell(c)])
    return rows


def cell_headers(factor: float) -> list[str]:
    return ["workload", "conns", "change", "TPS before", "TPS after",
            "measured [± replicates' spread]",
            "predicted [interval]", f"within ×/÷{factor:g}", "direction meas / pred (right)",
            "data fsyncs/s after meas / pred (err)", "simulate before TPS meas / pred (err)",
            "simulate after TPS meas / pred (err)", "advise"]


def _mape(m: dict) -> str:
    return "-" if m["mape_pct"] is None else f"{m['mape_pct']:.1f}% ({m['cells']})"


def _summary_row(name: str, s: dict) -> list:
    share = s["within_factor_share"]
    return [name, s["measured_cells"], s["within_factor"]
            + (f" ({share:.0%})" if share is not None else ""),
            s["direction_right"], s.get("direction_beyond_noise") or "-",
            s.get("interval_holds") or "-",
            _mape(s["data_fsyncs_after_mape"]),
            _mape(s["simulate_tps_mape"]),
            _mape(s.get("simulate_after_tps_mape") or {"mape_pct": None}),
            _mape(s.get("simulate_all_tps_mape") or {"mape_pct": None}),
            s["not_explained"], s["no_prediction"],
            s["skipped_cells"], s["failed_cells"]]


def repeatability_lines(report: dict) -> list[str]:
    """What identical runs of this run say of its resolution (lab/experiments/repeatability.py)."""
    r = report["summary"].get("repeatability")
    if not r:
        return []
    factor = report["matrix"]["factor"]
    if not r["pairs"]:
        return ["repeatability: no two runs of identical settings in this matrix; how "
                "large a change this host makes up by itself is not measured"]
    return [f"repeatability: {r['pairs']} pairs of runs of identical settings; within "
            f"×/÷{factor:g} of each other in {r['within_factor']} "
            f"({r['within_factor_share']:.0%}), median difference "
            f"{r['median_difference_pct']:.1f} %, 90th percentile "
            f"{r['p90_difference_pct']:.1f} %.",
            f"  A perfect model would be within ×/÷{factor:g} of one run a side in about "
            f"{r['within_factor_share']:.0%} of the cells; a measured change smaller than "
            f"±{r['p90_difference_pct']:.0f} % is one the host makes up by itself, and "
            "\"direction beyond noise\" judges the cells whose change is larger."]


def summary_rows(report: dict) -> list[list]:
    rows = [_summary_row(d["name"] + (" (emulated)" if d["kind"] == "emulated" else ""),
                         d["summary"]) for d in report["devices"]]
    rows.append(_summary_row("all devices", report["summary"]))
    for cid, s in (report["summary"].get("by_change") or {}).items():
        rows.append(_summary_row(f"  change {cid}", s))
    return rows


def summary_headers(factor: float) -> list[str]:
    return ["device", "measured cells", f"within ×/÷{factor:g}", "direction right",
            "direction beyond noise", "inside interval",
            "data fsyncs/s after MAPE", "simulate before TPS MAPE",
            "simulate after TPS MAPE", "simulate TPS MAPE (both)", "not explained",
            "no prediction", "skipped", "failed"]


def _device_head(d: dict) -> str:
    p = d["profile"]
    cache = "non-volatile cache" if d.get("nonvolatile_cache") else "volatile or unknown cache"
    if d["kind"] == "local":
        return f"{d['name']}: this host's storage, profile {p['name']} [{p['source']}]; {cache}"
    chk = (d.get("emulation") or {}).get("host_check") or {}
    return (f"{d['name']} (emulated): {p['title']}; {cache}; host check "
            f"{chk.get('verdict', '?')}")


def _head(report: dict) -> list[str]:
    m = report["matrix"]
    out = [f"innoflush lab validate --workload-cmd — {report['backend']} backend, "
           f"{report['server'].get('version') or '?'}, {report['date']}",
           f"matrix: workloads {[w['name'] for w in m['workloads']]} × connections "
           f"{m['connections']} × changes {[c['id'] for c in m['changes']]}; per cell a "
           f"before and an after run of {m['duration_s']:g} s after {m['warmup_s']:g} s of "
           f"warm-up" + (f", {m['replicates']} replicates (A B B A; a change within "
                         "their spread is flat within noise)"
                         if m.get("replicates", 1) > 1 else "")
           + f"; within ×/÷{m['factor']:g}, flat within ±{m['flat_band_pct']:g}%",
           f"wall time {report['wall_s']:.0f} s"]
    for w in m["workloads"]:
        out.append(f"  {w['name']}: {w['command']}")
        if w.get("prepare"):
            out.append(f"    prepare: {w['prepare']}")
    return out


def _cell_notes(d: dict) -> list[str]:
    out = []
    for c in d.get("cells", []):
        why = c.get("skipped") or (c.get("error") or "").splitlines()[:1]
        for n in ([f"skipped: {why}"] if c.get("skipped") else
                  [f"failed: {why[0]}"] if why else c.get("notes", [])):
            out.append(f"note ({c['workload']}, {c['connections']} conn, {c['change']}): {n}")
    return out


# the columns fitted to a terminal: a cell's change measured beside its price, and whether
# they agree (--wide adds the TPS, fsyncs and simulate columns); the summary's agreement
# counts and its TPS error (--wide adds the other errors and counts)
NARROW_CELLS = (0, 1, 2, 5, 6, 7, 8, 12)
NARROW_SUMMARY = (0, 1, 2, 3, 4, 5, 9, 13)


def render_text(report: dict, width: int | None = None) -> str:
    """The report, fitted to width (None, --wide: every column, nothing wrapped)."""
    factor = report["matrix"]["factor"]
    out = _head(report) + [""]
    for d in report["devices"]:
        out.append(_device_head(d))
        if d.get("skipped"):
            out += [f"  skipped: {d['skipped']}", ""]
            continue
        out.append("advise's price of each change beside the change measured (ratio = "
                   "after / before TPS):")
        rows = cell_rows(d["cells"])
        if width is not None:   # a skipped or failed cell says so in a column it keeps
            rows = [r[:5] + [r[3]] + r[6:] if r[5] == "" and r[3] else r for r in rows]
        out.append(report_table(rows, cell_headers(factor), width, NARROW_CELLS, 3))
        out += _cell_notes(d) + [""]
    out.append("summary:")
    out.append(report_table(summary_rows(report), summary_headers(factor), width, NARROW_SUMMARY))
    out += repeatability_lines(report)
    for w in report.get("warnings", []):
        out.append(f"warning: {w}")
    return "\n".join(fit_lines(out, width)) + "\n"


def render_markdown(report: dict) -> str:
    factor = report["matrix"]["factor"]
    h = report.get("host") or {}
    out = ["# innoflush change validation: advise's price of a change beside the change "
           "measured", "",
           f"- **Date**: {report['date']} (UTC); wall time {report['wall_s'] / 60:.1f} min",
           f"- **Command**: `{report.get('command') or 'innoflush lab validate'}`",
           f"- **Server**: {report['server'].get('version')} ({report['backend']} backend)",
           f"- **Host**: {h.get('hostname')}, {h.get('cpu_model')} × {h.get('cpu_cores')}, "
           f"{h.get('filesystem')} on {h.get('block_device')}", ""]
    out += ["```", *_head(report), "```", "", "## Summary", "",
            md_table(summary_headers(factor), summary_rows(report)), ""]
    noise = repeatability_lines(report)
    if noise:
        out += [" ".join(x.strip() for x in noise), ""]
    for d in report["devices"]:
        out += [f"## {d['name']}", "", _device_head(d), ""]
        if d.get("skipped"):
            out += [f"Skipped: {d['skipped']}", ""]
            continue
        out += [md_table(cell_headers(factor), cell_rows(d["cells"])), ""]
        out += [f"- {n}" for n in _cell_notes(d)]
        out.append("")
    if report.get("warnings"):
        out += ["## Warnings", ""] + [f"- {w}" for w in report["warnings"]] + [""]
    return "\n".join(out)


__all__ = ["render_markdown", "render_text", "to_json"]
