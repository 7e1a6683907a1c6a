"""`innoflush advise`'s TLS against a real MariaDB with certificates made by the test
(openssl: a CA, a server certificate for 127.0.0.1, a client certificate), and its
connect timeout against listeners that are not MySQL servers."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from pathlib import Path

import pymysql
import pytest
from click.testing import CliRunner

from innoflush.commands.root import main
from innoflush.lab.server.local import ServerOptions
from innoflush.live.client_options import resolve_options
from innoflush.live.connect import connect

ROOT_ENV = {"MYSQL_PWD": "", "HOME": "/nonexistent"}
X509_USER = "advisor_x509"


def advise(port: int, *args: str, user: str = "root", host: str = "127.0.0.1"):
    return CliRunner().invoke(
        main, ["advise", "-h", host, "-P", str(port), "-u", user, "--interval", "1",
               "--no-predict", *args], env=ROOT_ENV, catch_exceptions=False)


def one_line(result) -> str:
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    return lines[0]


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def make_ca(d: Path, name: str) -> tuple[Path, Path]:
    key, crt = d / f"{name}-key.pem", d / f"{name}.pem"
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
             f"/CN={name}", "-keyout", str(key), "-out", str(crt))
    return crt, key


def make_cert(d: Path, name: str, ca: tuple[Path, Path], san: str | None) -> tuple[Path, Path]:
    """A certificate signed by ca (with this subjectAltName), and its key."""
    key, csr, crt = d / f"{name}-key.pem", d / f"{name}.csr", d / f"{name}.pem"
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}",
             "-keyout", str(key), "-out", str(csr))
    ext = d / f"{name}.ext"
    ext.write_text(f"subjectAltName = {san}\n" if san else "basicConstraints = CA:FALSE\n")
    _openssl("x509", "-req", "-in", str(csr), "-CA", str(ca[0]), "-CAkey", str(ca[1]),
             "-CAcreateserial", "-days", "2", "-extfile", str(ext), "-out", str(crt))
    return crt, key


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = tmp_path_factory.mktemp("certs")
    ca = make_ca(d, "innoflush-test-ca")
    other_ca = make_ca(d, "some-other-ca")
    server = make_cert(d, "server", ca, "IP:127.0.0.1")
    client = make_cert(d, "client", ca, None)
    return {"ca": str(ca[0]), "other_ca": str(other_ca[0]), "server_cert": str(server[0]),
            "server_key": str(server[1]), "client_cert": str(client[0]),
            "client_key": str(client[1])}


@pytest.fixture(scope="module")
def tls_server(start_server, tmp_path_factory, certs):
    opts = ServerOptions(innodb_buffer_pool_size="64M",
                         extra={"ssl_ca": certs["ca"], "ssl_cert": certs["server_cert"],
                                "ssl_key": certs["server_key"]})
    with start_server(tmp_path_factory.mktemp("tls-server"), opts) as srv:
        conn = srv.connect()
        with conn.cursor() as cur:
            # an account that must present a client certificate signed by the CA
            cur.execute(f"CREATE USER '{X509_USER}'@'127.0.0.1' REQUIRE X509")
        conn.close()
        yield srv


def session_tls(port: int, **ssl_kw) -> dict[str, str]:
    """Ssl_version and Ssl_cipher of a separate PyMySQL session of the test."""
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="", **ssl_kw)
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW SESSION STATUS WHERE Variable_name IN "
                        "('Ssl_version', 'Ssl_cipher')")
            return dict(cur.fetchall())
    finally:
        conn.close()


def connection_of(result) -> dict:
    assert result.exit_code in (0, 3), result.stderr
    return json.loads(result.stdout)["server"]["connection"]


@pytest.mark.server
def test_required_reports_the_sessions_tls(tls_server, certs):
    truth = session_tls(tls_server.port, ssl_ca=certs["ca"], ssl_verify_cert=False)
    assert truth["Ssl_cipher"], "the test's own TLS session got no cipher"
    c = connection_of(advise(tls_server.port, "--ssl-mode", "REQUIRED", "--json"))
    assert c["tls"] is True and c["ssl_mode"] == "REQUIRED"
    assert (c["tls_cipher"], c["tls_version"]) == (truth["Ssl_cipher"], truth["Ssl_version"])
    assert c["server_verified"] == "none"
    # the default, PREFERRED, takes the TLS the server offers, and says it is unverified
    r = advise(tls_server.port, "--wide")   # --wide: the connection line unwrapped
    assert r.exit_code in (0, 3), r.stderr
    assert f"connection: TLS {truth['Ssl_version']} ({truth['Ssl_cipher']})" in r.stdout
    assert "server NOT verified (--ssl-mode PREFERRED)" in r.stdout


@pytest.mark.server
def test_verify_ca(tls_server, certs):
    c = connection_of(advise(tls_server.port, "--ssl-mode", "verify_ca", "--ssl-ca",
                             certs["ca"], "--json"))
    assert c["tls"] is True and c["server_verified"] == "ca" and c["ssl_mode"] == "VERIFY_CA"
    r = advise(tls_server.port, "--ssl-mode", "VERIFY_CA", "--ssl-ca", certs["other_ca"])
    assert r.exit_code == 2
    line = one_line(r)
    assert "TLS handshake with 127.0.0.1" in line and "certificate verify failed" in line


@pytest.mark.server
def test_verify_identity(tls_server, certs):
    c = connection_of(advise(tls_server.port, "--ssl-mode", "VERIFY_IDENTITY", "--ssl-ca",
                             certs["ca"], "--json"))
    assert c["tls"] is True and c["server_verified"] == "identity"
    # the same server by another name: the certificate is for 127.0.0.1 only
    r = advise(tls_server.port, "--ssl-mode", "VERIFY_IDENTITY", "--ssl-ca", certs["ca"],
               host="localhost")
    assert r.exit_code == 2
    line = one_line(r)
    assert "TLS handshake with localhost" in line and "mismatch" in line


@pytest.mark.server
def test_disabled_and_client_certificate(tls_server, certs):
    c = connection_of(advise(tls_server.port, "--ssl-mode", "DISABLED", "--json"))
    assert c["tls"] is False and c["tls_cipher"] is None and c["server_verified"] == "none"
    # an account that requires a client certificate: presented under VERIFY_CA, and
    # under PREFERRED (TLS offered, the certificate goes with it)
    for mode in ("VERIFY_CA", "PREFERRED"):
        c = connection_of(advise(tls_server.port, "--ssl-mode", mode, "--ssl-ca", certs["ca"],
                                 "--ssl-cert", certs["client_cert"], "--ssl-key",
                                 certs["client_key"], "--json", user=X509_USER))
        assert c["tls"] is True and c["user"] == X509_USER
    r = advise(tls_server.port, "--ssl-mode", "REQUIRED", user=X509_USER)
    assert r.exit_code == 2 and "access denied" in one_line(r)


@pytest.mark.server
def test_plain_server_tells_the_truth(mariadb_server):
    """The suite's server has no certificate options: whatever it offers, the report
    says what the session got (Debian's MariaDB 10.11 does not generate certificates)."""
    conn = mariadb_server.connect()
    with conn.cursor() as cur:
        cur.execute("SHOW GLOBAL VARIABLES LIKE 'have_ssl'")
        have_ssl = cur.fetchall()[0][1]
    conn.close()
    c = connection_of(advise(mariadb_server.port, "--json"))
    assert c["ssl_mode"] == "PREFERRED"
    assert c["tls"] is (have_ssl == "YES")
    r = advise(mariadb_server.port, "--ssl-mode", "REQUIRED")
    if have_ssl == "YES":
        assert r.exit_code in (0, 3), r.stderr
    else:
        assert r.exit_code == 2
        assert "does not offer TLS, and --ssl-mode REQUIRED requires it" in one_line(r)


@pytest.mark.server
def test_read_timeout_is_restored_after_connecting(mariadb_server):
    """The connect timeout bounds the handshake, not the session's later reads."""
    opts = resolve_options(host="127.0.0.1", port=mariadb_server.port, user="root",
                           connect_timeout=1, env={"MYSQL_PWD": ""}, home="/nonexistent")
    session = connect(opts)
    try:
        # bypasses the read-only guard on purpose: a read that outlasts the connect timeout
        with session._conn.cursor() as cur:
            cur.execute("SELECT SLEEP(1.5)")
            assert cur.fetchall()[0][0] == 0
        assert session.tls is not None and session.tls["ssl_mode"] == "PREFERRED"
    finally:
        session.close()


# ---- listeners that are not MySQL servers ------------------------------------------

class Listener:
    """A TCP listener on 127.0.0.1 that accepts and then says nothing, or `reply`."""

    def __init__(self, reply: bytes | None = None):
        self.reply = reply
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.sock.settimeout(0.05)   # closing a socket does not wake accept(): poll a flag
        self.stop = threading.Event()
        self.port = self.sock.getsockname()[1]
        self.conns: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                c, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.conns.append(c)
            if self.reply is not None:
                c.sendall(self.reply)

    def __enter__(self) -> Listener:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        self.sock.close()
        for c in self.conns:
            c.close()


@pytest.mark.parametrize("reply, why", [
    (None, "no MySQL greeting within 0.6 s"),
    (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
     "it answered with something other than a MySQL greeting"),
])
def test_not_a_mysql_server(reply, why):
    with Listener(reply) as lst:
        t0 = time.monotonic()
        r = CliRunner().invoke(main, ["advise", "-h", "127.0.0.1", "-P", str(lst.port),
                                      "-u", "root", "--connect-timeout", "0.6"],
                               env=ROOT_ENV, catch_exceptions=False)
        elapsed = time.monotonic() - t0
    assert r.exit_code == 2
    line = one_line(r)
    assert line == f"innoflush: error: not a MySQL server at 127.0.0.1:{lst.port} ({why})"
    assert elapsed < 0.6 + 1.0, elapsed
    if reply is None:
        assert elapsed >= 0.55, elapsed   # it did wait for the greeting, as long as asked


def mysql_greeting(tls: bool) -> bytes:
    """A MySQL protocol-10 greeting packet, as a server sends it first (offering TLS or
    not); what a listener that then goes silent sends."""
    caps = 1 | 512 | 32768 | (1 << 19)          # LONG_PASSWORD, PROTOCOL_41, SECURE_CONN.,
    caps |= 2048 if tls else 0                  # PLUGIN_AUTH; SSL
    payload = (bytes([10]) + b"5.5.5-10.11.0-MariaDB-fake\0" + (7).to_bytes(4, "little")
               + b"abcdefgh" + b"\0" + (caps & 0xFFFF).to_bytes(2, "little") + bytes([45])
               + (2).to_bytes(2, "little") + (caps >> 16).to_bytes(2, "little")
               + bytes([21]) + bytes(10) + b"ijklmnopqrst" + b"\0"
               + b"mysql_native_password\0")
    return len(payload).to_bytes(3, "little") + b"\0" + payload


@pytest.mark.parametrize("tls", [True, False])
def test_the_handshake_is_bounded_by_the_connect_timeout(tls):
    """A greeting, then silence: in the TLS handshake (the server offered TLS) or in the
    login (it did not) — either way no longer than --connect-timeout."""
    with Listener(mysql_greeting(tls)) as lst:
        t0 = time.monotonic()
        r = CliRunner().invoke(main, ["advise", "-h", "127.0.0.1", "-P", str(lst.port),
                                      "-u", "root", "--connect-timeout", "0.6"],
                               env=ROOT_ENV, catch_exceptions=False)
        elapsed = time.monotonic() - t0
    assert r.exit_code == 2
    assert one_line(r) == (f"innoflush: error: the server at 127.0.0.1:{lst.port} did not "
                           "finish the login handshake within 0.6 s")
    assert 0.55 <= elapsed < 0.6 + 1.0, elapsed


@pytest.mark.server
def test_login_path_end_to_end(mariadb_server, server_accounts, tmp_path):
    """A login path file gives user, host, port and password; the password is not shown."""
    from tests.helpers.login_files import encode_login_file

    user, pw = server_accounts["password"]
    path = tmp_path / "login.cnf"
    path.write_bytes(encode_login_file(
        f'[client]\nuser = "nobody"\n[db1]\nuser = "{user}"\npassword = "{pw}"\n'
        f'host = "127.0.0.1"\nport = {mariadb_server.port}\n'))
    r = CliRunner().invoke(main, ["advise", "--login-path", "db1", "--interval", "1",
                                  "--no-predict", "--json"],
                           env={"HOME": "/nonexistent", "MYSQL_TEST_LOGIN_FILE": str(path)},
                           catch_exceptions=False)
    c = connection_of(r)
    assert c["user"] == user and c["target"] == f"127.0.0.1:{mariadb_server.port}"
    assert c["password_source"] == f"login path db1 ({path})"
    assert pw not in r.stdout + r.stderr


@pytest.mark.parametrize("value", ["0", "-1"])
def test_connect_timeout_must_be_positive(value):
    r = CliRunner().invoke(main, ["advise", "-h", "127.0.0.1", "--connect-timeout", value],
                           env=ROOT_ENV, catch_exceptions=False)
    assert r.exit_code == 2
    assert "--connect-timeout must be more than 0 seconds" in one_line(r)
