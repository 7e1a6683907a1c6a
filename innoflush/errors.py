"""Errors a user can cause or meet, each mapped to one clear line and an exit code."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class InnoflushError(Exception):
    """A failure to report as one line on stderr, never as a traceback."""

    exit_code = EXIT_FAILURE


class UsageError(InnoflushError):
    """Bad input from the user: a wrong path, value, name or file."""

    exit_code = EXIT_USAGE


class OptionError(UsageError):
    """A bad value of a command-line option, or options that do not go together: its line
    ends with where to read about them, ``(see 'innoflush CMD --help')``, as click's own
    usage errors do. Not for a file's contents or a connection: the help cannot fix those.

    ``command`` is the one being run when the error is made (``innoflush lab run``, from
    click's current context when click is in use), so that a check deep in the library
    still names it; None outside a command. A string, not the context: the error may be
    pickled back from a worker process."""

    def __init__(self, message: str):
        super().__init__(message)
        self.command: str | None = None
        click = sys.modules.get("click")   # never imported here: the library runs without it
        ctx = click.get_current_context(silent=True) if click is not None else None
        if ctx is not None:
            names = []
            while ctx.parent is not None:
                names.append(ctx.info_name or "")
                ctx = ctx.parent
            self.command = " ".join(["innoflush", *reversed([n for n in names if n])])


@contextlib.contextmanager
def option_values() -> Iterator[None]:
    """Inside, a plain UsageError is an OptionError: for the library's checks of values the
    command line gave (a ServerConfig of the options), not of a file (a ProfileError and
    the other subclasses pass unchanged)."""
    try:
        yield
    except UsageError as exc:
        if type(exc) is not UsageError:
            raise
        raise OptionError(str(exc)) from None


class ProfileError(UsageError):
    """A device or workload profile that is missing, unknown or invalid."""
