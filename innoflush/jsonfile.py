"""Reading and writing the JSON files users keep (profiles), with errors that name them."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from .errors import ProfileError, UsageError


def read_json(path: str | Path, what: str = "file"):
    """The parsed JSON of a file; ProfileError naming the file and the problem."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProfileError(f"{p}: no such {what}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileError(f"{p}: cannot read ({exc})") from None
    return parse_json(text, str(p))


def parse_json(text: str, where: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProfileError(f"{where}: not valid JSON ({exc.msg} at line {exc.lineno})") \
            from None


def store_file(directory: Path, name: str, text: str, kind: str,
               overwrite: bool = False) -> Path:
    """Write directory/name.json atomically (temp file, fsync, rename); refuses to replace
    an existing one unless asked, so a typo never loses a saved profile."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {directory}: {exc.strerror}") from None
    target = directory / f"{name}.json"
    if target.exists() and not overwrite:
        raise UsageError(f"{kind} {name!r} already exists at {target} "
                         "(use --force to replace it)")
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".tmp")
    except OSError as exc:
        raise UsageError(f"cannot write in {directory}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise UsageError(f"cannot write {target}: {exc.strerror}") from None
    return target
