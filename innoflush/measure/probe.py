"""The built-in engine: probe files we create, and timed write/sync loops on them.

Safety rules, all enforced here:

- Only a writable directory on a real filesystem is accepted (check_directory).
- Probe files are created with O_CREAT|O_EXCL|O_NOFOLLOW under a random name
  (``.innoflush-probe-<pid>-<random>.<job>``); every later open uses O_NOFOLLOW and checks
  that the inode is still the one we created; removal checks it again. So a symlink or a
  file planted under our name is never followed, written or removed.
- The files are removed at the end, on error and on Ctrl-C, SIGTERM and SIGHUP
  (innoflush/signals.py: measure() holds the stop policy while they exist).

Each job writes sequentially through its own file of ``file_size`` bytes, wrapping
around. The file is laid out (written and synced) once first, so that a sync measures
data, not block allocation (fio lays its file out too).
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import secrets
import stat
import threading
import time
from array import array

from .. import signals
from ..errors import InnoflushError, UsageError
from ..stats import LatencySummary
from ..units import format_size
from .facts import MEMORY_FS, PSEUDO_FS, mount_facts
from .result import TestResult, TestSpec

ALIGN = 4096
PROBE_PREFIX = ".innoflush-probe-"
FREE_MARGIN_BYTES = 4 * 1024 * 1024
_LAYOUT_CHUNK = 1024 * 1024

# Indirections so tests can inject failures (EINVAL, ENOSPC, Ctrl-C) without real faults.
_open_file = os.open
_pwrite = os.pwrite
_SYNC_CALLS = {"fsync": os.fsync, "fdatasync": os.fdatasync}


def _token() -> str:
    return secrets.token_hex(4)


def _free_bytes(path: str) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def _is_read_only(path: str) -> bool:
    return bool(os.statvfs(path).f_flag & os.ST_RDONLY)


def _os_error(exc: OSError, what: str) -> InnoflushError:
    """An OSError during the probe as one clear error."""
    code = exc.errno
    if code in (errno.ENOSPC, errno.EDQUOT):
        return InnoflushError(f"no space left while {what} ({exc.strerror}); the probe "
                              "file was removed; free some space or use a smaller "
                              "--file-size")
    if code == errno.EROFS:
        return UsageError(f"read-only filesystem while {what}")
    if code in (errno.EACCES, errno.EPERM):
        return UsageError(f"permission denied while {what}: the directory must be "
                          "writable by this user")
    return InnoflushError(f"{what} failed: {exc.strerror or exc}")


# ---- the directory ---------------------------------------------------------------------
def check_directory(path: str) -> str:
    """The real path of a directory we may write a probe file in; UsageError otherwise."""
    if not path:
        raise UsageError("no directory given")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such directory") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot access ({exc.strerror})") from None
    mode = st.st_mode
    if stat.S_ISBLK(mode):
        raise UsageError(f"{path} is a block device: measure writes a probe file in a "
                         "directory and never writes to a device; give a directory on "
                         "the filesystem that lives on it")
    if stat.S_ISCHR(mode):
        raise UsageError(f"{path} is a character device, not a directory")
    if stat.S_ISREG(mode):
        raise UsageError(f"{path} is a regular file: give the directory to measure "
                         "(measure only writes files it creates)")
    if not stat.S_ISDIR(mode):
        raise UsageError(f"{path} is not a directory")
    real = os.path.realpath(path)
    fs = mount_facts(real).get("fs_type")
    if fs in PSEUDO_FS:
        raise UsageError(f"{path} is on a {fs} pseudo-filesystem, not storage: give a "
                         "directory on the device to measure")
    try:
        read_only = _is_read_only(real)
    except OSError:
        read_only = False
    if read_only:
        raise UsageError(f"{path} is on a read-only filesystem: give a writable directory")
    if not os.access(real, os.W_OK | os.X_OK):
        raise UsageError(f"{path} is not writable by this user: give a writable directory")
    return real


def check_free_space(path: str, need: int) -> None:
    try:
        free = _free_bytes(path)
    except OSError:
        return  # cannot tell: the write itself will report ENOSPC
    if free < need:
        raise UsageError(f"not enough free space in {path}: the probe needs "
                         f"{format_size(need)} (its files plus a margin) and "
                         f"{_human(free)} is available; free some space, use a smaller "
                         "--file-size or fewer --jobs")


def _human(n: int) -> str:
    for unit, mult in (("G", 1024**3), ("M", 1024**2), ("k", 1024)):
        if n >= mult:
            return f"{n / mult:.1f}{unit}"
    return f"{n} bytes"


# ---- the probe files -------------------------------------------------------------------
class ProbeFiles:
    """The files one measurement writes: created by us, checked on every open, removed."""

    def __init__(self, directory: str, n_files: int, size: int):
        self.directory = directory
        self.n_files = n_files
        self.size = size
        self.base = ""
        self.paths: list[str] = []
        self._ids: list[tuple[int, int]] = []
        self.offsets: list[int] = []
        self.leftovers: list[str] = []

    def __enter__(self) -> ProbeFiles:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def path(self, j: int) -> str:
        return self.paths[j]

    def create(self) -> None:
        """Create and lay out the files (O_CREAT|O_EXCL|O_NOFOLLOW; new name on clash)."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        for _attempt in range(20):
            base = f"{PROBE_PREFIX}{os.getpid()}-{_token()}"
            clash = False
            for j in range(self.n_files):
                p = os.path.join(self.directory, f"{base}.{j}")
                try:
                    # deferred: a stop signal lands after the file is created and
                    # recorded, so remove() sees it
                    with signals.deferred():
                        fd = _open_file(p, flags, 0o600)
                        try:
                            st = os.fstat(fd)
                            self.paths.append(p)
                            self._ids.append((st.st_dev, st.st_ino))
                            self.offsets.append(0)
                        finally:
                            os.close(fd)
                except FileExistsError:
                    clash = True
                    break
                except OSError as exc:
                    raise _os_error(exc, f"creating a probe file in {self.directory}") \
                        from None
            if not clash:
                self.base = base
                break
            self.remove()  # only the ones we created under this base
        else:
            raise InnoflushError(f"cannot find a free probe file name in {self.directory}")
        chunk = os.urandom(_LAYOUT_CHUNK)
        for j in range(self.n_files):
            fd = self.open(j, 0)
            try:
                done = 0
                while done < self.size:
                    n = min(_LAYOUT_CHUNK, self.size - done)
                    done += _write_all(fd, memoryview(chunk)[:n], done)
                os.fsync(fd)
            except OSError as exc:
                raise _os_error(exc, f"laying out the probe file {self.paths[j]}") from None
            finally:
                os.close(fd)

    def open(self, j: int, extra_flags: int) -> int:
        """Open our file j for writing (never following a symlink); checks it is ours."""
        fd = _open_file(self.paths[j], os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC | extra_flags)
        try:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != self._ids[j] or not stat.S_ISREG(st.st_mode):
                raise InnoflushError(f"{self.paths[j]} was replaced by another file during "
                                     "the measurement; stopped without touching it")
        except BaseException:
            os.close(fd)
            raise
        return fd

    def remove(self) -> None:
        """Remove the files we created (if still ours); never raises."""
        for p, ident in zip(self.paths, self._ids, strict=True):
            try:
                st = os.lstat(p)
            except FileNotFoundError:
                continue
            except OSError:
                self.leftovers.append(p)
                continue
            if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) == ident:
                try:
                    os.unlink(p)
                except FileNotFoundError:
                    pass
                except OSError:
                    self.leftovers.append(p)
            else:
                self.leftovers.append(p)
        self.paths, self._ids, self.offsets = [], [], []

    def check_o_direct(self) -> tuple[bool, str | None]:
        """Does the filesystem honour O_DIRECT here? (open + one aligned write)."""
        try:
            fd = self.open(0, os.O_DIRECT)
        except OSError as exc:
            if exc.errno in (errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP):
                return False, (f"the filesystem refuses O_DIRECT: open failed with "
                               f"{errno.errorcode.get(exc.errno, exc.errno)} "
                               f"({exc.strerror})")
            raise _os_error(exc, "opening the probe file with O_DIRECT") from None
        buf = mmap.mmap(-1, ALIGN)
        try:
            buf.write(os.urandom(ALIGN))
            _pwrite(fd, buf, 0)
        except OSError as exc:
            if exc.errno in (errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP):
                return False, (f"the filesystem refuses O_DIRECT writes: an aligned "
                               f"{ALIGN}-byte write failed with "
                               f"{errno.errorcode.get(exc.errno, exc.errno)} "
                               f"({exc.strerror})")
            raise _os_error(exc, "writing the probe file with O_DIRECT") from None
        finally:
            os.close(fd)
            buf.close()
        return True, None


