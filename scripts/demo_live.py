"""`make demo`'s main job: a private live server advised, a change priced, applied and
measured.

On a MariaDB/MySQL server of its own (local binaries, a free port, a datadir under
DEMO_DIR, the binary log on, every commit durable), under sysbench oltp_insert:
1. `innoflush advise` reads the server as a user would run it, with the profile the demo
   measured on this disk and `--durability relaxed` (the demo's server may lose the last
   second of commits on a power cut: that is what makes trx_commit=2 a recommendation
   rather than a risk);
2. the recommendation with the largest predicted gain that SET GLOBAL can make is
   applied on the private server;
3. the same load again, and `innoflush advise --check` of the saved report against the
   server now: what was applied, whether the load is the same, each figure measured
   beside its prediction — what a user runs after a change on their own server.
When advise cannot explain the load (exit 4) it says so, and the demo stops there: that
refusal is part of what it shows. Ctrl-C, SIGTERM or SIGHUP stop the load and the server
and remove the datadir.

    python scripts/demo_live.py INNOFLUSH DEMO_DIR PROFILE
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from innoflush.lab.server.backend import ServerError
from innoflush.lab.server.local import LocalServer, ServerOptions
from innoflush.lab.server.server_binaries import find_binaries
from innoflush.output.advise_text import render_text
from innoflush.terminal import width as terminal_width

THREADS = 4
TABLES, TABLE_SIZE = 4, 10000
WARMUP_S = 5           # before advise samples: the buffer pool and the binlog warm
ADVISE_INTERVAL_S = 10
DYNAMIC = ("innodb_flush_log_at_trx_commit", "sync_binlog")


def _stop_on_signals() -> None:
    """SIGTERM and SIGHUP end the demo as Ctrl-C does: through the finally blocks."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupt)


def _sysbench(server: LocalServer, *args: str) -> list[str]:
    return ["sysbench", "oltp_insert", "--db-driver=mysql", "--mysql-host=127.0.0.1",
            f"--mysql-port={server.port}", "--mysql-user=root", "--mysql-db=sbtest",
            f"--tables={TABLES}", f"--table-size={TABLE_SIZE}", *args]


def _start_load(server: LocalServer, seconds: int, log: Path) -> subprocess.Popen:
    with open(log, "w") as out:   # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            _sysbench(server, f"--threads={THREADS}", f"--time={seconds}",
                      "--report-interval=1", "run"),
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _stop(proc: subprocess.Popen | None) -> None:
    if proc is not None and proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


_TPS_LINE = re.compile(r"^\[\s*(\d+)s \].*?tps: ([\d.]+)", re.M)


def window_tps(log: Path, first_s: int, last_s: int) -> float | None:
    """sysbench's mean TPS over its report lines of seconds first_s..last_s."""
    tps = [float(t) for s, t in _TPS_LINE.findall(log.read_text())
           if first_s <= int(s) <= last_s]
    return sum(tps) / len(tps) if tps else None


def _advise(innoflush: str, server: LocalServer, profile: str, demo: Path) -> tuple[int, dict]:
    cmd = [innoflush, "advise", "-h", "127.0.0.1", "-P", str(server.port), "-u", "root",
           "--interval", str(ADVISE_INTERVAL_S), "--profile", profile,
           "--durability", "relaxed", "--html", str(demo / "advise.html")]
    print("$ innoflush " + " ".join(cmd[1:]).replace(str(demo), ".demo"), flush=True)
    r = subprocess.run([*cmd, "--json"], capture_output=True, text=True)
    if r.returncode in (0, 3, 4, 5) and r.stdout.strip().startswith("{"):
        report = json.loads(r.stdout)
        (demo / "advise.json").write_text(r.stdout)
        print(render_text(report, terminal_width()), end="", flush=True)
        return r.returncode, report
    sys.stderr.write(r.stderr)
    raise SystemExit(f"demo: advise failed (exit {r.returncode})")


def chosen_finding(report: dict) -> dict | None:
    """The recommendation SET GLOBAL can apply with the largest predicted TPS gain."""
    best = None
    for f in report.get("findings", []):
        pred = f.get("predicted") or {}
        gain = (pred.get("change") or {}).get("tps_pct")
        if f.get("setting") in DYNAMIC and f.get("set_global") and gain is not None:
            if best is None or gain > best["predicted"]["change"]["tps_pct"]:
                best = f
    return best


