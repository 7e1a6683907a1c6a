"""Connecting to the server to advise on, read-only, without ever exposing a password.

Where the settings come from, highest precedence first:

- host, port, socket, user, TLS: the command-line options, then the ``[client]`` section of
  ``--defaults-file`` (or, without it, of ``~/.my.cnf``), then the defaults (localhost,
  3306, the login name). As with the MySQL clients, host ``localhost`` without a port
  means the local socket when one of the usual socket files exists.
- password: ``--ask-password`` (a hidden prompt), then the option file's ``password``,
  then the ``MYSQL_PWD`` environment variable, else none. There is deliberately no
  ``--password`` option: a password on the command line shows in the process list.

The password is held in ``ConnectionOptions`` with ``repr=False`` and is never put into
an error message, a report or a log; ``scrub()`` removes it from any text that might echo
it (driver exceptions do not, but the guard costs nothing).

``ReadOnlySession`` is the only way the advisor talks to the server. It runs a statement
only if it is a single SELECT or SHOW (no INTO, no locking read, no second statement) and
refuses anything else with ``WriteRefused`` before it reaches the server. The driver
itself sends one ``SET NAMES`` at connect (the session's character set, a session
setting that changes nothing on the server); autocommit is left at the server's default,
so no ``SET AUTOCOMMIT`` is sent.
"""

from __future__ import annotations

import configparser
import getpass
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InnoflushError, UsageError

DEFAULT_PORT = 3306
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "")
# Where the MySQL/MariaDB clients look for the server's socket when the host is localhost.
DEFAULT_SOCKETS = ("/run/mysqld/mysqld.sock", "/var/run/mysqld/mysqld.sock",
                   "/var/lib/mysql/mysql.sock", "/tmp/mysql.sock")


class ConnectError(UsageError):
    """Cannot reach or log in to the server (exit 2: fix the connection options)."""


class PrivilegeError(UsageError):
    """The account lacks a privilege the advisor cannot do without."""


class WriteRefused(InnoflushError):
    """A statement other than a single SELECT/SHOW was about to be sent. A bug, not a user
    error: the advisor only reads."""


@dataclass
class ConnectionOptions:
    host: str = "localhost"
    port: int = DEFAULT_PORT
    socket: str | None = None
    user: str = ""
    password: str | None = field(default=None, repr=False)
    ssl_ca: str | None = None
    ssl_cert: str | None = None
    ssl_key: str | None = None
    connect_timeout: float = 10.0
    password_source: str = "none"   # "prompt", "option file <path>", "MYSQL_PWD", "none"

    @property
    def target(self) -> str:
        """Where we connect, for messages (never with the password)."""
        if self.socket:
            return f"socket {self.socket}"
        return f"{self.host}:{self.port}"

    @property
    def is_local(self) -> bool:
        return bool(self.socket) or self.host in LOCAL_HOSTS

    def public(self) -> dict:
        """What a report may show about the connection."""
        return {"target": self.target, "user": self.user, "tls": bool(self.ssl_ca or
                self.ssl_cert), "password_source": self.password_source}


class _CaseKeepingParser(configparser.RawConfigParser):
    """Option names keep their case here; read_option_file normalises them itself."""

    def optionxform(self, optionstr: str) -> str:
        return optionstr


def read_option_file(path: str | os.PathLike, section: str = "client") -> dict[str, str]:
    """Options of one section of a MySQL option file (``!include`` lines are skipped).

    Keys are normalised to lowercase with '_' (``ssl-ca`` -> ``ssl_ca``); surrounding
    quotes are removed from values, as the MySQL clients do.
    """
    p = Path(path).expanduser()
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{p}: no such option file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{p}: cannot read option file ({exc.__class__.__name__})") from None
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("!")]
    cp = _CaseKeepingParser(allow_no_value=True, strict=False,
                            comment_prefixes=("#", ";"), inline_comment_prefixes=None,
                            delimiters=("=",))
    try:
        cp.read_string("\n".join(lines), source=str(p))
    except configparser.Error as exc:
        # configparser messages quote the offending line, which could be a password line
        raise UsageError(f"{p}: not a valid option file "
                         f"({exc.__class__.__name__})") from None
    if not cp.has_section(section):
        return {}
    out: dict[str, str] = {}
    for key, value in cp.items(section):
        k = key.strip().lower().replace("-", "_")
        v = "" if value is None else value.strip()
        if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
            v = v[1:-1]
        out[k] = v
    return out


