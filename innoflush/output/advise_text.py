"""`innoflush advise`'s text report: the advice document (innoflush/advisor/report.py)
as a person reads it — the server, the evidence, the findings, the predictions and their
intervals, the fit's checks (tabulate tables).

render_text(report, width) fits the text to width: paragraphs wrapped, a table's column
of sentences (where a figure comes from, how an input was had) turned into numbered
footnotes under it, a table still too wide laid out one block per row; width None
(--wide, and the HTML page's copy): every table whole and every line unwrapped."""

from __future__ import annotations

from tabulate import tabulate

from ..terminal import bullets, wrap
from ..terminal import table as fit_table
from ..units import format_size


def _v(x, digits=2):
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "ON" if x else "OFF"
    if isinstance(x, float):
        return f"{x:,.{digits}f}"
    return str(x)


def _yes_no(x) -> str:
    return "unknown" if x is None else ("yes" if x else "no")


def _pct(x):
    return "-" if x is None else f"{x:+.0f}%"


def _connection_line(c: dict) -> str:
    """The session's TLS as the server reported it, and what was verified."""
    mode = f"--ssl-mode {c['ssl_mode']}" if c.get("ssl_mode") else ""
    if c.get("tls") is None:
        return f"connection: TLS unknown ({mode})" if mode else "connection: TLS unknown"
    if not c["tls"]:
        return f"connection: no TLS ({mode})"
    verified = {"ca": "server certificate verified against the CA",
                "identity": "server certificate and host name verified"}.get(
        c.get("server_verified"), "server NOT verified")
    return (f"connection: TLS {c.get('tls_version') or '?'} ({c.get('tls_cipher') or '?'}), "
            f"{verified} ({mode})")


def _table(rows: list[list], headers: list[str], width: int | None, prose: int | None = None,
           indent: int = 0) -> str:
    """A report's table: as tabulate draws it (numbers aligned) for width None, else
    fitted to the width less the indent; indented."""
    if width is None:
        text = tabulate(rows, headers=headers, tablefmt="simple")
    else:
        text = fit_table(rows, headers, width - indent, prose=prose, numparse=True)
    return _indent(text, indent) if indent else text


def render_text(r: dict, width: int | None = None) -> str:
    """The report as text, fitted to width (None: unwrapped, every table whole)."""
    out = [line for text in _server_lines(r) for line in wrap(text, width, hang="  ")]
    out += wrap(_device_line(r["device"]), width, hang="  ")
    out.append(f"durability goal: {r['durability']}")
    if r.get("ignored_rules"):
        out += wrap("ignored rules (--ignore-rule): " + ", ".join(r["ignored_rules"]), width,
                    hang="  ")
    out += ["", _table(_settings_rows(r["settings"]), ["setting", "current"], width), ""]
    out += _observed_lines(r["observed"], width)
    out += _findings_lines(r["findings"], width)
    if r.get("combined_prediction"):
        out += ["", "all recommendations together (predicted):",
                _pred_table(r["combined_prediction"], width, 4)]
    out += _listed("cannot judge", r["cannot_judge"], width)
    out += _listed("notes", r["notes"], width)
    out += _workload_text(r.get("workload"),
                          (r.get("source") or {}).get("kind") == "capture", width)
    out += _fit_text(r.get("fit"), width)
    out += _candidates_text(r.get("candidates") or [], width)
    out += _listed("warnings", r["warnings"], width)
    return "\n".join(out) + "\n"


def _server_lines(r: dict) -> list[str]:
    """The head: the server and where it was read from (a connection or a capture), its
    role and replication."""
    s = r["server"]
    src = r.get("source") or {}
    version = s["version"] + (f"; version_with_update {s['version_with_update']}"
                              if s.get("version_with_update") else "")
    if s["connection"]:
        out = [f"innoflush advise — {s['title']} ({version}) at "
               f"{s['connection']['target']} as {s['connection']['user']}",
               _connection_line(s["connection"])]
    else:
        out = [f"innoflush advise — {s['title']} ({version}) from the capture "
               f"{src.get('path')} ({src.get('snapshots')} status snapshots)"]
    out.append(f"role: {s['role']} ({s['role_detail']}); simulator flavor {s['sim_flavor']}"
               + (f"; datadir {s['datadir']} on {s['datadir_filesystem']}"
                  if s.get("datadir_filesystem") else ""))
    rep = s.get("replication")
    if rep:
        out.append("replication: crash-safe (" + "; ".join(rep["evidence"]) + ")"
                   if rep["crash_safe"] else
                   "replication: not shown crash-safe, held to a primary's durability; "
                   "missing: " + "; ".join(rep["missing"]))
    return out


