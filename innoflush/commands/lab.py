"""`innoflush lab run`: real servers, a workload, measured beside predicted."""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import sys
from collections.abc import Callable

import click

from .. import signals
from ..errors import InnoflushError, OptionError, UsageError
from ..executor import make_executor
from ..lab.experiments.calibrate import lab_calibrate
from ..lab.experiments.calibrate import render_text as render_calibrate_text
from ..lab.experiments.change_validation import (
    DEFAULT_CHANGES,
    ChangeValidateOptions,
    lab_change_validate,
)
from ..lab.experiments.options import BACKENDS, LabOptions
from ..lab.experiments.run import lab_run
from ..lab.experiments.validate import ValidateOptions, command_line, lab_validate
from ..lab.load.command_spec import PLACEHOLDERS, WorkloadCommand, workload_commands
from ..lab.load.workload import KINDS
from ..lab.reports import change_report, validate_report
from ..lab.reports import report as run_report
from ..lab.server.server_args import SERVER_OPTION_HELP, parse_server_options
from ..outfile import OutputFailed, attempt, check_output_target, write_output
from ..output.charts.output import check_targets, emit
from ..simulator.workload_profile import load_workload
from ..units import parse_list, parse_size
from .option_types import FLUSH_METHODS_HELP, SEED, chart_options

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


