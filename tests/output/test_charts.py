"""The charts of --html / --png from known inputs (series counts, bands, empty cases), the
page's escaping and self-containment, and the options' checks and writing (fast lane:
no browser; tests/output/test_html_browser.py opens the pages)."""

from __future__ import annotations

import os
import re
import stat

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main
from innoflush.errors import UsageError
from innoflush.output.charts import advise_charts, lab_charts, measure_charts, sim_charts
from innoflush.output.charts.build import BUILDERS, build_page
from innoflush.output.charts.figure import series_count
from innoflush.output.charts.output import check_targets, emit, png_name
from innoflush.output.charts.page import render_html


def summary(p50_us: float, spread: float = 2.0) -> dict:
    p50 = p50_us * 1000
    return {"count": 20_000, "mean_ns": p50 * 1.1, "min_ns": p50 / 2, "p50_ns": p50,
            "p90_ns": p50 * spread, "p99_ns": p50 * spread ** 2,
            "p99_9_ns": p50 * spread ** 3, "max_ns": p50 * spread ** 4, "shape": "quantiles"}


def mtest(op: str, size: int, direct: bool, p50_us: float, ops: float | None = 1000.0,
          unsupported: str | None = None) -> dict:
    sync = summary(p50_us) if op in ("fsync", "fdatasync") else None
    return {"op": op, "write_bytes": size, "direct": direct, "jobs": 1, "count": 100,
            "ops_per_s": None if unsupported else ops, "duration_s": 0.1, "warmup_ops": 0,
            "write": None if unsupported else summary(p50_us / 3), "sync": sync,
            "total": None, "unsupported": unsupported}


MEASURE = {"path": "/data", "host": "h", "date": "2026-01-01T00:00:00Z", "engine": "builtin",
           "engine_version": None, "settings": {"duration_s": 1.0, "count": None,
                                                "warmup_ops": 3, "file_size_bytes": 1 << 20},
           "facts": {"fs_type": "ext4", "mount_point": "/", "disks": [{"name": "vda"}]},
           "plp_verdict": {"verdict": "unknown", "o_direct_no_fsync_safe": None,
                           "reasons": ["a <reason> & more"]},
           "warnings": [],
           "tests": [mtest("fsync", 16384, True, 150), mtest("fsync", 2 << 20, True, 900),
                     mtest("fsync", 16384, False, 300), mtest("none", 16384, True, 50),
                     mtest("fdatasync", 16384, True, 0,
                           unsupported="O_DIRECT refused")]}


def test_measure_cdf_a_series_per_size_and_mode():
    assert measure_charts.latency_cdf(MEASURE, "fsync").series == 3
    assert measure_charts.latency_cdf(MEASURE, "none").series == 1
    # an op whose only test did not run: no series, a note instead
    assert measure_charts.latency_cdf(MEASURE, "fdatasync").series == 0


def test_measure_cdf_marks_p50_p99_p999_at_their_values():
    chart = measure_charts.latency_cdf({"tests": [mtest("fsync", 16384, True, 100)]}, "fsync")
    ax = chart.figure.axes[0]
    marks = {tuple(line.get_xydata()[0]) for line in ax.lines
             if line.get_gid() == "series-0" and len(line.get_xydata()) == 1}
    assert marks == {(100.0, 0.5), (400.0, 0.99), (800.0, 0.999)}


def test_measure_cdf_leaves_out_a_tail_too_few_samples_back():
    t = mtest("fsync", 16384, True, 100)
    t["sync"]["count"] = 5_000                      # backs p99, not p99.9
    ax = measure_charts.latency_cdf({"tests": [t]}, "fsync").figure.axes[0]
    marks = {tuple(line.get_xydata()[0]) for line in ax.lines
             if line.get_gid() == "series-0" and len(line.get_xydata()) == 1}
    assert marks == {(100.0, 0.5), (400.0, 0.99)}


def test_measure_ops_bars_a_series_per_op():
    chart = measure_charts.ops_per_s(MEASURE)
    assert chart.series == 2                               # fsync and none ran
    def bars(i):
        return [a for a in chart.figure.findobj() if (a.get_gid() or "").startswith(f"series-{i}.")]
    assert len(bars(0)) == 1 and len(bars(1)) == 3       # none's test, the three fsync tests


