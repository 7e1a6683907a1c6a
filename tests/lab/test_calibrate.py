"""`innoflush lab calibrate` on a real server: a workload profile measured, saved, loaded,
and accepted by simulate, lab run and advise (which then uses it instead of fitting)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main
from innoflush.simulator.workload_profile import load_workload

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def calibrated(server_binaries, tmp_path_factory):
    """One short calibration (1 and 2 connections), saved as 'cal-test' in a fresh
    INNOFLUSH_HOME; yields (home, the calibrate --json report)."""
    home = tmp_path_factory.mktemp("home")
    data = tmp_path_factory.mktemp("data")
    env = {"INNOFLUSH_HOME": str(home)}
    r = CliRunner(env=env).invoke(main, [
        "lab", "calibrate", "--datadir-on", str(data), "--connections", "1,2",
        "--duration", "1.5", "--warmup", "0.5", "--buffer-pool", "64M", "--save",
        "cal-test", "--json"])
    assert r.exit_code == 0, r.output
    yield home, json.loads(r.output), data


def test_calibration_round_trip(calibrated, monkeypatch):
    home, rep, _ = calibrated
    monkeypatch.setenv("INNOFLUSH_HOME", str(home))
    assert rep["schema"] == "innoflush.lab-calibrate/1"
    assert rep["saved"] == str(home / "workloads" / "cal-test.json")
    runs = rep["runs"]
    assert [r["connections"] for r in runs] == [1, 2]
    for r in runs:
        # no sync in the commit path: the runs had trx_commit=0
        assert r["read_back"]["innodb_flush_log_at_trx_commit"] == 0
        assert r["commits"] > 100
        w = r["workload"]
        # measured, not defaults: CPU from /proc, redo from the counters, growth from files
        assert w["cpu_us_per_trx"] == pytest.approx(r["server_cpu_us_per_trx"], rel=1e-3)
        assert 0 < w["client_cpu_us_per_trx"] <= w["client_us_per_trx"]
        assert w["redo_bytes_per_trx"] == pytest.approx(r["redo_bytes_per_commit"], abs=1)
        assert w["growth_bytes_per_trx"] > 0 and w["tablespaces"] >= 1
    # the host's cost of a sync: a trx_commit=1 run at one connection, on the measured
    # storage, split into CPU on the commit's path, CPU elsewhere and a wake-up
    host = rep["host_costs"]
    assert host["run"]["connections"] == 1 and host["run"]["commits"] > 50
    assert host["run"]["data_fsyncs_per_commit"] >= 0.5      # a sync per commit, really
    f = host["fields"]
    assert {"sync_cpu_us", "sync_side_cpu_us", "wakeup_us", "cpu_us_per_trx_sleeping",
            "client_cpu_us_per_trx_sleeping"} <= set(f)
    assert min(f["sync_cpu_us"], f["sync_side_cpu_us"], f["wakeup_us"]) >= 0
    assert f["cpu_us_per_trx_sleeping"] == pytest.approx(runs[0]["server_cpu_us_per_trx"],
                                                         rel=1e-3)
    assert any("residual R" in line for line in host["derivation"])
    for r, lines in zip(runs, rep["derivation"], strict=True):   # every count
        assert r["workload"]["sync_cpu_us"] == f["sync_cpu_us"]
        assert r["workload"]["statements_per_trx"] == 2      # INSERT, COMMIT
        # 1-10 rows a transaction: transactions differ, measured at the fewest connections
        assert 0.05 < r["workload"]["work_cv"] < 3
        assert r["workload"]["work_cv"] == runs[0]["workload"]["work_cv"]
        assert any(x.startswith("work_cv = ") for x in lines)
        assert 0 <= r["workload"]["hot_page_share"] <= 1
        assert any(x.startswith("hot_page_share = ") for x in lines)
    wp = load_workload("cal-test")
    assert wp.workload.sync_side_cpu_us == f["sync_side_cpu_us"]
    assert wp.name == "cal-test"
    assert wp.workload.cpu_us_per_trx == pytest.approx(runs[0]["workload"]["cpu_us_per_trx"])
    assert wp.provenance["kind"] == "calibrated"
    assert wp.provenance["settings"]["innodb_flush_log_at_trx_commit"] == 0
    assert wp.provenance["spec"]["kind"] == "insert"
    two, src = wp.workload_at(2)
    assert two.connections == 2 and "2 connection" in src
    assert two.cpu_us_per_trx == pytest.approx(runs[1]["workload"]["cpu_us_per_trx"])
    assert wp.commit_base_ms() == pytest.approx(runs[0]["commit_latency_ms"]["p50"])
    assert wp.commit_base_ms(2) == pytest.approx(runs[1]["commit_latency_ms"]["p50"])
    assert wp.commit_base_ms(16) == wp.commit_base_ms(2)       # the nearest count
    # simulate (and tps) accept it by name
    r = CliRunner().invoke(main, ["simulate", "--profile", "samsung-990-pro", "--flavor",
                                  "mariadb-10.11", "--skip-log-bin", "--workload", "cal-test",
                                  "--connections", "1", "--duration", "1", "--json"])
    assert r.exit_code == 0, r.output
    sim = json.loads(r.output)
    assert sim["workload"]["cpu_us_per_trx"] == pytest.approx(wp.workload.cpu_us_per_trx)
    assert sim["workload"]["redo_bytes_per_trx"] == wp.workload.redo_bytes_per_trx
    assert sim["rows"][0]["tps"] > 0
    r = CliRunner().invoke(main, ["tps", "--profile", "samsung-990-pro", "--workload",
                                  "cal-test", "--no-check", "--json"])
    assert r.exit_code == 0, r.output
    # the name is kept: a second save without --force is refused before any run
    r = CliRunner().invoke(main, ["lab", "calibrate", "--save", "cal-test", "--duration", "1"])
    assert r.exit_code == 2 and "already exists" in r.output


def test_lab_run_predicts_with_the_calibrated_workload(calibrated, monkeypatch):
    home, rep, data = calibrated
    monkeypatch.setenv("INNOFLUSH_HOME", str(home))
    r = CliRunner().invoke(main, [
        "lab", "run", "--workload", "cal-test", "--profile", "samsung-pm9a3", "--datadir-on",
        str(data), "--connections", "2", "--duration", "1", "--buffer-pool", "64M",
        "--no-advise", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    run = out["runs"][0]
    assert out["calibrated_workload"]["name"] == "cal-test"
    assert run["workload"]["source"].startswith("cal-test (calibrated at 2 connection")
    assert run["workload"]["cpu_us_per_trx"] == pytest.approx(
        rep["runs"][1]["workload"]["cpu_us_per_trx"])
    assert run["derived_workload"]["cpu_us_per_trx"] > 0     # reported beside, not used
    # the commit latency compared: the simulated wait for durability plus the calibrated
    # COMMIT round trip without a sync at the same connection count — at least the
    # one-connection one when the commits sleep on a sync (trx_commit=1)
    base = rep["runs"][1]["commit_latency_ms"]["p50"]
    if run["read_back"]["innodb_flush_log_at_trx_commit"] == 1:
        base = max(base, rep["runs"][0]["commit_latency_ms"]["p50"])
    assert run["predicted"]["commit_round_trip_ms"] == pytest.approx(base, abs=1e-4)


def test_advise_uses_the_profile_instead_of_fitting(calibrated, mariadb_server, insert_load,
                                                    monkeypatch):
    home, rep, _ = calibrated
    monkeypatch.setenv("INNOFLUSH_HOME", str(home))
    wp = load_workload("cal-test")
    with insert_load(mariadb_server, threads=2) as load:
        load.wait_started()
        r = CliRunner().invoke(main, [
            "advise", "--host", "127.0.0.1", "--port", str(mariadb_server.port), "--user",
            "root", "--interval", "1", "--profile", "samsung-990-pro", "--workload",
            "cal-test", "--connections", "2", "--json"],
            env={"MYSQL_PWD": "", "HOME": "/nonexistent"})
    # 4: samsung-990-pro is not this host's disk, and the model says it cannot explain
    # what the server did with that device — the workload it used is reported all the same
    assert r.exit_code in (0, 3, 4), r.output
    adv = json.loads(r.stdout)
    fit = adv["fit"]
    assert fit["source"] == "profile:cal-test"
    assert [c["figure"] for c in fit["checks"]][0] == "tps"
    # the calibration made at the run's connection count (2), as simulate and lab run
    # pick it (WorkloadProfile.workload_at), not the profile's first (1-connection) one
    assert fit["workload"]["cpu_us_per_trx"] == pytest.approx(wp.workload_at(2)[0].cpu_us_per_trx)
    assert fit["workload"]["cpu_us_per_trx"] == pytest.approx(
        rep["runs"][1]["workload"]["cpu_us_per_trx"])
    assert fit["workload"]["connections"] == 2
    assert any("not measured" in a for a in fit["assumptions"])
