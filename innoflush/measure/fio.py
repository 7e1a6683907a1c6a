"""The fio engine: the same probe configurations, run by fio on files we created.

fio writes only the probe files that innoflush created and laid out (``--filename_format``
names them, ``--allow_file_create=0`` forbids fio to create any other); they are removed
by the caller. Figures: ``jobs[].write.clat_ns`` (the write call) and
``jobs[].sync.lat_ns`` (the fsync/fdatasync call; with O_DSYNC the sync is inside the
write). Jobs are merged through fio's latency histograms (``--output-format=json+``
bins). fio drops no warm-up ops (``warmup_ops`` 0) and reports write and sync separately,
so ``total`` is null for fsync/fdatasync.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np

from ..errors import InnoflushError, UsageError
from ..stats import LatencySummary
from .probe import ALIGN, ProbeFiles
from .result import TestResult, TestSpec

_PCT_KEYS = {"p50_ns": "50.000000", "p90_ns": "90.000000", "p99_ns": "99.000000",
             "p99_9_ns": "99.900000"}
_OP_FLAGS = {"none": [], "fsync": ["--fsync=1"], "fdatasync": ["--fdatasync=1"],
             "dsync": ["--sync=dsync"]}


def find_fio() -> str:
    path = shutil.which("fio")
    if path is None:
        raise UsageError("fio is not installed (or not on PATH): install it (e.g. "
                         "`apt-get install fio`) or use --engine builtin")
    return path


def fio_version(fio: str) -> str | None:
    try:
        out = subprocess.run([fio, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def fio_command(fio: str, files: ProbeFiles, spec: TestSpec, duration_s: float | None,
                count: int | None) -> list[str]:
    directory = files.directory.replace(":", "\\:")  # ':' separates fio's directories
    cmd = [fio, "--name=innoflush", f"--directory={directory}",
           f"--filename_format={files.base}.$jobnum", "--allow_file_create=0",
           "--rw=write", f"--bs={spec.write_bytes}", f"--direct={int(spec.direct)}",
           "--ioengine=sync", "--iodepth=1", f"--size={files.size}", "--overwrite=1",
           "--fallocate=none", f"--numjobs={spec.jobs}", "--output-format=json+",
           *_OP_FLAGS[spec.op]]
    if count is not None:
        # fio issues the sync before the next write, so the last write gets none: one more
        extra = 1 if spec.op in ("fsync", "fdatasync") else 0
        cmd.append(f"--io_size={(count + extra) * spec.write_bytes}")
    else:
        cmd += ["--time_based", f"--runtime={max(1, round((duration_s or 1) * 1000))}ms"]
    return cmd


def _json_from(stdout: str) -> dict:
    start = stdout.find("{")
    if start < 0:
        raise ValueError("no JSON in fio output")
    return json.loads(stdout[start:])


def summary_from_fio(lats: list[dict]) -> LatencySummary | None:
    """One summary from one or more fio latency objects ({min, max, mean, N, percentile,
    bins}); several jobs are merged through their histogram bins."""
    lats = [d for d in lats if d and int(d.get("N", 0)) > 0]
    if not lats:
        return None
    n = sum(int(d["N"]) for d in lats)
    mean = sum(float(d["mean"]) * int(d["N"]) for d in lats) / n
    lo = float(min(d["min"] for d in lats))
    hi = float(max(d["max"] for d in lats))
    kw: dict = {}
    if len(lats) == 1 and "percentile" in lats[0]:
        pct = lats[0]["percentile"]
        for field, key in _PCT_KEYS.items():
            if key in pct:
                kw[field] = float(pct[key])
    elif all("bins" in d for d in lats):
        counts: dict[int, int] = {}
        for d in lats:
            for v, c in d["bins"].items():
                counts[int(v)] = counts.get(int(v), 0) + int(c)
        values = np.array(sorted(counts), dtype=np.float64)
        cum = np.cumsum([counts[int(v)] for v in values])
        total = cum[-1]
        for field, key in _PCT_KEYS.items():
            rank = float(key) / 100 * total
            kw[field] = float(values[min(int(np.searchsorted(cum, rank)), len(values) - 1)])
    else:  # no histograms: count-weighted mean of each job's percentile (approximate)
        for field, key in _PCT_KEYS.items():
            vals = [(float(d["percentile"][key]), int(d["N"])) for d in lats
                    if key in d.get("percentile", {})]
            if vals:
                kw[field] = sum(v * c for v, c in vals) / sum(c for _, c in vals)
    # keep the quantiles ordered (fio's bins are coarse; min/max are exact)
    prev = lo
    for field in ("p50_ns", "p90_ns", "p99_ns", "p99_9_ns"):
        if field in kw:
            kw[field] = min(max(kw[field], prev), hi)
            prev = kw[field]
    return LatencySummary(count=n, mean_ns=mean, min_ns=lo, max_ns=hi, **kw)


def parse_fio_result(data: dict, spec: TestSpec) -> TestResult:
    """A TestResult from fio's JSON for one configuration."""
    jobs = data.get("jobs") or []
    if not jobs:
        raise InnoflushError("fio reported no jobs")
    errors = [j.get("error") for j in jobs if j.get("error")]
    if errors:
        raise InnoflushError(f"fio job failed with error {errors[0]}")
    write = summary_from_fio([j.get("write", {}).get("clat_ns", {}) for j in jobs])
    sync = None
    if spec.op in ("fsync", "fdatasync"):
        sync = summary_from_fio([j.get("sync", {}).get("lat_ns", {}) for j in jobs])
    if write is None:
        raise InnoflushError("fio measured no writes")
    ops = sum(float(j.get("write", {}).get("iops", 0.0)) for j in jobs)
    runtime_ms = max(float(j.get("job_runtime") or j.get("write", {}).get("runtime") or 0)
                     for j in jobs)
    total = write if spec.op in ("none", "dsync") else None
    return TestResult(op=spec.op, write_bytes=spec.write_bytes, direct=spec.direct,
                      jobs=spec.jobs, count=(sync or write).count, ops_per_s=ops,
                      duration_s=runtime_ms / 1000 if runtime_ms else None, warmup_ops=0,
                      write=write, sync=sync, total=total)


def run_fio_test(fio: str, files: ProbeFiles, spec: TestSpec, duration_s: float | None,
                 count: int | None) -> TestResult:
    if spec.direct and spec.write_bytes % ALIGN:
        return TestResult.not_run(spec, f"O_DIRECT needs sizes that are multiples of "
                                        f"{ALIGN} bytes, not {spec.write_bytes}")
    cmd = fio_command(fio, files, spec, duration_s, count)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=files.directory)
    except OSError as exc:
        raise InnoflushError(f"cannot run fio: {exc.strerror or exc}") from None
    err = (proc.stderr or "").strip()
    if proc.returncode != 0:
        last = err.splitlines()[-1] if err else f"exit code {proc.returncode}"
        if "No space left" in err:
            raise InnoflushError(f"no space left while fio ran {spec.label}; the probe "
                                 "file was removed")
        if spec.direct and ("Invalid argument" in err or "not support direct" in err):
            return TestResult.not_run(spec, f"fio: O_DIRECT refused ({last})")
        raise InnoflushError(f"fio failed on {spec.label}: {last}")
    try:
        data = _json_from(proc.stdout)
    except ValueError as exc:
        raise InnoflushError(f"cannot read fio's JSON output: {exc}") from None
    return parse_fio_result(data, spec)
