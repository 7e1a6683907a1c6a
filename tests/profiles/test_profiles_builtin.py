"""The built-in profiles: they load, resolve what the simulator asks, say where every
figure came from, and are exactly what scripts/build_builtin_profiles.py produces."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from innoflush.profiles import builtin_names, load_profile
from innoflush.profiles.store import load_builtin

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "build_builtin_profiles.py"
BUILTIN_DIR = REPO / "innoflush" / "profiles" / "builtin"
REFERENCE_CSV = REPO / "reference" / "published_sync_latency.csv"

NAMES = builtin_names()
K16, M2 = 16384, 2097152
# What the simulator resolves on every device profile (component, op, size).
SIMULATOR_NEEDS = [
    ("write", "none", K16), ("write", "none", M2),
    ("sync", "fsync", K16), ("sync", "fsync", M2),
    ("sync", "fdatasync", K16), ("sync", "fdatasync", M2),
]


def _generator():
    spec = importlib.util.spec_from_file_location("build_builtin_profiles", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, mod)  # dataclasses look their module up there
    spec.loader.exec_module(sys.modules[spec.name])
    return sys.modules[spec.name]


def test_there_are_builtin_profiles():
    assert len(NAMES) >= 30
    for must in ("samsung-990-pro", "crucial-t500", "intel-d7-p5520", "samsung-pm9a3",
                 "gcp-local-nvme-ext4", "gcp-local-nvme-xfs", "gcp-hyperdisk-balanced-ext4",
                 "gcp-hyperdisk-balanced-xfs", "hdd-wd2502abys", "intel-pc3700",
                 "dell-perc-bbu", "optane-p4800x"):
        assert must in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_builtin_loads_and_resolves_what_the_simulator_needs(name):
    p = load_builtin(name)
    assert p.name == name
    for component, op, size in SIMULATOR_NEEDS:
        summary, _note = p.resolve(component, op, size, True)
        assert summary.mean_ns > 0, (component, op, size)


@pytest.mark.parametrize("name", NAMES)
def test_builtin_is_honest_about_its_sources(name):
    p = load_builtin(name)
    prov = p.provenance
    assert prov["kind"] == "published"
    assert prov["source"] and prov["method"] and prov["published"]
    assert prov["what_was_published"] in ("mean only", "percentiles")
    for key in ("class", "model", "plp", "plp_note", "filesystem", "raid", "host",
                "rotational"):
        assert key in p.device
    assert p.device["plp"] in ("yes", "no", "unknown", "claimed")
    assert p.device["rotational"] in (True, False, None)
    v = p.plp_verdict
    assert v["verdict"] in ("non-volatile-cache-or-flush-ignored", "volatile-cache",
                            "write-through", "unknown")
    assert v["o_direct_no_fsync_safe"] in (True, False, None)
    assert v["reasons"] and all(isinstance(r, str) and r for r in v["reasons"])
    assert any(t.source == "published" for t in p.tests)
    for t in p.tests:
        assert t.source in ("published", "assumed")
        assert t.note, f"{name}: test {t.key} has no note"
        if t.source == "assumed":
            assert t.note.startswith("assumed (")
        for c in ("write", "sync", "total"):
            s = t.component(c)
            if s is not None and prov["what_was_published"] == "mean only":
                assert s.shape == "mean-only"


def test_seed_000_profiles_are_fully_published():
    for name in ("samsung-990-pro", "crucial-t500", "intel-d7-p5520", "samsung-pm9a3",
                 "gcp-local-nvme-ext4", "gcp-hyperdisk-balanced-xfs"):
        p = load_builtin(name)
        keys = {(t.op, t.write_bytes) for t in p.tests}
        assert keys == {(op, s) for op in ("none", "fsync", "fdatasync") for s in (K16, M2)}
        assert all(t.source == "published" and t.direct and t.jobs == 1 for t in p.tests)
        for t in p.tests:
            assert t.write is not None
            assert (t.sync is None) == (t.op == "none")
            # the derived write and the published sync add up to the published rate (within
            # the spread of the two runs: latencies are means of per-run figures, ops_per_s
            # the mean rate; the 990 Pro's 2 MB fsync runs are 67 and 114 writes/s)
            total_ns = t.write.mean_ns + (t.sync.mean_ns if t.sync else 0)
            assert total_ns == pytest.approx(1e9 / t.ops_per_s, rel=0.1)


def test_published_figures_as_in_the_seeds():
    def sync_us(name, op, size):
        return load_builtin(name).resolve("sync", op, size, True)[0].mean_ns / 1e3

    assert sync_us("samsung-pm9a3", "fsync", K16) == pytest.approx(1.55)
    assert sync_us("samsung-990-pro", "fsync", K16) == pytest.approx((2974.2 + 2867.3) / 2)
    assert sync_us("samsung-990-pro", "fsync", M2) == pytest.approx((10828.3 + 5396.8) / 2)
    # hetz printed 0.0 for one fdatasync run: not a zero latency
    assert sync_us("intel-d7-p5520", "fdatasync", K16) == pytest.approx(9.8)
    assert sync_us("gcp-hyperdisk-balanced-ext4", "fsync", K16) == pytest.approx(739.35)
    # the 18 ms drive the rest of the project uses
    hdd = load_builtin("hdd-wd2502abys")
    t = hdd.find(next(t.key for t in hdd.tests if t.op == "fsync"))
    assert t.total.mean_ns == 18e6 and t.write_bytes == 512 and t.ops_per_s == 56
    assert sync_us("hdd-wd2502abys", "fsync", K16) == pytest.approx(18000)
    assert sync_us("hdd-wd2502abys", "fdatasync", K16) == pytest.approx(8500)
    assert sync_us("samsung-pm983-dc1500m-raid1", "fsync", 4096) == pytest.approx(25.0)


def test_verdicts_of_well_known_devices():
    def v(name):
        return load_builtin(name).plp_verdict

    assert v("samsung-pm9a3")["verdict"] == "non-volatile-cache-or-flush-ignored"
    assert v("samsung-pm9a3")["o_direct_no_fsync_safe"] is True
    assert v("samsung-990-pro")["verdict"] == "volatile-cache"
    assert v("samsung-990-pro")["o_direct_no_fsync_safe"] is False
    assert v("hdd-wd2502abys")["verdict"] == "volatile-cache"
    assert v("hdd-wd2502abys")["o_direct_no_fsync_safe"] is False
    assert v("dell-perc-bbu")["o_direct_no_fsync_safe"] is True
    assert v("zfs-2x7200-no-slog")["o_direct_no_fsync_safe"] is False
    assert v("gcp-hyperdisk-balanced-ext4")["verdict"] == "unknown"
    assert v("intel-pc3100")["o_direct_no_fsync_safe"] is False


def test_rate_only_2019_figures_are_notes_not_profiles():
    assert "raid-controller-write-cache" not in NAMES
    notes = " ".join(load_builtin("intel-pc3700").provenance["notes"])
    assert "7300/s" in notes and "137.0 µs" in notes
    notes = " ".join(load_builtin("dell-perc-bbu").provenance["notes"])
    assert "23000/s" in notes and "43.5 µs" in notes


def test_load_profile_finds_builtins_by_name():
    assert load_profile("samsung-990-pro").title.startswith("Samsung 990 Pro")


# ---- the generator ---------------------------------------------------------------------------
def test_verdict_function_cases():
    gen = _generator()

    def verdict(**kw):
        base = dict(cls="consumer NVMe", plp="unknown", write_cache="unknown",
                    rotational=False, zfs=False, flush_ignored_quote="", figure_us=50.0,
                    figure_what="fsync")
        base.update(kw)
        v = gen.published_verdict(**base)
        return v["verdict"], v["o_direct_no_fsync_safe"]

    assert verdict(plp="yes", figure_us=1.5) == ("non-volatile-cache-or-flush-ignored", True)
    assert verdict(plp="unknown", figure_us=40) == ("non-volatile-cache-or-flush-ignored", None)
    assert verdict(plp="no", figure_us=40) == ("non-volatile-cache-or-flush-ignored", False)
    assert verdict(plp="no", figure_us=3000) == ("volatile-cache", False)
    assert verdict(plp="claimed", figure_us=890) == ("volatile-cache", False)
    assert verdict(plp="unknown", figure_us=300) == ("unknown", None)
    assert verdict(rotational=True, write_cache="on", figure_us=18000) == ("volatile-cache",
                                                                            False)
    assert verdict(rotational=True, figure_us=18000) == ("unknown", None)
    assert verdict(write_cache="off", figure_us=10000) == ("write-through", True)
    assert verdict(write_cache="battery-backed", figure_us=40)[1] is True
    assert verdict(zfs=True, figure_us=135) == ("volatile-cache", False)
    assert verdict(cls="cloud block storage", figure_us=740, fdatasync_us=47)[0] == "unknown"
    v = gen.published_verdict(cls="consumer NVMe", plp="no", write_cache="on",
                              rotational=False, zfs=False, flush_ignored_quote="",
                              figure_us=2974.2, figure_what="fsync after a 16 KB O_DIRECT write")
    assert "2.97 ms" in v["reasons"][0]


def test_published_and_measured_verdicts_share_thresholds_and_wording():
    """A published figure and a measured one on either side of the same threshold get the
    same verdict, in the same words: one set of thresholds, in innoflush.measure.plp."""
    from innoflush.measure import plp

    gen = _generator()
    assert gen.FAST_FLUSH_US * 1e3 == plp.FAST_FLUSH_NS
    assert gen.SLOW_FLUSH_US * 1e3 == plp.SLOW_FLUSH_NS
    kw = dict(cls="consumer NVMe", plp="unknown", write_cache="unknown", rotational=False,
              zfs=False, flush_ignored_quote="", figure_what="fsync")
    flash = {"disks": [{"name": "nvme0n1", "rotational": False, "write_cache": "write back"}]}
    for us, expected in ((plp.FAST_FLUSH_NS / 1e3 - 1, plp.NON_VOLATILE),
                         (plp.SLOW_FLUSH_NS / 1e3 + 1, plp.VOLATILE)):
        published = gen.published_verdict(figure_us=us, **kw)
        measured = plp.plp_verdict(flash, us * 1e3, us * 1e3)
        assert published["verdict"] == measured["verdict"] == expected, us
    slow_published = gen.published_verdict(figure_us=3000.0, **kw)["reasons"]
    slow_measured = plp.plp_verdict(flash, 3e6, 3e6)["reasons"]
    assert any(plp.PROTECTED_FLUSH in r for r in slow_published)
    assert any(plp.PROTECTED_FLUSH in r for r in slow_measured)
    for name in NAMES:
        assert load_builtin(name).plp_verdict["verdict"] in plp.VERDICTS, name


def test_assumptions_table_has_a_basis_for_every_row():
    gen = _generator()
    for key, a in gen.ASSUMPTIONS.items():
        assert a.basis_16k and a.basis_2m, key
        assert 0 < a.write_16k_us < a.write_2m_us, key
    used = {d.assume for d in gen.DEVICES if d.assume}
    assert used <= set(gen.ASSUMPTIONS)


def test_generator_is_reproducible(tmp_path):
    assert REFERENCE_CSV.is_file(), f"{REFERENCE_CSV} is part of the repository"
    out = tmp_path / "builtin"
    res = subprocess.run([sys.executable, str(SCRIPT), str(REFERENCE_CSV), "--out", str(out)],
                         capture_output=True, text=True, cwd=tmp_path, check=False)
    assert res.returncode == 0, res.stderr
    made = sorted(p.name for p in out.glob("*.json"))
    committed = sorted(p.name for p in BUILTIN_DIR.glob("*.json"))
    assert made == committed
    for name in made:
        assert (out / name).read_bytes() == (BUILTIN_DIR / name).read_bytes(), name


def test_generator_refuses_a_missing_csv(tmp_path):
    res = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "none.csv"), "--out",
                          str(tmp_path / "out")], capture_output=True, text=True, check=False)
    assert res.returncode == 2
    assert "no such file" in res.stderr
    assert not (tmp_path / "out").exists()
