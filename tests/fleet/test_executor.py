"""innoflush.executor: the local process pool beside in-process runs (same results, in
order, from several threads at once), bad --scheduler values as one clear line, and the
advise predictions batched into one map. The real Dask cluster is
tests/fleet/test_executor_dask.py."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from innoflush import executor as ex_mod
from innoflush.commands.root import main
from innoflush.errors import UsageError
from innoflush.executor import (
    InProcessExecutor,
    LocalPoolExecutor,
    SchedulerError,
    make_executor,
    scheduler_address,
)
from innoflush.simulator.sweep import run_sweep
from tests.helpers.simprofiles import consumer_ssd
from tests.helpers.sweeps import CHANGES, _slow_echo, flat, predictions, sweep_cases

pytestmark = pytest.mark.processes

ROOT = Path(__file__).resolve().parents[2]


def test_local_pool_gives_the_in_process_results_in_order():
    cases = sweep_cases()
    profile = consumer_ssd()
    here = run_sweep(cases, profile, duration_s=0.4, seed=7, executor=InProcessExecutor())
    with LocalPoolExecutor(2) as pool:
        seen = []
        pooled = run_sweep(cases, profile, duration_s=0.4, seed=7, executor=pool,
                           progress=lambda done, total: seen.append((done, total)))
    assert flat(pooled) == flat(here)
    assert [r[0][0].config.innodb_flush_method for r in pooled] == \
        [c.innodb_flush_method for c, _ in cases]
    assert seen[-1] == (len(cases), len(cases))
    # another seed gives other figures: the comparison above could fail
    other = run_sweep(cases[:1], profile, duration_s=0.4, seed=8, executor=InProcessExecutor())
    assert flat(other)[0] != flat(here)[0]


def test_map_keeps_the_items_order_and_uses_other_processes():
    with LocalPoolExecutor(2) as pool:
        out = pool.map(_slow_echo, range(10))
        assert [x for x, _ in out] == list(range(10))
        assert os.getpid() not in {pid for _, pid in out}
        # one item runs here: a process would only add its start
        assert pool.map(_slow_echo, [3]) == [(3, os.getpid())]
        assert pool.map(_slow_echo, []) == []


def test_several_threads_map_at_once():
    results: dict[int, list] = {}
    errors: list[BaseException] = []
    with LocalPoolExecutor(2) as pool:
        def work(t: int) -> None:
            try:
                results[t] = pool.map(_slow_echo, range(t * 10, t * 10 + 7))
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)
        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(60)
    assert not errors
    for t in range(4):
        assert [x for x, _ in results[t]] == list(range(t * 10, t * 10 + 7))


def test_pool_workers_hold_no_descriptor_of_the_callers_other_threads():
    """The fleet maps from several threads while others start processes: a worker made
    by fork() at that moment would inherit the other child's exec pipe (close-on-exec
    closes it only in processes that exec), and that Popen would wait for ever. Here a
    pipe stands for it: once its write end is closed here, the read end must see the
    end at once — no pool worker may hold a copy."""
    import select

    r, w = os.pipe()   # close-on-exec, as subprocess's own
    try:
        with LocalPoolExecutor(2) as pool:
            assert len(pool.map(_slow_echo, range(4))) == 4   # the workers are up
            os.close(w)
            w = -1
            ready, _, _ = select.select([r], [], [], 5.0)
            assert ready, "a pool worker holds the write end of the caller's pipe"
            assert os.read(r, 1) == b""
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)


def test_a_failing_item_raises_in_the_caller():
    with LocalPoolExecutor(2) as pool, pytest.raises(TypeError):
        pool.map(abs, [1, "x", 3])


def test_make_executor_local_choices(monkeypatch):
    monkeypatch.delenv(ex_mod.ENV_SCHEDULER, raising=False)
    assert isinstance(make_executor(jobs=1), InProcessExecutor)
    with make_executor(jobs=3) as ex:
        assert isinstance(ex, LocalPoolExecutor) and ex.jobs == 3
        assert ex.describe() == "local process pool (3 processes)"
    with make_executor() as ex:
        assert ex.jobs == (os.cpu_count() or 1) or isinstance(ex, InProcessExecutor)
    with pytest.raises(UsageError, match="--jobs must be at least 1"):
        make_executor(jobs=0)


@pytest.mark.parametrize("url", ["127.0.0.1:8786", "http://127.0.0.1:8786", "tcp://:8786",
                                 "tcp://host:port", "tcp://host:70000", "tcp://host"])
def test_a_malformed_scheduler_is_a_usage_error(url, monkeypatch):
    with pytest.raises(UsageError, match="tcp://HOST:PORT"):
        scheduler_address(url)
    monkeypatch.setenv(ex_mod.ENV_SCHEDULER, url)
    with pytest.raises(UsageError, match="tcp://HOST:PORT"):
        make_executor()


def test_the_scheduler_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(ex_mod.ENV_SCHEDULER, "tcp://10.0.0.1:8786")
    assert scheduler_address(None) == "tcp://10.0.0.1:8786"
    assert scheduler_address("tcp://h:1") == "tcp://h:1"   # the option wins
    monkeypatch.delenv(ex_mod.ENV_SCHEDULER)
    assert scheduler_address(None) is None


def test_without_dask_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)   # import distributed fails
    with pytest.raises(UsageError, match=r"pip install 'innoflush\[dask\]'"):
        make_executor("tcp://127.0.0.1:8786")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _one_line(r) -> str:
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    return lines[0]


@pytest.mark.parametrize("command", [["simulate", "--profile", "samsung-990-pro",
                                      "--connections", "1,2", "--duration", "0.2"]])
def test_an_unreachable_scheduler_is_one_line_exit_2(command, monkeypatch):
    monkeypatch.setattr(ex_mod, "CONNECT_TIMEOUT_S", 2.0)
    url = f"tcp://127.0.0.1:{_closed_port()}"
    t0 = time.monotonic()
    r = CliRunner().invoke(main, [*command, "--scheduler", url])
    assert r.exit_code == 2, r.output
    line = _one_line(r)
    assert line.startswith(f"innoflush: error: --scheduler {url}: cannot connect")
    assert time.monotonic() - t0 < 60   # bounded: not a hang (the timeout is 2 s)
    with pytest.raises(SchedulerError, match="cannot connect"):
        make_executor(url, timeout_s=1)
    r = CliRunner().invoke(main, [*command, "--scheduler", "nope"])
    assert r.exit_code == 2 and "tcp://HOST:PORT" in _one_line(r)
    r = CliRunner().invoke(main, [*command], env={"INNOFLUSH_SCHEDULER": "nope"})
    assert r.exit_code == 2 and "tcp://HOST:PORT" in _one_line(r)


def test_advise_and_lab_validate_check_the_scheduler_first(monkeypatch):
    r = CliRunner().invoke(main, ["advise", "--from", str(ROOT / "tests" / "fixtures"
                                  / "captures" / "mariadb-10.11-odirect" / "tab"),
                                  "--profile", "samsung-990-pro", "--scheduler", "x:1"])
    assert r.exit_code == 2 and "tcp://HOST:PORT" in _one_line(r)
    r = CliRunner().invoke(main, ["lab", "validate", "--scheduler", "x:1", "--workload",
                                  "insert-2vcpu", "--devices", "local", "--profile",
                                  "samsung-990-pro"])
    assert r.exit_code == 2 and "tcp://HOST:PORT" in _one_line(r)


class CountingExecutor(InProcessExecutor):
    """In-process, and what it was given: how many map calls, how many items each."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def map(self, fn, items, progress=None):
        items = list(items)
        self.calls.append(len(items))
        return super().map(fn, items, progress)


