"""A server captured on paper: SHOW GLOBAL VARIABLES and SHOW GLOBAL STATUS snapshots
read from files (``innoflush advise --from``), for a DBA who may not run innoflush on a
production host but can run the client programs there.

Formats understood, in any mix, one or more per file:

- ``mysql -B`` / ``mysql -e`` into a file (tab-separated, with or without the
  ``Variable_name<TAB>Value`` header; a repeated header or name starts a new snapshot);
- the ``mysql`` table format (``| name | value |`` between ``+---+`` rules), which is
  also what ``mysqladmin extended-status`` prints, ``-i N`` blocks included; with ``-r``
  the blocks after the first hold differences, and the cumulative snapshots are rebuilt;
- a pt-stalk directory: its ``<prefix>-variables`` and ``<prefix>-mysqladmin`` files (the
  newest prefix that has both, or the prefix given as ``DIR/PREFIX``), and
  ``<prefix>-slave-status`` when present;
- ``SHOW REPLICA STATUS\\G`` / ``SHOW SLAVE STATUS\\G`` (``Name: value`` lines), optional.

Only the order of the snapshots and their ``Uptime`` say when they were taken: within one
file of several snapshots (mysqladmin ``-i N``) they are N seconds apart, N given or read
as the usual ``Uptime`` step; between files, the ``Uptime`` difference is the time.
"""

from __future__ import annotations

import os
import re
import statistics
from dataclasses import dataclass, field
from itertools import pairwise

from .. import infile
from ..errors import UsageError
from .sampling import COUNTERS, Snapshot, numeric_status

FORMATS = ("mysql -B/-e tab output (with or without its Variable_name header)",
           "mysql table output (| name | value |)",
           "mysqladmin extended-status, with -i N and -r",
           "a pt-stalk directory (<prefix>-variables, <prefix>-mysqladmin)",
           "SHOW REPLICA/SLAVE STATUS\\G")
UNDERSTOOD = "; ".join(FORMATS)

_PT_STALK_PREFIX = re.compile(r"^(\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d)-(.+)$")
_RULE = re.compile(r"^\+[-+]+\+\s*$")
_VERTICAL_ROW = re.compile(r"^\*+\s*\d+\.\s*row\s*\*+\s*$")
_KEY_VALUE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*):\s?(.*)$")
# what tells a variables block from a status block
_VARIABLE_MARKS = ("innodb_flush_log_at_trx_commit", "version", "innodb_version", "datadir")
_HEADER_NAMES = ("variable_name",)
_REPLICA_ASKED = re.compile(r"^\s*SHOW\s+(SLAVE|REPLICA)\s+STATUS", re.I | re.M)


class CaptureError(UsageError):
    """A capture that cannot be read or does not hold what advise needs (exit 2)."""


@dataclass
class Block:
    """One name -> value table as it appeared in a file."""

    rows: dict[str, str]
    file: str
    fmt: str                   # tab | table


@dataclass
class Capture:
    """What a capture holds: variables, the status snapshots in order, the replica rows."""

    path: str
    variables: dict[str, str]
    snapshots: list[Snapshot]
    files: list[str]
    formats: list[str]
    interval_source: str
    relative: bool = False                      # mysqladmin -r output was rebuilt
    replica_rows: list[dict] | None = None      # None: no replica status in the capture
    notes: list[str] = field(default_factory=list)

    def source(self) -> dict:
        """The report's ``source`` key."""
        return {"kind": "capture", "path": self.path, "snapshots": len(self.snapshots),
                "files": [os.path.relpath(f, self.path) if os.path.isdir(self.path)
                          else os.path.basename(f) for f in self.files],
                "formats": list(self.formats), "interval_source": self.interval_source,
                "mysqladmin_relative": self.relative}


# ---- text -> blocks (pure) ------------------------------------------------------------

def _table_cells(line: str) -> list[str] | None:
    s = line.strip()
    if not (s.startswith("|") and s.endswith("|")) or len(s) < 2:
        return None
    return [c.strip() for c in s[1:-1].split("|")]


_ROW_OPENS = re.compile(r"^\|\s*[A-Za-z_][A-Za-z0-9_]*\s*\|")
_VALUE_LINES_MAX = 64


