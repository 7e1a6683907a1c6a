"""Benchmark: does the built-in probe agree with fio? (16k O_DIRECT fsync and fdatasync)

Runs the same two tests (16 KiB O_DIRECT write + fsync, + fdatasync; one job) through the
built-in engine and through fio, in several rounds that alternate which engine goes
first (the machine may be shared and noisy), and prints the sync p50s side by side, the
ratio builtin/fio per round and the median ratio. Target: within 15%.

    python bench/measure_vs_fio.py [DIR] [--rounds N] [--duration S]

DIR defaults to a new temporary directory under the current directory (not /tmp, which
may be tmpfs: memory, where a sync costs nothing). Needs fio.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

from tabulate import tabulate

from innoflush.errors import InnoflushError
from innoflush.measure import TestSpec, measure
from innoflush.measure.facts import MEMORY_FS, mount_facts

TESTS = [TestSpec("fsync", 16384, True, 1), TestSpec("fdatasync", 16384, True, 1)]
TARGET = 0.15


def _p50(result, op: str, comp: str) -> float:
    (t,) = [t for t in result.tests if t.op == op]
    if t.unsupported:
        raise SystemExit(f"{op} not measurable here: {t.unsupported}")
    return getattr(t, comp).p50_ns


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory", nargs="?", help="directory to measure (default: a temp "
                    "dir under the current directory)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--duration", type=float, default=1.0, help="seconds per test")
    args = ap.parse_args(argv)
    if shutil.which("fio") is None:
        print("measure_vs_fio: fio is not installed (apt-get install fio)", file=sys.stderr)
        return 2

    made = None
    if args.directory:
        directory = args.directory
    else:
        made = directory = tempfile.mkdtemp(prefix=".innoflush-bench-", dir=os.getcwd())
    try:
        fs = mount_facts(os.path.realpath(directory))["fs_type"]
        if fs in MEMORY_FS:
            print(f"measure_vs_fio: {directory} is on {fs} (memory): pass a directory on a "
                  "real disk", file=sys.stderr)
            return 2
        return _run(directory, fs, args.rounds, args.duration)
    except InnoflushError as exc:
        print(f"measure_vs_fio: {exc}", file=sys.stderr)
        return 1
    finally:
        if made:
            shutil.rmtree(made, ignore_errors=True)


def _run(directory: str, fs: str | None, rounds: int, duration: float) -> int:
    print(f"16k O_DIRECT write + sync, 1 job, {duration:g} s per test, {rounds} alternating "
          f"rounds, in {directory} ({fs})\n")
    rows, ratios = [], {op.op: [] for op in TESTS}
    wratios = {op.op: [] for op in TESTS}
    t_start = time.monotonic()
    for r in range(rounds):
        order = ("builtin", "fio") if r % 2 == 0 else ("fio", "builtin")
        res = {e: measure(directory, tests=TESTS, duration_s=duration, engine=e)
               for e in order}
        for spec in TESTS:
            op = spec.op
            b, f = _p50(res["builtin"], op, "sync"), _p50(res["fio"], op, "sync")
            bw, fw = _p50(res["builtin"], op, "write"), _p50(res["fio"], op, "write")
            ratios[op].append(b / f)
            wratios[op].append(bw / fw)
            rows.append([r + 1, order[0], op, f"{b / 1e3:.1f}", f"{f / 1e3:.1f}",
                         f"{b / f:.2f}", f"{bw / 1e3:.1f}", f"{fw / 1e3:.1f}",
                         f"{bw / fw:.2f}"])
    print(tabulate(rows, headers=["round", "first", "op", "builtin sync p50 µs",
                                  "fio sync p50 µs", "ratio", "builtin write p50 µs",
                                  "fio write p50 µs", "ratio"],
                   disable_numparse=True, colalign=("right", "left", "left") + ("right",) * 6))
    print()
    ok = True
    for op, rs in ratios.items():
        med = statistics.median(rs)
        within = abs(med - 1) <= TARGET
        ok = ok and within
        print(f"{op:9s} sync p50 ratio builtin/fio: median {med:.3f} "
              f"(min {min(rs):.2f}, max {max(rs):.2f}) -> "
              f"{'within' if within else 'OUTSIDE'} {TARGET:.0%}; write p50 ratio median "
              f"{statistics.median(wratios[op]):.3f}")
    print(f"\n{'agreement within' if ok else 'NO agreement within'} {TARGET:.0%}; "
          f"{time.monotonic() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
