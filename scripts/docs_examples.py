"""The examples `make docs` shows: real runs of innoflush, and the world they run in.

Each example (EXAMPLES) is one or more innoflush command lines, run once per `make docs`
on a temporary directory — the profile store (``INNOFLUSH_HOME``), a probe directory for
``measure``, the lab's datadirs, and for ``advise`` a real MariaDB/MySQL started from this
host's binaries under a small insert load. Its path is shown as ``/tmp/docs``. The
server, the load and the directory are gone when ``example_env()`` ends, also on an
error, Ctrl-C or SIGTERM; a lab command is stopped with SIGINT so that it removes its own
servers and datadirs. An example whose resource is missing (server binaries, a Docker
engine with the offline image) raises Skip, and its committed block stays.

How an example is shown: a text example as the command and what it printed, trimmed by
a block's rule (``trim_text``); a JSON example trimmed to one element per list and the
first entries of the maps it names (``trim_json``).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHOWN_TMP = "/tmp/docs"     # how the temporary directory appears in the examples
# The width the text examples are fitted to: what a pipe gets (innoflush/terminal.py's
# DEFAULT_WIDTH), and what a Markdown code block shows without a scroll bar.
COLUMNS = 100


# ---- trimming ------------------------------------------------------------------------------

def trim_text(text: str, spec: str) -> str:
    """Keep the lines `spec` selects (see the module docstring); '...' marks a cut."""
    lines = text.rstrip("\n").split("\n")
    keep: set[int] = set()
    for clause in (c.strip() for c in spec.split(";") if c.strip()):
        word, _, arg = clause.partition(" ")
        if word == "head":
            keep.update(range(min(int(arg), len(lines))))
        elif word == "tail":
            keep.update(range(max(0, len(lines) - int(arg)), len(lines)))
        elif word == "grep":
            keep.update(i for i, line in enumerate(lines) if re.search(arg, line))
        elif word == "block":
            for i, line in enumerate(lines):
                if re.search(arg, line):
                    j = i
                    while j < len(lines) and lines[j].strip():
                        keep.add(j)
                        j += 1
        else:
            raise ValueError(f"unknown trim clause {clause!r}")
    out: list[str] = []
    last = -1
    for i in sorted(keep):
        if i != last + 1:
            out.append("...")
        out.append(lines[i])
        last = i
    if last != len(lines) - 1:
        out.append("...")
    return "\n".join(out) + "\n"


def _key_count(obj) -> int:
    if isinstance(obj, dict):
        return len(obj) + sum(_key_count(v) for v in obj.values())
    if isinstance(obj, list):
        return sum(_key_count(v) for v in obj)
    return 0


def trim_json(obj, maps: tuple[str, ...] = (), path: str = ""):
    """A shorter copy: each list keeps its richest element (and says how many more there
    were), long lists of plain values their first three; the values named in `maps`
    (dotted paths, `[]` for list elements: what the docs describe elsewhere) keep their
    first three entries if objects, nothing if lists."""
    if isinstance(obj, dict):
        if path in maps and len(obj) > 3:
            short = dict(list(obj.items())[:3])
            short["..."] = "..."
            return short
        return {k: trim_json(v, maps, f"{path}.{k}" if path else k) for k, v in obj.items()}
    if isinstance(obj, list):
        if not obj:
            return []
        if path in maps:
            return [{"...": f"{len(obj)} more"}]
        if any(isinstance(v, (dict, list)) for v in obj):
            best = max(range(len(obj)), key=lambda i: (_key_count(obj[i]), -i))
            out = [trim_json(obj[best], maps, path + "[]")]
            if len(obj) > 1:
                out.append({"...": f"{len(obj) - 1} more"})
            return out
        return obj if len(obj) <= 3 else [*obj[:3], "..."]
    return obj


# ---- the examples ---------------------------------------------------------------------------

@dataclass
class Example:
    """One real run whose output the docs show.

    steps: the innoflush command lines (after `innoflush`), formatted with {probe}, {lab},
    {tmp} and {port}; the output is what the last step prints (every step is shown).
    """

    name: str
    steps: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()         # examples whose saved profiles this one uses
    resource: str | None = None         # 'server' (advise), 'binaries' (lab), 'docker'
    json: bool = False
    json_maps: tuple[str, ...] = ()
    codes: tuple[int, ...] = (0,)
    own_home: bool = False              # a fresh profile store instead of the shared one
    derive: Callable[[Env], str] | None = None   # output computed from other examples
    # 'server': a device profile whose syncs the server is given (the lab's emulation), so
    # that the profile advise is told is the server's storage; None: this host's own
    emulate: str | None = None
    # the last step also writes its charts (--png, not shown), for `chart` blocks
    charts: bool = False
    # 'server': which settings it starts with (SERVER_SETTINGS)
    settings: str = "tuned"


# a real report and two captures of the same server, before and after its change
# (tests/fixtures/checks/*/PROVENANCE.json): advise --check's examples
CHECKS = "tests/fixtures/checks/mariadb-10.11-trx-commit"

# the live servers' settings: "tuned" as a DBA chasing commits might leave one (advise
# finds the data-safety and durability risks), "recipe2" durable redo traded for speed
SERVER_SETTINGS = {
    "tuned": dict(innodb_flush_method="O_DIRECT_NO_FSYNC", innodb_flush_log_at_trx_commit=1,
                  log_bin=True, sync_binlog=0, innodb_buffer_pool_size="128M"),
    "recipe2": dict(innodb_flush_log_at_trx_commit=2, log_bin=True, sync_binlog=1,
                    innodb_buffer_pool_size="256M"),
}

# what a JSON example cuts short: maps of counters, and what the docs describe elsewhere
ADVISE_MAPS = ("settings.variables", "observed.deltas", "sampling.intervals[].deltas")
RUN_MAPS = ("device", "calibrated_workload.workload", "calibrated_workload.provenance",
            "runs[].measured.status_deltas", "runs[].measured.observed",
            "runs[].workload.spec", "runs[].workload.sim_config", "runs[].derived_workload",
            "runs[].predicted.status_per_s", "runs[].predicted.syncs_per_s")
CALIBRATE_MAPS = ("workload_spec", "runs[].workload", "runs[].read_back", "profile.workload",
                  "profile.provenance.server", "profile.provenance.device",
                  "profile.provenance.settings", "profile.provenance.spec",
                  "profile.provenance.calibration.by_connections",
                  "profile.provenance.calibration.runs",
                  "profile.provenance.calibration.host_costs")
VALIDATE_MAPS = ("calibration.workload_profile", "calibration.runs", "calibration.host_costs",
                 "matrix.workload", "devices[].emulation", "devices[].cells[].read_back",
                 "devices[].cells[].measured.status_deltas", "devices[].cells[].workload",
                 "devices[].cells[].derived_workload", "devices[].cells[].predicted_derived",
                 "devices[].cells[].errors_pct_derived", "devices[].cells[].predicted_single",
                 "devices[].cells[].errors_pct_single", "devices[].cells[].sim_config",
                 "devices[].summary.mape_derived", "devices[].summary.mape_single_calibration")

# The lab examples run on the profile `mine` that the measure example saved (this host's
# storage, like {lab}); each lab run makes and removes its own datadir under {lab}.
LAB = "--datadir-on {lab} --profile mine"


def _validate_text(env: Env) -> str:
    """The text `lab validate` prints, rendered from the JSON the example captured (one
    run gives both: the matrix takes minutes)."""
    report = json.loads(env.output("lab-validate-json").raw)
    for module in ("innoflush.lab.reports.validate_report", "innoflush.lab.validate_report"):
        with contextlib.suppress(ImportError, AttributeError):
            return importlib.import_module(module).render_text(report, COLUMNS)
    raise Skip("no render_text for lab validate reports found in innoflush.lab")


EXAMPLES: dict[str, Example] = {e.name: e for e in (
    # device: measure, then the profile in the other commands
    Example("measure", ("measure {probe} --quick --save mine",), charts=True),
    Example("measure-json", ("measure {probe} --quick --json",), json=True),
    Example("profiles-list", ("profiles list",), own_home=True),
    Example("profiles-list-json", ("profiles list --json",), json=True,
            own_home=True),
    Example("profiles-show", ("profiles show samsung-990-pro",), own_home=True),
    Example("profiles-show-json", ("profiles show samsung-990-pro --json",), json=True,
            own_home=True),
    Example("profiles-compare", ("profiles compare samsung-990-pro samsung-pm9a3 "
                                 "hdd-wd2502abys",), own_home=True),
    Example("profiles-compare-json", ("profiles compare samsung-990-pro samsung-pm9a3 "
                                      "--json",), json=True, own_home=True),
    Example("profiles-import", ("profiles export samsung-990-pro -o {tmp}/990.json",
                                "profiles import {tmp}/990.json --name my-990",
                                "profiles show my-990"), own_home=True),
    Example("simulate-mine", ("simulate --profile mine",), needs=("measure",)),
    Example("simulate-990", ("simulate --profile samsung-990-pro --flush-method "
                             "O_DIRECT,O_DIRECT_NO_FSYNC --trx-commit 1,2 --connections 1,16 "
                             "--duration 3",)),
    Example("simulate-pm9a3", ("simulate --profile samsung-pm9a3 --flush-method "
                               "O_DIRECT,O_DIRECT_NO_FSYNC --trx-commit 1,2 --connections 1,16 "
                               "--io-capacity-max 20000 --duration 3",)),
    Example("simulate-json", ("simulate --profile samsung-990-pro --connections 4 --duration 3 "
                              "--json",), json=True),
    Example("tps-mine", ("tps --profile mine",), needs=("measure",)),
    Example("tps-hdd", ("tps --profile hdd-wd2502abys --target-tps 200",)),
    Example("tps-990", ("tps --profile samsung-990-pro --target-tps 1000",)),
    Example("tps-json", ("tps --profile hdd-wd2502abys --target-tps 200 --json",), json=True),
    # a live server: MariaDB from this host's binaries under an insert load (Env.server)
    # the README's recipe 2: the binary log on, trx_commit=2, the profile of this disk
    Example("advise-mine", ("advise -h 127.0.0.1 -P {port} -u root --interval 5 "
                            "--profile mine",), needs=("measure",), resource="server",
            codes=(0, 3, 4), settings="recipe2"),
    # the same server told it runs on a 7,200 rpm disk: the model does not explain it
    Example("advise-declines", ("advise -h 127.0.0.1 -P {port} -u root --interval 5 "
                                "--profile hdd-wd2502abys",), resource="server",
            codes=(0, 3, 4), settings="recipe2"),
    Example("advise", ("advise -h 127.0.0.1 -P {port} -u root --interval 5 "
                       "--profile samsung-990-pro",), resource="server", codes=(0, 3, 4),
            emulate="samsung-990-pro", charts=True),
    Example("advise-json", ("advise -h 127.0.0.1 -P {port} -u root --interval 5 "
                            "--profile samsung-990-pro --json",), resource="server",
            codes=(0, 3, 4), json=True, json_maps=ADVISE_MAPS, emulate="samsung-990-pro"),
    # the lab: servers of its own, on this host's storage
    Example("advise-check", (f"advise --from {CHECKS}/applied --interval 5 --check "
                             f"{CHECKS}/report.json",), codes=(5,), own_home=True),
    Example("advise-check-json", (f"advise --from {CHECKS}/applied --interval 5 --check "
                                  f"{CHECKS}/report.json --json",), json=True, codes=(5,),
            own_home=True),
    Example("advise-track-record", (
        f"advise --from {CHECKS}/same --interval 5 --check {CHECKS}/report.json",
        f"advise --from {CHECKS}/applied --interval 5 --check {CHECKS}/report.json",
        "advise --track-record"), codes=(0, 4, 5), own_home=True),
    Example("advise-track-record-json", (
        f"advise --from {CHECKS}/same --interval 5 --check {CHECKS}/report.json",
        f"advise --from {CHECKS}/applied --interval 5 --check {CHECKS}/report.json",
        "advise --track-record --json"), json=True, codes=(0, 4, 5), own_home=True),
    Example("lab-run", (f"lab run {LAB} --flush-method O_DIRECT,O_DIRECT_NO_FSYNC "
                        "--trx-commit 1 --connections 1,4 --duration 5",),
            needs=("measure",), resource="binaries", charts=True),
    Example("lab-calibrate", ("lab calibrate --datadir-on {lab} --connections 1,4 "
                              "--duration 3 --warmup 1 --save docs-insert",),
            resource="binaries"),
    Example("lab-calibrate-json", ("lab calibrate --datadir-on {lab} --connections 1 "
                                   "--duration 2 --warmup 1 --save docs-insert-1 --json",),
            resource="binaries", json=True, json_maps=CALIBRATE_MAPS),
    Example("lab-run-emulate", (f"lab run --emulate samsung-990-pro --workload docs-insert {LAB} "
                                "--flush-method O_DIRECT --connections 1,4 --duration 5 "
                                "--warmup 1 --no-advise",),
            needs=("measure", "lab-calibrate"), resource="binaries"),
    Example("lab-run-json", (f"lab run --emulate samsung-990-pro --workload docs-insert {LAB} "
                             "--connections 1 --duration 3 --json",),
            needs=("measure", "lab-calibrate"), resource="binaries", json=True,
            json_maps=RUN_MAPS),
    Example("lab-validate-json", (f"lab validate {LAB} --devices local,samsung-990-pro "
                                  "--connections 2 --duration 3 --warmup 1 "
                                  "--calibrate-duration 2 --markdown {tmp}/validation.md "
                                  "--json",),
            needs=("measure",), resource="binaries", json=True,
            json_maps=VALIDATE_MAPS),
    Example("lab-validate", needs=("lab-validate-json",), derive=_validate_text),
    Example("lab-run-docker", (f"lab run --backend docker --image "
                               f"innoflush/mariadb:10.11-offline {LAB} --connections 1 "
                               "--duration 3 --no-advise",),
            needs=("measure",), resource="docker"),
)}


class Skip(Exception):
    """An example cannot run on this host: its committed block stays."""


@dataclass
class Output:
    shown: list[str]           # the command lines, as shown
    raw: str                   # what the last one printed (paths shown as SHOWN_TMP)
    json: bool = False
    maps: tuple[str, ...] = ()

    def render(self, trim: str = "") -> str:
        if self.json:
            obj = trim_json(json.loads(self.raw), self.maps)
            note = ("(trimmed: a list shows one element, `{\"...\": \"N more\"}` the rest; "
                    "`\"...\"` marks a map cut short)")
            return (f"`$ innoflush {self.shown[-1]}` {note}\n\n```json\n"
                    f"{json.dumps(obj, indent=2, ensure_ascii=False)}\n```\n")
        body = trim_text(self.raw, trim) if trim else self.raw
        head = "".join(f"$ innoflush {s}\n" for s in self.shown)
        return f"```\n{head}{body.rstrip()}\n```\n"


def _load_thread(server, database: str, stop: threading.Event, seed: int,
                 errors: list) -> None:
    rng = random.Random(seed)
    try:
        conn = server.connect()
        with conn.cursor() as cur:
            while not stop.is_set():
                cur.execute(f"INSERT INTO `{database}`.t (k, pad) VALUES (%s, REPEAT('x', 100))",
                            (rng.randrange(1_000_000),))
        conn.close()
    except Exception as exc:  # noqa: BLE001 - reported when the load stops
        errors.append(exc)


def _load_database(server, *ddl: str) -> str:
    """The database the docs' loads write to, created with `ddl` ({db}: its name)."""
    database = "docs_load"
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE IF NOT EXISTS `{database}`")
            for stmt in ddl:
                cur.execute(stmt.format(db=database))
    finally:
        conn.close()
    return database