def resolve_options(host: str | None = None, port: int | None = None, socket: str | None = None,
                    user: str | None = None, defaults_file: str | None = None,
                    ask_password: bool = False, ssl_ca: str | None = None,
                    ssl_cert: str | None = None, ssl_key: str | None = None,
                    connect_timeout: float = 10.0, env: Mapping[str, str] | None = None,
                    prompt: Callable[[str], str] | None = None,
                    home: str | None = None) -> ConnectionOptions:
    """Merge the command line, the option file, MYSQL_PWD and a prompt (see module doc)."""
    environ: Mapping[str, str] = os.environ if env is None else env
    if defaults_file:
        opt_path = Path(defaults_file).expanduser()
        opts = read_option_file(opt_path)
    else:
        opt_path = Path(home or Path.home()) / ".my.cnf"
        opts = read_option_file(opt_path) if opt_path.is_file() else {}

    def pick(cli: Any, key: str) -> Any:
        return cli if cli not in (None, "") else (opts.get(key) or None)

    o = ConnectionOptions(connect_timeout=connect_timeout)
    o.host = pick(host, "host") or "localhost"
    port_v = pick(port, "port")
    try:
        o.port = int(port_v) if port_v is not None else DEFAULT_PORT
    except ValueError:
        raise UsageError(f"{opt_path}: port is not a number") from None
    if not 0 < o.port < 65536:
        raise UsageError(f"port {o.port} is out of range")
    o.socket = pick(socket, "socket")
    if o.socket and (host or port) and not socket:
        o.socket = None  # an explicit --host/--port wins over the file's socket
    if not o.socket and o.host == "localhost" and port_v is None:
        # as the clients do: "localhost" means the local socket, where there is one
        o.socket = next((p for p in DEFAULT_SOCKETS if _is_socket(p)), None)
    o.user = pick(user, "user") or _login_name()
    o.ssl_ca = pick(ssl_ca, "ssl_ca")
    o.ssl_cert = pick(ssl_cert, "ssl_cert")
    o.ssl_key = pick(ssl_key, "ssl_key")
    for name in ("ssl_ca", "ssl_cert", "ssl_key"):
        v = getattr(o, name)
        if v and not Path(v).expanduser().is_file():
            raise UsageError(f"--{name.replace('_', '-')} {v}: no such file")
    if ask_password:
        if prompt is None:
            import click

            def prompt(text: str) -> str:
                return click.prompt(text, hide_input=True, default="", show_default=False)
        o.password = prompt(f"Password for {o.user}@{o.target}")
        o.password_source = "prompt"
    elif "password" in opts:
        o.password = opts["password"]
        o.password_source = f"option file {opt_path}"
    elif environ.get("MYSQL_PWD") is not None:
        o.password = environ["MYSQL_PWD"]
        o.password_source = "MYSQL_PWD"
    return o


def _is_socket(path: str) -> bool:
    import stat

    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except OSError:
        return False


def _login_name() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "root"


def scrub(text: str, password: str | None) -> str:
    """text with every occurrence of the password replaced by '***'."""
    if password:
        text = text.replace(password, "***")
    return text


# MySQL client error codes (CR_*) and server errors that mean "cannot connect / log in".
_ER_ACCESS_DENIED = 1045
_ER_DBACCESS_DENIED = 1044
_CR_CONNECTION_ERROR = 2002
_CR_CONN_HOST_ERROR = 2003
_CR_UNKNOWN_HOST = 2005
_CR_SERVER_LOST = 2013


def connect(opts: ConnectionOptions) -> ReadOnlySession:
    """A PyMySQL connection wrapped in a ReadOnlySession; errors as one clear line."""
    import pymysql

    kw: dict = dict(user=opts.user, password=opts.password or "",
                    connect_timeout=opts.connect_timeout, read_timeout=60,
                    autocommit=None, charset="utf8mb4")
    if opts.socket:
        kw["unix_socket"] = opts.socket
    else:
        kw["host"] = opts.host
        kw["port"] = opts.port
    if opts.ssl_ca or opts.ssl_cert or opts.ssl_key:
        ssl: dict = {}
        if opts.ssl_ca:
            ssl["ca"] = str(Path(opts.ssl_ca).expanduser())
        if opts.ssl_cert:
            ssl["cert"] = str(Path(opts.ssl_cert).expanduser())
        if opts.ssl_key:
            ssl["key"] = str(Path(opts.ssl_key).expanduser())
        kw["ssl"] = ssl
    try:
        conn = pymysql.connect(**kw)
    except pymysql.err.MySQLError as exc:
        raise connect_error(exc, opts) from None
    except OSError as exc:  # TLS files unreadable, etc.
        raise ConnectError(scrub(f"cannot connect to {opts.target}: {exc}",
                                 opts.password)) from None
    return ReadOnlySession(conn, opts.password)


