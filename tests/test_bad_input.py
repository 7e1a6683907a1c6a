"""Bad input across every command, run as a user runs it: `python -m innoflush ...` in a
process of its own, with a fresh HOME and profile store, in an empty working directory.

Each row: the arguments, the exit code the command's page documents, and a piece of the
error line. Every row must give exactly one non-empty line on stderr starting
`innoflush: error:`, nothing on stdout, no traceback, and leave every directory it was
given (and the working directory, the home and the temporary directory) as it found them.
A lab server that does not start is the one documented exception to the single line
(docs/commands/lab-run.md, Exit codes): it is tested on its own against a real server.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILTIN = ROOT / "innoflush" / "profiles" / "builtin" / "samsung-990-pro.json"
SP = ["--profile", "samsung-990-pro"]


def _bad_profiles() -> dict[str, str]:
    """File name -> text: a valid profile, and the same broken one way each."""
    good = json.loads(BUILTIN.read_text())
    good["name"] = "mine"

    synced = next(i for i, t in enumerate(good["tests"]) if "sync" in t)

    def broken(set_value) -> str:
        d = copy.deepcopy(good)
        set_value(d["tests"][synced]["sync"])
        return json.dumps(d)

    def sync_p50(value):
        def f(sync):
            sync["p50_ns"] = value
        return f

    def drop_mean(sync):
        del sync["mean_ns"]

    return {
        "good.json": json.dumps(good),
        "zero.json": broken(sync_p50(0)),
        "huge.json": broken(sync_p50(1e300)),
        "nan.json": broken(sync_p50(float("nan"))),         # json writes NaN, Python reads it
        "no-mean.json": broken(drop_mean),
        "not-json.json": '{"schema": "innoflush.device-profile/1", "tests": [',
        # advise --inventory: one with no hosts, one with a host (port 1: never reached)
        "empty-inventory.ini": "# no hosts yet\n[db]\n",
        "one-host.txt": "127.0.0.1:1\n",
    }


# (id, argv, exit code, a piece of the error line); placeholders: {cwd} the working
# directory, {inputs} the directory of the files above, {port} a port nothing listens
# on, {ro} a read-only filesystem, {shm} a tmpfs
ROWS = [
    # ---- the top level and click's own checks, in every group ----
    ("unknown-command", ["frobnicate"], 2, "no such command 'frobnicate' (see 'innoflush --help')"),
    ("unknown-top-option", ["--frob"], 2, "no such option '--frob'"),
    ("profiles-unknown-subcommand", ["profiles", "frob"], 2,
     "(see 'innoflush profiles --help')"),
    ("lab-unknown-subcommand", ["lab", "frob"], 2, "(see 'innoflush lab --help')"),
    ("lab-run-unknown-option", ["lab", "run", "--frob"], 2,
     "no such option '--frob' (see 'innoflush lab run --help')"),
    ("profiles-list-unknown-option", ["profiles", "list", "--csv"], 2,
     "(see 'innoflush profiles list --help')"),
    # ---- measure ----
    ("measure-missing-path", ["measure"], 2,
     "missing argument 'PATH' (see 'innoflush measure --help')"),
    ("measure-bad-choice", ["measure", "{cwd}", "--direct", "sideways"], 2,
     "'sideways' is not one of 'both', 'on', 'off'"),
    ("measure-nonexistent-dir", ["measure", "{cwd}/nope"], 2, "no such directory"),
    ("measure-file-not-dir", ["measure", "{inputs}/good.json"], 2, "is a regular file"),
    ("measure-proc", ["measure", "/proc"], 2, "proc pseudo-filesystem"),
    ("measure-read-only", ["measure", "{ro}"], 2, "read-only filesystem"),
    ("measure-prom-missing-dir", ["measure", "{cwd}", "--prom", "{cwd}/nope/m.prom"], 2,
     "m.prom: no such directory"),
    ("measure-prom-read-only", ["measure", "{cwd}", "--prom", "{ro}/m.prom"], 2,
     "is not writable"),
    ("measure-1k-direct-on", ["measure", "{cwd}", "--sizes", "1k", "--direct", "on"], 2,
     "no test to run: O_DIRECT needs write sizes that are multiples of 4096"),
    ("measure-tmpfs-direct-unaligned",
     ["measure", "{shm}", "--sizes", "1k,6k", "--direct", "on"], 2, "1k, 6k are not"),
    ("measure-unparseable-size", ["measure", "{cwd}", "--sizes", "16q"], 2,
     "--sizes: not a size: '16q'"),
    ("measure-unparseable-duration", ["measure", "{cwd}", "--duration", "5s"], 2,
     "'5s' is not a valid float"),
    ("measure-zero-duration", ["measure", "{cwd}", "--duration", "0"], 2,
     "--duration must be above 0"),
    ("measure-nan-duration", ["measure", "{cwd}", "--duration", "nan"], 2,
     "'nan' is not a finite number"),
    ("measure-zero-jobs", ["measure", "{cwd}", "--jobs", "0"], 2, "--jobs must be between"),
    ("measure-bad-jobs", ["measure", "{cwd}", "--jobs", "two"], 2,
     "--jobs: not a whole number"),
    ("measure-negative-count", ["measure", "{cwd}", "--count", "-1"], 2,
     "--count must be at least 1"),
    ("measure-unknown-op", ["measure", "{cwd}", "--ops", "flush"], 2, "unknown op 'flush'"),
    ("measure-bad-save-name", ["measure", "{cwd}", "--save", "My Disk"], 2,
     "bad profile name 'My Disk'"),
    # ---- profiles ----
    ("profiles-show-missing-arg", ["profiles", "show"], 2, "missing argument 'NAME|FILE'"),
    ("profiles-show-unknown", ["profiles", "show", "nonexistent"], 2,
     "unknown profile 'nonexistent'"),
    ("profiles-import-zero-ns", ["profiles", "import", "{inputs}/zero.json"], 2,
     ".sync.p50_ns is 0 ns; it must be > 0 and <= 6e+10 ns (60 s)"),
    ("profiles-import-1e300-ns", ["profiles", "import", "{inputs}/huge.json"], 2,
     ".sync.p50_ns is 1e+300 ns"),
    ("profiles-import-nan", ["profiles", "import", "{inputs}/nan.json"], 2,
     "p50_ns must be a finite number"),
    ("profiles-import-missing-key", ["profiles", "import", "{inputs}/no-mean.json"], 2,
     "missing mean_ns"),
    ("profiles-import-not-json", ["profiles", "import", "{inputs}/not-json.json"], 2,
     "not-json.json"),
    ("profiles-import-nonexistent", ["profiles", "import", "{cwd}/none.json"], 2,
     "no such file"),
    ("profiles-import-bad-name", ["profiles", "import", "{inputs}/good.json", "--name", "A B"],
     2, "'A B'"),
    ("profiles-compare-unknown", ["profiles", "compare", "samsung-990-pro", "nope"], 2,
     "unknown profile 'nope'"),
    ("profiles-export-unknown", ["profiles", "export", "nope"], 2, "unknown profile 'nope'"),
    ("profiles-export-no-dir", ["profiles", "export", "samsung-990-pro", "-o",
                                "{cwd}/no/dir/x.json"], 2, "cannot write"),
    # ---- simulate ----
    ("simulate-missing-profile", ["simulate"], 2, "missing option '--profile'"),
    ("simulate-bad-flavor", ["simulate", *SP, "--flavor", "mysql-9"], 2,
     "'mysql-9' is not one of"),
    ("simulate-zero-connections", ["simulate", *SP, "--connections", "0"], 2,
     "--connections 0: each must be between 1 and 4096"),
    ("simulate-negative-connections", ["simulate", *SP, "--connections", "-4"], 2,
     "--connections -4"),
    ("simulate-huge-connections", ["simulate", *SP, "--connections", "100000"], 2,
     "--connections 100000"),
    ("simulate-zero-duration", ["simulate", *SP, "--duration", "0"], 2, "--duration must be"),
    ("simulate-nan-duration", ["simulate", *SP, "--duration", "nan"], 2,
     "'nan' is not a finite number"),
    ("simulate-1e300-cpu", ["simulate", *SP, "--cpu-us", "1e300"], 2,
     "--cpu-us 1e+300 is out of range"),
    ("simulate-negative-cpu", ["simulate", *SP, "--cpu-us", "-5"], 2, "must be >= 0"),
    ("simulate-trx-commit-5", ["simulate", *SP, "--trx-commit", "5"], 2,
     "innodb_flush_log_at_trx_commit must be 0, 1 or 2"),
    ("simulate-unknown-flush-method", ["simulate", *SP, "--flush-method", "O_SOMETIMES"], 2,
     "no innodb_flush_method 'O_SOMETIMES'"),
    ("simulate-non-numeric", ["simulate", *SP, "--io-capacity", "lots"], 2,
     "'lots' is not a valid integer"),
    ("simulate-unparseable-size", ["simulate", *SP, "--buffer-pool", "1x"], 2,
     "not a size: '1x'"),
    ("simulate-share-above-1", ["simulate", *SP, "--hot-page-share", "2"], 2,
     "hot_page_share must be in [0, 1]"),
    ("simulate-workload-nonexistent", ["simulate", *SP, "--workload", "nonexistent"], 2,
     "unknown workload 'nonexistent'"),
    ("simulate-profile-nan", ["simulate", "--profile", "{inputs}/nan.json"], 2,
     "must be a finite number"),
    ("simulate-json-and-csv", ["simulate", *SP, "--json", "--csv"], 2,
     "choose one of --json and --csv"),
    # ---- tps ----
    ("tps-zero-target", ["tps", *SP, "--target-tps", "0"], 2, "--target-tps must be positive"),
    ("tps-inf-target", ["tps", *SP, "--target-tps", "inf"], 2, "'inf' is not a finite number"),
    ("tps-non-numeric", ["tps", *SP, "--cpu-us", "fast"], 2, "'fast' is not a valid float"),
    ("tps-negative-cores", ["tps", *SP, "--cpu-cores", "-1"], 2, "--cpu-cores must be >= 1"),
    ("tps-profile-1e300", ["tps", "--profile", "{inputs}/huge.json"], 2, "1e+300 ns"),
    ("tps-profile-not-json", ["tps", "--profile", "{inputs}/not-json.json"], 2,
     "not-json.json"),
    # ---- advise (a port nothing listens on: nothing is ever reached) ----
    ("advise-refused-port", ["advise", "--port", "{port}", "-H", "127.0.0.1"], 2,
     "connection refused"),
    ("advise-prom-missing-dir", ["advise", "--port", "{port}", "--prom", "{cwd}/nope/a.prom"],
     2, "no such directory"),
    ("advise-port-out-of-range", ["advise", "--port", "99999"], 2, "port 99999"),
    ("advise-zero-interval", ["advise", "--port", "{port}", "--interval", "0"], 2,
     "--interval must be at least 1 second"),
    ("advise-zero-samples", ["advise", "--port", "{port}", "--samples", "0"], 2,
     "--samples must be at least 1"),
    ("advise-unknown-rule", ["advise", "--port", "{port}", "--ignore-rule", "no-such-rule"],
     2, "--ignore-rule 'no-such-rule': no such rule"),
    ("advise-workload-nonexistent", ["advise", "--port", "{port}", "--workload", "nope"], 2,
     "unknown workload 'nope'"),
    ("advise-bad-durability", ["advise", "--durability", "loose"], 2,
     "'loose' is not one of 'strict', 'relaxed'"),
    ("advise-missing-defaults-file", ["advise", "--defaults-file", "{cwd}/none.cnf"], 2,
     "no such option file"),
    ("advise-zero-connect-timeout", ["advise", "--port", "{port}", "--connect-timeout", "0"],
     2, "connect-timeout"),
    ("advise-inventory-missing", ["advise", "--inventory", "{cwd}/none.yml"], 2,
     "no such inventory file"),
    ("advise-inventory-empty", ["advise", "--inventory", "{inputs}/empty-inventory.ini"], 2,
     "the inventory has no hosts"),
    ("advise-inventory-zero-concurrency",
     ["advise", "--inventory", "{inputs}/one-host.txt", "--concurrency", "0"], 2,
     "--concurrency must be at least 1"),
    ("advise-concurrency-without-inventory", ["advise", "--concurrency", "4"], 2,
     "--concurrency needs --inventory"),
    ("advise-inventory-and-host", ["advise", "--inventory", "{inputs}/one-host.txt", "-h",
                                   "db1"], 2, "-h/--host cannot be used with --inventory"),
    # ---- lab ----
    ("lab-run-bad-backend", ["lab", "run", "--backend", "podman"], 2,
     "'podman' is not one of 'local', 'docker'"),
    ("lab-run-basedir-is-a-file", ["lab", "run", "--basedir", "{inputs}/good.json"], 2,
     "is a file (see 'innoflush lab run --help')"),
    ("lab-validate-markdown-no-dir", ["lab", "validate", "--markdown", "{cwd}/no/dir/r.md"],
     2, "--markdown"),
    ("lab-run-zero-connections", ["lab", "run", *SP, "--connections", "0"], 2,
     "--connections 0"),
    ("lab-run-nan-duration", ["lab", "run", *SP, "--duration", "nan"], 2,
     "'nan' is not a finite number"),
    ("lab-run-unknown-flush-method", ["lab", "run", *SP, "--flush-method", "bogus"], 2,
     "--flush-method 'bogus'"),
    ("lab-run-datadir-on-proc", ["lab", "run", *SP, "--datadir-on", "/proc"], 2,
     "/proc is on proc, a pseudo-filesystem of the kernel, not storage"),
    ("lab-run-datadir-on-nonexistent", ["lab", "run", *SP, "--datadir-on", "{cwd}/nope"], 2,
     "no such directory"),
    ("lab-run-datadir-on-read-only", ["lab", "run", *SP, "--datadir-on", "{ro}"], 2,
     "Read-only file system"),
    ("lab-run-profile-zero-ns", ["lab", "run", "--profile", "{inputs}/zero.json"], 2, "0 ns"),
    ("lab-run-emulate-unknown", ["lab", "run", *SP, "--emulate", "nope"], 2,
     "unknown profile 'nope'"),
    ("lab-run-channels-out-of-range", ["lab", "run", *SP, "--emulate-channels", "5"], 2,
     "5 is not in the range 0<=x<=1"),
    ("lab-calibrate-bad-connections", ["lab", "calibrate", "--connections", "x"], 2,
     "not a whole number"),
    ("lab-calibrate-negative-duration", ["lab", "calibrate", "--duration", "-1"], 2,
     "--duration must be between 1 and 3600"),
    ("lab-validate-replicates-out-of-range", ["lab", "validate", "--replicates", "9"], 2,
     "9 is not in the range 1<=x<=5"),
    ("lab-validate-unknown-device", ["lab", "validate", "--devices", "local,nope"], 2,
     "unknown profile 'nope'"),
]


def _ids(row) -> str:
    return row.values[0] if hasattr(row, "values") else row[0]


def _free_port() -> int:
    """A port nothing listens on: bound to learn it, then closed."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _tmpfs(path: Path, options: str):
    """A tmpfs of our own at path; pytest.skip, loudly, when this host cannot mount one."""
    path.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip(f"SKIPPED, NOT PASSED: mounting a tmpfs ({options}) needs root; this "
                    "row needs a read-only or a memory filesystem of its own (chmod 0555 "
                    "does not stop root)")
    got = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "innoflush-bad-input",
                          str(path)], capture_output=True, text=True, check=False)
    if got.returncode != 0:
        pytest.skip(f"SKIPPED, NOT PASSED: cannot mount a tmpfs here: {got.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=False)


def _listing(root: Path) -> list[str]:
    """Every path under root, with its size for files: what a run must leave unchanged."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            out.append(os.path.relpath(os.path.join(dirpath, name), root) + "/")
        for name in filenames:
            p = os.path.join(dirpath, name)
            out.append(f"{os.path.relpath(p, root)} {os.lstat(p).st_size}")
    return sorted(out)


def _make_sandbox(root: Path, stack: contextlib.ExitStack) -> dict:
    """The directories a row may name, its environment, and its mounts (made on demand)."""
    box = {"root": root, "cwd": root / "cwd", "inputs": root / "inputs",
           "home": root / "home", "tmp": root / "tmp"}
    for key in ("cwd", "inputs", "home", "tmp"):
        box[key].mkdir()
    for name, text in _bad_profiles().items():
        (box["inputs"] / name).write_text(text)
    env = {k: v for k, v in os.environ.items()
           if k not in ("INNOFLUSH_HOME", "XDG_DATA_HOME", "MYSQL_PWD", "MYSQL_HOST",
                        "MYSQL_TCP_PORT", "MYSQL_UNIX_PORT")}
    env.update(HOME=str(box["home"]), XDG_DATA_HOME=str(box["home"] / ".local" / "share"),
               TMPDIR=str(box["tmp"]), PYTHONPATH=str(ROOT), COLUMNS="100")
    box["env"] = env
    box["mount"] = lambda name, options: str(stack.enter_context(_tmpfs(root / name, options)))
    return box


@pytest.fixture
def sandbox(tmp_path):
    with contextlib.ExitStack() as stack:
        yield _make_sandbox(tmp_path, stack)


def _argv(args: list[str], box: dict) -> list[str]:
    def value(key: str) -> str:
        if key in ("cwd", "inputs"):
            return str(box[key])
        if key == "port":
            return str(_free_port())
        if key == "ro":
            return box["mount"]("ro", "ro,size=1m")
        if key == "shm":
            return box["mount"]("shm", "size=16m")
        raise KeyError(key)

    made: dict[str, str] = {}

    def once(m: re.Match) -> str:
        if m[1] not in made:
            made[m[1]] = value(m[1])
        return made[m[1]]

    return [re.sub(r"\{(\w+)\}", once, a) for a in args]


def _run(args: list[str], box: dict, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "innoflush", *args], cwd=box["cwd"],
                          env=box["env"], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, check=False)


@pytest.fixture(scope="module")
def table(request, tmp_path_factory):
    """Every selected row run once, several at a time (each process spends most of its
    second importing): row name -> (listing before, the finished process, listing
    after), or the reason the row cannot run here."""
    selected = {item.callspec.params["name"] for item in request.session.items
                if getattr(item, "originalname", None) == "test_bad_input"}
    rows = {(r.values if hasattr(r, "values") else r)[0]: (r.values if hasattr(r, "values")
                                                          else r)[1]
            for r in ROWS}
    out: dict = {}
    with contextlib.ExitStack() as stack:
        ready = {}
        for name in sorted(selected):
            box = _make_sandbox(tmp_path_factory.mktemp(name), stack)
            try:
                ready[name] = (box, _argv(rows[name], box))
            except pytest.skip.Exception as exc:
                out[name] = str(exc)

        def run(name: str):
            box, argv = ready[name]
            before = _listing(box["root"])
            done = _run(argv, box)
            return before, done, _listing(box["root"])

        with ThreadPoolExecutor(max_workers=max(2, 2 * (os.cpu_count() or 1))) as pool:
            out.update(zip(ready, pool.map(run, ready), strict=True))
        yield out


@pytest.mark.parametrize("name, args, code, needle", ROWS, ids=[_ids(r) for r in ROWS])
def test_bad_input(table, name, args, code, needle):
    got = table[name]
    if isinstance(got, str):
        pytest.skip(got)
    before, r, after = got
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].strip(), r.stderr
    assert lines[0].startswith("innoflush: error: "), lines[0]
    assert needle in lines[0], lines[0]
    assert r.returncode == code, (r.returncode, lines[0])
    assert r.stdout == ""
    assert after == before, "files left behind or changed"


def test_help_and_version_still_exit_0(sandbox):
    """The one-line errors do not touch click's own exits: --help and --version."""
    for args in (["--help"], ["--version"], ["lab", "run", "--help"],
                 ["profiles", "show", "-h"]):
        r = _run(args, sandbox)
        assert r.returncode == 0 and r.stderr == "", (args, r.stderr)
        assert r.stdout.startswith("Usage: innoflush" if "--version" not in args
                                   else "innoflush, version"), (args, r.stdout[:80])


def test_end_of_input_at_a_prompt_is_an_interruption(sandbox):
    """click's Abort (Ctrl-C or end of input at a prompt) ends as Ctrl-C does: one line,
    exit 130."""
    r = _run(["advise", "--ask-password", "--port", str(_free_port())], sandbox)
    assert r.returncode == 130, r.stderr
    assert r.stderr.splitlines()[-1] == "innoflush: interrupted"
    assert "Traceback" not in r.stderr and r.stdout == ""


@pytest.mark.server
def test_server_that_does_not_start(sandbox, server_binaries):
    """The documented exception: the error line, the log's [ERROR] lines (at most 5,
    indented), where the whole log was kept — in the temporary directory, the one file
    left, on purpose; the working directory holds nothing."""
    r = _run(["lab", "run", *SP, "--server-option", "garbage", "--duration", "1",
              "--no-advise"], sandbox, timeout=300)
    assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    first, *quoted, where = r.stderr.splitlines()
    assert first.startswith("innoflush: error: run 1/1 (O_DIRECT, trx_commit=1, 1 conn): "
                            "the server exited with code "), first
    assert first.endswith("; its error log says:")
    assert 1 <= len(quoted) <= 5 and all(q.startswith("    [ERROR]") for q in quoted)
    assert "unknown option '--garbage'" in quoted[0] or "garbage" in quoted[0], quoted
    assert where.startswith("  full log: ")
    kept = Path(where.removeprefix("  full log: "))
    assert kept.parent == sandbox["tmp"] and "[ERROR]" in kept.read_text()
    assert os.listdir(sandbox["tmp"]) == [kept.name]
    assert os.listdir(sandbox["cwd"]) == []
