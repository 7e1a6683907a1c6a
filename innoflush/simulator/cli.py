"""`innoflush simulate` and `innoflush tps`."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import sys

import click

from ..bars import bar, sparkline, want_bars
from ..charts.output import chart_options, check_targets, emit
from ..errors import OptionError, option_values
from ..profiles import load_profile
from ..units import format_size, parse_list, parse_size
from ..values import SEED
from .config import ServerConfig, Workload
from .flavors import FLAVORS
from .workload_profile import (
    DEFAULT_WORKLOAD,
    WorkloadProfile,
    default_workload,
    load_workload,
    workload_source,
)

_S = ServerConfig()
_FROM = "(default: the workload's)"


def _bool_opt(text: str) -> bool:
    t = text.strip().lower()
    if t in ("1", "on", "true", "yes"):
        return True
    if t in ("0", "off", "false", "no"):
        return False
    raise ValueError("use ON or OFF")


def workload_profile(ref: str | None) -> WorkloadProfile:
    """The workload profile named (a name or a file), else the built-in default."""
    return load_workload(ref) if ref else default_workload()


def with_overrides(wl: Workload, overrides: dict) -> Workload:
    """The workload with the options given on the command line over it, and what they
    imply for the profile's keys that go with them: a --cpu-us is the server's CPU per
    transaction whatever the commit does (the profile's CPU of a transaction whose commit
    sleeps goes), and the client CPU a profile counts is part of a --client-us, so at
    most that."""
    _check_overrides(overrides)
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
    depends on the concurrency), with the options given on the command line over it."""
    out = []
    for cfg, wl in cases:
        at, _ = wprofile.workload_at(wl.connections)
        out.append((cfg, with_overrides(at, overrides)))
    return out


def source_line(wprofile: WorkloadProfile, overrides: dict) -> str:
    """Which workload the figures come from, and the options given over it."""
    text = workload_source(wprofile)
    if overrides:
        given = ", ".join("--" + _OPTION_OF[k] for k in overrides)
        text += f"; given: {given}"
    return text


# the workload options and the Workload keys they set
_OPTION_OF = {"cpu_us_per_trx": "cpu-us", "client_us_per_trx": "client-us",
              "redo_bytes_per_trx": "redo-bytes", "binlog_bytes_per_trx": "binlog-bytes",
              "pages_dirtied_per_trx": "pages-per-trx", "hot_page_share": "hot-page-share",
              "work_cv": "work-cv", "tablespaces": "tablespaces",
              "growth_bytes_per_trx": "growth-bytes"}


# Bounds on what the command line may set, beyond the model's own checks (>= 0 and the
# like): past them a value is a typo (1e300 µs), not a transaction, and would print a
# 400-digit time or simulate for hours. A profile's own values are not bounded here.
_OVERRIDE_MAX = {"cpu_us_per_trx": 60e6, "client_us_per_trx": 60e6,      # 60 s
                 "redo_bytes_per_trx": 1 << 30, "binlog_bytes_per_trx": 1 << 30,
                 "pages_dirtied_per_trx": 1e6, "tablespaces": 100_000,
                 "growth_bytes_per_trx": 1 << 30}
MAX_CONNECTIONS = 4096


def _check_overrides(overrides: dict) -> None:
    for key, value in overrides.items():
        top = _OVERRIDE_MAX.get(key)
        if top is not None and value > top:
            shown = (format_size(value) if isinstance(value, int) else f"{value:g}",
                     format_size(int(top)) if "bytes" in key else f"{top:g}")
            raise OptionError(f"--{_OPTION_OF[key]} {shown[0]} is out of range: at most "
                             f"{shown[1]}")


def _connections(text: str) -> list[int]:
    counts = parse_list(text, int)
    if not all(1 <= n <= MAX_CONNECTIONS for n in counts):
        raise OptionError(f"--connections {text}: each must be between 1 and "
                         f"{MAX_CONNECTIONS}")
    return counts


def _progress(enabled: bool):
    if not enabled:
        return None

    def show(done: int, total: int) -> None:
        click.echo(f"\rsimulated {done}/{total}", err=True, nl=done == total)
    return show


def _fmt(v, digits=2):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.{digits}f}"
    return str(v)


ROW_KEYS = ("flush_method", "trx_commit", "sync_binlog", "connections", "tps", "tps_ci95",
            "commit_p50_ms", "commit_p99_ms", "commits_per_redo_sync", "redo_syncs_per_s",
            "data_fsyncs_per_s", "data_fsyncs_per_data_write", "device_flush_util",
            "cpu_util", "checkpoint_stall_s")


