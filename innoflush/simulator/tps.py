"""`innoflush tps`: the commits per second one connection can get, per durability setting.

One connection cannot share a sync with anybody: each transaction pays its own work (the
server's CPU, the client and the wire), then its commit's redo write and sync, and with
the binlog its binlog write and sync, one after another. So the per-connection rate is
1 / (sum of those) — an 18 ms fsync gives about 55 commits/s — and a target rate needs at
least target / rate connections, which group commit then lets share each sync. Where a
sync is in the commit path the rate is bound by the device; where none is (trx_commit=2
or 0 without a binlog sync) it is bound by the CPU, and the workload's CPU is what it is:
never a device-only figure. Closed form first; a short simulation of the same setting,
workload and profile (what `simulate --connections 1` runs) checks it, and a row whose
simulation differs by more than TOLERANCE says why.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import simpy

from ..profiles import DeviceProfile
from ..stats import SHAPE_MEAN_ONLY
from .config import ServerConfig, Workload
from .device import Device, Sampler, SumSampler
from .flavors import PAGE_BYTES, get_flavor
from .redo import REDO_BLOCK
from .results import SimResult, simulate

# How far the simulation at one connection may stray from the closed form before the row
# says why (page flushing, checkpoint stalls, other syncs on the device).
TOLERANCE = 0.10
# the check at one connection simulates at least this many commits (at most CHECK_MAX_S)
CHECK_COMMITS = 2000
CHECK_MAX_S = 60.0


@dataclass(frozen=True)
class DurabilitySetting:
    key: str
    title: str
    trx_commit: int
    log_bin: bool
    sync_binlog: int
    use_fdatasync: bool

    def config(self, flavor: str, cpu_cores: int = ServerConfig.cpu_cores) -> ServerConfig:
        return ServerConfig(flavor=flavor, innodb_flush_log_at_trx_commit=self.trx_commit,
                            log_bin=self.log_bin, sync_binlog=self.sync_binlog,
                            innodb_use_fdatasync=self.use_fdatasync, cpu_cores=cpu_cores)

    @property
    def syncs_at_commit(self) -> bool:
        """A commit waits for a sync: the redo's (trx_commit=1) or the binlog's."""
        return self.trx_commit == 1 or (self.log_bin and self.sync_binlog == 1)

    @property
    def durable(self) -> bool:
        """Every commit's redo (and binlog, when on) is on stable storage when COMMIT
        returns: trx_commit=1. With trx_commit=2 an OS crash or power loss loses up to a
        second of commits, even those the synced binlog has."""
        return self.trx_commit == 1 and (not self.log_bin or self.sync_binlog == 1)


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

# The device alone: no CPU, no client, no pages. For the Python API's callers who want
# the device's ceiling; the command's default is the built-in workload (DEFAULT_WORKLOAD).
COMMIT_ONLY = Workload(connections=1, cpu_us_per_trx=0.0, client_us_per_trx=0.0,
                       pages_dirtied_per_trx=0.0, growth_bytes_per_trx=0.0)


@dataclass(frozen=True)
class CommitPath:
    """One transaction at one connection, its parts in series (seconds)."""

    work_s: float     # the server's CPU, the client and the wire, the host's cost of syncs
    device_s: float   # the writes and syncs the transaction waits for
    notes: tuple[str, ...]
    # device_s with the means of the distributions the simulation draws from
    device_sampled_s: float = 0.0

    @property
    def total_s(self) -> float:
        return self.work_s + self.device_s


def commit_path(profile: DeviceProfile, setting: DurabilitySetting, flavor: str,
                workload: Workload) -> CommitPath:
    """Mean time of one transaction at one connection: its work and its commit's writes
    and syncs in series, nothing shared. The host's cost of a sync (the workload's
    sync_cpu_us, sleep_cpu_us, wakeup_us, and the CPU of a transaction whose commit
    sleeps) is counted where a sync is in the commit path, as the simulation charges it;
    the syncs of tablespace extensions are spread over the transactions that grow it."""
    fl = get_flavor(flavor)
    dev = Device(simpy.Environment(), profile, rng=None)  # means only: no sampling
    wl = workload
    redo = wl.redo_bytes_per_trx
    sync_op = "fdatasync" if fl.use_fdatasync(setting.use_fdatasync) else "fsync"
    sleeps = setting.syncs_at_commit
    cpu_us = max(wl.cpu_us_per_trx, wl.cpu_us_per_trx_sleeping) if sleeps \
        else wl.cpu_us_per_trx
    client_cpu_us = max(wl.client_cpu_us_per_trx, wl.client_cpu_us_per_trx_sleeping) \
        if sleeps else wl.client_cpu_us_per_trx
    client_us = wl.client_us_per_trx - wl.client_cpu_us_per_trx + client_cpu_us
    work = (cpu_us + client_us) * 1e-6
    device = sampled = 0.0

    def wait(component: str, op: str, size: int, direct: bool, times: float = 1.0) -> None:
        nonlocal device, sampled
        s = dev.sampler(component, op, size, direct)
        device += times * s.mean_s
        sampled += times * _sampled_mean_s(s)

    direct = fl.redo_is_direct(setting.trx_commit, None)
    wait("write", "none", redo, direct)
    if fl.redo_last_block_apart:
        # MySQL 8.0+: the incomplete last log block is a write of its own whenever the
        # commit's redo crosses a block (redo.py: redo_write)
        wait("write", "none", REDO_BLOCK, direct, min(1.0, redo / REDO_BLOCK))
    syncs = 0
    if setting.trx_commit == 1:
        wait("sync", sync_op, redo, direct)
        syncs += 1
    if setting.log_bin:
        binlog = max(512, wl.binlog_bytes_per_trx)
        wait("write", "none", binlog, False)
        if setting.sync_binlog == 1:
            wait("sync", "fdatasync", binlog, False)
            syncs += 1
    if wl.growth_bytes_per_trx > 0:
        # O_DIRECT (the simulation's default flush method): the data files are direct
        data_direct = fl.io_policy(ServerConfig.innodb_flush_method).data_direct
        per_trx = wl.growth_bytes_per_trx / wl.extend_bytes * fl.extension_syncs
        wait("sync", sync_op, PAGE_BYTES, data_direct, per_trx)
    if sleeps:
        work += (syncs * (wl.sync_cpu_us + wl.wakeup_us) + wl.sleep_cpu_us) * 1e-6
    elif wl.round_trip_floor_us:   # as the simulation's lone connection (server.py)
        work = max(work, wl.statements_per_trx * wl.round_trip_floor_us * 1e-6)
    return CommitPath(work, device, tuple(sorted(dev.notes)), sampled)


def _sampled_mean_s(s: Sampler | SumSampler) -> float:
    """The mean of the distribution the simulation draws a latency from: the profile's
    percentiles joined linearly, which a heavy tail puts above the measured mean."""
    if isinstance(s, SumSampler):
        return _sampled_mean_s(s.a) + _sampled_mean_s(s.b)
    if s.summary.shape == SHAPE_MEAN_ONLY:
        return s.mean_s
    ps, vs = s.summary.knots()
    return float(np.sum(np.diff(ps) * (vs[1:] + vs[:-1]) / 2)) * s.factor * 1e-9


def commit_latency_s(profile: DeviceProfile, setting: DurabilitySetting, flavor: str,
                     workload: Workload = COMMIT_ONLY) -> tuple[float, list[str]]:
    """Mean time of one transaction at one connection (commit_path's total)."""
    path = commit_path(profile, setting, flavor, workload)
    return path.total_s, list(path.notes)


def host_cpu_s(setting: DurabilitySetting, workload: Workload) -> float:
    """CPU a transaction takes on the host's cores (server and a client on the host)."""
    wl = workload
    if setting.syncs_at_commit:
        return (max(wl.cpu_us_per_trx, wl.cpu_us_per_trx_sleeping)
                + max(wl.client_cpu_us_per_trx, wl.client_cpu_us_per_trx_sleeping)
                + wl.sleep_cpu_us + wl.sleep_side_cpu_us) * 1e-6
    return (wl.cpu_us_per_trx + wl.client_cpu_us_per_trx) * 1e-6


def tps_table(profile: DeviceProfile, flavor: str = "mysql-8.0",
              target_tps: float | None = None, workload: Workload | None = None,
              check: bool = True, check_duration_s: float = 3.0, seed: int = 1,
              cpu_cores: int = ServerConfig.cpu_cores,
              workload_at: Callable[[int], Workload] | None = None) -> dict:
    """Per durability setting: the transaction's time at one connection, the rate per
    connection and what bounds it, connections for the target, and (check=True) the
    simulated rate at 1 connection — compared with the closed form — and at that many
    connections.

    workload: the one-connection workload (default: the built-in DEFAULT_WORKLOAD's);
    workload_at(n): the workload at n connections (default: `workload` at n).
    """
    if workload is None:
        from .workload_profile import default_workload
        wp = default_workload()
        workload = wp.workload_at(1)[0]
        workload_at = workload_at or (lambda n: wp.workload_at(n)[0])
    base = replace(workload, connections=1)
    at = workload_at or (lambda n: replace(base, connections=n))
    rows = []
    notes: set[str] = set()
    for s in SETTINGS:
        if s.use_fdatasync and not get_flavor(flavor).has_use_fdatasync_variable:
            continue  # MariaDB always uses fdatasync: the fsync rows already are that
        path = commit_path(profile, s, flavor, base)
        notes.update(path.notes)
        row = _closed_form_row(s, path, base, cpu_cores)
        per_conn = row["tps_per_connection"]
        need = None
        if target_tps:
            ceiling = row["cpu_ceiling_tps"]
            if per_conn is not None and (ceiling is None or target_tps <= ceiling):
                need = max(1, math.ceil(target_tps / per_conn - 1e-9))
            row["connections_for_target"] = need
        if check:
            cfg = s.config(flavor, cpu_cores)
            # enough simulated time for ~30k commits, no more: fast settings stay instant;
            # and for a slow device at least CHECK_COMMITS at one connection (its latency's
            # tail makes a mean of fewer wander by several per cent)
            rate = per_conn or 1.0 / max(path.total_s, 1e-6)
            dur = min(check_duration_s, max(0.5, 30_000 / (rate * (need or 1))))
            dur1 = min(CHECK_MAX_S, max(dur, CHECK_COMMITS / rate))
            sim1 = _simulate(cfg, base, profile, dur1, seed)
            row["simulated_tps_1_connection"] = round(sim1.tps, 2)
            row.update(_agreement(cfg, base, profile, path, sim1, dur1, seed))
            if need and need > 1:
                simn = _simulate(cfg, at(need), profile, dur, seed)
                row["simulated_tps_at_target_connections"] = round(simn.tps, 2)
            if target_tps:
                row["simulated_connections_for_target"] = None if need is None else \
                    _simulated_connections(cfg, at, profile, target_tps, need, dur, seed)
        rows.append(row)
    return {"profile": profile.name, "title": profile.title, "flavor": flavor,
            "target_tps": target_tps, "cpu_cores": cpu_cores,
            "tolerance_pct": round(TOLERANCE * 100), "workload": base.to_dict(),
            "settings": rows, "notes": sorted(notes)}


def _closed_form_row(s: DurabilitySetting, path: CommitPath, wl: Workload,
                     cpu_cores: int) -> dict:
    cpu_s = host_cpu_s(s, wl)
    # no sync at commit: the device only takes a page-cache write, the rate is the CPU's
    bound = "device" if s.syncs_at_commit and path.device_s >= path.work_s else "cpu"
    # A CPU-bound rate needs the workload's CPU: without any, there is no estimate (the
    # page-cache write alone would give hundreds of thousands a second).
    estimable = s.syncs_at_commit or path.work_s > 0
    per_conn = 1.0 / path.total_s if estimable and path.total_s > 0 else None
    return {"setting": s.key, "title": s.title, "durable": s.durable, "bound": bound,
            "commit_latency_ms": round(path.total_s * 1e3, 4),
            "device_ms": round(path.device_s * 1e3, 4),
            "work_ms": round(path.work_s * 1e3, 4),
            "tps_per_connection": round(per_conn, 2) if per_conn is not None else None,
            "cpu_ceiling_tps": round(cpu_cores / cpu_s, 1) if cpu_s > 0 else None}


def _simulate(cfg: ServerConfig, wl: Workload, profile: DeviceProfile, duration_s: float,
              seed: int) -> SimResult:
    # a fixed warm-up, as `simulate`'s: the page cleaner has settled by then
    return simulate(cfg, wl, profile, duration_s=duration_s, seed=seed,
                    warmup_s=min(2.0, max(0.5, duration_s)))


def _agreement(cfg: ServerConfig, wl: Workload, profile: DeviceProfile, path: CommitPath,
               sim: SimResult, duration_s: float, seed: int) -> dict:
    """The simulation at one connection against the closed form; when they differ by more
    than TOLERANCE, why: what the simulation has that the serial sum leaves out — found by
    taking it away and simulating again where it can be taken away."""
    closed = 1.0 / path.total_s if path.total_s > 0 else math.inf
    diff = sim.tps / closed - 1.0 if math.isfinite(closed) else -1.0
    out: dict = {"simulated_vs_closed_form_pct": round(100 * diff, 1)
                 if math.isfinite(closed) else None,
                 "agrees": abs(diff) <= TOLERANCE, "why": None}
    if out["agrees"]:
        return out
    reasons = []
    per_s = sim.syncs_per_s
    page_syncs = per_s["data_file_syncs"] + per_s["dblwr_syncs"]
    if sim.checkpoint_stall_s > 0.01 * duration_s:
        reasons.append(f"checkpoint stalls ({sim.checkpoint_stall_s:.2f} s of "
                       f"{duration_s:g} s waiting for redo space: page flushing fell behind)")
    if wl.pages_dirtied_per_trx > 0:
        quiet = _simulate(cfg, replace(wl, pages_dirtied_per_trx=0.0, hot_page_share=0.0),
                          profile, duration_s, seed)
        if abs(quiet.tps / closed - 1.0) < abs(diff) / 2:
            reasons.append(
                f"page flushing: the page cleaner's writes and {page_syncs:,.0f} data-file "
                f"syncs/s share the device with the commits (without them the simulation "
                f"gives {quiet.tps:,.0f}/s)")
    sampled = path.work_s + path.device_sampled_s
    if not reasons and path.device_sampled_s > path.device_s * 1.05 \
            and abs(sim.tps * sampled - 1.0) < abs(diff) / 2:
        reasons.append(
            f"the device's latency as the simulation draws it (the profile's percentiles "
            f"joined linearly) averages {path.device_sampled_s / path.device_s - 1:.0%} "
            f"above the measured mean: a heavy tail; with that mean the serial sum gives "
            f"{1 / sampled:,.0f}/s")
    # syncs nobody's commit waits for, on the device's one flush channel all the same
    background = (per_s["checkpoint_syncs"] + page_syncs + per_s["extension_syncs"]
                  + (per_s["redo_syncs"] if cfg.innodb_flush_log_at_trx_commit != 1 else 0.0))
    if not reasons and diff < 0 and background > 0 and (
            cfg.innodb_flush_log_at_trx_commit == 1 or (cfg.log_bin and cfg.sync_binlog)):
        reasons.append(
            f"other syncs queue with the commit's on the device's flush channel "
            f"({background:,.1f}/s: the redo's background syncs, checkpoints, data-file and "
            f"extension syncs; the channel {100 * sim.device_flush_util:.0f}% busy)")
    if not reasons and sim.cpu_util > 0.5:
        reasons.append(f"CPU queueing: the cores are {100 * sim.cpu_util:.0f}% busy")
    if not reasons:
        reasons.append(f"the simulated latencies scatter around the means the serial sum "
                       f"uses ({sim.commits:,} commits simulated; data-file syncs "
                       f"{page_syncs:,.0f}/s, extensions {per_s['extension_syncs']:,.1f}/s)")
    out["why"] = "; ".join(reasons)
    return out


def _simulated_connections(cfg: ServerConfig, at: Callable[[int], Workload],
                           profile: DeviceProfile, target: float, lower: int,
                           duration_s: float, seed: int, limit: int = 1024) -> int | None:
    """Fewest connections whose simulated TPS reaches the target (None past the limit).

    The closed form is a lower bound: with group commit a commit that arrives during a
    sync waits for the next one, so N connections give less than N times one.
    """
    def reaches(n: int) -> bool:
        return _simulate(cfg, at(n), profile, duration_s, seed).tps >= target

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
