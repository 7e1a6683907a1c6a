"""Latencies in fixed memory: a histogram of log-spaced buckets with a known error.

A run used to keep every commit's latency in a list (about 85 bytes a commit, two lists);
a long run's memory grew with its commits. Here a latency is counted in the bucket
[R^k, R^(k+1)) it falls in, and read back as the bucket's value 2·R^(k+1)/(1 + R), the
point whose relative distance to both edges is (R - 1)/(R + 1): with R = 1.02 every value
read back is within 0.99 % of the latency counted. Percentiles interpolate between the
order statistics on each side of their rank, as numpy's default ("linear") does on the
exact values, so each is within 0.99 % of numpy's; the mean is exact (a running sum).

The buckets cover 1 ns to about 4 days (1700 counts, allocated once); a latency outside
is counted at the edge, and a zero (a commit that waited for nothing) on its own.

Counting is deferred: add() appends to a list of at most PENDING latencies, which are
counted together with numpy when it is full or when the histogram is read (fold()). A
commit's two latencies then cost two appends, not two logarithms and a bucket each in
Python (a visible share of the model's time at one connection: docs/benchmarks.md has
what it saved). The memory stays fixed: the counts, and one full list at most.
"""

from __future__ import annotations

import math

import numpy as np

R = 1.02
MAX_RELATIVE_ERROR = (R - 1) / (R + 1)     # 0.0099
_INV_LOG_R = 1.0 / math.log(R)
_MIN_S = 1e-9
_OFFSET = math.floor(math.log(_MIN_S) * _INV_LOG_R)
BUCKETS = 1700
PENDING = 4096      # latencies added, not yet counted (fold)


class LatencyHistogram:
    """Counts of latencies in seconds (add), read as a mean and percentiles."""

    __slots__ = ("counts", "zeros", "_n", "_total_s", "pending")

    def __init__(self) -> None:
        self.counts = np.zeros(BUCKETS, dtype=np.int64)
        self.zeros = 0
        self._n = 0
        self._total_s = 0.0
        # the latencies added since the last fold, in order (Measurement appends to it)
        self.pending: list[float] = []

    def add(self, seconds: float) -> None:
        pending = self.pending
        pending.append(seconds)
        if len(pending) >= PENDING:
            self.fold()

    def fold(self) -> None:
        """Count the pending latencies into the buckets."""
        pending = self.pending
        if not pending:
            return
        self._n += len(pending)
        # the running sum in the order added, as one add() at a time made it
        self._total_s = sum(pending, self._total_s)
        a = np.array(pending, dtype=np.float64)
        pending.clear()
        positive = a[a > 0.0]
        self.zeros += len(a) - len(positive)
        if not len(positive):
            return
        k = np.floor(np.log(positive) * _INV_LOG_R).astype(np.int64) - _OFFSET
        np.clip(k, 0, BUCKETS - 1, out=k)
        self.counts += np.bincount(k, minlength=BUCKETS)

    @property
    def n(self) -> int:
        """Latencies added."""
        return self._n + len(self.pending)

    @property
    def total_s(self) -> float:
        self.fold()
        return self._total_s

    @staticmethod
    def value(k: int) -> float:
        """What bucket k reads back as (seconds)."""
        return 2.0 * R ** (k + _OFFSET + 1) / (1.0 + R)

    def mean(self) -> float | None:
        self.fold()
        return self._total_s / self._n if self._n else None

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
        self.fold()
        if not self._n:
            return [None for _ in qs]
        cum: list[tuple[int, int]] = []
        upto = self.zeros
        for k in np.flatnonzero(self.counts).tolist():
            upto += int(self.counts[k])
            cum.append((upto, k))
        out: list[float | None] = []
        for q in qs:
            pos = q / 100.0 * (self._n - 1)
            lo = math.floor(pos)
            v_lo = self._order_statistic(lo, cum)
            frac = pos - lo
            if frac:
                v_hi = self._order_statistic(lo + 1, cum)
                out.append(v_lo + (v_hi - v_lo) * frac)
            else:
                out.append(v_lo)
        return out
