"""The lab's report: measured beside predicted, as a table (tabulate) and as JSON.

JSON keys (``innoflush lab run --json``; schema ``innoflush.lab-run/1``):

- ``schema``: "innoflush.lab-run/1".
- ``backend`` (local|docker), ``image`` (docker image, or null).
- ``server``: ``product``, ``version``, ``sim_flavor`` (of the first run's server).
- ``storage``: ``datadir_on`` (the directory the servers' datadirs were created under),
  ``filesystem``.
- ``profile``: the device profile the predictions use: ``name``, ``title``, ``source``
  (profile|measure|emulated); ``device``: the profile's facts as the advisor reads them
  (``verdict``, ``o_direct_no_fsync_safe``, ``fsync_median_us``, ``fdatasync_median_us``,
  ...).
- ``emulation``: null, or with ``--emulate``: ``profile``, ``title`` (the emulated
  device), ``library`` (the preloaded .so), ``channels`` (1: one cache-flush channel),
  ``seed``, ``sync_p50_us`` {``fsync``, ``fdatasync``} (the emulated medians),
  ``host_check`` {``verdict`` (ok|approximate|cannot), ``host_source``, ``ops`` {op:
  {``emulated_p50_us``, ``host_p50_us``, ``host_over_emulated``}}, ``writes``
  {``profile_16k_us``, ``host_16k_us``}, ``notes``}.
- ``calibrated_workload``: null, or with ``--workload NAME|FILE``: ``name``, ``title``,
  ``workload``, ``provenance`` of the workload profile the predictions use.
- ``host``: ``cpu_cores``.
- ``workload``: the workload spec (``kind``, ``duration_s``, ``rows_per_trx``,
  ``updates_per_trx``, ``preload_rows``, ``pad_bytes``, ``statements_per_trx``,
  ``max_trx_per_connection``, ``database``, ``seed``, ``connections`` [the list],
  ``description``).
- ``runs``: one object per combination, in order:
  - ``index``, ``label``, ``server_process`` {``pid`` (host PID), ``port``} (the server
    is stopped by the time the report exists);
  - ``requested``: ``innodb_flush_method``, ``innodb_flush_log_at_trx_commit``,
    ``log_bin``, ``sync_binlog`` (null: the server's default), ``innodb_buffer_pool_size``,
    ``connections``, ``extra``;
  - ``read_back``: what the server ran with (SHOW GLOBAL VARIABLES): ``version``,
    ``product``, ``sim_flavor``, ``innodb_flush_method``, ``flush_method_source``,
    ``innodb_flush_log_at_trx_commit``, ``log_bin``, ``sync_binlog``,
    ``innodb_buffer_pool_size``, ``innodb_doublewrite``, ``innodb_use_fdatasync``,
    ``innodb_io_capacity``, ``innodb_io_capacity_max``, ``redo_capacity_bytes``,
    ``innodb_page_size``, ``datadir``; ``settings_match`` (bool) and
    ``settings_mismatch`` [lines];
  - ``measured``: the compared figures ``tps`` (client side), ``commit_latency_p50_ms``,
    ``commit_latency_p99_ms`` (the COMMIT round trip), ``data_fsyncs_per_s``,
    ``data_writes_per_s``, ``data_fsyncs_per_data_write`` (status deltas); and
    ``client`` {``seconds``, ``commits``, ``tps``, ``commit_latency_ms`` and
    ``trx_latency_ms`` {``mean``, ``p50``, ``p95``, ``p99``}, ``errors``, ``retries``,
    ``warmup_s``, ``warmup_commits``, ``error_messages``, ``client_cpu`` {``cpu_s``,
    ``cpu_us_per_trx``, ``runq_wait_us_per_trx``, ``busy_max``,
    ``busy_mean`` (fraction of a core per process), ``share_of_machine``,
    ``bottleneck``, ``bottleneck_reasons``}, ``per_connection_commits``, ``notes``},
    ``status_seconds``, ``status_deltas`` (SHOW GLOBAL STATUS counter deltas),
    ``observed`` (the advisor's figures from those deltas, keys as in
    ``innoflush advise --json``), ``server_cpu_s``, ``server_cpu_us_per_trx``,
    ``server_cpu_split`` {``connection_threads`` (count), ``connection_threads_s``,
    ``background_s``} or null (/proc/PID/task unreadable),
    ``machine_cpu_busy`` (fraction of all cores, /proc/stat), ``machine_cpu``
    {``busy``, ``steal``, ``other`` (busy outside the server and the clients)} or null,
    ``runq_wait`` {``server_us_per_trx``, ``clients_us_per_trx``} (time the threads waited
    on a run queue for a CPU, /proc schedstat, per commit),
    ``loopback``
    {``round_trips``, ``wall_us``, ``client_cpu_us``, ``server_cpu_us``,
    ``outside_client_us``, ``wait_us``} (``SELECT 1`` round trips on the idle server),
    ``files``
    {``files_written``, ``tablespaces_written``, ``growth_bytes``} or null;
  - ``workload``: the simulator Workload fed to the model (``connections``,
    ``cpu_us_per_trx``, ``client_us_per_trx``, ``client_cpu_us_per_trx``,
    ``redo_bytes_per_trx``, ``binlog_bytes_per_trx``, ``pages_dirtied_per_trx``,
    ``tablespaces``, ``growth_bytes_per_trx``, ``extend_bytes``), ``source`` ("derived":
    from this run; else the calibrated workload's name and connection count), ``spec``,
    ``derivation`` [how each was measured], ``sim_config`` (the simulator ServerConfig
    from the read-back settings); with ``--workload``, ``derived_workload`` (what this
    run's own measurements give, with its ``derivation``; reported, not used);
  - ``emulation``: null, or the library's counters for this run's server
    (``delayed_calls``, ``delayed_fsync``, ``delayed_fdatasync``, ``delayed_dsync``,
    ``slept_s``, ``overshoot_s``, ``host_slower_calls``, ``processes``, ``active``,
    ``server`` (its log line)), over the server's whole life;
  - ``predicted``: the compared figures (same keys as ``measured``'s; the commit
    latencies are the simulated wait for durability plus ``commit_round_trip_ms``: one
    measured ``SELECT 1`` round trip, or with a calibrated workload its COMMIT round trip
    at trx_commit=0, ``commit_round_trip_source``) and ``sim_commit_latency_ms`` (the
    simulated wait
    alone: ``mean``, ``p50``, ``p95``, ``p99``), ``trx_latency_ms``, ``commits``, ``status_per_s``,
    ``syncs_per_s``, ``group_commit``, ``cpu_util``, ``device_flush_util``,
    ``checkpoint_stall_s``, ``sim_duration_s``, ``seed``, ``profile``, ``notes``;
  - ``errors_pct``: for each compared figure, predicted / measured − 1 in % (null when
    either is missing or the measured value is 0);
  - ``advise``: ``findings`` [{``id``, ``setting``, ``current``, ``recommended``,
    ``severity``, ``why``, ``risk``}], ``cannot_judge``, ``warnings``, ``error`` (null,
    or why advise did not run);
  - ``notes``: what to know about this run (client bottleneck, CPU saturation, errors,
    settings not as requested).
- ``warnings``: problems of the whole lab (tmpfs storage, leftovers).
"""

