"""Was the prediction right? A saved advise report beside the same server after a change.

``advise --check REPORT.json`` reads the server again (live or a capture) into a second
report, without predictions, and this module compares the two (pure: two report dicts
in, one check document out — the lab's after-runs and the demo judge with it too):

1. **the server**: the report must be of this server (its host name, datadir and, on
   MySQL, server_uuid), else the check is refused (exit 2);
2. **what was applied**: the durability settings that differ between the report and now,
   each marked recommended or not, and the report's prediction for exactly that set of
   changes (a finding's, a candidate's, or the combined one); none applied, or a set
   the report did not price, gives no verdict (exit 4);
3. **comparability first**: the workload now against the one the report measured
   (connections, statements, selects and row changes per transaction, the time outside
   the server, the server's CPU per transaction). A figure that moved beyond its limit
   makes the check "not comparable" (exit 4), naming what moved: a load that changed
   says nothing about the prediction;
4. **the figures**: commits/s, data fsyncs/s, redo syncs/s, commits per redo sync and the
   COMMIT latency (where performance_schema timed it on both sides), each as the measured
   ratio after / before beside the predicted ratio and the interval the report quoted
   (TPS: the validated interval; the others: the simulated range widened by the lab's
   ×/÷ FACTOR). All judged figures within: held (exit 0); one outside: did not hold (5).

docs/commands/advise-check.md lists the keys; the limits are documented there.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

from ..errors import UsageError

SCHEMA = "innoflush.check/1"
ADVICE_SCHEMA = "innoflush.advice/1"
EXIT_HELD, EXIT_NOT_HELD, EXIT_NO_VERDICT = 0, 5, 4
MAX_REPORT_BYTES = 64 * 1024 * 1024
# A predicted ratio within ×/÷ this of the measured one is "within" (lab validate's
# judgment, innoflush.lab.experiments.change_judging, uses the same)
FACTOR = 1.3
# Rates under this on both sides are noise-sized (as the fit's data-fsync floor)
RATE_FLOOR = 5.0

# The durability settings a change is made of (the report's settings block; MariaDB
# 11's file-buffering switches from its variables).
SETTINGS = ("innodb_flush_method", "innodb_flush_log_at_trx_commit", "sync_binlog",
            "innodb_use_fdatasync", "innodb_doublewrite")
VARIABLES = ("innodb_data_file_buffering", "innodb_data_file_write_through",
             "innodb_log_file_buffering", "innodb_log_file_write_through")

# How far a workload figure may move before the two windows are not the same load. A
# durability change moves neither the connections nor what a transaction is made of;
# the time outside the server and the server's CPU per transaction do move with it (a
# commit that no longer sleeps costs less CPU, a faster server leaves its clients less
# of a shared host), hence ×2 for them. (relative limit, absolute floor below which a
# difference is not counted)
COMPARABLE = {
    "connections": (0.25, 1.0),
    "statements_per_trx": (0.15, 0.3),
    "selects_per_trx": (0.25, 0.5),
    "row_changes_per_trx": (0.25, 0.5),
    "outside_us_per_trx": (1.0, 100.0),
    "server_cpu_us_per_trx": (1.0, 20.0),
}
ROW_COUNTERS = ("Innodb_rows_inserted", "Innodb_rows_updated", "Innodb_rows_deleted")
WRITE_STATEMENTS = ("Com_insert", "Com_update", "Com_delete", "Com_replace",
                    "Com_insert_select", "Com_replace_select", "Com_update_multi",
                    "Com_delete_multi", "Com_load")


def load_report(path: str) -> dict:
    """A saved ``advise --json`` report, or a one-line error (exit 2): unreadable, not a
    regular file, too large, not JSON (a truncated file), not an advise report, or a
    report without any prediction to check."""
    try:
        if not os.path.isfile(path):
            raise UsageError(f"{path}: no such report file" if not os.path.exists(path)
                             else f"{path}: a directory, not a report file (a directory of "
                             "reports goes with --inventory)" if os.path.isdir(path)
                             else f"{path}: not a regular file")
        if os.path.getsize(path) > MAX_REPORT_BYTES:
            raise UsageError(f"{path}: larger than 64 MiB: not an advise report")
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise UsageError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8: not an advise report") from None
    try:
        report = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise UsageError(f"{path}: not valid JSON (truncated?): "
                         f"{getattr(exc, 'msg', 'nested too deep')}") from None
    if not isinstance(report, dict) or report.get("schema") != ADVICE_SCHEMA:
        raise UsageError(f"{path}: not an innoflush advise report (schema "
                         f"{ADVICE_SCHEMA}: save one with `innoflush advise --json`)")
    if not _predictions(report):
        why = ("the model did not explain the workload it saw" if report.get("fit")
               and not report["fit"].get("explained") else
               "it was made without --profile or --measure")
        raise UsageError(f"{path}: the report has no prediction to check ({why})")
    report.setdefault("_path", path)
    # when the server was read; a capture's report (or an older one) has no such time:
    # the file's
    report.setdefault("_taken_at", report.get("taken_at") or datetime.fromtimestamp(
        os.path.getmtime(path), UTC).isoformat(timespec="seconds"))
    return report


def _predictions(report: dict) -> list[tuple[str, str, dict]]:
    """(kind, id, prediction) of every priced change: findings, candidates, combined."""
    out = [("finding", f.get("id") or "", f["predicted"])
           for f in report.get("findings") or [] if f.get("predicted")]
    out += [("candidate", c.get("id") or "", c["predicted"])
            for c in report.get("candidates") or [] if c.get("predicted")]
    if report.get("combined_prediction"):
        out.append(("combined", "all recommendations", report["combined_prediction"]))
    return [p for p in out if (p[2].get("sim") or {}).get("changes")]


def _norm(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    text = str(value).strip().upper()
    return {"TRUE": "ON", "FALSE": "OFF"}.get(text, text)


def setting_values(report: dict) -> dict[str, str | None]:
    s = report.get("settings") or {}
    variables = {k.lower(): v for k, v in (s.get("variables") or {}).items()}
    values = {k: _norm(s.get(k)) for k in SETTINGS}
    values.update({k: _norm(variables[k]) for k in VARIABLES if k in variables})
    return values


def same_server(before: dict, after: dict) -> None:
    """Refuse a report of another server (exit 2): host name, datadir, server_uuid."""
    def ident(r: dict) -> dict:
        v = {k.lower(): x for k, x in ((r.get("settings") or {}).get("variables") or {})
             .items()}
        return {"hostname": v.get("hostname"), "datadir": (r.get("server") or {})
                .get("datadir") or v.get("datadir"), "server_uuid": v.get("server_uuid")}
    a, b = ident(before), ident(after)
    differ = [k for k in a if a[k] and b[k] and str(a[k]).rstrip("/") != str(b[k]).rstrip("/")]
    if differ or (before.get("server") or {}).get("product") != \
            (after.get("server") or {}).get("product"):
        what = ", ".join(f"{k} {a[k]!r} there, {b[k]!r} here" for k in differ) or \
            "another product"
        raise UsageError(f"{before.get('_path', 'the report')}: a report of another server "
                         f"({what})")


def applied_changes(before: dict, after: dict) -> list[dict]:
    """The durability settings that differ, each with whether a finding recommended it."""
    b, a = setting_values(before), setting_values(after)
    recommended = {f.get("setting"): _norm(f.get("recommended"))
                   for f in before.get("findings") or []}
    return [{"setting": k, "before": b.get(k), "now": a.get(k),
             "recommended": recommended.get(k) == a.get(k), "derived": False}
            for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def chosen_prediction(before: dict, applied: list[dict]) -> dict | None:
    """The report's prediction for exactly what was applied: a finding's first, then a
    candidate's, then the combined one. A file-buffering switch counts only where the
    prediction names it: MariaDB sets innodb_log_file_buffering itself when it starts at
    trx_commit=2 (10.8+), so a restart with that change moves it too. The applied rows
    that followed so are marked ``derived``."""
    want = {c["setting"]: c["now"] for c in applied}
    for kind, ident, pred in _predictions(before):
        changes = {k: _norm(v) for k, v in pred["sim"]["changes"].items()}
        if {k: v for k, v in want.items() if k in SETTINGS or k in changes} == changes:
            for c in applied:
                c["derived"] = c["setting"] not in changes
            return {"kind": kind, "id": ident, "changes": pred["sim"]["changes"],
                    "prediction": pred}
    return None


# ---- the workload: the same load on both sides? ----------------------------------------

def _value(report: dict, key: str) -> float | None:
    w = report.get("workload") or {}
    v = (w.get(key) or {}).get("value") if isinstance(w.get(key), dict) else None
    return None if v is None else float(v)


def workload_figures(report: dict) -> dict[str, float | None]:
    obs = report.get("observed") or {}
    commits = obs.get("commits") or 0
    d = obs.get("deltas") or {}

    def per(n: float | None) -> float | None:
        return None if not commits or n is None else n / commits
    # rows where the server counts them (MySQL's Innodb_rows_*), else the statements that
    # change rows (MariaDB 10.11 has no Innodb_rows_* counters)
    rows = [d[k] for k in ROW_COUNTERS if isinstance(d.get(k), (int, float))]
    writes = rows or [d[k] for k in WRITE_STATEMENTS if isinstance(d.get(k), (int, float))]
    return {"connections": _value(report, "connections"),
            "statements_per_trx": _value(report, "statements_per_trx"),
            "selects_per_trx": per(d.get("Com_select")),
            "row_changes_per_trx": per(sum(writes)) if writes else None,
            "outside_us_per_trx": _value(report, "outside_us_per_trx"),
            "server_cpu_us_per_trx": _value(report, "server_cpu_us_per_trx")}


def comparability(before: dict, after: dict) -> dict:
    b, a = workload_figures(before), workload_figures(after)
    rows = []
    for name, (rel, floor) in COMPARABLE.items():
        x, y = b[name], a[name]
        row = {"figure": name, "before": _r(x), "now": _r(y), "limit_pct": rel * 100,
               "moved": None}
        if x is not None and y is not None:
            diff = abs(y - x)
            lo, hi = (x / (1 + rel), x * (1 + rel)) if rel >= 1 else (x * (1 - rel),
                                                                       x * (1 + rel))
            row["moved"] = diff > floor and not lo <= y <= hi
            row["change_pct"] = _r(100 * (y / x - 1)) if x else None
        rows.append(row)
    moved = [r["figure"] for r in rows if r["moved"]]
    return {"comparable": not moved, "moved": moved, "figures": rows,
            "unknown": [r["figure"] for r in rows if r["moved"] is None]}


# ---- the figures, predicted beside measured --------------------------------------------

def _after_state(pred: dict) -> dict:
    return pred.get("recommended") or pred.get("candidate") or {}


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b


def _widened(ratio: float | None, range_pct: list | None) -> list[float] | None:
    if ratio is None:
        return None
    lo, hi = ratio / FACTOR, ratio * FACTOR
    if range_pct and None not in range_pct:
        lo, hi = min(lo, 1 + range_pct[0] / 100), max(hi, 1 + range_pct[1] / 100)
    return [round(lo, 4), round(hi, 4)]


def predicted_figures(pred: dict) -> list[dict]:
    """Each figure's predicted ratio and its interval (ratios), from one prediction."""
    cur, new = pred.get("current") or {}, _after_state(pred)
    change, rng = pred.get("change") or {}, pred.get("range") or {}
    iv = pred.get("interval") or {}
    widened = f"the simulated range, widened ×/÷{FACTOR} (the lab's factor)"
    tps_ratio = 1 + change["tps_pct"] / 100 if change.get("tps_pct") is not None else None
    if iv.get("tps_pct"):
        tps_iv = [round(1 + iv["tps_pct"][0] / 100, 4), round(1 + iv["tps_pct"][1] / 100, 4)]
        tps_basis = iv.get("basis") or "the report's interval"
    else:
        tps_iv = _widened(tps_ratio, rng.get("tps_pct"))
        tps_basis = f"{widened}: {iv.get('basis') or 'no validated interval'}"
    cs, ns = cur.get("syncs_per_s") or {}, new.get("syncs_per_s") or {}
    redo = _ratio(ns.get("redo_syncs"), cs.get("redo_syncs"))
    per_sync = _ratio(_ratio(new.get("tps"), ns.get("redo_syncs")),
                      _ratio(cur.get("tps"), cs.get("redo_syncs")))
    fsync = (1 + change["data_fsyncs_per_s_pct"] / 100
             if change.get("data_fsyncs_per_s_pct") is not None else None)
    lat = (1 + change["commit_latency_p50_pct"] / 100
           if change.get("commit_latency_p50_pct") is not None else None)
    return [
        {"figure": "tps", "predicted_ratio": tps_ratio, "interval": tps_iv,
         "basis": tps_basis, "coverage_pct": iv.get("coverage_pct") if iv.get("tps_pct")
         else None},
        {"figure": "data_fsyncs_per_s", "predicted_ratio": fsync,
         "interval": _widened(fsync, rng.get("data_fsyncs_per_s_pct")), "basis": widened},
        {"figure": "redo_syncs_per_s", "predicted_ratio": redo,
         "interval": _widened(redo, None), "basis": widened},
        {"figure": "commits_per_redo_sync", "predicted_ratio": per_sync,
         "interval": _widened(per_sync, None), "basis": widened},
        {"figure": "commit_latency_us", "predicted_ratio": lat,
         "interval": _widened(lat, None), "basis": widened},
    ]


