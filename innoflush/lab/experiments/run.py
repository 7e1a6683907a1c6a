"""`innoflush lab run`: real servers under a workload, measured beside predicted.

For every combination of flush method × trx_commit × sync_binlog × connections
(``options.plan_runs``):

1. start a fresh server (``LocalServer`` or ``DockerServer``, both ``LabServer``:
   ``servers.make_server``) in a work directory under ``datadir_on`` (removed
   afterwards, always);
2. read its settings back (SHOW GLOBAL VARIABLES through the live layer's
   ``gather_facts``: ``servers.read_back``): the report shows what the server really
   ran with, and the prediction uses that;
3. create the workload's table and preload it; time ``SELECT 1`` round trips (the
   loopback estimate); start the client processes and let them connect;
4. release the clients; after the warm-up (``warmup_s``, if any) snapshot SHOW GLOBAL
   STATUS, the server's CPU time (``/proc/PID/stat``, per thread too) and run-queue waits
   (``/proc/PID/task/*/schedstat``), the machine's CPU (``/proc/stat``) and the InnoDB
   files' sizes and mtimes (``hostprobe``); run ``advise`` (sampling and rules, no
   simulation) in a thread while the clients run; collect the clients; snapshot again;
5. stop the server; then **predict** (``predict``): ``simulate`` the read-back
   configuration on the device profile with a Workload built from independently
   measured quantities (see ``derive_workload``), and compare (``compare``: predicted /
   measured − 1).

This module holds that orchestration (``measure_one``: steps 1-5 up to the prediction,
shared with ``lab calibrate`` and ``lab validate``, its readings at step 4 in
``run_window``; ``run_one``: one run with its prediction; ``lab_run``: all of them); what
the three commands do around their runs (the work directory, the device profile, one
run's errors) is in ``run_setup``.

Nothing here fits the model to the measured TPS: the server CPU, client time, redo,
page writes, tablespaces and growth per transaction are measured, and the TPS,
latencies and counter rates are then predicted from them.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from ...advisor.rules import device_from_profile
from ...errors import InnoflushError
from ...live.connect import ReadOnlySession
from ...live.facts import filesystem_of, gather_facts
from ...live.observed import observe
from ...live.procfs import thread_cpu
from ...live.sampling import interval_between, start_state
from ...profiles import load_profile
from ..emulation.emulate import Emulation, emulation_result, make_emulation, preload_complaints
from ..load.clients import run_workload
from ..load.external import command_load
from ..load.workload import WorkloadSpec, prepare
from ..load.workload_result import WorkloadResult
from ..reports.report import SCHEMA
from ..server.for_run import (
    advise_summary,
    connection_params,
    docker_server_class,
    loopback,
    make_server,
    read_back,
    server_options,
    settings_mismatch,
    status_snapshot,
)
from .command_run import command_run_doc, command_workload_doc
from .hostprobe import run_accounts
from .options import LabError, LabOptions, RunPlan, plan_runs
from .predict import (
    compare,
    derive_workload,
    measured_figures,
    model_notes,
    predict,
    predicted_figures,
    sim_config,
)
from .run_setup import (
    calibrated_summary,
    calibration_for,
    load_calibrated,
    load_or_measure,
    make_base_dir,
    run_checked,
)
from .run_window import RunWindow

# how long a predicting advise may simulate after its sampling (its fit and candidates)
ADVISE_PREDICT_TIMEOUT_S = 600.0


# ---- one run (measure, then predict) ---------------------------------------------------

@dataclass
class Measured:
    """What one run measured on the real server, before any prediction."""

    plan: RunPlan
    spec: WorkloadSpec
    requested: dict
    facts: object
    back: dict
    mismatch: list
    observed: object
    iv: object
    wr: WorkloadResult
    rtt: dict
    pid: int | None
    port: int | None
    server_cpu_s: float | None
    split: dict | None
    files: dict | None
    usage: dict | None
    runq: dict
    notes: list
    advisor: object = None
    emulation: dict | None = None
    extensions: dict | None = None
    start: dict | None = None         # start_state(): before the warm-up
    command: dict | None = None       # --workload-cmd: the command, how it ended

    @property
    def client(self) -> dict:
        return self.wr.to_dict()

    def figures(self) -> dict:
        return measured_figures(self.wr, self.observed)

    def doc(self) -> dict:
        """The report's ``measured`` object."""
        client = self.client
        wr, iv = self.wr, self.iv
        return {**self.figures(), "client": client,
                "status_seconds": round(iv.seconds, 3), "status_deltas": dict(iv.deltas),
                "observed": self.observed.to_dict(), "server_cpu_s": self.server_cpu_s,
                "server_cpu_us_per_trx": (round(self.server_cpu_s * 1e6 / wr.commits, 2)
                                          if self.server_cpu_s is not None and wr.commits
                                          else None),
                "server_cpu_split": self.split,
                "machine_cpu_busy": self.usage["busy"] if self.usage else None,
                "machine_cpu": self.usage, "runq_wait": self.runq, "loopback": self.rtt,
                "files": self.files, "start_state": self.start}

    def round_trip(self) -> tuple[float, str]:
        """The per-statement wait outside both CPUs (µs), and where it came from."""
        rtt = self.rtt
        if rtt.get("wait_us") is not None:
            return rtt["wait_us"], (
                f"a SELECT 1 round trip ({rtt['wall_us']:.1f} µs) less the client's "
                f"({rtt['client_cpu_us']:.1f}) and the server's ({rtt['server_cpu_us']:.1f})"
                " CPU")
        return rtt["outside_client_us"], (
            f"a SELECT 1 round trip ({rtt['wall_us']:.1f} µs) less the client's CPU "
            f"({rtt['client_cpu_us']:.1f}); the server's CPU was not readable")

    def derive(self) -> tuple:
        """derive_workload on this run's measurements: (Workload, derivation lines)."""
        rt_us, rt_src = self.round_trip()
        statements = ((self.command or {}).get("statements_per_trx")
                      or self.spec.statements_per_trx)
        return derive_workload(
            connections=self.plan.connections, commits=self.wr.commits,
            server_cpu_s=self.server_cpu_s, client_cpu_s=self.client["client_cpu"]["cpu_s"],
            statements_per_trx=statements, round_trip_us=rt_us,
            round_trip_source=rt_src, observed=self.observed, files=self.files,
            extensions=self.extensions, deltas=dict(self.iv.deltas),
            dirty_growth=self.iv.gauge_deltas.get("Innodb_buffer_pool_pages_dirty"))



