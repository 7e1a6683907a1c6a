"""The storage device as simpy sees it: a queue of write slots and one cache-flush channel.

Writes (page writes, redo and binlog appends, doublewrite batches) occupy one of
``queue_depth`` slots for a latency drawn from the device profile. Syncs (fsync,
fdatasync, an O_DSYNC write) go through a single flush channel: a cache flush is a
device-wide operation, so concurrent fsyncs of different files queue behind each other
— which is how a slow data-file fsync reaches a commit waiting on its redo fsync.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import Any

import numpy as np
import simpy
from simpy.events import Event

from ..profiles import DeviceProfile
from ..stats import LatencySummary
from .events import SimGen
from .semaphore import Semaphore

_BATCH = 4096
PAGE_CACHE_WRITE_US = 2.0   # syscall + copy setup of a buffered write()
PAGE_CACHE_GBPS = 4.0       # memcpy into the page cache (bytes per ns)


class Sampler:
    """Latencies in seconds drawn in numpy batches. draw() is the next one: the
    __next__ of a generator over the batches (no Python call on the hot path)."""

    __slots__ = ("summary", "rng", "factor", "draw")

    def __init__(self, summary: LatencySummary, rng: np.random.Generator | None,
                 factor: float = 1.0):
        self.summary = summary
        self.rng = rng
        self.factor = factor
        # chain's __next__ runs in C through each batch: a Python frame once per batch
        self.draw: Callable[[], float] = chain.from_iterable(self._batches()).__next__

    def _batches(self) -> Iterator[list[float]]:
        while True:
            if self.rng is None:
                raise RuntimeError("a Device made without a random generator gives means only")
            yield (self.summary.sample(self.rng, _BATCH) * (self.factor * 1e-9)).tolist()

    def __call__(self) -> float:
        return self.draw()

    @property
    def mean_s(self) -> float:
        return self.summary.mean_ns * self.factor * 1e-9


class SumSampler:
    """The sum of two independent latencies (e.g. write-back + cache flush)."""

    __slots__ = ("a", "b", "draw")

    def __init__(self, a: Sampler | SumSampler, b: Sampler | SumSampler):
        self.a = a
        self.b = b
        self.draw: Callable[[], float] = self

    def __call__(self) -> float:
        return self.a() + self.b()

    @property
    def mean_s(self) -> float:
        return self.a.mean_s + self.b.mean_s


def size_bucket(size: int) -> int:
    """Round a write size up to a power of two (512 B .. 8 MiB) to share samplers."""
    size = max(512, min(int(size), 8 * 1024 * 1024))
    return 1 << (size - 1).bit_length()


class Device:
    """One storage device under the server, driven by a DeviceProfile."""

    def __init__(self, env: simpy.Environment, profile: DeviceProfile,
                 rng: np.random.Generator | None, queue_depth: int = 32):
        self.env = env
        self.profile = profile
        self.rng = rng
        self.queue_depth = queue_depth
        self.write_slots = Semaphore(env, queue_depth)
        self.flush_channel = Semaphore(env, 1)
        self.notes: set[str] = set()
        self._samplers: dict[tuple, Sampler | SumSampler] = {}
        # exact sizes seen, before bucketing
        self._by_request: dict[tuple, Sampler | SumSampler] = {}
        # the same, for the two hottest calls: (size, direct) and (op, size, direct)
        self._writes: dict[tuple, Callable[[], float]] = {}
        self._syncs: dict[tuple, Callable[[], float]] = {}
        # Published sources that timed write+sync together give only a total: the write
        # is then taken out of it so that write + sync adds up to what was published.
        self._sync_is_total = not any(t.sync is not None for t in profile.tests)
        self._has_dsync = any(t.op == "dsync" for t in profile.tests)
        # A buffered write only copies into the page cache; an O_DIRECT figure would
        # charge it the device's write time (published sources rarely measure buffered).
        self._has_buffered = any(not t.direct and t.write is not None for t in profile.tests)
        self._has_buffered_sync = any(not t.direct and (t.sync or t.total) is not None
                                      for t in profile.tests)
        self.write_busy_s = 0.0
        self.flush_busy_s = 0.0
        # the running thread's wait until a time (events.Environment.pass_time: None
        # when passed, else the timeout to yield); a plain simpy Environment (unit tests
        # of the device) has none: a plain timeout
        self._pass_time: Callable[[float], Event | None] = (
            getattr(env, "pass_time", None) or (lambda at: env.timeout(at - env.now)))
        self._runs_through: Callable[[float], bool] = (
            getattr(env, "runs_through", None) or (lambda _at: False))
        self._ours = hasattr(env, "pass_time")

    # ---- latency tables ------------------------------------------------------------
    def sampler(self, component: str, op: str, size: int, direct: bool) -> Sampler | SumSampler:
        s = self._by_request.get((component, op, size, direct))
        if s is not None:
            return s
        key = (component, op, size_bucket(size), direct)
        s = self._samplers.get(key)
        if s is None and component == "write" and not direct and not self._has_buffered:
            self.notes.add("buffered writes not in profile: a page-cache copy assumed "
                           f"({PAGE_CACHE_WRITE_US:g} µs + size at {PAGE_CACHE_GBPS:g} GB/s)")
            mean_ns = PAGE_CACHE_WRITE_US * 1e3 + key[2] / PAGE_CACHE_GBPS
            s = self._samplers[key] = Sampler(LatencySummary.mean_only(mean_ns), self.rng)
        if s is None and component == "sync" and not direct and not self._has_buffered_sync:
            # fsync of a buffered file first writes its dirty pages back, then flushes:
            # the O_DIRECT write of the same size plus the sync that follows one.
            self.notes.add("sync after buffered writes not in profile: write-back (the "
                           "O_DIRECT write) + the sync after an O_DIRECT write assumed")
            s = self._samplers[key] = SumSampler(self.sampler("write", "none", key[2], True),
                                                 self.sampler("sync", op, key[2], True))
        if s is None:
            summary, note = self.profile.resolve(component, op, key[2], direct)
            # size substitutions are routine (profiles hold a few sizes); report the rest
            self.notes.update(n for n in note.split("; ") if n and not n[0].isdigit())
            factor = 1.0
            if component == "sync" and self._sync_is_total:
                write, _ = self.profile.resolve("write", "none", key[2], direct)
                if summary.mean_ns > 0:
                    factor = max(0.05, 1.0 - write.mean_ns / summary.mean_ns)
            s = self._samplers[key] = Sampler(summary, self.rng, factor)
        if len(self._by_request) < 4096:
            self._by_request[(component, op, size, direct)] = s
        return s

    def mean_s(self, component: str, op: str, size: int, direct: bool) -> float:
        return self.sampler(component, op, size, direct).mean_s

    # ---- operations (what a simulated thread yields from) -----------------------------
    # write(), write_many() and sync() return nothing to wait for (an empty tuple) when
    # the call is run through at once — a free slot or channel, nothing else due before
    # it ends (events.Environment.runs_through): taken and given back while nothing else
    # runs, the same as holding it; else the generator that holds it (_hold), which
    # passes its time with pass_time (other threads' events processed meanwhile).
    def write(self, size: int, direct: bool, then: int = 0) -> Iterable[Event]:
        """One write call; holds a queue slot for its latency. then: the size of a second
        call the same thread makes right after it (MySQL's incomplete last redo block):
        one slot held for both."""
        draw = self._writes.get((size, direct))
        if draw is None:
            draw = self.sampler("write", "none", size, direct).draw
            if len(self._writes) < 4096:   # bounded, like _by_request
                self._writes[(size, direct)] = draw
        lat = draw()
        if then:
            second = self._writes.get((then, direct))
            if second is None:
                second = self.sampler("write", "none", then, direct).draw
                if len(self._writes) < 4096:
                    self._writes[(then, direct)] = second
            lat += second()
        slots = self.write_slots
        if slots.free and not slots.waiters and self._ours:
            env: Any = self.env
            at = env._now + lat
            # Environment.runs_through, inlined (as in sync)
            if env._sole and not env._handoffs and at < env._horizon:
                queue = env._queue
                if not queue or queue[0][0] > at:
                    env._now = at
                    self.write_busy_s += lat
                    return ()
        return self._hold(slots, lat, False)

    def _hold(self, sem: Semaphore, lat: float, flush: bool) -> SimGen[None]:
        """Hold a slot of `sem` (the write slots, the flush channel) for `lat` seconds."""
        if sem.free and not sem.waiters:   # acquire() and release() inlined
            sem.free -= 1
        else:
            yield sem.acquire()  # type: ignore[misc]   # an event: none is free
        ev = self._pass_time(self.env._now + lat)
        if ev is not None:
            yield ev
        if sem.waiters:
            sem.release()
        else:
            sem.free += 1
        if flush:
            self.flush_busy_s += lat
        else:
            self.write_busy_s += lat

    def write_many(self, n: int, size: int, direct: bool) -> Iterable[Event]:
        """n independent writes issued together (async page writes): done when all are.
        Run through, like write(), when the slots are free and nothing else is due."""
        if n <= 0:
            return ()
        draw = self._writes.get((size, direct))
        if draw is None:
            draw = self.sampler("write", "none", size, direct).draw
            if len(self._writes) < 4096:
                self._writes[(size, direct)] = draw
        slots = n if n < self.queue_depth else self.queue_depth
        lats = [draw() for _ in range(n)]
        if n <= slots:
            makespan = max(lats)
        else:  # list scheduling over the slots, as the I/O threads would issue them
            ends = [0.0] * slots
            for lat in lats:
                heapq.heapreplace(ends, ends[0] + lat)
            makespan = max(ends)
        ws = self.write_slots
        if (ws.free >= slots and not ws.waiters
                and self._runs_through(self.env._now + makespan)):
            self.write_busy_s += sum(lats)
            return ()
        return self._hold_many(slots, makespan, lats)

    def _hold_many(self, slots: int, makespan: float, lats: list[float]) -> SimGen[None]:
        ev = self.write_slots.acquire(slots)
        if ev is not None:
            yield ev
        ev = self._pass_time(self.env._now + makespan)
        if ev is not None:
            yield ev
        self.write_slots.release(slots)
        self.write_busy_s += sum(lats)

    def sync(self, op: str, size: int, direct: bool) -> Iterable[Event]:
        """fsync or fdatasync of a file whose last write was about `size` bytes."""
        draw = self._syncs.get((op, size, direct))
        if draw is None:
            draw = self.sampler("sync", op, size, direct).draw
            if len(self._syncs) < 4096:
                self._syncs[(op, size, direct)] = draw
        lat = draw()
        ch = self.flush_channel
        if ch.free and not ch.waiters and self._ours:
            env: Any = self.env
            at = env._now + lat
            # Environment.runs_through, inlined: a call less on the hottest path
            if env._sole and not env._handoffs and at < env._horizon:
                queue = env._queue
                if not queue or queue[0][0] > at:
                    env._now = at
                    self.flush_busy_s += lat
                    return ()
        return self._hold(ch, lat, True)

    def dsync_write(self, size: int, direct: bool) -> SimGen[None]:
        """A write to a file opened O_DSYNC: the write returns once it is durable."""
        if self._has_dsync:
            lat = self.sampler("write", "dsync", size, direct)()
        else:
            self.notes.add("O_DSYNC not in profile: a write plus an fdatasync used")
            lat = (self.sampler("write", "none", size, direct)()
                   + self.sampler("sync", "fdatasync", size, direct)())
        yield from self._hold(self.flush_channel, lat, True)
