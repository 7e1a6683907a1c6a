"""The server binaries a ``LocalServer`` runs: ``mariadbd`` or ``mysqld`` (and MariaDB's
``mariadb-install-db``) found on PATH, in /usr/sbin, under a given basedir or in a server
root, with the flavor and version the server says it is."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .backend import ServerError
from .server_root import ServerRoot

SERVER_NAMES = ("mariadbd", "mysqld")
SEARCH_DIRS = ("/usr/sbin", "/usr/local/sbin", "/usr/local/mysql/bin", "/usr/libexec")


@dataclass(frozen=True)
class Binaries:
    server: Path
    install_db: Path | None   # mariadb-install-db; None for MySQL (mysqld --initialize)
    flavor: str               # "mariadb" or "mysql"
    version: tuple[int, ...]
    version_text: str


def _version_of(server: Path, root: ServerRoot | None = None) -> tuple[str, tuple[int, ...],
                                                                     str]:
    cmd = [str(server), "--no-defaults", "--version"]
    try:
        out = subprocess.run(root.chroot_only(cmd) if root else cmd, capture_output=True,
                             text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ServerError(f"cannot run {server} --version: {exc}") from None
    text = (out.stdout or out.stderr).strip()
    m = re.search(r"Ver\s+(\d+)\.(\d+)\.(\d+)", text)
    if not m:
        raise ServerError(f"{server}: cannot read its version from {text[:200]!r}")
    flavor = "mariadb" if "mariadb" in text.lower() else "mysql"
    return flavor, tuple(int(g) for g in m.groups()), text


def _first_executable(names, dirs: list[Path]) -> Path | None:
    """The first name (in order of preference) found executable in any of dirs."""
    for name in names:
        for d in dirs:
            cand = d / name
            if cand.is_file() and os.access(cand, os.X_OK):
                return cand
    return None


def find_binaries(basedir: str | os.PathLike | None = None,
                  root: ServerRoot | None = None) -> Binaries:
    """The server binary (and MariaDB's install-db), from basedir or PATH and /usr/sbin;
    with a root, the paths inside it."""
    if root is not None:
        root.check()
        server = root.server()
        assert server is not None
        flavor, version, text = _version_of(server, root)
        return Binaries(server, root.install_db() if flavor == "mariadb" else None, flavor,
                        version, text)
    if basedir is not None:
        base = Path(basedir)
        dirs = [base / "bin", base / "sbin", base / "libexec", base]
    else:
        dirs = [Path(d) for d in os.environ.get("PATH", "").split(os.pathsep) if d]
        dirs += [Path(d) for d in SEARCH_DIRS]
    server = _first_executable(SERVER_NAMES, dirs)
    if server is None:
        where = str(basedir) if basedir is not None else "PATH or " + ", ".join(SEARCH_DIRS)
        raise ServerError(f"no mariadbd or mysqld found in {where}: install the MariaDB or "
                          "MySQL server package (e.g. apt-get install mariadb-server) or "
                          "give the server's basedir")
    flavor, version, text = _version_of(server)
    install_db = None
    if flavor == "mariadb":
        install_db = _first_executable(("mariadb-install-db", "mysql_install_db"),
                                       dirs + [server.parent, Path("/usr/bin")])
        if install_db is None:
            raise ServerError(f"{server} is MariaDB but mariadb-install-db was not found "
                              "next to it or on PATH")
    return Binaries(server, install_db, flavor, version, text)


__all__ = ["SEARCH_DIRS", "SERVER_NAMES", "Binaries", "find_binaries"]
