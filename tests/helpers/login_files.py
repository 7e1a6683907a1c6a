"""The tests' own encoder of ~/.mylogin.cnf, the format as mysql_config_editor writes it."""

from __future__ import annotations

import os

from innoflush.live.mylogin import fold_key


def encode_login_file(text: str, key20: bytes | None = None) -> bytes:
    """The test's own encoder, the format as mysql_config_editor writes it."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    key20 = key20 if key20 is not None else os.urandom(20)
    out = bytearray(b"\0\0\0\0" + key20)
    for line in text.splitlines(keepends=True):
        raw = line.encode()
        pad = 16 - len(raw) % 16
        enc = Cipher(algorithms.AES(fold_key(key20)), modes.ECB()).encryptor()
        ct = enc.update(raw + bytes([pad]) * pad) + enc.finalize()
        out += len(ct).to_bytes(4, "little") + ct
    return bytes(out)

