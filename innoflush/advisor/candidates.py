"""The price of every candidate change — the recommended ones and the others.

From the server's current settings, each single-setting alternative the simulator can run:
innodb_flush_log_at_trx_commit (1, 2, 0), innodb_flush_method (the flavor's methods),
sync_binlog (1, 0 with the binary log on) and innodb_use_fdatasync (where the variable
exists). Each gets its predicted effect, whether a finding recommends it, and — when it
gives up safety — what it costs besides speed: a DBA weighing trx_commit=2 under strict
durability, or O_DIRECT_NO_FSYNC on a volatile cache, sees both the gain and why it is not
advised.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..live.facts import ServerFacts
from ..simulator.flavors import get_flavor
from .device import DeviceFacts
from .rules import Finding
from .rules.flush_method_change import method_change


@dataclass
class Candidate:
    id: str
    setting: str
    current: str
    candidate: str
    changes: dict
    unsafe: str | None = None
    advised: bool = False
    finding: str | None = None
    predicted: dict | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        p = self.predicted
        if p is not None:   # the changed side is the candidate's (a finding's: recommended)
            p = {("candidate" if k == "recommended" else k): v for k, v in p.items()}
        return {"id": self.id, "setting": self.setting, "current": self.current,
                "candidate": self.candidate, "changes": self.changes,
                "advised": self.advised, "finding": self.finding, "unsafe": self.unsafe,
                "predicted": p}


def _trx_commit_risk(v: int, f: ServerFacts) -> str | None:
    t = f.flush_log_at_timeout
    if v == 2:
        return (f"an OS crash or power loss loses up to ~{t:g} s of committed transactions "
                "(the redo is written at commit but synced about once per "
                "innodb_flush_log_at_timeout)")
    if v == 0:
        return (f"a mysqld crash alone loses up to ~{t:g} s of committed transactions (the "
                "redo is neither written nor synced at commit)")
    return None


def _method_risk(method: str, f: ServerFacts, d: DeviceFacts | None) -> str | None:
    if method != "O_DIRECT_NO_FSYNC":
        return None
    if d is None:
        return ("the data device's write cache is not known: without an fsync, a write "
                "still in a volatile cache is lost on power loss (measure the device, or "
                "give --profile)")
    if d.verdict == "volatile-cache" or d.o_direct_no_fsync_safe is False:
        return (f"unsafe on {d.title}: its write cache is volatile, and without an fsync "
                "InnoDB's data-file writes are lost on power loss")
    if d.o_direct_no_fsync_safe is not True:
        return (f"not known to be safe on {d.title}: O_DIRECT_NO_FSYNC is safe only where "
                "the write cache is non-volatile (power-loss protection) or off")
    return None


def candidate_changes(f: ServerFacts, device: DeviceFacts | None) -> list[Candidate]:
    """Every single-setting alternative to the current settings that the model runs."""
    out: list[Candidate] = []
    tc = 1 if f.trx_commit == 3 else f.trx_commit
    for v in (1, 2, 0):
        if v != tc:
            out.append(Candidate(f"trx-commit={v}", "innodb_flush_log_at_trx_commit",
                                 str(f.trx_commit), str(v),
                                 {"innodb_flush_log_at_trx_commit": v},
                                 unsafe=_trx_commit_risk(v, f)))
    flavor = get_flavor(f.sim_flavor)
    for m in flavor.flush_methods:
        if m != f.flush_method:
            setting, current, value = "innodb_flush_method", f.flush_method, m
            if f.mariadb11_io_variables:
                # in the variables MariaDB 11 sets (innodb_flush_method is deprecated
                # there): what a DBA would type, as the findings say it
                setting, value = method_change(f, m)[:2]
                current = f"{f.flush_method} ({f.flush_method_source})"
            out.append(Candidate(f"flush-method={m}", setting, current, value,
                                 {"innodb_flush_method": m},
                                 unsafe=_method_risk(m, f, device)))
    if f.log_bin:
        for v in (1, 0):
            if (v == 1) != (f.sync_binlog == 1):
                out.append(Candidate(
                    f"sync-binlog={v}", "sync_binlog", str(f.sync_binlog), str(v),
                    {"sync_binlog": v},
                    unsafe=None if v == 1 else (
                        "a crash can lose binary-log events of transactions InnoDB "
                        "committed: replicas and point-in-time recovery diverge from the "
                        "primary")))
    if flavor.has_use_fdatasync_variable and f.use_fdatasync is not None:
        v = not f.use_fdatasync
        out.append(Candidate(f"use-fdatasync={'ON' if v else 'OFF'}", "innodb_use_fdatasync",
                             "ON" if f.use_fdatasync else "OFF", "ON" if v else "OFF",
                             {"innodb_use_fdatasync": v}))
    return out


def mark_advised(cands: list[Candidate], findings: list[Finding]) -> None:
    """A candidate is advised when a finding recommends exactly its change."""
    for c in cands:
        for fnd in findings:
            if fnd.sim_changes == c.changes:
                c.advised, c.finding = True, fnd.id
                break
