"""A real Dask cluster on 127.0.0.1 for the tests and benchmarks: `dask scheduler` and
`dask worker` processes (the distributed package's own), each in its own process group,
on free ports, stopped with every child they started. The repository's root is on
the workers' path, so a function of tests.helpers can run there."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


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
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("INNOFLUSH_SCHEDULER", None)
    return subprocess.Popen([sys.executable, "-m", "dask", *args], cwd=log.parent, env=env,
                            stdin=subprocess.DEVNULL, stdout=open(log, "wb"),
                            stderr=subprocess.STDOUT, start_new_session=True)


def start_scheduler(logs: Path, procs: list) -> str:
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


def stop_all(procs: list) -> None:
    for p in reversed(procs):
        _stop(p)
    for p in procs:
        if "scheduler" in p.args:
            port = int(p.args[p.args.index("--port") + 1])
            assert not _listening(port), f"port {port} still open"


@contextlib.contextmanager
def dask_cluster(logs: Path, workers: int = 2) -> Iterator[str]:
    """tcp://127.0.0.1:PORT of a scheduler with `workers` single-thread workers (the
    simulations are pure Python: threads would share one interpreter lock); logs in
    `logs`. Everything is stopped on the way out."""
    procs: list[subprocess.Popen] = []
    try:
        address = start_scheduler(logs, procs)
        for i in range(1, workers + 1):
            procs.append(_start(["worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                                 "--no-dashboard", "--name", f"w{i}", "--local-directory",
                                 str(logs)], logs / f"worker{i}.log"))
        yield address
    finally:
        stop_all(procs)
