"""The simulator's engine: hand-offs in simpy's order, the latency histogram's error."""

from __future__ import annotations

import pickle
from dataclasses import replace

import numpy as np
import pytest
import simpy

from innoflush.simulator import ServerConfig, Workload
from innoflush.simulator.events import Environment, rearm, wake
from innoflush.simulator.histogram import (
    BUCKETS,
    MAX_RELATIVE_ERROR,
    PENDING,
    LatencyHistogram,
    R,
)
from tests.helpers.simprofiles import consumer_ssd, plp_ssd


def _trace(env: simpy.Environment) -> list[tuple[str, float]]:
    """Threads that wake each other in the same instant as timeouts end, and log the
    order they run in."""
    log: list[tuple[str, float]] = []
    sleepers: dict[str, simpy.Event] = {}

    def sleeper(name: str):
        for _ in range(3):
            sleepers[name] = ev = env.event()
            yield ev
            log.append((name, env.now))

    def waker(name: str, delay: float, wakes: list[str]):
        for _ in range(3):
            yield env.timeout(delay)
            log.append((name, env.now))
            for w in wakes:
                wake(sleepers.get(w))

    for s in ("s1", "s2", "s3"):
        env.process(sleeper(s))
    env.process(waker("w1", 1.0, ["s1", "s2"]))
    env.process(waker("w2", 1.0, ["s3", "s1"]))
    env.process(waker("w3", 0.5, ["s2"]))
    env.run()
    return log


def test_hand_offs_run_in_the_order_simpys_succeed_would():
    plain = _trace(simpy.Environment())
    assert _trace(Environment()) == plain
    assert len(plain) == 18 and ("s3", 1.0) in plain


def test_a_hand_off_wakes_once():
    env = Environment()
    ev = env.event()
    wake(None)
    wake(ev)
    wake(ev)          # woken twice in one instant: one wake-up
    assert ev.triggered and not ev.processed
    env.run()
    assert ev.processed and len(env._handoffs) == 0


def test_environment_timeout_is_simpys():
    env = Environment()
    seen = []

    def p():
        v = yield env.timeout(2.5, value="x")
        seen.append((env.now, v))

    env.process(p())
    env.run()
    assert seen == [(2.5, "x")]
    with pytest.raises(ValueError):
        env.timeout(-1)


def _lifecycle(env: simpy.Environment) -> list:
    """Processes that return values, wait on each other, fail and catch, and a run that
    stops at a time and at an event: what our Thread and run() must do as simpy does."""
    log: list = []

    def child(n: int):
        yield env.timeout(n * 0.5)
        if n == 3:
            raise KeyError("boom")
        return n * 10

    def parent():
        for n in (1, 2, 3):
            try:
                v = yield env.process(child(n))
                log.append(("child", n, v, env.now))
            except KeyError as e:
                log.append(("caught", n, str(e), env.now))
        ev = env.event()
        env.process(_succeed_later(env, ev))
        v = yield ev
        log.append(("event", v, env.now))
        return "parent done"

    p = env.process(parent())
    env.run(until=1.0)
    log.append(("until time", env.now, p.is_alive))
    log.append(("until event", env.run(until=p), env.now))

    def fails():
        yield env.timeout(1)
        raise ValueError("unhandled")

    env.process(fails())
    with pytest.raises(ValueError, match="unhandled"):
        env.run()
    with pytest.raises(RuntimeError):
        env.run(until=env.event())   # nothing left, the event never comes
    return log


def _succeed_later(env: simpy.Environment, ev: simpy.Event):
    yield env.timeout(0.25)
    ev.succeed("ok")


def test_threads_and_run_behave_as_simpys():
    plain = _lifecycle(simpy.Environment())
    assert _lifecycle(Environment()) == plain
    assert ("caught", 3, "'boom'", 3.0) in plain and ("until event", "parent done", 3.25) in plain


def test_step_goes_one_event_at_a_time_as_simpys():
    from simpy.core import EmptySchedule

    def stepped(env: simpy.Environment) -> list:
        seen: list = []
        ev = env.event()

        def sleeper():
            yield ev
            seen.append(("woken", env.now))

        def waker():
            yield env.timeout(1.0)
            wake(ev) if isinstance(env, Environment) else ev.succeed()
            seen.append(("waker", env.now))

        env.process(sleeper())
        env.process(waker())
        steps = 0
        with pytest.raises(EmptySchedule):
            while True:
                env.step()
                steps += 1
        return seen + [("steps", steps)]

    assert stepped(Environment()) == stepped(simpy.Environment())


