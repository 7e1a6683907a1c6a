"""Simulator speed: a bare simpy closed loop beside the full InnoDB model, same commits.

The bare loop is N clients, each in a closed loop of a think time (the model's client
time per transaction) and one shared resource held for a sampled service time — the
least a simpy model of the same closed-loop clients can do. The full model runs the same
number of commits with the redo log writer/flusher, binlog ordered commit, page cleaner
and doublewrite on. Prints simulated commits per wall second of each and full/bare; the
bare loop without think time is printed too, for reference.
Targets (issue 3): full >= 25% of bare; 1,000,000 commits in under 60 s on one core.

    python bench/sim_speed.py [--commits 1000000] [--connections 16] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np
import simpy

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from simprofiles import plp_ssd  # noqa: E402

from innoflush.simulator import ServerConfig, Workload, simulate  # noqa: E402


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
    t = time.perf_counter()
    env.run()
    return done[0], time.perf_counter() - t


def full_model(commits: int, clients: int, seed: int = 1) -> tuple[int, float]:
    cfg = ServerConfig()  # MySQL 8.0, O_DIRECT, trx_commit=1, binlog on, sync_binlog=1
    wl = Workload(connections=clients)
    profile = plp_ssd()
    t = time.perf_counter()
    r = simulate(cfg, wl, profile, duration_s=3600.0, warmup_s=0.0, seed=seed,
                 max_commits=commits)
    return r.commits, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commits", type=int, default=1_000_000)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    think_s = Workload().client_us_per_trx * 1e-6
    bare_rates, nothink_rates, full_rates, ratios, full_times = [], [], [], [], []
    for i in range(args.rounds):  # alternate, so all see the same machine noise
        n_b, t_b = bare_loop(args.commits, args.connections, seed=i + 1, think_s=think_s)
        n_n, t_n = bare_loop(args.commits, args.connections, seed=i + 1)
        n_f, t_f = full_model(args.commits, args.connections, seed=i + 1)
        bare_rates.append(n_b / t_b)
        nothink_rates.append(n_n / t_n)
        full_rates.append(n_f / t_f)
        ratios.append((n_f / t_f) / (n_b / t_b))
        full_times.append(t_f * 1_000_000 / n_f)
        print(f"round {i + 1}: bare {n_b:,} commits in {t_b:.2f} s ({n_b / t_b:,.0f}/s; "
              f"without think time {n_n / t_n:,.0f}/s); "
              f"full {n_f:,} commits in {t_f:.2f} s ({n_f / t_f:,.0f}/s); "
              f"full/bare {ratios[-1]:.2f}", flush=True)
    print(f"median: bare {statistics.median(bare_rates):,.0f} commits/s "
          f"(without think time {statistics.median(nothink_rates):,.0f}/s, "
          f"full/that {statistics.median(full_rates) / statistics.median(nothink_rates):.2f}), "
          f"full {statistics.median(full_rates):,.0f} commits/s, "
          f"full/bare {statistics.median(ratios):.2f} (target >= 0.25), "
          f"1,000,000 commits of the full model at this rate: "
          f"{statistics.median(full_times):.1f} s "
          f"(target < 60 s)")


if __name__ == "__main__":
    main()