def _row(cfg: ServerConfig, wl: Workload, runs, summary) -> dict:
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


@click.command("simulate")
@click.option("--profile", "profile_ref", required=True,
              help="Device profile: a built-in or saved name, or a JSON file.")
@click.option("--flavor", default="mysql-8.0", show_default=True,
              type=click.Choice(sorted(FLAVORS), case_sensitive=False), help="Server flavor.")
@click.option("--flush-method", default=_S.innodb_flush_method, show_default=True,
              help="innodb_flush_method values, comma-separated (fsync, O_DSYNC, O_DIRECT, "
                   "O_DIRECT_NO_FSYNC).")
@click.option("--trx-commit", default="1", show_default=True,
              help="innodb_flush_log_at_trx_commit values (0, 1, 2), comma-separated.")
@click.option("--sync-binlog", default="1", show_default=True,
              help="sync_binlog values, comma-separated.")
@click.option("--log-bin/--skip-log-bin", default=True, show_default=True,
              help="Binary log on (two-phase commit) or off.")
@click.option("--connections", default="1,4,16", show_default=True,
              help="Concurrent connections, comma-separated.")
@click.option("--use-fdatasync", default=None, help="innodb_use_fdatasync ON/OFF "
              "(MySQL 8.0.26+; default: the flavor's).")
@click.option("--io-capacity", type=int, default=_S.innodb_io_capacity, show_default=True)
@click.option("--io-capacity-max", type=int, default=_S.innodb_io_capacity_max,
              show_default=True)
@click.option("--redo-capacity", default="100M", show_default=True,
              help="innodb_redo_log_capacity (e.g. 100M, 2G).")
@click.option("--buffer-pool", default="1G", show_default=True,
              help="innodb_buffer_pool_size.")
@click.option("--doublewrite/--skip-doublewrite", default=True, show_default=True)
@click.option("--doublewrite-pages", type=int, default=None,
              help="innodb_doublewrite_pages (default: the flavor's).")
@click.option("--binlog-sync-delay", type=int, default=0, show_default=True,
              help="binlog_group_commit_sync_delay, microseconds.")
@click.option("--flush-log-timeout", type=float, default=1.0, show_default=True,
              help="innodb_flush_log_at_timeout, seconds.")
@click.option("--cpu-cores", type=int, default=_S.cpu_cores, show_default=True,
              help="Server CPU cores.")
@click.option("--io-cores", "io_cores", type=int, default=None,
              help="CPUs that take the data device's completion interrupts (its hardware "
                   "queues; e.g. 1 for a single-queue virtio disk). When every commit sleeps on "
                   "a sync, the statement that commits runs there; a transaction's other "
                   "statements run on any free core. Default: all of them.")
@click.option("--workload", "workload_file", default=None,
              help=f"Workload profile: a built-in name ({DEFAULT_WORKLOAD}, the default: a "
                   "plain insert workload measured on a 2-vCPU VM), a name saved by `lab "
                   "calibrate`, or a JSON file (its keys as below); options given "
                   "override it.")
@click.option("--cpu-us", type=float, default=None,
              help=f"Server CPU per transaction, µs {_FROM}.")
@click.option("--client-us", type=float, default=None,
              help=f"Client + network time per transaction, µs {_FROM}.")
@click.option("--redo-bytes", default=None,
              help=f"Redo bytes per transaction {_FROM}.")
@click.option("--binlog-bytes", default=None,
              help=f"Binlog bytes per transaction {_FROM}.")
@click.option("--pages-per-trx", type=float, default=None,
              help="Pages a transaction adds to the flush list for the first time "
                   f"{_FROM}.")
@click.option("--hot-page-share", type=float, default=None,
              help="Share of those the workload goes on changing: each comes back to the "
                   f"flush list after its write {_FROM}.")
@click.option("--work-cv", type=float, default=None,
              help="Coefficient of variation of a transaction's work (CPU, client and "
                   f"wire time, gamma-distributed) {_FROM}.")
@click.option("--tablespaces", type=int, default=None,
              help=f"Tablespace files written {_FROM}.")
@click.option("--growth-bytes", type=float, default=None,
              help=f"Tablespace growth per transaction, bytes {_FROM}.")
@click.option("--duration", type=float, default=10.0, show_default=True,
              help="Simulated seconds measured (after a warm-up).")
@click.option("--seed", type=SEED, default=1, show_default=True)
@click.option("--replications", type=int, default=1, show_default=True,
              help="Runs per combination with seeds seed, seed+1, ...: gives a 95% CI.")
@click.option("--jobs", type=int, default=None,
              help="Parallel processes on this host (default: cores; not used with "
                   "--scheduler).")
