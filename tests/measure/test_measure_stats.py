"""Statistics of the probe: summaries, warm-up, rates, fio histogram merging."""

from __future__ import annotations

from array import array

import numpy as np
import pytest

from innoflush.measure.fio import parse_fio_result, summary_from_fio
from innoflush.measure.probe import _JobRecord, _summarise
from innoflush.measure.result import TestSpec
from innoflush.stats import LatencySummary


def test_summary_of_known_array():
    s = LatencySummary.from_samples(np.arange(1, 101))  # 1..100
    assert s.count == 100
    assert s.mean_ns == pytest.approx(50.5)
    assert s.min_ns == 1 and s.max_ns == 100
    assert s.p50_ns == pytest.approx(50.5)
    assert s.p90_ns == pytest.approx(90.1)
    assert s.p99_ns == pytest.approx(99.01)
    assert s.p99_9_ns == pytest.approx(99.901)


def test_summary_of_constant_array():
    s = LatencySummary.from_samples([7] * 1000)
    assert (s.min_ns, s.p50_ns, s.p99_9_ns, s.max_ns, s.mean_ns) == (7, 7, 7, 7, 7)


def _record(writes, syncs, start=0, step=1000):
    rec = _JobRecord()
    rec.write = array("q", writes)
    rec.sync = array("q", syncs)
    rec.start = array("q", [start + i * step for i in range(len(writes))])
    rec.t_last = start + len(writes) * step
    return rec


def test_warmup_ops_are_dropped_and_rate_uses_measured_window():
    # 3 slow warm-up ops then 10 ops of write 100 ns + sync 900 ns, one op per µs
    rec = _record([5000] * 3 + [100] * 10, [9000] * 3 + [900] * 10)
    r = _summarise(TestSpec("fsync", 16384, True, 1), [rec], warmup_ops=3, has_sync=True)
    assert r.count == 10 and r.warmup_ops == 3
    assert r.write.max_ns == 100 and r.sync.max_ns == 900
    assert r.total.p50_ns == 1000
    assert r.duration_s == pytest.approx(10e-6)
    assert r.ops_per_s == pytest.approx(1e6)


def test_warmup_never_drops_the_last_op():
    rec = _record([100, 200], [0, 0])
    r = _summarise(TestSpec("none", 4096, False, 1), [rec], warmup_ops=5, has_sync=False)
    assert r.count == 1 and r.warmup_ops == 1
    assert r.write.p50_ns == 200
    assert r.sync is None and r.total == r.write


def test_jobs_are_merged_and_rates_add():
    a = _record([10] * 11, [0] * 11, step=1000)
    b = _record([30] * 11, [0] * 11, step=2000)
    r = _summarise(TestSpec("dsync", 16384, True, 2), [a, b], warmup_ops=1, has_sync=False)
    assert r.count == 20
    assert r.write.mean_ns == pytest.approx(20)
    assert r.ops_per_s == pytest.approx(1e6 + 0.5e6)


def _fio_lat(values_counts, pct=None):
    n = sum(c for _, c in values_counts)
    mean = sum(v * c for v, c in values_counts) / n
    d = {"min": min(v for v, _ in values_counts), "max": max(v for v, _ in values_counts),
         "mean": mean, "stddev": 0.0, "N": n,
         "bins": {str(v): c for v, c in values_counts}}
    if pct is not None:
        d["percentile"] = pct
    return d


def test_fio_single_job_uses_fios_percentiles():
    lat = _fio_lat([(1000, 50), (2000, 50)],
                   pct={"50.000000": 1000, "90.000000": 2000, "99.000000": 2000,
                        "99.900000": 2000})
    s = summary_from_fio([lat])
    assert s.count == 100 and s.p50_ns == 1000 and s.p90_ns == 2000
    assert s.mean_ns == 1500 and s.min_ns == 1000 and s.max_ns == 2000


def test_fio_jobs_merged_through_bins():
    a = _fio_lat([(1000, 90), (10000, 10)])
    b = _fio_lat([(2000, 100)])
    s = summary_from_fio([a, b])
    assert s.count == 200
    assert s.mean_ns == pytest.approx((1000 * 90 + 10000 * 10 + 2000 * 100) / 200)
    assert s.p50_ns == 2000  # 90 of 200 at 1000 ns, the next 100 at 2000 ns
    assert s.p99_ns == 10000
    assert s.min_ns == 1000 and s.max_ns == 10000


def test_fio_empty_sync_is_none():
    assert summary_from_fio([{"min": 0, "max": 0, "mean": 0.0, "N": 0}]) is None


def test_parse_fio_fdatasync_counts_from_lat_n():
    pct = {"50.000000": 50000, "90.000000": 60000, "99.000000": 70000, "99.900000": 80000}
    job = {"jobname": "innoflush", "error": 0, "job_runtime": 1000,
           "write": {"iops": 9000.0, "total_ios": 9000,
                     "clat_ns": {"min": 10000, "max": 90000, "mean": 40000.0, "N": 9000,
                                 "percentile": pct}},
           "sync": {"total_ios": 0,  # fio: 0 with fdatasync=1
                    "lat_ns": {"min": 20000, "max": 90000, "mean": 55000.0, "N": 9000,
                               "percentile": pct}}}
    r = parse_fio_result({"jobs": [job]}, TestSpec("fdatasync", 16384, True, 1))
    assert r.count == 9000 and r.sync.count == 9000
    assert r.sync.p50_ns == 50000 and r.sync.p99_9_ns == 80000
    assert r.ops_per_s == 9000.0 and r.duration_s == 1.0
    assert r.total is None and r.warmup_ops == 0
