"""docs/advisor-rules.md, generated from the rule table (so the page cannot drift from
the rules): ``render_markdown()`` gives the page, ``main()`` writes it or, with
``--check``, says whether the committed page is current (scripts/advisor_rules_doc.py)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from .model import SEVERITIES, Check, Rule
from .table import FAMILIES, RULES

GENERATOR = "scripts/advisor_rules_doc.py"
DOC_PATH = "docs/advisor-rules.md"

_KIND = {"note": "note", "cannot_judge": "cannot judge", "silent": "silent"}


def _anchor(rule_id: str) -> str:
    """GitHub's anchor for a heading made of the id in backticks."""
    return re.sub(r"[^a-z0-9 _-]", "", rule_id.lower()).replace(" ", "-")


def _entry_line(n: int, entry: Rule | Check) -> str:
    if isinstance(entry, Rule):
        return (f"{n}. finding [`{entry.id}`](#{_anchor(entry.id)}) ({entry.severity})")
    return f"{n}. {_KIND[entry.kind]}: {entry.summary}"


def _rule_section(rule: Rule) -> list[str]:
    return [f"### `{rule.id}`", "",
            f"- **Severity:** {rule.severity}",
            f"- **Setting:** {rule.setting}",
            f"- **Fires when:** {rule.summary}",
            f"- **Recommends:** {rule.recommends}",
            f"- **Risk:** {rule.risk}",
            f"- **Source:** {rule.source}", ""]


def render_markdown() -> str:
    out = [
        "# `innoflush advise` rules", "",
        f"<!-- Generated from innoflush/advisor/rules/ by {GENERATOR}; do not edit by "
        "hand: change the rule table and run the script. -->", "",
        "Every recommendation of `innoflush advise` comes from one rule below. The rule's "
        "id, `<setting-family>.<situation>`, is the finding's `id` in `--json` and the "
        "name `--ignore-rule ID` takes.", "",
        "**How the table is read.** Each setting family lists its entries in evaluation "
        "order. The first entry whose situation holds decides the family — a finding (a "
        "rule), a note, a cannot-judge line, or nothing — and the family's later entries "
        "are not tried: that order is what keeps the situations of one setting apart, so "
        "a rule's \"fires when\" includes \"no earlier entry of its family held\". Families "
        "are independent of each other. Findings are reported most severe first ("
        + ", ".join(SEVERITIES) + "). `--ignore-rule ID` drops that rule's finding; the "
        "rule still decides its family, so no later entry fires in its place. Without a "
        "device profile the report also says it cannot predict the effects.", "",
        "## All rules", "",
        "| id | severity | setting |",
        "|----|----------|---------|",
    ]
    out += [f"| [`{r.id}`](#{_anchor(r.id)}) | {r.severity} | {r.setting} |" for r in RULES]
    out.append("")
    for fam in FAMILIES:
        out += [f"## {fam.setting} (`{fam.name}.*`)", "", fam.intro, "",
                "Evaluation order (the first that holds decides):", ""]
        out += [_entry_line(i + 1, e) for i, e in enumerate(fam.entries)]
        out.append("")
        for entry in fam.entries:
            if isinstance(entry, Rule):
                out += _rule_section(entry)
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str] | None = None, default_path: Path | None = None) -> int:
    """Write the page (0), or with --check compare it (0 current, 1 stale or missing)."""
    ap = argparse.ArgumentParser(
        prog=GENERATOR, description=f"Write {DOC_PATH} from the advisor's rule table.")
    ap.add_argument("path", nargs="?", type=Path, default=default_path,
                    help=f"the page to write or check (default: {DOC_PATH})")
    ap.add_argument("--check", action="store_true",
                    help="do not write: exit 1 when the page differs from the table")
    args = ap.parse_args(argv)
    if args.path is None:
        ap.error("give the page's path")
    page = render_markdown()
    if args.check:
        current = args.path.read_text(encoding="utf-8") if args.path.exists() else None
        if current != page:
            print(f"{args.path} is not what the rule table gives: run {GENERATOR}")
            return 1
        return 0
    args.path.write_text(page, encoding="utf-8")
    return 0
