"""`advise --inventory` on a large fleet: 1,000 inventory entries on 10 real servers.

Starts --servers small MariaDB servers (one mariadb-install-db, its datadir copied), each
under a light write load (so there are commits to fit and predict from), writes an
inventory naming each server --copies times under different names, and advises it with
predictions (a device profile) through the fleet pool, as `advise --inventory` does.
Prints the wall time, the hosts advised / failed (by kind) / predicted, the CPU one host
costs, and each server's Max_used_connections (FLUSH STATUS just before the run) beside
what --concurrency allows: each advised host holds two sessions (the reading one and the
processlist sampler), so one server sees at most 2 x min(concurrency, copies) of ours,
plus the load's and this script's own.

    python bench/fleet.py [--servers 10] [--copies 100] [--concurrency 8] [--interval 1]
                          [--profile NAME|FILE] [--executors local,dask]
                          [--scheduler tcp://HOST:PORT]

--profile: the device profile predictions use (default: measure this machine's disk
once, quick preset, in the bench's directory: predictions only come when the model
explains what the server does on its own storage). --executors: where the predictions
run, one fleet run each on the same servers, side by side: `local` (the local process
pool, as `advise --inventory` uses by default) and `dask` (a Dask scheduler with two
single-thread workers that the bench starts on 127.0.0.1, or the one --scheduler names).
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "helpers"))
from daskcluster import dask_cluster  # noqa: E402

from innoflush.advisor.request import AdviseRequest  # noqa: E402
from innoflush.fleet.inventory import load_inventory  # noqa: E402
from innoflush.fleet.run import FleetSettings, advise_fleet  # noqa: E402
from innoflush.lab.server.local import LocalServer, ServerOptions, initialized_datadir  # noqa: E402

USER, PASSWORD = "fleet_bench", "bench-only-pw"


class Load:
    """One thread of autocommit INSERTs on a server, paced to about rate a second (a
    light load: the machine also runs the advisors)."""

    def __init__(self, srv: LocalServer, rate: float):
        self.srv, self.rate = srv, rate
        self.stop = threading.Event()
        self.count = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        conn = self.srv.connect()
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE IF NOT EXISTS bench")
            cur.execute("CREATE TABLE IF NOT EXISTS bench.t (id BIGINT AUTO_INCREMENT "
                        "PRIMARY KEY, k INT NOT NULL, pad VARCHAR(200), KEY k (k))")
        conn.close()
        self.thread.start()

    def _run(self) -> None:
        conn = self.srv.connect()
        rng = random.Random(self.srv.port)
        pause = 1.0 / self.rate if self.rate > 0 else 0.0   # 0: back to back
        with conn.cursor() as cur:
            while not self.stop.is_set():
                cur.execute("INSERT INTO bench.t (k, pad) VALUES (%s, REPEAT('x', 100))",
                            (rng.randrange(1 << 20),))
                self.count += 1
                if pause:
                    time.sleep(pause)
        conn.close()


def _cpu() -> tuple[float, float]:
    """CPU seconds of this process, and of its children that ended (the servers run
    until the end: not counted)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, ch.ru_utime + ch.ru_stime


def _one(srv: LocalServer, sql: str):
    conn = srv.connect()
    with conn.cursor() as cur:
        cur.execute(sql)
        row = cur.fetchone()
    conn.close()
    return row


def _profile(arg: str | None, workdir: Path):
    from innoflush.profiles import load_profile

    if arg:
        return load_profile(arg)
    from innoflush import measure
    from innoflush.measure.run import QUICK_DURATION_S

    print("measuring this disk (quick preset) for the device profile...", flush=True)
    d = workdir / "probe"
    d.mkdir()
    return measure.measure_profile(str(d), "bench-fleet", "this machine's disk",
                                   tests=measure.quick_tests(), duration_s=QUICK_DURATION_S,
                                   quick=True)


