"""The predicted effect of a change: current vs changed config, simulated, with a range.

Both runs use the measured workload, the device profile, the same seed (common random
numbers: the difference is the setting's, not the dice's) and a short simulated
duration. ``Predictor.prefetch`` runs every simulation an advise needs in one
``SimExecutor.map`` (innoflush.executor: a local process pool or a Dask cluster); each
run's arguments carry all its inputs, so the figures are the same wherever it ran.

The range comes from the same pair simulated on a workload whose measured costs are
taken lower and higher (``SPREAD``: the CPU and outside time per transaction,
which the measurement knows to within about that much, and which change a little with
the setting itself — a commit that no longer sleeps costs less CPU; and a lone
connection's round-trip floor at the quartiles of the days it was measured on). The
interval is the model's own error on validated changes (error_bands.py): wider, and what
to expect.

Where the simulated seconds start short of the point at which MariaDB's page cleaner
starts (page_cleaner_horizon), the changed setting is also simulated settled there
(``settled``): the data fsyncs/s a server kept at it has, which the few seconds after
the state advise saw leave out or only partly hold.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import replace

from ..executor import InProcessExecutor, SimExecutor
from ..simulator import ServerConfig, ServerStart, Workload, simulate
from ..simulator.flavors import PAGE_BYTES, get_flavor
from ..simulator.redo import capacity_points
from .error_bands import tps_interval
from .fit import Fit
from .round_trip import FLOOR_QUARTILES
from .rules import Finding

# (cpu factor, client time factor, the sleeping commit's CPU stays with every commit,
# round-trip floor factor) of the optimistic and the pessimistic variant
SPREAD = ((0.9, 0.95, False, FLOOR_QUARTILES[0]), (1.05, 1.05, True, FLOOR_QUARTILES[1]))
# a settled run covers a few of the page cleaner's one-second passes
SETTLED_MIN_S = 3.0


def metrics(r) -> dict:
    d = r.duration_s or 1.0
    return {
        "tps": round(r.tps, 2),
        "commit_latency_p50_ms": r.commit_latency_ms.get("p50"),
        "commit_latency_p99_ms": r.commit_latency_ms.get("p99"),
        "data_fsyncs_per_s": round(r.status.get("Innodb_data_fsyncs", 0) / d, 2),
        "syncs_per_s": dict(r.syncs_per_s),
    }


def _pct(a, b) -> float | None:
    if a in (None, 0) or b is None:
        return None
    return round(100.0 * (b - a) / a, 1)


def _change(cur: dict, rec: dict) -> dict:
    return {"tps_pct": _pct(cur["tps"], rec["tps"]),
            "commit_latency_p50_pct": _pct(cur["commit_latency_p50_ms"],
                                           rec["commit_latency_p50_ms"]),
            "commit_latency_p99_pct": _pct(cur["commit_latency_p99_ms"],
                                           rec["commit_latency_p99_ms"]),
            "data_fsyncs_per_s_pct": _pct(cur["data_fsyncs_per_s"], rec["data_fsyncs_per_s"])}


def _variant(wl: Workload, cpu: float, client: float, commit_keeps: bool,
             floor: float = 1.0) -> Workload:
    """The workload with its costs taken lower or higher; commit_keeps: what a sleeping
    commit costs in CPU is spent by every commit, sleeping or not (a change that takes
    the sync off the commit then saves no CPU); floor: the factor on a lone connection's
    round-trip floor (advisor/round_trip.py)."""
    client_us = wl.client_us_per_trx * client
    commit = wl.commit_cpu_us + (wl.sleep_cpu_us if commit_keeps else 0.0)
    return replace(wl, cpu_us_per_trx=wl.cpu_us_per_trx * cpu, client_us_per_trx=client_us,
                   commit_cpu_us=commit * cpu,
                   sleep_cpu_us=0.0 if commit_keeps else wl.sleep_cpu_us * cpu,
                   client_cpu_us_per_trx=min(client_us, wl.client_cpu_us_per_trx * cpu),
                   round_trip_floor_us=wl.round_trip_floor_us * floor)


def _run_case(case: tuple) -> dict:
    """One simulation as an executor runs it (top level: it travels to other processes):
    (config, workload, profile, duration, seed, start) -> its metrics."""
    cfg, wl, profile, duration_s, seed, start = case
    return metrics(simulate(cfg, wl, profile, duration_s=duration_s, seed=seed, start=start))


class Predictor:
    """executor: where the simulations run (default: one after the other in this
    process); prefetch() batches them, run() and predict() read them back."""

    def __init__(self, fit: Fit, profile, seed: int = 1, duration_s: float | None = None,
                 ranges: bool = True, executor: SimExecutor | None = None):
        if fit.workload is None:
            raise ValueError("no workload to predict with")
        self.fit = fit
        self.profile = profile
        self.seed = seed
        self.duration_s = duration_s or max(fit.sim_duration_s, 1.0)
        self.workloads = [fit.workload] + ([_variant(fit.workload, *v) for v in SPREAD]
                                           if ranges else [])
        self.executor = executor or InProcessExecutor()
        # (changes_key, variant[, "settled"]) -> metrics
        self._runs: dict[tuple, dict] = {}
        self._lock = threading.Lock()

    def _case(self, changes: dict, variant: int, settled: bool = False) -> tuple:
        if "innodb_flush_log_at_trx_commit" in changes:
            # MariaDB switches innodb_log_file_buffering on by itself with trx_commit=2
            # (MDEV-28766) unless my.cnf says otherwise, and off again at 1: the value
            # read at the current setting is its choice for that setting, not the next
            changes = {"innodb_log_file_buffering": None, **changes}
        cfg = replace(self.fit.config, **changes)
        wl = self.workloads[variant]
        if settled:
            return (cfg, wl, self.profile, max(self.duration_s, SETTLED_MIN_S), self.seed,
                    settled_start(cfg, wl, self.fit.start))
        return (cfg, wl, self.profile, self.duration_s, self.seed, self.fit.start)

    def prefetch(self, changes_list: Iterable[dict]) -> None:
        """Simulate the current settings and each of these changes, at every workload
        variant, in one executor map (those already run are not run again)."""
        keys: list[tuple[tuple, int]] = []
        cases = []
        with self._lock:
            for changes in [{}, *changes_list]:
                for v in range(len(self.workloads)):
                    key = (changes_key(changes), v)
                    if key not in self._runs and key not in keys:
                        keys.append(key)
                        cases.append(self._case(changes, v))
        if not cases:
            return
        results = self.executor.map(_run_case, cases)
        with self._lock:
            self._runs.update(zip(keys, results, strict=True))

    def run(self, changes: dict, variant: int = 0, settled: bool = False) -> dict:
        key = (changes_key(changes), variant) + (("settled",) if settled else ())
        with self._lock:
            known = self._runs.get(key)
        if known is not None:
            return known
        (result,) = self.executor.map(_run_case, [self._case(changes, variant, settled)])
        with self._lock:
            return self._runs.setdefault(key, result)

    def current_at(self, variant: int) -> dict:
        return self.run({}, variant)

    @property
    def current(self) -> dict:
        return self.current_at(0)

    def predict(self, changes: dict) -> dict:
        rec = self.run(changes)
        change = _change(self.current, rec)
        tps = [change["tps_pct"]]
        fsyncs = [change["data_fsyncs_per_s_pct"]]
        for v in range(1, len(self.workloads)):
            c = _change(self.current_at(v), self.run(changes, v))
            tps.append(c["tps_pct"])
            fsyncs.append(c["data_fsyncs_per_s_pct"])
        now = {k: getattr(self.fit.config, k, None) for k in changes}
        cfg, wl, _, duration_s, _, start = self._case(changes, 0)   # the run behind rec
        horizon = page_cleaner_horizon(cfg, wl, start, rec["tps"], duration_s)
        return {"current": self.current, "recommended": rec, "change": change,
                "horizon": horizon,
                "settled": self.settled(changes) if horizon else None,
                "range": {"tps_pct": _span(tps), "data_fsyncs_per_s_pct": _span(fsyncs)},
                "interval": tps_interval(now, changes, change["tps_pct"],
                                         connections=getattr(self.fit.workload,
                                                             "connections", None)),
                "sim": {"profile": self.profile.name, "duration_s": self.duration_s,
                        "seed": self.seed, "changes": changes,
                        "fit_converged": self.fit.converged}}

    def settled(self, changes: dict) -> dict:
        """The setting once a server kept at it has settled: simulated from the async
        point (settled_start), its page cleaner passing every second. A prediction's
        own figures are those of the seconds after the state advise saw; where they start
        short of that point (page_cleaner_horizon) this is the data fsyncs/s to keep."""
        cfg, wl, _, duration_s, _, start = self._case(changes, 0, settled=True)
        m = self.run(changes, 0, settled=True)
        return {"tps": m["tps"], "data_fsyncs_per_s": m["data_fsyncs_per_s"],
                "syncs_per_s": m["syncs_per_s"], "duration_s": duration_s,
                "checkpoint_age_bytes": start.checkpoint_age,
                "dirty_pages": start.dirty_pages}


def async_point_bytes(cfg: ServerConfig) -> int:
    """The checkpoint age at which the page cleaner must flush: the async point of the
    config's redo capacity, as its flavor has it (redo.capacity_points)."""
    _, age, _, _ = capacity_points(get_flavor(cfg.flavor), cfg.innodb_redo_log_capacity)
    return int(age)


