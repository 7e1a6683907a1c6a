"""Simulator speed and memory: a bare simpy closed loop beside the full InnoDB model.

The bare loop is N clients, each in a closed loop of a think time (the model's client
time per transaction) and one shared resource held for a sampled service time — the
least a simpy model of the same closed-loop clients can do. The full model runs the same
number of commits with the redo log writer/flusher, binlog ordered commit, page cleaner
and doublewrite on. Each round runs, at 16 and at 1 connection, the full model and the
bare loop in one process, in alternating chunks of 10,000 commits (and so the model of
a --baseline checkout, when given, in a process of its own), so that both see the same
minutes of the machine: run one after the other, the bare loop alone moved 59-125 k
commits/s from one minute to the next. The medians over the rounds are printed, with
the model's events per commit (event ids taken, hand-offs included; a timeout the
running thread ran through, Environment.runs_through, takes none; one it passed while
other events were processed, Environment.pass_time, takes one though it never enters
the heap). Rates are commits per CPU second of the process that ran them
(time.process_time): on a shared host the wall clock measures the neighbours' load
more than the code.

The memory check runs the full model at 16 connections in a process of its own and
reads its resident set after 1M commits and after each further million up to
--memory-commits: the growth from the first million to the last, and the bytes per
commit between them, extrapolated to 10M commits when the run stops short of them.

Targets (issue 17): full/bare >= 0.35 at 16 connections and >= 0.30 at 1; memory flat
(< 10 % growth from 1M to 10M commits).

    python bench/sim_speed.py [--commits 200000] [--rounds 3] [--baseline DIR]
        [--memory-commits 3000000 | --no-memory]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import simpy

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "helpers"))
CONNECTIONS = (16, 1)

# Run in a fresh interpreter on PYTHONPATH=<checkout>: the bare loop (this file's) and
# the full model in alternating chunks of CHUNK commits, each timed by the process's CPU
# clock, so that both see the same minutes of the host (its speed drifts by tens of %
# from one minute to the next). Then the model's simpy events per commit (every event
# takes an id from env._eid, hand-offs included) and, in a shorter untimed run, its
# hand-offs (events that skip the heap).
_FULL = """
import json, sys, time
sys.path.insert(0, {tests!r})
sys.path.insert(0, {bench!r})
from simprofiles import plp_ssd
from sim_speed import bare_loop
from innoflush.simulator import ServerConfig, Workload
from innoflush.simulator.server import Server
srv = Server(ServerConfig(), Workload(connections={clients}), plp_ssd(), seed={seed})
srv.start()
full_s = bare_s = 0.0
bare_n = 0
eid0 = next(srv.env._eid)
c0 = srv.counters["commits"]
while srv.counters["commits"] - c0 < {commits}:
    n, dt = bare_loop({chunk}, {clients}, seed={seed} + bare_n, think_s={think_s})
    bare_n += n
    bare_s += dt
    t = time.process_time()
    srv.measure(3600.0, max_commits={chunk})
    full_s += time.process_time() - t
commits = srv.counters["commits"] - c0
out = {{"commits": commits, "seconds": full_s, "bare_commits": bare_n, "bare_seconds": bare_s,
        "events": next(srv.env._eid) - eid0}}
if hasattr(srv.env, "_handoffs"):
    import collections
    class Counting(collections.deque):
        n = 0
        def append(self, x):
            Counting.n += 1
            super().append(x)
    srv = Server(ServerConfig(), Workload(connections={clients}), plp_ssd(), seed={seed})
    srv.env._handoffs = Counting()
    srv.start()
    srv.measure(3600.0, max_commits=min({commits}, 50_000))
    out["handoffs_per_commit"] = Counting.n / srv.counters["commits"]
print(json.dumps(out))
"""
CHUNK = 10_000

_MEMORY = """
import json, sys
sys.path.insert(0, {tests!r})
from simprofiles import plp_ssd
from innoflush.simulator import ServerConfig, Workload
from innoflush.simulator.server import Server

def rss():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024

srv = Server(ServerConfig(), Workload(connections=16), plp_ssd(), seed=1)
srv.start()
done = 0
while done < {commits}:
    srv.measure(36000.0, max_commits=1_000_000)
    done = srv.counters["commits"]
    print(json.dumps({{"commits": done, "rss": rss()}}), flush=True)
