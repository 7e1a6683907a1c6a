"""The interval a predicted change carries: how far the model's predicted TPS ratio has
been from the measured one, per kind of change, on workloads nobody here wrote.

A prediction's ``range`` says how the effect moves with the model's uncertain inputs
(the measured costs taken ±5-10 %); on the sysbench validations it seldom held the
measured change, because the model's error is larger than its inputs' — the CPU a
commit saves once it no longer sleeps, above all. So every prediction also carries an
``interval``: the predicted ratio times the 10th and 90th percentiles of measured /
predicted over the validated cells of the same change (today's model refitted offline on
each cell's advise report, ``scripts/prediction_error.py``). How often such intervals,
built without a run, held that run's cells is their ``coverage_pct``. The figures are
data/prediction_error.json, with their provenance;
docs/validation/notebook/2026-11-27-interval-a-prediction-carries.md has how they held.

The model's error depends on the concurrency most (at one connection the CPU a commit
saves once it no longer sleeps is hardest to tell, and measured / predicted of
trx_commit 1->2 spreads widest there), so the figures are kept per class of connections
too. A class with enough cells (MIN_CLASS_CELLS) widens the change's interval where its
own is wider, and never narrows it: a class of a few dozen cells that looks better than
the whole is as likely luck. Widened so, the left-out runs' one-connection trx_commit
cells fell inside their interval more often than with the change's interval alone.

A change no validation measured (a direction or setting the lab does not run) gets no
interval, and says so; several changes together get the widest of their own intervals
(they were not validated together).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).with_name("data") / "prediction_error.json"
MIN_CLASS_CELLS = 15
# the validations ran 1, 4 and 16 connections: each class holds one of them
CONNECTION_CLASSES = (("1", 1, 1), ("2-8", 2, 8), ("9+", 9, 10**9))


def connection_class(connections: float | None) -> str | None:
    """'1', '2-8' or '9+' (None when unknown)."""
    if connections is None:
        return None
    n = max(1, round(connections))
    return next(name for name, lo, hi in CONNECTION_CLASSES if lo <= n <= hi)


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


def _figures(entry: dict, cls: str | None) -> tuple[dict, str]:
    """The entry's figures for the class of connections when it has enough cells."""
    sub = (entry.get("by_connections") or {}).get(cls) if cls else None
    if sub and sub.get("cells", 0) >= MIN_CLASS_CELLS and (
            sub["low"] < entry["low"] or sub["high"] > entry["high"]):
        # the class only widens the change's interval: a class of a few dozen cells
        # that looks better than the whole is as likely luck as skill
        return ({"cells": sub["cells"], "low": min(sub["low"], entry["low"]),
                 "high": max(sub["high"], entry["high"])},
                f"{cls} connection{'' if cls == '1' else 's'}")
    return entry, "all connections"


def tps_interval(current: dict, changes: dict, tps_pct: float | None,
                 data: dict | None = None, connections: float | None = None) -> dict:
    """The interval of a predicted TPS change: {"tps_pct": [low, high] (% change, or
    None), "coverage_pct", "basis"}. current: setting -> value now; changes: setting ->
    value after; data: the error figures (default: the shipped ones); connections: the
    workload's (the figures of its class, where there are enough)."""
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
    cls = connection_class(connections)
    picked = [_figures(known[k], cls) for k in keys]
    lo = min(f["low"] for f, _ in picked)
    hi = max(f["high"] for f, _ in picked)
    ratio = 1.0 + tps_pct / 100.0
    cells = sum(f["cells"] for f, _ in picked)
    which = ", ".join(f"{k} at {w}" for k, (_, w) in zip(keys, picked, strict=True))
    where = "; ".join(x for x in (which, data.get("what_short")) if x)
    basis = (f"the predicted ratio x{lo:.2f}..x{hi:.2f}: measured / predicted in "
             f"{cells} validated cells ({where})")
    if len(keys) > 1:
        basis += "; the widest of the changes' own (not validated together)"
    return {"tps_pct": [round(100.0 * (ratio * lo - 1.0), 1),
                        round(100.0 * (ratio * hi - 1.0), 1)],
            "coverage_pct": coverage, "basis": basis}