@click.option("--scheduler", metavar="URL", envvar="INNOFLUSH_SCHEDULER", default=None,
              help="Run the combinations on a Dask cluster: its scheduler, tcp://HOST:PORT "
                   "(env INNOFLUSH_SCHEDULER; needs innoflush[dask]). Same results as "
                   "locally.")
@click.option("--json", "as_json", is_flag=True, help="JSON output.")
@click.option("--csv", "as_csv", is_flag=True, help="CSV output, one row per combination.")
@chart_options
@click.option("--bars/--no-bars", default=None,
              help="A TPS bar per row and a TPS sparkline over connections per setting "
                   "(default: only when stdout is a terminal; never with --json/--csv).")
def simulate_command(profile_ref, flavor, flush_method, trx_commit, sync_binlog, log_bin,
                     connections, use_fdatasync, io_capacity, io_capacity_max, redo_capacity,
                     buffer_pool, doublewrite, doublewrite_pages, binlog_sync_delay,
                     flush_log_timeout, cpu_cores, io_cores, workload_file, cpu_us, client_us,
                     redo_bytes, binlog_bytes, pages_per_trx, hot_page_share, work_cv, tablespaces,
                     growth_bytes,
                     duration, seed, replications, jobs, scheduler, as_json, as_csv, html_file,
                     png_dir, bars: bool | None) -> None:
    """Simulate InnoDB on a device profile: every combination of the listed values.

    \b
    Example:
      innoflush simulate --profile samsung-990-pro \\
          --flush-method O_DIRECT,O_DIRECT_NO_FSYNC --trx-commit 1,2 --connections 1,16
    """
    if as_json and as_csv:
        raise OptionError("choose one of --json and --csv")
    if duration <= 0 or duration > 3600:
        raise OptionError("--duration must be in (0, 3600] simulated seconds")
    if not 1 <= replications <= 30:
        raise OptionError("--replications must be between 1 and 30")
    check_targets(html_file, png_dir)
    profile = load_profile(profile_ref)
    base = ServerConfig(
        flavor=flavor.lower(), log_bin=log_bin,
        innodb_use_fdatasync=None if use_fdatasync is None else _parse_bool(use_fdatasync),
        innodb_io_capacity=io_capacity, innodb_io_capacity_max=io_capacity_max,
        innodb_redo_log_capacity=parse_size(redo_capacity),
        innodb_buffer_pool_size=parse_size(buffer_pool), innodb_doublewrite=doublewrite,
        innodb_doublewrite_pages=doublewrite_pages,
        binlog_group_commit_sync_delay=binlog_sync_delay,
        innodb_flush_log_at_timeout=flush_log_timeout, cpu_cores=cpu_cores,
        io_completion_cores=io_cores)
    wprofile = workload_profile(workload_file)
    overrides = {}
    for key, val in (("cpu_us_per_trx", cpu_us), ("client_us_per_trx", client_us),
                     ("redo_bytes_per_trx", redo_bytes and parse_size(redo_bytes)),
                     ("binlog_bytes_per_trx", binlog_bytes and parse_size(binlog_bytes)),
                     ("pages_dirtied_per_trx", pages_per_trx),
                     ("hot_page_share", hot_page_share), ("work_cv", work_cv),
                     ("tablespaces", tablespaces),
                     ("growth_bytes_per_trx", growth_bytes)):
        if val is not None:
            overrides[key] = val
    workload = with_overrides(wprofile.workload, overrides)
    # the model (simpy, numpy) and tabulate are imported where they are used, not at the
    # top, where they would slow down every `simulate --help` and `tps --help`
    from .sweep import combinations, run_sweep

    with option_values():   # the settings are the options': --trx-commit 5, ...
        cases = combinations(
            base, workload, parse_list(flush_method),
            parse_list(trx_commit, int), parse_list(sync_binlog, int) if log_bin else [0],
            _connections(connections))
    cases = calibrated_cases(cases, wprofile, overrides)
    source = source_line(wprofile, overrides)
    show = _progress(sys.stderr.isatty() and not (as_json or as_csv) and len(cases) > 1)
    from ..executor import make_executor

    with make_executor(scheduler, jobs=jobs or max(1, min(len(cases), os.cpu_count() or 1))
                       ) as executor:
        results = run_sweep(cases, profile, replications=replications, seed=seed,
                            duration_s=duration, progress=show, executor=executor)
    rows = [_row(cfg, wl, runs, summary) for (cfg, wl), (runs, summary) in zip(cases, results,
                                                                                strict=True)]
    notes = sorted({n for r in rows for run in r["runs"] for n in run["notes"]})
    data = {"profile": profile.name, "title": profile.title, "flavor": base.flavor,
            "duration_s": duration, "seed": seed, "workload_profile": wprofile.name,
            "workload_source": source, "workload": workload.to_dict(), "rows": rows,
            "notes": notes}
    emit("simulate", data, html_file, png_dir)
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    if as_csv:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(ROW_KEYS))
        w.writeheader()
        for r in rows:
            w.writerow({k: r[k] for k in ROW_KEYS})
        click.echo(buf.getvalue(), nl=False)
        return
    from tabulate import tabulate

    click.echo(f"profile {profile.name}: {profile.title}")
    click.echo(f"flavor {base.flavor}, log_bin {'ON' if log_bin else 'OFF'}, "
               f"{duration:g} simulated s per run, seed {seed}, replications {replications}")
    click.echo(f"workload: {source}")
    table = []
    for r in rows:
        tps = _fmt(r["tps"], 0)
        if r["tps_ci95"] is not None:
            tps += f" ±{r['tps_ci95']:,.0f}"
        table.append([r["flush_method"], r["trx_commit"], _fmt(r["sync_binlog"]),
                      r["connections"], tps, _fmt(r["commit_p50_ms"], 3),
                      _fmt(r["commit_p99_ms"], 3), _fmt(r["commits_per_redo_sync"], 1),
                      _fmt(r["data_fsyncs_per_s"], 1), _fmt(r["data_fsyncs_per_data_write"], 4),
                      f"{100 * r['device_flush_util']:.0f}%", f"{100 * r['cpu_util']:.0f}%",
                      _fmt(r["checkpoint_stall_s"], 2)])
    headers = ["flush_method", "trx_commit", "sync_binlog", "conns", "TPS", "commit p50 ms",
               "p99 ms", "commits/redo sync", "data fsyncs/s", "fsyncs/write", "flush busy",
               "CPU", "stall s"]
    align: tuple[str, ...] = ("left",) + ("right",) * 12
    draw = want_bars(bars)
    if draw:
        top = max((r["tps"] for r in rows), default=0)
        for line, r in zip(table, rows, strict=True):
            line.append(bar(r["tps"], top))
        headers.append("TPS (bar: the column's max)")
        align += ("left",)
    click.echo(tabulate(table, headers=headers, disable_numparse=True, colalign=align))
    if draw:
        for spark in tps_sparklines(rows):
            click.echo(spark)
    for n in notes:
        click.echo(f"note: {n}")


