"""The user's own load generator in the lab (``--workload-cmd``): placeholders and their
quoting, naming, the command's process group (stopped with SIGTERM, then SIGKILL), its
CPU, and the CLI's usage errors — pure, no server. The real runs (a fake generator that
INSERTs with PyMySQL, a failing command, Ctrl-C) are in test_lab_command_server.py."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main
from innoflush.errors import UsageError
from innoflush.lab.experiments.options import LabOptions
from innoflush.lab.load.command_spec import (
    PLACEHOLDERS,
    WorkloadCommand,
    check_placeholders,
    default_name,
    placeholders_in,
    seconds_for,
    split_named,
    substitute,
    workload_commands,
)
from innoflush.lab.load.external import (
    CommandLoad,
    CommandProcess,
    command_cpu,
    group_cpu_seconds,
    keep_log,
    statements_per_trx,
)
from innoflush.lab.load.workload import WorkloadSpec

VALUES = {"host": "127.0.0.1", "port": "3307", "socket": "/tmp/a dir/it's $HOME \"x\".sock",
          "user": "root", "password_file": "/tmp/a dir/pw", "threads": "4", "seconds": "21",
          "database": "innoflush_lab"}


def sh_words(command: str) -> list[str]:
    """The words sh makes of a command (each printed on a line of its own)."""
    out = subprocess.run(["/bin/sh", "-c", "printf '%s\\n' " + command], capture_output=True,
                         text=True, check=True, env={"HOME": "/home/h", "PATH": "/usr/bin:/bin"})
    return out.stdout.splitlines()


# ---- placeholders ----------------------------------------------------------------------------

def test_every_placeholder_is_found_and_an_unknown_one_is_a_usage_error():
    cmd = " ".join("{" + p + "}" for p in PLACEHOLDERS)
    assert placeholders_in(cmd) == list(PLACEHOLDERS)
    check_placeholders(cmd, "--workload-cmd")
    with pytest.raises(UsageError) as exc:
        check_placeholders("sysbench --threads={thread} --db={database} {pass}",
                           "--workload-cmd")
    msg = str(exc.value)
    assert "{pass}" in msg and "{thread}" in msg and "{database}" not in msg.split(":")[1]
    assert "\n" not in msg and "{password_file}" in msg


def test_a_socket_path_with_spaces_stays_one_word_wherever_it_stands():
    path = VALUES["socket"]
    for form in ("--mysql-socket={socket}", '--mysql-socket="{socket}"',
                 "--mysql-socket='{socket}'", '--mysql-socket="$(printf %s {socket})"'):
        words = sh_words(substitute(form, VALUES))
        assert words == [f"--mysql-socket={path}"], (form, words)
    # the recipe's password: read from the file by the shell, never on the command line
    cmd = substitute('--mysql-password="$(cat {password_file})"', VALUES)
    assert "'/tmp/a dir/pw'" in cmd


def test_braces_that_are_not_placeholders_are_left_to_the_shell():
    cmd = "awk '{print $1}' ${HOME} {{threads}} {threads} {1..2}"
    assert placeholders_in(cmd) == ["threads"]
    assert sh_words(substitute(cmd, VALUES)) == ["awk", "{print $1}", "/home/h", "{threads}",
                                                 "4", "{1..2}"]


def test_a_placeholder_without_a_value_is_a_usage_error():
    with pytest.raises(UsageError, match=r"\{socket\}.*docker"):
        substitute("x {socket}", {**VALUES, "socket": None})
    opts = LabOptions(backend="docker", command=WorkloadCommand("w", "run {socket}"))
    with pytest.raises(UsageError, match=r"\{socket\}"):
        opts.validate()


def test_seconds_outlive_the_warmup_and_the_window():
    assert seconds_for(1, 3) == 15                     # 4 + 10 + 0.4, whole
    assert seconds_for(0, 100) >= 100 + 10
    assert isinstance(seconds_for(0.5, 2.2), int)


# ---- names -------------------------------------------------------------------------------------

def test_a_bare_command_is_named_after_its_first_words():
    assert default_name("sysbench oltp_insert --threads={threads} run") == "sysbench oltp_insert"
    assert default_name("/usr/bin/sysbench oltp_write_only run") == "sysbench oltp_write_only"
    assert default_name("python3 /x/gen.py {host}") == "python3"
    assert default_name("echo starting; exit 3") == "echo"
    assert split_named("w1=sysbench --a=b run") == ("w1", "sysbench --a=b run")
    assert split_named("sysbench --a=b run") == (None, "sysbench --a=b run")
    assert split_named("FOO=bar cmd") == (None, "FOO=bar cmd")      # a shell assignment


def test_prepare_commands_pair_with_their_workloads():
    got = workload_commands(["ins=sysbench oltp_insert run", "sysbench oltp_insert run --x",
                             "sysbench oltp_insert run"],
                            ["sysbench prepare", "ins=python3 prep.py"])
    assert [(w.name, w.prepare) for w in got] == [
        ("ins", "python3 prep.py"), ("sysbench oltp_insert", "sysbench prepare"),
        ("sysbench oltp_insert #2", "sysbench prepare")]
    assert workload_commands(["a"])[0].prepare is None
    for cmds, preps, match in (
            (["w=a", "w=b"], [], "given twice"),
            (["w=a"], ["v=prep"], "no --workload-cmd is named 'v'"),
            (["w=a"], ["x", "y"], "one bare command"),
            ([], ["x"], "needs --workload-cmd"),
            (["w=a {nope}"], [], "unknown placeholder"),
            (["w=a"], ["p {nope}"], "--workload-prepare: unknown placeholder"),
            (["   "], [], "the command is empty")):
        with pytest.raises(UsageError, match=match):
            workload_commands(cmds, preps)


# ---- the CLI's usage errors (nothing is started) ---------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["lab", "run", "--workload-cmd", "x {foo}"], "unknown placeholder(s) {foo}"),
    (["lab", "calibrate", "--workload-cmd", "x {foo}"], "unknown placeholder(s) {foo}"),
    (["lab", "validate", "--workload-cmd", "x {foo}"], "unknown placeholder(s) {foo}"),
    (["lab", "run", "--workload-cmd", "x", "--workload", "oltp"], "--workload: not with"),
    (["lab", "run", "--workload-prepare", "x"], "--workload-prepare needs --workload-cmd"),
    (["lab", "calibrate", "--workload-cmd", "x", "--rows-per-trx", "2"], "--rows-per-trx"),
    (["lab", "validate", "--workload-cmd", "x", "--flush-method", "O_DIRECT"],
     "--flush-method: not with --workload-cmd"),
    (["lab", "validate", "--workload-cmd", "x", "--workload", "insert"], "--workload: not"),
    (["lab", "validate", "--changes", "trx-commit"], "--changes is for --workload-cmd"),
    (["lab", "validate", "--workload-cmd", "x", "--changes", "trx-commit,nope"],
     "--changes 'nope'"),
    (["lab", "validate", "--workload-cmd", "x", "--devices", "no-such-device"],
     "no-such-device"),
    (["lab", "run", "--backend", "docker", "--workload-cmd", "x {socket}"], "{socket}"),
])
def test_bad_workload_commands_are_one_usage_line(args, message, tmp_path):
    r = CliRunner().invoke(main, [*args, "--datadir-on", str(tmp_path)])
    assert r.exit_code == 2, r.output
    err = r.output.strip()
    assert message in err and err.startswith("innoflush: error:") and "\n" not in err
    assert "Traceback" not in r.output
    assert not list(tmp_path.iterdir())           # nothing was started


# ---- the command's process group ---------------------------------------------------------

def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its reaper is not)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return text[text.rfind(")") + 2] not in "ZX"


def test_stop_terminates_the_whole_group(tmp_path):
    p = CommandProcess("sleep 300 & sleep 300 & echo started; wait", tmp_path / "log",
                       tmp_path).start()
    time.sleep(0.3)
    members = group_cpu_seconds(p.pgid)
    assert len(members) >= 3 and p.poll() is None      # sh and its two sleeps
    p.stop(grace_s=3)
    assert p.stopped_by == "SIGTERM" and p.proc.returncode is not None
    assert not any(_alive(pid) for pid in members)
    assert not group_cpu_seconds(p.pgid)              # no live member left
    assert p.tail() == ["started"]


def test_a_command_that_ignores_sigterm_is_killed(tmp_path):
    p = CommandProcess("trap '' TERM; echo ready; while :; do sleep 0.05; done",
                       tmp_path / "log", tmp_path).start()
    time.sleep(0.3)
    t = time.monotonic()
    p.stop(grace_s=0.5)
    assert p.stopped_by == "SIGKILL" and time.monotonic() - t < 5
    assert not group_cpu_seconds(p.pgid)


def test_a_command_that_ended_is_not_signalled_and_keeps_its_exit_code(tmp_path):
    p = CommandProcess("echo out; echo err >&2; exit 7", tmp_path / "log", tmp_path).start()
    while p.poll() is None:
        time.sleep(0.02)
    p.stop()
    assert p.proc.returncode == 7 and p.stopped_by is None
    assert p.tail() == ["out", "err"]


def test_the_log_never_shows_the_password(tmp_path):
    secret = "S3cret-pw"
    p = CommandProcess(f"echo connecting with {secret}; echo done", tmp_path / "log",
                       tmp_path).start()
    p.proc.wait()
    assert p.tail(secret=secret) == ["connecting with ********", "done"]
    kept = keep_log(tmp_path / "log", "my cmd/1", secret)
    try:
        assert Path(kept).name.startswith("innoflush-workload-my-cmd-1-")
        assert secret not in Path(kept).read_text() and "********" in Path(kept).read_text()
    finally:
        os.unlink(kept)


def test_the_group_cpu_counts_a_busy_child(tmp_path):
    py = sys.executable
    p = CommandProcess(f"{py} -c 'import time; e=time.time()+0.6\nwhile time.time()<e: pass'",
                       tmp_path / "log", tmp_path).start()
    time.sleep(0.1)
    a = group_cpu_seconds(p.pgid)
    p.proc.wait()
    assert a and sum(a.values()) >= 0
    cpu = command_cpu({1: 1.0, 2: 0.5}, {1: 1.6, 2: 0.9, 3: 0.2}, seconds=2.0, commits=100,
                      cores=2)
    assert cpu["cpu_s"] == pytest.approx(1.2) and cpu["cpu_us_per_trx"] == pytest.approx(12000)
    assert cpu["busy_max"] == pytest.approx(0.3) and cpu["processes"] == 3
    assert cpu["share_of_machine"] == pytest.approx(0.3) and not cpu["bottleneck"]
    assert command_cpu({}, {1: 3.8}, 2.0, 10, 2)["bottleneck"]


def test_statements_per_transaction_leave_out_the_lab_s_own_reads():
    n, src = statements_per_trx({"Questions": 2_010, "Com_show_status": 8,
                                 "Com_show_processlist": 2}, 1_000)
    assert n == 2 and "Questions" in src
    assert statements_per_trx({}, 10)[0] == 1
    assert statements_per_trx({"Questions": 5}, 100)[0] == 1


def _load(tmp_path: Path, settle_s: float, async_point: int | None) -> CommandLoad:
    server = SimpleNamespace(HOST="127.0.0.1", port=3307, socket=None)
    spec = WorkloadSpec(connections=2, duration_s=5, warmup_s=1, settle_s=settle_s)
    return CommandLoad(WorkloadCommand("w", "sleep 30"), server, tmp_path, spec, {},
                       "mariadb", False, async_point=async_point)


def _ages(*ages):
    """SHOW GLOBAL STATUS as the settling reads it, one checkpoint age a read."""
    it = iter(ages)
    return lambda: {"Innodb_checkpoint_age": next(it)}


@pytest.mark.parametrize("ages, how", [((10, 50, 120), "async_point"),
                                       ((10, 50, 30), "age_fell")])
def test_settling_ends_when_the_page_cleaner_is_at_work(tmp_path, ages, how):
    load = _load(tmp_path, 30.0, async_point=100)
    # {seconds}: the command runs through the warm-up, the settling and the window
    assert load.values["seconds"] == str(seconds_for(1 + 30.0, 5))
    proc = CommandProcess("sleep 30", tmp_path / "log", tmp_path).start()
    try:
        st = load.settle(proc, _ages(*ages))
    finally:
        proc.stop()
    assert st["reached"] is True and st["how"] == how
    assert st["age_bytes"] == ages[-1] and st["async_point_bytes"] == 100
    assert st["seconds"] < 5


def test_settling_gives_up_after_its_time_and_without_an_age(tmp_path):
    load = _load(tmp_path, 0.6, async_point=100)
    proc = CommandProcess("sleep 30", tmp_path / "log", tmp_path).start()
    try:
        st = load.settle(proc, _ages(*range(10, 60, 5)))
        assert st["reached"] is False and st["how"] is None
        assert 0.6 <= st["seconds"] < 3
        # a server that shows no checkpoint age cannot say
        st = load.settle(proc, lambda: {})
        assert st["reached"] is None and st["age_bytes"] is None
    finally:
        proc.stop()
