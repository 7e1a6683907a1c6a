"""A terminal glance: bars and sparklines of unicode block characters (no dependency).

`simulate` and `measure` add a bar to each row of their tables when stdout is a
terminal: a table of numbers is read, a column of bars is seen at once. Piped, with
--json/--csv, or with --no-bars there are none, so scripts that parse the text never
meet them.
"""

from __future__ import annotations

import math
import os
import sys

# left-aligned eighths of a cell: a bar ends on an eighth, not on a whole cell
_EIGHTHS = "▏▎▍▌▋▊▉█"
SPARKS = "▁▂▃▄▅▆▇█"
FULL = "█"
MARK = "│"
BAR_WIDTH = 20


def want_bars(option: bool | None, machine_output: bool = False, stream=None) -> bool:
    """Draw bars? Never beside --json/--csv; else --bars/--no-bars when given; else only
    on a terminal (stdout by default) that is not TERM=dumb."""
    if machine_output:
        return False
    if option is not None:
        return option
    stream = sys.stdout if stream is None else stream
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        tty = False
    return tty and os.environ.get("TERM") != "dumb"


def bar(value: float | None, top: float | None, width: int = BAR_WIDTH) -> str:
    """A bar of value scaled so that top fills width cells (eighth-cell steps); "" for
    nothing to draw (no value, zero, negative, or no scale)."""
    if value is None or top is None or not (value > 0 and top > 0) or width < 1:
        return ""
    if math.isinf(value) or math.isnan(value) or math.isinf(top):
        return ""
    eighths = round(min(value / top, 1.0) * width * 8)
    full, rest = divmod(eighths, 8)
    return FULL * full + (_EIGHTHS[rest - 1] if rest else "")


def log_position(value: float, floor: float, top: float, width: int) -> float:
    """Where value sits, in cells from 0 to width, on a log scale from floor to top."""
    if value <= floor or top <= floor:
        return 0.0
    return min(math.log(value / floor) / math.log(top / floor), 1.0) * width


def log_bar(value: float | None, top: float | None, floor: float,
            mark: float | None = None, width: int = BAR_WIDTH) -> str:
    """A bar of value on a log scale from floor (empty) to top (full width), with MARK
    at mark (e.g. p99 beside a p50 bar) when given: latencies span decades, so a linear
    bar would leave the fast rows empty."""
    if value is None or top is None or not (value > 0 and top > floor > 0):
        return ""
    pos = log_position(value, floor, top, width)
    text = bar(pos, width, width) if pos > 0 else ""
    if mark is not None and mark > 0:
        cell = min(int(log_position(mark, floor, top, width)), width - 1)
        # the mark never hides the bar's end: it goes at least one cell past it
        cell = max(cell, len(text))
        text = text.ljust(cell) + MARK
    return text


def sparkline(values: list[float | None]) -> str:
    """One block per value, scaled from 0 to the largest ( " " for a missing value), so
    that the line's shape shows growth, not the spread between min and max."""
    known = [v for v in values if v is not None and math.isfinite(v)]
    top = max(known, default=0.0)
    out = []
    for v in values:
        if v is None or not math.isfinite(v):
            out.append(" ")
        elif top <= 0 or v <= 0:
            out.append(SPARKS[0])
        else:
            out.append(SPARKS[min(round(v / top * (len(SPARKS) - 1)), len(SPARKS) - 1)])
    return "".join(out)
