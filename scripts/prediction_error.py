"""Build innoflush/advisor/data/prediction_error.json: the model's error on validated
changes, the interval every prediction carries (innoflush/advisor/error_bands.py).

For every cell of the given `lab validate --workload-cmd --json` reports (default: the
ones docs/validation/ keeps), today's fit and prediction run again on the cell's advise
report (innoflush/lab/experiments/refit.py: no server), and measured / predicted TPS ratio is kept
per change ("innodb_flush_log_at_trx_commit 1->2", ...) and per class of connections.
The interval is the 10th..90th percentile of that error. How well such an interval
holds on runs it was not built from is checked too: each run left out in turn, the
interval built from the others, the share of the left-out run's cells inside it
(``held_out_coverage_pct``; ``held_out_as_advised`` with the figures advise picks, its
class's or the change's); that share is the ``coverage_pct`` advise quotes. Cells the model
cannot explain (advise gives no prediction there) are counted, not used.

Re-run it when the model changes (the figures are today's model's):

    python scripts/prediction_error.py [REPORT.json.gz ...] [--jobs 2] [--cache FILE]
        [--out innoflush/advisor/data/prediction_error.json] [--check]

--cache keeps each cell's refit (keyed by a digest of the model's sources: the
simulator, the fit, the live readings) so a second run only recomputes the percentiles.
--check prints the figures without writing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import math
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from innoflush.advisor.error_bands import (  # noqa: E402
    DATA,
    change_key,
    connection_class,
    tps_interval,
)
from innoflush.lab.experiments.change_cells import CHANGES  # noqa: E402
from innoflush.lab.experiments.refit import measured_cells, read_validation, refit  # noqa: E402

# 10th..90th: with a class of connections only ever widening the change's interval
# (advisor/error_bands.py), they held 197 of 244 cells of runs left out (81 %, 2026-11-27)
LOW_Q, HIGH_Q = 0.10, 0.90
EXTEND_BYTES = 1048576      # sysbench's 4 x 10,000-row tables, for reports before 11-26


def _commit() -> str:
    r = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "innoflush"],
                           capture_output=True, text=True).stdout.strip()
    return (r.stdout.strip() or "unknown") + ("+changes" if dirty else "")


def _model_key() -> str:
    """A digest of the sources a refit's ratio depends on (the cache's key: a change to
    the docs or to how an interval is drawn does not redo the refits)."""
    h = hashlib.sha256()
    for pattern in ("innoflush/simulator/*.py", "innoflush/advisor/fit.py",
                    "innoflush/advisor/measured.py", "innoflush/advisor/predict.py",
                    "innoflush/advisor/sleep_cost.py",
                    "innoflush/advisor/round_trip.py", "innoflush/live/*.py",
                    "innoflush/lab/experiments/refit.py",
                    "innoflush/profiles/*.py"):
        for f in sorted(ROOT.glob(pattern)):
            h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()[:16]


def _refit_one(args: tuple) -> dict:
    cell, profile = args
    try:
        r = refit(cell, profile, 1, EXTEND_BYTES)
    except (KeyError, TypeError, ValueError) as e:      # a report older than its reader
        return {"error": f"{type(e).__name__}: {e}"}
    return {"ratio": r["ratio"], "explained": r["explained"]}


def refit_all(paths: list[str], jobs: int, cache: dict) -> list[dict]:
    """One row per measured cell: run, change key, measured and predicted ratio."""
    todo, rows = [], []
    for path in paths:
        rep = read_validation(path)
        for dev, cell, profile in measured_cells(rep):
            ch = CHANGES[cell["change"]]
            ident = f"{Path(path).name}|{dev['name']}|{cell['workload']}|" \
                    f"{cell['connections']}|{cell['change']}"
            row = {"run": Path(path).name, "id": ident,
                   "change": change_key(ch.setting, ch.before, ch.after),
                   "setting": ch.setting, "before": ch.before, "after": ch.after,
                   "connections": cell["connections"],
                   "measured": cell["measured_ratio"], "date": rep.get("date")}
            rows.append(row)
            if ident not in cache:
                todo.append((ident, cell, profile))
    if todo:
        print(f"refitting {len(todo)} cells on {jobs} processes ...", file=sys.stderr)
        with ProcessPoolExecutor(jobs) as pool:
            for (ident, _, _), res in zip(todo, pool.map(
                    _refit_one, [(c, p) for _, c, p in todo], chunksize=2), strict=True):
                cache[ident] = res
    for row in rows:
        row.update(cache[row["id"]])
    return rows


def band(errors: list[float]) -> tuple[float, float, float]:
    """(low, median, high) of measured / predicted, on a log scale."""
    logs = np.log(np.asarray(errors))
    lo, mid, hi = np.quantile(logs, [LOW_Q, 0.5, HIGH_Q])
    return math.exp(lo), math.exp(mid), math.exp(hi)


def figures(rows: list[dict], by_class: bool = True) -> dict:
    """Per change: the percentiles of measured / predicted, the held-out coverage, and
    (by_class) the same per class of connections."""
    out: dict = {}
    for key in sorted({r["change"] for r in rows}):
        mine = [r for r in rows if r["change"] == key]
        entry = _figures(mine)
        if entry is None:
            continue
        if by_class:
            entry["by_connections"] = {}
            for cls in sorted({connection_class(r.get("connections")) for r in mine}
                              - {None}):
                sub = _figures([r for r in mine
                                if connection_class(r.get("connections")) == cls])
                if sub is not None:
                    entry["by_connections"][cls] = sub
        out[key] = entry
    return out


def _figures(mine: list[dict]) -> dict | None:
    """The percentiles of these cells' measured / predicted (None under 5 cells), and
    the coverage of the band built without each run on that run's cells."""
    used = [r for r in mine if r.get("ratio")]
    errs = [r["measured"] / r["ratio"] for r in used]
    if len(errs) < 5:
        return None
    lo, mid, hi = band(errs)
    runs = sorted({r["run"] for r in used})
    inside = held = 0
    for run in runs:
        rest = [r["measured"] / r["ratio"] for r in used if r["run"] != run]
        if len(rest) < 5:
            continue
        rlo, _, rhi = band(rest)
        for r in used:
            if r["run"] == run:
                held += 1
                inside += rlo <= r["measured"] / r["ratio"] <= rhi
    within = sum(1 for e in errs if 1 / 1.3 <= e <= 1.3)
    return {"cells": len(used), "runs": len(runs),
            "not_explained": sum(1 for r in mine if r.get("explained") is False),
            "unreadable": sum(1 for r in mine if r.get("error")),
            "low": round(lo, 3), "median": round(mid, 3), "high": round(hi, 3),
            "within_1_3_pct": round(100.0 * within / len(errs), 1),
            "held_out_coverage_pct": round(100.0 * inside / held, 1) if held else None,
            "held_out_cells": held}


