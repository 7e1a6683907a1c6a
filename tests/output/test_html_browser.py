"""Each command's --html page, made by a real run of the command, opened in Debian's
headless chromium with the network off (tests/helpers/browser.py): the charts render (an SVG
per chart, the series the data holds, also counted in the SVG itself), the console
stays clean, nothing is fetched, and the screenshot is not blank. The screenshots stay
in each test's tmp_path (kept for failed tests: pyproject's retention policy)."""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main
from innoflush.output.charts.advise_charts import EVIDENCE
from innoflush.output.charts.output import emit
from tests.helpers import browser

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
ROOT_ENV = {"MYSQL_PWD": "", "HOME": "/nonexistent"}


@pytest.fixture(scope="module")
def chromium():
    why = browser.missing()
    if why:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{why} (CI=true: the browser tests are required)", pytrace=False)
        pytest.skip(f"!!! BROWSER TESTS SKIPPED: {why}")
    drv = browser.driver()
    try:
        yield drv
    finally:
        drv.quit()


def run(*args: str, env: dict | None = None) -> dict:
    r = CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
    assert r.exit_code in (0, 3, 4), (r.exit_code, r.stderr)
    return json.loads(r.stdout)


def check_page(drv, page: Path, shot: Path, expected: dict[str, int]) -> dict:
    """Open page, assert what every page must show, and that the charts named in expected
    hold that many series; the browser's findings."""
    text = page.read_text(encoding="utf-8")
    # nothing outside the file: no src/href/url() to another place
    assert not re.search(r'(?:src|href)\s*=\s*["\']?(?:https?:)?//', text)
    assert not re.search(r"url\(\s*['\"]?(?:https?:)?//", text)
    got = browser.open_page(drv, page, shot)
    assert got["console"] == [], got["console"]
    assert [u for u in got["failed"] if not u.startswith("file:")] == []
    for name, n in expected.items():
        chart = got["charts"][name]
        assert chart["svgs"] == 1 and chart["width"] > 300 and chart["height"] > 200, chart
        assert chart["declared"] == chart["found"] == n, (name, chart, n)
    colours, ink = browser.not_blank(shot)
    assert colours > 50 and ink > 0.03, (colours, ink)
    print(f"{page.name}: {page.stat().st_size} bytes, screenshot {shot}")
    return got


def test_measure_page(chromium, tmp_path):
    page, pngs = tmp_path / "measure.html", tmp_path / "png"
    probe = tmp_path / "probe"
    probe.mkdir()
    d = run("measure", str(probe), "--sizes", "16k,256k", "--ops", "none,fsync,dsync",
            "--direct", "both", "--duration", "0.2", "--file-size", "1M", "--json",
            "--html", str(page), "--png", str(pngs))
    ran = [t for t in d["tests"] if not t["unsupported"]]
    expected = {f"latency-cdf-{op}": sum(t["op"] == op for t in ran)
                for op in ("none", "fsync", "dsync")}
    expected["ops-per-s"] = len({t["op"] for t in ran})
    assert expected["latency-cdf-fsync"] >= 2
    got = check_page(chromium, page, tmp_path / "measure.png", expected)
    assert set(got["charts"]) == set(expected)
    assert sorted(p.name for p in pngs.iterdir()) == sorted(f"measure-{c}.png"
                                                            for c in expected)
    text = page.read_text(encoding="utf-8")
    assert f"PLP verdict: {d['plp_verdict']['verdict']}" in text


def test_profiles_compare_page(chromium, tmp_path):
    page = tmp_path / "compare.html"
    names = ["samsung-990-pro", "crucial-m500", "gcp-hyperdisk-balanced-ext4"]
    d = run("profiles", "compare", *names, "--json", "--html", str(page))
    assert d["profiles"] == names
    check_page(chromium, page, tmp_path / "compare.png",
               {"sync-cdf-fsync": 3, "sync-cdf-fdatasync": 3})


def test_simulate_page(chromium, tmp_path):
    page = tmp_path / "simulate.html"
    d = run("simulate", "--profile", "samsung-990-pro", "--flush-method", "O_DIRECT,fsync",
            "--trx-commit", "1,2", "--connections", "1,4", "--duration", "0.5", "--json",
            "--html", str(page))
    settings = {(r["flush_method"], r["trx_commit"], r["sync_binlog"]) for r in d["rows"]}
    kinds = {k for r in d["rows"] for run_ in r["runs"]
             for k, v in run_["syncs_per_s"].items() if v > 0}
    assert len(settings) == 4 and "redo_syncs" in kinds
    check_page(chromium, page, tmp_path / "simulate.png",
               {"tps-vs-connections": len(settings),
                "commit-p99-vs-connections": len(settings), "syncs-by-kind": len(kinds)})


