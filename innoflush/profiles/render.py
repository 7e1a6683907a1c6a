"""Tables for `innoflush profiles ...`, and the data behind them (what --json prints).

Latencies are shown in microseconds. A figure is the distribution's p50 when the profile
has quantiles, else its mean, marked ``*`` (the source published only a mean). A figure
that DeviceProfile.resolve had to stand in from another test (another size, fsync for
fdatasync, a whole write+sync for the sync alone, ...) is marked ``†``; --json gives the
substitution note.
"""

from __future__ import annotations

import textwrap

from tabulate import tabulate

from ..errors import ProfileError
from ..stats import QUANTILE_FIELDS, SHAPE_MEAN_ONLY, LatencySummary
from ..terminal import table as fit_table
from ..terminal import tabulated, widest
from ..units import format_size, format_us_cell
from .model import COMPONENTS, OPS, DeviceProfile, TestKey

MEAN_ONLY_MARK = "*"
STAND_IN_MARK = "†"
LEGEND = (f"µs; {MEAN_ONLY_MARK} mean only (no distribution published), "
          f"{STAND_IN_MARK} stood in from another test (see --json for how), - unknown")
WIDTH = 100   # what --wide wraps the prose at (the renderers' width=None)


# ---- figures ------------------------------------------------------------------------------
def _round_us(ns: float) -> float:
    return round(ns / 1e3, 3)


def figure(profile: DeviceProfile, component: str, op: str, write_bytes: int,
           direct: bool = True, jobs: int = 1) -> dict | None:
    """The figure a table shows for one resolved distribution, or None if nothing fits."""
    try:
        summary, note = profile.resolve(component, op, write_bytes, direct, jobs)
    except ProfileError:
        return None
    # a mean-only distribution (or one without its p50) is shown by its mean
    p50 = None if summary.shape == SHAPE_MEAN_ONLY else summary.p50_ns
    ns = summary.mean_ns if p50 is None else p50
    return {"us": _round_us(ns), "stat": "mean" if p50 is None else "p50",
            "mean_only": summary.shape == SHAPE_MEAN_ONLY, "stood_in": bool(note),
            "note": note, "_ns": ns}


def cell(fig: dict | None) -> str:
    if fig is None:
        return "-"
    return (format_us_cell(fig["_ns"]) + (MEAN_ONLY_MARK if fig["stat"] == "mean" else "")
            + (STAND_IN_MARK if fig["stood_in"] else ""))


def _public(fig: dict | None) -> dict | None:
    return None if fig is None else {k: v for k, v in fig.items() if not k.startswith("_")}


def _test_label(op: str, size: int, direct: bool, jobs: int) -> str:
    label = f"{op} {format_size(size)} {'O_DIRECT' if direct else 'buffered'}"
    return label + (f" ×{jobs} jobs" if jobs != 1 else "")


def _table(rows: list[list[str]], headers: list[str], right_from: int) -> str:
    align = ["left"] * right_from + ["right"] * (len(headers) - right_from)
    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True,
                    colalign=align)


# ---- list ---------------------------------------------------------------------------------
TITLE_WIDTH = 40


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def list_entry(profile: DeviceProfile, origin: str, shadows_builtin: bool = False) -> dict:
    """One row of `profiles list`; the keys are those of `profiles list --json`."""
    fs = figure(profile, "sync", "fsync", 16384)
    fds = figure(profile, "sync", "fdatasync", 16384)
    return {
        "name": profile.name,
        "title": profile.title,
        "class": profile.device.get("class"),
        "plp": profile.device.get("plp"),
        "fsync_16k": _public(fs),
        "fdatasync_16k": _public(fds),
        "source": profile.provenance.get("kind"),
        "origin": origin,
        "shadows_builtin": shadows_builtin,
        "_cells": (cell(fs), cell(fds)),
    }


def list_json(entries: list[dict]) -> list[dict]:
    return [{k: v for k, v in e.items() if not k.startswith("_")} for e in entries]


def _store(e: dict) -> str:
    return e["origin"] + (" (shadows built-in)" if e["shadows_builtin"] else "")


def render_list(entries: list[dict], width: int | None = None) -> str:
    """The table; a "store" column appears when there are user profiles to tell apart.
    width None (--wide): every column; else name, title (cut to the room the other
    columns leave), PLP and the two sync figures."""
    with_store = any(e["origin"] != "built-in" for e in entries)
    foot = f"fsync/fdatasync after a 16 KB O_DIRECT write, {LEGEND}."
    if width is not None:
        table = _narrow_list(entries, with_store, width)
        return f"{table}\n\n" + "\n".join(textwrap.wrap(foot, width)) + "\n"
    rows = []
    for e in entries:
        row = [e["name"], _clip(e["title"], TITLE_WIDTH), e["class"] or "-", e["plp"] or "-",
               e["_cells"][0], e["_cells"][1], e["source"] or "-"]
        if with_store:
            row.append(_store(e))
        rows.append(row)
    headers = ["name", "title", "class", "PLP", "fsync 16k", "fdatasync 16k", "source"]
    headers += ["store"] if with_store else []
    table = tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True,
                     colalign=["left"] * 4 + ["right"] * 2 + ["left"] * (len(headers) - 6))
    return f"{table}\n\n" + "\n".join(textwrap.wrap(foot, WIDTH)) + "\n"


