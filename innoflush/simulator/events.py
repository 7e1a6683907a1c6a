"""The simulation's clock and event loop, waking a simulated thread that may be asleep on
an event, and the type of the generators simulated threads run.

A thread that goes to sleep on a wake-up event leaves it in a field; whoever has work
for it succeeds the event. The thread may not have slept yet (no event), or may have
been woken already by somebody else in the same instant (an event succeeds only once).

Waking is a hand-off that skips simpy's schedule: the event waits in a FIFO of the
current instant instead of the heap (Environment below), and runs in the same order.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Generator
from heapq import heappop, heappush
from typing import Any, TypeVar

import simpy
from simpy.core import EmptySchedule, StopSimulation
from simpy.events import NORMAL, PENDING, Event, Timeout

_T = TypeVar("_T")
# What a simulated thread (or a step of one, run with `yield from`) is: a generator that
# yields simpy events and returns _T.
SimGen = Generator[Event, Any, _T]


class Environment(simpy.Environment):
    """simpy's Environment with hand-offs and a cheaper timeout.

    An event handed off (wake()) is processed exactly where simpy would have processed
    it, had it been succeeded: after every event scheduled before it for the same
    instant, before any scheduled after it. It waits in a FIFO beside the heap instead
    of in it (hand-offs are all for the current instant, so the FIFO is in order): no
    heap push and pop, no schedule() call."""

    def __init__(self) -> None:
        super().__init__()
        self._handoffs: deque[tuple[float, int, int, Event]] = deque()

    def timeout(self, delay: float, value: Any = None) -> Timeout:  # type: ignore[override]
        # Timeout.__init__ and schedule() inlined: two calls less on the hottest path
        if delay < 0:
            raise ValueError(f"Negative delay {delay}")
        ev = Timeout.__new__(Timeout)
        ev.env = self
        ev.callbacks = []
        ev._value = value
        ev._delay = delay
        ev._ok = True
        heappush(self._queue, (self._now + delay, NORMAL, next(self._eid), ev))
        return ev

    def step(self) -> None:
        """simpy's step: process the next event, the heap's or the oldest hand-off."""
        queue, handoffs = self._queue, self._handoffs
        # (time, priority, eid) tuples: eids are unique, the events never compared
        if handoffs and (not queue or handoffs[0] < queue[0]):
            self._now, _, _, event = handoffs.popleft()
        else:
            try:
                self._now, _, _, event = heappop(queue)
            except IndexError:
                raise EmptySchedule from None
        callbacks, event.callbacks = event.callbacks, None  # type: ignore[assignment]
        try:
            for callback in callbacks:
                callback(event)
        except StopSimulation:
            event.callbacks = callbacks[callbacks.index(callback) + 1:]
            self.schedule(event, -1)  # type: ignore[arg-type]
            raise
        if not event._ok and not hasattr(event, "_defused"):
            exc = type(event._value)(*event._value.args)
            exc.__cause__ = event._value
            raise exc


def wake(event: Event | None) -> None:
    """Hand off to the thread asleep on `event`, unless there is none or it has been
    woken already."""
    if event is not None and event._value is PENDING:
        env = event.env
        event._ok = True
        event._value = None
        try:
            handoffs = env._handoffs  # type: ignore[attr-defined]
        except AttributeError:   # a plain simpy Environment (unit tests of the parts)
            env.schedule(event)
            return
        handoffs.append((env._now, NORMAL, next(env._eid), event))
