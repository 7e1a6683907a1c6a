"""The README's recipe 2 setting, shared by the tests that run it as a user would: sysbench
`oltp_insert` on 4 tables, innoflush as a process, and recipe 1's profile measured on the
disk the test's datadir is on."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def sysbench(port: int, script: str, *args: str) -> list[str]:
    return ["sysbench", script, "--db-driver=mysql", "--mysql-host=127.0.0.1",
            f"--mysql-port={port}", "--mysql-user=root", "--mysql-db=sbtest", "--tables=4",
            "--table-size=10000", *args]


def innoflush(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "innoflush", *args], capture_output=True,
                          text=True, env=env, timeout=300)


def require_sysbench() -> None:
    """Skip loudly without sysbench; under CI=true fail (make system-deps installs it)."""
    if shutil.which("sysbench") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("sysbench missing under CI=true (make system-deps installs it)")
        pytest.skip("!!! sysbench missing: apt-get install sysbench (make system-deps)")


def measured_home(tmp_path: Path) -> dict:
    """Recipe 1 on the disk under tmp_path: the profile `mine` in a home of the test's
    own; the environment that uses it."""
    env = {**os.environ, "INNOFLUSH_HOME": str(tmp_path / "home")}
    (tmp_path / "probe").mkdir()
    m = innoflush("measure", str(tmp_path / "probe"), "--quick", "--save", "mine", env=env)
    assert m.returncode == 0, m.stderr
    return env
