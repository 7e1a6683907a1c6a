"""`innoflush lab run`: real servers, a workload, measured beside predicted."""

from __future__ import annotations

import re
import sys

import click

from ..errors import UsageError
from ..units import parse_list, parse_size

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
directory) and removed afterwards; no server is left running, also on errors and
Ctrl-C.

\b
Exit codes:
  0    done
  2    usage error (bad option, unknown profile, --datadir-on not writable, port in use)
  1    failure (server did not start: the tail of its error log is shown; workload or
       backend failure)
  130  interrupted (Ctrl-C): client processes and server stopped, files removed
"""


def _rows_range(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*(?:(?:-|\.\.)\s*(\d+)\s*)?", text or "")
    if not m:
        raise UsageError(f"--rows-per-trx {text!r}: give N or MIN-MAX (e.g. 1-10)")
    lo = int(m.group(1))
    hi = int(m.group(2)) if m.group(2) else lo
    return lo, hi


def _extra(items: tuple[str, ...]) -> dict:
    out: dict = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip().lstrip("-")
        if not name or not re.fullmatch(r"[A-Za-z0-9_-]+", name):
            raise UsageError(f"--server-option {item!r}: give NAME=VALUE or NAME")
        out[name.replace("-", "_")] = value.strip() if sep else None
    return out


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


@click.group("lab")
def lab_group() -> None:
    """Real servers under a workload: the model checked against measurements."""


@lab_group.command("run", help=RUN_HELP)
@click.option("--backend", type=click.Choice(["local", "docker"]), default="local",
              show_default=True, help="local: mariadbd/mysqld binaries on this host; docker: "
              "a container per run.")
@click.option("--image", default=None, help="Docker image (docker backend), e.g. mysql:8.4, "
              "mariadb:10.11.")
@click.option("--basedir", default=None, type=click.Path(file_okay=False),
              help="Server basedir (local backend; default: PATH and /usr/sbin).")
@click.option("--flush-method", default="O_DIRECT", show_default=True,
              help="innodb_flush_method values, comma-separated (fsync, O_DSYNC, O_DIRECT, "
                   "O_DIRECT_NO_FSYNC).")
@click.option("--trx-commit", default="1", show_default=True,
              help="innodb_flush_log_at_trx_commit values (0, 1, 2), comma-separated.")
@click.option("--sync-binlog", default=None,
              help="sync_binlog values, comma-separated (default: the server's).")
@click.option("--log-bin/--skip-log-bin", default=False, show_default=True,
              help="Binary log on or off.")
@click.option("--connections", default="1", show_default=True,
              help="Client connections (processes), comma-separated.")
@click.option("--duration", type=float, default=10.0, show_default=True,
              help="Seconds of workload per run (1-3600).")
@click.option("--warmup", type=float, default=0.0, show_default=True,
              help="Seconds of workload before the measured --duration (not measured).")
@click.option("--workload", type=click.Choice(["insert", "oltp"]), default="insert",
              show_default=True, help="insert: multi-row INSERTs into a table with 3 "
              "secondary indexes; oltp: point UPDATEs + DELETE + INSERT.")
@click.option("--rows-per-trx", default="1-10", show_default=True,
              help="insert workload: rows per transaction, N or MIN-MAX (uniform).")
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
              help="innodb_buffer_pool_size.")
@click.option("--port", type=int, default=None,
              help="Fixed TCP port for the servers (default: a free one per run).")
@click.option("--server-option", "server_options", multiple=True, metavar="NAME=VALUE",
              help="Any other server option, repeatable (e.g. innodb_log_file_size=256M).")
@click.option("--no-advise", is_flag=True, help="Do not run advise against the servers.")
@click.option("--seed", type=int, default=1, show_default=True,
              help="Workload and simulation seed.")
@click.option("--json", "as_json", is_flag=True,
              help="JSON output (keys: innoflush/lab/report.py, and the README).")
def run_command(backend, image, basedir, flush_method, trx_commit, sync_binlog, log_bin,
                connections, duration, warmup, workload, rows_per_trx, datadir_on, profile_ref,
                measure, buffer_pool, port, server_options, no_advise, seed,
                as_json) -> None:
    from .report import render_text, to_json
    from .run import LabOptions, lab_run

    parse_size(buffer_pool)
    opts = LabOptions(
        backend=backend, image=image, basedir=basedir,
        flush_methods=parse_list(flush_method), trx_commits=parse_list(trx_commit, int),
        sync_binlogs=_sync_binlog(sync_binlog), log_bin=log_bin,
        connections=parse_list(connections, int), duration_s=duration, warmup_s=warmup,
        workload=workload,
        rows_per_trx=_rows_range(rows_per_trx), datadir_on=datadir_on,
        profile_ref=profile_ref, measure=measure, buffer_pool=buffer_pool, port=port,
        extra=_extra(server_options), advise=not no_advise, seed=seed)
    run_phase, line = _progress(not as_json and sys.stderr.isatty())
    try:
        report = lab_run(opts, progress=run_phase, progress_line=line)
    except KeyboardInterrupt:
        click.echo("innoflush: interrupted: the client processes and the server were "
                   "stopped and the work directory removed", err=True)
        sys.exit(130)
    click.echo(to_json(report) if as_json else render_text(report), nl=False)
