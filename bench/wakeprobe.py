"""What waking from a sleep costs on this host: the same fixed piece of work timed in
thread CPU back to back and right after sleeps of a few lengths (bench/wake_probe.py's
candidates; advise ran it as its wake-up probe until 2026-11-27).

Why: a commit that sleeps on a sync (trx_commit=1 on a slow device) leaves its core idle;
on a virtual machine the vCPU halts, and what the thread runs next runs slower — cold
caches, a core brought back up — in CPU time, not only in wall time. On the 2-vCPU VM
this project is developed on, sysbench oltp_insert's connection threads spent 217 µs of
CPU per transaction with 3 ms syncs at trx_commit=1 and 75-90 µs at trx_commit=2; the
probe's work took 98 µs back to back, 150 µs after a 0.2 ms sleep and 180 µs after
3 ms. The measured CPU of a workload whose commits sleep is therefore its *sleeping*
cost; what it costs when nothing sleeps (the price of a change that takes the sync off
the commit) is that divided by the factor measured here, at the commit wait's length.
This loop's working set is tiny and it measures less than mysqld's slowdown (2026-11-26,
1 thread: ×1.38 against mysqld's ×3.36); a unit with random reads over 8 MB came closer
(×3.69) but made the fit over-predict at 16 threads, so it was not adopted
(docs/validation/notebook/2026-11-25-first-sysbench-run.md, bench/wake_probe.py).

The slowdown outlasts one work unit (a core's frequency or power state ramps over
milliseconds, not only its caches), so the probe compares a sustained stream of work
with cycles of sleep-then-work, as a thread that sleeps on every commit runs.

Retired from advise (2026-11-27): its factor moved 1.15-2.5 from one run of the same cell
to the next and did not follow mysqld's (a sleeping commit's CPU is a rate while commits
sleep, not a factor on the work: innoflush/advisor/sleep_cost.py,
docs/validation/notebook/2026-11-27-what-a-sleeping-commit-costs.md).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

SLEEPS_US = (200.0, 1000.0, 3000.0, 10000.0)
WORK_N = 2000          # ~100 µs of interpreter work on a 2020s server core
STREAM_RUNS = 300      # back to back: ~30 ms, long enough for the core to ramp up
CYCLES = 40            # sleep-then-work cycles per sleep length


def _work(n: int = WORK_N) -> int:
    s = 0
    for i in range(n):
        s += i * i
    return s


def _timed(work: Callable[[], object]) -> float:
    t = time.thread_time_ns()
    work()
    return (time.thread_time_ns() - t) / 1e3


@dataclass
class WakeCost:
    """The work's CPU back to back (µs) and its factor after each sleep length."""

    hot_us: float | None = None
    factors: dict[float, float] = field(default_factory=dict)   # sleep µs -> factor

    def factor_at(self, sleep_us: float) -> float | None:
        """The factor after a sleep of sleep_us, interpolated on a log scale between the
        lengths measured (held at the ends); None when nothing was measured; 1.0 for no
        sleep."""
        if not self.factors:
            return None
        if sleep_us <= 0:
            return 1.0
        pts = sorted(self.factors.items())
        if sleep_us <= pts[0][0]:
            return pts[0][1]
        for (s0, f0), (s1, f1) in zip(pts, pts[1:], strict=False):
            if sleep_us <= s1:
                w = (math.log(sleep_us) - math.log(s0)) / (math.log(s1) - math.log(s0))
                return f0 + w * (f1 - f0)
        return pts[-1][1]

    def to_dict(self) -> dict:
        return {"hot_us": None if self.hot_us is None else round(self.hot_us, 1),
                "factors": {f"{int(s)}": round(f, 3) for s, f in sorted(self.factors.items())}}


def measure_wake_cost(cycles: int = CYCLES,
                      work: Callable[[], object] | None = None) -> WakeCost:
    """The work timed in a sustained stream (the core fully up, as under a load that
    never sleeps), then in cycles of sleep-then-work per sleep length (as a thread whose
    every commit sleeps), then the stream again; the later half of each series counts.
    work: the unit timed (None: the probe's own; bench/wake_probe.py tries others)."""
    work = work or _work

    def stream() -> list[float]:
        runs = [_timed(work) for _ in range(STREAM_RUNS)]
        return runs[STREAM_RUNS // 2:]

    hot = stream()
    after: dict[float, float] = {}
    for s in SLEEPS_US:
        runs = []
        for _ in range(cycles):
            time.sleep(s / 1e6)
            runs.append(_timed(work))
        after[s] = statistics.median(runs[cycles // 2:])
    hot += stream()
    # the stream's fast end: another process taking the core mid-stream slows some of
    # its runs (on a loaded 2-vCPU host the median stream varied 85-175 µs from one
    # window to the next), the fully-up core is what the comparison needs
    h = sorted(hot)[len(hot) // 5]
    return WakeCost(h, {s: max(1.0, v / h) for s, v in after.items()})