def _device_line(d: dict | None) -> str:
    if not d:
        return "device: unknown (no --profile / --measure)"
    return (f"device: {d['title']} [{d['source']} {d['name']}] — class {d['class']}, "
            f"PLP {d['plp']}, cache verdict {d['verdict']}, O_DIRECT_NO_FSYNC safe: "
            f"{_yes_no(d['o_direct_no_fsync_safe'])}"
            f"; fsync {_v(d['fsync_median_us'], 1)} µs, fdatasync "
            f"{_v(d['fdatasync_median_us'], 1)} µs")


def _settings_rows(st: dict) -> list[list]:
    return [
        ["innodb_flush_method", st["innodb_flush_method"]
         + ("" if st["flush_method_source"] == "innodb_flush_method"
            else f"  ({st['flush_method_source']})")],
        ["innodb_flush_log_at_trx_commit", st["innodb_flush_log_at_trx_commit"]],
        ["innodb_flush_log_at_timeout", _v(st["innodb_flush_log_at_timeout"], 0)],
        ["log_bin / sync_binlog", f"{_v(st['log_bin'])} / {st['sync_binlog']}"],
        ["innodb_doublewrite", st["innodb_doublewrite"]],
        ["innodb_use_fdatasync", "(no such variable)" if st["innodb_use_fdatasync"] is None
         else _v(st["innodb_use_fdatasync"])],
        ["redo capacity / buffer pool",
         f"{format_size(st['redo_capacity_bytes']) if st['redo_capacity_bytes'] else '-'} / "
         f"{format_size(st['innodb_buffer_pool_size']) if st['innodb_buffer_pool_size'] else '-'}"],  # noqa: E501
    ]


def _observed_lines(o: dict | None, width: int | None = None) -> list[str]:
    """The counters' figures over the interval, a blank line after them."""
    if not o:
        return []
    rows = [
        ["commits/s", _v(o["commits_per_s"]), o["commits_source"]],
        ["Innodb_data_fsyncs/s", _v(o["data_fsyncs_per_s"]),
         "includes redo syncs"],
        ["  redo syncs/s", _v(o["redo_syncs_per_s"]), o["redo_syncs_source"]],
        ["  other (data files, doublewrite)/s", _v(o["other_fsyncs_per_s"]), ""],
        ["Innodb_data_writes/s", _v(o["data_writes_per_s"]),
         "includes redo" if o["data_writes_include_redo"] else "excludes redo (MariaDB)"],
        ["fsyncs per data write", _v(o["data_fsyncs_per_data_write"], 5), ""],
        ["redo writes per commit", _v(o["log_writes_per_commit"], 3), "Innodb_log_writes"],
        ["redo fsyncs per commit", _v(o["os_log_fsyncs_per_commit"], 3),
         "Innodb_os_log_fsyncs"],
        ["redo bytes per commit", _v(o["redo_bytes_per_commit"], 0),
         "Innodb_os_log_written"],
        ["commits per redo sync", _v(o["commits_per_redo_sync"]), "group-commit size"],
        ["binlog commits per group", _v(o["binlog_commits_per_group"]),
         "Binlog_commits / Binlog_group_commits"],
        ["doublewrite writes/s (pages/s)",
         f"{_v(o['dblwr_writes_per_s'])} ({_v(o['dblwr_pages_per_s'])})", ""],
        ["pages written/s", _v(o["pages_written_per_s"]), "Innodb_pages_written"],
        ["page writes per commit", _v(o["page_writes_per_commit"], 3), ""],
        ["pages dirtied per commit", _v(o["pages_dirtied_per_commit"], 3),
         "flushed + growth of dirty pages"],
        ["Threads_running (avg)", _v(o["threads_running_avg"]), "ours excluded"],
        ["pending fsyncs (max)", _v(o["pending_fsyncs_max"]),
         "Innodb_data_pending_fsyncs"],
    ]
    return [f"observed over {o['seconds']:.1f} s ({o['intervals']} interval(s)):",
            _table(rows, ["figure", "value", "from"], width, prose=2), ""]


