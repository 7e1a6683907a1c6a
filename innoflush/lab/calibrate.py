"""`innoflush lab calibrate`: a workload profile measured on a real server.

The model needs, per transaction: the server's CPU, the client's CPU and the time
outside both (round trips), the redo and binlog bytes, the pages it dirties, the
tablespace growth and the files written. ``lab run`` derives them from each run; but a
run with syncs in its commit path mixes the syncs' own cost into the CPU it measures
(the kernel time of the write and fsync calls, the wake-ups of the waiting threads),
which the model then charges twice — once as CPU, once as the device's latency.

So calibration runs the same workload with **no sync in the commit path**:
``innodb_flush_log_at_trx_commit=0`` (and ``sync_binlog=0`` with the binlog on), the redo
written and synced about once a second by the server's background thread. From that
run (``run.measure_one`` and ``run.derive_workload``, the same measurements as ``lab
run``):

- ``cpu_us_per_trx`` = server process CPU / commits; ``client_cpu_us_per_trx`` = the
  client processes' CPU / commits; ``client_us_per_trx`` = that + statements per
  transaction × the part of a ``SELECT 1`` round trip no CPU time counts;
- ``redo_bytes_per_trx``, ``pages_dirtied_per_trx``, ``binlog_bytes_per_trx`` from the
  SHOW GLOBAL STATUS deltas; ``tablespaces`` and ``growth_bytes_per_trx`` from the
  InnoDB files (written, grown).

CPU per transaction depends on the concurrency (at one connection every statement
wakes an idle thread; with more connections than cores the threads queue and switch),
so with several ``--connections`` one calibration run is made per count: the profile's
``workload`` is the first count's, and ``provenance.calibration.by_connections`` keeps
each count's (``workload_at`` picks the one for a run; ``lab validate`` uses it).
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import shutil
from dataclasses import replace
from pathlib import Path

from ..errors import UsageError
from .run import (
    LabOptions,
    RunPlan,
    _filesystem,
    docker_server_class,
    load_or_measure,
    make_base_dir,
    make_emulation,
    measure_one,
    run_checked,
)

SCHEMA = "innoflush.lab-calibrate/1"
RESERVED_NAMES = ("insert", "oltp")   # the load generator's workloads (--workload)


def calibration_plans(opts: LabOptions) -> list[RunPlan]:
    """One trx_commit=0 run (sync_binlog=0 with the binlog on) per connection count, with
    the first flush method."""
    sb = 0 if opts.log_bin else None
    n = len(opts.connections)
    return [RunPlan(i + 1, n, opts.flush_methods[0], 0, sb, c)
            for i, c in enumerate(opts.connections)]


def run_summary(m, workload) -> dict:
    """What one calibration run measured (the figures behind the workload)."""
    c = m.client
    o = m.observed
    return {"connections": m.plan.connections, "commits": m.wr.commits,
            "seconds": c["seconds"], "tps": round(m.wr.tps, 2),
            "server_cpu_us_per_trx": (round(m.server_cpu_s * 1e6 / m.wr.commits, 2)
                                      if m.server_cpu_s is not None else None),
            "server_cpu_split": m.split,
            "client_cpu_us_per_trx": c["client_cpu"]["cpu_us_per_trx"],
            "commit_latency_ms": c["commit_latency_ms"],
            "loopback": m.rtt, "redo_bytes_per_commit": o.redo_bytes_per_commit,
            "pages_dirtied_per_commit": o.pages_dirtied_per_commit,
            "page_writes_per_commit": o.page_writes_per_commit,
            "binlog_bytes_per_commit": o.binlog_bytes_per_commit,
            "data_fsyncs_per_s": o.data_fsyncs_per_s, "files": m.files,
            "extensions": m.extensions,
            "machine_cpu": m.usage, "runq_wait": m.runq,
            "read_back": m.back, "notes": list(m.notes),
            "emulation": m.emulation,
            "workload": workload.to_dict()}


def build_profile(name: str, title: str | None, opts: LabOptions, runs: list[dict],
                  derivations: list[list[str]], server: dict, emulation: dict | None):
    """The WorkloadProfile: the first connection count's workload, every count's in
    provenance.calibration.by_connections."""
    from .. import __version__
    from ..simulator import Workload
    from ..simulator.workload_profile import WorkloadProfile

    first = runs[0]["workload"]
    wl = Workload(**{**first, "connections": 1})
    spec = opts.spec(runs[0]["connections"]).to_dict()
    spec.pop("connections", None)
    by = {str(r["connections"]): {k: v for k, v in r["workload"].items() if k != "connections"}
          for r in runs}
    prov = {
        "kind": "calibrated", "tool": f"innoflush lab calibrate {__version__}",
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": platform.node(), "cpu_cores": os.cpu_count() or 1,
        "backend": opts.backend, "image": opts.image,
        "server": server, "device": (emulation or {}).get("profile") or "this host's storage",
        "emulated": bool(emulation),
        "settings": {"innodb_flush_method": opts.flush_methods[0],
                     "innodb_flush_log_at_trx_commit": 0, "log_bin": opts.log_bin,
                     "sync_binlog": 0 if opts.log_bin else None,
                     "innodb_buffer_pool_size": opts.buffer_pool, "extra": dict(opts.extra)},
        "spec": spec,
        "calibration": {"connections": [r["connections"] for r in runs],
                        "by_connections": by,
                        # the COMMIT round trip without a sync (trx_commit=0): what a
                        # commit costs besides the wait for durability (the first count's,
                        # and each count's: at more connections than cores it includes
                        # the wait for a CPU)
                        "commit_base_ms": runs[0]["commit_latency_ms"]["p50"],
                        "commit_base_ms_by_connections": {
                            str(r["connections"]): r["commit_latency_ms"]["p50"]
                            for r in runs},
                        "runs": [{k: v for k, v in r.items() if k in (
                            "connections", "commits", "seconds", "tps",
                            "server_cpu_us_per_trx", "client_cpu_us_per_trx",
                            "redo_bytes_per_commit", "pages_dirtied_per_commit",
                            "binlog_bytes_per_commit")} for r in runs],
                        "derivation": derivations[0]},
    }
    notes = [f"calibrated with innodb_flush_log_at_trx_commit=0 (no sync in the commit path) "
             f"at {runs[0]['connections']} connection(s), {opts.duration_s:g} s"
             + (f" after {opts.warmup_s:g} s of warm-up" if opts.warmup_s else "")]
    if len(runs) > 1:
        notes.append("server CPU per transaction by connections: " + ", ".join(
            f"{r['connections']}: {r['workload']['cpu_us_per_trx']:.1f} µs" for r in runs)
            + " (workload_at / lab validate use the matching one)")
    return WorkloadProfile(name=name, title=title or f"{spec['kind']} workload calibrated on "
                           f"{platform.node()} ({server.get('version') or 'server'})",
                           workload=wl, provenance=prov, notes=notes)


def commit_base_ms(wp, connections: int | None = None) -> float | None:
    """The calibration's COMMIT round trip without a sync (ms): the part of a measured
    commit latency that is not the wait for durability (the statement's round trip, the
    server's commit processing and, with more connections than cores, the wait for a
    CPU) — at the calibrated connection count nearest to ``connections``, or the first
    one's; None for a profile without it."""
    cal = (wp.provenance or {}).get("calibration") or {}
    by = cal.get("commit_base_ms_by_connections") or {}
    if connections is not None and by:
        best = min((int(k) for k in by), key=lambda k: (abs(k - connections), k))
        v = by.get(str(best))
        if isinstance(v, int | float):
            return float(v)
    v = cal.get("commit_base_ms")
    return float(v) if isinstance(v, int | float) else None


