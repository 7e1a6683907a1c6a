"""`innoflush advise` against a real MariaDB started by the test suite, under load.

The session server (tests/conftest.py) runs O_DIRECT, trx_commit=1; two more servers,
one per flush method, show the counters moving as MariaDB's semantics say.
"""

from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main
from innoflush.lab.server.local import ServerOptions, free_port
from innoflush.live.connect import ReadOnlySession
from innoflush.live.observed import observe
from innoflush.live.sampling import combine, sample

pytestmark = pytest.mark.server

ROOT_ENV = {"MYSQL_PWD": "", "HOME": "/nonexistent"}


def advise(server, *args, env=None, user="root"):
    return CliRunner().invoke(
        main, ["advise", "--host", "127.0.0.1", "--port", str(server.port), "--user", user,
               *args], env={**ROOT_ENV, **(env or {})}, catch_exceptions=False)


def one_line(result) -> str:
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    return lines[0]


def _why_not_explained(stdout: str) -> str:
    """The report's warnings and the fit's reasons, for an assertion's message."""
    try:
        rep = json.loads(stdout)
    except ValueError:
        return stdout[-2000:]
    return json.dumps({"warnings": rep.get("warnings"),
                       "fit_reasons": (rep.get("fit") or {}).get("reasons")}, indent=1)


def advise_explained(server, *args):
    """advise on a live window the fit must explain, with one more window if it did not.

    Exit 4 (the model does not explain what it saw) is the tool's honest answer to a
    window the shared host disturbed: a CI run once saw a 1-thread load at 214 commits/s
    against the model's 249 (+16 %, tolerance 15 %). Two windows in a row unexplained
    is a failure; the first one's reasons stay in the assertion's message.
    """
    first = advise(server, *args)
    if first.exit_code != 4:
        return first, ""
    return advise(server, *args), "first window, exit 4:\n" + first.stdout[-3000:]


def test_advise_under_load_relaxed(volatile_server, insert_load, profile_files):
    with insert_load(volatile_server, threads=3) as load:
        load.wait_started()
        # 5 s, not 3: the fit must explain this window within its tolerances, and a
        # 3-s window of 3 threads was once outside them in a loaded CI run (exit 4)
        r, first = advise_explained(volatile_server, "--interval", "5", "--profile",
                                    profile_files["volatile"], "--durability", "relaxed",
                                    "--json")
    assert r.exit_code == 3, r.stderr + _why_not_explained(r.stdout) + first
    rep = json.loads(r.stdout)
    o = rep["observed"]
    assert rep["server"]["product"] == "mariadb"
    assert rep["server"]["sim_flavor"].startswith("mariadb")
    assert rep["settings"]["innodb_flush_method"] == "O_DIRECT"
    assert o["commits"] > 0 and o["deltas"]["Innodb_data_fsyncs"] > 0
    assert o["commits_source"].startswith("autocommit write statements")
    assert o["redo_syncs_source"].startswith("estimated")      # no Innodb_os_log_fsyncs
    assert o["threads_running_avg"] is not None
    assert rep["server"]["datadir_filesystem"]                 # local: read from mountinfo
    f = {x["id"]: x for x in rep["findings"]}["trx-commit.relaxed-allows-2"]
    assert (f["current"], f["recommended"]) == ("1", "2")
    assert f["predicted"]["current"]["tps"] > 0
    assert f["predicted"]["recommended"]["commit_latency_p50_ms"] < \
        f["predicted"]["current"]["commit_latency_p50_ms"]
    assert any("NOT safe" in n for n in rep["notes"])          # volatile: keep O_DIRECT


def test_advise_text_strict_nothing_to_change(volatile_server, insert_load, profile_files):
    with insert_load(volatile_server, threads=1) as load:
        load.wait_started()
        r, first = advise_explained(volatile_server, "--interval", "3", "--profile",
                                    profile_files["volatile"])
    assert r.exit_code == 0, r.stderr + r.stdout + first
    assert "nothing to change." in r.stdout
    assert "MariaDB" in r.stdout and "commits/s" in r.stdout


def test_advise_only_reads(mariadb_server):
    import pymysql

    conn = pymysql.connect(host="127.0.0.1", port=mariadb_server.port, user="root",
                           password="", autocommit=None)
    from innoflush.advisor.advise import advise as run_advice
    from innoflush.advisor.request import AdviseRequest
    s = ReadOnlySession(conn)
    rep = run_advice(s, AdviseRequest(interval_s=1.0), conn_public={"target": "t",
                     "user": "root"}, is_local=True)
    s.close()
    assert rep["observed"] is not None
    assert s.statements and all(q.split()[0].upper() in ("SELECT", "SHOW")
                                for q in s.statements)


