"""Ansible inventories, INI and YAML, read into hosts with their merged variables.

What is read (the rest of Ansible's inventory language — plugins, scripts, ``host_vars/``
directories, vaulted values — is not):

- INI: host lines ``name [key=value ...]`` (values may be quoted), ungrouped before the
  first section; ``[group]``, ``[group:vars]`` (``key=value`` lines), ``[group:children]``
  (group names); ranges in host names, ``db[01:10]`` (the width of the first bound kept)
  and ``node[a:f]``, with an optional stride ``[1:9:2]``. ``#`` and ``;`` start comments.
  A name ``host:port`` or ``[ipv6]:port`` (both formats) gives the host its address and
  ``mysql_port`` (``hosts.address_vars``); at most ``MAX_HOSTS`` hosts, ranges expanded.
- YAML: ``all:`` (and any other top-level group) with ``hosts:`` (name -> variables or
  nothing), ``vars:``, ``children:`` (name -> the same structure), ranges in host names
  as in INI.

The variables merge as ``inventory`` says: ``all``, then groups by depth and name, then
the host's own.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from .hosts import MAX_HOSTS, Host, InventoryError, address_vars, is_bracketed_ipv6


@dataclass
class _Group:
    vars: dict[str, str] = field(default_factory=dict)
    children: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)


@dataclass
class _Tree:
    """What a file says, before merging: groups, each host's own variables and where."""

    source: str
    groups: dict[str, _Group] = field(default_factory=dict)
    host_vars: dict[str, dict[str, str]] = field(default_factory=dict)
    where: dict[str, str] = field(default_factory=dict)
    walked: set[tuple[str, int]] = field(default_factory=set)   # (group, id(YAML body))

    def group(self, name: str) -> _Group:
        return self.groups.setdefault(name, _Group())

    def add_host(self, name: str, group: str, vars_: dict[str, str], where: str) -> None:
        if name not in self.host_vars and len(self.host_vars) >= MAX_HOSTS:
            raise InventoryError(f"{where}: more than {MAX_HOSTS} hosts: advise the fleet "
                                 "in parts (an inventory each)")
        # the name's own host:port first, the line's variables over it
        self.host_vars.setdefault(name, address_vars(name, where)).update(vars_)
        self.where.setdefault(name, where)
        g = self.group(group)
        if name not in g.hosts:
            g.hosts.append(name)


_RANGE = re.compile(r"\[([0-9]+|[a-zA-Z]):([0-9]+|[a-zA-Z])(?::([0-9]+))?\]")


def _range_size(pattern: str) -> int:
    """How many names pattern's ranges make, without making them."""
    n = 1
    for m in _RANGE.finditer(pattern):
        lo, hi, stride = m.group(1), m.group(2), max(1, int(m.group(3) or 1))
        if lo.isdigit() == hi.isdigit():
            ends = (int(lo), int(hi)) if lo.isdigit() else (ord(lo), ord(hi))
            n *= max(1, len(range(ends[0], ends[1] + 1, stride)))
    return n


def expand_range(pattern: str, where: str) -> list[str]:
    """``db[01:03]`` -> db01, db02, db03 (Ansible's host ranges; several ranges multiply);
    at most MAX_HOSTS names."""
    size = _range_size(pattern)
    if size > MAX_HOSTS:
        raise InventoryError(f"{where}: {pattern!r} makes {size:,} hosts; an inventory "
                             f"holds at most {MAX_HOSTS}")
    m = _RANGE.search(pattern)
    if not m:
        return [pattern]
    lo, hi, stride = m.group(1), m.group(2), int(m.group(3) or 1)
    if stride < 1:
        raise InventoryError(f"{where}: range stride must be at least 1 in {pattern!r}")
    if lo.isdigit() != hi.isdigit():
        raise InventoryError(f"{where}: a range mixes a number and a letter: {pattern!r}")
    if lo.isdigit():
        width = len(lo) if lo.startswith("0") and len(lo) > 1 else 0
        items = [str(i).zfill(width) for i in range(int(lo), int(hi) + 1, stride)]
    else:
        items = [chr(c) for c in range(ord(lo), ord(hi) + 1, stride)]
    if not items:
        raise InventoryError(f"{where}: empty range in {pattern!r} (the start is after "
                             "the end)")
    head, tail = pattern[:m.start()], pattern[m.end():]
    return [h for item in items for h in expand_range(head + item + tail, where)]


