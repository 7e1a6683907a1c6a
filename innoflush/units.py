"""Parsing and formatting of sizes and durations as users type and read them."""

from __future__ import annotations

import re

from .errors import OptionError

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*$", re.IGNORECASE)
_SIZE_MULT = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def parse_size(text: str | int) -> int:
    """'16k' -> 16384, '2M' -> 2097152; binary multiples, as InnoDB and fio use them."""
    if isinstance(text, int):
        return text
    m = _SIZE_RE.match(str(text))
    if not m:
        raise OptionError(f"not a size: {text!r} (use e.g. 4k, 16k, 2M)")
    value = float(m.group(1)) * _SIZE_MULT[m.group(2).lower()]
    if value != int(value) or value <= 0:
        raise OptionError(f"not a whole positive number of bytes: {text!r}")
    return int(value)


def format_size(n: int) -> str:
    """16384 -> '16k', 2097152 -> '2M', 1000 -> '1000'."""
    for unit, mult in (("G", 1024**3), ("M", 1024**2), ("k", 1024)):
        if n >= mult and n % mult == 0:
            return f"{n // mult}{unit}"
    return str(n)


def parse_list(text: str, convert=str) -> list:
    """'1,4,16' -> [1, 4, 16]; blanks dropped, order and duplicates kept as typed."""
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    if not items:
        raise OptionError(f"empty list: {text!r}")
    out = []
    for item in items:
        try:
            out.append(convert(item))
        except (ValueError, TypeError) as exc:
            why = "not a whole number" if convert is int else exc
            raise OptionError(f"bad list item {item!r} in {text!r}: {why}") from None
    return out


def format_ns(ns: float | None) -> str:
    """Latency for humans: ns in, '25.1 µs' / '18.0 ms' / '1.20 s' out."""
    if ns is None:
        return "-"
    if ns < 1_000:
        return f"{ns:.0f} ns"
    if ns < 1_000_000:
        return f"{ns / 1e3:.1f} µs"
    if ns < 1_000_000_000:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e9:.2f} s"


def format_us_cell(ns: float | None) -> str:
    """Nanoseconds as a table's microseconds, no unit: 1550 -> '1.55', 2920750 -> '2,921'."""
    if ns is None:
        return "-"
    us = ns / 1e3
    if us < 10:
        return f"{us:.2f}"
    if us < 100:
        return f"{us:.1f}"
    return f"{us:,.0f}"
