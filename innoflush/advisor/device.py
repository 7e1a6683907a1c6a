"""What the advisor's rules know about the data device: DeviceFacts, read from a device
profile (``--profile``) or a fresh measurement (``--measure``)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field


@dataclass
class DeviceFacts:
    """What the rules need from a device profile (or a fresh measurement)."""

    name: str
    title: str
    source: str                       # "profile" or "measure"
    klass: str | None = None
    plp: str | None = None            # yes | no | unknown | claimed
    verdict: str | None = None        # non-volatile-cache-or-flush-ignored | volatile-cache |
    #                                   write-through | unknown
    o_direct_no_fsync_safe: bool | None = None
    reasons: list[str] = field(default_factory=list)
    filesystem: str | None = None     # first word, lowercase: ext4, xfs, zfs, tmpfs, ...
    fsync_ns: float | None = None     # median sync after a 16 KB O_DIRECT write
    fdatasync_ns: float | None = None
    fsync_exact: bool = False         # False: the figure stands in for another operation
    fdatasync_exact: bool = False
    atomic_writes: bool | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["class"] = d.pop("klass")
        d["fsync_median_us"] = round(self.fsync_ns / 1e3, 2) if self.fsync_ns else None
        d["fdatasync_median_us"] = (round(self.fdatasync_ns / 1e3, 2)
                                    if self.fdatasync_ns else None)
        del d["fsync_ns"], d["fdatasync_ns"]
        return d


_KNOWN_FS = ("ext4", "ext3", "xfs", "zfs", "btrfs", "tmpfs", "f2fs", "nfs", "ext2", "bcachefs",
             "overlay")


def _fs_word(text) -> str | None:
    """The filesystem a profile's free-text 'filesystem' names ('ext4 (discard)' -> ext4),
    or None when it names none or more than one ('ext4 or xfs')."""
    if not text:
        return None
    found = {w for w in re.findall(r"[a-z0-9]+", str(text).lower()) if w in _KNOWN_FS}
    return found.pop() if len(found) == 1 else None


def device_from_profile(profile, source: str = "profile") -> DeviceFacts:
    dev = profile.device or {}
    verdict = profile.plp_verdict or {}
    out = DeviceFacts(name=profile.name, title=profile.title, source=source,
                      klass=dev.get("class"), plp=dev.get("plp"),
                      verdict=verdict.get("verdict"),
                      o_direct_no_fsync_safe=verdict.get("o_direct_no_fsync_safe"),
                      reasons=list(verdict.get("reasons") or []),
                      filesystem=_fs_word(dev.get("filesystem")),
                      atomic_writes=dev.get("atomic_writes"))
    from ..errors import ProfileError
    for op in ("fsync", "fdatasync"):
        try:
            summary, note = profile.resolve("sync", op, 16384, True)
        except ProfileError:
            continue
        setattr(out, f"{op}_ns", summary.median_ns)
        setattr(out, f"{op}_exact", "not in profile" not in note)
    return out


def measured_on_these_disks(profile, facts: dict) -> bool:
    """Whether a profile was measured by innoflush on this host, on the disks under the
    datadir: its verdict already weighed what /sys says of them (measure reads
    write_cache beside timing the flush), so advise keeps it — one verdict for one disk,
    the same as `measure` printed."""
    dev = getattr(profile, "device", None) or {}
    if (profile.provenance or {}).get("kind") != "measured" or not dev.get("disks"):
        return False
    def names(disks: list[dict]) -> set:
        return {(d.get("name"), d.get("serial")) for d in disks}
    return (dev.get("hostname") == facts.get("hostname")
            and names(dev["disks"]) == names(facts.get("disks") or []))


def reconcile_with_sys(device: DeviceFacts, disks: list[dict]) -> str | None:
    """A profile's write-cache verdict against what /sys says of the disks under the
    datadir (the server on this host; measure.facts.gather_facts' ``disks``). When they
    disagree, /sys wins for the safety gate: the device facts are changed in place, and
    the warning to report is returned (None when they agree, or /sys does not tell).

    Only for a profile (``source == "profile"``): a fresh --measure already read /sys."""
    if device.source != "profile":
        return None
    caches = {d.get("name") or "?": d.get("write_cache") for d in disks}
    known = {n: c for n, c in caches.items() if c in ("write back", "write through")}
    if not known:
        return None
    names = ", ".join(f"/sys/block/{n}/queue/write_cache" for n in known)
    said = f"profile {device.name!r} says {device.verdict or 'no verdict'}"
    if any(c == "write back" for c in known.values()):
        if device.o_direct_no_fsync_safe or device.verdict in (
                "non-volatile-cache-or-flush-ignored", "write-through"):
            device.verdict = "volatile-cache"
            device.o_direct_no_fsync_safe = False
            device.reasons.insert(0, f"{names}: write back — the kernel sees a volatile "
                                     f"write cache on the datadir's disk ({said}; /sys "
                                     "wins: measure this disk with --measure to judge "
                                     "it by its flush latency)")
            return (f"the device profile does not match the datadir's disk: {said}, "
                    f"{names} says 'write back'; its write cache is treated as volatile "
                    "(give --measure, or a profile measured on this disk)")
        return None
    if device.verdict == "volatile-cache" or device.o_direct_no_fsync_safe is False:
        virtual = any(_virtual(d) for d in disks)
        device.verdict = "write-through"
        device.o_direct_no_fsync_safe = None if virtual else True
        device.reasons.insert(0, f"{names}: write through — the kernel sees no volatile "
                                 f"write cache and sends no flushes ({said}; /sys wins)")
        return (f"the device profile does not match the datadir's disk: {said}, {names} "
                "says 'write through'; the /sys view is used (give --measure, or a "
                "profile measured on this disk)")
    return None


def _virtual(disk: dict) -> bool:
    return bool(disk.get("virtual") or (disk.get("name") or "").startswith(("vd", "xvd")))
