"""The installed `innoflush` script: `innoflush --help` and `--version` answered before
click is imported (importing click alone takes longer than the start-up target of
docs/benchmarks.md); everything else goes to the click group in innoflush/commands/root.py."""

from __future__ import annotations

import sys

from .. import __version__
from ..stdio import guarded_stdout
from ._top_help import TOP_HELP, TOP_HELP_WIDTH


def _click_width() -> int:
    """The width click's HelpFormatter would wrap the help at in this terminal."""
    import shutil

    return max(min(shutil.get_terminal_size().columns, 80) - 2, 50)


def main() -> None:
    with guarded_stdout():   # stdout on a full device: one line, exit 1 (innoflush/stdio.py)
        _main()


def _main() -> None:
    args = sys.argv[1:]
    if args in (["--help"], ["-h"]) and _click_width() == TOP_HELP_WIDTH:
        sys.stdout.write(TOP_HELP)
        sys.stdout.flush()
        return
    if args == ["--version"]:
        sys.stdout.write(f"innoflush, version {__version__}\n")
        sys.stdout.flush()
        return
    from .. import signals
    from .root import main as click_main

    # the process ends with the command: its stop-signal handlers stay to the end
    # (innoflush/signals.py), no default action in the last steps of its exit
    signals.for_the_process()

    click_main(prog_name="innoflush")
