"""What commits that sleep on a sync cost in CPU, beyond the work they do.

A server whose commits sleep on a sync (trx_commit=1 on a slow device) spends more CPU
per transaction than the same load whose commits do not: the sleeping threads are
switched out and woken, and on a virtual machine the vCPUs halt while every commit
waits and run slower once woken. The price of a change that takes the sync off the
commit (trx_commit 1→2) is mostly that CPU given back, so the model needs it; the CPU
measured while commits sleep holds it, and it has to come out.

How it behaves was measured, not assumed: cells of sysbench (`oltp_insert`,
`oltp_write_only`, `oltp_read_write`; 1, 4 and 16 threads) on MariaDB 10.11, each run at
trx_commit=1 and then 2 on a 2-vCPU VM (Firecracker) with its virtio disk
and two emulated devices (commit waits 0.04-7.5 ms), `lab validate --workload-cmd`
runs whose reports ship in docs/validation/. The CPU the server
gave back per transaction (all its threads, /proc) is not a factor on the transaction's
CPU — at one thread on 3-ms syncs a 90-µs insert gave back ~380 µs, a 1,800-µs
`read_write` 270-840 µs — but a *rate*: a share of a core for every commit asleep, up to
as many as the host has cores, plus a wake-up for every sync the commits sleep on. Per
transaction:

    sleep cost (µs) = SYNC_WAKE_US * redo syncs per commit
                      + SLEEP_CORES * min(asleep, cores) ** SLEEP_GROWTH / commits_per_s

asleep: commits asleep on average (commit wait per transaction × commits per second).
Below the cap that is 7 % of the commit wait; past it, more sleepers add nothing — a
sleeping commit leaves a core idle, and there are only so many cores to idle. It was
`SLEEP_WAKE_US + 0.10 * asleep ** 0.2 / commits_per_s` (20 µs a commit) until 427 cells
(31 runs, 2026-11-25..29) showed the rate by connections: 0.08 cores given back at one
thread (0.7 commits asleep), 0.20 at 4 (2.9), 0.16 at 16 (8.6) — it stops growing at the
2 cores, where the old form grew on, and under-priced 4 threads (the CPU after 17 % too
high, the median) and over-priced 16 (7 % too low).

Fitted by least absolute log error on the connection threads' CPU after the change
(the servers' CPU after, scaled by the connection threads' share before;
scripts/sleep_cost_fit.py); left one run out in turn, over the 427 cells the CPU after
came within 15 % in 222 and within 30 % in 336 (the old form, refitted on the same
cells: 192 and 303; taking the CPU as measured: 89 and 168). The clients (sysbench
here) gave back CPU the same way, less of it: their rate grows with the transactions
inside the server at once (constants of the first 151 cells).

These figures are this VM's. A host whose idle cores do not halt (bare metal, a VM
with idle polling) probably gives back less — not measured here — and the prediction of
trx_commit 1→2 there would be high. The interval a prediction carries (error_bands.py)
is measured on the same VM.
"""

from __future__ import annotations

import math

SYNC_WAKE_US = 60.0       # per redo sync the commits sleep on: switched out, woken
SLEEP_CORES = 0.07        # cores' worth of CPU while one commit sleeps on average
SLEEP_GROWTH = 1.0        # ... and how it grows with the commits asleep at once, counted
                          # up to the host's cores
