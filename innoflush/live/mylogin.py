"""Reading ``~/.mylogin.cnf``, the login path file of ``mysql_config_editor``.

The file is obfuscated, not encrypted (anyone who can read it can decode it, as the MySQL
manual says); its format, as the MySQL client reads it (mysys/my_default.cc):

- 4 unused bytes, then the 20-byte key;
- then, for each line of an ordinary option file, a 4-byte little-endian length and that
  many bytes: the line (newline included) encrypted with AES-128-ECB and PKCS#7 padding,
  under the 20-byte key folded into 16 bytes (``key16[i % 16] ^= key20[i]``).

Decoded, it is an option file whose groups are login paths (``[client]``, ``[db1]``...).
The path is ``$MYSQL_TEST_LOGIN_FILE`` when set (as for the MySQL clients), else
``~/.mylogin.cnf``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import infile
from ..errors import UsageError

_UNUSED = 4
_KEY_LEN = 20
_LEN_BYTES = 4
_AES_BLOCK = 16


def login_file_path(env: Mapping[str, str] | None = None, home: str | None = None) -> Path:
    """Where the MySQL clients look for the login path file."""
    environ: Mapping[str, str] = os.environ if env is None else env
    if environ.get("MYSQL_TEST_LOGIN_FILE"):
        return Path(environ["MYSQL_TEST_LOGIN_FILE"]).expanduser()
    return Path(home or Path.home()) / ".mylogin.cnf"


def fold_key(key20: bytes) -> bytes:
    """The AES-128 key: the 20 stored bytes XOR-folded into 16."""
    key16 = bytearray(_AES_BLOCK)
    for i, b in enumerate(key20):
        key16[i % _AES_BLOCK] ^= b
    return bytes(key16)


def _aes_ecb(key16: bytes) -> Any:
    try:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    except ImportError:
        raise UsageError("reading a login path file needs the 'cryptography' package "
                         "(pip install cryptography)") from None
    return Cipher(algorithms.AES(key16), modes.ECB())


def decode_login_file(data: bytes, source: str = "login path file") -> str:
    """The option-file text hidden in a .mylogin.cnf's bytes (UsageError if malformed)."""
    if len(data) < _UNUSED + _KEY_LEN:
        raise UsageError(f"{source}: too short to be a login path file")
    cipher = _aes_ecb(fold_key(data[_UNUSED:_UNUSED + _KEY_LEN]))
    pos = _UNUSED + _KEY_LEN
    lines: list[str] = []
    while pos < len(data):
        if pos + _LEN_BYTES > len(data):
            raise UsageError(f"{source}: truncated (a line length is cut short)")
        n = int.from_bytes(data[pos:pos + _LEN_BYTES], "little")
        pos += _LEN_BYTES
        if n == 0 or n % _AES_BLOCK or pos + n > len(data):
            raise UsageError(f"{source}: not a login path file (a line of {n} bytes)")
        dec = cipher.decryptor()
        plain = dec.update(data[pos:pos + n]) + dec.finalize()
        pos += n
        pad = plain[-1]
        if not 1 <= pad <= _AES_BLOCK or plain[-pad:] != bytes([pad]) * pad:
            raise UsageError(f"{source}: not a login path file (bad padding: wrong key "
                             "or damaged file)")
        try:
            lines.append(plain[:-pad].decode("utf-8"))
        except UnicodeDecodeError:
            raise UsageError(f"{source}: not a login path file (a line is not text)") \
                from None
    return "".join(lines)


def read_login_file(path: Path) -> str:
    """The decoded text of the login path file at path."""
    data = infile.read_bytes(path, "login path file",
                             missing=f"{path}: no such login path file (mysql_config_editor "
                             "writes it)")
    return decode_login_file(data, str(path))
