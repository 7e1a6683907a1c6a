"""Processes by command line: a server or client left running is a leak the tests fail on."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from innoflush.lab.server.local import is_listening

SERVER_NAMES = ("mariadbd", "mysqld")



def processes_mentioning(text: str) -> list[tuple[int, str]]:
    """(pid, command line) of every process whose command line contains text."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if text in cmd:
            out.append((int(d.name), cmd))
    return out



def servers_under(path: Path) -> list[tuple[int, str]]:
    return [(p, c) for p, c in processes_mentioning(str(path))
            if any(n in c for n in SERVER_NAMES)]



def assert_no_leak(path: Path, runs: list[dict] | None = None) -> None:
    deadline = time.monotonic() + 10
    while servers_under(path) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not servers_under(path), f"server left running: {servers_under(path)}"
    for r in runs or []:
        pid, port = r["server_process"]["pid"], r["server_process"]["port"]
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
        assert not is_listening(port), f"port {port} still listens"
    assert not [p for p in path.iterdir() if p.name.startswith("innoflush-lab-")], \
        "work directory left behind"