def test_mean_only_profile_is_one_marked_point():
    quantiles = {"name": "q", "tests": [{"op": "fsync", "write_bytes": 16384, "direct": True,
                                         "jobs": 1, "sync": summary(40)}]}
    mean_only = {"name": "m", "tests": [{"op": "fsync", "write_bytes": 16384, "direct": True,
                                         "jobs": 1, "sync": {"count": 0, "mean_ns": 9e6,
                                                             "shape": "mean-only"}}]}
    chart = measure_charts.compare_cdf({"profiles": [quantiles, mean_only]}, "fsync")
    assert chart.series == 2
    ax = chart.figure.axes[0]
    points = [c for c in ax.collections if c.get_gid() == "series-1"]
    assert len(points) == 1 and points[0].get_offsets().tolist() == [[9000.0, 0.5]]


def sim_row(method: str, tc: int, sb: int | None, conns: int, tps: float,
            syncs: dict | None = None) -> dict:
    return {"flush_method": method, "trx_commit": tc, "sync_binlog": sb,
            "connections": conns, "tps": tps, "tps_ci95": None, "commit_p50_ms": 1.0,
            "commit_p99_ms": 2.0, "runs": [{"syncs_per_s": syncs or {"redo_syncs": tps}}]}


SIM = {"profile": "p", "title": "t", "flavor": "mysql-8.0", "duration_s": 1, "seed": 1,
       "workload_source": "w", "notes": [],
       "rows": [sim_row(m, tc, 1, c, 100.0 * c * tc)
                for m in ("O_DIRECT", "fsync") for tc in (1, 2) for c in (1, 4, 16)]}


def test_simulate_a_line_per_setting():
    assert len(sim_charts.settings(SIM)) == 4
    for chart in (sim_charts.tps_chart(SIM), sim_charts.p99_chart(SIM)):
        assert chart.series == 4
        for line in chart.figure.axes[0].lines:
            if line.get_gid():
                assert len(line.get_xdata()) == 3           # one point per connection count
    one = {**SIM, "rows": SIM["rows"][:3]}
    assert sim_charts.tps_chart(one).series == 1


def test_syncs_stacked_a_series_per_kind_seen():
    rows = [sim_row("O_DIRECT", 1, 1, 1, 100, {"redo_syncs": 100, "binlog_syncs": 100,
                                                "data_file_syncs": 0}),
            sim_row("O_DIRECT", 2, 1, 1, 100, {"redo_syncs": 1, "binlog_syncs": 100,
                                                "checkpoint_syncs": 0.5})]
    data = {"rows": rows}
    assert sim_charts.sync_kinds_present(data) == ["redo_syncs", "binlog_syncs",
                                                   "checkpoint_syncs"]
    chart = sim_charts.syncs_chart(data)
    assert chart.series == 3
    # stacked: the binlog bars start on top of the redo bars
    binlog = [a for a in chart.figure.findobj() if a.get_gid() == "series-1.0"][0]
    assert binlog.get_y() == pytest.approx(100)


def test_tps_connections_chart_only_with_a_target():
    settings = [{"setting": "redo-fsync", "title": "x", "tps_per_connection": 300.0,
                 "simulated_tps_1_connection": 290.0, "connections_for_target": 4,
                 "simulated_connections_for_target": 5},
                {"setting": "trx-commit-2", "title": "y", "tps_per_connection": 5000.0,
                 "simulated_tps_1_connection": None, "connections_for_target": None}]
    data = {"profile": "p", "settings": settings, "target_tps": 1000.0, "notes": []}
    assert [c.name for c in sim_charts.tps_page(data, None).charts] == \
        ["tps-per-connection", "connections-for-target"]
    assert sim_charts.connections_chart(data).series == 2
    assert [c.name for c in sim_charts.tps_page({**data, "target_tps": None}, None).charts] \
        == ["tps-per-connection"]


def prediction(cur: float, rec: float, span: list[float]) -> dict:
    return {"current": {"tps": cur, "commit_latency_p99_ms": 5.0},
            "recommended": {"tps": rec, "commit_latency_p99_ms": 1.0},
            "change": {}, "range": {"tps_pct": span}}


