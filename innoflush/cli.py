"""The `innoflush` command: a click group; each command is a thin call into the library."""

from __future__ import annotations

import math
import sys
from typing import Any, NoReturn

import click

from . import __version__
from .errors import EXIT_INTERRUPTED, EXIT_USAGE, InnoflushError

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
        try:
            return super().invoke(ctx)
        except InnoflushError as exc:
            _fail(str(exc), exc.exit_code)
        except _NO_ARGS_IS_HELP:
            raise
        except click.ClickException as exc:
            _report_click_error(exc, ctx)
        except (KeyboardInterrupt, click.exceptions.Abort):
            # Abort: Ctrl-C or end of input at a prompt (--ask-password)
            click.echo("innoflush: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:
            sys.exit(1)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="innoflush")
def main() -> None:
    """InnoDB flush-method simulator and MySQL/MariaDB durability advisor."""


def _register() -> None:
    from .advisor.cli import advise_command
    from .lab.cli import lab_group
    from .measure.cli import measure_command
    from .profiles.cli import profiles_group
    from .simulator.cli import simulate_command, tps_command

    main.add_command(advise_command)
    main.add_command(lab_group)
    main.add_command(measure_command)
    main.add_command(profiles_group)
    main.add_command(simulate_command)
    main.add_command(tps_command)
    _finite_floats(main)


_register()