def _rows_range(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*(?:(?:-|\.\.)\s*(\d+)\s*)?", text or "")
    if not m:
        raise OptionError(f"--rows-per-trx {text!r}: give N or MIN-MAX (e.g. 1-10)")
    lo = int(m.group(1))
    hi = int(m.group(2)) if m.group(2) else lo
    return lo, hi


def _extra(items: tuple[str, ...]) -> dict:
    return parse_server_options(items)   # exit 2 before anything runs


def resolve_workload(value: str, rows_per_trx: str | None) -> tuple[str, tuple[int, int],
                                                                  str | None]:
    """--workload insert|oltp|NAME|FILE: (kind, rows per transaction, workload profile ref).

    insert and oltp are the load generator's workloads (the prediction then uses the
    workload derived from each run); anything else is a workload profile (`lab
    calibrate --save NAME`, or a JSON file): the load is the one it was calibrated with
    (its provenance's ``spec``; insert when it has none) and the predictions use its
    per-transaction costs."""
    if value in KINDS:
        return value, _rows_range(rows_per_trx or "1-10"), None
    wp = load_workload(value)          # exit 2 for an unknown name or a bad file
    spec = (wp.provenance or {}).get("spec") or {}
    if spec.get("kind") == "command":
        raise UsageError(f"--workload {value}: calibrated on a command's load "
                         f"({spec.get('name')!r}): the lab cannot drive it by its name; give "
                         "the command (--workload-cmd), or use the profile with simulate, tps "
                         "or advise --workload")
    kind = spec.get("kind") if spec.get("kind") in KINDS else "insert"
    if rows_per_trx:
        rows = _rows_range(rows_per_trx)
    elif isinstance(spec.get("rows_per_trx"), list) and len(spec["rows_per_trx"]) == 2:
        rows = (int(spec["rows_per_trx"][0]), int(spec["rows_per_trx"][1]))
    else:
        rows = (1, 10)
    return kind, rows, value


PLACEHOLDER_LIST = " ".join("{" + p + "}" for p in PLACEHOLDERS)


def command_options(repeatable: bool, what: str) -> Callable[[Callable], Callable]:
    """--workload-cmd and --workload-prepare (the user's own load generator)."""
    many = " Repeatable: one workload each (NAME=CMD names it)." if repeatable else ""
    return _stacked((
        click.option("--workload-cmd", "workload_cmd", multiple=repeatable, default=None,
                     metavar="[NAME=]CMD",
                     help=f"Your own load generator instead of the lab's: a shell command "
                     f"(sh -c) run against each server, with {PLACEHOLDER_LIST} substituted; "
                     f"{what}{many}"),
        click.option("--workload-prepare", "workload_prepare", multiple=repeatable,
                     default=None, metavar="[NAME=]CMD",
                     help="A command run to its end on each fresh server before the "
                     "warm-up (same placeholders), e.g. sysbench's prepare."
                     + (" Bare: for every workload; NAME=CMD: that workload's." if repeatable
                        else "")),
    ))


def one_command(cmd: str | None, prepare: str | None) -> WorkloadCommand | None:
    """lab run's and calibrate's --workload-cmd (one), or None."""
    if cmd is None:
        if prepare is not None:
            raise OptionError("--workload-prepare needs --workload-cmd")
        return None
    return workload_commands([cmd], [prepare] if prepare is not None else [])[0]


def _given(ctx: click.Context, *names: str) -> list[str]:
    """The options among names given on the command line (not their defaults)."""
    return ["--" + n.replace("_", "-") for n in names
            if ctx.get_parameter_source(n) == click.core.ParameterSource.COMMANDLINE]


def _sync_binlog(text: str | None) -> list[int | None]:
    if text is None:
        return [None]
    return parse_list(text, int)


def _progress(enabled: bool):
    if not enabled:
        return None, None

    def run_phase(plan, phase: str) -> None:
        click.echo(f"[lab] run {plan.index}/{plan.total} ({plan.label}): {phase}", err=True)

    def line(text: str) -> None:
        click.echo(f"[lab] {text}", err=True)
    return run_phase, line


def _interruptible(call):
    """call(), and on Ctrl-C, SIGTERM or SIGHUP (innoflush/signals.py) the one line that
    says what was cleaned up (exit 130, 143, 129)."""
    try:
        return call()
    except KeyboardInterrupt as exc:
        signum = signals.signal_of(exc)
        # a hung-up terminal answers the write with EIO: the exit code must still be set
        with contextlib.suppress(OSError):
            click.echo(f"innoflush: {signals.stop_words(signum)}: the client processes and "
                       "the server were stopped and the work directory removed", err=True)
        sys.exit(signals.exit_code(signum))


def server_choice_options(image_help: str, basedir_help: str,
                          backend_help: str | None = None) -> Callable[[Callable], Callable]:
    """--backend, --image, --basedir and --server-root (which server every run starts), in
    that order, for
    the lab's commands; each command words the help for its own use."""
    options = (
        click.option("--backend", type=click.Choice(list(BACKENDS)), default="local",
                     show_default=True, help=backend_help),
        click.option("--image", default=None, help=image_help),
        click.option("--basedir", default=None, type=click.Path(file_okay=False),
                     help=basedir_help),
        click.option("--server-root", default=None, metavar="DIR",
                     help="A Debian root holding the server, run in a chroot (local "
                          "backend): for a server this host's release lacks. A path, or "
                          "a name under /var/lib/innoflush/roots: mysql-9.7, mariadb-11.8 "
                          "(built by `make server-roots`). Needs root."),
    )

    return _stacked(options)


def load_options(*, log_bin_help: str, connections_help: str, duration: tuple[float, str],
                 warmup: tuple[float, str]) -> Callable[[Callable], Callable]:
    """--log-bin, --connections, --duration and --warmup (the load of each run), in that
    order; duration and warmup: (default seconds, help) for the command's use."""
    return _stacked((
        click.option("--log-bin/--skip-log-bin", default=False, show_default=True,
                     help=log_bin_help),
        click.option("--connections", default="1", show_default=True, help=connections_help),
        click.option("--duration", type=float, default=duration[0], show_default=True,
                     help=duration[1]),
        click.option("--warmup", type=float, default=warmup[0], show_default=True,
                     help=warmup[1]),
    ))


def _stacked(options) -> Callable[[Callable], Callable]:
    """One decorator applying click options so that --help lists them in the order given."""
    def decorate(command):
        for option in reversed(options):
            command = option(command)
        return command
    return decorate


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
              help="JSON output (keys: innoflush/lab/reports/report.py, and the README).")
