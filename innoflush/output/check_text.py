"""`advise --check` and `advise --track-record` as text (from their JSON documents)."""

from __future__ import annotations

from ..terminal import bullets, footnotes, wrap
from ..terminal import table as fit_table

VERDICT = {
    "held": "HELD — every judged figure within the interval the report quoted",
    "did not hold": "DID NOT HOLD — a judged figure outside the interval the report quoted",
    "not comparable": "NOT COMPARABLE — the workload moved: no verdict on the prediction",
    "nothing applied": "NOTHING APPLIED — no setting the report priced was changed",
    "not priced": "NOT PRICED — what was applied is not a change the report priced",
    "not judged": "NOT JUDGED — no figure measured on both sides",
}
NAMES = {"tps": "commits/s", "data_fsyncs_per_s": "data fsyncs/s",
         "redo_syncs_per_s": "redo syncs/s", "commits_per_redo_sync": "commits/redo sync",
         "commit_latency_us": "COMMIT µs (p_s)", "connections": "connections",
         "statements_per_trx": "statements/trx", "selects_per_trx": "SELECTs/trx",
         "row_changes_per_trx": "row changes/trx", "outside_us_per_trx": "outside µs/trx",
         "server_cpu_us_per_trx": "server CPU µs/trx"}


def _v(x, digits: int = 2) -> str:
    if x is None:
        return "-"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:,.{digits}f}"


def _x(r) -> str:
    if r is None:
        return "-"
    return f"×{r:.2g}" if r < 0.1 else f"×{r:,.2f}" if r < 100 else f"×{r:,.0f}"


def render_check(doc: dict, width: int | None = None) -> str:
    rep, srv = doc["report"], doc["server"]
    out = wrap(f"innoflush advise --check — {srv['title']} now ({srv['source']}, "
               f"{_v(srv['interval_s'], 1)} s) beside the report {rep['path']} (read "
               f"{rep['taken_at']}, {rep['source']}, {_v(rep['interval_s'], 1)} s)", width,
               hang="  ")
    out += ["", "applied since the report:"]
    if doc["applied"]:
        out.append(fit_table([[c["setting"], c["before"], c["now"],
                               "yes" if c["recommended"] else
                               "no (set by the server with the change)"
                               if c.get("derived") else "no"]
                              for c in doc["applied"]],
                             ["setting", "report", "now", "recommended"], width))
    else:
        out.append("  (nothing: every durability setting is as the report read it)")
    p = doc["prediction"]
    if p:
        changes = ", ".join(f"{k}={v}" for k, v in p["changes"].items())
        out += wrap(f"the prediction checked: the {p['kind']} {p['id']} ({changes})", width,
                    hang="  ")
    w = doc["workload"]
    out += ["", *wrap("the workload, the report's and now (a figure beyond its limit: the "
                      "load moved, no verdict):", width)]
    rows = [[NAMES.get(f["figure"], f["figure"]), _v(f["before"]), _v(f["now"]),
             "-" if f.get("change_pct") is None else f"{f['change_pct']:+.0f}%",
             f"±{f['limit_pct']:.0f}%" if f["limit_pct"] < 100 else "×/÷2",
             {True: "MOVED", False: "same", None: "unknown"}[f["moved"]]]
            for f in w["figures"]]
    out.append(fit_table(rows, ["figure", "report", "now", "change", "limit", ""], width,
                         numparse=True))
    notes: list[str] = []
    if doc["figures"]:
        out += ["", *wrap("predicted beside measured (ratios: after / before):", width)]
        rows = []
        for f in doc["figures"]:
            iv = f["interval"]
            mark = iv_mark = ""
            if f.get("note"):
                notes.append(f"{NAMES[f['figure']]}: {f['note']}")
                mark = f" [{len(notes)}]"
            if f["figure"] == "tps" and iv:
                notes.append(f"commits/s interval: {f['basis']}")
                iv_mark = f" [{len(notes)}]"
            rows.append([NAMES[f["figure"]], _v(f["before"]), _v(f["predicted"]),
                         _v(f["after"]), _x(f["predicted_ratio"]), _x(f["measured_ratio"]),
                         "-" if not iv else f"{_x(iv[0])}..{_x(iv[1])}{iv_mark}",
                         {True: "held", False: "NOT HELD", None: "-"}[f["held"]] + mark])
        out.append(fit_table(rows, ["figure", "before", "predicted", "after", "predicted",
                                    "measured", "interval", "verdict"], width,
                             numparse=True))
        out += footnotes(notes, width)
    out += ["", *wrap(f"verdict: {VERDICT[doc['verdict']]} (exit {doc['exit_code']})",
                      width, hang="  ")]
    out += bullets(doc["notes"], width)
    if doc.get("warnings"):
        out += ["", "warnings:", *bullets(doc["warnings"], width)]
    return "\n".join(out) + "\n"


def render_track_record(doc: dict, where: str, width: int | None = None) -> str:
    if not doc["rows"]:
        return (f"no check in the track record yet ({where}): `innoflush advise --check "
                "REPORT.json` adds one\n")
    rows = [[r["change"], r["connections"], r["checks"], r["not_comparable"], r["judged"],
             r["held"], "-" if r["tps_held_pct"] is None else f"{r['tps_held_pct']}%",
             "-" if r["claimed_coverage_pct"] is None else f"{r['claimed_coverage_pct']:.0f}%"]
            for r in doc["rows"]]
    out = wrap(f"the track record: {doc['checks']} check(s) on this machine's servers "
               f"({where})", width)
    out.append(fit_table(rows, ["change", "conns", "checks", "not\ncomparable", "judged",
                                "held", "TPS in\ninterval", "claimed"], width))
    out += footnotes(["TPS in interval: the share of judged checks whose commits/s "
                      "ratio fell in the report's interval; claimed: the coverage that "
                      "interval claims (its median; - where the change has no validated "
                      "interval)"], width)
    return "\n".join(out) + "\n"


__all__ = ["render_check", "render_track_record"]
