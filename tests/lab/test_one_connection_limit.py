"""scripts/one_connection_limit.py's pure parts: the probe pooled at three time scales,
the held-out fit of a floor form, and the cell-history baseline, on rows made up here."""

from __future__ import annotations

import math

from tests.helpers.scripts_loader import load_script

mod = load_script("one_connection_limit")


def _row(run: str, device: str, workload: str, rt: float, statement_us: float,
         cpu_us: float = 50.0, ratio: float = 2.0) -> dict:
    return {"run": run, "device": device, "workload": workload, "rt_cell": rt,
            "statement_us": statement_us, "cpu_us": cpu_us, "measured_ratio": ratio}


def test_the_probe_is_pooled_by_device_and_by_run():
    rows = mod.with_pooled_probes([_row("a", "x", "i", 10, 1), _row("a", "x", "w", 30, 1),
                                   _row("a", "y", "i", 80, 1), _row("b", "x", "i", 5, 1)])
    assert [r["rt_device"] for r in rows] == [20, 20, 80, 5]
    assert [r["rt_run"] for r in rows] == [30, 30, 30, 5]


def test_a_run_the_others_explain_is_priced_from_their_constants():
    # the statement takes 2 round trips of the run's probe, whatever the cell's reading
    rows = []
    for run, rt in (("a", 60.0), ("b", 90.0), ("c", 70.0)):
        for i, noise in enumerate((0.6, 1.0, 1.5)):
            rows.append(_row(run, "d", f"w{i}", rt * noise, 2 * rt, cpu_us=0.0))
    rows = mod.with_pooled_probes(rows)
    form, grid = mod.FORMS["a·cpu + b·rt (today's form)"]
    inside, total, consts = mod.held_out(form, grid, rows, "rt_run")
    assert (inside, total) == (9, 9) and math.isclose(consts[1], 2.0)
    # the cell's own reading is off by x0.6 and x1.5 in two of every three
    inside, total, _ = mod.held_out(form, grid, rows, "rt_cell")
    assert total == 9 and inside == 3


def test_the_cell_history_baseline_prices_a_cell_by_its_other_runs():
    rows = [_row("a", "d", "i", 1, 1, ratio=2.0), _row("b", "d", "i", 1, 1, ratio=2.2),
            _row("c", "d", "i", 1, 1, ratio=5.0), _row("a", "e", "i", 1, 1, ratio=1.0)]
    # a: median of 2.2 and 5.0 is 3.6 (out), b: of 2.0 and 5.0, 3.5 (out), c: 2.1 (out);
    # the lone cell of e has no other run and is not counted
    assert mod.cell_history(rows) == (0, 3)
    rows[2]["measured_ratio"] = 2.1
    assert mod.cell_history(rows) == (3, 3)


def test_the_host_speed_is_a_runs_median_cpu_over_each_cells_median():
    from pathlib import Path

    def cell(conns: int, cpu: float, workload: str = "insert") -> dict:
        return {"change": "trx-commit", "device": "d", "workload": workload,
                "connections": conns, "after": {"server_cpu_us_per_trx": cpu},
                "advise_report": {"workload": {"statements_per_trx": {"value": 2}}}}

    reports = []
    # run a at 100 µs, b at 200 (the cells' median 150 each); one-thread cells do not count
    for name, cpus in (("a", (100, 100, 9999)), ("b", (200, 200, 1))):
        reports.append((Path(f"sysbench-{name}.json"), {"devices": [{"cells": [
            cell(4, cpus[0]), cell(16, cpus[1], "write_only"), cell(1, cpus[2])]}]}))
    speed = mod.host_speed(reports)
    assert math.isclose(speed["sysbench-a.json"], 100 / 150)
    assert math.isclose(speed["sysbench-b.json"], 200 / 150)
