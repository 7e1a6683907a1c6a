"""The package's import graph (read from the source, nothing imported): the packages are
floors and a module imports only from the floors below its own — function-level imports
included —, no module imports another that imports it back, directly or around a loop,
no module imports another's private name, and the lab imports at module level except
where its module doc says why.

Imports under ``if TYPE_CHECKING:`` are left out: they never run, and the simulator's
thread functions name the Server they are given in their annotations."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "innoflush"
# (module, what it imports inside a function): the docker backend, imported only when
# --backend docker asks for it (lab/server/for_run.py's doc)
LAB_LAZY = {("innoflush.lab.server.for_run", "innoflush.lab.server.docker_backend")}


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


MODULES = _modules()


def _imports(name: str):
    """(target module, imported name or None, inside a function) for each import."""
    path, is_pkg = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    inside, typing_only = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            inside.update(id(n) for n in ast.walk(node) if n is not node)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typing_only.update(id(n) for n in ast.walk(node) if n is not node)
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        lazy = id(node) in inside
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, lazy
        elif isinstance(node, ast.ImportFrom):
            base = name.split(".") if is_pkg else name.split(".")[:-1]
            if node.level:
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                full = f"{target}.{alias.name}"
                yield (full, None, lazy) if full in MODULES else (target, alias.name, lazy)


# The floors, top first: commands → lab / fleet / output → advisor → live → simulator /
# measure → profiles → core (the top-level modules: errors, units, stats, values, the
# file readers and writers, signals, the executor). A module imports its own package and
# the floors below, never a floor above nor a neighbour on its own floor.
FLOORS: dict[str, int] = {
    "__main__": 8,          # python -m innoflush: the installed script's twin
    "commands": 7,
    "lab": 6, "fleet": 6, "output": 6,
    "advisor": 5,
    "live": 4,
    "simulator": 3, "measure": 3,
    "profiles": 2,
}
CORE = 1


def _package(module: str) -> str:
    """The package a module belongs to (its first name under innoflush), or "" for a
    top-level module of the core floor."""
    parts = module.split(".")
    if len(parts) < 2:
        return ""
    if len(parts) == 2 and parts[1] not in FLOORS:
        return ""          # innoflush.errors, innoflush.units, ...
    return parts[1]


def _floor(module: str) -> int:
    package = _package(module)
    if not package:
        return CORE
    assert package in FLOORS, f"{module}: its package has no floor in FLOORS"
    return FLOORS[package]


def _against_the_order(importer: str, imported: str) -> bool:
    mine, theirs = _package(importer), _package(imported)
    if mine == theirs:
        return False
    return _floor(imported) >= _floor(importer)


def _owner(target: str) -> str | None:
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


def test_no_import_cycle():
    edges = {m: {o for t, _, _ in _imports(m) if (o := _owner(t)) and o != m}
             for m in MODULES}
    state: dict[str, int] = {}          # 1: on the current path, 2: done
    path: list[str] = []
    cycles = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for n in sorted(edges[m]):
            if state.get(n) == 1:
                cycles.append(path[path.index(n):] + [n])
            elif n not in state:
                visit(n)
        path.pop()
        state[m] = 2

    for m in sorted(MODULES):
        if m not in state:
            visit(m)
    assert cycles == []


def test_packages_import_only_the_floors_below():
    bad = sorted({(m, o) for m in MODULES for t, _, _ in _imports(m)
                  if (o := _owner(t)) and _against_the_order(m, o)})
    assert bad == []


@pytest.mark.parametrize("importer, imported", [
    # the loops of 23556d8 (issue 46), each from the module that ran up the floors
    ("innoflush.advisor.cli", "innoflush.fleet.cli"),
    ("innoflush.prom", "innoflush.advisor.rules.model"),
    ("innoflush.measure.cli", "innoflush.output.prom"),
    ("innoflush.measure.cli", "innoflush.output.charts.output"),
    # and a neighbour on the same floor, and the core reaching up
    ("innoflush.lab.experiments.run", "innoflush.fleet.run"),
    ("innoflush.errors", "innoflush.profiles"),
])
def test_the_order_refuses_an_upward_import(importer, imported):
    assert _against_the_order(importer, imported)


@pytest.mark.parametrize("importer, imported", [
    ("innoflush.commands.advise", "innoflush.advisor.advise"),
    ("innoflush.fleet.run", "innoflush.advisor.advise"),
    ("innoflush.live.facts", "innoflush.measure.facts"),
    ("innoflush.output.prom", "innoflush.measure.result"),
    ("innoflush.advisor.fit", "innoflush.advisor.measured"),
    ("innoflush.profiles.model", "innoflush.stats"),
])
def test_the_order_allows_a_downward_import(importer, imported):
    assert not _against_the_order(importer, imported)


def test_every_package_has_a_floor():
    packages = {_package(m) for m in MODULES} - {""}
    assert packages <= set(FLOORS)


def test_no_private_name_imported_from_another_module():
    bad = [(m, f"{t}.{n}") for m in MODULES for t, n, _ in _imports(m)
           if n and n.startswith("_") and not n.startswith("__") and _owner(t) != m]
    assert bad == []


def test_the_lab_imports_at_module_level():
    lazy = {(m, _owner(t) or t) for m in MODULES if m.startswith("innoflush.lab")
            for t, _, inside in _imports(m) if inside}
    assert lazy == LAB_LAZY


def test_tests_share_code_through_helpers_only():
    """A test module imports tests.helpers, never another test module: what two tests share
    lives where both can see it, and moving a test does not break another."""
    tests = ROOT.parent / "tests"
    offenders = []
    for path in tests.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                name = node.module
            elif isinstance(node, ast.Import):
                name = node.names[0].name
            else:
                continue
            last = name.rsplit(".", 1)[-1]
            if last.startswith("test_") or last == "conftest" or (
                    name.startswith("tests.") and not name.startswith("tests.helpers")):
                offenders.append(f"{path.relative_to(tests)}: {name}")
    assert not offenders, offenders