@chart_options
@click.pass_context
def run_command(ctx, backend, image, basedir, server_root, flush_method, trx_commit,
                sync_binlog, log_bin, connections, duration, warmup, workload, rows_per_trx,
                workload_cmd, workload_prepare, datadir_on, profile_ref, measure, buffer_pool, port,
                server_options, no_advise, emulate_ref, emulate_channels, seed,
                as_json, html_file, png_dir) -> None:
    parse_size(buffer_pool)
    check_targets(html_file, png_dir)
    command = one_command(workload_cmd, workload_prepare)
    if command is not None and _given(ctx, "workload", "rows_per_trx"):
        raise UsageError(f"{' and '.join(_given(ctx, 'workload', 'rows_per_trx'))}: not with "
                         "--workload-cmd (the command is the load)")
    kind, rows, workload_ref = resolve_workload(workload, rows_per_trx)
    opts = LabOptions(
        backend=backend, image=image, basedir=basedir, server_root=server_root,
        flush_methods=parse_list(flush_method), trx_commits=parse_list(trx_commit, int),
        sync_binlogs=_sync_binlog(sync_binlog), log_bin=log_bin,
        connections=parse_list(connections, int), duration_s=duration, warmup_s=warmup,
        workload=kind, rows_per_trx=rows, datadir_on=datadir_on,
        profile_ref=profile_ref, measure=measure, buffer_pool=buffer_pool, port=port,
        extra=_extra(server_options), advise=not no_advise, seed=seed,
        emulate=emulate_ref, emulate_channels=emulate_channels, workload_ref=workload_ref,
        command=command)
    run_phase, line = _progress(not as_json and sys.stderr.isatty())
    report = _interruptible(lambda: lab_run(opts, progress=run_phase, progress_line=line))
    failures: list[InnoflushError] = []   # raised after the report: the runs are not lost
    attempt(failures, lambda: emit("lab run", report, html_file, png_dir,
                                   run_report.render_text(report)))
    click.echo(run_report.to_json(report) if as_json else run_report.render_text(report),
               nl=False)
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
@click.option("--json", "as_json", is_flag=True, help="JSON output.")
@click.pass_context
def calibrate_command(ctx, backend, image, basedir, server_root, flush_method, log_bin, connections,
                      duration, warmup, workload, rows_per_trx, workload_cmd, workload_prepare,
                      datadir_on, emulate_ref, emulate_channels, profile_ref, measure,
                      buffer_pool, server_options, port, seed, save_name, force, title,
                      as_json) -> None:
    parse_size(buffer_pool)
    command = one_command(workload_cmd, workload_prepare)
    if command is not None and _given(ctx, "workload", "rows_per_trx"):
        raise UsageError(f"{' and '.join(_given(ctx, 'workload', 'rows_per_trx'))}: not with "
                         "--workload-cmd (the command is the load)")
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
        rows_per_trx=_rows_range(rows_per_trx), datadir_on=datadir_on,
        profile_ref=profile_ref, measure=measure, buffer_pool=buffer_pool, port=port,
        extra=_extra(server_options), advise=False, seed=seed, emulate=emulate_ref,
        emulate_channels=emulate_channels, command=command)
    run_phase, line = _progress(not as_json and sys.stderr.isatty())
    failure = None
    try:
        report = _interruptible(lambda: lab_calibrate(opts, save=save_name, force=force,
                                                      title=title, progress=run_phase,
                                                      progress_line=line))
    except OutputFailed as exc:   # not saved: the report first, then the error
        report, failure = exc.report, exc
    click.echo(json.dumps(report, indent=2, default=str) if as_json
               else render_calibrate_text(report), nl=not as_json)
    if failure is not None:
        raise failure


VALIDATE_HELP = """The model's prediction error on a real server: a matrix of connections ×
innodb_flush_method × innodb_flush_log_at_trx_commit on this host's storage (local) and
on emulated devices, each cell a fresh server measured beside the prediction, with the
error per cell, the mean absolute percentage error (MAPE) per device of TPS, commit
latency, Innodb_data_fsyncs/s and Innodb_data_writes/s, and whether the direction of
the O_DIRECT -> O_DIRECT_NO_FSYNC change of the data fsyncs is right.

\b
The predictions use a workload calibrated first (lab calibrate's trx_commit=0 runs, one
per connection count, on this host's storage: without syncs at commit the device does
not enter, so it serves every device), or --workload NAME|FILE. Emulated devices
(--devices PROFILE,...) run the server with that profile's sync latencies (a preloaded
library; lab run --emulate) and are predicted on that profile; local uses --profile, or
measures the storage (--measure, the default).

\b
Exit codes: 0 done (whatever the errors); 2 usage error; 1 a cell failed twice (the
report is still written) or another failure; 130 interrupted, 143 SIGTERM, 129 SIGHUP
(all cleaned up).
"""


@lab_group.command("validate", help=VALIDATE_HELP)
@server_choice_options(image_help="Docker image (docker backend).",
                       basedir_help="Server basedir (local backend).")
@click.option("--devices", default="local,samsung-990-pro,hdd-wd2502abys", show_default=True,
              help="local (this host's storage) and device profiles to emulate, "
                   "comma-separated.")
@click.option("--connections", default="1,2,4,8,16", show_default=True)
@click.option("--flush-method", default="O_DIRECT,O_DIRECT_NO_FSYNC", show_default=True,
              help=FLUSH_METHODS_HELP)
