"""`innoflush lab validate --workload-cmd NAME=CMD ...`: does advise price a change right
on the user's own workload?

For every device (this host's storage, ``local``, and emulated device profiles) ×
named workload (``--workload-cmd``) × connection count × change (``--changes``):

- a **before** run: a fresh server at the before settings (innodb_flush_log_at_trx_commit=1,
  O_DIRECT, the binary log off — on with sync_binlog=1 for the sync-binlog change) under
  the command, with ``advise`` measuring it during the window and pricing its candidate
  changes on the device's profile (``run.measure_one``, lab/load/external.py); its fit and
  predictions wait until the window has closed;
- an **after** run: a fresh server with the change made (trx_commit=2;
  O_DIRECT_NO_FSYNC — only on a device whose profile says its cache is non-volatile,
  skipped with a note elsewhere; sync_binlog=0), under the same command, with advise
  measuring it alike but not predicting: observing takes CPU from the workload
  (bench/observer_cost.py), so one side observed and the other not made every change
  look better than it was
  (docs/validation/notebook/2026-11-27-whole-matrix-advise-observing-both-sides.md).

Per cell (``cell_result``, pure): the measured TPS before and after and their ratio;
advise's predicted ratio (1 + the candidate's tps_pct / 100) and its range; whether the
prediction is within ×/÷ ``FACTOR`` of the measured ratio; whether its direction is
right (down / flat within ±3 % / up, as lab validate classes them); the data fsyncs/s
after the change, predicted beside measured; and the simulator at the before settings
on the workload advise fitted, beside the measured before TPS. ``summarize`` (pure)
totals them per device and overall. lab/reports/change_report.py renders the report.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from ...errors import OptionError, UsageError
from ...live.facts import filesystem_of
from ..load.command_spec import WorkloadCommand
from .advise_reading import (
    advise_fit,
    fitted_workload,
    profile_as_seen,
)
from .change_cells import (
    CHANGES,
    DEFAULT_CHANGES,
    CellPlan,
    Change,
    cell_result,
    nonvolatile_cache,
    plan_cells,
    ratio_of,
    summarize,
)
from .change_judging import FACTOR, classify
from .options import LabError, LabOptions, RunPlan
from .predict import predict, sim_config
from .prediction_accuracy import NOISE_PCT
from .repeatability import (
    direction_beyond_noise,
    repeat_pairs,
    repeatability,
    resolution_warning,
)
from .run import measure_one
from .run_setup import load_or_measure, make_base_dir, run_checked
from .validate import LOCAL, check_references, device_entry, host_facts

SCHEMA = "innoflush.lab-validate-changes/1"
@dataclass
class ChangeValidateOptions:
    lab: LabOptions = field(default_factory=LabOptions)
    devices: list[str] = field(default_factory=lambda: [LOCAL])
    workloads: list[WorkloadCommand] = field(default_factory=list)
    changes: list[str] = field(default_factory=lambda: list(DEFAULT_CHANGES))
    retries: int = 1                      # a run whose server fails is tried again once
    replicates: int = 1                   # before/after runs per cell (the noise band)
    settle_after_s: float = 0.0           # after runs: at most this long to a working cleaner
    command: str | None = None            # the command line, for the report

    def validate(self) -> None:
        if not self.workloads:
            raise OptionError("--workload-cmd: give at least one command")
        self.lab.validate()
        for wc in self.workloads:
            replace(self.lab, command=wc).validate()
        if not self.devices:
            raise OptionError("--devices: give at least one device")
        if len(set(self.devices)) != len(self.devices):
            raise OptionError("--devices: a device is listed twice")
        if not self.changes:
            raise OptionError("--changes: give at least one change")
        for c in self.changes:
            if c not in CHANGES:
                raise OptionError(f"--changes {c!r}: choose from {', '.join(CHANGES)}")
        if len(set(self.changes)) != len(self.changes):
            raise OptionError("--changes: a change is listed twice")
        if not 1 <= self.replicates <= 5:
            raise OptionError("--replicates must be between 1 and 5")
        if not 0 <= self.retries <= 3:
            raise UsageError("retries must be between 0 and 3")
        if not 0 <= self.settle_after_s <= 3600:
            raise OptionError(f"--settle-after must be between 0 and 3600 s "
                             f"(got {self.settle_after_s:g})")


# ---- the runs ----------------------------------------------------------------------------

def run_figures(m) -> dict:
    """A run's measured figures for a cell (m: run.Measured)."""
    fig = m.figures()
    return {"tps": fig["tps"], "data_fsyncs_per_s": fig["data_fsyncs_per_s"],
            "data_writes_per_s": fig["data_writes_per_s"], "commits": m.wr.commits,
            "seconds": round(m.iv.seconds, 3),
            "commits_source": m.observed.commits_source,
            "server_cpu_us_per_trx": (round(m.server_cpu_s * 1e6 / m.wr.commits, 2)
                                      if m.server_cpu_s is not None else None),
            "command_cpu_us_per_trx": m.client["client_cpu"]["cpu_us_per_trx"],
            "settings": {k: m.back[k] for k in ("innodb_flush_method",
                                                "innodb_flush_log_at_trx_commit",
                                                "log_bin", "sync_binlog")},
            "settings_match": not m.mismatch, "emulation": m.emulation,
            "version": m.back.get("version"), "sim_flavor": m.back.get("sim_flavor"),
            "observer": _observer(m), "checkpoint_age": window_checkpoint_age(m.iv),
            "settle": getattr(m.wr, "settle", None),
            "notes": list(m.notes)}


