"""The workload a live server runs, measured read-only over the sampling window.

What the simulator needs of a workload, each read where the server or the host shows it,
and labelled with where it came from (``source``):

- ``measured``: processlist samples (innoflush.live.activity) — the connections that were
  busy, and the share of their time inside the server; with the commit rate T and N
  connections a transaction takes N/T of a connection: f·N/T inside, (1 − f)·N/T outside
  (the client, the network, wake-ups: time no server counter shows);
- ``/proc``: the server's CPU when it runs on this host (innoflush.live.procfs): its
  connection threads' (by the thread ids the processlist gives), its background threads',
  and the rest of the machine's (the load generator, when it runs here);
- ``performance_schema``: the server's own count of its data-file, redo and binlog syncs
  and their latency, commits and COMMIT latency, when it is on;
- ``estimated``: derived from counters with a stated rule; ``bound``: only a limit is known;
  ``option``: given on the command line; ``default``/``unknown``: nothing measured it.

Nothing here is solved from the commit rate: a figure the server does not show is said to
be unknown, and the fit that uses these inputs (innoflush.advisor.fit) then has to explain
the observed rate with them, or say it cannot.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from . import perfschema
from .activity import PERIOD_S, Activity, ActivitySampler, sampling_period
from .evidence import (
    HostSnapshot,
    Input,
    WorkloadEvidence,
    evidence,
)
from .facts import ServerFacts
from .handoff import measure_handoff
from .peers import client_processes
from .procfs import (
    local_server_pid,
    machine_cpu,
    proc_cpu_seconds,
    processes_cpu,
    thread_cpu,
)
from .sampling import Interval, combine, sample
from .tablespaces import extend_step, modified_counters, tablespaces_written


def _own_cpu_s() -> float:
    """innoflush's CPU, its finished children's included."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _host_snapshot(pid: int | None) -> HostSnapshot:
    return HostSnapshot(proc_cpu_seconds(pid) if pid else None,
                         thread_cpu(pid) if pid else {}, machine_cpu(),
                         _own_cpu_s(),
                         processes_cpu() if pid else {})


class WorkloadProbe:
    """Measures the workload around a sampling window: start() before it, finish() after.

    session: the status session (its statements are counted, to take the advisor's own
    out of Questions); open_session: a callable giving another ReadOnlySession for the
    processlist sampler (None: no sampling); connections: --connections, if given."""

    def __init__(self, session: Any, facts: ServerFacts,
                 open_session: Callable[[], Any] | None = None,
                 connections: int | None = None, cpu_cores: int | None = None,
                 is_local: bool = True, period_s: float | None = None):
        self.session = session
        self.facts = facts
        self.open_session = open_session
        self.connections_option = connections
        self.cpu_cores_option = cpu_cores
        self.is_local = is_local
        self.period_s = period_s
        self.sampler: ActivitySampler | None = None
        self.pid: int | None = None
        self.pid_reason = "not looked for"
        self._pfs0: perfschema.PfsSnapshot | None = None
        self._modified0: tuple[dict | None, str] = (None, "not read")
        self._host0: HostSnapshot | None = None
        self._statements0 = 0

    def start(self) -> None:
        uptime = _status_int(self.session, "Uptime")
        if self.is_local:
            self.pid, self.pid_reason = local_server_pid(
                self.facts.variables.get("pid_file"), uptime)
        else:
            self.pid, self.pid_reason = None, "connected over the network, not to this host"
        # the slow part first (a scan of every process's fds), so that
        # the snapshots below open the window next to the status counters' first read
        clients = client_processes(self.pid) if self.pid else set()
        if self.open_session is not None:
            own = _connection_id(self.session)
            self.sampler = ActivitySampler(self.open_session, self.period_s or PERIOD_S,
                                           exclude_ids=[own] if own is not None else [])
            self.sampler.start()
        self._modified0 = modified_counters(self.session, self.facts.product)
        self._pfs0 = perfschema.snapshot(self.session)
        self._host0 = _host_snapshot(self.pid)
        self._host0.clients = clients
        self._statements0 = len(getattr(self.session, "statements", []))

    def finish(self, total: Interval) -> WorkloadEvidence:
        """The evidence over the window `total` (the combined valid intervals)."""
        own_statements = len(getattr(self.session, "statements", [])) - self._statements0
        # the window closes next to the status counters' last read; the slow parts after
        pfs1 = perfschema.snapshot(self.session)
        host1 = _host_snapshot(self.pid)
        activity = self.sampler.stop() if self.sampler is not None else Activity(
            None, problem="processlist not sampled (no second session)")
        host1.clients = client_processes(self.pid) if self.pid else set()
        pfs = perfschema.delta(self._pfs0, pfs1)
        # not asked again where the first read found nothing to compare with
        modified1 = (modified_counters(self.session, self.facts.product)
                     if self._modified0[0] is not None else self._modified0)
        step, source, detail = extend_step(self.session, self.facts.variables,
                                           self.facts.product)
        ev = evidence(self.facts, total, activity, pfs, self._host0, host1,
                      own_statements + activity.queries + 2,
                      pid=self.pid, pid_reason=self.pid_reason,
                      connections_option=self.connections_option,
                      cpu_cores_option=self.cpu_cores_option)
        ev.extend_bytes = Input(None if step is None else float(step), source, detail)
        ev.tablespaces_written = Input(*tablespaces_written(
            self._modified0, modified1, self.facts.variables, self.facts.product))
        return ev

    def reconnected(self, session: Any) -> None:
        """The status session was replaced after a lost connection (a restart): the
        server's own counters (performance_schema) and its process (/proc) started
        again, so their before-and-after figures are not comparable."""
        own = len(getattr(self.session, "statements", [])) - self._statements0
        self.session = session
        self._statements0 = len(getattr(session, "statements", [])) - own
        self._pfs0 = None
        self._modified0 = (None, "the server restarted during the window: its tables' "
                           "row counts started again")
        self.pid = None
        self.pid_reason = ("the server restarted during the window: its process's CPU "
                           "before and after are not comparable")

    def abandon(self) -> None:
        if self.sampler is not None:
            self.sampler.stop()


