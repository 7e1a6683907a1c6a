"""An inventory of servers to advise: the hosts, their address and their MySQL options.

Three formats, told apart by the file name, else by the text (``load_inventory``):

- an Ansible INI inventory (``.ini``, ``.cfg``, or text with ``[group]`` sections or
  ``key=value`` host variables) and an Ansible YAML inventory (``.yml``, ``.yaml``, or
  text whose lines end with ``:`` as YAML mappings do): see ``ansible``;
- a plain list: one ``host``, ``host:port`` or ``[ipv6]:port`` a line, ``#`` comments.

A host's variables (the ones read here; any other is kept but unused):

- ``ansible_host``: the address to connect to (default: the inventory name);
- ``mysql_port``, ``mysql_socket``, ``mysql_user``: as ``-P``, ``-S``, ``-u``;
- ``mysql_login_path``: as ``--login-path`` (a group of ``~/.mylogin.cnf``).

Group variables are inherited: ``all``'s first, then each group's from the most general
to the most specific (a child group's over its parent's; between groups of the same
depth, by name, as Ansible does), then the host's own, which win. Passwords never come
from an inventory (it is usually kept in version control): they come from the option
files (``fleet.run``: ``[client_<group>]``, ``[client_<host>]``), the login path,
MYSQL_PWD or the prompt.
"""

from __future__ import annotations

import re
from pathlib import Path

from .. import infile
from . import ansible
from .hosts import MAX_HOSTS, Host, InventoryError

__all__ = ["Host", "InventoryError", "inventory_format", "load_inventory", "parse_inventory"]


def load_inventory(path: str | Path) -> list[Host]:
    """The hosts of the inventory at path, in the order they first appear."""
    p = Path(path).expanduser()
    text = infile.read_text(p, "inventory file", error=InventoryError)
    try:
        hosts = parse_inventory(text, str(p), inventory_format(p.name, text))
    except RecursionError:   # YAML's parser recurses once a level: [[[[... or indentation
        raise InventoryError(f"{p}: nested too deeply to be an inventory") from None
    if not hosts:
        raise InventoryError(f"{p}: the inventory has no hosts")
    for h in hosts:   # a bad port fails now, before any host is advised
        h.port  # noqa: B018
    return hosts


def parse_inventory(text: str, source: str, fmt: str) -> list[Host]:
    """fmt: "ini", "yaml" or "list" (see inventory_format)."""
    if fmt == "yaml":
        return ansible.parse_yaml(text, source)
    if fmt == "ini":
        return ansible.parse_ini(text, source)
    return parse_list(text, source)


_SECTION = re.compile(r"^\s*\[[^\]\s:]+(:\w+)?\]\s*$")
_YAML_KEY = re.compile(r"^\s*[^\s#][^#]*:\s*$")


def inventory_format(name: str, text: str) -> str:
    """"yaml", "ini" or "list": by the file's extension, else by its text."""
    suffix = Path(name).suffix.lower()
    if suffix in (".yml", ".yaml"):
        return "yaml"
    if suffix in (".ini", ".cfg"):
        return "ini"
    lines = [ln for ln in text.splitlines() if ln.strip() and ln.lstrip()[0] not in "#;"]
    if any(ln.strip() == "---" or _YAML_KEY.match(ln) for ln in lines):
        return "yaml"
    if any(_SECTION.match(ln) or "=" in ln for ln in lines):
        return "ini"
    return "list"


_HOST_PORT = re.compile(r"^(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[^\s:\[\]]+))"
                        r"(?::(?P<port>\d+))?$")


def parse_list(text: str, source: str) -> list[Host]:
    """A plain list: ``host``, ``host:port`` or ``[ipv6]:port`` a line; ``#`` starts a
    comment. A name listed twice is one host."""
    hosts: dict[str, Host] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = _HOST_PORT.match(line)
        if not m:
            raise InventoryError(f"{source}:{n}: not a host or host:port: {line!r}")
        vars_ = {"ansible_host": m["v6"] or m["host"]}
        if m["port"]:
            vars_["mysql_port"] = m["port"]
        if line not in hosts and len(hosts) >= MAX_HOSTS:
            raise InventoryError(f"{source}:{n}: more than {MAX_HOSTS} hosts: advise the "
                                 "fleet in parts (an inventory each)")
        hosts.setdefault(line, Host(line, (), vars_, f"{source}:{n}"))
    return list(hosts.values())
