"""The one reader of every file a user gives: a regular file, within a size cap.

Every input file (device and workload profiles, inventories, option and login path
files, captures) comes through ``read_bytes``, so a FIFO, a device, a socket or a
directory is refused before anything waits on it or reads it forever, and a file too big
to be what it claims is refused before it fills the memory. Each refusal is one line
(``UsageError`` or the caller's subclass of it: exit 2). JSON is also held to a nesting
depth (``jsonfile``), checked before it is parsed.
"""

from __future__ import annotations

import os
import stat
import sys
import threading
from pathlib import Path

from .errors import UsageError

MiB = 1024 * 1024
# Real inputs are a few kB (profiles, workloads, option files; an inventory of 10,000
# hosts is ~500 kB) and the largest JSON innoflush writes, a lab validate report, ~3 MB:
# 8 MiB leaves room for all of them without letting /dev/zero in.
INPUT_CAP = 8 * MiB
# A mysqladmin extended-status snapshot in its table format is ~60 kB: 64 MiB holds
# ~1,100 of them, 18 minutes of `-i 1` (pt-stalk collects 30 s); read in ~2 s.
CAPTURE_CAP = 64 * MiB

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def format_cap(n: int) -> str:
    return f"{n // MiB} MiB" if n % MiB == 0 else f"{n} bytes"


def file_kind(mode: int) -> str | None:
    """What a stat mode is when it is not a regular file ("a FIFO", ...); None when it
    is one."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _too_big(where: str, cap: int) -> str:
    of = {INPUT_CAP: "input files", CAPTURE_CAP: "capture files"}.get(cap, "this file")
    return f"{where}: larger than {format_cap(cap)}, the cap on {of}"


def _refuse_kind(mode: int, where: str, error: type[UsageError]) -> None:
    kind = file_kind(mode)
    if kind is not None:
        raise error(f"{where}: is {kind}, not a regular file")


def read_bytes(path: str | os.PathLike, what: str = "file", cap: int = INPUT_CAP,
               error: type[UsageError] = UsageError, missing: str | None = None) -> bytes:
    """The bytes of the regular file at path, at most cap of them.

    what names the file in "no such <what>" (missing replaces that whole message);
    every refusal is error("<path>: ...").
    """
    where = str(path)
    gone = missing or f"{where}: no such {what}"
    try:
        # stat first: a device is refused without being opened (opening one can act)
        _refuse_kind(os.stat(path).st_mode, where, error)
        # O_NONBLOCK: a FIFO swapped in after the stat cannot hold the open
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        raise error(gone) from None
    except OSError as exc:
        raise error(f"{where}: cannot read it ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        _refuse_kind(st.st_mode, where, error)
        if st.st_size > cap:
            raise error(_too_big(where, cap))
        try:
            data = f.read(cap + 1)   # bounded even when the file grows while it is read
        except OSError as exc:
            raise error(f"{where}: cannot read it ({exc.strerror or exc})") from None
    if len(data) > cap:
        raise error(_too_big(where, cap))
    return data


def decode(data: bytes, where: str, error: type[UsageError] = UsageError) -> str:
    """data as UTF-8 text; one line naming the first byte that is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{where}: cannot read it as text: byte 0x{data[exc.start]:02x} at "
                    f"offset {exc.start} is not UTF-8") from None


def read_text(path: str | os.PathLike, what: str = "file", cap: int = INPUT_CAP,
              error: type[UsageError] = UsageError, replace: bool = False,
              missing: str | None = None) -> str:
    """The UTF-8 text of the regular file at path (see read_bytes). replace: undecodable
    bytes become U+FFFD instead of an error (captures: SHOW output may hold any bytes in
    a value no rule reads)."""
    data = read_bytes(path, what, cap, error, missing)
    if replace:
        return data.decode("utf-8", errors="replace")
    return decode(data, str(path), error)


def is_world_writable(path: str | os.PathLike) -> bool:
    """A regular file anyone may write (the mysql clients ignore such an option file);
    False for anything missing or not a regular file (read_bytes refuses those)."""
    try:
        st = os.stat(Path(path))
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and bool(st.st_mode & stat.S_IWOTH)


_warned: set[str] = set()
_warned_lock = threading.Lock()


def ignore_world_writable(path: str | os.PathLike, what: str = "option file") -> bool:
    """True when path is a regular file anyone may write, after a warning on stderr
    (once a file per process: a fleet resolves the options once a host). The mysql
    clients ignore such a file, whoever named it: anyone could have put a host, a user
    or a socket of their choosing in it."""
    if not is_world_writable(path):
        return False
    with _warned_lock:
        first = str(path) not in _warned
        _warned.add(str(path))
    if first:
        print(f"innoflush: warning: world-writable {what} '{path}' is ignored",
              file=sys.stderr, flush=True)
    return True
