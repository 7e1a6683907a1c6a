"""The changes `lab validate --workload-cmd` checks and its matrix of cells (pure): each
change's setting and values, the cells planned, a cell's result from its before and after
runs and advise's report, and the summary over the cells."""

from __future__ import annotations

from dataclasses import dataclass

from ...advisor.check import check
from ...advisor.rules import device_from_profile
from ...errors import InnoflushError
from .advise_reading import (
    advise_fit,
    candidate_prediction,
    find_candidate,
)
from .change_judging import judge
from .options import RunPlan
from .predict import error_pct

NONVOLATILE = "non-volatile-cache-or-flush-ignored"


@dataclass(frozen=True)
class Change:
    """A candidate change: the server variable, its value before and after, and the
    simulator field advise's candidates set."""

    id: str
    setting: str
    before: str
    after: str
    sim_field: str
    sim_after: object
    title: str
    needs_nonvolatile_cache: bool = False
    log_bin: bool = False

    def settings(self, after: bool) -> dict:
        """flush method, trx_commit and sync_binlog of the before or the after run."""
        s = {"flush_method": "O_DIRECT", "trx_commit": 1,
             "sync_binlog": 1 if self.log_bin else None}
        if after:
            s[{"innodb_flush_method": "flush_method",
               "innodb_flush_log_at_trx_commit": "trx_commit",
               "sync_binlog": "sync_binlog"}[self.setting]] = self.sim_after
        return s

    def to_dict(self) -> dict:
        return {"id": self.id, "setting": self.setting, "before": self.before,
                "after": self.after, "title": self.title, "log_bin": self.log_bin,
                "needs_nonvolatile_cache": self.needs_nonvolatile_cache}


CHANGES = {c.id: c for c in (
    Change("trx-commit", "innodb_flush_log_at_trx_commit", "1", "2",
           "innodb_flush_log_at_trx_commit", 2, "innodb_flush_log_at_trx_commit 1 -> 2"),
    Change("no-fsync", "innodb_flush_method", "O_DIRECT", "O_DIRECT_NO_FSYNC",
           "innodb_flush_method", "O_DIRECT_NO_FSYNC",
           "innodb_flush_method O_DIRECT -> O_DIRECT_NO_FSYNC", needs_nonvolatile_cache=True),
    Change("sync-binlog", "sync_binlog", "1", "0", "sync_binlog", 0,
           "sync_binlog 1 -> 0 (binary log on)", log_bin=True),
    # the same redo change where the binlog's sync stays in the commit (two-phase commit:
    # the one-sync removal whose price depends on how the two syncs serialise)
    Change("trx-commit-binlog", "innodb_flush_log_at_trx_commit", "1", "2",
           "innodb_flush_log_at_trx_commit", 2,
           "innodb_flush_log_at_trx_commit 1 -> 2 (binary log on, sync_binlog=1)",
           log_bin=True),
)}
DEFAULT_CHANGES = ("trx-commit", "no-fsync", "sync-binlog")


# ---- the matrix (pure) -------------------------------------------------------------------

@dataclass(frozen=True)
class CellPlan:
    index: int
    total: int
    workload: str
    connections: int
    change: str

    def run_plans(self) -> tuple[RunPlan, RunPlan]:
        """The before and the after run (numbered 2i-1, 2i of the device's 2n runs)."""
        c = CHANGES[self.change]
        out = []
        for n, after in enumerate((False, True)):
            s = c.settings(after)
            out.append(RunPlan(2 * self.index - 1 + n, 2 * self.total, s["flush_method"],
                               s["trx_commit"], s["sync_binlog"], self.connections))
        return out[0], out[1]


def plan_cells(workloads: list[str], connections: list[int],
               changes: list[str]) -> list[CellPlan]:
    """One device's cells: workload × connections × change, in that order."""
    combos = [(w, n, c) for w in workloads for n in connections for c in changes]
    return [CellPlan(i + 1, len(combos), w, n, c) for i, (w, n, c) in enumerate(combos)]


