"""Every combination of the listed settings, simulated in parallel processes."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed

from ..errors import UsageError
from ..profiles import DeviceProfile
from .config import ServerConfig, Workload, with_
from .results import SimResult, replicate


def combinations(base: ServerConfig, workload: Workload, flush_methods: list[str],
                 trx_commits: list[int], sync_binlogs: list[int],
                 connections: list[int]) -> list[tuple[ServerConfig, Workload]]:
    out = []
    for fm, tc, sb, n in itertools.product(flush_methods, trx_commits, sync_binlogs,
                                           connections):
        cfg = with_(base, innodb_flush_method=fm, innodb_flush_log_at_trx_commit=tc,
                    sync_binlog=sb)
        wl = with_(workload, connections=n)
        cfg.validate()  # a clear error before any process starts
        wl.validate()
        out.append((cfg, wl))
    if not out:
        raise UsageError("nothing to simulate")
    return out


# one case of a sweep as a worker process gets it
_Case = tuple[ServerConfig, Workload, DeviceProfile, int, int, float]


def _run_one(args: _Case) -> tuple[list[SimResult], dict]:
    cfg, wl, profile, replications, seed, duration_s = args
    runs, summary = replicate(cfg, wl, profile, replications=replications, seed=seed,
                              duration_s=duration_s)
    return runs, summary


def run_sweep(cases: list[tuple[ServerConfig, Workload]], profile: DeviceProfile,
              replications: int = 1, seed: int = 1, duration_s: float = 10.0,
              jobs: int | None = None,
              progress: Callable[[int, int], None] | None = None
              ) -> list[tuple[list[SimResult], dict]]:
    """Results in the order of `cases`. Same seed per case: a sweep is reproducible."""
    args: list[_Case] = [(cfg, wl, profile, replications, seed, duration_s) for cfg, wl in cases]
    jobs = jobs or min(len(args), os.cpu_count() or 1)
    if jobs <= 1 or len(args) == 1:
        out = []
        for i, a in enumerate(args):
            out.append(_run_one(a))
            if progress:
                progress(i + 1, len(args))
        return out
    results: list = [None] * len(args)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(_run_one, a): i for i, a in enumerate(args)}
        done = 0
        for fut in as_completed(futures):
            results[futures[fut]] = fut.result()
            done += 1
            if progress:
                progress(done, len(args))
    return results