def _findings_lines(fs: list[dict], width: int | None = None) -> list[str]:
    """The findings: a table of them, then each with its why, risk, lines and prediction."""
    if not fs:
        return ["nothing to change."]
    rows = [[i + 1, f["severity"], f["setting"], f["current"], f["recommended"],
             "yes" if f["restart_needed"] else "no"] for i, f in enumerate(fs)]
    out = [f"{len(fs)} recommendation(s):",
           _table(rows, ["#", "severity", "setting", "current", "recommended", "restart"],
                  width)]
    for i, f in enumerate(fs):
        out += ["", *_finding_lines(i + 1, f, width)]
    return out


def _finding_lines(n: int, f: dict, width: int | None = None) -> list[str]:
    texts = [f"why: {w}" for w in f["why"]]
    texts.append(f"risk: {f['risk']}")
    texts.append(f"restart needed: {'yes' if f['restart_needed'] else 'no'}")
    texts.append("my.cnf [mysqld]: " + "; ".join(f["my_cnf"]))
    if f["set_global"]:
        texts.append("to apply now (not run by innoflush): " + " ".join(f["set_global"]))
    out = wrap(f"[{n}] {f['setting']}: {f['current']} -> {f['recommended']} "
               f"({f['severity']})", width, hang="    ")
    out += [line for t in texts for line in wrap(t, width, "    ", "      ")]
    p = f.get("predicted")
    if p:
        out += wrap(f"predicted (simulated on {p['sim']['profile']}, "
                    f"{p['sim']['duration_s']:g} s, on the measured workload):", width,
                    "    ", "      ")
        out.append(_pred_table(p, width, 6))
        if horizon := _horizon_text(p):
            out += wrap(horizon, width, "      ")
    return out


def _listed(title: str, lines: list[str], width: int | None = None) -> list[str]:
    """A titled list (cannot judge, notes, warnings) after a blank line; nothing when empty."""
    if not lines:
        return []
    return ["", f"{title}:", *bullets(lines, width)]


def _indent(text: str, n: int) -> str:
    pad = " " * n
    return "\n".join(pad + line for line in text.splitlines())


def _pred_table(p: dict, width: int | None = None, indent: int = 0) -> str:
    c, r, ch = p["current"], p["recommended"], p["change"]
    rows = [["TPS", _v(c["tps"], 1), _v(r["tps"], 1), _pct(ch["tps_pct"])],
            ["commit p50 ms", _v(c["commit_latency_p50_ms"], 3),
             _v(r["commit_latency_p50_ms"], 3), _pct(ch["commit_latency_p50_pct"])],
            ["commit p99 ms", _v(c["commit_latency_p99_ms"], 3),
             _v(r["commit_latency_p99_ms"], 3), _pct(ch["commit_latency_p99_pct"])],
            ["Innodb_data_fsyncs/s", _v(c["data_fsyncs_per_s"], 1),
             _v(r["data_fsyncs_per_s"], 1), _pct(ch["data_fsyncs_per_s_pct"])]]
    if p.get("range"):
        rows.append(["TPS change range (inputs)", "", "", _range(p)])
    if p.get("interval"):
        rows.append([f"TPS change likely ({_coverage(p)})", "", "", _interval(p)])
    return _table(rows, ["", "current", "recommended", "change"], width, indent=indent)


