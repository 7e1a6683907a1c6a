"""Fitting the simulator's Workload to what the server was seen doing.

From the observed deltas (per commit):
- ``redo_bytes_per_trx`` = Innodb_os_log_written / commits;
- ``pages_dirtied_per_trx`` = the larger of Innodb_pages_written / commits and
  (Innodb_buffer_pool_pages_flushed + growth of Innodb_buffer_pool_pages_dirty) /
  commits: over a short interval the page cleaner may not yet have written what the
  commits dirtied (and a page dirtied twice counts once);
- ``binlog_bytes_per_trx`` = Binlog_bytes_written / commits (MariaDB), else the
  simulator's default;
- ``growth_bytes_per_trx`` = the simulator's 400 B per inserted row × Innodb_rows_inserted
  per commit (a guess at row size: the server does not count file growth);
- ``connections`` = the average Threads_running during the interval (threads inside the
  server, our own poll excluded), or ``--connections``; the time a client spends outside
  the server is therefore not modelled (``client_us_per_trx`` = 0);
- ``cpu_us_per_trx`` = solved by bisection so that the simulated TPS at the server's
  current settings matches the observed commits/s (short runs, a capped number of steps).

If even zero CPU cannot reach the observed rate, the device profile is slower than the
server's real storage (or the concurrency is underestimated): the fit says so and the
predictions are then pessimistic.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from ..live.facts import ServerFacts
from ..live.sampling import Observed
from ..simulator import ServerConfig, Workload, simulate
from ..simulator.config import MiB
from ..simulator.flavors import get_flavor

DEFAULT_WORKLOAD = Workload()
TOLERANCE = 0.05          # |simulated - observed| / observed accepted
MAX_STEPS = 7
COMMITS_PER_RUN = 20_000  # simulated commits per fit run: bounds the time of one run


def _int_var(f: ServerFacts, name: str, default=None):
    try:
        return int(float(f.variables.get(name)))
    except (TypeError, ValueError):
        return default


def config_from_facts(f: ServerFacts, cpu_cores: int) -> tuple[ServerConfig, list[str]]:
    """The server's current settings as a simulator ServerConfig (and what was mapped)."""
    notes: list[str] = []
    flavor = get_flavor(f.sim_flavor)
    method = f.flush_method
    if method not in flavor.flush_methods:
        notes.append(f"innodb_flush_method={method} is simulated as fsync")
        method = "fsync"
    tc = f.trx_commit
    if tc == 3:
        notes.append("innodb_flush_log_at_trx_commit=3 (MariaDB) is simulated as 1")
        tc = 1
    if tc not in (0, 1, 2):
        tc = 1
    io_cap = max(100, f.io_capacity or 200)
    io_max = max(io_cap, f.io_capacity_max or 2 * io_cap)
    redo = max(8 * MiB, f.redo_capacity_bytes or 100 * MiB)
    bp = max(8 * MiB, f.buffer_pool_bytes or 128 * MiB)
    dw_pages = _int_var(f, "innodb_doublewrite_pages") or None
    buffering = str(f.variables.get("innodb_log_file_buffering", "")).upper()
    log_buffering = {"ON": True, "1": True, "OFF": False, "0": False}.get(buffering)
    cfg = ServerConfig(
        flavor=f.sim_flavor, innodb_flush_method=method,
        innodb_flush_log_at_trx_commit=tc,
        innodb_flush_log_at_timeout=min(2700.0, max(0.001, f.flush_log_at_timeout)),
        innodb_use_fdatasync=f.use_fdatasync, log_bin=f.log_bin,
        innodb_log_file_buffering=log_buffering,
        sync_binlog=max(0, f.sync_binlog),
        binlog_group_commit_sync_delay=max(0, _int_var(f, "binlog_group_commit_sync_delay", 0)),
        innodb_doublewrite=f.doublewrite_protects,
        innodb_doublewrite_pages=dw_pages if dw_pages and dw_pages > 0 else None,
        innodb_io_capacity=io_cap, innodb_io_capacity_max=io_max,
        innodb_redo_log_capacity=redo, innodb_buffer_pool_size=bp,
        innodb_max_dirty_pages_pct=float(_int_var(f, "innodb_max_dirty_pages_pct", 90) or 90),
        # 0 is meaningful (MariaDB's default: no pre-flushing), so no "or default" here
        innodb_max_dirty_pages_pct_lwm=float(_int_var(f, "innodb_max_dirty_pages_pct_lwm", 10)),
        innodb_adaptive_flushing_lwm=float(_int_var(f, "innodb_adaptive_flushing_lwm", 10)),
        cpu_cores=max(1, cpu_cores))
    cfg.validate()
    return cfg, notes


