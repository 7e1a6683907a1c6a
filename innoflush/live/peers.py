"""The processes at the other end of the server's connections, when they run on this host:
a load generator (sysbench, an application) whose CPU competes with the server's for the
same cores and grows with every transaction, told apart from the host's other, unrelated
processes, whose CPU does not.

The server's sockets are its ``/proc/PID/fd`` links; a Unix socket's peer comes from the
kernel's sock_diag netlink interface (``UDIAG_SHOW_PEER``: ``/proc/net/unix`` has no peer
column), a TCP connection's from ``/proc/net/tcp{,6}`` (the row whose local and remote
ends are the server's swapped); the process holding the peer socket is the one with that
inode among its own fds. Everything here is read-only and best effort: without the
privilege to read other processes' fds the answer is empty, and the caller says so.
"""

from __future__ import annotations

import os
import socket
import struct

from .procfs import fd_links

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLMSG_DONE, NLMSG_ERROR = 3, 2
UDIAG_SHOW_PEER = 0x4
UNIX_DIAG_PEER = 2


def socket_inodes(pid: int, proc: str = "/proc") -> set[int]:
    """The inodes of the sockets a process holds ({} if its fds are not readable)."""
    return {int(link[8:-1]) for link in (fd_links(pid, proc) or {}).values()
            if link.startswith("socket:[")}


def unix_peers() -> dict[int, int]:
    """{Unix socket inode: its peer's inode} for every connected Unix socket of this
    network namespace ({} when sock_diag is not available)."""
    req = struct.pack("=BBHIII2I", socket.AF_UNIX, 0, 0, 0xFFFFFFFF, 0, UDIAG_SHOW_PEER,
                      0xFFFFFFFF, 0xFFFFFFFF)
    hdr = struct.pack("=IHHII", 16 + len(req), SOCK_DIAG_BY_FAMILY,
                      NLM_F_REQUEST | NLM_F_DUMP, 1, 0)
    out: dict[int, int] = {}
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG) as s:
            s.settimeout(2.0)
            s.send(hdr + req)
            while True:
                data = s.recv(1 << 16)
                if not data:
                    return out
                off = 0
                while off + 16 <= len(data):
                    length, kind = struct.unpack_from("=IH", data, off)
                    if kind in (NLMSG_DONE, NLMSG_ERROR) or length < 16:
                        return out
                    _parse_unix_diag(data[off + 16:off + length], out)
                    off += (length + 3) & ~3
    except OSError:
        return out


def _parse_unix_diag(msg: bytes, out: dict[int, int]) -> None:
    if len(msg) < 16:
        return
    ino = struct.unpack_from("=I", msg, 4)[0]   # after family, type, state, pad
    off = 16
    while off + 4 <= len(msg):
        rlen, rtype = struct.unpack_from("=HH", msg, off)
        if rlen < 4:
            return
        if rtype == UNIX_DIAG_PEER and rlen >= 8:
            out[ino] = struct.unpack_from("=I", msg, off + 4)[0]
        off += (rlen + 3) & ~3


def tcp_rows(proc: str = "/proc") -> dict[int, tuple[str, str]]:
    """{inode: (local "addr:port", remote "addr:port")} of the TCP sockets of this network
    namespace (hex, as /proc/net/tcp writes them)."""
    out: dict[int, tuple[str, str]] = {}
    for name in ("tcp", "tcp6"):
        try:
            with open(f"{proc}/net/{name}", encoding="ascii") as f:
                next(f, None)
                for line in f:
                    a = line.split()
                    if len(a) > 9 and a[9].isdigit() and int(a[9]):
                        out[int(a[9])] = (a[1], a[2])
        except OSError:
            continue
    return out


def peer_inodes(server_inodes: set[int], unix: dict[int, int],
                tcp: dict[int, tuple[str, str]]) -> set[int]:
    """The inodes at the other end of the server's sockets (pure)."""
    peers = {unix[i] for i in server_inodes if i in unix}
    ends = {tcp[i] for i in server_inodes if i in tcp}
    wanted = {(remote, local) for local, remote in ends}
    peers |= {i for i, row in tcp.items() if row in wanted}
    return peers - server_inodes


def inode_owners(inodes: set[int], proc: str = "/proc", skip: set[int] | None = None
                 ) -> set[int]:
    """The pids holding any of these socket inodes."""
    owners: set[int] = set()
    if not inodes:
        return owners
    try:
        pids = [int(p) for p in os.listdir(proc) if p.isdigit()]
    except OSError:
        return owners
    for pid in pids:
        if skip and pid in skip:
            continue
        if socket_inodes(pid, proc) & inodes:
            owners.add(pid)
    return owners


def client_processes(server_pid: int, proc: str = "/proc") -> set[int]:
    """The pids (innoflush's own left out) at the other end of the server's connections
    on this host; empty when none is here or the fds are not readable."""
    mine = socket_inodes(server_pid, proc)
    if not mine:
        return set()
    peers = peer_inodes(mine, unix_peers(), tcp_rows(proc))
    return inode_owners(peers, proc, skip={server_pid, os.getpid()})
