"""advise --check on a real report and real captures of the same server
(tests/fixtures/checks/mariadb-10.11-trx-commit, PROVENANCE.json): nothing applied, the
recommendation applied and judged, the track record it leaves; and every bad input —
a truncated file, a report without predictions, a report of another server — one line,
exit 2. The live runs are in test_advise_check_server.py."""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from innoflush.advisor import check as chk
from innoflush.advisor import track_record
from innoflush.commands.root import main

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "checks" / "mariadb-10.11-trx-commit"
OTHER = ROOT / "tests" / "fixtures" / "captures" / "mariadb-10.11-binlog" / "tab"
REPORT = json.loads((FIX / "report.json").read_text())


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("INNOFLUSH_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def advise(*args: str):
    return CliRunner().invoke(main, ["advise", *args], catch_exceptions=False)


def one_line_error(r) -> str:
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("innoflush: error: ")
    assert "Traceback" not in r.output
    return lines[0]


def check_json(capture: str, report: Path = FIX / "report.json"):
    r = advise("--from", str(FIX / capture), "--interval", "5", "--check", str(report),
               "--json")
    return r, json.loads(r.stdout)


def test_nothing_applied_says_so(home):
    r, doc = check_json("same")
    assert r.exit_code == 4 and doc["exit_code"] == 4
    assert doc["verdict"] == "nothing applied" and doc["applied"] == []
    assert doc["prediction"] is None and doc["figures"] == []
    assert any("nothing the report priced was applied" in n for n in doc["notes"])


def test_the_applied_recommendation_is_judged_against_its_prediction(home):
    r, doc = check_json("applied")
    assert doc["applied"] == [{"setting": "innodb_flush_log_at_trx_commit", "before": "1",
                               "now": "2", "recommended": True, "derived": False}]
    assert doc["prediction"]["kind"] == "finding"
    assert doc["prediction"]["changes"] == {"innodb_flush_log_at_trx_commit": 2}
    tps = next(f for f in doc["figures"] if f["figure"] == "tps")
    finding = next(f for f in REPORT["findings"] if f["setting"] ==
                   "innodb_flush_log_at_trx_commit")["predicted"]
    assert tps["predicted_ratio"] == pytest.approx(1 + finding["change"]["tps_pct"] / 100,
                                                   abs=1e-4)
    lo, hi = finding["interval"]["tps_pct"]
    assert tps["interval"] == pytest.approx([1 + lo / 100, 1 + hi / 100], abs=1e-4)
    assert tps["measured_ratio"] == pytest.approx(tps["after"] / tps["before"], rel=1e-3)
    # the capture's measured x1.06 is far from the predicted x1.63: not held, exit 5
    assert tps["held"] is False and doc["verdict"] == "did not hold"
    assert r.exit_code == 5 and doc["exit_code"] == 5
    # a capture has no processlist: what it cannot compare is said, not guessed
    assert "connections" in doc["workload"]["unknown"]
    moved = {f["figure"]: f["moved"] for f in doc["workload"]["figures"]}
    assert moved["statements_per_trx"] is False and moved["row_changes_per_trx"] is False
    text = advise("--from", str(FIX / "applied"), "--interval", "5", "--check",
                  str(FIX / "report.json"))
    assert "DID NOT HOLD" in text.stdout and "NOT HELD" in text.stdout
    assert "innodb_flush_log_at_trx_commit" in text.stdout


def test_a_capture_s_connections_are_given_for_the_comparison(home):
    r = advise("--from", str(FIX / "applied"), "--interval", "5", "--check",
               str(FIX / "report.json"), "--connections", "4", "--json")
    doc = json.loads(r.stdout)
    conns = next(f for f in doc["workload"]["figures"] if f["figure"] == "connections")
    assert (conns["before"], conns["now"], conns["moved"]) == (4.0, 4.0, False)
    r = advise("--from", str(FIX / "applied"), "--interval", "5", "--check",
               str(FIX / "report.json"), "--connections", "16", "--json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 4 and doc["workload"]["moved"] == ["connections"]


def test_each_check_joins_the_track_record_without_the_host(home):
    for capture in ("same", "applied", "applied"):
        check_json(capture)
    lines = (home / "track-record.jsonl").read_text().splitlines()
    assert len(lines) == 3
    assert all(s not in ln for ln in lines for s in ("vm", "127.0.0.1", "/var/tmp", "root"))
    r = advise("--track-record", "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    row, = doc["rows"]
    assert row["change"] == "innodb_flush_log_at_trx_commit=2"
    assert row["connections"] == "2-4"    # the report's 4, which the prediction was made for
    assert (row["checks"], row["judged"], row["held"]) == (2, 2, 0)
    assert row["tps_held_pct"] == 0
    assert row["claimed_coverage_pct"] == REPORT["findings"][0]["predicted"]["interval"][
        "coverage_pct"]
    text = advise("--track-record").stdout
    assert "innodb_flush_log_at_trx_commit=2" in text and "claimed" in text
    shared = home.parent / "shared.jsonl"
    r = advise("--track-record", "--share", str(shared))
    assert r.exit_code == 0 and len(shared.read_text().splitlines()) == 3


def test_html_and_png_draw_before_predicted_and_after(home, tmp_path):
    page, pngs = tmp_path / "check.html", tmp_path / "png"
    r = advise("--from", str(FIX / "applied"), "--interval", "5", "--check",
               str(FIX / "report.json"), "--html", str(page), "--png", str(pngs))
    assert r.exit_code == 5, r.output
    html = page.read_text()
    assert 'data-chart="before-predicted-after"' in html and "DID NOT HOLD" in html
    svg = html.split('data-chart="before-predicted-after"')[1].split("</figure>")[0]
    assert len(set(re.findall(r'id="series-(\d+)', svg))) == 3   # before, predicted, after
    assert [p.name for p in pngs.iterdir()] == ["advise-check-before-predicted-after.png"]


def test_an_empty_track_record_says_how_to_start_one(home):
    r = advise("--track-record")
    assert r.exit_code == 0 and "advise --check REPORT.json" in r.stdout


@pytest.mark.parametrize("make, needle", [
    (lambda p: p.write_text((FIX / "report.json").read_text()[:5000]),
     "not valid JSON (truncated?)"),
    (lambda p: p.write_text(json.dumps({"schema": "innoflush.lab/1"})),
     "not an innoflush advise report"),
    (lambda p: p.write_text(json.dumps({**REPORT, "findings": [], "candidates": [],
                                        "combined_prediction": None})),
     "the report has no prediction to check"),
    (lambda p: p.mkdir(), "a directory, not a report file (a directory of reports goes "
                          "with --inventory)"),
    (lambda p: os.mkfifo(p), "not a regular file"),
    (lambda p: None, "no such report file"),
])
def test_a_bad_report_is_one_line_exit_2(home, tmp_path, make, needle):
    path = tmp_path / "report.json"
    make(path)
    r = advise("--from", str(FIX / "same"), "--check", str(path))
    assert r.exit_code == 2 and needle in one_line_error(r)
    assert not (home / "track-record.jsonl").exists()


def test_a_report_of_another_server_is_refused(home):
    r = advise("--from", str(OTHER), "--check", str(FIX / "report.json"))
    assert r.exit_code == 2
    assert "a report of another server (datadir" in one_line_error(r)


@pytest.mark.parametrize("args, needle", [
    (["--check", str(FIX / "report.json"), "--profile", "samsung-990-pro"],
     "drop --profile"),
    (["--check", str(FIX / "report.json"), "--track-record"], "not both"),
    (["--share", "x.jsonl"], "--share needs --track-record"),
    (["--track-record", "--interval", "5", "--durability", "relaxed"], "drop --durability"),
])
def test_options_that_do_not_go_with_check(home, args, needle):
    r = advise(*args)
    assert r.exit_code == 2 and needle in one_line_error(r)


# ---- the logic, on the real report ------------------------------------------------------

def _after(**settings) -> dict:
    after = copy.deepcopy(REPORT)
    after["settings"].update(settings)
    return after


def test_a_change_the_report_did_not_price_gets_no_verdict():
    doc = chk.check(REPORT, _after(innodb_flush_log_at_trx_commit=2, sync_binlog=0))
    assert doc["verdict"] == "not priced" and doc["exit_code"] == 4
    assert {c["setting"] for c in doc["applied"]} == {"innodb_flush_log_at_trx_commit",
                                                      "sync_binlog"}
    assert [c["recommended"] for c in doc["applied"]] == [True, False]


def test_a_moved_workload_is_not_comparable_and_names_what_moved():
    after = _after(innodb_flush_log_at_trx_commit=2)
    after["workload"]["connections"]["value"] = 16.0
    after["observed"]["deltas"]["Com_select"] = 10 * after["observed"]["commits"]
    doc = chk.check(REPORT, after)
    assert doc["verdict"] == "not comparable" and doc["exit_code"] == 4
    assert doc["workload"]["moved"] == ["connections", "selects_per_trx"]
    assert doc["figures"]                       # shown, but no verdict is drawn on them


def test_the_same_workload_is_comparable():
    doc = chk.check(REPORT, _after(innodb_flush_log_at_trx_commit=2))
    assert doc["workload"]["comparable"] is True and doc["workload"]["unknown"] == []
    # the after side is the report itself: every ratio 1, the predicted x1.63 not held
    assert doc["verdict"] == "did not hold"


def test_track_record_classes_and_summary():
    assert [track_record.connection_class(n) for n in (1, 3, 4.4, 16, 64, None)] == [
        "1", "2-4", "2-4", "5-16", "17+", "unknown"]
    held = {"change": "a=1", "connections": 4, "verdict": "held",
            "figures": [{"figure": "tps", "held": True, "coverage_pct": 80}]}
    missed = {**held, "verdict": "did not hold",
              "figures": [{"figure": "tps", "held": False, "coverage_pct": 80}]}
    moved = {**held, "verdict": "not comparable", "figures": []}
    row, = track_record.summary([held, held, missed, moved])["rows"]
    assert (row["checks"], row["not_comparable"], row["judged"], row["held"]) == (4, 1, 3, 2)
    assert row["tps_held_pct"] == 67 and row["claimed_coverage_pct"] == 80
