#!/usr/bin/env python3
"""`make docs`: regenerate the generated blocks of README.md and docs/.

A generated block sits between two marker comments; everything outside them is
hand-written and never touched:

    <!-- BEGIN generated: options advise -->
    ...
    <!-- END generated -->

Kinds of block (the words after ``generated:``):

- ``options CMD...`` — the options table of a command (``options lab run``), read from
  click: every option and argument, its type or choices, its default and its help;
- ``example NAME`` — the output of a real run (``docs_examples.EXAMPLES``): the command
  and what it printed, or for a JSON example the JSON, trimmed (a list keeps its richest
  element and says how many more there were; the maps an example names keep their first
  entries). After a ``|`` a text example is trimmed to selected lines, clauses separated
  by ``;``: ``head N``, ``tail N``, ``grep REGEX`` (the matching lines), ``block REGEX``
  (from a matching line to the next blank line); a skipped stretch shows as ``...``;
- ``call MODULE:FUNCTION`` — the Markdown a function of the package returns (a table the
  code holds);
- ``chart EXAMPLE CHART`` — a chart of an example's run (its ``--png`` file, the example
  marked ``charts=True``), copied to docs/images/EXAMPLE-CHART.png; the block is the
  Markdown image.

The examples run the installed ``innoflush`` in a temporary world that is gone when the
script ends, servers and containers included (``docs_examples``). Without server
binaries (or without a Docker engine and the offline image, for the Docker example) the
examples that need them keep their committed blocks, and the script says so on stderr.

    scripts/make_docs.py                 every block (several minutes: real runs)
    scripts/make_docs.py --only NAME     the blocks of one example (its prerequisites run
                                         too), or `options`, `options-advise`, `call`
    scripts/make_docs.py --check         the cheap blocks (options tables, call blocks)
                                         are current; runs nothing; exit 1 if one is not
    scripts/make_docs.py --list          the blocks, file by file
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import click

sys.path.insert(0, str(Path(__file__).resolve().parent))
# (trim_json and trim_text are for the tests)
from docs_examples import (  # noqa: E402
    EXAMPLES,
    Env,
    Skip,
    example_env,
    log,
    trim_json,  # noqa: F401
    trim_text,  # noqa: F401
)

ROOT = Path(__file__).resolve().parent.parent

BLOCK_RE = re.compile(r"(<!-- BEGIN generated: (?P<spec>[^>]*?) -->\n)(?P<body>.*?)"
                      r"(<!-- END generated -->)", re.S)


def doc_files() -> list[Path]:
    """README.md and every Markdown page under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


# ---- options tables, from click ----------------------------------------------------------

def cli_root() -> click.Group:
    from innoflush.commands.root import main
    return main


def leaf_commands(group: click.Group | None = None, prefix: tuple[str, ...] = ()
                  ) -> dict[str, click.Command]:
    """Every command a user runs, by its words after `innoflush`: {'lab run': command}."""
    group = group or cli_root()
    out: dict[str, click.Command] = {}
    # list_commands/get_command, not group.commands: the top group loads its commands lazily
    ctx = click.Context(group)
    for name in sorted(group.list_commands(ctx)):
        cmd = group.get_command(ctx, name)
        assert cmd is not None, name
        if isinstance(cmd, click.Group):
            out.update(leaf_commands(cmd, prefix + (name,)))
        else:
            out[" ".join(prefix + (name,))] = cmd
    return out


def help_names(words: str) -> list[str]:
    """The help option's spellings for a command, as its group's context settings give
    them (`-h`, `--help` today)."""
    group: click.Command = cli_root()
    ctx = click.Context(group, info_name="innoflush", **group.context_settings)
    for word in words.split():
        group = group.get_command(ctx, word)  # type: ignore[attr-defined]
        ctx = click.Context(group, info_name=word, parent=ctx, **group.context_settings)
    option = group.get_help_option(ctx)
    return list(option.opts) if option is not None else []


def param_names(param: click.Parameter) -> list[str]:
    """The names a user types: every option spelling, or an argument's metavar."""
    if isinstance(param, click.Argument):
        return [param.metavar or param.human_readable_name.upper()]
    return [*param.opts, *param.secondary_opts]


def _unset(value) -> bool:
    return value is None or type(value).__name__ in ("Sentinel", "_Missing") \
        or repr(value).endswith("UNSET")


