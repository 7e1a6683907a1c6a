"""Device emulation: a real server's sync calls delayed to a device profile's distribution.

A small shared library (csrc/emulate.c), built here with the system C compiler and
preloaded into the server (LD_PRELOAD), wraps fsync(), fdatasync() and writes to files
opened O_DSYNC: the real call runs first, then the thread sleeps until the call has
lasted a latency drawn from the profile. So a server on a fast disk behaves, for its
syncs, like one on a consumer SSD or an HDD — a device slower than this one; a faster
device cannot be emulated. Writes without sync are not delayed.
"""

from __future__ import annotations

import hashlib
import math
import os
import shutil
import subprocess
from importlib import resources
from pathlib import Path

from ..errors import InnoflushError
from ..profiles import DeviceProfile
from ..profiles.store import user_home
from ..stats import MEAN_ONLY_SIGMA, SHAPE_MEAN_ONLY, LatencySummary

LIB_NAME = "libinnoflush_emulate"
# probabilities at which a mean-only (lognormal) distribution is tabulated for the library
_MEAN_ONLY_PS = (0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0)


class EmulationError(InnoflushError):
    """The emulation library could not be built or configured."""


def _source() -> bytes:
    return (resources.files("innoflush.lab") / "csrc" / "emulate.c").read_bytes()


def library_path(cache_dir: Path | None = None) -> Path:
    """Where the library for the current source lives (name carries the source hash)."""
    digest = hashlib.sha256(_source()).hexdigest()[:12]
    return (cache_dir or user_home() / "lib") / f"{LIB_NAME}-{digest}.so"


def build_library(cache_dir: Path | None = None) -> Path:
    """Compile the library once (cached by source hash); returns its path."""
    target = library_path(cache_dir)
    if target.is_file():
        return target
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise EmulationError("device emulation needs a C compiler (cc/gcc): "
                             "apt-get install gcc")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EmulationError(f"cannot create {target.parent}: {exc.strerror}") from None
    src = target.with_suffix(".c")
    tmp = target.with_name(target.name + f".{os.getpid()}.tmp")
    src.write_bytes(_source())
    proc = subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(tmp), str(src), "-ldl",
                           "-lpthread"], capture_output=True, text=True)
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise EmulationError(f"building the emulation library failed: "
                             f"{proc.stderr.strip()[-500:]}")
    os.replace(tmp, target)
    return target


def _knots(summary: LatencySummary) -> list[tuple[float, float]]:
    """(probability, µs) points of the inverse CDF the library interpolates."""
    if summary.shape == SHAPE_MEAN_ONLY:
        mu = math.log(max(summary.mean_ns, 1.0)) - MEAN_ONLY_SIGMA ** 2 / 2
        out = []
        for p in _MEAN_ONLY_PS:
            q = min(max(p, 1e-4), 1 - 1e-4)
            z = _norm_ppf(q)
            out.append((p, math.exp(mu + MEAN_ONLY_SIGMA * z) / 1e3))
        return out
    ps, vs = summary.knots()
    return [(float(p), float(v) / 1e3) for p, v in zip(ps, vs, strict=True)]


def _norm_ppf(p: float) -> float:
    """Inverse standard normal CDF (Acklam's rational approximation, |error| < 1e-9)."""
    a = (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02,
         1.383577518672690e02, -3.066479806614716e01, 2.506628277459239e00)
    b = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02,
         6.680131188771972e01, -1.328068155288572e01)
    c = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00,
         -2.549732539343734e00, 4.374664141464968e00, 2.938163982698783e00)
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00,
         3.754408661907416e00)
    lo, hi = 0.02425, 1 - 0.02425
    if p < lo:
        q = math.sqrt(-2 * math.log(p))
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / \
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    if p > hi:
        return -_norm_ppf(1 - p)
    q = p - 0.5
    r = q * q
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q / \
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)


def _fmt(knots: list[tuple[float, float]]) -> str:
    return ",".join(f"{p:.6g}:{us:.6g}" for p, us in knots)


def emulation_env(profile: DeviceProfile, seed: int = 1, log_file: str | None = None,
                  write_bytes: int = 16384) -> dict[str, str]:
    """The environment a preloaded server needs to sync like `profile`'s device."""
    env = {"INNOFLUSH_EMULATE_SEED": str(seed)}
    fsync, _ = profile.resolve("sync", "fsync", write_bytes, True)
    fdatasync, _ = profile.resolve("sync", "fdatasync", write_bytes, True)
    env["INNOFLUSH_EMULATE_FSYNC"] = _fmt(_knots(fsync))
    env["INNOFLUSH_EMULATE_FDATASYNC"] = _fmt(_knots(fdatasync))
    if any(t.op == "dsync" for t in profile.tests):
        dsync, _ = profile.resolve("write", "dsync", write_bytes, True)
        env["INNOFLUSH_EMULATE_DSYNC"] = _fmt(_knots(dsync))
    if log_file:
        env["INNOFLUSH_EMULATE_LOG"] = log_file
    return env


def preload_env(profile: DeviceProfile, library: Path, seed: int = 1,
                log_file: str | None = None) -> dict[str, str]:
    """emulation_env plus LD_PRELOAD of the library (prepended to any existing one)."""
    env = emulation_env(profile, seed=seed, log_file=log_file)
    existing = os.environ.get("LD_PRELOAD", "")
    env["LD_PRELOAD"] = f"{library}:{existing}" if existing else str(library)
    return env
