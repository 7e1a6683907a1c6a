"""What `innoflush simulate` and `innoflush tps` ask of the model, as objects, and the
documents they print with --json: a Python caller gets exactly what the CLI prints.

    from innoflush.simulator.request import SimulateRequest, simulate
    doc = simulate(SimulateRequest(profile="samsung-990-pro", trx_commits=[1, 2]))

The model (simpy, numpy) is imported when a request runs, not when this module is: the
commands' --help stays clear of it."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import OptionError, option_values
from ..profiles import DeviceProfile, load_profile
from ..units import format_size
from .config import ServerConfig, Workload
from .workload_profile import WorkloadProfile, default_workload, load_workload, workload_source

MAX_CONNECTIONS = 4096

# the workload keys a caller may set over the profile's, and the options that set them
OPTION_OF = {"cpu_us_per_trx": "cpu-us", "client_us_per_trx": "client-us",
             "redo_bytes_per_trx": "redo-bytes", "binlog_bytes_per_trx": "binlog-bytes",
             "pages_dirtied_per_trx": "pages-per-trx", "hot_page_share": "hot-page-share",
             "work_cv": "work-cv", "tablespaces": "tablespaces",
             "growth_bytes_per_trx": "growth-bytes"}

# Bounds on what a caller may set, beyond the model's own checks (>= 0 and the like): past
# them a value is a typo (1e300 µs), not a transaction, and would print a 400-digit time
# or simulate for hours. A profile's own values are not bounded here.
_OVERRIDE_MAX = {"cpu_us_per_trx": 60e6, "client_us_per_trx": 60e6,      # 60 s
                 "redo_bytes_per_trx": 1 << 30, "binlog_bytes_per_trx": 1 << 30,
                 "pages_dirtied_per_trx": 1e6, "tablespaces": 100_000,
                 "growth_bytes_per_trx": 1 << 30}

# the keys of a row of `simulate --json` (and of --csv, in this order)
ROW_KEYS = ("flush_method", "trx_commit", "sync_binlog", "connections", "tps", "tps_ci95",
            "commit_p50_ms", "commit_p99_ms", "commits_per_redo_sync", "redo_syncs_per_s",
            "data_fsyncs_per_s", "data_fsyncs_per_data_write", "device_flush_util",
            "cpu_util", "checkpoint_stall_s")


def workload_profile(ref: str | None) -> WorkloadProfile:
    """The workload profile named (a name or a file), else the built-in default."""
    return load_workload(ref) if ref else default_workload()


def check_overrides(overrides: dict) -> None:
    unknown = set(overrides) - set(OPTION_OF)
    if unknown:
        raise OptionError(f"no such workload key to set: {', '.join(sorted(unknown))}")
    for key, value in overrides.items():
        top = _OVERRIDE_MAX.get(key)
        if top is not None and value > top:
            shown = (format_size(value) if isinstance(value, int) else f"{value:g}",
                     format_size(int(top)) if "bytes" in key else f"{top:g}")
            raise OptionError(f"--{OPTION_OF[key]} {shown[0]} is out of range: at most "
                              f"{shown[1]}")


def check_connections(counts: list[int], option: str = "--connections") -> list[int]:
    if not all(1 <= n <= MAX_CONNECTIONS for n in counts):
        raise OptionError(f"{option} {','.join(map(str, counts))}: each must be between 1 "
                          f"and {MAX_CONNECTIONS}")
    return counts


def with_overrides(wl: Workload, overrides: dict) -> Workload:
    """The workload with the caller's values over it, and what they imply for the
    profile's keys that go with them: a --cpu-us is the server's CPU per transaction
    whatever the commit does (the profile's CPU of a transaction whose commit sleeps
    goes), and the client CPU a profile counts is part of a --client-us, so at most that."""
    check_overrides(overrides)
    fields = {**wl.to_dict(), **overrides}
    if "cpu_us_per_trx" in overrides:
        fields["cpu_us_per_trx_sleeping"] = 0.0
    if "client_us_per_trx" in overrides:
        cap = overrides["client_us_per_trx"]
        for key in ("client_cpu_us_per_trx", "client_cpu_us_per_trx_sleeping"):
            fields[key] = min(fields[key], cap)
    out = Workload(**fields)
    # the profile was checked when it was read: what fails now is an option's value
    with option_values() if overrides else contextlib.nullcontext():
        out.validate()
    return out


def calibrated_cases(cases: list[tuple[ServerConfig, Workload]], wprofile: WorkloadProfile,
                     overrides: dict) -> list[tuple[ServerConfig, Workload]]:
    """Each case's workload from the profile's calibration at the case's connection count
    (``WorkloadProfile.workload_at``, as advise and the lab pick it: CPU per transaction
    depends on the concurrency), with the caller's values over it."""
    out = []
    for cfg, wl in cases:
        at, _ = wprofile.workload_at(wl.connections)
        out.append((cfg, with_overrides(at, overrides)))
    return out


