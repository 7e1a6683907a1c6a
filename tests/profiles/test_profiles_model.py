"""The device-profile format: round trip, validation, resolve, and sampling."""

from __future__ import annotations

import copy
import json
import re

import numpy as np
import pytest

from innoflush.errors import ProfileError
from innoflush.profiles import SCHEMA, DeviceProfile, ProfileTest
from innoflush.stats import LatencySummary


def _quantiles(p50_us: float) -> dict:
    return {"count": 1000, "mean_ns": p50_us * 1100, "min_ns": p50_us * 500,
            "p50_ns": p50_us * 1000, "p90_ns": p50_us * 2000, "p99_ns": p50_us * 5000,
            "p99_9_ns": p50_us * 9000, "max_ns": p50_us * 20000, "shape": "quantiles"}


def valid_dict() -> dict:
    return {
        "schema": SCHEMA,
        "name": "test-dev",
        "title": "A test device",
        "provenance": {"kind": "measured", "tool": "pytest"},
        "device": {"class": "consumer NVMe", "plp": "no", "rotational": False},
        "plp_verdict": {"verdict": "volatile-cache", "o_direct_no_fsync_safe": False,
                        "reasons": ["slow flush"]},
        "tests": [
            {"op": "none", "write_bytes": 16384, "direct": True, "jobs": 1,
             "ops_per_s": 40000.0, "write": _quantiles(25), "source": "measured"},
            {"op": "fsync", "write_bytes": 16384, "direct": True, "jobs": 1,
             "ops_per_s": 330.5, "write": _quantiles(30), "sync": _quantiles(2900),
             "source": "measured", "note": "a note"},
            {"op": "none", "write_bytes": 2097152, "direct": True, "jobs": 1,
             "write": {"count": 0, "mean_ns": 2.5e6, "shape": "mean-only"},
             "source": "assumed", "note": "assumed"},
            {"op": "fsync", "write_bytes": 512, "direct": False, "jobs": 1,
             "total": {"count": 1000, "mean_ns": 18e6, "shape": "mean-only"},
             "source": "published"},
        ],
    }


def load(d: dict) -> DeviceProfile:
    return DeviceProfile.from_json(json.dumps(d), "t.json")


# ---- round trip ---------------------------------------------------------------------------
def test_round_trip_is_equal():
    p = load(valid_dict())
    again = DeviceProfile.from_json(p.to_json())
    assert again == p
    assert again.to_json() == p.to_json()
    assert json.loads(p.to_json()) == valid_dict()


def test_round_trip_of_a_built_profile():
    p = DeviceProfile(
        name="built", title="Built", provenance={"kind": "derived"},
        tests=[ProfileTest(op="fdatasync", write_bytes=4096, direct=True, jobs=4,
                           sync=LatencySummary.from_samples(np.arange(1, 1001) * 1000.0))])
    assert DeviceProfile.from_json(p.to_json()) == p


# ---- validation ---------------------------------------------------------------------------
def _mutate(path, value):
    d = valid_dict()
    target = d
    for k in path[:-1]:
        target = target[k]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return d


BAD = [
    ("wrong schema", _mutate(["schema"], "innoflush.device-profile/9"), "unknown schema"),
    ("bad name", _mutate(["name"], "Bad Name!"), "name must match"),
    ("no provenance kind", _mutate(["provenance"], {"kind": "guessed"}), "provenance.kind"),
    ("negative mean", _mutate(["tests", 0, "write", "mean_ns"], -5),
     "mean_ns must be a finite number >= 0"),
    ("negative quantile", _mutate(["tests", 2, "write"], {"mean_ns": 5, "p50_ns": -3}),
     "p50_ns must be a finite number >= 0"),
    ("NaN quantile", _mutate(["tests", 0, "write", "p90_ns"], float("nan")),
     "p90_ns must be a finite number >= 0"),
    ("decreasing quantiles", _mutate(["tests", 0, "write", "p99_ns"], 1.0),
     "quantiles must not decrease (p99_ns)"),
    ("unknown test key", _mutate(["tests", 0, "colour"], "red"), "unknown keys ['colour']"),
    ("unknown summary key", _mutate(["tests", 0, "write", "p42_ns"], 3),
     "unknown keys ['p42_ns']"),
    ("unknown top-level key", _mutate(["tset"], []), "unknown keys ['tset']"),
    ("bad op", _mutate(["tests", 0, "op"], "sync"), "op must be one of"),
    ("bad direct", _mutate(["tests", 0, "direct"], "yes"), "direct must be true or false"),
    ("zero size", _mutate(["tests", 0, "write_bytes"], 0), "must be positive"),
    ("no distribution", _mutate(["tests", 0, "write"], KeyError), "no write, sync or total"),
    ("count not int", _mutate(["tests", 0, "write", "count"], "many"), "count is not an integer"),
    ("ops_per_s not number", _mutate(["tests", 0, "ops_per_s"], "fast"),
     "ops_per_s is not a number"),
    ("bad shape", _mutate(["tests", 2, "write", "shape"], "bell"), "unknown shape"),
    ("quantiles without p50", _mutate(["tests", 0, "write"], {"mean_ns": 5, "p90_ns": 9}),
     "needs at least p50_ns"),
    ("empty tests", _mutate(["tests"], []), "tests must be a non-empty list"),
    ("device not object", _mutate(["device"], "nvme"), "device must be an object"),
    ("verdict not object", _mutate(["plp_verdict"], "safe"), "plp_verdict must be an object"),
]


