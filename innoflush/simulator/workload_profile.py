"""Workload profiles: what a transaction costs, saved as JSON like a device profile.

`innoflush lab calibrate` measures them on a real server; `simulate`, `tps` and
`advise` accept them (`--workload NAME|FILE`). A plain JSON object of Workload keys
(or {"workload": {...}}) is accepted too. A name is looked up in the user's store
first, then among the built-in profiles (innoflush/simulator/builtin), which ship like
the built-in device profiles; `simulate` and `tps` use DEFAULT_WORKLOAD, a built-in one
measured on a real server, when the user names none.

A calibration made at several connection counts keeps each count's workload in
``provenance.calibration.by_connections`` (CPU per transaction depends on the
concurrency); ``WorkloadProfile.workload_at`` picks the one for a run, and `simulate`,
`advise` and the lab all go through it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

from ..errors import ProfileError, UsageError
from ..jsonfile import read_json, store_file
from ..profiles.model import NAME_RE
from ..profiles.store import user_home
from .config import Workload

SCHEMA = "innoflush.workload-profile/1"
# What `simulate` and `tps` use when no --workload is given: a plain insert workload
# measured on a real server (its provenance says where and how).
DEFAULT_WORKLOAD = "insert-2vcpu"


@dataclass
class WorkloadProfile:
    name: str
    title: str
    workload: Workload
    provenance: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # where it was loaded from: "built-in", "saved" (the user's store), "file" or ""
    # (made in memory); not part of the JSON
    origin: str = field(default="", compare=False)
    path: str = field(default="", compare=False)   # the file it was read from, if any

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


def builtin_workload_names() -> list[str]:
    root = resources.files("innoflush.simulator") / "builtin"
    return sorted(p.name[:-5] for p in root.iterdir() if p.name.endswith(".json"))


def saved_workload_names() -> list[str]:
    d = workload_dir()
    return sorted(p.stem for p in d.glob("*.json")) if d.is_dir() else []


def load_builtin_workload(name: str) -> WorkloadProfile:
    res = resources.files("innoflush.simulator") / "builtin" / f"{name}.json"
    if not res.is_file():
        raise ProfileError(f"no built-in workload {name!r}")
    try:
        data = json.loads(res.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ProfileError(f"built-in workload {name}: not valid JSON ({exc})") from None
    wp = WorkloadProfile.from_dict(data, f"built-in workload {name}")
    wp.origin = "built-in"
    return wp


def default_workload() -> WorkloadProfile:
    """The built-in workload `simulate` and `tps` use when none is given (never a saved
    one of the same name: the default is the same on every host)."""
    return load_builtin_workload(DEFAULT_WORKLOAD)


def load_workload(ref: str) -> WorkloadProfile:
    """A workload profile by file path, by name in the user's store, or by built-in name
    (in that order: a saved profile of the same name shadows the built-in one)."""
    path = Path(ref)
    if ref.endswith(".json") or os.sep in ref or path.is_file():
        origin = "file"
    else:
        if not NAME_RE.match(ref):
            raise ProfileError(f"not a workload name or file: {ref!r}")
        path = workload_dir() / f"{ref}.json"
        origin = "saved"
        if not path.is_file():
            if ref in builtin_workload_names():
                return load_builtin_workload(ref)
            saved = saved_workload_names()
            raise ProfileError(
                f"unknown workload {ref!r} (built-in: {', '.join(builtin_workload_names())}; "
                f"saved in {workload_dir()}: {', '.join(saved) if saved else 'none'})")
    data = read_json(path, "workload file")
    wp = WorkloadProfile.from_dict(data, str(path))
    wp.origin, wp.path = origin, str(path)
    return wp


def workload_source(wp: WorkloadProfile) -> str:
    """One line saying which workload a prediction used and where it comes from: for a
    built-in one its measurement (provenance.summary) and how to use one's own."""
    if wp.origin == "built-in":
        summary = (wp.provenance or {}).get("summary") or wp.title
        return (f"{wp.name} (built-in: {summary}; a workload of your own: "
                "`innoflush lab calibrate --save NAME`, then --workload NAME)")
    if wp.origin in ("saved", "file"):
        return f"{wp.name} ({wp.path})"
    return wp.name


def save_workload(profile: WorkloadProfile, overwrite: bool = False) -> Path:
    if not NAME_RE.match(profile.name):
        raise UsageError(f"bad workload name {profile.name!r}: use lowercase letters, "
                         "digits, '.', '_' and '-'")
    return store_file(workload_dir(), profile.name, profile.to_json(), "workload",
                      overwrite)