def source_line(wprofile: WorkloadProfile, overrides: dict) -> str:
    """Which workload the figures come from, and the options given over it."""
    text = workload_source(wprofile)
    if overrides:
        given = ", ".join("--" + OPTION_OF[k] for k in overrides)
        text += f"; given: {given}"
    return text


def sweep_row(cfg: ServerConfig, wl: Workload, runs, summary) -> dict:
    """One combination of a sweep as `simulate --json` prints it: ROW_KEYS, then the
    replications and each run's own figures."""
    n = len(runs)

    def avg(get):
        vals = [get(x) for x in runs]
        vals = [v for v in vals if v is not None]
        return sum(vals) / len(vals) if vals else None

    return {
        "flush_method": cfg.innodb_flush_method,
        "trx_commit": cfg.innodb_flush_log_at_trx_commit,
        "sync_binlog": cfg.sync_binlog if cfg.log_bin else None,
        "connections": wl.connections,
        "tps": round(summary["tps"]["mean"], 2),
        "tps_ci95": (round(summary["tps"]["ci95"], 2) if summary["tps"]["ci95"] is not None
                     else None),
        "commit_p50_ms": round(summary["commit_latency_p50_ms"]["mean"], 4),
        "commit_p99_ms": round(summary["commit_latency_p99_ms"]["mean"], 4),
        "commits_per_redo_sync": avg(lambda x: x.group_commit["commits_per_redo_sync"]),
        "redo_syncs_per_s": avg(lambda x: x.syncs_per_s["redo_syncs"]),
        "data_fsyncs_per_s": round(summary["data_fsyncs_per_s"]["mean"], 2),
        "data_fsyncs_per_data_write": avg(lambda x: x.data_fsyncs_per_data_write),
        "device_flush_util": avg(lambda x: x.device_flush_util),
        "cpu_util": avg(lambda x: x.cpu_util),
        "checkpoint_stall_s": avg(lambda x: x.checkpoint_stall_s),
        "replications": n,
        "runs": [x.to_dict() for x in runs],
    }


def _device(profile: str | DeviceProfile) -> DeviceProfile:
    return profile if isinstance(profile, DeviceProfile) else load_profile(profile)


@dataclass
class SimulateRequest:
    """A sweep: every combination of the listed settings on one device profile.

    profile: a built-in or saved name, a JSON file, or a DeviceProfile. server: the
    settings the sweep does not list (flavor, binary log, capacities, cores...).
    workload: a workload profile (a name or a file; None: the built-in default);
    overrides: Workload keys set over it (OPTION_OF's keys)."""

    profile: str | DeviceProfile
    server: ServerConfig = field(default_factory=ServerConfig)
    flush_methods: list[str] = field(
        default_factory=lambda: [ServerConfig.innodb_flush_method])
    trx_commits: list[int] = field(default_factory=lambda: [1])
    sync_binlogs: list[int] = field(default_factory=lambda: [1])
    connections: list[int] = field(default_factory=lambda: [1, 4, 16])
    workload: str | None = None
    overrides: dict = field(default_factory=dict)
    duration_s: float = 10.0
    seed: int = 1
    replications: int = 1

    def check(self) -> None:
        """Refuse what cannot run, before anything does (the CLI's usage errors)."""
        if not 0 < self.duration_s <= 3600:
            raise OptionError("--duration must be in (0, 3600] simulated seconds")
        if not 1 <= self.replications <= 30:
            raise OptionError("--replications must be between 1 and 30")