def _type_cell(param: click.Parameter) -> str:
    t = param.type
    if isinstance(param, click.Option) and param.is_flag:
        text = "flag" if not param.secondary_opts else "on/off flag"
    elif isinstance(t, click.Choice):
        text = " \\| ".join(f"`{c}`" for c in t.choices)
    elif isinstance(t, click.IntRange):
        lo = "" if t.min is None else str(t.min)
        hi = "" if t.max is None else str(t.max)
        text = f"integer {lo}–{hi}"
    elif isinstance(t, click.FloatRange):
        text = f"number {t.min}–{t.max}"
    elif isinstance(t, click.Path):
        text = "path"
    else:
        text = {"integer": "integer", "float": "number", "boolean": "boolean"}.get(
            t.name.lower(), "text")
    if getattr(param, "multiple", False):
        text += ", repeatable"
    if isinstance(param, click.Argument) and param.nargs == -1:
        text += ", one or more"
    return text


def _default_cell(param: click.Parameter) -> str:
    if param.required:
        return "required"
    value = param.default
    if isinstance(param, click.Option) and param.is_flag:
        if param.secondary_opts and _unset(value):
            return "—"  # neither side: the command decides (--bars: on a terminal)
        on = bool(value) and not _unset(value)
        if param.secondary_opts:
            return f"`{param.opts[0] if on else param.secondary_opts[0]}`"
        return "on" if on else "off"
    if _unset(value):
        return "—"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"`{value}`"


# Options whose click help is empty: what the table says instead (the code's help wins
# once it has one; tests/house/test_docs.py only compares the option names).
MISSING_HELP = {
    "backend": "local: mariadbd/mysqld binaries on this host; docker: a container per run.",
    "buffer_pool": "innodb_buffer_pool_size.",
    "server_options": "Any other server option, NAME=VALUE, repeatable.",
    "port": "Fixed TCP port for the servers (default: a free one per run).",
    "seed": "Workload and simulation seed.",
    "emulate_channels": "1: the emulated syncs share one cache-flush channel, as in the "
                        "model; 0: each thread's syncs are delayed independently.",
    "connections": "Client connections (processes), comma-separated.",
    "flush_method": "innodb_flush_method values, comma-separated.",
    "trx_commit": "innodb_flush_log_at_trx_commit values, comma-separated.",
    "io_capacity": "innodb_io_capacity.",
    "io_capacity_max": "innodb_io_capacity_max.",
    "doublewrite": "innodb_doublewrite.",
    "flavor": "Server flavor.",
    "refs": "Profiles to compare (names or files); the first is the reference.",
    "ref": "A profile: a built-in or saved name, or a JSON file.",
    "file": "A device profile JSON file.",
    "path": "A directory on the storage to measure.",
}


def _help_cell(param: click.Parameter) -> str:
    text = getattr(param, "help", None) or MISSING_HELP.get(param.name or "", "")
    return " ".join(text.split()).replace("|", "\\|")


def options_table(words: str) -> str:
    """The Markdown table of one command's parameters (`words`: 'advise', 'lab run')."""
    cmd = leaf_commands()[words]
    rows = ["| option | type | default | meaning |", "|---|---|---|---|"]
    for param in cmd.params:
        names = [n.replace("|", "\\|") for n in param_names(param)]
        if isinstance(param, click.Option) and param.secondary_opts:
            cell = " / ".join(f"`{n}`" for n in names)
        else:
            cell = ", ".join(f"`{n}`" for n in names)
        if isinstance(param, click.Argument):
            cell += " (argument)"
        rows.append(f"| {cell} | {_type_cell(param)} | {_default_cell(param)} | "
                    f"{_help_cell(param)} |")
    names = help_names(words)
    if names:
        rows.append(f"| {', '.join(f'`{n}`' for n in names)} | flag | off | "
                    "Show the help and exit. |")
    return "\n".join(rows) + "\n"


# ---- blocks ----------------------------------------------------------------------------------

