"""`innoflush lab calibrate`'s text report (lab/experiments/calibrate.py): the calibration
runs per connection count, the workload profile and how each of its values was measured.
The JSON report is the report dict as it is (docs/commands/lab-calibrate.md)."""

from __future__ import annotations

from tabulate import tabulate

from ...terminal import fit_lines
from ...terminal import table as fit_table
from .report import num

HEADERS = ["conns", "commits", "TPS", "server CPU µs", "client CPU µs", "client µs", "redo B",
           "pages", "growth B", "files", "COMMIT p50 ms"]


def calibrate_cpu_table(report: dict, width: int | None = None) -> str:
    """Per connection count, what a transaction costs; width None: as tabulate draws it,
    else on two-line headers, fitted (one block per count when even those do not fit)."""
    rows = []
    for r in report["runs"]:
        w = r["workload"]
        rows.append([r["connections"], f"{r['commits']:,}", num(r["tps"]),
                     num(w["cpu_us_per_trx"]), num(w["client_cpu_us_per_trx"]),
                     num(w["client_us_per_trx"]), num(w["redo_bytes_per_trx"]),
                     num(w["pages_dirtied_per_trx"]), num(w["growth_bytes_per_trx"]),
                     w["tablespaces"], num(r["commit_latency_ms"]["p50"])])
    if width is not None:
        return fit_table(rows, [h.replace(" ", "\n", 1) if len(h) > 8 else h for h in HEADERS],
                         width, ["right"] * len(HEADERS))
    return tabulate(rows, headers=HEADERS, disable_numparse=True)


def render_text(report: dict, width: int | None = None) -> str:
    """The report, fitted to width (None, --wide: unwrapped, the table whole)."""
    out: list[str] = []
    s = report["server"]
    out.append(f"innoflush lab calibrate — {report['backend']} backend"
               + (f" ({report['image']})" if report.get("image") else "")
               + f", {s.get('version') or '?'} (model flavor {s.get('sim_flavor') or '?'})")
    emu = report.get("emulation")
    if emu:
        out.append(f"DEVICE EMULATED: {emu['profile']} ({emu['title']}): the calibration "
                   "runs have no sync in the commit path, so the device hardly enters")
    spec = report["workload_spec"]
    out.append(f"runs: innodb_flush_log_at_trx_commit=0 (no sync at commit), then 1 at one "
               "connection (the host's cost of a sync), "
               f"{spec['duration_s']:g} s each"
               + (f" after {spec['warmup_s']:g} s of warm-up" if spec["warmup_s"] else "")
               + f", workload {spec.get('name') or spec['kind']}; "
               f"{report['host']['cpu_cores']} CPU core(s), "
               "shared by the server and the clients")
    out.append("")
    out.append("per transaction, by connections:")
    out.append(calibrate_cpu_table(report, width))
    out.append("")
    p = report["profile"]
    out.append(f"workload profile {p['name']} ({p['title']}), from the "
               f"{report['runs'][0]['connections']}-connection run:")
    for k, v in p["workload"].items():
        out.append(f"  {k:<31} {v}")
    out.append("")
    out.append("how each value was measured:")
    out += [f"  {line}" for line in report["derivation"][0]]
    host = report.get("host_costs")
    if host:
        run = host["run"]
        out.append(f"the host's cost of a sync (trx_commit=1, {run['connections']} connection: "
                   f"{run['commits']:,} commits, {run['tps']:,.0f} TPS, "
                   f"{run['data_fsyncs_per_commit']:g} syncs per commit):")
        out += [f"  {line}" for line in host["derivation"]]
    for r in report["runs"]:
        for n in r["notes"]:
            out.append(f"note ({r['connections']} connection(s)): {n}")
    for n in p.get("notes", []):
        out.append(f"note: {n}")
    if report.get("saved"):
        out.append(f"saved as {report['saved']} (use it: innoflush simulate --workload "
                   f"{p['name']} ..., innoflush tps/advise --workload {p['name']}, innoflush "
                   f"lab run/validate --workload {p['name']})")
    else:
        out.append("not saved (--save NAME keeps it in the workload store)")
    for w in report.get("warnings", []):
        out.append(f"warning: {w}")
    return "\n".join(fit_lines(out, width)) + "\n"


__all__ = ["calibrate_cpu_table", "render_text"]
