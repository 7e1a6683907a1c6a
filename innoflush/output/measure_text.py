"""`innoflush measure`'s text report: device facts, latency table, PLP verdict (the
measurement itself: innoflush/measure/result.py)."""

from __future__ import annotations

from tabulate import tabulate

from ..bars import BAR_WIDTH, log_bar
from ..measure.result import (
    TAIL_MIN_COUNT,
    TAIL_SAMPLES,
    MeasureResult,
    TestResult,
    unbacked_quantiles,
)
from ..terminal import kv_lines, tabulated, vertical, widest, wrap
from ..units import format_size, format_us_cell

_HEADERS = ["op", "size", "mode", "jobs", "call", "count", "ops/s", "mean µs", "p50 µs",
            "p90 µs", "p99 µs", "p99.9 µs", "max µs"]
_ALIGN = ["left", "right", "left", "right", "left", "right", "right", "right", "right",
          "right", "right", "right", "right"]
# The columns of the default table, by their index in _HEADERS (jobs only when a test ran
# more than one): what a sync costs, typically and in its tail, and how many samples say so.
# --wide adds ops/s, p90, p99.9 and max.
_NARROW = (0, 1, 2, 3, 4, 5, 7, 8, 10)


TAIL_NOTE = ("too few samples (the count column) to back this quantile: p99 needs "
             f"{TAIL_MIN_COUNT['p99']:,}, p99.9 {TAIL_MIN_COUNT['p99.9']:,}, so that "
             f"{TAIL_SAMPLES} lie beyond it; measure longer (--duration or --count)")


def _yn(v) -> str:
    return "?" if v is None else ("yes" if v else "no")


def _mark(note: str, notes: list[str]) -> str:
    """The footnote mark of note ("*", "**", ...), adding it to notes the first time."""
    if note not in notes:
        notes.append(note)
    return "*" * (notes.index(note) + 1)


def _tail_cells(s, notes: list[str], wide: bool = True) -> list[str]:
    """p99 and p99.9 cells: the figure, or a marked dash where too few samples back it
    (the count is in its column; the JSON's tail_note names it). Not wide: the p99.9 cell
    is empty (its column is left out: no mark, no note for it)."""
    unbacked = unbacked_quantiles(s.count)
    cells = []
    for name, ns in (("p99", s.p99_ns), ("p99.9", s.p99_9_ns)):
        if name == "p99.9" and not wide:
            cells.append("")
            continue
        cells.append("—" + _mark(TAIL_NOTE, notes) if name in unbacked
                     else format_us_cell(ns))
    return cells


def _rows(t: TestResult, notes: list[str], wide: bool = True) -> list[list[str]]:
    head = [t.op, format_size(t.write_bytes), "O_DIRECT" if t.direct else "buffered",
            str(t.jobs)]
    if t.unsupported:
        return [head + ["n/a" + _mark(t.unsupported, notes), "", "", "", "", "", "", "",
                        ""]]
    rows = []
    calls = [("write+O_DSYNC" if t.op == "dsync" else "write", t.write)]
    if t.sync is not None:
        calls.append((t.op, t.sync))
    for i, (call, s) in enumerate(calls):
        first = i == 0
        rows.append((head if first else ["", "", "", ""]) + [
            call, f"{s.count:,}" if first else "",
            f"{t.ops_per_s:,.0f}" if first and t.ops_per_s is not None else "",
            *(format_us_cell(ns) for ns in (s.mean_ns, s.p50_ns, s.p90_ns)),
            *_tail_cells(s, notes, wide), format_us_cell(s.max_ns)])
    return rows


def facts_lines(facts: dict, width: int | None = None) -> list[str]:
    rows: list[tuple[str, str]] = []
    fs = facts.get("fs_type") or "?"
    rows.append(("filesystem", f"{fs} on {facts.get('mount_point') or '?'} (source "
                 f"{facts.get('mount_source') or '?'}; options "
                 f"{facts.get('mount_options') or '?'}"
                 + (f"; {facts['super_options']}" if facts.get("super_options") else "")
                 + ")"))
    if facts.get("block_device"):
        kind = facts.get("block_device_kind") or "?"
        extra = facts.get("dm_name") or facts.get("md_level") or ""
        rows.append(("block device", f"{facts['block_device']} ({kind}"
                     + (f" {extra}" if extra else "") + f", {facts.get('dev')})"))
    for d in facts.get("disks") or []:
        ident = ", ".join(f"{k} {d[k]}" for k in ("model", "vendor", "serial") if d.get(k))
        rot = _yn(d.get("rotational"))
        if d.get("virtual"):
            rot += " (virtual disk: not meaningful)"
        rows.append((f"disk {d.get('name')}",
                     (ident + "; " if ident else "")
                     + f"write cache '{d.get('write_cache') or '?'}', FUA {_yn(d.get('fua'))}, "
                     f"rotational {rot}, blocks {d.get('logical_block_size') or '?'}/"
                     f"{d.get('physical_block_size') or '?'} B"))
    if facts.get("disks_note"):
        rows.append(("disks", facts["disks_note"]))
    od = facts.get("o_direct") or {}
    if od.get("supported") is not None:
        rows.append(("O_DIRECT", "supported" if od["supported"] else
                     f"not supported: {od.get('reason')}"))
    rows.append(("host", f"{facts.get('hostname') or '?'}, {facts.get('kernel') or '?'}"))
    rows.append(("cpu", f"{facts.get('cpu_model') or '?'} × {facts.get('cpu_count') or '?'}"))
    if width is not None:
        return kv_lines(rows, width)
    return tabulate(rows, tablefmt="plain").splitlines()