@pytest.mark.parametrize("label,data,message", BAD, ids=[b[0] for b in BAD])
def test_invalid_profile_names_the_problem(label, data, message):
    with pytest.raises(ProfileError) as err:
        load(data)
    assert message in str(err.value)
    assert "t.json" in str(err.value)


def test_duplicate_test_is_refused():
    d = valid_dict()
    d["tests"].append(copy.deepcopy(d["tests"][1]))
    with pytest.raises(ProfileError, match="duplicate test"):
        load(d)


def test_not_json_is_refused():
    with pytest.raises(ProfileError, match="not valid JSON"):
        DeviceProfile.from_json("{ not json", "bad.json")


def test_json_that_is_not_an_object_is_refused():
    with pytest.raises(ProfileError, match="not a JSON object"):
        DeviceProfile.from_json("[1, 2]", "list.json")


def test_load_missing_file(tmp_path):
    with pytest.raises(ProfileError, match="no such file"):
        DeviceProfile.load(tmp_path / "nope.json")


def test_load_binary_file(tmp_path):
    f = tmp_path / "bin.json"
    f.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ProfileError, match="cannot read"):
        DeviceProfile.load(f)


# ---- resolve --------------------------------------------------------------------------------
def test_resolve_exact_match_has_no_note():
    p = load(valid_dict())
    s, note = p.resolve("sync", "fsync", 16384, True)
    assert s.p50_ns == 2900 * 1000
    assert note == ""


def test_resolve_fdatasync_falls_back_to_fsync_with_a_note():
    s, note = load(valid_dict()).resolve("sync", "fdatasync", 16384, True)
    assert s.p50_ns == 2900 * 1000
    assert "fsync used" in note


def test_resolve_write_larger_than_measured_is_scaled():
    d = valid_dict()
    del d["tests"][2]  # no 2M write
    s, note = load(d).resolve("write", "none", 4 * 16384, True)
    assert s.p50_ns == pytest.approx(4 * 25000)
    assert "scaled" in note


