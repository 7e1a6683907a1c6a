"""Judging a predicted change against replicated measurements (lab/experiments/change_judging.py)
and the replicated cells of lab validate --workload-cmd (pure parts)."""

from __future__ import annotations

import pytest

from innoflush.errors import UsageError
from innoflush.lab.experiments.change_cells import summarize
from innoflush.lab.experiments.change_judging import (
    FACTOR,
    classify,
    judge,
    noise_band_pct,
    spread_pct,
)
from innoflush.lab.experiments.change_validation import (
    ChangeValidateOptions,
    mean_figures,
    replicate_figures,
)
from innoflush.lab.load.command_spec import WorkloadCommand
from innoflush.lab.reports import change_report
from tests.helpers.lab_reports import replicated_cell, replicated_report


def test_the_spread_is_half_the_replicates_range_of_the_measured_ratio():
    assert spread_pct(1.0, [1.07, 0.95]) == 6.0
    assert spread_pct(2.0, [2.2, 1.8, 2.0]) == 10.0
    assert spread_pct(1.0, [1.07]) is None              # one replicate: no spread
    assert spread_pct(None, [1.0, 1.1]) is None
    assert spread_pct(1.0, [1.07, None]) is None        # one ratio left
    assert noise_band_pct(None) == 3.0 and noise_band_pct(1.5) == 3.0
    assert noise_band_pct(6.0) == 6.0


def test_one_replicate_is_judged_as_before():
    # the ±3 % flat band, within ×/÷FACTOR of the one ratio
    assert [classify(r) for r in (1.03, 0.969, 1.031)] == ["flat", "down", "up"]
    v = judge(1.8, 2.0)
    assert v["within_factor"] is True and v["ratio_factor"] == 0.9
    assert v["spread_pct"] is None and v["noise_band_pct"] == 3.0
    assert v["direction"] == {"measured": "up", "predicted": "up", "right": True,
                              "within_noise": False}
    assert judge(2.0 * FACTOR * 1.01, 2.0)["within_factor"] is False
    assert judge(2.0 / FACTOR, 2.0)["within_factor"] is True
    # a +7 % measured on one run against a flat prediction: wrong, as it always was
    assert judge(1.0, 1.07)["direction"]["right"] is False


def test_a_change_inside_the_replicates_noise_is_flat_and_a_flat_prediction_right():
    # +7 % and -4 %: measured +1.5 %, spread 5.4 %: flat within noise
    v = judge(1.0, 1.015, [1.07, 0.96])
    assert v["spread_pct"] == pytest.approx(5.4) and v["noise_band_pct"] == pytest.approx(5.4)
    assert v["direction"]["measured"] == "flat" and v["direction"]["predicted"] == "flat"
    assert v["direction"]["right"] is True
    assert v["direction"]["within_noise"] is False      # +1.5 % is flat at ±3 % anyway
    # +6 % measured, replicates +13 % and -1 % (spread 6.6 %): flat only because of
    # the noise
    v = judge(1.04, 1.06, [1.13, 0.99])
    assert v["direction"] == {"measured": "flat", "predicted": "flat", "right": True,
                              "within_noise": True}
    # a prediction beyond the noise band against a flat measurement is wrong
    v = judge(1.2, 1.06, [1.13, 0.99])
    assert v["direction"]["predicted"] == "up" and v["direction"]["right"] is False


def test_a_change_beyond_the_noise_is_judged_by_its_sign():
    v = judge(1.25, 1.35, [1.30, 1.40])                 # spread 3.7 %: up
    assert v["direction"] == {"measured": "up", "predicted": "up", "right": True,
                              "within_noise": False}
    v = judge(0.9, 1.35, [1.30, 1.40])
    assert v["direction"]["right"] is False
    # replicates that agree closely: the ±3 % floor still holds for the prediction
    v = judge(1.02, 1.35, [1.34, 1.36])
    assert v["direction"]["predicted"] == "flat" and v["direction"]["right"] is False


