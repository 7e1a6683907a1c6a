"""Text that fits the terminal: its width, paragraphs and footnotes wrapped to it, and
tables that give up their prose column, then their columns, before they overflow.

A command's default text output stays within the width (a 300-column table wraps each
of its rows over four lines of an 80-column terminal, where nobody can read it); its
--wide option prints every column and leaves the lines unwrapped, as earlier versions
did. The renderers take ``width=None`` for that: nothing here narrows a line then.
"""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Sequence

# Piped or redirected, with COLUMNS unset: there is no terminal to fit, and 100 columns
# read well in a pager, a mail or a review.
DEFAULT_WIDTH = 100
# Below this a wrapped line holds two or three words: narrower terminals get this width.
MIN_WIDTH = 40
# The fewest columns a prose cell may be given before its column becomes footnotes.
PROSE_MIN = 24


def width(stream=None) -> int:
    """The width to fit: COLUMNS when it is set (a positive integer, as shells export it
    and as a user forces it), else the terminal's when stream (stdout) is one, else
    DEFAULT_WIDTH; never below MIN_WIDTH."""
    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit() and int(env) > 0:
        return max(int(env), MIN_WIDTH)
    stream = sys.stdout if stream is None else stream
    try:
        if stream.isatty():
            return max(os.get_terminal_size(stream.fileno()).columns or DEFAULT_WIDTH,
                       MIN_WIDTH)
    except (AttributeError, ValueError, OSError):  # a closed, captured or unusual stream
        pass
    return DEFAULT_WIDTH


def widest(text: str) -> int:
    """The length of the longest line of text."""
    return max((len(line) for line in text.splitlines()), default=0)


def wrap(text: str, width: int | None, indent: str = "", hang: str | None = None,
         whole: Sequence[str] = ()) -> list[str]:
    """One paragraph as lines of at most width: the first starts with indent, the others
    with hang (default: as many spaces). A word longer than a line (a path, a URL) is
    never cut: it stands alone on a longer line; so is each phrase of whole that is in
    the text (a command and its path, read together). width None: the paragraph on one
    line."""
    if width is None:
        return [indent + text]
    hang = " " * len(indent) if hang is None else hang
    for phrase in whole:   # NUL is not whitespace to textwrap: the phrase is one word
        text = text.replace(phrase, phrase.replace(" ", "\0"))
    lines = textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=hang,
                          break_long_words=False, break_on_hyphens=False) or [indent.rstrip()]
    return [line.replace("\0", " ") for line in lines]


def bullets(items: Sequence[str], width: int | None, bullet: str = "  - ") -> list[str]:
    """A list, one wrapped item per bullet, its next lines under its text."""
    return [line for item in items for line in wrap(str(item), width, bullet)]


def footnotes(notes: Sequence[str], width: int | None, start: int = 1,
              indent: str = "") -> list[str]:
    """Numbered notes, `[1] text`, each wrapped under its text."""
    out: list[str] = []
    for i, note in enumerate(notes, start):
        out += wrap(str(note), width, f"{indent}[{i}] ")
    return out


def fit_lines(lines: Sequence[str], width: int | None) -> list[str]:
    """A report's lines (each may hold several) with those longer than width wrapped,
    each continuing two columns in from its own indent ("  - item" under its item). A
    line within the width, a fitted table's, is kept as it is."""
    out: list[str] = []
    for text in lines:
        for line in str(text).split("\n"):
            if width is None or len(line) <= width:
                out.append(line)
                continue
            indent = line[:len(line) - len(line.lstrip())]
            out += wrap(line.strip(), width, indent, indent + "  ")
    return out


def kv_lines(pairs: Sequence[tuple[str, str]], width: int | None, indent: str = "",
             sep: str = "  ") -> list[str]:
    """Key / value lines, the values in one column, each wrapped in it."""
    if not pairs:
        return []
    key_w = max(len(k) for k, _ in pairs)
    out: list[str] = []
    for k, v in pairs:
        head = f"{indent}{k:<{key_w}}{sep}"
        out += wrap(str(v), width, head, " " * len(head))
    return out


def tabulated(rows: Sequence[Sequence], headers: Sequence[str],
              colalign: Sequence[str] | None = None, tablefmt: str = "simple",
              tight: bool = True, numparse: bool = False) -> str:
    """The table as tabulate draws it (no width check); numparse: numbers aligned on
    their decimal point, else cells as given."""
    import tabulate as tab

    kw = {"colalign": list(colalign)} if colalign and rows else {}
    # tight: no padding of the headers (tabulate's MIN_PADDING, 2 a column by default):
    # a header is as wide as its widest line, which saves two columns a column
    padding = tab.MIN_PADDING
    tab.MIN_PADDING = 0 if tight else padding
    try:
        return tab.tabulate([list(r) for r in rows], headers=list(headers),
                            tablefmt=tablefmt, disable_numparse=not numparse, **kw)
    finally:
        tab.MIN_PADDING = padding


