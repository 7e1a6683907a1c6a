"""The simulator's Workload from what the server was seen doing — measured, then checked.

Every input is read, not solved (advisor/measured.py turns what innoflush.live.workload
measured, each with its source, and the counter deltas into the simulator's Workload).

The model then has to **explain** what it saw: simulated at the server's current
settings, it must reproduce the observed commit rate, commits per redo sync, data fsyncs
per second and page writes per second within ``TOLERANCES``. When it does not, or an
essential input is unknown, the fit says why, and the advisor prints no predicted number
(``Fit.explained``). A fit that needs a knob turned to match would hide exactly the
mismatch the user needs to see: a device profile that is not this server's storage, a
bottleneck the model does not have (locks, a thread pool), connections we cannot see.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace

from ..live.evidence import Input, WorkloadEvidence
from ..live.facts import ServerFacts
from ..live.observed import Observed
from ..live.sampling import start_state
from ..measure.facts import completion_cores, gather_facts
from ..simulator import ServerConfig, ServerStart, Workload, simulate
from ..simulator.config import MiB
from ..simulator.flavors import get_flavor
from .measured import measured_workload

COMMITS_PER_RUN = 20_000  # simulated commits per run: bounds the time of one run
# how far the model may be from what was observed and still be said to explain it
TOLERANCES = {"tps": 0.15, "commits_per_redo_sync": 0.30, "data_fsyncs_per_s": 0.35,
              "page_writes_per_s": 0.50}
# below these the figure is noise-sized: an error in % says nothing (per second)
NOISE_FLOOR = {"data_fsyncs_per_s": 5.0, "page_writes_per_s": 50.0}
# the device as the server sees it: a profile whose commits wait within this of the
# server's own is taken as it is; beyond SCALE_LIMIT either way it is not this storage
SCALE_KEEP = 0.15
SCALE_LIMIT = 5.0


def _int_var(f: ServerFacts, name: str, default: int | None = None) -> int | None:
    try:
        return int(float(f.variables.get(name)))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default


def _float_var(f: ServerFacts, name: str, default: float) -> float:
    try:
        v = float(f.variables.get(name))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default
    return v if 0 <= v <= 99 else default


def _bool_var(f: ServerFacts, name: str) -> bool | None:
    """ON/OFF (1/0) as the server shows it; None where it has no such variable."""
    return {"ON": True, "1": True, "OFF": False, "0": False}.get(
        str(f.variables.get(name, "")).upper())


def config_from_facts(f: ServerFacts, cpu_cores: int, datadir: str | None = None
                      ) -> tuple[ServerConfig, list[str]]:
    """The server's current settings as a simulator ServerConfig (and what was mapped).
    datadir: the server's datadir when it is on this host — its storage's completion
    interrupts then say on how many cores the threads that sleep on syncs wake."""
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
    log_buffering = _bool_var(f, "innodb_log_file_buffering")
    io_cores = None
    if datadir is not None:
        try:
            io_cores = completion_cores(gather_facts(datadir))
        except Exception:  # noqa: BLE001 - sysfs facts are optional
            io_cores = None
    if io_cores is not None and io_cores >= cpu_cores:
        io_cores = None
    if io_cores:
        notes.append(f"io_completion_cores = {io_cores} (the storage's disks have {io_cores} "
                     "hardware queue(s): their completion interrupts, and the threads that "
                     f"sleep on them, run on that many of the {cpu_cores} cores)")
    cfg = ServerConfig(
        flavor=f.sim_flavor, innodb_flush_method=method,
        innodb_flush_log_at_trx_commit=tc,
        innodb_flush_log_at_timeout=min(2700.0, max(0.001, f.flush_log_at_timeout)),
        innodb_use_fdatasync=f.use_fdatasync, log_bin=f.log_bin,
        innodb_log_file_buffering=log_buffering,
        innodb_log_writer_threads=_bool_var(f, "innodb_log_writer_threads"),
        sync_binlog=max(0, f.sync_binlog),
        binlog_group_commit_sync_delay=max(0, _int_var(f, "binlog_group_commit_sync_delay", 0)
                                           or 0),
        innodb_doublewrite=f.doublewrite_protects,
        innodb_doublewrite_pages=dw_pages if dw_pages and dw_pages > 0 else None,
        innodb_io_capacity=io_cap, innodb_io_capacity_max=io_max,
        innodb_redo_log_capacity=redo, innodb_buffer_pool_size=bp,
        innodb_max_dirty_pages_pct=_float_var(f, "innodb_max_dirty_pages_pct", 90.0) or 90.0,
        # 0 is meaningful (MariaDB's default: no pre-flushing)
        innodb_max_dirty_pages_pct_lwm=_float_var(f, "innodb_max_dirty_pages_pct_lwm", 10.0),
        innodb_adaptive_flushing_lwm=_float_var(f, "innodb_adaptive_flushing_lwm", 10.0),
        cpu_cores=max(1, cpu_cores), io_completion_cores=io_cores)
    cfg.validate()
    return cfg, notes


@dataclass
class Check:
    """One observed figure beside the model's at the current settings."""

    figure: str
    observed: float | None
    model: float | None
    tolerance_pct: float
    ok: bool | None          # None: not judged (not observed, or noise-sized)
    note: str = ""

    @property
    def error_pct(self) -> float | None:
        if self.observed in (None, 0) or self.model is None:
            return None
        return 100.0 * (self.model - self.observed) / self.observed  # type: ignore[operator]

    def to_dict(self) -> dict:
        e = self.error_pct
        return {"figure": self.figure, "observed": _r(self.observed), "model": _r(self.model),
                "error_pct": None if e is None else round(e, 1),
                "tolerance_pct": round(self.tolerance_pct, 1), "ok": self.ok,
                "note": self.note}


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