def _write_all(fd: int, data, offset: int) -> int:
    n = _pwrite(fd, data, offset)
    if n <= 0:
        raise OSError(errno.EIO, "short write")
    return n


# ---- the timed loop --------------------------------------------------------------------
class _JobRecord:
    __slots__ = ("start", "write", "sync", "t_last", "error")

    def __init__(self):
        self.start = array("q")  # perf_counter_ns at the start of each op
        self.write = array("q")
        self.sync = array("q")
        self.t_last = 0
        self.error: BaseException | None = None


def _job_loop(fd: int, buf, size: int, region: int, offset: int, sync_call,
              deadline_ns: int | None, n_ops: int | None,
              stop: threading.Event | None, rec: _JobRecord) -> int:
    """Write (and sync) until the deadline or n_ops; returns the next offset."""
    pwrite = _pwrite
    clock = time.perf_counter_ns
    t_append, w_append, s_append = rec.start.append, rec.write.append, rec.sync.append
    i = 0
    while True:
        t0 = clock()
        n = pwrite(fd, buf, offset)
        t1 = clock()
        if n != size:
            raise OSError(errno.EIO, f"short write ({n} of {size} bytes)")
        if sync_call is not None:
            sync_call(fd)
            t2 = clock()
        else:
            t2 = t1
        t_append(t0)
        w_append(t1 - t0)
        s_append(t2 - t1)
        rec.t_last = t2
        i += 1
        offset += size
        if offset + size > region:
            offset = 0
        if n_ops is not None:
            if i >= n_ops:
                break
        elif t2 >= deadline_ns:
            break
        if stop is not None and stop.is_set():
            break
    return offset


