"""Values checked where they are typed (issue 44), beyond the rows of test_bad_input.py:
what needs a peer of its own (a listener that sends a malformed greeting, or none), a
signal, or the inventory's reading of ``host:port``.

Every CLI run is the real command in a process of its own, as a user runs it."""

from __future__ import annotations

import json
import os
import pickle
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import click
import pytest

from innoflush.errors import OptionError, UsageError, option_values
from innoflush.fleet.inventory import InventoryError, load_inventory
from innoflush.lab.server.server_args import parse_server_options, reserved_reading

ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str], cwd: Path, timeout: float = 120, **kw):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MYSQL")}
    env.update(HOME=str(cwd), PYTHONPATH=str(ROOT), XDG_DATA_HOME=str(cwd / "share"))
    return subprocess.run([sys.executable, "-m", "innoflush", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, check=False, **kw)


# ---- a peer that answers with a greeting PyMySQL cannot read ------------------------------

def _packet(payload: bytes, seq: int = 0) -> bytes:
    return struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload


# protocol 10, then a version string that is not text (PyMySQL reads it as latin-1, then
# fails on its number: ValueError)
BAD_VERSION = b"\x0a\xff\xfe\xfd\x00" + b"\x00" * 40
# a whole greeting whose auth plugin name is not UTF-8 (UnicodeDecodeError)
BAD_PLUGIN = (b"\x0a5.7.0\x00" + b"\x01\x00\x00\x00" + b"abcdefgh\x00" + b"\xff\xff"
              + b"\x21" + b"\x02\x00" + b"\xff\xff" + b"\x15" + b"\x00" * 10
              + b"\xfa\xfb\xfc\xfd\xfe\xff\x80\x81\x82\x83\x84\x85\x00"
              + b"mysql_native_password\xff\xfe\x00")


class Listener:
    """A TCP listener on 127.0.0.1 (or ::1): each connection gets greeting (None: nothing,
    the connection is held open until the listener closes)."""

    def __init__(self, greeting: bytes | None, family: int = socket.AF_INET):
        self.greeting = greeting
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.bind(("::1" if family == socket.AF_INET6 else "127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.accepted = threading.Event()
        self._held: list[socket.socket] = []
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.set()
            if self.greeting is not None:
                conn.sendall(_packet(self.greeting))
            self._held.append(conn)

    def __enter__(self) -> Listener:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop = True
        self.sock.close()
        for c in self._held:
            c.close()


@pytest.mark.parametrize("greeting, cause", [(BAD_VERSION, "ValueError"),
                                             (BAD_PLUGIN, "UnicodeDecodeError")],
                         ids=["version-not-text", "plugin-name-not-utf8"])
def test_a_greeting_that_cannot_be_read_is_one_line(tmp_path, greeting, cause):
    with Listener(greeting) as peer:
        r = _run(["advise", "-H", "127.0.0.1", "-P", str(peer.port), "--connect-timeout",
                  "5"], tmp_path)
    assert "Traceback" not in r.stderr and r.stdout == "", r.stderr
    assert r.stderr.splitlines() == [
        f"innoflush: error: not a MySQL server at 127.0.0.1:{peer.port} (its greeting "
        f"cannot be read: {cause})"], r.stderr
    assert r.returncode == 2


def test_a_name_with_an_empty_label_is_not_a_server_that_answered(tmp_path):
    """`-h .db1` never reaches a server: the name cannot even be encoded for a look-up."""
    r = _run(["advise", "-h", ".db1", "-P", "3306"], tmp_path)
    assert r.stderr.splitlines() == ["innoflush: error: cannot connect to .db1:3306: invalid "
                                     "host name (an empty or too long label)"], r.stderr
    assert r.returncode == 2 and "greeting" not in r.stderr


# ---- the inventory: host:port is the port; ranges capped ---------------------------------

def _inventory(tmp_path: Path, name: str, text: str) -> dict:
    p = tmp_path / name
    p.write_text(text)
    return {h.name: h for h in load_inventory(p)}


def test_ini_host_port_is_the_mysql_port(tmp_path):
    hosts = _inventory(tmp_path, "hosts.ini", "[db]\n127.0.0.1:3601\n127.0.0.1:3602 "
                       "mysql_user=x\n[::1]:3603\nfd00::12\ndb[1:2]:3307\nplain\n"
                       "[db:vars]\nmysql_port=3306\n")
    got = {n: (h.address, h.port) for n, h in hosts.items()}
    assert got == {"127.0.0.1:3601": ("127.0.0.1", 3601), "127.0.0.1:3602": ("127.0.0.1", 3602),
                   "[::1]:3603": ("::1", 3603), "fd00::12": ("fd00::12", 3306),
                   "db1:3307": ("db1", 3307), "db2:3307": ("db2", 3307),
                   "plain": ("plain", 3306)}
    assert hosts["127.0.0.1:3602"].user == "x"


def test_yaml_host_port_is_the_mysql_port(tmp_path):
    hosts = _inventory(tmp_path, "hosts.yml", 'all:\n  hosts:\n    "10.0.0.5:3601":\n'
                       '    "[::1]:3602": {mysql_port: 4000}\n')
    assert (hosts["10.0.0.5:3601"].address, hosts["10.0.0.5:3601"].port) == ("10.0.0.5", 3601)
    # the host's own variable wins over the port in its name
    assert (hosts["[::1]:3602"].address, hosts["[::1]:3602"].port) == ("::1", 4000)


@pytest.mark.parametrize("line, needle", [
    ("db1:x", ":2: 'db1:x': the port 'x' is not a number"),
    ("db1:", ":2: 'db1:': the port '' is not a number"),
    (":3306", ":2: not a host, host:port or [ipv6]:port: ':3306'"),
    ("a:b:c", ":2: not a host, host:port or [ipv6]:port: 'a:b:c'"),
    ("[::1]:x", ":2: '[::1]:x': the port 'x' is not a number"),
    ("h[1:5000]", ":2: 'h[1:5000]' makes 5,000 hosts; an inventory holds at most 4096"),
    ("h[a:z][0:999]", ":2: 'h[a:z][0:999]' makes 26,000 hosts; an inventory holds at most 4096"),
])
def test_a_malformed_host_line_is_a_file_line_error(tmp_path, line, needle):
    with pytest.raises(InventoryError) as got:
        _inventory(tmp_path, "bad.ini", f"[db]\n{line}\n")
    assert str(got.value).endswith(needle), str(got.value)


def test_a_range_at_the_cap_expands_and_one_host_more_does_not(tmp_path):
    assert len(_inventory(tmp_path, "full.ini", "[db]\nh[1:4096]\n")) == 4096
    with pytest.raises(InventoryError, match=r"full2\.ini:3: more than 4096 hosts"):
        _inventory(tmp_path, "full2.ini", "[db]\nh[1:4096]\nextra\n")
    with pytest.raises(InventoryError, match=r"list\.txt:4097: more than 4096 hosts"):
        _inventory(tmp_path, "list.txt", "".join(f"h{i}\n" for i in range(4097)))


def test_the_fleet_connects_to_the_port_of_an_ini_line(tmp_path):
    """`127.0.0.1:PORT` under an INI [group] reaches PORT on 127.0.0.1 (it used to become
    the host `127.0.0.1:PORT:3306`, an unknown host name): the peer there answers with a
    greeting that cannot be read, which the host's result says."""
    with Listener(BAD_PLUGIN) as v4, Listener(BAD_PLUGIN, socket.AF_INET6) as v6:
        inv = tmp_path / "hosts.ini"
        inv.write_text(f"[db]\n127.0.0.1:{v4.port}\n[::1]:{v6.port}\n")
        r = _run(["advise", "--inventory", str(inv), "--json", "--connect-timeout", "5"],
                 tmp_path)
    assert "Traceback" not in r.stderr, r.stderr
    results = {d["host"]: d for d in map(json.loads, r.stdout.splitlines())}
    assert set(results) == {f"127.0.0.1:{v4.port}", f"[::1]:{v6.port}"}
    for host, (address, port) in ((f"127.0.0.1:{v4.port}", ("127.0.0.1", v4.port)),
                                  (f"[::1]:{v6.port}", ("::1", v6.port))):
        assert (results[host]["address"], results[host]["port"]) == (address, port)
        assert results[host]["error"]["kind"] == "not-mysql", results[host]
        assert "greeting cannot be read" in results[host]["error"]["message"]
    assert r.returncode == 2   # a host failed


def test_ctrl_c_while_the_hosts_are_advised(tmp_path):
    """Ctrl-C during the fleet's work: what finished is printed, then one line, exit 130.
    The peers accept and never greet, so both hosts are mid-connect when it lands."""
    with Listener(None) as peer:
        inv = tmp_path / "hosts.ini"
        inv.write_text(f"[db]\n127.0.0.1:{peer.port}\nlocalhost:{peer.port}\n"
                       "h[1:4000].invalid\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("MYSQL")}
        env.update(HOME=str(tmp_path), PYTHONPATH=str(ROOT))
        proc = subprocess.Popen([sys.executable, "-m", "innoflush", "advise", "--inventory",
                                 str(inv), "--connect-timeout", "60", "--concurrency", "2"],
                                cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                                start_new_session=True)
        try:
            assert peer.accepted.wait(60), "no host was being advised"
            time.sleep(0.3)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert "Traceback" not in err, err
    assert err.splitlines()[-1] == "innoflush: interrupted", err
    assert proc.returncode == 130
    assert "4002 hosts: 0 advised" in out and "not finished (interrupted)" in out, out


# ---- --server-option: NAME=VALUE, never one of the lab's own -----------------------------

@pytest.mark.parametrize("name", [
    "datadir", "DataDir", "loose-datadir", "loose_datadir", "data", "bind_address",
    "bind", "loose-bind-address", "maximum-port", "sock", "skip-networking",
    "disable-skip-networking", "loose-skip-networking", "innodb_data_home_dir",
    "innodb-log-group-home-dir", "log_error", "pid_file", "tmpdir", "mysqlx",
    "mysqlx_bind_address", "admin-address", "user", "skip-log-bin", "defaults-file"])
def test_every_name_mysqld_reads_as_a_lab_option_is_refused(name):
    assert reserved_reading(name) is not None
    with pytest.raises(OptionError, match="set by the lab"):
        parse_server_options([f"{name}=x"])


@pytest.mark.parametrize("name", [
    "innodb_log_file_size", "innodb-doublewrite", "skip-name-resolve", "port-open-timeout",
    "log-bin-trust-function-creators", "log-error-verbosity", "loose-innodb-foo",
    "tmp_table_size", "innodb_log_buffer_size", "max_connections", "user_stat"])
def test_other_options_pass_as_given(name):
    assert parse_server_options([f"{name}=1"]) == {name.replace("-", "_"): "1"}


# ---- OptionError: the "(see ... --help)" of a bad option value, nowhere else --------------

def test_option_error_names_the_command_it_was_raised_in():
    assert OptionError("x").command is None          # outside a command
    group = click.Group("innoflush")
    sub = click.Group("lab")
    group.add_command(sub)

    @sub.command("run")
    def run() -> None:
        raise OptionError("bad")

    with pytest.raises(OptionError) as got:
        group.main(["lab", "run"], standalone_mode=False)
    assert got.value.command == "innoflush lab run"
    # a worker process's error comes back pickled: message and command kept
    back = pickle.loads(pickle.dumps(got.value))
    assert (str(back), back.command) == ("bad", "innoflush lab run")


def test_option_values_turns_plain_usage_errors_only():
    with pytest.raises(OptionError):
        with option_values():
            raise UsageError("innodb_flush_log_at_trx_commit must be 0, 1 or 2")
    with pytest.raises(InventoryError) as got:    # a subclass: a file's contents
        with option_values():
            raise InventoryError("hosts.ini:2: bad")
    assert not isinstance(got.value, OptionError)


def test_errors_about_files_and_connections_do_not_point_at_help(tmp_path):
    """The help cannot fix a profile's contents or a refused port: no "(see ...)"."""
    bad = tmp_path / "zero.json"
    good = json.loads((ROOT / "innoflush/profiles/builtin/samsung-990-pro.json").read_text())
    synced = next(t for t in good["tests"] if "sync" in t)
    synced["sync"]["p50_ns"] = 0
    bad.write_text(json.dumps(good))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for args in (["simulate", "--profile", str(bad)],
                 ["advise", "-H", "127.0.0.1", "-P", str(port)],
                 ["advise", "--inventory", str(tmp_path / "none.ini")]):
        r = _run(args, tmp_path)
        assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, (args, r.stderr)
        assert "--help')" not in r.stderr, (args, r.stderr)
