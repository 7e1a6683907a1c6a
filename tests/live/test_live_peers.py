"""The processes at the other end of a server's connections: real sockets, real child
processes (this test process plays the server), and the pure pairing of TCP ends."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from innoflush.live import peers
from innoflush.live.procfs import processes_cpu

CLIENT = """
import socket, sys, time
kind, where = sys.argv[1], sys.argv[2]
if kind == "unix":
    s = socket.socket(socket.AF_UNIX); s.connect(where)
else:
    s = socket.create_connection(("127.0.0.1", int(where)))
print("connected", flush=True)
while time.process_time() < 0.3:   # CPU time to be counted (not wall time: a loaded host)
    pass
print("busy done", flush=True)
time.sleep(30)
"""


def _client(kind: str, where: str) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", CLIENT, kind, where], stdout=subprocess.PIPE,
                         text=True)
    assert p.stdout is not None and p.stdout.readline().strip() == "connected"
    return p


def test_a_unix_socket_client_is_found(tmp_path):
    path = str(tmp_path / "server.sock")
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(4)
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    client = _client("unix", path)
    try:
        conn, _ = srv.accept()
        found = peers.client_processes(os.getpid())
        assert client.pid in found
        assert bystander.pid not in found and os.getpid() not in found
        # its CPU is readable: the busy loop it ran before settling
        assert client.stdout is not None and client.stdout.readline().strip() == "busy done"
        assert processes_cpu()[client.pid] >= 0.25
        conn.close()
    finally:
        for p in (client, bystander):
            p.kill()
            p.wait()
        srv.close()


def test_a_tcp_client_is_found():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    client = _client("tcp", str(srv.getsockname()[1]))
    try:
        conn, _ = srv.accept()
        assert client.pid in peers.client_processes(os.getpid())
        conn.close()
    finally:
        client.kill()
        client.wait()
        srv.close()


def test_tcp_ends_pair_by_swapped_addresses():
    tcp = {10: ("0100007F:0CEA", "0100007F:D431"),    # the server's end
           11: ("0100007F:D431", "0100007F:0CEA"),    # the client's
           12: ("0100007F:D432", "0100007F:0CEA"),    # another client, not this socket's
           13: ("0100007F:0CEA", "00000000:0000")}    # listening
    assert peers.peer_inodes({10, 13}, {}, tcp) == {11}
    assert peers.peer_inodes({5}, {5: 6, 7: 8}, {}) == {6}
    assert peers.peer_inodes(set(), {5: 6}, tcp) == set()


def test_the_redo_logs_open_flags(tmp_path):
    """/proc/PID/fdinfo as the kernel writes it: O_DIRECT (0o40000 on x86-64) or not."""
    import platform

    from innoflush.live.procfs import redo_o_direct
    direct = "0o200000" if platform.machine() in ("aarch64", "arm64") else "0o40000"
    for flags, want in ((0o2100002 | int(direct, 8), True), (0o2100002, False)):
        root = tmp_path / str(want)
        (root / "7" / "fd").mkdir(parents=True)
        (root / "7" / "fdinfo").mkdir()
        (root / "7" / "fd" / "3").symlink_to("/data/ibdata1")
        (root / "7" / "fd" / "11").symlink_to("/data/ib_logfile0")
        (root / "7" / "fdinfo" / "11").write_text(f"pos:\t0\nflags:\t{flags:o}\nmnt_id:\t27\n")
        assert redo_o_direct(7, str(root)) is want
    assert redo_o_direct(8, str(tmp_path / "True")) is None      # no such process
