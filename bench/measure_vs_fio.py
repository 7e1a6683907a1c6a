"""Benchmark: does the built-in probe agree with fio, median and tail? (16k O_DIRECT)

Runs the same two tests (16 KiB O_DIRECT write + fsync, + fdatasync; one job) through the
built-in engine and through fio, in several rounds that alternate which engine goes
first (the machine may be shared and noisy). It prints p50, p99 and p99.9 of the write
and of the sync side by side, the ratio builtin/fio of each round, the median ratio per
figure and whether it is within 15 %; where it is not, the reason: the report's own
``tail_note`` (too few samples to back that quantile), or fio's round-to-round spread
of the same figure when that spread is wider than the gap (the tail then belongs to
the machine, not to either engine). It also prints each engine's CPU per op (the whole
run: this process's rusage for the built-in engine, plus its children's for fio).

Like with like: the built-in engine drops no warm-up ops here (``warmup_ops=0``), as
fio drops none; the first write after opening the file is many times the median, and
in a short run it is one of the few samples beyond p99.9.

Rounds of a few seconds show how far one run's tail moves on a shared machine; the
pooled comparison shows whether the engines differ: many short slices, alternating
engine each slice, on one probe file, with every slice's samples pooled per engine (the
built-in engine's raw samples; fio's json+ histogram bins, merged), so that both
engines meet the same noise and the pooled p99.9 rests on tens of thousands of samples.

    python bench/measure_vs_fio.py [DIR] [--rounds N] [--duration S]
                                   [--slices N] [--slice-duration S]

DIR defaults to a new temporary directory under the current directory (not /tmp, which
may be tmpfs: memory, where a sync costs nothing). Needs fio.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from tabulate import tabulate

from innoflush.errors import InnoflushError
from innoflush.measure import TestSpec, fio, measure, probe
from innoflush.measure.facts import MEMORY_FS, mount_facts
from innoflush.measure.result import unbacked_quantiles
from innoflush.stats import LatencySummary

POOL_FILE_SIZE = 64 * 1024 * 1024

TESTS = [TestSpec("fsync", 16384, True, 1), TestSpec("fdatasync", 16384, True, 1)]
TARGET = 0.15
FIGURES = (("p50", "p50_ns"), ("p99", "p99_ns"), ("p99.9", "p99_9_ns"))
CALLS = ("write", "sync")
ENGINES = ("builtin", "fio")


def _cpu_s() -> float:
    """CPU seconds used so far by this process and its waited-for children (fio)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _test(result, op: str):
    (t,) = [t for t in result.tests if t.op == op]
    if t.unsupported:
        raise SystemExit(f"{op} not measurable here: {t.unsupported}")
    return t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory", nargs="?", help="directory to measure (default: a temp "
                    "dir under the current directory)")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--duration", type=float, default=3.0, help="seconds per test")
    ap.add_argument("--slices", type=int, default=12, help="pooled comparison: slices "
                    "per engine and op (0: none)")
    ap.add_argument("--slice-duration", type=float, default=1.5, help="seconds per slice")
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
        rc = _run(directory, fs, args.rounds, args.duration)
        if args.slices > 0:
            _pooled(directory, args.slices, args.slice_duration)
        return rc
    except InnoflushError as exc:
        print(f"measure_vs_fio: {exc}", file=sys.stderr)
        return 1
    finally:
        if made:
            shutil.rmtree(made, ignore_errors=True)


def _us(ns: float) -> str:
    return f"{ns / 1e3:.1f}"


