"""Connecting to the server to advise on, read-only, without ever exposing a password.

Where the settings come from, highest precedence first (the mysql client's order):

- the command line;
- the login path file (``~/.mylogin.cnf``, or ``$MYSQL_TEST_LOGIN_FILE``; see
  ``mylogin``): its ``--login-path NAME`` group, then its ``[client]`` group — read even
  with ``--defaults-file``, as the clients do;
- the ``[client]`` section of ``--defaults-file`` (or, without it, of ``~/.my.cnf``),
  then, when ``resolve_options`` is given ``group_suffixes`` (the mysql clients'
  ``--defaults-group-suffix``: ``_X`` reads ``[client]`` then ``[client_X]``), each
  ``[client<suffix>]`` section in the order given, a later one winning;
- the defaults (localhost, 3306, the login name, ``--ssl-mode PREFERRED``). As with the
  MySQL clients, host ``localhost`` without a port means the local socket when one of the
  usual socket files exists.

The password: ``-p``/``--password``/``--ask-password`` (a hidden prompt; never a value on
the command line: it would show in the process list), then the files as above, then the
``MYSQL_PWD`` environment variable, else none.

TLS follows ``--ssl-mode`` (see ``tls``); the report shows what the session really got.
``--connect-timeout`` bounds each step of connecting: the TCP connect, the server's
greeting, the TLS and login handshake. Something that accepts the connection but sends
no MySQL greeting is reported as not a MySQL server.

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

from .. import infile
from ..errors import InnoflushError, OptionError, UsageError
from .mylogin import login_file_path, read_login_file
from .tls import (
    DEFAULT_SSL_MODE,
    apply_preferred_context,
    normalise_ssl_mode,
    pymysql_tls_kwargs,
    read_session_tls,
)

DEFAULT_PORT = 3306
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "")
# Where the MySQL/MariaDB clients look for the server's socket when the host is localhost.
DEFAULT_SOCKETS = ("/run/mysqld/mysqld.sock", "/var/run/mysqld/mysqld.sock",
                   "/var/lib/mysql/mysql.sock", "/tmp/mysql.sock")


class ConnectError(UsageError):
    """Cannot reach or log in to the server (exit 2: fix the connection options).

    kind: why, in one word a fleet report can sort and count by: refused, timeout,
    unknown-host, unreachable, no-socket, tls, auth, not-mysql, lost, privilege, connect
    (anything else)."""

    def __init__(self, message: str, kind: str = "connect"):
        super().__init__(message)
        self.kind = kind


class PrivilegeError(UsageError):
    """The account lacks a privilege the advisor cannot do without."""


class WriteRefused(InnoflushError):
    """A statement other than a single SELECT/SHOW was about to be sent. A bug, not a user
    error: the advisor only reads."""


# The read timeout once connected: the advisor's reads are short, but a busy server's
# SHOW can take seconds; minutes means something is wrong.
READ_TIMEOUT_S = 60.0
MAX_CONNECT_TIMEOUT_S = 31_536_000   # PyMySQL's own upper bound


@dataclass
class ConnectionOptions:
    host: str = "localhost"
    port: int = DEFAULT_PORT
    socket: str | None = None
    user: str = ""
    password: str | None = field(default=None, repr=False)
    ssl_mode: str = DEFAULT_SSL_MODE
    ssl_ca: str | None = None
    ssl_cert: str | None = None
    ssl_key: str | None = None
    connect_timeout: float = 10.0
    # "prompt", "option file <path>", "login path <name> (<path>)", "MYSQL_PWD", "none"
    password_source: str = "none"

    @property
    def target(self) -> str:
        """Where we connect, for messages (never with the password)."""
        if self.socket:
            return f"socket {self.socket}"
        return f"{self.host}:{self.port}"

    @property
    def is_local(self) -> bool:
        return bool(self.socket) or self.host in LOCAL_HOSTS

    def public(self, tls: Mapping[str, Any] | None = None) -> dict:
        """What a report may show about the connection; tls: the session's TLS as read back
        from the server (read_session_tls). Without it TLS is unknown, not guessed."""
        t = dict(tls) if tls else {"tls": None, "tls_version": None, "tls_cipher": None,
                                   "server_verified": "none", "ssl_mode": self.ssl_mode}
        return {"target": self.target, "user": self.user, **t,
                "password_source": self.password_source}


class _CaseKeepingParser(configparser.RawConfigParser):
    """Option names keep their case here; parse_option_groups normalises them itself."""

    def optionxform(self, optionstr: str) -> str:
        return optionstr


def parse_option_groups(text: str, source: str) -> dict[str, dict[str, str]]:
    """Every group of a MySQL option file's text (``!include`` lines are skipped).

    Keys are normalised to lowercase with '_' (``ssl-ca`` -> ``ssl_ca``); surrounding
    quotes are removed from values, as the MySQL clients do.
    """
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("!")]
    cp = _CaseKeepingParser(allow_no_value=True, strict=False,
                            comment_prefixes=("#", ";"), inline_comment_prefixes=None,
                            delimiters=("=",))
    try:
        cp.read_string("\n".join(lines), source=source)
    except configparser.Error as exc:
        # configparser messages quote the offending line, which could be a password line
        raise UsageError(f"{source}: not a valid option file "
                         f"({exc.__class__.__name__})") from None
    groups: dict[str, dict[str, str]] = {}
    for section in cp.sections():
        out: dict[str, str] = {}
        for key, value in cp.items(section):
            k = key.strip().lower().replace("-", "_")
            v = "" if value is None else value.strip()
            if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
                v = v[1:-1]
            out[k] = v
        groups[section.strip()] = out
    return groups


def read_option_file(path: str | os.PathLike, section: str = "client") -> dict[str, str]:
    """Options of one section of a MySQL option file (see parse_option_groups)."""
    return read_option_groups(path).get(section, {})


def read_option_groups(path: str | os.PathLike) -> dict[str, dict[str, str]]:
    """Every group of a MySQL option file (see parse_option_groups)."""
    p = Path(path).expanduser()
    return parse_option_groups(infile.read_text(p, "option file"), str(p))


def _option_sources(defaults_file: str | None, login_path: str | None,
                    environ: Mapping[str, str], home: str | None,
                    group_suffixes: Sequence[str] = ()
                    ) -> list[tuple[str, dict[str, str]]]:
    """(label, options) of every file that gives options, lowest precedence first."""
    sources: list[tuple[str, dict[str, str]]] = []
    opt_path = Path(defaults_file).expanduser() if defaults_file else \
        Path(home or Path.home()) / ".my.cnf"
    # a world-writable file is skipped even when named by --defaults-file, as the
    # clients do (the connection then goes without its credentials)
    if (defaults_file or opt_path.is_file()) and not infile.ignore_world_writable(opt_path):
        groups = read_option_groups(opt_path)
        sources.append((f"option file {opt_path}", groups.get("client", {})))
        for suffix in group_suffixes:   # [client_X] after [client]: the later one wins
            if f"client{suffix}" in groups:
                sources.append((f"option file {opt_path} [client{suffix}]",
                                groups[f"client{suffix}"]))
    login_file = login_file_path(environ, home)
    if login_path is not None and not login_path.strip():
        raise OptionError("--login-path needs a name")
    if (login_file.is_file() or login_path) and \
            not infile.ignore_world_writable(login_file, "login path file"):
        groups = parse_option_groups(read_login_file(login_file), str(login_file))
        if "client" in groups:
            sources.append((f"login path client ({login_file})", groups["client"]))
        if login_path:
            if login_path not in groups:
                known = ", ".join(sorted(groups)) or "none"
                raise UsageError(f"--login-path {login_path}: no such login path in "
                                 f"{login_file} (it has: {known})")
            if login_path != "client":
                sources.append((f"login path {login_path} ({login_file})",
                                groups[login_path]))
    return sources


def resolve_options(host: str | None = None, port: int | None = None, socket: str | None = None,
                    user: str | None = None, defaults_file: str | None = None,
                    ask_password: bool = False, ssl_mode: str | None = None,
                    ssl_ca: str | None = None, ssl_cert: str | None = None,
                    ssl_key: str | None = None, connect_timeout: float = 10.0,
                    login_path: str | None = None, env: Mapping[str, str] | None = None,
                    prompt: Callable[[str], str] | None = None,
                    home: str | None = None,
                    group_suffixes: Sequence[str] = ()) -> ConnectionOptions:
    """Merge the command line, the option files, MYSQL_PWD and a prompt (see module doc).
    group_suffixes: also read these ``[client<suffix>]`` sections of the option file,
    after ``[client]`` (see module doc)."""
    environ: Mapping[str, str] = os.environ if env is None else env
    if not 0 < connect_timeout <= MAX_CONNECT_TIMEOUT_S:
        raise OptionError(f"--connect-timeout must be more than 0 seconds and at most "
                          f"{MAX_CONNECT_TIMEOUT_S} (got {connect_timeout:g})")
    sources = _option_sources(defaults_file, login_path, environ, home, group_suffixes)

    def from_files(key: str) -> tuple[str | None, str]:
        for label, opts in reversed(sources):
            if opts.get(key):
                return opts[key], label
        return None, ""

    def pick(cli: Any, key: str) -> Any:
        return cli if cli not in (None, "") else from_files(key)[0]

    o = ConnectionOptions(connect_timeout=connect_timeout)
    o.host = pick(host, "host") or "localhost"
    port_v = pick(port, "port")
    try:
        o.port = int(port_v) if port_v is not None else DEFAULT_PORT
    except ValueError:
        raise UsageError(f"{from_files('port')[1]}: port is not a number") from None
    if not 0 < o.port < 65536 and port not in (None, ""):
        raise OptionError(f"-P/--port: port {o.port} is out of range (1-65535)")
    if not 0 < o.port < 65536:
        raise UsageError(f"{from_files('port')[1]}: port {o.port} is out of range (1-65535)")
    o.socket = pick(socket, "socket")
    if o.socket and (host or port) and not socket:
        o.socket = None  # an explicit --host/--port wins over the file's socket
    if not o.socket and o.host == "localhost" and port_v is None:
        # as the clients do: "localhost" means the local socket, where there is one
        o.socket = next((p for p in DEFAULT_SOCKETS if _is_socket(p)), None)
    o.user = pick(user, "user") or _login_name()
    mode_v = pick(ssl_mode, "ssl_mode")
    o.ssl_mode = (normalise_ssl_mode(mode_v, "--ssl-mode" if ssl_mode else
                                     f"{from_files('ssl_mode')[1]}: ssl-mode")
                  if mode_v else DEFAULT_SSL_MODE)
    o.ssl_ca = pick(ssl_ca, "ssl_ca")
    o.ssl_cert = pick(ssl_cert, "ssl_cert")
    o.ssl_key = pick(ssl_key, "ssl_key")
    for name in ("ssl_ca", "ssl_cert", "ssl_key"):
        v = getattr(o, name)
        if v and not Path(v).expanduser().is_file():
            raise UsageError(f"--{name.replace('_', '-')} {v}: no such file")
    if o.ssl_key and not o.ssl_cert:
        raise UsageError("--ssl-key needs --ssl-cert (the certificate of that key)")
    if o.ssl_mode in ("VERIFY_CA", "VERIFY_IDENTITY") and not o.ssl_ca:
        raise UsageError(f"--ssl-mode {o.ssl_mode} needs --ssl-ca (the CA that signed the "
                         "server's certificate)")
    if ask_password:
        if prompt is None:
            import click

            def prompt(text: str) -> str:
                return click.prompt(text, hide_input=True, default="", show_default=False)
        o.password = prompt(f"Password for {o.user}@{o.target}")
        o.password_source = "prompt"
    elif any("password" in opts for _, opts in sources):
        # an empty password in a file is a password too (the account may have none)
        for label, opts in reversed(sources):
            if "password" in opts:
                o.password, o.password_source = opts["password"], label
                break
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
_CR_SSL_CONNECTION_ERROR = 2026
_MYSQL_PROTOCOL = 10   # the first byte of every MySQL/MariaDB greeting since 3.21


def connect(opts: ConnectionOptions, read_tls: bool = True) -> ReadOnlySession:
    """A PyMySQL connection wrapped in a ReadOnlySession; errors as one clear line.

    read_tls: read the session's TLS back from the server into ``session.tls`` (one SHOW;
    the advisor's second, sampling session does without it)."""
    import pymysql

    t = opts.connect_timeout
    if not 0 < t <= MAX_CONNECT_TIMEOUT_S:
        raise OptionError(f"--connect-timeout must be more than 0 seconds and at most "
                          f"{MAX_CONNECT_TIMEOUT_S} (got {t:g})")
    # PyMySQL's connect_timeout covers only the TCP connect; its read timeout then covers
    # the greeting and the TLS/login handshake, so both are the connect timeout until the
    # session is up (the write timeout too: without one, the TLS handshake could block)
    kw: dict = dict(user=opts.user, password=opts.password or "", connect_timeout=t,
                    read_timeout=t, write_timeout=t, autocommit=None, charset="utf8mb4",
                    defer_connect=True)
    if opts.socket:
        kw["unix_socket"] = opts.socket
    else:
        kw["host"] = opts.host
        kw["port"] = opts.port
    try:
        kw.update(pymysql_tls_kwargs(opts.ssl_mode, opts.ssl_ca, opts.ssl_cert, opts.ssl_key))
        conn = pymysql.connect(**kw)
        apply_preferred_context(conn, opts.ssl_mode, opts.ssl_ca, opts.ssl_cert,
                                opts.ssl_key)
    except OSError as exc:   # a certificate or key that does not load
        raise ConnectError(scrub(f"cannot use the TLS files ({_ssl_text(exc)})",
                                 opts.password), "tls") from None
    try:
        conn.connect()
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line
        raise _handshake_error(exc, conn, opts) from None
    _restore_timeouts(conn)
    session = ReadOnlySession(conn, opts.password)
    if read_tls:
        try:
            session.tls = read_session_tls(session, opts.ssl_mode)
        except pymysql.err.MySQLError as exc:
            session.close()
            raise connect_error(exc, opts) from None
    return session


