"""advise on the servers users run: MySQL 9.7 LTS and MariaDB 11.8 LTS from Debian's archive,
each in its Debian root (lab/server/server_root.py), read through the real CLI in a process of its
own.

- read-only, as each server's general log shows; the flavor and role it names;
- MySQL 9.7's only authentication plugin, caching_sha2_password: over TLS, over TCP without
  TLS (the RSA key exchange of a full authentication, then the cached fast path), over the
  unix socket; a wrong password is one line;
- SHOW REPLICA STATUS, never the SLAVE/MASTER statements MySQL 8.4 removed; variables read
  as the server has them (a removed one is absent, never an error); version_with_update;
- a real MySQL 9.7 replica (GTID auto-positioning): not crash-safe with
  relay_log_recovery=OFF, so held strict; crash-safe with it ON;
- MariaDB 11.8's advice in its own variables (innodb_doublewrite, innodb_data_file_*),
  each SET GLOBAL it recommends applied by the test's own root connection (the advisor
  never writes) and read back.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pymysql
import pytest

from innoflush.advisor.rules import Context, DeviceFacts, evaluate
from innoflush.lab.server.ctrl_c import StartInterrupts
from innoflush.lab.server.local import ServerOptions
from innoflush.live.client_options import ConnectionOptions
from innoflush.live.connect import connect
from innoflush.live.facts import VARIABLES, gather_facts
from innoflush.live.observed import observe
from innoflush.live.sampling import Snapshot, interval_between, read_status
from tests.helpers.server_sql import sql

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parents[2]
REMOVED_STATEMENT = re.compile(r"\b(SLAVE|MASTER)\b", re.I)


def cli(*args: str, password: str | None = "", timeout: float = 180
        ) -> subprocess.CompletedProcess:
    """`innoflush advise ARGS` as a user runs it (no option file: HOME is nowhere)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": "/nonexistent"}
    env.pop("MYSQL_PWD", None)
    if password is not None:
        env["MYSQL_PWD"] = password
    return subprocess.run([sys.executable, "-m", "innoflush", "advise", *args],
                          capture_output=True, text=True, env=env, timeout=timeout,
                          check=False)


def tcp(srv) -> list[str]:
    return ["-H", "127.0.0.1", "--port", str(srv.port)]


def report(r: subprocess.CompletedProcess, codes=(0, 3)) -> dict:
    assert r.returncode in codes, r.stderr
    assert "Traceback" not in r.stderr
    return json.loads(r.stdout)


def variable(srv, name: str) -> str:
    return sql(srv, f"SHOW GLOBAL VARIABLES LIKE '{name}'")[0][0][1]


@contextlib.contextmanager
def general_log(srv, user: str):
    """The statements `user` sent meanwhile, from the server's own general log (a
    table): [(thread_id, command_type, argument)], filled on exit."""
    rows: list[tuple] = []
    sql(srv, "SET GLOBAL general_log = OFF", "SET GLOBAL log_output = 'TABLE'",
        "TRUNCATE TABLE mysql.general_log", "SET GLOBAL general_log = ON")
    try:
        yield rows
    finally:
        got = sql(srv, "SET GLOBAL general_log = OFF",
                  "SELECT thread_id, command_type, CONVERT(argument USING utf8mb4) FROM "
                  f"mysql.general_log WHERE user_host LIKE '{user}[%'")[1]
        rows.extend(got)


def reads_only(rows: list[tuple]) -> list[str]:
    """The queries of a general log's rows, asserted to be reads: SELECT and SHOW, and the
    driver's one SET NAMES per connection (innoflush/live/connect.py)."""
    threads = {t for t, _, _ in rows}
    queries = [a for _, kind, a in rows if kind == "Query"]
    names = [q for q in queries if q.upper().startswith("SET NAMES")]
    assert len(names) <= len(threads)
    bad = [q for q in queries if q.split(None, 1)[0].upper() not in ("SELECT", "SHOW")
           and q not in names]
    assert not bad, bad[:5]
    return queries


def findings(rep: dict) -> dict:
    return {f["id"]: f for f in rep["findings"]}


@pytest.fixture(scope="session", params=["mysql-9.7", "mariadb-11.8"])
def lts_server(request):
    """(flavor, server): the session's MySQL 9.7 and MariaDB 11.8 in turn."""
    fixture = {"mysql-9.7": "mysql97_server", "mariadb-11.8": "mariadb118_server"}
    return request.param, request.getfixturevalue(fixture[request.param])


