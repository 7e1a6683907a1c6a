"""advise's prices fitted again, offline, on a change validation's measurements.

`innoflush lab validate --workload-cmd ... --json` keeps, for every cell, advise's whole
report of the before run (what it measured: the counters, the processlist, /proc) and the
device profile each device was predicted on. This reads such reports and runs today's fit
and predictions on them — no server — beside what was measured after the change: so a
change to the model is judged on the same measured cells, side by side with the ratios the
report recorded when it ran.

    python bench/refit_changes.py changes.json[.gz] [more.json ...] [--cells] [--seed 1]
        [--extend-bytes N] [--tablespaces N] [--sync-cpu-us S]

(docs/validation/sysbench-changes.json.gz is the run
docs/validation/notebook/2026-11-25-first-sysbench-run.md reports.)
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from innoflush.lab.experiments.change_validation import FACTOR  # noqa: E402
from innoflush.lab.experiments.refit import measured_cells, read_validation, refit  # noqa: E402


def with_sync_call_cpu(sync_cpu_us: float) -> None:
    """advise's fit, from here on, with a sync call's own CPU in the workload it measures:
    the leader's write + fdatasync then costs sync_cpu_us, half of it queued for a core
    after the device like any woken thread (simulator/server.py), and the CPU measured
    per transaction keeps what is left once the syncs' share is out."""
    from dataclasses import replace

    from innoflush.advisor import fit

    measured = fit.measured_workload   # fit_workload calls it by this name

    def measured_with_sync_cpu(ev, o, sleeping=True, **kw):
        wl, inputs, assumptions, missing = measured(ev, o, sleeping, **kw)
        if wl is None or not o.commits_per_s:
            return wl, inputs, assumptions, missing
        syncs = ((o.redo_syncs_per_s or 0.0) + (ev.binlog_syncs_per_s.value or 0.0)) \
            / o.commits_per_s
        share = sync_cpu_us * syncs
        from_commit = min(wl.sleep_cpu_us, share)
        rest = share - from_commit
        wl = replace(wl, sync_cpu_us=sync_cpu_us, sleep_cpu_us=wl.sleep_cpu_us - from_commit,
                     cpu_us_per_trx=max(wl.cpu_us_per_trx * 0.5, wl.cpu_us_per_trx - rest),
                     cpu_us_per_trx_sleeping=max(0.0, wl.cpu_us_per_trx_sleeping - rest))
        return wl, inputs, assumptions, missing

    fit.measured_workload = measured_with_sync_cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="+")
    ap.add_argument("--cells", action="store_true", help="print every cell")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--extend-bytes", type=int, default=None,
                    help="the tablespaces' extension step for reports that did not read it "
                    "(sysbench's 4 x 10,000-row tables: 1048576)")
    ap.add_argument("--tablespaces", type=int, default=None,
                    help="the files a flush batch syncs for reports that did not read them "
                    "(sysbench's 4 tables and the system tablespace: 5)")
    ap.add_argument("--sync-cpu-us", type=float, default=None,
                    help="an experiment: give every fitted workload a sync call's own CPU "
                    "(sync_cpu_us = S, its share per commit taken out of the CPU measured in "
                    "the commit states first); tried on 2026-11-28 and not taken "
                    "(docs/validation/notebook/2026-11-28-sync-calls-cpu-in-the-fit-not-taken.md)")
    args = ap.parse_args()
    if args.sync_cpu_us:
        with_sync_call_cpu(args.sync_cpu_us)
    rows, factors, dirs, fs_err, sim_err, unexplained = [], [], [], [], [], 0
    after_err: list[float] = []   # simulate on advise's workload at the after setting
    for path in args.reports:
        report = read_validation(path)
        for dev in report["devices"]:
            if not (dev.get("profile") or {}).get("data"):
                print(f"{path}: {dev['name']}: no profile data kept; skipped", file=sys.stderr)
        for dev, cell, profile in measured_cells(report):
            r = refit(cell, profile, args.seed, args.extend_bytes, args.tablespaces)
            meas = cell["measured_ratio"]
            f = r["ratio"] / meas if r["ratio"] else None
            if f is not None:
                factors.append(f)
                dirs.append((r["ratio"] > 1.03) == (meas > 1.03)
                            or (abs(r["ratio"] - 1) <= 0.03 and abs(meas - 1) <= 0.03))
            else:
                unexplained += 1
            fm = cell["after"].get("data_fsyncs_per_s")
            if r["fsyncs_after"] is not None and fm:
                fs_err.append(100 * (r["fsyncs_after"] / fm - 1))
            if r["sim_before_err"] is not None and r["explained"]:
                sim_err.append(r["sim_before_err"])
            if r.get("tps_after") and cell["after"].get("tps"):
                after_err.append(100 * (r["tps_after"] / cell["after"]["tps"] - 1))
            rows.append([dev["name"][:18], cell["workload"], cell["connections"],
                         cell["change"], f"x{meas:.2f}",
                         f"x{r['ratio']:.2f}" if r["ratio"] else "-",
                         (f"{r['range'][0]:.2f}..{r['range'][1]:.2f}"
                          if r["range"] else "-"),
                         f"{f:.2f}" if f else "-",
                         f"{cell['predicted_ratio']:.2f}" if cell.get("predicted_ratio")
                         else "-",
                         f"{r['sim_before_err']:+.0f}%" if r["sim_before_err"] is not None
                         else "-",
                         (f"{r['fsyncs_after']:.0f}/{fm:.0f}"
                          if r["fsyncs_after"] is not None and fm else "-"),
                         "" if r["explained"] else "; ".join(r["reasons"])[:60]])
    if args.cells:
        print(tabulate(rows, headers=["device", "workload", "conns", "change", "measured",
                                      "predicted", "range", "pred/meas", "then", "sim before",
                                      "fsyncs/s after", "not explained"], disable_numparse=True))
    within = sum(1 for f in factors if 1 / FACTOR <= f <= FACTOR)
    print(f"cells {len(rows)}: predicted {len(factors)}, not explained {unexplained}; "
          f"within x/÷{FACTOR}: {within}/{len(factors)}; direction right "
          f"{sum(dirs)}/{len(dirs)}; data fsyncs/s after MAPE "
          f"{statistics.mean(abs(e) for e in fs_err):.1f}% ({len(fs_err)}), median "
          f"{statistics.median(abs(e) for e in fs_err):.1f}%, within 25 % in "
          f"{sum(1 for e in fs_err if abs(e) <= 25)}/{len(fs_err)}"
          if fs_err else "")
    if sim_err:
        print(f"simulate-before TPS MAPE {statistics.mean(abs(e) for e in sim_err):.1f}% "
              f"({len(sim_err)} explained cells)")
    both = sim_err + after_err
    if after_err:
        print(f"simulate-after TPS MAPE {statistics.mean(abs(e) for e in after_err):.1f}% "
              f"({len(after_err)}); before and after together "
              f"{statistics.mean(abs(e) for e in both):.1f}% ({len(both)})")


if __name__ == "__main__":
    main()
