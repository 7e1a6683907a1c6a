"""DeviceProfile: what a storage device does for writes and syncs, as distributions.

A profile is a list of *tests*, each the result of one probe configuration
(operation, write size, O_DIRECT or not, concurrent jobs) with up to three latency
distributions: ``write`` (the write call), ``sync`` (the fsync/fdatasync call after it)
and ``total`` (write + sync as one figure, which is all some published sources give).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import ProfileError
from ..jsonfile import parse_json, read_json
from ..stats import QUANTILE_FIELDS, SHAPE_MEAN_ONLY, LatencySummary

SCHEMA = "innoflush.device-profile/1"
OPS = ("none", "fsync", "fdatasync", "dsync")
COMPONENTS = ("write", "sync", "total")
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,79}$")
PROVENANCE_KINDS = ("published", "measured", "derived")
TOP_KEYS = {"schema", "name", "title", "provenance", "device", "plp_verdict", "tests"}

# Sane bounds for what a profile may say, so that a typo (1e300 ns, 0 ns) is refused where
# the profile is read instead of turning into a 900-column table or a division by zero.
# A minute per write or sync is far beyond any device a database runs on (a stalled HDD
# takes a few seconds), yet leaves room for the worst outlier a measurement can record.
MAX_LATENCY_NS = 60e9
MAX_OPS_PER_S = 1e9          # one completed write or sync per nanosecond
MAX_WRITE_BYTES = 1 << 30    # 1 GiB in one write call
MAX_JOBS = 4096


@dataclass(frozen=True)
class TestKey:
    __test__ = False  # not a pytest test class
    op: str
    write_bytes: int
    direct: bool
    jobs: int = 1


@dataclass
class ProfileTest:
    """One probe configuration and what it measured."""

    __test__ = False  # not a pytest test class

    op: str
    write_bytes: int
    direct: bool
    jobs: int = 1
    ops_per_s: float | None = None
    write: LatencySummary | None = None
    sync: LatencySummary | None = None
    total: LatencySummary | None = None
    # "measured", "published", or "assumed" (a stated gap-filler, never silent)
    source: str = "measured"
    note: str = ""

    @property
    def key(self) -> TestKey:
        return TestKey(self.op, self.write_bytes, self.direct, self.jobs)

    def component(self, name: str) -> LatencySummary | None:
        return getattr(self, name)

    def to_dict(self) -> dict:
        d: dict = {"op": self.op, "write_bytes": self.write_bytes, "direct": self.direct,
                   "jobs": self.jobs}
        if self.ops_per_s is not None:
            d["ops_per_s"] = round(self.ops_per_s, 3)
        for c in COMPONENTS:
            s = self.component(c)
            if s is not None:
                d[c] = s.to_dict()
        d["source"] = self.source
        if self.note:
            d["note"] = self.note
        return d

    @classmethod
    def from_dict(cls, d: dict, where: str) -> ProfileTest:
        if not isinstance(d, dict):
            raise ProfileError(f"{where}: expected an object")
        known = {"op", "write_bytes", "direct", "jobs", "ops_per_s", "source", "note",
                 *COMPONENTS}
        unknown = set(d) - known
        if unknown:
            raise ProfileError(f"{where}: unknown keys {sorted(unknown)}")
        op = d.get("op")
        if op not in OPS:
            raise ProfileError(f"{where}: op must be one of {', '.join(OPS)}, got {op!r}")
        try:
            size = int(d["write_bytes"])
            jobs = int(d.get("jobs", 1))
        except KeyError:
            raise ProfileError(f"{where}: missing write_bytes") from None
        except (TypeError, ValueError):
            raise ProfileError(f"{where}: write_bytes and jobs must be integers") from None
        if size <= 0 or jobs <= 0:
            raise ProfileError(f"{where}: write_bytes and jobs must be positive")
        if size > MAX_WRITE_BYTES:
            raise ProfileError(f"{where}.write_bytes is {size}; it must be <= {MAX_WRITE_BYTES}")
        if jobs > MAX_JOBS:
            raise ProfileError(f"{where}.jobs is {jobs}; it must be <= {MAX_JOBS}")
        if not isinstance(d.get("direct"), bool):
            raise ProfileError(f"{where}: direct must be true or false")
        comps = {c: LatencySummary.from_dict(d[c], f"{where}.{c}") for c in COMPONENTS if c in d}
        if not comps:
            raise ProfileError(f"{where}: no write, sync or total distribution")
        for c, summary in comps.items():
            _check_latency_range(summary, f"{where}.{c}")
        ops = d.get("ops_per_s")
        if ops is not None:
            try:
                ops = float(ops)
            except (TypeError, ValueError):
                raise ProfileError(f"{where}: ops_per_s is not a number") from None
            if not (math.isfinite(ops) and 0 < ops <= MAX_OPS_PER_S):
                raise ProfileError(f"{where}.ops_per_s is {ops:.4g}; it must be > 0 and "
                                   f"<= {MAX_OPS_PER_S:.0e}")
        return cls(op=op, write_bytes=size, direct=d["direct"], jobs=jobs, ops_per_s=ops,
                   source=str(d.get("source", "measured")), note=str(d.get("note", "")),
                   **comps)


@dataclass
class DeviceProfile:
    name: str
    title: str
    provenance: dict
    device: dict = field(default_factory=dict)
    tests: list[ProfileTest] = field(default_factory=list)
    plp_verdict: dict | None = None

    def scaled(self, factor: float, note: str) -> DeviceProfile:
        """The same device with every latency multiplied by factor (the device as a
        server sees it now, when that differs from when it was measured); note says why."""
        tests = []
        for t in self.tests:
            def s(x: LatencySummary | None) -> LatencySummary | None:
                return x.scaled(factor) if x is not None else None
            ops = t.ops_per_s / factor if t.ops_per_s else t.ops_per_s
            tests.append(replace(t, ops_per_s=ops, write=s(t.write), sync=s(t.sync),
                                 total=s(t.total)))
        prov = {**self.provenance, "scaled": {"factor": round(factor, 4), "note": note}}
        return replace(self, title=f"{self.title} (latencies x{factor:.2f})", provenance=prov,
                       tests=tests)

    # ---- lookup -------------------------------------------------------------------
    def find(self, key: TestKey) -> ProfileTest | None:
        for t in self.tests:
            if t.key == key:
                return t
        return None

    def resolve(self, component: str, op: str, write_bytes: int, direct: bool = True,
                jobs: int = 1) -> tuple[LatencySummary, str]:
        """The distribution to use for a component, and a note on any substitution.

        Exact match first; then the same figure from a nearby configuration, in an order
        chosen so that the substitute errs the way a DBA would accept (fsync stands in for
        a missing fdatasync, never the other way round silently). Raises ProfileError
        when nothing in the profile can stand in.
        """
        notes: list[str] = []
        ops = [op]
        if component == "write" and op != "none":
            ops.append("none")
        if component == "write" and op == "none":
            ops += ["fsync", "fdatasync"]
        if component == "sync" and op == "fdatasync":
            ops.append("fsync")
        if component == "sync" and op == "fsync":
            ops.append("fdatasync")
        # For a sync the operation matters more than the O_DIRECT mode; for a write the
        # mode matters more (a buffered write is a memory copy, an O_DIRECT one a device
        # write), so that is the order each is searched in.
        if component == "write":
            order = [(o, d) for d in (direct, not direct) for o in ops]
        else:
            order = [(o, d) for o in ops for d in (direct, not direct)]
        for op_try, direct_try in order:
            for comp_try in ((component, "total") if component == "sync" else (component,)):
                got = self._by_size(comp_try, op_try, write_bytes, direct_try, jobs)
                if got is None:
                    continue
                summary, size_note = got
                if op_try != op:
                    notes.append(f"{_timed(op, component)} not in profile, "
                                 f"{_timed(op_try, component)} used")
                if comp_try != component:
                    notes.append(f"{op_try} sync published only with its write "
                                 "(write+sync), used as the sync cost")
                if direct_try != direct:
                    notes.append(("O_DIRECT" if direct else "buffered")
                                 + " not in profile, the other mode used")
                if size_note:
                    notes.append(size_note)
                return summary, "; ".join(notes)
        raise ProfileError(f"profile {self.name!r} has no {component} latency for "
                           f"{op} (or a stand-in)")

    def _by_size(self, component: str, op: str, size: int, direct: bool,
                 jobs: int) -> tuple[LatencySummary, str] | None:
        cands = [t for t in self.tests if t.op == op and t.direct == direct
                 and t.component(component) is not None]
        if not cands:
            return None
        # prefer the requested concurrency, else the nearest job count
        best_jobs = min({t.jobs for t in cands}, key=lambda j: (abs(j - jobs), j))
        by_size = sorted((t.write_bytes, c) for t in cands
                         if t.jobs == best_jobs and (c := t.component(component)) is not None)
        sizes = [s for s, _ in by_size]
        if size in sizes:
            return by_size[sizes.index(size)][1], ""
        if size < sizes[0]:
            return by_size[0][1], f"{size} B {component} taken from {sizes[0]} B"
        if size > sizes[-1]:
            s0, d0 = by_size[-1]
            if component == "write":
                # bandwidth-bound beyond the largest measured size
                return d0.scaled(size / s0), f"{size} B write scaled from {s0} B"
            return d0, f"{size} B {component} taken from {s0} B"
        for (s_lo, d_lo), (s_hi, d_hi) in zip(by_size, by_size[1:], strict=False):
            if s_lo < size < s_hi:
                t = (size - s_lo) / (s_hi - s_lo)
                return _interpolate(d_lo, d_hi, t), ""
        return None  # unreachable: sizes are sorted and size is inside the range

    # ---- serialisation ----------------------------------------------------------------
    def to_dict(self) -> dict:
        d = {"schema": SCHEMA, "name": self.name, "title": self.title,
             "provenance": self.provenance, "device": self.device}
        if self.plp_verdict is not None:
            d["plp_verdict"] = self.plp_verdict
        d["tests"] = [t.to_dict() for t in self.tests]
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False) + "\n"

    @classmethod
    def from_dict(cls, d: dict, where: str = "profile") -> DeviceProfile:
        if not isinstance(d, dict):
            raise ProfileError(f"{where}: not a JSON object")
        unknown = set(d) - TOP_KEYS
        if unknown:
            raise ProfileError(f"{where}: unknown keys {sorted(unknown)}")
        schema = d.get("schema")
        if schema != SCHEMA:
            raise ProfileError(f"{where}: unknown schema {schema!r} (expected {SCHEMA!r})")
        name = d.get("name")
        if not isinstance(name, str) or not NAME_RE.match(name):
            raise ProfileError(f"{where}: name must match {NAME_RE.pattern}, got {name!r}")
        prov = d.get("provenance")
        if not isinstance(prov, dict) or prov.get("kind") not in PROVENANCE_KINDS:
            raise ProfileError(f"{where}: provenance.kind must be one of "
                               f"{', '.join(PROVENANCE_KINDS)}")
        tests_raw = d.get("tests")
        if not isinstance(tests_raw, list) or not tests_raw:
            raise ProfileError(f"{where}: tests must be a non-empty list")
        tests = [ProfileTest.from_dict(t, f"{where}.tests[{i}]") for i, t in enumerate(tests_raw)]
        seen: set[TestKey] = set()
        for t in tests:
            if t.key in seen:
                raise ProfileError(f"{where}: duplicate test {t.key}")
            seen.add(t.key)
        device = d.get("device", {})
        if not isinstance(device, dict):
            raise ProfileError(f"{where}: device must be an object")
        if d.get("plp_verdict") is not None and not isinstance(d["plp_verdict"], dict):
            raise ProfileError(f"{where}: plp_verdict must be an object")
        return cls(name=name, title=str(d.get("title", name)), provenance=prov, device=device,
                   tests=tests, plp_verdict=d.get("plp_verdict"))

    @classmethod
    def from_json(cls, text: str, where: str = "profile") -> DeviceProfile:
        return cls.from_dict(parse_json(text, where), where)

    @classmethod
    def load(cls, path: str | Path) -> DeviceProfile:
        return cls.from_dict(read_json(path), str(path))


def _check_latency_range(summary: LatencySummary, where: str) -> None:
    """Every figure of a write, sync or total distribution in (0, MAX_LATENCY_NS].

    LatencySummary.from_dict has checked that they are finite, >= 0 and that the
    quantiles do not decrease; a device profile also needs them above zero (the
    simulator divides by them) and below a bound no real device reaches.
    """
    for name in ("mean_ns", *(q for q, _p in QUANTILE_FIELDS)):
        value = getattr(summary, name)
        if value is not None and not 0 < value <= MAX_LATENCY_NS:
            raise ProfileError(f"{where}.{name} is {value:.4g} ns; it must be > 0 and "
                               f"<= {MAX_LATENCY_NS:.0e} ns ({MAX_LATENCY_NS / 1e9:.0f} s)")


def _interpolate(a: LatencySummary, b: LatencySummary, t: float) -> LatencySummary:
    """Quantile-wise linear interpolation between two distributions (t in [0, 1])."""
    def mix(x: float | None, y: float | None) -> float | None:
        if x is None or y is None:
            return None
        return x + (y - x) * t

    mean_ns = a.mean_ns + (b.mean_ns - a.mean_ns) * t   # every summary has a mean
    if a.shape == SHAPE_MEAN_ONLY or b.shape == SHAPE_MEAN_ONLY:
        return LatencySummary.mean_only(mean_ns)
    return LatencySummary(
        count=0, mean_ns=mean_ns, min_ns=mix(a.min_ns, b.min_ns),
        p50_ns=mix(a.p50_ns, b.p50_ns), p90_ns=mix(a.p90_ns, b.p90_ns),
        p99_ns=mix(a.p99_ns, b.p99_ns), p99_9_ns=mix(a.p99_9_ns, b.p99_9_ns),
        max_ns=mix(a.max_ns, b.max_ns))


def _timed(op: str, component: str) -> str:
    """What a test times, in words: its op alone names a sync, not a write ("none write"
    read as nothing written)."""
    if component != "write":
        return op
    return "a write with no sync" if op == "none" else f"the write before {op}"
