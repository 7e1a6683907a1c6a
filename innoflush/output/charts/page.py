"""The page frame: title, the run's inputs, the charts (inline SVG), the figures (tables or
the text report), in one self-contained HTML file: no script, no external reference, so
it opens the same with the network off. Every value is escaped."""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from matplotlib.figure import Figure

from ... import __version__
from .figure import series_count, to_svg


@dataclass
class Chart:
    name: str            # file-name-safe: the PNG's name and the figure's data-chart
    title: str
    figure: Figure
    caption: str = ""

    @property
    def series(self) -> int:
        return series_count(self.figure)


@dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list]


@dataclass
class Page:
    command: str                     # e.g. "simulate", "lab validate"
    title: str
    inputs: list[tuple[str, object]] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    text: str | None = None          # the command's text report, as printed
    sections: list[tuple[str, list[str]]] = field(default_factory=list)  # heading, lines


CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:70em;padding:0 1em;
color:#222;background:#fff}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f3f3f3}
figure.chart{margin:1em 0}figure.chart svg{max-width:100%;height:auto}
figcaption{font-size:.9em;color:#444}
pre{background:#f7f7f7;padding:.7em;overflow-x:auto;font-size:.8em;line-height:1.3}
footer{margin-top:2em;font-size:.8em;color:#666}
"""


def _e(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, list | tuple):
        return html.escape(", ".join(str(v) for v in value))
    if isinstance(value, float):
        return html.escape(f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.0f}")
    return html.escape(str(value))


def _cell(value: object) -> str:
    cls = ' class="n"' if isinstance(value, int | float) and not isinstance(value, bool) \
        else ""
    return f"<td{cls}>{_e(value)}</td>"


def _table(headers: list[str], rows: list[list]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def chart_html(chart: Chart) -> str:
    caption = f"<figcaption><b>{_e(chart.title)}</b>" + \
        (f" — {_e(chart.caption)}" if chart.caption else "") + "</figcaption>"
    return (f'<figure class="chart" data-chart="{_e(chart.name)}" '
            f'data-series="{chart.series}">{to_svg(chart.figure, chart.name)}{caption}'
            "</figure>")


def render_html(page: Page) -> str:
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{_e(page.title)}</title><style>{CSS}</style></head><body>",
             f"<h1>{_e(page.title)}</h1>"]
    if page.inputs:
        parts.append("<h2>Inputs</h2>" + _table(["input", "value"],
                                                [[k, v] for k, v in page.inputs]))
    for heading, lines in page.sections:
        parts.append(f"<h2>{_e(heading)}</h2><ul>"
                     + "".join(f"<li>{_e(line)}</li>" for line in lines) + "</ul>")
    if page.charts:
        parts.append("<h2>Charts</h2>" + "".join(chart_html(c) for c in page.charts))
    for t in page.tables:
        parts.append(f"<h2>{_e(t.title)}</h2>" + _table(t.headers, t.rows))
    if page.text is not None:
        parts.append(f"<h2>Report</h2><pre>{html.escape(page.text)}</pre>")
    parts.append(f"<footer>innoflush {_e(__version__)} · {_e(page.command)} · "
                 "self-contained page: charts inline as SVG, no script, no network"
                 "</footer></body></html>")
    return "\n".join(parts) + "\n"
