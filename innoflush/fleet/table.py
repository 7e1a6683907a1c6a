"""The fleet's results: the table a DBA scans (worst first), the JSON lines, the exit code.

Worst first: the hosts that failed, then those with a data-safety finding, a durability
finding, a performance finding, those whose workload the model could not explain (exit
4), then those with nothing to change; by name within each.
"""

from __future__ import annotations

import json
from collections import Counter

from tabulate import tabulate

from ..errors import EXIT_USAGE
from ..terminal import table, wrap

SEVERITY_RANK = {"data-safety": 1, "durability": 2, "performance": 3}


def rank(result: dict) -> int:
    if result["status"] != "ok":
        return 0
    findings = result["report"]["findings"]
    if findings:
        return min(SEVERITY_RANK.get(f["severity"], 3) for f in findings)
    return 4 if result["exit"] == 4 else 5


def fleet_exit(results: list[dict]) -> int:
    """2 when any host failed, else 3 when any host has a recommendation, else 4 when any
    host's workload could not be explained, else 0."""
    exits = {r["exit"] if r["status"] == "ok" else EXIT_USAGE for r in results}
    for code in (EXIT_USAGE, 3, 4):
        if code in exits:
            return code
    return 0


def json_line(result: dict) -> str:
    return json.dumps(result, default=str, separators=(",", ":"))


def _top_finding(report: dict) -> tuple[str, str]:
    """(the most severe finding as "id: current -> recommended", its predicted effect)."""
    if not report["findings"]:
        return "-", "-"
    f = report["findings"][0]
    more = len(report["findings"]) - 1
    text = f"{f['id']}: {f['current']} -> {f['recommended']}" + (f" (+{more})" if more else "")
    pred = f.get("predicted") or {}
    change = pred.get("change") or {}
    parts = []
    if change.get("tps_pct") is not None:
        parts.append(f"tps {change['tps_pct']:+.0f}%")
    if change.get("commit_latency_p99_pct") is not None:
        parts.append(f"p99 {change['commit_latency_p99_pct']:+.0f}%")
    return text, ", ".join(parts) or "-"


def _v(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "ON" if x else "OFF"
    return str(x)


HEADERS = ["host", "status", "server", "flush_method", "trx_commit", "sync_binlog",
           "top finding", "predicted", "reason"]
# the default columns, fitted to the terminal: what each host needs (its top finding and
# what it would bring, or why there is none); --wide adds its three settings
NARROW = (0, 1, 2, 6, 7, 8)


def render_table(results: list[dict], width: int | None = None) -> str:
    """The fleet, worst first; width None (--wide): every column, however wide."""
    rows = []
    for r in sorted(results, key=lambda r: (rank(r), r["host"])):
        if r["status"] != "ok":
            err = r["error"] or {}
            rows.append([r["host"], "failed", "-", "-", "-", "-", "-", "-",
                         f"{err.get('kind')}: {err.get('message')}"])
            continue
        rep = r["report"]
        srv, st = rep["server"], rep["settings"]
        top, effect = _top_finding(rep)
        note = "model cannot explain the workload" if r["exit"] == 4 else ""
        version = str(srv["version"]).split("-")[0]   # 10.11.19, not its build suffix
        rows.append([r["host"], "ok", f"{srv['product']} {version}",
                     _v(st["innodb_flush_method"]), _v(st["innodb_flush_log_at_trx_commit"]),
                     _v(st["sync_binlog"]) if st["log_bin"] else "no binlog",
                     top, effect, note or "-"])
    if width is not None:
        return table([[r[i] for i in NARROW] for r in rows], [HEADERS[i] for i in NARROW],
                     width, prose=len(NARROW) - 1) + "\n"
    return tabulate(rows, headers=HEADERS, tablefmt="simple", disable_numparse=True) + "\n"


def summary(results: list[dict], not_done: list[str], concurrency: int,
            max_concurrent: int, seconds: float, width: int | None = None) -> str:
    ok = [r for r in results if r["status"] == "ok"]
    failed = [r for r in results if r["status"] != "ok"]
    ranks = Counter(rank(r) for r in ok)
    parts = [f"{len(ok)} advised"]
    for label, k in (("data-safety", 1), ("durability", 2), ("performance", 3),
                     ("unexplained", 4), ("nothing to change", 5)):
        if ranks[k]:
            parts.append(f"{ranks[k]} {label}")
    line = f"{len(results) + len(not_done)} hosts: " + ", ".join(parts)
    if failed:
        kinds = Counter(r["error"]["kind"] for r in failed)
        line += (f"; {len(failed)} failed ("
                 + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) + ")")
    if not_done:
        line += f"; {len(not_done)} not finished (interrupted)"
    line += (f"; {seconds:.1f} s, at most {max_concurrent} at once "
             f"(--concurrency {concurrency})")
    return "\n".join(wrap(line, width, hang="  ")) + "\n"
