"""A stop signal while a lab server starts: never lost, never in the middle of creating it.

Two things go wrong with the plain KeyboardInterrupt while a server is being started:

- CPython drops a KeyboardInterrupt that is raised while a weakref callback or a
  ``__del__`` runs (it prints "Exception ignored in ..." and carries on). The Docker SDK's
  HTTP objects and PyMySQL's connections run such code all the time, so now and then a
  Ctrl-C was simply lost and the start went on to the end.
- An interrupt inside the call that creates the container (or spawns the server) can leave
  one created that we never learned about, so stop() could not remove it.

``StartInterrupts`` holds a start under the command's stop policy (innoflush/signals.py:
SIGINT, SIGTERM and SIGHUP alike): a signal is recorded and raised at once, except inside
``deferred()`` (raised when that block ends); ``check()``, called at each step of the
wait, raises again a signal whose first raise was dropped. Under the CLI the command's
own policy is already in place and this shares it; called as a library it takes the
three signals for the length of the start — only on the main thread and only where a
signal has its default handler: a caller that installed its own keeps it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ... import signals


class StartInterrupts:
    def __init__(self) -> None:
        self._policy = signals.StopSignals()

    @property
    def pressed(self) -> bool:
        """Whether a stop signal came (in this start, or the command's run so far)."""
        return signals.received() is not None

    def __enter__(self) -> StartInterrupts:
        self._policy.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._policy.__exit__(*exc)

    def check(self) -> None:
        """Raise KeyboardInterrupt (signals.Interrupted) if a stop signal came (its first
        raise may have been dropped by CPython)."""
        signals.check()

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """A signal inside the block is raised when the block ends, so what the block
        creates is assigned before the interrupt and the caller's cleanup sees it."""
        with signals.deferred():
            yield
