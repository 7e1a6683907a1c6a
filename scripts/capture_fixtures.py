"""Capture a real server under load, the way a DBA would on production, into
tests/fixtures/captures/<name>/ (the raw client output `advise --from` reads):

  tab/        mysql -B -e 'SHOW GLOBAL VARIABLES' and two `SHOW GLOBAL STATUS` files
  mysqladmin/ mysql -t -e 'SHOW GLOBAL VARIABLES WHERE ...' (table format) and
              mysqladmin extended-status -r -i 2 -c 4 (relative blocks)
  pt-stalk/   pt-stalk --no-stalk --iterations=1: its -variables and -mysqladmin files
              (the rest of what it collects is about this host, not the server: not kept)
  PROVENANCE.json  server version, options, client programs and their versions, the
              commands, the date, and a live `advise --json` of the same server under the
              same load (its finding ids: tests/live/test_real_captures.py checks that
              `advise --from` on each format finds the same)

Usage: PYTHONPATH=. python scripts/capture_fixtures.py NAME [--server mysql-9.7|mariadb-11.8
           | --server-root ROOT] [--binlog] [--flush-method M | --fsync] [--trx-commit N]
           [--sync-binlog N] [--profile P]

The server is started by innoflush.lab.server.local.LocalServer in a temporary directory and
stopped at the end; the load is autocommit INSERTs from 4 threads. Without --server /
--server-root it is this host's server with this host's clients (mariadb, mysqladmin);
with one, the server of that Debian root (`make server-roots`: MySQL 9.7 from sid,
MariaDB 11.8 from trixie) run in it, and the root's own clients run there too (chroot:
the server's TCP port is the host's). pt-stalk (Debian's percona-toolkit) runs on the host
and calls the root's clients (its CMD_MYSQL / CMD_MYSQLADMIN). A root built with the
-client-core package lacks mysqladmin on MariaDB: build one with the full client,
  PACKAGES="mariadb-server-core mariadb-client" docker/build-offline-image.sh \
      --server mariadb-11.8 --keep-root DIR --root-only
and give --server-root DIR.
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

from innoflush.lab.server.local import LocalServer, ServerOptions
from innoflush.lab.server.server_binaries import find_binaries
from innoflush.lab.server.server_root import KNOWN_ROOTS, ServerRoot
from innoflush.live.capture import CaptureError, read_capture

REPO = Path(__file__).resolve().parent.parent
ROOT = REPO / "tests" / "fixtures" / "captures"
# what advise is given both live at capture time and on the capture (--no-predict: the
# findings are the rules', and the rules are what a capture must reproduce)
ADVISE_ARGS = ("--no-predict",)


class CaptureFailed(Exception):
    pass


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


class Clients:
    """The client programs: this host's, or those of the server's root, run in it."""

    def __init__(self, root: ServerRoot | None, product: str):
        self.root = root
        self.prefix = ["chroot", str(root.path)] if root else []
        if product == "mysql":
            self.sql, self.admin = "mysql", "mysqladmin"
        else:
            # the host's Debian 12 has both names; a trixie root's mariadb-client, the new
            self.sql, self.admin = "mariadb", "mariadb-admin" if root else "mysqladmin"
        for name in (self.sql, self.admin):
            if not self._exists(name):
                where = f"the root {root.path}" if root else "PATH"
                hint = (" (Debian's mariadb-client, not in the -client-core a root is "
                        "built with: see this script's docstring)" if root else "")
                raise CaptureFailed(f"no {name} in {where}{hint}")

    def _exists(self, name: str) -> bool:
        if self.root is None:
            return shutil.which(name) is not None
        return any((self.root.path / d / name).is_file() for d in ("usr/bin", "bin"))

    def cmd(self, program: str, *args: str, port: int) -> list[str]:
        return [*self.prefix, program, "--no-defaults", *args, "--protocol=tcp", "-h",
                LocalServer.HOST, "-P", str(port), "-u", "root"]

    def versions(self) -> dict[str, str]:
        out = {}
        for name in (self.sql, self.admin):
            r = subprocess.run([*self.prefix, name, "--version"], capture_output=True,
                               text=True, timeout=30, check=False)
            out[name] = (r.stdout or r.stderr).strip()
        return out


def run(cmd: list[str], out: Path) -> str:
    with open(out, "w", encoding="utf-8") as f:
        subprocess.run(cmd, stdout=f, check=True, timeout=120)
    return " ".join(c for c in cmd if c not in ("--no-defaults",))


def pt_stalk(srv: LocalServer, clients: Clients, work: Path, dest: Path,
             run_time: int) -> dict:
    """pt-stalk's collection into dest; what was run, or why the format was skipped."""
    pt = work / "pt-stalk"
    cmd = ["pt-stalk", "--no-stalk", "--iterations=1", f"--run-time={run_time}", "--sleep=0",
           f"--dest={pt}", "--log=" + str(work / "pt-stalk.log"),
           "--pid=" + str(work / "pt-stalk.pid"), "--",
           "--protocol=tcp", "-h", srv.HOST, "-P", str(srv.port), "-u", "root"]
    env = dict(os.environ)
    if clients.root is not None:
        # pt-stalk word-splits these: the root's own clients, run in the root
        env["CMD_MYSQL"] = " ".join([*clients.prefix, clients.sql, "--no-defaults"])
        env["CMD_MYSQLADMIN"] = " ".join([*clients.prefix, clients.admin, "--no-defaults"])
    version = subprocess.run(["pt-stalk", "--version"], capture_output=True, text=True,
                             check=False).stdout.strip()
    shown = " ".join(c for c in cmd if not c.startswith(("--dest", "--log", "--pid")))
    info = {"command": shown + " (its -variables and -mysqladmin kept)", "version": version}
    if clients.root is not None:
        info["CMD_MYSQL"], info["CMD_MYSQLADMIN"] = env["CMD_MYSQL"], env["CMD_MYSQLADMIN"]
    r = subprocess.run(cmd, timeout=180, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, env=env, check=False)
    kept = [p for p in sorted(pt.iterdir()) if p.name.endswith(("-variables", "-mysqladmin"))
            ] if pt.is_dir() else []
    problem = None
    if r.returncode != 0:
        problem = f"pt-stalk exited {r.returncode}: {r.stderr.strip()[-300:]}"
    elif len(kept) != 2:
        problem = f"pt-stalk wrote {[p.name for p in kept]}, not -variables and -mysqladmin"
    else:
        sub = dest / "pt-stalk"
        sub.mkdir()
        for p in kept:
            shutil.copy(p, sub / p.name)
        try:
            read_capture(str(sub))
        except CaptureError as exc:
            problem = f"advise --from cannot read what pt-stalk wrote: {exc}"
            shutil.rmtree(sub)
    if problem:
        print(f"\n!!! PT-STALK FORMAT SKIPPED for this server: {problem}\n", file=sys.stderr)
        info["skipped"] = problem
    return info