@dataclass
class Fit:
    config: ServerConfig
    workload: Workload
    observed_tps: float
    simulated_tps: float | None
    converged: bool
    steps: int
    sim_duration_s: float
    wall_s: float
    assumptions: list[str] = field(default_factory=list)
    source: str = "fit"      # "fit" (solved here) or "profile:NAME" (--workload, not fitted)

    def to_dict(self) -> dict:
        return {"source": self.source,
                "config": self.config.to_dict(), "workload": self.workload.to_dict(),
                "observed_tps": round(self.observed_tps, 3),
                "simulated_tps": (round(self.simulated_tps, 3)
                                  if self.simulated_tps is not None else None),
                "converged": self.converged, "steps": self.steps,
                "sim_duration_s": self.sim_duration_s, "wall_s": round(self.wall_s, 2),
                "assumptions": self.assumptions}


def workload_from_observed(o: Observed, connections: int | None = None
                           ) -> tuple[Workload, list[str]]:
    """Every Workload field but cpu_us_per_trx, from the deltas (see the module doc)."""
    a: list[str] = []
    if connections:
        conns = connections
        a.append(f"connections = {conns} (--connections)")
    elif o.threads_running_avg is not None:
        conns = max(1, round(o.threads_running_avg))
        a.append(f"connections = {conns}: average Threads_running "
                 f"{o.threads_running_avg:.2f} (threads inside the server; time outside it "
                 "is not modelled)")
    else:
        conns = 1
        a.append("connections = 1: Threads_running was not polled")
    redo = o.redo_bytes_per_commit
    if redo:
        a.append(f"redo_bytes_per_trx = {redo:.0f} (Innodb_os_log_written / commits)")
    else:
        redo = DEFAULT_WORKLOAD.redo_bytes_per_trx
        a.append(f"redo_bytes_per_trx = {redo} (default: no redo figure)")
    pages = o.page_writes_per_commit
    dirtied = o.pages_dirtied_per_commit
    if dirtied is not None and (pages is None or dirtied > pages):
        pages = dirtied
        a.append(f"pages_dirtied_per_trx = {pages:g} ((Innodb_buffer_pool_pages_flushed + "
                 "growth of Innodb_buffer_pool_pages_dirty) / commits: a page dirtied twice "
                 "in the interval counts once)")
    elif pages is not None:
        a.append(f"pages_dirtied_per_trx = {pages:g} (pages written / commits over the "
                 "interval; the page cleaner's timing makes this approximate)")
    else:
        pages = DEFAULT_WORKLOAD.pages_dirtied_per_trx
        a.append(f"pages_dirtied_per_trx = {pages:g} (default)")
    binlog = o.binlog_bytes_per_commit
    if binlog:
        a.append(f"binlog_bytes_per_trx = {binlog:.0f} (Binlog_bytes_written / commits)")
    else:
        binlog = DEFAULT_WORKLOAD.binlog_bytes_per_trx
        a.append(f"binlog_bytes_per_trx = {binlog} (default: not counted by this server or "
                 "binlog off)")
    rows = o.rows_inserted_per_commit
    if rows is not None:
        growth = DEFAULT_WORKLOAD.growth_bytes_per_trx * rows
        a.append(f"growth_bytes_per_trx = {growth:.0f} (Innodb_rows_inserted / commits x "
                 "400 B per row, assumed)")
    else:
        growth = DEFAULT_WORKLOAD.growth_bytes_per_trx
        a.append(f"growth_bytes_per_trx = {growth:.0f} (default: this server does not count "
                 "inserted rows)")
    a.append(f"tablespaces = {DEFAULT_WORKLOAD.tablespaces} (default: files written are not "
             "counted by the server)")
    wl = Workload(connections=conns, cpu_us_per_trx=0.0, client_us_per_trx=0.0,
                  redo_bytes_per_trx=max(1, int(round(redo))),
                  binlog_bytes_per_trx=max(0, int(round(binlog))),
                  pages_dirtied_per_trx=max(0.0, float(pages)), growth_bytes_per_trx=growth)
    wl.validate()
    return wl, a


def sim_duration_for(tps: float) -> float:
    """Short runs: about COMMITS_PER_RUN commits, between 0.5 and 3 simulated seconds."""
    if tps <= 0:
        return 3.0
    return round(min(3.0, max(0.5, COMMITS_PER_RUN / tps)), 2)


