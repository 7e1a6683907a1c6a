"""The inventory readers (Ansible INI, YAML, a plain list), the per-host connection
options and option-file sections, and the fleet's table and exit code: pure logic."""

from __future__ import annotations

import pytest

from innoflush.fleet.ansible import expand_range
from innoflush.fleet.inventory import InventoryError, inventory_format, load_inventory
from innoflush.fleet.run import FleetSettings, advise_fleet, host_options, option_groups
from innoflush.fleet.table import fleet_exit, rank, render_table, summary

INI = """\
# the web tier
loose1 mysql_port=3310
[web]
db[01:03] mysql_user=alice
db04 mysql_user="bob smith" mysql_port=3399
[web:vars]
mysql_port = 3307
ansible_host="10.0.0.1"
[prod:children]
web
[prod:vars]
mysql_port=3306
mysql_user=carol
mysql_socket=/run/prod.sock
"""

YAML = """\
all:
  vars:
    mysql_user: root
  hosts:
    a1:
      mysql_port: 3311
  children:
    prod:
      vars: {mysql_port: 3306}
      children:
        eu:
          vars: {mysql_port: 3307}
          hosts:
            eu[a:c]:
            eu-x: {mysql_port: 4000, ansible_host: 1.2.3.4}
    staging:
      hosts:
        st[1:5:2]:
"""


def _load(tmp_path, name: str, text: str):
    p = tmp_path / name
    p.write_text(text)
    return {h.name: h for h in load_inventory(p)}


def test_ini_groups_vars_children_ranges(tmp_path):
    hosts = _load(tmp_path, "hosts.ini", INI)
    assert list(hosts) == ["loose1", "db01", "db02", "db03", "db04"]
    assert hosts["loose1"].groups == () and hosts["loose1"].port == 3310
    assert hosts["loose1"].address == "loose1"
    db1 = hosts["db01"]
    assert db1.groups == ("prod", "web")              # parent first
    assert db1.port == 3307                           # the child group's over the parent's
    assert db1.user == "alice"                        # the host's own over both groups
    assert db1.address == "10.0.0.1"                  # quotes removed
    assert db1.socket == "/run/prod.sock"             # inherited from the grandparent
    assert hosts["db04"].user == "bob smith" and hosts["db04"].port == 3399


def test_yaml_structure(tmp_path):
    hosts = _load(tmp_path, "hosts.yaml", YAML)
    assert set(hosts) == {"a1", "eua", "eub", "euc", "eu-x", "st1", "st3", "st5"}
    assert hosts["a1"].port == 3311 and hosts["a1"].user == "root"
    assert hosts["eub"].groups == ("prod", "eu") and hosts["eub"].port == 3307
    assert hosts["eu-x"].port == 4000 and hosts["eu-x"].address == "1.2.3.4"
    assert hosts["st3"].groups == ("staging",) and hosts["st3"].port is None


def test_plain_list(tmp_path):
    hosts = _load(tmp_path, "fleet", "# db hosts\nh1\nh2:3307  # a comment\n\n"
                  "[::1]:3308\nh1\n")
    assert list(hosts) == ["h1", "h2:3307", "[::1]:3308"]     # h1 twice is one host
    assert hosts["h2:3307"].address == "h2" and hosts["h2:3307"].port == 3307
    assert hosts["[::1]:3308"].address == "::1" and hosts["[::1]:3308"].port == 3308
    assert hosts["h1"].port is None


@pytest.mark.parametrize("name,text,fmt", [
    ("x.yml", "h1\n", "yaml"), ("x.ini", "h1\n", "ini"), ("x", "all:\n  hosts:\n", "yaml"),
    ("x", "[db]\nh1\n", "ini"), ("x", "h1 mysql_port=1\n", "ini"), ("x", "h1\nh2:3306\n", "list"),
])
def test_format_detection(name, text, fmt):
    assert inventory_format(name, text) == fmt


def test_expand_range():
    assert expand_range("db[08:10].x", "f") == ["db08.x", "db09.x", "db10.x"]
    assert expand_range("n[a:c][1:2]", "f") == ["na1", "na2", "nb1", "nb2", "nc1", "nc2"]
    with pytest.raises(InventoryError, match="empty range"):
        expand_range("db[5:1]", "f")


@pytest.mark.parametrize("name,text,match", [
    ("bad.ini", "[web\nh1\n", r"bad.ini:1: not a section header"),
    ("bad.ini", "[web:nonsense]\nh1\n", r"bad.ini:1: not a section header"),
    ("bad.ini", "[web]\nh1 mysql_port\n", r"bad.ini:2: expected key=value"),
    ("bad.ini", "[web:vars]\njust words\n", r"bad.ini:2: expected key=value"),
    ("bad.ini", "[web]\nh1 mysql_port=lots\n", r"host h1: mysql_port='lots' is not a number"),
    ("bad.ini", "[web]\nh1 mysql_port=99999\n", r"mysql_port=99999 is out of range"),
    ("bad.ini", "[a:children]\nb\n[b:children]\na\n[a]\nh1\n", "is its own ancestor"),
    ("bad.ini", "[web]\nh1 x='unclosed\n", r"bad.ini:2: No closing quotation"),
    ("bad.yml", "all:\n  hosts: [a, b]\n", "hosts are a mapping"),
    ("bad.yml", "all:\n  hostz:\n    a:\n", r"unknown key\(s\) hostz"),
    ("bad.yml", "all:\n  hosts:\n    a: {x: 1\n", r"bad.yml:\d+: not valid YAML"),
    ("bad.yml", "- a\n- b\n", "a YAML inventory is a mapping of groups"),
    ("bad.txt", "h1\nh 2 3\n", r"bad.txt:2: not a host or host:port"),
    ("empty.txt", "# nothing\n\n", "the inventory has no hosts"),
    ("empty.yml", "", "the inventory has no hosts"),
])
def test_bad_inventories(tmp_path, name, text, match):
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(InventoryError, match=match):
        load_inventory(p)