def _narrow_list(entries: list[dict], with_store: bool, width: int) -> str:
    headers = ["name", "PLP", "fsync\n16k", "fdatasync\n16k"] + (["store"] if with_store
                                                                  else [])
    rows = [[e["name"], e["plp"] or "-", e["_cells"][0], e["_cells"][1]]
            + ([_store(e)] if with_store else []) for e in entries]
    align = ["left", "left", "right", "right"] + ["left"] * with_store
    # the title takes what the other columns leave (a name alone says little)
    room = width - widest(tabulated(rows, headers, align)) - 2
    title_w = max(12, min(TITLE_WIDTH, room))
    for row, e in zip(rows, entries, strict=True):
        row.insert(1, _clip(e["title"], title_w))
    return fit_table(rows, [headers[0], "title", *headers[1:]], width, [align[0], "left",
                                                                         *align[1:]])


# ---- show ---------------------------------------------------------------------------------
def _kv_block(title: str, d: dict, wrap_at: int = WIDTH) -> list[str]:
    lines = [title]
    if not d:
        return lines + ["  -"]
    width = max(len(str(k)) for k in d) + 2
    for k, v in d.items():
        values = v if isinstance(v, list) else [v]
        for i, item in enumerate(values):
            text = "-" if item is None else str(item).lower() if isinstance(item, bool) \
                else str(item)
            key = str(k).replace("_", " ") if i == 0 else ""
            wrapped = textwrap.wrap(text, wrap_at - width - 2) or [""]
            lines.append(f"  {key:<{width}}{wrapped[0]}")
            lines += [f"  {'':<{width}}{w}" for w in wrapped[1:]]
    return lines


def _summary_cells(s: LatencySummary) -> list[str]:
    mark = MEAN_ONLY_MARK if s.shape == SHAPE_MEAN_ONLY else ""
    cells = ["-" if not s.count else f"{s.count:,}", format_us_cell(s.mean_ns) + mark]
    cells += [format_us_cell(getattr(s, name)) for name, _p in QUANTILE_FIELDS[1:]]
    return cells


# the columns of the default tests table (by index in _SHOW_HEADERS): the figure a
# simulation draws on and its tail; --wide adds ops/s, p90, p99.9 and max
_SHOW_HEADERS = ["#", "test", "part", "count", "ops/s", "mean", "p50", "p90", "p99", "p99.9",
                 "max", "source"]
_SHOW_ALIGN = ["right", "left", "left"] + ["right"] * 8 + ["left"]
_SHOW_NARROW = (0, 1, 2, 3, 5, 6, 8, 11)


def render_show(profile: DeviceProfile, width: int | None = None) -> str:
    """The profile: provenance, device, PLP verdict, its tests and their notes; width None
    (--wide): every column of the tests, the prose wrapped at WIDTH."""
    at = width or WIDTH
    out = [f"{profile.name}: {profile.title}", ""]
    out += _kv_block("Provenance", profile.provenance, at)
    out += [""] + _kv_block("Device", profile.device, at)
    v = profile.plp_verdict
    out.append("")
    if v:
        safe = {True: "yes", False: "no", None: "unknown"}.get(v.get("o_direct_no_fsync_safe"),
                                                               "unknown")
        verdict = (f"PLP verdict: {v.get('verdict', 'unknown')} "
                   f"(O_DIRECT without fsync safe: {safe})")
        out += [verdict] if width is None else textwrap.wrap(verdict, width,
                                                              subsequent_indent="  ")
        for r in v.get("reasons", []):
            out += textwrap.wrap(str(r), at, initial_indent="  - ", subsequent_indent="    ")
    else:
        out.append("PLP verdict: none recorded")
    rows, notes = _show_rows(profile)
    title = f"Tests (µs; {MEAN_ONLY_MARK} mean only: no distribution published; - unknown)"
    if width is None:
        tests = tabulate(rows, headers=_SHOW_HEADERS, tablefmt="simple", disable_numparse=True,
                         colalign=_SHOW_ALIGN)
    else:
        tests = fit_table([[r[i] for i in _SHOW_NARROW] for r in rows],
                          [_SHOW_HEADERS[i] for i in _SHOW_NARROW], width,
                          [_SHOW_ALIGN[i] for i in _SHOW_NARROW], title=1)
    out += ["", *textwrap.wrap(title, at), tests]
    if notes:
        out += ["", "Notes"]
        for i, n in enumerate(notes, 1):
            out += textwrap.wrap(n, at, initial_indent=f"  [{i}] ",
                                 subsequent_indent=" " * (len(str(i)) + 5))
    return "\n".join(out) + "\n"