def test_resolve_interpolates_between_sizes():
    s, note = load(valid_dict()).resolve("write", "none", (16384 + 2097152) // 2, True)
    assert s.shape == "mean-only"  # one side is mean-only
    assert 25000 < s.mean_ns < 2.5e6
    assert note == ""


def test_resolve_sync_uses_total_when_only_total_exists():
    d = valid_dict()
    d["tests"] = [d["tests"][3]]
    s, note = load(d).resolve("sync", "fsync", 16384, True)
    assert s.mean_ns == 18e6
    assert "write+sync" in note and "O_DIRECT not in profile" in note and "512 B" in note


def test_resolve_nothing_raises_profile_error():
    d = valid_dict()
    d["tests"] = [d["tests"][0]]
    with pytest.raises(ProfileError, match="no sync latency"):
        load(d).resolve("sync", "fsync", 16384, True)


# ---- sampling -------------------------------------------------------------------------------
def test_quantile_samples_have_median_near_p50_and_stay_in_range():
    s = LatencySummary.from_dict(_quantiles(100))
    x = s.sample(np.random.default_rng(1), 200_000)
    assert np.median(x) == pytest.approx(s.p50_ns, rel=0.02)
    assert x.min() >= s.min_ns
    assert x.max() <= s.max_ns
    assert np.quantile(x, 0.9) == pytest.approx(s.p90_ns, rel=0.03)


def test_quantile_samples_without_min_and_max_stay_positive():
    s = LatencySummary.from_dict({"mean_ns": 10, "p50_ns": 10, "p99_ns": 50})
    x = s.sample(np.random.default_rng(2), 50_000)
    assert x.min() >= 5 and x.max() <= 75
    assert np.median(x) == pytest.approx(10, rel=0.05)


def test_mean_only_samples_have_mean_near_mean():
    s = LatencySummary.mean_only(18e6, 1000)
    x = s.sample(np.random.default_rng(3), 200_000)
    assert x.mean() == pytest.approx(18e6, rel=0.01)
    assert (x > 0).all()


def test_mean_only_zero_samples_zero():
    x = LatencySummary.mean_only(0).sample(np.random.default_rng(4), 10)
    assert (x == 0).all()


def test_from_samples_summary():
    s = LatencySummary.from_samples([1, 2, 3, 4, 100])
    assert (s.count, s.min_ns, s.p50_ns, s.max_ns) == (5, 1, 3, 100)
    assert s.mean_ns == 22
    assert s.median_ns == 3
    assert LatencySummary.mean_only(7).median_ns == 7


def test_resolve_prefers_the_mode_for_writes_and_the_operation_for_syncs():
    from innoflush.profiles import DeviceProfile, ProfileTest
    from innoflush.stats import LatencySummary as L

    def d(ns):
        return L.mean_only(ns)

    p = DeviceProfile("t", "t", {"kind": "derived"}, {}, [
        ProfileTest("none", 16384, True, write=d(20e3)),
        ProfileTest("fsync", 16384, False, write=d(3e3), sync=d(900e3)),
        ProfileTest("fdatasync", 16384, True, write=d(20e3), sync=d(400e3)),
    ])
    # a buffered write: the buffered fsync test's write (a memory copy), not O_DIRECT's
    w, note = p.resolve("write", "none", 16384, direct=False)
    assert w.mean_ns == 3e3 and "fsync used" in note
    # a buffered fdatasync: the O_DIRECT fdatasync, not the buffered fsync
    s, note = p.resolve("sync", "fdatasync", 16384, direct=False)
    assert s.mean_ns == 400e3 and "other mode" in note


def _one_figure(test: int, component: str, key: str, value) -> dict:
    d = valid_dict()
    d["tests"][test][component][key] = value
    if key != "mean_ns":      # the quantiles stay in order around the changed one
        for k in ("min_ns", "p50_ns", "p90_ns", "p99_ns", "p99_9_ns", "max_ns"):
            if k in d["tests"][test][component]:
                d["tests"][test][component][k] = value
    return d


@pytest.mark.parametrize("key, value, message", [
    ("mean_ns", 0, "tests[1].sync.mean_ns is 0 ns; it must be > 0 and <= 6e+10 ns (60 s)"),
    ("mean_ns", 1e300, "tests[1].sync.mean_ns is 1e+300 ns"),
    ("p50_ns", 0.0, "tests[1].sync.min_ns is 0 ns"),        # the first figure out of range
    ("max_ns", 61e9, "tests[1].sync.min_ns is 6.1e+10 ns"),
    ("mean_ns", 60e9 + 1, "mean_ns is 6e+10 ns"),
])
def test_latency_out_of_range_named_with_its_value_and_range(key, value, message):
    with pytest.raises(ProfileError, match=re.escape(message)):
        DeviceProfile.from_dict(_one_figure(1, "sync", key, value), "p")


def test_latency_range_bounds_are_inclusive_at_60_s():
    assert DeviceProfile.from_dict(_one_figure(1, "sync", "max_ns", 60e9), "p")
    assert DeviceProfile.from_dict(_one_figure(1, "sync", "mean_ns", 60e9), "p")


@pytest.mark.parametrize("key, value, message", [
    ("ops_per_s", 0, "tests[0].ops_per_s is 0; it must be > 0 and <= 1e+09"),
    ("ops_per_s", 1e300, "tests[0].ops_per_s is 1e+300"),
    ("write_bytes", 2 << 30, "tests[0].write_bytes is 2147483648; it must be <= 1073741824"),
    ("jobs", 5000, "tests[0].jobs is 5000; it must be <= 4096"),
])
def test_test_fields_out_of_range(key, value, message):
    d = valid_dict()
    d["tests"][0][key] = value
    with pytest.raises(ProfileError, match=re.escape(message)):
        DeviceProfile.from_dict(d, "p")
