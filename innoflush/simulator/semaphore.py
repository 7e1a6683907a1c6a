"""A counting semaphore for simpy that costs no event when a slot is free.

simpy's Resource and Container schedule an event for every request and release, even
uncontended ones; with several resources touched per commit that dominates run time.
Here an uncontended acquire returns None (nothing to yield) and a release only schedules
an event when somebody is waiting.
"""

from __future__ import annotations

from collections import deque

import simpy
from simpy.events import Event

from .events import wake


class Semaphore:
    __slots__ = ("env", "capacity", "free", "waiters")

    def __init__(self, env: simpy.Environment, capacity: int):
        self.env = env
        self.capacity = capacity
        self.free = capacity
        self.waiters: deque[tuple[int, Event]] = deque()

    def acquire(self, n: int = 1, first: bool = False) -> Event | None:
        """Take n slots; None when they were free, else the event that grants them."""
        if self.free >= n and not self.waiters:
            self.free -= n
            return None
        ev = self.env.event()
        if first:
            self.waiters.appendleft((n, ev))
        else:
            self.waiters.append((n, ev))
        return ev

    def release(self, n: int = 1) -> None:
        self.free += n
        waiters = self.waiters
        while waiters and waiters[0][0] <= self.free:
            k, ev = waiters.popleft()
            self.free -= k
            wake(ev)   # a hand-off: the waiter runs next, no event scheduled

    def withdraw(self, ev: Event) -> bool:
        """Give up a pending acquire; False if it was granted meanwhile (then the slot is
        the caller's)."""
        for i, (_k, waiting) in enumerate(self.waiters):
            if waiting is ev:
                del self.waiters[i]
                return True
        return False

    @property
    def in_use(self) -> int:
        return self.capacity - self.free
