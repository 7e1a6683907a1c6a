"""The interval a prediction carries (advisor/error_bands.py, pure) and the shipped error
figures it reads (advisor/data/prediction_error.json, built by
scripts/prediction_error.py from the validation reports in docs/validation/)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from innoflush.advisor.error_bands import bands, change_key, connection_class, tps_interval
from tests.helpers.scripts_loader import load_script

ROOT = Path(__file__).resolve().parents[2]
DATA = {"coverage_pct": 80, "what_short": "test runs",
        "changes": {"innodb_flush_log_at_trx_commit 1->2":
                    {"cells": 40, "low": 0.6, "median": 1.1, "high": 2.0},
                    "sync_binlog 1->0": {"cells": 30, "low": 0.9, "median": 1.0,
                                         "high": 1.2}}}


def test_change_keys_name_a_direction_whatever_the_value_types():
    assert change_key("innodb_flush_log_at_trx_commit", 1, 2) == \
        change_key("innodb_flush_log_at_trx_commit", "1", 2.0) == \
        "innodb_flush_log_at_trx_commit 1->2"
    assert change_key("innodb_flush_method", "O_DIRECT", "o_direct_no_fsync") == \
        "innodb_flush_method O_DIRECT->O_DIRECT_NO_FSYNC"
    assert change_key("innodb_doublewrite", False, True) == "innodb_doublewrite OFF->ON"


def test_a_validated_change_gets_the_ratio_times_the_error_percentiles():
    iv = tps_interval({"innodb_flush_log_at_trx_commit": 1},
                      {"innodb_flush_log_at_trx_commit": 2}, 400.0, DATA)
    # ×5 predicted: ×3 .. ×10 likely
    assert iv["tps_pct"] == [200.0, 900.0] and iv["coverage_pct"] == 80
    assert "40 validated cells" in iv["basis"] and "test runs" in iv["basis"]


def test_an_unmeasured_direction_says_so_instead_of_borrowing_another():
    iv = tps_interval({"innodb_flush_log_at_trx_commit": 2},
                      {"innodb_flush_log_at_trx_commit": 1}, -80.0, DATA)
    assert iv["tps_pct"] is None
    assert iv["basis"] == ("not validated against a measured change: "
                           "innodb_flush_log_at_trx_commit 2->1")
    assert tps_interval({}, {}, 10.0, DATA)["tps_pct"] is None
    assert tps_interval({"sync_binlog": 1}, {"sync_binlog": 0}, None, DATA)["tps_pct"] is None


def test_changes_together_take_the_widest_of_their_own():
    iv = tps_interval({"innodb_flush_log_at_trx_commit": 1, "sync_binlog": 1},
                      {"innodb_flush_log_at_trx_commit": 2, "sync_binlog": 0}, 0.0, DATA)
    assert iv["tps_pct"] == [-40.0, 100.0]
    assert "not validated together" in iv["basis"]


def test_a_class_of_connections_with_enough_cells_widens_the_interval():
    data = {"coverage_pct": 79, "changes": {"sync_binlog 1->0": {
        "cells": 90, "low": 0.9, "high": 1.2,
        "by_connections": {"1": {"cells": 40, "low": 0.5, "high": 2.0},
                           "2-8": {"cells": 40, "low": 0.8, "high": 1.1},
                           "9+": {"cells": 10, "low": 0.5, "high": 3.0}}}}}
    def at(n):
        return tps_interval({"sync_binlog": 1}, {"sync_binlog": 0}, 0.0, data,
                            connections=n)
    assert at(1)["tps_pct"] == [-50.0, 100.0] and "at 1 connection" in at(1)["basis"]
    # a class only widens: its lower end, the change's higher one
    assert at(4)["tps_pct"] == [-20.0, 20.0] and "at 2-8 connections" in at(4)["basis"]
    # 10 cells are too few: the change's own figures
    assert at(16)["tps_pct"] == [-10.0, 20.0] and "at all connections" in at(16)["basis"]
    assert at(None)["tps_pct"] == [-10.0, 20.0]
    assert [connection_class(n) for n in (0.4, 1, 1.6, 8, 9, 200)] == \
        ["1", "1", "2-8", "2-8", "9+", "9+"]


def test_no_figures_no_interval():
    iv = tps_interval({"sync_binlog": 1}, {"sync_binlog": 0}, 50.0, {})
    assert iv["tps_pct"] is None and iv["basis"].startswith("not validated")


def test_the_shipped_figures_and_their_provenance():
    data = bands()
    assert data["schema"] == "innoflush.prediction-error/1"
    assert data["model_commit"] and data["percentiles"][0] < data["percentiles"][1]
    # what advise quotes is what the intervals held on runs they were not built from
    held = data["held_out_as_advised"]
    assert 0 < held["inside"] <= held["cells"]
    assert data["coverage_pct"] == round(100 * held["inside"] / held["cells"])
    assert 70 <= data["coverage_pct"] <= 90
    # the three changes lab validate measures, each from enough cells and runs
    assert set(data["changes"]) == {"innodb_flush_log_at_trx_commit 1->2",
                                    "innodb_flush_method O_DIRECT->O_DIRECT_NO_FSYNC",
                                    "sync_binlog 1->0"}
    for key, c in data["changes"].items():
        assert c["cells"] >= 20 and c["runs"] >= 2, key
        assert 0 < c["low"] <= c["median"] <= c["high"], key
        assert c["held_out_cells"] > 0 and 0 <= c["held_out_coverage_pct"] <= 100, key
        for cls, sub in c["by_connections"].items():
            assert cls in ("1", "2-8", "9+") and sub["cells"] >= 5, (key, cls)
    # every source is a report the repository keeps, and the cells add up
    for src in data["sources"]:
        assert (ROOT / src["file"]).is_file(), src
    used = sum(c["cells"] + c["not_explained"] + c["unreadable"]
               for c in data["changes"].values())
    assert used <= sum(s["cells"] for s in data["sources"])


def test_the_builder_percentiles_and_held_out_coverage():
    mod = load_script("prediction_error")
    rows = []
    sb = {"change": "sync_binlog 1->0", "setting": "sync_binlog", "before": "1", "after": "0"}
    for run in ("a", "b", "c"):
        for i in range(10):
            e = math.exp((i - 4.5) / 10)       # measured / predicted, ×0.64 .. ×1.57
            rows.append({"run": run, **sb, "measured": 2.0 * e, "ratio": 2.0,
                         "explained": True})
    rows.append({"run": "a", **sb, "measured": 3.0, "ratio": None, "explained": False})
    rows += [{"run": "a", "change": "x 1->2", "setting": "x", "before": "1", "after": "2",
              "measured": 1.0, "ratio": 1.0} for _ in range(3)]
    f = mod.figures(rows)
    assert set(f) == {"sync_binlog 1->0"}          # 3 cells are too few for percentiles
    s = f["sync_binlog 1->0"]
    assert (s["cells"], s["runs"], s["not_explained"]) == (30, 3, 1)
    lo, mid, hi = mod.band([math.exp((i - 4.5) / 10) for i in range(10)] * 3)
    assert (s["low"], s["high"]) == (round(lo, 3), round(hi, 3))
    assert s["median"] == pytest.approx(1.0, abs=1e-3)
    # each run alike: the other two give the same band, which holds 8 of each run's 10
    assert s["held_out_cells"] == 30 and s["held_out_coverage_pct"] == 80.0
    assert s["by_connections"] == {}                   # no class given
    for r in rows:
        r["connections"] = 1
    inside, total = mod.held_out_as_advised(rows)
    assert (inside, total) == (24, 30)    # x 1->2: only run a has it, nothing to hold out
