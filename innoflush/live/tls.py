"""TLS as the mysql client's ``--ssl-mode`` means it, mapped onto PyMySQL, and the truth of
the session read back from the server.

====================  ============================  =====================================
``--ssl-mode``        TLS                           the server's certificate
====================  ============================  =====================================
``DISABLED``          never                         -
``PREFERRED``         if the server offers it       not checked
``REQUIRED``          or fail                       not checked
``VERIFY_CA``         or fail                       signed by ``--ssl-ca`` (needs it)
``VERIFY_IDENTITY``   or fail                       as VERIFY_CA, and issued to the host
====================  ============================  =====================================

PyMySQL's own keyword arguments cannot say all of this (any ``ssl_*`` file makes TLS
required, and REQUIRED without a file falls back to "preferred"), so the modes that need
TLS get an ``ssl.SSLContext`` of ours, and PREFERRED keeps PyMySQL's own preferred mode
(TLS if offered, no verification), with our context when a client certificate is given.

What the report says is not what was asked but what the session got: ``Ssl_version`` and
``Ssl_cipher`` from ``SHOW SESSION STATUS`` (empty without TLS).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import OptionError, UsageError

# ssl where a context is made: `innoflush advise --help` does without it
if TYPE_CHECKING:
    import ssl

SSL_MODES = ("DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY")
DEFAULT_SSL_MODE = "PREFERRED"
# what a verified session proved about the server, by mode
_VERIFIED = {"VERIFY_CA": "ca", "VERIFY_IDENTITY": "identity"}


def normalise_ssl_mode(value: str, source: str = "--ssl-mode") -> str:
    """The mode's canonical spelling (case-insensitive, '-' or '_'); UsageError if unknown."""
    mode = value.strip().upper().replace("-", "_")
    if mode not in SSL_MODES:
        # an option file's value is not the command line's: no "(see --help)" for it
        error = OptionError if source == "--ssl-mode" else UsageError
        raise error(f"{source} {value!r} is not one of {', '.join(SSL_MODES)}")
    return mode


def tls_context(mode: str, ca: str | None = None, cert: str | None = None,
                key: str | None = None) -> ssl.SSLContext:
    """The SSLContext for a mode that uses TLS (not DISABLED)."""
    import ssl

    if mode in _VERIFIED:
        if not ca:
            raise UsageError(f"--ssl-mode {mode} needs --ssl-ca (the CA that signed the "
                             "server's certificate)")
        ctx = ssl.create_default_context(cafile=str(Path(ca).expanduser()))
        ctx.check_hostname = mode == "VERIFY_IDENTITY"
        ctx.verify_mode = ssl.CERT_REQUIRED
    else:
        # PREFERRED / REQUIRED: encrypted but unauthenticated, as the mysql client (which
        # also ignores --ssl-ca in these modes)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    # Python 3.13 turns this on by default; the self-signed certificates MySQL generates
    # for itself fail it (PyMySQL clears it for the same reason)
    ctx.verify_flags &= ~ssl.VERIFY_X509_STRICT
    if cert:
        ctx.load_cert_chain(str(Path(cert).expanduser()),
                            keyfile=str(Path(key).expanduser()) if key else None)
    return ctx


def pymysql_tls_kwargs(mode: str, ca: str | None = None, cert: str | None = None,
                       key: str | None = None) -> dict[str, Any]:
    """Keyword arguments for pymysql.connect giving the mode (see module doc); PREFERRED
    with a client certificate also needs apply_preferred_context() after construction."""
    if mode == "DISABLED":
        return {"ssl_disabled": True}
    if mode == "PREFERRED":
        return {}
    return {"ssl": tls_context(mode, ca, cert, key)}


def apply_preferred_context(conn: Any, mode: str, ca: str | None, cert: str | None,
                            key: str | None) -> None:
    """PREFERRED with a client certificate: PyMySQL's preferred mode, our context (so the
    certificate is presented when the server offers TLS, and TLS stays optional)."""
    if mode != "PREFERRED" or not cert:
        return
    if getattr(conn, "ctx", None) is not None and getattr(conn, "ssl", False):
        conn.ctx = tls_context(mode, ca, cert, key)


def read_session_tls(session: Any, mode: str) -> dict[str, Any]:
    """What the server says of this session's TLS, for the report's connection block."""
    status = {name: value for name, value in session.query(
        "SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')")}
    cipher = status.get("Ssl_cipher") or ""
    version = status.get("Ssl_version") or ""
    on = bool(cipher)
    return {"tls": on, "tls_version": version or None, "tls_cipher": cipher or None,
            "server_verified": _VERIFIED.get(mode, "none") if on else "none",
            "ssl_mode": mode}
