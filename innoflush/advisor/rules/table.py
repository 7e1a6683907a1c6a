"""The rule table and its walk: ``evaluate(ctx)``.

The table is every entry of every setting family, in evaluation order. Within a family
the first entry whose predicate holds decides, and the rest of the family is skipped —
so a predicate may assume that no earlier entry of its family held (that is how the
situations of one setting exclude each other). An entry is either a Rule (a finding) or
a Check (a note, a cannot-judge line, or silence). Families are independent of each
other; their order fixes the order of the notes and cannot-judge lines.

An ignored rule (``--ignore-rule ID``) still takes its turn and still decides its family:
only its finding is dropped. So ignoring one rule never makes another one fire.
"""

from __future__ import annotations

import difflib

from ...errors import UsageError
from . import commit, doublewrite, flush_method, use_fdatasync
from .model import DURABILITIES, Check, Context, Evaluation, Rule

FAMILIES: tuple[tuple[str, str, tuple[Rule | Check, ...]], ...] = (
    ("flush-method", "innodb_flush_method", flush_method.ENTRIES),
    ("trx-commit", "innodb_flush_log_at_trx_commit", commit.TRX_COMMIT),
    ("sync-binlog", "sync_binlog", commit.SYNC_BINLOG),
    ("use-fdatasync", "innodb_use_fdatasync", use_fdatasync.ENTRIES),
    ("doublewrite", "innodb_doublewrite", doublewrite.ENTRIES),
)
TABLE: tuple[Rule | Check, ...] = tuple(e for _, _, entries in FAMILIES for e in entries)
RULES: tuple[Rule, ...] = tuple(e for e in TABLE if isinstance(e, Rule))
RULE_IDS: tuple[str, ...] = tuple(r.id for r in RULES)


class UnknownRule(UsageError):
    """An --ignore-rule id that names no rule."""


def closest_rule_ids(text: str, n: int = 3) -> list[str]:
    """The known ids nearest to ``text``: a family's ids when it names the family (the
    pre-table ids were the bare family names), else the ``n`` most similar."""
    family = [i for i in RULE_IDS if i.split(".", 1)[0] == text.rstrip(".")]
    return family or difflib.get_close_matches(text, RULE_IDS, n=n, cutoff=0.0)


def check_rule_ids(ids) -> list[str]:
    """The ids, each once, in the order given; UnknownRule for the first unknown one."""
    out: list[str] = []
    for rid in ids:
        if rid not in RULE_IDS:
            raise UnknownRule(f"--ignore-rule {rid!r}: no such rule; closest: "
                              + ", ".join(closest_rule_ids(rid))
                              + " (all ids: docs/advisor-rules.md)")
        if rid not in out:
            out.append(rid)
    return out


def evaluate(ctx: Context, ignore=()) -> Evaluation:
    """Walk the table over ``ctx``: findings (most severe first), notes, cannot-judge.

    ``ignore``: rule ids whose findings are dropped (UnknownRule for an unknown one)."""
    if ctx.durability not in DURABILITIES:
        raise ValueError(f"durability must be one of {DURABILITIES}")
    ev = Evaluation(ignored=check_rule_ids(ignore))
    decided: set[str] = set()
    for entry in TABLE:
        if entry.family in decided or not entry.holds(ctx):
            continue
        decided.add(entry.family)
        if isinstance(entry, Rule):
            if entry.id not in ev.ignored:
                ev.findings.append(entry.finding(ctx))
        elif entry.kind == "note":
            ev.notes.append(entry.text(ctx))
        elif entry.kind == "cannot_judge":
            ev.cannot_judge.append(entry.text(ctx))
    if ctx.device is None:
        ev.cannot_judge.append("predicted effects: no device profile, so nothing to simulate "
                               "(give --profile NAME|FILE or --measure)")
    ev.findings = ev.sorted_findings()
    return ev
