"""The model's figures on a fixed set of cells and seeds: the reference a faster model
must stay within replication noise of.

Each cell is a server configuration (flavor, flush method, trx_commit, sync_binlog with
the binlog on, connections) on a slow device (no PLP: ms-class cache flushes) or a fast
one (PLP: tens of µs), both from tests/helpers/simprofiles.py. Each cell runs with SEEDS; per
figure the fixture keeps the mean over the seeds and their standard deviation (the
replication noise), with the values of each seed. tests/simulator/test_model_reference.py re-runs
the cells with the current model and compares.

    python bench/model_reference.py [--out tests/fixtures/model_reference.json]
        [--check FILE]   (compare the current model against FILE instead of writing)
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "..", "tests", "helpers"))
sys.path.insert(0, os.path.join(_HERE, ".."))
from simprofiles import consumer_ssd, plp_ssd  # noqa: E402

from innoflush.simulator import ServerConfig, Workload, simulate  # noqa: E402

FIXTURE = os.path.join(_HERE, "..", "tests", "fixtures", "model_reference.json")
SEEDS = (1, 2, 3, 4)
DURATION_S = 1.0
WARMUP_S = 0.3
# A workload that takes every path the model has: varied transactions (work_cv: without
# it connections fall into lockstep), a host that charges syncs and wake-ups CPU, hot
# pages re-dirtied after their write, several tablespaces.
WORKLOAD = dict(work_cv=0.5, sync_cpu_us=10.0, sync_side_cpu_us=5.0, sleep_cpu_us=10.0,
                wakeup_us=20.0, commit_cpu_us=10.0, pages_dirtied_per_trx=0.5,
                hot_page_share=0.2, statements_per_trx=2)
FIGURES = ("tps", "commit_p50_ms", "commit_p99_ms", "data_fsyncs_per_s",
           "data_writes_per_s", "redo_syncs_per_s", "commits_per_redo_sync")


@dataclass(frozen=True)
class Cell:
    flavor: str
    method: str
    trx_commit: int
    sync_binlog: int
    connections: int
    device: str        # "slow" or "fast"
    extra: dict = field(default_factory=dict)   # further ServerConfig settings

    @property
    def name(self) -> str:
        s = (f"{self.flavor} {self.method} trx{self.trx_commit} sb{self.sync_binlog} "
             f"c{self.connections} {self.device}")
        return s + "".join(f" {k}={v}" for k, v in sorted(self.extra.items()))


def _cells() -> list[Cell]:
    cells = []
    for flavor in ("mysql-8.0", "mariadb-10.11"):
        for device in ("slow", "fast"):
            # the default durable setting at 1, 4 and 16 connections
            for conns in (1, 4, 16):
                cells.append(Cell(flavor, "O_DIRECT", 1, 1, conns, device))
            # the other flush method and the relaxed settings at 4 connections
            cells.append(Cell(flavor, "O_DIRECT_NO_FSYNC", 1, 1, 4, device))
            cells.append(Cell(flavor, "O_DIRECT", 1, 0, 4, device))
            cells.append(Cell(flavor, "O_DIRECT", 2, 0, 16, device))
        # a host whose completion interrupts go to one core (the migration path)
        cells.append(Cell(flavor, "O_DIRECT", 1, 1, 16, "slow", {"io_completion_cores": 1}))
    return cells


CELLS = _cells()


def run_seed(cell: Cell, seed: int) -> dict[str, float | None]:
    profile = consumer_ssd() if cell.device == "slow" else plp_ssd()
    cfg = ServerConfig(flavor=cell.flavor, innodb_flush_method=cell.method,
                       innodb_flush_log_at_trx_commit=cell.trx_commit, log_bin=True,
                       sync_binlog=cell.sync_binlog, **cell.extra)
    wl = Workload(connections=cell.connections, **WORKLOAD)
    r = simulate(cfg, wl, profile, duration_s=DURATION_S, warmup_s=WARMUP_S, seed=seed)
    d = r.duration_s
    return {
        "tps": r.tps,
        "commit_p50_ms": r.commit_latency_ms["p50"],
        "commit_p99_ms": r.commit_latency_ms["p99"],
        "data_fsyncs_per_s": r.status["Innodb_data_fsyncs"] / d,
        "data_writes_per_s": r.status["Innodb_data_writes"] / d,
        "redo_syncs_per_s": r.syncs_per_s["redo_syncs"],
        "commits_per_redo_sync": r.group_commit["commits_per_redo_sync"],
    }


def run_cell(cell: Cell, seeds: tuple[int, ...] = SEEDS) -> dict[str, dict]:
    """Per figure: mean and sample standard deviation over the seeds, and the values."""
    runs = [run_seed(cell, s) for s in seeds]
    out: dict[str, dict] = {}
    for f in FIGURES:
        vals = [r[f] for r in runs]
        if any(v is None for v in vals):
            out[f] = {"mean": None, "sd": None, "values": vals}
            continue
        nums = [float(v) for v in vals if v is not None]
        mean = sum(nums) / len(nums)
        sd = math.sqrt(sum((v - mean) ** 2 for v in nums) / (len(nums) - 1))
        out[f] = {"mean": mean, "sd": sd, "values": nums}
    return out


# How far a re-run may move (tests/simulator/test_model_reference.py says why these)
K = 4.0
REL_FLOOR = 0.01


def floor(figure: str) -> float:
    """One event in the measured window for the rates; a µs for the latencies; 0.01 of
    a commit for commits per redo sync."""
    if figure.endswith("_per_s") or figure == "tps":
        return 1.0 / DURATION_S
    if figure.endswith("_ms"):
        return 1e-3
    return 0.01


def within(old: dict, new: dict, k: float, rel_floor: float,
           abs_floor: float) -> tuple[bool, float]:
    """Is the new mean within k old standard deviations (+ floors) of the old mean?
    Returns the verdict and the margin used (|difference| / allowed: <= 1 passes)."""
    if old["mean"] is None or new["mean"] is None:
        return old["mean"] is None and new["mean"] is None, 0.0
    allowed = k * old["sd"] + rel_floor * abs(old["mean"]) + abs_floor
    diff = abs(new["mean"] - old["mean"])
    return diff <= allowed, diff / allowed


def _git_head() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=_HERE, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=FIXTURE)
    ap.add_argument("--check", metavar="FILE", help="compare against FILE, write nothing")
    args = ap.parse_args()
    t = time.process_time()
    results = {}
    for cell in CELLS:
        results[cell.name] = run_cell(cell)
        print(f"{cell.name}: tps {results[cell.name]['tps']['mean']:.0f} "
              f"± {results[cell.name]['tps']['sd']:.0f}", flush=True)
    cpu = time.process_time() - t
    if args.check:
        with open(args.check) as fh:
            ref = json.load(fh)["cells"]
        worst = 0.0
        for name, figs in results.items():
            for f, new in figs.items():
                ok, margin = within(ref[name][f], new, K, REL_FLOOR, floor(f))
                worst = max(worst, margin)
                if not ok or margin > 0.5:
                    print(f"{'FAIL' if not ok else 'near'} {name} {f}: "
                          f"{ref[name][f]['mean']} -> {new['mean']} (margin {margin:.2f})")
        print(f"worst margin {worst:.2f}; {cpu:.1f} s CPU")
        return
    doc = {
        "provenance": {
            "made_at_commit": _git_head(),
            "date": datetime.date.today().isoformat(),
            "command": "python bench/model_reference.py",
            "what": "the model's figures per cell: mean and sample sd over seeds "
                    f"{list(SEEDS)}, {DURATION_S} s measured after {WARMUP_S} s warm-up; "
                    f"workload Workload(connections, **{WORKLOAD})",
            "cpu_s": round(cpu, 1),
        },
        "cells": results,
    }
    with open(args.out, "w") as fh:
        json.dump(doc, fh, indent=1, sort_keys=False)
        fh.write("\n")
    print(f"wrote {args.out} ({len(CELLS)} cells x {len(SEEDS)} seeds, {cpu:.1f} s CPU)")


if __name__ == "__main__":
    main()