# ---- read-only, the flavor, the statements, the variables --------------------------------

def test_read_only_under_load(lts_server, insert_load, server_accounts, profile_files):
    """Everything advise's account sent while the server took inserts, from its general
    log: SELECT and SHOW only. On MySQL 9.7 the replica status is SHOW REPLICA STATUS and
    no statement names SLAVE or MASTER (removed in 8.4). With a device profile and relaxed
    durability it recommends trx_commit=2 and predicts on the server's flavor, or says the
    model does not explain what it saw (exit 4): what is stable is asserted, not figures."""
    flavor, srv = lts_server
    user, pw = server_accounts["password"]
    grants = [f"'{user}'@'{h}'" for h in ("127.0.0.1", "localhost")]
    sql(srv, *(f"GRANT PROCESS ON *.* TO {g}" for g in grants))
    try:
        with general_log(srv, user) as rows, insert_load(srv, threads=2) as load:
            load.wait_started()
            r = cli(*tcp(srv), "-u", user, "--interval", "2", "--json", "--profile",
                    profile_files["volatile"], "--durability", "relaxed", password=pw)
    finally:
        sql(srv, *(f"REVOKE PROCESS ON *.* FROM {g}" for g in grants))
    rep = report(r, codes=(3, 4))
    assert rep["exit_code"] == r.returncode
    assert "trx-commit.relaxed-allows-2" in findings(rep)
    assert rep["fit"]["config"]["flavor"] == flavor
    if r.returncode == 4:
        assert rep["fit"]["explained"] is False
        assert all(f["predicted"] is None for f in rep["findings"])
    assert rep["server"]["sim_flavor"] == flavor
    assert rep["server"]["role"] == "primary"
    assert rep["observed"]["commits"] > 0
    assert rep["workload"]["connections"]["value"] == 2       # PROCESS: sees the load
    queries = reads_only(rows)
    assert len({t for t, _, _ in rows}) >= 2    # the status session and the sampler
    assert len(queries) > 100
    if flavor == "mysql-9.7":
        assert "SHOW REPLICA STATUS" in queries
        assert not [q for q in queries if REMOVED_STATEMENT.search(q)]
    else:
        assert "SHOW ALL SLAVES STATUS" in queries


def test_names_the_version_and_reads_variables_as_the_server_has_them(lts_server):
    flavor, srv = lts_server
    rep = report(cli(*tcp(srv), "-u", "root", "--interval", "1", "--json"))
    have = {str(k).lower(): v for k, v in sql(srv, "SHOW GLOBAL VARIABLES")[0]}
    read = rep["settings"]["variables"]
    # a variable this server removed (MySQL 9.7: relay_log_info_repository,
    # innodb_log_file_size; MariaDB 11.8: innodb_version) is absent, never an error
    absent = set(VARIABLES) - set(have)
    assert absent and not absent & set(read)
    assert all(read[k] == str(have[k]) for k in read)
    text = cli(*tcp(srv), "-u", "root", "--interval", "1", "--wide")   # a line each
    assert text.returncode in (0, 3), text.stderr
    head = text.stdout.splitlines()[:3]
    assert f"simulator flavor {flavor}" in head[2]
    if flavor == "mysql-9.7":
        assert {"relay_log_info_repository", "innodb_log_file_size"} <= absent
        assert rep["settings"]["redo_capacity_bytes"] == int(have["innodb_redo_log_capacity"])
        assert rep["settings"]["innodb_use_fdatasync"] is True      # ON by default (8.4+)
        vwu = have["version_with_update"]
        assert re.fullmatch(r"9\.7\.\d+\.\d+(-.*)?", vwu), vwu
        assert rep["server"]["version_with_update"] == vwu
        assert head[0].startswith("innoflush advise — MySQL 9.7.")
        assert f"; version_with_update {vwu})" in head[0]
    else:
        assert rep["server"]["version_with_update"] is None
        assert "version_with_update" not in head[0]
        assert rep["settings"]["redo_capacity_bytes"] == int(have["innodb_log_file_size"])


# ---- MySQL 9.7: caching_sha2_password --------------------------------------------------------