def tps_sparklines(rows: list[dict]) -> list[str]:
    """One line per setting (flush method × trx_commit × sync_binlog) simulated at two or
    more connection counts: TPS over connections as a sparkline, first and last value."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["flush_method"], r["trx_commit"], r["sync_binlog"]), []).append(r)
    out = []
    for (method, trx, sb), rs in groups.items():
        rs = sorted(rs, key=lambda r: r["connections"])
        if len(rs) < 2:
            continue
        setting = f"{method} trx_commit={trx}" + ("" if sb is None else f" sync_binlog={sb}")
        out.append(f"TPS over connections {rs[0]['connections']}→{rs[-1]['connections']}: "
                   f"{sparkline([r['tps'] for r in rs])}  {setting} "
                   f"({rs[0]['tps']:,.0f} → {rs[-1]['tps']:,.0f})")
    return out


def _parse_bool(text: str) -> bool:
    try:
        return _bool_opt(text)
    except ValueError:
        raise OptionError(f"--use-fdatasync {text!r}: not ON or OFF") from None


@click.command("tps")
@click.option("--profile", "profile_ref", required=True,
              help="Device profile: a built-in or saved name, or a JSON file.")
@click.option("--flavor", default="mysql-8.0", show_default=True,
              type=click.Choice(sorted(FLAVORS), case_sensitive=False))
@click.option("--target-tps", type=float, default=None,
              help="Commits per second wanted: how many connections it takes.")
@click.option("--workload", "workload_ref", default=None,
              help=f"Workload profile: a built-in name ({DEFAULT_WORKLOAD}, the default), a "
                   "name saved by `lab calibrate`, or a JSON file: what a transaction "
                   "costs besides its commit's syncs.")
@click.option("--cpu-us", type=float, default=None,
              help=f"Server CPU per transaction, µs {_FROM}.")
@click.option("--client-us", type=float, default=None,
              help=f"Client + network time per transaction, µs {_FROM}; --cpu-us 0 "
                   "--client-us 0: the device's ceiling alone.")
@click.option("--redo-bytes", default=None, help=f"Redo bytes written per commit {_FROM}.")
@click.option("--cpu-cores", type=int, default=_S.cpu_cores, show_default=True,
              help="Server CPU cores.")
@click.option("--no-check", is_flag=True, help="Skip the cross-check by simulation.")
@click.option("--json", "as_json", is_flag=True, help="JSON output.")
@chart_options
def tps_command(profile_ref, flavor, target_tps, workload_ref, cpu_us, client_us, redo_bytes,
                cpu_cores, no_check, as_json, html_file, png_dir) -> None:
    """Commits per second one connection gets from a device, per durability setting:
    bound by the device where a sync is in the commit path, by the CPU where none is."""
    if target_tps is not None and target_tps <= 0:
        raise OptionError("--target-tps must be positive")
    for name, val in (("--cpu-us", cpu_us), ("--client-us", client_us)):
        if val is not None and val < 0:
            raise OptionError(f"{name} must be >= 0")
    if cpu_cores < 1:
        raise OptionError("--cpu-cores must be >= 1")
    check_targets(html_file, png_dir)
    profile = load_profile(profile_ref)
    wprofile = workload_profile(workload_ref)
    overrides = {k: v for k, v in (("cpu_us_per_trx", cpu_us), ("client_us_per_trx", client_us),
                                   ("redo_bytes_per_trx",
                                    redo_bytes and parse_size(redo_bytes)))
                 if v is not None}

    def at(n: int) -> Workload:
        return with_overrides(wprofile.workload_at(n)[0], overrides)

    source = source_line(wprofile, overrides)
    from .tps import TOLERANCE, tps_table

    out = tps_table(profile, flavor.lower(), target_tps, at(1), check=not no_check,
                    cpu_cores=cpu_cores, workload_at=at)
    out = {**out, "workload_profile": wprofile.name, "workload_source": source}
    emit("tps", out, html_file, png_dir)
    if as_json:
        click.echo(json.dumps(out, indent=2))
        return
    from tabulate import tabulate

    click.echo(f"profile {profile.name}: {profile.title}  (flavor {out['flavor']})")
    click.echo(f"workload: {source}")
    headers = ["durability setting", "durable", "bound", "trx ms", "TPS / connection"]
    if target_tps:
        headers.append(f"conns for {target_tps:g} TPS (at least)")
    if not no_check:
        headers += ["simulated, 1 conn", "vs closed form"]
        if target_tps:
            headers += ["simulated at those conns", "conns needed, simulated"]
    table = []
    why: list[str] = []
    for r in out["settings"]:
        row = [r["title"], "yes" if r["durable"] else "no", r["bound"].upper()
               if r["bound"] == "cpu" else r["bound"], _fmt(r["commit_latency_ms"], 3),
               _fmt(r["tps_per_connection"], 1)]
        if target_tps:
            row.append(_fmt(r["connections_for_target"]) if r["connections_for_target"]
                       else "-")
        if not no_check:
            row.append(_fmt(r["simulated_tps_1_connection"], 1))
            pct = r["simulated_vs_closed_form_pct"]
            mark = "" if r["agrees"] else f" [{len(why) + 1}]"
            row.append(("-" if pct is None else f"{pct:+.0f}%") + mark)
            if not r["agrees"]:
                why.append(r["why"])
            if target_tps:
                row.append(_fmt(r.get("simulated_tps_at_target_connections",
                                      r["simulated_tps_1_connection"]), 1))
                row.append(_fmt(r.get("simulated_connections_for_target"), 0)
                           if r.get("simulated_connections_for_target") else "> 1024"
                           if r["connections_for_target"] else "-")
        table.append(row)
    click.echo(tabulate(table, headers=headers, disable_numparse=True))
    click.echo("durable: every commit's redo is synced when COMMIT returns (trx_commit=1). "
               "bound: what the rate per connection waits for most, the device's writes and "
               "syncs or the CPU (the workload's server CPU, client and wire time); with no "
               "sync at commit it is the CPU's.")
    for r in out["settings"]:
        if target_tps and r["connections_for_target"] is None and r["cpu_ceiling_tps"]:
            click.echo(f"note: {r['setting']}: {target_tps:g} TPS is beyond what "
                       f"{cpu_cores} core(s) give at this CPU per transaction "
                       f"({r['cpu_ceiling_tps']:,.0f}/s)")
    for i, w in enumerate(why, 1):
        click.echo(f"[{i}] the simulation differs from the closed form by more than "
                   f"{TOLERANCE:.0%}: {w}")
    for n in out["notes"]:
        click.echo(f"note: {n}")
