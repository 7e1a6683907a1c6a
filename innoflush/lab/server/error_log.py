"""A server's error log as the lab quotes it: its last lines, and the lines that name
the cause when a server does not start (the log itself is kept in the temporary
directory: the work directory holding it is removed)."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path


def tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no error log)"
    rows = [r for r in text.splitlines() if r.strip()]
    return " | ".join(rows[-lines:]) if rows else "(error log is empty)"


# A failed start is reported as one error line, then at most this many lines of the
# server's log quoted (indented), then where the whole log was kept: the cause (an
# "[ERROR] unknown option") first, not at the end of a 1,500-character line of notes.
QUOTED_LOG_LINES = 5
_QUOTED_LINE_MAX = 200
_ERROR_MARK = re.compile(r"\[ERROR\]")


def log_excerpt(text: str, lines: int = QUOTED_LOG_LINES) -> list[str]:
    """The log lines that name the cause: its [ERROR] lines from the mark on (the
    timestamp dropped), else its last lines; each cut to a readable length."""
    rows = [r.strip() for r in text.splitlines() if r.strip()]
    errors = [r[m.start():] for r in rows if (m := _ERROR_MARK.search(r))]
    picked = errors[:lines] if errors else rows[-lines:]
    return [r if len(r) <= _QUOTED_LINE_MAX else r[:_QUOTED_LINE_MAX - 3] + "..."
            for r in picked]


def start_failure(what: str, log: Path) -> str:
    """what, the log's excerpt as indented lines, and a copy of the whole log kept in the
    temporary directory (the work directory holding the log is removed on the way out)."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return f"{what} (it wrote no error log)"
    quoted = log_excerpt(text)
    if not quoted:
        return f"{what} (its error log is empty)"
    try:
        fd, kept = tempfile.mkstemp(prefix="innoflush-server-", suffix=".log")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        where = f"  full log: {kept}"
    except OSError as exc:
        where = f"  (the full log could not be kept: {exc.strerror or exc})"
    return "\n".join([f"{what}; its error log says:", *(f"    {r}" for r in quoted), where])


__all__ = ["QUOTED_LOG_LINES", "log_excerpt", "start_failure", "tail"]
