"""The mysql client's connection habits, without a server: the login path file
(~/.mylogin.cnf), the precedence of the option sources, --ssl-mode's mapping onto
PyMySQL, and the report's TLS line."""

from __future__ import annotations

import ssl

import pytest

from innoflush.errors import UsageError
from innoflush.live.client_options import ConnectionOptions, resolve_options
from innoflush.live.mylogin import decode_login_file, fold_key, login_file_path
from innoflush.live.tls import normalise_ssl_mode, pymysql_tls_kwargs, tls_context
from innoflush.output.advise_text import _connection_line
from tests.helpers.login_files import encode_login_file

SECRET = "l0gin-path-pw-never-shown"


def _openssl_login_file(text: str, key20: bytes) -> bytes:
    """The file as the documented layout says, its AES done by the openssl command (an
    implementation other than the one the decoder uses): 4 unused bytes, the 20-byte key,
    then per line a little-endian length and the line under AES-128-ECB, PKCS#7 padded."""
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.fail("the openssl command is needed (Debian: apt-get install openssl)")
    out = bytearray(b"\0\0\0\0" + key20)
    for line in text.splitlines(keepends=True):
        ct = subprocess.run(["openssl", "enc", "-aes-128-ecb", "-nosalt",
                             "-K", fold_key(key20).hex()], input=line.encode(),
                            capture_output=True, check=True).stdout
        out += len(ct).to_bytes(4, "little") + ct
    return bytes(out)


@pytest.mark.parametrize("text", ["[client]\n", "[0123456789abc]\n",
                                  "[db1]\nuser = app\npassword = p\u00e4ss word\n"])
def test_decodes_a_file_encrypted_by_openssl(text):
    # "[0123456789abc]\n" is 16 bytes: a whole block of padding follows it
    key20 = bytes((7 * i + 3) % 256 for i in range(20))
    assert decode_login_file(_openssl_login_file(text, key20)) == text


def test_fold_key():
    key20 = bytes(range(1, 21))
    k = fold_key(key20)
    assert len(k) == 16
    assert k[0] == 1 ^ 17 and k[3] == 4 ^ 20 and k[4] == 5 and k[15] == 16


def test_round_trip_and_damage():
    text = f'[client]\nuser = "app"\n[db1]\nhost = db1.example\npassword = {SECRET}\n'
    data = encode_login_file(text)
    assert decode_login_file(data) == text
    with pytest.raises(UsageError, match="too short"):
        decode_login_file(data[:10])
    with pytest.raises(UsageError, match="truncated|a line of"):
        decode_login_file(data[:-5])
    # another key: the padding does not check out (or the text is not text)
    bad = data[:4] + bytes(b ^ 0x5A for b in data[4:24]) + data[24:]
    with pytest.raises(UsageError) as info:
        decode_login_file(bad)
    assert SECRET not in str(info.value)


def test_login_file_path(tmp_path):
    assert login_file_path({}, str(tmp_path)) == tmp_path / ".mylogin.cnf"
    other = tmp_path / "elsewhere.cnf"
    assert login_file_path({"MYSQL_TEST_LOGIN_FILE": str(other)}, str(tmp_path)) == other


def _write(path, text: str) -> str:
    path.write_bytes(encode_login_file(text))
    return str(path)


def test_precedence_option_file_then_login_path_then_command_line(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".my.cnf").write_text("[client]\nuser=cnfuser\nhost=cnfhost\nport=3310\n"
                                  "password=cnf-pw\nssl-mode=disabled\n")
    _write(home / ".mylogin.cnf", "[client]\nuser = loginclient\n"
                                  f"[db1]\nhost = db1.example\npassword = {SECRET}\n")
    env: dict[str, str] = {"MYSQL_PWD": "env-pw"}
    # the login path file's [client] is read without --login-path, over ~/.my.cnf
    o = resolve_options(env=env, home=str(home))
    assert (o.user, o.host, o.port, o.password) == ("loginclient", "cnfhost", 3310, "cnf-pw")
    assert o.password_source.startswith("option file") and o.ssl_mode == "DISABLED"
    # its named group over its [client] and over the option file
    o = resolve_options(login_path="db1", env=env, home=str(home))
    assert (o.user, o.host, o.port, o.password) == ("loginclient", "db1.example", 3310,
                                                     SECRET)
    assert o.password_source == f"login path db1 ({home / '.mylogin.cnf'})"
    assert SECRET not in repr(o) and SECRET not in str(o.public())
    # the command line over everything; the prompt over every password
    o = resolve_options(host="clihost", user="cliuser", ssl_mode="required",
                        login_path="db1", ask_password=True, prompt=lambda t: "typed",
                        env=env, home=str(home))
    assert (o.user, o.host, o.password, o.password_source, o.ssl_mode) == (
        "cliuser", "clihost", "typed", "prompt", "REQUIRED")
    # MYSQL_TEST_LOGIN_FILE moves the file; an unknown group is named, not ignored
    moved = _write(tmp_path / "moved.cnf", "[db2]\nuser = moved\n")
    o = resolve_options(login_path="db2", env={"MYSQL_TEST_LOGIN_FILE": moved},
                        home=str(tmp_path / "nohome"))
    assert o.user == "moved"
    with pytest.raises(UsageError, match="no such login path in .*it has: db2"):
        resolve_options(login_path="db9", env={"MYSQL_TEST_LOGIN_FILE": moved},
                        home=str(tmp_path / "nohome"))
    # --defaults-file does not hide the login path file (as the clients)
    f = tmp_path / "d.cnf"
    f.write_text("[client]\nuser=dfile\nhost=dhost\n")
    o = resolve_options(defaults_file=str(f), login_path="db1", env={}, home=str(home))
    assert (o.user, o.host, o.password) == ("loginclient", "db1.example", SECRET)


