"""The resolution of a change validation: pairs of runs of identical settings, their
spread, and the direction judged only beyond it (innoflush/lab/experiments/repeatability.py; pure),
and how a report carries them."""

from __future__ import annotations

import math

from innoflush.lab.experiments.repeatability import (
    direction_beyond_noise,
    judged_beyond_noise,
    repeat_pairs,
    repeatability,
    resolution_warning,
)
from innoflush.lab.reports import change_report

TRX1 = {"innodb_flush_method": "O_DIRECT", "innodb_flush_log_at_trx_commit": 1,
        "log_bin": False, "sync_binlog": 0}
TRX2 = {**TRX1, "innodb_flush_log_at_trx_commit": 2}
NOFSYNC = {**TRX1, "innodb_flush_method": "O_DIRECT_NO_FSYNC"}


def cell(change, before_tps, after_tps, after_settings, workload="ins", conns=1,
         measured=None, predicted=None, replicates=None):
    return {"workload": workload, "connections": conns, "change": change,
            "before": {"tps": before_tps, "settings": dict(TRX1), "settings_match": True},
            "after": {"tps": after_tps, "settings": dict(after_settings),
                      "settings_match": True},
            "measured_ratio": measured if measured is not None else after_tps / before_tps,
            "predicted_ratio": predicted, "replicates": replicates or []}


def test_identical_runs_pair_up_and_different_ones_do_not():
    dev = {"name": "ssd", "cells": [
        cell("trx-commit", 1000.0, 9000.0, TRX2),
        cell("no-fsync", 800.0, 820.0, NOFSYNC),
        cell("trx-commit", 500.0, 700.0, TRX2, conns=4),       # other connections
        cell("no-fsync", 510.0, 505.0, NOFSYNC, workload="rw"),  # other workload
        {"workload": "ins", "connections": 1, "change": "sync-binlog", "skipped": "x"},
    ]}
    pairs = repeat_pairs([dev])
    # only the two before runs of (ins, 1): the afters differ in settings
    assert [(p["workload"], p["connections"], p["tps"]) for p in pairs] == \
        [("ins", 1, [1000.0, 800.0])]
    assert pairs[0]["ratio"] == 0.8 and pairs[0]["device"] == "ssd"


def test_a_run_whose_settings_did_not_take_is_left_out():
    a = cell("trx-commit", 1000.0, 9000.0, TRX2)
    b = cell("no-fsync", 800.0, 820.0, NOFSYNC)
    b["before"]["settings_match"] = False
    assert repeat_pairs([{"name": "d", "cells": [a, b]}]) == []


def test_replicates_are_runs_of_their_own():
    reps = [{"replicate": 1, "before": {"tps": 100.0}, "after": {"tps": 300.0}},
            {"replicate": 2, "before": {"tps": 120.0}, "after": {"tps": 240.0}}]
    c = cell("trx-commit", 110.0, 270.0, TRX2, replicates=reps)
    pairs = repeat_pairs([{"name": "d", "cells": [c]}])
    assert sorted(p["ratio"] for p in pairs) == [0.8, 1.2]   # after 240/300, before 120/100


def test_repeatability_figures():
    pairs = [{"ratio": r} for r in (1.0, 1.1, 0.9, 1.25, 1.5, 0.5, 1.02, 0.98, 1.05, 1.2)]
    r = repeatability(pairs, 1.3)
    assert r["pairs"] == 10
    assert r["within_factor"] == "8/10" and r["within_factor_share"] == 0.8
    diffs = sorted(abs(math.log(p["ratio"])) for p in pairs)
    median = (diffs[4] + diffs[5]) / 2
    assert r["median_difference_pct"] == round(100 * math.expm1(median), 1)
    assert r["p90_difference_pct"] >= r["median_difference_pct"]
    # the 90th percentile sits between the 9th and the 10th largest differences
    assert 100 * math.expm1(diffs[8]) <= r["p90_difference_pct"] <= 100 * math.expm1(diffs[9])
    # exactly ×1.3 apart counts as within, either way
    assert repeatability([{"ratio": 1.3}, {"ratio": 1 / 1.3}], 1.3)["within_factor"] == "2/2"
    none = repeatability([])
    assert none["pairs"] == 0 and none["p90_difference_pct"] is None
    assert none["within_factor_share"] is None


def test_direction_is_judged_only_beyond_the_noise():
    cells = [
        {"measured_ratio": 1.10, "predicted_ratio": 1.00},   # inside ±20 %: not judged
        {"measured_ratio": 1.50, "predicted_ratio": 1.40},   # up, up: right
        {"measured_ratio": 0.70, "predicted_ratio": 1.01},   # down, flat: wrong
        {"measured_ratio": 3.00, "predicted_ratio": None},   # no prediction: not judged
        {"measured_ratio": 0.60, "predicted_ratio": 0.90},   # down, down: right
    ]
    assert direction_beyond_noise(cells, 20.0) == "2/3"
    judged = judged_beyond_noise(cells, 20.0)
    assert [(c["measured_ratio"], right) for c, right in judged] == \
        [(1.50, True), (0.70, False), (0.60, True)]
    assert direction_beyond_noise(cells, 3.0) == "2/4"
    assert direction_beyond_noise(cells, None) is None


def test_a_cell_whose_replicates_disagree_more_is_not_judged_by_the_runs_band():
    # the SAN's read_write at one thread, four replicates: x0.98, x0.60, x0.35, x0.29,
    # measured x0.56 ±62 %: beyond the run's 29 % band, inside its own spread
    noisy = {"measured_ratio": 0.56, "predicted_ratio": 1.00, "noise_band_pct": 62.0}
    steady = {"measured_ratio": 0.56, "predicted_ratio": 1.00, "noise_band_pct": 3.0}
    assert direction_beyond_noise([noisy], 28.6) == "0/0"
    assert direction_beyond_noise([steady], 28.6) == "0/1"
    assert direction_beyond_noise([noisy, steady], 28.6) == "0/1"


def test_the_report_says_what_a_perfect_model_would_score():
    report = {"matrix": {"factor": 1.3},
              "summary": {"repeatability": {"pairs": 9, "within_factor": "4/9",
                                            "within_factor_share": 0.444,
                                            "median_difference_pct": 32.3,
                                            "p90_difference_pct": 75.1}}}
    lines = change_report.repeatability_lines(report)
    assert "within ×/÷1.3 of each other in 4/9 (44%)" in lines[0]
    assert "90th percentile 75.1 %" in lines[0]
    assert "about 44% of the cells" in lines[1] and "±75 %" in lines[1]
    report["summary"]["repeatability"] = repeatability([])
    assert "not measured" in change_report.repeatability_lines(report)[0]
    report["summary"].pop("repeatability")
    assert change_report.repeatability_lines(report) == []


def test_a_run_too_noisy_to_judge_says_so():
    noisy = repeatability([{"ratio": r} for r in (1.0, 1.5, 0.6, 1.1, 1.05, 0.95)], 1.3)
    assert noisy["within_factor"] == "4/6"
    w = resolution_warning(noisy, 1.3)
    assert w is not None and "4/6 pairs (67%)" in w and "--replicates 2" in w
    # fine enough, or too few pairs to tell: no warning
    assert resolution_warning(repeatability([{"ratio": 1.01}] * 10, 1.3)) is None
    assert resolution_warning(repeatability([{"ratio": 2.0}] * 4, 1.3)) is None
    assert resolution_warning(repeatability([])) is None
