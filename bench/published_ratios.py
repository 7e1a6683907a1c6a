"""The model beside the published Innodb_data_fsyncs / Innodb_data_writes ratios.

The Insert Benchmark figures (smalldatum, 2026-01-08): MySQL 5.7.44 .01046 (O_DIRECT) vs
.00172 (O_DIRECT_NO_FSYNC), 8.0.44 .00729 vs .00053. The ratio is not a device property:
it is (redo syncs + doublewrite syncs + data-file syncs + extension syncs) over
(redo writes + doublewrite writes + page writes) — so it depends on how many page writes a
commit causes, how many tablespace files a doublewrite segment touches, and how often the
tables grow. This prints the model's ratio for an Insert-Benchmark-like configuration
(trx_commit=2, io_capacity 10000/20000, 8 write I/O threads, 8 tables) over a range of
page writes per commit, so one can see which workload assumptions give which ratio.

    python bench/published_ratios.py [--profile intel-d7-p5520] [--duration 5]
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from tabulate import tabulate

from innoflush.profiles import load_profile
from innoflush.simulator import ServerConfig, Workload, simulate

RATIOS_CSV = Path(__file__).resolve().parents[1] / "reference" / "innodb_fsync_write_ratio.csv"


def published() -> dict[tuple[str, str], float]:
    """(flavor, flush method) -> the published ratio, from reference/ (provenance there)."""
    with open(RATIOS_CSV, newline="", encoding="utf-8") as f:
        return {("mysql-" + ".".join(r["server_version"].split(".")[:2]),
                 r["innodb_flush_method"]): float(r["innodb_data_fsyncs_per_innodb_data_writes"])
                for r in csv.DictReader(f)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="intel-d7-p5520")
    ap.add_argument("--duration", type=float, default=5.0)
    ap.add_argument("--pages-per-trx", default="0.005,0.02,0.1,0.5")
    args = ap.parse_args()
    profile = load_profile(args.profile)
    ratios = published()
    rows = []
    for flavor in ("mysql-5.7", "mysql-8.0"):
        for method in ("O_DIRECT", "O_DIRECT_NO_FSYNC"):
            row = [flavor, method, ratios[(flavor, method)]]
            for pages in (float(x) for x in args.pages_per_trx.split(",")):
                cfg = ServerConfig(
                    flavor=flavor, innodb_flush_method=method, innodb_flush_log_at_trx_commit=2,
                    log_bin=False, innodb_io_capacity=10000, innodb_io_capacity_max=20000,
                    innodb_doublewrite_pages=8 if flavor == "mysql-8.0" else None,
                    innodb_redo_log_capacity=8 * 1024**3,
                    innodb_buffer_pool_size=16 * 1024**3, cpu_cores=16)
                wl = Workload(connections=8, cpu_us_per_trx=300, client_us_per_trx=100,
                              redo_bytes_per_trx=8192, pages_dirtied_per_trx=pages,
                              tablespaces=8, growth_bytes_per_trx=4000)
                r = simulate(cfg, wl, profile, duration_s=args.duration)
                row.append(r.data_fsyncs_per_data_write)
            rows.append(row)
    heads = ["flavor", "flush method", "published"] + [
        f"model, {p} pages/commit" for p in args.pages_per_trx.split(",")]
    print(f"Innodb_data_fsyncs / Innodb_data_writes on {profile.name}, "
          f"{args.duration:g} simulated s each")
    print(tabulate(rows, headers=heads, floatfmt=".5f"))


if __name__ == "__main__":
    main()