def _show_rows(profile: DeviceProfile) -> tuple[list[list[str]], list[str]]:
    """A row per part of each test, the test's figures on its first; its note numbered."""
    rows, notes = [], []
    for t in profile.tests:
        ref = ""
        if t.note:
            notes.append(t.note)
            ref = str(len(notes))
        first = True
        for comp in COMPONENTS:
            s = t.component(comp)
            if s is None:
                continue
            label = _test_label(t.op, t.write_bytes, t.direct, t.jobs) if first else ""
            ops = f"{t.ops_per_s:,.0f}" if (first and t.ops_per_s is not None) else \
                ("-" if first else "")
            rows.append([ref if first else "", label, comp, *_summary_cells(s)[:1], ops,
                         *_summary_cells(s)[1:], t.source if first else ""])
            first = False
    return rows, notes


# ---- compare ------------------------------------------------------------------------------
def _keys(profiles: list[DeviceProfile]) -> list[TestKey]:
    keys = {t.key for p in profiles for t in p.tests}
    return sorted(keys, key=lambda k: (OPS.index(k.op), k.write_bytes, not k.direct, k.jobs))


def _parts(key: TestKey, profiles: list[DeviceProfile]) -> list[str]:
    parts = ["write"] if key.op == "none" else ["sync", "write"]
    if any((t := p.find(key)) is not None and t.total is not None for p in profiles):
        parts.append("total")
    return parts


def compare_data(profiles: list[DeviceProfile]) -> dict:
    """Per (op, size, direct, jobs) and part, each profile's figure and its ratio to the
    first profile's; the keys are those of `profiles compare --json`."""
    rows = []
    for key in _keys(profiles):
        for part in _parts(key, profiles):
            figs = [figure(p, part, key.op, key.write_bytes, key.direct, key.jobs)
                    for p in profiles]
            base = figs[0]["_ns"] if figs[0] is not None else None
            values = []
            for p, f in zip(profiles, figs, strict=True):
                ratio = None
                if f is not None and base:
                    ratio = round(f["_ns"] / base, 6)
                values.append({"profile": p.name, "figure": _public(f), "ratio_to_first": ratio,
                               "_cell": cell(f)})
            rows.append({"op": key.op, "write_bytes": key.write_bytes, "direct": key.direct,
                         "jobs": key.jobs, "part": part, "values": values})
    return {"profiles": [p.name for p in profiles], "rows": rows}


def compare_json(data: dict) -> dict:
    rows = [{**r, "values": [{k: v for k, v in val.items() if not k.startswith("_")}
                             for val in r["values"]]} for r in data["rows"]]
    return {"profiles": data["profiles"], "rows": rows}


def _ratio(r: float | None) -> str:
    if r is None:
        return "-"
    return f"{r:.2g}×" if r < 0.1 else f"{r:,.2f}×" if r < 100 else f"{r:,.0f}×"


def render_compare(data: dict, width: int | None = None) -> str:
    """Each profile's figure per test and part, and its ratio to the first's. To fit width,
    the ratios go first (the footnote says so), then the table becomes one block per test;
    width None (--wide): the whole table, the footnote wrapped at WIDTH."""
    names = data["profiles"]
    headers = ["test", "part"]
    for i, n in enumerate(names):
        headers.append(n)
        if i:
            headers.append("ratio")
    rows = []
    last = None
    for r in data["rows"]:
        label = _test_label(r["op"], r["write_bytes"], r["direct"], r["jobs"])
        row = [label if label != last else "", r["part"]]
        last = label
        for i, v in enumerate(r["values"]):
            row.append(v["_cell"])
            if i:
                row.append(_ratio(v["ratio_to_first"]))
        rows.append(row)
    foot = f"p50, else the mean ({LEGEND})."
    ratios = True
    if width is None:
        table = _table(rows, headers, 2)
    else:
        table, ratios = _narrow_compare(rows, headers, width)
        if len(names) > 1 and not ratios:
            foot += " The ratios to the first profile: --wide, or a wider terminal."
    if len(names) > 1 and (width is None or ratios):
        foot += f" ratio: the figure over {names[0]}'s."
    title = "latency per operation, µs (p50, else the mean)"
    return ("\n".join(textwrap.wrap(title, width or WIDTH)) + "\n\n" + table + "\n\n"
            + "\n".join(textwrap.wrap(foot, width or WIDTH)) + "\n")


def _narrow_compare(rows: list[list[str]], headers: list[str], width: int
                    ) -> tuple[str, bool]:
    """The table as it fits: all of it, else without the ratio columns, else one block per
    test; and whether the ratios are in it."""
    align = ["left"] * 2 + ["right"] * (len(headers) - 2)
    text = tabulated(rows, headers, align)
    if widest(text) <= width:
        return text, True
    keep = [i for i, h in enumerate(headers) if h != "ratio"]
    return fit_table([[r[i] for i in keep] for r in rows], [headers[i] for i in keep], width,
                     [align[i] for i in keep]), False


__all__ = ["LEGEND", "MEAN_ONLY_MARK", "STAND_IN_MARK", "cell", "compare_data", "compare_json",
           "figure", "list_entry", "list_json", "render_compare", "render_list",
           "render_show"]
