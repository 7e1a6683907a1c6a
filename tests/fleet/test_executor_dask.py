"""The same simulations through a real Dask cluster — `dask scheduler` and two `dask
worker` processes started here on 127.0.0.1, free ports — and through the local process
pool: identical results (a sweep's TPS, latencies and counters; advise's predictions).
Without the distributed package the test is skipped loudly, and fails under CI=true."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from innoflush.executor import DaskExecutor, LocalPoolExecutor, SchedulerError, make_executor
from innoflush.simulator.sweep import run_sweep
from tests.helpers.daskcluster import dask_cluster, start_scheduler, stop_all
from tests.helpers.simprofiles import consumer_ssd
from tests.helpers.sweeps import CHANGES, _slow_echo, flat, predictions, sweep_cases

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def _need_dask() -> None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        msg = "NO DASK: pip install -e '.[test]' (the distributed package)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg + " (CI=true: Dask is required)", pytrace=False)
        pytest.skip(msg)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A scheduler with two single-thread workers (tests/helpers/daskcluster.py)."""
    _need_dask()
    with dask_cluster(tmp_path_factory.mktemp("dask")) as address:
        yield address


def test_a_scheduler_without_workers_is_one_clear_error(tmp_path):
    _need_dask()
    procs: list[subprocess.Popen] = []
    try:
        address = start_scheduler(tmp_path, procs)
        with pytest.raises(SchedulerError, match="no worker joined within 2 s"):
            make_executor(address, timeout_s=2)
    finally:
        stop_all(procs)


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