from __future__ import annotations

import json

from tabulate import tabulate

from ...terminal import fit_lines
from ...terminal import table as fit_table
from ...units import format_size

SCHEMA = "innoflush.lab-run/1"

FIGURES = (("tps", "TPS"),
           ("commit_latency_p50_ms", "commit p50 ms"),
           ("commit_latency_p99_ms", "commit p99 ms"),
           ("data_fsyncs_per_s", "Innodb_data_fsyncs/s"),
           ("data_writes_per_s", "Innodb_data_writes/s"),
           ("data_fsyncs_per_data_write", "data fsyncs / data write"))


def to_json(report: dict) -> str:
    return json.dumps(report, indent=2, default=str) + "\n"


def num(x) -> str:
    """3-4 significant digits, thousands separated; '-' for None."""
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "ON" if x else "OFF"
    if not isinstance(x, int | float):
        return str(x)
    a = abs(x)
    if a >= 1000:
        return f"{x:,.0f}"
    if a >= 100:
        return f"{x:.1f}"
    if a >= 10:
        return f"{x:.2f}"
    if a >= 1:
        return f"{x:.3f}"
    if a == 0:
        return "0"
    return f"{x:.3g}"


def pct(x) -> str:
    return "-" if x is None else f"{x:+.0f}%"