def measure_workload(session: Any, facts: ServerFacts, *, interval_s: float, samples: int,
                     open_session: Callable[[], Any] | None = None,
                     connections: int | None = None, cpu_cores: int | None = None,
                     is_local: bool = True,
                     progress: Callable[[int, float], object] | None = None,
                     ) -> tuple[list[Interval], WorkloadEvidence | None]:
    """sample() with the workload measured around it. The evidence is None when no
    interval was valid (sample's caller reports that); a restart inside the window
    makes the per-process figures meaningless, which the evidence notes."""
    probe = WorkloadProbe(session, facts, open_session, connections, cpu_cores, is_local,
                          period_s=sampling_period(interval_s * samples))
    probe.start()
    reopened: list[Any] = []   # sessions opened after a lost connection: closed here

    def reconnected(new: Any) -> None:
        reopened.append(new)
        probe.reconnected(new)

    try:
        try:
            intervals = sample(session, interval_s, samples, progress=progress,
                               open_session=open_session, on_reconnect=reconnected)
        except BaseException:
            probe.abandon()
            raise
        if not any(iv.valid for iv in intervals):
            probe.abandon()
            return intervals, None
        ev = probe.finish(combine(intervals))
    finally:
        for s in reopened:
            s.close()
    if reopened:
        ev.notes.append("the connection was lost during the window and opened again (a "
                        "server restart): performance_schema and /proc figures are left "
                        "out, the counters cover only the valid intervals")
    elif not all(iv.valid for iv in intervals):
        ev.notes.append("an interval was invalid (restart or counter reset): the processlist "
                        "and /proc figures cover the whole window, the counters only the "
                        "valid intervals")
    return intervals, ev


def measure_handoff_cost(ev: WorkloadEvidence, is_local: bool) -> None:
    """The host's hand-off round trip (live/handoff.py) into ev, where it can matter: the
    server on this host, one connection at a time. Run after the window has closed, so
    its two processes do not weigh on what was measured."""
    conns = ev.connections.value
    if not is_local:
        ev.handoff_note = "not measured: the server is on another host"
    elif conns is None or round(conns) > 1:
        ev.handoff_note = ("not measured: more than one connection at a time keeps the "
                           "cores busy, and the round trip's floor concerns a lone one")
    else:
        h = measure_handoff()
        if h.round_trip_us is None:
            ev.handoff_note = f"not measured: {h.problem}"
        else:
            ev.handoff = h.to_dict()


def _status_int(session: Any, name: str) -> float | None:
    try:
        rows = session.query("SHOW GLOBAL STATUS LIKE %s", (name,))
        return float(rows[0][1]) if rows else None
    except Exception:  # noqa: BLE001
        return None


def _connection_id(session: Any) -> int | None:
    try:
        return int(session.query("SELECT CONNECTION_ID()")[0][0])
    except Exception:  # noqa: BLE001 - then the status session is counted, as one more
        return None