def observed_figures(report: dict) -> dict[str, float | None]:
    obs = report.get("observed") or {}
    return {"tps": obs.get("commits_per_s"),
            "data_fsyncs_per_s": obs.get("data_fsyncs_per_s"),
            "redo_syncs_per_s": obs.get("redo_syncs_per_s"),
            "commits_per_redo_sync": obs.get("commits_per_redo_sync"),
            "commit_latency_us": _value(report, "commit_statement_us")}


def judge_figures(pred: dict, before: dict, after: dict) -> list[dict]:
    b, a = observed_figures(before), observed_figures(after)
    rows = []
    for p in predicted_figures(pred):
        name = p["figure"]
        x, y = b[name], a[name]
        measured = _ratio(y, x)
        row = {**p, "before": _r(x), "after": _r(y),
               "predicted": _r(x * p["predicted_ratio"]) if x is not None
               and p["predicted_ratio"] is not None else None,
               "measured_ratio": _r(measured), "held": None, "note": None}
        row["predicted_ratio"] = _r(p["predicted_ratio"])
        floor = RATE_FLOOR
        redo = (b["redo_syncs_per_s"], a["redo_syncs_per_s"])
        if name.endswith("_per_s") and x is not None and y is not None \
                and max(x, y) < floor:
            row["note"] = f"below {floor:.0f}/s on both sides: noise-sized, not judged"
        elif name.endswith("_per_s") and y is not None and row["predicted"] is not None \
                and max(y, row["predicted"]) < floor:
            # a change that takes a rate to a few a second: the background's syncs, once
            # a second or at a checkpoint, are all that is left, on both sides
            row["note"] = (f"predicted and measured both under {floor:.0f}/s after the "
                           "change: noise-sized, not judged")
        elif name == "commits_per_redo_sync" and any(r is not None and r < floor
                                                     for r in redo):
            # a handful of background syncs a second: the quotient is theirs, not the
            # commits' grouping
            row["note"] = (f"the redo syncs are under {floor:.0f}/s on a side (the "
                           "background's, once a second): not judged")
        elif measured is None or p["interval"] is None:
            row["note"] = ("not measured on both sides" if measured is None
                           else "not predicted")
            if name == "commit_latency_us" and measured is None:
                row["note"] = ("COMMIT not timed by performance_schema on both sides "
                               "(performance_schema off, or no explicit COMMIT)")
        else:
            lo, hi = p["interval"]
            row["held"] = lo <= measured <= hi
        rows.append(row)
    return rows