def _sysbench_args(server, database: str) -> list[str]:
    return ["oltp_insert", "--db-driver=mysql", f"--mysql-socket={server.socket}",
            "--mysql-user=root", "--mysql-password=", f"--mysql-db={database}",
            "--tables=1", "--table-size=1000"]


@contextlib.contextmanager
def sysbench_load(server, threads: int = 4) -> Iterator[None]:
    """sysbench `oltp_insert` from `threads` connections until the block ends: a load
    from its own processes, as a user's would be (the Python load below shares one
    interpreter lock between its connections, a ceiling the server does not have)."""
    database = _load_database(server)
    args = _sysbench_args(server, database)
    subprocess.run(["sysbench", *args, "prepare"], check=True, capture_output=True,
                   stdin=subprocess.DEVNULL)
    # --time=0: no limit; stopped below. Its messages go to a file, not a pipe nobody
    # reads while it runs (a full pipe would stall the load).
    err = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(["sysbench", *args, f"--threads={threads}", "--time=0",
                             "--report-interval=0", "run"], stdout=subprocess.DEVNULL,
                            stderr=err, stdin=subprocess.DEVNULL)
    try:
        time.sleep(2)   # past the first inserts: the advisor samples a steady load
        if proc.poll() is not None:
            err.seek(0)
            raise RuntimeError(f"sysbench stopped: {err.read().strip()[-300:]}")
        yield
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        err.close()


