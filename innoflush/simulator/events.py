"""Waking a simulated thread that may be asleep on an event, and the type of the
generators simulated threads run.

A thread that goes to sleep on a wake-up event leaves it in a field; whoever has work
for it succeeds the event. The thread may not have slept yet (no event), or may have
been woken already by somebody else in the same instant (an event succeeds only once).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, TypeVar

from simpy.events import Event

_T = TypeVar("_T")
# What a simulated thread (or a step of one, run with `yield from`) is: a generator that
# yields simpy events and returns _T.
SimGen = Generator[Event, Any, _T]


def wake(event: Event | None) -> None:
    """Succeed `event` unless there is none or it has triggered already."""
    if event is not None and not event.triggered:
        event.succeed()
