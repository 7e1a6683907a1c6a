"""What a run records for its result: the measured window's latencies, stalls and CPU
time as the model runs, and the window's figures once it has closed."""

from __future__ import annotations

from dataclasses import dataclass

from simpy.events import Event

from .histogram import LatencyHistogram


class Measurement:
    """Recorded while `measuring` (after the warm-up): each commit's and transaction's
    latency (counted in histograms: fixed memory, histogram.py), the time users stalled
    for redo space, the CPU time run. max_age, the largest checkpoint age, covers the
    whole run. commits_done, when set, succeeds once
    the commit counter reaches commit_target (a cost cap on the window). What a commit
    records is written by the connection's loop itself (Server.connection: the hottest
    path, no call per commit)."""

    __slots__ = ("measuring", "commit_latency", "trx_latency", "stall_s", "max_age",
                 "cpu_busy_s", "commits_done", "commit_target", "flush_passes")

    def __init__(self) -> None:
        self.measuring = False
        self.commit_latency = LatencyHistogram()
        self.trx_latency = LatencyHistogram()
        self.stall_s = 0.0
        self.max_age = 0
        self.cpu_busy_s = 0.0
        self.commits_done: Event | None = None
        self.commit_target = 0
        self.flush_passes: list[tuple[float, int]] = []   # (start, pages) per batch

    def begin(self, commits_done: Event | None = None, commit_target: int = 0) -> None:
        """The measured window opens; commits_done (if given) is to succeed once the
        commit counter reaches commit_target."""
        self.measuring = True
        self.commits_done = commits_done
        self.commit_target = commit_target

    def ran(self, seconds: float) -> None:
        """A thread ran on a core for `seconds`."""
        if self.measuring:
            self.cpu_busy_s += seconds

    def flushed(self, start: float, pages: int) -> None:
        """The page cleaner wrote a batch of `pages` that it began at `start`."""
        if self.measuring:
            self.flush_passes.append((start, pages))

    def stalled(self, seconds: float) -> None:
        """A user waited `seconds` for redo space (log_free_check)."""
        if self.measuring:
            self.stall_s += seconds


@dataclass(frozen=True)
class Window:
    """The measured window of a run, closed: what its result is made of."""

    duration_s: float
    counters: dict[str, int]        # the counters' deltas over the window
    commit_latency: LatencyHistogram
    trx_latency: LatencyHistogram
    cpu_busy_s: float
    stall_s: float
    max_age: int
    device_flush_busy_s: float
    device_write_busy_s: float
    device_queue_depth: int
    notes: list[str]                # the device model's assumptions, sorted


# passes begun less than this apart are one burst: the page cleaner's loop is a second
# long, and a pass that leaves the oldest page past the low-water mark is followed by
# another a second later
BURST_GAP_S = 1.5


def largest_burst(passes: list[tuple[float, int]]) -> int:
    """The most pages the page cleaner wrote in one burst of back-to-back passes."""
    best = cur = 0
    last: float | None = None
    for start, pages in passes:
        cur = pages if last is None or start - last > BURST_GAP_S else cur + pages
        best = max(best, cur)
        last = start
    return best