def table(rows: Sequence[Sequence], headers: Sequence[str], width: int | None,
          colalign: Sequence[str] | None = None, prose: int | None = None,
          title: int | Sequence[int] = 0, tablefmt: str = "simple",
          numparse: bool = False) -> str:
    """A table (tabulate, numbers as given) that fits width, else the same figures laid
    out to fit:

    - prose (a column index): a column of sentences (a source, a how) keeps the ones
      that fit the room the other columns leave and gives the others to numbered
      footnotes under the table, `[n]` in their cell (the same sentence is one note);
      with less than PROSE_MIN columns of room it leaves the table for footnotes named
      after it (`[n] header: text`), `[n]` marking the cell before it;
    - still too wide: one block per row (vertical()), the title column(s) heading it.

    A table to fit has headers no wider than their text (multi-line headers, "TPS\\nper
    conn", keep columns narrow). width None: the table as tabulate draws it, however
    wide."""
    text = tabulated(rows, headers, colalign, tablefmt, width is not None, numparse)
    if width is None or widest(text) <= width:
        return text
    if prose is not None and prose > 0:
        keep = [i for i in range(len(headers)) if i != prose]
        align = [colalign[i] for i in keep] if colalign else None
        without = [[r[i] for i in keep] for r in rows]
        room = width - widest(tabulated(without, [headers[i] for i in keep], align, tablefmt,
                                        True, numparse)) - 2
        if room >= PROSE_MIN:
            cut, notes = _long_prose_to_notes(rows, prose, room)
            narrow = tabulated(cut, headers, colalign, tablefmt, True, numparse)
        else:
            cut, notes = _prose_to_notes(rows, prose, " ".join(str(headers[prose]).split()))
            narrow = tabulated(cut, [headers[i] for i in keep], align, tablefmt, True,
                               numparse)
        if widest(narrow) <= width:
            return "\n".join([narrow, *footnotes(notes, width)])
    return vertical(rows, headers, width, title)


def _note(notes: list[str], text: str) -> str:
    """The mark of a footnote, `[n]`, adding it the first time."""
    if text not in notes:
        notes.append(text)
    return f"[{notes.index(text) + 1}]"


def _long_prose_to_notes(rows: Sequence[Sequence], prose: int, room: int
                         ) -> tuple[list[list], list[str]]:
    notes: list[str] = []
    cut = []
    for r in rows:
        row = list(r)
        text = str(row[prose] or "").strip()
        if len(text) > room:
            row[prose] = _note(notes, text)
        cut.append(row)
    return cut, notes


def _prose_to_notes(rows: Sequence[Sequence], prose: int, label: str
                    ) -> tuple[list[list], list[str]]:
    """The column out of the table: each note says which column it was (its header)."""
    notes: list[str] = []
    cut = []
    for r in rows:
        row = list(r)
        text = str(row.pop(prose) or "").strip()
        if text:
            mark = _note(notes, f"{label}: {text}" if label else text)
            row[prose - 1] = f"{row[prose - 1]} {mark}"
        cut.append(row)
    return cut, notes


def _block_title(cells: list[str], names: list[str], title: int | Sequence[int]) -> str:
    if isinstance(title, int):
        return cells[title].strip() if title < len(cells) else ""
    return ", ".join(f"{names[i]} {cells[i].strip()}".strip() for i in title
                     if i < len(cells) and cells[i].strip())


def vertical(rows: Sequence[Sequence], headers: Sequence[str], width: int | None,
             title: int | Sequence[int] = 0) -> str:
    """One block per row: its title cell — or, title a sequence of columns, those that
    tell the row apart, `name value, ...` — then `name: value` lines (a value wrapped
    under itself), a blank line between blocks. A row whose title cells are empty
    continues the block above (a test's second call, say); empty cells are left out."""
    names = [" ".join(str(h).split()) for h in headers]
    in_title = {title} if isinstance(title, int) else set(title)
    out: list[str] = []
    for r in rows:
        cells = [str(c) if c is not None else "" for c in r]
        head = _block_title(cells, names, title)
        if head:
            if out:
                out.append("")
            out += wrap(head, width)
        for i, (name, value) in enumerate(zip(names, cells, strict=False)):
            if i in in_title or not value.strip():
                continue
            label = f"  {name}: " if name else "  "
            out += wrap(value.strip(), width, label, "    ")
    return "\n".join(out)