@dataclass
class Fit:
    config: ServerConfig
    workload: Workload | None
    observed_tps: float
    simulated_tps: float | None
    explained: bool
    sim_duration_s: float
    wall_s: float
    checks: list[Check] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)   # why it does not explain
    assumptions: list[str] = field(default_factory=list)
    inputs: dict = field(default_factory=dict)          # Workload field -> {value, source}
    source: str = "measured"  # "measured", or "profile:NAME" (--workload: not measured)
    start: ServerStart | None = None   # the server's redo age and dirty pages at the start
    profile: object = None             # the device profile predictions use (maybe scaled)
    # the evidence lacks an input the model needs: nothing was simulated, and reasons name
    # each missing input with what supplies it
    inputs_missing: bool = False

    @property
    def converged(self) -> bool:   # the old name, kept for the predictions' ``sim`` block
        return self.explained

    def to_dict(self) -> dict:
        return {"source": self.source, "explained": self.explained,
                "config": self.config.to_dict(),
                "workload": self.workload.to_dict() if self.workload else None,
                "inputs": self.inputs,
                "observed_tps": round(self.observed_tps, 3),
                "simulated_tps": (round(self.simulated_tps, 3)
                                  if self.simulated_tps is not None else None),
                "checks": [c.to_dict() for c in self.checks], "reasons": self.reasons,
                "inputs_missing": self.inputs_missing,
                "sim_duration_s": self.sim_duration_s, "wall_s": round(self.wall_s, 2),
                "start": self.start.to_dict() if self.start else None,
                "device_scale": self.device_scale, "assumptions": self.assumptions}

    @property
    def device_scale(self) -> float:
        """The factor the device profile's latencies were scaled by (1: as measured)."""
        prov = getattr(self.profile, "provenance", None) or {}
        return float((prov.get("scaled") or {}).get("factor", 1.0))


def sim_duration_for(tps: float, window_s: float | None = None) -> float:
    """About COMMITS_PER_RUN commits, between 1 and 4 simulated seconds — or the observed
    window's length, up to 10 s, when that is longer: what the page cleaner does depends
    on how long the load has gone on (MariaDB's sleeps until the checkpoint age reaches
    its async point)."""
    short = 4.0 if tps <= 0 else min(4.0, max(1.0, COMMITS_PER_RUN / tps))
    return round(max(short, min(10.0, window_s or 0.0)), 2)


def server_start(o: Observed) -> ServerStart | None:
    """The state the server was in when the window opened (redo since its checkpoint,
    dirty pages): the simulation starts from there, as the server did."""
    st = start_state(o.start_gauges)
    if not st:
        return None
    # a page cleaner that flushed during the window was at work when it opened
    flushed = o.deltas.get("Innodb_buffer_pool_pages_flushed",
                           o.deltas.get("Innodb_pages_written", 0))
    return ServerStart(**st, cleaner_active=flushed > 0)