def window_checkpoint_age(iv) -> dict:
    """The redo since the last checkpoint at the window's start and end, bytes (None
    where the server does not show it). MariaDB's page cleaner sleeps, with
    innodb_max_dirty_pages_pct_lwm=0, until the age reaches its async point (7/8 of the
    log's margin): a run that gets there mid-window syncs its data files for part of it
    (docs/validation/notebook/2026-11-28-write-ahead-rule-each-pages.md)."""
    end = iv.end_gauges.get("Innodb_checkpoint_age")
    delta = iv.gauge_deltas.get("Innodb_checkpoint_age")
    return {"start": end - delta if end is not None and delta is not None else None,
            "end": end}


def _observer(m) -> dict:
    """What advise did during the run: both sides of a cell are to carry the same load."""
    adv = m.advisor
    report = adv.result if adv is not None else None
    activity = ((report or {}).get("workload") or {}).get("activity") or {}
    return {"advise": adv is not None, "predicted": bool(adv is not None and adv.predict),
            "processlist_samples": activity.get("samples"),
            "error": adv.error if adv is not None else None}


MEANED = ("tps", "data_fsyncs_per_s", "data_writes_per_s", "server_cpu_us_per_trx",
          "command_cpu_us_per_trx")


def replicate_figures(i: int, before: dict, after: dict) -> dict:
    """One replicate of a cell: its before and after figures (tps, data fsyncs/s, data
    writes/s, the checkpoint age at the window's ends), each run's own notes, and its
    ratio. The notes are kept per run because a side's mean keeps the first replicate's
    only, and a replicate far from the others is told by its own (the hypervisor's
    steal, syncs slower than the emulated draw)."""
    pick = ("tps", "data_fsyncs_per_s", "data_writes_per_s", "checkpoint_age", "settle")

    def side(run: dict) -> dict:
        return {**{k: run.get(k) for k in pick}, "notes": list(run.get("notes") or [])}
    return {"replicate": i, "before": side(before), "after": side(after),
            "ratio": ratio_of(before.get("tps"), after.get("tps"))}


def mean_figures(first: dict, reps: list[dict]) -> dict:
    """A side's figures over its replicates (pure): MEANED's keys the mean (None if a
    replicate lacks it), the rest (settings, notes, emulation) the first replicate's."""
    out = dict(first)
    for k in MEANED:
        xs = [r.get(k) for r in reps] if all(k in r for r in reps) else []
        if xs and all(x is not None for x in xs):
            out[k] = round(sum(xs) / len(xs), 2)
    out["replicates"] = len(reps)
    return out


def _measure(o: LabOptions, plan: RunPlan, workdir: Path, warnings: list[str], progress,
             emulation, profile, predict_: bool, retries: int):
    errors: list[str] = []
    for attempt in range(retries + 1):
        wd = workdir.with_name(workdir.name + (f"-retry{attempt}" if attempt else ""))
        try:
            return run_checked(plan, wd, warnings, lambda wd=wd: measure_one(
                o, plan, wd, progress, emulation, profile, advise_predict=predict_,
                advise_observe=True)), errors
        except LabError as exc:
            errors.append(str(exc))
    raise LabError(errors[-1])


