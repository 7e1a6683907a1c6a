"""`innoflush lab validate`: the model's prediction error, measured on a real server.

A matrix — connections × innodb_flush_method × innodb_flush_log_at_trx_commit — on
this host's storage (``local``: the device profile from ``--profile``, or measured) and
on emulated devices (``lab/emulation/emulate.py``: the server's syncs delayed to a profile's
latencies, and the predictions for that profile). Every cell is a fresh server under
the lab's workload (``run.measure_one``), measured beside the model's prediction of the
same read-back configuration.

The predictions use a **calibrated** workload, not each cell's own measurements:
before the matrix, ``lab calibrate``'s runs (``innodb_flush_log_at_trx_commit=0``: no
sync in the commit path) measure the per-transaction CPU of the server and the clients,
the round trips, the redo, the pages dirtied and the file growth, once per connection
count of the matrix (CPU per transaction depends on the concurrency), on this host's
storage without emulation: a run without syncs at commit does not depend on the
device, so one calibration serves every device of the backend. ``--workload NAME|FILE``
uses a saved calibration instead. Nothing is fitted to the matrix's measurements.

Per device (``prediction_accuracy``): the error of each cell (predicted / measured − 1)
and the mean absolute percentage error (MAPE) of TPS, commit latency p50 (and p99),
Innodb_data_fsyncs/s and Innodb_data_writes/s (cells where the measured value is 0 are
left out, and counted); per (device, connections, trx_commit), whether the model got the
direction of the O_DIRECT → O_DIRECT_NO_FSYNC change of Innodb_data_fsyncs/s (and per
commit) right.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import shutil
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from ...errors import InnoflushError, OptionError, UsageError
from ...executor import InProcessExecutor, SimExecutor
from ...jsonfile import check_store
from ...live.facts import filesystem_of
from ...measure import gather_facts
from ...profiles import load_profile
from ...simulator.workload_profile import load_workload, save_workload, workload_dir
from ..emulation.emulate import make_emulation
from ..server.for_run import docker_server_class
from .calibrate import calibration_plans, calibration_profile
from .options import LabError, LabOptions, RunPlan
from .predict import compare, predict, predicted_figures, sim_config
from .prediction_accuracy import TARGETS, device_summary
from .run import measure_one
from .run_setup import calibration_for, load_or_measure, make_base_dir, run_checked

SCHEMA = "innoflush.lab-validate/1"
LOCAL = "local"
DEFAULT_DEVICES = (LOCAL, "samsung-990-pro", "hdd-wd2502abys")
DEFAULT_CONNECTIONS = (1, 2, 4, 8, 16)
DEFAULT_FLUSH_METHODS = ("O_DIRECT", "O_DIRECT_NO_FSYNC")
DEFAULT_TRX_COMMITS = (1, 2)


@dataclass
class ValidateOptions:
    lab: LabOptions = field(default_factory=LabOptions)
    devices: list[str] = field(default_factory=lambda: list(DEFAULT_DEVICES))
    workload_ref: str | None = None       # a saved calibration instead of calibrating
    calibrate_duration_s: float | None = None   # None: the cells' duration
    calibrate_warmup_s: float | None = None     # None: the cells' warm-up
    save_workload: str | None = None
    force: bool = False
    retries: int = 1                      # a cell whose server fails is tried again once
    replicates: int = 1                   # measurements of every cell (directions)
    command: str | None = None            # the command line, for the report

    def validate(self) -> None:
        self.lab.validate()
        if not self.devices:
            raise OptionError("--devices: give at least one device")
        if len(set(self.devices)) != len(self.devices):
            raise OptionError("--devices: a device is listed twice")
        for m in self.lab.flush_methods:
            if m not in ("fsync", "O_DSYNC", "O_DIRECT", "O_DIRECT_NO_FSYNC"):
                raise OptionError(f"--flush-method {m!r}")
        if self.lab.emulate:
            raise UsageError("lab validate emulates the --devices itself")
        if not 0 <= self.retries <= 3:
            raise UsageError("retries must be between 0 and 3")
        if not 1 <= self.replicates <= 5:
            raise OptionError("--replicates must be between 1 and 5")


# ---- one cell ----------------------------------------------------------------------------

def _cell_measured(m) -> dict:
    fig = m.figures()
    o = m.observed
    c = m.client
    fig.update({
        "commits": m.wr.commits, "seconds": c["seconds"],
        "data_fsyncs_per_commit": (round(m.iv.deltas.get("Innodb_data_fsyncs", 0)
                                         / o.commits, 4) if o.commits else None),
        "commits_per_redo_sync": o.commits_per_redo_sync,
        "start_state": m.start,
        "server_cpu_us_per_trx": (round(m.server_cpu_s * 1e6 / m.wr.commits, 2)
                                  if m.server_cpu_s is not None else None),
        "client_cpu_us_per_trx": c["client_cpu"]["cpu_us_per_trx"],
        "trx_latency_p50_ms": c["trx_latency_ms"]["p50"],
        "machine_cpu": m.usage, "runq_wait": m.runq,
        "pages_written": m.iv.deltas.get("Innodb_pages_written"),
        "status_deltas": {k: v for k, v in m.iv.deltas.items() if k.startswith("Innodb_data")
                          or k in ("Innodb_log_writes", "Innodb_os_log_written",
                                   "Innodb_pages_written", "Innodb_dblwr_writes",
                                   "Innodb_dblwr_pages_written",
                                   "Innodb_buffer_pool_pages_flushed")},
        "loopback_wall_us": m.rtt.get("wall_us")})
    return fig


def _cell_predicted(sim, rtt_ms: float) -> dict:
    p = predicted_figures(sim, rtt_ms)
    out = {k: p[k] for k in ("tps", "commit_latency_p50_ms", "commit_latency_p99_ms",
                             "data_fsyncs_per_s", "data_writes_per_s",
                             "data_fsyncs_per_data_write", "commit_round_trip_ms",
                             "cpu_util", "device_flush_util", "checkpoint_stall_s",
                             "sim_duration_s", "group_commit", "syncs_per_s")}
    out["data_fsyncs_per_commit"] = (round(sim.status.get("Innodb_data_fsyncs", 0)
                                           / sim.commits, 4) if sim.commits else None)
    return out


def _predict_cell(case: tuple) -> dict:
    """One cell's prediction as an executor runs it (top level: it may run in another
    process or on a Dask worker)."""
    config, workload, profile, duration_s, seed, warmup_s, start, rtt_ms = case
    return _cell_predicted(predict(config, workload, profile, duration_s, seed=seed,
                                   warmup_s=warmup_s, start=start), rtt_ms)


def run_cell(opts: LabOptions, plan: RunPlan, workdir: Path, device: str, profile,
             emulation, workload, workload_source: str, single, progress,
             commit_base: float | None = None, executor: SimExecutor | None = None) -> dict:
    """Measure one cell, then predict it: with the calibrated workload at its
    connections (compared), the calibration's first connection count (``single``), and
    the workload derived from the cell's own run (both reported, not compared).

    The compared commit latencies are the simulated wait for durability plus
    ``commit_base`` (the calibration's COMMIT round trip without a sync), or one
    measured SELECT 1 round trip without it. executor: where the predictions run
    (default: in this process)."""
    m = measure_one(opts, plan, workdir, progress, emulation, profile)
    if progress:
        progress(plan, "simulating the same configuration")
    cores = os.cpu_count() or 1
    config, cfg_notes = sim_config(m.facts, cores, workdir.parent)
    rtt_ms = commit_base if commit_base is not None else m.rtt["wall_us"] / 1e3
    measured = _cell_measured(m)
    wl = replace(workload, connections=plan.connections)
    derived, lines = m.derive()
    single_wl = replace(single, connections=plan.connections)
    # the three predictions in one batch, on the executor (every input in the arguments:
    # the host's cores and storage queues were read here, by sim_config)
    predicted, pd, ps = (executor or InProcessExecutor()).map(_predict_cell, [
        (config, w, profile, opts.duration_s, opts.seed, opts.warmup_s, m.start, rtt_ms)
        for w in (wl, derived, single_wl)])
    return {"device": device, "connections": plan.connections,
            "flush_method": plan.flush_method, "trx_commit": plan.trx_commit,
            "settings_match": not m.mismatch, "settings_mismatch": m.mismatch,
            "read_back": {k: m.back[k] for k in ("version", "innodb_flush_method",
                                                 "innodb_flush_log_at_trx_commit",
                                                 "innodb_doublewrite", "log_bin")},
            "measured": measured, "predicted": predicted,
            "errors_pct": compare(measured, predicted),
            "workload": {**wl.to_dict(), "source": workload_source},
            "derived_workload": {**derived.to_dict(), "derivation": lines},
            "predicted_derived": pd, "errors_pct_derived": compare(measured, pd),
            "predicted_single": ps, "errors_pct_single": compare(measured, ps),
            "sim_config": config.to_dict(), "config_notes": cfg_notes,
            "emulation": m.emulation, "notes": list(m.notes)}


# ---- the matrix --------------------------------------------------------------------------

def cell_plans(opts: LabOptions, replicates: int = 1) -> list[tuple[RunPlan, int]]:
    """(plan, replicate): connections × trx_commit × flush method, the flush methods of a
    pair one after the other (the direction compares them) and, with replicates, in
    alternating order (A B B A ...) so that a drift of the host during a pair's runs
    does not favour one method."""
    blocks = [(c, t) for c in opts.connections for t in opts.trx_commits]
    combos = []
    for c, t in blocks:
        for r in range(1, replicates + 1):
            methods = opts.flush_methods if r % 2 else list(reversed(opts.flush_methods))
            combos += [(c, t, f, r) for f in methods]
    return [(RunPlan(i + 1, len(combos), f, t, None, c), r)
            for i, (c, t, f, r) in enumerate(combos)]


def host_facts(path: str) -> dict:
    try:
        f = gather_facts(path)
    except Exception as exc:  # noqa: BLE001 - facts are for the report only
        return {"error": str(exc)}
    disks = f.get("disks") or []
    mem = None
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    mem = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    return {"hostname": f.get("hostname") or platform.node(), "kernel": f.get("kernel"),
            "cpu_model": f.get("cpu_model"), "cpu_cores": os.cpu_count() or 1,
            "memory_bytes": mem, "filesystem": f.get("fs_type"),
            "mount_options": f.get("mount_options"), "block_device": f.get("block_device"),
            "disk": ({k: disks[0].get(k) for k in ("name", "model", "vendor", "rotational",
                                                   "write_cache", "virtual")}
                     if disks else None),
            "python": platform.python_version()}


def calibrate_for(vopts: ValidateOptions, base: Path, warnings: list[str], progress,
                  storage=None):
    """The workload profile the predictions use: vopts.workload_ref, else calibration
    runs now (one per connection count and the host-cost run, this host's storage —
    `storage` its device profile —, no emulation)."""
    if vopts.workload_ref:
        return load_workload(vopts.workload_ref), None
    o = vopts.lab
    copts = replace(o, trx_commits=[0], emulate=None, advise=False, watch_extensions=True,
                    duration_s=vopts.calibrate_duration_s or o.duration_s,
                    warmup_s=(vopts.calibrate_warmup_s if vopts.calibrate_warmup_s
                              is not None else o.warmup_s))
    wp, runs, derivations, _server = calibration_profile(
        copts, calibration_plans(copts), base, warnings, progress, None,
        vopts.save_workload or "validate-calibration", None, None, storage=storage)
    saved = save_error = None
    if vopts.save_workload:
        try:
            saved = str(save_workload(wp, overwrite=vopts.force))
        except InnoflushError as exc:   # the matrix still runs; the command fails at its end
            save_error = str(exc)
            warnings.append(f"the calibration was not saved: {exc}")
    return wp, {"runs": runs, "derivation": derivations[0], "saved": saved,
                **({"save_error": save_error} if save_error else {}),
                "host_costs": (wp.provenance.get("calibration") or {}).get("host_costs"),
                "duration_s": copts.duration_s, "warmup_s": copts.warmup_s}


def device_entry(device: str, base: Path, host_profile, host_how: str | None,
                 o: LabOptions, progress_line=None) -> tuple[dict, object, object]:
    """A matrix's device: its report entry, the profile its cells are predicted on, and
    its emulation (None for this host's own storage, predicted on its profile)."""
    entry: dict = {"name": device, "ref": device,
                   "kind": "local" if device == LOCAL else "emulated"}
    if device == LOCAL:
        entry["profile"] = {"name": host_profile.name, "title": host_profile.title,
                            "source": host_how}
        return entry, host_profile, None
    emulation = make_emulation(device, base, host_profile,
                               f"{host_profile.name} [{host_how}]" if host_profile else None,
                               seed=o.seed, channels=o.emulate_channels,
                               progress_line=progress_line)
    profile = emulation.profile
    entry["name"] = profile.name
    entry["profile"] = {"name": profile.name, "title": profile.title, "source": "emulated"}
    entry["emulation"] = emulation.to_dict()
    return entry, profile, emulation


def check_references(o: LabOptions, devices) -> None:
    """What a matrix names must exist before anything runs (exit 2): the Docker backend,
    every emulated device's profile, the local device's profile."""
    if o.backend == "docker":
        docker_server_class()
    for d in devices:
        if d != LOCAL:
            load_profile(d)
    if o.profile_ref:
        load_profile(o.profile_ref)


def lab_validate(vopts: ValidateOptions, progress=None, progress_line=None,
                 executor: SimExecutor | None = None) -> dict:
    """Calibrate, run the matrix on every device, and summarise (see the module doc).
    executor (``--scheduler``): where the cells' predictions run; default in this
    process, between the measured runs.

    Always stops every server and removes every work directory it created. A cell whose
    run fails is tried again (``retries``); a cell that still fails is reported with its
    error and left out of the statistics."""
    vopts.validate()
    o = vopts.lab
    t_start = time.monotonic()
    check_references(o, vopts.devices)
    if vopts.workload_ref:
        load_workload(vopts.workload_ref)
    if vopts.save_workload and not vopts.workload_ref:   # the store too, before the runs
        check_store(workload_dir(), vopts.save_workload, "workload", vopts.force)
    base = make_base_dir(o.datadir_on)
    warnings: list[str] = []
    devices: list[dict] = []
    date = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    say = progress_line or (lambda text: None)
    plans = cell_plans(o, vopts.replicates)
    calibration = None
    wp = None
    try:
        fs = filesystem_of(str(base))
        host = host_facts(str(base))
        host_profile = host_how = None
        if LOCAL in vopts.devices or o.profile_ref or o.measure or not vopts.workload_ref:
            host_profile, host_how = load_or_measure(o, base, progress_line,
                                                     small_writes=True)
        say("calibrating the workload (innodb_flush_log_at_trx_commit=0, one run per "
            "connection count; then trx_commit=1 at one connection: the host's cost of a "
            "sync)" if not vopts.workload_ref else
            f"using the calibrated workload {vopts.workload_ref}")
        wp, calibration = calibrate_for(vopts, base, warnings,
                                        _prefixed(progress, "calibration"), host_profile)
        for dn, device in enumerate(vopts.devices, 1):
            entry, profile, emulation = device_entry(device, base, host_profile, host_how,
                                                     o, progress_line)
            if emulation is not None and emulation.check["verdict"] == "cannot":
                entry.update({"skipped": emulation.check["notes"][0], "cells": [],
                              "summary": device_summary([])})
                warnings.append(f"{device}: skipped: {emulation.check['notes'][0]}")
                devices.append(entry)
                continue
            cells = []
            tag = f"device {dn}/{len(vopts.devices)} {device}"
            for plan, replicate in plans:
                wl, src, commit_base = calibration_for(wp, plan)
                workdir = base / f"{dn}-run-{plan.index}"
                cell = _cell_with_retries(vopts, plan, workdir, device, profile, emulation,
                                          wl, src, wp.workload, warnings,
                                          _prefixed(progress, tag), commit_base, executor)
                cells.append({**cell, "replicate": replicate})
            entry["cells"] = cells
            entry["summary"] = device_summary(cells)
            devices.append(entry)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    first = next((c["read_back"] for d in devices for c in d.get("cells", [])
                  if "read_back" in c), {})
    return {
        "schema": SCHEMA, "date": date, "command": vopts.command,
        "wall_s": round(time.monotonic() - t_start, 1),
        "backend": o.backend, "image": o.image,
        "server": {"version": first.get("version"),
                   "sim_flavor": (devices[0]["cells"][0]["sim_config"]["flavor"]
                                  if devices and devices[0].get("cells")
                                  and "sim_config" in devices[0]["cells"][0] else None)},
        "host": host, "storage": {"datadir_on": str(base.parent), "filesystem": fs},
        "matrix": {"devices": list(vopts.devices), "connections": list(o.connections),
                   "flush_methods": list(o.flush_methods), "trx_commits": list(o.trx_commits),
                   "replicates": vopts.replicates,
                   "duration_s": o.duration_s, "warmup_s": o.warmup_s,
                   "buffer_pool": o.buffer_pool, "extra": dict(o.extra),
                   "workload": o.spec(o.connections[0]).to_dict(),
                   "description": o.spec(o.connections[0]).describe()},
        "calibration": {"workload_profile": wp.to_dict() if wp else None,
                        **(calibration or {"source": vopts.workload_ref})},
        "targets_pct": dict(TARGETS),
        "devices": devices,
        "warnings": warnings,
    }


def _prefixed(progress, tag: str):
    if progress is None:
        return None

    def show(plan, phase):
        progress(plan, phase, tag)
    return show


def _cell_with_retries(vopts, plan, workdir, device, profile, emulation, wl, src, single,
                       warnings, progress, commit_base=None, executor=None) -> dict:
    o = vopts.lab
    errors = []
    for attempt in range(vopts.retries + 1):
        wd = workdir.with_name(workdir.name + (f"-retry{attempt}" if attempt else ""))
        try:
            cell = run_checked(plan, wd, warnings,
                               lambda wd=wd: run_cell(o, plan, wd, device, profile,
                                                      emulation, wl, src, single, progress,
                                                      commit_base, executor))
        except LabError as exc:
            errors.append(str(exc))
            continue
        except InnoflushError:
            raise
        if errors:
            cell["notes"].insert(0, f"tried {len(errors) + 1} times; before: {errors[-1]}")
        return cell
    warnings.append(f"{device}: cell {plan.label} failed: {errors[-1]}")
    return {"device": device, "connections": plan.connections,
            "flush_method": plan.flush_method, "trx_commit": plan.trx_commit,
            "error": errors[-1]}


def command_line() -> str:
    return "innoflush " + " ".join(sys.argv[1:]) if sys.argv else "innoflush lab validate"


__all__ = ["DEFAULT_DEVICES", "SCHEMA", "ValidateOptions", "cell_plans", "lab_validate"]
