"""Capture a real MariaDB under load, the way a DBA would on production, into
tests/fixtures/captures/<name>/ (the raw client output `advise --from` reads):

  tab/        mariadb -B -e 'SHOW GLOBAL VARIABLES' and two `SHOW GLOBAL STATUS` files
  mysqladmin/ mariadb -t -e 'SHOW GLOBAL VARIABLES WHERE ...' (table format) and
              mysqladmin extended-status -r -i 2 -c 4 (relative blocks)
  pt-stalk/   pt-stalk --no-stalk --iterations=1: its -variables and -mysqladmin files
              (the rest of what it collects is about this host, not the server: not kept)
  PROVENANCE.json  server version, options, client commands, date

Usage: PYTHONPATH=. python scripts/capture_fixtures.py NAME [--binlog] [--fsync]
           [--trx-commit N] [--sync-binlog N]
The server is started by innoflush.lab.local.LocalServer in a temporary directory and
stopped at the end; the load is autocommit INSERTs from 4 threads.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from innoflush.lab.local import LocalServer, ServerOptions

ROOT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "captures"


class Load:
    def __init__(self, server: LocalServer, threads: int = 4):
        self.server, self.threads = server, threads
        self.stop = threading.Event()
        self.workers: list[threading.Thread] = []

    def __enter__(self):
        conn = self.server.connect()
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE IF NOT EXISTS load_db")
            cur.execute("CREATE TABLE IF NOT EXISTS load_db.t (id BIGINT AUTO_INCREMENT "
                        "PRIMARY KEY, k INT NOT NULL, pad VARCHAR(8000) NOT NULL, KEY k (k))")
        conn.close()
        for i in range(self.threads):
            t = threading.Thread(target=self._work, args=(i,), daemon=True)
            t.start()
            self.workers.append(t)
        return self

    def _work(self, i: int) -> None:
        rng = random.Random(i)
        conn = self.server.connect(autocommit=True)
        with conn.cursor() as cur:
            while not self.stop.is_set():
                cur.execute("INSERT INTO load_db.t (k, pad) VALUES (%s, REPEAT('x', 100))",
                            (rng.randrange(1_000_000),))
        conn.close()

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.workers:
            t.join(30)


def client(server: LocalServer, *args: str) -> list[str]:
    return [args[0], "--no-defaults", *args[1:], "--protocol=tcp", "-h", server.HOST,
            "-P", str(server.port), "-u", "root"]


def run(cmd: list[str], out: Path) -> str:
    with open(out, "w", encoding="utf-8") as f:
        subprocess.run(cmd, stdout=f, check=True, timeout=120)
    return " ".join(c for c in cmd if c not in ("--no-defaults",))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("--binlog", action="store_true")
    ap.add_argument("--fsync", action="store_true", help="innodb_flush_method=fsync")
    ap.add_argument("--trx-commit", type=int, default=1)
    ap.add_argument("--sync-binlog", type=int, default=None)
    a = ap.parse_args()
    opts = ServerOptions(innodb_flush_method="fsync" if a.fsync else "O_DIRECT",
                         innodb_flush_log_at_trx_commit=a.trx_commit, log_bin=a.binlog,
                         sync_binlog=a.sync_binlog, innodb_buffer_pool_size="64M")
    dest = ROOT / a.name
    if dest.exists():
        shutil.rmtree(dest)
    for sub in ("tab", "mysqladmin", "pt-stalk"):
        (dest / sub).mkdir(parents=True)
    work = Path(tempfile.mkdtemp(prefix="innoflush-capture-"))
    commands: dict[str, str] = {}
    try:
        with LocalServer(work / "server", opts) as srv, Load(srv):
            time.sleep(3)   # past the first seconds' warm-up
            commands["tab/variables.tsv"] = run(
                client(srv, "mariadb", "-B", "-e", "SHOW GLOBAL VARIABLES"),
                dest / "tab" / "variables.tsv")
            commands["tab/status-1.tsv"] = run(
                client(srv, "mariadb", "-B", "-e", "SHOW GLOBAL STATUS"),
                dest / "tab" / "status-1.tsv")
            time.sleep(10)
            commands["tab/status-2.tsv"] = run(
                client(srv, "mariadb", "-B", "-e", "SHOW GLOBAL STATUS"),
                dest / "tab" / "status-2.tsv")
            commands["mysqladmin/variables.txt"] = run(
                # optimizer_switch (846 characters) pads every row of the table to 0.6 MB
                client(srv, "mariadb", "-t", "-e", "SHOW GLOBAL VARIABLES WHERE "
                       "Variable_name <> 'optimizer_switch'"),
                dest / "mysqladmin" / "variables.txt")
            commands["mysqladmin/extended-status.txt"] = run(
                client(srv, "mysqladmin", "extended-status", "-r", "-i", "2", "-c", "4"),
                dest / "mysqladmin" / "extended-status.txt")
            pt = work / "pt-stalk"
            cmd = ["pt-stalk", "--no-stalk", "--iterations=1", "--run-time=6",
                   "--sleep=0", f"--dest={pt}", "--log=" + str(work / "pt-stalk.log"),
                   "--pid=" + str(work / "pt-stalk.pid"), "--",
                   "--protocol=tcp", "-h", srv.HOST, "-P", str(srv.port), "-u", "root"]
            subprocess.run(cmd, check=True, timeout=180, stdout=subprocess.DEVNULL)
            kept = [p for p in sorted(pt.iterdir())
                    if p.name.endswith(("-variables", "-mysqladmin"))]
            for p in kept:
                shutil.copy(p, dest / "pt-stalk" / p.name)
            commands["pt-stalk/"] = " ".join(c for c in cmd if not c.startswith(
                ("--dest", "--log", "--pid"))) + " (its -variables and -mysqladmin kept)"
            version = srv.connect().cursor()
            version.execute("SELECT VERSION(), @@version_comment")
            ver, comment = version.fetchone()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    prov = {"name": a.name, "server": f"{ver} ({comment})",
            "captured": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
            "by": "scripts/capture_fixtures.py " + " ".join(sys.argv[1:]),
            "server_options": {k: v for k, v in vars(opts).items() if v not in (None, {})},
            "load": "4 threads of autocommit INSERTs into a table with a secondary index",
            "commands": commands}
    (dest / "PROVENANCE.json").write_text(json.dumps(prov, indent=1) + "\n",
                                          encoding="utf-8")
    print(json.dumps(prov, indent=1))
    return 0


if __name__ == "__main__":
    os.umask(0o022)
    sys.exit(main())
