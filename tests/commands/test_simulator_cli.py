"""`innoflush simulate` and `innoflush tps` through click's runner."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main
from tests.helpers.simprofiles import consumer_ssd


def _profile_file(tmp_path):
    p = tmp_path / "consumer.json"
    p.write_text(consumer_ssd().to_json())
    return str(p)


def test_simulate_every_combination_json(tmp_path):
    res = CliRunner().invoke(main, [
        "simulate", "--profile", _profile_file(tmp_path), "--flush-method",
        "O_DIRECT,O_DIRECT_NO_FSYNC", "--trx-commit", "1,2", "--connections", "1,4",
        "--duration", "1", "--json", "--jobs", "2"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    rows = out["rows"]
    assert len(rows) == 8
    combos = {(r["flush_method"], r["trx_commit"], r["connections"]) for r in rows}
    assert len(combos) == 8
    for r in rows:
        assert r["tps"] > 0 and r["commit_p50_ms"] > 0
        assert r["runs"][0]["status"]["Innodb_data_fsyncs"] > 0


@pytest.mark.parametrize("command", ["simulate", "tps"])
def test_a_version_the_readme_names_is_its_flavor(tmp_path, command):
    """The README says MariaDB 10.6: --flavor mariadb-10.6 runs (and says) 10.11's model."""
    args = ["--duration", "0.2", "--connections", "1"] if command == "simulate" else []
    res = CliRunner().invoke(main, [command, "--profile", _profile_file(tmp_path),
                                    "--flavor", "MariaDB-10.6", *args, "--json"])
    assert res.exit_code == 0, res.output
    assert "mariadb-10.11" in res.output and "10.6" not in res.output.replace("10.6-", "")
    bad = CliRunner().invoke(main, [command, "--profile", _profile_file(tmp_path),
                                    "--flavor", "mariadb-9"])
    assert bad.exit_code == 2 and "mariadb-9" in bad.output


@pytest.mark.slow
def test_simulate_table_and_csv_on_a_builtin(tmp_path):
    runner = CliRunner()
    res = runner.invoke(main, ["simulate", "--profile", "samsung-pm9a3", "--connections", "2",
                               "--duration", "1", "--wide"])
    assert res.exit_code == 0, res.output
    assert "O_DIRECT" in res.output and "commit p50 ms" in res.output
    res = runner.invoke(main, ["simulate", "--profile", "samsung-pm9a3", "--connections", "1,2",
                               "--duration", "1", "--csv", "--replications", "2"])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(res.output)))
    assert len(rows) == 2 and float(rows[0]["tps_ci95"]) >= 0


def test_simulate_reproducible_with_seed(tmp_path):
    args = ["simulate", "--profile", _profile_file(tmp_path), "--connections", "3",
            "--duration", "1", "--seed", "5", "--json"]
    a = json.loads(CliRunner().invoke(main, args).output)
    b = json.loads(CliRunner().invoke(main, args).output)
    assert a == b


def test_simulate_bad_input_is_one_clear_line(tmp_path):
    runner = CliRunner()
    cases = [
        (["--profile", "no-such-device"], "unknown profile"),
        (["--profile", "samsung-pm9a3", "--flush-method", "unbuffered"], "innodb_flush_method"),
        (["--profile", "samsung-pm9a3", "--trx-commit", "3"], "innodb_flush_log_at_trx_commit"),
        (["--profile", "samsung-pm9a3", "--connections", "0"], "connections"),
        (["--profile", "samsung-pm9a3", "--connections", "a,b"], "bad list item"),
        (["--profile", "samsung-pm9a3", "--duration", "-1"], "--duration"),
        (["--profile", "samsung-pm9a3", "--redo-capacity", "lots"], "not a size"),
        (["--profile", str(tmp_path / "missing.json")], "no such file"),
    ]
    for args, message in cases:
        res = runner.invoke(main, ["simulate", *args])
        assert res.exit_code == 2, (args, res.output)
        assert message in res.output, (args, res.output)
        assert "Traceback" not in res.output