# bars start at 1 µs: a fixed floor keeps a run's bars comparable with another's
BAR_FLOOR_NS = 1000.0
BAR_HEADER = "p50 bar, │ p99 (log, 1 µs to the max)"


def _barred(t: TestResult):
    """The call a test's bar shows: the sync when there is one, else the write (which
    holds the sync for dsync)."""
    return t.sync if t.sync is not None else t.write


def _add_bars(result: MeasureResult, rows: list[list[str]], bar_width: int = BAR_WIDTH
              ) -> None:
    """A log-scale bar of each test's p50 with a mark at its p99, on the row of the call
    it shows (the rows are those of _rows, in order)."""
    shown = [s for s in (_barred(t) for t in result.tests if not t.unsupported) if s]
    # the scale ends at the largest figure the table backs: a p99 only where it is backed
    top = max(((s.p50_ns if "p99" in unbacked_quantiles(s.count) else s.p99_ns) or 0
               for s in shown), default=0)
    i = 0
    for t in result.tests:
        n_rows = 1 if t.unsupported or t.sync is None else 2
        cells = [""] * n_rows
        s = None if t.unsupported else _barred(t)
        if s is not None:
            mark = None if "p99" in unbacked_quantiles(s.count) else s.p99_ns
            cells[n_rows - 1] = log_bar(s.p50_ns, top, BAR_FLOOR_NS, mark, bar_width)
        for cell in cells:
            rows[i].append(cell)
            i += 1


def render(result: MeasureResult, bars: bool = False, width: int | None = None) -> str:
    """The report; width None (--wide): every column, lines not wrapped."""
    s = result.settings
    if s.get("count") is not None:
        per = f"{s['count']} ops per job per test"
    else:
        per = f"{s.get('duration_s')} s per test"
    warm = (f"first {s['warmup_ops']} ops of each job dropped" if s.get("warmup_ops")
            else "no warm-up dropped")
    engine = result.engine + (f" ({result.engine_version})" if result.engine_version else "")
    head = f"innoflush measure {result.path}:"
    out = wrap(f"{head} engine {engine}, {per}, {warm}, "
               f"{format_size(s['file_size_bytes'])} probe file per job", width, whole=[head])
    out.append("")
    out += facts_lines(result.facts, width)
    out.append("")
    notes: list[str] = []
    rows = [r for t in result.tests for r in _rows(t, notes, wide=width is None)]
    if width is None:
        headers, align = list(_HEADERS), list(_ALIGN)
        if bars:
            _add_bars(result, rows)
            headers.append(BAR_HEADER)
            align.append("left")
        out.append(tabulate(rows, headers=headers, colalign=align, disable_numparse=True))
    else:
        out.append(_narrow_table(result, rows, bars, width))
    for i, n in enumerate(notes):
        out += wrap(n, width, f"{'*' * (i + 1)} ")
    v = result.plp_verdict
    safe = {True: "yes", False: "NO", None: "cannot tell"}[v.get("o_direct_no_fsync_safe")]
    out += ["", *wrap(f"PLP verdict: {v['verdict']} (O_DIRECT_NO_FSYNC safe: {safe})", width)]
    out += [line for r in v.get("reasons", []) for line in wrap(r, width, "  - ")]
    if result.warnings:
        out += ["", "Warnings:"]
        out += [line for w in result.warnings for line in wrap(w, width, "  - ")]
    n = len(result.tests)
    out.append(f"\n{n} test{'s' if n != 1 else ''} in {result.wall_s:.1f} s")
    return "\n".join(out)


NARROW_BAR_HEADER = "p50 bar,\n│ p99"
NARROW_BAR_NOTE = "bar: the p50 on a log scale from 1 µs to the largest figure, │ the p99"


def _narrow_table(result: MeasureResult, rows: list[list[str]], bars: bool, width: int) -> str:
    """The default columns (_NARROW); the bar column when bars are on and the terminal has
    room for one of at least 8 cells, else a vertical layout when even the columns do not
    fit."""
    keep = [i for i in _NARROW if i != 3 or any(t.jobs != 1 for t in result.tests)]
    headers = [_HEADERS[i] for i in keep]
    align = [_ALIGN[i] for i in keep]
    cells = [[r[i] for i in keep] for r in rows]
    text = tabulated(cells, headers, align)
    if widest(text) > width:
        return vertical(cells, headers, width)
    room = width - widest(text) - 2
    if not bars or room < 8:
        return text
    _add_bars(result, cells, min(BAR_WIDTH, room))
    return "\n".join([tabulated(cells, [*headers, NARROW_BAR_HEADER], [*align, "left"]),
                      *wrap(NARROW_BAR_NOTE, width)])
