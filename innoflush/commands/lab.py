"""`innoflush lab`: the group, `lab run` (real servers, a workload, measured beside predicted)
and `lab calibrate`; `lab validate` is in lab_validate.py."""

from __future__ import annotations

import json
import sys

import click

from ..errors import InnoflushError, OptionError
from ..lab.experiments.calibrate import lab_calibrate
from ..lab.experiments.options import LabOptions
from ..lab.experiments.run import lab_run
from ..lab.reports import report as run_report
from ..lab.reports.calibrate_report import render_text as render_calibrate_text
from ..lab.server.server_args import SERVER_OPTION_HELP
from ..outfile import OutputFailed, attempt
from ..output.charts.output import check_targets, emit
from ..units import parse_list, parse_size
from .lab_options import (
    command_options,
    interruptible,
    load_options,
    one_command,
    progress_printer,
    resolve_workload,
    rows_range,
    server_choice_options,
    server_extra,
    sync_binlog_values,
)
from .lab_validate import validate_command
from .option_types import FLUSH_METHODS_HELP, SEED, chart_options, text_width, wide_option

RUN_HELP = """Start a fresh server for every combination of the listed settings (local
binaries or Docker), drive a workload from client processes, take the SHOW GLOBAL STATUS
deltas and the server's CPU time, stop it; then simulate the same configuration (as
read back from the server) on the device profile of that storage, with a workload built
from the measured per-transaction costs, and print measured beside predicted: TPS,
commit latency p50/p99, Innodb_data_fsyncs/s, Innodb_data_writes/s and data fsyncs per
data write, with the error of each prediction (predicted / measured - 1). advise runs
against each server during its workload; its findings are in the report.

\b
Without --profile the storage under --datadir-on is measured first (as --measure).
The servers' datadirs are created under --datadir-on (default: the current
directory) and removed afterwards; no server is left running, also on errors,
Ctrl-C, SIGTERM and SIGHUP.

\b
Exit codes:
  0    done
  2    usage error (bad option, unknown profile, --datadir-on not writable, port in use)
  1    failure (server did not start: its error log's [ERROR] lines follow the error
       line; workload or backend failure)
  130  interrupted (Ctrl-C): client processes and server stopped, files removed
  143  terminated (SIGTERM), 129 hung up (SIGHUP): the same
"""


@click.group("lab")
def lab_group() -> None:
    """Real servers under a workload: the model checked against measurements."""


@lab_group.command("run", help=RUN_HELP)
@server_choice_options(
    backend_help="local: mariadbd/mysqld binaries on this host; docker: a container per run.",
    image_help="Docker image (docker backend), e.g. mysql:8.4, mariadb:10.11.",
    basedir_help="Server basedir (local backend; default: PATH and /usr/sbin).")
@click.option("--flush-method", default="O_DIRECT", show_default=True,
              help=FLUSH_METHODS_HELP)
@click.option("--trx-commit", default="1", show_default=True,
              help="innodb_flush_log_at_trx_commit values (0, 1, 2), comma-separated.")
@click.option("--sync-binlog", default=None,
              help="sync_binlog values, comma-separated (default: the server's).")
@load_options(
    log_bin_help="Binary log on or off.",
    connections_help="Client connections (processes), comma-separated.",
    duration=(10.0, "Seconds of workload per run (1-3600)."),
    warmup=(0.0, "Seconds of workload before the measured --duration (not measured)."))
@click.option("--workload", default="insert", show_default=True,
              metavar="insert|oltp|NAME|FILE",
              help="insert: multi-row INSERTs into a table with 3 secondary indexes; oltp: "
              "point UPDATEs + DELETE + INSERT; or a calibrated workload profile (`lab "
              "calibrate --save NAME`, or a JSON file): its load, and the predictions use "
              "its per-transaction costs instead of each run's own.")
@click.option("--rows-per-trx", default=None,
              help="insert workload: rows per transaction, N or MIN-MAX (uniform) "
              "[1-10].")
@command_options(False, "predictions then come from advise's fit of what it measured "
                 "(docs/commands/lab-run.md).")
@click.option("--datadir-on", default=None, type=click.Path(file_okay=False),
              help="Directory on the storage to test; the datadirs go under it (default: "
                   "the current directory).")
