"""Device emulation: a real server's sync calls delayed to a device profile's distribution.

A small shared library (csrc/emulate.c), built here with the system C compiler and
preloaded into the server (LD_PRELOAD), wraps fsync(), fdatasync() and writes to files
opened O_DSYNC: the real call runs first, then the thread sleeps until the call has
lasted a latency drawn from the profile. So a server on a fast disk behaves, for its
syncs, like one on a consumer SSD or an HDD — a device slower than this one; a faster
device cannot be emulated (``host_check`` says which). Writes without sync are not
delayed. The distribution is the one the simulator's device draws for a sync after a
16 KB O_DIRECT write (``sync_distribution``), and by default the syncs share one
cache-flush channel, as in the model (``channels=1``). Each preloaded process appends
one line of counters to ``INNOFLUSH_EMULATE_LOG`` at exit (``read_log``).

For the lab's runs: ``make_emulation`` builds the library and checks this host against
the profile (an ``Emulation``), ``Emulation.prepare`` gives a server's backend the
preload (environment, and for a container the library and log directory mounted), and
``emulation_result`` reads back what the library delayed in a run.
"""

from __future__ import annotations

import hashlib
import math
import os
import shutil
import subprocess
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import simpy

from ...errors import InnoflushError
from ...measure import TestSpec, measure_profile
from ...outfile import write_output
from ...profiles import DeviceProfile, load_profile
from ...profiles.store import user_home
from ...simulator.device import Device
from ...stats import MEAN_ONLY_SIGMA, SHAPE_MEAN_ONLY, LatencySummary
from ..experiments.options import LabError

LIB_NAME = "libinnoflush_emulate"
# probabilities at which a mean-only (lognormal) distribution is tabulated for the library
_MEAN_ONLY_PS = (0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0)


class EmulationError(InnoflushError):
    """The emulation library could not be built or configured."""


def _source() -> bytes:
    return (resources.files("innoflush.lab.emulation") / "csrc" / "emulate.c").read_bytes()


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
    # the cache lives in the user's data directory: written as every output is (a device
    # or FIFO planted under its name is refused, never replaced or written through)
    write_output(src, _source(), "the emulation library's source")
    try:
        proc = subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(tmp), str(src),
                               "-ldl", "-lpthread"], capture_output=True, text=True)
        if proc.returncode != 0:
            raise EmulationError(f"building the emulation library failed: "
                                 f"{proc.stderr.strip()[-500:]}")
        write_output(target, tmp.read_bytes(), "the emulation library", mode=0o755)
    finally:
        tmp.unlink(missing_ok=True)
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


def sync_distribution(profile: DeviceProfile, op: str, write_bytes: int = 16384
                      ) -> list[tuple[float, float]]:
    """(probability, µs) knots of the latency the simulator's device draws for a sync
    (``fsync``/``fdatasync``) after an O_DIRECT write of ``write_bytes``, or for an
    O_DSYNC write (``dsync``): the same profile lookup and the same correction as
    ``simulator.device.Device`` (a source that published write+sync totals has the write
    taken out), so the emulated server and the model see one distribution."""
    dev = Device(simpy.Environment(), profile, None)
    if op == "dsync":
        sampler = dev.sampler("write", "dsync", write_bytes, True)
    else:
        sampler = dev.sampler("sync", op, write_bytes, True)
    factor = getattr(sampler, "factor", 1.0)
    return [(p, us * factor) for p, us in _knots(sampler.summary)]


def median_us(knots: list[tuple[float, float]]) -> float:
    """The p50 of a knot curve (linear between knots, as the library draws)."""
    for (p0, v0), (p1, v1) in zip(knots, knots[1:], strict=False):
        if p0 <= 0.5 <= p1:
            t = (0.5 - p0) / (p1 - p0) if p1 > p0 else 1.0
            return v0 + t * (v1 - v0)
    return knots[-1][1]