def md_table(headers: list[str], rows: list[list]) -> str:
    """A Markdown table, | escaped in the cells."""
    def esc(x) -> str:
        return str(x).replace("|", "\\|")
    out = ["| " + " | ".join(esc(h) for h in headers) + " |",
           "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(esc(x) for x in r) + " |" for r in rows]
    return "\n".join(out)


def _onoff(x) -> str:
    return "ON" if x else "OFF"


def _read_back_line(b: dict) -> str:
    bp = b.get("innodb_buffer_pool_size")
    return (f"innodb_flush_method={b['innodb_flush_method']}, "
            f"innodb_flush_log_at_trx_commit={b['innodb_flush_log_at_trx_commit']}, "
            f"log_bin={_onoff(b['log_bin'])}, sync_binlog={b['sync_binlog']}, "
            f"innodb_doublewrite={b['innodb_doublewrite']}, buffer pool "
            f"{format_size(bp) if bp else '-'}")


def _workload_line(w: dict) -> str:
    return (f"server CPU {num(w['cpu_us_per_trx'])} µs/trx, client {num(w['client_us_per_trx'])}"
            f" µs/trx, redo {num(w['redo_bytes_per_trx'])} B/trx, "
            f"{num(w['pages_dirtied_per_trx'])} pages dirtied/trx"
            + (f" ({num(100 * w['hot_page_share'])} % come back after a write)"
               if w.get("hot_page_share") else "")
            + f", {w['tablespaces']} "
            f"tablespace(s), growth {num(w['growth_bytes_per_trx'])} B/trx")


def _run_head(r: dict, total: int, width: int | None = None) -> list[str]:
    """A run's first lines: its settings, what the server ran with, the figures table."""
    q = r["requested"]
    head = (f"run {r['index']}/{total}: {q['innodb_flush_method']}, trx_commit="
            f"{q['innodb_flush_log_at_trx_commit']}, log_bin {_onoff(q['log_bin'])}"
            + (f", sync_binlog={q['sync_binlog']}" if q["sync_binlog"] is not None else "")
            + f", {q['connections']} connection(s)")
    if r.get("workload_command"):
        head += f" — workload {r['workload_command']['name']}"
    out = [head]
    b = r["read_back"]
    out.append(f"  server ran with: {_read_back_line(b)} — "
               + ("as requested" if r["settings_match"] else "NOT as requested"))
    m, p, e = r["measured"], r["predicted"], r["errors_pct"]
    rows = [[label, num(m.get(k)), num(p.get(k)), pct(e.get(k))] for k, label in FIGURES]
    headers, align = ["figure", "measured", "predicted", "error"], ("left",) + ("right",) * 3
    if width is None:
        table = tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True,
                         colalign=align)
    else:
        table = fit_table(rows, headers, width - 2, align)
    return out + ["  " + line for line in table.splitlines()]


def _advise_lines(a: dict) -> list[str]:
    if a.get("error"):
        return [f"  advise: {a['error']}"]
    if a["findings"]:
        return [f"  advise [{f['severity']}] {f['setting']}: {f['current']} -> "
                f"{f['recommended']}" for f in a["findings"]]
    return ["  advise: nothing to change"]


def _explained(fit: dict) -> str:
    return {True: "explains it", False: "CANNOT explain it",
            None: "did not say whether it explains it"}[fit.get("explained")]


