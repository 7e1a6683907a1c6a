"""`innoflush lab calibrate`: a workload profile measured on a real server.

The model needs, per transaction: the server's CPU, the client's CPU and the time
outside both (round trips), the redo and binlog bytes, the pages it dirties, the
tablespace growth and the files written. ``lab run`` derives them from each run; but a
run with syncs in its commit path mixes the syncs' own cost into the CPU it measures
(the kernel time of the write and fsync calls, the wake-ups of the waiting threads),
which the model then charges twice — once as CPU, once as the device's latency.

So calibration runs the same workload with **no sync in the commit path**:
``innodb_flush_log_at_trx_commit=0`` (and ``sync_binlog=0`` with the binlog on), the redo
written and synced about once a second by the server's background thread. From that
run (``run.measure_one`` and ``predict.derive_workload``, the same measurements as ``lab
run``):

- ``cpu_us_per_trx`` = server process CPU / commits; ``client_cpu_us_per_trx`` = the
  client processes' CPU / commits; ``client_us_per_trx`` = that + statements per
  transaction × the part of a ``SELECT 1`` round trip no CPU time counts;
- ``redo_bytes_per_trx``, ``pages_dirtied_per_trx``, ``binlog_bytes_per_trx`` from the
  SHOW GLOBAL STATUS deltas; ``tablespaces`` and ``growth_bytes_per_trx`` from the
  InnoDB files (written, grown);
- ``hot_page_share`` and ``dblwr_page_share`` (which written pages come back to the flush
  list, which first writes are doublewritten: ``predict.page_reentry``) pooled over the runs
  that flushed pages; ``work_cv`` (how much transactions differ) from the run with the
  fewest connections.

CPU per transaction depends on the concurrency (at one connection every statement
wakes an idle thread; with more connections than cores the threads queue and switch),
so with several ``--connections`` one calibration run is made per count: the profile's
``workload`` is the first count's, and ``provenance.calibration.by_connections`` keeps
each count's (``WorkloadProfile.workload_at`` picks the one for a run: ``lab run``,
``lab validate``, ``simulate`` and ``advise`` use it).

Then one more run, **the host's cost of a sync** (``host_costs``): one connection at
``innodb_flush_log_at_trx_commit=1`` on this host's storage (never emulated), beside the
one-connection run at 0. A sync in the commit path costs more than the device's
latency: the server's CPU per transaction grows by ``T`` per sync (syscalls, I/O
completion, the sleeping thread's wake-up), and the COMMIT's round trip grows by the
redo write and sync latencies of the storage's profile plus a residual ``R``. The part
of ``T`` on the committing thread's path is ``min(R, T)`` (``sync_cpu_us``), the rest is
CPU spent elsewhere (``sync_side_cpu_us``), and what ``R`` leaves beyond ``T`` is a
wake-up latency (``wakeup_us``). A transaction whose commit sleeps costs what the
one-connection run's did (``cpu_us_per_trx_sleeping``, ``client_cpu_us_per_trx_sleeping``):
its threads go idle and are woken every time, whatever the connection count.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np

from ... import __version__
from ...errors import InnoflushError, OptionError
from ...jsonfile import check_store
from ...live.facts import filesystem_of
from ...live.pages import page_counts, page_reentry
from ...measure.probe import sync_call_cpu_us
from ...outfile import OutputFailed, attempt
from ...profiles import load_profile
from ...profiles.model import NAME_RE
from ...simulator import Workload
from ...simulator.flavors import get_flavor
from ...simulator.redo import LOG_WRITE_MAX_SIZE
from ...simulator.workload_profile import WorkloadProfile, save_workload, workload_dir
from ..emulation.emulate import make_emulation
from ..server.for_run import docker_server_class
from .options import LabOptions, RunPlan
from .run import measure_one
from .run_setup import load_or_measure, make_base_dir, run_checked

SCHEMA = "innoflush.lab-calibrate/1"
RESERVED_NAMES = ("insert", "oltp")   # the load generator's workloads (--workload)


HOST_COST_CONNECTIONS = 1


def calibration_plans(opts: LabOptions) -> list[RunPlan]:
    """One trx_commit=0 run (sync_binlog=0 with the binlog on) per connection count (and
    at one connection, the host-cost reference), with the first flush method; then the
    host-cost run: trx_commit=1 at one connection (its only syncs the redo's)."""
    sb = 0 if opts.log_bin else None
    counts = list(opts.connections)
    if HOST_COST_CONNECTIONS not in counts:
        counts.append(HOST_COST_CONNECTIONS)
    n = len(counts) + 1
    plans = [RunPlan(i + 1, n, opts.flush_methods[0], 0, sb, c) for i, c in enumerate(counts)]
    plans.append(RunPlan(n, n, opts.flush_methods[0], 1, sb, HOST_COST_CONNECTIONS))
    return plans


def _p50_us(profile, component: str, op: str, size: int, direct: bool) -> float:
    summary, _ = profile.resolve(component, op, size, direct)
    return summary.median_ns / 1e3


def host_costs(idle, synced, storage, flavor_name: str | None,
               call_cpu_us: float | None = None) -> tuple[dict, list[str]]:
    """What a sync in the commit path costs this host besides the device (see the module
    doc), from the one-connection runs at trx_commit=0 (`idle`) and 1 (`synced`), the
    storage's device profile and `call_cpu_us`, the CPU a redo-sized write and its sync
    cost the thread that makes them (probe.sync_call_cpu_us; None: unknown, all of T is
    counted per sync). Returns (the Workload fields, derivation lines)."""
    fl = get_flavor(flavor_name or "mariadb-10.11")
    lines: list[str] = []
    c0, c1 = idle.wr.commits, synced.wr.commits
    syncs = synced.iv.deltas.get("Innodb_data_fsyncs", 0) / c1 if c1 else 0.0
    if idle.server_cpu_s is None or synced.server_cpu_s is None or syncs < 0.5:
        lines.append("host costs: not measured (the server's CPU time was not readable, or "
                     f"the trx_commit=1 run made {syncs:.2f} syncs per commit)")
        return {}, lines
    cpu0 = idle.server_cpu_s * 1e6 / c0
    cpu1 = synced.server_cpu_s * 1e6 / c1
    total = max(0.0, (cpu1 - cpu0) / syncs)
    lines.append(f"CPU per sync T = {total:.1f} µs (server CPU per transaction {cpu1:.1f} µs at "
                 f"trx_commit=1 less {cpu0:.1f} at 0, over {syncs:.3f} syncs per commit)")
    p50_0 = idle.client["commit_latency_ms"]["p50"]
    p50_1 = synced.client["commit_latency_ms"]["p50"]
    if p50_0 is None or p50_1 is None:
        lines.append("host costs: not measured (the COMMIT round trip is not known: an "
                     "external command's latencies are not seen by the lab)")
        return {}, lines
    direct = fl.redo_is_direct(1, None)
    op = "fdatasync" if fl.use_fdatasync(None) else "fsync"
    w_us = _p50_us(storage, "write", "none", LOG_WRITE_MAX_SIZE, direct)
    s_us = _p50_us(storage, "sync", op, LOG_WRITE_MAX_SIZE, direct)
    resid = (p50_1 - p50_0) * 1e3 - w_us - s_us
    lines.append(f"residual R = {resid:.1f} µs (COMMIT p50 {p50_1 * 1e3:.1f} µs at trx_commit=1 "
                 f"less {p50_0 * 1e3:.1f} at 0, less the storage's redo write {w_us:.1f} and "
                 f"{op} {s_us:.1f} µs, p50 of {storage.name})")
    # T = the calls' own CPU (once per sync, whoever makes it: the group commit leader)
    # + what the committing thread's sleep costs (once per commit: the switches out and
    # back in, the wake-up). One connection cannot tell them apart; the probe's CPU per
    # write + sync can. On the committing thread's path: R, the calls' CPU first.
    calls = total if call_cpu_us is None else min(max(call_cpu_us, 0.0), total)
    on_path = min(max(resid, 0.0), total)
    calls_path = min(calls, on_path)
    sleep = total - calls
    sleep_path = min(sleep, on_path - calls_path)
    fields = {"sync_cpu_us": round(calls_path, 2),
              "sync_side_cpu_us": round(calls - calls_path, 2),
              "sleep_cpu_us": round(sleep_path, 2),
              "sleep_side_cpu_us": round(sleep - sleep_path, 2),
              "wakeup_us": round(max(0.0, resid - total), 2)}
    if call_cpu_us is None:
        lines.append("the write + sync calls' own CPU was not measured: all of T is counted "
                     "per sync")
    else:
        lines.append(f"the calls' own CPU S = {call_cpu_us:.1f} µs (a {LOG_WRITE_MAX_SIZE} B "
                     f"{'O_DIRECT ' if direct else ''}write + {op}, thread CPU time, on this "
                     "storage): per sync; T less S per sleeping commit")
    lines.append(f"sync_cpu_us = {calls_path:.1f}, sync_side_cpu_us = {calls - calls_path:.1f} "
                 f"(per sync: min(S, T) on the syncing thread's path up to R, the rest "
                 f"elsewhere); sleep_cpu_us = {sleep_path:.1f}, sleep_side_cpu_us = "
                 f"{sleep - sleep_path:.1f} (per sleeping commit: T - S, on its path what R "
                 f"leaves); wakeup_us = {fields['wakeup_us']:.1f} (R beyond T)")
    fields["cpu_us_per_trx_sleeping"] = round(cpu0, 3)
    cl0 = idle.client["client_cpu"]["cpu_us_per_trx"]
    fields["client_cpu_us_per_trx_sleeping"] = round(cl0, 3)
    lines.append(f"cpu_us_per_trx_sleeping = {cpu0:.1f}, client_cpu_us_per_trx_sleeping = "
                 f"{cl0:.1f} (the one-connection run: what a transaction costs when its "
                 "threads sleep and wake each time, as a commit that waits for a sync makes "
                 "them)")
    return fields, lines


def run_summary(m, workload) -> dict:
    """What one calibration run measured (the figures behind the workload)."""
    c = m.client
    o = m.observed
    return {"connections": m.plan.connections, "commits": m.wr.commits,
            "seconds": c["seconds"], "tps": round(m.wr.tps, 2),
            "server_cpu_us_per_trx": (round(m.server_cpu_s * 1e6 / m.wr.commits, 2)
                                      if m.server_cpu_s is not None else None),
            "server_cpu_split": m.split,
            "client_cpu_us_per_trx": c["client_cpu"]["cpu_us_per_trx"],
            "commit_latency_ms": c["commit_latency_ms"],
            "loopback": m.rtt, "redo_bytes_per_commit": o.redo_bytes_per_commit,
            "pages_dirtied_per_commit": o.pages_dirtied_per_commit,
            "page_writes_per_commit": o.page_writes_per_commit,
            "binlog_bytes_per_commit": o.binlog_bytes_per_commit,
            "data_fsyncs_per_s": o.data_fsyncs_per_s, "files": m.files,
            "extensions": m.extensions,
            "machine_cpu": m.usage, "runq_wait": m.runq,
            "read_back": m.back, "notes": list(m.notes),
            "emulation": m.emulation,
            "workload": workload.to_dict()}


def build_profile(name: str, title: str | None, opts: LabOptions, runs: list[dict],
                  derivations: list[list[str]], server: dict, emulation: dict | None,
                  host: dict | None = None):
    """The WorkloadProfile: the first connection count's workload, every count's in
    provenance.calibration.by_connections; `host` (host_costs) in the provenance."""
    extra = (host or {}).get("fields") or {}
    first = runs[0]["workload"]
    wl = Workload(**{**first, "connections": 1})
    spec = workload_spec(opts, runs[0]["connections"])
    spec.pop("connections", None)
    by = {str(r["connections"]): {k: v for k, v in r["workload"].items() if k != "connections"}
          for r in runs}
    prov = {
        "kind": "calibrated", "tool": f"innoflush lab calibrate {__version__}",
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": platform.node(), "cpu_cores": os.cpu_count() or 1,
        "backend": opts.backend, "image": opts.image,
        "server": server, "device": (emulation or {}).get("profile") or "this host's storage",
        "emulated": bool(emulation),
        "settings": {"innodb_flush_method": opts.flush_methods[0],
                     "innodb_flush_log_at_trx_commit": 0, "log_bin": opts.log_bin,
                     "sync_binlog": 0 if opts.log_bin else None,
                     "innodb_buffer_pool_size": opts.buffer_pool, "extra": dict(opts.extra)},
        "spec": spec,
        "calibration": {"connections": [r["connections"] for r in runs],
                        "by_connections": by,
                        # the COMMIT round trip without a sync (trx_commit=0): what a
                        # commit costs besides the wait for durability (the first count's,
                        # and each count's: at more connections than cores it includes
                        # the wait for a CPU)
                        "commit_base_ms": runs[0]["commit_latency_ms"]["p50"],
                        "commit_base_ms_by_connections": {
                            str(r["connections"]): r["commit_latency_ms"]["p50"]
                            for r in runs},
                        "runs": [{k: v for k, v in r.items() if k in (
                            "connections", "commits", "seconds", "tps",
                            "server_cpu_us_per_trx", "client_cpu_us_per_trx",
                            "redo_bytes_per_commit", "pages_dirtied_per_commit",
                            "binlog_bytes_per_commit")} for r in runs],
                        "derivation": derivations[0],
                        "host_costs": host},
    }
    notes = [f"calibrated with innodb_flush_log_at_trx_commit=0 (no sync in the commit path) "
             f"at {runs[0]['connections']} connection(s), {opts.duration_s:g} s"
             + (f" after {opts.warmup_s:g} s of warm-up" if opts.warmup_s else "")]
    if extra:
        notes.append("the host's cost of a sync measured at trx_commit=1, one connection: "
                     + ", ".join(f"{k} {v:g}" for k, v in extra.items()))
    if len(runs) > 1:
        notes.append("server CPU per transaction by connections: " + ", ".join(
            f"{r['connections']}: {r['workload']['cpu_us_per_trx']:.1f} µs" for r in runs)
            + " (workload_at / lab validate use the matching one)")
    kind = spec["name"] if spec["kind"] == "command" else spec["kind"]
    return WorkloadProfile(name=name, title=title or f"{kind} workload calibrated on "
                           f"{platform.node()} ({server.get('version') or 'server'})",
                           workload=wl, provenance=prov, notes=notes)


def workload_spec(opts: LabOptions, connections: int) -> dict:
    """The load the calibration ran: the lab's workload spec, or with --workload-cmd the
    command (``kind`` "command"; lab run and validate cannot drive such a profile's load
    by its name: give them the command)."""
    spec = opts.spec(connections).to_dict()
    if opts.command is None:
        return spec
    return {"kind": "command", **opts.command.to_dict(), "connections": connections,
            "duration_s": spec["duration_s"], "warmup_s": spec["warmup_s"],
            "database": spec["database"], "seed": spec["seed"]}


def lab_calibrate(opts: LabOptions, save: str | None = None, force: bool = False,
                  title: str | None = None, progress=None, progress_line=None) -> dict:
    """Calibration runs, the workload profile, and (with save) the profile saved.

    Returns the report dict (keys: the module's SCHEMA, docs/commands/lab-calibrate.md;
    lab/reports/calibrate_report.py renders it as text)."""
    opts.validate()
    opts = replace(opts, trx_commits=[0], watch_extensions=True, advise=False)
    if save is not None:
        if save in RESERVED_NAMES:
            raise OptionError(f"--save {save}: {' and '.join(RESERVED_NAMES)} are the load "
                             "generator's workloads (lab run --workload); choose another name")
        if not NAME_RE.match(save):
            raise OptionError(f"bad workload name {save!r}: use lowercase letters, digits, "
                             "'.', '_' and '-'")
        check_store(workload_dir(), save, "workload", force)   # before the runs
    if opts.backend == "docker":
        docker_server_class()
    if opts.emulate:
        load_profile(opts.emulate)
    plans = calibration_plans(opts)
    base = make_base_dir(opts.datadir_on)
    warnings: list[str] = []
    emulation = None
    try:
        fs = filesystem_of(str(base))
        # the host-cost run needs the storage's latencies: --profile, else measured now
        host, how = load_or_measure(opts, base, progress_line, small_writes=True)
        if opts.emulate:
            emulation = make_emulation(opts.emulate, base, host, f"{host.name} [{how}]",
                                       seed=opts.seed, channels=opts.emulate_channels,
                                       progress_line=progress_line)
        emu = emulation.to_dict() if emulation else None
        wp, runs, derivations, server = calibration_profile(
            opts, plans, base, warnings, progress, emulation, save or "calibrated", title, emu,
            storage=host)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    failures: list[InnoflushError] = []
    path = attempt(failures, lambda: save_workload(wp, overwrite=force)) if save else None
    report = {"schema": SCHEMA, "backend": opts.backend, "image": opts.image,
               "server": server, "storage": {"datadir_on": str(base.parent), "filesystem": fs},
               "emulation": emu, "host": {"cpu_cores": os.cpu_count() or 1,
                                          "name": platform.node()},
               "workload_spec": workload_spec(opts, opts.connections[0]),
               "runs": runs, "derivation": derivations,
               "host_costs": (wp.provenance.get("calibration") or {}).get("host_costs"),
               "profile": wp.to_dict(), "saved": str(path) if path else None,
               "warnings": warnings}
    if failures:   # the runs are not lost: the command prints the report, then the error
        raise OutputFailed(failures[0], report)
    return report


def pooled_page_reentry(measured) -> dict | None:
    """page_reentry over the calibration runs that flushed pages, pooled: which share of
    the pages comes back after a write and which first writes are doublewritten is the
    workload's, the same at every connection count; None when no run tells."""
    sums = {"commits": 0, "created": 0, "flushed": 0, "growth": 0, "dblwr": 0}
    for m in measured:
        created, flushed, dblwr = page_counts(m.iv.deltas)
        growth = m.iv.gauge_deltas.get("Innodb_buffer_pool_pages_dirty")
        if created is None or flushed is None or flushed < 100 or growth is None:
            continue
        sums["commits"] += m.wr.commits
        sums["created"] += created
        sums["flushed"] += flushed
        sums["growth"] += growth
        sums["dblwr"] += dblwr
    fit = page_reentry(sums["commits"], sums["created"], sums["flushed"], sums["growth"],
                       sums["dblwr"])
    if fit is None:
        return None
    fit["lines"] = [line[:-1] + "; pooled over the calibration runs that flushed pages)"
                    for line in fit["lines"][1:]]
    return fit


def work_cv(wr) -> tuple[float, str] | None:
    """How much transactions differ: the coefficient of variation of each transaction's
    time from its first statement to its COMMIT's reply, over a run without syncs at
    commit (at the fewest connections: little queueing in it), the slowest 1 % left out
    (a scheduler's hiccup is not the workload's). None with fewer than 100 transactions."""
    times = [c.commit_end_ns - c.trx_start_ns for c in wr.clients if c.commits]
    if not times:
        return None
    t = np.sort(np.concatenate(times).astype(np.float64))
    if t.size < 100:
        return None
    t = t[: int(t.size * 0.99)]
    mean = float(t.mean())
    if mean <= 0:
        return None
    cv = round(min(3.0, float(t.std()) / mean), 3)
    return cv, (f"work_cv = {cv:g} (each transaction's time, first statement to COMMIT "
                f"done, at {len(wr.clients)} connection(s) and trx_commit=0: sd "
                f"{t.std() / 1e3:.1f} µs / mean {mean / 1e3:.1f} µs over {t.size:,} "
                "transactions, the slowest 1 % left out)")


def redo_call_cpu_us(base: Path, flavor_name: str | None) -> float | None:
    """The CPU of one redo-sized write and its sync on this storage, as the flavor makes
    them (probe.sync_call_cpu_us in a probe file of ours under base); None if the probe
    cannot run there."""
    fl = get_flavor(flavor_name or "mariadb-10.11")
    try:
        return sync_call_cpu_us(str(base), "fdatasync" if fl.use_fdatasync(None) else "fsync",
                                LOG_WRITE_MAX_SIZE, fl.redo_is_direct(1, None))
    except InnoflushError:
        return None


def calibration_profile(opts, plans, base: Path, warnings: list[str], progress, emulation,
                        name: str, title: str | None, emu: dict | None, storage=None):
    """Measure the calibration runs and build the workload profile from them; returns
    (profile, run summaries, derivation lines per run, server facts). Shared by
    `lab calibrate` and `lab validate`. The trx_commit=1 plan (host costs) runs without
    emulation and needs `storage`, the device profile of this host's storage."""
    measured, synced = [], None
    for plan in plans:
        workdir = base / f"calibrate-{plan.index}"
        emu_here = emulation if plan.trx_commit == 0 else None
        m = run_checked(plan, workdir, warnings,
                        lambda plan=plan, workdir=workdir, e=emu_here: measure_one(
                            opts, plan, workdir, progress, e))
        if plan.trx_commit == 0:
            measured.append(m)
        else:
            synced = m
    runs, derivations = [], []
    for m in measured:
        wl, lines = m.derive()
        runs.append(run_summary(m, wl))
        derivations.append(lines)
    first = measured[0].back
    server = {"product": first.get("product"), "version": first.get("version"),
              "sim_flavor": first.get("sim_flavor")}
    # measured over all the runs, the same in every count's workload
    shared: dict = {}
    pooled = pooled_page_reentry(measured)
    if pooled is not None:
        shared["hot_page_share"] = pooled["hot_page_share"]
        shared["dblwr_page_share"] = pooled["dblwr_page_share"]
        for lines in derivations:
            lines.extend(pooled["lines"])
    host = None
    if synced is not None and storage is not None:
        idle = next(m for m in measured if m.plan.connections == synced.plan.connections)
        call_cpu_us = redo_call_cpu_us(base, server["sim_flavor"])
        fields, lines = host_costs(idle, synced, storage, server["sim_flavor"],
                                   call_cpu_us)
        host = {"fields": fields, "derivation": lines, "storage_profile": storage.name,
                "run": {"connections": synced.plan.connections, "commits": synced.wr.commits,
                        "tps": round(synced.wr.tps, 2),
                        "server_cpu_us_per_trx": (
                            round(synced.server_cpu_s * 1e6 / synced.wr.commits, 2)
                            if synced.server_cpu_s is not None else None),
                        "commit_latency_ms": synced.client["commit_latency_ms"],
                        "data_fsyncs_per_commit": round(
                            synced.iv.deltas.get("Innodb_data_fsyncs", 0)
                            / max(1, synced.wr.commits), 4)}}
        shared.update(fields)
    fewest = min(measured, key=lambda m: m.plan.connections)
    spread = work_cv(fewest.wr)
    if spread is not None:
        shared["work_cv"], line = spread
        for lines in derivations:
            lines.append(line)
    for r in runs:
        r["workload"] = {**r["workload"], **shared}
    wp = build_profile(name, title, opts, runs, derivations, server, emu, host)
    return wp, runs, derivations, server


__all__ = ["SCHEMA", "calibration_plans", "calibration_profile", "host_costs", "lab_calibrate"]