def workload_at(wp, connections: int):
    """The profile's Workload for a run at `connections`: the calibration made at that
    count when the profile has one (provenance.calibration.by_connections), else the
    nearest count's, else the profile's workload. Returns (Workload, source text)."""
    from ..simulator import Workload

    by = ((wp.provenance or {}).get("calibration") or {}).get("by_connections") or {}
    if by:
        counts = sorted(int(k) for k in by)
        best = min(counts, key=lambda k: (abs(k - connections), k))
        wl = Workload(**{**by[str(best)], "connections": connections})
        if best == connections:
            return wl, f"{wp.name} (calibrated at {best} connection(s))"
        return wl, f"{wp.name} (calibrated at {best} connection(s), the nearest)"
    return replace(wp.workload, connections=connections), wp.name


def lab_calibrate(opts: LabOptions, save: str | None = None, force: bool = False,
                  title: str | None = None, progress=None, progress_line=None) -> dict:
    """Calibration runs, the workload profile, and (with save) the profile saved.

    Returns the report dict (keys: the module's SCHEMA, see lab/report.py)."""
    from ..profiles import load_profile
    from ..simulator.workload_profile import save_workload, workload_dir

    opts.validate()
    opts = replace(opts, trx_commits=[0], watch_extensions=True, advise=False)
    if save is not None:
        if save in RESERVED_NAMES:
            raise UsageError(f"--save {save}: {' and '.join(RESERVED_NAMES)} are the load "
                             "generator's workloads (lab run --workload); choose another name")
        from ..profiles.model import NAME_RE

        if not NAME_RE.match(save):
            raise UsageError(f"bad workload name {save!r}: use lowercase letters, digits, "
                             "'.', '_' and '-'")
        if (workload_dir() / f"{save}.json").exists() and not force:
            raise UsageError(f"workload {save!r} already exists at "
                             f"{workload_dir() / (save + '.json')} (use --force to replace it)")
    if opts.backend == "docker":
        docker_server_class()
    if opts.emulate:
        load_profile(opts.emulate)
    plans = calibration_plans(opts)
    base = make_base_dir(opts.datadir_on)
    warnings: list[str] = []
    emulation = None
    try:
        fs = _filesystem(str(base))
        if opts.emulate:
            host = src = None
            if opts.profile_ref or opts.measure:
                host, how = load_or_measure(opts, base, progress_line)
                src = f"{host.name} [{how}]"
            emulation = make_emulation(opts.emulate, base, host, src, seed=opts.seed,
                                       channels=opts.emulate_channels,
                                       progress_line=progress_line)
        emu = emulation.to_dict() if emulation else None
        wp, runs, derivations, server = calibration_profile(
            opts, plans, base, warnings, progress, emulation, save or "calibrated", title, emu)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    path = save_workload(wp, overwrite=force) if save else None
    return {"schema": SCHEMA, "backend": opts.backend, "image": opts.image,
            "server": server, "storage": {"datadir_on": str(base.parent), "filesystem": fs},
            "emulation": emu, "host": {"cpu_cores": os.cpu_count() or 1,
                                       "name": platform.node()},
            "workload_spec": opts.spec(opts.connections[0]).to_dict(),
            "runs": runs, "derivation": derivations,
            "profile": wp.to_dict(), "saved": str(path) if path else None,
            "warnings": warnings}