def test_within_the_factor_of_the_measured_spread():
    # measured ×2.0, replicates ×1.8 and ×2.2 (spread 10 %): within means between
    # 1.8 / 1.3 and 2.2 × 1.3
    reps = [1.8, 2.2]
    assert judge(2.2 * FACTOR, 2.0, reps)["within_factor"] is True
    assert judge(2.2 * FACTOR * 1.01, 2.0, reps)["within_factor"] is False
    assert judge(1.8 / FACTOR, 2.0, reps)["within_factor"] is True
    assert judge(1.8 / FACTOR / 1.01, 2.0, reps)["within_factor"] is False
    # the same prediction against one run of ×2.0: outside
    assert judge(2.2 * FACTOR, 2.0)["within_factor"] is False
    assert judge(None, 2.0, reps)["within_factor"] is None


def test_a_side_is_the_mean_of_its_replicates():
    first = {"tps": 1000.0, "data_fsyncs_per_s": 990.0, "data_writes_per_s": 5.0,
             "server_cpu_us_per_trx": 100.0, "command_cpu_us_per_trx": None,
             "settings": {"sync_binlog": 1}, "notes": ["n"]}
    second = dict(first, tps=1200.0, data_fsyncs_per_s=1010.0, data_writes_per_s=7.0,
                  server_cpu_us_per_trx=110.0)
    m = mean_figures(first, [first, second])
    assert (m["tps"], m["data_fsyncs_per_s"], m["data_writes_per_s"]) == (1100.0, 1000.0, 6.0)
    assert m["server_cpu_us_per_trx"] == 105.0
    assert m["command_cpu_us_per_trx"] is None          # not measured in a replicate
    assert m["settings"] == {"sync_binlog": 1} and m["notes"] == ["n"]
    assert m["replicates"] == 2 and first["tps"] == 1000.0   # the first is not changed
    stolen = "the hypervisor took 31% of the CPU time (steal): the cores were not all ours"
    r = replicate_figures(2, first, dict(first, tps=1500.0, notes=[stolen]))
    assert r == {"replicate": 2,
                 "before": {"tps": 1000.0, "data_fsyncs_per_s": 990.0,
                            "data_writes_per_s": 5.0, "checkpoint_age": None,
                            "settle": None, "notes": ["n"]},
                 "after": {"tps": 1500.0, "data_fsyncs_per_s": 990.0,
                           "data_writes_per_s": 5.0, "checkpoint_age": None,
                           "settle": None, "notes": [stolen]},
                 "ratio": 1.5}
    assert replicate_figures(1, {"tps": 1.0}, {"tps": 2.0})["after"]["notes"] == []


def test_a_replicated_cell_and_its_summary():
    # before 1000 and 1040, after 1070 and 1000: +7 % and -3.8 %, mean +1.5 %
    c = replicated_cell([1000.0, 1040.0], [1070.0, 1000.0], 0.0)
    assert c["measured_ratio"] == pytest.approx(1.0147, abs=1e-4)
    assert [r["ratio"] for r in c["replicates"]] == [1.07, pytest.approx(0.9615, abs=1e-4)]
    assert c["measured_spread_pct"] == pytest.approx(5.3, abs=0.05)
    assert c["direction"]["measured"] == "flat" and c["direction"]["right"] is True
    noisy = replicated_cell([1000.0, 1000.0], [1130.0, 990.0], 0.0)   # +6 %, ±6.6 %
    assert noisy["direction"]["within_noise"] is True and noisy["direction"]["right"]
    s = summarize([c, noisy])
    assert s["direction_right"] == "2/2" and s["measured_within_noise"] == 1
    text = change_report.render_text(replicated_report([c, noisy]))
    assert "±5%" in text and "±7%" in text and "flat (within noise)" in text


def test_replicates_are_between_one_and_five():
    for n in (0, 6):
        with pytest.raises(UsageError, match="--replicates"):
            ChangeValidateOptions(workloads=[WorkloadCommand("w", "c {threads}", None)],
                                  replicates=n).validate()