def nonvolatile_cache(profile) -> bool:
    """Whether the device profile says its write cache survives a power loss (a sync is
    then not needed for durability: O_DIRECT_NO_FSYNC is safe)."""
    dev = device_from_profile(profile)
    return dev.verdict == NONVOLATILE and dev.o_direct_no_fsync_safe is not False


def ratio_of(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or a <= 0:
        return None
    return round(b / a, 4)


def cell_result(change: Change, before: dict, after: dict, advise_report: dict | None,
                advise_error: str | None, simulated_before_tps: float | None = None,
                simulate_missing: str | None = None,
                replicates: list[dict] | None = None,
                after_report: dict | None = None) -> dict:
    """One cell's comparison (pure): before/after are the runs' measured figures (``tps``,
    ``data_fsyncs_per_s``, ...), advise_report the before run's advise report (None when
    it did not finish: advise_error says why), simulated_before_tps the simulator at the
    before settings on advise's fitted workload; replicates: with ``--replicates``, each
    replicate's figures (``ratio`` among them), before/after then being their means —
    the verdicts are judged against their spread (lab/experiments/change_judging.py).
    after_report: advise's report of the (first) after run: the cell's ``check`` is
    advise --check's document of the two advise windows (innoflush/advisor/check.py), the
    verdict a user gets on their own server, beside the lab's on its whole runs."""
    fit = advise_fit(advise_report, advise_error)
    cand = find_candidate(advise_report, change.setting, change.after, change.sim_field,
                          change.sim_after)
    pred = candidate_prediction(cand)
    if not fit["ran"]:
        pred["missing"] = f"advise gave no prediction: {fit['error']}"
    measured = ratio_of(before.get("tps"), after.get("tps"))
    predicted = pred["ratio"] if fit["ran"] else None
    verdict = judge(predicted, measured, [r.get("ratio") for r in replicates or []])
    interval = pred["ratio_interval"] if fit["ran"] and predicted is not None else None
    fs_m = after.get("data_fsyncs_per_s")
    fs_p, basis = data_fsyncs_basis(pred, after, replicates)
    sim_missing = simulate_missing
    if simulated_before_tps is None and sim_missing is None:
        sim_missing = "advise fitted no workload"
    notes = []
    if fit["explained"] is False:
        notes.append("advise says its model cannot explain this workload: "
                     + ("; ".join(fit["reasons"]) or "no reason given"))
    if pred["missing"]:
        notes.append(pred["missing"])
    checked = advise_check(advise_report if fit["ran"] else None, after_report)
    if checked is not None:
        notes.append(f"advise --check on advise's two windows: {checked['verdict']}")
    return {
        "check": checked,
        "change": change.id, "setting": change.setting, "before_value": change.before,
        "after_value": change.after, "before": before, "after": after,
        "measured_ratio": measured,
        "measured_change_pct": None if measured is None else round(100 * (measured - 1), 1),
        "advise": {"ran": fit["ran"], "error": fit["error"], "explained": fit["explained"],
                   "reasons": fit["reasons"], "fit_workload": fit["workload"],
                   "candidate": pred},
        "predicted_ratio": predicted,
        "predicted_range": pred["ratio_range"] if fit["ran"] else None,
        "predicted_interval": interval,
        "interval_holds": (None if interval is None or measured is None
                           else interval[0] <= measured <= interval[1]),
        "replicates": replicates or [], "measured_spread_pct": verdict["spread_pct"],
        "noise_band_pct": verdict["noise_band_pct"],
        "ratio_factor": verdict["ratio_factor"], "within_factor": verdict["within_factor"],
        "direction": verdict["direction"],
        "data_fsyncs_after": {"measured": fs_m, "predicted": fs_p, "basis": basis,
                              "error_pct": error_pct(fs_m, fs_p)},
        "simulate_before": {"measured_tps": before.get("tps"),
                            "predicted_tps": simulated_before_tps,
                            "error_pct": error_pct(before.get("tps"), simulated_before_tps),
                            "missing": sim_missing if simulated_before_tps is None else None},
        # advise's own simulation of the after setting on the workload it measured
        # (trx_commit=2 included): the model's TPS there, beside the after run's
        "simulate_after": {"measured_tps": after.get("tps"),
                           "predicted_tps": pred["tps_candidate"],
                           "error_pct": error_pct(after.get("tps"), pred["tps_candidate"])},
        "notes": notes,
    }


def advise_check(before: dict | None, after: dict | None) -> dict | None:
    """advise --check's document of the before run's report and the after run's (the
    saved report's path, the servers and the warnings left out: they are the cell's)."""
    if not before or not after:
        return None
    try:
        doc = check(before, after, same_server_required=False)
    except InnoflushError:
        return None
    return {k: doc[k] for k in ("verdict", "exit_code", "applied", "prediction", "workload",
                                "figures", "notes")}


def after_settled(after: dict, replicates: list[dict] | None) -> bool | None:
    """Whether every after run's page cleaner was at work before its window
    (``settle.reached``); None where none was made to settle."""
    runs = [r.get("after") or {} for r in replicates] if replicates else [after]
    marks = [(r.get("settle") or {}).get("reached") for r in runs]
    if all(m is None for m in marks):
        return None
    return all(m is True for m in marks)


def data_fsyncs_basis(pred: dict, after: dict, replicates: list[dict] | None
                      ) -> tuple[float | None, str]:
    """The predicted data fsyncs/s after the change that describe the after runs (pure):
    advise's settled figure where their page cleaners were at work and advise says
    its own window ends short of the async point ("settled"); else its window's
    ("window")."""
    settled = pred.get("data_fsyncs_per_s_settled")
    if settled is not None and after_settled(after, replicates):
        return settled, "settled"
    return pred.get("data_fsyncs_per_s_candidate"), "window"


def _mape(errors: list) -> dict:
    have = [abs(e) for e in errors if e is not None]
    return {"mape_pct": round(sum(have) / len(have), 1) if have else None,
            "cells": len(have)}


def summarize(cells: list[dict]) -> dict:
    """Totals over cells (pure): ``within_factor`` "k/n" (and ``within_factor_share``)
    over the cells with a measured and a predicted ratio; ``direction_right`` "k/n" over
    the cells judged; ``measured_within_noise``, the cells whose measured change is
    flat only within the replicates' noise; the MAPE of the data fsyncs/s after the
    change, of the simulated before TPS, of advise's simulated after TPS and of both
    together; ``not_explained`` (advise said its model cannot explain the workload) and
    ``no_prediction`` (measured, but advise priced no ratio)."""
    ok = [c for c in cells if "measured_ratio" in c]
    judged = [c for c in ok if c["within_factor"] is not None]
    inside = sum(1 for c in judged if c["within_factor"])
    dirs = [c["direction"]["right"] for c in ok if c["direction"]["right"] is not None]
    noise = sum(1 for c in ok if c["direction"].get("within_noise"))
    holds = [c["interval_holds"] for c in ok if c.get("interval_holds") is not None]
    return {
        "cells": len(cells), "measured_cells": len(ok),
        "skipped_cells": sum(1 for c in cells if "skipped" in c),
        "failed_cells": sum(1 for c in cells if "error" in c),
        "within_factor": f"{inside}/{len(judged)}",
        "within_factor_share": round(inside / len(judged), 3) if judged else None,
        "direction_right": f"{sum(dirs)}/{len(dirs)}",
        "measured_within_noise": noise,
        "interval_holds": f"{sum(holds)}/{len(holds)}",
        "data_fsyncs_after_mape": _mape([c["data_fsyncs_after"]["error_pct"] for c in ok]),
        "simulate_tps_mape": _mape([c["simulate_before"]["error_pct"] for c in ok]),
        "simulate_after_tps_mape": _mape([(c.get("simulate_after") or {}).get("error_pct")
                                          for c in ok]),
        "simulate_all_tps_mape": _mape(
            [c["simulate_before"]["error_pct"] for c in ok]
            + [(c.get("simulate_after") or {}).get("error_pct") for c in ok]),
        "not_explained": sum(1 for c in ok if c["advise"]["explained"] is False),
        "no_prediction": sum(1 for c in ok if c["predicted_ratio"] is None),
    }
