"""The interval a predicted change carries: how far the model's predicted TPS ratio has
been from the measured one, per kind of change, on workloads nobody here wrote.

A prediction's ``range`` says how the effect moves with the model's uncertain inputs
(the measured costs taken ±5-10 %); on the sysbench validations it held the measured
change in 5 of 57 cells, because the model's error is larger than its inputs' — the CPU
a commit saves once it no longer sleeps, above all. So every prediction also carries an
``interval``: the predicted ratio times the 10th and 90th percentiles of measured /
predicted over the validated cells of the same change (today's model refitted offline on
each cell's advise report, ``scripts/prediction_error.py``), which would have held about
80 % of them. The figures are data/prediction_error.json, with their provenance.

A change no validation measured (a direction or setting the lab does not run) gets no
interval, and says so; several changes together get the widest of their own intervals
(they were not validated together).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).with_name("data") / "prediction_error.json"


@lru_cache(maxsize=1)
def bands() -> dict:
    """The shipped error figures ({} when the file is missing or unreadable: every
    prediction then says it has no validated interval)."""
    try:
        return json.loads(DATA.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _norm(v: object) -> str:
    if isinstance(v, bool):
        return "ON" if v else "OFF"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v).upper() if isinstance(v, str) else str(v)


def change_key(setting: str, before: object, after: object) -> str:
    """'innodb_flush_log_at_trx_commit 1->2': how the error figures name a change."""
    return f"{setting} {_norm(before)}->{_norm(after)}"


def tps_interval(current: dict, changes: dict, tps_pct: float | None,
                 data: dict | None = None) -> dict:
    """The interval of a predicted TPS change: {"tps_pct": [low, high] (% change, or
    None), "coverage_pct", "basis"}. current: setting -> value now; changes: setting ->
    value after; data: the error figures (default: the shipped ones)."""
    data = bands() if data is None else data
    coverage = data.get("coverage_pct")
    keys = [change_key(s, current.get(s), v) for s, v in sorted(changes.items())]
    known = data.get("changes") or {}
    missing = [k for k in keys if k not in known]
    if tps_pct is None or not keys:
        return {"tps_pct": None, "coverage_pct": coverage, "basis": "no predicted change"}
    if missing:
        return {"tps_pct": None, "coverage_pct": coverage,
                "basis": "not validated against a measured change: " + ", ".join(missing)}
    lo = min(known[k]["low"] for k in keys)
    hi = max(known[k]["high"] for k in keys)
    ratio = 1.0 + tps_pct / 100.0
    cells = sum(known[k]["cells"] for k in keys)
    basis = (f"the predicted ratio x{lo:.2f}..x{hi:.2f}: measured / predicted in "
             f"{cells} validated cells ({', '.join(keys)}; {data.get('what_short', '')})"
             .replace("; )", ")"))
    if len(keys) > 1:
        basis += "; the widest of the changes' own (not validated together)"
    return {"tps_pct": [round(100.0 * (ratio * lo - 1.0), 1),
                        round(100.0 * (ratio * hi - 1.0), 1)],
            "coverage_pct": coverage, "basis": basis}
