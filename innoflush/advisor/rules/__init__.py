"""The advisor's rules as a table: server facts + observed deltas + device → findings.
Pure functions, no I/O.

Each rule is one situation with a stable id ``<setting-family>.<situation>`` (e.g.
``flush-method.no-fsync-on-volatile-cache``), a severity, the setting it concerns, a
predicate and a builder of its Finding (why, risk, restart, my.cnf lines), plus the
summary and source that docs/advisor-rules.md is generated from (rules/doc.py). Checks
beside the rules add what could not be decided without a device profile to
``cannot_judge``, and what was checked and found fine to ``notes``. How the table is
walked (first match per family) and what ignoring a rule does: rules/table.py.

Modules: model (the shapes), flush_method, commit (trx-commit, sync-binlog),
use_fdatasync, doublewrite (each family's entries in order), o_direct_no_fsync (when
O_DIRECT_NO_FSYNC is safe and worth it), flush_method_change (how a change of flush
method is written on the server), table (the walk), doc (the generated page).
"""

from __future__ import annotations

from ..device import DeviceFacts, device_from_profile
from .flush_method_change import method_change
from .model import (
    DURABILITIES,
    SEVERITIES,
    Change,
    Check,
    Context,
    Evaluation,
    Finding,
    Rule,
)
from .o_direct_no_fsync import no_fsync_fix_present
from .table import (
    FAMILIES,
    RULE_IDS,
    RULES,
    TABLE,
    Family,
    UnknownRule,
    check_rule_ids,
    closest_rule_ids,
    evaluate,
)

__all__ = [
    "DURABILITIES", "FAMILIES", "RULES", "RULE_IDS", "SEVERITIES", "TABLE", "Change", "Check",
    "Context", "DeviceFacts", "Evaluation", "Family", "Finding", "Rule", "UnknownRule",
    "check_rule_ids", "closest_rule_ids", "device_from_profile", "evaluate", "method_change",
    "no_fsync_fix_present",
]