@pytest.mark.parametrize("value, mode", [("preferred", "PREFERRED"), ("Verify_CA", "VERIFY_CA"),
                                         ("verify-identity", "VERIFY_IDENTITY"),
                                         (" DISABLED ", "DISABLED")])
def test_ssl_mode_spellings(value, mode):
    assert normalise_ssl_mode(value) == mode


def test_ssl_mode_from_the_option_file_is_checked(tmp_path):
    f = tmp_path / "c.cnf"
    f.write_text("[client]\nssl-mode = sometimes\n")
    with pytest.raises(UsageError, match="ssl-mode 'sometimes' is not one of"):
        resolve_options(defaults_file=str(f), env={}, home=str(tmp_path))


def test_ssl_mode_mapping(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("")   # not loaded for the modes that do not verify
    assert pymysql_tls_kwargs("DISABLED") == {"ssl_disabled": True}
    # PREFERRED: PyMySQL's own preferred mode (TLS if offered, unverified)
    assert pymysql_tls_kwargs("PREFERRED") == {}
    ctx = pymysql_tls_kwargs("REQUIRED", ca=str(ca))["ssl"]
    assert isinstance(ctx, ssl.SSLContext)
    assert ctx.verify_mode == ssl.CERT_NONE and not ctx.check_hostname
    with pytest.raises(UsageError, match="needs --ssl-ca"):
        tls_context("VERIFY_CA")


def test_ssl_mode_mapping_verifying(tmp_path):
    import subprocess

    key, crt = tmp_path / "ca.key", tmp_path / "ca.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=test CA", "-keyout", str(key), "-out", str(crt)],
                   check=True, capture_output=True)
    ctx = tls_context("VERIFY_CA", ca=str(crt))
    assert ctx.verify_mode == ssl.CERT_REQUIRED and not ctx.check_hostname
    assert len(ctx.get_ca_certs()) == 1
    ctx = tls_context("VERIFY_IDENTITY", ca=str(crt))
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname


def test_tls_files_checked_before_connecting(tmp_path):
    cert = tmp_path / "c.pem"
    cert.write_text("x")
    with pytest.raises(UsageError, match="--ssl-key needs --ssl-cert"):
        resolve_options(ssl_key=str(cert), env={}, home=str(tmp_path))
    with pytest.raises(UsageError, match="more than 0"):
        resolve_options(connect_timeout=0, env={}, home=str(tmp_path))


def test_unloadable_client_certificate_is_one_line(tmp_path):
    from innoflush.live.connect import ConnectError, connect

    cert = tmp_path / "c.pem"
    cert.write_text("not a certificate")
    # port 9 on 127.0.0.1: never reached, the files fail first
    o = resolve_options(host="127.0.0.1", port=9, ssl_mode="REQUIRED", ssl_cert=str(cert),
                        env={"MYSQL_PWD": SECRET}, home=str(tmp_path))
    with pytest.raises(ConnectError) as info:
        connect(o)
    msg = str(info.value)
    assert msg.startswith("cannot use the TLS files") and "\n" not in msg
    assert SECRET not in msg and info.value.exit_code == 2


def test_connection_line():
    o = ConnectionOptions(host="h", ssl_mode="VERIFY_IDENTITY")
    assert "TLS unknown" in _connection_line(o.public())
    line = _connection_line(o.public({"tls": True, "tls_version": "TLSv1.3",
                                      "tls_cipher": "TLS_AES_256_GCM_SHA384",
                                      "server_verified": "identity",
                                      "ssl_mode": "VERIFY_IDENTITY"}))
    assert "TLSv1.3" in line and "host name verified" in line
    line = _connection_line(o.public({"tls": True, "tls_version": "TLSv1.3",
                                      "tls_cipher": "X", "server_verified": "none",
                                      "ssl_mode": "PREFERRED"}))
    assert "NOT verified" in line and "PREFERRED" in line
    assert "no TLS" in _connection_line(o.public({"tls": False, "tls_version": None,
                                                  "tls_cipher": None,
                                                  "server_verified": "none",
                                                  "ssl_mode": "DISABLED"}))
