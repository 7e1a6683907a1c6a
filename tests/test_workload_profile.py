"""Workload profiles: format, store, and the commands that accept them."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from innoflush.cli import main
from innoflush.errors import ProfileError, UsageError
from innoflush.simulator.config import Workload
from innoflush.simulator.workload_profile import (
    WorkloadProfile,
    load_workload,
    save_workload,
)


@pytest.fixture()
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("INNOFLUSH_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_round_trip_through_the_store(home):
    wp = WorkloadProfile("ins", "inserts", Workload(connections=7, cpu_us_per_trx=321.0),
                         {"kind": "calibrated"}, ["a note"])
    path = save_workload(wp)
    assert path == home / "workloads" / "ins.json"
    back = load_workload("ins")
    assert back.workload.cpu_us_per_trx == 321.0
    assert back.workload.connections == 1  # connections are not part of a workload
    assert load_workload(str(path)).to_dict() == back.to_dict()
    with pytest.raises(UsageError, match="already exists"):
        save_workload(wp)
    save_workload(wp, overwrite=True)


@pytest.mark.parametrize("text,message", [
    ("{", "not valid JSON"),
    ('{"schema": "other/1"}', "unknown schema"),
    ('{"cpu": 1}', "unknown workload keys"),
    ('{"cpu_us_per_trx": -5}', "cpu_us_per_trx must be >= 0"),
    ("[1]", "JSON object"),
])
def test_invalid_workload_files_name_the_problem(tmp_path, text, message):
    p = tmp_path / "w.json"
    p.write_text(text)
    with pytest.raises(ProfileError, match=message):
        load_workload(str(p))


def test_unknown_name(home):
    with pytest.raises(ProfileError, match="unknown workload"):
        load_workload("nothing-here")


def test_tps_and_simulate_accept_a_workload_profile(home):
    save_workload(WorkloadProfile("heavy", "heavy", Workload(cpu_us_per_trx=4000.0,
                                                             client_us_per_trx=1000.0)))
    runner = CliRunner()
    res = runner.invoke(main, ["tps", "--profile", "samsung-pm9a3", "--workload", "heavy",
                               "--no-check", "--json"])
    assert res.exit_code == 0, res.output
    row = json.loads(res.output)["settings"][0]
    assert row["tps_per_connection"] < 1 / 5e-3 * 1.01  # CPU + client: 5 ms a commit
    res = runner.invoke(main, ["simulate", "--profile", "samsung-pm9a3", "--workload", "heavy",
                               "--connections", "1", "--duration", "1", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["workload"]["cpu_us_per_trx"] == 4000.0
