"""The tool's own track record on this user's servers: every ``advise --check`` appended
to a JSON-lines file under the profile store's home (``track-record.jsonl``), and how
often the quoted intervals held, per change and per class of connections, beside the
coverage those intervals claim.

A line holds no host name, address, user or path: the change, the server's product and
major version, the connections, the verdict and each figure's predicted and measured
ratio — what ``--share FILE`` may export as it is.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from statistics import median

from ..errors import UsageError
from ..profiles.store import user_home

FILE = "track-record.jsonl"
CLASSES = ((1, 1, "1"), (2, 4, "2-4"), (5, 16, "5-16"), (17, 10**9, "17+"))


def path() -> Path:
    return user_home() / FILE


def change_label(changes: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(changes.items()))


def connection_class(n: float | None) -> str:
    if n is None:
        return "unknown"
    k = max(1, int(round(n)))
    return next(label for lo, hi, label in CLASSES if lo <= k <= hi)


def entry(doc: dict) -> dict:
    """One check as its track-record line (nothing that names the host)."""
    pred = doc.get("prediction") or {}
    conns = next((f["before"] for f in doc["workload"]["figures"]
                  if f["figure"] == "connections"), None)
    applied = {c["setting"]: c["now"] for c in doc.get("applied") or []}
    return {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "change": change_label(pred.get("changes") or applied) if applied else None,
        "kind": pred.get("kind"), "product": doc["server"].get("product"),
        "sim_flavor": doc["server"].get("sim_flavor"), "connections": conns,
        "verdict": doc["verdict"], "moved": doc["workload"]["moved"],
        "figures": [{k: f.get(k) for k in ("figure", "predicted_ratio", "measured_ratio",
                                           "interval", "coverage_pct", "held")}
                    for f in doc.get("figures") or []],
    }


def append(doc: dict, where: Path | None = None) -> Path:
    """Add a check to the record (the directory made if missing). A failure to write is
    one line (exit 2), after the check has been printed."""
    target = where or path()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry(doc), sort_keys=True) + "\n")
    except OSError as exc:
        raise UsageError(f"the track record {target} cannot be written: "
                         f"{exc.strerror or exc}") from None
    return target


def read(where: Path | None = None) -> list[dict]:
    """The record's lines; a line that does not parse is skipped (a write cut short)."""
    target = where or path()
    if not target.exists():
        return []
    try:
        lines = target.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"the track record {target} cannot be read: {exc}") from None
    out = []
    for line in lines:
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(item, dict) and "verdict" in item:
            out.append(item)
    return out


def summary(entries: list[dict]) -> dict:
    """Per change and class of connections: the checks, how many had a verdict, how many
    of those held on TPS and on every figure, beside the coverage the TPS interval claimed
    (its median over the checks; null when none was a validated interval)."""
    groups: dict[tuple, list[dict]] = {}
    for e in entries:
        if e.get("change"):
            groups.setdefault((e["change"], connection_class(e.get("connections"))),
                              []).append(e)
    rows = []
    for (change, cls), items in sorted(groups.items()):
        judged = [e for e in items if e["verdict"] in ("held", "did not hold")]
        tps = [f for e in judged for f in e["figures"]
               if f["figure"] == "tps" and f.get("held") is not None]
        claimed = [f["coverage_pct"] for f in tps if f.get("coverage_pct") is not None]
        rows.append({
            "change": change, "connections": cls, "checks": len(items),
            "not_comparable": sum(e["verdict"] == "not comparable" for e in items),
            "judged": len(judged), "held": sum(e["verdict"] == "held" for e in judged),
            "tps_judged": len(tps), "tps_held": sum(bool(f["held"]) for f in tps),
            "tps_held_pct": round(100 * sum(bool(f["held"]) for f in tps) / len(tps))
            if tps else None,
            "claimed_coverage_pct": median(claimed) if claimed else None,
        })
    return {"schema": "innoflush.track-record/1", "checks": len(entries), "rows": rows}


def share(entries: list[dict], target: str) -> None:
    """--share FILE: the record as it is (it names no host), one JSON object a line,
    written atomically as a regular file (a device, a FIFO or a directory refused)."""
    from ..outfile import write_output

    write_output(target, "".join(json.dumps(e, sort_keys=True) + "\n" for e in entries),
                 "--share")


__all__ = ["append", "change_label", "connection_class", "entry", "path", "read", "share",
           "summary"]
