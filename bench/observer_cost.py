"""Benchmark: what advise's observing costs the workload it observes.

advise measures a live workload with a processlist sampler (a SHOW FULL PROCESSLIST
every 20 ms over a lab-length window) and, until 2026-11-27, a wake-up probe in a child
process (~0.7 s of one core; retired with the fit's wake-up factor). On a
2-vCPU host that is CPU the workload does not get: this runs the same cell with advise
and without (`innoflush lab run --no-advise`), alternating A B B A, and prints each
run's TPS, the machine's busy share and the server's CPU per transaction, then the
medians and their ratio. A change validated with advise on one side only carries this
ratio as a bias (lab/experiments/change_validation.py observes both sides since 2026-11-27).

    python bench/observer_cost.py [--rounds 3] [--workload write_only] [--threads 4]
        [--emulate docs/validation/san-plp-2ms.json] [--workdir /var/tmp/observer_cost]

Needs mariadbd and sysbench; the workdir on real storage (not tmpfs), faster than the
device emulated. Results of 2026-11-27:
docs/validation/notebook/2026-11-27-whole-matrix-advise-observing-both-sides.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXE = Path(sys.executable).parent / "innoflush"
SYSBENCH = ("sysbench oltp_{w} --db-driver=mysql --mysql-user={{user}} "
            "--mysql-password=\"$(cat {{password_file}})\" --mysql-db={{database}} "
            "--mysql-socket={{socket}} --tables=4 --table-size=10000")


def one_run(args, observed: bool, workdir: Path) -> dict:
    sb = SYSBENCH.format(w=args.workload)
    cmd = [str(EXE), "lab", "run", "--datadir-on", str(workdir / "dd"),
           "--profile", "samsung-990-pro", "--emulate", args.emulate,
           "--flush-method", "O_DIRECT", "--trx-commit", "1",
           "--connections", str(args.threads), "--duration", str(args.duration),
           "--warmup", "2", "--workload-prepare", f"{args.workload}={sb} prepare",
           "--workload-cmd", f"{args.workload}={sb} --threads={{threads}} "
           "--time={seconds} run", "--json"]
    if not observed:
        cmd.append("--no-advise")
    env = dict(os.environ, INNOFLUSH_HOME=str(workdir / "home"))
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    if p.returncode != 0:
        sys.exit(f"lab run failed ({p.returncode}): {p.stderr.strip()[-800:]}")
    m = json.loads(p.stdout)["runs"][0]["measured"]
    return {"observed": observed, "tps": m["tps"], "machine_busy": m["machine_cpu_busy"],
            "server_cpu_us_per_trx": m["server_cpu_us_per_trx"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workload", default="write_only",
                    choices=("insert", "write_only", "read_write"))
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--duration", type=float, default=7.0)
    ap.add_argument("--emulate", default=str(ROOT / "docs/validation/san-plp-2ms.json"))
    ap.add_argument("--workdir", default="/var/tmp/observer_cost")
    args = ap.parse_args()
    if shutil.which("sysbench") is None:
        sys.exit("sysbench is not installed (apt-get install sysbench)")
    work = Path(args.workdir)
    (work / "dd").mkdir(parents=True, exist_ok=True)
    runs = []
    for r in range(args.rounds):
        for observed in ((True, False) if r % 2 == 0 else (False, True)):   # A B B A
            run = one_run(args, observed, work)
            runs.append(run)
            print(json.dumps({"round": r + 1, **run}), flush=True)
    med = {}
    for observed in (True, False):
        side = [x for x in runs if x["observed"] is observed]
        med[observed] = {k: statistics.median(x[k] for x in side)
                         for k in ("tps", "machine_busy", "server_cpu_us_per_trx")}
    on, off = med[True], med[False]
    print(f"\n{args.workload}, {args.threads} threads, {args.rounds} runs a side (medians)")
    print(f"  advise observing: {on['tps']:9.1f} TPS, machine busy {on['machine_busy']:.3f}, "
          f"server {on['server_cpu_us_per_trx']:.0f} µs/trx")
    print(f"  not observed:     {off['tps']:9.1f} TPS, machine busy {off['machine_busy']:.3f}, "
          f"server {off['server_cpu_us_per_trx']:.0f} µs/trx")
    print(f"  observed / not: TPS x{on['tps'] / off['tps']:.3f}, machine busy "
          f"{on['machine_busy'] - off['machine_busy']:+.3f} "
          f"(a share of its {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
