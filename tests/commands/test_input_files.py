"""Input files beyond the one-line rows of test_bad_input.py: a world-writable option or
login path file is ignored with a warning, as the mysql clients do (and its settings are
really not used); the fleet warns once, not once a host; an inventory whose groups share
children (YAML aliases, or a ladder of groups) resolves in time linear in its size; the
JSON depth cap admits the deepest document innoflush writes.

Each CLI case runs `python -m innoflush` in a process of its own, with its own HOME, as a
user would; nothing here reaches a server (a port nothing listens on)."""

from __future__ import annotations

import gzip
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from innoflush import infile
from innoflush.errors import ProfileError, UsageError
from innoflush.jsonfile import MAX_JSON_DEPTH, parse_json

ROOT = Path(__file__).resolve().parents[2]
# a setting that, read, ends the run with its own error before any connection
BOGUS = "[client]\nssl-mode=bogus\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(tmp_path: Path, *args: str, env: dict | None = None
         ) -> subprocess.CompletedProcess:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("MYSQL") and k not in ("INNOFLUSH_HOME", "XDG_DATA_HOME")}
    base.update(HOME=str(home), PYTHONPATH=str(ROOT), INNOFLUSH_HOME=str(tmp_path / "store"),
                **(env or {}))
    return subprocess.run([sys.executable, "-m", "innoflush", *args], cwd=tmp_path,
                          env=base, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, check=False)


def _option_file(path: Path, mode: int) -> Path:
    path.write_text(BOGUS)
    os.chmod(path, mode)
    return path


def _refused(r: subprocess.CompletedProcess, port: int) -> None:
    """The run went on to connect (to nothing): the file's setting was not used."""
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines()[-1] == (
        f"innoflush: error: cannot connect to 127.0.0.1:{port}: connection refused (is the "
        "server running, and on this port?)")


@pytest.mark.parametrize("mode, used", [(0o600, True), (0o644, True), (0o666, False),
                                        (0o602, False)])
def test_world_writable_defaults_file_is_ignored(tmp_path, mode, used):
    cnf = _option_file(tmp_path / "my.cnf", mode)
    port = _free_port()
    r = _run(tmp_path, "advise", "-H", "127.0.0.1", "--port", str(port),
             "--defaults-file", str(cnf))
    if used:
        assert r.returncode == 2 and r.stderr.splitlines() == [
            f"innoflush: error: option file {cnf}: ssl-mode 'bogus' is not one of DISABLED, "
            "PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY"], r.stderr
        return
    assert r.stderr.splitlines()[0] == (
        f"innoflush: warning: world-writable option file '{cnf}' is ignored")
    assert len(r.stderr.splitlines()) == 2, r.stderr
    _refused(r, port)


def test_world_writable_my_cnf_in_home_is_ignored(tmp_path):
    (tmp_path / "home").mkdir()
    cnf = _option_file(tmp_path / "home" / ".my.cnf", 0o666)
    port = _free_port()
    r = _run(tmp_path, "advise", "-H", "127.0.0.1", "--port", str(port))
    assert r.stderr.splitlines()[0] == (
        f"innoflush: warning: world-writable option file '{cnf}' is ignored"), r.stderr
    _refused(r, port)


@pytest.mark.parametrize("mode", [0o600, 0o666])
def test_world_writable_login_path_file_is_ignored(tmp_path, mode):
    login = tmp_path / "mylogin.cnf"
    login.write_bytes(b"xx")     # not a login path file: read, it is an error
    os.chmod(login, mode)
    port = _free_port()
    r = _run(tmp_path, "advise", "-H", "127.0.0.1", "--port", str(port),
             env={"MYSQL_TEST_LOGIN_FILE": str(login)})
    if mode == 0o600:
        assert r.returncode == 2 and r.stderr.splitlines() == [
            f"innoflush: error: {login}: too short to be a login path file"], r.stderr
        return
    assert r.stderr.splitlines()[0] == (
        f"innoflush: warning: world-writable login path file '{login}' is ignored")
    _refused(r, port)


