"""A host of an inventory, its variables merged (see ``inventory`` for what they mean)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import UsageError


class InventoryError(UsageError):
    """A bad inventory: one line, with file:line where there is one."""


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
