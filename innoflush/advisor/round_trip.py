"""The least time a lone connection's statement takes once its commits stop sleeping, on
the server's host: from the hand-off probe (live/handoff.py).

A change that takes the sync off the commit (trx_commit 1→2) turns a one-connection load
from a few statements between milliseconds of sleep into a ping-pong between the client
and the server at full speed. What that ping-pong costs depends on the host more than on
the workload, and the CPU measured while the commits slept does not show it. On the
2-vCPU VMs this project was validated on, sysbench after such a change ran a statement
at a pace set by its workload on the days the idle vCPUs woke at once (a run's wall time
was its processes' CPU time, nothing idle), and at a slower pace, whatever the workload,
on the days they did not: then the VM halted every idle vCPU, and each wake-up went
through the hypervisor (docs/validation/notebook/2026-11-27-lone-connection-slow-waking-cores.md
has the runs).

The probe measures the same hand-off with two processes: a round trip free to cross
cores, and the same round trip with both pinned to one core, where no idle core is ever
woken (the median round trip of each, live/handoff.py). Where the free one costs
RATIO_MIN times the pinned one or more, wake-ups are what the round trip is made of, and
a statement takes at least its own CPU plus HANDOFF_ROUND_TRIPS probe round trips.

Why the statement's CPU is in the floor: a floor made of round trips alone left out the
statement's own work — a light `write_only` statement took fewer round trips than an
insert — and on a slow day the server's CPU per statement grew with the round trip. So
the floor is the statement's CPU as advise measured it (the sleep's cost taken out,
advisor/sleep_cost.py) plus HANDOFF_ROUND_TRIPS round trips, the constant chosen with
each run left out in turn; it predicted the one-connection trx_commit 1→2 cells better
than the best multiple of the round trip alone (docs/validation/notebook/
2026-11-29-lone-connections-statement-cpu-and-hand-off.md has the fit and its figures).

Under a load that keeps the cores awake the probe reads as it does pinned and no floor
is set, the model pricing as before: a limitation, since that load's after-run is a
ping-pong on idle cores all the same. Below RATIO_MIN no floor either: the hosts whose
idle cores answer at once are those the model's other constants were measured on, and
there its one-connection prices held. Where the free/pinned ratio of such a host falls
was not measured (none was at hand when the probe was written): RATIO_MIN is placed
between no wake-up cost (×1) and what the halting VM showed (docs/validation.md).
"""

from __future__ import annotations

HANDOFF_ROUND_TRIPS = 1.2     # probe round trips a statement takes beyond its own CPU
# a statement's time over the floor at the quartiles of the one-connection after runs
# with a floor, over their median
# (docs/validation/notebook/2026-11-29-lone-connections-statement-cpu-and-hand-off.md):
# the days differ more than any one floor carries, so a prediction's range takes the
# floor at each (advisor/predict.py, SPREAD)
FLOOR_QUARTILES = (0.86, 1.18)
RATIO_MIN = 1.8               # free / pinned round trip from which wake-ups dominate


def round_trip_floor(handoff: dict | None, connections: int, note: str,
                     statement_cpu_us: float) -> tuple[float, dict]:
    """(round_trip_floor_us for the Workload, its input {value, source, detail}) from the
    probe's result (Handoff.to_dict(); None: not measured, note says why) and the server's
    CPU per statement once its commits do not sleep (the workload's cpu_us_per_trx over
    its statements)."""
    if connections != 1:
        return 0.0, {"value": 0.0, "source": "default", "detail": "not a lone connection: "
                     "the floor concerns one connection going back and forth with its "
                     "client"}
    if not handoff or not handoff.get("round_trip_us"):
        return 0.0, {"value": 0.0, "source": "unknown", "detail": f"hand-off probe {note}: "
                     "a lone connection's round trips priced as at the hosts the model "
                     "was measured on"}
    rt, ratio = handoff["round_trip_us"], handoff.get("ratio") or 0.0
    probe = (f"hand-off probe: {rt:.0f} µs a round trip across cores, ×{ratio:.2f} the "
             f"{handoff.get('pinned_us') or 0:.0f} µs on one core")
    if ratio < RATIO_MIN:
        return 0.0, {"value": 0.0, "source": "measured", "detail": f"{probe}; under "
                     f"×{RATIO_MIN:g}: this host's idle cores wake at once, no floor"}
    cpu = max(0.0, statement_cpu_us)
    floor = cpu + HANDOFF_ROUND_TRIPS * rt
    return round(floor, 1), {
        "value": round(floor, 1), "source": "measured", "detail": f"{probe}: its idle "
        f"cores wake slowly, and a statement of a lone connection whose commits do not "
        f"sleep takes at least its {cpu:.0f} µs of server CPU and {HANDOFF_ROUND_TRIPS:g} "
        "such round trips (advisor/round_trip.py)"}


__all__ = ["FLOOR_QUARTILES", "HANDOFF_ROUND_TRIPS", "RATIO_MIN", "round_trip_floor"]