def _check(innoflush: str, server: LocalServer, demo: Path) -> int:
    """advise --check of the saved report against the server now: the same code a user
    runs after applying a change on their own server (and its track record)."""
    cmd = [innoflush, "advise", "-h", "127.0.0.1", "-P", str(server.port), "-u", "root",
           "--interval", str(ADVISE_INTERVAL_S), "--check", str(demo / "advise.json")]
    print("$ innoflush " + " ".join(cmd[1:]).replace(str(demo), ".demo"), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True,
                       env={**os.environ, "COLUMNS": str(terminal_width())})
    print(r.stdout, end="")
    if r.returncode not in (0, 4, 5):
        sys.stderr.write(r.stderr)
        raise SystemExit(f"demo: advise --check failed (exit {r.returncode})")
    return r.returncode


def sysbench_line(before: float | None, after: float | None) -> str:
    """sysbench's own count over the same windows: a second measure, from the client."""
    if not before or not after:
        return "sysbench's own TPS: not reported for a window"
    return (f"sysbench's own TPS over the same windows: {before:,.0f} before, {after:,.0f} "
            f"after (×{after / before:.2f})")


def demo(innoflush: str, demo_dir: Path, profile: str) -> int:
    try:
        find_binaries()
    except ServerError as exc:
        print(f"step skipped: no MariaDB/MySQL server binaries here ({exc}); "
              "apt-get install mariadb-server gives one")
        return 0
    work = Path(tempfile.mkdtemp(prefix="server-", dir=demo_dir))
    # the binary log on and synced: the model explains this load here run after run, where
    # without it (or at sync_binlog=0) it sits at the edge of the fit's tolerances: more
    # commits share a redo sync on this fast disk than the model groups
    # (docs/validation.md, "What is weak")
    opts = ServerOptions(innodb_flush_log_at_trx_commit=1, log_bin=True, sync_binlog=1,
                         innodb_buffer_pool_size="256M")
    load = None
    server = LocalServer(work, opts, remove_on_stop=True)
    try:
        server.start()
        conn = server.connect()
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE sbtest")
        subprocess.run(_sysbench(server, "prepare"), check=True, capture_output=True)
        print(f"server: {server.flavor} {'.'.join(map(str, server.version))} on "
              f"127.0.0.1:{server.port} (datadir in .demo/)\n"
              "settings: binary log on, innodb_flush_log_at_trx_commit=1, sync_binlog=1")
        print(f"load: sysbench oltp_insert, {THREADS} threads, {TABLES} tables of "
              f"{TABLE_SIZE:,} rows\n", flush=True)
        before_log = demo_dir / "sysbench-before.log"
        load = _start_load(server, WARMUP_S + ADVISE_INTERVAL_S + 2, before_log)
        time.sleep(WARMUP_S)
        code, report = _advise(innoflush, server, profile, demo_dir)
        load.wait()
        before = window_tps(before_log, WARMUP_S + 1, WARMUP_S + ADVISE_INTERVAL_S)
        finding = chosen_finding(report) if code == 3 else None
        if finding is None:
            why = ("advise does not explain this load here (exit 4): it prices nothing it "
                   "cannot explain" if code == 4 else
                   "advise made no recommendation SET GLOBAL can apply")
            print(f"\n{why}: nothing applied. On an idle machine of 2 cores it explains "
                  "this load; see docs/validation.md for how often.")
            return 0
        statements = finding["set_global"]
        print("\n== the change applied on the private server, the same load again")
        with conn.cursor() as cur:
            for s in statements:
                print(f"$ {s}")
                cur.execute(s)
        conn.close()
        after_log = demo_dir / "sysbench-after.log"
        load = _start_load(server, WARMUP_S + ADVISE_INTERVAL_S + 2, after_log)
        time.sleep(WARMUP_S)
        print("\n== predicted vs measured: advise --check, as after a change on your server")
        _check(innoflush, server, demo_dir)
        load.wait()
        after = window_tps(after_log, WARMUP_S + 1, WARMUP_S + ADVISE_INTERVAL_S)
        print(sysbench_line(before, after))
        print("(one window each side on a shared machine: `innoflush lab validate "
              "--workload-cmd --replicates N` repeats them)")
        print(f"\nadvise's HTML report: {demo_dir / 'advise.html'}")
        return 0
    finally:
        _stop(load)
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str]) -> int:
    innoflush, demo_dir, profile = argv
    _stop_on_signals()
    try:
        return demo(innoflush, Path(demo_dir).absolute(), profile)
    except KeyboardInterrupt:
        print("\ndemo: interrupted; the load and the server are stopped, the datadir removed",
              file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