def test_yielding_a_non_event_is_an_error():
    env = Environment()

    def bad():
        yield 42

    env.process(bad())
    with pytest.raises(RuntimeError, match="Invalid yield value"):
        env.run()


def _run(cfg: ServerConfig, wl: Workload, profile, seed: int, fifo_slots: bool) -> tuple:
    from innoflush.simulator.server import Server

    srv = Server(cfg, wl, profile, seed=seed)
    if not fifo_slots:
        srv.cpu_slots = None
    srv.start()
    w = srv.measure(30.0, max_commits=3000)
    return (srv.env.now, dict(srv.counters), w.cpu_busy_s,
            w.commit_latency.percentiles([50, 99]), w.trx_latency.percentiles([50, 99]))


@pytest.mark.parametrize("flavor,trx_commit,log_bin,conns", [
    ("mysql-8.0", 1, True, 16), ("mysql-8.0", 2, False, 4), ("mariadb-10.11", 1, True, 8),
    ("mysql-5.7", 0, True, 3), ("mariadb-10.11", 1, False, 16)])
def test_fifo_cpu_slots_give_the_semaphores_schedule(flavor, trx_commit, log_bin, conns):
    # the cores as a heap of free times (Server.cpu_slots) against the semaphore with
    # hand-offs: the same run, commit for commit, with work that varies per transaction
    cfg = ServerConfig(flavor=flavor, innodb_flush_log_at_trx_commit=trx_commit,
                       log_bin=log_bin)
    wl = Workload(connections=conns, work_cv=0.4, statements_per_trx=3)
    from innoflush.simulator.server import Server

    server = Server(cfg, wl, plp_ssd(), seed=3)
    used = server.cpu_slots is not None
    # where commits do not sleep a wire is paid on an idle core only, which the heap
    # cannot tell on a tie: there it runs on a workload without a wire
    if not server.commits_sleep:
        assert not used
        wl = replace(wl, client_us_per_trx=0.0)
        used = Server(cfg, wl, plp_ssd(), seed=3).cpu_slots is not None
    for seed, profile in ((3, plp_ssd()), (4, consumer_ssd())):
        assert _run(cfg, wl, profile, seed, True) == _run(cfg, wl, profile, seed, False)
    # where a leader keeps its core (no binlog, no writer threads) the heap is not used
    assert used == (log_bin or flavor == "mysql-8.0" or trx_commit == 0)


@pytest.mark.parametrize("cores,extra", [
    (1, {}), (2, dict(statements_per_trx=3, work_cv=0.4)),
    # background syncs' CPU (trx_commit 0/2) on one core: the merge must stay off
    (1, dict(sync_cpu_us=44.1, cpu_us_per_trx=85.9, statements_per_trx=2, work_cv=0.4)),
    (1, dict(commit_cpu_us=10.0, wakeup_us=15.0, sleep_cpu_us=5.0))])
@pytest.mark.parametrize("flavor,trx_commit,log_bin", [
    ("mysql-8.0", 1, True), ("mariadb-10.11", 2, True), ("mysql-5.7", 1, False)])
def test_a_lone_connections_merged_wait_changes_nothing(cores, extra, flavor, trx_commit,
                                                        log_bin):
    from innoflush.simulator.server import Server

    def run(merged: bool) -> tuple:
        cfg = ServerConfig(flavor=flavor, innodb_flush_log_at_trx_commit=trx_commit,
                           log_bin=log_bin, cpu_cores=cores)
        srv = Server(cfg, Workload(connections=1, **extra), consumer_ssd(), seed=11)
        srv.lone_connection = srv.lone_connection and merged
        srv.start()
        w = srv.measure(3.0, max_commits=3000)
        return (srv.env.now, dict(srv.counters), w.cpu_busy_s,
                w.commit_latency.percentiles([50, 99]),
                w.trx_latency.percentiles([50, 99]))

    a, b = run(True), run(False)
    # one sum instead of two: the clock may differ in its last bits, nothing else
    assert a[0] == pytest.approx(b[0], rel=1e-12) and a[1:] == b[1:]


