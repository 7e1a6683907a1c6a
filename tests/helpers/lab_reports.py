"""Synthetic advise reports and lab validate --workload-cmd reports, built by the code's own
builders, for the tests of the lab's change validation, its judging and its docs."""

from __future__ import annotations

from types import SimpleNamespace

from innoflush.lab.experiments.change_cells import (
    CHANGES,
    cell_result,
    summarize,
)
from innoflush.lab.experiments.change_validation import (
    ChangeValidateOptions,
    build_report,
    mean_figures,
    replicate_figures,
    run_figures,
)
from innoflush.lab.experiments.options import LabOptions
from innoflush.lab.load.command_spec import WorkloadCommand

FIT_WORKLOAD = {"connections": 4, "cpu_us_per_trx": 150.0, "client_us_per_trx": 300.0,
                "redo_bytes_per_trx": 400}



def advise_report(tps_pct=80.0, rng=(50.0, 120.0), explained=True, fsyncs_after=10.0,
                  setting="innodb_flush_log_at_trx_commit", candidate="2", **extra) -> dict:
    """A report of the reworked advise: its fit and one priced candidate."""
    return {"fit": {"explained": explained, "checks": [{"name": "tps", "ok": explained}],
                    "reasons": [] if explained else ["server time per trx not explained"],
                    "workload": dict(FIT_WORKLOAD), "source": "fit"},
            "candidates": [
                {"id": "c1", "setting": setting, "current": "1", "candidate": candidate,
                 "changes": {"innodb_flush_log_at_trx_commit": 2}, "advised": True,
                 "finding": "trx-commit.relaxed", "unsafe": None,
                 "predicted": {"current": {"tps": 1000.0, "data_fsyncs_per_s": 990.0,
                                           "commit_latency_p50_ms": 2.0},
                               "candidate": {"tps": 1000.0 * (1 + tps_pct / 100),
                                             "data_fsyncs_per_s": fsyncs_after,
                                             "commit_latency_p50_ms": 0.2},
                               "change": {"tps_pct": tps_pct, "data_fsyncs_per_s_pct": -99.0},
                               "range": {"tps_pct": list(rng)}}}], **extra}



def measured_run(tps: float, fsyncs: float, trx_commit: int = 1) -> SimpleNamespace:
    """What run.measure_one returns, as much as a cell reads of it."""
    return SimpleNamespace(
        figures=lambda: {"tps": tps, "commit_latency_p50_ms": None, "data_fsyncs_per_s": fsyncs,
                         "data_writes_per_s": 0.0},
        wr=SimpleNamespace(commits=int(tps * 3)),
        iv=SimpleNamespace(seconds=3.0, end_gauges={"Innodb_checkpoint_age": 9_000_000},
                           gauge_deltas={"Innodb_checkpoint_age": 4_000_000}),
        observed=SimpleNamespace(commits_source="autocommit write statements"),
        server_cpu_s=0.3, client={"client_cpu": {"cpu_us_per_trx": 40.0}},
        back={"innodb_flush_method": "O_DIRECT", "innodb_flush_log_at_trx_commit": trx_commit,
              "log_bin": False, "sync_binlog": 0, "version": "10.11.19-MariaDB",
              "sim_flavor": "mariadb-10.11"},
        mismatch=[], emulation=None, notes=["a note"],
        advisor=SimpleNamespace(predict=trx_commit == 1, error=None,
                                result={"workload": {"activity": {"samples": 300}}}))



def synthetic_report() -> dict:
    """A whole report through the code's own builders: a cell priced, one advise did not
    finish, one skipped, one failed."""
    def cell(change, before, after, report, error, sim=None):
        return {"device": "local", "workload": "ins", "connections": 2,
                **cell_result(CHANGES[change], run_figures(before), run_figures(after),
                              report, error, sim)}
    cells = [cell("trx-commit", measured_run(1000.0, 995.0), measured_run(2000.0, 8.0, 2),
                  advise_report(), None, 900.0),
             cell("sync-binlog", measured_run(1000.0, 995.0), measured_run(1010.0, 990.0),
                  None, "no finish"),
             {"device": "local", "workload": "ins", "connections": 2, "change": "no-fsync",
              "skipped": "the profile does not say so"},
             {"device": "local", "workload": "ins", "connections": 4, "change": "no-fsync",
              "error": "run 1/2: boom\n    its log"}]
    vopts = ChangeValidateOptions(
        lab=LabOptions(connections=[2, 4], duration_s=3.0, warmup_s=1.0),
        devices=["local"], workloads=[WorkloadCommand("ins", "c {threads}", "p")],
        changes=list(CHANGES), command="innoflush lab validate --workload-cmd ...")
    device = {"name": "local", "ref": "local", "kind": "local",
              "profile": {"name": "p", "title": "t", "source": "profile"},
              "nonvolatile_cache": False, "cells": cells, "summary": summarize(cells)}
    return build_report(vopts, date="2026-01-01T00:00:00Z", wall_s=12.0,
                        server={"version": "10.11", "sim_flavor": "mariadb-10.11"},
                        host={"hostname": "h", "cpu_cores": 2},
                        storage={"datadir_on": "/x", "filesystem": "ext4"},
                        devices=[device], warnings=["local: cell 4 failed"])



def replicated_cell(before: list[float], after: list[float], tps_pct: float) -> dict:
    reps = [replicate_figures(i, {"tps": b}, {"tps": a})
            for i, (b, a) in enumerate(zip(before, after, strict=True), 1)]
    fb = mean_figures({"tps": before[0]}, [{"tps": b} for b in before])
    fa = mean_figures({"tps": after[0]}, [{"tps": a} for a in after])
    return {"device": "d", "workload": "w", "connections": 1,
            **cell_result(CHANGES["no-fsync"], fb, fa,
                          advise_report(tps_pct=tps_pct, setting="innodb_flush_method",
                                        candidate="O_DIRECT_NO_FSYNC"), None,
                          replicates=reps)}


def replicated_report(cells: list[dict] | None = None) -> dict:
    """A report of replicated cells (the synthetic report's frame)."""
    cells = cells or [replicated_cell([1000.0, 1040.0], [1070.0, 1000.0], 0.0)]
    r = synthetic_report()
    r["matrix"]["replicates"] = 2
    r["devices"] = [{**r["devices"][0], "cells": cells, "summary": summarize(cells)}]
    r["summary"] = {**summarize(cells), "by_change": {"no-fsync": summarize(cells)}}
    return r