@click.option("--profile", "profile_ref", default=None,
              help="Device profile of that storage: a name (`innoflush profiles list`) or a "
                   "JSON file.")
@click.option("--measure", is_flag=True,
              help="Measure the storage under --datadir-on first (the default without "
                   "--profile).")
@click.option("--buffer-pool", default="256M", show_default=True,
              help="innodb_buffer_pool_size (at least 8M).")
@click.option("--port", type=int, default=None,
              help="Fixed TCP port for the servers (default: a free one per run).")
@click.option("--server-option", "server_options", multiple=True, metavar="NAME=VALUE",
              help=SERVER_OPTION_HELP)
@click.option("--no-advise", is_flag=True, help="Do not run advise against the servers.")
@click.option("--emulate", "emulate_ref", default=None, metavar="PROFILE",
              help="Emulate this device (a profile name or file): the servers' fsync/"
              "fdatasync (and O_DSYNC writes) are delayed to its latencies by a preloaded "
              "library, and the predictions are for it. --profile/--measure then describe "
              "this host's storage (checked to be faster; else a quick probe).")
@click.option("--emulate-channels", type=click.IntRange(0, 1), default=1, show_default=True,
              help="1: the emulated syncs share one cache-flush channel (they queue, as in "
              "the model); 0: each thread's syncs are delayed independently.")
@click.option("--seed", type=SEED, default=1, show_default=True,
              help="Workload and simulation seed.")
@click.option("--json", "as_json", is_flag=True,
              help="JSON output (keys: docs/commands/lab-run.md).")
@chart_options
@wide_option
@click.pass_context
def run_command(ctx, backend, image, basedir, server_root, flush_method, trx_commit,
                sync_binlog, log_bin, connections, duration, warmup, workload, rows_per_trx,
                workload_cmd, workload_prepare, datadir_on, profile_ref, measure, buffer_pool, port,
                server_options, no_advise, emulate_ref, emulate_channels, seed,
                as_json, html_file, png_dir, wide) -> None:
    parse_size(buffer_pool)
    check_targets(html_file, png_dir)
    command = one_command(ctx, workload_cmd, workload_prepare)
    kind, rows, workload_ref = resolve_workload(workload, rows_per_trx)
    opts = LabOptions(
        backend=backend, image=image, basedir=basedir, server_root=server_root,
        flush_methods=parse_list(flush_method), trx_commits=parse_list(trx_commit, int),
        sync_binlogs=sync_binlog_values(sync_binlog), log_bin=log_bin,
        connections=parse_list(connections, int), duration_s=duration, warmup_s=warmup,
        workload=kind, rows_per_trx=rows, datadir_on=datadir_on,
        profile_ref=profile_ref, measure=measure, buffer_pool=buffer_pool, port=port,
        extra=server_extra(server_options), advise=not no_advise, seed=seed,
        emulate=emulate_ref, emulate_channels=emulate_channels, workload_ref=workload_ref,
        command=command)
    run_phase, line = progress_printer(not as_json and sys.stderr.isatty())
    report = interruptible(lambda: lab_run(opts, progress=run_phase, progress_line=line))
    failures: list[InnoflushError] = []   # raised after the report: the runs are not lost
    attempt(failures, lambda: emit("lab run", report, html_file, png_dir,
                                   run_report.render_text(report)))
    click.echo(run_report.to_json(report) if as_json
               else run_report.render_text(report, text_width(wide)), nl=False)
    if failures:
        raise failures[0]


CALIBRATE_HELP = """Measure what a transaction of the lab's workload costs on a real server
and keep it as a workload profile that simulate, tps, advise and lab run/validate accept
(--workload NAME).

\b
The runs use innodb_flush_log_at_trx_commit=0 (and sync_binlog=0 with --log-bin): no
sync in the commit path, so the server's and the clients' CPU per transaction are
measured without the syncs' own cost, which the model takes from the device profile.
Redo and binlog bytes, pages dirtied, tablespace growth and the files written come from
the SHOW GLOBAL STATUS deltas and the InnoDB files. One run per --connections value
(CPU per transaction depends on the concurrency); the profile's workload is the first
one's, and it keeps every count's for lab validate.

\b
Exit codes: 0 done; 2 usage error (bad option, the name exists without --force);
1 failure (server, workload); 130 interrupted, 143 SIGTERM, 129 SIGHUP (all cleaned up).
"""