@pytest.mark.parametrize("flavor,trx_commit,sync_binlog,conns,extra", [
    ("mysql-8.0", 1, 1, 1, {}), ("mysql-8.0", 1, 1, 16, {}),
    ("mariadb-10.11", 1, 1, 4, dict(work_cv=0.5, statements_per_trx=2, sync_cpu_us=10.0,
                                    wakeup_us=20.0, sleep_cpu_us=10.0)),
    ("mysql-5.7", 2, 0, 1, dict(client_cpu_us_per_trx=20.0)),
    ("mariadb-10.11", 2, 1, 16, dict(work_cv=0.3))])
def test_running_through_timeouts_changes_nothing(flavor, trx_commit, sync_binlog, conns,
                                                 extra):
    # Environment.run_through against every event through the loop: the same run, bit
    # for bit (the clock, every counter, the latencies, the CPU)
    from innoflush.simulator.server import Server

    def run(through: bool) -> tuple:
        cfg = ServerConfig(flavor=flavor, innodb_flush_log_at_trx_commit=trx_commit,
                           sync_binlog=sync_binlog, log_bin=True)
        srv = Server(cfg, Workload(connections=conns, **extra), consumer_ssd(), seed=5)
        srv.env.run_through = through
        srv.start()
        w = srv.measure(3.0, max_commits=2000)
        return (srv.env.now, dict(srv.counters), w.cpu_busy_s,
                w.device_flush_busy_s, w.device_write_busy_s,
                w.commit_latency.percentiles([50, 99]), w.trx_latency.percentiles([50, 99]))

    through, looped = run(True), run(False)
    assert through == looped
    assert through[1]["commits"] > 300


def _passing(env: simpy.Environment) -> list:
    """Threads that pass time (Environment.pass_time where the environment has it, a
    timeout where not), some while others' events are due before their waits end, with
    waits ending in the same instants (exact binary delays), hand-offs, a question
    whether others are due as each wait ends, and runs that stop at a time and at an
    event: what the loop would have done, in the same order."""
    log: list = []
    sleepers: dict[str, simpy.Event] = {}
    ours = isinstance(env, Environment)

    def due_now() -> bool:
        return env.others_due_now() if ours else env.peek() <= env.now

    def passer(name: str, delay: float, wakes: list[str], passes: bool = True):
        for _ in range(6):
            at = env.now + delay
            ev = env.pass_time(at) if ours and passes else env.timeout(delay)
            if ev is not None:
                yield ev
            log.append((name, env.now, due_now()))
            for w in wakes:
                s = sleepers.get(w)
                if ours:
                    wake(s)
                elif s is not None and not s.triggered:
                    s.succeed()

    def sleeper(name: str):
        for _ in range(4):
            sleepers[name] = ev = env.event()
            yield ev
            log.append((name, env.now, due_now()))

    # p3 (plain timeouts) makes its wait to 1.0 before p1 does: p1 passing time to 1.0
    # processes p3's end, where p3 must find p1's wait due in the same instant, and
    # the sleeper p3 wakes then must not run before p1 goes on
    env.process(passer("p3", 1.0, ["s1"], passes=False))
    env.process(passer("p1", 1.0, ["s2"]))
    env.process(passer("p2", 0.3, ["s1", "s2"]))
    env.process(passer("p4", 0.75, []))
    for s in ("s1", "s2"):
        env.process(sleeper(s))
    env.run(until=2.0)
    log.append(("until time", env.now))
    done = env.event()

    def closer():
        yield env.timeout(1.5)
        if ours:
            wake(done)
        else:
            done.succeed()

    env.process(closer())
    env.run(until=done)
    log.append(("until event", env.now))
    env.run()
    return log


def test_passing_time_processes_what_the_loop_would_in_its_order():
    plain = _passing(simpy.Environment())
    assert _passing(Environment()) == plain
    assert _passing(Environment(run_through=False)) == plain
    # the instant where one wait ends as another's is processed inside it
    assert ("p3", 1.0, True) in plain and ("until event", 3.5) in plain


