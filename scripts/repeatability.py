"""The resolution of the change validations kept in docs/validation/: per run, how far
runs of identical settings were from each other, beside advise's verdicts as the run
recorded them (innoflush/lab/experiments/repeatability.py). Prints a Markdown table, the pooled
figures and the cells whose measured change was beyond the run's noise and whose
direction advise got wrong.

    python scripts/repeatability.py [REPORT.json.gz ...]   # default: docs/validation/sysbench-*
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from innoflush.lab.experiments.refit import read_validation  # noqa: E402
from innoflush.lab.experiments.repeatability import (  # noqa: E402
    judged_beyond_noise,
    repeat_pairs,
    repeatability,
)
from innoflush.lab.reports.report import md_table  # noqa: E402


def _share(k_n: str | None) -> str:
    if not k_n:
        return "-"
    k, n = (int(x) for x in k_n.split("/"))
    return f"{k_n} ({k / n:.0%})" if n else k_n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="*", type=Path)
    args = ap.parse_args()
    paths = args.reports or sorted((ROOT / "docs/validation").glob("sysbench-*.json.gz"))
    rows, pooled, misses = [], [], []
    tot = {"beyond": [0, 0], "within": [0, 0]}
    for path in paths:
        rep = read_validation(path)
        pairs = repeat_pairs(rep.get("devices", []))
        pooled += pairs
        r = repeatability(pairs)
        cells = [c for d in rep.get("devices", []) for c in d.get("cells", [])]
        band = r["p90_difference_pct"]
        beyond = None
        within = rep["summary"]["within_factor"]
        if band is not None:
            judged = judged_beyond_noise(cells, band)
            right = sum(ok for _, ok in judged)
            beyond = f"{right}/{len(judged)}"     # what direction_beyond_noise says
            tot["beyond"][0] += right
            tot["beyond"][1] += len(judged)
            k, n = (int(x) for x in within.split("/"))
            tot["within"][0] += k
            tot["within"][1] += n
            misses += [f"{path.name}: {c['device']} {c['workload']} {c['connections']} conn "
                       f"{c['change']}: measured ×{c['measured_ratio']:.2f}, predicted "
                       f"×{c['predicted_ratio']:.2f} (noise ±{band:.0f} %)"
                       for c, right in judged if not right]
        rows.append([path.name, r["pairs"], _share(r["within_factor"]) if r["pairs"] else "-",
                     "-" if r["median_difference_pct"] is None
                     else f"{r['median_difference_pct']:.1f} %",
                     "-" if r["p90_difference_pct"] is None
                     else f"{r['p90_difference_pct']:.1f} %",
                     _share(within), rep["summary"]["direction_right"], beyond or "-"])
    print(md_table(["run", "identical pairs", "pairs within ×/÷1.3 (a perfect model's share)",
                    "median difference", "90th percentile", "advise within ×/÷1.3",
                    "direction right (±3 %)", "direction beyond noise"], rows))
    r = repeatability(pooled)
    print(f"\npooled: {r['pairs']} pairs, within ×/÷1.3 {r['within_factor']} "
          f"({r['within_factor_share']:.0%}), median difference {r['median_difference_pct']} %, "
          f"90th percentile {r['p90_difference_pct']} %")
    b, w = tot["beyond"], tot["within"]
    print(f"runs with pairs: advise within ×/÷1.3 {w[0]}/{w[1]}; direction beyond each run's "
          f"noise {b[0]}/{b[1]}")
    for m in misses:
        print("  direction wrong beyond noise:", m)


if __name__ == "__main__":
    main()
