"""What commits that sleep on a sync cost in CPU, beyond the work they do.

A server whose commits sleep on a sync (trx_commit=1 on a slow device) spends more CPU
per transaction than the same load whose commits do not: the sleeping threads are
switched out and woken, and on a virtual machine the vCPUs halt while every commit
waits and run slower once woken. The price of a change that takes the sync off the
commit (trx_commit 1→2) is mostly that CPU given back, so the model needs it; the CPU
measured while commits sleep holds it, and it has to come out.

How it behaves was measured, not assumed: cells of sysbench (`oltp_insert`,
`oltp_write_only`, `oltp_read_write`; 1, 4 and 16 threads) on MariaDB 10.11, each run at
trx_commit=1 and then 2 on a 2-vCPU VM (Firecracker) with its virtio disk and two
emulated devices (commit waits from tens of µs to several ms), `lab validate
--workload-cmd` runs whose reports ship in docs/validation/. The CPU the server gave
back per transaction (all its threads, /proc) is not a factor on the transaction's CPU —
a light insert gave back several times its own CPU, a heavy `read_write` a fraction of
it — but a *rate*: a share of a core for every commit asleep, up to as many as the host
has cores, plus a wake-up for every sync the commits sleep on. Per transaction:

    sleep cost (µs) = SYNC_WAKE_US * redo syncs per commit
                      + SLEEP_CORES * min(asleep, cores) ** SLEEP_GROWTH / commits_per_s

asleep: commits asleep on average (commit wait per transaction × commits per second).
Below the cap that is a fixed share of the commit wait; past it, more sleepers add
nothing — a sleeping commit leaves a core idle, and there are only so many cores to idle.
An earlier form, a wake-up a commit plus a rate that grew on with the commits asleep,
under-priced 4 threads and over-priced 16: what the server gave back stops growing at
the host's cores (docs/validation/notebook/2026-11-29-sleeping-commit-cpu-stops-at-the-cores.md
has the cells, the rates by connections and both forms' errors).

Fitted by least absolute log error on the connection threads' CPU after the change
(the servers' CPU after, scaled by the connection threads' share before;
scripts/sleep_cost_fit.py), and judged with one run left out in turn: it puts the CPU
after closer than the old form refitted on the same cells, and far closer than the CPU
as measured. The clients (sysbench here) gave back CPU the same way, less of it: their
rate grows with the transactions inside the server at once
(docs/validation/notebook/2026-11-27-what-a-sleeping-commit-costs.md).

These constants are this VM's. A host whose idle cores do not halt (bare metal, a VM
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
# FLOOR_WAIT_US or less, FLOOR_SHARE_FALL less for every e-fold of the wait beyond. It
# binds on inserts with long sleeps, whose CPU after the change is about the same on
# every device (the same statements on a server that no longer sleeps), while the CPU
# before grows with the sleep; a single share priced the slow devices' inserts too low.
# Chosen on the connection threads' CPU after, the rate's constants as they are, each
# run left out in turn. Fitted jointly with the rate on the CPU alone,
# scripts/sleep_cost_fit.py goes to its grid's edge, a choice not judged on the change
# (docs/validation/notebook/2026-11-29-wire-paid-on-an-idle-core.md has the shares and
# the counts)
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
