"""A server from a Debian root of its own (a chroot), for servers this host's release lacks.

MySQL 9.7 ships in Debian sid and MariaDB 11.8 in Debian 13; neither runs on Debian 12's
libc. ``docker/build-offline-image.sh --server NAME --keep-root DIR`` builds such a root
(the same one its image is made of), and ``LocalServer(server_root=DIR)`` runs the server
in it without Docker:

    unshare --mount --propagation private -- sh -c '...; exec chroot ROOT mysqld ...'

In a mount namespace of its own, the work directory (datadir, logs, socket) is bind-mounted
at the same path inside the root as outside, with /proc, /sys and /dev, then the server is
exec'd in the chroot. unshare, sh and chroot all exec, so the PID the lab holds is the
server's: its /proc (threads, CPU time, open files) is what advise and the lab read, and
every path the server reports (datadir, socket, log) means the same on the host. The mounts
live only in that namespace and vanish with the server, however it ends; the empty
directories made inside the root to mount on are removed at stop.

It needs root (mount namespaces, chroot): the lab's local backend runs as root anyway when
it must (``--user=root``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ...errors import UsageError

SERVER_NAMES = ("mariadbd", "mysqld")
# where `make server-roots` keeps the roots it builds (INNOFLUSH_SERVER_ROOTS overrides):
# --server-root mysql-9.7 means the root of that name there
DEFAULT_ROOTS_DIR = "/var/lib/innoflush/roots"
KNOWN_ROOTS = ("mysql-9.7", "mariadb-11.8")


def roots_dir() -> Path:
    return Path(os.environ.get("INNOFLUSH_SERVER_ROOTS") or DEFAULT_ROOTS_DIR)


def resolve_root(value: str | os.PathLike) -> Path:
    """A root's directory: a path, or the name of one under roots_dir() (mysql-9.7)."""
    text = os.fspath(value)
    if "/" not in text and not Path(text).exists():
        return roots_dir() / text
    return Path(text).absolute()
# the script run by sh in the new namespace: $1 the root, then the directories to mount
# up to "--", then the command
_SCRIPT = r"""
set -e
root=$1; shift
while [ "$1" != -- ]; do mount --bind "$1" "$root$1"; shift; done
shift
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
exec chroot "$root" "$@"
"""


class ServerRoot:
    """A Debian root holding a server (``usr/sbin/mysqld`` or ``mariadbd``)."""

    def __init__(self, path: str | os.PathLike):
        self.path = resolve_root(path)
        self._made: list[Path] = []   # directories made inside the root to mount on

    def check(self) -> None:
        """UsageError unless this is a root with a server that this process can run."""
        if not self.path.is_dir():
            raise UsageError(f"--server-root {self.path}: no such directory (build one "
                             "with `make server-roots`, or docker/build-offline-image.sh "
                             "--server NAME --keep-root DIR --root-only)")
        if self.server() is None:
            raise UsageError(f"--server-root {self.path}: holds no usr/sbin/mariadbd or "
                             "usr/sbin/mysqld (is it a root built by "
                             "docker/build-offline-image.sh --keep-root?)")
        if os.geteuid() != 0:
            raise UsageError(f"--server-root {self.path}: running a server in a root needs "
                             "root (a mount namespace and chroot): run as root, or use "
                             "--backend docker with the same server's image")
        for tool in ("unshare", "chroot", "mount"):
            if shutil.which(tool) is None and not Path("/usr/sbin", tool).exists():
                raise UsageError(f"--server-root needs {tool} (util-linux / coreutils)")

    def server(self) -> Path | None:
        """The server binary as seen inside the root (/usr/sbin/NAME), or None."""
        for name in SERVER_NAMES:
            if (self.path / "usr" / "sbin" / name).is_file():
                return Path("/usr/sbin") / name
        return None

    def install_db(self) -> Path | None:
        for name in ("mariadb-install-db", "mysql_install_db"):
            for d in ("usr/bin", "usr/sbin"):
                if (self.path / d / name).is_file():
                    return Path("/") / d / name
        return None

    @property
    def description(self) -> str:
        """What the root says it holds (written by the build script), or its path."""
        try:
            return (self.path / "etc" / "innoflush-server").read_text().strip()
        except OSError:
            return str(self.path)

    def chroot_only(self, cmd: list[str]) -> list[str]:
        """A command run in the root with no mounts: for --version and the like."""
        return ["chroot", str(self.path), *cmd]

    def wrap(self, cmd: list[str], directories: list[Path]) -> list[str]:
        """cmd run in the root, with each directory at its own path inside it. Makes the
        mount points (removed again by release())."""
        dirs = []
        for d in directories:
            d = Path(d).absolute()
            self._make_mount_point(d)
            dirs.append(str(d))
        return ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
                _SCRIPT, "innoflush-server-root", str(self.path), *dirs, "--", *cmd]

    def _make_mount_point(self, directory: Path) -> None:
        missing = []
        inside = self.path / directory.relative_to("/")
        while not inside.exists():
            missing.append(inside)
            inside = inside.parent
        for p in reversed(missing):
            try:
                p.mkdir()
            except FileExistsError:   # another server in the same root made it
                continue
            self._made.append(p)

    def release(self) -> None:
        """Remove the mount points made inside the root (empty once the server ended;
        one still in use is left alone)."""
        for p in reversed(self._made):
            try:
                p.rmdir()
            except OSError:
                pass
        self._made.clear()


__all__ = ["DEFAULT_ROOTS_DIR", "KNOWN_ROOTS", "ServerRoot", "resolve_root", "roots_dir"]
