"""The captures of MySQL 9.7.4 and MariaDB 11.8.9 (tests/fixtures/captures/, made by
scripts/capture_fixtures.py from the real servers of Debian's archive, run from their
roots with their own client programs): `advise --from` on each format finds what a live
`advise` of the same server under the same load found at capture time (recorded in
PROVENANCE.json), and the JSON fixtures converted from them read as those servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from innoflush.live.capture import parse_blocks, read_capture
from innoflush.live.facts import facts_from_variables

REPO = Path(__file__).resolve().parents[2]
CAPTURES = REPO / "tests" / "fixtures" / "captures"
NEW = ("mysql-9.7", "mariadb-11.8")
FORMATS = ("tab", "mysqladmin", "pt-stalk")


def provenance(name: str) -> dict:
    return json.loads((CAPTURES / name / "PROVENANCE.json").read_text(encoding="utf-8"))


def formats_of(name: str) -> list[str]:
    """The formats captured: all three, unless pt-stalk could not talk to the server
    (then PROVENANCE.json says why, and its directory is absent)."""
    skipped = provenance(name).get("pt_stalk", {}).get("skipped")
    return [f for f in FORMATS if not (f == "pt-stalk" and skipped)]


def advise_from(path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HOME": "/nonexistent"}
    return subprocess.run([sys.executable, "-m", "innoflush", "advise", "--from", str(path),
                           *args, "--json"], capture_output=True, text=True, env=env,
                          timeout=120, check=False)


@pytest.mark.parametrize("name, fmt", [(n, f) for n in NEW for f in formats_of(n)])
def test_from_the_capture_finds_what_the_live_run_found(name, fmt):
    live = provenance(name)["live_advise"]
    r = advise_from(CAPTURES / name / fmt, *live["from_args"])
    assert r.returncode == live["exit_code"], r.stderr
    assert r.stderr == ""
    rep = json.loads(r.stdout)
    assert rep["source"]["kind"] == "capture"
    assert sorted([f["id"], f["severity"]] for f in rep["findings"]) == live["findings"]
    assert live["findings"], "a capture whose live run found nothing proves little"
    assert rep["server"]["sim_flavor"] == live["sim_flavor"] == name
    assert rep["settings"]["flush_method_source"] == live["flush_method_source"]
    # the same counters behind the commits, at about the live rate (the same load, other
    # seconds of it: pt-stalk's window is 1 s on MySQL)
    obs = rep["observed"]
    assert obs["commits_source"] == live["commits_source"]
    assert live["commits_per_s"] / 3 < obs["commits_per_s"] < live["commits_per_s"] * 3


@pytest.mark.parametrize("name", NEW)
def test_every_format_was_captured_with_the_servers_own_clients(name):
    prov = provenance(name)
    assert sorted(p.name for p in (CAPTURES / name).iterdir() if p.is_dir()) == \
        sorted(formats_of(name))
    version = {"mysql-9.7": "9.7.4", "mariadb-11.8": "11.8.9"}[name]
    assert prov["server"].startswith(version)
    clients = [v for k, v in prov["clients"].items() if k != "pt-stalk"]
    assert len(clients) == 2 and all(version in v for v in clients)
    root = prov["server_root"]["path"]
    assert all(cmd.startswith(f"chroot {root} ") for k, cmd in prov["commands"].items()
               if k != "pt-stalk/")
    cap = read_capture(str(CAPTURES / name / "tab"))
    assert cap.variables["version"].startswith(version)
    if name == "mysql-9.7":
        assert prov["version_with_update"] == cap.variables["version_with_update"] \
            == "9.7.4.0-2"
    assert prov["server_options"]["log_bin"] is True and cap.variables["log_bin"] == "ON"


def test_a_value_on_several_lines_stays_in_its_snapshot():
    """MySQL's SHOW GLOBAL STATUS holds two PEM keys; the table format (mysqladmin
    without -r, pt-stalk) prints their newlines as they are. Each snapshot is one block
    with Uptime and every counter, the key its value."""
    f = next((CAPTURES / "mysql-9.7" / "pt-stalk").glob("*-mysqladmin"))
    text = f.read_text(encoding="utf-8")
    assert "\nMIIB" in text           # the raw file does split the rows
    blocks, _ = parse_blocks(text)
    assert len(blocks) == 2           # -i1 -c2: two tables, not six pieces
    for b in blocks:
        assert {"Uptime", "Innodb_data_fsyncs", "Binlog_cache_use", "Com_insert"} <= \
            set(b.rows)
        key = b.rows["Caching_sha2_password_rsa_public_key"]
        assert key.startswith("-----BEGIN PUBLIC KEY-----") and \
            key.endswith("-----END PUBLIC KEY-----")
    # a row left open by a cut file is not joined with the rows after it
    cut = ("| Variable_name | Value |\n| Aborted_clients | 0 |\n| Rsa_public_key | ---x\n"
           "MIIB\n| Uptime | 5 |\n| Questions | 9 |\n")
    blocks, _ = parse_blocks(cut)
    assert blocks[-1].rows == {"Uptime": "5", "Questions": "9"}


def test_json_fixtures_are_the_tab_captures_converted(load_fixture):
    for name in NEW:
        fx, cap = load_fixture(name), read_capture(str(CAPTURES / name / "tab"))
        assert fx["variables"] == cap.variables
        assert fx["status_end"] == cap.snapshots[-1].status
        assert fx["source"].startswith("captured here from " + provenance(name)["server"])


def test_facts_of_mysql_9_7(load_fixture):
    fx = load_fixture("mysql-9.7")
    f = facts_from_variables(fx["variables"], fx["replica_status"], True)
    assert (f.product, f.version_tuple, f.sim_flavor) == ("mysql", (9, 7, 4), "mysql-9.7")
    assert not f.notes              # 9.7 is modelled: no "nearest flavor" note
    assert f.use_fdatasync is True  # ON by default since 8.4
    assert (f.flush_method, f.flush_method_source) == ("O_DIRECT", "innodb_flush_method")
    assert (f.trx_commit, f.log_bin, f.sync_binlog, f.role) == (2, True, 0, "primary")
    assert f.redo_capacity_bytes == int(fx["variables"]["innodb_redo_log_capacity"])
    assert f.doublewrite_protects and not f.mariadb11_io_variables


def test_facts_of_mariadb_11_8(load_fixture):
    fx = load_fixture("mariadb-11.8")
    f = facts_from_variables(fx["variables"], fx["replica_status"], True)
    assert (f.product, f.version_tuple, f.sim_flavor) == \
        ("mariadb", (11, 8, 9), "mariadb-11.8")
    assert not f.notes
    # the flush method read from 11.8's booleans, not its deprecated innodb_flush_method
    assert f.mariadb11_io_variables and f.doublewrite_fast_supported
    assert (f.flush_method, f.flush_method_source) == \
        ("O_DIRECT", "innodb_data_file_buffering=OFF")
    for name in ("innodb_data_file_buffering", "innodb_data_file_write_through",
                 "innodb_log_file_buffering", "innodb_log_file_write_through"):
        assert f.variables[name] == "OFF", name
    assert not f.redo_write_through and f.use_fdatasync is None
    assert (f.trx_commit, f.log_bin, f.sync_binlog, f.role) == (1, True, 0, "primary")