def _aligned_buffer(size: int) -> mmap.mmap:
    """A page-aligned buffer (anonymous mmap) of random bytes, fit for O_DIRECT."""
    buf = mmap.mmap(-1, size)
    buf.write(os.urandom(size))
    buf.seek(0)
    return buf


def run_builtin_test(files: ProbeFiles, spec: TestSpec, duration_s: float | None,
                     count: int | None, warmup_ops: int) -> TestResult:
    """Run one probe configuration with the built-in engine."""
    size = spec.write_bytes
    if spec.direct and size % ALIGN:
        return TestResult.not_run(spec, f"O_DIRECT needs sizes that are multiples of "
                                        f"{ALIGN} bytes, not {size}")
    flags = (os.O_DIRECT if spec.direct else 0) | (os.O_DSYNC if spec.op == "dsync" else 0)
    sync_call = _SYNC_CALLS.get(spec.op)
    fds: list[int] = []
    buf = _aligned_buffer(size)
    try:
        try:
            for j in range(spec.jobs):
                fds.append(files.open(j, flags))
        except OSError as exc:
            if spec.direct and exc.errno == errno.EINVAL:
                return TestResult.not_run(spec, "the filesystem refuses O_DIRECT (open: "
                                                "EINVAL)")
            raise _os_error(exc, "opening the probe file") from None
        records = [_JobRecord() for _ in fds]
        n_ops = (count + warmup_ops) if count is not None else None
        try:
            _run_jobs(files, fds, buf, size, sync_call, duration_s, n_ops, records)
        except OSError as exc:
            if spec.direct and exc.errno == errno.EINVAL:
                return TestResult.not_run(spec, f"the filesystem refuses O_DIRECT writes of "
                                                f"{format_size(size)} (EINVAL)")
            raise _os_error(exc, f"running {spec.label}") from None
        # Leave no dirty pages behind for the next test (untimed).
        for fd in fds:
            try:
                os.fdatasync(fd)
            except OSError as exc:
                raise _os_error(exc, f"syncing after {spec.label}") from None
    finally:
        for fd in fds:
            os.close(fd)
        buf.close()
    return _summarise(spec, records, warmup_ops, has_sync=sync_call is not None)