def _target(report: dict) -> str:
    """Which server: host:port or the socket of a live read (never the user), or the
    capture it was read from."""
    conn = (report.get("server") or {}).get("connection") or {}
    if conn.get("target"):
        return conn["target"]
    path = (report.get("source") or {}).get("path")
    return f"capture {path}" if path else "unknown"


def _r(x: float | None, n: int = 4) -> float | None:
    return None if x is None else round(float(x), n)


def check(before: dict, after: dict, *, same_server_required: bool = True) -> dict:
    """The check document of a saved report (``before``, from load_report) beside a
    report of the same server now (``after``, advise's without predictions).
    same_server_required False: the lab's before and after runs, two fresh servers of the
    same settings but the change (lab validate --workload-cmd)."""
    if same_server_required:
        same_server(before, after)
    applied = applied_changes(before, after)
    chosen = chosen_prediction(before, applied) if applied else None
    comp = comparability(before, after)
    figures = judge_figures(chosen["prediction"], before, after) if chosen else []
    notes: list[str] = []
    if not applied:
        verdict = "nothing applied"
        notes.append("no durability setting differs from the report's: nothing the report "
                     "priced was applied, so there is no prediction to check")
    elif chosen is None:
        verdict = "not priced"
        notes.append("the report did not price this set of changes as one: "
                     + ", ".join(f"{c['setting']} {c['before']}->{c['now']}"
                                 for c in applied))
    elif not comp["comparable"]:
        verdict = "not comparable"
        notes.append("the workload moved beyond its limits (" + ", ".join(comp["moved"])
                     + "): no verdict on the prediction")
    elif not any(f["held"] is not None for f in figures):
        verdict = "not judged"
        notes.append("no figure could be judged on both sides")
    else:
        verdict = ("held" if all(f["held"] is not False for f in figures)
                   else "did not hold")
    if comp["unknown"] and applied:
        notes.append("not compared (unknown on a side): " + ", ".join(comp["unknown"]))
    code = {"held": EXIT_HELD, "did not hold": EXIT_NOT_HELD}.get(verdict, EXIT_NO_VERDICT)
    srv = after.get("server") or {}
    return {
        "schema": SCHEMA, "exit_code": code, "verdict": verdict,
        "report": {"path": before.get("_path"), "taken_at": before.get("_taken_at"),
                   "server": (before.get("server") or {}).get("title"),
                   "source": (before.get("source") or {}).get("kind"),
                   "interval_s": (before.get("observed") or {}).get("seconds")},
        "server": {"target": _target(after), "title": srv.get("title"),
                   "product": srv.get("product"),
                   "version": srv.get("version"), "sim_flavor": srv.get("sim_flavor"),
                   "source": (after.get("source") or {}).get("kind"),
                   "interval_s": (after.get("observed") or {}).get("seconds")},
        "applied": applied,
        "prediction": ({k: chosen[k] for k in ("kind", "id", "changes")}
                       if chosen else None),
        "workload": comp, "figures": figures, "notes": notes,
        "warnings": list(after.get("warnings") or []),
    }


__all__ = ["SCHEMA", "applied_changes", "check", "chosen_prediction", "comparability",
           "judge_figures", "load_report", "same_server", "workload_figures"]