def innoflush(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "MYSQL_PWD": "", "HOME": str(home),
           "INNOFLUSH_HOME": str(home / "innoflush")}
    return subprocess.run([sys.executable, "-m", "innoflush", *args], capture_output=True,
                          text=True, env=env, timeout=600, check=False)


def finding_ids(report: dict) -> list[list[str]]:
    return sorted([f["id"], f["severity"]] for f in report["findings"])


def live_advise(srv: LocalServer, extra: list[str], home: Path) -> dict:
    """`innoflush advise --json` on the server now, as a DBA on its host would run it."""
    args = ["advise", "-H", srv.HOST, "-P", str(srv.port), "-u", "root", "--interval",
            "10", *extra, "--json"]
    r = innoflush(*args, home=home)
    if r.returncode not in (0, 3, 4):
        raise CaptureFailed(f"live advise exited {r.returncode}: {r.stderr.strip()}")
    rep = json.loads(r.stdout)
    return {"command": "innoflush " + " ".join(args),
            "from_args": extra, "exit_code": r.returncode,
            "sim_flavor": rep["server"]["sim_flavor"],
            "flush_method_source": rep["settings"]["flush_method_source"],
            "commits_source": rep["observed"]["commits_source"],
            "commits_per_s": rep["observed"]["commits_per_s"],
            "findings": finding_ids(rep)}