def test_a_passing_threads_wait_ending_now_counts_as_due():
    # p passes time to 1.0 while q's wait, made first, ends at 1.0: resumed inside p's
    # wait, q must see p's end due in its instant (the loop would have it in the heap)
    env = Environment()
    seen = []

    def q():
        yield env.timeout(1.0)
        seen.append(("q", env.now, env.others_due_now()))
        yield env.timeout(1.0)   # (not ending: its end would be due in the instant)

    def p():
        ev = env.pass_time(1.0)
        if ev is not None:
            yield ev
        seen.append(("p", env.now, env.others_due_now()))

    env.process(q())
    env.process(p())
    env.run()
    assert seen == [("q", 1.0, True), ("p", 1.0, False)]


def test_passing_time_nests_only_so_deep():
    # each thread passes time to an end before the last one's, and each starts inside
    # the wait of the one before: 300 deep, were there no limit (Python's recursion
    # limit is 1,000 frames); beyond MAX_PASSING the waits are timeouts, the order kept
    from innoflush.simulator.events import MAX_PASSING

    def ends(env: simpy.Environment) -> list:
        log: list = []

        def thread(i: int):
            at = env.now + (300 - i)
            ev = env.pass_time(at) if isinstance(env, Environment) else env.timeout(300 - i)
            if ev is not None:
                yield ev
            log.append((i, env.now))

        for i in range(300):
            env.process(thread(i))
        env.run()
        return log

    env = Environment()
    deepest = 0
    pass_events = env._pass_events

    def counting(at: float):
        nonlocal deepest
        deepest = max(deepest, env._passing + 1)
        return pass_events(at)

    env._pass_events = counting   # type: ignore[method-assign]
    assert ends(env) == ends(simpy.Environment())
    assert deepest == MAX_PASSING


def test_a_run_through_timeout_takes_no_trip_through_the_loop(monkeypatch):
    # one connection: a commit's CPU, its redo write and sync and its binlog write and
    # sync have nothing else due meanwhile; what goes through the loop is mostly the
    # hand-offs between its threads (the writer, the flusher, back to the connection)
    import innoflush.simulator.server as server_module

    class Counting(Environment):
        """Counts the events the loop processes (it sets _sole once for each)."""

        processed = 0

        @property
        def _sole(self) -> bool:
            return self.__dict__["sole"]

        @_sole.setter
        def _sole(self, value: bool) -> None:
            Counting.processed += 1
            self.__dict__["sole"] = value

    monkeypatch.setattr(server_module, "Environment", Counting)

    def loop_events(through: bool) -> float:
        srv = server_module.Server(ServerConfig(), Workload(connections=1), plp_ssd(), seed=1)
        srv.env.run_through = through
        srv.start()
        Counting.processed = 0
        srv.measure(3600.0, max_commits=3000)
        return Counting.processed / srv.counters["commits"]

    looped, through = loop_events(False), loop_events(True)
    assert looped > 8.0, looped
    assert through < 4.5, through


def test_a_mysql_flush_stage_leader_takes_who_arrives_in_its_instant():
    # Two connections whose statements end on the two cores at the same instant reach
    # the binlog queue together: MySQL's leader takes the queue once it holds LOCK_log,
    # so both commit as one group, with one redo sync and one binlog sync (led at once,
    # every commit was a group of its own: 2 binlog syncs per redo sync)
    from innoflush.simulator.server import Server

    srv = Server(ServerConfig(), Workload(connections=16), plp_ssd(), seed=1)
    srv.start()
    srv.measure(1.0, max_commits=5000)
    c = srv.counters
    assert c["commits"] / c["binlog_groups"] > 1.8
    assert c["binlog_syncs"] <= c["redo_syncs"] * 1.05


