"""--html FILE and --png DIR: their checks before a (possibly long) run, and the writing
after it (the options themselves: innoflush/commands/option_types.py). Imports no
plotting library: a command without these options never loads matplotlib."""

from __future__ import annotations

import os
from pathlib import Path

from ...errors import UsageError
from ...outfile import check_output_target, kind_of, write_output


def check_targets(html_file: str | None, png_dir: str | None) -> None:
    """Refuse, before anything runs, a page or a PNG directory that could not be written:
    a missing or read-only directory, a directory, device, FIFO or socket where the page
    would go (innoflush/outfile.py), anything but a directory where the PNG directory would
    go. --png's directory is created here."""
    if html_file is not None:
        check_output_target(html_file, "--html")
    if png_dir is not None:
        d = Path(os.path.realpath(png_dir))   # a symlink to a directory is followed
        if d.exists() and not d.is_dir():
            what = kind_of(d.stat().st_mode) or "a regular file"
            raise UsageError(f"--png {png_dir}: exists and is {what}, not a directory")
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--png {png_dir}: cannot create it ({exc.strerror})") from None
        if not os.access(d, os.W_OK | os.X_OK):
            raise UsageError(f"--png {png_dir}: cannot write there (permission denied)")


def png_name(command: str, chart: str) -> str:
    """The PNG file of a chart: the command and the chart, e.g. simulate-tps.png."""
    return f"{command.replace(' ', '-')}-{chart}.png"


def emit(kind: str, data: dict, html_file: str | None, png_dir: str | None,
         text: str | None = None) -> list[Path]:
    """Build the page of a command's result (kind: the command, data: its JSON form, text:
    its text report) and write what was asked; the paths written."""
    if html_file is None and png_dir is None:
        return []
    from .build import build_page
    from .figure import to_png
    from .page import render_html

    page = build_page(kind, data, text)
    written = []
    if html_file is not None:
        path = Path(html_file)
        write_output(path, render_html(page), "--html")
        written.append(path)
    if png_dir is not None:
        check_targets(None, png_dir)     # created if it went away during the run
        for chart in page.charts:
            path = Path(png_dir) / png_name(page.command, chart.name)
            write_output(path, to_png(chart.figure), "--png")
            written.append(path)
    return written