def render_command_run(r: dict, total: int, width: int | None = None) -> str:
    """A --workload-cmd run: measured from the server's counters, predicted from
    advise's fit of the workload (lab/experiments/command_run.py)."""
    out = _run_head(r, total, width)
    m, p, wc = r["measured"], r["predicted"], r["workload_command"]
    c, o = m["client"], m["observed"]
    cc = c["client_cpu"]
    out.append(f"  measured: {c['commits']:,} commits in {c['seconds']:.1f} s (the server's "
               f"counters: {o.get('commits_source')}); the command's own latency is not "
               "seen by the lab")
    out.append(f"  CPU: server {num(m['server_cpu_s'])} s ({num(m['server_cpu_us_per_trx'])} "
               f"µs/trx); the command's {cc.get('processes', '?')} process(es) "
               f"{num(cc['cpu_s'])} s ({num(cc['cpu_us_per_trx'])} µs/trx, "
               f"{cc['share_of_machine']:.0%} of the machine)"
               + (f"; machine {m['machine_cpu_busy']:.0%} busy"
                  if m.get("machine_cpu_busy") is not None else "")
               + ("; CLIENT-BOUND" if cc["bottleneck"] else ""))
    a = r["advise"]
    fit = a.get("fit") or {}
    if a.get("error"):
        out.append(f"  advise's fit: none ({a['error']})")
    else:
        out.append(f"  advise's fit: the model {_explained(fit)}"
                   + (": " + "; ".join(fit["reasons"]) if fit.get("reasons") else ""))
    if p.get("missing"):
        out.append(f"  predicted: none — {p['missing']}")
    else:
        out.append(f"  fed to the model (advise's fitted workload): "
                   f"{_workload_line(r['workload'])}")
        out.append(f"  predicted: {p['sim_duration_s']:g} simulated s, CPU "
                   f"{p['cpu_util']:.0%}, device flush busy {p['device_flush_util']:.0%}")
    out.append(f"  measured by the lab (not used): {_workload_line(r['derived_workload'])}")
    emu = r.get("emulation")
    if emu:
        out.append(f"  emulation: the server's {emu['delayed_calls']:,} syncs were delayed "
                   f"({emu['slept_s']:g} s slept in all, over the server's life)")
    for x in a.get("candidates") or []:
        what = (f"TPS {pct(x['tps_pct'])}" if x.get("tps_pct") is not None
                else x.get("missing") or "no prediction")
        if x.get("ratio_interval"):
            lo, hi = x["ratio_interval"]
            what += f" (likely ×{lo:.2f}..×{hi:.2f})"
        elif x.get("ratio_range"):
            lo, hi = x["ratio_range"]
            what += f" (inputs ×{lo:.2f}..×{hi:.2f})"
        out.append(f"  advise candidate {x.get('setting')}: {x.get('current')} -> "
                   f"{x.get('candidate')}: {what}"
                   + ("; advised" if x.get("advised") else "")
                   + (f"; unsafe: {x['unsafe']}" if x.get("unsafe") else ""))
    if not a.get("error"):
        out += _advise_lines(a)
    ended = (f"stopped by {wc['stopped_by']} at the window's end" if wc.get("stopped_by")
             else "ended by itself")
    out.append(f"  the command: {ended}"
               + (f" (exit {wc['exit_code']})" if wc.get("exit_code") is not None else "")
               + f"; {{threads}}={wc['threads']}, {{seconds}}={wc['seconds']}; "
               f"{wc.get('statements_per_trx') or '?'} statement(s) per transaction")
    for n in r["notes"]:
        out.append(f"  note: {n}")
    return "\n".join(out)


