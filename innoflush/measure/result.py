"""What a measurement produced, and its JSON form (``innoflush measure --json``).

JSON keys (stable; latencies in nanoseconds, durations in seconds):

- ``tool``: "innoflush"; ``version``; ``engine``: "builtin" or "fio";
  ``engine_version``: fio's version string, or null for the built-in engine.
- ``path``: the directory measured (real path); ``host``; ``date``: start, ISO 8601 UTC.
- ``wall_s``: how long the whole run took.
- ``settings``: {``sizes`` (bytes), ``ops``, ``direct`` ("both" / "on" / "off"),
  ``jobs``, ``duration_s`` (per test, null with ``count``), ``count`` (measured ops per
  job per test, or null), ``warmup_ops`` (ops dropped per job at the start of each test),
  ``file_size_bytes`` (the probe file region each job writes through, wrapping around),
  ``quick`` (bool)}.
- ``facts``: the device facts, see innoflush.measure.facts (``fs_type``,
  ``mount_point``, ``disks`` [{``name``, ``model``, ``write_cache``, ``rotational``,
  ...}], ``o_direct`` {``supported``, ``reason``}, ``kernel``, ``cpu_model``, ...).
- ``plp_verdict``: {``verdict``, ``o_direct_no_fsync_safe``, ``reasons``, ``basis``}, see
  innoflush.measure.plp.
- ``warnings``: list of sentences (tmpfs is memory, O_DIRECT refused, ...).
- ``tests``: one object per probe configuration:
  ``op`` ("none", "fsync", "fdatasync", "dsync"), ``write_bytes``, ``direct`` (bool),
  ``jobs``, ``count`` (measured ops, all jobs; with fio and fsync/fdatasync the number
  of syncs, which may be one per job fewer than writes), ``ops_per_s`` (write+sync ops per
  second, all jobs), ``duration_s`` (measured time, the longest job), ``warmup_ops`` (ops
  dropped per job; 0 for fio), ``write``, ``sync``, ``total`` (latency summaries, or
  null), ``unsupported`` (null, or why the test could not run, e.g. O_DIRECT refused),
  ``tail_note`` (null, or why p99 / p99.9 of this test rest on too few samples to be
  trusted: see TAIL_SAMPLES).
  ``write`` is the write call (for dsync it includes the O_DSYNC sync), ``sync`` the
  fsync/fdatasync call after it (null for none and dsync), ``total`` write + sync of the
  same op (null with fio for fsync/fdatasync: fio reports the two separately).
  A latency summary is {``count``, ``mean_ns``, ``min_ns``, ``p50_ns``, ``p90_ns``,
  ``p99_ns``, ``p99_9_ns``, ``max_ns``, ``shape``: "quantiles"} (LatencySummary.to_dict(),
  rounded to 0.1 ns).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import __version__
from ..errors import UsageError
from ..profiles import DeviceProfile, ProfileTest, TestKey
from ..stats import LatencySummary
from ..units import format_size
from .facts import device_class

# A tail quantile is backed only when at least this many samples lie beyond it: p99.9 of
# a 1 s run (about 5,000 syncs) rests on 5 samples, so one stray op moves it.
TAIL_SAMPLES = 10
TAIL_QUANTILES = (("p99", 0.99), ("p99.9", 0.999))
# the sample count each tail quantile needs (p99: 1,000; p99.9: 10,000)
TAIL_MIN_COUNT = {name: round(TAIL_SAMPLES / (1 - q)) for name, q in TAIL_QUANTILES}


def unbacked_quantiles(count: int) -> list[str]:
    """The tail quantiles ("p99", "p99.9") that count samples cannot back."""
    return [name for name, need in TAIL_MIN_COUNT.items() if count < need]


_TAIL_KEYS = {"p99": "p99_ns", "p99.9": "p99_9_ns"}


def unbacked_keys(summary: dict) -> set[str]:
    """The keys of a latency summary (as JSON) whose tail figures its samples cannot back;
    none for a summary without a count (published figures: backed by their source)."""
    count = summary.get("count") or 0
    if count <= 0:
        return set()
    return {_TAIL_KEYS[name] for name in unbacked_quantiles(count)}


def tail_note(count: int) -> str | None:
    """Why the tail of a distribution of count samples is not to be trusted, or None."""
    names = unbacked_quantiles(count)
    if not names:
        return None
    needs = ", ".join(f"{n} (needs {TAIL_MIN_COUNT[n]:,})" for n in names)
    return (f"n={count:,} samples: not enough for {needs}: {TAIL_SAMPLES} samples must "
            "lie beyond a quantile to back it; measure longer")


@dataclass(frozen=True)
class TestSpec(TestKey):
    """One probe configuration: a profile's TestKey, with a label for the report."""

    __test__ = False  # not a pytest test class

    @property
    def label(self) -> str:
        return (f"{self.op} {format_size(self.write_bytes)} "
                f"{'O_DIRECT' if self.direct else 'buffered'} jobs={self.jobs}")