def test_wrong_password(mariadb_server, server_accounts):
    user, good = server_accounts["password"]
    wrong = "Wr0ng-" + good[::-1]
    r = advise(mariadb_server, "--interval", "1", user=user, env={"MYSQL_PWD": wrong})
    assert r.exit_code == 2
    line = one_line(r)
    assert "access denied" in line and user in line
    assert wrong not in r.stdout + r.stderr and good not in r.stdout + r.stderr
    # the right password from an option file works, and is not shown either
    cnf = mariadb_server.workdir / "client.cnf"
    cnf.write_text(f"[client]\nuser={user}\npassword={good}\n", encoding="utf-8")
    r = advise(mariadb_server, "--interval", "1", "--defaults-file", str(cnf), "--json",
               user=user)
    assert r.exit_code in (0, 3), r.stderr
    assert good not in r.stdout + r.stderr
    assert json.loads(r.stdout)["server"]["connection"]["password_source"].startswith(
        "option file")


def test_refused_port(server_binaries):
    port = free_port()
    r = CliRunner().invoke(main, ["advise", "--host", "127.0.0.1", "--port", str(port),
                                  "--user", "root", "--interval", "1"], env=ROOT_ENV)
    assert r.exit_code == 2
    assert "connection refused" in one_line(r)


def test_interval_below_one_second(mariadb_server):
    r = advise(mariadb_server, "--interval", "0.5")
    assert r.exit_code == 2 and "at least 1 second" in one_line(r)


def test_usage_only_account(mariadb_server, server_accounts):
    user, pw = server_accounts["usage"]
    r = advise(mariadb_server, "--interval", "1", "--json", user=user,
               env={"MYSQL_PWD": pw})
    # SHOW GLOBAL VARIABLES/STATUS need no privilege; the replica status does: degraded
    assert r.exit_code in (0, 3), r.stderr
    rep = json.loads(r.stdout)
    assert any("replica status not readable" in w for w in rep["warnings"])
    assert rep["server"]["role"] == "primary"
    assert pw not in r.stdout + r.stderr


@pytest.fixture(scope="module")
def method_servers(start_server, tmp_path_factory):
    """One server per flush method, flushing pages continuously so checkpoints happen."""
    import contextlib

    with contextlib.ExitStack() as stack:
        out = {}
        for method in ("O_DIRECT", "O_DIRECT_NO_FSYNC"):
            opts = ServerOptions(innodb_flush_method=method, innodb_flush_log_at_trx_commit=1,
                                 innodb_buffer_pool_size="64M",
                                 extra={"innodb_max_dirty_pages_pct": 0,
                                        "innodb_max_dirty_pages_pct_lwm": 0,
                                        "innodb_log_file_size": "16M"})
            out[method] = stack.enter_context(
                start_server(tmp_path_factory.mktemp(method.lower()), opts))
        yield out


def _session(server) -> ReadOnlySession:
    import pymysql

    return ReadOnlySession(pymysql.connect(host="127.0.0.1", port=server.port, user="root",
                                           password="", autocommit=None))


def _quiet_status(session: ReadOnlySession, timeout: float = 20.0) -> dict[str, int]:
    """SHOW GLOBAL STATUS once no page is dirty and the data writes have stopped moving.

    Innodb_pages_written counts a page when its write completes (buf_page_write_complete);
    Innodb_data_writes counts writes as they are issued. A window edge that falls inside a
    doublewrite batch's life splits it (CI once saw 139 data writes against 205 pages plus
    doublewrite writes), so the identity between them holds only between quiet moments.
    """
    from innoflush.live.sampling import read_status

    deadline = time.monotonic() + timeout
    prev = read_status(session)
    while time.monotonic() < deadline:
        time.sleep(0.25)
        cur = read_status(session)
        if (cur.get("Innodb_buffer_pool_pages_dirty") == 0
                and cur["Innodb_data_writes"] == prev["Innodb_data_writes"]
                and cur["Innodb_pages_written"] == prev["Innodb_pages_written"]):
            return cur
        prev = cur
    raise AssertionError(f"the server did not go quiet in {timeout:.0f} s: {cur}")


def _measure(server, insert_load, seconds=2.5):
    quiet = _session(server)
    before = _quiet_status(quiet)
    with insert_load(server, threads=1, pad_bytes=4000) as load:
        load.wait_started()
        time.sleep(0.3)
        s = _session(server)
        ivs = sample(s, seconds)
        s.close()
    after = _quiet_status(quiet)
    quiet.close()
    quiet_span = {k: after[k] - before[k] for k in
                  ("Innodb_data_writes", "Innodb_pages_written", "Innodb_dblwr_writes")}
    return observe(combine(ivs), "mariadb", False, 1), quiet_span


