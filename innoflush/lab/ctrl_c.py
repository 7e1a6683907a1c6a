"""Ctrl-C while a lab server starts: never lost, never in the middle of creating it.

Two things go wrong with the plain KeyboardInterrupt while a server is being started:

- CPython drops a KeyboardInterrupt that is raised while a weakref callback or a
  ``__del__`` runs (it prints "Exception ignored in ..." and carries on). The Docker SDK's
  HTTP objects and PyMySQL's connections run such code all the time, so now and then a
  Ctrl-C was simply lost and the start went on to the end.
- An interrupt inside the call that creates the container (or spawns the server) can leave
  one created that we never learned about, so stop() could not remove it.

``StartInterrupts`` takes SIGINT for the length of a start: a press is recorded and raised
at once, except inside ``deferred()`` (raised when that block ends); ``check()``, called at
each step of the wait, raises again a press whose first raise was dropped. It only does so
on the main thread and when SIGINT has Python's default handler: a caller that installed
its own keeps it.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


class StartInterrupts:
    def __init__(self) -> None:
        self.pressed = False
        self._deferring = False
        self._old = None

    def __enter__(self) -> StartInterrupts:
        try:
            if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                self._old = signal.signal(signal.SIGINT, self._on_sigint)
        except ValueError:        # not the main thread: SIGINT is not delivered here
            self._old = None
        return self

    def __exit__(self, *exc) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
            self._old = None

    def _on_sigint(self, signum, frame) -> None:
        self.pressed = True
        if not self._deferring:
            raise KeyboardInterrupt

    def check(self) -> None:
        """Raise KeyboardInterrupt if Ctrl-C was pressed (its first raise may have been
        dropped by CPython)."""
        if self.pressed:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """A press inside the block is raised when the block ends, so what the block
        creates is assigned before the interrupt and the caller's cleanup sees it."""
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False
        self.check()