def mysql_client(root: str, srv, user: str, password: str, *args: str
                 ) -> subprocess.CompletedProcess:
    """MySQL 9.7's own client, run in its root (it reaches the server over TCP)."""
    return subprocess.run(["chroot", root, "mysql", "-h", "127.0.0.1", "-P", str(srv.port),
                           "-u", user, *args, "-N", "-e", "SELECT CURRENT_USER()"],
                          capture_output=True, text=True, timeout=60, check=False,
                          env={"MYSQL_PWD": password,
                               "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})


def test_caching_sha2_is_the_only_plugin(mysql97_server, server_accounts):
    user, _ = server_accounts["password"]
    plugins = sql(mysql97_server, f"SELECT DISTINCT plugin FROM mysql.user WHERE user = "
                                  f"'{user}'", "SELECT PLUGIN_NAME FROM information_schema."
                                  "PLUGINS WHERE PLUGIN_NAME LIKE '%native%'")
    assert plugins[0] == (("caching_sha2_password",),)
    assert plugins[1] == ()        # mysql_native_password is gone (removed in MySQL 9.0)


def test_caching_sha2_over_tls(mysql97_server, server_accounts):
    """The default --ssl-mode PREFERRED: TLS with the certificates the server made."""
    user, pw = server_accounts["password"]
    rep = report(cli(*tcp(mysql97_server), "-u", user, "--interval", "1", "--json",
                     password=pw))
    c = rep["server"]["connection"]
    assert (c["tls"], c["ssl_mode"], c["user"]) == (True, "PREFERRED", user)
    assert c["tls_version"].startswith("TLSv1.")
    assert c["password_source"] == "MYSQL_PWD"


def test_caching_sha2_without_tls_full_then_cached(mysql97_server, mysql97_root,
                                                   server_accounts):
    """Over TCP without TLS, a full authentication sends the password RSA-encrypted with
    the server's public key (PyMySQL asks for it, and encrypts with `cryptography`); once
    it succeeded the server caches the account and the next login takes the fast path
    (a scramble, no key). FLUSH PRIVILEGES empties the cache. MySQL's own client without
    --get-server-public-key shows which path the server is on: refused before advise's
    full authentication, let in after it."""
    user, pw = server_accounts["password"]
    sql(mysql97_server, "FLUSH PRIVILEGES")
    before = mysql_client(mysql97_root, mysql97_server, user, pw, "--ssl-mode=DISABLED")
    assert before.returncode != 0
    assert "requires secure connection" in before.stderr, before.stderr
    for _ in ("full authentication (RSA)", "cached fast path"):
        rep = report(cli(*tcp(mysql97_server), "-u", user, "--ssl-mode", "DISABLED",
                         "--interval", "1", "--json", password=pw))
        c = rep["server"]["connection"]
        assert (c["tls"], c["tls_version"], c["ssl_mode"]) == (False, None, "DISABLED")
        after = mysql_client(mysql97_root, mysql97_server, user, pw, "--ssl-mode=DISABLED")
        assert after.returncode == 0, after.stderr
        assert after.stdout.strip().startswith(f"{user}@")


def test_caching_sha2_over_the_socket(mysql97_server, server_accounts):
    """-S: the LocalServer's socket (its work directory is the same path inside its root
    and out). A unix socket is a secure transport for caching_sha2_password: the full
    authentication needs neither TLS nor RSA."""
    user, pw = server_accounts["password"]
    sql(mysql97_server, "FLUSH PRIVILEGES")
    for mode in ("DISABLED", "PREFERRED"):
        rep = report(cli("-S", mysql97_server.socket, "-u", user, "--ssl-mode", mode,
                         "--interval", "1", "--json", password=pw))
        c = rep["server"]["connection"]
        assert c["target"] == f"socket {mysql97_server.socket}"
        assert c["tls"] is (mode != "DISABLED")
        assert rep["server"]["sim_flavor"] == "mysql-9.7"


@pytest.mark.parametrize("transport", ["tls", "no-tls", "socket"])
def test_wrong_password_is_one_line(mysql97_server, server_accounts, transport):
    user, pw = server_accounts["password"]
    wrong = "Wr0ng-" + pw[::-1]
    sql(mysql97_server, "FLUSH PRIVILEGES")    # no-tls: the RSA path, not the cache's
    where = {"tls": tcp(mysql97_server), "no-tls": [*tcp(mysql97_server), "--ssl-mode",
                                                     "DISABLED"],
             "socket": ["-S", mysql97_server.socket]}[transport]
    r = cli(*where, "-u", user, "--interval", "1", password=wrong)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"innoflush: error: access denied for user '{user}' at ")
    assert lines[0].endswith("(with a password): check the password")
    assert wrong not in r.stderr and pw not in r.stderr


# ---- a real MySQL 9.7 replica -----------------------------------------------------------------

REPL_USER, REPL_PASSWORD = "repl", "repl-test-only-pw"
ADVISOR, ADVISOR_PASSWORD = "advisor", "advisor-test-only-pw"
GTID = {"gtid_mode": "ON", "enforce_gtid_consistency": "ON"}


def replica_status(srv) -> dict:
    conn = srv.connect()
    try:
        with conn.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute("SHOW REPLICA STATUS")
            return cur.fetchone() or {}
    finally:
        conn.close()


def wait_running(srv, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    row: dict = {}
    while time.monotonic() < deadline:
        row = replica_status(srv)
        if (row.get("Replica_IO_Running"), row.get("Replica_SQL_Running")) == ("Yes", "Yes"):
            return
        time.sleep(0.2)
    raise AssertionError(f"replication did not start: {row.get('Last_IO_Error')!r} "
                         f"{row.get('Last_SQL_Error')!r} {srv.error_log_tail()}")


def restart(srv) -> None:
    """Stop the server and start it again on the same datadir and port."""
    srv._terminate()
    with StartInterrupts() as interrupts:
        srv._launch(interrupts)
        srv._wait_ready(interrupts)


@pytest.fixture(scope="module")
def mysql97_primary(start_server, mysql97_root, tmp_path_factory):
    opts = ServerOptions(log_bin=True, sync_binlog=1, innodb_buffer_pool_size="64M",
                         extra=dict(GTID))
    with start_server(tmp_path_factory.mktemp("primary97"), opts,
                      server_root=mysql97_root) as srv:
        # the advisor's account is made on the primary and reaches the replica by
        # replication: least privilege for what advise reads
        sql(srv, f"CREATE USER '{REPL_USER}'@'%' IDENTIFIED BY '{REPL_PASSWORD}'",
            f"GRANT REPLICATION SLAVE ON *.* TO '{REPL_USER}'@'%'",
            *(s for h in ("127.0.0.1", "localhost") for s in (
                f"CREATE USER '{ADVISOR}'@'{h}' IDENTIFIED BY '{ADVISOR_PASSWORD}'",
                f"GRANT SELECT, PROCESS, REPLICATION CLIENT ON *.* TO '{ADVISOR}'@'{h}'")),
            "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY) ENGINE=InnoDB",
            "INSERT INTO app.t VALUES (1), (2), (3)")
        yield srv


@pytest.fixture(scope="module")
def mysql97_replica(start_server, mysql97_root, tmp_path_factory, mysql97_primary):
    """A read-only replica at trx_commit=2 and sync_binlog=0 (what a replica may run with
    when crash-safe), started with relay_log_recovery=OFF, replicating by GTID
    auto-positioning from the primary; caching_sha2_password without TLS on the
    replication connection: GET_SOURCE_PUBLIC_KEY."""
    opts = ServerOptions(log_bin=True, sync_binlog=0, innodb_flush_log_at_trx_commit=2,
                         innodb_buffer_pool_size="64M",
                         extra={**GTID, "server_id": 2, "read_only": "ON",
                                "relay_log_recovery": "OFF"})
    with start_server(tmp_path_factory.mktemp("replica97"), opts,
                      server_root=mysql97_root) as srv:
        sql(srv, "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', "
                 f"SOURCE_PORT={mysql97_primary.port}, SOURCE_USER='{REPL_USER}', "
                 f"SOURCE_PASSWORD='{REPL_PASSWORD}', SOURCE_AUTO_POSITION=1, "
                 "GET_SOURCE_PUBLIC_KEY=1", "START REPLICA")
        wait_running(srv)
        yield srv


def advise_replica(srv, *args: str) -> dict:
    return report(cli(*tcp(srv), "-u", ADVISOR, "--interval", "1", "--json", *args,
                      password=ADVISOR_PASSWORD))


def test_mysql97_replica_not_crash_safe_is_held_strict(mysql97_replica):
    """Replication running, GTID auto-positioning, read_only: relay_log_recovery=OFF is
    the one piece missing, and it is enough to hold the replica to a primary's rule."""
    assert variable(mysql97_replica, "relay_log_recovery") == "OFF"
    with general_log(mysql97_replica, ADVISOR) as rows:
        rep = advise_replica(mysql97_replica)
    assert rep["exit_code"] == 3
    srv = rep["server"]
    assert (srv["role"], srv["sim_flavor"]) == ("replica", "mysql-9.7")
    repl = srv["replication"]
    assert repl["crash_safe"] is False and repl["relay_log_recovery"] is False
    assert repl["threads_running"] is True and repl["read_only"] is True
    assert repl["gtid_mode"] == "ON"
    assert repl["relay_log_info_repository"] is None          # removed in MySQL 9
    assert repl["channels"][0]["positioning"] == "auto-position"
    assert len(repl["missing"]) == 1 and repl["missing"][0].startswith(
        "relay_log_recovery=OFF")
    f = findings(rep)
    assert (f["trx-commit.strict-requires-1"]["current"],
            f["trx-commit.strict-requires-1"]["recommended"]) == ("2", "1")
    assert (f["sync-binlog.strict-requires-1"]["current"],
            f["sync-binlog.strict-requires-1"]["recommended"]) == ("0", "1")
    assert "relay_log_recovery=OFF" in " ".join(f["trx-commit.strict-requires-1"]["why"])
    assert not any("accepted" in n for n in rep["notes"])
    queries = reads_only(rows)
    assert "SHOW REPLICA STATUS" in queries
    assert not [q for q in queries if REMOVED_STATEMENT.search(q)]
    # relaxed: sync_binlog=1 is kept on a replica not shown crash-safe
    sql(mysql97_replica, "SET GLOBAL sync_binlog = 1")
    try:
        rep = advise_replica(mysql97_replica, "--durability", "relaxed")
    finally:
        sql(mysql97_replica, "SET GLOBAL sync_binlog = 0")
    assert "sync-binlog.relaxed-replica-allows-0" not in findings(rep)
    assert any(n.startswith("sync_binlog=1 kept under --durability relaxed: a replica not "
                            "shown crash-safe") for n in rep["notes"])


def test_mysql97_replica_crash_safe_may_relax(mysql97_replica, mysql97_primary):
    mysql97_replica.options.extra["relay_log_recovery"] = "ON"
    restart(mysql97_replica)
    wait_running(mysql97_replica)         # skip_replica_start=OFF: it starts by itself
    sql(mysql97_primary, "INSERT INTO app.t VALUES (4)")
    rep = advise_replica(mysql97_replica)
    repl = rep["server"]["replication"]
    assert repl["crash_safe"] is True, repl["missing"]
    assert "relay_log_recovery=ON" in repl["evidence"]
    assert "applier metadata in InnoDB tables (MySQL 8.0.23+)" in repl["evidence"]
    f = findings(rep)
    assert "trx-commit.strict-requires-1" not in f
    assert "sync-binlog.strict-requires-1" not in f
    assert any("innodb_flush_log_at_trx_commit=2 accepted on a crash-safe replica" in n
               for n in rep["notes"])
    sql(mysql97_replica, "SET GLOBAL sync_binlog = 1")
    try:
        rep = advise_replica(mysql97_replica, "--durability", "relaxed")
    finally:
        sql(mysql97_replica, "SET GLOBAL sync_binlog = 0")
    assert findings(rep)["sync-binlog.relaxed-replica-allows-0"]["recommended"] == "0"


# ---- MariaDB 11.8: its own variables ------------------------------------------------------------

@pytest.fixture(scope="module", params=[{"innodb_flush_method": "O_DIRECT_NO_FSYNC"},
                                        {"innodb_doublewrite": "fast"}],
                ids=["deprecated-flush-method", "doublewrite-fast"])
def mariadb118_no_fsync(request, start_server, mariadb118_root, tmp_path_factory):
    """MariaDB 11.8 skipping the data files' fsyncs: started with the deprecated
    innodb_flush_method=O_DIRECT_NO_FSYNC (which it turns into innodb_doublewrite=fast),
    or with innodb_doublewrite=fast itself. (start options, server)"""
    opts = ServerOptions(innodb_buffer_pool_size="64M", extra=dict(request.param))
    with start_server(tmp_path_factory.mktemp("mariadb118-nofsync"), opts,
                      server_root=mariadb118_root) as srv:
        yield request.param, srv


def apply(srv, statements: list[str]) -> None:
    """What advise says to run, run by the test's own root connection."""
    sql(srv, *(s.rstrip(";") for s in statements))


def test_mariadb118_speaks_its_own_variables(mariadb118_no_fsync, profile_files):
    started, srv = mariadb118_no_fsync
    args = [*tcp(srv), "-u", "root", "--interval", "1", "--no-predict", "--json"]
    rep = report(cli(*args, "--profile", profile_files["volatile"]), codes=(3,))
    assert rep["server"]["sim_flavor"] == "mariadb-11.8"
    st = rep["settings"]
    assert (st["innodb_flush_method"], st["flush_method_source"]) == (
        "O_DIRECT_NO_FSYNC", "innodb_doublewrite=fast")
    f = findings(rep)["flush-method.no-fsync-on-volatile-cache"]
    assert f["setting"] == "innodb_doublewrite" and f["restart_needed"] is False
    assert f["set_global"] == ["SET GLOBAL innodb_doublewrite = ON;",
                               "SET GLOBAL innodb_data_file_buffering = OFF;",
                               "SET GLOBAL innodb_data_file_write_through = OFF;"]
    said = " ".join([f["recommended"], *f["my_cnf"], *f["set_global"]])
    assert "innodb_flush_method" not in said
    # started with the deprecated option: it would override my.cnf's new lines at the
    # next start, so the finding says to remove it
    assert any("remove it from my.cnf" in w for w in f["why"]) == (
        "innodb_flush_method" in started)
    methods = [c for c in rep["candidates"] if c["id"].startswith("flush-method=")]
    assert methods and all(c["setting"] != "innodb_flush_method" for c in methods)
    apply(srv, f["set_global"])
    assert variable(srv, "innodb_doublewrite") == "ON"
    rep = report(cli(*args, "--profile", profile_files["volatile"]))
    assert "flush-method.no-fsync-on-volatile-cache" not in findings(rep)
    assert rep["settings"]["innodb_flush_method"] == "O_DIRECT"
    # data-file buffering switched on (fsync, as 11.8 names it): back off, dynamically
    sql(srv, "SET GLOBAL innodb_data_file_buffering = ON")
    rep = report(cli(*args), codes=(3,))
    assert rep["server"]["datadir_filesystem"] not in (None, "tmpfs", "zfs")
    f = findings(rep)["flush-method.fsync-double-buffering"]
    assert f["setting"] == "innodb_data_file_buffering"
    assert f["set_global"] == ["SET GLOBAL innodb_data_file_buffering = OFF;",
                               "SET GLOBAL innodb_data_file_write_through = OFF;"]
    apply(srv, f["set_global"])
    assert variable(srv, "innodb_data_file_buffering") == "OFF"


PLP = DeviceFacts(name="plp", title="Enterprise NVMe", source="profile",
                  klass="enterprise NVMe", plp="yes",
                  verdict="non-volatile-cache-or-flush-ignored", o_direct_no_fsync_safe=True,
                  reasons=["fsync 40 µs"], filesystem="ext4", fsync_ns=40e3,
                  fdatasync_ns=25e3, fsync_exact=True, fdatasync_exact=True)


def test_mariadb118_would_set_doublewrite_fast(mariadb118_server):
    """On a protected write cache, O_DIRECT_NO_FSYNC is innodb_doublewrite=fast on 11.8,
    dynamic as the server says (information_schema.SYSTEM_VARIABLES). The facts are the
    real server's, read by the advisor's read-only session; the device is a PLP one, and
    the data-file syncs such a server shows are added to a real status interval: this VM's
    /sys says its disk's cache is write back, and a live advise then rightly treats any
    PLP profile as volatile (advisor/device.py: reconcile_with_sys)."""
    session = connect(ConnectionOptions(host="127.0.0.1", port=mariadb118_server.port,
                                        user="root", password=""))
    try:
        facts = gather_facts(session)
        a = Snapshot(0.0, read_status(session))
        time.sleep(1.0)
        b = Snapshot(1.0, read_status(session))
    finally:
        session.close()
    assert facts.sim_flavor == "mariadb-11.8" and facts.flush_method == "O_DIRECT"
    assert facts.sysvar_meta["innodb_doublewrite"]["enum_values"] == ["OFF", "ON", "fast"]
    assert facts.doublewrite_fast_supported
    for name in ("innodb_doublewrite", "innodb_data_file_buffering",
                 "innodb_data_file_write_through", "innodb_log_file_buffering",
                 "innodb_log_file_write_through"):
        assert facts.sysvar_meta[name]["read_only"] is False, name      # dynamic
    # 400 data-file syncs a second x 40 µs: 16 ms of device time, worth removing
    b.status["Innodb_data_fsyncs"] = b.status.get("Innodb_data_fsyncs", 0) + 400
    obs = observe(interval_between(0, a, b), facts.product, facts.log_bin,
                  facts.trx_commit, facts.flush_log_at_timeout, facts.redo_write_through)
    ev = evaluate(Context(facts=facts, observed=obs, device=PLP, datadir_fs="ext4"))
    f = next(x for x in ev.findings if x.id == "flush-method.o-direct-no-fsync-on-plp")
    assert (f.setting, f.recommended) == ("innodb_doublewrite", "innodb_doublewrite=fast")
    assert f.set_global == ["SET GLOBAL innodb_doublewrite = fast;"]
    assert not f.restart_needed
    try:
        apply(mariadb118_server, f.set_global)
        assert variable(mariadb118_server, "innodb_doublewrite") == "fast"
    finally:
        sql(mariadb118_server, "SET GLOBAL innodb_doublewrite = ON")


def test_check_reads_what_was_applied_on_each_server(lts_server, tmp_path):
    """advise --check on MySQL 9.7 and MariaDB 11.8: the server's own report (given the
    prediction of a trx_commit change, as the fleet test does), then SET GLOBAL
    innodb_flush_log_at_trx_commit = 2 — the change read back in the server's own
    spelling, matched to its prediction, the identity (MySQL's server_uuid too) its
    own; a report of this server with another server_uuid is refused, exit 2."""
    flavor, srv = lts_server
    home = {"INNOFLUSH_HOME": str(tmp_path / "home")}
    rep = report(cli(*tcp(srv), "-u", "root", "--interval", "1", "--no-predict", "--json"))
    priced = json.loads((ROOT / "tests" / "fixtures" / "checks" / "mariadb-10.11-trx-commit"
                         / "report.json").read_text())
    rep["findings"].append(next(f for f in priced["findings"] if f.get("predicted")))
    before = tmp_path / "before.json"
    before.write_text(json.dumps(rep))
    was = variable(srv, "innodb_flush_log_at_trx_commit")
    sql(srv, "SET GLOBAL innodb_flush_log_at_trx_commit = 2")
    try:
        env_cli = {**os.environ, **home}
        r = subprocess.run([sys.executable, "-m", "innoflush", "advise", *tcp(srv), "-u",
                            "root", "--interval", "1", "--check", str(before), "--json"],
                           capture_output=True, text=True, timeout=180,
                           env={**env_cli, "PYTHONPATH": str(ROOT), "HOME": "/nonexistent",
                                "MYSQL_PWD": ""})
    finally:
        sql(srv, f"SET GLOBAL innodb_flush_log_at_trx_commit = {was}")
    assert r.returncode in (0, 4, 5), r.stderr
    doc = json.loads(r.stdout)
    assert doc["applied"] == [{"setting": "innodb_flush_log_at_trx_commit", "before": was,
                               "now": "2", "recommended": True, "derived": False}]
    assert doc["prediction"]["changes"] == {"innodb_flush_log_at_trx_commit": 2}
    assert doc["server"]["product"] == rep["server"]["product"]
    if flavor == "mysql-9.7":
        assert rep["settings"]["variables"].get("server_uuid")
        rep["settings"]["variables"]["server_uuid"] = "00000000-0000-0000-0000-000000000000"
        before.write_text(json.dumps(rep))
        r = cli(*tcp(srv), "-u", "root", "--interval", "1", "--check", str(before))
        assert r.returncode == 2 and "a report of another server (server_uuid" in r.stderr