def emulation_env(profile: DeviceProfile, seed: int = 1, log_file: str | None = None,
                  write_bytes: int = 16384, channels: int = 1) -> dict[str, str]:
    """The environment a preloaded server needs to sync like `profile`'s device.

    channels=1: one cache-flush channel, as the simulator's device (concurrent syncs
    queue behind each other); 0: every thread's syncs are delayed independently."""
    env = {"INNOFLUSH_EMULATE_SEED": str(seed), "INNOFLUSH_EMULATE_CHANNELS": str(channels)}
    env["INNOFLUSH_EMULATE_FSYNC"] = _fmt(sync_distribution(profile, "fsync", write_bytes))
    env["INNOFLUSH_EMULATE_FDATASYNC"] = _fmt(sync_distribution(profile, "fdatasync",
                                                                write_bytes))
    if any(t.op == "dsync" for t in profile.tests):
        env["INNOFLUSH_EMULATE_DSYNC"] = _fmt(sync_distribution(profile, "dsync",
                                                                write_bytes))
    if log_file:
        env["INNOFLUSH_EMULATE_LOG"] = log_file
    return env


def preload_env(profile: DeviceProfile, library: Path, seed: int = 1,
                log_file: str | None = None, channels: int = 1,
                library_in_server: str | None = None) -> dict[str, str]:
    """emulation_env plus LD_PRELOAD of the library (prepended to any existing one).

    library_in_server: the library's path as the server sees it (inside a container);
    the existing LD_PRELOAD of this process is then not carried over."""
    env = emulation_env(profile, seed=seed, log_file=log_file, channels=channels)
    if library_in_server:
        env["LD_PRELOAD"] = library_in_server
        return env
    existing = os.environ.get("LD_PRELOAD", "")
    env["LD_PRELOAD"] = f"{library}:{existing}" if existing else str(library)
    return env


# ---- reading the library's log ----------------------------------------------------------

def read_log(path: str | os.PathLike) -> list[dict[str, int]]:
    """The lines the preloaded processes wrote at exit, as dicts of ints (``pid``,
    ``fsync``, ``fdatasync``, ``dsync``, ``slept_us``, ``overshoot_us``, ``host_slower``,
    ``channels``); [] when the file is missing or empty."""
    try:
        text = Path(path).read_text(encoding="ascii", errors="replace")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        d: dict[str, int] = {}
        for item in line.split():
            k, sep, v = item.partition("=")
            if sep and v.lstrip("-").isdigit():
                d[k] = int(v)
        if "pid" in d:
            out.append(d)
    return out


def delayed_calls(line: dict[str, int] | None) -> int:
    if not line:
        return 0
    return line.get("fsync", 0) + line.get("fdatasync", 0) + line.get("dsync", 0)


# ---- can this host emulate that device? ---------------------------------------------------

def host_probe(path: str, duration_s: float = 0.5):
    """A quick DeviceProfile of the storage under path: 16 KB O_DIRECT write, write +
    fsync and write + fdatasync, one job, ``duration_s`` each (innoflush.measure)."""
    tests = [TestSpec("none", 16384, True, 1), TestSpec("fsync", 16384, True, 1),
             TestSpec("fdatasync", 16384, True, 1)]
    return measure_profile(path, "host-probe", f"quick probe of {path}", tests=tests,
                           duration_s=duration_s, file_size=16 * 1024 * 1024)


def _p50_us(summary) -> float | None:
    if summary is None:
        return None
    ns = summary.p50_ns if summary.p50_ns is not None else summary.mean_ns
    return ns / 1e3 if ns else None


