"""Fractional counts carried from event to event.

The workload's per-commit figures are means, mostly fractions of a page (the pages a
commit dirties, the share of them hot, the share of first writes doublewritten:
docs/model.md, 'Fractions carried'); the simulated server dirties, re-dirties and
doublewrites whole pages, so the fraction left over at one event is carried to the next
and the long-run count matches the mean exactly, without random draws.
"""

from __future__ import annotations


class Carry:
    __slots__ = ("frac",)

    def __init__(self) -> None:
        self.frac = 0.0

    def take(self, due: float, limit: int | None = None) -> int:
        """Add `due` units and return the whole units owed so far (at most `limit`),
        keeping the rest for the next call."""
        self.frac += due
        n = int(self.frac)
        if limit is not None and n > limit:
            n = limit
        self.frac -= n
        return n
