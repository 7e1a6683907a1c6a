"""Options the commands share, checked where they are typed.

A value click refuses is a usage error of click's own, one line ending
``(see 'innoflush CMD --help')``, before the command does any work — a seed of -1 used
to reach numpy only after a lab run had started its servers."""

from __future__ import annotations

from collections.abc import Callable

import click

from ..simulator.flavors import ALIASES, FLAVORS, FLUSH_METHODS
from ..values import SEED_MAX

SEED = click.IntRange(0, SEED_MAX)

FLUSH_METHODS_HELP = ("innodb_flush_method values, comma-separated "
                      f"({', '.join(FLUSH_METHODS)}).")



class FlavorChoice(click.Choice):
    """A flavor's name, or a version the README names that another flavor models
    (mariadb-10.6 is mariadb-10.11's model): converted to the flavor's own name, so the
    report says which model ran."""

    def __init__(self) -> None:
        super().__init__(sorted(FLAVORS), case_sensitive=False)

    def convert(self, value, param, ctx):
        if isinstance(value, str):
            value = ALIASES.get(value.lower(), value)
        return super().convert(value, param, ctx)


FLAVOR = FlavorChoice()
FLAVOR_HELP = ("Server flavor; also " + ", ".join(f"{a} ({n})" for a, n in ALIASES.items())
               + ".")

HTML_HELP = "Also write a self-contained HTML page (charts inline as SVG) to FILE."
PNG_HELP = "Also write the page's charts as PNG files into DIR (created if missing)."


def chart_options(func: Callable) -> Callable:
    """Add --html FILE and --png DIR to a click command (as html_file, png_dir); what they
    write is innoflush.output.charts'."""
    func = click.option("--png", "png_dir", default=None, metavar="DIR", help=PNG_HELP)(func)
    return click.option("--html", "html_file", default=None, metavar="FILE",
                        help=HTML_HELP)(func)


WIDE_HELP = ("Every column of the tables, lines not wrapped (the text of earlier versions); "
             "by default the text fits the terminal's width (COLUMNS; 100 when piped).")


def wide_option(func: Callable) -> Callable:
    """Add --wide (as wide) to a click command with a text report."""
    return click.option("--wide", is_flag=True, help=WIDE_HELP)(func)


def text_width(wide: bool) -> int | None:
    """The width the text is fitted to: None (no limit) with --wide."""
    from ..terminal import width

    return None if wide else width()