def _logical_lines(text: str) -> list[str]:
    """The lines of text, a table row whose value holds newlines joined into one: the
    mysql table format prints a value's newlines as they are, and MySQL 8+'s
    SHOW GLOBAL STATUS has two PEM keys (Rsa_public_key,
    Caching_sha2_password_rsa_public_key); `mysqladmin extended-status` without -r and
    pt-stalk's -mysqladmin show them so. Unjoined, each such row would end the block and
    cut a snapshot into pieces, only one of them holding Uptime."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        end = _value_end(lines, i)
        out.append("\n".join(lines[i:end + 1]))
        i = end + 1
    return out


def _value_end(lines: list[str], i: int) -> int:
    """The index of the line that ends the row opened at lines[i]: i itself, unless the
    row's value runs on; then the first later line ending in "|" (the value's last line,
    padded, and the closing bar). A row or a rule first: not a value that runs on."""
    s = lines[i].strip()
    if not _ROW_OPENS.match(s) or s.endswith("|"):
        return i
    for j in range(i + 1, min(len(lines), i + 1 + _VALUE_LINES_MAX)):
        nxt = lines[j].strip()
        if nxt.startswith(("|", "+")) and nxt != "|":
            return i
        if nxt.endswith("|"):
            return j
    return i


def parse_blocks(text: str, file: str = "<text>") -> tuple[list[Block], list[dict]]:
    """The name/value tables in text (tab or boxed), and the vertical (\\G) rows."""
    blocks: list[Block] = []
    vertical: list[dict] = []
    cur: dict[str, str] | None = None
    fmt = ""
    vrow: dict | None = None

    def close() -> None:
        nonlocal cur
        if cur:
            blocks.append(Block(cur, file, fmt))
        cur = None

    for raw in _logical_lines(text):
        line = raw.rstrip("\r\n")
        if _VERTICAL_ROW.match(line.strip()):
            close()
            vrow = {}
            vertical.append(vrow)
            continue
        if vrow is not None:
            m = _KEY_VALUE.match(line)
            if m:
                vrow[m.group(1)] = m.group(2).strip()
                continue
            vrow = None
        if not line.strip():
            continue          # blank lines separate nothing: a header or a rule does
        if _RULE.match(line.strip()):
            continue
        cells = _table_cells(line)
        kind = "table"
        if cells is None:
            cells = line.split("\t")
            kind = "tab"
        if len(cells) != 2:
            close()           # a title line, another table's row: the block ends
            continue
        name, value = cells[0].strip(), cells[1]
        if kind == "tab":
            value = value.strip()
        if name.lower() in _HEADER_NAMES:
            close()
            cur, fmt = {}, kind
            continue
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            close()
            continue
        if cur is not None and (name in cur or fmt != kind or (
                name[:1].isupper() and next(iter(cur), name)[:1].islower())):
            # the same name again: the next snapshot (no header between); variable names
            # are lower case and status names capitalised (MariaDB's wsrep* aside): a
            # status after variables, both headerless (-N), starts a block too
            close()
        if cur is None:
            cur, fmt = {}, kind
        cur[name] = value
    close()
    return blocks, vertical


def is_variables(rows: dict) -> bool:
    keys = {k.lower() for k in rows}
    return any(m in keys for m in _VARIABLE_MARKS) and "uptime" not in keys


def is_status(rows: dict) -> bool:
    return any(k.lower() == "uptime" for k in rows) and not is_variables(rows)


def canonical_status(rows: dict) -> dict[str, str]:
    """Status names as SHOW GLOBAL STATUS spells them (information_schema gives them in
    capitals: UPTIME -> Uptime)."""
    return {(k.capitalize() if k.isupper() else k): v for k, v in rows.items()}


# ---- snapshots and their times (pure) ---------------------------------------------------

def rebuild_relative(blocks: list[dict[str, int]]) -> list[dict[str, int]]:
    """mysqladmin -r: the first block absolute, each later one the difference from the
    one before; the cumulative values again (gauges too: they are differenced alike)."""
    out = [dict(blocks[0])]
    for delta in blocks[1:]:
        prev = out[-1]
        out.append({k: prev[k] + v for k, v in delta.items() if k in prev})
    return out


def _consistent_absolute(blocks: list[dict[str, int]]) -> bool:
    """Read as absolute snapshots, nothing cumulative goes down."""
    return not any(b[k] < a[k] for a, b in pairwise(blocks)
                   for k in ("Uptime", *COUNTERS) if k in a and k in b)


def looks_relative(blocks: list[dict[str, int]]) -> bool:
    """-r output: after the first block, each holds differences (its Uptime is the step,
    about N, not the server's uptime), so read as absolute the counters would fall, and
    the later blocks, each about N seconds' worth, rise and fall among themselves.
    Absolute blocks never fall, except across a restart: then the later ones rise again
    together from zero."""
    if len(blocks) < 2 or any("Uptime" not in b for b in blocks):
        return False
    if _consistent_absolute(blocks):
        return False
    later = blocks[1:]
    uptimes = [b["Uptime"] for b in later]
    if (len(later) >= 2 and _consistent_absolute(later)
            and all(b > a for a, b in pairwise(uptimes))):
        return False      # a restart between absolute snapshots (refused later)
    return all(b[k] >= 0 for b in later for k in COUNTERS if k in b)


def series_times(blocks: list[dict[str, int]], interval_s: float | None
                 ) -> tuple[list[float], str]:
    """Times of the snapshots of one file: N s apart (N given, or the median Uptime
    step, which mysqladmin -i N makes N; Uptime counts whole seconds)."""
    base = float(blocks[0].get("Uptime", 0))
    if len(blocks) == 1:
        return [base], "Uptime"
    if interval_s:
        return [base + i * interval_s for i in range(len(blocks))], "--interval"
    steps = [b.get("Uptime", 0) - a.get("Uptime", 0) for a, b in pairwise(blocks)]
    step = max(1, statistics.median_low(steps))
    return ([base + i * step for i in range(len(blocks))],
            f"the median Uptime step between snapshots ({step} s)")


# ---- files and directories --------------------------------------------------------------

def _read(path: str) -> str:
    return infile.read_text(path, "capture file", infile.CAPTURE_CAP, CaptureError,
                            replace=True)


def _natural(name: str) -> list:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def pt_stalk_files(directory: str, prefix: str | None = None) -> list[str] | None:
    """The files of one pt-stalk collection (the newest complete one, or prefix's);
    None when the directory holds no pt-stalk collection."""
    sets: dict[str, dict[str, str]] = {}
    for name in os.listdir(directory):
        m = _PT_STALK_PREFIX.match(name)
        if m:
            sets.setdefault(m.group(1), {})[m.group(2)] = os.path.join(directory, name)
    if not sets:
        return None
    if prefix is not None:
        if prefix not in sets:
            raise CaptureError(f"no pt-stalk collection {prefix} in {directory} (there: "
                               + ", ".join(sorted(sets)[-5:]) + ")")
        chosen = prefix
    else:
        complete = [p for p, files in sets.items()
                    if "variables" in files and "mysqladmin" in files
                    and os.path.getsize(files["mysqladmin"]) > 0]
        if not complete:
            raise CaptureError(f"{directory}: no pt-stalk collection has both its "
                               "-variables and -mysqladmin files")
        chosen = max(complete)
    files = sets[chosen]
    return [files[k] for k in ("variables", "mysqladmin", "slave-status", "replica-status")
            if k in files]


def capture_files(path: str) -> list[str]:
    """The files a --from path stands for: a file; a pt-stalk directory's newest
    collection, or DIR/PREFIX; any other directory's files, in natural order."""
    if os.path.exists(path) and not os.path.isdir(path):
        return [path]     # a FIFO or a device too: _read says what it is
    if os.path.isdir(path):
        try:
            pt = pt_stalk_files(path)
        except OSError as exc:
            raise CaptureError(f"cannot read {path}: {exc.strerror or exc}") from None
        if pt is not None:
            return pt
        names = sorted((n for n in os.listdir(path) if not n.startswith(".")
                        and os.path.isfile(os.path.join(path, n))), key=_natural)
        if not names:
            raise CaptureError(f"{path}: an empty directory")
        return [os.path.join(path, n) for n in names]
    parent, prefix = os.path.split(path.rstrip("/"))
    if parent and os.path.isdir(parent) and _PT_STALK_PREFIX.match(prefix + "-x"):
        return pt_stalk_files(parent, prefix) or []
    raise CaptureError(f"cannot read {path}: no such file or directory")


def read_capture(path: str, interval_s: float | None = None) -> Capture:
    """The capture at path (a file, a directory, or a pt-stalk DIR/PREFIX); CaptureError
    (one line, exit 2) when it does not hold variables and two status snapshots of one
    server run."""
    files = capture_files(path)
    variables: dict[str, str] | None = None
    replica: list[dict] | None = None
    snapshots: list[Snapshot] = []
    formats: list[str] = []
    sources: list[str] = []
    relative_any = False
    used: list[str] = []
    for fpath in files:
        text = _read(fpath)
        blocks, vertical = parse_blocks(text, fpath)
        status_blocks = [numeric_status(canonical_status(b.rows).items())
                         for b in blocks if is_status(b.rows)]
        var_blocks = [b for b in blocks if is_variables(b.rows)]
        rows = [r for r in vertical if any(k in r for k in (
            "Slave_IO_Running", "Replica_IO_Running", "Master_Host", "Source_Host"))]
        # the replica status was asked for, rows or none (pt-stalk's -slave-status has
        # the statement as a title; an empty answer: not a replica)
        asked = bool(rows) or bool(_REPLICA_ASKED.search(text)) or \
            os.path.basename(fpath).endswith(("slave-status", "replica-status"))
        if not (status_blocks or var_blocks or asked):
            continue
        used.append(fpath)
        for b in var_blocks:   # in parts (LIKE 'innodb%'; ...) or whole: the last wins
            variables = (variables or {}) | {k.lower(): v for k, v in b.rows.items()}
        if asked:
            replica = (replica or []) + rows
            formats.append("SHOW REPLICA STATUS\\G")
        relative = looks_relative(status_blocks)
        if relative:
            status_blocks = rebuild_relative(status_blocks)
            relative_any = True
        for b in blocks:
            fmt = "mysql table (| name | value |)" if b.fmt == "table" else "mysql -B (tab)"
            if len(status_blocks) > 1 and is_status(b.rows):
                fmt = ("mysqladmin extended-status -r -i N" if relative
                       else "mysqladmin extended-status -i N" if b.fmt == "table"
                       else "mysql -B, repeated")
            if fmt not in formats:
                formats.append(fmt)
        if not status_blocks:
            continue
        times, how = series_times(status_blocks, interval_s)
        sources.append(how)
        snapshots += [Snapshot(t, s) for t, s in zip(times, status_blocks, strict=True)]
    if not used:
        raise CaptureError(f"{path}: no SHOW GLOBAL VARIABLES or SHOW GLOBAL STATUS output "
                           f"recognised; understood: {UNDERSTOOD}")
    if variables is None:
        raise CaptureError(f"{path}: no SHOW GLOBAL VARIABLES in the capture (a table with "
                           "innodb_flush_log_at_trx_commit, version, ...)")
    if len(snapshots) < 2:
        raise CaptureError(f"{path}: {len(snapshots)} SHOW GLOBAL STATUS snapshot(s) in the "
                           "capture; advise needs two or more, some seconds apart (e.g. "
                           "mysqladmin extended-status -r -i 10 -c 3)")
    _check_one_run(path, snapshots)
    seconds = snapshots[-1].t - snapshots[0].t
    if seconds <= 0:
        raise CaptureError(f"{path}: the status snapshots are 0 s apart (Uptime did not "
                           "move): take them some seconds apart, or give the interval "
                           "with --interval")
    return Capture(path=path, variables=variables, snapshots=snapshots, files=used,
                   formats=formats, interval_source=", ".join(dict.fromkeys(sources)),
                   relative=relative_any, replica_rows=replica)


def _check_one_run(path: str, snapshots: list[Snapshot]) -> None:
    for i, (a, b) in enumerate(pairwise(snapshots)):
        ua, ub = a.status.get("Uptime"), b.status.get("Uptime")
        if ua is not None and ub is not None and ub < ua:
            raise CaptureError(
                f"{path}: snapshots {i + 1} and {i + 2} are from different server runs "
                f"(Uptime went down: {ua} s -> {ub} s); capture again from one run")
        if b.t < a.t:
            raise CaptureError(f"{path}: snapshots {i + 1} and {i + 2} are out of order")