def test_missing_inventory(tmp_path):
    with pytest.raises(InventoryError, match="no such inventory file"):
        load_inventory(tmp_path / "nope.ini")
    with pytest.raises(InventoryError, match="is a directory"):
        load_inventory(tmp_path)


def test_credentials_sections_in_order(tmp_path):
    """[client], then [client_<group>] most general first, then [client_<host>]; a later
    section wins; the inventory's mysql_user wins over every file."""
    hosts = _load(tmp_path, "hosts.ini", "[web]\nw1\nw2 mysql_user=own\n"
                  "[prod:children]\nweb\n")
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[client]\nuser=u0\npassword=p0\nport=3300\n"
                   "[client_prod]\nuser=u_prod\npassword=p_prod\nport=3301\n"
                   "[client_web]\npassword=p_web\n"
                   "[client_w1]\npassword=p_w1\n")
    s = FleetSettings(defaults_file=str(cnf), user="cli")
    assert option_groups(hosts["w1"]) == ["_prod", "_web", "_w1"]
    o1 = host_options(hosts["w1"], s)
    assert (o1.host, o1.port, o1.user, o1.password) == ("w1", 3301, "cli", "p_w1")
    assert o1.password_source.endswith("[client_w1]")
    o2 = host_options(hosts["w2"], s)
    assert (o2.user, o2.password) == ("own", "p_web")
    assert "p_web" not in repr(o2)
    s.password = "typed"       # -p: the prompt's answer for every host
    assert host_options(hosts["w2"], s).password == "typed"


def _ok(host: str, exit_code: int, severities=()) -> dict:
    findings = [{"id": f"x.{i}", "severity": sev, "current": "a", "recommended": "b",
                 "predicted": {"change": {"tps_pct": 12.0, "commit_latency_p99_pct": -40.0}}}
                for i, sev in enumerate(severities)]
    return {"host": host, "status": "ok", "exit": exit_code, "error": None, "report": {
        "findings": findings, "server": {"product": "mariadb", "version": "10.11.6-MariaDB"},
        "settings": {"innodb_flush_method": "O_DIRECT", "innodb_flush_log_at_trx_commit": 1,
                     "log_bin": True, "sync_binlog": 0}}}


def _failed(host: str, kind: str) -> dict:
    return {"host": host, "status": "failed", "exit": 2, "report": None,
            "error": {"kind": kind, "message": f"{kind} at {host}"}}


def test_table_worst_first_and_exit():
    rs = [_ok("a-fine", 0), _ok("b-perf", 3, ["performance"]),
          _ok("c-safety", 3, ["performance", "data-safety"]), _failed("d-down", "refused"),
          _ok("e-unexplained", 4), _ok("f-dur", 3, ["durability"])]
    assert [rank(r) for r in rs] == [5, 3, 1, 0, 4, 2]
    lines = render_table(rs).splitlines()
    order = [ln.split()[0] for ln in lines[2:]]
    assert order == ["d-down", "c-safety", "f-dur", "b-perf", "e-unexplained", "a-fine"]
    assert "refused: refused at d-down" in lines[2]
    assert "x.0: a -> b (+1)" in lines[3] and "tps +12%, p99 -40%" in lines[3]
    assert "mariadb 10.11.6 " in lines[3]
    assert fleet_exit(rs) == 2
    assert fleet_exit(rs[:3]) == 3
    assert fleet_exit([rs[0], rs[4]]) == 4
    assert fleet_exit([rs[0]]) == 0
    line = summary(rs, ["g"], 4, 3, 1.5)
    assert line.startswith("7 hosts: 5 advised, 1 data-safety, 1 durability, "
                           "1 performance, 1 unexplained, 1 nothing to change; 1 failed "
                           "(refused 1); 1 not finished (interrupted)")
    assert "at most 3 at once (--concurrency 4)" in line


def test_pool_is_bounded_and_a_crash_is_one_result(tmp_path):
    """advise_fleet with a stand-in work function: never more than N at once, every host
    a result; the real work function (advise_host) is run against real servers in
    test_fleet_server.py."""
    import threading
    import time

    hosts = list(_load(tmp_path, "l.txt", "\n".join(f"h{i}" for i in range(20))).values())
    lock, now, most = threading.Lock(), [0], [0]

    def work(h, settings, sessions):
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
        time.sleep(0.02)
        with lock:
            now[0] -= 1
        return _failed(h.name, "refused") if h.name == "h3" else _ok(h.name, 0)

    run = advise_fleet(hosts, FleetSettings(), 3, work=work)
    assert len(run.results) == 20 and not run.not_done and not run.interrupted
    assert most[0] <= 3 and run.max_concurrent == most[0]
    assert fleet_exit(run.results) == 2


def test_advise_host_failure_is_a_result(tmp_path, monkeypatch):
    """A host whose login path does not exist: its own failure, with a kind (no server
    needed: it fails before connecting)."""
    from innoflush.fleet.run import advise_host

    monkeypatch.setenv("MYSQL_TEST_LOGIN_FILE", str(tmp_path / "none.mylogin.cnf"))
    hosts = _load(tmp_path, "h.ini", "h1 mysql_login_path=nope mysql_port=1\n")
    r = advise_host(hosts["h1"], FleetSettings())
    assert r["status"] == "failed" and r["exit"] == 2
    assert r["error"]["kind"] == "usage"
