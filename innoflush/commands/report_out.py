"""The end of an advise run, live, from a capture or a check: the page and charts
(--html, --png), the report printed, the metrics (--prom), then the exit code. A file
that cannot be written fails after the report is printed: a run is never lost to it."""

from __future__ import annotations

import sys
from collections.abc import Callable

import click

from ..errors import InnoflushError
from ..outfile import attempt
from ..output.charts.output import emit


def print_report(kind: str, doc: dict, *, as_json: bool, json_text: str,
                 text: Callable[[int | None], str], width: int | None,
                 html_file: str | None = None, png_dir: str | None = None,
                 prom_path: str | None = None, metrics: Callable[[dict], object] | None = None,
                 failures: list[InnoflushError] | None = None) -> None:
    """kind: the page's (output/charts/build.py); text(width): the text report at a
    width (None: whole, as the page holds it); metrics(doc): its Prometheus registry;
    failures: earlier writes' errors, raised with these."""
    failures = [] if failures is None else failures
    attempt(failures, lambda: emit(kind, doc, html_file, png_dir, text(None)))
    click.echo(json_text if as_json else text(width), nl=False)
    if prom_path is not None and metrics is not None:
        from ..output.prom import write_prom

        attempt(failures, lambda: write_prom(prom_path, metrics(doc)))
    if failures:
        raise failures[0]
    if doc["exit_code"]:
        sys.exit(doc["exit_code"])
