"""`innoflush lab validate`: the model's prediction error on a real server, or (with
--workload-cmd) the price of a change checked against the change."""

from __future__ import annotations

import shlex
import sys

import click

from ..errors import InnoflushError, OptionError
from ..executor import make_executor
from ..lab.experiments.change_cells import DEFAULT_CHANGES
from ..lab.experiments.change_validation import ChangeValidateOptions, lab_change_validate
from ..lab.experiments.options import LabOptions
from ..lab.experiments.validate import ValidateOptions, command_line, lab_validate
from ..lab.load.command_spec import workload_commands
from ..lab.reports import change_report, validate_report
from ..lab.server.server_args import SERVER_OPTION_HELP
from ..outfile import attempt, check_output_target, write_output
from ..output.charts.output import check_targets, emit
from ..units import parse_list, parse_size
from .lab_options import (
    command_options,
    given_options,
    interruptible,
    resolve_workload,
    server_choice_options,
    server_extra,
)
from .option_types import FLUSH_METHODS_HELP, SEED, chart_options, text_width, wide_option

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


@click.command("validate", help=VALIDATE_HELP)
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
@click.option("--json", "as_json", is_flag=True,
              help="JSON output (keys: docs/commands/lab-validate.md).")
@click.option("--markdown", "markdown_file", default=None, type=click.Path(dir_okay=False),
              help="Write the validation report (Markdown) to this file.")
@click.option("--progress/--no-progress", "show_progress", default=None,
              help="Progress lines on stderr (default: when it is a terminal and not "
              "--json).")
@chart_options
@wide_option
@click.pass_context
def validate_command(ctx, backend, image, basedir, server_root, devices, connections, flush_method,
                     trx_commit, duration, warmup, calibrate_duration, replicates,
                     workload_value, rows_per_trx, workload_cmd, workload_prepare, changes,
                     settle_after, preload_rows, datadir_on, profile_ref, measure, emulate_channels,
                     buffer_pool, server_options, save_workload, force, seed, scheduler,
                     as_json, markdown_file, show_progress, html_file, png_dir, wide) -> None:
    parse_size(buffer_pool)
    check_targets(html_file, png_dir)
    charts = (html_file, png_dir)
    if workload_cmd or workload_prepare:
        stale = given_options(ctx, "flush_method", "trx_commit", "calibrate_duration",
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
                           extra=server_extra(server_options), seed=seed,
                           emulate_channels=emulate_channels),
            devices=parse_list(devices),
            workloads=workload_commands(list(workload_cmd), list(workload_prepare)),
            changes=parse_list(changes) if changes else list(DEFAULT_CHANGES),
            replicates=replicates, settle_after_s=settle_after,
            command="innoflush " + shlex.join(sys.argv[1:]))   # the commands, quoted
        _validate_output(change_report, lambda progress, line: lab_change_validate(
            cvopts, progress=progress, progress_line=line), as_json, markdown_file,
            show_progress, charts, text_width(wide))
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
        measure=measure, buffer_pool=buffer_pool, extra=server_extra(server_options), advise=False,
        seed=seed, emulate_channels=emulate_channels, preload_rows=preload_rows)
    vopts = ValidateOptions(lab=lab, devices=parse_list(devices), workload_ref=workload_ref,
                            calibrate_duration_s=calibrate_duration, replicates=replicates,
                            save_workload=save_workload, force=force, command=command_line())
    vopts.validate()   # bad options fail before the scheduler is reached
    executor = make_executor(scheduler)
    ctx.call_on_close(executor.close)
    _validate_output(validate_report, lambda progress, line: lab_validate(
        vopts, progress=progress, progress_line=line, executor=executor), as_json,
        markdown_file, show_progress, charts, text_width(wide))


def _validate_output(renderer, run, as_json: bool, markdown_file: str | None,
                     show_progress: bool | None,
                     charts: tuple[str | None, str | None] = (None, None),
                     width: int | None = None) -> None:
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
    report = interruptible(lambda: run(run_phase if show else None, line if show else None))
    failures: list[InnoflushError] = []   # raised after the report: the runs are not lost
    if markdown_file:
        attempt(failures, lambda: write_output(markdown_file, renderer.render_markdown(report),
                                               "--markdown"))
    attempt(failures, lambda: emit("lab validate", report, *charts,
                                   renderer.render_text(report)))
    click.echo(renderer.to_json(report) if as_json else renderer.render_text(report, width),
               nl=False)
    not_saved = (report.get("calibration") or {}).get("save_error")
    if not_saved:
        failures.append(InnoflushError(f"the calibration was not saved: {not_saved}"))
    if failures:
        raise failures[0]
    if any("error" in c for d in report["devices"] for c in d.get("cells", [])):
        sys.exit(1)
