"""matplotlib without pyplot's global state: a Figure, its series tagged, out as SVG or PNG.

A series is tagged by the ``gid`` of its artists: ``series-<i>`` on a line or a scatter,
``series-<i>.<j>`` on the j-th bar of a bar series (matplotlib draws each bar as its own
patch). The SVG keeps the gid as the element's id, so the series can be counted in the
page itself; series_count() counts them on the Figure.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable

import matplotlib
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

matplotlib.use("Agg")   # never a GUI backend, also when a display is set

_SERIES_RE = re.compile(r"^series-(\d+)(?:\.\d+)?$")
# the page's sizes: wide enough for a legend beside the plot, small enough for a laptop
WIDTH_IN, HEIGHT_IN = 8.0, 4.2
PNG_DPI = 100
# the band lab charts draw around predicted = measured
BAND = 0.15


def new_figure(height: float = HEIGHT_IN) -> tuple[Figure, object]:
    """A Figure with one Axes (a grid, the legend left to the caller)."""
    fig = Figure(figsize=(WIDTH_IN, height), layout="constrained")
    ax = fig.add_subplot()
    ax.grid(True, which="major", alpha=0.3)
    return fig, ax


def tag(artists, index: int) -> None:
    """Tag a line, a scatter or a bar container as series `index`."""
    if hasattr(artists, "patches"):            # BarContainer
        for j, patch in enumerate(artists.patches):
            patch.set_gid(f"series-{index}.{j}")
        return
    if isinstance(artists, Iterable) and not hasattr(artists, "set_gid"):
        for a in artists:
            a.set_gid(f"series-{index}")
        return
    artists.set_gid(f"series-{index}")


def log_axis(ax, which: str = "x", base: float = 10) -> None:
    """A log axis labelled with plain numbers (2,000 rather than 2×10³), majors only."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log", base=base)
    if base == 10:   # 1-2-5 labels: a range under a decade still gets a few
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:,.6g}"))
    axis.set_minor_formatter(NullFormatter())


def pad_log_limits(ax, values, which: str = "x", factor: float = 1.6) -> None:
    """Room around the extreme values on a log axis, so no point sits on the frame."""
    vals = [v for v in values if v and v > 0]
    if vals:
        (ax.set_xlim if which == "x" else ax.set_ylim)(min(vals) / factor, max(vals) * factor)


def series_count(fig: Figure) -> int:
    """How many series the chart holds (distinct tagged indices)."""
    seen = set()
    for artist in fig.findobj():
        m = _SERIES_RE.match(artist.get_gid() or "")
        if m:
            seen.add(int(m.group(1)))
    return len(seen)


def empty_note(ax, text: str) -> None:
    """Say in the plot why it has nothing to show (instead of empty axes)."""
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def to_svg(fig: Figure, name: str) -> str:
    """The chart as an SVG fragment for inline use: no XML prolog, no DOCTYPE; the ids
    matplotlib makes up (clip paths, glyphs) salted with the chart's name so that two
    charts on one page never share one, and no date (the same run, the same page)."""
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": name, "svg.fonttype": "path"}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    start = text.find("<svg")
    # glyph ids are named after the font, not salted: prefix them with the chart's name
    body = text[start:]
    body = re.sub(r'id="(DejaVuSans[-\w]*)"', rf'id="{name}-\1"', body)
    body = re.sub(r'href="#(DejaVuSans[-\w]*)"', rf'href="#{name}-\1"', body)
    return body


def to_png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=PNG_DPI, metadata={"Software": None})
    return buf.getvalue()
