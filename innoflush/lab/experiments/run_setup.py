"""What `lab run`, `lab calibrate` and `lab validate` do around their runs: the directory the
servers' work directories go in (``make_base_dir``), the device profile of the storage
(``load_or_measure``), one run's errors and clean-up (``run_checked``) and the calibrated
workload a prediction uses (``load_calibrated``, ``calibration_for``)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ...errors import InnoflushError, UsageError
from ...live.facts import filesystem_of
from ...measure import TestSpec, measure_profile, quick_tests
from ...measure.facts import PSEUDO_FS
from ...measure.run import QUICK_DURATION_S
from ...profiles import load_profile
from ...simulator.workload_profile import WorkloadProfile, load_workload
from ..load.workload import WorkloadError
from .options import LabError, LabOptions, RunPlan

# Keyword arguments for innoflush.measure.measure_profile; None: its --quick preset.
MEASURE_KW: dict | None = None


def make_base_dir(datadir_on: str | None) -> Path:
    """A fresh directory for the servers' work directories under datadir_on (or the
    current directory): UsageError when it does not exist or is not writable."""
    parent = Path(datadir_on) if datadir_on else Path.cwd()
    if not parent.exists():
        raise UsageError(f"--datadir-on {parent}: no such directory")
    if not parent.is_dir():
        raise UsageError(f"--datadir-on {parent}: not a directory")
    fs = filesystem_of(str(parent))
    if fs in PSEUDO_FS:
        # /proc, /sys, /dev, cgroup...: the kernel's views, where mkdir fails with a
        # misleading errno (ENOENT on /proc); say what the place is instead
        raise UsageError(f"--datadir-on {parent} is on {fs}, a pseudo-filesystem of the "
                         "kernel, not storage: no place for a datadir; give a directory on "
                         "the storage to test")
    try:
        return Path(tempfile.mkdtemp(prefix="innoflush-lab-", dir=parent))
    except OSError as exc:
        raise UsageError(f"--datadir-on {parent} is not writable "
                         f"({exc.strerror or exc}): give a directory on the storage to "
                         "test that this user can write to") from None


def load_or_measure(opts: LabOptions, base: Path, progress_line, small_writes: bool = False):
    """The device profile of the storage: --profile, else measured now (--quick; with
    small_writes also 4 KB O_DIRECT write, fsync and fdatasync: redo writes are small)."""
    if opts.profile_ref:
        return load_profile(opts.profile_ref), "profile"
    if progress_line:
        progress_line(f"measuring the storage under {base} (innoflush measure --quick"
                      + (" + 4k" if small_writes else "") + ")")
    kw = MEASURE_KW
    if kw is None:
        tests = quick_tests()
        if small_writes:
            tests = [TestSpec(op, 4096, True, 1) for op in ("none", "fsync", "fdatasync")] \
                + tests
        kw = {"tests": tests, "duration_s": QUICK_DURATION_S, "quick": True}
    profile = measure_profile(str(base), "lab-measured",
                              f"measured by innoflush lab run in {base.parent}", **kw)
    return profile, "measure"


def run_checked(plan: RunPlan, workdir: Path, warnings: list[str], fn):
    """fn() for one planned run, its errors as one LabError line naming the run; the
    run's work directories (and the emulation's beside it) removed whatever happens."""
    try:
        return fn()
    except WorkloadError as exc:
        raise LabError(f"run {plan.index}/{plan.total} ({plan.label}): {exc}") from None
    except LabError as exc:
        msg = str(exc)
        if not msg.startswith("run "):
            msg = f"run {plan.index}/{plan.total} ({plan.label}): {msg}"
        raise LabError(msg, exc.exit_code) from None
    except UsageError:
        raise
    except InnoflushError as exc:
        raise LabError(f"run {plan.index}/{plan.total} ({plan.label}): {exc}",
                       exc.exit_code) from None
    finally:
        for d in (workdir, workdir.with_name(workdir.name + "-emulate")):
            shutil.rmtree(d, ignore_errors=True)
            if d.exists():
                warnings.append(f"could not remove {d}")


def load_calibrated(ref: str | None):
    """(WorkloadProfile or None, its Workload or None); ProfileError (exit 2) if unknown."""
    if not ref:
        return None, None
    wp = load_workload(ref)
    return wp, wp.workload


def calibration_for(wp: WorkloadProfile | None, plan: RunPlan) -> tuple:
    """(the workload profile's Workload at the plan's connections, its source text, its
    COMMIT round trip without a sync: ``WorkloadProfile.workload_at`` and
    ``commit_base_ms``, the lookups simulate and advise make too), or (None, None,
    None) without a profile."""
    if wp is None:
        return None, None, None
    workload, source = wp.workload_at(plan.connections)
    return workload, source, wp.commit_base_ms(plan.connections,
                                               sleeping=plan.commits_sleep)


def calibrated_summary(wp) -> dict | None:
    if wp is None:
        return None
    wl = wp.workload.to_dict()
    wl.pop("connections", None)
    return {"name": wp.name, "title": wp.title, "workload": wl,
            "provenance": wp.provenance}
