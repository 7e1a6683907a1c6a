"""`advise --check DIR --inventory FILE`: every host of an inventory checked against its
saved report, one row a host, worst first.

The reports are the ``advise --json`` files of DIR; a host's is the one named after it
(``db1.json``, or ``db1_3307.json`` for a port) or, failing that, the one whose server
was read at the host's address and port. A host is read as advise reads one (no
predictions: the check is of the report's), then checked (innoflush/advisor/check.py).
A host without a report, of another server, or that cannot be read is a failed row with
its reason; the others go on.
"""

from __future__ import annotations

import os
from typing import Any

from ..advisor.check import EXIT_HELD, EXIT_NO_VERDICT, EXIT_NOT_HELD, check, load_report
from ..errors import EXIT_USAGE, InnoflushError, UsageError
from ..terminal import table
from .inventory import Host
from .run import FleetSettings, Sessions, advise_host

# worst first: failed, did not hold, not comparable, no verdict otherwise, held
RANK = {"did not hold": 1, "not comparable": 2, "not priced": 3, "not judged": 3,
        "nothing applied": 4, "held": 5}


def index_reports(directory: str) -> dict[str, dict]:
    """The advise reports of DIR by file stem and by the target they read ("host:port");
    exit 2 when DIR holds none (the files that are not reports are left aside)."""
    if not os.path.isdir(directory):
        raise UsageError(f"--check {directory}: with --inventory, a directory of saved "
                         "advise reports (one HOST.json a host)")
    out: dict[str, dict] = {}
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".json"):
            continue
        try:
            report = load_report(os.path.join(directory, name))
        except UsageError:
            continue   # not a report, or one without predictions: said per host below
        out[name[:-5]] = report
        target = ((report.get("server") or {}).get("connection") or {}).get("target")
        if target:
            out.setdefault(target, report)
    if not out:
        raise UsageError(f"--check {directory}: no advise report with predictions in it "
                         "(`innoflush advise ... --json > DIR/HOST.json` saves one)")
    return out


def report_for(host: Host, reports: dict[str, dict]) -> dict | None:
    port = host.port or 3306
    for key in (f"{host.name}_{port}", host.name, f"{host.address or host.name}:{port}",
                f"{host.name}:{port}"):
        if key in reports:
            return reports[key]
    return None


def check_host(host: Host, settings: FleetSettings, sessions: Sessions,
               reports: dict[str, dict]) -> dict:
    """advise_host's result with the check in it ("check"; the report now left out of
    the row: the check holds what it says)."""
    before = report_for(host, reports)
    if before is None:
        return {"host": host.name, "address": host.address, "port": host.port,
                "socket": host.socket, "groups": list(host.groups), "status": "failed",
                "exit": EXIT_USAGE, "report": None, "check": None, "seconds": 0.0,
                "error": {"kind": "no-report", "message": f"no report for {host.name} in "
                          f"the --check directory (name it {host.name}.json)"}}
    out: dict[str, Any] = advise_host(host, settings, sessions)
    out["check"] = None
    if out["status"] == "ok":
        try:
            out["check"] = check(before, out["report"])
            out["exit"] = out["check"]["exit_code"]
        except InnoflushError as exc:
            out.update(status="failed", exit=exc.exit_code,
                       error={"kind": "another-server", "message": str(exc)})
    out["report"] = None
    return out


def rank(result: dict) -> int:
    return 0 if result["status"] != "ok" else RANK.get(result["check"]["verdict"], 3)


def fleet_check_exit(results: list[dict]) -> int:
    """2 when any host failed, else 5 when any prediction did not hold, else 4 when any
    host gave no verdict, else 0."""
    if any(r["status"] != "ok" for r in results):
        return EXIT_USAGE
    codes = {r["exit"] for r in results}
    for code in (EXIT_NOT_HELD, EXIT_NO_VERDICT):
        if code in codes:
            return code
    return EXIT_HELD


def _tps(doc: dict) -> list[str]:
    f = next((f for f in doc.get("figures") or [] if f["figure"] == "tps"), None)
    if not f:
        return ["-", "-", "-"]
    iv = f.get("interval")
    return [_x(f.get("predicted_ratio")), _x(f.get("measured_ratio")),
            "-" if not iv else f"{_x(iv[0])}..{_x(iv[1])}"]


def _x(v: float | None) -> str:
    return "-" if v is None else f"×{v:.2f}"


def render_check_table(results: list[dict], width: int | None = None) -> str:
    rows = []
    for r in sorted(results, key=lambda r: (rank(r), r["host"])):
        if r["status"] != "ok":
            err = r["error"] or {}
            rows.append([r["host"], "failed", "-", "-", "-", "-",
                         f"{err.get('kind')}: {err.get('message')}"])
            continue
        doc = r["check"]
        change = ", ".join(f"{k}={v}" for k, v in sorted(
            ((doc.get("prediction") or {}).get("changes") or {}).items())) or "-"
        why = ("moved: " + ", ".join(doc["workload"]["moved"]) if doc["workload"]["moved"]
               else "; ".join(doc["notes"][:1]) or "-")
        rows.append([r["host"], doc["verdict"], change, *_tps(doc), why])
    return table(rows, ["host", "verdict", "change", "TPS\npredicted", "TPS\nmeasured",
                        "interval", "why"], width, prose=6) + "\n"


def check_summary(results: list[dict], not_done: list[str], seconds: float,
                  width: int | None = None) -> str:
    from collections import Counter

    from ..terminal import wrap

    verdicts = Counter(r["check"]["verdict"] for r in results if r["status"] == "ok")
    parts = [f"{n} {v}" for v, n in sorted(verdicts.items(), key=lambda kv: RANK[kv[0]])]
    failed = sum(r["status"] != "ok" for r in results)
    line = (f"{len(results) + len(not_done)} hosts checked: " + (", ".join(parts) or "none")
            + (f"; {failed} failed" if failed else "")
            + (f"; {len(not_done)} not finished (interrupted)" if not_done else "")
            + f"; {seconds:.1f} s")
    return "\n".join(wrap(line, width, hang="  ")) + "\n"


__all__ = ["check_host", "check_summary", "fleet_check_exit", "index_reports", "rank",
           "render_check_table", "report_for"]