def test_advise_predictions_are_one_batch_and_the_same_through_a_pool():
    counting = CountingExecutor()
    here = predictions(counting)
    # the current settings and each change, each at its three workload variants, at once
    assert counting.calls == [3 * (1 + len(CHANGES))]
    with LocalPoolExecutor(2) as pool:
        assert predictions(pool) == here
    assert here[0]["change"]["tps_pct"] != here[1]["change"]["tps_pct"]


def test_simulate_is_the_same_in_a_new_interpreter_whatever_its_hash_seed():
    """What a Dask worker is: another process, another PYTHONHASHSEED."""
    args = ["simulate", "--profile", "samsung-990-pro", "--connections", "4",
            "--trx-commit", "1", "--duration", "0.3", "--json", "--jobs", "1"]
    outs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        env.pop(ex_mod.ENV_SCHEDULER, None)
        proc = subprocess.run([sys.executable, "-m", "innoflush", *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        outs.append(json.loads(proc.stdout))
    here = CliRunner().invoke(main, args)
    assert here.exit_code == 0, here.output
    assert outs[0] == outs[1] == json.loads(here.stdout)


def test_local_runs_do_not_import_dask():
    code = ("import sys; from innoflush.executor import make_executor\n"
            "with make_executor(jobs=2) as ex: assert ex.map(abs, [-1, -2]) == [1, 2]\n"
            "print(sorted(m for m in ('dask', 'distributed') if m in sys.modules))")
    env = {k: v for k, v in os.environ.items() if k != ex_mod.ENV_SCHEDULER}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "[]\n"


def test_ctrl_c_stops_a_pooled_sweep_at_once():
    """SIGINT to the process group, as a terminal's Ctrl-C: exit 130 with one line, the
    pool's processes ended (not waited for: each simulation takes seconds)."""
    env = {k: v for k, v in os.environ.items() if k != ex_mod.ENV_SCHEDULER}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.Popen([sys.executable, "-m", "innoflush", "simulate", "--profile",
                             "samsung-990-pro", "--connections", "1,4,16,32", "--duration",
                             "600", "--jobs", "2"], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)

    def group() -> list[int]:
        out = subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True, text=True)
        return [int(x) for x in out.stdout.split()]
    try:
        deadline = time.monotonic() + 60
        while len(group()) < 3 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert len(group()) >= 3, "the pool's two processes did not start"
        time.sleep(0.5)
        os.killpg(proc.pid, 2)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.wait()
    assert proc.returncode == 130, err
    assert err == "innoflush: interrupted\n"
    deadline = time.monotonic() + 10
    while group() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert group() == []