def test_simulate_workload_file(tmp_path):
    wl = tmp_path / "wl.json"
    wl.write_text(json.dumps({"workload": {"cpu_us_per_trx": 5000, "pages_dirtied_per_trx": 0}}))
    res = CliRunner().invoke(main, ["simulate", "--profile", "samsung-pm9a3", "--workload",
                                    str(wl), "--connections", "8", "--duration", "1", "--json",
                                    "--trx-commit", "2"])
    assert res.exit_code == 0, res.output
    row = json.loads(res.output)["rows"][0]
    assert row["tps"] <= 2 / 5000e-6 * 1.02  # two cores at 5 ms each: CPU-bound
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"cpu": 1}))
    res = CliRunner().invoke(main, ["simulate", "--profile", "samsung-pm9a3", "--workload",
                                    str(bad)])
    assert res.exit_code == 2 and "unknown workload keys" in res.output


@pytest.mark.slow
def test_tps_command(tmp_path):
    res = CliRunner().invoke(main, ["tps", "--profile", "hdd-wd2502abys", "--target-tps", "200",
                                    "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    row = next(r for r in out["settings"] if r["setting"] == "redo-fsync")
    assert row["connections_for_target"] == 4
    res = CliRunner().invoke(main, ["tps", "--profile", "hdd-wd2502abys", "--no-check",
                                    "--wide"])   # --wide: the full table's headers
    assert res.exit_code == 0 and "TPS / connection" in res.output
    res = CliRunner().invoke(main, ["tps", "--profile", "hdd-wd2502abys", "--target-tps", "-5"])
    assert res.exit_code == 2


# ---- the default workload: a built-in profile measured on a real server --------------------

def test_simulate_without_a_workload_uses_the_builtin_default(tmp_path):
    from innoflush.simulator.workload_profile import DEFAULT_WORKLOAD, default_workload
    args = ["simulate", "--profile", _profile_file(tmp_path), "--connections", "1,4",
            "--trx-commit", "2", "--duration", "0.5"]
    res = CliRunner().invoke(main, [*args, "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    wp = default_workload()
    assert out["workload_profile"] == DEFAULT_WORKLOAD
    assert out["workload_source"].startswith(f"{DEFAULT_WORKLOAD} (built-in: ")
    for r in out["rows"]:   # each count's calibration, as for a saved profile
        assert r["runs"][0]["workload"] == wp.workload_at(r["connections"])[0].to_dict()
    res = CliRunner().invoke(main, [*args, "--wide"])   # the workload on one line
    assert res.exit_code == 0, res.output
    line = next(x for x in res.output.splitlines() if x.startswith("workload: "))
    assert f"{DEFAULT_WORKLOAD} (built-in: " in line
    assert "innoflush lab calibrate --save NAME" in line and "--workload NAME" in line


def test_options_override_the_default_workload(tmp_path):
    args = ["simulate", "--profile", _profile_file(tmp_path), "--connections", "1,4",
            "--duration", "0.5", "--json", "--cpu-us", "50", "--client-us", "1",
            "--pages-per-trx", "0.5"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["workload_source"].endswith("given: --cpu-us, --client-us, --pages-per-trx")
    for r in out["rows"]:
        wl = r["runs"][0]["workload"]
        assert (wl["cpu_us_per_trx"], wl["client_us_per_trx"]) == (50.0, 1.0)
        assert wl["pages_dirtied_per_trx"] == 0.5
        # --cpu-us is the CPU whatever the commit does; the client CPU is part of --client-us
        assert wl["cpu_us_per_trx_sleeping"] == 0.0
        assert wl["client_cpu_us_per_trx"] <= 1.0
        assert wl["client_cpu_us_per_trx_sleeping"] <= 1.0
