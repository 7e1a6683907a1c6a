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

import re
from collections.abc import Sequence
from typing import Any

from ..errors import InnoflushError, OptionError, UsageError
from .client_options import (
    MAX_CONNECT_TIMEOUT_S,
    ConnectionOptions,
    scrub,
)
from .tls import (
    apply_preferred_context,
    pymysql_tls_kwargs,
    read_session_tls,
)


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
