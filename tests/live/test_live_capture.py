"""innoflush.live.capture: the captured client output `advise --from` reads.

The captures under tests/fixtures/captures/ are real (a MariaDB 10.11 under load, by
scripts/capture_fixtures.py, PROVENANCE.json beside them); the error cases cut them up."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from innoflush.errors import UsageError
from innoflush.live.capture import (
    CaptureError,
    canonical_status,
    looks_relative,
    parse_blocks,
    read_capture,
    rebuild_relative,
    series_times,
)

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"
NAMES = ("mariadb-10.11-odirect", "mariadb-10.11-binlog")


def provenance(name: str) -> dict:
    return json.loads((CAPTURES / name / "PROVENANCE.json").read_text())


# ---- the real captures, each format ---------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_tab_files_two_snapshots_timed_by_uptime(name):
    cap = read_capture(str(CAPTURES / name / "tab"))
    a, b = cap.snapshots
    assert len(cap.snapshots) == 2 and cap.interval_source == "Uptime"
    assert b.t - a.t == b.status["Uptime"] - a.status["Uptime"] >= 9   # taken 10 s apart
    assert cap.variables["version"].startswith("10.11.")
    assert cap.variables["innodb_flush_method"] == \
        provenance(name)["server_options"]["innodb_flush_method"]
    assert not cap.relative and cap.replica_rows is None
    assert b.status["Questions"] > a.status["Questions"]
    src = cap.source()
    assert src["kind"] == "capture" and src["snapshots"] == 2
    assert sorted(src["files"]) == ["status-1.tsv", "status-2.tsv", "variables.tsv"]


@pytest.mark.parametrize("name", NAMES)
def test_mysqladmin_relative_blocks_are_rebuilt(name):
    cap = read_capture(str(CAPTURES / name / "mysqladmin"))
    assert cap.relative and len(cap.snapshots) == 4       # -r -i 2 -c 4
    assert "mysqladmin extended-status -r -i N" in cap.formats
    assert "mysql table (| name | value |)" in cap.formats   # the variables
    ts = [s.t for s in cap.snapshots]
    assert [t - ts[0] for t in ts] == [0, 2, 4, 6] and "2 s" in cap.interval_source
    # rebuilt: cumulative again, so the counters only grow, and Uptime is the uptime
    for k in ("Uptime", "Questions", "Innodb_data_fsyncs", "Innodb_log_writes"):
        vals = [s.status[k] for s in cap.snapshots]
        assert vals == sorted(vals) and vals[-1] > vals[0], k
    # the raw later blocks hold differences: their Uptime is the step, not the uptime
    raw = [b.rows for b in parse_blocks(
        (CAPTURES / name / "mysqladmin" / "extended-status.txt").read_text())[0]]
    assert [int(r["Uptime"]) for r in raw[1:]] == \
        [cap.snapshots[i + 1].status["Uptime"] - cap.snapshots[i].status["Uptime"]
         for i in range(3)]
    # and the tab capture, taken just before, is behind the first absolute block
    tab = read_capture(str(CAPTURES / name / "tab"))
    assert tab.snapshots[-1].status["Questions"] <= cap.snapshots[0].status["Questions"]


@pytest.mark.parametrize("name", NAMES)
def test_pt_stalk_directory(name, tmp_path):
    d = CAPTURES / name / "pt-stalk"
    cap = read_capture(str(d))
    assert not cap.relative and len(cap.snapshots) >= 3   # pt-stalk: mysqladmin ext -i1
    assert [Path(f).name.split("-", 1)[1] for f in cap.files] == ["variables", "mysqladmin"]
    assert "mysqladmin extended-status -i N" in cap.formats
    up = [s.status["Uptime"] for s in cap.snapshots]
    assert up == sorted(up) and cap.variables["version"].startswith("10.11.")
    # an older, incomplete collection beside it is passed over; DIR/PREFIX picks one
    for f in d.iterdir():
        shutil.copy(f, tmp_path / f.name)
    prefix = cap.files[0].rsplit("/", 1)[1].split("-")[0]
    (tmp_path / "2020_01_01_00_00_00-variables").write_text(
        (d / f"{prefix}-variables").read_text())
    assert read_capture(str(tmp_path)).files[0].endswith(f"{prefix}-variables")
    assert read_capture(str(tmp_path / prefix)).files[0].endswith(f"{prefix}-variables")
    with pytest.raises(CaptureError, match="no pt-stalk collection 2021_"):
        read_capture(str(tmp_path / "2021_01_01_00_00_00"))


def test_one_file_holding_everything(tmp_path):
    """cat variables.tsv status-1.tsv status-2.tsv > capture.txt"""
    d = CAPTURES / NAMES[1] / "tab"
    one = tmp_path / "capture.txt"
    one.write_text("".join((d / n).read_text() for n in
                           ("variables.tsv", "status-1.tsv", "status-2.tsv")))
    cap, by_dir = read_capture(str(one)), read_capture(str(d))
    assert cap.variables == by_dir.variables
    assert [s.status for s in cap.snapshots] == [s.status for s in by_dir.snapshots]
    assert cap.snapshots[1].t - cap.snapshots[0].t == by_dir.snapshots[1].t - \
        by_dir.snapshots[0].t


def test_interval_given_overrides_the_uptime_step():
    cap = read_capture(str(CAPTURES / NAMES[0] / "mysqladmin"), interval_s=2.5)
    assert cap.snapshots[-1].t - cap.snapshots[0].t == 7.5
    assert cap.interval_source == "--interval"


# ---- the pieces, on small inputs ----------------------------------------------------------

def test_tab_without_header_and_repeated_names_split_snapshots():
    text = "Uptime\t10\nQuestions\t5\nUptime\t20\nQuestions\t9\n"
    blocks, _ = parse_blocks(text)
    assert [b.rows for b in blocks] == [{"Uptime": "10", "Questions": "5"},
                                        {"Uptime": "20", "Questions": "9"}]


def test_other_tables_and_titles_end_a_block():
    text = ("\nSHOW GLOBAL VARIABLES\n\nVariable_name\tValue\nversion\t8.0.36\n"
            "datadir\t/var/lib/mysql/\n\nselect * from x\n\n"
            "THREAD_ID\tVARIABLE_NAME\tVARIABLE_VALUE\n12\tautocommit\tON\n")
    blocks, _ = parse_blocks(text)
    assert [b.rows for b in blocks] == [{"version": "8.0.36", "datadir": "/var/lib/mysql/"}]


def test_vertical_replica_status_and_table_values_kept_verbatim():
    text = ("+---------------+-------+\n| Variable_name | Value |\n+---------------+-------+\n"
            "| version       | 8.4.0 |\n| init_connect  |       |\n+---------------+-------+\n"
            "*************************** 1. row ***************************\n"
            "               Slave_IO_State: Waiting for source\n"
            "                  Master_Host: db-primary-1\n"
            "             Slave_IO_Running: Yes\n")
    blocks, vertical = parse_blocks(text)
    assert blocks[0].rows == {"version": "8.4.0", "init_connect": ""}
    assert vertical == [{"Slave_IO_State": "Waiting for source",
                         "Master_Host": "db-primary-1", "Slave_IO_Running": "Yes"}]


def test_information_schema_capitals():
    assert canonical_status({"UPTIME": "5", "INNODB_DATA_FSYNCS": "7", "Com_select": "1"}) \
        == {"Uptime": "5", "Innodb_data_fsyncs": "7", "Com_select": "1"}


def test_relative_detection_and_rebuild():
    absolute = [{"Uptime": 100, "Questions": 10}, {"Uptime": 110, "Questions": 30}]
    relative = [{"Uptime": 100, "Questions": 10}, {"Uptime": 10, "Questions": 20},
                {"Uptime": 10, "Questions": 5}]
    assert not looks_relative(absolute) and looks_relative(relative)
    assert rebuild_relative(relative) == [{"Uptime": 100, "Questions": 10},
                                          {"Uptime": 110, "Questions": 30},
                                          {"Uptime": 120, "Questions": 35}]
    # a server up 1 s when mysqladmin -r -i 1 began: Uptime tells nothing, the counters do
    young = [{"Uptime": 1, "Questions": 40, "Innodb_pages_created": 268},
             {"Uptime": 2, "Questions": 8035, "Innodb_pages_created": 100},
             {"Uptime": 1, "Questions": 6060, "Innodb_pages_created": 165}]
    assert looks_relative(young)
    assert rebuild_relative(young)[-1] == {"Uptime": 4, "Questions": 14135,
                                           "Innodb_pages_created": 533}
    # an absolute capture across a restart is not taken for -r: its Uptime grows again
    restarted = [{"Uptime": 500, "Questions": 900}, {"Uptime": 3, "Questions": 10},
                 {"Uptime": 13, "Questions": 40}, {"Uptime": 23, "Questions": 70}]
    assert not looks_relative(restarted)


def test_series_times_median_step():
    blocks = [{"Uptime": u} for u in (50, 51, 53, 54, 55)]   # -i 1 with one late second
    times, how = series_times(blocks, None)
    assert times == [50, 51, 52, 53, 54] and "1 s" in how


# ---- what is refused: one line, exit 2 ------------------------------------------------------

def _copy(tmp_path: Path, *names: str, fmt: str = "tab") -> Path:
    d = tmp_path / "cap"
    d.mkdir()
    for n in names:
        shutil.copy(CAPTURES / NAMES[0] / fmt / n, d / n)
    return d


def test_errors(tmp_path):
    assert issubclass(CaptureError, UsageError)
    with pytest.raises(CaptureError, match="no such file or directory"):
        read_capture(str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(CaptureError, match="empty directory"):
        read_capture(str(tmp_path / "empty"))
    junk = tmp_path / "notes.txt"
    junk.write_text("innodb is slow today\n")
    with pytest.raises(CaptureError, match="no SHOW GLOBAL VARIABLES or SHOW GLOBAL STATUS "
                                           "output recognised; understood: mysql -B"):
        read_capture(str(junk))


def test_errors_on_cut_captures(tmp_path):
    d = _copy(tmp_path, "status-1.tsv", "status-2.tsv")
    with pytest.raises(CaptureError, match="no SHOW GLOBAL VARIABLES in the capture"):
        read_capture(str(d))
    shutil.copy(CAPTURES / NAMES[0] / "tab" / "variables.tsv", d / "variables.tsv")
    (d / "status-2.tsv").unlink()
    with pytest.raises(CaptureError, match="1 SHOW GLOBAL STATUS snapshot.*two or more"):
        read_capture(str(d))
    # a later run's snapshot first: Uptime went down
    shutil.copy(CAPTURES / NAMES[0] / "tab" / "status-2.tsv", d / "status-0.tsv")
    with pytest.raises(CaptureError, match="different server runs .*Uptime went down"):
        read_capture(str(d))
    (d / "status-0.tsv").unlink()
    shutil.copy(d / "status-1.tsv", d / "status-1b.tsv")
    with pytest.raises(CaptureError, match="0 s apart"):
        read_capture(str(d))


def test_a_restart_inside_one_file_is_refused(tmp_path):
    """Absolute snapshots across a restart are not taken for -r differences."""
    one = tmp_path / "capture.txt"
    one.write_text((CAPTURES / NAMES[0] / "tab" / "variables.tsv").read_text()
                   + "Uptime\t500\nQuestions\t900\nUptime\t3\nQuestions\t10\n"
                   + "Uptime\t13\nQuestions\t40\n")
    with pytest.raises(CaptureError, match="snapshots 1 and 2 are from different server"):
        read_capture(str(one))