def _make_server(opts: LabOptions, plan: RunPlan, workdir: Path,
                 emulation: Emulation | None) -> tuple:
    """The run's server, with the emulated device's library preloaded when asked:
    (server, the emulation's log)."""
    server_kw: dict = {}
    emu_log = None
    if emulation is not None:
        server_kw, emu_log = emulation.prepare(workdir.with_name(workdir.name + "-emulate"),
                                               opts.backend)
    return make_server(opts, workdir, server_options(opts, plan), **server_kw), emu_log


def _start_server(server, backend: str) -> None:
    try:
        server.start()
    except InnoflushError:
        raise
    except Exception as exc:  # noqa: BLE001 - a backend's own error: one line
        raise LabError(f"{backend} backend: {type(exc).__name__}: {exc}") from None


def _prepare_load(opts: LabOptions, server, workdir: Path, spec: WorkloadSpec, params,
                  facts, conn, say):
    """The lab's schema created and preloaded (None: its client processes drive the
    load), or the user's command prepared (its load, lab/load/external.py)."""
    if opts.command is None:
        say("creating the schema and preloading")
        prepare(conn, spec)
        return None
    load = command_load(opts, server, workdir, spec, params, facts)
    say(f"preparing the server for {opts.command.name}"
        + (" (--workload-prepare)" if opts.command.prepare else ""))
    load.prepare(conn)
    return load