def _simulate_before(m, fit: dict, o: LabOptions, profile, base: Path
                     ) -> tuple[float | None, str | None]:
    """The simulator at the before run's read-back settings on advise's fitted workload."""
    if fit["explained"] is False:
        return None, "advise says its model cannot explain this workload"
    wl, why = fitted_workload(fit)
    if wl is None:
        return None, "; ".join(why)
    config, _ = sim_config(m.facts, os.cpu_count() or 1, base)
    sim = predict(config, wl, profile_as_seen(fit, profile), o.duration_s, seed=o.seed,
                  warmup_s=o.warmup_s, start=m.start)
    return round(sim.tps, 2), None


def run_change_cell(vopts: ChangeValidateOptions, cp: CellPlan, wc: WorkloadCommand,
                    device: str, profile, emulation, base: Path, dn: int,
                    warnings: list[str], progress) -> dict:
    """The before and the after run of one cell (each --replicates times), and their
    comparison."""
    change = CHANGES[cp.change]
    head = {"device": device, "workload": wc.name, "connections": cp.connections,
            "change": change.id}
    if change.needs_nonvolatile_cache and not nonvolatile_cache(profile):
        return {**head, "skipped": f"{change.after} is only safe on a device whose cache is "
                f"non-volatile; the profile {profile.name} does not say so"}
    o = replace(vopts.lab, command=wc, log_bin=change.log_bin, advise=True)
    p_before, p_after = cp.run_plans()
    # per replicate: (before Measured, after Measured); the retries' errors per side
    runs: list[tuple] = []
    errs: dict[str, list[str]] = {"before": [], "after": []}
    try:
        for rep in range(1, vopts.replicates + 1):
            tag = "" if vopts.replicates == 1 else f"-r{rep}"
            side = {}
            # A B B A: a drift of the host over the cell weighs on both sides alike
            for which in (("before", "after") if rep % 2 else ("after", "before")):
                plan = p_before if which == "before" else p_after
                # the after run settles (a server kept at the new setting); advise
                # observes the before run as it finds it
                o_side = o if which == "before" else replace(o, settle_s=vopts.settle_after_s)
                # advise observes both sides alike (observing takes CPU: on the before
                # side only it made every change look better than it is); it predicts
                # from the before side only
                side[which], e = _measure(
                    o_side, plan,
                    base / f"{dn}-run-{plan.index}{tag}", warnings, progress, emulation,
                    profile, which == "before", vopts.retries)
                errs[which] += e
            runs.append((side["before"], side["after"]))
    except LabError as exc:
        warnings.append(f"{device}: cell {cp.index} ({wc.name}, {cp.connections} conn, "
                        f"{change.id}) failed: {exc}")
        return {**head, "error": str(exc)}
    # advise's prediction is the first replicate's (its before run is also the one the
    # simulated before TPS is set against); every before run ran advise alike
    mb = runs[0][0]
    report = mb.advisor.result if mb.advisor else None
    error = mb.advisor.error if mb.advisor else "advise did not run"
    fit = advise_fit(report, error)
    sim_tps, sim_missing = _simulate_before(mb, fit, o, profile, base)
    figs = [(run_figures(b), run_figures(a)) for b, a in runs]
    fb, fa = figs[0]
    replicates = None
    if len(figs) > 1:
        replicates = [replicate_figures(i, b, a) for i, (b, a) in enumerate(figs, 1)]
        fb = mean_figures(fb, [b for b, _ in figs])
        fa = mean_figures(fa, [a for _, a in figs])
    ma = runs[0][1]
    cell = cell_result(change, fb, fa, report, error, sim_tps, sim_missing, replicates,
                       after_report=ma.advisor.result if ma.advisor else None)
    for which, e in errs.items():
        if e:
            cell["notes"].insert(0, f"a {which} run was tried again ({len(e)} failure"
                                 f"{'s' if len(e) > 1 else ''}); the last: {e[-1]}")
    # advise's whole report: what it measured and fitted, to fit it again offline
    # (bench/refit_changes.py) when the model changes
    cell["advise_report"] = report
    return {**head, **cell}