def test_counters_per_flush_method(method_servers, insert_load):
    got = {m: _measure(srv, insert_load) for m, srv in method_servers.items()}
    _check_counters(got)
    # O_DIRECT_NO_FSYNC: no more fsyncs beyond the redo syncs than O_DIRECT (it drops the
    # checkpoint-time data-file fsyncs; extension and doublewrite syncs stay in both).
    # Those left come in bursts (an extension: two fsyncs in MariaDB) and some by the
    # second, not by the commit: a window that catches a burst, or that a busy host
    # slows, can show more per commit (CI saw 0.045 against 0.017 once, beside a disk
    # probe). A second pair of windows then decides; both are in the message.
    first = _other_fsyncs_per_commit(got)
    if first["O_DIRECT_NO_FSYNC"] <= first["O_DIRECT"] + 0.002:
        return
    again = {m: _measure(srv, insert_load) for m, srv in method_servers.items()}
    _check_counters(again)
    second = _other_fsyncs_per_commit(again)
    assert second["O_DIRECT_NO_FSYNC"] <= second["O_DIRECT"] + 0.002, (first, second)


def _other_fsyncs_per_commit(got: dict) -> dict:
    return {m: o.other_fsyncs_per_s / o.commits_per_s for m, (o, _) in got.items()}


def _check_counters(got: dict) -> None:
    for method, (o, q) in got.items():
        d = o.deltas
        n = o.commits
        assert n > 100, method
        # MariaDB at trx_commit=1, one connection: data fsyncs ~ redo writes ~ commits
        assert d["Innodb_data_fsyncs"] == pytest.approx(n, rel=0.15), (method, d, n)
        assert d["Innodb_log_writes"] == pytest.approx(n, rel=0.15), (method, d, n)
        assert d["Innodb_data_fsyncs"] >= d["Innodb_log_writes"]
        # Innodb_data_writes excludes redo: page writes plus doublewrite batch writes
        assert d["Innodb_data_writes"] < d["Innodb_log_writes"]
        # ...and, between two quiet moments (see _quiet_status), exactly those (2052 =
        # 2040 + 12 here); the small abs leaves room for a write outside the page flush
        assert q["Innodb_pages_written"] > 100, (method, q)
        assert q["Innodb_data_writes"] == pytest.approx(
            q["Innodb_pages_written"] + q["Innodb_dblwr_writes"], abs=4), (method, q)
        assert "Innodb_os_log_fsyncs" not in d


def test_captured_fixture_matches_the_live_server(mariadb_server, load_fixture):
    """tests/fixtures/mariadb-10.11.json was captured from this kind of server: its
    variable and status names must be what the live server reports."""
    import pymysql

    from innoflush.live.facts import read_variables
    from innoflush.live.sampling import read_status

    fx = load_fixture("mariadb-10.11")
    s = ReadOnlySession(pymysql.connect(host="127.0.0.1", port=mariadb_server.port,
                                        user="root", password="", autocommit=None))
    live_vars = read_variables(s)
    live_status = read_status(s)
    s.close()
    if not live_vars["version"].startswith("10.11"):
        pytest.skip(f"live server is {live_vars['version']}, the fixture is 10.11")
    assert set(fx["variables"]) <= set(live_vars)
    assert set(fx["status_end"]) <= set(live_status)


def test_measure_in_the_datadir(mariadb_server, monkeypatch):
    """--measure probes the datadir's own filesystem (a short probe here), and leaves no
    file behind in the datadir."""
    from innoflush.advisor import advise as advise_mod
    from innoflush.measure import TestSpec

    monkeypatch.setattr(advise_mod, "MEASURE_KW", {
        "tests": [TestSpec("none", 16384, True, 1), TestSpec("fsync", 16384, True, 1),
                  TestSpec("fdatasync", 16384, True, 1)],
        "duration_s": 0.3})
    before = set(p.name for p in mariadb_server.datadir.iterdir())
    r = advise(mariadb_server, "--interval", "1", "--measure", "--json")
    assert r.exit_code in (0, 3), r.stderr
    rep = json.loads(r.stdout)
    assert rep["device"]["source"] == "measure"
    assert rep["device"]["fsync_median_us"] > 0
    assert rep["device"]["verdict"]
    assert set(p.name for p in mariadb_server.datadir.iterdir()) == before


def test_advise_through_the_socket(mariadb_server):
    r = CliRunner().invoke(main, ["advise", "--socket", mariadb_server.socket, "--user",
                                  "root", "--interval", "1", "--json"], env=ROOT_ENV)
    assert r.exit_code in (0, 3), r.stderr
    rep = json.loads(r.stdout)
    assert rep["server"]["connection"]["target"] == f"socket {mariadb_server.socket}"
    assert rep["server"]["datadir_filesystem"]
