"""Every combination of the listed settings, simulated through a SimExecutor: in
parallel processes on this host, or on a Dask cluster (innoflush.executor)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable

from ..errors import UsageError
from ..executor import SimExecutor, make_executor
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
              progress: Callable[[int, int], None] | None = None,
              executor: SimExecutor | None = None
              ) -> list[tuple[list[SimResult], dict]]:
    """Results in the order of `cases`. Same seed per case: a sweep is reproducible, and
    the same whichever executor runs it. executor: where the cases run (default: a local
    process pool of `jobs` processes, made and closed here)."""
    args: list[_Case] = [(cfg, wl, profile, replications, seed, duration_s) for cfg, wl in cases]
    if executor is not None:
        return executor.map(_run_one, args, progress=progress)
    with make_executor(None, jobs=jobs or max(1, min(len(args), os.cpu_count() or 1))) as ex:
        return ex.map(_run_one, args, progress=progress)