def calibration_profile(opts, plans, base: Path, warnings: list[str], progress, emulation,
                        name: str, title: str | None, emu: dict | None):
    """Measure the calibration runs and build the workload profile from them; returns
    (profile, run summaries, derivation lines per run, server facts). Shared by
    `lab calibrate` and `lab validate`."""
    measured = []
    for plan in plans:
        workdir = base / f"calibrate-{plan.index}"
        measured.append(run_checked(plan, workdir, warnings,
                                    lambda plan=plan, workdir=workdir: measure_one(
                                        opts, plan, workdir, progress, emulation)))
    runs, derivations = [], []
    for m in measured:
        wl, lines = m.derive()
        runs.append(run_summary(m, wl))
        derivations.append(lines)
    first = measured[0].back
    server = {"product": first.get("product"), "version": first.get("version"),
              "sim_flavor": first.get("sim_flavor")}
    wp = build_profile(name, title, opts, runs, derivations, server, emu)
    return wp, runs, derivations, server


def calibrate_cpu_table(report: dict) -> str:
    from tabulate import tabulate

    from .report import num

    rows = []
    for r in report["runs"]:
        w = r["workload"]
        rows.append([r["connections"], f"{r['commits']:,}", num(r["tps"]),
                     num(w["cpu_us_per_trx"]), num(w["client_cpu_us_per_trx"]),
                     num(w["client_us_per_trx"]), num(w["redo_bytes_per_trx"]),
                     num(w["pages_dirtied_per_trx"]), num(w["growth_bytes_per_trx"]),
                     w["tablespaces"], num(r["commit_latency_ms"]["p50"])])
    return tabulate(rows, headers=["conns", "commits", "TPS", "server CPU µs", "client CPU µs",
                                   "client µs", "redo B", "pages", "growth B", "files",
                                   "COMMIT p50 ms"],
                    disable_numparse=True)


def render_text(report: dict) -> str:
    out: list[str] = []
    s = report["server"]
    out.append(f"innoflush lab calibrate — {report['backend']} backend"
               + (f" ({report['image']})" if report.get("image") else "")
               + f", {s.get('version') or '?'} (model flavor {s.get('sim_flavor') or '?'})")
    emu = report.get("emulation")
    if emu:
        out.append(f"DEVICE EMULATED: {emu['profile']} ({emu['title']}): the calibration "
                   "runs have no sync in the commit path, so the device hardly enters")
    spec = report["workload_spec"]
    out.append(f"runs: innodb_flush_log_at_trx_commit=0 (no sync at commit), "
               f"{spec['duration_s']:g} s each"
               + (f" after {spec['warmup_s']:g} s of warm-up" if spec["warmup_s"] else "")
               + f", workload {spec['kind']}; {report['host']['cpu_cores']} CPU core(s), "
               "shared by the server and the clients")
    out.append("")
    out.append("per transaction, by connections:")
    out.append(calibrate_cpu_table(report))
    out.append("")
    p = report["profile"]
    out.append(f"workload profile {p['name']} ({p['title']}), from the "
               f"{report['runs'][0]['connections']}-connection run:")
    for k, v in p["workload"].items():
        out.append(f"  {k:<24} {v}")
    out.append("")
    out.append("how each value was measured:")
    out += [f"  {line}" for line in report["derivation"][0]]
    for r in report["runs"]:
        for n in r["notes"]:
            out.append(f"note ({r['connections']} connection(s)): {n}")
    for n in p.get("notes", []):
        out.append(f"note: {n}")
    if report.get("saved"):
        out.append(f"saved as {report['saved']} (use it: innoflush simulate --workload "
                   f"{p['name']} ..., innoflush tps/advise --workload {p['name']}, innoflush "
                   f"lab run/validate --workload {p['name']})")
    else:
        out.append("not saved (--save NAME keeps it in the workload store)")
    for w in report.get("warnings", []):
        out.append(f"warning: {w}")
    return "\n".join(out) + "\n"


__all__ = ["SCHEMA", "calibration_plans", "commit_base_ms", "lab_calibrate", "render_text",
           "workload_at"]