def test_advise_prediction_with_its_range():
    data = {"findings": [{"setting": "innodb_flush_log_at_trx_commit", "current": "1",
                          "recommended": "2", "predicted": prediction(100, 150, [40, 60])},
                         {"setting": "sync_binlog", "current": "1", "recommended": "0",
                          "predicted": None}],
            "combined_prediction": None}
    assert [lbl for lbl, _ in advise_charts.predictions(data)] == \
        ["innodb_flush_log_at_trx_commit 1 → 2"]
    chart = advise_charts.tps_chart(data)
    assert chart.series == 2
    ax = chart.figure.axes[0]
    # the error bar spans the range: 100 × (1.40 … 1.60)
    segs = [c for c in ax.collections if hasattr(c, "get_segments")]
    (lo, hi) = sorted(p[1] for p in segs[0].get_segments()[0])
    assert (lo, hi) == pytest.approx((140.0, 160.0))
    assert advise_charts.tps_chart({"findings": []}).series == 0


def test_advise_evidence_a_series_per_counter_seen():
    iv = [{"index": 0, "seconds": 10, "valid": True,
           "deltas": {"Com_commit": 100, "Innodb_data_fsyncs": 5, "Innodb_data_writes": 0}},
          {"index": 1, "seconds": 10, "valid": False, "deltas": {"Innodb_dblwr_writes": 9}},
          {"index": 2, "seconds": 10, "valid": True, "deltas": {"Com_commit": 50}}]
    data = {"sampling": {"intervals": iv}}
    assert advise_charts.evidence_counters(data) == ["Com_commit", "Innodb_data_fsyncs"]
    chart = advise_charts.evidence_chart(data)
    assert chart.series == 2
    line = [x for x in chart.figure.axes[0].lines if x.get_gid() == "series-0"][0]
    assert list(line.get_ydata()) == [10.0, 5.0]


def cell(measured: float, predicted: float) -> dict:
    return {"measured": {"tps": measured, "commit_latency_p99_ms": 2.0},
            "predicted": {"tps": predicted, "commit_latency_p99_ms": 2.2},
            "errors_pct": {"tps": round(100 * (predicted / measured - 1), 1),
                           "commit_latency_p99_ms": 10.0}}


def test_lab_validate_a_series_per_device_and_the_band():
    data = {"devices": [{"name": "local", "cells": [cell(100, 110), cell(200, 150),
                                                     {"error": "failed"}]},
                        {"name": "slow", "cells": [cell(50, 50)]}]}
    chart = lab_charts.scatter_chart(data, "tps")
    assert chart.series == 2
    ax = chart.figure.axes[0]
    assert ax.collections[0].get_offsets().tolist() == [[100.0, 110.0], [200.0, 150.0]]
    errors = lab_charts.error_chart(data)
    assert errors.series == 2 and errors.name == "errors-by-device"
    local = [a for a in errors.figure.findobj() if a.get_gid() == "series-0.0"][0]
    assert local.get_height() == pytest.approx((10 + 25) / 2)    # mean |error| of TPS


def test_lab_run_grouped_by_setting():
    run = {"runs": [{"requested": {"innodb_flush_method": m,
                                   "innodb_flush_log_at_trx_commit": 1}, **cell(100, 120)}
                    for m in ("O_DIRECT", "O_DIRECT_NO_FSYNC")]}
    assert lab_charts.scatter_chart(run).series == 2
    assert lab_charts.error_chart(run).name == "errors-by-setting"


def test_page_escapes_and_refers_to_nothing_outside():
    page = build_page("measure", {**MEASURE, "path": "/d<script>alert(1)</script>"},
                      "text <b>report</b>")
    out = render_html(page)
    assert "<script" not in out and "&lt;script&gt;" in out
    assert "a &lt;reason&gt; &amp; more" in out and "text &lt;b&gt;report" in out
    assert not re.search(r'(src|href)\s*=\s*["\']?(https?:)?//', out)
    assert "<img" not in out and "<link" not in out
    charts = re.findall(r'<figure class="chart" data-chart="([^"]+)" data-series="(\d+)">',
                        out)
    assert [c for c, _ in charts] == ["latency-cdf-none", "latency-cdf-fsync",
                                      "latency-cdf-fdatasync", "ops-per-s"]
    assert [int(n) for _, n in charts] == [1, 3, 0, 2]
    # each chart's series are findable in its own SVG
    for name, n in charts:
        svg = out.split(f'data-chart="{name}"')[1].split("</figure>")[0]
        ids = set(re.findall(r'id="series-(\d+)', svg))
        assert len(ids) == int(n)


def test_every_builder_copes_with_an_empty_result():
    for kind in BUILDERS:
        page = build_page(kind, {}, None)
        assert page.charts and all(c.series == 0 for c in page.charts), kind
        render_html(page)