def model_checks(o: Observed, r, tolerances: dict | None = None) -> list[Check]:
    """The figures the model must reproduce: the observed ones beside a SimResult's."""
    tol = {**TOLERANCES, **(tolerances or {})}
    d = r.duration_s or 1.0
    checks = [Check("tps", o.commits_per_s, r.tps, 100 * tol["tps"], None)]
    gc = r.group_commit.get("commits_per_redo_sync")
    exact_redo = not str(o.redo_syncs_source).startswith("estimated: one per")
    checks.append(Check("commits_per_redo_sync", o.commits_per_redo_sync if exact_redo
                        else None, gc, 100 * tol["commits_per_redo_sync"], None,
                        "" if exact_redo else "the redo syncs were estimated, not counted"))
    checks.append(Check("data_fsyncs_per_s", o.data_fsyncs_per_s,
                        r.status.get("Innodb_data_fsyncs", 0) / d,
                        100 * tol["data_fsyncs_per_s"], None))
    pages = o.pages_written_per_s if o.pages_written_per_s is not None \
        else o.pages_flushed_per_s
    written = r.status.get("Innodb_pages_written", 0)
    checks.append(Check("page_writes_per_s", pages, written / d,
                        100 * tol["page_writes_per_s"], None))
    # A window's page writes are whole passes of the page cleaner, and MySQL's come in
    # bursts: once its oldest dirty page is past the low-water mark, a pass a second
    # until it is back under, then none for seconds (as INNODB_METRICS showed on 9.7.4:
    # docs/validation/notebook/2026-12-02-page-cleaner-bursts-cpu-no-state-can-hold.md).
    # Which bursts fall in a window is a matter of phase, which nothing observed tells:
    # the model's largest burst, over the window, is as far as the two may be apart on
    # that account, beside the tolerance.
    burst = r.internal.get("flush_burst_max_pages", 0)
    floors = dict(NOISE_FLOOR)
    phase = burst / o.seconds if burst and o.seconds else 0.0
    for c in checks:
        floor = floors.get(c.figure, 0.0)
        if c.observed is None or c.model is None:
            c.ok = None
        elif max(c.observed, c.model) < floor:
            c.ok, c.note = None, c.note or f"below {floor:.0f}/s on both sides: noise-sized"
        else:
            diff = abs(c.model - c.observed)
            err = diff / max(c.observed, 1e-9)
            if c.figure == "page_writes_per_s" and phase:
                c.ok = diff <= phase + c.tolerance_pct / 100 * c.observed or diff <= floor
                if c.ok and err > c.tolerance_pct / 100 and diff > floor:
                    c.note = c.note or (f"within one page-cleaner burst of the model's "
                                        f"({burst:.0f} pages) over the {o.seconds:.0f} s")
            else:
                # a tiny observed figure: judge the absolute difference against the floor
                c.ok = err <= c.tolerance_pct / 100 or diff <= floor
    return checks


def fit_workload(facts: ServerFacts, observed: Observed, evidence: WorkloadEvidence | None,
                 profile, cpu_cores: int | None = None, datadir: str | None = None,
                 seed: int = 1, clock=time.monotonic,
                 config: ServerConfig | None = None, same_storage: bool = False) -> Fit:
    """The measured workload at the current settings, and whether the model explains it.
    config: the settings as simulated (a report's ``fit.config``, to fit it again
    offline); default: the server's, from its facts. same_storage: the profile was measured
    on the disks under the datadir (device_as_seen may then scale it without limit)."""
    t0 = clock()
    cores = cpu_cores or int((evidence.cpu_cores.value if evidence else None)
                             or os.cpu_count() or 2)
    if config is not None:
        cfg, notes = config, []
    else:
        cfg, notes = config_from_facts(facts, cores, datadir)
        direct = (evidence.server_process or {}).get("redo_o_direct") if evidence else None
        if direct is not None and cfg.innodb_log_file_buffering is not None \
                and cfg.innodb_log_file_buffering == direct:
            # the file as the server holds it, not the variable (MariaDB switches it)
            cfg = replace(cfg, innodb_log_file_buffering=not direct)
            notes.append(f"innodb_log_file_buffering = {'OFF' if direct else 'ON'}: the "
                         "redo log is open " + ("with" if direct else "without") +
                         " O_DIRECT (/proc/PID/fdinfo), whatever the variable says")
    if evidence is not None:
        cfg, spill = completion_cores_hold(cfg, evidence.server_cpu_us_per_trx,
                                           observed.commits_per_s)
        if spill:
            notes = notes + [spill]
    target = observed.commits_per_s
    dur = sim_duration_for(target, observed.seconds)
    start = server_start(observed)
    if evidence is None:
        return Fit(cfg, None, target, None, False, dur, clock() - t0,
                   reasons=["the workload was not measured (no valid interval)"])
    wl, inputs, assumptions, missing = measured_workload(
        evidence, observed, commits_sleep(cfg),
        new_pages_skip_dblwr=get_flavor(cfg.flavor).new_pages_skip_dblwr,
        commit_syncs=cfg.commit_syncs())
    assumptions = notes + assumptions
    assumptions.append(f"cpu_cores = {cores} ({evidence.cpu_cores.detail})")
    if wl is None:
        return Fit(cfg, None, target, None, False, dur, clock() - t0, reasons=missing,
                   assumptions=assumptions, inputs=inputs, inputs_missing=True)
    profile, r, seen = device_as_seen(cfg, wl, profile, evidence, dur, seed, start,
                                      same_storage=same_storage)
    if seen:
        assumptions.append(seen)
    checks = model_checks(observed, r)
    reasons = [_reason(c, profile) for c in checks if c.ok is False]
    if reasons:
        reasons += _hints(evidence, r, profile)
    return Fit(cfg, wl, target, r.tps, not reasons, dur, clock() - t0, checks, reasons,
               assumptions, inputs, start=start, profile=profile)