def _drive_load(opts: LabOptions, spec: WorkloadSpec, params, cores: int, load,
                window: RunWindow, during, say) -> WorkloadResult | None:
    """Release the load over the window: the lab's client processes (their result), or
    the user's command (None: its result is read from the counters afterwards)."""
    say(("starting the client processes" if load is None else
         f"starting {opts.command.name}")
        + (f" ({spec.warmup_s:g} s of warm-up first)" if spec.warmup_s else ""))
    wr = None
    try:
        if load is None:
            wr = run_workload(params, spec, cores, at_start=window.at_start, during=during)
            window.at_end()
        else:
            load.drive(lambda: status_snapshot(window.session).status, window.at_start,
                       during, window.at_end)
    finally:
        window.stop_watch()
        if load is not None:
            load.stop()
    return wr


def _window_counters(a, b, facts) -> tuple:
    """The status interval over the window and what the server did in it: (interval,
    Observed)."""
    iv = interval_between(0, a, b)
    if not iv.valid:
        raise LabError(f"the status counters cannot be used: {iv.problem}")
    return iv, observe(iv, facts.product, facts.log_bin, facts.trx_commit,
                       facts.flush_log_at_timeout, facts.redo_write_through)


def _stop_run(server, load, window: RunWindow | None, advise_predict: bool) -> None:
    """Stop what a run started, whatever happened: the window, the command, the server,
    then wait for advise."""
    if window is not None:
        window.closed.set()
    if load is not None:
        load.stop()
    server.stop()
    if window is not None and window.advisor is not None:
        # a predicting advise simulates after its sampling: the server is not needed
        window.advisor.join(timeout=ADVISE_PREDICT_TIMEOUT_S if advise_predict else 5)


def _check_committed(plan: RunPlan, wr: WorkloadResult, client: dict) -> None:
    if wr.commits == 0:
        raise LabError(f"run {plan.index}/{plan.total} ({plan.label}): the workload "
                       "committed no transaction"
                       + (f" ({client['error_messages'][0]})" if client["error_messages"]
                          else ""))


def measure_one(opts: LabOptions, plan: RunPlan, workdir: Path, progress,
                emulation: Emulation | None = None, profile=None,
                advise_predict: bool = False, advise_observe: bool = False) -> Measured:
    """Start a server (emulating a device if asked), drive the workload — the lab's
    client processes, or with opts.command the user's command (lab/load/external.py) —, take
    the deltas and the CPU times, stop it. Nothing is predicted here; advise_predict:
    advise, when it runs, predicts too (on `profile`); advise_observe: it measures the
    workload as a predicting advise does, without predicting (the other side of a
    compared pair carries the same observer)."""
    spec = opts.spec(plan.connections)
    cores = os.cpu_count() or 1
    requested = plan.requested(opts)
    say = (lambda phase: progress(plan, phase)) if progress else (lambda phase: None)
    server, emu_log = _make_server(opts, plan, workdir, emulation)
    window: RunWindow | None = None
    load = None
    complaints: list[str] = []
    try:
        say("starting the server" + (f" (emulating {emulation.profile.name})"
                                     if emulation else ""))
        _start_server(server, opts.backend)
        conn = server.connect()
        session = ReadOnlySession(conn)
        facts = gather_facts(session)
        back = read_back(facts)
        mismatch = settings_mismatch(requested, back)
        params = connection_params(server)
        load = _prepare_load(opts, server, workdir, spec, params, facts, conn, say)
        pid = server.server_pid()
        port = server.port
        rtt = loopback(conn, server_pid=pid)
        threads_pre = thread_cpu(pid) if pid else {}
        window = RunWindow(server, session, pid, opts.watch_extensions)

        def during():
            say(f"measuring the {opts.command.name if load else spec.kind} workload for "
                f"{spec.duration_s:g} s")
            if opts.advise:
                window.start_advise(opts, profile, spec.duration_s,
                                    None if load else plan.connections, advise_predict,
                                    advise_observe)

        start = start_state(status_snapshot(session).status)
        wr = _drive_load(opts, spec, params, cores, load, window, during, say)
        b = window.snaps["b"]
        if window.advisor is not None:
            window.advisor.join(timeout=max(5.0, spec.duration_s))
        iv, observed = _window_counters(window.snaps["a"], b, facts)
        if load is not None:
            wr = load.result(observed, iv, cores)
        session.close()
        if emulation is not None:
            complaints = preload_complaints(server)
        say("stopping the server")
    finally:
        _stop_run(server, load, window, advise_predict)
    if server.is_running():
        raise LabError("the server is still running after stop()")
    emu = (emulation_result(emu_log, opts.backend, pid, iv.deltas.get("Innodb_data_fsyncs"),
                            complaints) if emulation is not None else None)
    acc = run_accounts(window.snaps, threads_pre, wr, cores, mismatch, observed, emu)
    _check_committed(plan, wr, acc.client)
    return Measured(plan=plan, spec=spec, requested=requested, facts=facts, back=back,
                    mismatch=mismatch, observed=observed, iv=iv, wr=wr, rtt=rtt, pid=pid,
                    port=port, server_cpu_s=acc.server_cpu_s, split=acc.split,
                    files=acc.files, usage=acc.usage, runq=acc.runq, notes=acc.notes,
                    advisor=window.advisor, emulation=emu,
                    extensions=window.watch.result() if window.watch is not None else None,
                    start=start, command=load.doc() if load is not None else None)