def test_fleet_warns_once_per_file(tmp_path):
    """Each host resolves its options from the same file: one warning, not one a host."""
    (tmp_path / "home").mkdir()
    cnf = _option_file(tmp_path / "home" / ".my.cnf", 0o666)
    inventory = tmp_path / "hosts.txt"
    inventory.write_text("".join(f"127.0.0.1:{_free_port()}\n" for _ in range(3)))
    r = _run(tmp_path, "advise", "--inventory", str(inventory), "--json")
    warning = f"innoflush: warning: world-writable option file '{cnf}' is ignored"
    assert r.stderr.splitlines().count(warning) == 1, r.stderr
    assert "Traceback" not in r.stderr and r.returncode == 2
    # the file's ssl-mode was not read: the three hosts were tried, each refused
    assert r.stdout.count('"kind":"refused"') == 3, r.stdout


def _yaml_ladder(levels: int) -> str:
    """Each level's two groups alias the level below: walked naively, 2**levels paths."""
    lines = ["l0: &l0 {hosts: {h1: null}}"]
    lines += [f"l{i}: &l{i} {{children: {{a{i}: *l{i - 1}, b{i}: *l{i - 1}}}}}"
              for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def _ini_ladder(levels: int) -> str:
    """The same without aliases: each level's two groups both have the level below's two
    as children."""
    out = ["[a0]\nh1\n", "[b0]\nh1\n"]
    for i in range(1, levels + 1):
        for g in "ab":
            out.append(f"[{g}{i}:children]\na{i - 1}\nb{i - 1}\n")
    return "".join(out)


@pytest.mark.parametrize("name, text, groups", [
    ("ladder.yml", _yaml_ladder(40), 1 + 40 + 2 * 40),
    ("ladder.ini", _ini_ladder(40), 2 * 41)])
def test_shared_child_groups_resolve_quickly(tmp_path, name, text, groups):
    """40 levels: walked once a path, 2**40 steps (never ends); once a group, a blink.
    In a process of its own, so that the old behaviour fails by its timeout."""
    path = tmp_path / name
    path.write_text(text)
    code = ("import sys; from innoflush.fleet.inventory import load_inventory; "
            "hosts = load_inventory(sys.argv[1]); "
            "print(len(hosts), len(hosts[0].groups))")
    r = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                       text=True, timeout=30, check=False, env={**os.environ,
                                                                "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", str(groups)]


def test_depth_cap_admits_what_innoflush_writes():
    """The deepest and largest JSON innoflush writes (a lab validate report) is within
    both caps; one level over the depth cap is refused before parsing."""
    reports = sorted((ROOT / "docs" / "validation").glob("*.json.gz"))
    assert reports
    biggest = max((gzip.decompress(p.read_bytes()) for p in reports), key=len)
    assert len(biggest) < infile.INPUT_CAP
    parse_json(biggest.decode("utf-8"), "report")
    ok = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert parse_json(ok, "ok") == parse_json(ok, "ok")
    # brackets inside strings are text, not nesting
    assert parse_json('["' + "[" * 1000 + '\\"' + "{" * 1000 + '"]', "s")[0].startswith("[")
    over = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    with pytest.raises(ProfileError, match=f"nested more than {MAX_JSON_DEPTH} levels"):
        parse_json(over, "over.json")


def test_a_file_at_the_cap_is_read_one_byte_over_is_not(tmp_path):
    p = tmp_path / "f"
    with open(p, "wb") as f:
        f.truncate(infile.INPUT_CAP)
    assert len(infile.read_bytes(p)) == infile.INPUT_CAP
    with open(p, "ab") as f:
        f.write(b"x")
    with pytest.raises(UsageError, match="larger than 8 MiB, the cap on input files"):
        infile.read_bytes(p)