def _key_values(tokens: list[str], where: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for tok in tokens:
        key, eq, value = tok.partition("=")
        if not eq or not key:
            raise InventoryError(f"{where}: expected key=value, got {tok!r}")
        out[key] = value
    return out


def _split(line: str, where: str) -> list[str]:
    try:
        return shlex.split(line, comments=True)
    except ValueError as exc:   # an unclosed quote
        raise InventoryError(f"{where}: {exc}") from None


_SECTION = re.compile(r"^\[([^\]:\s]+)(?::(\w+))?\]$")


def parse_ini(text: str, source: str) -> list[Host]:
    tree = _Tree(source)
    group, kind = "ungrouped", "hosts"
    for n, raw in enumerate(text.splitlines(), 1):
        where = f"{source}:{n}"
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and not is_bracketed_ipv6(line):   # [::1]:3601 is a host
            m = _SECTION.match(line)
            if not m or (m.group(2) or "hosts") not in ("hosts", "vars", "children"):
                raise InventoryError(f"{where}: not a section header ([group], "
                                     f"[group:vars], [group:children]): {line!r}")
            group, kind = m.group(1), m.group(2) or "hosts"
            tree.group(group)
            continue
        if kind == "vars":   # key=value, one a line: the value is the rest of the line
            key, eq, value = line.partition("=")
            if not eq or not key.strip():
                raise InventoryError(f"{where}: expected key=value in [{group}:vars], got "
                                     f"{line!r}")
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            tree.group(group).vars[key.strip()] = value
            continue
        tokens = _split(line, where)
        if kind == "children":
            if len(tokens) != 1 or "=" in tokens[0]:
                raise InventoryError(f"{where}: a [{group}:children] line names one group")
            g = tree.group(group)
            if tokens[0] not in g.children:
                g.children.append(tokens[0])
            tree.group(tokens[0])
        else:
            vars_ = _key_values(tokens[1:], where)
            for name in expand_range(tokens[0], where):
                tree.add_host(name, group, vars_, where)
    return _resolve(tree)


def parse_yaml(text: str, source: str) -> list[Host]:
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"{source}:{mark.line + 1}" if mark is not None else source
        problem = getattr(exc, "problem", None) or exc.__class__.__name__
        raise InventoryError(f"{at}: not valid YAML ({problem})") from None
    if data is None:
        return []
    if not isinstance(data, dict):
        raise InventoryError(f"{source}: a YAML inventory is a mapping of groups (all: ...)")
    tree = _Tree(source)
    for name, body in data.items():
        _yaml_group(tree, str(name), body, str(name))
        if name != "all":
            _add_child(tree.group("all"), str(name))
    return _resolve(tree)


def _add_child(g: _Group, child: str) -> None:
    if child not in g.children:
        g.children.append(child)


def _scalar_vars(d, where: str) -> dict[str, str]:
    if d is None:
        return {}
    if not isinstance(d, dict):
        raise InventoryError(f"{where}: variables must be a mapping (key: value)")
    out = {}
    for k, v in d.items():
        if isinstance(v, (dict, list)):
            continue   # structured variables: not ours, kept out
        out[str(k)] = "" if v is None else str(v).lower() if isinstance(v, bool) else str(v)
    return out


def _yaml_group(tree: _Tree, name: str, body, path: str) -> None:
    g = tree.group(name)
    where = f"{tree.source}: {path}"
    if body is None or (name, id(body)) in tree.walked:
        # the second time a YAML alias brings the same group: walking it again adds
        # nothing, and aliases of aliases would double the walk at each level
        return
    tree.walked.add((name, id(body)))
    if not isinstance(body, dict):
        raise InventoryError(f"{where}: a group is a mapping with hosts, vars, children")
    unknown = set(body) - {"hosts", "vars", "children"}
    if unknown:
        raise InventoryError(f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))}"
                             " (a group has hosts, vars, children)")
    g.vars.update(_scalar_vars(body.get("vars"), f"{where}.vars"))
    hosts = body.get("hosts") or {}
    if not isinstance(hosts, dict):
        raise InventoryError(f"{where}.hosts: hosts are a mapping (name: variables)")
    for pattern, hvars in hosts.items():
        hwhere = f"{where}.hosts.{pattern}"
        vars_ = _scalar_vars(hvars, hwhere)
        for host in expand_range(str(pattern), hwhere):
            tree.add_host(host, name, vars_, hwhere)
    children = body.get("children") or {}
    if not isinstance(children, dict):
        raise InventoryError(f"{where}.children: children are a mapping (group: ...)")
    for child, cbody in children.items():
        _add_child(g, str(child))
        _yaml_group(tree, str(child), cbody, f"{path}.children.{child}")


def _depths(tree: _Tree) -> dict[str, int]:
    """Each group's depth below all (the longest path, as Ansible ranks them); a group
    that is its own ancestor is an error."""
    parents: dict[str, list[str]] = {g: [] for g in tree.groups}
    for name, g in tree.groups.items():
        for c in g.children:
            parents.setdefault(c, []).append(name)
    depth: dict[str, int] = {}

    def visit(g: str, stack: tuple[str, ...]) -> int:
        if g in stack:
            raise InventoryError(f"{tree.source}: group {g} is its own ancestor "
                                 f"({' -> '.join((*stack, g))})")
        if g not in depth:
            ps = [p for p in parents.get(g, []) if p != "all"]
            depth[g] = 0 if g == "all" else 1 + max((visit(p, (*stack, g)) for p in ps),
                                                    default=0)
        return depth[g]

    for g in list(tree.groups):
        visit(g, ())
    return depth


def _resolve(tree: _Tree) -> list[Host]:
    tree.group("all")
    depth = _depths(tree)
    # the groups each host is in, directly or through a child group
    member: dict[str, set[str]] = {h: set() for h in tree.host_vars}

    # each group's hosts once: walking shared child groups again from every parent
    # doubles at each level of a ladder of them (a small file, hours of work)
    hosts_of: dict[str, set[str]] = {}

    def add(group: str) -> set[str]:
        if group not in hosts_of:
            hosts_of[group] = set()     # a loop back through "all" adds nothing
            g = tree.groups[group]
            hosts_of[group] = set(g.hosts).union(*(add(c) for c in g.children))
        return hosts_of[group]

    for name in tree.groups:
        for h in add(name):
            member[h].add(name)
    out = []
    for h, own in tree.host_vars.items():
        groups = sorted(member[h] | {"all"}, key=lambda g: (depth[g], g))
        merged: dict[str, str] = {}
        for g in groups:
            merged.update(tree.groups[g].vars)
        merged.update(own)
        shown = tuple(g for g in groups if g not in ("all", "ungrouped"))
        out.append(Host(h, shown, merged, tree.where[h]))
    return out