def _fleet_run(label: str, scheduler: str | None, hosts, servers, cnf: Path, args) -> bool:
    """One fleet run on the servers with its own executor (None: no predictions); prints
    its figures and returns whether every host was advised within the bound."""
    from innoflush.executor import make_executor

    executor = None if args.no_predict else make_executor(scheduler)
    for s in servers:
        _one(s, "FLUSH STATUS")   # Max_used_connections from here
    settings = FleetSettings(defaults_file=str(cnf), connect_timeout=10.0,
                             executor=executor, request=AdviseRequest(
        interval_s=args.interval, samples=1, profile=args.profile_obj,
        predict=not args.no_predict))
    print(f"--- {label}: predictions on {executor.describe() if executor else 'nothing'}",
          flush=True)
    cpu0 = _cpu()
    done = [0]
    t1 = time.monotonic()

    def progress(r: dict) -> None:
        done[0] += 1
        if done[0] % 100 == 0:
            print(f"  {done[0]}/{len(hosts)} in {time.monotonic() - t1:.0f} s", flush=True)

    try:
        run = advise_fleet(hosts, settings, args.concurrency, on_result=progress)
        wall = time.monotonic() - t1
    finally:
        if executor is not None:   # its processes end: their CPU is counted from here
            executor.close()
    cpu_self, cpu_children = (b - a for a, b in zip(cpu0, _cpu(), strict=True))
    used = [int(_one(s, "SHOW GLOBAL STATUS LIKE 'Max_used_connections'")[1])
            for s in servers]
    ok = [r for r in run.results if r["status"] == "ok"]
    failed = Counter(r["error"]["kind"] for r in run.results if r["status"] != "ok")

    def has_prediction(r: dict) -> bool:
        return any(c.get("predicted") for c in r["report"]["candidates"])

    exits = Counter(r["exit"] for r in ok)
    fit_wall = sorted(r["report"]["fit"]["wall_s"] for r in ok if r["report"].get("fit"))
    per_host = sorted(r["seconds"] for r in ok)
    n = max(1, len(hosts))
    print(f"{label}: wall {wall:.1f} s; CPU: this process {cpu_self:.1f} s "
          f"({cpu_self / n:.2f} s a host), its finished children (the "
          f"local pool) {cpu_children:.1f} s ({cpu_children / n:.2f} s a host)")
    print(f"{label}: advised {len(ok)}; failed {sum(failed.values())} {dict(failed)}; "
          f"not finished {len(run.not_done)}; exits {dict(sorted(exits.items()))}; "
          f"with predictions {sum(1 for r in ok if has_prediction(r))}")
    if per_host:
        print(f"{label}: one host's advise, wall: median {per_host[len(per_host) // 2]:.2f} "
              f"s, max {per_host[-1]:.2f} s; fit wall median "
              f"{fit_wall[len(fit_wall) // 2] if fit_wall else 0:.2f} s")
    why = Counter(reason.split(":")[0][:90] for r in ok if r["exit"] == 4
                  for reason in (r["report"].get("fit") or {}).get("reasons", []))
    for reason, count in why.most_common(3):
        print(f"{label}: not explained (exit 4) {count:5d}  {reason}")
    base = 2   # the load's connection and the FLUSH/SHOW one
    bound = 2 * min(args.concurrency, args.copies) + base
    print(f"{label}: at most {run.max_concurrent} hosts at once (--concurrency "
          f"{args.concurrency}); Max_used_connections per server (bound {bound} = 2 x "
          f"{min(args.concurrency, args.copies)} advising + {base}): {used} -> "
          f"{'respected' if max(used) <= bound else 'EXCEEDED'}")
    args.walls[label] = wall
    return not failed and not run.not_done and max(used) <= bound


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--servers", type=int, default=10)
    ap.add_argument("--copies", type=int, default=100, help="inventory names per server")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--load-rate", type=float, default=50.0,
                    help="INSERTs a second on each server (0: back to back, one "
                         "connection)")
    ap.add_argument("--profile", default=None)
    ap.add_argument("--no-predict", action="store_true")
    ap.add_argument("--executors", default="local,dask",
                    help="where the predictions run, one fleet run each: local, dask")
    ap.add_argument("--scheduler", default=None,
                    help="tcp://HOST:PORT of a Dask scheduler for `dask` (default: one "
                         "with two workers started by the bench)")
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    executors = [e.strip() for e in args.executors.split(",") if e.strip()]
    if not executors or set(executors) - {"local", "dask"}:
        ap.error("--executors: a list of local, dask")
    args.walls = {}
    work = Path(args.workdir or tempfile.mkdtemp(prefix="innoflush-fleet-"))
    work.mkdir(parents=True, exist_ok=True)
    servers: list[LocalServer] = []
    loads: list[Load] = []
    good = True
    try:
        args.profile_obj = None if args.no_predict else _profile(args.profile, work)
        t0 = time.monotonic()
        template = initialized_datadir(work / "template")
        opts = ServerOptions(innodb_flush_method="O_DIRECT", innodb_flush_log_at_trx_commit=1,
                             innodb_buffer_pool_size="16M",
                             extra={"innodb_log_file_size": "16M",
                                    "max_connections": str(4 * args.concurrency + 20)})
        servers = [LocalServer(work / f"s{i}", opts, datadir_from=template)
                   for i in range(args.servers)]
        threads = [threading.Thread(target=s.start) for s in servers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if not all(s.is_running() for s in servers):
            print("a server did not start", file=sys.stderr)
            return 1
        for s in servers:
            conn = s.connect()
            with conn.cursor() as cur:
                cur.execute(f"CREATE USER '{USER}'@'127.0.0.1' IDENTIFIED BY %s", (PASSWORD,))
                cur.execute(f"GRANT SELECT, PROCESS, SLAVE MONITOR ON *.* TO "
                            f"'{USER}'@'127.0.0.1'")
            conn.close()
        print(f"{len(servers)} servers up in {time.monotonic() - t0:.1f} s")
        loads = [Load(s, args.load_rate) for s in servers]
        for ld in loads:
            ld.start()
        inv = work / "inventory.ini"
        lines = ["[bench]"]
        # a server's names one after the other: the pool's hosts pile onto one server,
        # so its Max_used_connections shows the bound
        for i, s in enumerate(servers):
            for c in range(args.copies):
                lines.append(f"s{i:02d}-n{c:03d} ansible_host=127.0.0.1 mysql_port={s.port}")
        inv.write_text("\n".join(lines) + "\n")
        cnf = work / "bench.cnf"
        cnf.write_text(f"[client_bench]\nuser={USER}\npassword={PASSWORD}\n")
        hosts = load_inventory(inv)
        print(f"hosts: {len(hosts)} ({args.servers} servers x {args.copies}), --concurrency "
              f"{args.concurrency}, --interval {args.interval:g}, predictions "
              f"{'off' if args.no_predict else 'on'}")
        time.sleep(2)   # the load under way before the first interval
        for label in executors:
            if label == "dask" and not args.scheduler:
                (work / "dask").mkdir(exist_ok=True)
                with dask_cluster(work / "dask", workers=2) as address:
                    good &= _fleet_run(label, address, hosts, servers, cnf, args)
            else:
                good &= _fleet_run(label, args.scheduler if label == "dask" else None,
                                   hosts, servers, cnf, args)
    finally:
        for ld in loads:
            ld.stop.set()
        for ld in loads:
            ld.thread.join(timeout=10)
        for s in servers:
            s.stop()
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    if {"dask", "local"} <= set(args.walls):
        print(f"wall: local pool {args.walls['local']:.1f} s, dask {args.walls['dask']:.1f} s; "
              f"dask/local {args.walls['dask'] / args.walls['local']:.2f}")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
