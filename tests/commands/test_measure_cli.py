"""`innoflush measure` end to end: real short probes, bad input, cleanup, safety."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import signal
import stat
import subprocess
import uuid

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main
from innoflush.measure import measure_profile, probe, quick_tests
from innoflush.profiles import DeviceProfile, load_profile

SMALL = ["--sizes", "16k", "--file-size", "1M"]


def run(*args):
    return CliRunner().invoke(main, ["measure", *map(str, args)])


def one_line_error(result, code=2):
    assert result.exit_code == code, (result.exit_code, result.output)
    err = result.stderr.strip()
    assert err.startswith("innoflush: error: "), err
    assert len(err.splitlines()) == 1 and "Traceback" not in result.output
    return err


def assert_empty(d):
    assert os.listdir(d) == [], os.listdir(d)


@contextlib.contextmanager
def mounted_tmpfs(path, options):
    """A tmpfs of our own at path (root only); skips when mounting is not allowed."""
    path.mkdir(exist_ok=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount a tmpfs")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "innoflush-test", str(path)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=False)


# ---- real probes -----------------------------------------------------------------------
def test_real_probe_json(tmp_path):
    r = run(tmp_path, *SMALL, "--ops", "none,fsync,fdatasync,dsync", "--direct", "both",
            "--count", 30, "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    for key in ("tool", "version", "engine", "path", "host", "date", "wall_s", "settings",
                "facts", "plp_verdict", "warnings", "tests"):
        assert key in d
    assert d["tool"] == "innoflush" and d["engine"] == "builtin"
    assert d["path"] == os.path.realpath(tmp_path)
    assert d["date"].endswith("Z")
    assert d["settings"]["count"] == 30 and d["settings"]["warmup_ops"] == 3
    assert d["plp_verdict"]["verdict"] in ("non-volatile-cache-or-flush-ignored",
                                           "volatile-cache", "write-through", "unknown")
    assert d["facts"]["o_direct"]["supported"] in (True, False)
    tests = d["tests"]
    assert [(t["op"], t["direct"]) for t in tests] == [
        ("none", True), ("fsync", True), ("fdatasync", True), ("dsync", True),
        ("none", False), ("fsync", False), ("fdatasync", False), ("dsync", False)]
    for t in tests:
        if t["unsupported"]:
            assert t["direct"] and not d["facts"]["o_direct"]["supported"]
            continue
        assert t["write_bytes"] == 16384 and t["jobs"] == 1
        assert t["count"] == 30 and t["warmup_ops"] == 3
        assert t["ops_per_s"] > 0 and t["duration_s"] > 0
        for comp in ("write", "total"):
            s = t[comp]
            assert s["count"] == 30
            assert 0 < s["min_ns"] <= s["p50_ns"] <= s["p90_ns"] <= s["p99_ns"] \
                <= s["p99_9_ns"] <= s["max_ns"]
        if t["op"] in ("fsync", "fdatasync"):
            assert t["sync"]["count"] == 30 and t["sync"]["p50_ns"] > 0
            assert t["total"]["p50_ns"] >= t["sync"]["p50_ns"]
        else:
            assert t["sync"] is None and t["total"] == t["write"]
        # a write of 16 KiB cannot take longer than a second on any real storage here
        assert t["write"]["p50_ns"] < 1e9
    assert_empty(tmp_path)


def test_real_probe_text_table(tmp_path):
    # --wide: p99.9 and ops/s are its columns
    r = run(tmp_path, *SMALL, "--ops", "fsync", "--direct", "on", "--duration", 0.2, "--wide")
    assert r.exit_code == 0, r.output
    out = r.stdout
    for needle in ("p50 µs", "p99.9 µs", "ops/s", "fsync", "PLP verdict", "filesystem",
                   "O_DIRECT"):
        assert needle in out
    assert_empty(tmp_path)


def test_concurrent_jobs_count_all_ops(tmp_path):
    r = run(tmp_path, *SMALL, "--ops", "fdatasync", "--direct", "off", "--jobs", "1,2",
            "--count", 20, "--json")
    assert r.exit_code == 0, r.output
    tests = json.loads(r.stdout)["tests"]
    assert [(t["jobs"], t["count"]) for t in tests] == [(1, 20), (2, 40)]
    assert all(t["sync"]["p50_ns"] > 0 for t in tests)
    assert_empty(tmp_path)


def test_save_round_trip(tmp_path, monkeypatch):
    home = tmp_path / "home"
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("INNOFLUSH_HOME", str(home))
    args = [data, *SMALL, "--ops", "fsync,dsync", "--direct", "off", "--count", 15]
    r = run(*args, "--save", "my-disk")
    assert r.exit_code == 0, r.output
    assert "Saved as device profile 'my-disk'" in r.stdout
    saved = home / "profiles" / "my-disk.json"
    p = DeviceProfile.load(saved)
    assert p.name == "my-disk"
    assert p.provenance["kind"] == "measured" and p.provenance["engine"] == "builtin"
    assert p.provenance["tool"].startswith("innoflush ")
    for k in ("host", "path", "date"):
        assert p.provenance[k]
    assert "class" in p.device and "fs_type" in p.device
    assert p.plp_verdict["verdict"]
    assert [t.op for t in p.tests] == ["fsync", "dsync"]
    assert all(t.source == "measured" for t in p.tests)
    assert p.tests[0].sync.count == 15 and p.tests[0].sync.p50_ns > 0
    assert load_profile("my-disk").name == "my-disk"
    # refused before measuring without --force, replaced with it
    r = run(*args, "--save", "my-disk")
    assert "already exists" in one_line_error(r)
    r = run(*args, "--save", "my-disk", "--force", "--json")
    assert r.exit_code == 0, r.output
    assert "Saved" not in r.stdout and json.loads(r.stdout)["tests"]
    r = run(*args, "--save", "Bad Name")
    assert "bad profile name" in one_line_error(r)
    assert_empty(data)


def test_library_returns_a_profile(tmp_path):
    p = measure_profile(str(tmp_path), "lib-probe", sizes=[16384], ops=["fsync"],
                        direct="off", count=5, duration_s=None, file_size=1 << 20)
    assert isinstance(p, DeviceProfile)
    assert DeviceProfile.from_json(p.to_json()).tests[0].sync.count == 5
    assert_empty(tmp_path)


def test_quick_preset_is_small():
    specs = quick_tests()
    assert len(specs) <= 12
    assert {s.write_bytes for s in specs} == {16384, 2 << 20}
    assert {s.op for s in specs} == {"none", "fsync", "fdatasync", "dsync"}
    assert all(s.jobs == 1 for s in specs)


# ---- bad input -------------------------------------------------------------------------
def test_missing_path(tmp_path):
    assert "no such directory" in one_line_error(run(tmp_path / "nope"))


def test_regular_file(tmp_path):
    f = tmp_path / "file"
    f.write_text("keep me")
    assert "regular file" in one_line_error(run(f))
    assert f.read_text() == "keep me"


def test_character_device():
    assert "character device" in one_line_error(run("/dev/null"))


def _is_block(path):
    try:
        return stat.S_ISBLK(os.stat(path).st_mode)
    except OSError:
        return False


def test_block_device():
    blk = [d for d in (os.path.join("/dev", n) for n in sorted(os.listdir("/dev")))
           if _is_block(d)]
    if not blk:
        pytest.skip("no block device node in /dev")
    assert "block device" in one_line_error(run(blk[0]))


@pytest.mark.parametrize("path", ["/proc", "/sys"])
def test_pseudo_filesystems_refused(path):
    assert "pseudo-filesystem" in one_line_error(run(path))


def test_read_only_filesystem(tmp_path):
    with mounted_tmpfs(tmp_path / "ro", "ro,size=1m") as ro:
        err = one_line_error(run(ro, *SMALL, "--count", 5))
        assert "read-only" in err


def test_not_writable_for_non_root(tmp_path, monkeypatch):
    monkeypatch.setattr(probe.os, "access", lambda *a, **k: False)
    assert "not writable" in one_line_error(run(tmp_path, *SMALL, "--count", 5))
    assert_empty(tmp_path)


@pytest.mark.parametrize("args, needle", [
    (["--quick", "--sizes", "16k"], "--quick"),
    (["--duration", "1", "--count", "5"], "not both"),
    (["--sizes", "lots"], "not a size"),
    (["--ops", "fsync,flush"], "unknown op"),
    (["--jobs", "0"], "--jobs"),
    (["--jobs", "x"], "--jobs: not a whole number"),
    (["--duration", "0"], "--duration"),
    (["--count", "0"], "--count"),
    (["--sizes", "2M", "--file-size", "1M"], "larger than"),
])
def test_bad_options(tmp_path, args, needle):
    assert needle in one_line_error(run(tmp_path, *args))
    assert_empty(tmp_path)


def test_not_enough_free_space(tmp_path, monkeypatch):
    monkeypatch.setattr(probe, "_free_bytes", lambda path: 0)
    err = one_line_error(run(tmp_path, *SMALL, "--count", 5))
    assert "not enough free space" in err
    assert_empty(tmp_path)


# ---- O_DIRECT refused ------------------------------------------------------------------
def test_o_direct_refused_on_open(tmp_path, monkeypatch):
    real_open = probe._open_file

    def refuse_direct(path, flags, *mode):
        if flags & os.O_DIRECT:
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_open(path, flags, *mode)

    monkeypatch.setattr(probe, "_open_file", refuse_direct)
    r = run(tmp_path, *SMALL, "--ops", "fsync", "--direct", "both", "--count", 10, "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["facts"]["o_direct"]["supported"] is False
    assert "EINVAL" in d["facts"]["o_direct"]["reason"]
    direct, buffered = d["tests"]
    assert direct["direct"] and "O_DIRECT" in direct["unsupported"]
    assert direct["count"] == 0 and direct["write"] is None
    assert buffered["unsupported"] is None and buffered["sync"]["p50_ns"] > 0
    assert any("O_DIRECT" in w for w in d["warnings"])
    assert_empty(tmp_path)


def test_o_direct_refused_on_write(tmp_path, monkeypatch):
    real_pwrite = probe._pwrite

    def refuse_direct(fd, data, offset):
        if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT:
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_pwrite(fd, data, offset)

    monkeypatch.setattr(probe, "_pwrite", refuse_direct)
    r = run(tmp_path, *SMALL, "--ops", "fdatasync", "--direct", "both", "--count", 10)
    assert r.exit_code == 0, r.output
    assert "n/a*" in r.stdout and "refuses O_DIRECT writes" in r.stdout
    assert_empty(tmp_path)


def test_o_direct_refused_and_nothing_else_asked_is_an_error(tmp_path, monkeypatch):
    real_open = probe._open_file

    def refuse_direct(path, flags, *mode):
        if flags & os.O_DIRECT:
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_open(path, flags, *mode)

    monkeypatch.setattr(probe, "_open_file", refuse_direct)
    err = one_line_error(run(tmp_path, *SMALL, "--ops", "fsync", "--direct", "on",
                             "--count", 10, "--save", "never-saved"))
    assert "no test to run" in err and "does not support it" in err
    assert_empty(tmp_path)


def test_every_test_skipped_is_an_error(tmp_path, monkeypatch):
    real_pwrite = probe._pwrite

    def refuse_large_direct(fd, data, offset):
        # the one-block check of O_DIRECT passes; every 16k test's writes fail
        if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT and len(data) > probe.ALIGN:
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_pwrite(fd, data, offset)

    monkeypatch.setattr(probe, "_pwrite", refuse_large_direct)
    err = one_line_error(run(tmp_path, *SMALL, "--ops", "fsync,dsync", "--direct", "on",
                             "--count", 10))
    assert "no test could run" in err and "refuses O_DIRECT writes" in err
    assert_empty(tmp_path)


def test_o_direct_with_unaligned_sizes_only_is_refused_before_any_file(tmp_path):
    err = one_line_error(run(tmp_path, "--sizes", "1k,6k", "--direct", "on", "--count", 5))
    assert "no test to run" in err and "1k, 6k are not" in err
    assert_empty(tmp_path)
    # with buffered tests beside them the unaligned O_DIRECT ones are skipped, not refused
    r = run(tmp_path, "--sizes", "1k", "--file-size", "1M", "--ops", "fsync", "--count", 5)
    assert r.exit_code == 0, r.output
    assert "n/a*" in r.stdout
    assert_empty(tmp_path)


# ---- cleanup on errors and interrupts ---------------------------------------------------
def _failing_after(n, exc_factory, real):
    calls = {"n": 0}

    def f(*args):
        calls["n"] += 1
        if calls["n"] > n:
            raise exc_factory()
        return real(*args)

    return f


def test_probe_file_exists_during_run_and_is_ours(tmp_path, monkeypatch):
    seen = []
    real = os.fsync

    def spy(fd):
        names = os.listdir(tmp_path)
        seen.append(names)
        return real(fd)

    monkeypatch.setitem(probe._SYNC_CALLS, "fsync", spy)
    r = run(tmp_path, *SMALL, "--ops", "fsync", "--direct", "off", "--count", 3)
    assert r.exit_code == 0, r.output
    assert seen and all(len(n) == 1 and n[0].startswith(".innoflush-probe-") for n in seen)
    assert_empty(tmp_path)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_keyboard_interrupt_removes_probe_file(tmp_path, monkeypatch, jobs):
    monkeypatch.setitem(probe._SYNC_CALLS, "fsync",
                        _failing_after(5, KeyboardInterrupt, os.fsync))
    r = run(tmp_path, *SMALL, "--ops", "fsync", "--direct", "off", "--jobs", jobs,
            "--duration", 5)
    assert r.exit_code == 130, r.output
    assert "interrupted" in r.stderr
    assert_empty(tmp_path)


@pytest.mark.parametrize("signum,code,line", [
    (signal.SIGTERM, 143, "innoflush: terminated (SIGTERM)"),
    (signal.SIGHUP, 129, "innoflush: hung up (SIGHUP)")])
def test_sigterm_removes_probe_file(tmp_path, monkeypatch, signum, code, line):
    def term(fd):
        os.kill(os.getpid(), signum)
        return os.fdatasync(fd)

    before = signal.getsignal(signum)
    monkeypatch.setitem(probe._SYNC_CALLS, "fdatasync", term)
    r = run(tmp_path, *SMALL, "--ops", "fdatasync", "--direct", "off", "--duration", 5)
    assert r.exit_code == code, r.output
    assert r.stderr == line + "\n"
    assert_empty(tmp_path)
    assert signal.getsignal(signum) == before  # handler restored


def test_disk_full_mid_run(tmp_path, monkeypatch):
    # the layout and the O_DIRECT check write first; then ENOSPC during the test
    n_layout = 1 + 1
    monkeypatch.setattr(probe, "_pwrite",
                        _failing_after(n_layout + 10,
                                       lambda: OSError(errno.ENOSPC, "No space left on device"),
                                       os.pwrite))
    err = one_line_error(run(tmp_path, *SMALL, "--ops", "none", "--count", 50), code=1)
    assert "no space left" in err
    assert_empty(tmp_path)


def test_failure_in_a_thread_removes_probe_file(tmp_path, monkeypatch):
    monkeypatch.setitem(probe._SYNC_CALLS, "fsync",
                        _failing_after(6, lambda: OSError(errno.EIO, "Input/output error"),
                                       os.fsync))
    err = one_line_error(run(tmp_path, *SMALL, "--ops", "fsync", "--direct", "off",
                             "--jobs", 2, "--count", 50), code=1)
    assert "Input/output error" in err
    assert_empty(tmp_path)


# ---- never touch what is not ours ------------------------------------------------------
def test_planted_symlink_and_file_are_not_followed_or_removed(tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("precious")
    tokens = iter(["planted", "planted2"])
    monkeypatch.setattr(probe, "_token", lambda: next(tokens, uuid.uuid4().hex[:8]))
    pid = os.getpid()
    link = data / f".innoflush-probe-{pid}-planted.0"
    link.symlink_to(victim)
    other = data / f".innoflush-probe-{pid}-planted2.0"
    other.write_text("not yours either")
    r = run(data, *SMALL, "--ops", "fsync", "--direct", "off", "--count", 5)
    assert r.exit_code == 0, r.output
    assert victim.read_text() == "precious"
    assert link.is_symlink() and other.read_text() == "not yours either"
    assert sorted(os.listdir(data)) == sorted([link.name, other.name])


def test_directory_given_as_symlink_is_resolved(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    r = run(tmp_path / "link", *SMALL, "--ops", "none", "--direct", "off", "--count", 3,
            "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["path"] == str(real)
    assert_empty(real)


# ---- tmpfs -----------------------------------------------------------------------------
def test_tmpfs_is_measured_with_a_warning(tmp_path):
    with mounted_tmpfs(tmp_path / "mem", "size=16m") as mem:
        r = run(mem, *SMALL, "--ops", "fsync", "--direct", "both", "--count", 5, "--json")
        assert r.exit_code == 0, r.output
        d = json.loads(r.stdout)
        assert d["facts"]["fs_type"] == "tmpfs"
        assert any("tmpfs is memory" in w for w in d["warnings"])
        assert d["plp_verdict"]["verdict"] == "unknown"
        assert_empty(mem)
