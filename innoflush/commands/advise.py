"""`innoflush advise`: read a live MySQL/MariaDB and recommend durability settings."""

from __future__ import annotations

import sys

import click

from ..errors import OptionError
from ..live.client_options import resolve_options
from ..live.connect import connect, server_error
from ..output.charts.output import check_targets
from .option_types import SEED, chart_options, text_width, wide_option

HELP = """Read a live MySQL/MariaDB server and recommend innodb_flush_method,
innodb_flush_log_at_trx_commit, sync_binlog, innodb_use_fdatasync and innodb_doublewrite,
with the evidence (SHOW GLOBAL STATUS deltas over --interval), the predicted effect
(simulated on the device profile) and the risk. Read-only: it sends SELECT and SHOW only.

\b
As the mysql client: -h host, -P port, -u user, -S socket, -p prompts for the
password (never -pSECRET: it would show in the process list), --login-path NAME
reads ~/.mylogin.cnf, --ssl-mode as the client's. The password: the prompt, the
login path, the [client] section of --defaults-file or ~/.my.cnf, or MYSQL_PWD;
it is never printed or stored. --help shows this help.

\b
--inventory FILE advises every host of an Ansible INI/YAML inventory or a plain
list (host[:port] a line), --concurrency at once: one fleet table, worst first,
or one JSON object a line (--json); exit 2 when any host failed, else 3 when
any has a recommendation (docs/commands/advise-inventory.md).

\b
--check REPORT.json compares a saved report (advise --json) with the server
now, after a change: what was applied, whether the workload is still the one
the report measured, each figure measured beside its prediction; exit 0 held,
5 did not hold, 4 no verdict (not comparable, nothing applied, not priced).
Each check joins the track record that --track-record prints
(docs/commands/advise-check.md).

\b
Exit codes:
  0    nothing to change
  3    recommendations made
  4    a prediction was wanted (--profile or --measure) and the model cannot
       explain the workload it saw: no predicted number is printed, the report
       says why; --check: no verdict
  5    --check: the prediction did not hold
  2    usage or connection error (bad option, unreachable server, access denied,
       missing privilege)
  1    other failure (no InnoDB on the server, server restarted or counters reset
       in every interval, lost connection not back within 60 s)
  130  interrupted (Ctrl-C); 143 terminated (SIGTERM); 129 hung up (SIGHUP)
"""


def _progress(enabled: bool, samples: int):
    if not enabled:
        return None

    def show(i: int, frac: float) -> None:
        click.echo(f"\rsampling interval {i + 1}/{samples}: {frac:4.0%}", err=True, nl=False)
        if frac >= 1.0 and i + 1 == samples:
            click.echo("", err=True)
    return show