def _restore_timeouts(conn: Any) -> None:
    """Connected: reads may now take up to READ_TIMEOUT_S. PyMySQL keeps its timeouts in
    private attributes and applies them before each read and write; there is no public
    setter, so they are set here where they exist (else the connect timeout stays)."""
    for name in ("_read_timeout", "_write_timeout"):
        if hasattr(conn, name):
            setattr(conn, name, READ_TIMEOUT_S)


def _greeted(conn: Any) -> bool:
    """The peer sent a MySQL greeting (PyMySQL parsed it) before the failure."""
    return (getattr(conn, "protocol_version", None) == _MYSQL_PROTOCOL
            and getattr(conn, "server_capabilities", None) is not None)


def _ssl_text(exc: BaseException) -> str:
    import ssl

    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"certificate verify failed: {exc.verify_message}"
    if isinstance(exc, ssl.SSLError):
        return exc.reason or str(exc)
    return f"{exc.strerror or exc}" if isinstance(exc, OSError) else str(exc)


def _handshake_error(exc: Exception, conn: Any, opts: ConnectionOptions) -> ConnectError:
    """One line for a failure of conn.connect(), by the step it failed in."""
    import ssl

    import pymysql

    t = f"{opts.connect_timeout:g} s"
    orig = getattr(exc, "original_exception", None)
    code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
    connected = conn.host_info != "Not connected"   # PyMySQL sets it once the socket is up
    kind = "connect"
    if isinstance(orig, ssl.SSLError):
        msg = (f"TLS handshake with {opts.target} failed under --ssl-mode {opts.ssl_mode}: "
               f"{_ssl_text(orig)}")
        kind = "tls"
    elif code == _CR_SSL_CONNECTION_ERROR:
        msg = (f"the server at {opts.target} does not offer TLS, and --ssl-mode "
               f"{opts.ssl_mode} requires it (the server needs ssl_cert and ssl_key)")
        kind = "tls"
    elif isinstance(exc, pymysql.err.MySQLError) and code is not None and code < 2000:
        return connect_error(exc, opts)    # the server answered with an error (1045...)
    elif not connected and isinstance(orig, OSError):
        # the TCP (or socket file) connect itself
        if isinstance(orig, TimeoutError):
            reason, kind = "timed out after " + t + " (host unreachable or filtered?)", \
                "timeout"
        else:
            reason, kind = _reason(str(orig))
        msg = f"cannot connect to {opts.target}: {reason}"
    elif not connected and isinstance(exc, UnicodeError):
        # PyMySQL encodes the name (IDNA) before any look-up: ".db1" or "db..x" (an
        # empty label) fails there, and nothing was asked of any server
        msg = f"cannot connect to {opts.target}: invalid host name (an empty or too long label)"
        kind = "unknown-host"
    elif not connected and not isinstance(exc, pymysql.err.MySQLError):
        msg = f"cannot connect to {opts.target}: {exc.__class__.__name__}: {exc}"
    elif _greeted(conn) and not isinstance(exc, (pymysql.err.MySQLError, OSError)):
        # a greeting PyMySQL cannot parse (a version or plugin name that is not text,
        # a packet cut short): whatever answered, it is not a server we can talk to
        msg = (f"not a MySQL server at {opts.target} (its greeting cannot be read: "
               f"{exc.__class__.__name__})")
        kind = "not-mysql"
    elif not _greeted(conn):
        timed_out = isinstance(orig, TimeoutError) or "timed out" in str(exc).lower()
        lost = code == _CR_SERVER_LOST
        why = (f"no MySQL greeting within {t}" if timed_out else
               "it closed the connection without a MySQL greeting" if lost else
               "it answered with something other than a MySQL greeting")
        msg = f"not a MySQL server at {opts.target} ({why})"
        kind = "not-mysql"
    elif isinstance(orig, TimeoutError) or "timed out" in str(exc).lower():
        msg = (f"the server at {opts.target} did not finish the login handshake within {t}")
        kind = "timeout"
    elif isinstance(exc, pymysql.err.MySQLError):
        return connect_error(exc, opts)
    else:
        msg = f"cannot connect to {opts.target}: {exc.__class__.__name__}: {exc}"
    return ConnectError(scrub(msg, opts.password), kind)


