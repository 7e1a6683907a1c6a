"""`innoflush simulate` and `innoflush tps`."""

from __future__ import annotations

import csv
import io
import json
import sys

import click

from ..bars import want_bars
from ..errors import OptionError, option_values
from ..output.charts.output import check_targets, emit
from ..simulator.config import ServerConfig
from ..simulator.request import (
    ROW_KEYS,
    SimulateRequest,
    TpsRequest,
    simulate,
    tps,
)
from ..simulator.workload_profile import DEFAULT_WORKLOAD
from ..units import parse_list, parse_size
from .option_types import (
    FLAVOR,
    FLAVOR_HELP,
    FLUSH_METHODS_HELP,
    SEED,
    chart_options,
    text_width,
    wide_option,
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


def _progress(enabled: bool):
    if not enabled:
        return None

    def show(done: int, total: int) -> None:
        click.echo(f"\rsimulated {done}/{total}", err=True, nl=done == total)
    return show


@click.command("simulate")
@click.option("--profile", "profile_ref", required=True,
              help="Device profile: a built-in or saved name, or a JSON file.")
@click.option("--flavor", default="mysql-8.0", show_default=True,
              type=FLAVOR, help=FLAVOR_HELP)
@click.option("--flush-method", default=_S.innodb_flush_method, show_default=True,
              help=FLUSH_METHODS_HELP)
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
@wide_option
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
                     png_dir, wide: bool, bars: bool | None) -> None:
    """Simulate InnoDB on a device profile: every combination of the listed values.

    \b
    Example:
      innoflush simulate --profile samsung-990-pro \\
          --flush-method O_DIRECT,O_DIRECT_NO_FSYNC --trx-commit 1,2 --connections 1,16
    """
    if as_json and as_csv:
        raise OptionError("choose one of --json and --csv")
    given = {"cpu_us_per_trx": cpu_us, "client_us_per_trx": client_us,
             "redo_bytes_per_trx": redo_bytes and parse_size(redo_bytes),
             "binlog_bytes_per_trx": binlog_bytes and parse_size(binlog_bytes),
             "pages_dirtied_per_trx": pages_per_trx, "hot_page_share": hot_page_share,
             "work_cv": work_cv, "tablespaces": tablespaces,
             "growth_bytes_per_trx": growth_bytes}
    request = SimulateRequest(
        profile=profile_ref,
        server=ServerConfig(
            flavor=flavor.lower(), log_bin=log_bin,
            innodb_use_fdatasync=None if use_fdatasync is None else _parse_bool(use_fdatasync),
            innodb_io_capacity=io_capacity, innodb_io_capacity_max=io_capacity_max,
            innodb_redo_log_capacity=parse_size(redo_capacity),
            innodb_buffer_pool_size=parse_size(buffer_pool), innodb_doublewrite=doublewrite,
            innodb_doublewrite_pages=doublewrite_pages,
            binlog_group_commit_sync_delay=binlog_sync_delay,
            innodb_flush_log_at_timeout=flush_log_timeout, cpu_cores=cpu_cores,
            io_completion_cores=io_cores),
        workload=workload_file,
        overrides={k: v for k, v in given.items() if v is not None},
        duration_s=duration, seed=seed, replications=replications)
    request.check()
    check_targets(html_file, png_dir)
    with option_values():   # the settings are the options': --trx-commit 5, ...
        request.flush_methods = parse_list(flush_method)
        request.trx_commits = parse_list(trx_commit, int)
        request.sync_binlogs = parse_list(sync_binlog, int) if log_bin else [0]
        request.connections = parse_list(connections, int)
    combos = (len(request.flush_methods) * len(request.trx_commits)
              * len(request.sync_binlogs if log_bin else [0]) * len(request.connections))
    show = _progress(sys.stderr.isatty() and not (as_json or as_csv) and combos > 1)
    data = simulate(request, scheduler=scheduler, jobs=jobs, progress=show)
    rows = data["rows"]
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
    # imported here: its numpy and simpy are not for --help
    from ..output.sim_text import render_simulate

    click.echo(render_simulate(data, log_bin, duration, seed, replications,
                               want_bars(bars), text_width(wide)), nl=False)


def _parse_bool(text: str) -> bool:
    try:
        return _bool_opt(text)
    except ValueError:
        raise OptionError(f"--use-fdatasync {text!r}: not ON or OFF") from None


@click.command("tps")
@click.option("--profile", "profile_ref", required=True,
              help="Device profile: a built-in or saved name, or a JSON file.")
@click.option("--flavor", default="mysql-8.0", show_default=True,
              type=FLAVOR, help=FLAVOR_HELP)
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
@wide_option
def tps_command(profile_ref, flavor, target_tps, workload_ref, cpu_us, client_us, redo_bytes,
                cpu_cores, no_check, as_json, html_file, png_dir, wide: bool) -> None:
    """Commits per second one connection gets from a device, per durability setting:
    bound by the device where a sync is in the commit path, by the CPU where none is."""
    request = TpsRequest(
        profile=profile_ref, flavor=flavor, target_tps=target_tps, workload=workload_ref,
        overrides={k: v for k, v in (("cpu_us_per_trx", cpu_us),
                                     ("client_us_per_trx", client_us),
                                     ("redo_bytes_per_trx",
                                      redo_bytes and parse_size(redo_bytes)))
                   if v is not None},
        cpu_cores=cpu_cores, check=not no_check)
    request.validate()
    check_targets(html_file, png_dir)
    out = tps(request)
    emit("tps", out, html_file, png_dir)
    if as_json:
        click.echo(json.dumps(out, indent=2))
        return
    from ..output.sim_text import render_tps

    click.echo(render_tps(out, target_tps, not no_check, cpu_cores, text_width(wide)),
               nl=False)