def test_fifo_cpu_slots_stay_off_when_anything_else_runs_on_the_cores():
    from innoflush.simulator.server import Server

    for extra in (dict(client_cpu_us_per_trx=20.0), dict(sync_cpu_us=5.0),
                  dict(sleep_side_cpu_us=3.0), dict(commit_cpu_us=4.0),
                  dict(connections=1)):
        wl = Workload(**{"connections": 8, **extra})
        assert Server(ServerConfig(), wl, plp_ssd(), seed=1).cpu_slots is None, extra
    split = ServerConfig(cpu_cores=4, io_completion_cores=2)
    assert Server(split, Workload(connections=8), plp_ssd(), seed=1).cpu_slots is None
    assert Server(ServerConfig(), Workload(connections=8), plp_ssd(),
                  seed=1).cpu_slots is not None


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_histogram_percentiles_within_the_stated_error(seed):
    rng = np.random.default_rng(seed)
    values = np.concatenate([rng.lognormal(np.log(50e-6), 1.0, 20000),
                             rng.exponential(3e-3, 5000), np.zeros(50)])
    rng.shuffle(values)
    h = LatencyHistogram()
    for v in values.tolist():
        h.add(v)
    qs = [1, 10, 50, 90, 95, 99, 99.9]
    exact = np.percentile(values, qs)
    got = h.percentiles(qs)
    for q, e, g in zip(qs, exact, got, strict=True):
        assert g is not None
        assert abs(g - e) <= MAX_RELATIVE_ERROR * e + 1e-15, (q, e, g)
    assert h.mean() == pytest.approx(values.mean(), rel=1e-9)
    assert h.percentiles([0])[0] == 0.0    # the zeros are counted as zeros


def test_histogram_edges_empty_and_pickle():
    h = LatencyHistogram()
    assert h.percentiles([50]) == [None] and h.mean() is None
    h.add(1e-12)      # under the first bucket: counted there
    h.add(1e9)        # past the last
    lo, hi = h.percentiles([0, 100])
    assert lo is not None and hi is not None and lo < 2e-9 and hi > 1e5
    back = pickle.loads(pickle.dumps(h))
    assert back.percentiles([0, 100]) == [lo, hi] and back.n == 2
    # fixed memory: the counts do not grow with what is added
    assert len(back.counts) == len(LatencyHistogram().counts)


def test_histogram_counts_in_batches_what_one_at_a_time_would():
    """add() defers the counting (PENDING at a time, with numpy): the counts, zeros, n
    and the running sum are those of counting each value as it comes (math.log per
    value, the sum in the order added), whenever the histogram is read."""
    import math
    rng = np.random.default_rng(7)
    values = np.concatenate([rng.lognormal(np.log(1e-3), 2.0, 2 * PENDING + 123),
                             np.zeros(40), -np.ones(3), [1e-12, 1e9]])
    rng.shuffle(values)
    h = LatencyHistogram()
    counts, zeros, total = [0] * BUCKETS, 0, 0.0
    offset = math.floor(math.log(1e-9) * (1.0 / math.log(R)))
    for i, v in enumerate(values.tolist()):
        h.add(v)
        total += v
        if v <= 0:
            zeros += 1
        else:
            k = math.floor(math.log(v) * (1.0 / math.log(R))) - offset
            counts[min(max(k, 0), BUCKETS - 1)] += 1
        assert len(h.pending) < PENDING          # never more than a batch waits
        if i == PENDING + 10:
            assert h.n == i + 1                   # n counts what waits too
    assert h.n == len(values)
    assert h.mean() == total / len(values)       # (reading folds what waits)
    assert not h.pending and h.zeros == zeros
    assert h.counts.tolist() == counts


def test_a_rearmed_event_is_a_new_sleep_each_time():
    """rearm(): a thread sleeping on the same event again is woken as by a new one, and
    a wake of the processed event before it is rearmed does nothing."""
    env = Environment()
    field: dict = {}
    log: list[float] = []

    def sleeper():
        ev = env.event()
        for _ in range(3):
            field["ev"] = rearm(ev)
            yield ev
            log.append(env.now)
            wake(ev)          # processed: nothing to wake
            yield env.timeout(0.5)

    def waker():
        for _ in range(3):
            yield env.timeout(1.0)
            wake(field["ev"])
            wake(field["ev"])  # woken already in this instant: nothing more

    env.process(sleeper())
    env.process(waker())
    env.run()
    assert log == [1.0, 2.0, 3.0]


def test_a_long_run_result_pickles():
    from innoflush.simulator import ServerConfig, Workload, simulate
    from tests.helpers.simprofiles import plp_ssd
    r = simulate(ServerConfig(), Workload(connections=4), plp_ssd(), duration_s=0.2,
                 warmup_s=0.0)
    back = pickle.loads(pickle.dumps(r))
    assert back.commit_latency_ms == r.commit_latency_ms and r.commit_latency_ms["p99"] > 0