@click.option("--trx-commit", default="1,2", show_default=True)
@click.option("--duration", type=float, default=8.0, show_default=True,
              help="Measured seconds per cell.")
@click.option("--warmup", type=float, default=2.0, show_default=True,
              help="Seconds of workload before each measured cell.")
@click.option("--calibrate-duration", type=float, default=None,
              help="Seconds per calibration run (default: --duration).")
@click.option("--replicates", type=click.IntRange(1, 5), default=1, show_default=True,
              help="Measure every cell this many times (a pair's two flush methods in "
                   "A B B A order): a pair whose replicates disagree on the direction of "
                   "the data fsyncs is undetermined (noise), not judged. With "
                   "--workload-cmd: every cell's before and after runs, in A B B A order, "
                   "each change judged against the replicates' spread.")
@click.option("--workload", "workload_value", default="insert", show_default=True,
              metavar="insert|oltp|NAME|FILE",
              help="The load (insert, oltp), calibrated first; or a calibrated workload "
                   "profile to predict with (no calibration runs).")
@click.option("--rows-per-trx", default=None, help="insert workload: rows per transaction "
              "[1-10].")
@command_options(True, "then each cell is a change (--changes): a before and an after run "
                 "under it, advise's predicted ratio beside the measured one "
                 "(docs/commands/lab-validate.md).")
@click.option("--changes", default=None, metavar="LIST",
              help="With --workload-cmd: the changes to validate, comma-separated "
              f"[{','.join(DEFAULT_CHANGES)}]; also trx-commit-binlog (trx_commit 1 -> 2 "
              "with the binary log on).")
@click.option("--settle-after", type=float, default=0.0, show_default=True,
              metavar="SECONDS",
              help="With --workload-cmd: after the warm-up, run each after run on until "
                   "its page cleaner is at work (the checkpoint age at its async point, "
                   "or falling), at most this long, so that it measures a server kept "
                   "at the new setting (0: the warm-up only).")
@click.option("--preload-rows", type=int, default=None,
              help="Rows loaded before each cell (default 10,000).")
@click.option("--datadir-on", default=None, type=click.Path(file_okay=False),
              help="Directory on the storage to test (default: the current one).")
@click.option("--profile", "profile_ref", default=None,
              help="Device profile of that storage (the local device; the emulation check).")
@click.option("--measure", is_flag=True, help="Measure that storage first (the default "
              "without --profile).")
@click.option("--emulate-channels", type=click.IntRange(0, 1), default=1, show_default=True,
              help="1: emulated syncs share one cache-flush channel, as in the model.")
@click.option("--buffer-pool", default="256M", show_default=True)
@click.option("--server-option", "server_options", multiple=True, metavar="NAME=VALUE",
              help=SERVER_OPTION_HELP)
@click.option("--save-workload", default=None, metavar="NAME",
              help="Also save the calibration as a workload profile.")
@click.option("--force", is_flag=True, help="Replace a saved workload of that name.")
@click.option("--seed", type=SEED, default=1, show_default=True)
@click.option("--scheduler", metavar="URL", envvar="INNOFLUSH_SCHEDULER", default=None,
              help="Run the cells' predictions on a Dask cluster: its scheduler, "
                   "tcp://HOST:PORT (env INNOFLUSH_SCHEDULER; needs innoflush[dask]); "
                   "default: a process pool on this host, between the measured runs. Not "
                   "used with --workload-cmd.")
@click.option("--json", "as_json", is_flag=True, help="JSON output (keys: "
              "innoflush/lab/reports/validate_report.py, and the README).")
@click.option("--markdown", "markdown_file", default=None, type=click.Path(dir_okay=False),
              help="Write the validation report (Markdown) to this file.")
@click.option("--progress/--no-progress", "show_progress", default=None,
              help="Progress lines on stderr (default: when it is a terminal and not "
              "--json).")
