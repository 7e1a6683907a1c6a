"""`--server-option NAME=VALUE`: any server option the lab does not set itself.

The lab owns where a server keeps its files and how it is reached: a fresh datadir in the
run's work directory (removed afterwards), its socket, pid file and error log there, TCP
on 127.0.0.1 only, no option file. An option that moved any of them would leave InnoDB
files behind (``datadir=``, ``innodb_data_home_dir=``), expose a throw-away server with a
password-less root on every interface (``bind-address=0.0.0.0``, ``mysqlx=ON``) or start a
server the lab cannot reach; such options are refused before anything runs (exit 2).

mysqld reads an option under other names too, and each is refused the same: ``-`` or
``_`` anywhere, any case, the prefixes ``loose-``, ``skip-``, ``enable-``, ``disable-``
and ``maximum-``, and (MariaDB) any unambiguous prefix of the name: ``bind=`` is
``bind-address=``.
"""

from __future__ import annotations

import re

from ...errors import OptionError

# the options the lab sets for every server, and why a run cannot take another value
_FILES = "in the run's work directory, removed with it"
RESERVED: dict[str, str] = {
    "datadir": "each run gets a fresh one " + _FILES,
    "innodb-data-home-dir": "InnoDB's files stay in the datadir, " + _FILES,
    "innodb-log-group-home-dir": "InnoDB's files stay in the datadir, " + _FILES,
    "innodb-undo-directory": "InnoDB's files stay in the datadir, " + _FILES,
    "tmpdir": _FILES,
    "pid-file": _FILES,
    "log-error": _FILES + " (its [ERROR] lines are quoted when a server does not start)",
    "socket": _FILES,
    "port": "give --port, or leave it out for a free port per run",
    "bind-address": "127.0.0.1: a lab server (root without a password) is never "
                    "reachable from another host",
    "skip-networking": "the lab and its clients connect over TCP on 127.0.0.1",
    "admin-address": "a lab server listens on 127.0.0.1 only",
    "admin-port": "a lab server listens on 127.0.0.1 only",
    "mysqlx": "off: the X protocol would listen on every interface",
    "mysqlx-port": "the X protocol is off",
    "mysqlx-bind-address": "the X protocol is off",
    "mysqlx-socket": "the X protocol is off",
    "basedir": "give --basedir",
    "user": "the lab runs the server as itself (root: --user=root)",
    "log-bin": "give --log-bin (the binary log then goes " + _FILES + ")",
    "no-defaults": "the lab starts every server with --no-defaults (no option file)",
    "defaults-file": "the lab starts every server with --no-defaults (no option file)",
    "defaults-extra-file": "the lab starts every server with --no-defaults (no option file)",
    "defaults-group-suffix": "the lab starts every server with --no-defaults (no option "
                             "file)",
}
SERVER_OPTION_HELP = ("Any other server option, NAME=VALUE (a switch: NAME=ON), repeatable "
                      "(e.g. innodb_log_file_size=256M); not one the lab sets itself: "
                      "datadir, port, socket, bind-address and the like (exit 2).")
# mysqld's option prefixes: loose- first (an unknown option is a warning), then one of
# the others (skip-x is x=OFF, maximum-x caps what SET may give x)
_LOOSE = "loose-"
_MODIFIERS = ("skip-", "enable-", "disable-", "maximum-")
_NAME = re.compile(r"[A-Za-z0-9_-]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _readings(name: str) -> list[str]:
    """The option names mysqld may read name as, before prefix matching."""
    base = name.lower().replace("_", "-")
    out = [base]
    if base.startswith(_LOOSE):
        base = base[len(_LOOSE):]
        out.append(base)
    out += [base[len(m):] for m in _MODIFIERS if base.startswith(m)]
    return [n for n in out if n]


def reserved_reading(name: str) -> tuple[str, str] | None:
    """(the lab's option, how mysqld gets to it) when name would set one, else None."""
    for reading in _readings(name):
        for option in RESERVED:
            if reading == option:
                return option, ""
            if option.startswith(reading):
                return option, f"mysqld reads {reading!r} as {option} (a prefix of its name)"
    return None


def parse_server_options(items: tuple[str, ...] | list[str]) -> dict[str, str]:
    """--server-option NAME=VALUE, repeatable, as {name (``_`` for ``-``): value}; exit 2
    for a malformed one and for one the lab sets itself (see the module doc)."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip().lstrip("-")
        if not sep:
            raise OptionError(f"--server-option {item!r}: give NAME=VALUE (a switch: "
                              "NAME=ON or NAME=OFF)")
        if not _NAME.fullmatch(name):
            raise OptionError(f"--server-option {item!r}: give NAME=VALUE, the NAME of "
                              "letters, digits, '_' and '-'")
        if _CONTROL.search(value):
            raise OptionError(f"--server-option {item!r}: the value holds a control "
                              "character (a newline, a tab, NUL...)")
        reserved = reserved_reading(name)
        if reserved is not None:
            option, how = reserved
            what = f"{how}, which is set by the lab" if how else \
                f"{option} is set by the lab"
            raise OptionError(f"--server-option {item!r}: {what}; {RESERVED[option]}")
        out[name.replace("-", "_")] = value.strip()
    return out


__all__ = ["RESERVED", "SERVER_OPTION_HELP", "parse_server_options", "reserved_reading"]
