"""The model's instructions per commit in its steady state, counted by callgrind: a
measure of the simulator's cost that the host's load does not move (bench/sim_speed.py
times it, and its figures move by tens of % from minute to minute on a shared host).

The model (MySQL 8.0 defaults, the PLP device of tests/helpers/simprofiles.py, seed 1) runs
--warm commits under valgrind with instrumentation off (about 5x slower than without
valgrind), then turns it on (callgrind_control -i on) and runs N more; the
instructions of two such runs, N = --commits and N = 3 x --commits, are subtracted, so
that what the switch and the exit cost cancels out. The default warm-up (100,000
commits) reaches the page cleaner's busy regime, where sim_speed's default run spends
most of its time; callgrind from the start would count the first few thousand commits
only, before the redo has filled.

    python bench/sim_instructions.py [--connections 1 16] [--warm 100000]
        [--commits 5000] [--baseline DIR]

Needs valgrind (Debian's package: apt-get install valgrind). A run takes 1-3 minutes
per checkout and connection count, whatever the host's load.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")

_RUN = """
import os, subprocess, sys, time
sys.path.insert(0, {tests!r})
from simprofiles import plp_ssd
from innoflush.simulator import ServerConfig, Workload
from innoflush.simulator.server import Server
srv = Server(ServerConfig(), Workload(connections={clients}), plp_ssd(), seed=1)
srv.start()
srv.measure(3600.0, max_commits={warm})
subprocess.Popen(["callgrind_control", "-i", "on", str(os.getpid())],
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
t = time.monotonic()
while time.monotonic() - t < 3:   # valgrind reads the request between blocks
    time.sleep(0.05)
srv.measure(3600.0, max_commits={commits})
os._exit(0)
"""


def instructions(checkout: str, clients: int, warm: int, commits: int) -> int:
    """callgrind's instruction count from the switch on to the exit."""
    code = _RUN.format(tests=os.path.join(ROOT, "tests", "helpers"), clients=clients, warm=warm,
                       commits=commits)
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--instr-atstart=no",
         "--callgrind-out-file=/dev/null", sys.executable, "-P", "-c", code],
        env={**os.environ, "PYTHONPATH": os.path.abspath(checkout)},
        capture_output=True, text=True, check=True).stderr
    m = re.search(r"Collected : (\d+)", out)
    if not m:
        raise SystemExit(f"callgrind reported no count:\n{out[-2000:]}")
    return int(m.group(1))


def per_commit(checkout: str, clients: int, warm: int, commits: int) -> float:
    a = instructions(checkout, clients, warm, commits)
    b = instructions(checkout, clients, warm, 3 * commits)
    return (b - a) / (2 * commits)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--connections", type=int, nargs="+", default=[1, 16])
    ap.add_argument("--warm", type=int, default=100_000)
    ap.add_argument("--commits", type=int, default=5_000)
    ap.add_argument("--baseline", metavar="DIR",
                    help="another checkout counted beside this one (before/after)")
    args = ap.parse_args()
    missing = [t for t in ("valgrind", "callgrind_control") if not shutil.which(t)]
    if missing:
        raise SystemExit(f"{' and '.join(missing)} not found: apt-get install valgrind")
    models = {"model": ROOT} | ({"baseline": args.baseline} if args.baseline else {})
    for clients in args.connections:
        counts = {name: per_commit(d, clients, args.warm, args.commits)
                  for name, d in models.items()}
        line = f"{clients:2d} connections, after {args.warm:,} commits: " + ", ".join(
            f"{name} {n / 1e3:,.1f} k instructions/commit" for name, n in counts.items())
        if args.baseline:
            line += f" ({counts['model'] / counts['baseline'] - 1:+.1%})"
        print(line, flush=True)


if __name__ == "__main__":
    main()
