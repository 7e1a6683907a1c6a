"""Workload profiles: what a transaction costs, saved as JSON like a device profile.

`innoflush lab calibrate` measures them on a real server; `simulate`, `tps` and
`advise` accept them (`--workload NAME|FILE`). A plain JSON object of Workload keys
(or {"workload": {...}}) is accepted too.

A calibration made at several connection counts keeps each count's workload in
``provenance.calibration.by_connections`` (CPU per transaction depends on the
concurrency); ``WorkloadProfile.workload_at`` picks the one for a run, and `simulate`,
`advise` and the lab all go through it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import ProfileError, UsageError
from ..jsonfile import read_json, store_file
from ..profiles.model import NAME_RE
from ..profiles.store import user_home
from .config import Workload

SCHEMA = "innoflush.workload-profile/1"


@dataclass
class WorkloadProfile:
    name: str
    title: str
    workload: Workload
    provenance: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        wl = self.workload.to_dict()
        wl.pop("connections", None)  # a property of the run, not of the transaction
        return {"schema": SCHEMA, "name": self.name, "title": self.title,
                "provenance": self.provenance, "workload": wl, "notes": self.notes}

    def workload_at(self, connections: int) -> tuple[Workload, str]:
        """The Workload for a run at `connections`: the calibration made at that count when
        the profile has one (provenance.calibration.by_connections), else the nearest
        count's, else the profile's workload. Returns (Workload, source text)."""
        by = ((self.provenance or {}).get("calibration") or {}).get("by_connections") or {}
        if by:
            try:
                best = min((int(k) for k in by), key=lambda k: (abs(k - connections), k))
                wl = Workload.from_dict({**by[str(best)], "connections": connections})
            except (KeyError, TypeError, ValueError, UsageError) as exc:
                raise ProfileError(f"workload {self.name}: provenance.calibration."
                                   f"by_connections is not usable ({exc})") from None
            if best == connections:
                return wl, f"{self.name} (calibrated at {best} connection(s))"
            return wl, f"{self.name} (calibrated at {best} connection(s), the nearest)"
        return replace(self.workload, connections=connections), self.name

    def commit_base_ms(self, connections: int | None = None,
                       sleeping: bool = False) -> float | None:
        """The calibration's COMMIT round trip without a sync (ms): the part of a measured
        commit latency that is not the wait for durability (the statement's round trip, the
        server's commit processing and, with more connections than cores, the wait for a
        CPU) — at the calibrated connection count nearest to ``connections``, or the first
        one's; None for a profile without it. ``sleeping``: the commits wait for a sync
        (trx_commit=1), so their threads sleep and are woken each time, as at one
        connection — at least the one-connection round trip then."""
        cal = (self.provenance or {}).get("calibration") or {}
        by = cal.get("commit_base_ms_by_connections") or {}
        base = None
        if connections is not None and by:
            best = min((int(k) for k in by), key=lambda k: (abs(k - connections), k))
            v = by.get(str(best))
            if isinstance(v, int | float):
                base = float(v)
        if base is None:
            v = cal.get("commit_base_ms")
            base = float(v) if isinstance(v, int | float) else None
        one = by.get("1")
        if sleeping and base is not None and isinstance(one, int | float):
            base = max(base, float(one))
        return base

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"

    @classmethod
    def from_dict(cls, d, where: str = "workload") -> WorkloadProfile:
        if not isinstance(d, dict):
            raise ProfileError(f"{where}: a workload is a JSON object")
        if "schema" in d and d["schema"] != SCHEMA:
            raise ProfileError(f"{where}: unknown schema {d['schema']!r} (expected {SCHEMA!r})")
        body = d.get("workload", d if "schema" not in d else None)
        if not isinstance(body, dict):
            raise ProfileError(f"{where}: missing the workload object")
        body = {k: v for k, v in body.items() if k != "connections"}
        try:
            wl = Workload.from_dict(body)
            wl.validate()
        except UsageError as exc:
            raise ProfileError(f"{where}: {exc}") from None
        except TypeError as exc:
            raise ProfileError(f"{where}: {exc}") from None
        name = d.get("name", Path(where).stem if where.endswith(".json") else "workload")
        return cls(name=str(name), title=str(d.get("title", name)), workload=wl,
                   provenance=d.get("provenance", {}) or {}, notes=list(d.get("notes", [])))


def workload_dir() -> Path:
    return user_home() / "workloads"


def load_workload(ref: str) -> WorkloadProfile:
    """A workload profile by file path or by name in the user's store."""
    path = Path(ref)
    if not (ref.endswith(".json") or os.sep in ref or path.is_file()):
        if not NAME_RE.match(ref):
            raise ProfileError(f"not a workload name or file: {ref!r}")
        path = workload_dir() / f"{ref}.json"
        if not path.is_file():
            raise ProfileError(f"unknown workload {ref!r} (looked in {workload_dir()})")
    data = read_json(path, "workload file")
    return WorkloadProfile.from_dict(data, str(path))


def save_workload(profile: WorkloadProfile, overwrite: bool = False) -> Path:
    if not NAME_RE.match(profile.name):
        raise UsageError(f"bad workload name {profile.name!r}: use lowercase letters, "
                         "digits, '.', '_' and '-'")
    return store_file(workload_dir(), profile.name, profile.to_json(), "workload",
                      overwrite)
