"""`innoflush measure PATH`: a thin click wrapper around innoflush.measure.measure()."""

from __future__ import annotations

import json
import sys
import time

import click

from ..bars import want_bars
from ..errors import InnoflushError, OptionError, UsageError
from ..measure.run import (
    DEFAULT_DURATION_S,
    DEFAULT_FILE_SIZE,
    DEFAULT_WARMUP_OPS,
    DIRECT_MODES,
    ENGINES,
    QUICK_DURATION_S,
    measure,
    plan_tests,
    quick_tests,
)
from ..outfile import attempt
from ..output.charts.output import check_targets, emit
from ..profiles import OPS, save_profile
from ..profiles.store import check_save_profile
from ..units import parse_list, parse_size
from .option_types import chart_options, text_width, wide_option

PROGRESS_AFTER_S = 2.0


class _Progress:
    """'[k/n] test' on stderr, once the run is expected to (or does) last over ~2 s."""

    def __init__(self, n_tests: int, per_test_s: float | None):
        self.start = time.monotonic()
        est = (per_test_s or 0) * n_tests
        self.eager = est > PROGRESS_AFTER_S
        self.shown = False

    def __call__(self, k: int, n: int, label: str) -> None:
        if self.eager or time.monotonic() - self.start > PROGRESS_AFTER_S:
            click.echo(f"\r\033[K[{k}/{n}] {label}", err=True, nl=False)
            self.shown = True

    def done(self) -> None:
        if self.shown:
            click.echo("\r\033[K", err=True, nl=False)


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise OptionError(f"not a whole number: {text!r}") from None


def _option(name: str, parse, *args):
    """parse(*args), its error prefixed with the option it is about."""
    try:
        return parse(*args)
    except UsageError as exc:
        raise OptionError(f"{name}: {exc}") from None


@click.command("measure")
@click.argument("path")
@click.option("--quick", is_flag=True,
              help="Short preset: 16k and 2M, every op, O_DIRECT, plus buffered 16k "
                   f"fsync/fdatasync; {QUICK_DURATION_S:g} s per test.")
@click.option("--sizes", default=None, metavar="LIST",
              help="Write sizes, e.g. 4k,16k,2M (default 4k,16k,2M).")
@click.option("--ops", default=None, metavar="LIST",
              help=f"Operations among {','.join(OPS)} (default all).")
@click.option("--direct", type=click.Choice(DIRECT_MODES), default=None,
              help="O_DIRECT tests, buffered tests, or both (default both).")
@click.option("--jobs", default=None, metavar="LIST",
              help="Concurrent writers per test, e.g. 1,4 (default 1).")
@click.option("--duration", type=float, default=None, metavar="SECONDS",
              help=f"Time per test (default {DEFAULT_DURATION_S:g}, "
                   f"{QUICK_DURATION_S:g} with --quick).")
@click.option("--count", type=int, default=None, metavar="N",
              help="Measured ops per job per test, instead of --duration.")
@click.option("--warmup", type=int, default=DEFAULT_WARMUP_OPS, show_default=True,
              metavar="N", help="Ops dropped at the start of each test, per job.")
@click.option("--file-size", "file_size", default="64M", show_default=True, metavar="SIZE",
              help="Probe file region each job writes through (wrapping around).")
@click.option("--engine", type=click.Choice(ENGINES), default="builtin", show_default=True,
              help="Measure with the built-in probe or with fio.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON (keys: docs/commands/measure.md).")
@click.option("--save", "save_name", default=None, metavar="NAME",
              help="Also save the result as device profile NAME.")
@click.option("--force", is_flag=True, help="With --save, replace an existing profile.")
@click.option("--prom", "prom_path", default=None, metavar="FILE",
              help="Also write the result as Prometheus metrics to FILE (atomically), for "
                   "node_exporter's textfile collector; see docs/prometheus.md.")
@chart_options
@wide_option
@click.option("--bars/--no-bars", default=None,
              help="A bar of each test's sync p50 with a mark at its p99 (default: only "
                   "when stdout is a terminal; never with --json).")
def measure_command(path: str, quick: bool, sizes: str | None, ops: str | None,
                    direct: str | None, jobs: str | None, duration: float | None,
                    count: int | None, warmup: int, file_size: str, engine: str,
                    as_json: bool, save_name: str | None, force: bool,
                    prom_path: str | None, html_file: str | None,
                    png_dir: str | None, wide: bool, bars: bool | None) -> None:
    """Measure write and sync latency of the storage under directory PATH.

    Writes a probe file it creates in PATH (removed at the end, also on Ctrl-C, SIGTERM
    and SIGHUP), and reports write, fsync, fdatasync and O_DSYNC latency percentiles, the
    device's facts and whether its write cache looks power-loss protected.
    """
    if quick and any(v is not None for v in (sizes, ops, direct, jobs)):
        raise OptionError("--quick is a preset: it cannot be combined with --sizes, --ops, "
                         "--direct or --jobs")
    if duration is not None and count is not None:
        raise OptionError("give --duration or --count, not both")
    if quick:
        specs = quick_tests()
    else:
        specs = plan_tests(
            _option("--sizes", parse_list, sizes, parse_size) if sizes
            else (4096, 16384, 2 * 1024 * 1024),
            parse_list(ops) if ops else OPS,
            direct or "both",
            _option("--jobs", parse_list, jobs, _int) if jobs else (1,))
    if count is None and duration is None:
        duration = QUICK_DURATION_S if quick else DEFAULT_DURATION_S
    fsize = _option("--file-size", parse_size, file_size) if file_size else DEFAULT_FILE_SIZE

    if save_name is not None:
        check_save_profile(save_name, force)   # the store too: exit 2 before the run

    if prom_path is not None:
        from ..output.prom import check_prom_path

        check_prom_path(prom_path)   # exit 2 before the run, not after it

    check_targets(html_file, png_dir)
    progress = None
    if not as_json and sys.stderr.isatty():
        progress = _Progress(len(specs), duration)
    try:
        result = measure(path, tests=specs, duration_s=duration, count=count,
                         warmup_ops=warmup, file_size=fsize, engine=engine, quick=quick,
                         progress=progress)
    finally:
        if progress is not None:
            progress.done()

    # a file that cannot be written after all (a disk filled during the run) fails the
    # command only after the report is printed: the measurement is not lost
    failures: list[InnoflushError] = []
    saved = None
    if save_name is not None:
        saved = attempt(failures, lambda: save_profile(result.to_profile(save_name),
                                                       overwrite=force))
    if prom_path is not None:
        from ..output.prom import measure_metrics, write_prom

        attempt(failures, lambda: write_prom(prom_path, measure_metrics(result)))
    from ..output.measure_text import render
    attempt(failures, lambda: emit("measure", result.to_dict(), html_file, png_dir,
                                   render(result)))
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
    else:
        click.echo(render(result, bars=want_bars(bars), width=text_width(wide)))
        if saved is not None:
            click.echo(f"\nSaved as device profile {save_name!r}: {saved}")
    if failures:
        raise failures[0]
