"""`innoflush tps`: honest labels (durable, bound), the workload's CPU in every figure,
and its closed form against the simulation at one connection."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main
from innoflush.profiles import load_profile
from innoflush.simulator import ServerConfig, simulate
from innoflush.simulator.config import Workload
from innoflush.simulator.tps import SETTINGS, TOLERANCE, commit_path, tps_table
from innoflush.simulator.workload_profile import DEFAULT_WORKLOAD, default_workload


def _tps_json(*args: str) -> dict:
    res = CliRunner().invoke(main, ["tps", *args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_no_sync_at_commit_is_cpu_bound_with_the_workloads_cpu():
    out = _tps_json("--profile", "hdd-wd2502abys", "--no-check")
    assert out["workload_profile"] == DEFAULT_WORKLOAD
    wl = default_workload().workload_at(1)[0]
    assert out["workload"] == wl.to_dict()
    rows = {r["setting"]: r for r in out["settings"]}
    tc2 = rows["trx-commit-2"]
    assert (tc2["durable"], tc2["bound"]) == (False, "cpu")
    # 1 / (server CPU + client time + the redo's page-cache write): the workload's
    work_s = (wl.cpu_us_per_trx + wl.client_us_per_trx) * 1e-6
    assert tc2["tps_per_connection"] < 1 / work_s
    assert tc2["tps_per_connection"] > 0.9 / work_s
    assert tc2["tps_per_connection"] < 20_000  # never the page cache's 398,089/s
    # the trx_commit=1 rows are durable and, on a disk, bound by it
    for key in ("redo-fsync", "redo+binlog"):
        assert (rows[key]["durable"], rows[key]["bound"]) == (True, "device")
    assert rows["trx-commit-2+binlog"]["durable"] is False   # the redo is not synced


def test_no_row_labelled_durable_has_a_cpu_free_figure():
    for profile in ("samsung-pm9a3", "samsung-990-pro", "hdd-wd2502abys"):
        out = _tps_json("--profile", profile, "--no-check")
        for r in out["settings"]:
            assert r["work_ms"] > 0, (profile, r)
            assert r["tps_per_connection"] <= 1 / (r["work_ms"] * 1e-3), (profile, r)
            if r["durable"]:
                assert r["device_ms"] > 0 and r["bound"] in ("device", "cpu")
            if r["bound"] == "cpu":
                assert r["work_ms"] >= r["device_ms"], (profile, r)
    # a PLP SSD's sync costs less than the transaction's CPU: durable, but CPU-bound
    rows = {r["setting"]: r for r in _tps_json("--profile", "samsung-pm9a3",
                                                "--no-check")["settings"]}
    assert (rows["redo-fsync"]["durable"], rows["redo-fsync"]["bound"]) == (True, "cpu")


def test_without_any_cpu_the_no_sync_row_has_no_estimate():
    out = _tps_json("--profile", "hdd-wd2502abys", "--no-check", "--cpu-us", "0",
                    "--client-us", "0")
    rows = {r["setting"]: r for r in out["settings"]}
    assert rows["trx-commit-2"]["tps_per_connection"] is None
    assert rows["trx-commit-2"]["bound"] == "cpu"
    # the device's ceiling alone, as asked: the durable rows keep theirs
    assert 50 < rows["redo-fsync"]["tps_per_connection"] < 60
    assert "--cpu-us, --client-us" in out["workload_source"]
    res = CliRunner().invoke(main, ["tps", "--profile", "hdd-wd2502abys", "--no-check",
                                    "--cpu-us", "0", "--client-us", "0", "--wide"])
    assert res.exit_code == 0, res.output
    line = next(x for x in res.output.splitlines() if x.startswith("trx_commit=2, binlog off"))
    assert "398" not in line and line.split()[-1] == "-"


def test_the_text_says_which_workload_and_how_to_calibrate():
    res = CliRunner().invoke(main, ["tps", "--profile", "samsung-990-pro", "--no-check",
                                    "--wide"])
    assert res.exit_code == 0, res.output
    assert f"workload: {DEFAULT_WORKLOAD} (built-in: " in res.output
    assert "innoflush lab calibrate --save NAME" in res.output
    header = res.output.splitlines()[2]
    assert "durable" in header and "bound" in header


def test_a_target_beyond_the_cpu_is_not_reachable():
    out = _tps_json("--profile", "samsung-pm9a3", "--no-check", "--target-tps", "1e6")
    for r in out["settings"]:
        assert r["connections_for_target"] is None
        assert r["cpu_ceiling_tps"] < 1e6


def test_closed_form_is_the_serial_sum():
    profile = load_profile("hdd-wd2502abys")
    wl = Workload(cpu_us_per_trx=100.0, client_us_per_trx=50.0, growth_bytes_per_trx=0.0)
    tc1 = next(s for s in SETTINGS if s.key == "redo-fsync")
    bare = commit_path(profile, tc1, "mysql-8.0", Workload(cpu_us_per_trx=0.0,
                                                           client_us_per_trx=0.0,
                                                           growth_bytes_per_trx=0.0))
    path = commit_path(profile, tc1, "mysql-8.0", wl)
    assert path.device_s == pytest.approx(bare.device_s)
    assert path.work_s == pytest.approx(150e-6)
    # the host's cost of a sync goes where the simulation charges it: per sync, per commit
    costly = Workload(cpu_us_per_trx=100.0, client_us_per_trx=50.0, growth_bytes_per_trx=0.0,
                      sync_cpu_us=20.0, wakeup_us=10.0, sleep_cpu_us=5.0,
                      cpu_us_per_trx_sleeping=130.0)
    assert commit_path(profile, tc1, "mysql-8.0", costly).work_s == pytest.approx(215e-6)
    tc2 = next(s for s in SETTINGS if s.key == "trx-commit-2")
    assert commit_path(profile, tc2, "mysql-8.0", costly).work_s == pytest.approx(150e-6)


# one built-in device of each kind: PLP SSD, consumer SSD, HDD
KINDS = ["samsung-pm9a3", "samsung-990-pro", "hdd-wd2502abys"]
# what a row that disagrees with its simulation names as the cause (tps._agreement)
CAUSES = ("checkpoint stalls", "page flushing", "the device's latency as the simulation",
          "other syncs", "CPU queueing", "the simulated latencies scatter")


@pytest.mark.parametrize("name", KINDS)
def test_tps_agrees_with_its_simulation_or_says_why(name):
    out = tps_table(load_profile(name), "mysql-8.0", check=True, check_duration_s=1.5)
    assert out["tolerance_pct"] == round(TOLERANCE * 100)
    for r in out["settings"]:
        diff = r["simulated_tps_1_connection"] / r["tps_per_connection"] - 1
        assert r["simulated_vs_closed_form_pct"] == pytest.approx(100 * diff, abs=0.1)
        if abs(diff) <= TOLERANCE:
            assert r["agrees"] and r["why"] is None, r
        else:
            assert not r["agrees"] and r["why"].startswith(CAUSES), r


@pytest.mark.slow
@pytest.mark.parametrize("name", KINDS)
def test_tps_agrees_with_simulate_at_one_connection(name):
    """The closed form against what `simulate --connections 1` gives for the same setting,
    profile and default workload: within the tolerance, or the row says why."""
    profile = load_profile(name)
    out = tps_table(profile, "mysql-8.0", check=True)
    rows = {r["setting"]: r for r in out["settings"]}
    wl = default_workload().workload_at(1)[0]
    for key in ("redo-fsync", "trx-commit-2", "redo+binlog"):
        s = next(x for x in SETTINGS if x.key == key)
        cfg = ServerConfig(innodb_flush_log_at_trx_commit=s.trx_commit, log_bin=s.log_bin,
                           sync_binlog=s.sync_binlog)
        sim = simulate(cfg, wl, profile, duration_s=10.0, seed=1)   # simulate's defaults
        r = rows[key]
        diff = sim.tps / r["tps_per_connection"] - 1
        assert abs(diff) <= TOLERANCE or r["why"], (name, key, sim.tps, r)
        # the check is that run, shorter
        assert r["simulated_tps_1_connection"] == pytest.approx(sim.tps, rel=0.1)


def test_a_page_heavy_workload_names_page_flushing(tmp_path):
    """The old default (a page per transaction) on a consumer SSD: the simulation at one
    connection falls well short of the serial sum, and the row says it is page flushing."""
    wl = tmp_path / "pages.json"
    wl.write_text(json.dumps({"workload": {"pages_dirtied_per_trx": 1.0}}))
    out = _tps_json("--profile", "samsung-990-pro", "--workload", str(wl))
    row = {r["setting"]: r for r in out["settings"]}["redo-fsync"]
    assert not row["agrees"] and row["simulated_vs_closed_form_pct"] < -10
    assert row["why"].startswith("page flushing")


@pytest.mark.slow
def test_every_builtin_profile_agrees_or_names_the_cause():
    from innoflush.profiles import builtin_names
    disagree = []
    for name in builtin_names():
        for r in tps_table(load_profile(name), "mysql-8.0")["settings"]:
            if not r["agrees"]:
                assert r["why"].startswith(CAUSES), (name, r)
                disagree.append((name, r["setting"]))
    assert len(disagree) <= 3, disagree   # docs/commands/tps.md: all rows but one