def _run_jobs(files, fds, buf, size, sync_call, duration_s, n_ops, records):
    start = time.perf_counter_ns()
    deadline = None if duration_s is None else start + int(duration_s * 1e9)
    region = files.size
    offsets = [(files.offsets[j] // ALIGN) * ALIGN for j in range(len(fds))]
    offsets = [o if o + size <= region else 0 for o in offsets]
    if len(fds) == 1:
        files.offsets[0] = _job_loop(fds[0], buf, size, region, offsets[0], sync_call,
                                     deadline, n_ops, None, records[0])
        return
    stop = threading.Event()
    barrier = threading.Barrier(len(fds))

    def worker(j: int) -> None:
        rec = records[j]
        try:
            barrier.wait()
            files.offsets[j] = _job_loop(fds[j], buf, size, region, offsets[j], sync_call,
                                         deadline, n_ops, stop, rec)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            rec.error = exc
            stop.set()
            with contextlib.suppress(threading.BrokenBarrierError):
                barrier.abort()

    threads = [threading.Thread(target=worker, args=(j,), daemon=True,
                                name=f"innoflush-job-{j}") for j in range(len(fds))]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(0.1)
    except BaseException:
        stop.set()
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.abort()
        for t in threads:
            t.join()
        raise
    for rec in records:
        if rec.error is not None and not isinstance(rec.error, threading.BrokenBarrierError):
            raise rec.error


def _summarise(spec: TestSpec, records: list[_JobRecord], warmup_ops: int,
               has_sync: bool) -> TestResult:
    # numpy here, not at the top: `innoflush measure --help` does without it
    import numpy as np

    writes, syncs = [], []
    rate = 0.0
    longest = 0
    dropped = warmup_ops
    for rec in records:
        n = len(rec.write)
        drop = min(warmup_ops, max(n - 1, 0))
        dropped = min(dropped, drop)
        writes.append(np.frombuffer(rec.write, dtype=np.int64)[drop:])
        syncs.append(np.frombuffer(rec.sync, dtype=np.int64)[drop:])
        if n == 0:
            continue
        window = max(rec.t_last - rec.start[drop], 1)
        rate += (n - drop) / (window / 1e9)
        longest = max(longest, window)
    w = np.concatenate(writes)
    s = np.concatenate(syncs)
    write = LatencySummary.from_samples(w)
    if has_sync:
        sync = LatencySummary.from_samples(s)
        total = LatencySummary.from_samples(w + s)
    else:
        sync, total = None, write
    return TestResult(op=spec.op, write_bytes=spec.write_bytes, direct=spec.direct,
                      jobs=spec.jobs, count=int(w.size), ops_per_s=rate,
                      duration_s=longest / 1e9, warmup_ops=dropped, write=write,
                      sync=sync, total=total)


def memory_fs_warning(fs_type: str | None) -> str | None:
    if fs_type in MEMORY_FS:
        return (f"{fs_type} is memory, not a device: fsync is a no-op there and the figures "
                "say nothing about any disk")
    return None


# ---- what the calls cost the CPU -------------------------------------------------------
def sync_call_cpu_us(directory: str, op: str = "fdatasync", size: int = 4096,
                     direct: bool = True, ops: int = 1000) -> float | None:
    """The CPU time the calling thread spends in one write of `size` bytes and its sync
    (median of five rounds of ops/5), in a probe file of ours: what a redo write and
    sync cost the thread that makes them, besides the device's latency. (The loop's
    own Python overhead, about a microsecond, is included.) None when the directory
    refuses O_DIRECT or the call fails (full disk, read-only): the caller does without."""
    sync_call = _SYNC_CALLS[op]
    region = 256 * size
    check_directory(directory)
    with ProbeFiles(directory, 1, region) as files:
        try:
            files.create()
            fd = files.open(0, os.O_DIRECT if direct else 0)
        except (OSError, InnoflushError):
            return None
        buf = _aligned_buffer(size)
        rounds: list[float] = []
        try:
            offset = 0
            per = max(1, ops // 5)
            for _ in range(5):
                rec = _JobRecord()
                c0 = time.thread_time_ns()
                offset = _job_loop(fd, buf, size, region, offset, sync_call, None, per,
                                   None, rec)
                rounds.append((time.thread_time_ns() - c0) / per / 1e3)
        except OSError:
            return None
        finally:
            os.close(fd)
            buf.close()
    import numpy as np

    return float(np.median(rounds))