@contextlib.contextmanager
def insert_load(server, threads: int = 4) -> Iterator[None]:
    """Autocommit INSERTs into a table with a secondary index, from `threads` threads of
    this process (where there is no sysbench)."""
    database = _load_database(
        server, "CREATE TABLE IF NOT EXISTS `{db}`.t (id BIGINT AUTO_INCREMENT PRIMARY KEY, "
        "k INT NOT NULL, pad VARCHAR(200) NOT NULL, KEY k (k)) ENGINE=InnoDB")
    stop = threading.Event()
    errors: list = []
    pool = [threading.Thread(target=_load_thread, args=(server, database, stop, i, errors),
                             daemon=True) for i in range(threads)]
    for t in pool:
        t.start()
    try:
        time.sleep(2)   # past the first inserts: the advisor samples a steady load
        yield
    finally:
        stop.set()
        for t in pool:
            t.join(timeout=30)
    if errors:
        raise RuntimeError(f"the insert load failed: {errors[0]!r}")


def _innoflush_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "innoflush"
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-c", "from innoflush.commands.root import main; main()"]


def run_quietly_stoppable(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run a command; on our interruption, SIGINT it and wait, so that a lab command stops
    its servers and removes its datadirs (a SIGKILL would leave them)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            stdin=subprocess.DEVNULL, text=True, cwd=ROOT)
    try:
        out, err = proc.communicate()
    except BaseException:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


