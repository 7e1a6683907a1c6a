"""One sweep's wall time in-process, through the local process pool and (with
--scheduler) through a Dask cluster, and whether the three give identical results.

The sweep: 8 cases (O_DIRECT and fsync × trx_commit 1, 2 × 1 and 16 connections) on the
samsung-990-pro profile, --duration simulated seconds each, seed 1. Start a cluster with
e.g. `dask scheduler --host 127.0.0.1 --port 8786` and `dask worker tcp://127.0.0.1:8786
--nthreads 1 --nworkers 2`, each with innoflush importable.

    python bench/executors.py [--duration 5] [--jobs 2] [--scheduler tcp://HOST:PORT]
"""

from __future__ import annotations

import argparse
import time

from innoflush.executor import InProcessExecutor, LocalPoolExecutor, make_executor
from innoflush.profiles import load_profile
from innoflush.simulator import ServerConfig, Workload
from innoflush.simulator.sweep import combinations, run_sweep


def figures(results) -> list:
    return [[r.to_dict() for r in runs] for runs, _ in results]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=5.0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--scheduler", default=None)
    a = ap.parse_args()
    cases = combinations(ServerConfig(), Workload(), ["O_DIRECT", "fsync"], [1, 2], [1],
                         [1, 16])
    profile = load_profile("samsung-990-pro")
    runs = [("in-process", InProcessExecutor()), ("local pool", LocalPoolExecutor(a.jobs))]
    if a.scheduler:
        runs.append(("dask", make_executor(a.scheduler)))
    base = None
    for name, ex in runs:
        with ex:
            if name == "dask":
                name = ex.describe()
            t0 = time.perf_counter()
            res = run_sweep(cases, profile, duration_s=a.duration, seed=1, executor=ex)
            wall = time.perf_counter() - t0
        base = base or figures(res)
        same = "identical" if figures(res) == base else "DIFFERENT"
        print(f"{name:45s} {len(cases)} cases x {a.duration:g} simulated s: "
              f"{wall:6.2f} s wall, results {same}")


if __name__ == "__main__":
    main()