def connect_error(exc: Exception, opts: ConnectionOptions) -> ConnectError:
    code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
    detail = str(exc.args[1]) if len(exc.args) > 1 else str(exc)
    kind = "connect"
    if code == _ER_ACCESS_DENIED:
        using = "with a password" if opts.password else "without a password"
        hint = ("check the password" if opts.password else
                "give one with -p, --login-path, --defaults-file or MYSQL_PWD")
        msg = (f"access denied for user {opts.user!r} at {opts.target} ({using}): {hint}")
        kind = "auth"
    elif code == _ER_DBACCESS_DENIED:
        msg = f"access denied for user {opts.user!r} at {opts.target}"
        kind = "auth"
    elif code in (_CR_CONNECTION_ERROR, _CR_CONN_HOST_ERROR, _CR_UNKNOWN_HOST):
        reason, kind = _reason(detail)
        msg = f"cannot connect to {opts.target}: {reason}"
    elif code == _CR_SERVER_LOST:
        msg = f"lost connection to {opts.target} while connecting: {_reason(detail)[0]}"
        kind = "lost"
    else:
        msg = f"cannot connect to {opts.target}: {detail}" + (f" (error {code})" if code else "")
    return ConnectError(scrub(msg, opts.password), kind)


class ServerLost(InnoflushError):
    """The connection went away while reading (exit 1: the server restarted or left)."""

    kind = "lost"