def _run(directory: str, fs: str | None, rounds: int, duration: float) -> int:
    print(f"16k O_DIRECT write + sync, 1 job, {duration:g} s per test, {rounds} alternating "
          f"rounds, no warm-up dropped by either engine, in {directory} ({fs})\n")
    # figures[(op, call, name)][engine] = one value per round; ratio per round alongside
    figures: dict = {}
    cpu = {e: [] for e in ENGINES}  # µs of CPU per op, per round
    counts: dict[str, list[int]] = {}  # per op, both engines: the samples per test
    noted = {e: [] for e in ENGINES}  # sample counts of the tests given a tail_note
    rows = []
    t_start = time.monotonic()
    for r in range(rounds):
        order = ENGINES if r % 2 == 0 else ENGINES[::-1]
        res = {}
        for e in order:
            c0 = _cpu_s()
            res[e] = measure(directory, tests=TESTS, duration_s=duration, engine=e,
                             warmup_ops=0)
            ops = sum(t.count for t in res[e].tests)
            cpu[e].append((_cpu_s() - c0) / max(ops, 1) * 1e6)
        for spec in TESTS:
            t = {e: _test(res[e], spec.op) for e in ENGINES}
            for e in ENGINES:
                counts.setdefault(spec.op, []).append(t[e].count)
                if t[e].tail_note:
                    noted[e].append(t[e].count)
            for call in CALLS:
                row = [r + 1, order[0], spec.op, call]
                for name, field in FIGURES:
                    b = getattr(getattr(t["builtin"], call), field)
                    f = getattr(getattr(t["fio"], call), field)
                    figures.setdefault((spec.op, call, name), {"builtin": [], "fio": [],
                                                               "ratio": []})
                    cell = figures[(spec.op, call, name)]
                    cell["builtin"].append(b)
                    cell["fio"].append(f)
                    cell["ratio"].append(b / f)
                    row += [_us(b), _us(f), f"{b / f:.2f}"]
                rows.append(row)
    headers = ["round", "first", "op", "call"]
    for name, _ in FIGURES:
        headers += [f"builtin {name} µs", f"fio {name} µs", "ratio"]
    print(tabulate(rows, headers=headers, disable_numparse=True,
                   colalign=("right", "left", "left", "left") + ("right",) * 9))
    print()
    for e in ENGINES:
        print(f"{e:7s}: CPU per op (write + sync, whole run) median "
              f"{statistics.median(cpu[e]):.1f} µs (rounds: "
              f"{', '.join(f'{c:.1f}' for c in cpu[e])})")
    for op, cs in counts.items():
        print(f"{op:9s}: samples per test {min(cs):,}–{max(cs):,}")
    print()
    missed, unbacked = [], []
    summary = []
    for (op, call, name), cell in figures.items():
        med = statistics.median(cell["ratio"])
        fewest = min(counts[op])
        if name in unbacked_quantiles(fewest):
            verdict = "n/a"
            reason = (f"n={fewest:,} samples: not enough for {name} (the report's "
                      "tail_note); measure longer")
            unbacked.append(f"{op} {call} {name}")
        elif abs(med - 1) <= TARGET:
            verdict, reason = "yes", ""
        else:
            verdict, reason = "NO", _reason(name, cell, med)
            missed.append(f"{op} {call} {name}")
        summary.append([op, call, name, f"{med:.2f}",
                        f"{min(cell['ratio']):.2f}–{max(cell['ratio']):.2f}",
                        _spread(cell["fio"]), verdict, reason])
    print(tabulate(summary, headers=["op", "call", "figure", "median ratio",
                                     "ratio range", "fio's own spread", f"within {TARGET:.0%}",
                                     "why not"], disable_numparse=True))
    for e in ENGINES:
        if noted[e]:
            print(f"{e}: {len(noted[e])} of {rounds * len(TESTS)} tests carry a tail_note "
                  f"(n={min(noted[e]):,}–{max(noted[e]):,} samples: too few for "
                  f"{' and '.join(unbacked_quantiles(min(noted[e])))})")
    verdict = ("target met: every backed median ratio within " if not missed else
               f"target NOT met for {', '.join(missed)}: median ratio outside ")
    print(f"\n{verdict}{TARGET:.0%}"
          + (f"; not backed by enough samples: {', '.join(unbacked)}" if unbacked else "")
          + f"; {time.monotonic() - t_start:.0f} s")
    return 0


