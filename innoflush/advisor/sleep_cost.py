"""What commits that sleep on a sync cost in CPU, beyond the work they do.

A server whose commits sleep on a sync (trx_commit=1 on a slow device) spends more CPU
per transaction than the same load whose commits do not: the sleeping threads are
switched out and woken, and on a virtual machine the vCPUs halt while every commit
waits and run slower once woken. The price of a change that takes the sync off the
commit (trx_commit 1→2) is mostly that CPU given back, so the model needs it; the CPU
measured while commits sleep holds it, and it has to come out.

How it behaves was measured, not assumed: 151 cells of sysbench (`oltp_insert`,
`oltp_write_only`, `oltp_read_write`; 1, 4 and 16 threads) on MariaDB 10.11, each run at
trx_commit=1 and then 2 on a 2-vCPU VM (Firecracker) with its virtio disk
and two emulated devices (commit waits 0.04-7.5 ms), nine `lab validate --workload-cmd`
runs of 2026-11-25..27 whose reports ship in docs/validation/. The CPU the server
gave back per transaction (all its threads, /proc) is not a factor on the transaction's
CPU — at one thread on 3-ms syncs a 90-µs insert gave back ~380 µs, a 1,800-µs
`read_write` 270-840 µs — but a *rate*: about a tenth of a core while commits sleep
(110 ms/s for every workload there), growing slowly with how many sleep at once. Per
transaction:

    sleep cost (µs) = SLEEP_WAKE_US + SLEEP_CORES * asleep ** SLEEP_GROWTH / commits_per_s

asleep: commits asleep on average (commit wait per transaction × commits per second).
Fitted by least absolute log error on the connection threads' CPU after the change
(the servers' CPU after, scaled by the connection threads' share before;
scripts/sleep_cost_fit.py); left one run
out in turn, the CPU after came within 30 % in 129 of the 151 cells (75 with the wake-up
probe's factor it replaces, 65 taking the CPU as measured) and within 15 % in 90 (43;
39). The clients (sysbench here) gave back CPU the same way, less of it: their rate
grows with the transactions inside the server at once.

These figures are this VM's. A host whose idle cores do not halt (bare metal, a VM
with idle polling) probably gives back less — not measured here — and the prediction of
trx_commit 1→2 there would be high. The interval a prediction carries (error_bands.py)
is measured on the same VM.
"""

from __future__ import annotations

SLEEP_WAKE_US = 20.0      # per sleeping commit: switched out, woken
SLEEP_CORES = 0.10        # cores' worth of CPU while one commit sleeps on average
SLEEP_GROWTH = 0.2        # ... and how it grows with the commits asleep at once
CLIENT_CORES = 0.015      # the clients' rate, by the transactions inside the server
CLIENT_GROWTH = 0.6
# whatever the rate says, a transaction keeps this share of the CPU it was measured at
FLOOR_SHARE = 0.3
CLIENT_FLOOR_SHARE = 0.5


def given_back_us(busy: float, commits_per_s: float, wake_us: float, cores: float,
                  growth: float) -> float:
    """CPU per transaction (µs) given back by a rate of `cores` × busy^growth spread over
    the commits, plus wake_us each; busy: commits asleep (or transactions inside the
    server) on average. 0 when nothing is busy."""
    if busy <= 0 or commits_per_s <= 0:
        return 0.0
    return wake_us + cores * busy ** growth / commits_per_s * 1e6


def server_sleep_cost_us(commit_wait_us: float, commits_per_s: float) -> float:
    """The server's CPU per transaction that goes with its commits' sleep (µs): what it
    gives back when they no longer sleep. 0 when nothing is known to sleep."""
    return given_back_us(commit_wait_us * commits_per_s / 1e6, commits_per_s,
                         SLEEP_WAKE_US, SLEEP_CORES, SLEEP_GROWTH)


def client_sleep_cost_us(inside_us: float, commits_per_s: float) -> float:
    """The clients' CPU per transaction that goes with waiting on a sleeping server (µs)."""
    return given_back_us(inside_us * commits_per_s / 1e6, commits_per_s,
                         0.0, CLIENT_CORES, CLIENT_GROWTH)


def without_sleep(cpu_us: float, cost_us: float, floor_share: float = FLOOR_SHARE) -> float:
    """The CPU per transaction once commits do not sleep: cpu_us less the sleep's cost,
    never below floor_share of it (the cost is a rate's share: at a commit rate far from
    the measured ones it could exceed the transaction's own CPU)."""
    return max(cpu_us * floor_share, cpu_us - cost_us)