def server_error(exc: Exception, opts: ConnectionOptions) -> InnoflushError:
    """One line for a driver error met while reading a connected server (not while
    connecting: connect() has its own): lost, missing privilege (exit 2), anything else
    the server said (exit 1)."""
    code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
    if code in (2006, 2013, 2014):
        return ServerLost(f"lost the connection to {opts.target} (server restarted or "
                          "went away?)")
    detail = scrub(str(exc.args[1]) if len(exc.args) > 1 else str(exc), opts.password)
    if code in (1227, 1142, 1044):
        return ConnectError(f"missing privilege at {opts.target}: {detail}", "privilege")
    err = InnoflushError(f"server error at {opts.target}: {detail}"
                         + (f" (error {code})" if code else ""))
    err.kind = "server"   # type: ignore[attr-defined]   # for the fleet's report
    return err


# (what the driver's text contains, what we say, the ConnectError kind)
_REASONS = (("refused", "connection refused (is the server running, and on this port?)",
             "refused"),
            ("timed out", "timed out (host unreachable or filtered?)", "timeout"),
            ("no such file", "no such socket file", "no-socket"),
            ("name or service not known", "unknown host name", "unknown-host"),
            ("nodename nor servname", "unknown host name", "unknown-host"),
            ("no route", "no route to host", "unreachable"),
            ("network is unreachable", "network is unreachable", "unreachable"))


def _reason(detail: str) -> tuple[str, str]:
    """(the reason in our words, its ConnectError kind) from the driver's text."""
    low = detail.lower()
    for key, text, kind in _REASONS:
        if key in low:
            return text, kind
    if "ssl" in low:
        return "TLS handshake failed: " + detail, "tls"
    return detail, "connect"


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
        # the session's TLS as the server reports it (tls.read_session_tls), or None: unread
        self.tls: dict[str, Any] | None = None

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
