"""The request objects the commands build (AdviseRequest, SimulateRequest, TpsRequest):
what they refuse before any server is read or any simulation runs, with the command's
own messages and exit code 2."""

from __future__ import annotations

import pytest

from innoflush.advisor.request import AdviseRequest
from innoflush.errors import EXIT_USAGE, InnoflushError
from innoflush.profiles import load_profile
from innoflush.simulator.request import SimulateRequest, TpsRequest, simulate, tps


@pytest.mark.parametrize("kw, words", [
    (dict(connections=0), "--connections must be at least 1"),
    (dict(connections=5000), "at most 4096"),
    (dict(cpu_cores=0), "--cpu-cores must be at least 1"),
    (dict(interval_s=0.5), "--interval must be at least 1 second"),
    (dict(samples=0), "--samples must be at least 1"),
    (dict(measure=True, profile="anything"), "give --profile or --measure, not both"),
    (dict(durability="loose"), "--durability 'loose'"),
    (dict(ignore_rules=["no-such-rule"]), "--ignore-rule 'no-such-rule': no such rule"),
])
def test_an_advise_request_refuses_what_the_command_refuses(kw, words):
    with pytest.raises(InnoflushError) as exc:
        AdviseRequest(**kw).check()
    assert words in str(exc.value)
    assert exc.value.exit_code == EXIT_USAGE


def test_an_advise_request_keeps_each_rule_once_and_says_whether_it_predicts():
    from innoflush.advisor.rules import RULE_IDS

    rid = sorted(RULE_IDS)[0]
    r = AdviseRequest(ignore_rules=[rid, rid]).check()
    assert r.ignore_rules == [rid]
    assert not r.predicts                                  # no device, nothing to price
    assert AdviseRequest(measure=True).predicts
    assert AdviseRequest(profile=load_profile("samsung-990-pro")).predicts
    assert not AdviseRequest(profile=load_profile("samsung-990-pro"), predict=False).predicts


@pytest.mark.parametrize("kw, words", [
    (dict(duration_s=0), "--duration must be in (0, 3600]"),
    (dict(replications=31), "--replications must be between 1 and 30"),
    (dict(connections=[1, 0]), "--connections 1,0: each must be between 1 and 4096"),
    (dict(overrides={"cpu_us_per_trx": 1e300}), "--cpu-us 1e+300 is out of range"),
    (dict(overrides={"no_such_key": 1}), "no such workload key to set: no_such_key"),
    (dict(trx_commits=[5]), "innodb_flush_log_at_trx_commit"),
])
def test_a_simulate_request_refuses_before_it_simulates(kw, words):
    with pytest.raises(InnoflushError) as exc:
        simulate(SimulateRequest(profile="samsung-990-pro", **kw))
    assert words in str(exc.value)
    assert exc.value.exit_code == EXIT_USAGE


def test_a_simulate_request_takes_a_profile_object_and_runs_in_process():
    device = load_profile("samsung-990-pro")
    doc = simulate(SimulateRequest(profile=device, connections=[1], duration_s=0.5))
    assert doc["profile"] == device.name
    assert [r["connections"] for r in doc["rows"]] == [1]
    assert doc["rows"][0]["tps"] > 0


@pytest.mark.parametrize("kw, words", [
    (dict(target_tps=0), "--target-tps must be positive"),
    (dict(overrides={"cpu_us_per_trx": -1}), "--cpu-us must be >= 0"),
    (dict(cpu_cores=0), "--cpu-cores must be >= 1"),
])
def test_a_tps_request_refuses_before_it_runs(kw, words):
    with pytest.raises(InnoflushError) as exc:
        tps(TpsRequest(profile="samsung-990-pro", **kw))
    assert words in str(exc.value)
