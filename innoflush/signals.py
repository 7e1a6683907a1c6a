"""One stop policy for every command: SIGINT, SIGTERM and SIGHUP end the work the same way.

Every cleanup path of the long commands (measure's probe file; the lab's servers,
containers, work directories and client processes; advise's sessions) is a ``finally:``
or an ``except KeyboardInterrupt:`` written for Ctrl-C. SIGTERM (``timeout``, systemd, a
CI cancel, ``docker stop``) and SIGHUP (an SSH session dropping) killed the process at
once with their default action and skipped them all. So the three are one event here:

- The first of them is recorded and raised as ``Interrupted``, a KeyboardInterrupt that
  carries the signal's number, so the existing cleanup runs; inside ``deferred()`` (a
  step that creates something and must learn its name) it is raised when the block ends.
- Every later one is recorded and nothing more: the cleanup the first one started is
  never cut short. Each cleanup step is bounded on its own (a server's shutdown is
  killed after its timeout, client processes after a few seconds), and SIGKILL stays
  the way to force an end.
- CPython drops an exception raised while a ``__del__`` or a weakref callback runs
  ("Exception ignored in ..."), and the Docker SDK's and PyMySQL's objects run such code
  all the time. ``check()``, called at each step of the lab's work, raises again a
  signal whose first raise was lost; a command that still ran to its end exits with the
  signal's code all the same (innoflush/commands/root.py).
- Handlers are only taken on the main thread and only from a signal at its default
  disposition: a caller's own handler, and SIG_IGN (``nohup`` ignores SIGHUP), are kept.

The command exits with 128 + the signal's number (130, 143, 129) and one line on stderr:
``innoflush: interrupted``, ``innoflush: terminated (SIGTERM)``, ``innoflush: hung up
(SIGHUP)``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_WORDS = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated (SIGTERM)",
          signal.SIGHUP: "hung up (SIGHUP)"}


class Interrupted(KeyboardInterrupt):
    """The work was stopped by a signal (SIGINT, SIGTERM or SIGHUP)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def exit_code(signum: int) -> int:
    """The shell's convention for a command ended by a signal: 128 + its number."""
    return 128 + signum


def signal_of(exc: BaseException) -> int:
    """The signal that stopped the command: the Interrupted's own, else the one recorded
    (a plain KeyboardInterrupt re-raised after a cleanup, click's Abort at a prompt),
    else SIGINT (Python's own handler, an end of input at a prompt)."""
    return getattr(exc, "signum", None) or _state.received or signal.SIGINT


def stop_words(signum: int) -> str:
    """What the error line says of the signal: 'interrupted', 'terminated (SIGTERM)'..."""
    if signum in _WORDS:
        return _WORDS[signum]
    try:
        return f"stopped by {signal.Signals(signum).name}"
    except ValueError:
        return f"stopped by signal {signum}"


class _State:
    depth = 0                     # nested StopSignals blocks on the main thread
    received: int | None = None   # the first signal since the outermost block began
    deferring = 0
    process = False               # for_the_process(): the process ends with the command
    closing = False               # the command is over (its outermost block has ended)


_state = _State()


def _is_default(signum: int, handler: object) -> bool:
    return handler is (signal.default_int_handler if signum == signal.SIGINT
                       else signal.SIG_DFL)


def _on_signal(signum: int, frame: object) -> None:
    if _state.closing:
        # the command and its cleanup are over, its exit code chosen: a signal in the
        # last steps of the exit (atexit, a thread joined) ends the process at once
        os._exit(exit_code(_state.received or signum))
    first = _state.received is None
    if first:
        _state.received = signum
    if first and not _state.deferring:
        raise Interrupted(signum)


def _on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


class StopSignals:
    """While the block runs, SIGINT, SIGTERM and SIGHUP follow the policy above. Nested
    blocks (the lab's StartInterrupts under the command's own) share the outermost
    one's handlers and record; off the main thread it does nothing."""

    def __init__(self) -> None:
        self._old: dict[int, object] = {}
        self._counted = False

    def __enter__(self) -> StopSignals:
        if not _on_main_thread():
            return self
        self._counted = True
        _state.depth += 1
        if _state.depth > 1:
            return self
        _state.received = None
        _state.deferring = 0
        for signum in STOP_SIGNALS:
            try:
                if _is_default(signum, signal.getsignal(signum)):
                    self._old[signum] = signal.signal(signum, _on_signal)
            except (ValueError, OSError):
                continue
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._counted:
            return
        self._counted = False
        _state.depth -= 1
        # the record stays after the block: the command's top level reads it to choose
        # the exit code of a KeyboardInterrupt re-raised without the signal
        if _state.depth == 0 and _state.process:
            _state.closing = True      # the handlers stay until the process ends
            self._old.clear()
            return
        for signum, handler in self._old.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]
        self._old.clear()


def for_the_process() -> None:
    """The command's entry point: the process ends when the command does, so the
    outermost block keeps its handlers to the end instead of restoring the earlier ones
    (a signal then exits at once with the chosen code; see _on_signal). Not for a caller
    that goes on after the command (click's CliRunner, a library user)."""
    import atexit

    _state.process = True
    # registered first, so it runs last: once Python's own exit work is done, its
    # teardown resets a Python handler to the default action (a late signal would end
    # the process by the signal and not with its chosen code) — they are ignored instead
    atexit.register(_ignore_in_teardown)


def _ignore_in_teardown() -> None:
    if _state.closing and _on_main_thread():
        for signum in STOP_SIGNALS:
            with contextlib.suppress(ValueError, OSError):
                if signal.getsignal(signum) is _on_signal:
                    signal.signal(signum, signal.SIG_IGN)


def received() -> int | None:
    """The first stop signal of the current (or last) block, None if none came."""
    return _state.received


def check() -> None:
    """Raise Interrupted if a stop signal came (its first raise may have been dropped).
    Only for the work's steps on the main thread, never in a cleanup path."""
    if _state.depth and _state.received is not None and not _state.deferring \
            and _on_main_thread():
        raise Interrupted(_state.received)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """A signal inside the block is raised when the block ends, so what the block
    creates (a container, a server process) is assigned before the interrupt and the
    caller's cleanup sees it."""
    if not _on_main_thread():
        yield
        return
    _state.deferring += 1
    try:
        yield
    finally:
        _state.deferring -= 1
    check()


@contextlib.contextmanager
def blocked() -> Iterator[None]:
    """The stop signals held back (pthread_sigmask) for the block: a child forked inside
    starts with them blocked and sets its own dispositions before it takes any. A signal
    that comes meanwhile is delivered when the block ends."""
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    except (AttributeError, OSError, ValueError):
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def child_dispositions(ignore: tuple[int, ...] = (signal.SIGINT, signal.SIGHUP)) -> None:
    """In a forked worker that its parent stops: the signals in ignore ignored, SIGTERM
    the default (the parent's terminate()), none of the parent's Python handlers, then
    the stop signals unblocked (see blocked())."""
    for signum in STOP_SIGNALS:
        with contextlib.suppress(ValueError, OSError):
            signal.signal(signum, signal.SIG_IGN if signum in ignore else signal.SIG_DFL)
    with contextlib.suppress(AttributeError, OSError, ValueError):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


__all__ = ["STOP_SIGNALS", "Interrupted", "StopSignals", "blocked", "check",
           "child_dispositions", "deferred", "exit_code", "for_the_process", "received",
           "signal_of", "stop_words"]
