"""Synthetic device profiles for simulator tests: shapes like the published devices,
built here so that the tests do not depend on the built-in data files."""

from __future__ import annotations

from innoflush.profiles import DeviceProfile, ProfileTest
from innoflush.stats import LatencySummary


def dist(p50_ns: float) -> LatencySummary:
    return LatencySummary(count=1000, mean_ns=p50_ns * 1.1, min_ns=p50_ns * 0.6, p50_ns=p50_ns,
                          p90_ns=p50_ns * 1.4, p99_ns=p50_ns * 2.5, p99_9_ns=p50_ns * 4,
                          max_ns=p50_ns * 6)


def device(name: str, fsync_16k_ns: float, fsync_2m_ns: float, fdatasync_ratio: float = 0.6,
           write_16k_ns: float = 20e3, write_2m_ns: float = 900e3) -> DeviceProfile:
    tests = []
    for direct, wf in ((True, 1.0), (False, 0.25)):
        for size, w, f in ((16384, write_16k_ns, fsync_16k_ns),
                           (2097152, write_2m_ns, fsync_2m_ns)):
            tests += [
                ProfileTest("none", size, direct, write=dist(w * wf)),
                ProfileTest("fsync", size, direct, write=dist(w * wf), sync=dist(f)),
                ProfileTest("fdatasync", size, direct, write=dist(w * wf),
                            sync=dist(f * fdatasync_ratio)),
            ]
    return DeviceProfile(name, name, {"kind": "derived", "note": "test fixture"},
                         {"class": "test"}, tests)


def consumer_ssd() -> DeviceProfile:
    """No PLP: fast writes, ms-class cache flushes."""
    return device("test-consumer", 2e6, 5e6)


def plp_ssd() -> DeviceProfile:
    """PLP: flushes in tens of µs."""
    return device("test-plp", 20e3, 150e3)


def scaled(profile: DeviceProfile, factor: float) -> DeviceProfile:
    """The same device with every latency multiplied by factor."""
    tests = [ProfileTest(t.op, t.write_bytes, t.direct, t.jobs, t.ops_per_s,
                         t.write.scaled(factor) if t.write else None,
                         t.sync.scaled(factor) if t.sync else None,
                         t.total.scaled(factor) if t.total else None, t.source, t.note)
             for t in profile.tests]
    return DeviceProfile(f"{profile.name}-x{factor:g}", profile.title, profile.provenance,
                         profile.device, tests)


def hdd_total_only(total_ms: float = 18.0) -> DeviceProfile:
    """A drive published as write+fsync totals only (like the Percona post's 56/s drive)."""
    total = LatencySummary.mean_only(total_ms * 1e6)
    tests = [ProfileTest("fsync", 512, True, total=total, source="published"),
             ProfileTest("none", 16384, True, write=LatencySummary.mean_only(300e3),
                         source="assumed"),
             ProfileTest("none", 2097152, True, write=LatencySummary.mean_only(14e6),
                         source="assumed")]
    return DeviceProfile("test-hdd", "test hdd", {"kind": "derived"}, {"class": "hdd"}, tests)