def connect_error(exc: Exception, opts: ConnectionOptions) -> ConnectError:
    code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
    detail = str(exc.args[1]) if len(exc.args) > 1 else str(exc)
    if code == _ER_ACCESS_DENIED:
        using = "with a password" if opts.password else "without a password"
        hint = ("check the password" if opts.password else
                "give one with --ask-password, --defaults-file or MYSQL_PWD")
        msg = (f"access denied for user {opts.user!r} at {opts.target} ({using}): {hint}")
    elif code == _ER_DBACCESS_DENIED:
        msg = f"access denied for user {opts.user!r} at {opts.target}"
    elif code in (_CR_CONNECTION_ERROR, _CR_CONN_HOST_ERROR, _CR_UNKNOWN_HOST):
        reason = _reason(detail)
        msg = f"cannot connect to {opts.target}: {reason}"
    elif code == _CR_SERVER_LOST:
        msg = f"lost connection to {opts.target} while connecting: {_reason(detail)}"
    else:
        msg = f"cannot connect to {opts.target}: {detail}" + (f" (error {code})" if code else "")
    return ConnectError(scrub(msg, opts.password))


def _reason(detail: str) -> str:
    low = detail.lower()
    for key, text in (("refused", "connection refused (is the server running, and on "
                                  "this port?)"),
                      ("timed out", "timed out (host unreachable or filtered?)"),
                      ("no such file", "no such socket file"),
                      ("name or service not known", "unknown host name"),
                      ("nodename nor servname", "unknown host name"),
                      ("no route", "no route to host"),
                      ("network is unreachable", "network is unreachable"),
                      ("ssl", "TLS handshake failed: " + detail)):
        if key in low:
            return text
    return detail


# ---- the read-only guard -------------------------------------------------------------

_COMMENT_RE = re.compile(r"/\*.*?\*/|--[^\n]*|#[^\n]*", re.S)
_STRING_RE = re.compile(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.|\"\")*\"|`[^`]*`", re.S)
_ALLOWED_FIRST = ("SELECT", "SHOW")
_FORBIDDEN_WORDS = re.compile(r"\b(INTO|FOR\s+UPDATE|LOCK\s+IN\s+SHARE\s+MODE|FOR\s+SHARE|"
                              r"GET_LOCK|RELEASE_LOCK|RELEASE_ALL_LOCKS|SLEEP|BENCHMARK|"
                              r"NEXTVAL|SETVAL)\b", re.I)


def check_read_only(sql: str) -> None:
    """Raise WriteRefused unless sql is a single SELECT or SHOW without side effects."""
    bare = _STRING_RE.sub("''", sql)
    if bare.count("/*!") or bare.count("/*M!"):
        raise WriteRefused("refused a statement with an executable comment")
    bare = _COMMENT_RE.sub(" ", bare).strip()
    if bare.endswith(";"):
        bare = bare[:-1].rstrip()
    if ";" in bare:
        raise WriteRefused("refused more than one statement in one query")
    first = bare.split(None, 1)[0].upper() if bare else ""
    if first not in _ALLOWED_FIRST:
        raise WriteRefused(f"refused a {first or 'empty'} statement: the advisor only reads "
                           "(SELECT, SHOW)")
    m = _FORBIDDEN_WORDS.search(bare)
    if m:
        raise WriteRefused(f"refused a statement with {m.group(1).upper()}: the advisor only "
                           "reads")


class ReadOnlySession:
    """The advisor's only handle on the server: SELECT and SHOW, nothing else."""

    def __init__(self, conn: Any, password: str | None = None):
        self._conn = conn
        self._password = password
        self.statements: list[str] = []   # what was sent, for tests and --debug

    def query(self, sql: str, args: Sequence[Any] | None = None) -> list[tuple]:
        check_read_only(sql)
        self.statements.append(sql)
        with self._conn.cursor() as cur:
            cur.execute(sql, args)
            return list(cur.fetchall())

    def query_dicts(self, sql: str, args: Sequence[Any] | None = None) -> list[dict]:
        check_read_only(sql)
        self.statements.append(sql)
        import pymysql

        with self._conn.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute(sql, args)
            return list(cur.fetchall())

    def close(self) -> None:
        try:
            self._conn.close()
        except Exception:  # noqa: BLE001 - already broken, nothing to do
            pass

    def __enter__(self) -> ReadOnlySession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
