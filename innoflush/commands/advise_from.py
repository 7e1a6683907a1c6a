"""`innoflush advise --from`: the command's offline branch (kept apart from the
connection options of commands/advise.py)."""

from __future__ import annotations

import click
from click.core import ParameterSource

from ..advisor.report import to_json
from ..advisor.request import AdviseRequest
from ..errors import OptionError
from ..output.advise_text import render_text

# Options that only mean something against a live server.
LIVE_ONLY = ("host", "port", "socket", "user", "defaults_file", "login_path",
             "prompt_password", "ask_password", "ssl_mode", "ssl_ca", "ssl_cert", "ssl_key",
             "connect_timeout", "samples")


def advise_from(click_ctx: click.Context, path: str, request: AdviseRequest, *,
                as_json: bool, prom_path: str | None = None,
                html_file: str | None = None, png_dir: str | None = None,
                executor=None, width: int | None = None,
                check_against: dict | None = None) -> None:
    """Read the capture, advise on it, print the report (fitted to width: None for
    --wide) and exit with its code; with check_against (--check's saved report), print
    the check of that report against the capture instead."""
    from ..advisor.advise import advise_capture
    from ..live.capture import read_capture

    flags = {p.name: max(p.opts, key=len) for p in click_ctx.command.params}
    given = [flags.get(name, name) for name in LIVE_ONLY
             if click_ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)]
    if given:
        raise OptionError("--from reads a capture, not a server: drop " + ", ".join(given))
    if request.measure:
        raise OptionError("--measure probes the server's device now; with --from give the "
                         "device as --profile")
    interval = None
    if click_ctx.get_parameter_source("interval") is not ParameterSource.DEFAULT:
        interval = click_ctx.params["interval"]   # mysqladmin's -i N
    capture = read_capture(path, interval_s=interval)
    report = advise_capture(capture, request, executor=executor)
    if check_against is not None:   # --check: the capture is the server now
        from .advise_check import print_check

        print_check(check_against, report, as_json, width, prom_path, html_file, png_dir)
        return
    from ..output.prom import advise_metrics
    from .report_out import print_report

    print_report("advise", report, as_json=as_json, json_text=to_json(report),
                 text=lambda w: render_text(report, w), width=width, html_file=html_file,
                 png_dir=png_dir, prom_path=prom_path, metrics=advise_metrics)
