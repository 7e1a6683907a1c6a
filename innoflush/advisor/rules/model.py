"""The shapes of the rule table: what a rule reads (Context), what it yields (Finding, or a
note / a cannot-judge line), and the table's two kinds of entry (Rule, Check)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from ...live.facts import ServerFacts
from ...live.observed import Observed
from ..device import DeviceFacts

SEVERITIES = ("data-safety", "durability", "performance")
DURABILITIES = ("strict", "relaxed")


@dataclass
class Finding:
    id: str
    severity: str
    setting: str
    current: str
    recommended: str
    why: list[str]
    risk: str
    restart_needed: bool
    my_cnf: list[str]
    set_global: list[str] = field(default_factory=list)   # for dynamic ones; never run
    sim_changes: dict = field(default_factory=dict)        # ServerConfig fields to predict
    predicted: dict | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("sim_changes")
        return d


@dataclass
class Change:
    """A rule builder's result: the Finding without the id and severity, which are the
    rule's own (so a builder cannot disagree with the table about them)."""

    setting: str
    current: str
    recommended: str
    why: list[str]
    risk: str
    restart_needed: bool
    my_cnf: list[str]
    set_global: list[str] = field(default_factory=list)
    sim_changes: dict = field(default_factory=dict)


@dataclass
class Context:
    facts: ServerFacts
    observed: Observed | None = None
    device: DeviceFacts | None = None
    durability: str = "strict"
    datadir_fs: str | None = None          # from /proc/self/mountinfo when local
    doublewrite_same_fs: bool | None = None

    @property
    def filesystem(self) -> str | None:
        return self.datadir_fs or (self.device.filesystem if self.device else None)


@dataclass
class Evaluation:
    findings: list[Finding] = field(default_factory=list)
    cannot_judge: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)   # rule ids left out (--ignore-rule)

    def sorted_findings(self) -> list[Finding]:
        return sorted(self.findings, key=lambda f: SEVERITIES.index(f.severity))


Predicate = Callable[[Context], bool]


@dataclass(frozen=True)
class Rule:
    """One situation that yields a finding.

    ``holds`` may assume that no earlier entry of the same family held (the table is
    walked in order, first match per family). ``summary``, ``recommends``, ``risk`` and
    ``source`` are for docs/advisor-rules.md; the finding's own texts come from ``build``.
    """

    id: str                          # <family>.<situation>, stable: --ignore-rule uses it
    severity: str
    setting: str
    holds: Predicate
    build: Callable[[Context], Change]
    summary: str                     # when it fires
    recommends: str
    risk: str
    source: str

    @property
    def family(self) -> str:
        return self.id.split(".", 1)[0]

    def finding(self, ctx: Context) -> Finding:
        return Finding(id=self.id, severity=self.severity, **vars(self.build(ctx)))


@dataclass(frozen=True)
class Check:
    """A situation that decides a family without a finding: a note (checked, fine), a
    cannot-judge line (what would decide it), or silence (already as recommended)."""

    family: str
    kind: str                        # note | cannot_judge | silent
    holds: Predicate
    text: Callable[[Context], str] | None
    summary: str                     # for the docs' evaluation order


def dev_name(ctx: Context) -> str:
    return f"{ctx.device.title} ({ctx.device.source} {ctx.device.name})" if ctx.device else "?"