def host_check(profile: DeviceProfile, host: DeviceProfile, host_source: str) -> dict:
    """Whether this host's storage is fast enough to emulate profile's syncs.

    The library runs the real call first and then sleeps the rest, so every emulated
    sync lasts at least as long as the host's: a profile whose syncs are faster than the
    host's cannot be emulated (the server then syncs at the host's speed), and one of the
    same order only approximately (its fast draws are stretched to the host's time).
    Returns {"verdict": ok|approximate|cannot, "ops": {op: {emulated_p50_us,
    host_p50_us, ratio}}, "writes": {...}, "notes": [...]}."""
    ops: dict[str, dict] = {}
    notes: list[str] = []
    worst = 0.0
    for op in ("fsync", "fdatasync"):
        emu = median_us(sync_distribution(profile, op))
        try:
            hs, _ = host.resolve("sync", op, 16384, True)
        except Exception:  # noqa: BLE001 - a host profile without that test
            hs = None
        h = _p50_us(hs)
        ratio = (h / emu) if h and emu else None
        ops[op] = {"emulated_p50_us": round(emu, 1),
                   "host_p50_us": round(h, 1) if h is not None else None,
                   "host_over_emulated": round(ratio, 3) if ratio is not None else None}
        if ratio is not None:
            worst = max(worst, ratio)
    if worst > 1.0:
        verdict = "cannot"
        notes.append(f"{profile.name} syncs faster than this host's storage ({host_source}): "
                     "the library runs the real call first, so the server syncs at the "
                     "host's speed, not the profile's — this device cannot be emulated here")
    elif worst > 0.25:
        verdict = "approximate"
        notes.append(f"this host's syncs take {worst:.0%} of {profile.name}'s median: the "
                     "profile's faster draws are stretched to the host's time, so the "
                     "emulated device is somewhat slower than the profile")
    else:
        verdict = "ok"
    writes = {}
    try:
        pw, _ = profile.resolve("write", "none", 16384, True)
        hw, _ = host.resolve("write", "none", 16384, True)
        writes = {"profile_16k_us": round(_p50_us(pw) or 0, 1),
                  "host_16k_us": round(_p50_us(hw) or 0, 1)}
        notes.append(f"writes are not emulated: the server's writes take this host's time "
                     f"(16 KB O_DIRECT write p50 {writes['host_16k_us']:g} µs), the model "
                     f"uses the profile's ({writes['profile_16k_us']:g} µs)")
    except Exception:  # noqa: BLE001 - no write figure on one side
        pass
    return {"verdict": verdict, "host_source": host_source, "ops": ops, "writes": writes,
            "notes": notes}


# ---- a lab run on an emulated device -----------------------------------------------------

@dataclass
class Emulation:
    """A device emulated for the lab's servers (lab/emulation/emulate.py): the profile whose sync
    latencies a preloaded library imposes on the server, the built library, and whether
    this host's storage is fast enough for it (``emulate.host_check``)."""

    profile: object                 # the emulated DeviceProfile
    library: Path
    check: dict
    channels: int = 1
    seed: int = 1

    CONTAINER_LIB = "/innoflush-emulate/lib/libinnoflush_emulate.so"
    CONTAINER_LOG_DIR = "/innoflush-emulate/log"
    LOG_NAME = "emulate.log"

    def prepare(self, log_dir: Path, backend: str) -> tuple[dict, Path]:
        """(keyword arguments for the backend's server class, the log's path on this
        host). The log directory is the run's own; a container gets the library
        (read-only) and that directory (read-write: its server runs as another user)."""
        log_dir.mkdir(parents=True, exist_ok=True)
        log = log_dir / self.LOG_NAME
        log.touch()
        os.chmod(log_dir, 0o777)
        os.chmod(log, 0o666)
        if backend == "local":
            return {"env": preload_env(self.profile, self.library, self.seed, str(log),
                                       self.channels)}, log
        env = preload_env(self.profile, self.library, self.seed,
                          f"{self.CONTAINER_LOG_DIR}/{self.LOG_NAME}", self.channels,
                          library_in_server=self.CONTAINER_LIB)
        volumes = {str(self.library): {"bind": self.CONTAINER_LIB, "mode": "ro"},
                   str(log_dir): {"bind": self.CONTAINER_LOG_DIR, "mode": "rw"}}
        return {"environment": env, "volumes": volumes}, log

    def to_dict(self) -> dict:
        return {"profile": self.profile.name, "title": self.profile.title,
                "library": str(self.library), "channels": self.channels, "seed": self.seed,
                "sync_p50_us": {op: round(median_us(sync_distribution(self.profile, op)), 1)
                                for op in ("fsync", "fdatasync")},
                "host_check": self.check}