"""


def bare_loop(commits: int, clients: int, seed: int = 1,
              think_s: float = 0.0) -> tuple[int, float]:
    env = simpy.Environment()
    res = simpy.Resource(env, capacity=1)
    rng = np.random.default_rng(seed)
    service = (rng.exponential(50e-6, commits + clients)).tolist()
    done = [0]

    def client():
        while done[0] < commits:
            if think_s:
                yield env.timeout(think_s)
            with res.request() as req:
                yield req
                yield env.timeout(service[done[0]])
            done[0] += 1

    for _ in range(clients):
        env.process(client())
    t = time.process_time()
    env.run()
    return done[0], time.process_time() - t


def full_model(checkout: str, commits: int, clients: int, think_s: float,
               seed: int = 1) -> dict:
    """The model of `checkout` and the bare loop, in alternating chunks in one process."""
    code = _FULL.format(tests=os.path.join(ROOT, "tests", "helpers"), bench=HERE, clients=clients,
                        seed=seed, commits=commits, chunk=min(CHUNK, commits),
                        think_s=think_s)
    out = subprocess.run([sys.executable, "-P", "-c", code], env={**os.environ,
                         "PYTHONPATH": os.path.abspath(checkout)},
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def memory_check(checkout: str, commits: int) -> None:
    code = _MEMORY.format(tests=os.path.join(ROOT, "tests", "helpers"), commits=commits)
    proc = subprocess.Popen([sys.executable, "-P", "-c", code], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.path.abspath(checkout)})
    assert proc.stdout is not None
    points = []
    for line in proc.stdout:
        p = json.loads(line)
        points.append(p)
        print(f"  memory: {p['commits']:,} commits, RSS {p['rss'] / 2**20:.1f} MiB", flush=True)
    proc.wait()
    if len(points) < 2:
        print("  memory: too few points")
        return
    (c0, r0), (c1, r1) = (points[0]["commits"], points[0]["rss"]), \
        (points[-1]["commits"], points[-1]["rss"])
    per_commit = (r1 - r0) / (c1 - c0)
    growth = (r1 - r0) / r0
    to_10m = per_commit * (10_000_000 - c0) / r0
    print(f"memory ({checkout}): RSS {r0 / 2**20:.1f} MiB at {c0:,} commits, "
          f"{r1 / 2**20:.1f} MiB at {c1:,}: {100 * growth:+.1f} % "
          f"({per_commit:+.1f} B/commit); at that rate {100 * to_10m:+.1f} % from 1M to 10M "
          f"commits{' (extrapolated)' if c1 < 10_000_000 else ''} (target < 10 %)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commits", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--baseline", metavar="DIR",
                    help="another checkout whose model runs beside this one (before/after)")
    ap.add_argument("--memory-commits", type=int, default=3_000_000)
    ap.add_argument("--no-memory", action="store_true")
    args = ap.parse_args()
    from innoflush.simulator import Workload
    think_s = Workload().client_us_per_trx * 1e-6
    models = {"full": ROOT} | ({"baseline": args.baseline} if args.baseline else {})
    ratios: dict[tuple[str, int], list[float]] = {}
    rates: dict[tuple[str, int], list[float]] = {}
    events: dict[tuple[str, int], tuple[float, float]] = {}
    for i in range(args.rounds):
        for clients in CONNECTIONS:
            line = f"round {i + 1}, {clients:2d} connections:"
            for name, checkout in models.items():
                r = full_model(checkout, args.commits, clients, think_s, seed=i + 1)
                rate = r["commits"] / r["seconds"]
                bare = r["bare_commits"] / r["bare_seconds"]
                rates.setdefault((name, clients), []).append(rate)
                rates.setdefault(("bare", clients), []).append(bare)
                ratios.setdefault((name, clients), []).append(rate / bare)
                events[(name, clients)] = (r["events"] / r["commits"],
                                           r.get("handoffs_per_commit", 0.0))
                line += (f" {name} {rate:,.0f}/s beside bare {bare:,.0f}/s "
                         f"({rate / bare:.2f} of bare);")
            print(line.rstrip(";"), flush=True)
    targets = {16: 0.35, 1: 0.30}
    for clients in CONNECTIONS:
        print(f"median, {clients} connections: bare "
              f"{statistics.median(rates[('bare', clients)]):,.0f} commits/s")
        for name in models:
            print(f"  {name}: {statistics.median(rates[(name, clients)]):,.0f} commits/s, "
                  f"full/bare {statistics.median(ratios[(name, clients)]):.2f} "
                  f"(target >= {targets[clients]:.2f}), "
                  f"{events[(name, clients)][0]:.2f} events/commit "
                  f"({events[(name, clients)][0] - events[(name, clients)][1]:.2f} "
                  f"timeouts and others, {events[(name, clients)][1]:.2f} hand-offs), "
                  f"1,000,000 commits in "
                  f"{1e6 / statistics.median(rates[(name, clients)]):.1f} s")
    if not args.no_memory:
        for name, checkout in models.items():
            print(f"memory check ({name}), full model at 16 connections, "
                  f"{args.memory_commits:,} commits:", flush=True)
            memory_check(checkout, args.memory_commits)


if __name__ == "__main__":
    main()