def fit_workload(facts: ServerFacts, observed: Observed, profile, connections: int | None = None,
                 cpu_cores: int | None = None, seed: int = 1, budget_s: float = 10.0,
                 clock=time.monotonic) -> Fit:
    """Solve cpu_us_per_trx so the simulated TPS at the current config matches observed."""
    t0 = clock()
    base, assumptions = workload_from_observed(observed, connections)
    cores = cpu_cores or os.cpu_count() or 2
    cfg, notes = config_from_facts(facts, cores)
    assumptions += notes
    assumptions.append(f"cpu_cores = {cores}" + (" (this host)" if not cpu_cores else ""))
    target = observed.commits_per_s
    dur = sim_duration_for(target)

    def run(cpu_us: float) -> float:
        wl = Workload(**{**base.to_dict(), "cpu_us_per_trx": cpu_us})
        return simulate(cfg, wl, profile, duration_s=dur, seed=seed).tps

    steps = 1
    tps0 = run(0.0)
    if tps0 <= target * (1 + TOLERANCE):
        # The device model alone is slower than the server was. Attribute the whole time a
        # connection spends per transaction to CPU instead: the CPU then allows exactly
        # the observed rate, so no prediction can exceed what was observed.
        cpu = min(base.connections, cores) * 1e6 / target
        tps1 = run(cpu)
        steps += 1
        assumptions.append(
            f"the observed {target:,.1f} commits/s is beyond what the model gives on "
            f"{profile.name} at {base.connections} connection(s) even with no CPU cost "
            f"({tps0:,.1f}/s): the profile's device is slower than this server's storage, "
            "or the concurrency is higher (--connections). cpu_us_per_trx is set to "
            f"{cpu:.1f} (all of a connection's time per transaction), so the predictions "
            "are capped at the observed rate; they show the profile's device, not this "
            "server's storage")
        wl = Workload(**{**base.to_dict(), "cpu_us_per_trx": round(cpu, 3)})
        return Fit(cfg, wl, target, tps1, False, steps, dur, clock() - t0, assumptions)
    lo, hi = 0.0, base.connections * 1e6 / target  # at hi, CPU alone limits TPS to target
    best_cpu, best_tps = 0.0, tps0
    while steps < MAX_STEPS and clock() - t0 < budget_s:
        mid = (lo + hi) / 2
        tps = run(mid)
        steps += 1
        if abs(tps - target) < abs(best_tps - target):
            best_cpu, best_tps = mid, tps
        if abs(tps - target) <= TOLERANCE * target:
            break
        if tps > target:
            lo = mid
        else:
            hi = mid
    converged = abs(best_tps - target) <= TOLERANCE * target
    assumptions.append(f"cpu_us_per_trx = {best_cpu:.1f}: solved so the simulated TPS "
                       f"({best_tps:,.1f}) matches the observed ({target:,.1f})"
                       + ("" if converged else " as closely as the step budget allowed"))
    wl = Workload(**{**base.to_dict(), "cpu_us_per_trx": round(best_cpu, 3)})
    return Fit(cfg, wl, target, best_tps, converged, steps, dur, clock() - t0, assumptions)


def workload_from_profile(facts: ServerFacts, observed: Observed, profile, wprofile,
                          connections: int | None = None, cpu_cores: int | None = None,
                          seed: int = 1, clock=time.monotonic) -> Fit:
    """The workload of a workload profile (``--workload``: e.g. ``lab calibrate``'s)
    instead of a fit: its per-transaction costs as they are, at the connections given
    (or the average Threads_running), from the profile's calibration at that count
    (``WorkloadProfile.workload_at``, as simulate and the lab pick it). One simulation of
    the current settings shows how the profile's workload compares with the observed
    rate; nothing is solved."""
    t0 = clock()
    base, assumptions = workload_from_observed(observed, connections)
    conns = base.connections
    assumptions = [a for a in assumptions if a.startswith("connections")]
    cores = cpu_cores or os.cpu_count() or 2
    cfg, notes = config_from_facts(facts, cores)
    assumptions += notes
    assumptions.append(f"cpu_cores = {cores}" + (" (this host)" if not cpu_cores else ""))
    wl, source = wprofile.workload_at(conns)
    assumptions.append(f"workload from the profile {source} ({wprofile.title}), not "
                       f"fitted: cpu_us_per_trx = {wl.cpu_us_per_trx:g}, client_us_per_trx = "
                       f"{wl.client_us_per_trx:g}, redo_bytes_per_trx = "
                       f"{wl.redo_bytes_per_trx}, pages_dirtied_per_trx = "
                       f"{wl.pages_dirtied_per_trx:g}, growth_bytes_per_trx = "
                       f"{wl.growth_bytes_per_trx:g}")
    target = observed.commits_per_s
    dur = sim_duration_for(target)
    tps = simulate(cfg, wl, profile, duration_s=dur, seed=seed).tps
    close = target > 0 and abs(tps - target) <= TOLERANCE * target
    if target > 0 and not close:
        assumptions.append(f"with this workload the model gives {tps:,.1f} commits/s at the "
                           f"current settings against {target:,.1f} observed: the "
                           "predicted effects start from there")
    return Fit(cfg, wl, target, tps, True, 1, dur, clock() - t0, assumptions,
               source=f"profile:{wprofile.name}")