def make_emulation(ref: str, base: Path, host_profile=None, host_source: str | None = None,
                   seed: int = 1, channels: int = 1, progress_line=None) -> Emulation:
    """Load the profile to emulate, build the library, and check this host against it:
    with host_profile (the storage's --profile or --measure) as given, else a quick
    probe of the storage under base."""
    profile = load_profile(ref)
    library = build_library()
    if host_profile is None:
        if progress_line:
            progress_line(f"probing this host's sync latency under {base} (to check that "
                          f"{profile.name} is slower)")
        host_profile = host_probe(str(base))
        host_source = "a quick probe of 16 KB O_DIRECT write + fsync/fdatasync under " \
            f"{base.parent}"
    return Emulation(profile, library, host_check(profile, host_profile, host_source or
                                                  host_profile.name), channels, seed)


def preload_complaints(server) -> list[str]:
    """What the dynamic loader said about LD_PRELOAD in the server's output, if anything."""
    text = ""
    out = getattr(server, "workdir", None)
    if out is not None and (Path(out) / "server.out").is_file():
        try:
            text = (Path(out) / "server.out").read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
    else:
        try:
            text = server.error_log_tail(60).replace(" | ", "\n")
        except Exception:  # noqa: BLE001 - only for the message
            text = ""
    return [ln.strip() for ln in text.splitlines() if "LD_PRELOAD" in ln or "ld.so" in ln][:3]


def emulation_result(log: Path, backend: str, server_pid: int | None,
                     data_fsyncs: int | None, complaints: list[str]) -> dict:
    """The library's log for one run: the server's line (its own PID locally; PID 1 in a
    container, where the entrypoint execs the server), delayed calls; LabError when the
    server synced during the run but the library delayed nothing (preload refused)."""
    lines = read_log(log)
    want = 1 if backend == "docker" else server_pid
    server = next((ln for ln in reversed(lines) if ln.get("pid") == want), None)
    if server is None and lines:
        server = lines[-1]
    delayed = delayed_calls(server)
    if data_fsyncs and delayed == 0:
        raise LabError(
            f"the device emulation was not active: the server made {data_fsyncs:,} syncs "
            f"(Innodb_data_fsyncs) but the emulation log {log.name} shows "
            + ("no delayed call" if lines else "nothing (no preloaded process wrote it)")
            + (f"; the loader said: {'; '.join(complaints)}" if complaints else
               " — the library was not preloaded into the server (LD_PRELOAD refused or "
               "overridden?)"))
    return {"server": server, "delayed_calls": delayed,
            "delayed_fsync": (server or {}).get("fsync", 0),
            "delayed_fdatasync": (server or {}).get("fdatasync", 0),
            "delayed_dsync": (server or {}).get("dsync", 0),
            "slept_s": round((server or {}).get("slept_us", 0) / 1e6, 3),
            # how late the sleeps woke, in all: the host's wake-up, not the device's
            "overshoot_s": round((server or {}).get("overshoot_us", 0) / 1e6, 4),
            "host_slower_calls": (server or {}).get("host_slower", 0),
            "processes": len(lines), "active": delayed > 0}


__all__ = ["Emulation", "EmulationError", "build_library", "delayed_calls", "emulation_env",
           "emulation_result", "host_check", "host_probe", "library_path", "make_emulation",
           "median_us",
           "preload_complaints", "preload_env", "read_log", "sync_distribution"]