def test_series_count_reads_the_gids():
    chart = sim_charts.tps_chart(SIM)
    assert series_count(chart.figure) == len({r["flush_method"] + str(r["trx_commit"])
                                               for r in SIM["rows"]})


# ---- the options ------------------------------------------------------------------------

def test_check_targets(tmp_path):
    with pytest.raises(UsageError, match="no such directory"):
        check_targets(str(tmp_path / "nope" / "a.html"), None)
    with pytest.raises(UsageError, match="is a directory"):
        check_targets(str(tmp_path), None)
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(UsageError, match="not a directory"):
        check_targets(None, str(f))
    check_targets(str(tmp_path / "page.html"), str(tmp_path / "new" / "pngs"))
    assert (tmp_path / "new" / "pngs").is_dir()


def test_check_targets_read_only(tmp_path):
    """A directory nobody may write to: a read-only tmpfs of the test's own (root, as the
    tests run here, writes through 0555 permissions; a read-only mount stops it too)."""
    import shutil
    import subprocess

    ro = tmp_path / "ro"
    ro.mkdir()
    if os.geteuid() == 0 and shutil.which("mount"):
        got = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "innoflush-charts",
                              str(ro)], capture_output=True, text=True, check=False)
        assert got.returncode == 0, got.stderr
    else:
        ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        with pytest.raises(UsageError, match="(?i)permission denied|read-only"):
            check_targets(str(ro / "a.html"), None)
        with pytest.raises(UsageError, match="(?i)permission denied|read-only"):
            check_targets(None, str(ro / "pngs"))
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", str(ro)], check=False)


def test_emit_writes_page_and_pngs_atomically(tmp_path):
    page, pngs = tmp_path / "m.html", tmp_path / "png"
    page.write_text("old")
    written = emit("measure", MEASURE, str(page), str(pngs), "report")
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    names = sorted(p.name for p in pngs.iterdir())
    assert names == sorted(png_name("measure", c) for c in
                           ("latency-cdf-none", "latency-cdf-fsync", "latency-cdf-fdatasync",
                            "ops-per-s"))
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs.iterdir())
    assert len(written) == 5
    assert not [p for p in tmp_path.rglob(".*.tmp")]          # no temporary file left


def one_line_error(r) -> str:
    assert r.exit_code == 2, r.output
    err = r.stderr.strip()
    assert err.startswith("innoflush: error: ") and len(err.splitlines()) == 1, err
    return err


@pytest.mark.parametrize("args", [
    ["simulate", "--profile", "samsung-990-pro"],
    ["tps", "--profile", "samsung-990-pro"],
    ["profiles", "compare", "samsung-990-pro"],
    ["measure", "."],
    ["advise", "--from", "tests/fixtures/captures/mariadb-10.11-binlog/tab"],
    ["lab", "run", "--profile", "samsung-990-pro"],
    ["lab", "validate", "--devices", "local"],
])
def test_bad_targets_refused_before_the_run(tmp_path, args):
    missing = tmp_path / "no" / "page.html"
    err = one_line_error(CliRunner().invoke(main, [*args, "--html", str(missing)]))
    assert "--html" in err and "no such directory" in err
    err = one_line_error(CliRunner().invoke(main, [*args, "--html", str(tmp_path)]))
    assert "is a directory" in err
    f = tmp_path / "f"
    f.write_text("")
    err = one_line_error(CliRunner().invoke(main, [*args, "--png", str(f)]))
    assert "--png" in err and "not a directory" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]      # nothing ran, nothing left


def test_profiles_compare_html_and_png(tmp_path):
    page, pngs = tmp_path / "c.html", tmp_path / "png"
    r = CliRunner().invoke(main, ["profiles", "compare", "samsung-990-pro", "crucial-m500",
                                  "crucial-t500",
                                  "--json", "--html", str(page), "--png", str(pngs)])
    assert r.exit_code == 0, r.output
    import json
    assert json.loads(r.stdout)["profiles"] == ["samsung-990-pro", "crucial-m500",
                                                "crucial-t500"]
    out = page.read_text(encoding="utf-8")
    assert out.count('data-series="3"') == 2
    assert sorted(p.name for p in pngs.iterdir()) == [
        "profiles-compare-sync-cdf-fdatasync.png", "profiles-compare-sync-cdf-fsync.png"]
