"""Small modules, short functions (docs/development.md, Conventions): no module of the
package is over 500 lines, and no function over 100 lines — counted from its ``def`` line
to the end of its body, decorators left out — but the simulator's hot path, kept in one
piece for speed (bench/sim_speed.py measures it). Read from the source, nothing imported."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "innoflush"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 100
# "path:function" allowed over MAX_FUNCTION_LINES, each with its reason in its docstring
LONG_FUNCTIONS = {"innoflush/simulator/server.py:connection"}


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_no_module_is_over_500_lines():
    offenders = []
    for path in _modules():
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_MODULE_LINES:
            offenders.append(f"{_name(path)}: {n} lines")
    assert not offenders, (f"modules over {MAX_MODULE_LINES} lines:\n  "
                           + "\n  ".join(offenders))


def test_no_function_is_over_100_lines_but_the_simulators_hot_path():
    offenders = []
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            n = node.end_lineno - node.lineno + 1
            where = f"{_name(path)}:{node.name}"
            if n > MAX_FUNCTION_LINES and where not in LONG_FUNCTIONS:
                offenders.append(f"{where}: {n} lines")
    assert not offenders, (f"functions over {MAX_FUNCTION_LINES} lines:\n  "
                           + "\n  ".join(offenders))


def test_the_allowed_long_functions_exist():
    # an entry left behind once its function is gone or renamed would allow its successor
    found = set()
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.add(f"{_name(path)}:{node.name}")
    assert LONG_FUNCTIONS <= found, LONG_FUNCTIONS - found