def lab_change_validate(vopts: ChangeValidateOptions, progress=None,
                        progress_line=None) -> dict:
    """Every device's cells, and the summaries (see the module doc). Always stops every
    server and removes every work directory it created."""
    vopts.validate()
    o = vopts.lab
    t_start = time.monotonic()
    check_references(o, vopts.devices)
    base = make_base_dir(o.datadir_on)
    warnings: list[str] = []
    devices: list[dict] = []
    date = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    cells_plan = plan_cells([w.name for w in vopts.workloads], list(o.connections),
                            list(vopts.changes))
    by_name = {w.name: w for w in vopts.workloads}
    server: dict = {"version": None, "sim_flavor": None}
    try:
        fs = filesystem_of(str(base))
        host = host_facts(str(base))
        host_profile, host_how = load_or_measure(o, base, progress_line, small_writes=True)
        for dn, device in enumerate(vopts.devices, 1):
            entry, profile, emulation = device_entry(device, base, host_profile, host_how,
                                                     o, progress_line)
            entry["profile"]["data"] = profile.to_dict()   # the device, as predicted on
            entry["nonvolatile_cache"] = nonvolatile_cache(profile)
            if emulation is not None and emulation.check["verdict"] == "cannot":
                entry.update({"skipped": emulation.check["notes"][0], "cells": [],
                              "summary": summarize([])})
                warnings.append(f"{device}: skipped: {emulation.check['notes'][0]}")
                devices.append(entry)
                continue
            tag = f"device {dn}/{len(vopts.devices)} {device}"
            show = None if progress is None else (
                lambda plan, phase, tag=tag: progress(plan, phase, tag))
            cells = []
            for cp in cells_plan:
                cell = run_change_cell(vopts, cp, by_name[cp.workload], entry["name"],
                                       profile, emulation, base, dn, warnings, show)
                if server["version"] is None and "before" in cell:
                    server = {k: cell["before"][k] for k in ("version", "sim_flavor")}
                cells.append(cell)
            entry["cells"] = cells
            entry["summary"] = summarize(cells)
            devices.append(entry)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return build_report(vopts, date=date, wall_s=time.monotonic() - t_start, server=server,
                        host=host, storage={"datadir_on": str(base.parent), "filesystem": fs},
                        devices=devices, warnings=warnings)


def build_report(vopts: ChangeValidateOptions, *, date: str, wall_s: float, server: dict,
                 host: dict, storage: dict, devices: list[dict], warnings: list[str]) -> dict:
    """The report (lab/reports/change_report.py's keys) of the devices' cells and summaries."""
    o = vopts.lab
    every = [c for d in devices for c in d.get("cells", [])]
    # the host's own noise, from runs of identical settings (lab/experiments/repeatability.py): a
    # change's direction is judged where it is larger than the run's 90th percentile
    # (and than the cell's own replicates' spread)
    rep = repeatability(repeat_pairs(devices), FACTOR)
    band = rep["p90_difference_pct"]
    coarse = resolution_warning(rep, FACTOR)
    if coarse:
        warnings = [*warnings, coarse]
    for d in devices:
        if "summary" in d:
            d["summary"]["direction_beyond_noise"] = direction_beyond_noise(
                d.get("cells", []), band)

    def summary(cells: list[dict]) -> dict:
        return {**summarize(cells),
                "direction_beyond_noise": direction_beyond_noise(cells, band)}

    return {
        "schema": SCHEMA, "date": date, "command": vopts.command,
        "wall_s": round(wall_s, 1),
        "backend": o.backend, "image": o.image, "server": server,
        "host": host, "storage": storage,
        "matrix": {"devices": list(vopts.devices),
                   "workloads": [w.to_dict() for w in vopts.workloads],
                   "connections": list(o.connections),
                   "changes": [CHANGES[c].to_dict() for c in vopts.changes],
                   "duration_s": o.duration_s, "warmup_s": o.warmup_s,
                   "settle_after_s": vopts.settle_after_s,
                   "buffer_pool": o.buffer_pool, "extra": dict(o.extra),
                   "replicates": vopts.replicates,
                   "factor": FACTOR, "flat_band_pct": NOISE_PCT},
        "devices": devices,
        "summary": {**summary(every), "repeatability": rep,
                    "by_change": {c: summary([x for x in every if x.get("change") == c])
                                  for c in vopts.changes}},
        "warnings": warnings,
    }


__all__ = ["CHANGES", "DEFAULT_CHANGES", "FACTOR", "SCHEMA", "Change", "CellPlan",
           "ChangeValidateOptions", "build_report", "cell_result", "classify",
           "lab_change_validate", "nonvolatile_cache", "plan_cells", "run_figures",
           "summarize"]