def _spread(values: list[float]) -> str:
    """max/min of one engine's figure over the rounds: how much the machine moves it."""
    return f"{max(values) / min(values):.2f}×" if min(values) > 0 else "?"


def _reason(name: str, cell: dict, med: float) -> str:
    """Why a backed median ratio missed the target, from the run's own evidence."""
    if len(cell["fio"]) < 3:
        return "fewer than 3 rounds: the machine's noise is not measured; run more rounds"
    spread = max(cell["fio"]) / min(cell["fio"])
    if spread - 1 > abs(med - 1):
        return (f"fio's own {name} moved {spread:.2f}× between rounds, more than the "
                "gap: the machine's noise, not the engine")
    return "a gap wider than the machine's noise: investigate"


def _builtin_slice(files, spec: TestSpec, duration: float, fd: int, buf):
    """One slice of the built-in engine's timed loop (no warm-up dropped): raw samples."""
    rec = probe._JobRecord()
    deadline = time.perf_counter_ns() + int(duration * 1e9)
    files.offsets[0] = probe._job_loop(fd, buf, spec.write_bytes, files.size,
                                       files.offsets[0], probe._SYNC_CALLS[spec.op],
                                       deadline, None, None, rec)
    return list(rec.write), list(rec.sync)


def _fio_slice(fio_bin: str, files, spec: TestSpec, duration: float) -> dict:
    proc = subprocess.run(fio.fio_command(fio_bin, files, spec, duration, None),
                          capture_output=True, text=True, cwd=files.directory, check=True)
    return fio._json_from(proc.stdout)["jobs"][0]


def _pooled(directory: str, slices: int, duration: float) -> None:
    """Both engines' samples pooled over many alternating slices on one probe file."""
    print(f"\nPooled: {slices} alternating slices of {duration:g} s per engine and op, "
          "one probe file, no warm-up dropped\n")
    fio_bin = fio.find_fio()
    rows = []
    for spec in TESTS:
        raw = {"write": [], "sync": []}
        lats = {"write": [], "sync": []}
        with probe.ProbeFiles(os.path.realpath(directory), 1, POOL_FILE_SIZE) as files:
            files.create()
            for k in range(slices):
                for e in (ENGINES if k % 2 == 0 else ENGINES[::-1]):
                    if e == "fio":
                        job = _fio_slice(fio_bin, files, spec, duration)
                        lats["write"].append(job["write"]["clat_ns"])
                        lats["sync"].append(job["sync"]["lat_ns"])
                        continue
                    fd = files.open(0, os.O_DIRECT)
                    buf = probe._aligned_buffer(spec.write_bytes)
                    try:
                        w, s = _builtin_slice(files, spec, duration, fd, buf)
                    finally:
                        os.close(fd)
                        buf.close()
                    raw["write"] += w
                    raw["sync"] += s
        for call in CALLS:
            b = LatencySummary.from_samples(raw[call])
            f = fio.summary_from_fio(lats[call])  # several "jobs": merged through the bins
            row = [spec.op, call, f"{b.count:,}", f"{f.count:,}"]
            short = unbacked_quantiles(min(b.count, f.count))
            for name, field in FIGURES:
                bv, fv = getattr(b, field), getattr(f, field)
                row += [_us(bv), _us(fv), "n/a" if name in short else f"{bv / fv:.2f}"]
            rows.append(row)
    headers = ["op", "call", "builtin n", "fio n"]
    for name, _ in FIGURES:
        headers += [f"builtin {name} µs", f"fio {name} µs", "ratio"]
    print(tabulate(rows, headers=headers, disable_numparse=True,
                   colalign=("left", "left") + ("right",) * 11))
    print("(n/a: too few samples pooled to back that quantile, as in the report's "
          "tail_note)")


if __name__ == "__main__":
    sys.exit(main())
