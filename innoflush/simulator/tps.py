"""`innoflush tps`: the most durable commits per second one connection can get from a device.

One connection cannot share a sync with anybody: each commit pays its redo write and
sync, and with the binlog its binlog write and sync, one after another. So the
per-connection ceiling is 1 / (sum of those latencies) — an 18 ms fsync gives about 56
commits/s — and a target rate needs at least target / ceiling connections, which group
commit then lets share each sync. Closed form first; a short simulation checks it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import simpy

from ..profiles import DeviceProfile
from .config import ServerConfig, Workload, with_
from .device import Device
from .flavors import get_flavor
from .results import simulate


@dataclass(frozen=True)
class DurabilitySetting:
    key: str
    title: str
    trx_commit: int
    log_bin: bool
    sync_binlog: int
    use_fdatasync: bool

    def config(self, flavor: str) -> ServerConfig:
        return ServerConfig(flavor=flavor, innodb_flush_log_at_trx_commit=self.trx_commit,
                            log_bin=self.log_bin, sync_binlog=self.sync_binlog,
                            innodb_use_fdatasync=self.use_fdatasync)


SETTINGS = (
    DurabilitySetting("redo-fsync", "redo fsync per commit (trx_commit=1, binlog off)",
                      1, False, 0, False),
    DurabilitySetting("redo-fdatasync", "redo fdatasync per commit (innodb_use_fdatasync=ON)",
                      1, False, 0, True),
    DurabilitySetting("redo+binlog", "redo fsync + binlog sync (trx_commit=1, sync_binlog=1)",
                      1, True, 1, False),
    DurabilitySetting("redo+binlog-fdatasync",
                      "redo fdatasync + binlog sync (trx_commit=1, sync_binlog=1)",
                      1, True, 1, True),
    DurabilitySetting("trx-commit-2", "trx_commit=2, binlog off: no sync at commit",
                      2, False, 0, False),
    DurabilitySetting("trx-commit-2+binlog", "trx_commit=2 + binlog sync (sync_binlog=1)",
                      2, True, 1, False),
)

COMMIT_ONLY = Workload(connections=1, cpu_us_per_trx=0.0, client_us_per_trx=0.0,
                       pages_dirtied_per_trx=0.0, growth_bytes_per_trx=0.0)


def commit_latency_s(profile: DeviceProfile, setting: DurabilitySetting, flavor: str,
                     workload: Workload = COMMIT_ONLY) -> tuple[float, list[str]]:
    """Mean time of one commit at one connection: the syncs in series, nothing shared."""
    fl = get_flavor(flavor)
    dev = Device(simpy.Environment(), profile, rng=None)  # means only: no sampling
    redo = workload.redo_bytes_per_trx
    sync_op = "fdatasync" if fl.use_fdatasync(setting.use_fdatasync) else "fsync"
    t = (workload.cpu_us_per_trx + workload.client_us_per_trx) * 1e-6
    direct = fl.redo_is_direct(setting.trx_commit, None)
    t += dev.mean_s("write", "none", redo, direct)
    if setting.trx_commit == 1:
        t += dev.mean_s("sync", sync_op, redo, direct)
    if setting.log_bin:
        t += dev.mean_s("write", "none", workload.binlog_bytes_per_trx, False)
        if setting.sync_binlog == 1:
            t += dev.mean_s("sync", "fdatasync", workload.binlog_bytes_per_trx, False)
    return t, sorted(dev.notes)


def tps_table(profile: DeviceProfile, flavor: str = "mysql-8.0", target_tps: float | None = None,
              workload: Workload = COMMIT_ONLY, check: bool = True,
              check_duration_s: float = 3.0, seed: int = 1) -> dict:
    """Per durability setting: latency, TPS per connection, connections for the target,
    and (check=True) the simulated TPS at 1 connection and at that many connections."""
    rows = []
    notes: set[str] = set()
    for s in SETTINGS:
        if s.use_fdatasync and not get_flavor(flavor).has_use_fdatasync_variable:
            continue  # MariaDB always uses fdatasync: the fsync rows already are that
        lat, n = commit_latency_s(profile, s, flavor, workload)
        notes.update(n)
        per_conn = 1.0 / lat if lat > 0 else math.inf
        row = {"setting": s.key, "title": s.title,
               "commit_latency_ms": round(lat * 1e3, 4),
               "tps_per_connection": round(per_conn, 2)}
        need = None
        if target_tps:
            need = max(1, math.ceil(target_tps / per_conn - 1e-9))
            row["connections_for_target"] = need
        if check:
            # The check is of the commit path's arithmetic: redo capacity large enough that
            # checkpoints never stall it (a real server with trx_commit=2 may well stall).
            cfg = with_(s.config(flavor), innodb_redo_log_capacity=64 * 1024**3)
            # enough simulated time for ~30k commits, no more: fast settings stay instant
            dur = min(check_duration_s, max(0.2, 30_000 / (per_conn * (need or 1))))
            sim1 = simulate(cfg, workload, profile, duration_s=dur, seed=seed)
            row["simulated_tps_1_connection"] = round(sim1.tps, 2)
            if need and need > 1:
                wl = Workload(**{**workload.to_dict(), "connections": need})
                simn = simulate(cfg, wl, profile, duration_s=dur, seed=seed)
                row["simulated_tps_at_target_connections"] = round(simn.tps, 2)
            if need and target_tps:
                row["simulated_connections_for_target"] = _simulated_connections(
                    cfg, workload, profile, target_tps, need, dur, seed)
        rows.append(row)
    return {"profile": profile.name, "title": profile.title, "flavor": flavor,
            "target_tps": target_tps, "settings": rows, "notes": sorted(notes)}


def _simulated_connections(cfg: ServerConfig, workload: Workload, profile: DeviceProfile,
                           target: float, lower: int, duration_s: float, seed: int,
                           limit: int = 1024) -> int | None:
    """Fewest connections whose simulated TPS reaches the target (None past the limit).

    The closed form is a lower bound: with group commit a commit that arrives during a
    sync waits for the next one, so N connections give less than N times one.
    """
    def reaches(n: int) -> bool:
        wl = Workload(**{**workload.to_dict(), "connections": n})
        return simulate(cfg, wl, profile, duration_s=duration_s, seed=seed).tps >= target

    lo, hi = lower - 1, lower
    while not reaches(hi):
        lo, hi = hi, hi * 2
        if hi > limit:
            return None
    while hi - lo > 1:  # reaches(hi) holds, reaches(lo) does not (or lo is the bound)
        mid = (lo + hi) // 2
        if reaches(mid):
            hi = mid
        else:
            lo = mid
    return hi
