"""`make demo`'s live step (scripts/demo_live.py), its pure parts: sysbench's per-second
lines over a window, the recommendation it applies, and sysbench's own count beside
advise --check's (tests/advisor/test_advise_check*.py test the check). The whole demo
runs in CI's fresh-clone check (`make demo`)."""

from __future__ import annotations

from tests.helpers.scripts_loader import load_script

demo = load_script("demo_live")

LOG = """sysbench 1.0.20
[ 1s ] thds: 4 tps: 100.00 qps: 100.00 (r/w/o: 0.00/100.00/0.00) lat (ms,95%): 1.0 err/s: 0.00
[ 2s ] thds: 4 tps: 200.00 qps: 200.00 (r/w/o: 0.00/200.00/0.00) lat (ms,95%): 1.0 err/s: 0.00
[ 3s ] thds: 4 tps: 400.00 qps: 400.00 (r/w/o: 0.00/400.00/0.00) lat (ms,95%): 1.0 err/s: 0.00
    transactions:                        700    (233.33 per sec.)
"""


def finding(setting, gain, statements=("SET GLOBAL x = 1;",)):
    return {"setting": setting, "set_global": list(statements),
            "predicted": {"change": {"tps_pct": gain}, "interval": {"tps_pct": [gain - 30,
                                                                              gain + 30]}}}


def test_window_tps_is_the_mean_of_the_window_s_report_lines(tmp_path):
    log = tmp_path / "sb.log"
    log.write_text(LOG)
    assert demo.window_tps(log, 2, 3) == 300.0
    assert demo.window_tps(log, 1, 1) == 100.0
    assert demo.window_tps(log, 5, 9) is None      # no line in the window: no figure


def test_the_change_applied_is_the_largest_dynamic_gain():
    report = {"findings": [
        finding("innodb_flush_method", 90.0),                    # needs a restart
        finding("sync_binlog", 20.0),
        finding("innodb_flush_log_at_trx_commit", 60.0),
        finding("innodb_flush_log_at_trx_commit", 99.0, statements=()),   # nothing to run
        {"setting": "sync_binlog", "set_global": ["SET"], "predicted": None}]}
    assert demo.chosen_finding(report)["predicted"]["change"]["tps_pct"] == 60.0
    assert demo.chosen_finding({"findings": []}) is None


def test_sysbench_s_own_count_is_a_second_measure():
    assert demo.sysbench_line(1000.0, 1900.0) == (
        "sysbench's own TPS over the same windows: 1,000 before, 1,900 after (×1.90)")
    assert "not reported" in demo.sysbench_line(None, 1900.0)
