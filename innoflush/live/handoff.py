"""What a hand-off between two processes costs on this host: the round trip a lone
connection makes for every statement once its commits no longer sleep on a sync.

A connection alone on a server goes back and forth with its client: the client sends a
statement and waits, the server runs it, replies and waits. Each side wakes the other.
Where the other side's core is idle, that wake-up is what the round trip costs beyond
the work. On a host whose idle cores answer at once (bare metal, a VM that polls before
it halts) that is a few microseconds. On the 2-vCPU VMs this project was validated on
it varied from day to day: on some every idle vCPU halted and each wake-up went
through the hypervisor. There a one-connection sysbench load at
innodb_flush_log_at_trx_commit=2 ran at half the rate of the other days, spending more
CPU per transaction, not less
(docs/validation/notebook/2026-11-27-whole-matrix-again-another-vm.md). Under
trx_commit=1 the same load showed nothing of it: its round trips hide in the sync's
milliseconds.

So the cost is measured, not inferred: two processes hand a byte back and forth over a
Unix socket pair, each doing `work_us` of computation (timed hot in this process) per
hand-off, first free to run on any core (as a client and its server are), then both
pinned to one core, where nothing ever waits for an idle core to wake. The first is
``round_trip_us``; their ratio says how much of it is wake-up. Rounds alternate the two
and the medians are kept (of each run's round trips, then of the rounds): the host's
state drifts within seconds, and a load running beside the probe (advise measures a live
server) preempts some round trips by milliseconds.

Left free, not pinned to two cores, on purpose: where it errs it errs low, towards no
floor (advisor/round_trip.py), which is the model as it was. The scheduler sometimes
puts both processes on one core, and a load that keeps the cores awake takes the wake-up
away; both make the free round trip read as the pinned one. Pinned to two cores it
errs high instead: under such a load its processes queue behind the load's threads on
their cores, and it read several times what the idle host gave (docs/validation.md,
"A lone connection on a host whose idle cores wake slowly", has both).
"""

from __future__ import annotations

import os
import socket
import statistics
import time
from dataclasses import dataclass

ROUNDS = 5
HANDOFFS = 400
WORK_US = 10.0


@dataclass
class Handoff:
    """A hand-off probe's result (µs per round trip: two hand-offs and 2 × work_us of
    work; round_trip_us free, pinned_us both on one core); None figures with `problem`
    when it could not run."""
    round_trip_us: float | None
    pinned_us: float | None
    work_us: float
    rounds: list[tuple[float, float]]
    problem: str | None = None

    @property
    def ratio(self) -> float | None:
        if not self.round_trip_us or not self.pinned_us:
            return None
        return self.round_trip_us / self.pinned_us

    def to_dict(self) -> dict:
        r = self.ratio
        return {"round_trip_us": _r(self.round_trip_us), "pinned_us": _r(self.pinned_us),
                "ratio": None if r is None else round(r, 2), "work_us": self.work_us,
                "rounds": [[_r(a), _r(b)] for a, b in self.rounds], "problem": self.problem}


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


def _spin(n: int) -> int:
    s = 0
    for i in range(n):
        s += i
    return s


def _iterations_per_us() -> float:
    """How many of _spin's iterations a microsecond holds here, hot (the best of five)."""
    _spin(100_000)
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        _spin(50_000)
        best = min(best, time.perf_counter() - t)
    return 50_000 / max(best * 1e6, 1e-3)


def _round_trips(n: int, spins: int, cpu: int | None) -> float:
    """The median µs of n round trips between this process and a child; cpu: both
    pinned to it (None: free)."""
    here = os.sched_getaffinity(0)
    a, b = socket.socketpair()
    pid = os.fork()
    if pid == 0:   # the child: only its socket and the loop, then _exit
        try:
            a.close()
            if cpu is not None:
                os.sched_setaffinity(0, {cpu})
            while True:
                d = b.recv(1)
                if not d or d == b"q":
                    break
                _spin(spins)
                b.send(d)
        finally:
            os._exit(0)
    b.close()
    try:
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
        for _ in range(20):
            a.send(b"x")
            a.recv(1)
        clock = time.perf_counter
        took = [0.0] * n
        for i in range(n):
            t0 = clock()
            _spin(spins)
            a.send(b"x")
            a.recv(1)
            took[i] = clock() - t0
        # the median round trip, not the mean: a load running beside the probe (the
        # server's own, while advise measures it) preempts some of them by milliseconds
        return statistics.median(took) * 1e6
    finally:
        try:
            a.send(b"q")
        except OSError:
            pass
        a.close()
        os.waitpid(pid, 0)
        os.sched_setaffinity(0, here)


def measure_handoff(rounds: int = ROUNDS, handoffs: int = HANDOFFS,
                    work_us: float = WORK_US) -> Handoff:
    """The host's hand-off round trip, free and pinned to one core (medians of `rounds`
    alternating runs of `handoffs` round trips): about 0.1-0.5 s."""
    if not hasattr(os, "sched_setaffinity") or not hasattr(os, "fork"):
        return Handoff(None, None, work_us, [], "this platform cannot pin a process "
                       "to a core")
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        return Handoff(None, None, work_us, [], "one core only: a client and its "
                       "server always share it, no hand-off waits for an idle core")
    spins = max(0, int(round(work_us * _iterations_per_us())))
    runs: list[tuple[float, float]] = []
    try:
        for _ in range(rounds):
            free = _round_trips(handoffs, spins, None)
            pinned = _round_trips(handoffs, spins, cores[0])
            runs.append((free, pinned))
    except OSError as e:
        return Handoff(None, None, work_us, runs, f"the probe could not run: {e}")
    return Handoff(statistics.median(f for f, _ in runs),
                   statistics.median(p for _, p in runs), work_us, runs)


__all__ = ["Handoff", "measure_handoff"]