def workload_for(base_workload, connections: int):
    """A calibrated workload (any connections) at this run's connections."""
    return replace(base_workload, connections=connections)


def run_one(opts: LabOptions, plan: RunPlan, workdir: Path, profile, progress,
            emulation: Emulation | None = None, calibrated=None,
            calibrated_source: str | None = None,
            commit_base_ms: float | None = None) -> dict:
    """Start a server, drive the workload, take the deltas, stop it; then predict.

    profile: the device profile the prediction runs on (with emulation: the emulated
    one). calibrated: a Workload (from a workload profile, ``lab calibrate``) to predict
    with instead of the one derived from this run's own measurements (which is still
    reported, as ``derived_workload``). commit_base_ms: what a COMMIT costs besides the
    wait for durability (a calibration's COMMIT round trip at trx_commit=0), added to the
    simulated commit latencies; None: one measured SELECT 1 round trip."""
    m = measure_one(opts, plan, workdir, progress, emulation, profile,
                    advise_predict=opts.command is not None)
    say = (lambda phase: progress(plan, phase)) if progress else (lambda phase: None)
    say("simulating the same configuration")
    if opts.command is not None:
        return command_run_doc(opts, plan, m, workdir, profile)
    cores = os.cpu_count() or 1
    derived, lines = m.derive()
    config, cfg_notes = sim_config(m.facts, cores, workdir.parent)
    lines += [f"cpu_cores = {cores} (this host)"] + cfg_notes
    if calibrated is not None:
        workload = workload_for(calibrated, plan.connections)
        source = calibrated_source or "calibrated"
        wl_lines = [f"the calibrated workload {source} at {plan.connections} connection(s)"]
    else:
        workload, wl_lines, source = derived, lines, "derived"
    sim = predict(config, workload, profile, opts.duration_s, seed=opts.seed,
                  warmup_s=opts.warmup_s, start=m.start)
    base = commit_base_ms if commit_base_ms is not None else m.rtt["wall_us"] / 1e3
    predicted = predicted_figures(sim, base)
    predicted["commit_round_trip_source"] = (
        "the calibration's COMMIT round trip at trx_commit=0" if commit_base_ms is not None
        else "one measured SELECT 1 round trip")
    measured = m.figures()
    notes = list(m.notes) + model_notes(m.facts, config)
    out = {
        "index": plan.index, "label": plan.label,
        "server_process": {"pid": m.pid, "port": m.port},
        "requested": m.requested, "read_back": m.back, "settings_match": not m.mismatch,
        "settings_mismatch": m.mismatch,
        "measured": m.doc(),
        "workload": {**workload.to_dict(), "source": source, "spec": m.spec.to_dict(),
                     "derivation": wl_lines if calibrated is not None else lines,
                     "sim_config": config.to_dict()},
        "predicted": predicted,
        "errors_pct": compare(measured, predicted),
        "advise": advise_summary(m.advisor.result if m.advisor else None,
                                 m.advisor.error if m.advisor else "not run (--no-advise)"),
        "emulation": m.emulation,
        "notes": notes,
    }
    if calibrated is not None:
        out["derived_workload"] = {**derived.to_dict(), "derivation": lines}
    return out


