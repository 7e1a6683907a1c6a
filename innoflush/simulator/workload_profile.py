"""Workload profiles: what a transaction costs, saved as JSON like a device profile.

`innoflush lab calibrate` measures them on a real server; `simulate`, `tps` and
`advise` accept them (`--workload NAME|FILE`). A plain JSON object of Workload keys
(or {"workload": {...}}) is accepted too.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
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
