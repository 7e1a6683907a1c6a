"""`innoflush advise` end to end against a scripted server (fixture data, no real server):
exit codes, JSON keys, Ctrl-C, privileges, restarts, and the password never shown."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from innoflush import measure as measure_pkg
from innoflush.commands import advise as advise_cli
from innoflush.commands.root import main
from innoflush.live import sampling
from innoflush.live.connect import ReadOnlySession
from tests.helpers.scripted_server import FakeServer

SECRET = "Sc3nario-pw-never-printed"


@pytest.fixture
def fake_time(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(sampling, "CLOCK", lambda: now[0])

    def sleep(s):
        now[0] += s
    monkeypatch.setattr(sampling, "SLEEP", sleep)
    return now


@pytest.fixture
def serve(monkeypatch, fake_time):
    """serve(FakeServer) -> makes `advise` connect to it; returns the server."""
    def install(server):
        monkeypatch.setattr(advise_cli, "connect",
                            lambda opts, **kw: ReadOnlySession(server, opts.password))
        return server
    return install


def run(*args, env=None):
    runner = CliRunner()
    return runner.invoke(main, ["advise", "--host", "db.example", "--user", "app", *args],
                         env={"MYSQL_PWD": SECRET, "HOME": "/nonexistent", **(env or {})},
                         catch_exceptions=False)


def one_line_error(result):
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output + result.stderr
    return lines[0]


def no_secret(result):
    assert SECRET not in result.stdout and SECRET not in result.stderr


def test_recommendations_json_without_a_measurable_workload(serve, load_fixture,
                                                            profile_files):
    """Captured variables and counters, but no processlist (a fake server has no other
    connections): the findings stand, and no effect is predicted — exit 4, said in the
    warnings, no predicted figure anywhere (the old fit solved the CPU from the commit
    rate and took the connections from Threads_running: 100x wrong under sysbench)."""
    srv = serve(FakeServer(load_fixture("mysql-8.0")))
    r = run("--interval", "10", "--profile", profile_files["plp"], "--json")
    assert r.exit_code == 4, r.stderr
    no_secret(r)
    rep = json.loads(r.stdout)
    for key in ("schema", "exit_code", "server", "settings", "device", "durability",
                "sampling", "observed", "workload", "fit", "candidates", "findings",
                "combined_prediction", "cannot_judge", "notes", "warnings"):
        assert key in rep
    assert rep["exit_code"] == 4 and rep["server"]["sim_flavor"] == "mysql-8.0"
    assert rep["server"]["connection"]["password_source"] == "MYSQL_PWD"
    got = {f["id"]: f for f in rep["findings"]}
    assert set(got) == {"flush-method.o-direct-no-fsync-on-plp",
                        "use-fdatasync.cheaper-than-fsync"}
    fm = got["flush-method.o-direct-no-fsync-on-plp"]
    assert fm["recommended"] == "O_DIRECT_NO_FSYNC" and fm["restart_needed"]
    assert all(f["predicted"] is None for f in got.values())
    assert rep["combined_prediction"] is None
    assert all(c["predicted"] is None for c in rep["candidates"])
    assert {c["id"] for c in rep["candidates"]} >= {"trx-commit=2",
                                                    "flush-method=O_DIRECT_NO_FSYNC"}
    assert rep["fit"]["explained"] is False and rep["fit"]["workload"] is None
    assert rep["workload"]["connections"]["value"] is None
    assert any(w.startswith("cannot predict this workload: the connections")
               for w in rep["warnings"])
    assert all(s.split()[0].upper() in ("SELECT", "SHOW") for s in srv.sent)
    assert srv.closed


def test_nothing_to_change_text(serve, load_fixture, profile_files):
    serve(FakeServer(load_fixture("mysql-8.4")))
    r = run("--interval", "5", "--profile", profile_files["volatile"], "--no-predict")
    assert r.exit_code == 0, r.stderr
    assert "nothing to change." in r.stdout
    assert "replica of db-primary-1" in r.stdout
    no_secret(r)


def test_text_report_with_findings(serve, load_fixture, profile_files):
    serve(FakeServer(load_fixture("mysql-5.7")))
    r = run("--interval", "2", "--profile", profile_files["volatile"], "--no-predict")
    assert r.exit_code == 3
    out = r.stdout
    assert "innodb_flush_log_at_trx_commit = 1" in out and "sync_binlog = 1" in out
    assert "innodb_flush_method = O_DIRECT" in out
    assert "restart" in out and "risk:" in out and "why:" in out


def test_ctrl_c_mid_sample(serve, load_fixture, monkeypatch):
    srv = serve(FakeServer(load_fixture("mariadb-10.11")))

    def interrupt(s):
        raise KeyboardInterrupt
    monkeypatch.setattr(sampling, "SLEEP", interrupt)
    r = run("--interval", "3")
    assert r.exit_code == 130
    assert one_line_error(r) == "innoflush: interrupted"
    assert r.stdout == "" and srv.closed


def test_status_privilege_missing(serve, load_fixture):
    serve(FakeServer(load_fixture("mysql-5.7"), status_error=(
        1142, "SELECT command denied to user 'app'@'10.0.0.2' for table 'global_status'")))
    r = run("--interval", "2")
    assert r.exit_code == 2
    assert "SHOW GLOBAL STATUS" in one_line_error(r)
    no_secret(r)


def test_replica_status_privilege_missing_degrades(serve, load_fixture):
    serve(FakeServer(load_fixture("mariadb-10.11"), replica_error=(
        1227, "Access denied; you need (at least one of) the SLAVE MONITOR privilege(s)")))
    r = run("--interval", "2", "--json", "--no-predict")
    assert r.exit_code in (0, 3), r.stderr
    rep = json.loads(r.stdout)
    assert any("replica status not readable" in w for w in rep["warnings"])


def test_no_innodb(serve, load_fixture):
    fx = load_fixture("mariadb-10.11")
    variables = {k: v for k, v in fx["variables"].items() if not k.startswith("innodb")}
    serve(FakeServer(fx, variables=variables))
    r = run("--interval", "2")
    assert r.exit_code == 1
    assert "no InnoDB" in one_line_error(r)


def test_restart_during_the_interval(serve, load_fixture):
    fx = load_fixture("mariadb-10.11")
    after = {k: max(0, v // 1000) for k, v in fx["status_end"].items()}
    after["Uptime"] = 1
    serve(FakeServer(fx, statuses=[fx["status_start"], after]))
    r = run("--interval", "2")
    assert r.exit_code == 1
    line = one_line_error(r)
    assert "restart" in line and "Uptime" in line


def test_reset_in_one_of_two_samples(serve, load_fixture):
    fx = load_fixture("mariadb-10.11")
    reset = dict(fx["status_end"])
    reset["Uptime_since_flush_status"] = 1
    reset["Innodb_data_fsyncs"] = 3
    later = {k: v + (5 if k == "Uptime_since_flush_status" else 0) for k, v in reset.items()}
    later["Uptime"] = reset["Uptime"] + 5
    serve(FakeServer(fx, statuses=[fx["status_start"], fx["status_end"], reset, later]))
    r = run("--interval", "2", "--samples", "3", "--json", "--no-predict")
    assert r.exit_code in (0, 3), r.stderr
    rep = json.loads(r.stdout)
    ivs = rep["sampling"]["intervals"]
    assert [iv["valid"] for iv in ivs] == [True, False, True]
    assert any("FLUSH STATUS" in w for w in rep["warnings"])
    assert rep["observed"]["intervals"] == 2
    assert all(v >= 0 for v in rep["observed"]["deltas"].values())


def test_usage_errors_before_connecting(monkeypatch):
    def boom(opts):
        raise AssertionError("must not connect")
    monkeypatch.setattr(advise_cli, "connect", boom)
    for args, text in ((["--interval", "0.5"], "at least 1 second"),
                       (["--samples", "0"], "--samples"),
                       (["--profile", "no-such-profile-xyz"], "profile"),
                       (["--profile", "x", "--measure"], "not both")):
        r = run(*args)
        assert r.exit_code == 2, (args, r.stderr)
        assert text in one_line_error(r)


@pytest.mark.parametrize("args", [["--password", SECRET], [f"--password={SECRET}"],
                                  [f"-p{SECRET}"], ["-p", SECRET],
                                  ["-h", "db", f"-p{SECRET}", "-u", "app"]])
def test_password_value_on_the_command_line_is_refused(args, monkeypatch):
    def boom(opts, **kw):
        raise AssertionError("must not connect")
    monkeypatch.setattr(advise_cli, "connect", boom)
    r = CliRunner().invoke(main, ["advise", *args], env={"HOME": "/nonexistent"})
    assert r.exit_code == 2
    line = one_line_error(r)
    assert "process list" in line and "-p alone" in line
    assert SECRET not in r.stdout + r.stderr


def test_p_alone_prompts_and_h_is_the_host(serve, load_fixture, monkeypatch):
    """-p prompts (the mysql client's habit); -h is the host, --help the help."""
    seen = {}

    def fake_connect(opts, **kw):
        seen["opts"] = opts
        return ReadOnlySession(FakeServer(load_fixture("mysql-8.4")), opts.password)
    monkeypatch.setattr(advise_cli, "connect", fake_connect)
    r = CliRunner().invoke(main, ["advise", "-h", "db.example", "-P", "3307", "-u", "app",
                                  "-p", "--interval", "1", "--json", "--no-predict"],
                           input=SECRET + "\n", env={"HOME": "/nonexistent"})
    assert r.exit_code == 0, r.stderr
    o = seen["opts"]
    assert (o.host, o.port, o.user, o.password) == ("db.example", 3307, "app", SECRET)
    conn = json.loads(r.stdout)["server"]["connection"]
    assert conn["password_source"] == "prompt" and conn["target"] == "db.example:3307"
    # a fake session reports no TLS state: unknown, not guessed
    assert conn["tls"] is None and conn["ssl_mode"] == "PREFERRED"
    assert SECRET not in r.stdout + r.stderr
    # -H stays an alias of --host; --help is the help, and -h is not
    r = CliRunner().invoke(main, ["advise", "--help"])
    assert r.exit_code == 0 and "-h, -H, --host" in r.stdout
    r = CliRunner().invoke(main, ["advise", "-h"])
    assert r.exit_code == 2 and "requires an argument" in r.stderr


@pytest.mark.parametrize("args, text", [
    (["--connect-timeout", "0"], "--connect-timeout must be more than 0"),
    (["--connect-timeout", "-3"], "--connect-timeout must be more than 0"),
    (["--ssl-mode", "sometimes"], "is not one of DISABLED, PREFERRED"),
    (["--ssl-mode", "verify_ca"], "needs --ssl-ca"),
    (["--ssl-mode", "VERIFY_IDENTITY"], "needs --ssl-ca"),
    (["--login-path", "nosuch"], "no such login path file"),
])
def test_connection_usage_errors_before_connecting(args, text, monkeypatch):
    def boom(opts, **kw):
        raise AssertionError("must not connect")
    monkeypatch.setattr(advise_cli, "connect", boom)
    r = run(*args)
    assert r.exit_code == 2, r.stderr
    assert text in one_line_error(r)
    no_secret(r)


def test_measure_unavailable_or_remote(serve, load_fixture, monkeypatch):
    serve(FakeServer(load_fixture("mariadb-10.11")))
    r = run("--interval", "2", "--measure")      # db.example: not this host
    assert r.exit_code == 2
    assert "datadir on this host" in one_line_error(r)
    monkeypatch.delattr(measure_pkg, "measure_profile", raising=False)
    from innoflush.advisor.advise import measure_device
    from innoflush.errors import UsageError
    with pytest.raises(UsageError, match="not available"):
        measure_device("/tmp")


def test_help_documents_exit_codes():
    r = CliRunner().invoke(main, ["advise", "--help"])
    assert r.exit_code == 0
    for text in ("0    nothing to change", "3    recommendations made", "130", "MYSQL_PWD"):
        assert text in r.stdout


def test_ask_password_prompt(serve, load_fixture, monkeypatch):
    seen = {}

    def fake_connect(opts, **kw):
        seen["password"] = opts.password
        return ReadOnlySession(FakeServer(load_fixture("mysql-8.4")), opts.password)
    monkeypatch.setattr(advise_cli, "connect", fake_connect)
    r = CliRunner().invoke(main, ["advise", "--host", "db.example", "--user", "app",
                                  "--ask-password", "--interval", "1", "--json",
                                  "--no-predict"],
                           input=SECRET + "\n", env={"HOME": "/nonexistent"})
    assert r.exit_code == 0, r.stderr
    assert seen["password"] == SECRET
    assert SECRET not in r.stdout + r.stderr
    assert json.loads(r.stdout)["server"]["connection"]["password_source"] == "prompt"


def test_ignore_rule_json_and_text(serve, load_fixture, profile_files):
    plp_rule = "flush-method.o-direct-no-fsync-on-plp"
    serve(FakeServer(load_fixture("mysql-8.0")))
    r = run("--interval", "10", "--profile", profile_files["plp"], "--no-predict", "--json",
            "--ignore-rule", plp_rule)
    assert r.exit_code == 3, r.stderr
    rep = json.loads(r.stdout)
    assert [f["id"] for f in rep["findings"]] == ["use-fdatasync.cheaper-than-fsync"]
    assert rep["ignored_rules"] == [plp_rule]
    # both ignored: nothing left to change, exit 0, and the text report says what was left out
    serve(FakeServer(load_fixture("mysql-8.0")))
    r = run("--interval", "10", "--profile", profile_files["plp"], "--no-predict",
            "--ignore-rule", plp_rule, "--ignore-rule", "use-fdatasync.cheaper-than-fsync",
            "--wide")   # the line unwrapped
    assert r.exit_code == 0, r.stderr
    assert "nothing to change." in r.stdout
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("ignored rules")]
    assert line == [f"ignored rules (--ignore-rule): {plp_rule}, "
                    "use-fdatasync.cheaper-than-fsync"]
    # without --ignore-rule: an empty list, and no such line
    serve(FakeServer(load_fixture("mysql-8.4")))
    r = run("--interval", "5", "--profile", profile_files["volatile"], "--no-predict", "--json")
    assert json.loads(r.stdout)["ignored_rules"] == []
    serve(FakeServer(load_fixture("mysql-8.4")))
    r = run("--interval", "5", "--profile", profile_files["volatile"], "--no-predict")
    assert "ignored rules" not in r.stdout


