"""`advise --from` on a capture taken from a real MariaDB under load with the real client
programs (mariadb -B, mysqladmin extended-status -r -i 1), against `advise` live on the
same server over a comparable window: the same findings, and what only a live run can
judge said to be unjudged offline, not dropped."""

from __future__ import annotations

import json
import subprocess

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main
from innoflush.lab.server.local import ServerOptions
from innoflush.live.facts import filesystem_of

pytestmark = pytest.mark.server

ROOT_ENV = {"MYSQL_PWD": "", "HOME": "/nonexistent"}


@pytest.fixture(scope="module")
def fsync_server(start_server, tmp_path_factory):
    """Findings in three families: fsync (double buffering), trx_commit=2 and
    sync_binlog=0 under the strict goal."""
    opts = ServerOptions(innodb_flush_method="fsync", innodb_flush_log_at_trx_commit=2,
                         log_bin=True, sync_binlog=0, innodb_buffer_pool_size="64M")
    with start_server(tmp_path_factory.mktemp("offline"), opts) as srv:
        yield srv


def client(server, program: str, *args: str) -> list[str]:
    return [program, "--no-defaults", *args, "--protocol=tcp", "-h", "127.0.0.1",
            "-P", str(server.port), "-u", "root"]


def capture(server, dest) -> None:
    """What a DBA runs on the server's host: the variables, then status every second."""
    dest.mkdir()
    with open(dest / "variables.tsv", "w") as f:
        subprocess.run(client(server, "mariadb", "-B", "-e", "SHOW GLOBAL VARIABLES"),
                       stdout=f, check=True, timeout=60)
    with open(dest / "extended-status.txt", "w") as f:
        subprocess.run(client(server, "mysqladmin", "extended-status", "-r", "-i", "1",
                              "-c", "4"), stdout=f, check=True, timeout=60)


def advise(*args: str):
    return CliRunner().invoke(main, ["advise", *args, "--json"], env=ROOT_ENV,
                              catch_exceptions=False)


def findings(report: dict) -> set[tuple[str, str]]:
    return {(f["id"], f["severity"]) for f in report["findings"]}


def test_from_capture_gives_the_live_findings(fsync_server, insert_load, profile_files,
                                              tmp_path):
    fs = filesystem_of(str(fsync_server.datadir))
    assert fs, "the test server's filesystem is unknown"
    # the device profile names the datadir's real filesystem: live, the advisor reads
    # it from mountinfo; offline, only the profile can say it
    spec = json.loads(open(profile_files["plp"]).read())
    spec["device"]["filesystem"] = fs
    profile = tmp_path / "plp-here.json"
    profile.write_text(json.dumps(spec))
    cap = tmp_path / "capture"
    with insert_load(fsync_server, threads=2) as load:
        load.wait_started()
        capture(fsync_server, cap)
        live = advise("--host", "127.0.0.1", "--port", str(fsync_server.port), "--user",
                      "root", "--interval", "3", "--profile", str(profile), "--no-predict")
        live_bare = advise("--host", "127.0.0.1", "--port", str(fsync_server.port),
                           "--user", "root", "--interval", "3", "--no-predict")
    offline = advise("--from", str(cap), "--profile", str(profile), "--no-predict")
    offline_bare = advise("--from", str(cap), "--no-predict")
    # one file holding both (cat variables.tsv extended-status.txt > capture.txt)
    one = tmp_path / "capture.txt"
    one.write_text((cap / "variables.tsv").read_text()
                   + (cap / "extended-status.txt").read_text())
    offline_file = advise("--from", str(one), "--profile", str(profile), "--no-predict")

    for r in (live, live_bare, offline, offline_bare, offline_file):
        assert r.exit_code == 3, r.stderr + r.stdout
    lv, lb, off, ob, of = (json.loads(r.stdout) for r in
                           (live, live_bare, offline, offline_bare, offline_file))
    assert lv["source"]["kind"] == "live" and lv["server"]["connection"]
    assert off["source"] == {**off["source"], "kind": "capture", "path": str(cap),
                             "snapshots": 4, "mysqladmin_relative": True}
    assert off["server"]["connection"] is None
    assert off["sampling"]["samples"] == 3 and off["observed"]["seconds"] == 3.0

    # the same server read both ways
    assert off["settings"] == lv["settings"] == of["settings"]
    assert off["observed"]["commits"] > 0
    ratio = off["observed"]["commits_per_s"] / lv["observed"]["commits_per_s"]
    assert 0.5 < ratio < 2.0, (off["observed"]["commits_per_s"],
                               lv["observed"]["commits_per_s"])
    assert off["observed"]["commits_source"] == lv["observed"]["commits_source"]

    # the same findings, with the profile naming the filesystem
    want = {("flush-method.fsync-double-buffering", "performance")}
    assert want <= findings(lv)
    assert any(i.startswith("trx-commit.") for i, _ in findings(lv))
    assert findings(off) == findings(lv) == findings(of)

    # without it, what needs the server's host is said to be unjudged offline
    assert ("flush-method.fsync-double-buffering", "performance") in findings(lb)
    dropped = findings(lb) - findings(ob)
    assert dropped == {("flush-method.fsync-double-buffering", "performance")}
    assert any("filesystem is unknown" in c for c in ob["cannot_judge"])
    assert not any("filesystem is unknown" in c for c in lb["cannot_judge"])
    for rep in (off, ob):
        assert sum(c.startswith("offline capture:") for c in rep["cannot_judge"]) == 2
        assert rep["workload"]["connections"]["source"] == "unknown"
    assert not any(c.startswith("offline capture:") for c in lv["cannot_judge"])
