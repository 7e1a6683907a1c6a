"""`innoflush measure --engine fio`: real fio, briefly; and a clear error without it.

Without fio these tests skip loudly, except under CI=true, where missing fio fails.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main
from innoflush.measure import fio as fio_engine

FIO = shutil.which("fio")
ON_CI = os.environ.get("CI", "").lower() == "true"


@pytest.fixture
def need_fio():
    if FIO is None:
        if ON_CI:
            pytest.fail("fio is not installed but CI=true: the fio engine must be tested "
                        "(install fio: apt-get install fio)")
        pytest.skip("!!! fio NOT INSTALLED: the fio engine was NOT tested "
                    "(apt-get install fio) !!!")
    return FIO


def run(*args):
    return CliRunner().invoke(main, ["measure", *map(str, args)])


def test_fio_engine_real_run(tmp_path, need_fio):
    r = run(tmp_path, "--engine", "fio", "--sizes", "16k", "--ops", "fsync,fdatasync,dsync",
            "--direct", "on", "--duration", 0.3, "--file-size", "2M", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["engine"] == "fio" and d["engine_version"].startswith("fio-")
    assert d["settings"]["warmup_ops"] == 0
    if not d["facts"]["o_direct"]["supported"]:
        pytest.skip("O_DIRECT not supported on the test directory")
    fsync, fdatasync, dsync = d["tests"]
    for t in (fsync, fdatasync):
        assert t["unsupported"] is None
        assert t["count"] > 0 and t["ops_per_s"] > 0
        assert t["sync"]["p50_ns"] > 0
        assert t["sync"]["count"] == t["count"]  # fdatasync: from lat_ns.N, not total_ios
        assert t["write"]["p50_ns"] > 0 and t["total"] is None
    assert dsync["sync"] is None and dsync["write"]["p50_ns"] > 0
    assert dsync["total"] == dsync["write"]
    assert os.listdir(tmp_path) == []  # fio wrote only our file, and it is gone


def test_fio_engine_jobs_and_count(tmp_path, need_fio):
    r = run(tmp_path, "--engine", "fio", "--sizes", "16k", "--ops", "fdatasync",
            "--direct", "off", "--jobs", 2, "--count", 25, "--file-size", "1M", "--json")
    assert r.exit_code == 0, r.output
    (t,) = json.loads(r.stdout)["tests"]
    assert t["jobs"] == 2 and t["count"] == 50
    assert t["sync"]["count"] == 50 and t["sync"]["p50_ns"] > 0
    assert os.listdir(tmp_path) == []


def test_fio_missing_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(fio_engine.shutil, "which", lambda name: None)
    r = run(tmp_path, "--engine", "fio", "--sizes", "16k", "--count", 5)
    assert r.exit_code == 2
    assert r.stderr.strip().startswith("innoflush: error: fio is not installed")
    assert os.listdir(tmp_path) == []
