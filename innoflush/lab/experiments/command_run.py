"""One ``lab run --workload-cmd`` run's report: the user's workload measured, beside the
simulator on the workload **advise** fitted from its own measurement of it.

advise runs during the measured window with its prediction on (the run's device
profile): it measures the live workload and fits the simulator's Workload to it
(``fit.workload``). The run's predicted figures are the simulator at the run's own
read-back settings on that workload — so the run checks advise's fit against what was
measured. When advise says it cannot explain the workload (``fit.explained`` false),
or gave no fit, the run says so and shows no predicted figures. The lab's own
derivation from the run (server CPU from /proc, the command's processes' CPU,
statements from Questions) is reported beside it (``derived_workload``), not used.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..server.for_run import advise_summary
from .advise_reading import (
    advise_fit,
    candidate_prediction,
    candidates,
    fitted_workload,
    profile_as_seen,
)
from .predict import COMPARED, compare, model_notes, predict, predicted_figures, sim_config


def no_prediction(reason: str) -> dict:
    """A run's ``predicted`` without a prediction: every compared figure null."""
    return {**{k: None for k in COMPARED}, "basis": None, "missing": reason}


def command_advise(m) -> tuple[dict, dict]:
    """(advise's summary with its fit and priced candidates, the fit as read)."""
    report = m.advisor.result if m.advisor else None
    error = m.advisor.error if m.advisor else "not run (--no-advise)"
    fit = advise_fit(report, error)
    summary = advise_summary(report, error)
    summary["fit"] = fit
    summary["candidates"] = [{"id": c.get("id"), "setting": c.get("setting"),
                              "current": c.get("current"), "candidate": c.get("candidate"),
                              **{k: v for k, v in candidate_prediction(c).items()
                                 if k not in ("id",)}}
                             for c in candidates(report)]
    return summary, fit


def command_run_doc(opts, plan, m, workdir: Path, profile) -> dict:
    """The run's report object (lab/reports/report.py's keys, with ``workload_command``)."""
    cores = os.cpu_count() or 1
    config, cfg_notes = sim_config(m.facts, cores, workdir.parent)
    derived, lines = m.derive()
    summary, fit = command_advise(m)
    wl, wl_notes = fitted_workload(fit)
    notes = list(m.notes) + model_notes(m.facts, config)
    if fit["explained"] is False:
        predicted = no_prediction("advise says its model cannot explain this workload: "
                                  + ("; ".join(fit["reasons"]) or "no reason given"))
    elif wl is None:
        predicted = no_prediction("advise gave no prediction: " + "; ".join(wl_notes))
    else:
        sim = predict(config, wl, profile_as_seen(fit, profile), opts.duration_s,
                      seed=opts.seed, warmup_s=opts.warmup_s, start=m.start)
        predicted = predicted_figures(sim, m.rtt["wall_us"] / 1e3)
        predicted["commit_round_trip_source"] = "one measured SELECT 1 round trip"
        predicted["basis"] = "the simulator on advise's fitted workload at the run's settings"
        predicted["missing"] = None
        if fit["explained"] is None:
            notes.append("advise did not say whether its model explains this workload "
                         "(no fit.explained): its fit is used as it is")
    if predicted.get("missing"):
        notes.append(f"no predicted figures: {predicted['missing']}")
    measured = m.figures()
    wl_doc = {**(wl.to_dict() if wl is not None else {}), "source": "advise",
              "derivation": ([f"advise's fit ({fit.get('source') or 'fit'})"]
                             + wl_notes + fit["reasons"]
                             + [f"cpu_cores = {cores} (this host)"] + cfg_notes),
              "sim_config": config.to_dict()}
    return {
        "index": plan.index, "label": plan.label,
        "server_process": {"pid": m.pid, "port": m.port},
        "requested": m.requested, "read_back": m.back, "settings_match": not m.mismatch,
        "settings_mismatch": m.mismatch,
        "measured": m.doc(),
        "workload": wl_doc,
        "predicted": predicted,
        "errors_pct": compare(measured, predicted),
        "advise": summary,
        "emulation": m.emulation,
        "notes": notes,
        "derived_workload": {**derived.to_dict(), "derivation": lines},
        "workload_command": m.command,
    }


def command_workload_doc(opts) -> dict:
    """lab run's top-level ``workload`` with --workload-cmd."""
    wc = opts.command
    return {"kind": "command", **wc.to_dict(), "duration_s": opts.duration_s,
            "warmup_s": opts.warmup_s, "connections": list(opts.connections),
            "description": f"the command {wc.name!r} (--workload-cmd), {wc.name!r} at "
                           f"{', '.join(map(str, opts.connections))} connection(s)"}


__all__ = ["command_advise", "command_run_doc", "command_workload_doc", "no_prediction"]
