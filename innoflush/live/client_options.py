"""The mysql client's options, as the server to advise on is named: the command line,
the login path file, the option files and the defaults, resolved into one
ConnectionOptions (the precedence is in innoflush/live/connect.py's doc). The password is
held with ``repr=False`` and ``scrub()`` removes it from any text that might echo it."""

from __future__ import annotations

import configparser
import getpass
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import infile
from ..errors import OptionError, UsageError
from .mylogin import login_file_path, read_login_file
from .tls import DEFAULT_SSL_MODE, normalise_ssl_mode

DEFAULT_PORT = 3306
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "")
# Where the MySQL/MariaDB clients look for the server's socket when the host is localhost.
DEFAULT_SOCKETS = ("/run/mysqld/mysqld.sock", "/var/run/mysqld/mysqld.sock",
                   "/var/lib/mysql/mysql.sock", "/tmp/mysql.sock")
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
