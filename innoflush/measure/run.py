"""measure(): validate, gather facts, create the probe files, run every test, judge PLP."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from .. import signals
from ..errors import OptionError, UsageError
from ..profiles import OPS, DeviceProfile
from ..units import format_size
from . import probe
from .facts import gather_facts
from .plp import verdict_from_tests
from .result import MeasureResult, TestResult, TestSpec

ENGINES = ("builtin", "fio")
DIRECT_MODES = ("both", "on", "off")
DEFAULT_SIZES = (4096, 16384, 2 * 1024 * 1024)
DEFAULT_DURATION_S = 5.0
DEFAULT_WARMUP_OPS = 3
DEFAULT_FILE_SIZE = 64 * 1024 * 1024
MAX_JOBS = 256

QUICK_DURATION_S = 1.0
QUICK_SIZES = (16384, 2 * 1024 * 1024)

Progress = Callable[[int, int, str], None]


def plan_tests(sizes: Iterable[int], ops: Iterable[str], direct: str = "both",
               jobs: Iterable[int] = (1,)) -> list[TestSpec]:
    """Every combination, O_DIRECT first, then size, op and job count; duplicates once."""
    if direct not in DIRECT_MODES:
        raise OptionError(f"--direct must be one of {', '.join(DIRECT_MODES)}, got {direct!r}")
    modes = {"both": (True, False), "on": (True,), "off": (False,)}[direct]
    sizes, ops, jobs = list(sizes), list(ops), list(jobs)
    bad = [o for o in ops if o not in OPS]
    if bad:
        raise OptionError(f"unknown op {bad[0]!r}: use {', '.join(OPS)}")
    out: list[TestSpec] = []
    for d in modes:
        for s in sizes:
            for o in ops:
                for j in jobs:
                    spec = TestSpec(o, int(s), d, int(j))
                    if spec not in out:
                        out.append(spec)
    return out


def quick_tests() -> list[TestSpec]:
    """The --quick preset: 16k and 2M with every op under O_DIRECT, plus buffered 16k
    fsync and fdatasync (what innodb_flush_method=fsync does to redo); one job."""
    specs = plan_tests(QUICK_SIZES, OPS, "on", (1,))
    specs += [TestSpec("fsync", 16384, False, 1), TestSpec("fdatasync", 16384, False, 1)]
    return specs


def _validate(specs: list[TestSpec], duration_s: float | None, count: int | None,
              warmup_ops: int, file_size: int, engine: str) -> None:
    if not specs:
        raise UsageError("no tests to run")
    if engine not in ENGINES:
        raise OptionError(f"--engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if duration_s is not None and count is not None:
        raise OptionError("give --duration or --count, not both")
    if duration_s is None and count is None:
        raise OptionError("give a --duration or a --count")
    if duration_s is not None and not (0 < duration_s <= 3600):
        raise OptionError(f"--duration must be above 0 and at most 3600 s, got {duration_s}")
    if count is not None and count < 1:
        raise OptionError(f"--count must be at least 1, got {count}")
    if warmup_ops < 0:
        raise OptionError(f"--warmup must be 0 or more, got {warmup_ops}")
    for s in specs:
        if s.write_bytes < 1:
            raise OptionError(f"write size must be positive, got {s.write_bytes}")
        if s.jobs < 1 or s.jobs > MAX_JOBS:
            raise OptionError(f"--jobs must be between 1 and {MAX_JOBS}, got {s.jobs}")
        if s.write_bytes > file_size:
            raise OptionError(f"write size {format_size(s.write_bytes)} is larger than "
                             f"--file-size {format_size(file_size)}")
    # an O_DIRECT test of a size the probe cannot align is skipped; a plan of nothing
    # else would measure nothing, so it is refused before any file is created
    if all(s.direct and s.write_bytes % probe.ALIGN for s in specs):
        sizes = ", ".join(sorted({format_size(s.write_bytes) for s in specs}))
        raise OptionError(f"no test to run: O_DIRECT needs write sizes that are multiples of "
                         f"{probe.ALIGN} bytes, and {sizes} {'are' if ',' in sizes else 'is'} not; "
                         "give such --sizes or "
                         "--direct off/both")


def measure(path: str, *, sizes: Iterable[int] = DEFAULT_SIZES, ops: Iterable[str] = OPS,
            direct: str = "both", jobs: Iterable[int] = (1,),
            duration_s: float | None = DEFAULT_DURATION_S, count: int | None = None,
            warmup_ops: int = DEFAULT_WARMUP_OPS, file_size: int = DEFAULT_FILE_SIZE,
            engine: str = "builtin", tests: list[TestSpec] | None = None,
            quick: bool = False, progress: Progress | None = None) -> MeasureResult:
    """Measure write and sync latency of the storage under the directory path.

    tests (a list of TestSpec) replaces the sizes x ops x direct x jobs plan. count, when
    given, is the number of measured ops per job per test (duration_s must then be None).
    Raises UsageError for bad input (exit 2) and InnoflushError for failures.
    """
    specs = list(tests) if tests is not None else plan_tests(sizes, ops, direct, jobs)
    if file_size < probe.ALIGN:
        raise OptionError(f"--file-size must be at least {format_size(probe.ALIGN)}, "
                         f"got {format_size(file_size)}")
    file_size = (int(file_size) // probe.ALIGN) * probe.ALIGN
    _validate(specs, duration_s, count, warmup_ops, file_size, engine)
    real = probe.check_directory(path)
    fio_bin = engine_version = None
    if engine == "fio":
        from . import fio
        fio_bin = fio.find_fio()
        engine_version = fio.fio_version(fio_bin)

    started = time.monotonic()
    date = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    facts = gather_facts(real)
    warnings: list[str] = []
    w = probe.memory_fs_warning(facts.get("fs_type"))
    if w:
        warnings.append(w)
    max_jobs = max(s.jobs for s in specs)
    if max_jobs > (os.cpu_count() or 1):
        warnings.append(f"{max_jobs} jobs on {os.cpu_count()} CPUs: the writers compete for "
                        "CPU, latencies include scheduling delays")
    probe.check_free_space(real, file_size * max_jobs + probe.FREE_MARGIN_BYTES)

    results: list[TestResult] = []
    # SIGTERM and SIGHUP remove the probe files as Ctrl-C does (also when measure() is
    # called as a library, outside the command's own policy)
    with signals.StopSignals(), probe.ProbeFiles(real, max_jobs, file_size) as files:
        files.create()
        supported, reason = files.check_o_direct()
        facts["o_direct"] = {"supported": supported, "reason": reason}
        if not supported and all(s.direct for s in specs):
            raise UsageError(f"no test to run: every test is O_DIRECT and {path} does not "
                             f"support it ({reason}); use --direct off or both")
        if not supported and any(s.direct for s in specs):
            warnings.append(f"O_DIRECT is not supported here ({reason}): the O_DIRECT tests "
                            "were skipped, the buffered ones ran")
        for k, spec in enumerate(specs, 1):
            if progress is not None:
                progress(k, len(specs), spec.label)
            if spec.direct and not supported:
                results.append(TestResult.not_run(spec, f"O_DIRECT not supported: {reason}"))
                continue
            if engine == "fio":
                from .fio import run_fio_test
                results.append(run_fio_test(fio_bin, files, spec, duration_s, count))
            else:
                results.append(probe.run_builtin_test(files, spec, duration_s, count,
                                                      warmup_ops))
        if all(r.unsupported for r in results):
            # raised inside the with: the probe files are removed first
            reasons = "; ".join(dict.fromkeys(r.unsupported or "" for r in results))
            raise UsageError(f"no test could run under {path}: {reasons}")
    if files.leftovers:
        warnings.append("could not remove " + ", ".join(files.leftovers))

    settings = {"sizes": sorted({s.write_bytes for s in specs}),
                "ops": [o for o in OPS if any(s.op == o for s in specs)],
                "direct": _direct_mode(specs), "jobs": sorted({s.jobs for s in specs}),
                "duration_s": duration_s, "count": count,
                "warmup_ops": 0 if engine == "fio" else warmup_ops,
                "file_size_bytes": file_size, "quick": quick}
    return MeasureResult(engine=engine, engine_version=engine_version, path=real,
                         host=facts.get("hostname") or socket.gethostname(), date=date,
                         settings=settings, facts=facts, tests=results,
                         plp_verdict=verdict_from_tests(facts, results), warnings=warnings,
                         wall_s=time.monotonic() - started)


def _direct_mode(specs: list[TestSpec]) -> str:
    modes = {s.direct for s in specs}
    return "both" if len(modes) == 2 else ("on" if True in modes else "off")


def measure_profile(path: str, name: str, title: str | None = None, **kwargs) -> DeviceProfile:
    """Measure and return the result as a DeviceProfile (not saved; see save_profile)."""
    return measure(path, **kwargs).to_profile(name, title)
