"""`innoflush lab validate`: a small matrix on a real server (this host's storage and one
emulated device), the report's structure, and errors and MAPEs computed from the runs."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main
from innoflush.lab.experiments import run_setup
from innoflush.lab.experiments.options import LabOptions
from innoflush.lab.experiments.predict import compare
from innoflush.lab.experiments.prediction_accuracy import (
    MAPE_FIGURES,
    device_summary,
    directions,
    mape,
)
from innoflush.lab.experiments.validate import cell_plans
from innoflush.measure import quick_tests
from tests.helpers.simprofiles import device

FIGS = ("tps", "commit_latency_p50_ms", "commit_latency_p99_ms", "data_fsyncs_per_s",
        "data_writes_per_s", "data_fsyncs_per_data_write")


# ---- pure arithmetic -------------------------------------------------------------------

def _cell(conns, method, fs_m, fs_p, commits_m=100, commits_p=100, tps=(100.0, 110.0),
          replicate=1):
    m = {"tps": tps[0], "data_fsyncs_per_s": fs_m, "data_fsyncs_per_commit": fs_m / commits_m}
    p = {"tps": tps[1], "data_fsyncs_per_s": fs_p, "data_fsyncs_per_commit": fs_p / commits_p}
    return {"connections": conns, "trx_commit": 1, "flush_method": method, "measured": m,
            "predicted": p, "errors_pct": compare(m, p), "replicate": replicate}


def test_mape_leaves_out_cells_without_an_error():
    cells = [{"errors_pct": {"tps": 10.0}}, {"errors_pct": {"tps": -30.0}},
             {"errors_pct": {"tps": None}}]
    m = mape(cells, "tps")
    assert m == {"mape_pct": 20.0, "cells": 2, "excluded": 1, "max_abs_pct": 30.0,
                 "target_pct": 15.0, "within_target": 1, "met": False}
    assert mape([], "tps")["mape_pct"] is None


def test_direction_of_the_flush_method_change():
    cells = [_cell(1, "O_DIRECT", 100.0, 90.0), _cell(1, "O_DIRECT_NO_FSYNC", 80.0, 85.0),
             _cell(2, "O_DIRECT", 100.0, 100.0), _cell(2, "O_DIRECT_NO_FSYNC", 101.0, 90.0),
             _cell(4, "O_DIRECT", 10.0, 10.0),           # no pair: not judged
             _cell(8, "O_DIRECT", 100.0, 100.0), _cell(8, "O_DIRECT_NO_FSYNC", 102.0, 99.0)]
    d = directions(cells)
    assert [(r["connections"], r["right_per_s"]) for r in d] == [(1, True), (2, False),
                                                                 (8, True)]
    assert d[0]["measured_change_per_s_pct"] == -20.0
    assert d[0]["predicted_change_per_s_pct"] == pytest.approx(-5.6, abs=0.05)
    assert d[1]["measured_flat"] is True and d[0]["measured_flat"] is False
    # both within the noise band: right ("no change"), though the bare signs differ
    assert d[2]["measured_flat"] and d[2]["sign_agrees_per_s"] is False


def test_replicates_tell_noise_from_a_direction():
    a, b = "O_DIRECT", "O_DIRECT_NO_FSYNC"
    cells = [
        # 1 connection: both replicates down (-20%, -10%): judged on the mean (-15%)
        _cell(1, a, 100.0, 90.0), _cell(1, b, 80.0, 80.0),
        _cell(1, b, 90.0, 80.0, replicate=2), _cell(1, a, 100.0, 90.0, replicate=2),
        # 2 connections: one replicate down (-10%), the other up (+12%): undetermined,
        # though the model's -10% would be "wrong" against the mean (+1%, flat)
        _cell(2, a, 100.0, 100.0), _cell(2, b, 90.0, 90.0),
        _cell(2, b, 112.0, 90.0, replicate=2), _cell(2, a, 100.0, 100.0, replicate=2),
        # 4 connections: both flat; the model says down: a miss
        _cell(4, a, 100.0, 100.0), _cell(4, b, 101.0, 80.0),
        _cell(4, b, 99.0, 80.0, replicate=2), _cell(4, a, 100.0, 100.0, replicate=2)]
    d = {r["connections"]: r for r in directions(cells)}
    assert d[1]["replicates"] == 2 and d[1]["replicate_changes_per_s_pct"] == [-20.0, -10.0]
    assert d[1]["measured_change_per_s_pct"] == -15.0
    assert d[1]["right_per_s"] is True and d[1]["undetermined"] is False
    assert d[2]["replicates_agree_per_s"] is False and d[2]["undetermined"] is True
    assert d[2]["right_per_s"] is None and d[2]["measured_change_per_s_pct"] == 1.0
    assert d[4]["right_per_s"] is False and d[4]["measured_flat"] is True
    s = device_summary(cells)
    assert s["direction_right"] == "1/2" and s["direction_all_right"] is False
    assert s["direction_undetermined"] == 1
    # one replicate: nothing is undetermined, the classes are the cells'
    one = device_summary([c for c in cells if c["replicate"] == 1])
    assert one["direction_undetermined"] == 0 and one["direction_right"] == "2/3"


def test_replicated_pairs_alternate_the_flush_methods():
    opts = LabOptions(flush_methods=["O_DIRECT", "O_DIRECT_NO_FSYNC"], trx_commits=[1],
                      connections=[1, 2])
    plans = cell_plans(opts, replicates=2)
    a, b = "O_DIRECT", "O_DIRECT_NO_FSYNC"
    assert [(p.connections, p.flush_method, r) for p, r in plans] == [
        (1, a, 1), (1, b, 1), (1, b, 2), (1, a, 2), (2, a, 1), (2, b, 1), (2, b, 2), (2, a, 2)]
    assert [p.index for p, _ in plans] == list(range(1, 9))
    assert {p.total for p, _ in plans} == {8}
    assert [r for _, r in cell_plans(opts)] == [1, 1, 1, 1]


# ---- a real matrix ---------------------------------------------------------------------

@pytest.mark.server
def test_small_validation_matrix(server_binaries, tmp_path, monkeypatch):
    monkeypatch.setattr(run_setup, "MEASURE_KW", {"tests": quick_tests()[:6], "duration_s": 0.15,
                                                  "quick": True})
    slow = device("test-slow-8ms", fsync_16k_ns=8e6, fsync_2m_ns=16e6, fdatasync_ratio=1.0)
    prof = tmp_path / "test-slow-8ms.json"
    prof.write_text(slow.to_json(), encoding="utf-8")
    md = tmp_path / "validation.md"
    data = tmp_path / "data"
    data.mkdir()
    r = CliRunner().invoke(main, [
        "lab", "validate", "--devices", f"local,{prof}", "--connections", "1,2",
        "--flush-method", "O_DIRECT,O_DIRECT_NO_FSYNC", "--trx-commit", "1",
        "--duration", "1.5", "--warmup", "0.3", "--calibrate-duration", "1.5",
        "--replicates", "2", "--buffer-pool", "64M", "--datadir-on", str(data), "--json",
        "--markdown", str(md)])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    assert rep["schema"] == "innoflush.lab-validate/1"
    assert rep["matrix"]["connections"] == [1, 2] and rep["matrix"]["trx_commits"] == [1]
    assert rep["matrix"]["replicates"] == 2
    assert rep["host"]["cpu_cores"] >= 1 and rep["date"] and rep["command"]
    # the calibration: trx_commit=0 runs, one per connection count
    cal = rep["calibration"]
    assert [x["connections"] for x in cal["runs"]] == [1, 2]
    assert all(x["read_back"]["innodb_flush_log_at_trx_commit"] == 0 for x in cal["runs"])
    assert [d["name"] for d in rep["devices"]] == ["local", "test-slow-8ms"]
    assert rep["devices"][1]["ref"] == str(prof)
    local, emu = rep["devices"]
    assert local["kind"] == "local" and local["profile"]["source"] == "measure"
    assert emu["kind"] == "emulated" and emu["profile"]["name"] == "test-slow-8ms"
    assert emu["emulation"]["host_check"]["verdict"] in ("ok", "approximate")
    for d in rep["devices"]:
        cells = d["cells"]
        assert len(cells) == 8            # 2 connection counts × 2 methods × 2 replicates
        # a pair's runs in A B B A order, each replicate a run of its own
        assert [(c["connections"], c["flush_method"][-8:], c["replicate"]) for c in cells] \
            == [(1, "O_DIRECT", 1), (1, "NO_FSYNC", 1), (1, "NO_FSYNC", 2), (1, "O_DIRECT", 2),
                (2, "O_DIRECT", 1), (2, "NO_FSYNC", 1), (2, "NO_FSYNC", 2), (2, "O_DIRECT", 2)]
        assert len({c["measured"]["commits"] for c in cells}) > 1
        for c in cells:
            m, p, e = c["measured"], c["predicted"], c["errors_pct"]
            assert c["read_back"]["innodb_flush_method"] == c["flush_method"]
            assert m["commits"] > 0 and m["tps"] > 0 and m["data_fsyncs_per_s"] > 0
            for k in FIGS:                     # the errors are computed from the two sides
                want = (None if m[k] in (None, 0) or p[k] is None
                        else round(100 * (p[k] / m[k] - 1), 1))
                assert e[k] == want, (k, m[k], p[k], e[k])
            # calibrated at the cell's connection count
            cw = next(x for x in cal["runs"] if x["connections"] == c["connections"])
            assert c["workload"]["cpu_us_per_trx"] == pytest.approx(
                cw["workload"]["cpu_us_per_trx"])
            if d["kind"] == "emulated":
                assert c["emulation"]["active"]
                assert m["commit_latency_p50_ms"] > 3.0 * 0.9
        # the MAPEs recomputed from the cells
        s = d["summary"]
        for k in MAPE_FIGURES:
            errs = [abs(c["errors_pct"][k]) for c in cells if c["errors_pct"][k] is not None]
            got = s["mape"][k]
            assert got["cells"] == len(errs)
            if errs:
                assert got["mape_pct"] == pytest.approx(sum(errs) / len(errs), abs=0.051)
        assert len(s["direction"]) == 2
        for r in s["direction"]:             # each side the mean of its two runs
            side = [c["measured"]["data_fsyncs_per_s"] for c in cells
                    if c["connections"] == r["connections"]]
            a_mean = (side[0] + side[3]) / 2
            b_mean = (side[1] + side[2]) / 2
            assert r["measured_change_per_s_pct"] == pytest.approx(
                100 * (b_mean / a_mean - 1), abs=0.051)
            assert len(r["replicate_changes_per_s_pct"]) == 2
            assert r["right_per_s"] is None if r["undetermined"] else r["right_per_s"] in (
                True, False)
        judged = 2 - s["direction_undetermined"]
        assert s["direction_right"].endswith(f"/{judged}")
    # emulated slow syncs: far slower commits than this host's
    tps_local = min(c["measured"]["tps"] for c in local["cells"])
    assert max(c["measured"]["tps"] for c in emu["cells"]) < tps_local
    text = md.read_text(encoding="utf-8")
    for head in ("# innoflush validation", "## Mean absolute percentage error per device",
                 "## Calibration", "## O_DIRECT → O_DIRECT_NO_FSYNC", "## local",
                 "**Command**", "**Host**"):
        assert head in text
    assert "test-slow-8ms" in text
    assert not [p for p in data.iterdir() if p.name.startswith("innoflush-lab-")]
