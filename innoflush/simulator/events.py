"""Waking a simulated thread that may be asleep on an event.

A thread that goes to sleep on a wake-up event leaves it in a field; whoever has work
for it succeeds the event. The thread may not have slept yet (no event), or may have
been woken already by somebody else in the same instant (an event succeeds only once).
"""

from __future__ import annotations

from simpy.events import Event


def wake(event: Event | None) -> None:
    """Succeed `event` unless there is none or it has triggered already."""
    if event is not None and not event.triggered:
        event.succeed()