def settled_start(cfg: ServerConfig, wl: Workload, now: ServerStart | None) -> ServerStart:
    """Where a MariaDB server with innodb_max_dirty_pages_pct_lwm=0 settles under a
    steady load: the checkpoint age at the page cleaner's async point (its passes keep
    it there, and it is awake). In the flush list: the dirty pages advise saw (``now``;
    nothing flushes them before that point), and those the workload dirties for the
    first time over the redo still to come, no more than innodb_max_dirty_pages_pct of
    the buffer pool."""
    async_age = async_point_bytes(cfg)
    age0, dirty0 = (now.checkpoint_age, now.dirty_pages) if now else (0, 0)
    trx = max(async_age - age0, 0) / max(wl.redo_bytes_per_trx, 1)
    cap = cfg.innodb_buffer_pool_size // PAGE_BYTES * cfg.innodb_max_dirty_pages_pct / 100
    return ServerStart(checkpoint_age=int(async_age), cleaner_active=True,
                       dirty_pages=int(min(dirty0 + trx * wl.pages_dirtied_per_trx, cap)))


def page_cleaner_horizon(cfg: ServerConfig, wl: Workload | None, start: ServerStart | None,
                         tps: float, duration_s: float) -> dict | None:
    """Where a prediction's data fsyncs stop holding: MariaDB's page cleaner, with
    innodb_max_dirty_pages_pct_lwm=0, sleeps until the checkpoint age reaches its async
    point, then passes every second (and syncs the files it wrote). A prediction
    simulates the seconds after the state advise saw; if they start short of that point,
    a server kept at the setting gets there later (or partway through them: their figures
    then average seconds without the cleaner and seconds with it), unless something else
    flushes pages first (its buffer pool running short of free pages): {async point, the
    age at the simulated window's start and end, the predicted redo rate, seconds to the
    point at that rate, whether the window reaches it} (bytes, bytes/s). None: another
    flavor, a low-water mark set, no redo, or a page cleaner already at work (or an age
    past the point) when advise looked: the window's figures are the cleaner's."""
    flavor = get_flavor(cfg.flavor)
    if (not flavor.mariadb_page_cleaner or cfg.innodb_max_dirty_pages_pct_lwm
            or wl is None or tps <= 0 or (start is not None and start.cleaner_active)):
        return None
    rate = tps * wl.redo_bytes_per_trx
    async_age = async_point_bytes(cfg)
    age0 = start.checkpoint_age if start else 0
    if age0 >= async_age:
        return None
    end = age0 + rate * duration_s
    # A window that crosses the point still gets a horizon: its figures reach the point
    # only in their last fraction of a second, so they are nearly all of a server
    # without a page cleaner, and taken for the settled server's they under-priced the
    # data fsyncs after the change
    # (docs/validation/notebook/2026-11-29-window-that-crosses-the-async-point.md).
    return {"async_point_bytes": async_age, "age_at_start_bytes": age0,
            "age_at_end_bytes": round(end),
            "redo_bytes_per_s": round(rate), "seconds_to_async_point":
            round((async_age - age0) / rate, 1), "reached_in_window": end >= async_age}


def _span(values: list[float | None]) -> list[float] | None:
    vals = [v for v in values if v is not None]
    return [min(vals), max(vals)] if vals else None


def predict_findings(findings: list[Finding], predictor: Predictor,
                     known: dict | None = None) -> dict | None:
    """Fill each finding's ``predicted`` (from ``known``: changes -> prediction already
    made for a candidate, when there is one); return the prediction of all of them
    together, or None when fewer than two are simulated."""
    combined: dict = {}
    known = known or {}
    for f in findings:
        if f.sim_changes:
            key = changes_key(f.sim_changes)
            f.predicted = known.get(key) or predictor.predict(f.sim_changes)
            combined.update(f.sim_changes)
    if len([f for f in findings if f.sim_changes]) > 1:
        return predictor.predict(combined)
    return None


def findings_changes(findings: list[Finding]) -> list[dict]:
    """The changes predict_findings simulates for these findings: each one's, and all of
    them together when there are two or more."""
    out = [f.sim_changes for f in findings if f.sim_changes]
    if len(out) > 1:
        combined: dict = {}
        for ch in out:
            combined.update(ch)
        out.append(combined)
    return out


def changes_key(changes: dict) -> tuple:
    return tuple(sorted(changes.items()))
