"""`innoflush advise --inventory FILE`: the command's fleet branch (commands/advise.py)."""

from __future__ import annotations

import sys

import click

from ..errors import OptionError
from ..fleet.inventory import load_inventory
from ..fleet.run import FleetSettings, advise_fleet, advise_host
from ..fleet.table import fleet_exit, json_line, render_table, summary
from ..live.client_options import resolve_options

# Options of a lone advise that make no sense for a fleet: the inventory gives each
# host's address; --measure probes this host's disk; the one-report outputs.
REFUSED = (("host", "-h/--host"), ("port", "-P/--port"), ("socket", "-S/--socket"),
           ("measure", "--measure"), ("prom_path", "--prom"), ("html_file", "--html"),
           ("png_dir", "--png"), ("capture_path", "--from"))


def check_fleet_options(given: dict, concurrency: int | None) -> None:
    for key, flag in REFUSED:
        if given.get(key) not in (None, False):
            raise OptionError(f"{flag} cannot be used with --inventory (the inventory gives "
                             "each host; see docs/commands/advise-inventory.md)")
    if concurrency is not None and concurrency < 1:
        raise OptionError(f"--concurrency must be at least 1 (got {concurrency})")


def advise_inventory(inventory: str, concurrency: int, settings: FleetSettings,
                     as_json: bool, prompt_password: bool, prompt,
                     width: int | None = None, check_dir: str | None = None) -> None:
    """Advise every host (or, with check_dir, check each against its saved report),
    print the fleet worst first and exit with its code."""
    hosts = load_inventory(inventory)
    work, done = advise_host, "advised"
    if check_dir is not None:
        from functools import partial

        from ..fleet.check import check_host, index_reports

        work, done = partial(check_host, reports=index_reports(check_dir)), "checked"
    # the option files and login path fail now (exit 2), not once per host
    resolve_options(defaults_file=settings.defaults_file, login_path=settings.login_path,
                    ssl_mode=settings.ssl_mode, ssl_ca=settings.ssl_ca,
                    ssl_cert=settings.ssl_cert, ssl_key=settings.ssl_key,
                    connect_timeout=settings.connect_timeout)
    if prompt_password:
        settings.password = prompt(f"Password for the {len(hosts)} hosts of {inventory}")
    show = not as_json and sys.stderr.isatty()
    seen = [0, 0]

    def on_result(r: dict) -> None:
        seen[0] += 1
        seen[1] += r["status"] != "ok"
        if r.get("check"):   # each host's check joins the track record, in this thread
            from ..advisor.track_record import append

            append(r["check"])
        if as_json:
            click.echo(json_line(r))
        if show:
            click.echo(f"\r{done} {seen[0]}/{len(hosts)} ({seen[1]} failed)", err=True,
                       nl=False)

    run = advise_fleet(hosts, settings, concurrency, on_result=on_result, work=work)
    if show:
        click.echo("", err=True)
    if check_dir is not None:
        from ..fleet.check import check_summary, fleet_check_exit, render_check_table

        if not as_json:
            click.echo(render_check_table(run.results, width), nl=False)
        click.echo(check_summary(run.results, run.not_done, run.seconds,
                                 None if as_json else width), nl=False, err=as_json)
        code = fleet_check_exit(run.results)
    else:
        if not as_json:
            click.echo(render_table(run.results, width), nl=False)
        click.echo(summary(run.results, run.not_done, concurrency, run.max_concurrent,
                           run.seconds, None if as_json else width), nl=False, err=as_json)
        code = fleet_exit(run.results)
    if run.interrupted:
        raise KeyboardInterrupt
    if code:
        sys.exit(code)
