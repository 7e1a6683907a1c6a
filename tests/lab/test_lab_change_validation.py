"""lab validate --workload-cmd's own logic, with synthetic advise reports (pure): the
matrix, which devices take O_DIRECT_NO_FSYNC, one cell's comparison — also when advise
gave no prediction, could not explain the workload or did not finish —, the summary's
arithmetic and the reports. The real short sysbench run is in
test_lab_command_server.py."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from innoflush.errors import UsageError
from innoflush.lab.experiments.advise_reading import (
    advise_fit,
    candidate_prediction,
    fitted_workload,
)
from innoflush.lab.experiments.change_cells import (
    CHANGES,
    cell_result,
    nonvolatile_cache,
    plan_cells,
    summarize,
)
from innoflush.lab.experiments.change_validation import (
    FACTOR,
    ChangeValidateOptions,
    classify,
    run_figures,
)
from innoflush.lab.experiments.options import LabOptions
from innoflush.lab.load.command_spec import WorkloadCommand
from innoflush.lab.reports import change_report
from innoflush.profiles import load_profile
from innoflush.simulator import Workload
from tests.helpers.lab_reports import FIT_WORKLOAD, advise_report, measured_run, synthetic_report

BEFORE = {"tps": 1000.0, "data_fsyncs_per_s": 995.0}
AFTER = {"tps": 2000.0, "data_fsyncs_per_s": 8.0}


# ---- the matrix ------------------------------------------------------------------------------

def test_cells_are_workload_by_connections_by_change_each_a_before_and_an_after_run():
    cells = plan_cells(["ins", "rw"], [1, 4], ["trx-commit", "sync-binlog"])
    assert [(c.workload, c.connections, c.change) for c in cells] == [
        ("ins", 1, "trx-commit"), ("ins", 1, "sync-binlog"), ("ins", 4, "trx-commit"),
        ("ins", 4, "sync-binlog"), ("rw", 1, "trx-commit"), ("rw", 1, "sync-binlog"),
        ("rw", 4, "trx-commit"), ("rw", 4, "sync-binlog")]
    assert [c.index for c in cells] == list(range(1, 9)) and cells[0].total == 8
    before, after = cells[3].run_plans()           # ins, 4 conn, sync-binlog
    assert (before.index, after.index, before.total) == (7, 8, 16)
    assert (before.flush_method, before.trx_commit, before.sync_binlog,
            before.connections) == ("O_DIRECT", 1, 1, 4)
    assert (after.flush_method, after.trx_commit, after.sync_binlog) == ("O_DIRECT", 1, 0)
    b, a = plan_cells(["x"], [2], ["trx-commit"])[0].run_plans()
    assert (b.trx_commit, a.trx_commit, b.sync_binlog, a.sync_binlog) == (1, 2, None, None)
    b, a = plan_cells(["x"], [2], ["no-fsync"])[0].run_plans()
    assert (b.flush_method, a.flush_method, a.trx_commit) == ("O_DIRECT", "O_DIRECT_NO_FSYNC", 1)
    assert CHANGES["sync-binlog"].log_bin and not CHANGES["trx-commit"].log_bin


@pytest.mark.parametrize("profile, safe", [
    ("samsung-pm9a3", True), ("optane-p4800x", True), ("samsung-990-pro", False),
    ("hdd-wd2502abys", False), ("intel-pc3100", False), ("optane-900p", False)])
def test_no_fsync_only_where_the_profile_says_the_cache_is_non_volatile(profile, safe):
    assert nonvolatile_cache(load_profile(profile)) is safe


def test_directions_have_a_flat_band_of_three_percent():
    assert [classify(r) for r in (None, 1.0, 1.03, 0.97, 1.031, 0.969, 3.5)] == [
        None, "flat", "flat", "flat", "up", "down", "up"]


# ---- one cell ---------------------------------------------------------------------------------

def test_a_cell_compares_advise_s_price_with_the_measured_change():
    c = cell_result(CHANGES["trx-commit"], BEFORE, AFTER, advise_report(), None,
                    simulated_before_tps=900.0)
    assert c["measured_ratio"] == 2.0 and c["measured_change_pct"] == 100.0
    assert c["predicted_ratio"] == pytest.approx(1.8)
    assert c["predicted_range"] == [pytest.approx(1.5), pytest.approx(2.2)]
    assert c["ratio_factor"] == pytest.approx(0.9) and c["within_factor"] is True
    assert c["direction"] == {"measured": "up", "predicted": "up", "right": True,
                              "within_noise": False}
    assert c["replicates"] == [] and c["measured_spread_pct"] is None
    assert c["noise_band_pct"] == 3.0
    assert c["data_fsyncs_after"] == {"measured": 8.0, "predicted": 10.0, "basis": "window",
                                      "error_pct": 25.0}
    assert c["simulate_before"]["error_pct"] == -10.0 and c["simulate_before"]["missing"] is None
    # advise's simulation of the after setting: 1,800 against 2,000 measured
    assert c["simulate_after"] == {"measured_tps": 2000.0, "predicted_tps": 1800.0,
                                   "error_pct": -10.0}
    a = c["advise"]
    assert a["explained"] is True and a["fit_workload"] == FIT_WORKLOAD
    assert a["candidate"]["advised"] is True and a["candidate"]["id"] == "c1"
    assert c["notes"] == []


def _settled_report(settled: float | None) -> dict:
    rep = advise_report(fsyncs_after=4.0)
    rep["candidates"][0]["predicted"]["settled"] = (
        None if settled is None else {"tps": 1800.0, "data_fsyncs_per_s": settled})
    return rep


SETTLED = {"reached": True, "how": "async_point", "seconds": 12.5, "age_bytes": 71_000_000,
           "async_point_bytes": 70_717_088}


def test_settled_after_runs_are_held_to_advise_s_settled_figure():
    after = {**AFTER, "settle": SETTLED}
    c = cell_result(CHANGES["trx-commit"], BEFORE, after, _settled_report(10.0), None)
    assert c["advise"]["candidate"]["data_fsyncs_per_s_settled"] == 10.0
    assert c["data_fsyncs_after"] == {"measured": 8.0, "predicted": 10.0, "basis": "settled",
                                      "error_pct": 25.0}
    # an after run that did not get there is a fresh server's first seconds: advise's
    # own window is what describes it
    short = {**AFTER, "settle": {**SETTLED, "reached": False}}
    c = cell_result(CHANGES["trx-commit"], BEFORE, short, _settled_report(10.0), None)
    assert c["data_fsyncs_after"]["basis"] == "window"
    assert c["data_fsyncs_after"]["predicted"] == 4.0
    # nor with no settled figure (advise's window got to the point on its own)
    c = cell_result(CHANGES["trx-commit"], BEFORE, after, _settled_report(None), None)
    assert c["data_fsyncs_after"]["basis"] == "window"


def test_with_replicates_every_after_run_must_have_settled():
    after = {**AFTER, "settle": SETTLED}
    reps = [{"replicate": 1, "after": {"settle": SETTLED}, "ratio": 2.0},
            {"replicate": 2, "after": {"settle": {**SETTLED, "reached": False}},
             "ratio": 2.0}]
    c = cell_result(CHANGES["trx-commit"], BEFORE, after, _settled_report(10.0), None,
                    replicates=reps)
    assert c["data_fsyncs_after"]["basis"] == "window"
    reps[1]["after"]["settle"] = SETTLED
    c = cell_result(CHANGES["trx-commit"], BEFORE, after, _settled_report(10.0), None,
                    replicates=reps)
    assert c["data_fsyncs_after"]["basis"] == "settled"


def test_settling_is_for_an_outside_command_and_bounded():
    with pytest.raises(UsageError, match="--settle-after"):
        LabOptions(settle_s=10.0).validate()
    wc = WorkloadCommand("w", "true")
    with pytest.raises(UsageError, match="--settle-after"):
        ChangeValidateOptions(lab=LabOptions(), workloads=[wc],
                              settle_after_s=-1.0).validate()


def test_within_the_factor_at_its_edges_and_beyond():
    for pct_, inside in ((100 * (2 * FACTOR - 1), True), (100 * (2 / FACTOR - 1), True),
                         (200.0, False), (10.0, False)):
        c = cell_result(CHANGES["trx-commit"], BEFORE, AFTER, advise_report(tps_pct=pct_),
                        None)
        assert c["within_factor"] is inside, pct_
    wrong_way = cell_result(CHANGES["trx-commit"], BEFORE, AFTER,
                            advise_report(tps_pct=-20.0), None)
    assert wrong_way["direction"]["right"] is False
    flat = cell_result(CHANGES["trx-commit"], BEFORE, {"tps": 1020.0},
                       advise_report(tps_pct=2.0), None)
    assert flat["direction"] == {"measured": "flat", "predicted": "flat", "right": True,
                                 "within_noise": False}


@pytest.mark.parametrize("report, error, missing", [
    ({"observed": {}}, None, "priced no such change"),               # today's advise
    ({"fit": None, "candidates": None}, None, "priced no such change"),
    ({"candidates": ["junk", 3, {"setting": "innodb_flush_log_at_trx_commit",
                                 "candidate": 2, "predicted": None}]}, None,
     "has no predicted effect"),
    ({"candidates": [{"setting": "innodb_flush_log_at_trx_commit", "candidate": "2",
                      "predicted": {"change": {}}}]}, None, "no TPS change"),
    (None, "TimeoutError: the server went away", "the server went away"),
])
def test_advise_without_a_prediction_is_said_not_a_crash(report, error, missing):
    c = cell_result(CHANGES["trx-commit"], BEFORE, AFTER, report, error)
    assert c["predicted_ratio"] is None and c["within_factor"] is None
    assert c["direction"]["right"] is None and c["direction"]["measured"] == "up"
    assert missing in c["advise"]["candidate"]["missing"]
    assert any("advise gave no prediction" in n for n in c["notes"])
    assert c["simulate_before"]["predicted_tps"] is None
    assert c["simulate_before"]["missing"] == "advise fitted no workload"
    s = summarize([c])
    assert s["no_prediction"] == 1 and s["within_factor"] == "0/0"


def test_a_candidate_is_found_by_its_simulator_change_too():
    r = advise_report(setting="flush_log_at_trx_commit", candidate="two")
    c = cell_result(CHANGES["trx-commit"], BEFORE, AFTER, r, None)
    assert c["predicted_ratio"] == pytest.approx(1.8)
    assert cell_result(CHANGES["sync-binlog"], BEFORE, AFTER, r, None)["predicted_ratio"] is None


def test_a_workload_advise_cannot_explain_is_counted():
    c = cell_result(CHANGES["trx-commit"], BEFORE, AFTER, advise_report(explained=False),
                    None, simulate_missing="advise says its model cannot explain it")
    assert c["advise"]["explained"] is False
    assert any("cannot explain" in n for n in c["notes"])
    assert c["simulate_before"]["missing"].startswith("advise says")
    assert summarize([c])["not_explained"] == 1


def test_advise_s_fitted_workload_is_read_defensively():
    wl, notes = fitted_workload(advise_fit(advise_report(), None))
    assert isinstance(wl, Workload) and wl.connections == 4 and notes == []
    fit = advise_fit({"fit": {"workload": {**FIT_WORKLOAD, "think_us": 5.0}}}, None)
    assert fit["explained"] is None
    wl, notes = fitted_workload(fit)
    assert wl is not None and "think_us" in notes[0]
    wl, notes = fitted_workload(advise_fit({"fit": {"workload": {"connections": -3}}}, None))
    assert wl is None and "not usable" in notes[0]
    assert fitted_workload(advise_fit(None, "boom"))[0] is None
    p = candidate_prediction({"predicted": {"current": {"tps": 200}, "candidate": {"tps": 300},
                                            "range": {"tps_pct": [60, "x"]}}})
    assert p["ratio"] == 1.5 and p["ratio_range"] is None


# ---- the summary -----------------------------------------------------------------------------

def test_the_summary_arithmetic():
    cells = [
        cell_result(CHANGES["trx-commit"], BEFORE, AFTER, advise_report(tps_pct=80.0), None,
                    900.0),                                    # within, right, sim -10 %
        cell_result(CHANGES["trx-commit"], BEFORE, {"tps": 1000.0, "data_fsyncs_per_s": 20.0},
                    advise_report(tps_pct=100.0, fsyncs_after=10.0), None, 1300.0),
        # measured flat, predicted ×2: outside, wrong; fsyncs -50 %, sim +30 %
        cell_result(CHANGES["trx-commit"], BEFORE, AFTER, {"observed": {}}, None),
        {"device": "d", "change": "no-fsync", "skipped": "volatile cache"},
        {"device": "d", "change": "trx-commit", "error": "run 3/4: the server did not start"},
    ]
    s = summarize(cells)
    assert (s["cells"], s["measured_cells"], s["skipped_cells"], s["failed_cells"]) == \
        (5, 3, 1, 1)
    assert s["within_factor"] == "1/2" and s["within_factor_share"] == 0.5
    assert s["direction_right"] == "1/2"
    assert s["data_fsyncs_after_mape"] == {"mape_pct": 37.5, "cells": 2}   # (25 + 50) / 2
    assert s["simulate_tps_mape"] == {"mape_pct": 20.0, "cells": 2}        # (10 + 30) / 2
    # after: 1,800 vs 2,000 (-10 %), 2,000 vs 1,000 (+100 %); both: (10+30+10+100) / 4
    assert s["simulate_after_tps_mape"] == {"mape_pct": 55.0, "cells": 2}
    assert s["simulate_all_tps_mape"] == {"mape_pct": 37.5, "cells": 4}
    assert s["no_prediction"] == 1 and s["not_explained"] == 0
    empty = summarize([])
    assert empty["within_factor"] == "0/0" and empty["within_factor_share"] is None


def test_the_reports_render_every_kind_of_cell():
    r = synthetic_report()
    text = change_report.render_text(r)
    assert "×2.00" in text and "×1.80 (inputs 1.50..2.20)" in text and "skipped" in text
    assert "FAILED" in text and "failed: run 1/2: boom" in text and "all devices" in text
    assert "did not finish" in text and "within ×/÷1.3" in text
    md = change_report.render_markdown(r)
    assert md.startswith("# innoflush change validation") and "## local" in md
    back = json.loads(change_report.to_json(r))
    assert back["summary"]["within_factor"] == "1/1"
    assert back["summary"]["by_change"]["trx-commit"]["measured_cells"] == 1
    assert back["summary"]["by_change"]["no-fsync"]["skipped_cells"] == 1
    cell = back["devices"][0]["cells"][0]
    assert cell["before"]["commits"] == 3000 and cell["before"]["server_cpu_us_per_trx"] == 100
    assert cell["after"]["settings"]["innodb_flush_log_at_trx_commit"] == 2
    # three runs share their settings here (both befores, and the sync-binlog after as
    # this fake reads it back): 1,000, 1,000 and 1,010 TPS, three pairs
    rep = back["summary"]["repeatability"]
    assert rep["pairs"] == 3 and rep["within_factor"] == "3/3"
    assert 0.0 < rep["p90_difference_pct"] <= 1.0
    # x2.00 measured is beyond that noise, and x1.80 predicted goes the same way
    assert back["summary"]["direction_beyond_noise"] == "1/1"
    assert back["devices"][0]["summary"]["direction_beyond_noise"] == "1/1"
    assert back["summary"]["by_change"]["trx-commit"]["direction_beyond_noise"] == "1/1"
    assert "repeatability: 3 pairs" in text and "direction beyond noise" in text
    assert "A perfect model would be within" in md


def test_a_run_keeps_the_checkpoint_age_at_its_window_ends():
    assert run_figures(measured_run(1000.0, 995.0))["checkpoint_age"] == {
        "start": 5_000_000, "end": 9_000_000}
    silent = measured_run(1000.0, 995.0)   # a server that does not show the age
    silent.iv = SimpleNamespace(seconds=3.0, end_gauges={}, gauge_deltas={})
    assert run_figures(silent)["checkpoint_age"] == {"start": None, "end": None}


def test_a_run_says_what_advise_did_during_it():
    observed = run_figures(measured_run(1000.0, 995.0))["observer"]
    assert observed == {"advise": True, "predicted": True, "processlist_samples": 300,
                        "error": None}
    bare = measured_run(1000.0, 995.0, 2)
    bare.advisor = None
    assert run_figures(bare)["observer"] == {"advise": False, "predicted": False,
                                             "processlist_samples": None, "error": None}


def test_the_interval_is_judged_against_the_measured_ratio():
    def with_interval(iv):
        rep = advise_report(tps_pct=80.0)
        rep["candidates"][0]["predicted"]["interval"] = {"tps_pct": iv, "coverage_pct": 80}
        return rep
    inside = cell_result(CHANGES["trx-commit"], BEFORE, AFTER, with_interval([20.0, 140.0]),
                         None)
    outside = cell_result(CHANGES["trx-commit"], BEFORE, AFTER, with_interval([20.0, 90.0]),
                          None)
    none = cell_result(CHANGES["trx-commit"], BEFORE, AFTER, with_interval(None), None)
    assert inside["predicted_interval"] == [1.2, 2.4] and inside["interval_holds"] is True
    assert outside["predicted_interval"] == [1.2, 1.9] and outside["interval_holds"] is False
    assert none["predicted_interval"] is None and none["interval_holds"] is None
    assert inside["advise"]["candidate"]["ratio_interval"] == [1.2, 2.4]
    assert summarize([inside, outside, none])["interval_holds"] == "1/2"
    rows = change_report.cell_rows([{**inside, "workload": "w", "connections": 1}])
    assert "×1.80 [1.20..2.40]" in rows[0]


def test_a_cell_carries_advise_check_of_its_two_advise_windows():
    """The cell's `check` is advise --check's own judgment of advise's before and after
    windows (the lab's two servers are not one: their identity is not asked), from a real
    report of this VM priced for trx_commit 1 -> 2 and the same server's report after."""
    from pathlib import Path

    fix = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "checks"
    before = json.loads((fix / "mariadb-10.11-trx-commit" / "report.json").read_text())
    after = json.loads(json.dumps(before))
    after["settings"]["innodb_flush_log_at_trx_commit"] = 2
    after["server"]["datadir"] = "/another/fresh/server/"
    after["observed"].update(commits_per_s=before["observed"]["commits_per_s"] * 1.5,
                             data_fsyncs_per_s=15.0, redo_syncs_per_s=2.7)
    cell = cell_result(CHANGES["trx-commit"], run_figures(measured_run(1000.0, 990.0)),
                       run_figures(measured_run(1500.0, 10.0, trx_commit=2)), before, None,
                       after_report=after)
    check = cell["check"]
    assert check["applied"] == [{"setting": "innodb_flush_log_at_trx_commit", "before": "1",
                                 "now": "2", "recommended": True, "derived": False}]
    tps = next(f for f in check["figures"] if f["figure"] == "tps")
    assert tps["measured_ratio"] == pytest.approx(1.5) and tps["held"] is True
    assert check["verdict"] == "held"
    assert "advise --check on advise's two windows: held" in cell["notes"]
    assert cell_result(CHANGES["trx-commit"], run_figures(measured_run(1000.0, 990.0)),
                       run_figures(measured_run(1500.0, 10.0)), before, None)["check"] is None
