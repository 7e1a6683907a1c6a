"""What the `lab` commands share: their option groups (the server, the load, the user's
load generator) and the parsing of their values, the progress lines and a stop that
leaves nothing running."""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Callable

import click

from .. import signals
from ..errors import OptionError, UsageError
from ..lab.experiments.options import BACKENDS
from ..lab.load.command_spec import PLACEHOLDERS, WorkloadCommand, workload_commands
from ..lab.load.workload import KINDS
from ..lab.server.server_args import parse_server_options
from ..simulator.workload_profile import load_workload
from ..units import parse_list


def rows_range(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*(?:(?:-|\.\.)\s*(\d+)\s*)?", text or "")
    if not m:
        raise OptionError(f"--rows-per-trx {text!r}: give N or MIN-MAX (e.g. 1-10)")
    lo = int(m.group(1))
    hi = int(m.group(2)) if m.group(2) else lo
    return lo, hi


def server_extra(items: tuple[str, ...]) -> dict:
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
        return value, rows_range(rows_per_trx or "1-10"), None
    wp = load_workload(value)          # exit 2 for an unknown name or a bad file
    spec = (wp.provenance or {}).get("spec") or {}
    if spec.get("kind") == "command":
        raise UsageError(f"--workload {value}: calibrated on a command's load "
                         f"({spec.get('name')!r}): the lab cannot drive it by its name; give "
                         "the command (--workload-cmd), or use the profile with simulate, tps "
                         "or advise --workload")
    kind = spec.get("kind") if spec.get("kind") in KINDS else "insert"
    if rows_per_trx:
        rows = rows_range(rows_per_trx)
    elif isinstance(spec.get("rows_per_trx"), list) and len(spec["rows_per_trx"]) == 2:
        rows = (int(spec["rows_per_trx"][0]), int(spec["rows_per_trx"][1]))
    else:
        rows = (1, 10)
    return kind, rows, value


PLACEHOLDER_LIST = " ".join("{" + p + "}" for p in PLACEHOLDERS)


def command_options(repeatable: bool, what: str) -> Callable[[Callable], Callable]:
    """--workload-cmd and --workload-prepare (the user's own load generator)."""
    many = " Repeatable: one workload each (NAME=CMD names it)." if repeatable else ""
    return stacked((
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


def one_command(ctx: click.Context, cmd: str | None, prepare: str | None
                ) -> WorkloadCommand | None:
    """lab run's and calibrate's --workload-cmd (one), or None; the lab's own workload
    options are refused beside it (the command is the load)."""
    if cmd is None:
        if prepare is not None:
            raise OptionError("--workload-prepare needs --workload-cmd")
        return None
    stale = given_options(ctx, "workload", "rows_per_trx")
    if stale:
        raise UsageError(f"{' and '.join(stale)}: not with --workload-cmd (the command is "
                         "the load)")
    return workload_commands([cmd], [prepare] if prepare is not None else [])[0]


def given_options(ctx: click.Context, *names: str) -> list[str]:
    """The options among names given on the command line (not their defaults)."""
    return ["--" + n.replace("_", "-") for n in names
            if ctx.get_parameter_source(n) == click.core.ParameterSource.COMMANDLINE]


def sync_binlog_values(text: str | None) -> list[int | None]:
    if text is None:
        return [None]
    return parse_list(text, int)


def progress_printer(enabled: bool):
    if not enabled:
        return None, None

    def run_phase(plan, phase: str) -> None:
        click.echo(f"[lab] run {plan.index}/{plan.total} ({plan.label}): {phase}", err=True)

    def line(text: str) -> None:
        click.echo(f"[lab] {text}", err=True)
    return run_phase, line


def interruptible(call):
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

    return stacked(options)


def load_options(*, log_bin_help: str, connections_help: str, duration: tuple[float, str],
                 warmup: tuple[float, str]) -> Callable[[Callable], Callable]:
    """--log-bin, --connections, --duration and --warmup (the load of each run), in that
    order; duration and warmup: (default seconds, help) for the command's use."""
    return stacked((
        click.option("--log-bin/--skip-log-bin", default=False, show_default=True,
                     help=log_bin_help),
        click.option("--connections", default="1", show_default=True, help=connections_help),
        click.option("--duration", type=float, default=duration[0], show_default=True,
                     help=duration[1]),
        click.option("--warmup", type=float, default=warmup[0], show_default=True,
                     help=warmup[1]),
    ))


def stacked(options) -> Callable[[Callable], Callable]:
    """One decorator applying click options so that --help lists them in the order given."""
    def decorate(command):
        for option in reversed(options):
            command = option(command)
        return command
    return decorate