@dataclass
class Block:
    path: Path
    spec: str
    kind: str = field(init=False)
    args: str = field(init=False)
    trim: str = field(init=False)

    def __post_init__(self) -> None:
        head, _, self.trim = self.spec.partition("|")
        self.trim = self.trim.strip()
        self.kind, _, self.args = head.strip().partition(" ")
        self.args = self.args.strip()

    @property
    def name(self) -> str:
        if self.kind == "example":
            return self.args
        return f"{self.kind}-{self.args.replace(' ', '-')}"

    def cheap(self) -> bool:
        return self.kind not in ("example", "chart")

    def matches(self, only: str) -> bool:
        return only in (self.name, self.kind)

    def render(self, env: Env | None) -> str:
        if self.kind == "options":
            return options_table(self.args)
        if self.kind == "call":
            module, _, func = self.args.partition(":")
            return getattr(importlib.import_module(module), func)().rstrip("\n") + "\n"
        if self.kind == "example":
            if self.args not in EXAMPLES:
                raise KeyError(f"{self.path.name}: no example named {self.args!r}")
            assert env is not None
            return env.output(self.args).render(self.trim)
        if self.kind == "chart":
            return self._chart(env)
        raise KeyError(f"{self.path.name}: unknown block kind {self.kind!r}")

    def _chart(self, env: Env | None) -> str:
        import os
        import shutil

        example, _, chart = self.args.partition(" ")
        if example not in EXAMPLES or not EXAMPLES[example].charts:
            raise KeyError(f"{self.path.name}: no example {example!r} with charts=True")
        assert env is not None
        out = env.output(example)
        found = sorted(env.charts_dir(example).glob(f"*-{chart}.png"))
        if not found:
            raise Skip(f"{example} drew no chart {chart!r}")
        target = ROOT / "docs" / "images" / f"{example}-{chart}.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(found[0], target)
        rel = os.path.relpath(target, self.path.parent)
        return f"![{chart} of `innoflush {out.shown[-1]}`]({rel})\n"


def blocks_of(path: Path) -> list[Block]:
    return [Block(path, m.group("spec")) for m in BLOCK_RE.finditer(path.read_text())]


def regenerate(path: Path, select: Callable[[Block], bool], env: Env | None,
               problems: list[str]) -> tuple[str, str]:
    """(old text, new text) of one file with its selected blocks rendered anew."""
    text = path.read_text()

    def replace(m: re.Match) -> str:
        block = Block(path, m.group("spec"))
        if not select(block):
            return m.group(0)
        try:
            body = block.render(env)
        except Skip as exc:
            problems.append(f"kept the committed block `{block.spec}` in "
                            f"{path.relative_to(ROOT)}: {exc}")
            return m.group(0)
        except Exception as exc:  # noqa: BLE001 - reported, the rest goes on
            problems.append(f"FAILED `{block.spec}` in {path.relative_to(ROOT)}: {exc}")
            return m.group(0)
        return m.group(1) + body + m.group(4)

    return text, BLOCK_RE.sub(replace, text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", metavar="NAME", help="regenerate only these blocks")
    ap.add_argument("--check", action="store_true",
                    help="check that the cheap blocks are current; write nothing")
    ap.add_argument("--list", action="store_true", help="list the blocks")
    opts = ap.parse_args(argv)
    files = doc_files()
    if opts.list:
        for path in files:
            for b in blocks_of(path):
                print(f"{path.relative_to(ROOT)}: {b.name}{'' if b.cheap() else ' (runs)'}")
        return 0
    if opts.only:
        names = {b.name for p in files for b in blocks_of(p)} | {b.kind for p in files
                                                                 for b in blocks_of(p)}
        if opts.only not in names:
            log(f"no block named {opts.only!r} (see --list)")
            return 2

    def select(block: Block) -> bool:
        if opts.check:
            return block.cheap()
        return not opts.only or block.matches(opts.only)

    problems: list[str] = []
    stale: list[str] = []
    t0 = time.monotonic()
    try:
        with example_env() as env:
            for path in files:
                old, new = regenerate(path, select, env, problems)
                if old == new:
                    continue
                if opts.check:
                    stale += [f"{path.relative_to(ROOT)}: {b.spec}" for b, ob, nb in
                              zip(blocks_of(path), _bodies(old), _bodies(new), strict=True)
                              if ob != nb]
                else:
                    path.write_text(new)
                    log(f"wrote {path.relative_to(ROOT)}")
    except KeyboardInterrupt:
        log("interrupted: nothing more written; servers and the temporary directory removed")
        return 130
    for p in problems:
        log(p)
    if opts.check:
        for s in stale:
            log(f"stale: {s} (run `make docs`)")
        return 1 if stale or any(p.startswith("FAILED") for p in problems) else 0
    log(f"done in {time.monotonic() - t0:.0f} s")
    return 1 if any(p.startswith("FAILED") for p in problems) else 0


def _bodies(text: str) -> list[str]:
    return [m.group("body") for m in BLOCK_RE.finditer(text)]


if __name__ == "__main__":
    sys.exit(main())