class Env:
    """The temporary world the examples run in, and their outputs (each runs once)."""

    def __init__(self, root: Path, stack: contextlib.ExitStack):
        self.root = root
        self.stack = stack
        self.outputs: dict[str, Output] = {}
        self.failed: dict[str, str] = {}
        self._server = None
        self._server_stack: contextlib.ExitStack | None = None
        self._servers_started = 0
        self._emulate: str | None = None
        self._settings = "tuned"
        for d in ("home", "probe", "lab"):
            (root / d).mkdir()

    def _format(self, step: str) -> str:
        port = self._server.port if self._server is not None else 0
        return step.format(probe=self.root / "probe", lab=self.root / "lab", tmp=self.root,
                           port=port)

    def charts_dir(self, name: str) -> Path:
        """Where an example with charts=True wrote its PNGs."""
        return self.root / "charts" / name

    def shown(self, text: str) -> str:
        return text.replace(str(self.root), SHOWN_TMP)

    # ---- resources
    def _need(self, resource: str | None, emulate: str | None = None,
              settings: str = "tuned") -> None:
        if resource in ("server", "binaries"):
            from innoflush.lab import ServerError, find_binaries
            try:
                find_binaries()
            except ServerError as exc:
                raise Skip(f"no MariaDB/MySQL server binaries ({exc})") from None
        if resource == "server" and self._server is not None and (
                self._emulate, self._settings) != (emulate, settings):
            self._stop_server()   # another device under it, or other settings
        if resource == "server" and self._server is None:
            self._start_server(emulate, settings)
        elif resource != "server" and self._server is not None:
            self._stop_server()   # its load would compete with what runs next
        if resource == "docker":
            try:
                import docker
                client = docker.from_env(timeout=10)
                client.ping()
                client.images.get("innoflush/mariadb:10.11-offline")
                client.close()
            except Exception as exc:  # noqa: BLE001 - any failure means: no Docker here
                raise Skip(f"no Docker engine with innoflush/mariadb:10.11-offline "
                           f"({type(exc).__name__}: {exc})") from None

    def _start_server(self, emulate: str | None = None, settings: str = "tuned") -> None:
        from innoflush.lab import LocalServer, ServerOptions
        from innoflush.lab.emulation.emulate import build_library, preload_env
        from innoflush.profiles import load_profile
        opts = ServerOptions(**SERVER_SETTINGS[settings])
        self._servers_started += 1
        env = (preload_env(load_profile(emulate), build_library(self.root / "lib"))
               if emulate else None)
        srv = LocalServer(self.root / f"server-{self._servers_started}", opts,
                          remove_on_stop=True, env=env)
        self._emulate, self._settings = emulate, settings
        self._server_stack = self.stack.enter_context(contextlib.ExitStack())
        self._server_stack.callback(srv.stop)
        srv.start()
        sysbench = shutil.which("sysbench") is not None
        self._server_stack.enter_context((sysbench_load if sysbench else insert_load)(srv))
        self._server = srv
        log(f"server {srv.flavor} {'.'.join(map(str, srv.version))} on port {srv.port}, "
            "under an insert load of 4 connections "
            + ("(sysbench oltp_insert)" if sysbench else "(Python threads: no sysbench)")
            + (f", its syncs delayed to {emulate}'s" if emulate else ""))

    def _stop_server(self) -> None:
        assert self._server_stack is not None
        self._server_stack.close()
        self._server = self._server_stack = None
        log("server stopped")

    # ---- running
    def output(self, name: str) -> Output:
        if name in self.outputs:
            return self.outputs[name]
        if name in self.failed:
            raise Skip(self.failed[name])
        ex = EXAMPLES[name]
        try:
            for need in ex.needs:
                self.output(need)
            self._need(ex.resource, ex.emulate, ex.settings)
            t0 = time.monotonic()
            if ex.derive is not None:   # shown as the command it was derived from
                shown = [s.replace(" --json", "") for s in self.output(ex.needs[0]).shown]
                out = Output(shown, ex.derive(self))
            else:
                out = self._run(ex)
            log(f"{name}: {time.monotonic() - t0:.0f} s")
        except Skip as exc:
            self.failed[name] = f"{name}: {exc}"
            raise Skip(self.failed[name]) from None
        self.outputs[name] = out
        return out

    def _run(self, ex: Example) -> Output:
        env = dict(os.environ)
        home = self.root / (f"home-{ex.name}" if ex.own_home else "home")
        home.mkdir(exist_ok=True)
        env.update(INNOFLUSH_HOME=str(home), MYSQL_PWD="", COLUMNS=str(COLUMNS))
        env.pop("MYSQL_HOST", None)
        if ex.resource == "server":
            env["HOME"] = str(home)   # no ~/.my.cnf of the user's
        shown: list[str] = []
        result = None
        for i, step in enumerate(ex.steps):
            args = self._format(step)
            shown.append(self.shown(args))
            log(f"  $ innoflush {shown[-1]}")
            if ex.charts and i == len(ex.steps) - 1:
                args += f" --png {self.charts_dir(ex.name)}"
            result = run_quietly_stoppable(_innoflush_cmd() + args.split(), env)
            if result.returncode not in ex.codes:
                raise RuntimeError(f"{ex.name}: `innoflush {args}` exited "
                                   f"{result.returncode}: {result.stderr.strip()[-2000:]}")
        assert result is not None
        return Output(shown, self.shown(result.stdout), ex.json, ex.json_maps)


def log(text: str) -> None:
    print(f"make_docs: {text}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def example_env() -> Iterator[Env]:
    """A temporary directory, and whatever the examples start in it, gone afterwards."""
    def on_term(signum, frame):
        raise KeyboardInterrupt
    old = signal.signal(signal.SIGTERM, on_term)
    root = Path(tempfile.mkdtemp(prefix="innoflush-docs-"))
    try:
        with contextlib.ExitStack() as stack:
            yield Env(root, stack)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        signal.signal(signal.SIGTERM, old)
