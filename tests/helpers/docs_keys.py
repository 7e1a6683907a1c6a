"""The docs' generated blocks and JSON key tables, read as `make docs` writes them: the
pages, their `example NAME` JSON, and a comparison of documented keys with real output."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("make_docs", ROOT / "scripts" / "make_docs.py")
make_docs = importlib.util.module_from_spec(_spec)
sys.modules["make_docs"] = make_docs   # dataclasses look their module up there
_spec.loader.exec_module(make_docs)

DOCS = make_docs.doc_files()
def doc_blocks() -> list[tuple[Path, str, str]]:
    out = []
    for path in DOCS:
        for m in make_docs.BLOCK_RE.finditer(path.read_text()):
            out.append((path, m.group("spec").strip(), m.group("body")))
    return out


KEYS_RE = re.compile(r"<!-- json-keys (?P<name>\S+)(?: prefix=(?P<prefix>\S+))? -->\n"
                     r"(?P<table>(?:\|.*\n)+)")
OPTIONAL_RE = re.compile(r"\bonly (with|without|when|in|for)\b", re.I)


@dataclasses.dataclass
class KeyDoc:
    keys: set[str] = dataclasses.field(default_factory=set)
    maps: set[str] = dataclasses.field(default_factory=set)      # documented as `x.*`
    optional: set[str] = dataclasses.field(default_factory=set)


def _join(prefix: str, key: str) -> str:
    if not prefix:
        return key
    return prefix + key if key.startswith("[]") else f"{prefix}.{key}"


def documented_keys() -> dict[str, KeyDoc]:
    docs: dict[str, KeyDoc] = {}
    for path in DOCS:
        for m in KEYS_RE.finditer(path.read_text()):
            doc = docs.setdefault(m.group("name"), KeyDoc())
            prefixes = (m.group("prefix") or "").split(",")
            for line in m.group("table").splitlines()[2:]:
                cells = re.split(r"(?<!\\)\|", line)
                first, meaning = cells[1], cells[2] if len(cells) > 2 else ""
                for key in re.findall(r"`([^`]+)`", first):
                    for prefix in prefixes:
                        full = _join(prefix, key)
                        if full.endswith(".*"):
                            full = full[:-2]
                            doc.maps.add(full)
                        doc.keys.add(full)
                        if OPTIONAL_RE.search(meaning):
                            doc.optional.add(full)
    return docs


def flatten(obj, path: str = "") -> set[str]:
    """Every key path of a JSON value; a trimmed example's "..." entries are not keys."""
    out: set[str] = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "...":
                continue
            p = _join(path, k)
            out.add(p)
            out |= flatten(v, p)
    elif isinstance(obj, list):
        for v in obj:
            out |= flatten(v, path + "[]")
    return out


def compare_keys(name: str, *outputs) -> None:
    doc = documented_keys()[name]
    real: set[str] = set()
    for out in outputs:
        real |= flatten(out)

    def covered(p: str) -> bool:
        return p in doc.keys or any(p.startswith(m + ".") or p.startswith(m + "[]")
                                    for m in doc.maps)

    missing = sorted(p for p in real if not covered(p))
    stale = sorted(k for k in doc.keys - doc.optional if k not in real)
    assert not missing, f"{name}: keys the JSON has and the docs lack: {missing}"
    assert not stale, f"{name}: keys the docs list and no JSON has: {stale}"


def example_json(name: str):
    """The JSON of the generated example block `example NAME` (as `make docs` left it)."""
    for _path, spec, body in doc_blocks():
        if spec == f"example {name}":
            m = re.search(r"```json\n(.*?)```", body, re.S)
            assert m, f"example {name} has no JSON (run `make docs`)"
            return json.loads(m.group(1))
    raise AssertionError(f"no generated block `example {name}` in the docs")