def check_from(dest: Path, live: dict, home: Path) -> list[str]:
    """Where advise --from on a format of the capture finds other than the live run."""
    bad = []
    for sub in sorted(p for p in dest.iterdir() if p.is_dir()):
        r = innoflush("advise", "--from", str(sub), *live["from_args"], "--json", home=home)
        if not r.stdout.strip():
            bad.append(f"{sub.name}: exit {r.returncode}, {r.stderr.strip()}")
            continue
        rep = json.loads(r.stdout)
        obs = rep["observed"]
        rate = (obs["commits_per_s"] or 0) / (live["commits_per_s"] or 1)
        if (finding_ids(rep) != live["findings"] or r.returncode != live["exit_code"]
                or obs["commits_source"] != live["commits_source"] or not 1 / 3 < rate < 3):
            bad.append(f"{sub.name}: exit {r.returncode}, {finding_ids(rep)}, commits "
                       f"{obs['commits_per_s']}/s from {obs['commits_source']}")
    return bad


def _without_notes(argv: list[str]) -> list[str]:
    """The command line less its --note texts (PROVENANCE.json keeps them as notes)."""
    out, skip = [], False
    for arg in argv:
        if skip or arg.startswith("--note="):
            skip = False
            continue
        if arg == "--note":
            skip = True
            continue
        out.append(arg if " " not in arg else repr(arg))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--server", choices=KNOWN_ROOTS,
                       help="the root of that name of `make server-roots`")
    where.add_argument("--server-root", help="a Debian root holding the server")
    ap.add_argument("--binlog", action="store_true")
    method = ap.add_mutually_exclusive_group()
    method.add_argument("--fsync", action="store_true", help="innodb_flush_method=fsync")
    method.add_argument("--flush-method", default="O_DIRECT",
                        help="innodb_flush_method, or 'default': not set (MariaDB 11.8 "
                             "deprecates it for its innodb_*_file_* booleans)")
    ap.add_argument("--trx-commit", type=int, default=1)
    ap.add_argument("--sync-binlog", type=int, default=None)
    ap.add_argument("--server-option", action="append", default=[], metavar="NAME=VALUE",
                    help="another server option (repeatable)")
    ap.add_argument("--mysqladmin-count", type=int, default=4,
                    help="mysqladmin extended-status -c (blocks)")
    ap.add_argument("--mysqladmin-interval", type=int, default=2, help="... -i (seconds)")
    ap.add_argument("--pt-stalk-run-time", type=int, default=6,
                    help="pt-stalk --run-time: one mysqladmin block a second")
    ap.add_argument("--note", action="append", default=[],
                    help="why an option was chosen (into PROVENANCE.json; repeatable)")
    ap.add_argument("--profile", default="samsung-990-pro",
                    help="device profile for the live and the offline advise (its "
                         "filesystem must be the datadir's: ext4 here)")
    a = ap.parse_args()
    flush = "fsync" if a.fsync else None if a.flush_method == "default" else a.flush_method
    extra = dict(o.split("=", 1) for o in a.server_option)
    opts = ServerOptions(innodb_flush_method=flush,
                         innodb_flush_log_at_trx_commit=a.trx_commit, log_bin=a.binlog,
                         sync_binlog=a.sync_binlog, innodb_buffer_pool_size="64M",
                         extra=extra)
    if shutil.which("pt-stalk") is None:
        raise CaptureFailed("pt-stalk is missing: apt-get install percona-toolkit")
    root_arg = a.server or a.server_root
    root = ServerRoot(root_arg) if root_arg else None
    product = find_binaries(None, root).flavor
    clients = Clients(root, product)
    dest = ROOT / a.name
    if dest.exists():
        shutil.rmtree(dest)
    for sub in ("tab", "mysqladmin"):
        (dest / sub).mkdir(parents=True)
    work = Path(tempfile.mkdtemp(prefix="innoflush-capture-"))
    commands: dict[str, str] = {}
    sql, admin = clients.sql, clients.admin
    try:
        with LocalServer(work / "server", opts, server_root=root_arg) as srv, Load(srv):
            time.sleep(3)   # past the first seconds' warm-up
            c = srv.connect().cursor()
            c.execute("SELECT VERSION(), @@version_comment")
            ver, comment = c.fetchone()
            c.execute("SHOW GLOBAL VARIABLES LIKE 'version_with_update'")   # MySQL 9.x
            with_update = (c.fetchone() or (None, None))[1]
            commands["tab/variables.tsv"] = run(
                clients.cmd(sql, "-B", "-e", "SHOW GLOBAL VARIABLES", port=srv.port),
                dest / "tab" / "variables.tsv")
            commands["tab/status-1.tsv"] = run(
                clients.cmd(sql, "-B", "-e", "SHOW GLOBAL STATUS", port=srv.port),
                dest / "tab" / "status-1.tsv")
            time.sleep(10)
            commands["tab/status-2.tsv"] = run(
                clients.cmd(sql, "-B", "-e", "SHOW GLOBAL STATUS", port=srv.port),
                dest / "tab" / "status-2.tsv")
            commands["mysqladmin/variables.txt"] = run(
                # optimizer_switch (846 characters) pads every row of the table to 0.6 MB
                clients.cmd(sql, "-t", "-e", "SHOW GLOBAL VARIABLES WHERE "
                            "Variable_name <> 'optimizer_switch'", port=srv.port),
                dest / "mysqladmin" / "variables.txt")
            commands["mysqladmin/extended-status.txt"] = run(
                clients.cmd(admin, "extended-status", "-r", "-i",
                            str(a.mysqladmin_interval), "-c", str(a.mysqladmin_count),
                            port=srv.port),
                dest / "mysqladmin" / "extended-status.txt")
            pt = pt_stalk(srv, clients, work, dest, a.pt_stalk_run_time)
            commands["pt-stalk/"] = pt["command"]
            live = live_advise(srv, [*ADVISE_ARGS, "--profile", a.profile], work)
        mismatch = check_from(dest, live, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    server = f"{ver} ({comment})"
    prov = {"name": a.name, "server": server,
            "captured": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
            "by": "scripts/capture_fixtures.py " + " ".join(_without_notes(sys.argv[1:])),
            "server_options": {**{k: v for k, v in vars(opts).items()
                                  if k != "extra" and v is not None}, **opts.extra},
            "load": "4 threads of autocommit INSERTs into a table with a secondary index",
            "commands": commands}
    if a.note:
        prov["notes"] = a.note
    if with_update:
        prov["version_with_update"] = with_update
    if root is not None:
        prov["server_root"] = {"path": str(root.path), "holds": root.description,
                               "clients_run": f"in the root: chroot {root.path} PROGRAM"}
    prov["clients"] = {**clients.versions(), "pt-stalk": pt["version"]}
    prov["pt_stalk"] = {k: v for k, v in pt.items() if k not in ("command", "version")}
    if not prov["pt_stalk"]:
        del prov["pt_stalk"]
    prov["live_advise"] = live
    (dest / "PROVENANCE.json").write_text(json.dumps(prov, indent=1) + "\n",
                                          encoding="utf-8")
    print(json.dumps(prov, indent=1))
    if mismatch:
        print("!!! advise --from on the capture differs from the live advise "
              f"({live['findings']}): " + "; ".join(mismatch), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    os.umask(0o022)
    try:
        sys.exit(main())
    except CaptureFailed as exc:
        print(f"capture_fixtures: {exc}", file=sys.stderr)
        sys.exit(1)
