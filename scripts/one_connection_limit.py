"""How well can any reading taken when advise runs price trx_commit 1→2 for a lone
connection? The after runs of the kept `lab validate --workload-cmd` reports against the
hand-off probe (live/handoff.py) read at three time scales.

A lone connection whose commits no longer sleep goes back and forth with its client at
full speed; on the validation VM its statement's time moved ×2–3 from run to run (a
slower host: the CPU per statement rose as much at 16 threads, where no core idles), while
its trx_commit=1 window, lost in the sync's milliseconds, showed nothing of it. The probe
sees it, with noise: this script fits the round-trip floor's forms (advisor/round_trip.py)
on the one-connection `trx-commit` cells, each run left out in turn, with the probe as
advise read it in the cell, as the median of the same device's one-connection cells of
that run (about ten minutes), and as the median of the whole run's (about 25), and prints
how many after runs each puts within ×/÷1.3. A constant per cell (the median of the other
runs of the same cell) is the baseline that knows nothing of the host; the host's speed
read after the fact (host_speed: what the after runs at 4 and 16 threads spent) is the
bound that knows it all.

    python scripts/one_connection_limit.py [REPORT ...]     # default: docs/validation/sysbench-*
    python scripts/one_connection_limit.py --probe 16       # the probe's own spread here, now
    python scripts/one_connection_limit.py --cache FILE     # and today's advise on the cells

--cache reads the cells' refits that `scripts/prediction_error.py --cache FILE` kept (the
same model only) and prints how many of the same cells today's advise prices within.

--probe N times the probe N times in three sizes (rounds x hand-offs: 5x400 as advise
runs it, 40x200, 20x400) on this host, 2 s apart, and prints the spread of each (a load
beside it changes the level, not the point: run it idle).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from innoflush.advisor.measured import measured_workload  # noqa: E402
from innoflush.lab.experiments.refit import read_validation  # noqa: E402
from innoflush.live.evidence import WorkloadEvidence  # noqa: E402
from innoflush.live.observed import Observed  # noqa: E402

WITHIN = math.log(1.3)
RT_REF_US = 62.0   # the probe's run median on the validation VM's fast runs
# the forms: statement µs from (the model's CPU per statement, the probe's round trip)
FORMS: dict[str, tuple[Callable[..., float], list]] = {
    "a·cpu + b·rt (today's form)": (
        lambda cpu, rt, a, b: a * cpu + b * rt,
        [np.arange(0.0, 1.61, 0.1), np.arange(0.6, 2.01, 0.1)]),
    "a·cpu + b·rt·(rt/62)": (
        lambda cpu, rt, a, b: a * cpu + b * rt * rt / RT_REF_US,
        [np.arange(0.0, 1.21, 0.1), np.arange(0.6, 2.01, 0.1)]),
}
# the host's speed in place of the probe: (a·cpu + b·62 µs)·speed
ORACLE = (lambda cpu, speed, a, b: (a * cpu + b * RT_REF_US) * speed,
          [np.arange(0.1, 1.61, 0.1), np.arange(0.0, 3.01, 0.1)])


def run_key(path: Path) -> str:
    """A run's name: the Samsung's half of a run kept apart is the same run."""
    return path.name.replace("-samsung", "")


def rows_of(paths: list[Path]) -> list[dict]:
    """One row per one-connection trx-commit cell whose advise report has the probe:
    the after run's µs per statement, the model's CPU per statement (advise's fit of the
    before run: the sleep's cost taken out), the probe's round trip."""
    reports = [(path, read_validation(path)) for path in paths]
    out = []
    for path, report in reports:
        for dev in report.get("devices", []):
            for c in dev.get("cells", []):
                rep = c.get("advise_report") or {}
                w = rep.get("workload") or {}
                h = w.get("handoff") or {}
                if (c.get("change") != "trx-commit" or c.get("connections") != 1
                        or not c.get("measured_ratio") or not h.get("round_trip_us")
                        or not (c.get("after") or {}).get("tps")):
                    continue
                try:
                    wl, _, _, missing = measured_workload(WorkloadEvidence.from_dict(w),
                                                          Observed.from_dict(rep["observed"]))
                except (KeyError, TypeError, ValueError):
                    continue
                if wl is None or missing:
                    continue
                stm = wl.statements_per_trx
                out.append({"run": run_key(path), "file": path.name, "device": c["device"],
                            "workload": c["workload"],
                            "statement_us": 1e6 / c["after"]["tps"] / stm,
                            "cpu_us": wl.cpu_us_per_trx / stm, "rt_cell": h["round_trip_us"],
                            "measured_ratio": c["measured_ratio"]})
    speed = host_speed(reports)
    return [dict(r, host_speed=speed.get(r["run"])) for r in with_pooled_probes(out)]


def host_speed(reports: list[tuple[Path, dict]]) -> dict[str, float]:
    """A run's host speed after the fact (advise cannot have it): the median over its 4-
    and 16-thread trx-commit cells of the after run's server CPU a statement over the same
    cell's median across the runs. reports: (path, the report read)."""
    cells = []
    for path, report in reports:
        for dev in report.get("devices", []):
            for c in dev.get("cells", []):
                w = (c.get("advise_report") or {}).get("workload") or {}
                stm = (w.get("statements_per_trx") or {}).get("value")
                cpu = (c.get("after") or {}).get("server_cpu_us_per_trx")
                if c.get("change") == "trx-commit" and c.get("connections", 1) > 1 \
                        and stm and cpu:
                    cells.append((run_key(path), (c["device"], c["workload"],
                                                  c["connections"]), cpu / stm))
    by_cell = defaultdict(list)
    for _, cell, x in cells:
        by_cell[cell].append(x)
    by_run = defaultdict(list)
    for run, cell, x in cells:
        by_run[run].append(math.log(x / statistics.median(by_cell[cell])))
    return {run: math.exp(statistics.median(v)) for run, v in by_run.items()}


def with_pooled_probes(rows: list[dict]) -> list[dict]:
    """rt_device: the median probe of the row's device's cells in its run; rt_run: of all
    the run's."""
    dev, run = defaultdict(list), defaultdict(list)
    for r in rows:
        dev[(r["run"], r["device"])].append(r["rt_cell"])
        run[r["run"]].append(r["rt_cell"])
    for r in rows:
        r["rt_device"] = statistics.median(dev[(r["run"], r["device"])])
        r["rt_run"] = statistics.median(run[r["run"]])
    return rows


def _fit(form: Callable[..., float], grid: list, rows: list[dict], probe: str) -> tuple:
    """The grid point of least mean absolute log error."""
    def loss(p: tuple) -> float:
        return float(np.mean([abs(math.log(form(r["cpu_us"], r[probe], *p)
                                           / r["statement_us"])) for r in rows]))
    return min(itertools.product(*grid), key=loss)


def held_out(form: Callable[..., float], grid: list, rows: list[dict], probe: str
             ) -> tuple[int, int, tuple]:
    """(cells within ×/÷1.3, cells, the constants fitted on all): each run left out in
    turn, the constants fitted on the others."""
    inside = 0
    for run in sorted({r["run"] for r in rows}):
        p = _fit(form, grid, [r for r in rows if r["run"] != run], probe)
        inside += sum(abs(math.log(form(r["cpu_us"], r[probe], *p) / r["statement_us"]))
                      < WITHIN for r in rows if r["run"] == run)
    return inside, len(rows), tuple(round(float(x), 2) for x in _fit(form, grid, rows, probe))


def cell_history(rows: list[dict]) -> tuple[int, int]:
    """Within ×/÷1.3 when each cell's measured ratio is priced as the median of the other
    runs of the same cell (device, workload): what the cell's own history knows."""
    inside = total = 0
    for r in rows:
        rest = [math.log(o["measured_ratio"]) for o in rows if o["run"] != r["run"]
                and (o["device"], o["workload"]) == (r["device"], r["workload"])]
        if rest:
            total += 1
            inside += abs(statistics.median(rest) - math.log(r["measured_ratio"])) < WITHIN
    return inside, total


def advise_today(rows: list[dict], cache_file: Path) -> str:
    """Today's advise on the same cells, from prediction_error.py's cache of refits."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from prediction_error import _model_key
    saved = json.loads(cache_file.read_text())
    if saved.get("model") != _model_key():
        return f"{cache_file}: refits of another model; run scripts/prediction_error.py " \
               f"--cache {cache_file} first"
    inside = total = 0
    for r in rows:
        got = saved["cells"].get(f"{r['file']}|{r['device']}|{r['workload']}|1|trx-commit")
        if got and got.get("explained") and got.get("ratio"):
            total += 1
            inside += abs(math.log(r["measured_ratio"] / got["ratio"])) < WITHIN
    return f"today's advise (its refits): the ratio within x/÷1.3 in {inside}/{total} " \
           f"it predicts"


def probe_spread(repeats: int) -> None:
    from innoflush.live.handoff import measure_handoff
    sizes = {"5x400": (5, 400), "40x200": (40, 200), "20x400": (20, 400)}
    got: dict[str, list[float]] = {k: [] for k in sizes}
    for _ in range(repeats):
        for k, (rounds, handoffs) in sizes.items():
            h = measure_handoff(rounds, handoffs)
            if h.round_trip_us:
                got[k].append(h.round_trip_us)
        time.sleep(2)
    for k, v in got.items():
        if len(v) > 1:
            print(f"{k}: median {statistics.median(v):.1f} µs, sd of log "
                  f"{statistics.pstdev(math.log(x) for x in v):.3f} over {len(v)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("reports", nargs="*", type=Path)
    ap.add_argument("--probe", type=int, metavar="N", help="time the probe N times here")
    ap.add_argument("--cache", type=Path, metavar="FILE",
                    help="prediction_error.py's cache: today's advise on the same cells")
    args = ap.parse_args()
    if args.probe:
        probe_spread(args.probe)
        return
    paths = args.reports or sorted((ROOT / "docs/validation").glob("sysbench-*.json.gz"))
    rows = rows_of(paths)
    runs = len({r["run"] for r in rows})
    print(f"{len(rows)} one-connection trx-commit cells with the probe, {runs} runs")
    if runs < 3:
        sys.exit("the held-out fits and the host's speed need three runs or more "
                 "(a report of the same device and workloads is judged against the others)")
    if args.cache:
        print(advise_today(rows, args.cache))
    inside, total = cell_history(rows)
    print(f"a constant per cell (the other runs' median ratio): {inside}/{total} within x/÷1.3")
    known = [r for r in rows if r["host_speed"]]    # runs with 4- or 16-thread cells
    print("run: host speed (after the fact), median probe, median µs a statement after")
    for run in sorted({r["run"] for r in known}, key=lambda k: next(
            r["host_speed"] for r in known if r["run"] == k)):
        mine = [r for r in known if r["run"] == run]
        print(f"  {run}: {mine[0]['host_speed']:.2f}, {mine[0]['rt_run']:.0f} µs, "
              f"{statistics.median(r['statement_us'] for r in mine):.0f} µs")
    speed = np.log([r["host_speed"] for r in known])
    for probe in ("rt_cell", "rt_run"):
        print(f"correlation of log {probe} with log host speed (after the fact), "
              f"{len(known)} cells: "
              f"{np.corrcoef(np.log([r[probe] for r in known]), speed)[0, 1]:.2f}")
    by_cell = defaultdict(list)
    for r in known:
        by_cell[(r["device"], r["workload"])].append(r["cpu_us"])
    fit_cpu = [math.log(r["cpu_us"] / statistics.median(by_cell[(r["device"], r["workload"])]))
               for r in known]
    print(f"correlation of log the fit's CPU a statement (over its cell's median) with log "
          f"host speed: {np.corrcoef(fit_cpu, speed)[0, 1]:.2f}")
    inside, total, p = held_out(*ORACLE, known, "host_speed")
    print(f"(a·cpu + b·62)·host speed (after the fact): within x/÷1.3 in {inside}/{total} "
          f"({100 * inside / total:.0f} %), each run left out; constants {p}")
    for name, (form, grid) in FORMS.items():
        for probe, what in (("rt_cell", "the cell's probe"),
                            ("rt_device", "the device's cells' median (~10 min)"),
                            ("rt_run", "the run's median (~25 min)")):
            inside, total, p = held_out(form, grid, rows, probe)
            print(f"{name}, {what}: the statement's time within x/÷1.3 in {inside}/{total} "
                  f"({100 * inside / total:.0f} %), each run left out; constants {p}")


if __name__ == "__main__":
    main()
