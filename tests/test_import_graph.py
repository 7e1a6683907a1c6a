"""The package's import graph (read from the source, nothing imported): no module imports
another that imports it back, directly or around a loop — function-level imports
included —, no module imports another's private name, and the lab imports at module
level except where its module doc says why.

Imports under ``if TYPE_CHECKING:`` are left out: they never run, and the simulator's
thread functions name the Server they are given in their annotations."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "innoflush"
# (module, what it imports inside a function): the docker backend, imported only when
# --backend docker asks for it (lab/servers.py's doc)
LAB_LAZY = {("innoflush.lab.servers", "innoflush.lab.docker_backend")}


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


def test_no_private_name_imported_from_another_module():
    bad = [(m, f"{t}.{n}") for m in MODULES for t, n, _ in _imports(m)
           if n and n.startswith("_") and not n.startswith("__") and _owner(t) != m]
    assert bad == []


def test_the_lab_imports_at_module_level():
    lazy = {(m, _owner(t) or t) for m in MODULES if m.startswith("innoflush.lab")
            for t, _, inside in _imports(m) if inside}
    assert lazy == LAB_LAZY
