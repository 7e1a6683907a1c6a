"""`innoflush simulate` and `innoflush tps`."""

from __future__ import annotations

import csv
import io
import json
import sys

import click
from tabulate import tabulate

from ..errors import UsageError
from ..profiles import load_profile
from ..units import parse_list, parse_size
from .config import ServerConfig, Workload
from .flavors import FLAVORS
from .sweep import combinations, run_sweep
from .tps import COMMIT_ONLY, tps_table
from .workload_profile import WorkloadProfile, load_workload

_W = Workload()
_S = ServerConfig()


def _bool_opt(text: str) -> bool:
    t = text.strip().lower()
    if t in ("1", "on", "true", "yes"):
        return True
    if t in ("0", "off", "false", "no"):
        return False
    raise ValueError("use ON or OFF")


def _load_workload(ref: str | None) -> dict:
    """Workload fields from a workload profile (name or file), without connections."""
    if not ref:
        return {}
    wl = load_workload(ref).workload.to_dict()
    wl.pop("connections", None)
    return wl


def calibrated_cases(cases: list[tuple[ServerConfig, Workload]], wprofile: WorkloadProfile,
                     overrides: dict) -> list[tuple[ServerConfig, Workload]]:
    """Each case's workload from the profile's calibration at the case's connection count
    (``WorkloadProfile.workload_at``, as advise and the lab pick it: CPU per transaction
    depends on the concurrency), with the options given on the command line over it."""
    out = []
    for cfg, wl in cases:
        at, _ = wprofile.workload_at(wl.connections)
        wl = Workload(**{**at.to_dict(), **overrides})
        wl.validate()
        out.append((cfg, wl))
    return out


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
                   "queues; e.g. 1 for a single-queue virtio disk). Threads that sleep on a "
                   "sync every commit run there. Default: all of them.")
@click.option("--workload", "workload_file", default=None,
              help="Workload profile: a name saved by `lab calibrate`, or a JSON file "
                   "(its keys as below); options given override it.")
@click.option("--cpu-us", type=float, default=None,
              help=f"Server CPU per transaction, µs [{_W.cpu_us_per_trx}].")
@click.option("--client-us", type=float, default=None,
              help=f"Client + network time per transaction, µs [{_W.client_us_per_trx}].")
@click.option("--redo-bytes", default=None,
              help=f"Redo bytes per transaction [{_W.redo_bytes_per_trx}].")
@click.option("--binlog-bytes", default=None,
              help=f"Binlog bytes per transaction [{_W.binlog_bytes_per_trx}].")
@click.option("--pages-per-trx", type=float, default=None,
              help="Pages a transaction adds to the flush list for the first time "
                   f"[{_W.pages_dirtied_per_trx}].")
@click.option("--hot-page-share", type=float, default=None,
              help="Share of those the workload goes on changing: each comes back to the "
                   f"flush list after its write [{_W.hot_page_share}].")
@click.option("--work-cv", type=float, default=None,
              help="Coefficient of variation of a transaction's work (CPU, client and "
                   f"wire time, gamma-distributed) [{_W.work_cv}].")
@click.option("--tablespaces", type=int, default=None,
              help=f"Tablespace files written [{_W.tablespaces}].")
@click.option("--growth-bytes", type=float, default=None,
              help=f"Tablespace growth per transaction, bytes [{_W.growth_bytes_per_trx}].")
@click.option("--duration", type=float, default=10.0, show_default=True,
              help="Simulated seconds measured (after a warm-up).")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--replications", type=int, default=1, show_default=True,
              help="Runs per combination with seeds seed, seed+1, ...: gives a 95% CI.")