def test_tps_page(chromium, tmp_path):
    page = tmp_path / "tps.html"
    d = run("tps", "--profile", "crucial-m500", "--target-tps", "2000", "--no-check",
            "--json", "--html", str(page))
    reach = [s for s in d["settings"] if s["connections_for_target"]]
    assert reach
    check_page(chromium, page, tmp_path / "tps.png",
               {"tps-per-connection": 1, "connections-for-target": 1})


@pytest.mark.server
def test_advise_page(chromium, tmp_path, volatile_server, insert_load, profile_files):
    page = tmp_path / "advise.html"
    with insert_load(volatile_server, threads=3) as load:
        load.wait_started()
        d = run("advise", "--host", "127.0.0.1", "--port", str(volatile_server.port),
                "--user", "root", "--interval", "2", "--samples", "2", "--profile",
                profile_files["volatile"], "--durability", "relaxed", "--json",
                "--html", str(page), env=ROOT_ENV)
    predicted = [f for f in d["findings"] if f["predicted"]]
    assert predicted, d["warnings"]
    valid = [i for i in d["sampling"]["intervals"] if i["valid"]]
    counters = [c for c in EVIDENCE if any(i["deltas"].get(c) for i in valid)]
    assert len(valid) == 2 and "Innodb_data_fsyncs" in counters
    check_page(chromium, page, tmp_path / "advise.png",
               {"predicted-tps": 2, "predicted-commit-p99": 2,
                "evidence-per-interval": len(counters)})


@pytest.mark.server
def test_lab_run_page(chromium, tmp_path, server_binaries):
    page, data = tmp_path / "lab-run.html", tmp_path / "data"
    data.mkdir()
    d = run("lab", "run", "--backend", "local", "--profile", "samsung-990-pro",
            "--datadir-on", str(data), "--flush-method", "O_DIRECT,O_DIRECT_NO_FSYNC",
            "--trx-commit", "1", "--connections", "2", "--duration", "2",
            "--buffer-pool", "64M", "--no-advise", "--json", "--html", str(page))
    settings = {(r["requested"]["innodb_flush_method"],
                 r["requested"]["innodb_flush_log_at_trx_commit"]) for r in d["runs"]}
    assert len(settings) == 2
    check_page(chromium, page, tmp_path / "lab-run.png",
               {"predicted-vs-measured-tps": 2, "predicted-vs-measured-commit-latency-p99-ms": 2,
                "errors-by-setting": 2})


@pytest.mark.server
@pytest.mark.slow
def test_lab_validate_page(chromium, tmp_path, server_binaries):
    page, data = tmp_path / "lab-validate.html", tmp_path / "data"
    data.mkdir()
    d = run("lab", "validate", "--devices", "local", "--profile", "samsung-990-pro",
            "--connections", "1", "--flush-method", "O_DIRECT,O_DIRECT_NO_FSYNC",
            "--trx-commit", "1", "--duration", "1", "--warmup", "0.2",
            "--calibrate-duration", "1", "--replicates", "1", "--buffer-pool", "64M",
            "--datadir-on", str(data), "--json", "--html", str(page))
    assert [dev["name"] for dev in d["devices"]] == ["local"]
    check_page(chromium, page, tmp_path / "lab-validate.png",
               {"predicted-vs-measured-tps": 1, "errors-by-device": 1})


def test_lab_validate_page_of_a_saved_change_validation(chromium, tmp_path):
    """The committed sysbench change validation (docs/validation/), through the same
    renderer as the command's --html: a series per device."""
    saved = json.loads(gzip.open(ROOT / "docs/validation/sysbench-changes.json.gz").read())
    devices = [dev["name"] for dev in saved["devices"]
               if any((c.get("simulate_after") or {}).get("predicted_tps") is not None
                      for c in dev.get("cells", []))]
    assert len(devices) == 3
    page = tmp_path / "validate-changes.html"
    emit("lab validate", saved, str(page), None)
    check_page(chromium, page, tmp_path / "validate-changes.png",
               {"predicted-vs-measured-tps": 3, "errors-by-device": 3})
