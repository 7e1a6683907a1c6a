"""The `innoflush` command: a click group; each command is a thin call into the library."""

from __future__ import annotations

import contextlib
import importlib
import math
import sys
from gettext import gettext
from typing import Any, NoReturn

import click

from .. import __version__, signals
from ..errors import EXIT_USAGE, InnoflushError, OptionError

# click >= 8.2 raises this for a bare `innoflush lab`: its help is the answer, so it
# keeps click's own output (the help on stderr, exit 2)
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


def _command_path(ctx: click.Context | None) -> str:
    """`innoflush lab run` whatever the program was started as (`python -m innoflush`)."""
    names = []
    while ctx is not None:
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    names[-1:] = ["innoflush"]
    return " ".join(reversed([n for n in names if n]))


def _one_line(message: str) -> str:
    """click's message as the tail of our error line: one line, no closing full stop."""
    text = " ".join(message.split()).rstrip(".")
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        text = text[0].lower() + text[1:]
    return text


def _fail(message: str, exit_code: int) -> NoReturn:
    click.echo(f"innoflush: error: {message}", err=True)
    sys.exit(exit_code)


def _stopped(signum: int) -> NoReturn:
    """The one line of a command stopped by a signal, and its exit code (128 + signum)."""
    # a hung-up terminal answers the write with EIO: the exit code must still be set
    with contextlib.suppress(OSError):
        click.echo(f"innoflush: {signals.stop_words(signum)}", err=True)
    sys.exit(signals.exit_code(signum))


def _report_click_error(exc: click.ClickException, ctx: click.Context) -> NoReturn:
    if isinstance(exc, click.UsageError):
        path = _command_path(exc.ctx or ctx)
        _fail(f"{_one_line(exc.format_message())} (see '{path} --help')", EXIT_USAGE)
    _fail(_one_line(exc.format_message()), exc.exit_code)


class _FiniteFloat(click.ParamType):
    """click's FLOAT without nan and inf: no option means "not a number" seconds or µs,
    and either slips past a `value <= 0` check into the simulator."""

    name = "float"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


def _finite_floats(command: click.Command) -> None:
    """Every plain float option of command and its subcommands refuses nan and inf."""
    for param in command.params:
        if type(param.type) is click.types.FloatParamType:
            param.type = _FiniteFloat()
    for sub in getattr(command, "commands", {}).values():
        _finite_floats(sub)


class _Group(click.Group):
    """Turns our errors and click's into one line on stderr and the documented exit code.

    click reports a usage error in three lines (Usage / Try --help / Error) from main();
    here they are caught where they are raised instead: the top level's in make_context,
    a subcommand's (also in the nested `lab` and `profiles` groups) in invoke, which
    creates the subcommands' contexts.
    """

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except _NO_ARGS_IS_HELP:
            raise
        except click.ClickException as exc:
            _report_click_error(exc, click.Context(self, info_name=info_name, parent=parent))

    def invoke(self, ctx: click.Context):
        # SIGINT, SIGTERM and SIGHUP run the same cleanup (innoflush/signals.py), up to
        # the error line; a nested group's block shares the top one's
        with signals.StopSignals():
            return self._invoke_one_line(ctx)

    def _invoke_one_line(self, ctx: click.Context):
        try:
            result = super().invoke(ctx)
            # a signal whose raise CPython dropped: the work ran to its end, the exit code
            # still says it was stopped
            signals.check()
            return result
        except OptionError as exc:
            # a bad option value: where to read about it, as click's own errors say
            _fail(f"{exc} (see '{exc.command or _command_path(ctx)} --help')", exc.exit_code)
        except InnoflushError as exc:
            _fail(str(exc), exc.exit_code)
        except _NO_ARGS_IS_HELP:
            raise
        except click.ClickException as exc:
            _report_click_error(exc, ctx)
        except (KeyboardInterrupt, click.exceptions.Abort) as exc:
            # Abort: Ctrl-C or end of input at a prompt (--ask-password); a plain
            # KeyboardInterrupt re-raised after cleanup still carries the signal's code
            _stopped(signals.signal_of(exc))
        except BrokenPipeError:
            sys.exit(1)


# Every command's module is imported when the command is named (or asked for its help),
# not at start: `innoflush --help` and `innoflush profiles list` stay clear of numpy, simpy,
# PyMySQL and the lab (docs/benchmarks.md has the start-up times).
# name -> "module:attribute"
COMMANDS: dict[str, str] = {
    "advise": "innoflush.commands.advise:advise_command",
    "lab": "innoflush.commands.lab:lab_group",
    "measure": "innoflush.commands.measure:measure_command",
    "profiles": "innoflush.commands.profiles:profiles_group",
    "simulate": "innoflush.commands.simulate:simulate_command",
    "tps": "innoflush.commands.simulate:tps_command",
}
# The first sentence of each command's help, which `innoflush --help` lists without
# importing the commands; tests/commands/test_cli_start.py checks it against the commands' own.
SHORT_HELP: dict[str, str] = {
    "advise": "Read a live MySQL/MariaDB server and recommend innodb_flush_method, "
              "innodb_flush_log_at_trx_commit, sync_binlog, innodb_use_fdatasync and "
              "innodb_doublewrite, with the evidence (SHOW GLOBAL STATUS deltas over "
              "--interval), the predicted effect (simulated on the device profile) and "
              "the risk.",
    "lab": "Real servers under a workload: the model checked against measurements.",
    "measure": "Measure write and sync latency of the storage under directory PATH.",
    "profiles": "List, show, compare, import and export device profiles.",
    "simulate": "Simulate InnoDB on a device profile: every combination of the listed "
                "values.",
    "tps": "Commits per second one connection gets from a device, per durability setting: "
           "bound by the device where a sync is in the commit path, by the CPU where none "
           "is.",
}


class _LazyGroup(_Group):
    """The top-level group: click's lazy-loading pattern (list_commands from a table,
    get_command imports on demand), with the command list of --help from SHORT_HELP."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module_name, _, attribute = COMMANDS[cmd_name].partition(":")
            command = getattr(importlib.import_module(module_name), attribute)
            _finite_floats(command)
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError:
            # no such command: click's "Did you mean" looks among self.commands, which
            # holds only the commands loaded so far
            if len(self.commands) == len(COMMANDS):
                raise
            for name in COMMANDS:
                self.get_command(ctx, name)
            return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # click's own Group.format_commands, with each command's help from SHORT_HELP
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, click.Command(name, help=SHORT_HELP[name]).get_short_help_str(limit))
                for name in names]
        with formatter.section(gettext("Commands")):
            formatter.write_dl(rows)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="innoflush")
def main() -> None:
    """InnoDB flush-method simulator and MySQL/MariaDB durability advisor."""