class _AdviseCommand(click.Command):
    """Refuses a password on the command line (the mysql client's -pSECRET, --password=X)
    before click parses it: click would take -pSECRET for bundled flags, or echo the value
    as an unexpected argument; the message never repeats it."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        takes_value = {name for p in self.params if isinstance(p, click.Option)
                       and not p.is_flag for name in p.opts}
        for i, arg in enumerate(args):
            if arg == "--":
                break
            if i and args[i - 1] in takes_value:
                continue   # a value, e.g. --user -p...
            inline = (arg.startswith("-p") and len(arg) > 2) or \
                arg.startswith("--password=")
            follows = arg in ("-p", "--password") and i + 1 < len(args) and \
                not args[i + 1].startswith("-")
            if inline or follows:
                raise OptionError(
                    "-p/--password takes no value: a password on the command line shows in "
                    "the process list; give -p alone to be prompted, or use --login-path, "
                    "--defaults-file or MYSQL_PWD")
        return super().parse_args(ctx, args)


@click.command("advise", help=HELP, cls=_AdviseCommand,
               context_settings={"help_option_names": ["--help"]})   # -h is the host
@click.option("--host", "-h", "-H", default=None, help="Server host (default: localhost).")
@click.option("--port", "-P", type=int, default=None, help="Server port (default: 3306).")
@click.option("--socket", "-S", default=None, help="Unix socket file.")
@click.option("--user", "-u", default=None, help="User (default: the login name).")
@click.option("--defaults-file", type=click.Path(dir_okay=False), default=None,
              help="MySQL option file; its [client] section gives user, password, host, "
                   "port, socket (instead of ~/.my.cnf).")
@click.option("--login-path", default=None, metavar="NAME",
              help="Read user, password, host, port, socket from this group of "
                   "~/.mylogin.cnf (mysql_config_editor; $MYSQL_TEST_LOGIN_FILE overrides "
                   "the path).")
@click.option("--inventory", default=None, metavar="FILE",
              help="Advise every host of this inventory (Ansible INI or YAML, or one "
                   "host[:port] a line) instead of one server; credentials per host from "
                   "the option file's [client_<group>] and [client_<host>] sections.")
@click.option("--concurrency", type=int, default=None, metavar="N",
              help="With --inventory: hosts advised at once (default: 8).")
@click.option("--password", "-p", "prompt_password", is_flag=True,
              help="Prompt for the password (takes no value: a password on the command "
                   "line shows in the process list).")
@click.option("--ask-password", is_flag=True, help="Same as -p.")
@click.option("--ssl-mode", default=None, metavar="MODE",
              help="TLS as the mysql client: DISABLED, PREFERRED (default: TLS if the "
                   "server offers it, unverified), REQUIRED, VERIFY_CA (needs --ssl-ca), "
                   "VERIFY_IDENTITY (also the host name).")
@click.option("--ssl-ca", default=None, help="CA certificate file (TLS).")
@click.option("--ssl-cert", default=None, help="Client certificate file (TLS).")
@click.option("--ssl-key", default=None, help="Client key file (TLS).")
@click.option("--connect-timeout", type=float, default=10.0, show_default=True,
              help="Seconds each step of connecting may take (TCP connect, the server's "
                   "greeting, the TLS and login handshake); > 0.")
@click.option("--interval", type=float, default=10.0, show_default=True,
              help="Seconds between the two SHOW GLOBAL STATUS snapshots (1-3600).")
@click.option("--samples", type=int, default=1, show_default=True,
              help="Consecutive intervals to sample (1-1000).")
@click.option("--profile", "profile_ref", default=None,
              help="Device profile of the datadir's storage: a name (`innoflush profiles "
                   "list`) or a JSON file.")
@click.option("--measure", is_flag=True,
              help="Measure the datadir's device now (server on this host only).")
@click.option("--durability", type=click.Choice(["strict", "relaxed"]), default="strict",
              show_default=True,
              help="strict: trx_commit=1, sync_binlog=1; relaxed: trx_commit=2 (loses up to "
                   "innodb_flush_log_at_timeout s in an OS crash).")
@click.option("--connections", type=int, default=None,
              help="Concurrent connections of the workload, for the fit (default: average "
                   "Threads_running).")
@click.option("--cpu-cores", type=int, default=None,
              help="Server CPU cores, for the fit (default: this host's).")
@click.option("--workload", "workload_ref", default=None, metavar="NAME|FILE",
              help="Workload profile (`innoflush lab calibrate --save NAME`, or a JSON "
                   "file): predict with its per-transaction costs instead of fitting them.")
@click.option("--ignore-rule", "ignore_rules", multiple=True, metavar="ID",
              help="Leave out the findings of this rule (repeatable); the ids are in "
                   "docs/advisor-rules.md and in each finding's id.")
@click.option("--no-predict", is_flag=True, help="Skip the simulated predictions.")
@click.option("--seed", type=SEED, default=1, show_default=True, help="Simulation seed.")
@click.option("--scheduler", metavar="URL", envvar="INNOFLUSH_SCHEDULER", default=None,
              help="Run the predictions' simulations on a Dask cluster: its scheduler, "
                   "tcp://HOST:PORT (env INNOFLUSH_SCHEDULER; needs innoflush[dask]); "
                   "default: a process pool on this host. Same results either way.")
@click.option("--from", "capture_path", default=None, metavar="DIR|FILE", expose_value=False,
              callback=lambda ctx, _p, v: ctx.meta.__setitem__("capture_path", v),
              help="Advise from captured SHOW GLOBAL VARIABLES and two or more SHOW GLOBAL "
                   "STATUS snapshots (mysql -B, mysqladmin extended-status -r -i N, a "
                   "pt-stalk directory) instead of a live server; --interval then gives "
                   "mysqladmin's -i N.")
@click.option("--check", "check_path", default=None, metavar="REPORT.json",
              help="Check a saved report (advise --json) against this server now (live "
                   "or --from): what was applied, the workload then and now, each "
                   "figure measured beside its prediction; exit 0 held, 5 did not hold, "
                   "4 no verdict (docs/commands/advise-check.md).")
@click.option("--track-record", is_flag=True,
              help="Print how often the checks' quoted intervals held on this machine's "
                   "servers, per change and class of connections (no server is read).")
@click.option("--share", "share_path", default=None, metavar="FILE",
              help="With --track-record: also write the record to FILE (no host names, "
                   "addresses or users), for sending.")
@click.option("--json", "as_json", is_flag=True,
              help="JSON output (keys: docs/commands/advise.md).")
@click.option("--prom", "prom_path", default=None, metavar="FILE",
              help="Also write the report as Prometheus metrics to FILE (atomically), for "
                   "node_exporter's textfile collector; see docs/prometheus.md.")
@chart_options
@wide_option
def advise_command(host, port, socket, user, defaults_file, login_path, inventory,
                   concurrency, prompt_password,
                   ask_password, ssl_mode, ssl_ca, ssl_cert, ssl_key, connect_timeout,
                   interval, samples, profile_ref, measure, durability, connections,
                   cpu_cores, workload_ref, ignore_rules, no_predict,
                   seed, scheduler, check_path, track_record, share_path, as_json,
                   prom_path, html_file, png_dir, wide) -> None:
    import pymysql

    from ..advisor.advise import advise
    from ..advisor.report import to_json
    from ..advisor.request import AdviseRequest
    from ..output.advise_text import render_text

    click_ctx = click.get_current_context()
    before = None
    if check_path is not None or track_record or share_path is not None:
        from .advise_check import check_or_record

        before = check_or_record(click_ctx, check_path, track_record, share_path, as_json,
                                 text_width(wide))
        if before is None:   # --track-record: printed
            return
        no_predict = True
    request = AdviseRequest(interval_s=interval, samples=samples, measure=measure,
                            durability=durability, connections=connections,
                            cpu_cores=cpu_cores, ignore_rules=list(ignore_rules),
                            predict=not no_predict, seed=seed, profile_ref=profile_ref)
    request.check()   # exit 2 before connecting
    if prom_path is not None:
        from ..output.prom import check_prom_path

        check_prom_path(prom_path)   # exit 2 before connecting
    check_targets(html_file, png_dir)
    request.load_device()
    if workload_ref:
        from ..simulator.workload_profile import load_workload

        request.workload_profile = load_workload(workload_ref)   # exit 2 before connecting
    executor = _executor(click_ctx, scheduler, request.predicts)
    if inventory is None and concurrency is not None:
        raise OptionError("--concurrency needs --inventory")
    if inventory is not None:
        from ..fleet.run import DEFAULT_CONCURRENCY, FleetSettings
        from .advise_inventory import advise_inventory, check_fleet_options

        check_fleet_options(dict(host=host, port=port, socket=socket, measure=measure,
                                 prom_path=prom_path, html_file=html_file, png_dir=png_dir,
                                 capture_path=click_ctx.meta.get("capture_path")),
                            concurrency)
        settings = FleetSettings(
            user=user, defaults_file=defaults_file, login_path=login_path,
            ssl_mode=ssl_mode, ssl_ca=ssl_ca, ssl_cert=ssl_cert, ssl_key=ssl_key,
            connect_timeout=connect_timeout, executor=executor, request=request)
        advise_inventory(inventory, concurrency or DEFAULT_CONCURRENCY, settings, as_json,
                         ask_password or prompt_password, _prompt, text_width(wide),
                         check_dir=before if isinstance(before, str) else None)
        return
    if click_ctx.meta.get("capture_path") is not None:   # --from: no server to connect to
        from .advise_from import advise_from

        advise_from(click_ctx, click_ctx.meta["capture_path"], request, as_json=as_json,
                    prom_path=prom_path, html_file=html_file, png_dir=png_dir,
                    executor=executor, width=text_width(wide), check_against=before)
        return
    opts = resolve_options(host=host, port=port, socket=socket, user=user,
                           defaults_file=defaults_file, login_path=login_path,
                           ask_password=ask_password or prompt_password, ssl_mode=ssl_mode,
                           ssl_ca=ssl_ca, ssl_cert=ssl_cert, ssl_key=ssl_key,
                           connect_timeout=connect_timeout, prompt=_prompt)
    session = connect(opts)
    try:
        report = advise(session, request, conn_public=opts.public(session.tls),
                        is_local=opts.is_local,
                        open_session=lambda: connect(opts, read_tls=False), executor=executor,
                        progress=_progress(not as_json and sys.stderr.isatty(), samples))
    except pymysql.err.MySQLError as exc:
        raise server_error(exc, opts) from None
    finally:
        session.close()
    if before is not None:
        from .advise_check import print_check

        print_check(before, report, as_json, text_width(wide), prom_path, html_file,
                    png_dir)
        return
    from ..output.prom import advise_metrics
    from .report_out import print_report

    print_report("advise", report, as_json=as_json, json_text=to_json(report),
                 text=lambda w: render_text(report, w), width=text_width(wide),
                 html_file=html_file, png_dir=png_dir, prom_path=prom_path,
                 metrics=advise_metrics)


def _executor(click_ctx: click.Context, scheduler: str | None, predicts: bool):
    """Where the predictions run (innoflush.executor), closed with the command; None when
    nothing is predicted. A Dask scheduler is reached now, before the server is read or
    the capture parsed: an unreachable one fails at once (exit 2), not after the
    sampling. The local pool starts its processes on its first batch."""
    from ..executor import make_executor, scheduler_address

    address = scheduler_address(scheduler)   # a malformed URL: exit 2 in any case
    if not predicts:
        return None
    executor = make_executor(address)
    click_ctx.call_on_close(executor.close)
    return executor


def _prompt(text: str) -> str:
    if not sys.stdin.isatty():
        # No terminal to hide the input on (a script pipes the password, as it may to the
        # mysql client): read the line, without getpass's warning about echoing
        click.echo(f"{text}: ", err=True, nl=False)
        line = sys.stdin.readline()
        click.echo(err=True)
        if not line:
            raise KeyboardInterrupt   # end of input at a prompt, as click's Abort
        return line.rstrip("\r\n")
    try:
        return click.prompt(text, hide_input=True, default="", show_default=False,
                            err=True)
    except click.exceptions.Abort:
        raise KeyboardInterrupt from None