def test_ignore_rule_unknown_is_a_usage_error(monkeypatch):
    def boom(opts):
        raise AssertionError("must not connect")
    monkeypatch.setattr(advise_cli, "connect", boom)
    r = run("--interval", "2", "--ignore-rule", "doublewrite.of")
    assert r.exit_code == 2, r.stderr
    line = one_line_error(r)
    assert line.startswith("innoflush: error: --ignore-rule 'doublewrite.of': no such rule")
    assert "closest: doublewrite.off-where-pages-can-tear" in line
    r = run("--interval", "2", "--ignore-rule", "sync-binlog")     # the old family id
    assert r.exit_code == 2
    assert ("closest: sync-binlog.strict-requires-1, sync-binlog.relaxed-replica-allows-0"
            in one_line_error(r))


def test_p_without_a_terminal_reads_the_piped_line_without_getpass_s_warning(tmp_path):
    """A script piping the password to -p gets no GetPassWarning (with the interpreter's
    path); nothing piped is the end of input at a prompt: interrupted, exit 130."""
    import socket
    import subprocess
    import sys

    with socket.socket() as s:        # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "innoflush", "advise", "-h", "127.0.0.1", "-P", str(port),
           "-u", "x", "-p", "--no-predict"]
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    piped = subprocess.run(cmd, input=SECRET + "\n", capture_output=True, text=True, env=env,
                           cwd=tmp_path, timeout=60)
    assert "Warning" not in piped.stderr and "getpass" not in piped.stderr, piped.stderr
    assert "connection refused" in piped.stderr and SECRET not in piped.stderr
    nothing = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             env=env, cwd=tmp_path, timeout=60)
    assert nothing.returncode == 130, nothing.stderr
    assert nothing.stderr.splitlines()[-1] == "innoflush: interrupted"
    assert "Warning" not in nothing.stderr and "Traceback" not in nothing.stderr