def completion_cores_hold(cfg: ServerConfig, cpu: Input, commits_per_s: float
                          ) -> tuple[ServerConfig, str | None]:
    """The settings without the completion-core split (``io_completion_cores``) where the
    server's connection threads measurably used more CPU than those cores hold, and why.
    cpu: their CPU per commit (``server_cpu_us_per_trx``).

    The split is what perf sched saw with the lab's own clients (the woken threads stayed
    on the interrupt's core); a load whose threads took more than that core could give
    them was run on the others too — the scheduler balances a core that has more to run
    than it can. Kept, the model queued them behind one core, and sysbench at 4-16
    threads, whose threads used more than a core, came out slow (docs/model.md, 'Where
    woken threads run').

    Only where the commits slept on a sync at the settings measured: the CPU of threads
    that never slept says nothing of where sleeping ones run (a trx_commit=2 server's
    price of trx_commit=1 keeps the split)."""
    io = cfg.io_completion_cores
    if not io or not commits_sleep(cfg) or cpu.value is None \
            or cpu.source not in ("/proc", "performance_schema") or not commits_per_s:
        return cfg, None
    used = cpu.value * commits_per_s / 1e6
    if used <= io:
        return cfg, None
    return (replace(cfg, io_completion_cores=None),
            f"io_completion_cores not applied: the connection threads used {used:.2f} "
            f"cores ({cpu.source}), more than the {io} the storage's completion "
            "interrupts run on — the scheduler ran them on every core")


def commits_sleep(cfg: ServerConfig) -> bool:
    return cfg.innodb_flush_log_at_trx_commit == 1 or (cfg.log_bin and cfg.sync_binlog > 0)


def device_as_seen(cfg: ServerConfig, wl: Workload, profile, ev: WorkloadEvidence,
                   dur: float, seed: int, start: ServerStart | None,
                   same_storage: bool = False):
    """(profile, SimResult at the current settings, note or None): where commits wait
    for a sync, the profile's latencies scaled so that the model's commit waits as long
    as the server's do (processlist) — the device as the server sees it now, which may
    not be what it was when the profile was measured (a shared or virtual disk drifts).
    A device that would need more than SCALE_LIMIT either way is not scaled: it is not
    this server's storage, and the checks then say so — unless the profile was measured
    on the disks under the datadir (same_storage): then it is this storage by
    construction, and a disk whose syncs moved tenfold since (a virtual disk whose host
    switches between absorbing and passing on the flush does) is scaled all the way."""
    limit = float("inf") if same_storage else SCALE_LIMIT
    r = simulate(cfg, wl, profile, duration_s=dur, seed=seed, start=start)
    wait = ev.commit_wait_us_per_trx.value
    model = r.commit_latency_ms.get("mean")
    if not commits_sleep(cfg) or not wait or not model:
        return profile, r, None
    base = profile
    factor = 1.0
    for _ in range(5):
        ratio = wait / (model * 1e3)
        if abs(ratio - 1.0) <= SCALE_KEEP / 2 or not 1 / limit < factor * ratio < limit:
            break
        factor *= ratio ** 0.9
        profile = base.scaled(factor, "the device as the server sees it: commit wait")
        r = simulate(cfg, wl, profile, duration_s=dur, seed=seed, start=start)
        model = r.commit_latency_ms.get("mean") or model
    if abs(factor - 1.0) <= SCALE_KEEP:
        return base, simulate(cfg, wl, base, duration_s=dur, seed=seed, start=start) \
            if profile is not base else r, None
    return profile, r, (
        f"the device as the server sees it: its commits wait {wait:,.0f} µs (processlist), "
        f"the profile {base.name} gives {wait / factor:,.0f} µs — its latencies are scaled "
        f"by {factor:.2f} for the predictions (a disk measured at another time, or another "
        "disk: measure it again to be sure)")


