"""A user's own load generator as the lab's workload (``--workload-cmd``): what it is
(``WorkloadCommand``: a name, the command, the command that prepares a fresh server),
how it is given on the command line (``[NAME=]CMD``), and how its placeholders become
the lab server's connection (``substitute``). lab/load/external.py runs it.

Placeholders, ``{name}`` in the command's text (``PLACEHOLDERS``):

- ``{host}``, ``{port}``: the server's TCP address; ``{socket}``: its unix socket (local
  backend only: a container's socket is not on this host);
- ``{user}``: the account (root); ``{password_file}``: a file (mode 0600, in the run's
  work directory) holding its password — empty for the local backend's root, the random
  one of a container's — so that the password is never on a command line;
- ``{threads}``: the run's connection count (``--connections``); ``{seconds}``: how long
  the command should run: the warm-up + the measured duration + a margin (the lab stops
  it when the measured window ends);
- ``{database}``: a database the lab creates on every fresh server before the prepare
  command.

``{{`` and ``}}`` are literal braces, ``${NAME}`` is left to the shell, and braces around
anything that is not a name (``awk '{print $1}'``) are left alone. A value is quoted for
where it lands in the shell text — bare, inside "…", inside '…' — so a socket path with
spaces stays one word whichever way the command is written.
"""

from __future__ import annotations

import math
import os
import re
import shlex
from dataclasses import dataclass

from ...errors import OptionError, UsageError

PLACEHOLDERS = ("host", "port", "socket", "user", "password_file", "threads", "seconds",
                "database")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LABEL_RE = re.compile(r"([A-Za-z][A-Za-z0-9_.-]*)=(.*)", re.S)
# {seconds} = warm-up + duration + this margin: the command must outlive the measured
# window (the lab stops it there), also when its connections take a while to start
MARGIN_S = 10.0
MARGIN_SHARE = 0.1


@dataclass(frozen=True)
class WorkloadCommand:
    """A named load generator command, and the one that prepares a fresh server for it."""

    name: str
    command: str
    prepare: str | None = None

    def validate(self) -> None:
        if not self.command.strip():
            raise OptionError(f"--workload-cmd {self.name}: the command is empty")
        check_placeholders(self.command, "--workload-cmd")
        if self.prepare is not None:
            if not self.prepare.strip():
                raise OptionError(f"--workload-prepare for {self.name}: the command is empty")
            check_placeholders(self.prepare, "--workload-prepare")

    def placeholders(self) -> set[str]:
        out = set(placeholders_in(self.command))
        if self.prepare:
            out |= set(placeholders_in(self.prepare))
        return out

    def to_dict(self) -> dict:
        return {"name": self.name, "command": self.command, "prepare": self.prepare}


def seconds_for(warmup_s: float, duration_s: float) -> int:
    """``{seconds}``: the warm-up and the measured duration, plus a margin, whole."""
    run = warmup_s + duration_s
    return int(math.ceil(run + MARGIN_S + MARGIN_SHARE * run))


# ---- the command's text -----------------------------------------------------------------

def _scan(text: str):
    """The command's text as pieces: ("text", str) and ("placeholder", name, context),
    context being where it stands in the shell text: "bare", "double" or "single"."""
    out: list[tuple] = []
    buf: list[str] = []
    stack: list[str] = ["bare"]     # bare | double | single | subst ($(...) or (...))
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        ctx = stack[-1]
        if text.startswith("{{", i) or text.startswith("}}", i):
            buf.append(c)
            i += 2
            continue
        if c == "{" and not (i and text[i - 1] == "$"):
            m = _NAME_RE.match(text, i + 1)
            if m and m.end() < n and text[m.end()] == "}":
                if buf:
                    out.append(("text", "".join(buf)))
                    buf = []
                out.append(("placeholder", m.group(0),
                            "bare" if ctx == "subst" else ctx))
                i = m.end() + 1
                continue
        if ctx == "single":
            if c == "'":
                stack.pop()
        elif c == "\\" and i + 1 < n:
            buf.append(text[i:i + 2])
            i += 2
            continue
        elif ctx == "double":
            if c == '"':
                stack.pop()
            elif text.startswith("$(", i):
                stack.append("subst")
                buf.append("$(")
                i += 2
                continue
        else:                               # bare or inside a command substitution
            if c == "'":
                stack.append("single")
            elif c == '"':
                stack.append("double")
            elif c == "(":
                stack.append("subst")
            elif c == ")" and ctx == "subst":
                stack.pop()
        buf.append(c)
        i += 1
    if buf:
        out.append(("text", "".join(buf)))
    return out