def _horizon_text(p: dict | None) -> str | None:
    """Where the predicted data fsyncs/s stop holding (predict.page_cleaner_horizon), said
    where the change is what brings the page cleaner in: it raises the commit rate by half
    or more (otherwise the current figure shares the same horizon, and the change's
    difference stands)."""
    h = (p or {}).get("horizon")
    if not h:
        return None
    now = (p.get("current") or {}).get("tps") or 0.0
    then = (p.get("recommended") or p.get("candidate") or {}).get("tps") or 0.0
    if not now or then < 1.5 * now:
        return None
    mb = 1e6
    settled = (p.get("settled") or {}).get("data_fsyncs_per_s")
    then = (f"; settled there: {settled:g} data fsyncs/s, the page cleaner passing every "
            "second" if settled is not None else
            "; past it the page cleaner passes every second and syncs what it wrote, "
            "which this figure leaves out")
    within = (", within those seconds: the figure is part without the page cleaner"
              if h.get("reached_in_window") else "")
    return (f"data fsyncs/s: those of the next {p['sim']['duration_s']:g} s from a "
            f"checkpoint age of {h['age_at_start_bytes'] / mb:.0f} MB; at "
            f"{h['redo_bytes_per_s'] / mb:.1f} MB/s of redo the age reaches the page "
            f"cleaner's async point ({h['async_point_bytes'] / mb:.0f} MB) in about "
            f"{h['seconds_to_async_point']:.0f} s{within}, unless the buffer pool runs "
            f"short of free pages first{then}")


def _coverage(p: dict | None) -> str:
    c = ((p or {}).get("interval") or {}).get("coverage_pct")
    return f"{c:g} %" if c else "-"


def _interval(p: dict | None) -> str:
    """The validated interval of a predicted TPS change, or why there is none."""
    iv = (p or {}).get("interval") or {}
    t = iv.get("tps_pct")
    if t:
        return f"{t[0]:+.0f}…{t[1]:+.0f}%"
    return "not validated" if "not validated" in (iv.get("basis") or "") else "-"


def _likely(p: dict | None) -> str:
    """The interval in a sentence: "likely +40…+90%", or that there is none."""
    iv = _interval(p)
    if iv == "not validated":
        return "no validated interval"
    return "no interval" if iv == "-" else f"likely {iv}"


def _range(p: dict | None) -> str:
    rg = (p or {}).get("range") or {}
    t = rg.get("tps_pct")
    return f"{t[0]:+.0f}…{t[1]:+.0f}%" if t else "-"


def _workload_text(w: dict | None, captured: bool = False, width: int | None = None
                   ) -> list[str]:
    if not w:
        return []
    # fitted to a width, a "how" becomes a footnote: whole, not cut at 70 characters
    short = _short if width is None else str
    out = ["", *wrap(f"workload {'read from the capture' if captured else 'measured'} over "
                     f"{w['seconds']:.1f} s "
                     f"({w['commits']:,} commits, {w['commits_per_s']:,.1f}/s):", width)]
    names = [("connections", "connections", 0), ("inside_us_per_trx", "in the server µs/trx", 1),
             ("outside_us_per_trx", "outside it µs/trx", 1),
             ("commit_wait_us_per_trx", "  commit wait µs/trx", 1),
             ("server_cpu_us_per_trx", "server CPU µs/trx", 1),
             ("background_cpu_us_per_trx", "  background threads µs/trx", 1),
             ("client_cpu_us_per_trx", "clients on this host µs/trx", 1),
             ("other_cpu_us_per_trx", "other processes µs/trx", 1),
             ("statements_per_trx", "statements/trx", 2), ("cpu_cores", "CPU cores", 0),
             ("redo_syncs_per_s", "redo syncs/s", 1),
             ("data_file_syncs_per_s", "data-file syncs/s", 1),
             ("binlog_syncs_per_s", "binlog syncs/s", 1),
             ("data_file_sync_us", "data-file sync µs (server)", 1),
             ("commit_statement_us", "COMMIT µs (server)", 1)]
    rows = []
    for key, label, digits in names:
        x = w.get(key) or {}
        v = _v(x.get("value"), digits) if x.get("value") is not None else "?"
        if x.get("low") is not None and x.get("high") is not None:
            v += f" ({_v(x['low'], digits)}–{_v(x['high'], digits)})"
        rows.append([label, v, x.get("source", ""), short(x.get("detail", ""))])
    h = w.get("handoff") or {}
    if h.get("round_trip_us") is not None:   # live/handoff.py, advisor/round_trip.py
        rows.append(["hand-off round trip µs", _v(h["round_trip_us"], 1), "measured",
                     short(f"two processes, free; {_v(h['pinned_us'], 1)} both on one "
                           f"core (×{h['ratio']:.2f})")])
    elif h.get("problem") and not captured:
        rows.append(["hand-off round trip µs", "?", "", short(h["problem"])])
    out.append(_table(rows, ["input", "value", "source", "how"], width, prose=3))
    return out


