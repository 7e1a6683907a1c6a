"""`innoflush advise --check REPORT.json` and `advise --track-record`: the command's
branches that compare a saved report with the server now, and print the record of those
comparisons (innoflush/advisor/check.py, track_record.py)."""

from __future__ import annotations

import json

import click
from click.core import ParameterSource

from ..errors import InnoflushError, OptionError
from ..outfile import attempt

# What --check does not take: it checks the report's own predictions, on the report's
# device, and predicts nothing new.
NOT_WITH_CHECK = ("profile_ref", "measure", "durability", "connections", "cpu_cores",
                  "workload_ref", "ignore_rules", "no_predict", "seed", "scheduler",
                  "inventory", "concurrency")


def refuse_with_check(click_ctx: click.Context, option: str, fleet: bool = False) -> None:
    flags = {p.name: max(p.opts, key=len) for p in click_ctx.command.params}
    # a capture has no processlist: --connections says the load's, for the comparison
    capture = click_ctx.meta.get("capture_path") is not None
    refused = [n for n in NOT_WITH_CHECK if not (fleet and n in ("inventory", "concurrency"))
               and not (capture and n == "connections")]
    given = [flags.get(n, n) for n in refused
             if click_ctx.get_parameter_source(n) not in (ParameterSource.DEFAULT, None)]
    if given:
        raise OptionError(f"{option} " + ("compares the server with the report's own "
                          "predictions" if option == "--check" else "reads the record "
                          "only") + ": drop " + ", ".join(given))


def check_or_record(click_ctx: click.Context, check_path: str | None, track_record: bool,
                    share_path: str | None, as_json: bool, width: int | None
                    ) -> dict | str | None:
    """--track-record: print it (None). --check: the saved report, loaded before any
    server is read (a bad one is exit 2 at once); with --inventory, the directory of the
    fleet's reports (a str)."""
    from ..advisor.check import load_report

    if share_path is not None and not track_record:
        raise OptionError("--share needs --track-record")
    if track_record:
        if check_path is not None:
            raise OptionError("give --check or --track-record, not both")
        refuse_with_check(click_ctx, "--track-record")
        print_track_record(as_json, share_path, width)
        return None
    if click_ctx.params.get("inventory") is not None:
        # a fleet's check: the directory of its reports, read by the fleet
        refuse_with_check(click_ctx, "--check", fleet=True)
        return check_path
    refuse_with_check(click_ctx, "--check")
    return load_report(check_path)


def print_check(before: dict, after: dict, as_json: bool, width: int | None,
                prom_path: str | None = None, html_file: str | None = None,
                png_dir: str | None = None) -> None:
    """The check of the saved report against the server now: printed (and written as
    metrics to prom_path, a page to html_file, its chart to png_dir), added to the track
    record, and the process's exit code set."""
    from ..advisor.check import check
    from ..advisor.track_record import append
    from ..output.check_prom import check_metrics
    from ..output.check_text import render_check
    from .report_out import print_report

    doc = check(before, after)
    failures: list[InnoflushError] = []
    doc["track_record"] = str(attempt(failures, lambda: append(doc)) or "") or None
    print_report("advise check", doc, as_json=as_json,
                 json_text=json.dumps(doc, indent=2) + "\n",
                 text=lambda w: render_check(doc, w), width=width, html_file=html_file,
                 png_dir=png_dir, prom_path=prom_path, metrics=check_metrics,
                 failures=failures)


def print_track_record(as_json: bool, share_path: str | None, width: int | None) -> None:
    from ..advisor.track_record import path, read, share, summary
    from ..output.check_text import render_track_record

    if share_path is not None:
        from ..outfile import check_output_target

        check_output_target(share_path, "--share")
    entries = read()
    doc = summary(entries)
    doc["file"] = str(path())
    click.echo(json.dumps(doc, indent=2) + "\n" if as_json
               else render_track_record(doc, str(path()), width), nl=False)
    if share_path is not None:
        share(entries, share_path)
        click.echo(f"shared: {len(entries)} check(s) written to {share_path} (no host "
                   "names, addresses or users)", err=True)
