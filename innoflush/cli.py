"""The `innoflush` command: a click group; each command is a thin call into the library."""

from __future__ import annotations

import sys

import click

from . import __version__
from .errors import InnoflushError


class _Group(click.Group):
    """Turns our errors into one line on stderr and the documented exit code."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except InnoflushError as exc:
            click.echo(f"innoflush: error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("innoflush: interrupted", err=True)
            sys.exit(130)
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


_register()
