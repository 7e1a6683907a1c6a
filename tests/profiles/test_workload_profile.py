"""Workload profiles: format, store, and the commands that accept them."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main
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


# ---- the calibration at the run's connection count: simulate, advise and the lab ----------

def _by_connections_profile() -> WorkloadProfile:
    """A profile calibrated at 1 and 8 connections, each count's CPU its own."""
    one = {"cpu_us_per_trx": 100.0, "client_us_per_trx": 50.0}
    eight = {"cpu_us_per_trx": 900.0, "client_us_per_trx": 70.0}
    return WorkloadProfile("two-counts", "calibrated at 1 and 8",
                           Workload(**one), {"kind": "calibrated", "calibration": {
                               "by_connections": {"1": one, "8": eight},
                               "commit_base_ms_by_connections": {"1": 0.1, "8": 0.4}}})


def test_workload_at_picks_the_calibration_at_the_connection_count():
    wp = _by_connections_profile()
    one, src1 = wp.workload_at(1)
    eight, src8 = wp.workload_at(8)
    assert (one.connections, one.cpu_us_per_trx) == (1, 100.0)
    assert (eight.connections, eight.cpu_us_per_trx) == (8, 900.0)
    assert src8 == "two-counts (calibrated at 8 connection(s))"
    six, src6 = wp.workload_at(6)                      # the nearest count's
    assert (six.connections, six.cpu_us_per_trx) == (6, 900.0) and "the nearest" in src6
    assert wp.commit_base_ms(8) == 0.4 and wp.commit_base_ms(8, sleeping=False) == 0.4
    plain = WorkloadProfile("plain", "plain", Workload(cpu_us_per_trx=321.0))
    assert plain.workload_at(8) == (Workload(connections=8, cpu_us_per_trx=321.0), "plain")
    assert plain.commit_base_ms(8) is None


def test_a_broken_calibration_table_is_a_profile_error():
    wp = WorkloadProfile("bad", "bad", Workload(), {"calibration": {
        "by_connections": {"1": {"cpu": 1.0}}}})
    with pytest.raises(ProfileError, match="by_connections is not usable"):
        wp.workload_at(1)


def test_simulate_uses_the_calibration_at_each_connection_count(home):
    save_workload(_by_connections_profile())
    args = ["simulate", "--profile", "samsung-pm9a3", "--workload", "two-counts",
            "--connections", "1,8", "--duration", "0.5", "--json"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    used = {r["connections"]: r["runs"][0]["workload"] for r in out["rows"]}
    assert used[1] == _by_connections_profile().workload_at(1)[0].to_dict()
    assert used[8]["cpu_us_per_trx"] == 900.0 and used[8]["client_us_per_trx"] == 70.0
    assert used[1]["cpu_us_per_trx"] == 100.0
    assert out["workload"]["cpu_us_per_trx"] == 100.0      # the profile's own, as before
    # an option given on the command line still overrides every count's
    res = CliRunner().invoke(main, args + ["--cpu-us", "5"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)["rows"]
    assert [r["runs"][0]["workload"]["cpu_us_per_trx"] for r in rows] == [5.0, 5.0]
    assert rows[1]["runs"][0]["workload"]["client_us_per_trx"] == 70.0


def test_advise_uses_the_calibration_at_the_connection_count(load_fixture):
    from innoflush.advisor.fit import workload_from_profile
    from innoflush.live.facts import facts_from_variables
    from innoflush.live.observed import observe
    from innoflush.live.sampling import Snapshot, interval_between
    from innoflush.profiles import load_profile

    fx = load_fixture("mariadb-10.11")
    facts = facts_from_variables(fx["variables"], [], True)
    iv = interval_between(0, Snapshot(0.0, fx["status_start"]),
                          Snapshot(fx["interval_s"], fx["status_end"]), fx.get("polls"))
    observed = observe(iv, facts.product, facts.log_bin, facts.trx_commit,
                       facts.flush_log_at_timeout, facts.redo_write_through)
    wp = _by_connections_profile()
    got = {}
    for n in (1, 8):
        fit = workload_from_profile(facts, observed, load_profile("samsung-990-pro"), wp,
                                    connections=n, cpu_cores=2)
        got[n] = fit.workload
        assert any(f"calibrated at {n} connection(s)" in a for a in fit.assumptions)
    assert got[1] == wp.workload_at(1)[0] and got[1].cpu_us_per_trx == 100.0
    assert got[8] == wp.workload_at(8)[0] and got[8].cpu_us_per_trx == 900.0


def test_the_lab_uses_the_calibration_at_the_runs_connection_count():
    from innoflush.lab.experiments.options import RunPlan
    from innoflush.lab.experiments.run_setup import calibration_for

    wp = _by_connections_profile()
    for n, cpu, base in ((1, 100.0, 0.1), (8, 900.0, 0.4)):
        plan = RunPlan(1, 1, "O_DIRECT", 2, None, n)
        workload, source, commit_base = calibration_for(wp, plan)
        assert (workload.connections, workload.cpu_us_per_trx) == (n, cpu)
        assert workload == wp.workload_at(n)[0] and commit_base == base
    assert calibration_for(None, plan) == (None, None, None)


# ---- built-in workloads ---------------------------------------------------------------------

def test_the_default_workload_is_builtin_with_its_provenance(home):
    from innoflush.simulator.workload_profile import (
        DEFAULT_WORKLOAD,
        builtin_workload_names,
        default_workload,
    )
    assert DEFAULT_WORKLOAD in builtin_workload_names()
    wp = default_workload()
    assert wp.origin == "built-in" and wp.name == DEFAULT_WORKLOAD
    prov = wp.provenance
    for key in ("kind", "summary", "date", "method", "host", "server"):
        assert prov.get(key), key
    assert prov["host"]["cpu_model"] and prov["host"]["cpu_cores"] >= 1
    assert prov["server"]["version"]
    # one workload per connection count, as lab calibrate keeps them
    counts = sorted(int(k) for k in prov["calibration"]["by_connections"])
    assert counts[0] == 1 and len(counts) >= 3
    for n in counts:
        wl, _ = wp.workload_at(n)
        wl.validate()
        assert wl.cpu_us_per_trx > 0 and wl.client_us_per_trx > 0
    assert load_workload(DEFAULT_WORKLOAD).to_dict() == wp.to_dict()


def test_a_saved_workload_shadows_the_builtin_of_its_name(home):
    from innoflush.simulator.workload_profile import DEFAULT_WORKLOAD, default_workload
    save_workload(WorkloadProfile(DEFAULT_WORKLOAD, "mine", Workload(cpu_us_per_trx=777.0)))
    mine = load_workload(DEFAULT_WORKLOAD)
    assert mine.origin == "saved" and mine.workload.cpu_us_per_trx == 777.0
    # the default stays the built-in one: the same on every host
    assert default_workload().workload.cpu_us_per_trx != 777.0


def test_an_unknown_workload_names_the_builtin_ones(home):
    from innoflush.simulator.workload_profile import DEFAULT_WORKLOAD
    with pytest.raises(ProfileError, match=f"built-in: .*{DEFAULT_WORKLOAD}"):
        load_workload("nothing-here")
    res = CliRunner().invoke(main, ["simulate", "--profile", "samsung-pm9a3", "--workload",
                                    "nothing-here"])
    assert res.exit_code == 2 and DEFAULT_WORKLOAD in res.output
    assert "Traceback" not in res.output