@click.option("--jobs", type=int, default=None, help="Parallel processes (default: cores).")
@click.option("--json", "as_json", is_flag=True, help="JSON output.")
@click.option("--csv", "as_csv", is_flag=True, help="CSV output, one row per combination.")
def simulate_command(profile_ref, flavor, flush_method, trx_commit, sync_binlog, log_bin,
                     connections, use_fdatasync, io_capacity, io_capacity_max, redo_capacity,
                     buffer_pool, doublewrite, doublewrite_pages, binlog_sync_delay,
                     flush_log_timeout, cpu_cores, io_cores, workload_file, cpu_us, client_us,
                     redo_bytes, binlog_bytes, pages_per_trx, hot_page_share, work_cv, tablespaces,
                     growth_bytes,
                     duration, seed, replications, jobs, as_json, as_csv) -> None:
    """Simulate InnoDB on a device profile: every combination of the listed values.

    \b
    Example:
      innoflush simulate --profile samsung-990-pro \\
          --flush-method O_DIRECT,O_DIRECT_NO_FSYNC --trx-commit 1,2 --connections 1,16
    """
    if as_json and as_csv:
        raise UsageError("choose one of --json and --csv")
    if duration <= 0 or duration > 3600:
        raise UsageError("--duration must be in (0, 3600] simulated seconds")
    if not 1 <= replications <= 30:
        raise UsageError("--replications must be between 1 and 30")
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
    wprofile = load_workload(workload_file) if workload_file else None
    wl_fields = {}
    if wprofile is not None:
        wl_fields = wprofile.workload.to_dict()
        wl_fields.pop("connections", None)
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
    workload = Workload(**{**wl_fields, **overrides})
    cases = combinations(
        base, workload, parse_list(flush_method),
        parse_list(trx_commit, int), parse_list(sync_binlog, int) if log_bin else [0],
        parse_list(connections, int))
    if wprofile is not None:
        cases = calibrated_cases(cases, wprofile, overrides)
    show = _progress(sys.stderr.isatty() and not (as_json or as_csv) and len(cases) > 1)
    results = run_sweep(cases, profile, replications=replications, seed=seed,
                        duration_s=duration, jobs=jobs, progress=show)
    rows = [_row(cfg, wl, runs, summary) for (cfg, wl), (runs, summary) in zip(cases, results,
                                                                                strict=True)]
    notes = sorted({n for r in rows for run in r["runs"] for n in run["notes"]})
    if as_json:
        click.echo(json.dumps({"profile": profile.name, "title": profile.title,
                               "flavor": base.flavor, "duration_s": duration, "seed": seed,
                               "workload": workload.to_dict(), "rows": rows,
                               "notes": notes}, indent=2))
        return
    if as_csv:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(ROW_KEYS))
        w.writeheader()
        for r in rows:
            w.writerow({k: r[k] for k in ROW_KEYS})
        click.echo(buf.getvalue(), nl=False)
        return
    click.echo(f"profile {profile.name}: {profile.title}")
    click.echo(f"flavor {base.flavor}, log_bin {'ON' if log_bin else 'OFF'}, "
               f"{duration:g} simulated s per run, seed {seed}, replications {replications}")
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
    click.echo(tabulate(table, headers=[
        "flush_method", "trx_commit", "sync_binlog", "conns", "TPS", "commit p50 ms",
        "p99 ms", "commits/redo sync", "data fsyncs/s", "fsyncs/write", "flush busy",
        "CPU", "stall s"], disable_numparse=True, colalign=("left",) + ("right",) * 12))
    for n in notes:
        click.echo(f"note: {n}")


def _parse_bool(text: str) -> bool:
    try:
        return _bool_opt(text)
    except ValueError:
        raise UsageError(f"not ON or OFF: {text!r}") from None


@click.command("tps")
@click.option("--profile", "profile_ref", required=True,
              help="Device profile: a built-in or saved name, or a JSON file.")
@click.option("--flavor", default="mysql-8.0", show_default=True,
              type=click.Choice(sorted(FLAVORS), case_sensitive=False))
@click.option("--target-tps", type=float, default=None,
              help="Durable commits per second wanted: how many connections it takes.")
@click.option("--redo-bytes", default=str(COMMIT_ONLY.redo_bytes_per_trx), show_default=True,
              help="Redo bytes written per commit.")
@click.option("--cpu-us", type=float, default=0.0, show_default=True,
              help="Server CPU per transaction, µs (0: the device's ceiling alone).")
@click.option("--workload", "workload_ref", default=None,
              help="Workload profile (name or file): its CPU, client time and redo/binlog "
                   "bytes per transaction instead of the device-only defaults.")
@click.option("--no-check", is_flag=True, help="Skip the cross-check by simulation.")
@click.option("--json", "as_json", is_flag=True, help="JSON output.")
def tps_command(profile_ref, flavor, target_tps, redo_bytes, cpu_us, workload_ref, no_check,
                as_json) -> None:
    """Max durable commits per second per connection for a device, per durability setting."""
    if target_tps is not None and target_tps <= 0:
        raise UsageError("--target-tps must be positive")
    if cpu_us < 0:
        raise UsageError("--cpu-us must be >= 0")
    profile = load_profile(profile_ref)
    fields = {**COMMIT_ONLY.to_dict(), "redo_bytes_per_trx": parse_size(redo_bytes),
              "cpu_us_per_trx": cpu_us}
    if workload_ref:
        w = _load_workload(workload_ref)
        for k in ("cpu_us_per_trx", "client_us_per_trx", "redo_bytes_per_trx",
                  "binlog_bytes_per_trx"):
            fields[k] = w[k]
    wl = Workload(**fields)
    out = tps_table(profile, flavor.lower(), target_tps, wl, check=not no_check)
    if as_json:
        click.echo(json.dumps(out, indent=2))
        return
    click.echo(f"profile {profile.name}: {profile.title}  (flavor {out['flavor']})")
    headers = ["durability setting", "commit ms", "TPS / connection"]
    if target_tps:
        headers.append(f"conns for {target_tps:g} TPS (at least)")
    if not no_check:
        headers.append("simulated, 1 conn")
        if target_tps:
            headers += ["simulated at those conns", "conns needed, simulated"]
    table = []
    for r in out["settings"]:
        row = [r["title"], _fmt(r["commit_latency_ms"], 3), _fmt(r["tps_per_connection"], 1)]
        if target_tps:
            row.append(r["connections_for_target"])
        if not no_check:
            row.append(_fmt(r["simulated_tps_1_connection"], 1))
            if target_tps:
                row.append(_fmt(r.get("simulated_tps_at_target_connections",
                                      r["simulated_tps_1_connection"]), 1))
                row.append(_fmt(r.get("simulated_connections_for_target"), 0)
                           if r.get("simulated_connections_for_target") else "> 1024")
        table.append(row)
    click.echo(tabulate(table, headers=headers, disable_numparse=True))
    for n in out["notes"]:
        click.echo(f"note: {n}")