def placeholders_in(text: str) -> list[str]:
    """The placeholder names a command uses, in order of appearance."""
    return [p[1] for p in _scan(text) if p[0] == "placeholder"]


def check_placeholders(text: str, option: str) -> None:
    """UsageError (one line) for a placeholder the lab does not know."""
    unknown = sorted({p for p in placeholders_in(text) if p not in PLACEHOLDERS})
    if unknown:
        raise OptionError(f"{option}: unknown placeholder(s) "
                         f"{', '.join('{' + u + '}' for u in unknown)}: use "
                         f"{' '.join('{' + p + '}' for p in PLACEHOLDERS)} "
                         "({{ and }} for literal braces)")


def _quoted(value: str, context: str) -> str:
    if context == "single":
        return value.replace("'", "'\\''")
    if context == "double":
        return re.sub(r'([\\"$`])', r"\\\1", value)
    return shlex.quote(value)


def substitute(text: str, values: dict[str, str | None]) -> str:
    """The command with every placeholder replaced by its value, quoted for where it
    stands; UsageError for an unknown or unavailable placeholder."""
    parts = []
    for piece in _scan(text):
        if piece[0] == "text":
            parts.append(piece[1])
            continue
        name, context = piece[1], piece[2]
        if name not in PLACEHOLDERS:
            check_placeholders(text, "--workload-cmd")
        value = values.get(name)
        if value is None:
            raise UsageError(f"{{{name}}} is not available here ({_UNAVAILABLE.get(name, '')})")
        parts.append(_quoted(str(value), context))
    return "".join(parts)


_UNAVAILABLE = {"socket": "the docker backend's server has no socket on this host: use "
                          "{host} and {port}"}


# ---- on the command line ----------------------------------------------------------------

def default_name(command: str) -> str:
    """A bare command's name: its first word(s) — the program, and the word after it
    when that is a plain word, not an option, a path, a placeholder or shell syntax
    (``sysbench oltp_insert``)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    if not words:
        return "command"
    first = os.path.basename(words[0].rstrip("/")) or words[0]
    first = re.sub(r"[;&|<>()]+$", "", first) or first
    if len(words) > 1 and re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", words[1]):
        return f"{first} {words[1]}"
    return first


def split_named(text: str) -> tuple[str | None, str]:
    """``NAME=CMD`` -> (NAME, CMD); a bare command -> (None, CMD). A bare command's first
    ``=`` follows a space or an option (``sysbench --threads=4``); an upper-case NAME is a
    shell assignment (``FOO=bar cmd``), not a name."""
    m = _LABEL_RE.fullmatch(text.strip())
    if m and m.group(2).strip() and not m.group(1).isupper():
        return m.group(1), m.group(2).strip()
    return None, text.strip()


def workload_commands(commands: tuple[str, ...] | list[str],
                      prepares: tuple[str, ...] | list[str] = ()) -> list[WorkloadCommand]:
    """The ``--workload-cmd [NAME=]CMD`` and ``--workload-prepare [NAME=]CMD`` values as
    named commands: a bare prepare command serves every workload without one of its own;
    a named one, the workload of that name. UsageError (one line) for a name given
    twice, a prepare command naming no workload, or an unknown placeholder."""
    named: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for text in commands:
        name, cmd = split_named(text)
        if name is None:
            base = default_name(cmd)
            seen[base] = seen.get(base, 0) + 1
            name = base if seen[base] == 1 else f"{base} #{seen[base]}"
        elif name in {n for n, _ in named}:
            raise OptionError(f"--workload-cmd: the name {name!r} is given twice")
        named.append((name, cmd))
    names = [n for n, _ in named]
    shared: str | None = None
    own: dict[str, str] = {}
    for text in prepares:
        name, cmd = split_named(text)
        if name is not None and name not in names:
            raise OptionError(f"--workload-prepare {name}=...: no --workload-cmd is named "
                             f"{name!r} (names: {', '.join(names) or 'none'})")
        if name is None:
            if shared is not None:
                raise OptionError("--workload-prepare: give one bare command (for every "
                                 "workload), or NAME=CMD per workload")
            shared = cmd
        elif name in own:
            raise OptionError(f"--workload-prepare: {name!r} is given twice")
        else:
            own[name] = cmd
    if prepares and not commands:
        raise OptionError("--workload-prepare needs --workload-cmd")
    out = [WorkloadCommand(name, cmd, own.get(name, shared)) for name, cmd in named]
    for wc in out:
        wc.validate()
    return out


__all__ = ["MARGIN_S", "PLACEHOLDERS", "WorkloadCommand", "check_placeholders",
           "default_name", "placeholders_in", "seconds_for", "split_named", "substitute",
           "workload_commands"]
