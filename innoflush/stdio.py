"""Standard output that fails in one line: `innoflush simulate ... > /dev/full` ends with
`innoflush: error: cannot write to standard output: No space left on device`, exit 1,
instead of a traceback (or Python's "Exception ignored" at the flush on the way out).

The installed script (innoflush/commands/entry.py) puts sys.stdout on a raw writer of its own whose
failures are StdoutError, so the click group (innoflush/commands/root.py) can tell them from any
other OSError. A failed write drops the rest of the output: what is still buffered would
fail again at the interpreter's last flush. A closed pipe (`| head`) stays quiet, as
before. Only the standard library here: entry.py answers --help without importing click.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator

EXIT_STDOUT = 1


class StdoutError(OSError):
    """A write to standard output failed (a full device, an I/O error)."""


class _Raw(io.RawIOBase):
    """File descriptor 1 as a raw stream whose failures are StdoutError."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self.failed = False

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, b) -> int:
        if self.failed:
            return len(b)   # reported once already: the rest is dropped
        try:
            return os.write(self._fd, b)
        except BrokenPipeError:
            self.failed = True
            raise
        except OSError as exc:
            self.failed = True
            raise StdoutError(exc.errno, exc.strerror) from None


def _install() -> _Raw | None:
    out = sys.stdout
    if out is None or out is not sys.__stdout__:
        return None   # closed (`>&-`) or already replaced: left alone
    try:
        fd = out.fileno()
    except (OSError, ValueError):
        return None
    raw = _Raw(fd)
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(raw), encoding=out.encoding,
                                  errors=out.errors, line_buffering=out.line_buffering)
    return raw


def report(exc: StdoutError) -> None:
    """The one line for a failed standard output (stderr may be gone too: then silence)."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"innoflush: error: cannot write to standard output: "
                         f"{exc.strerror}\n")
        sys.stderr.flush()


@contextlib.contextmanager
def guarded_stdout() -> Iterator[None]:
    """Run the command with stdout on the guarded writer, and flush it before leaving, so
    a failure at the last flush is reported here (exit 1) rather than by the interpreter."""
    raw = _install()
    try:
        yield
    except StdoutError as exc:   # raised past click (its main lets an OSError through)
        report(exc)
        raise SystemExit(EXIT_STDOUT) from None
    except BrokenPipeError:      # the reader went away (`| head`): quietly, as click does
        raise SystemExit(1) from None
    finally:
        if raw is not None:
            try:
                sys.stdout.flush()
            except StdoutError as exc:
                report(exc)
                raise SystemExit(EXIT_STDOUT) from None
            except BrokenPipeError:
                raise SystemExit(1) from None