@chart_options
@click.pass_context
def validate_command(ctx, backend, image, basedir, server_root, devices, connections, flush_method,
                     trx_commit, duration, warmup, calibrate_duration, replicates,
                     workload_value, rows_per_trx, workload_cmd, workload_prepare, changes,
                     settle_after, preload_rows, datadir_on, profile_ref, measure, emulate_channels,
                     buffer_pool, server_options, save_workload, force, seed, scheduler,
                     as_json, markdown_file, show_progress, html_file, png_dir) -> None:
    parse_size(buffer_pool)
    check_targets(html_file, png_dir)
    charts = (html_file, png_dir)
    if workload_cmd or workload_prepare:
        stale = _given(ctx, "flush_method", "trx_commit", "calibrate_duration",
                       "rows_per_trx", "preload_rows", "save_workload", "force")
        if ctx.get_parameter_source("workload_value") == click.core.ParameterSource.COMMANDLINE:
            stale.append("--workload")
        if stale:
            raise OptionError(f"{', '.join(stale)}: not with --workload-cmd (each cell is a "
                             "change: --changes)")
        cvopts = ChangeValidateOptions(
            lab=LabOptions(backend=backend, image=image, basedir=basedir, server_root=server_root,
                           connections=parse_list(connections, int), duration_s=duration,
                           warmup_s=warmup, datadir_on=datadir_on, profile_ref=profile_ref,
                           measure=measure, buffer_pool=buffer_pool,
                           extra=_extra(server_options), seed=seed,
                           emulate_channels=emulate_channels),
            devices=parse_list(devices),
            workloads=workload_commands(list(workload_cmd), list(workload_prepare)),
            changes=parse_list(changes) if changes else list(DEFAULT_CHANGES),
            replicates=replicates, settle_after_s=settle_after,
            command="innoflush " + shlex.join(sys.argv[1:]))   # the commands, quoted
        _validate_output(change_report, lambda progress, line: lab_change_validate(
            cvopts, progress=progress, progress_line=line), as_json, markdown_file,
            show_progress, charts)
        return
    if changes is not None:
        raise OptionError("--changes is for --workload-cmd")
    if settle_after:
        raise OptionError("--settle-after is for --workload-cmd")
    kind, rows, workload_ref = resolve_workload(workload_value, rows_per_trx)
    if preload_rows is not None and preload_rows < 1:
        raise OptionError("--preload-rows must be at least 1")
    lab = LabOptions(
        backend=backend, image=image, basedir=basedir, server_root=server_root,
        flush_methods=parse_list(flush_method), trx_commits=parse_list(trx_commit, int),
        connections=parse_list(connections, int), duration_s=duration, warmup_s=warmup,
        workload=kind, rows_per_trx=rows, datadir_on=datadir_on, profile_ref=profile_ref,
        measure=measure, buffer_pool=buffer_pool, extra=_extra(server_options), advise=False,
        seed=seed, emulate_channels=emulate_channels, preload_rows=preload_rows)
    vopts = ValidateOptions(lab=lab, devices=parse_list(devices), workload_ref=workload_ref,
                            calibrate_duration_s=calibrate_duration, replicates=replicates,
                            save_workload=save_workload, force=force, command=command_line())
    vopts.validate()   # bad options fail before the scheduler is reached
    executor = make_executor(scheduler)
    ctx.call_on_close(executor.close)
    _validate_output(validate_report, lambda progress, line: lab_validate(
        vopts, progress=progress, progress_line=line, executor=executor), as_json,
        markdown_file, show_progress, charts)


def _validate_output(renderer, run, as_json: bool, markdown_file: str | None,
                     show_progress: bool | None,
                     charts: tuple[str | None, str | None] = (None, None)) -> None:
    """Run a validation (run(progress, progress_line)), write its Markdown, print it
    (text or JSON: the renderer module's render_text/to_json/render_markdown); exit 1
    when a cell failed."""
    if markdown_file:
        check_output_target(markdown_file, "--markdown")
    show = (not as_json and sys.stderr.isatty()) if show_progress is None else show_progress

    def run_phase(plan, phase: str, tag: str = "") -> None:
        click.echo(f"[validate] {tag}: run {plan.index}/{plan.total} ({plan.label}): {phase}",
                   err=True)

    def line(text: str) -> None:
        click.echo(f"[validate] {text}", err=True)
    report = _interruptible(lambda: run(run_phase if show else None, line if show else None))
    failures: list[InnoflushError] = []   # raised after the report: the runs are not lost
    if markdown_file:
        attempt(failures, lambda: write_output(markdown_file, renderer.render_markdown(report),
                                               "--markdown"))
    attempt(failures, lambda: emit("lab validate", report, *charts,
                                   renderer.render_text(report)))
    click.echo(renderer.to_json(report) if as_json else renderer.render_text(report),
               nl=False)
    not_saved = (report.get("calibration") or {}).get("save_error")
    if not_saved:
        failures.append(InnoflushError(f"the calibration was not saved: {not_saved}"))
    if failures:
        raise failures[0]
    if any("error" in c for d in report["devices"] for c in d.get("cells", [])):
        sys.exit(1)
