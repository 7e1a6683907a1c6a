"""Latencies in fixed memory: a histogram of log-spaced buckets with a known error.

A run used to keep every commit's latency in a list (about 85 bytes a commit, two lists);
a long run's memory grew with its commits. Here a latency is counted in the bucket
[R^k, R^(k+1)) it falls in, and read back as the bucket's value 2·R^(k+1)/(1 + R), the
point whose relative distance to both edges is (R - 1)/(R + 1): with R = 1.02 every value
read back is within 0.99 % of the latency counted. Percentiles interpolate between the
order statistics on each side of their rank, as numpy's default ("linear") does on the
exact values, so each is within 0.99 % of numpy's; the mean is exact (a running sum).

The buckets cover 1 ns to about 4 days (1700 ints, allocated once); a latency outside
is counted at the edge, and a zero (a commit that waited for nothing) on its own.
"""

from __future__ import annotations

import math

R = 1.02
MAX_RELATIVE_ERROR = (R - 1) / (R + 1)     # 0.0099
_INV_LOG_R = 1.0 / math.log(R)
_MIN_S = 1e-9
_OFFSET = math.floor(math.log(_MIN_S) * _INV_LOG_R)
BUCKETS = 1700
_floor, _log = math.floor, math.log   # one lookup less each, twice per commit


class LatencyHistogram:
    """Counts of latencies in seconds (add), read as a mean and percentiles."""

    __slots__ = ("counts", "zeros", "n", "total_s")

    def __init__(self) -> None:
        self.counts = [0] * BUCKETS
        self.zeros = 0
        self.n = 0
        self.total_s = 0.0

    def add(self, seconds: float) -> None:
        self.n += 1
        self.total_s += seconds
        if seconds <= 0.0:
            self.zeros += 1
            return
        k = _floor(_log(seconds) * _INV_LOG_R) - _OFFSET
        if k < 0:
            k = 0
        elif k >= BUCKETS:
            k = BUCKETS - 1
        self.counts[k] += 1

    @staticmethod
    def value(k: int) -> float:
        """What bucket k reads back as (seconds)."""
        return 2.0 * R ** (k + _OFFSET + 1) / (1.0 + R)

    def mean(self) -> float | None:
        return self.total_s / self.n if self.n else None

    def _order_statistic(self, rank: int, cum: list[tuple[int, int]]) -> float:
        """The value of the rank-th smallest latency (0-based), from (cumulative count,
        bucket) pairs."""
        if rank < self.zeros:
            return 0.0
        for upto, k in cum:
            if rank < upto:
                return self.value(k)
        return self.value(cum[-1][1])

    def percentiles(self, qs: list[float]) -> list[float | None]:
        """numpy.percentile(values, qs) (linear interpolation), each within
        MAX_RELATIVE_ERROR of the exact one."""
        if not self.n:
            return [None for _ in qs]
        cum: list[tuple[int, int]] = []
        upto = self.zeros
        for k, c in enumerate(self.counts):
            if c:
                upto += c
                cum.append((upto, k))
        out: list[float | None] = []
        for q in qs:
            pos = q / 100.0 * (self.n - 1)
            lo = math.floor(pos)
            v_lo = self._order_statistic(lo, cum)
            frac = pos - lo
            if frac:
                v_hi = self._order_statistic(lo + 1, cum)
                out.append(v_lo + (v_hi - v_lo) * frac)
            else:
                out.append(v_lo)
        return out