@lab_group.command("calibrate", help=CALIBRATE_HELP)
@server_choice_options(image_help="Docker image (docker backend).",
                       basedir_help="Server basedir (local backend).")
@click.option("--flush-method", default="O_DIRECT", show_default=True,
              help="innodb_flush_method of the calibration runs.")
@load_options(
    log_bin_help="Binary log on (then sync_binlog=0) or off.",
    connections_help="Client connections, comma-separated: one run per value.",
    duration=(5.0, "Measured seconds per run."),
    warmup=(1.0, "Seconds of workload before each measured run."))
@click.option("--workload", type=click.Choice(["insert", "oltp"]), default="insert",
              show_default=True, help="The load generator's workload.")
@click.option("--rows-per-trx", default="1-10", show_default=True,
              help="insert workload: rows per transaction, N or MIN-MAX.")
@command_options(False, "the profile then holds what a transaction of it costs "
                 "(docs/commands/lab-calibrate.md).")
@click.option("--datadir-on", default=None, type=click.Path(file_okay=False),
              help="Directory the servers' datadirs go under (default: the current one).")
@click.option("--emulate", "emulate_ref", default=None, metavar="PROFILE",
              help="Run the servers with this device's sync latencies (as lab run).")
@click.option("--emulate-channels", type=click.IntRange(0, 1), default=1, show_default=True)
@click.option("--profile", "profile_ref", default=None,
              help="With --emulate: this host's storage profile (else a quick probe).")
@click.option("--measure", is_flag=True, help="With --emulate: measure this host's storage.")
@click.option("--buffer-pool", default="256M", show_default=True)
@click.option("--server-option", "server_options", multiple=True, metavar="NAME=VALUE",
              help=SERVER_OPTION_HELP)
@click.option("--port", type=int, default=None)
@click.option("--seed", type=SEED, default=1, show_default=True)
@click.option("--save", "save_name", default=None, metavar="NAME",
              help="Save the profile in the workload store ($INNOFLUSH_HOME/workloads).")
@click.option("--force", is_flag=True, help="Replace a saved profile of that name.")
@click.option("--title", default=None, help="The profile's title.")
@click.option("--json", "as_json", is_flag=True,
              help="JSON output (keys: docs/commands/lab-calibrate.md).")
@wide_option
@click.pass_context
def calibrate_command(ctx, backend, image, basedir, server_root, flush_method, log_bin, connections,
                      duration, warmup, workload, rows_per_trx, workload_cmd, workload_prepare,
                      datadir_on, emulate_ref, emulate_channels, profile_ref, measure,
                      buffer_pool, server_options, port, seed, save_name, force, title,
                      as_json, wide) -> None:
    parse_size(buffer_pool)
    command = one_command(ctx, workload_cmd, workload_prepare)
    if (profile_ref or measure) and not emulate_ref:
        raise OptionError("--profile/--measure describe this host's storage for --emulate; "
                         "without --emulate the calibration needs no device profile")
    methods = parse_list(flush_method)
    if len(methods) != 1:
        raise OptionError("--flush-method: give one (the calibration has no sync at commit)")
    opts = LabOptions(
        backend=backend, image=image, basedir=basedir, server_root=server_root,
        flush_methods=methods,
        trx_commits=[0], log_bin=log_bin, connections=parse_list(connections, int),
        duration_s=duration, warmup_s=warmup, workload=workload,
        rows_per_trx=rows_range(rows_per_trx), datadir_on=datadir_on,
        profile_ref=profile_ref, measure=measure, buffer_pool=buffer_pool, port=port,
        extra=server_extra(server_options), advise=False, seed=seed, emulate=emulate_ref,
        emulate_channels=emulate_channels, command=command)
    run_phase, line = progress_printer(not as_json and sys.stderr.isatty())
    failure = None
    try:
        report = interruptible(lambda: lab_calibrate(opts, save=save_name, force=force,
                                                      title=title, progress=run_phase,
                                                      progress_line=line))
    except OutputFailed as exc:   # not saved: the report first, then the error
        report, failure = exc.report, exc
    click.echo(json.dumps(report, indent=2, default=str) if as_json
               else render_calibrate_text(report, text_width(wide)), nl=not as_json)
    if failure is not None:
        raise failure


lab_group.add_command(validate_command)