def _short(text: str, n: int = 70) -> str:
    return text if len(text) <= n else text[:n - 1] + "…"


def _fit_text(fit: dict | None, width: int | None = None) -> list[str]:
    if not fit:
        return []
    src = fit.get("source", "measured")
    head = ("the model on the measured workload" if src == "measured"
            else f"the model on the workload profile {src[8:]} (not measured)")
    verdict = ("EXPLAINS what was observed" if fit["explained"] else
               "cannot be fitted: the evidence lacks inputs it needs (each below, with what "
               "supplies it) — no prediction" if fit.get("inputs_missing") else
               "does NOT explain what was observed — no prediction")
    out = ["", *wrap(f"{head}: {verdict}", width, hang="  ")]
    rows = [[c["figure"], _v(c["observed"]), _v(c["model"]),
             "-" if c["error_pct"] is None else f"{c['error_pct']:+.1f}%",
             f"±{c['tolerance_pct']:.0f}%", {True: "ok", False: "OFF", None: "-"}[c["ok"]],
             c["note"] or ""]
            for c in fit.get("checks", [])]
    headers = ["figure", "observed", "model", "error", "tolerance", ""]
    if rows and width is None:
        out.append(tabulate([[*r[:5], r[5] + (f" ({r[6]})" if r[6] else "")] for r in rows],
                            headers=headers, tablefmt="simple"))
    elif rows:   # the verdict in its column, a check's note a footnote when it is too wide
        out.append(_table(rows, [*headers[:5], "check", ""], width, prose=6))
    out += bullets(fit.get("reasons", []), width)
    out += bullets(fit.get("assumptions", []), width)
    return out


def _candidate_change(c: dict) -> str:
    """setting=value; a MariaDB 11 flush-method candidate already reads that way, one
    variable or several (innodb_doublewrite=ON, innodb_data_file_buffering=OFF)."""
    return c["candidate"] if "=" in c["candidate"] else f"{c['setting']}={c['candidate']}"


def _candidates_text(cands: list[dict], width: int | None = None) -> list[str]:
    if not cands or not any(c.get("predicted") for c in cands):
        return []
    out = ["", *wrap("the price of every candidate change (predicted on the measured "
                     "workload):", width)]
    rows = []
    for c in cands:
        p = c.get("predicted") or {}
        ch = p.get("change") or {}
        rows.append([f"{c['setting']} {c['current']} -> {c['candidate']}",
                     _pct(ch.get("tps_pct")), _interval(p), _range(p),
                     _pct(ch.get("commit_latency_p50_pct")),
                     _pct(ch.get("data_fsyncs_per_s_pct")),
                     "advised" if c["advised"] else ("unsafe" if c["unsafe"] else "-")])
    headers = ["change", "TPS", "likely", "inputs' range", "commit p50", "data fsyncs/s", ""]
    if width is not None:   # the inputs' range: --wide (the likely interval says more)
        headers.pop(3)
        rows = [[*r[:3], *r[4:]] for r in rows]
    out.append(_table(rows, headers, width))
    out += wrap("likely: the TPS change with the model's error on measured changes "
                "(sysbench, docs/validation.md): "
                + next((f"such intervals held {_coverage(c['predicted'])} of them"
                        for c in cands
                        if ((c.get("predicted") or {}).get("interval") or {}).get("tps_pct")),
                       "no interval")
                + "; not validated: no such change measured yet", width, "  ")
    lines = []
    for c in cands:
        # an advised change is a finding: its risk is said there, under the durability
        # asked for
        if c["unsafe"] and c.get("predicted") and not c["advised"]:
            ch = c["predicted"]["change"]
            lines.append(f"{_candidate_change(c)}: would give {_pct(ch['tps_pct'])} "
                         f"TPS ({_likely(c['predicted'])}); not advised: {c['unsafe']}")
    for c in cands:
        if horizon := _horizon_text(c.get("predicted")):
            lines.append(f"{_candidate_change(c)}: {horizon}")
    return out + bullets(lines, width)