def _reason(c: Check, profile) -> str:
    names = {"tps": "commits/s", "commits_per_redo_sync": "commits per redo sync",
             "data_fsyncs_per_s": "Innodb_data_fsyncs/s", "page_writes_per_s": "page writes/s"}
    # error_pct is None when nothing was observed (0) and the model has some
    err = "none observed" if c.error_pct is None else f"{c.error_pct:+.0f} %"
    return (f"the model gives {c.model or 0:,.1f} {names[c.figure]} at the current settings "
            f"on {profile.name} against {c.observed or 0:,.1f} observed ({err}, "
            f"tolerance ±{c.tolerance_pct:.0f} %)")


def _hints(ev: WorkloadEvidence, r, profile) -> list[str]:
    """What the mismatch may come from, where the evidence says something about it."""
    out = []
    wait = ev.commit_wait_us_per_trx.value
    mean_ms = r.commit_latency_ms.get("mean")
    if wait is not None and mean_ms is not None and wait > 0:
        ratio = mean_ms * 1e3 / wait
        if ratio > 1.5 or ratio < 1 / 1.5:
            out.append(f"a commit waits {wait:,.0f} µs on this server (processlist) but "
                       f"{mean_ms * 1e3:,.0f} µs in the model on {profile.name}: the profile "
                       "does not look like this server's storage (measure it: innoflush "
                       "measure DIR, or advise --measure)")
    if (profile.provenance or {}).get("scaled"):
        out.append("the profile was scaled to the server's commit wait, and still the "
                   "figures differ: the bottleneck is not one the model has (locks, a "
                   "thread pool, CPU elsewhere)")
    if ev.activity.sees_all is False:
        out.append("only this account's connections were visible")
    return out


def workload_from_profile(facts: ServerFacts, observed: Observed, profile, wprofile,
                          connections: int | None = None, cpu_cores: int | None = None,
                          seed: int = 1, clock=time.monotonic,
                          evidence: WorkloadEvidence | None = None) -> Fit:
    """The workload of a workload profile (``--workload``: e.g. ``lab calibrate``'s)
    instead of a measurement: its per-transaction costs as they are, at the connections
    given (or 1), calibrated at that count when the profile has one. One simulation of the
    current settings shows how it compares with what was observed (the same checks)."""
    t0 = clock()
    seen = evidence.connections if evidence is not None else None
    conns = connections or (int(round(seen.value)) if seen and seen.value else 1)
    cores = cpu_cores or os.cpu_count() or 2
    cfg, notes = config_from_facts(facts, cores)
    assumptions = list(notes)
    assumptions.append(f"cpu_cores = {cores}" + (" (this host)" if not cpu_cores else ""))
    wl, src = wprofile.workload_at(conns)
    assumptions.append(f"connections = {conns} (" + (
        "--connections" if connections else seen.detail if seen and seen.value
        else "default: not measured, --connections not given") + ")")
    assumptions.append(f"workload from the profile {src} ({wprofile.title}), not "
                       f"measured: cpu_us_per_trx = {wl.cpu_us_per_trx:g}, client_us_per_trx = "
                       f"{wl.client_us_per_trx:g}, redo_bytes_per_trx = "
                       f"{wl.redo_bytes_per_trx}, pages_dirtied_per_trx = "
                       f"{wl.pages_dirtied_per_trx:g}, growth_bytes_per_trx = "
                       f"{wl.growth_bytes_per_trx:g}")
    target = observed.commits_per_s
    dur = sim_duration_for(target, observed.seconds)
    start = server_start(observed)
    r = simulate(cfg, wl, profile, duration_s=dur, seed=seed, start=start)
    checks = model_checks(observed, r)
    reasons = [_reason(c, profile) for c in checks if c.ok is False]
    return Fit(cfg, wl, target, r.tps, not reasons, dur, clock() - t0, checks, reasons,
               assumptions, source=f"profile:{wprofile.name}", start=start)
