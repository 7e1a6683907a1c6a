"""Output targets (issue 44): every file a user names is written as a regular file or
refused, never replaced when it is a device, a FIFO or a symlink; the profile and workload
stores are checked before a run and a failed save does not lose the report; standard
output on a full device is one line, exit 1.

Real commands in processes of their own (`python -m innoflush`), against device nodes,
FIFOs and symlinks of the test's own under its temporary directory — never the
system's /dev nodes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from innoflush.errors import InnoflushError, UsageError
from innoflush.outfile import check_output_target, write_output

pytestmark = pytest.mark.processes

ROOT = Path(__file__).resolve().parents[2]
SP = ["--profile", "samsung-990-pro"]
NULL, FULL = os.makedev(1, 3), os.makedev(1, 7)

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="SKIPPED, NOT PASSED: making a "
                                "device node or mounting a tmpfs needs root")


def _env(tmp_path: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("INNOFLUSH_HOME", "XDG_DATA_HOME")}
    env.update(HOME=str(tmp_path / "home"), INNOFLUSH_HOME=str(tmp_path / "home" / "store"),
               TMPDIR=str(tmp_path), PYTHONPATH=str(ROOT), COLUMNS="100")
    env.update(extra)
    return env


def run(tmp_path: Path, *args: str, stdout=subprocess.PIPE, env: dict | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess:
    (tmp_path / "home").mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "innoflush", *args], cwd=tmp_path,
                          env=env or _env(tmp_path), stdout=stdout, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, text=True, timeout=timeout, check=False)


def one_line(r: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("innoflush: error: "), r.stderr
    return lines[0]


def chardev(path: Path, dev: int) -> Path:
    os.mknod(path, 0o600 | stat.S_IFCHR, dev)
    return path


def node(path: Path) -> tuple[int, int]:
    st = os.lstat(path)
    return stat.S_IFMT(st.st_mode), st.st_rdev


# ---- the CLI: what is refused stays what it was; a symlink is followed --------------------

@needs_root
@pytest.mark.parametrize("kind", ["null", "full", "fifo", "link-to-full"])
def test_refused_nodes_survive_every_writer(tmp_path, kind):
    """The same node offered to each writer in turn: refused each time (exit 2, before any
    work), and afterwards the same type, device numbers and link target."""
    target = tmp_path / kind
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "link-to-full":
        chardev(tmp_path / "full-dev", FULL)
        target.symlink_to("full-dev")
    else:
        chardev(target, NULL if kind == "null" else FULL)
    before = {p.name: node(p) for p in tmp_path.iterdir()}
    for args in (["simulate", *SP, "--duration", "1", "--html", str(target)],
                 ["profiles", "export", "samsung-990-pro", "-o", str(target), "--force"],
                 ["measure", str(tmp_path), "--prom", str(target)],
                 ["advise", "--port", "1", "-H", "127.0.0.1", "--prom", str(target)],
                 ["lab", "validate", "--markdown", str(target)]):
        r = run(tmp_path, *args)
        assert r.returncode == 2 and r.stdout == "", (args, r.stderr)
        assert "not a regular file" in one_line(r), args
        assert {p.name: node(p) for p in tmp_path.iterdir() if p.name != "home"} == before
    if kind == "link-to-full":
        assert os.readlink(target) == "full-dev"


def test_a_symlink_to_a_regular_file_gets_the_content_and_stays_a_symlink(tmp_path):
    (tmp_path / "pages").mkdir()
    real = tmp_path / "pages" / "page.html"
    real.write_text("old")
    real.chmod(0o640)
    link = tmp_path / "latest.html"
    link.symlink_to("pages/page.html")
    r = run(tmp_path, "tps", *SP, "--html", str(link))
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and os.readlink(link) == "pages/page.html"
    assert real.read_text().startswith("<!DOCTYPE html>")
    assert stat.S_IMODE(real.stat().st_mode) == 0o640          # the file's mode is kept
    assert sorted(os.listdir(tmp_path / "pages")) == ["page.html"]   # no temporary file
    assert sorted(os.listdir(tmp_path)) == ["home", "latest.html", "pages"]


def test_a_dangling_symlink_is_followed_into_an_existing_directory(tmp_path):
    (tmp_path / "out").mkdir()
    link = tmp_path / "profile.json"
    link.symlink_to("out/exported.json")
    r = run(tmp_path, "profiles", "export", "samsung-990-pro", "-o", str(link))
    assert r.returncode == 0, r.stderr
    assert link.is_symlink()
    assert '"samsung-990-pro"' in (tmp_path / "out" / "exported.json").read_text()
    # without --force the file that is now there is not replaced
    r = run(tmp_path, "profiles", "export", "samsung-pm9a3", "-o", str(link))
    assert r.returncode == 2 and "already exists" in one_line(r)
    assert '"samsung-990-pro"' in (tmp_path / "out" / "exported.json").read_text()


def test_a_fifo_among_the_png_names_is_refused_at_the_write(tmp_path):
    """--png's files are named by the charts, known only after the run: a FIFO planted
    under one is refused when the page is written (not opened: nothing blocks), the
    report is still printed, the FIFO stays."""
    pngs = tmp_path / "png"
    pngs.mkdir()
    os.mkfifo(pngs / "tps-tps-per-connection.png")
    r = run(tmp_path, "tps", *SP, "--png", str(pngs), timeout=60)
    assert r.returncode == 2, r.stderr
    assert "tps-tps-per-connection.png: is a FIFO, not a regular file" in one_line(r)
    assert stat.S_ISFIFO(os.lstat(pngs / "tps-tps-per-connection.png").st_mode)
    assert os.listdir(pngs) == ["tps-tps-per-connection.png"]


# ---- the profile and workload stores: checked before the work --------------------------

def test_measure_save_into_a_store_that_cannot_be_created_is_refused_at_once(tmp_path):
    (tmp_path / "a-file").write_text("x")
    env = _env(tmp_path, INNOFLUSH_HOME=str(tmp_path / "a-file"))
    start = time.monotonic()
    r = run(tmp_path, "measure", str(tmp_path), "--sizes", "16k", "--ops", "fsync",
            "--direct", "off", "--duration", "30", "--save", "mine", env=env)
    assert time.monotonic() - start < 20          # the 30 s test never started
    assert r.returncode == 2 and r.stdout == ""
    assert "the profile store" in one_line(r) and "is a regular file, not a directory" \
        in one_line(r)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".innoflush-probe")]


@needs_root
def test_a_store_entry_that_links_to_a_device_is_refused_and_kept(tmp_path):
    store = tmp_path / "home" / "store" / "profiles"
    store.mkdir(parents=True)
    chardev(tmp_path / "null", NULL)
    (store / "mine.json").symlink_to(tmp_path / "null")
    r = run(tmp_path, "measure", str(tmp_path), "--count", "5", "--save", "mine", "--force")
    assert r.returncode == 2 and "links to" in one_line(r)
    r = run(tmp_path, "profiles", "import", str(ROOT / "innoflush" / "profiles" / "builtin"
                                                 / "samsung-990-pro.json"),
            "--name", "mine", "--force")
    assert r.returncode == 2 and "is a character device" in one_line(r)
    assert (store / "mine.json").is_symlink() and node(tmp_path / "null") == \
        (stat.S_IFCHR, NULL)


def test_lab_calibrate_and_validate_check_the_workload_store_first(tmp_path):
    (tmp_path / "a-file").write_text("x")
    env = _env(tmp_path, INNOFLUSH_HOME=str(tmp_path / "a-file"))
    for args in (["lab", "calibrate", "--save", "mine", "--duration", "30"],
                 ["lab", "validate", "--devices", "local", "--save-workload", "mine"]):
        start = time.monotonic()
        r = run(tmp_path, *args, env=env)
        assert r.returncode == 2 and r.stdout == "", r.stderr
        assert "the workload store" in one_line(r), args
        assert time.monotonic() - start < 20


@contextlib.contextmanager
def full_tmpfs(path: Path):
    """A tiny tmpfs of the test's own, filled up: a file can still be created in it (an
    inode), not written (no block) — what a disk filled during a run looks like."""
    path.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("SKIPPED, NOT PASSED: no mount(8) to make a full filesystem")
    got = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "innoflush-full",
                          str(path)], capture_output=True, text=True, check=False)
    if got.returncode != 0:
        pytest.skip(f"SKIPPED, NOT PASSED: cannot mount a tmpfs: {got.stderr.strip()}")
    try:
        (path / "profiles").mkdir()
        fd = os.open(path / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * 4096)
        finally:
            os.close(fd)
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=False)


@needs_root
def test_measure_save_that_fails_at_the_end_still_prints_the_report(tmp_path):
    """The store passed the check, then the disk is full when the profile is written: the
    measurement is printed first, then one error line, exit 1; no temporary file stays in
    the store and no probe file in the measured directory."""
    probe = tmp_path / "probe"
    probe.mkdir()
    with full_tmpfs(tmp_path / "full") as home:
        r = run(tmp_path, "measure", str(probe), "--sizes", "16k", "--ops", "fsync",
                "--direct", "off", "--count", "20", "--file-size", "1M", "--save", "mine",
                env=_env(tmp_path, INNOFLUSH_HOME=str(home)))
        assert r.returncode == 1, r.stderr
        assert f"innoflush measure {probe}" in r.stdout and "fsync" in r.stdout
        assert "Saved as device profile" not in r.stdout
        assert one_line(r).endswith("mine.json: cannot write: No space left on device")
        assert os.listdir(home / "profiles") == []
    assert os.listdir(probe) == []


# ---- standard output on a full device ----------------------------------------------------

@needs_root
@pytest.mark.parametrize("args", [["profiles", "list"], ["simulate", *SP, "--duration", "1"],
                                  ["profiles", "show", "samsung-990-pro", "--json"],
                                  ["--help"], ["simulate", "--help"]])
def test_stdout_on_a_full_device_is_one_line(tmp_path, args):
    full = chardev(tmp_path / "full", FULL)
    with open(full, "w") as out:
        r = run(tmp_path, *args, stdout=out)
    assert r.returncode == 1, r.stderr
    assert r.stderr == ("innoflush: error: cannot write to standard output: No space left "
                        "on device\n")
    assert node(full) == (stat.S_IFCHR, FULL)


@pytest.mark.parametrize("args", [["profiles", "list"], ["simulate", *SP, "--duration", "1"],
                                  ["--version"]])
def test_a_closed_pipe_stays_quiet(tmp_path, args):
    """`innoflush ... | head -1` once head has gone: no error line, no traceback (not even
    Python's "Exception ignored" at the last flush), exit 1 as before."""
    read_end, write_end = os.pipe()
    os.close(read_end)   # nobody will read: every write is EPIPE
    try:
        r = run(tmp_path, *args, stdout=write_end)
    finally:
        os.close(write_end)
    assert r.stderr == "" and r.returncode == 1, (r.returncode, r.stderr)


# ---- the writer itself ---------------------------------------------------------------------

def test_write_output_replaces_atomically_and_refuses_what_became_a_fifo(tmp_path):
    target = tmp_path / "report.md"
    assert check_output_target(target, "--markdown") == target
    write_output(target, "one\n", "--markdown")
    assert target.read_text() == "one\n"
    with pytest.raises(UsageError, match="already exists"):
        write_output(target, "two\n", "--markdown", exists_error="already exists")
    assert target.read_text() == "one\n"
    # the path changes into a FIFO during a (long) run: the write refuses it, removes its
    # temporary file and leaves the FIFO
    target.unlink()
    os.mkfifo(target)
    with pytest.raises(UsageError, match="report.md: is a FIFO, not a regular file"):
        write_output(target, "three\n", "--markdown")
    assert stat.S_ISFIFO(os.lstat(target).st_mode) and os.listdir(tmp_path) == ["report.md"]


@needs_root
def test_write_output_on_a_full_disk_removes_its_temporary_file(tmp_path):
    with full_tmpfs(tmp_path / "full") as d:
        target = d / "profiles" / "x.prom"
        with pytest.raises(InnoflushError, match="cannot write: No space left on device") \
                as got:
            write_output(target, b"x" * 100_000, "--prom")
        assert got.value.exit_code == 1
        assert os.listdir(d / "profiles") == []
