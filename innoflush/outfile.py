"""Every file a user names for output goes through here: --html and --png's charts, --prom,
lab validate --markdown, profiles export -o, the profile and workload stores.

Only regular files are written. A path that exists as anything else — a character or block
device, a FIFO, a socket, a directory — is refused before the command does any work
(UsageError, exit 2): the writer renames a temporary file over its target, and run as root
that replaced /dev/full with a regular file. A symlink is followed (os.path.realpath): the
checks apply to what it points at, and a regular file there is replaced atomically in its
own directory, so the symlink stays a symlink and keeps pointing at the new content.

The write re-checks the target (a long run gives time for the path to change), writes a
temporary file beside the target (never beside a path that was refused), fsyncs it and
renames it over the target; on any failure the temporary file is removed and the previous
file is left as it was.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from .errors import InnoflushError, UsageError

T = TypeVar("T")

_NOT_REGULAR = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                (stat.S_ISDIR, "a directory"))


def kind_of(mode: int) -> str | None:
    """What a file of this st_mode is when it is not a regular file ("a FIFO"), else None."""
    for test, what in _NOT_REGULAR:
        if test(mode):
            return what
    return None if stat.S_ISREG(mode) else "not a regular file"


def _label(path: str | os.PathLike, option: str) -> str:
    return f"{option} {path}" if option else str(path)


def _refuse(label: str, path: str, real: str, what: str) -> UsageError:
    if what == "a directory":
        return UsageError(f"{label}: is a directory (give a file name)")
    via = "is" if os.path.abspath(path) == real else f"links to {real}, which is"
    return UsageError(f"{label}: {via} {what}, not a regular file (innoflush writes "
                      "regular files only; give a file path)")


def _writable_dir(label: str, directory: str) -> None:
    """directory exists and this process may create a file in it."""
    if not os.path.isdir(directory):
        raise UsageError(f"{label}: no such directory {directory}")
    if not os.access(directory, os.W_OK | os.X_OK):
        why = "permission denied"
        with contextlib.suppress(OSError):
            if os.statvfs(directory).f_flag & os.ST_RDONLY:
                why = "read-only filesystem"
        raise UsageError(f"{label}: directory {directory} is not writable ({why})")


def check_output_target(path: str | os.PathLike, option: str = "") -> Path:
    """Before any work: path can be written as a regular file. Returns the file that will be
    written (path with every symlink resolved). UsageError (exit 2), naming option, for a
    path that exists as anything but a regular file (after following symlinks), a missing
    or unwritable directory, or a file that may not be written."""
    path = os.fspath(path)
    label = _label(path, option)
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise UsageError(f"{label}: no such directory {os.path.dirname(real)}") from None
    except OSError as exc:   # a symlink loop, a name too long
        raise UsageError(f"{label}: {exc.strerror}") from None
    if st is not None:
        what = kind_of(st.st_mode)
        if what is not None:
            raise _refuse(label, path, real, what)
    _writable_dir(label, os.path.dirname(real))
    if st is not None and not os.access(real, os.W_OK):
        raise UsageError(f"{label}: is not writable (permission denied)")
    return Path(real)


def _umask() -> int:
    """The process's umask, read without changing it (os.umask would, for a moment, for
    every thread)."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    return 0o022


def write_output(path: str | os.PathLike, data: bytes | str, option: str = "", *,
                 exists_error: str | None = None, mode: int | None = None) -> Path:
    """Write data to path as a regular file, atomically; returns the file written (symlinks
    resolved). exists_error: refuse (UsageError with this text) when the file exists
    instead of replacing it. A new file gets mode (default: what the umask gives, 0644
    with the usual 022); an existing one keeps its permissions and, run as root, its
    owner. UsageError for a target that is not a regular file; InnoflushError (exit 1)
    when the write itself fails (a full disk)."""
    label = _label(path, option)
    real = check_output_target(path, option)
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        old = os.stat(real)
    except OSError:
        old = None
    if old is not None and exists_error is not None:
        raise UsageError(exists_error)
    try:
        fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
    except OSError as exc:
        raise InnoflushError(f"{label}: cannot write: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if old is not None:
            os.chmod(tmp, stat.S_IMODE(old.st_mode))
            if os.geteuid() == 0:
                with contextlib.suppress(OSError):
                    os.chown(tmp, old.st_uid, old.st_gid)
        else:
            os.chmod(tmp, (0o666 & ~_umask()) if mode is None else mode)
        _recheck(label, os.fspath(path), real)
        if exists_error is None:
            os.replace(tmp, real)
        else:
            _link_new(tmp, real, exists_error)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise InnoflushError(f"{label}: cannot write: {exc.strerror or exc}") from None
        raise
    if exists_error is not None:
        Path(tmp).unlink(missing_ok=True)
    _fsync_dir(real.parent)
    return real


def _recheck(label: str, path: str, real: Path) -> None:
    """Right before the rename: the target is still nothing or a regular file (lstat: a
    symlink or a device put there during the run is refused, not replaced)."""
    try:
        st = os.lstat(real)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise UsageError(f"{label}: {real} became a symlink during the run; not replaced")
    what = kind_of(st.st_mode)
    if what is not None:
        raise _refuse(label, path, str(real), what)


def _link_new(tmp: str, real: Path, exists_error: str) -> None:
    """Put tmp at real only if nothing is there: link(2) fails when the name exists, which
    a check and a rename could not promise. A filesystem without hard links gets the
    check and the rename."""
    try:
        os.link(tmp, real)
    except FileExistsError:
        raise UsageError(exists_error) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
            raise
        if os.path.lexists(real):
            raise UsageError(exists_error) from None
        os.replace(tmp, real)


def _fsync_dir(directory: Path) -> None:
    """The rename itself survives a crash once the directory is synced (best effort: some
    filesystems refuse to open or fsync a directory)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def check_new_dir(directory: str | os.PathLike, label: str) -> None:
    """A directory that will be created (and written) at the end of a run can be: it is one
    already, or its nearest existing ancestor is a writable directory. Creates nothing
    (a run refused later leaves nothing behind)."""
    d = os.path.realpath(directory)
    while not os.path.lexists(d):
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    try:
        st = os.stat(d)
    except OSError as exc:
        raise UsageError(f"{label}: {exc.strerror}") from None
    if not stat.S_ISDIR(st.st_mode):
        what = kind_of(st.st_mode) or "a regular file"
        raise UsageError(f"{label}: {d} is {what}, not a directory")
    _writable_dir(label, d)


def attempt(failures: list[InnoflushError], write: Callable[[], T]) -> T | None:
    """One of a finished command's writes; its failure is kept in failures, to be raised
    after the report is printed: the results of a long run are never lost to a file that
    could not be written."""
    try:
        return write()
    except InnoflushError as exc:
        failures.append(exc)
        return None


class OutputFailed(InnoflushError):
    """A finished run whose output could not be saved (a library function that saves at
    its end, lab calibrate --save): carries the run's report, so the command prints it
    before the one-line error."""

    def __init__(self, error: InnoflushError, report: dict):
        super().__init__(str(error))
        self.exit_code = error.exit_code
        self.report = report