def held_out_as_advised(rows: list[dict]) -> tuple[int, int]:
    """(inside, cells): each run left out, the interval advise would give each of its
    cells (tps_interval, its class's figures where they have enough cells) from the
    figures of the other runs."""
    inside = total = 0
    for run in sorted({r["run"] for r in rows}):
        rest = figures([r for r in rows if r["run"] != run])
        data = {"changes": rest}
        for r in rows:
            if r["run"] != run or not r.get("ratio"):
                continue
            iv = tps_interval({r["setting"]: r["before"]}, {r["setting"]: r["after"]},
                              100.0 * (r["ratio"] - 1.0), data,
                              connections=r.get("connections"))
            if iv["tps_pct"] is None:
                continue
            total += 1
            inside += (1 + iv["tps_pct"][0] / 100 - 1e-9 <= r["measured"]
                       <= 1 + iv["tps_pct"][1] / 100 + 1e-9)
    return inside, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="*")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=DATA)
    ap.add_argument("--check", action="store_true", help="print, do not write")
    args = ap.parse_args()
    paths = args.reports or sorted(str(p) for p in (ROOT / "docs" / "validation")
                                   .glob("sysbench-*.json.gz"))
    commit, key = _commit(), _model_key()
    cache: dict = {}
    if args.cache and args.cache.exists():
        saved = json.loads(args.cache.read_text())
        cache = saved["cells"] if saved.get("model") == key else {}
    rows = refit_all(paths, args.jobs, cache)
    if args.cache:
        args.cache.write_text(json.dumps({"model": key, "cells": cache}))
    changes = figures(rows)
    inside, total = held_out_as_advised(rows)
    sources = []
    for p in paths:
        mine = [r for r in rows if r["run"] == Path(p).name]
        sources.append({"file": str(Path(p).resolve().relative_to(ROOT))
                        if Path(p).resolve().is_relative_to(ROOT) else str(p),
                        "date": mine[0]["date"] if mine else None, "cells": len(mine)})
    data = {
        "schema": "innoflush.prediction-error/1",
        "what": "measured / predicted TPS ratio of advise's candidate changes: today's model "
                "refitted offline on each cell's advise report "
                "(innoflush/lab/experiments/refit.py), "
                "sysbench oltp_insert/write_only/read_write at 1-16 threads on MariaDB "
                "10.11, local disk and emulated devices (innoflush lab validate "
                "--workload-cmd); low/high: its percentiles (below); coverage_pct: the share of "
                "the cells of runs left out inside the interval built from the others",
        "what_short": "sysbench on MariaDB 10.11, lab validate",
        "generated": dt.date.today().isoformat(),
        "model_commit": commit,
        "percentiles": [100 * LOW_Q, 100 * HIGH_Q],
        "coverage_pct": round(100.0 * inside / total) if total else None,
        "held_out_as_advised": {"inside": inside, "cells": total,
                                "coverage_pct": round(100.0 * inside / total, 1)
                                if total else None},
        "sources": sources,
        "changes": changes,
    }
    for k, v in changes.items():
        print(f"{k}: {v['cells']} cells / {v['runs']} runs, measured/predicted "
              f"x{v['low']:.2f} .. x{v['median']:.2f} .. x{v['high']:.2f}; within x/÷1.3 "
              f"{v['within_1_3_pct']:.0f} %; held out: {v['held_out_coverage_pct']} % of "
              f"{v['held_out_cells']} inside; not explained {v['not_explained']}, "
              f"unreadable {v['unreadable']}")
        for cls, c in (v.get("by_connections") or {}).items():
            print(f"  {cls:>4} connections: {c['cells']} cells, x{c['low']:.2f} .. "
                  f"x{c['median']:.2f} .. x{c['high']:.2f}; held out "
                  f"{c['held_out_coverage_pct']} % of {c['held_out_cells']}")
    print(f"held out, as advise picks the figures: {inside}/{total} inside")
    if not args.check:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