# ---- the whole lab ------------------------------------------------------------------------------

def lab_run(opts: LabOptions, progress=None, progress_line=None) -> dict:
    """Every planned run, then the report dict (see lab/reports/report.py for its keys).

    progress(plan, phase) and progress_line(text) are called for progress messages.
    With opts.emulate the servers run with that device's sync latencies (a preloaded
    library) and the predictions use that profile; --profile/--measure then describe
    this host's storage, against which the emulation is checked (else a quick probe).
    With opts.workload_ref the predictions use that workload profile (lab calibrate)
    instead of the workload derived from each run.
    Always stops every server and removes every work directory it created."""
    opts.validate()
    if opts.backend == "docker":
        docker_server_class()
    plans = plan_runs(opts)
    if opts.profile_ref:
        load_profile(opts.profile_ref)    # an unknown profile: exit 2 before anything runs
    if opts.emulate:
        load_profile(opts.emulate)
    wp, _ = load_calibrated(opts.workload_ref)
    base = make_base_dir(opts.datadir_on)
    warnings: list[str] = []
    runs: list[dict] = []
    emulation = None
    try:
        fs = filesystem_of(str(base))
        if fs in ("tmpfs", "ramfs"):
            warnings.append(f"{base.parent} is on {fs}: memory, not storage — the figures "
                            "say nothing about a disk (give --datadir-on a directory on the "
                            "storage to test)")
        if opts.emulate:
            host_profile = host_source = None
            if opts.profile_ref or opts.measure:
                host_profile, src = load_or_measure(opts, base, progress_line)
                host_source = f"{host_profile.name} [{src}]"
            emulation = make_emulation(opts.emulate, base, host_profile, host_source,
                                       seed=opts.seed, channels=opts.emulate_channels,
                                       progress_line=progress_line)
            if emulation.check["verdict"] != "ok":
                warnings.append(emulation.check["notes"][0])
            profile, source = emulation.profile, "emulated"
        else:
            profile, source = load_or_measure(opts, base, progress_line)
        for plan in plans:
            workdir = base / f"run-{plan.index}"
            runs.append(run_checked(plan, workdir, warnings, lambda plan=plan, workdir=workdir:
                                    run_one(opts, plan, workdir, profile, progress,
                                            emulation, *calibration_for(wp, plan))))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    first = runs[0]["read_back"] if runs else {}
    return {
        "schema": SCHEMA,
        "backend": opts.backend, "image": opts.image,
        "server": {"product": first.get("product"), "version": first.get("version"),
                   "sim_flavor": first.get("sim_flavor")},
        "storage": {"datadir_on": str(base.parent), "filesystem": fs},
        "profile": {"name": profile.name, "title": profile.title, "source": source},
        "device": device_from_profile(profile, source).to_dict(),
        "emulation": emulation.to_dict() if emulation else None,
        "host": {"cpu_cores": os.cpu_count() or 1},
        "workload": command_workload_doc(opts) if opts.command else
        opts.spec(opts.connections[0]).to_dict() | {
            "connections": list(opts.connections), "description":
            opts.spec(opts.connections[0]).describe()},
        "calibrated_workload": calibrated_summary(wp),
        "runs": runs,
        "warnings": warnings,
    }


__all__ = ["Measured", "lab_run", "measure_one", "run_one", "workload_for"]