CLIENT_CORES = 0.015      # the clients' rate, by the transactions inside the server
CLIENT_GROWTH = 0.6
# Whatever the rate says, a transaction keeps a share of the CPU it was measured at, and
# the longer its commits slept the smaller that share: FLOOR_SHARE_AT at a commit wait of
# FLOOR_WAIT_US or less, FLOOR_SHARE_FALL less for every e-fold of the wait beyond (0.42
# at this VM's disk's 0.3 ms, 0.29 at the SAN's 3 ms, 0.24 at the Samsung's 6.4 ms). It
# binds on inserts with long sleeps, whose CPU after the change is about the same on
# every device (the same statements on a server that no longer sleeps), while the CPU
# before grows with the sleep. A single share (0.25) left the SAN's 4-thread inserts at
# 0.85 of their server CPU after and the Samsung's at 0.93 (medians). Chosen on the
# connection threads' CPU after, the rate's constants as they are, each run left out in
# turn: within 15 % in 279 of 508 cells, within 30 % in 403, against 272 and 393 for 0.25.
# With the wire paid on an idle core (simulator/server.py), 360 of 441 trx_commit changes
# were predicted within x/1.3 offline, against 348
# (docs/validation/notebook/2026-11-29-wire-paid-on-an-idle-core.md). Fitted jointly with
# the rate on the CPU alone, scripts/sleep_cost_fit.py goes to its grid's edge (wake 80,
# cores 0.065, 0.55 and 0.08), not judged on the change
FLOOR_SHARE_AT = 0.49
FLOOR_SHARE_FALL = 0.06
FLOOR_WAIT_US = 100.0
FLOOR_SHARE_MIN = 0.1
CLIENT_FLOOR_SHARE = 0.5


def given_back_us(busy: float, commits_per_s: float, wake_us: float, cores: float,
                  growth: float, busy_cap: float | None = None,
                  wakes_per_commit: float = 1.0) -> float:
    """CPU per transaction (µs) given back by a rate of `cores` × busy^growth spread over
    the commits, plus wake_us for each of wakes_per_commit; busy: commits asleep (or
    transactions inside the server) on average, counted up to busy_cap. 0 when nothing
    is busy."""
    if busy <= 0 or commits_per_s <= 0:
        return 0.0
    if busy_cap is not None:
        busy = min(busy, busy_cap)
    return wake_us * wakes_per_commit + cores * busy ** growth / commits_per_s * 1e6


def server_sleep_cost_us(commit_wait_us: float, commits_per_s: float,
                         syncs_per_s: float | None = None,
                         cpu_cores: float | None = None) -> float:
    """The server's CPU per transaction that goes with its commits' sleep (µs): what it
    gives back when they no longer sleep. syncs_per_s: the redo syncs the commits waited
    on (one per commit when not known); cpu_cores: the server host's cores. 0 when
    nothing is known to sleep."""
    wakes = (min(1.0, syncs_per_s / commits_per_s) if syncs_per_s and commits_per_s > 0
             else 1.0)
    return given_back_us(commit_wait_us * commits_per_s / 1e6, commits_per_s,
                         SYNC_WAKE_US, SLEEP_CORES, SLEEP_GROWTH, busy_cap=cpu_cores,
                         wakes_per_commit=wakes)


def client_sleep_cost_us(inside_us: float, commits_per_s: float) -> float:
    """The clients' CPU per transaction that goes with waiting on a sleeping server (µs)."""
    return given_back_us(inside_us * commits_per_s / 1e6, commits_per_s,
                         0.0, CLIENT_CORES, CLIENT_GROWTH)


def floor_share(commit_wait_us: float, at: float = FLOOR_SHARE_AT,
                fall: float = FLOOR_SHARE_FALL) -> float:
    """The share of its CPU a transaction whose commits waited commit_wait_us keeps once
    they do not sleep, whatever the sleep cost's rate takes out."""
    beyond = max(commit_wait_us, FLOOR_WAIT_US) / FLOOR_WAIT_US
    return max(FLOOR_SHARE_MIN, at - fall * math.log(beyond))


def without_sleep(cpu_us: float, cost_us: float, floor_share: float) -> float:
    """The CPU per transaction once commits do not sleep: cpu_us less the sleep's cost,
    never below floor_share of it (the cost is a rate's share: at a commit rate far from
    the measured ones it could exceed the transaction's own CPU)."""
    return max(cpu_us * floor_share, cpu_us - cost_us)