def render_run(r: dict, total: int, width: int | None = None) -> str:
    """One run: its settings, measured beside predicted, how; its lines not yet wrapped
    (render_text wraps them at width, the table is fitted to it here)."""
    if r.get("workload_command"):
        return render_command_run(r, total, width)
    out = _run_head(r, total, width)
    m, p = r["measured"], r["predicted"]
    c = m["client"]
    cc = c["client_cpu"]
    out.append(f"  measured: {c['commits']:,} commits in {c['seconds']:.1f} s; transaction "
               f"p50 {num(c['trx_latency_ms']['p50'])} ms, p99 "
               f"{num(c['trx_latency_ms']['p99'])} ms; errors {c['errors']}, retries "
               f"{c['retries']}")
    sp = m.get("server_cpu_split")
    split = ""
    if sp and c["commits"]:
        split = (f"; connection threads {num(sp['connection_threads_s'] * 1e6 / c['commits'])}"
                 f", background {num(sp['background_s'] * 1e6 / c['commits'])}")
    out.append(f"  CPU: server {num(m['server_cpu_s'])} s ({num(m['server_cpu_us_per_trx'])} "
               f"µs/trx{split}); clients {num(cc['cpu_s'])} s ({num(cc['cpu_us_per_trx'])} µs/trx, "
               f"busiest process {cc['busy_max']:.0%} of a core, "
               f"{cc['share_of_machine']:.0%} of the machine)"
               + (f"; machine {m['machine_cpu_busy']:.0%} busy"
                  if m.get("machine_cpu_busy") is not None else "")
               + (f" ({m['machine_cpu']['other']:.0%} by others)"
                  if (m.get("machine_cpu") or {}).get("other") else "")
               + ("; CLIENT-BOUND" if cc["bottleneck"] else ""))
    rq = m.get("runq_wait") or {}
    if rq.get("server_us_per_trx") is not None or rq.get("clients_us_per_trx") is not None:
        out.append(f"  waiting for a CPU (run queue): server {num(rq.get('server_us_per_trx'))}"
                   f" µs/trx, clients {num(rq.get('clients_us_per_trx'))} µs/trx")
    src = r["workload"].get("source", "derived")
    how = "derived from this run" if src == "derived" else f"calibrated workload {src}"
    out.append(f"  fed to the model ({how}): {_workload_line(r['workload'])}")
    if r.get("derived_workload"):
        out.append(f"  derived from this run (not used): {_workload_line(r['derived_workload'])}")
    emu = r.get("emulation")
    if emu:
        out.append(f"  emulation: the server's {emu['delayed_calls']:,} syncs were delayed "
                   f"(fsync {emu['delayed_fsync']:,}, fdatasync {emu['delayed_fdatasync']:,}, "
                   f"O_DSYNC writes {emu['delayed_dsync']:,}; {emu['slept_s']:g} s slept in "
                   f"all, over the server's life)")
    out.append(f"  predicted: {p['sim_duration_s']:g} simulated s, CPU "
               f"{p['cpu_util']:.0%}, device flush busy {p['device_flush_util']:.0%}, "
               f"commits per redo sync {num(p['group_commit'].get('commits_per_redo_sync'))}")
    out += _advise_lines(r["advise"])
    for n in r["notes"]:
        out.append(f"  note: {n}")
    return "\n".join(out)


def two_lines(header: str) -> str:
    """A long header on two lines, split at its middle space: a column as wide as its
    figures, not its words."""
    if len(header) <= 10 or " " not in header:
        return header
    spaces = [i for i, ch in enumerate(header) if ch == " "]
    cut = min(spaces, key=lambda i: abs(i - len(header) / 2))
    return header[:cut] + "\n" + header[cut + 1:]


def pair(measured: str, predicted: str, error: str, width: int | None = None) -> str:
    """A measured / predicted (error) cell; fitted to a width, without its spaces and
    parentheses ("2,229/2,448 +10%"): three such columns take 12 fewer."""
    if width is None:
        return f"{measured} / {predicted} ({error})"
    return f"{measured}/{predicted} {error}"


def report_table(rows: list[list], headers: list[str], width: int | None,
                 keep: tuple[int, ...] | None = None, keys: int = 1,
                 prose_last: bool = False) -> str:
    """A table of the report: as tabulate draws it (width None, --wide), else the columns
    keep (all by default) on two-line headers, fitted to width: its last column's long
    sentences as footnotes with prose_last; laid out a block a row, its first `keys`
    columns head the block."""
    if width is None:
        return tabulate(rows, headers=headers, disable_numparse=True)
    keep = keep or tuple(range(len(headers)))
    return fit_table([[r[i] for i in keep] for r in rows],
                     [two_lines(headers[i]) for i in keep], width,
                     prose=len(keep) - 1 if prose_last else None,
                     title=0 if keys == 1 else tuple(range(keys)))


# the summary's columns fitted to a terminal: the settings, TPS, commit p50 and the data
# fsyncs (--wide adds commit p99, data writes/s and fsyncs/write)
NARROW_SUMMARY = (0, 1, 2, 3, 4, 5, 7)
NARROW_SUMMARY_HEADERS = {5: "commit\np50 ms", 7: "data\nfsyncs/s"}


