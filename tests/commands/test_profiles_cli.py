"""`innoflush profiles ...` through the real top-level command group."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main
from innoflush.profiles import builtin_names
from innoflush.profiles.store import load_builtin


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("INNOFLUSH_HOME", str(tmp_path / "ih"))
    return tmp_path / "ih"


def run(*args):
    return CliRunner().invoke(main, ["profiles", *args])


def ok(*args):
    res = run(*args)
    assert res.exit_code == 0, (res.output, res.exception)
    return res


def fails(*args, message: str):
    res = run(*args)
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("innoflush: error: ")
    assert message in res.stderr
    assert "Traceback" not in res.output
    return res


# ---- list -----------------------------------------------------------------------------------
def test_list_table(home):
    out = ok("list", "--wide").stdout   # --wide: the class column
    for name in builtin_names():
        assert name in out
    line = next(ln for ln in out.splitlines() if ln.startswith("samsung-pm9a3 "))
    assert "enterprise NVMe" in line and "1.55*" in line and "0.70*" in line
    line = next(ln for ln in out.splitlines() if ln.startswith("hdd-wd2502abys "))
    assert "18,000*†" in line and "8,500*†" in line
    assert "mean only" in out and "store" not in out.splitlines()[0]


def test_list_json(home):
    data = json.loads(ok("list", "--json").stdout)
    by = {e["name"]: e for e in data}
    assert set(by) == set(builtin_names())
    e = by["samsung-990-pro"]
    assert e["class"] == "consumer NVMe" and e["plp"] == "no" and e["origin"] == "built-in"
    assert e["fsync_16k"]["stat"] == "mean" and e["fsync_16k"]["mean_only"] is True
    assert e["fsync_16k"]["us"] == pytest.approx(2920.75)
    assert e["fsync_16k"]["stood_in"] is False
    h = by["hdd-wd2502abys"]["fsync_16k"]
    assert h["us"] == 18000 and h["stood_in"] and "512 B" in h["note"]
    assert by["samsung-990-pro"]["source"] == "published"


def test_list_marks_user_profiles_and_shadowing(home, tmp_path):
    p = load_builtin("samsung-990-pro")
    p.provenance = {"kind": "measured"}
    f = tmp_path / "p.json"
    f.write_text(p.to_json())
    ok("import", str(f))
    ok("import", str(f), "--name", "my-disk")
    out = ok("list").stdout
    assert out.splitlines()[0].rstrip().endswith("store")
    assert "user (shadows built-in)" in out
    data = {e["name"]: e for e in json.loads(ok("list", "--json").stdout)}
    assert data["samsung-990-pro"]["origin"] == "user"
    assert data["samsung-990-pro"]["shadows_builtin"] is True
    assert data["samsung-990-pro"]["source"] == "measured"
    assert data["my-disk"]["shadows_builtin"] is False
    assert data["samsung-pm9a3"]["origin"] == "built-in"


def test_list_skips_a_broken_user_profile_with_a_warning(home):
    (home / "profiles").mkdir(parents=True)
    (home / "profiles" / "broken.json").write_text("{")
    res = ok("list")
    assert "broken" not in res.stdout
    assert "warning: skipping user profile" in res.stderr


# ---- show -----------------------------------------------------------------------------------
def test_show_table(home):
    out = ok("show", "samsung-990-pro", "--wide").stdout   # --wide: the p99.9 column
    assert out.startswith("samsung-990-pro: ")
    for text in ("Provenance", "2026-01-08", "Device", "consumer NVMe",
                 "PLP verdict: volatile-cache (O_DIRECT without fsync safe: no)",
                 "p99.9", "2,921*", "mean only", "Notes", "[1]"):
        assert text in out, text


def test_show_assumed_tests_are_marked(home):
    out = ok("show", "hdd-wd2502abys").stdout
    assert "assumed" in out and "18,000*" in out and "write-cache experiment" in out


def test_show_json_is_the_profile(home):
    data = json.loads(ok("show", "samsung-pm9a3", "--json").stdout)
    assert data == load_builtin("samsung-pm9a3").to_dict()


def test_show_a_file_with_quantiles(home, tmp_path):
    p = load_builtin("samsung-pm9a3")
    d = p.to_dict()
    d["name"] = "measured-one"
    d["provenance"] = {"kind": "measured"}
    d["tests"][0]["write"] = {"count": 1000, "mean_ns": 21000, "min_ns": 15000,
                              "p50_ns": 20000, "p90_ns": 25000, "p99_ns": 40000,
                              "p99_9_ns": 90000, "max_ns": 200000}
    f = tmp_path / "m.json"
    f.write_text(json.dumps(d))
    out = ok("show", str(f), "--wide").stdout   # --wide: p90, p99.9 and max
    row = next(ln for ln in out.splitlines() if "none 16k O_DIRECT" in ln)
    for v in ("1,000", "21.0", "20.0", "25.0", "40.0", "90.0", "200"):
        assert v in row
    assert "*" not in row


def test_show_unknown_name(home):
    fails("show", "no-such-disk", message="unknown profile 'no-such-disk'")


def test_show_invalid_file(home, tmp_path):
    f = tmp_path / "bad.json"
    f.write_text('{"schema": "something-else"}')
    fails("show", str(f), message="unknown schema")


# ---- compare --------------------------------------------------------------------------------
def test_compare_table(home):
    out = ok("compare", "samsung-990-pro", "samsung-pm9a3", "hdd-wd2502abys").stdout
    assert out.splitlines()[0] == "latency per operation, µs (p50, else the mean)"
    header = out.splitlines()[2]
    assert header.split() == ["test", "part", "samsung-990-pro", "samsung-pm9a3", "ratio",
                              "hdd-wd2502abys", "ratio"]
    row = next(ln for ln in out.splitlines() if ln.startswith("fsync 16k O_DIRECT"))
    assert "2,921*" in row and "1.55*" in row and "18,000*†" in row
    assert "0.00053×" in row and "6.16×" in row


def test_compare_json(home):
    data = json.loads(ok("compare", "samsung-990-pro", "samsung-pm9a3", "--json").stdout)
    assert data["profiles"] == ["samsung-990-pro", "samsung-pm9a3"]
    row = next(r for r in data["rows"] if (r["op"], r["write_bytes"], r["part"])
               == ("fsync", 16384, "sync"))
    first, second = row["values"]
    assert first["ratio_to_first"] == 1.0
    assert second["figure"]["us"] == pytest.approx(1.55)
    assert second["ratio_to_first"] == pytest.approx(1.55 / 2920.75, rel=1e-3)


def test_compare_needs_a_name(home):
    res = run("compare")
    assert res.exit_code == 2


def test_compare_unknown(home):
    fails("compare", "samsung-990-pro", "nope", message="unknown profile 'nope'")


# ---- import / export ---------------------------------------------------------------------------
def test_export_import_round_trip(home, tmp_path):
    exported = ok("export", "crucial-t500").stdout
    assert exported == load_builtin("crucial-t500").to_json()
    f = tmp_path / "t500.json"
    ok("export", "crucial-t500", "-o", str(f))
    assert f.read_text() == exported
    res = ok("import", str(f), "--name", "my-t500")
    assert "imported my-t500" in res.stdout
    assert json.loads((home / "profiles" / "my-t500.json").read_text())["name"] == "my-t500"
    assert json.loads(ok("show", "my-t500", "--json").stdout)["name"] == "my-t500"


def test_import_builtin_name_warns_about_shadowing(home, tmp_path):
    f = tmp_path / "t500.json"
    f.write_text(load_builtin("crucial-t500").to_json())
    res = ok("import", str(f))
    assert "shadows the built-in" in res.stderr


def test_import_refuses_overwrite_without_force(home, tmp_path):
    f = tmp_path / "t500.json"
    f.write_text(load_builtin("crucial-t500").to_json())
    ok("import", str(f), "--name", "x")
    fails("import", str(f), "--name", "x", message="already exists")
    ok("import", str(f), "--name", "x", "--force")


@pytest.mark.parametrize("content,message", [
    ("not json at all", "not valid JSON"),
    ('{"schema": "innoflush.device-profile/1", "name": "UPPER"}', "name must match"),
])
def test_import_invalid_file(home, tmp_path, content, message):
    f = tmp_path / "bad.json"
    f.write_text(content)
    fails("import", str(f), message=message)
    assert not (home / "profiles").exists()


def test_import_negative_latency(home, tmp_path):
    d = load_builtin("samsung-pm9a3").to_dict()
    d["tests"][0]["write"]["mean_ns"] = -1
    f = tmp_path / "neg.json"
    f.write_text(json.dumps(d))
    fails("import", str(f), message="tests[0].write: mean_ns must be a finite number >= 0")


def test_import_missing_file(home, tmp_path):
    fails("import", str(tmp_path / "missing.json"), message="no such file")


def test_import_bad_new_name(home, tmp_path):
    f = tmp_path / "t500.json"
    f.write_text(load_builtin("crucial-t500").to_json())
    fails("import", str(f), "--name", "Bad Name", message="bad profile name")


def test_export_refuses_to_overwrite(home, tmp_path):
    f = tmp_path / "out.json"
    f.write_text("keep me")
    fails("export", "samsung-pm9a3", "-o", str(f), message="already exists")
    assert f.read_text() == "keep me"
    ok("export", "samsung-pm9a3", "-o", str(f), "--force")
    assert json.loads(f.read_text())["name"] == "samsung-pm9a3"


def test_export_unknown(home):
    fails("export", "nope", message="unknown profile 'nope'")


def test_a_stored_profile_out_of_range_is_skipped_by_list_and_refused_elsewhere(home):
    """A profile saved before the range check (1e300 ns) no longer widens the list to
    hundreds of columns: list warns and skips it, show and simulate refuse it."""
    d = load_builtin("samsung-990-pro").to_dict()
    d["name"] = "old-typo"
    t = next(t for t in d["tests"] if "sync" in t)
    t["sync"]["mean_ns"] = 1e300
    (home / "profiles").mkdir(parents=True)
    (home / "profiles" / "old-typo.json").write_text(json.dumps(d))
    res = ok("list")
    assert "skipping user profile" in res.stderr and "1e+300 ns" in res.stderr
    assert "old-typo" not in res.stdout
    assert max(len(line) for line in res.stdout.splitlines()) < 200
    fails("show", "old-typo", message="mean_ns is 1e+300 ns; it must be > 0")
    r = CliRunner().invoke(main, ["tps", "--profile", "old-typo", "--no-check"])
    assert r.exit_code == 2 and "1e+300 ns" in r.stderr and r.stdout == ""