def simulate(request: SimulateRequest, scheduler: str | None = None, jobs: int | None = None,
             progress: Callable[[int, int], None] | None = None) -> dict:
    """The sweep's document (`simulate --json`): the profile, the workload and one row
    per combination (ROW_KEYS, the replications, each run), the notes of every run.
    scheduler: a Dask scheduler's tcp://HOST:PORT (innoflush.executor); else a local pool
    of `jobs` processes (default: as many as there are combinations, up to the cores;
    one combination runs in this process)."""
    request.check()
    device = _device(request.profile)
    wprofile = workload_profile(request.workload)
    workload = with_overrides(wprofile.workload, request.overrides)
    from .sweep import combinations, run_sweep

    sync_binlogs = request.sync_binlogs if request.server.log_bin else [0]
    with option_values():   # the settings are the options': --trx-commit 5, ...
        cases = combinations(request.server, workload, request.flush_methods,
                             request.trx_commits, sync_binlogs,
                             check_connections(request.connections))
    cases = calibrated_cases(cases, wprofile, request.overrides)
    from ..executor import make_executor

    with make_executor(scheduler, jobs=jobs or max(1, min(len(cases), os.cpu_count() or 1))
                       ) as executor:
        results = run_sweep(cases, device, replications=request.replications,
                            seed=request.seed, duration_s=request.duration_s,
                            progress=progress, executor=executor)
    rows = [sweep_row(cfg, wl, runs, summary)
            for (cfg, wl), (runs, summary) in zip(cases, results, strict=True)]
    notes = sorted({n for r in rows for run in r["runs"] for n in run["notes"]})
    return {"profile": device.name, "title": device.title, "flavor": request.server.flavor,
            "duration_s": request.duration_s, "seed": request.seed,
            "workload_profile": wprofile.name,
            "workload_source": source_line(wprofile, request.overrides),
            "workload": workload.to_dict(), "rows": rows, "notes": notes}


@dataclass
class TpsRequest:
    """Commits per second one connection gets from a device, per durability setting."""

    profile: str | DeviceProfile
    flavor: str = "mysql-8.0"
    target_tps: float | None = None
    workload: str | None = None
    overrides: dict = field(default_factory=dict)
    cpu_cores: int = ServerConfig().cpu_cores
    check: bool = True

    def validate(self) -> None:
        if self.target_tps is not None and self.target_tps <= 0:
            raise OptionError("--target-tps must be positive")
        for key in ("cpu_us_per_trx", "client_us_per_trx"):
            value = self.overrides.get(key)
            if value is not None and value < 0:
                raise OptionError(f"--{OPTION_OF[key]} must be >= 0")
        if self.cpu_cores < 1:
            raise OptionError("--cpu-cores must be >= 1")


def tps(request: TpsRequest) -> dict:
    """The document of `tps --json`: a row per durability setting, closed form and (with
    check) the simulation's cross-check, and the workload it was priced on."""
    request.validate()
    device = _device(request.profile)
    wprofile = workload_profile(request.workload)

    def at(n: int) -> Workload:
        return with_overrides(wprofile.workload_at(n)[0], request.overrides)

    from .tps import tps_table

    out = tps_table(device, request.flavor.lower(), request.target_tps, at(1),
                    check=request.check, cpu_cores=request.cpu_cores, workload_at=at)
    return {**out, "workload_profile": wprofile.name,
            "workload_source": source_line(wprofile, request.overrides)}
