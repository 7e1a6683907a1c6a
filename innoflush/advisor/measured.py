"""The simulator's Workload from what the server was seen doing: every input read, not
solved, each with its source.

innoflush.live.workload measures the inputs: the connections and the time a transaction
spends outside the server from processlist samples, the server's CPU per transaction from
/proc when it runs on this host (the bound the processlist gives otherwise), the other
processes' CPU on this host (the load generator's, when it runs here: it competes for the
same cores), statements per transaction from Questions, the files the window wrote. This
turns them, with the counter deltas (``workload_from_observed``: redo bytes, pages dirtied
and how many come back after their write, binlog bytes), into the simulator's Workload;
advisor/fit.py then checks that the model explains what was seen.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

from ..live.evidence import WorkloadEvidence
from ..live.observed import Observed
from ..live.pages import new_page_dblwr_share, page_counts, page_reentry
from ..simulator import Workload
from ..simulator.flavors import PAGE_BYTES
from .round_trip import round_trip_floor
from .sleep_cost import (
    CLIENT_FLOOR_SHARE,
    client_sleep_cost_us,
    floor_share,
    server_sleep_cost_us,
    without_sleep,
)

DEFAULT_WORKLOAD = Workload()
# transactions differ; about as much as the lab's calibrations found for inserts
# (docs/commands/advise.md, 'The workload')
DEFAULT_WORK_CV = 0.3
# what a commit that sleeps on a sync costs in CPU where it was not measured: about what
# the lab's calibration of this kind of 2-vCPU VM found (docs/commands/advise.md)
DEFAULT_SLEEP_CPU_US = 40.0


INSERTS = ("Com_insert", "Com_insert_select", "Com_replace", "Com_replace_select", "Com_load")
DELETES = ("Com_delete", "Com_delete_multi")


def growth_per_commit(o: Observed) -> tuple[float, str]:
    """(bytes the tablespaces grow by per commit, how it was found). The pages the server
    created, where its inserts are not balanced by deletes (a delete's space is reused by
    the next insert: sysbench's write_only deletes and re-inserts a row, and its files do
    not grow while it creates pages); the rows it inserted at an assumed 400 B each where
    it does not count created pages."""
    d, commits = o.deltas, o.commits
    rows_in, rows_out = d.get("Innodb_rows_inserted"), d.get("Innodb_rows_deleted")
    if rows_in is not None and rows_out is not None:
        ins, dels, counted = rows_in, rows_out, "Innodb_rows_inserted/deleted"
    else:
        ins = sum(d.get(k, 0) for k in INSERTS)
        dels = sum(d.get(k, 0) for k in DELETES)
        counted = "insert/delete statements"
    net = max(0.0, 1.0 - dels / ins) if ins else 0.0
    created = d.get("Innodb_pages_created")
    if created is not None and commits:
        growth = created / commits * PAGE_BYTES * net
        return growth, (f"Innodb_pages_created / commits x {PAGE_BYTES // 1024} KiB x "
                        f"{net:.2f}, the share of inserts no delete balanced ({counted})")
    if o.rows_inserted_per_commit is not None:
        growth = DEFAULT_WORKLOAD.growth_bytes_per_trx * o.rows_inserted_per_commit * net
        return growth, "Innodb_rows_inserted / commits x 400 B per row, assumed"
    return DEFAULT_WORKLOAD.growth_bytes_per_trx, ("default: this server counts neither "
                                                   "created pages nor inserted rows")


def workload_from_observed(o: Observed, connections: int | None = None
                           ) -> tuple[Workload, list[str]]:
    """The per-commit figures of the counter deltas (redo, pages, binlog, growth); CPU and
    client time 0 — the caller measures those."""
    a: list[str] = []
    conns = connections or 1
    redo = o.redo_bytes_per_commit
    if redo:
        a.append(f"redo_bytes_per_trx = {redo:.0f} (Innodb_os_log_written / commits)")
    else:
        redo = DEFAULT_WORKLOAD.redo_bytes_per_trx
        a.append(f"redo_bytes_per_trx = {redo} (default: no redo figure)")
    pages = o.page_writes_per_commit
    dirtied = o.pages_dirtied_per_commit
    if dirtied is not None and (pages is None or dirtied > pages):
        pages = dirtied
        a.append(f"pages_dirtied_per_trx = {pages:g} ((Innodb_buffer_pool_pages_flushed + "
                 "growth of Innodb_buffer_pool_pages_dirty) / commits: a page dirtied twice "
                 "in the interval counts once)")
    elif pages is not None:
        a.append(f"pages_dirtied_per_trx = {pages:g} (pages written / commits over the "
                 "interval; the page cleaner's timing makes this approximate)")
    else:
        pages = DEFAULT_WORKLOAD.pages_dirtied_per_trx
        a.append(f"pages_dirtied_per_trx = {pages:g} (default)")
    binlog = o.binlog_bytes_per_commit
    if binlog:
        a.append(f"binlog_bytes_per_trx = {binlog:.0f} (Binlog_bytes_written / commits)")
    else:
        binlog = DEFAULT_WORKLOAD.binlog_bytes_per_trx
        a.append(f"binlog_bytes_per_trx = {binlog} (default: not counted by this server or "
                 "binlog off)")
    growth, how = growth_per_commit(o)
    a.append(f"growth_bytes_per_trx = {growth:.0f} ({how})")
    wl = Workload(connections=conns, cpu_us_per_trx=0.0, client_us_per_trx=0.0,
                  redo_bytes_per_trx=max(1, int(round(redo))),
                  binlog_bytes_per_trx=max(0, int(round(binlog))),
                  pages_dirtied_per_trx=max(0.0, float(pages)), growth_bytes_per_trx=growth)
    wl.validate()
    return wl, a


class _ServerCpu(NamedTuple):
    """The connection threads' CPU a transaction, by where it ran: the statements' (cpu;
    cpu_sleeping: that CPU measured with the commits asleep, where the sleep's cost came
    off, else 0), a commit's sleep on a sync (sleep_cpu), a commit's without a sleep
    (commit_cpu), and what ran between statements (between: the wire's)."""

    cpu: float
    cpu_sleeping: float
    sleep_cpu: float
    commit_cpu: float
    between: float


class _ClientSide(NamedTuple):
    """The time a transaction spends outside the server and the clients' CPU in it, as
    measured (cpu_sleeping: with the commits asleep, where their cost came off, else 0)."""

    outside: float
    cpu: float
    cpu_sleeping: float


def measured_workload(ev: WorkloadEvidence, o: Observed, sleeping: bool = True,
                      new_pages_skip_dblwr: bool = False, commit_syncs: float = 1.0
                      ) -> tuple[Workload | None, dict, list[str], list[str]]:
    """(Workload or None, inputs {field: {value, source, detail}}, assumptions, missing)
    from the measured evidence and the counter deltas; sleeping: the server's commits
    sleep on a sync at its current settings; new_pages_skip_dblwr: its flavor writes the
    pages it created straight to their files (Flavor.new_pages_skip_dblwr); commit_syncs:
    the syncs on a commit's path at its settings (ServerConfig.commit_syncs)."""
    missing = _missing_inputs(ev)
    if missing:
        return None, {}, [], missing
    conns = max(1, int(round(ev.connections.value or 1)))
    base, assumptions = workload_from_observed(o, conns)
    inputs: dict = {}
    server = _server_cpu(ev, sleeping, inputs)
    client = _client_side(ev, server, inputs)
    inputs["connections"] = _measured(ev.connections, conns)
    stmts = max(1, int(round(ev.statements_per_trx.value or 1)))
    inputs["statements_per_trx"] = (
        _measured(ev.statements_per_trx, stmts) if ev.statements_per_trx.value is not None
        else {"value": 1, "source": "default", "detail": ev.statements_per_trx.detail})
    changes, assumptions = _page_shares(ev, o, base, assumptions, new_pages_skip_dblwr)
    changes.update(_file_figures(ev, inputs))
    inputs["work_cv"] = {"value": DEFAULT_WORK_CV, "source": "default",
                         "detail": "how much transactions differ is not shown by the server; "
                         "the lab's calibrations measured 0.28-0.5 for inserts"}
    changes.update(_commit_sleeps_input(o, sleeping, commit_syncs, inputs))
    floor, inputs["round_trip_floor_us"] = round_trip_floor(ev.handoff, conns,
                                                            ev.handoff_note, server.cpu / stmts)
    wl = replace(base, connections=conns, cpu_us_per_trx=round(server.cpu, 3),
                 commit_cpu_us=round(server.commit_cpu, 3),
                 sleep_cpu_us=round(server.sleep_cpu, 3),
                 client_us_per_trx=round(client.outside, 3),
                 client_cpu_us_per_trx=round(client.cpu, 3), statements_per_trx=stmts,
                 cpu_us_per_trx_sleeping=round(server.cpu_sleeping, 3),
                 client_cpu_us_per_trx_sleeping=round(client.cpu_sleeping, 3),
                 work_cv=DEFAULT_WORK_CV, round_trip_floor_us=floor, **changes)
    wl.validate()
    return wl, inputs, assumptions, []


def _measured(inp, value=None) -> dict:
    """An input as the evidence measured it, its value replaced where given."""
    return {"value": inp.value if value is None else value, "source": inp.source,
            "detail": inp.detail}


def _missing_inputs(ev: WorkloadEvidence) -> list[str]:
    """What the evidence lacks that a Workload cannot do without."""
    missing: list[str] = []
    if ev.connections.value is None:
        missing.append(f"the connections: {ev.connections.detail} — give --connections N")
    # both come from the processlist's samples (and /proc on the server's host); a
    # capture has neither, and no option sets them one by one: a workload profile
    # brings every per-transaction cost at once
    costs = [(name, inp.detail) for name, inp in (
        ("the time outside the server", ev.outside_us_per_trx),
        ("the server's CPU per transaction", ev.server_cpu_us_per_trx)) if inp.value is None]
    if costs:
        whys = list(dict.fromkeys(why for _, why in costs))
        missing.append(f"{' and '.join(n for n, _ in costs)}: {'; '.join(whys)} — the "
                       "processlist's samples give them on a live server (an account with "
                       "PROCESS); otherwise --workload NAME|FILE gives the per-transaction "
                       "costs (`innoflush lab calibrate --save`)")
    if ev.commits <= 0:
        missing.append("no write transaction was committed during the interval")
    return missing


def _commit_state_cpu(ev: WorkloadEvidence) -> tuple[float, float]:
    """(the connection threads' CPU a transaction beyond their statements' time, the
    part of it that ran between statements rather than in the commit states)."""
    conn_cpu = float(ev.server_cpu_us_per_trx.value or 0.0)
    # The commit's own CPU (its redo calls, the sleep and wake-up, the spinning of a
    # group commit) is spent in the commit states, inside the commit wait the processlist
    # measures; the statements' time is what is left of the time inside the server, and
    # CPU beyond that ran in the commit. Where commits sleep on a sync that CPU is the
    # sleeping commit's (sleep_cpu_us: gone at a setting without a sync at commit, where
    # an insert load spends visibly less CPU per transaction: docs/commands/advise.md);
    # otherwise it stays with every commit (commit_cpu_us).
    statements_us = max(0.0, (ev.inside_us_per_trx.value or 0.0)
                        - (ev.commit_wait_us_per_trx.value or 0.0))
    overlap = (max(0.0, conn_cpu - statements_us)
               if ev.server_cpu_us_per_trx.source == "/proc" else 0.0)
    # CPU cannot run longer than the time it ran in: what the commit states' wall time
    # cannot hold ran while the connection was idle between statements (its reads of the
    # next statement woken from the network: on a VM whose idle cores halt, far more
    # than the time inside the server;
    # docs/validation/notebook/2026-12-02-page-cleaner-bursts-cpu-no-state-can-hold.md).
    # That is the wire's, at any setting: it goes with the time outside the server,
    # where it takes a core but no time of its own.
    commit_wait = ev.commit_wait_us_per_trx.value
    beyond = max(0.0, overlap - commit_wait) if commit_wait is not None else 0.0
    return overlap, beyond


def _server_cpu(ev: WorkloadEvidence, sleeping: bool, inputs: dict) -> _ServerCpu:
    """The connection threads' CPU split by where it ran (its inputs added to inputs);
    where commits sleep, less what their sleep costs (advisor/sleep_cost.py)."""
    conn_cpu = float(ev.server_cpu_us_per_trx.value or 0.0)
    overlap, beyond = _commit_state_cpu(ev)
    cpu = conn_cpu - overlap
    overlap -= beyond
    sleep_cpu = overlap if sleeping else DEFAULT_SLEEP_CPU_US
    commit_cpu = 0.0 if sleeping else overlap
    # The server's other threads (page cleaner, purge, timers) are left out: the model
    # runs its own page cleaner, and most of the rest is a constant load per second,
    # which per transaction would swell at a low commit rate and inflate every change's
    # price (docs/commands/advise.md, 'The workload', has what they cost).
    inputs["cpu_us_per_trx"] = _measured(ev.server_cpu_us_per_trx, cpu)
    # Commits that sleep cost CPU beyond their work (advisor/sleep_cost.py): the CPU
    # measured is the sleeping cost, and a setting without a sync at commit gives that
    # part back — the larger of its measured rate and the CPU seen in the commit states.
    wait = ev.commit_wait_us_per_trx.value
    cost = (server_sleep_cost_us(wait, ev.commits_per_s, ev.redo_syncs_per_s.value,
                                 ev.cpu_cores.value)
            if sleeping and wait and ev.server_cpu_us_per_trx.source == "/proc" else 0.0)
    cpu_sleeping = 0.0
    if cost > overlap:
        cpu_sleeping = cpu
        cpu = min(cpu, without_sleep(conn_cpu, cost, floor_share(wait)))
        inputs["cpu_us_per_trx"]["detail"] += (
            f"; less {cpu_sleeping - cpu:.0f} µs a commit's sleep costs ({cost:.0f} "
            f"at a {wait:.0f}-µs commit wait and {ev.commits_per_s:.0f} commits/s, "
            "sleep_cost.py)")
        inputs["cpu_us_per_trx"]["value"] = round(cpu, 3)
        inputs["cpu_us_per_trx_sleeping"] = {
            "value": round(cpu_sleeping, 3), "source": ev.server_cpu_us_per_trx.source,
            "detail": "the CPU measured, the commits sleeping on a sync"}
    _commit_cpu_inputs(sleeping, sleep_cpu, commit_cpu, inputs)
    return _ServerCpu(cpu, cpu_sleeping, sleep_cpu, commit_cpu, beyond)


def _commit_cpu_inputs(sleeping: bool, sleep_cpu: float, commit_cpu: float,
                       inputs: dict) -> None:
    """sleep_cpu_us and commit_cpu_us: measured for the kind of commit the server runs,
    the other one a default."""
    how = ("the connection threads' CPU beyond their statements' time inside the server "
           "(the rest ran in the commit states)")
    inputs["sleep_cpu_us"] = (
        {"value": round(sleep_cpu, 3), "source": "/proc", "detail": how + ", the commits "
         "sleeping on a sync"} if sleeping else
        {"value": sleep_cpu, "source": "default", "detail": "commits do not sleep on a sync "
         "here; what one would cost is not measured (lab calibrate measured 44 µs on a "
         "2-vCPU VM)"})
    inputs["commit_cpu_us"] = {"value": round(commit_cpu, 3),
                               "source": "/proc" if not sleeping else "default",
                               "detail": how if not sleeping else "in sleep_cpu_us here"}


def _client_side(ev: WorkloadEvidence, server: _ServerCpu, inputs: dict) -> _ClientSide:
    """The time outside the server and the clients' CPU in it (inputs added to inputs):
    less what waiting on sleeping commits costs the clients, plus the connection threads'
    CPU that ran between statements."""
    outside = float(ev.outside_us_per_trx.value or 0.0)
    inputs["client_us_per_trx"] = _measured(ev.outside_us_per_trx, outside)
    # The clients' CPU grows with every transaction and competes for the server's cores;
    # when the processes at the connections' other end were found, the rest of the host
    # is unrelated load and left out; otherwise all of it stands in for the clients.
    known = ev.client_cpu_us_per_trx if ev.client_cpu_us_per_trx.value is not None \
        else ev.other_cpu_us_per_trx
    other = known.value
    client_cpu = min(outside, other) if other is not None else 0.0
    client_sleeping = 0.0
    if other is not None:
        inputs["client_cpu_us_per_trx"] = _measured(known, client_cpu)
        client_cost = (client_sleep_cost_us(ev.inside_us_per_trx.value or 0.0,
                                            ev.commits_per_s) if server.cpu_sleeping else 0.0)
        if client_cost and client_cpu > 0:
            # the clients wait on every transaction too, and give back CPU the same way
            client_sleeping = client_cpu
            client_cpu = without_sleep(client_cpu, client_cost, CLIENT_FLOOR_SHARE)
            outside -= client_sleeping - client_cpu
            inputs["client_cpu_us_per_trx"]["value"] = round(client_cpu, 3)
            inputs["client_cpu_us_per_trx"]["detail"] += (
                f"; less {client_sleeping - client_cpu:.0f} µs waiting on sleeping commits "
                "costs (sleep_cost.py)")
            inputs["client_cpu_us_per_trx_sleeping"] = {
                "value": round(client_sleeping, 3), "source": known.source,
                "detail": "the clients' CPU measured, the commits sleeping on a sync"}
            inputs["client_us_per_trx"]["value"] = round(outside, 3)
    else:
        inputs["client_cpu_us_per_trx"] = {"value": 0.0, "source": "default",
                                           "detail": "the server is not on this host: its "
                                           "clients' CPU is not known to compete for its cores"}
    if server.between > 0:
        return _with_cpu_between_statements(ev, server.between,
                                            _ClientSide(outside, client_cpu, client_sleeping),
                                            inputs)
    return _ClientSide(outside, client_cpu, client_sleeping)


def _with_cpu_between_statements(ev: WorkloadEvidence, between: float, client: _ClientSide,
                                 inputs: dict) -> _ClientSide:
    """The clients' side with the connection threads' CPU that their commit states could
    not hold added to its CPU, as far as the time outside the server holds it."""
    add = min(between, max(0.0, client.outside - client.cpu))
    client_cpu = client.cpu + add
    client_sleeping = client.cpu_sleeping
    if client_sleeping:
        client_sleeping = min(client.outside, client_sleeping + add)
    inputs["client_cpu_us_per_trx"]["value"] = round(client_cpu, 3)
    inputs["client_cpu_us_per_trx"]["detail"] += (
        f"; and {add:.0f} µs of the connection threads' CPU that their commit states' "
        f"{ev.commit_wait_us_per_trx.value:.0f} µs could not hold: run between statements, "
        "with the time outside the server")
    if "client_cpu_us_per_trx_sleeping" in inputs:
        inputs["client_cpu_us_per_trx_sleeping"]["value"] = round(client_sleeping, 3)
    return _ClientSide(client.outside, client_cpu, client_sleeping)


def _page_shares(ev: WorkloadEvidence, o: Observed, base: Workload, assumptions: list[str],
                 new_pages_skip_dblwr: bool) -> tuple[dict, list[str]]:
    """(the Workload's page figures where the deltas show them, the assumptions with
    theirs): the pages dirtied again after their write and those the doublewrite buffer
    took, else the doublewrite share of a flavor that writes created pages straight."""
    counts = page_counts(o.deltas)
    reentry = page_reentry(ev.commits, counts[0], counts[1],
                           o.gauge_deltas.get("Innodb_buffer_pool_pages_dirty"), counts[2])
    changes: dict = {}
    if reentry is not None:
        changes = {k: reentry[k] for k in ("pages_dirtied_per_trx", "hot_page_share",
                                           "dblwr_page_share")}
        assumptions = [a for a in assumptions if not a.startswith("pages_dirtied")]
        assumptions += reentry["lines"]
    elif new_pages_skip_dblwr:
        # a window the page cleaner slept through: a settled server's first writes
        # are mostly of the pages it created (an insert workload's nearly all)
        share = new_page_dblwr_share(base.growth_bytes_per_trx / PAGE_BYTES,
                                     base.pages_dirtied_per_trx)
        if share is not None:
            changes["dblwr_page_share"] = share["dblwr_page_share"]
            assumptions.append(share["line"])
    return changes, assumptions


def _file_figures(ev: WorkloadEvidence, inputs: dict) -> dict:
    """The files' figures the server showed (extend size, tablespaces a batch syncs) as
    Workload changes, else the simulator's defaults and why (both added to inputs)."""
    changes: dict = {}
    for name, inp, otherwise in (
            ("extend_bytes", ev.extend_bytes,
             "4 extents at a time, as a tablespace over 32 MiB grows"),
            ("tablespaces", ev.tablespaces_written,
             "the files a page flush batch syncs are not known")):
        if inp.value:
            inputs[name] = _measured(inp)
            changes[name] = int(inp.value)
        else:
            inputs[name] = {"value": getattr(DEFAULT_WORKLOAD, name), "source": "default",
                            "detail": f"{inp.detail}: {otherwise}"}
    return changes


def _commit_sleeps_input(o: Observed, sleeping: bool, commit_syncs: float,
                         inputs: dict) -> dict:
    """commit_sleeps as a Workload change (and its input) where a commit sleeps on more
    than one sync, on average."""
    sleeps = commit_sleeps(o, commit_syncs) if sleeping else 1.0
    if sleeps <= 1:
        return {}
    inputs["commit_sleeps"] = {
        "value": sleeps, "source": "measured",
        "detail": f"{min(2.0, commit_syncs):g} syncs on a commit's path (redo and binary "
                  "log): a group's leader sleeps on each, its followers once, "
                  f"{_group_size(o):.2f} commits a group"}
    return {"commit_sleeps": sleeps}


def _group_size(o: Observed) -> float:
    """Commits a sync group held: the binary log's groups where the server counts them
    (MariaDB), else the redo's; at least one."""
    size = o.binlog_commits_per_group or o.commits_per_redo_sync or 1.0
    return max(1.0, float(size))


def commit_sleeps(o: Observed, commit_syncs: float) -> float:
    """The syncs a commit slept on, on average: one for every commit (its own, or its
    group's as a follower), and the leader's further sync where the path has two (the
    redo's and the binary log's), once per group."""
    extra = max(0.0, min(2.0, commit_syncs) - 1.0)
    return round(1.0 + extra / _group_size(o), 3)