@dataclass
class TestResult:
    """What one probe configuration measured."""

    __test__ = False  # not a pytest test class

    op: str
    write_bytes: int
    direct: bool
    jobs: int
    count: int = 0
    ops_per_s: float | None = None
    duration_s: float | None = None
    warmup_ops: int = 0
    write: LatencySummary | None = None
    sync: LatencySummary | None = None
    total: LatencySummary | None = None
    unsupported: str | None = None

    @classmethod
    def not_run(cls, spec: TestSpec, reason: str) -> TestResult:
        return cls(op=spec.op, write_bytes=spec.write_bytes, direct=spec.direct,
                   jobs=spec.jobs, unsupported=reason)

    @property
    def spec(self) -> TestSpec:
        return TestSpec(self.op, self.write_bytes, self.direct, self.jobs)

    @property
    def tail_note(self) -> str | None:
        """Why this test's p99/p99.9 rest on too few samples (the smallest call count)."""
        counts = [x.count for x in (self.write, self.sync) if x is not None]
        return tail_note(min(counts)) if counts else None

    def to_dict(self) -> dict:
        def s(x: LatencySummary | None):
            if x is None:
                return None
            return {k: round(v, 1) if isinstance(v, float) else v
                    for k, v in x.to_dict().items()}

        return {"op": self.op, "write_bytes": self.write_bytes, "direct": self.direct,
                "jobs": self.jobs, "count": self.count,
                "ops_per_s": round(self.ops_per_s, 3) if self.ops_per_s is not None else None,
                "duration_s": (round(self.duration_s, 6) if self.duration_s is not None
                               else None),
                "warmup_ops": self.warmup_ops, "write": s(self.write), "sync": s(self.sync),
                "total": s(self.total), "unsupported": self.unsupported,
                "tail_note": self.tail_note}


@dataclass
class MeasureResult:
    engine: str
    path: str
    host: str
    date: str
    settings: dict
    facts: dict
    tests: list[TestResult]
    plp_verdict: dict
    warnings: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    engine_version: str | None = None
    version: str = __version__

    def to_dict(self) -> dict:
        return {"tool": "innoflush", "version": self.version, "engine": self.engine,
                "engine_version": self.engine_version, "path": self.path,
                "host": self.host, "date": self.date, "wall_s": round(self.wall_s, 3),
                "settings": self.settings, "facts": self.facts,
                "plp_verdict": self.plp_verdict, "warnings": self.warnings,
                "tests": [t.to_dict() for t in self.tests]}

    def to_profile(self, name: str, title: str | None = None) -> DeviceProfile:
        """This measurement as a device profile (provenance kind "measured")."""
        tests = []
        for t in self.tests:
            if t.unsupported or t.count == 0:
                continue
            notes = []
            if self.engine == "fio" and t.sync is not None:
                notes.append("fio: write and sync measured separately, no total")
            if t.tail_note:  # the profile keeps the figures; it says which are not backed
                notes.append(t.tail_note)
            note = "; ".join(notes)
            tests.append(ProfileTest(op=t.op, write_bytes=t.write_bytes, direct=t.direct,
                                     jobs=t.jobs, ops_per_s=t.ops_per_s, write=t.write,
                                     sync=t.sync, total=t.total, source="measured",
                                     note=note))
        if not tests:
            raise UsageError("nothing was measured, so there is no profile to save")
        device = dict(self.facts)
        device["class"] = device_class(self.facts)
        if title is None:
            disks = self.facts.get("disks") or []
            what = ", ".join(d.get("model") or d.get("name") or "?" for d in disks) \
                or (self.facts.get("fs_type") or "storage")
            title = f"Measured: {what} ({self.facts.get('fs_type') or '?'}) at " \
                    f"{self.path} on {self.host}"
        provenance = {"kind": "measured", "host": self.host, "path": self.path,
                      "date": self.date, "tool": f"innoflush {self.version}",
                      "engine": self.engine}
        if self.engine_version:
            provenance["engine_version"] = self.engine_version
        provenance["settings"] = self.settings
        return DeviceProfile(name=name, title=title, provenance=provenance, device=device,
                             tests=tests, plp_verdict=self.plp_verdict)
