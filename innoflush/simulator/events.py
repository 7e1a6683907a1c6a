"""The simulation's clock and event loop, waking a simulated thread that may be asleep on
an event, and the type of the generators simulated threads run.

A thread that goes to sleep on a wake-up event leaves it in a field; whoever has work
for it succeeds the event. The thread may not have slept yet (no event), or may have
been woken already by somebody else in the same instant (an event succeeds only once).

Waking is a hand-off that skips simpy's schedule: the event waits in a FIFO of the
current instant instead of the heap (Environment below), and runs in the same order.

A thread whose timeout would be the next event processed anyway, with nobody else
waiting on it, runs through it: the clock moves on and the thread goes on without a
trip through the loop (Environment.pass_time, and Thread for a timeout already made).
When other events are due before its timeout ends, pass_time processes them there, in
the loop's order, and the thread goes on at its end: the threads they resume run inside
its wait, none beyond its end (the horizon). A thread that blocks while the loop's next
event is a hand-off to one other thread resumes that one itself (Thread). Same events
in the same order, fewer Python calls: a commit's timeouts and the hand-offs between a
connection and the log threads mostly skip the loop's round trip.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Generator
from heapq import heappop, heappush
from typing import Any, TypeVar

import simpy
from simpy.core import EmptySchedule, StopSimulation
from simpy.events import NORMAL, PENDING, URGENT, Event, Initialize, Process, Timeout

_T = TypeVar("_T")
# Threads passing time inside each other's waits nest Python frames (a dozen each):
# beyond this many the next one yields its timeout to the loop, well above the deepest
# nesting seen and well below Python's recursion limit (docs/model.md, 'Passing time').
MAX_PASSING = 16
_new = object.__new__
# What a simulated thread (or a step of one, run with `yield from`) is: a generator that
# yields simpy events and returns _T.
SimGen = Generator[Event, Any, _T]


class Sleep(Timeout):
    """simpy's Timeout with its fixed fields on the class (triggered at creation, ok,
    valued None): two stores less on the hottest path."""

    _ok = True
    _value = None
    _delay = 0.0   # read by repr() only


class Thread(Process):
    """simpy's Process, resumed with less ceremony: its resume callback is bound once
    (simpy binds a new method object at every yield) and the generator's send is looked
    up once per resume. Same events, same order, same exceptions."""

    def __init__(self, env: simpy.Environment, generator: SimGen[Any]):
        self.env = env
        self.callbacks = []
        self._generator = generator
        self._resume = self._resume_thread  # type: ignore[method-assign]
        self._target = Initialize(env, self)

    def _resume_thread(self, event: Event) -> None:
        env = self.env
        proc = self
        env._active_proc = proc
        gen = proc._generator
        while True:
            try:
                if event._ok:
                    event = gen.send(event._value)
                else:
                    event._defused = True
                    exc = type(event._value)(*event._value.args)
                    exc.__cause__ = event._value
                    event = gen.throw(exc)
            except StopIteration as e:
                proc._ok = True
                proc._value = e.args[0] if len(e.args) else None
                env.schedule(proc)
                break
            except BaseException as e:
                proc._ok = False
                e.__traceback__ = e.__traceback__.tb_next  # type: ignore[union-attr]
                proc._value = e
                env.schedule(proc)
                break
            try:
                callbacks = event.callbacks
            except AttributeError:
                raise RuntimeError(f"Invalid yield value {event!r}") from None
            if callbacks is None:
                continue
            if not env._sole:  # type: ignore[attr-defined]
                callbacks.append(proc._resume)
                proc._target = event
                break
            handoffs = env._handoffs  # type: ignore[attr-defined]
            queue = env._queue
            if not callbacks and not handoffs:
                if (queue and queue[0][3] is event
                        and queue[0][0] < env._horizon):  # type: ignore[attr-defined]
                    # The event the loop would process next is this one, and this
                    # thread alone waits on it: process it here (the thread runs on
                    # at its time), the same order as the loop's, without the loop.
                    env._now = heappop(queue)[0]
                    event.callbacks = None  # type: ignore[assignment]
                    continue
            callbacks.append(proc._resume)
            proc._target = event
            if handoffs:
                # The thread sleeps. When the loop's next event is a hand-off to one
                # thread alone, that thread is resumed here, as the loop would resume
                # it next (the hand-offs between a committing connection and the log
                # threads): no round trip through the loop.
                item = handoffs[0]
                if (not queue or item < queue[0]) and item[0] < env._horizon:  # type: ignore[attr-defined]
                    nxt = item[3]
                    waiting = nxt.callbacks
                    try:   # (a bound method's function, read without getattr's call)
                        taken = (len(waiting) == 1
                                 and waiting[0].__func__ is _RESUME_THREAD)
                    except AttributeError:   # a plain function's callback
                        taken = False
                    if taken:
                        handoffs.popleft()
                        env._now = item[0]
                        nxt.callbacks = None
                        proc = waiting[0].__self__
                        env._active_proc = proc
                        gen = proc._generator
                        event = nxt
                        continue
            break
        env._active_proc = None


_RESUME_THREAD = Thread._resume_thread


class Environment(simpy.Environment):
    """simpy's Environment with hand-offs, a cheaper timeout, lighter processes and
    the event loop inlined in run().

    An event handed off (wake()) is processed exactly where simpy would have processed
    it, had it been succeeded: after every event scheduled before it for the same
    instant, before any scheduled after it. It waits in a FIFO beside the heap instead
    of in it (hand-offs are all for the current instant, so the FIFO is in order): no
    heap push and pop, no schedule() call.

    A thread's timeout is run through or passed (pass_time(), Thread._resume_thread),
    and a hand-off to a thread taken at once, under run(), never under step(), which
    processes one event per call as simpy's does."""

    def __init__(self, run_through: bool = True) -> None:
        super().__init__()
        # False: every event goes through the loop (the tests compare both ways)
        self.run_through = run_through
        self._handoffs: deque[tuple[float, int, int, Event]] = deque()
        # the event being processed has one callback: the thread it resumes may process
        # its own next event (Thread._resume_thread)
        self._sole = False
        # While a thread passes time (pass_time), the events processed meanwhile are
        # those due before its end: no thread they resume may go on beyond it.
        self._horizon = math.inf
        self._passing = 0   # threads passing time, one inside the other's wait
        self._until: Event | None = None   # run()'s: the loop's to process

    def timeout(self, delay: float, value: Any = None) -> Timeout:  # type: ignore[override]
        # Timeout.__init__ and schedule() inlined: two calls less on the hottest path
        if delay < 0:
            raise ValueError(f"Negative delay {delay}")
        ev = Sleep.__new__(Sleep)
        ev.env = self
        ev.callbacks = []
        if value is not None:
            ev._value = value
        heappush(self._queue, (self._now + delay, NORMAL, next(self._eid), ev))
        return ev

    def event(self) -> Event:
        # simpy binds its event class to the instance of its own Environment only
        # (BoundClass.bind_early reads the class's own dict): a subclass would make a
        # bound method at every call (and object.__new__ found once, not on Event's MRO)
        ev = _new(Event)
        ev.env = self
        ev.callbacks = []
        return ev

    def pass_time(self, at: float) -> Timeout | None:
        """The running thread's wait until `at` (now + its delay, as timeout() computes
        it, or timeout_at's time): None when it has passed here, and the thread goes on
        at `at` as the loop would have resumed it; else the timeout to yield.

        It passes at once (runs through) when nothing is due before `at`. Else, when the
        thread was resumed alone, the events due before its timeout's place — the
        place a timeout made now would take: (at, NORMAL, the next id) — are processed
        here, as the loop would have: the same events in the same order, without the
        thread's round trip through the heap. The threads they resume may not go on
        beyond `at` (the horizon); the run's own end, or a failed event, are left to
        the loop: then the timeout is made in its place and returned."""
        if self._sole and at < self._horizon:
            queue = self._queue
            if not self._handoffs and (not queue or queue[0][0] > at):
                self._now = at
                return None
            if self._passing < MAX_PASSING:
                return self._pass_events(at)
        return self.timeout_at(at)

    def runs_through(self, at: float) -> bool:
        """pass_time's first case alone: True (and the clock at `at`) when nothing is
        due before `at` and the running thread may go on to it; else False, nothing
        done. (Device.write and Device.sync have it inline.)"""
        if self._sole and at < self._horizon and not self._handoffs:
            queue = self._queue
            if not queue or queue[0][0] > at:
                self._now = at
                return True
        return False

    def _pass_events(self, at: float) -> Timeout | None:
        eid = next(self._eid)
        place = (at, NORMAL, eid)
        queue, handoffs = self._queue, self._handoffs
        proc, horizon, until = self._active_proc, self._horizon, self._until
        self._horizon = at
        self._passing += 1
        try:
            while True:
                # the loop's choice (_loop): the oldest hand-off before the heap's later
                if handoffs and (not queue or handoffs[0] < queue[0]):
                    item = handoffs[0]
                    if not item < place:
                        break
                    event = item[3]
                    if event is until or not event._ok:
                        return self._wait_in_place(at, eid)
                    handoffs.popleft()
                elif queue and queue[0] < place:
                    item = queue[0]
                    event = item[3]
                    if event is until or not event._ok:
                        return self._wait_in_place(at, eid)
                    heappop(queue)
                else:
                    break
                self._now = item[0]
                callbacks, event.callbacks = event.callbacks, None  # type: ignore[assignment]
                self._sole = len(callbacks) == 1
                for callback in callbacks:
                    callback(event)
            self._now = at
            return None
        finally:
            self._passing -= 1
            self._horizon = horizon
            self._active_proc = proc
            self._sole = True

    def _wait_in_place(self, at: float, eid: int) -> Timeout:
        """The timeout pass_time gave up passing, in the place it reserved."""
        ev = Sleep.__new__(Sleep)
        ev.env = self
        ev.callbacks = []
        heappush(self._queue, (at, NORMAL, eid, ev))
        return ev

    def others_due_now(self) -> bool:
        """Whether any other event is due at this instant: a hand-off, the heap's next,
        or the timeout of a thread passing time (pass_time) that ends now."""
        queue = self._queue
        return (bool(self._handoffs) or bool(queue and queue[0][0] <= self._now)
                or self._now >= self._horizon)

    def timeout_at(self, at: float) -> Timeout:
        """A timeout that ends at the absolute time `at` (>= now), bit for bit: now +
        (at - now) need not be `at` in floating point."""
        ev = Sleep.__new__(Sleep)
        ev.env = self
        ev.callbacks = []
        heappush(self._queue, (at, NORMAL, next(self._eid), ev))
        return ev

    def process(self, generator: SimGen[Any]) -> Thread:
        return Thread(self, generator)

    def run(self, until: float | Event | None = None) -> Any:
        """simpy's run(), its events processed in one loop (_loop), not one step() call
        each."""
        if until is None or isinstance(until, Event):
            if until is not None and until.callbacks is None:
                return until.value
            if until is not None:
                until.callbacks.append(StopSimulation.callback)
        else:
            at = float(until)
            if at <= self._now:
                raise ValueError(
                    f"until ({at}) must be greater than the current simulation time")
            stop = Event(self)
            stop._ok = True
            stop._value = None
            self.schedule(stop, URGENT, at - self._now)
            stop.callbacks.append(StopSimulation.callback)
            until = stop
        self._until = until
        try:
            self._loop(-1)
        except StopSimulation as exc:
            return exc.args[0]
        except EmptySchedule:
            if until is not None:
                raise RuntimeError(
                    f'No scheduled events left but "until" event was not triggered: '
                    f"{until}") from None
        return None

    def step(self) -> None:
        """simpy's step: process the next event, the heap's or the oldest hand-off."""
        self._loop(1, run_through=False)

    def _loop(self, n: int, run_through: bool = True) -> None:
        """Process n events (n < 0: until StopSimulation or EmptySchedule): simpy's
        step() in a loop, the oldest hand-off taking its turn before the heap's events
        of a later (time, priority, id)."""
        queue, handoffs = self._queue, self._handoffs
        popleft = handoffs.popleft
        run_through = run_through and self.run_through
        while n:
            n -= 1
            # (time, priority, eid) tuples: eids are unique, the events never compared
            if handoffs and (not queue or handoffs[0] < queue[0]):
                self._now, _, _, event = popleft()
            elif queue:
                self._now, _, _, event = heappop(queue)
            else:
                raise EmptySchedule
            callbacks, event.callbacks = event.callbacks, None  # type: ignore[assignment]
            # (step() processes one event: no thread runs through a timeout then)
            self._sole = run_through and len(callbacks) == 1
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


def rearm(event: Event) -> Event:
    """`event`, pending again, for the thread that owns it to sleep on once more: no new
    object (making an Event costs time, twice a commit in the log threads: docs/model.md,
    'Wake-up events made once'). Only for an event its owner alone sleeps on, yielded
    alone (no condition holds it), and processed or new: nobody waits on it, and whoever
    would wake it reads the field it is in when waking (a field left pointing at it after
    it was processed wakes the same sleep as a new event in that field would)."""
    event._value = PENDING
    event.callbacks = []
    return event


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
