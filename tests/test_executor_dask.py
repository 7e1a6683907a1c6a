"""The same simulations through a real Dask cluster — `dask scheduler` and two `dask
worker` processes started here on 127.0.0.1, free ports — and through the local process
pool: identical results (a sweep's TPS, latencies and counters; advise's predictions).
Without the distributed package the test is skipped loudly, and fails under CI=true."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from simprofiles import consumer_ssd
from test_executor import CHANGES, _slow_echo, flat, predictions, sweep_cases

from innoflush.executor import DaskExecutor, LocalPoolExecutor, SchedulerError, make_executor
from innoflush.simulator.sweep import run_sweep

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


def _need_dask() -> None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        msg = "NO DASK: pip install -e '.[test]' (the distributed package)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg + " (CI=true: Dask is required)", pytrace=False)
        pytest.skip(msg)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _group_pids(pgid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if os.getpgid(int(d.name)) == pgid:
                    out.append(int(d.name))
            except (ProcessLookupError, PermissionError):
                pass
    return out


def _stop(proc: subprocess.Popen) -> None:
    """The process and every child it started (its own process group): TERM, then KILL."""
    if proc.poll() is None:
        os.killpg(proc.pid, 15)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait(10)
    deadline = time.monotonic() + 20
    while _group_pids(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = _group_pids(proc.pid)
    for pid in left:
        os.kill(pid, 9)
    assert not left, f"processes of {proc.args[:3]} still running: {left}"


def _start(args: list[str], log: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"}
    env.pop("INNOFLUSH_SCHEDULER", None)
    return subprocess.Popen([sys.executable, "-m", "dask", *args], cwd=log.parent, env=env,
                            stdin=subprocess.DEVNULL, stdout=open(log, "wb"),
                            stderr=subprocess.STDOUT, start_new_session=True)


def _scheduler(logs: Path, procs: list) -> str:
    port = _free_port()
    sched = _start(["scheduler", "--host", "127.0.0.1", "--port", str(port),
                    "--no-dashboard"], logs / f"scheduler-{port}.log")
    procs.append(sched)
    deadline = time.monotonic() + 60
    while not _listening(port):
        assert sched.poll() is None, (logs / f"scheduler-{port}.log").read_text()
        assert time.monotonic() < deadline, "the scheduler did not listen in 60 s"
        time.sleep(0.2)
    return f"tcp://127.0.0.1:{port}"


def _stop_all(procs: list) -> None:
    for p in reversed(procs):
        _stop(p)
    for p in procs:
        if "scheduler" in p.args:
            port = int(p.args[p.args.index("--port") + 1])
            assert not _listening(port), f"port {port} still open"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """tcp://127.0.0.1:PORT of a scheduler with two single-thread workers (the
    simulations are pure Python: threads would share one interpreter lock). The
    tests' folder is on the workers' path: a function of this module runs there."""
    _need_dask()
    logs = tmp_path_factory.mktemp("dask")
    procs: list[subprocess.Popen] = []
    try:
        address = _scheduler(logs, procs)
        for i in (1, 2):
            procs.append(_start(["worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                                 "--no-dashboard", "--name", f"w{i}", "--local-directory",
                                 str(logs)], logs / f"worker{i}.log"))
        yield address
    finally:
        _stop_all(procs)


def test_a_scheduler_without_workers_is_one_clear_error(tmp_path):
    _need_dask()
    procs: list[subprocess.Popen] = []
    try:
        address = _scheduler(tmp_path, procs)
        with pytest.raises(SchedulerError, match="no worker joined within 2 s"):
            make_executor(address, timeout_s=2)
    finally:
        _stop_all(procs)


def _two_workers(ex: DaskExecutor) -> None:
    ex.client.wait_for_workers(2, timeout=60)


def test_a_sweep_on_dask_is_the_local_pools(cluster):
    cases = sweep_cases()
    profile = consumer_ssd()
    with make_executor(cluster) as dask_ex:
        assert isinstance(dask_ex, DaskExecutor)
        _two_workers(dask_ex)
        assert dask_ex.describe() == f"dask {cluster} (2 workers, 2 threads)"
        seen = []
        on_dask = run_sweep(cases, profile, duration_s=0.5, seed=11, executor=dask_ex,
                            replications=2,
                            progress=lambda done, total: seen.append((done, total)))
        # the tasks ran on both workers, not here
        where = dask_ex.map(_hostpid, range(8))
    with LocalPoolExecutor(2) as pool:
        local = run_sweep(cases, profile, duration_s=0.5, seed=11, executor=pool,
                          replications=2)
    assert flat(on_dask) == flat(local)
    assert [r.tps for runs, _ in on_dask for r in runs] == \
        [r.tps for runs, _ in local for r in runs]
    assert seen[-1] == (len(cases), len(cases))
    assert os.getpid() not in where and len(set(where)) == 2


def _hostpid(_x: int) -> int:
    time.sleep(0.2)   # long enough for both workers to take some
    return os.getpid()


def test_advise_predictions_on_dask_are_the_local_pools(cluster):
    with make_executor(cluster) as dask_ex:
        on_dask = predictions(dask_ex)
    with LocalPoolExecutor(2) as pool:
        local = predictions(pool)
    assert on_dask == local
    assert len(on_dask) == len(CHANGES)


def test_simulate_command_on_dask_prints_what_the_local_one_does(cluster):
    args = [sys.executable, "-m", "innoflush", "simulate", "--profile", "samsung-990-pro",
            "--trx-commit", "1,2", "--connections", "1,4", "--duration", "0.4", "--json"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("INNOFLUSH_SCHEDULER", None)
    local = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=300)
    remote = subprocess.run(args, cwd=ROOT, env={**env, "INNOFLUSH_SCHEDULER": cluster},
                            capture_output=True, text=True, timeout=300)
    assert local.returncode == 0, local.stderr
    assert remote.returncode == 0, remote.stderr
    assert remote.stdout == local.stdout


def test_several_threads_map_on_one_dask_client(cluster):
    results: dict[int, list] = {}
    with make_executor(cluster) as dask_ex:
        def work(t: int) -> None:
            results[t] = dask_ex.map(_slow_echo, range(t * 10, t * 10 + 6))
        threads = [threading.Thread(target=work, args=(t,)) for t in range(3)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(120)
    for t in range(3):
        assert [x for x, _ in results[t]] == list(range(t * 10, t * 10 + 6))