def summary_table(report: dict, width: int | None = None) -> str:
    rows = []
    for r in report["runs"]:
        q, m, p, e = r["requested"], r["measured"], r["predicted"], r["errors_pct"]
        row = [r["index"], q["innodb_flush_method"], q["innodb_flush_log_at_trx_commit"],
               q["connections"]]
        for k, _ in FIGURES:
            row.append(pair(num(m.get(k)), num(p.get(k)), pct(e.get(k)), width))
        rows.append(row)
    headers = ["run", "flush_method", "trx", "conns", "TPS", "commit p50 ms", "commit p99 ms",
               "data fsyncs/s", "data writes/s", "fsyncs/write"]
    if width is not None:
        return fit_table([[row[i] for i in NARROW_SUMMARY] for row in rows],
                         [NARROW_SUMMARY_HEADERS.get(i, headers[i]) for i in NARROW_SUMMARY],
                         width, ["right", "left", "right", "right"] + ["right"] * 3,
                         title=(0, 1, 2, 3))
    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)


def render_text(report: dict, width: int | None = None) -> str:
    """The report as text, fitted to width: tables with their essential columns or one
    block per row, lines wrapped; width None (--wide): every column, nothing wrapped."""
    out: list[str] = []
    s, d = report["server"], report["device"]
    out.append(f"innoflush lab run — {report['backend']} backend"
               + (f" ({report['image']})" if report.get("image") else "")
               + f", {s.get('version') or '?'} (model flavor {s.get('sim_flavor') or '?'})")
    st = report["storage"]
    emu = report.get("emulation")
    if emu:
        chk = emu["host_check"]
        out.append(f"DEVICE EMULATED: {emu['profile']} ({emu['title']}) — the server ran on "
                   f"{st['datadir_on']} ({st.get('filesystem') or 'filesystem unknown'}) with "
                   f"its fsync/fdatasync delayed to that profile (p50 fsync "
                   f"{num(emu['sync_p50_us']['fsync'])} µs, fdatasync "
                   f"{num(emu['sync_p50_us']['fdatasync'])} µs; "
                   + ("one flush channel" if emu["channels"] == 1 else "independent delays")
                   + "); the predictions are for that device")
        host = ", ".join(f"{op} p50 {num(v['host_p50_us'])} µs"
                         for op, v in chk["ops"].items())
        out.append(f"this host's storage ({chk['host_source']}): {host} — emulation "
                   f"{chk['verdict']}")
        for n in chk["notes"]:
            out.append(f"  {n}")
    else:
        out.append(f"storage: {st['datadir_on']} ({st.get('filesystem') or 'filesystem unknown'}"
                   f"); device profile {report['profile']['name']} "
                   f"[{report['profile']['source']}]: fsync {num(d.get('fsync_median_us'))} "
                   f"µs, fdatasync {num(d.get('fdatasync_median_us'))} µs, cache verdict "
                   f"{d.get('verdict') or 'unknown'}")
    cw = report.get("calibrated_workload")
    if cw:
        out.append(f"predictions with the calibrated workload {cw['name']} ({cw['title']}): "
                   f"{_workload_line(cw['workload'])}")
    w = report["workload"]
    out.append(f"workload: {w['description']}; {w['duration_s']:g} s per run; "
               f"{report['host']['cpu_cores']} CPU core(s) on this host, shared by the "
               "server and the clients")
    if w.get("kind") == "command":
        out.append(f"  command: {w['command']}")
        if w.get("prepare"):
            out.append(f"  prepare: {w['prepare']}")
        out.append("  the predictions: the simulator on the workload advise fitted from its "
                   "measurement of the command's load, at each run's settings")
    out.append("")
    total = len(report["runs"])
    for r in report["runs"]:
        out.append(render_run(r, total, width))
        out.append("")
    out.append("measured / predicted (error = predicted / measured - 1):")
    out.append(summary_table(report, width))
    if report.get("warnings"):
        out.append("")
        out.append("warnings:")
        out += [f"  - {x}" for x in report["warnings"]]
    return "\n".join(fit_lines(out, width)) + "\n"


__all__ = ["SCHEMA", "num", "pair", "pct", "render_command_run", "render_text", "report_table",
           "summary_table", "two_lines",
           "to_json"]
