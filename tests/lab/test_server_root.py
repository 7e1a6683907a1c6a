"""MySQL 9.7 and MariaDB 11.8 run from their Debian roots (lab/server/server_root.py): the server in
a chroot, its work directory at the same path inside and out, nothing left in the root or in
the host's mounts when it stops."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from innoflush.errors import UsageError
from innoflush.lab.server.local import LocalServer, ServerOptions
from innoflush.lab.server.server_root import ServerRoot, resolve_root, roots_dir

ROOT = Path(__file__).resolve().parents[2]


def test_a_name_means_a_root_under_the_roots_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("INNOFLUSH_SERVER_ROOTS", str(tmp_path))
    assert roots_dir() == tmp_path
    assert resolve_root("mysql-9.7") == tmp_path / "mysql-9.7"
    assert resolve_root(str(tmp_path / "x")) == tmp_path / "x"


def test_a_root_without_a_server_is_refused(tmp_path):
    (tmp_path / "usr" / "sbin").mkdir(parents=True)
    with pytest.raises(UsageError, match="holds no usr/sbin/mariadbd or usr/sbin/mysqld"):
        ServerRoot(tmp_path).check()
    with pytest.raises(UsageError, match="no such directory"):
        ServerRoot(tmp_path / "nope").check()


def test_mount_points_made_inside_the_root_are_removed(tmp_path):
    root = ServerRoot(tmp_path / "root")
    (tmp_path / "root" / "tmp").mkdir(parents=True)
    cmd = root.wrap(["/usr/sbin/mysqld", "--version"], [Path("/tmp/a/b/work")])
    assert (tmp_path / "root" / "tmp" / "a" / "b" / "work").is_dir()
    assert cmd[:5] == ["unshare", "--mount", "--propagation", "private", "--"]
    assert cmd[-2:] == ["/usr/sbin/mysqld", "--version"]
    root.release()
    assert os.listdir(tmp_path / "root" / "tmp") == []


def _mounts_naming(path: Path) -> list[str]:
    with open("/proc/self/mountinfo", encoding="utf-8") as f:
        return [ln for ln in f if str(path) in ln]


@pytest.mark.server
def test_each_lts_server_runs_in_its_root(lts_root, tmp_path):
    name, root = lts_root
    work = tmp_path / "work"
    with LocalServer(work, ServerOptions(innodb_buffer_pool_size="64M", log_bin=True),
                     server_root=root) as srv:
        product = "mysql" if name.startswith("mysql") else "mariadb"
        assert srv.flavor == product
        assert srv.version[:2] == tuple(int(x) for x in name.split("-")[1].split("."))
        pid = srv.server_pid()
        # the lab's PID is the server itself (unshare, sh and chroot exec)
        assert os.readlink(f"/proc/{pid}/exe") == f"{root}/usr/sbin/" + (
            "mysqld" if product == "mysql" else "mariadbd")
        with srv.connect().cursor() as cur:
            cur.execute("SELECT @@datadir, @@log_bin_basename")
            datadir, binlog = cur.fetchone()
        # the same path inside the root and out: what the server reports is the host's
        assert Path(datadir) == srv.datadir and (srv.datadir / "ibdata1").exists()
        assert Path(binlog).parent == work
        assert not _mounts_naming(work)     # its mounts live in its own namespace
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not Path(root + str(work)).exists(), "mount point left inside the root"
    assert not Path(root + str(tmp_path)).exists()


@pytest.mark.server
def test_lab_run_with_a_server_root(mysql97_root, tmp_path):
    """`lab run --server-root mysql-9.7` end to end: measured beside predicted, the flavor
    named, nothing left running."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "innoflush", "lab", "run", "--server-root",
                        mysql97_root, "--profile", "samsung-990-pro", "--duration", "2",
                        "--connections", "2", "--no-advise", "--datadir-on", str(tmp_path),
                        "--json"], capture_output=True, text=True, env=env, timeout=600,
                       check=False)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    run = doc["runs"][0]
    assert run["measured"]["tps"] > 0 and run["predicted"]["tps"] > 0
    assert doc["server"]["sim_flavor"] == "mysql-9.7"
    assert os.listdir(tmp_path) == []
