"""Benchmark: the wake-up probe's factor beside mysqld's own slowdown, in the same minutes.

advise divided the CPU per transaction measured while commits sleep by a wake-up factor
(bench/wakeprobe.py, retired 2026-11-27 for advisor/sleep_cost.py) to price a change that
takes the sync off the commit. This measures
what that factor should be on this host and what work units measure: a local MariaDB on
an emulated device (lab/emulation/emulate.py; default samsung-990-pro, ~2.8 ms syncs), sysbench
oltp_insert at 1 thread; per round a run at innodb_flush_log_at_trx_commit=1 and one at
2 (SET GLOBAL, the same server), mysqld's CPU per transaction from /proc/PID/stat
(utime+stime, all threads) over Com_insert, and during the trx_commit=1 run each
candidate probe in a child process (the probe's structure: a stream, then cycles of
sleep-then-work at 0.2/1/3/10 ms, as measure_wake_cost). Candidates:

    cur   the probe's unit: a 2,000-iteration loop on a few integers
    memN  1,500 random reads of an N MB array('q')
    mixN  1,000 loop iterations + 800 random reads of an N MB array('q')

    python bench/wake_probe.py [--rounds 3] [--probes cur,mix8,mem8] [--device P]
        [--workdir /var/tmp/wake_probe]    # one JSON line per round on stdout

Needs mariadbd and sysbench; the workdir on real storage (not tmpfs), faster than the
device emulated (the lab's host check). Results of 2026-11-26:
docs/validation/notebook/2026-11-25-first-sysbench-run.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from array import array
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from wakeprobe import measure_wake_cost  # noqa: E402


def unit(name: str):
    """The work unit a candidate times (None: the probe's own)."""
    if name == "cur":
        return None
    kind, mb = name[:3], int(name[3:])
    n = mb * 1024 * 1024 // 8
    buf = array("q", range(n))
    rnd = random.Random(7)
    loops, reads = {"mem": (0, 1500), "mix": (1000, 800)}[kind]
    idx = [rnd.randrange(n) for _ in range(reads)]

    def w() -> int:
        s = 0
        for i in range(loops):
            s += i * i
        for i in idx:
            s += buf[i]
        return s
    return w


def probe(name: str) -> dict:
    """measure_wake_cost with the candidate's unit."""
    return measure_wake_cost(work=unit(name)).to_dict()


def cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        p = f.read().rsplit(")", 1)[1].split()
    return (int(p[11]) + int(p[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--probes", default="cur,mix8,mem8")
    ap.add_argument("--device", default="samsung-990-pro")
    ap.add_argument("--workdir", default="/var/tmp/wake_probe")
    ap.add_argument("--probe", help=argparse.SUPPRESS)   # child: one candidate
    a = ap.parse_args()
    if a.probe:
        print(json.dumps(probe(a.probe)))
        return
    from innoflush.lab.emulation.emulate import build_library, preload_env
    from innoflush.lab.server.local import LocalServer, ServerOptions
    from innoflush.profiles import load_profile

    shutil.rmtree(a.workdir, ignore_errors=True)
    env = preload_env(load_profile(a.device), build_library())
    srv = LocalServer(a.workdir, ServerOptions(
        innodb_flush_method="O_DIRECT", innodb_flush_log_at_trx_commit=1,
        innodb_buffer_pool_size="256M"), env=env)
    srv.start()
    try:
        conn = srv.connect()
        conn.autocommit(True)
        cur = conn.cursor()
        cur.execute("CREATE DATABASE IF NOT EXISTS sbtest")
        sb = ["sysbench", "oltp_insert", "--db-driver=mysql", "--mysql-user=root",
              "--mysql-db=sbtest", f"--mysql-socket={srv.socket}", "--tables=4",
              "--table-size=10000"]
        subprocess.run(sb + ["prepare"], check=True, capture_output=True)

        def inserts() -> int:
            cur.execute("SHOW GLOBAL STATUS LIKE 'Com_insert'")
            return int(cur.fetchone()[1])

        def run(trx: int, probes: list[str]) -> dict:
            cur.execute(f"SET GLOBAL innodb_flush_log_at_trx_commit={trx}")
            load = subprocess.Popen(sb + ["--threads=1", "--time=11", "run"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(2)
            c0, n0, t0 = cpu_s(srv.pid), inserts(), time.time()
            res = {p: json.loads(subprocess.run(
                [sys.executable, __file__, "--probe", p], capture_output=True, text=True,
                check=True).stdout) for p in probes}
            time.sleep(max(0.0, t0 + 7 - time.time()))
            c1, n1, t1 = cpu_s(srv.pid), inserts(), time.time()
            load.wait()
            return {"tps": round((n1 - n0) / (t1 - t0), 1),
                    "cpu_us_per_trx": round((c1 - c0) / (n1 - n0) * 1e6, 1), "probes": res}

        for r in range(a.rounds):
            one = run(1, a.probes.split(","))
            two = run(2, [])
            print(json.dumps({"round": r, "trx1": one, "trx2": two,
                              "mysqld_ratio": round(one["cpu_us_per_trx"]
                                                    / two["cpu_us_per_trx"], 2)}), flush=True)
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
