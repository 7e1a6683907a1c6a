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
from dataclasses import dataclass

from ...errors import UsageError
from . import commit, doublewrite, flush_method, redo_log, use_fdatasync
from .model import DURABILITIES, Check, Context, Evaluation, Rule


@dataclass(frozen=True)
class Family:
    """The entries about one setting, in evaluation order; ``intro`` heads its section of
    docs/advisor-rules.md."""

    name: str
    setting: str
    intro: str
    entries: tuple[Rule | Check, ...]


FAMILIES: tuple[Family, ...] = (
    Family("flush-method", "innodb_flush_method",
           "How InnoDB writes and syncs its data files. MariaDB 11 deprecates "
           "innodb_flush_method (MDEV-30136): the advisor reads the effective method from "
           "innodb_doublewrite (`fast` is O_DIRECT_NO_FSYNC, MDEV-33545) and "
           "innodb_data_file_buffering / innodb_data_file_write_through, and its findings "
           "there set those variables instead (the finding's `setting` and my.cnf lines "
           "say which).",
           flush_method.ENTRIES),
    Family("trx-commit", "innodb_flush_log_at_trx_commit",
           "When the redo log is written and synced at commit. The right value depends on "
           "`--durability` (strict: 1, or 3 on MariaDB; relaxed: 2) and on the server's "
           "role: a replica or Galera node can get transactions lost in a crash back.",
           commit.TRX_COMMIT),
    Family("sync-binlog", "sync_binlog",
           "How often the binary log is synced; only with the binary log on. Strict: 1 on "
           "a primary. Relaxed: only a replica or Galera node drops the sync.",
           commit.SYNC_BINLOG),
    Family("flush-log-timeout", "innodb_flush_log_at_timeout",
           "How often the redo log is written and synced when commits do not sync it "
           "(innodb_flush_log_at_trx_commit 0 or 2): the loss window of a crash. It does "
           "not matter at trx_commit=1.",
           redo_log.FLUSH_LOG_TIMEOUT),
    Family("log-file-buffering", "innodb_log_file_buffering",
           "MariaDB only (MDEV-28766): whether the redo log is written through the page "
           "cache (ON) or with O_DIRECT (OFF, the default on Linux; MariaDB turns it ON "
           "when it starts with trx_commit=2).",
           redo_log.LOG_FILE_BUFFERING),
    Family("use-fdatasync", "innodb_use_fdatasync",
           "fdatasync() instead of fsync() for InnoDB's syncs: a variable of MySQL 8.0.26 "
           "and later. MariaDB uses fdatasync wherever it can, with no variable "
           "(MDEV-22177).",
           use_fdatasync.ENTRIES),
    Family("doublewrite", "innodb_doublewrite",
           "The doublewrite buffer: each page-flush batch is written to it first, so a "
           "page torn by a crash can be restored from the copy.",
           doublewrite.ENTRIES),
)
TABLE: tuple[Rule | Check, ...] = tuple(e for fam in FAMILIES for e in fam.entries)
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
