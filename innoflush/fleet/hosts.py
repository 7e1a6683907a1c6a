"""A host of an inventory, its variables merged (see ``inventory`` for what they mean)."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

from ..errors import UsageError

# hosts an inventory may hold, ranges expanded: a fleet of more is advised in parts (at
# the default --concurrency 8 and a 10 s --interval, 4096 hosts take about 1.5 h), and
# a typo in a range (db[0:999999]) is refused at once instead of expanding for minutes
MAX_HOSTS = 4096


class InventoryError(UsageError):
    """A bad inventory: one line, with file:line where there is one."""


def _ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


_BRACKETED = re.compile(r"^\[(?P<v6>[^\]]*)\](?::(?P<port>.*))?$")


def is_bracketed_ipv6(line: str) -> bool:
    """line starts with ``[ipv6]`` (a host, ``[::1]:3601``), not a ``[group]`` header."""
    m = re.match(r"^\[([^\]]*)\]", line)
    return m is not None and _ipv6(m.group(1))


def address_vars(name: str, where: str) -> dict[str, str]:
    """The variables a host written ``host:port`` or ``[ipv6]:port`` sets: its address
    (``ansible_host``) and ``mysql_port`` (Ansible's own INI reads such a port as the SSH
    port, which is of no use here: it is the server's); none for a bare name or address
    (``db1``, ``10.0.0.5``, ``::1``). Anything else with a colon is an error at where."""
    m = _BRACKETED.match(name)
    if m and _ipv6(m["v6"]):
        address, port = m["v6"], m["port"]
    elif ":" not in name:
        return {}
    elif _ipv6(name):
        return {}
    else:
        address, _, port = name.rpartition(":")
        if not address or ":" in address or "[" in address:
            raise InventoryError(f"{where}: not a host, host:port or [ipv6]:port: {name!r}")
    if port is None:
        return {"ansible_host": address}
    if not port.isdigit():
        raise InventoryError(f"{where}: {name!r}: the port {port!r} is not a number")
    return {"ansible_host": address, "mysql_port": port}


@dataclass
class Host:
    """One server of the inventory, its variables already merged."""

    name: str
    groups: tuple[str, ...] = ()     # most general first; neither "all" nor "ungrouped"
    vars: dict[str, str] = field(default_factory=dict)
    where: str = ""                  # file:line of its first mention

    @property
    def address(self) -> str:
        return self.vars.get("ansible_host") or self.name

    @property
    def port(self) -> int | None:
        return self._int("mysql_port")

    @property
    def socket(self) -> str | None:
        return self.vars.get("mysql_socket") or None

    @property
    def user(self) -> str | None:
        return self.vars.get("mysql_user") or None

    @property
    def login_path(self) -> str | None:
        return self.vars.get("mysql_login_path") or None

    def _int(self, key: str) -> int | None:
        v = self.vars.get(key)
        if v in (None, ""):
            return None
        try:
            n = int(v)
        except ValueError:
            raise InventoryError(f"{self.where}: host {self.name}: {key}={v!r} is not a "
                                 "number") from None
        if not 0 < n < 65536:
            raise InventoryError(f"{self.where}: host {self.name}: {key}={n} is out of range")
        return n
