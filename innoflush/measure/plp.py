"""Does the device's write cache survive a power loss? A verdict from facts and figures.

A pure function of the device facts (see facts.py) and the measured p50 of a small
(16 KiB) write's fsync/fdatasync. No I/O, so every rule is unit-tested. The built-in
profiles' verdicts (scripts/build_builtin_profiles.py: ``published_verdict``, from the
published means and what the sources say) use the same verdicts, thresholds and wording.

The returned dict (``plp_verdict`` in ``innoflush measure --json`` and in a saved profile):

- ``verdict``: one of
  ``"non-volatile-cache-or-flush-ignored"`` (flushes return in tens of µs: a cache that
  survives power loss — PLP, battery/flash-backed controller — or a layer that does not
  pass flushes to media, e.g. a VM host or a lying device; both look the same from here),
  ``"volatile-cache"`` (write-back cache and flushes that cost milliseconds: no PLP),
  ``"write-through"`` (the kernel sees no volatile cache and sends no flushes),
  ``"unknown"``.
- ``o_direct_no_fsync_safe``: true / false / null (null: cannot be told from here).
- ``reasons``: sentences citing the facts and figures behind the verdict.
- ``basis``: the measurement used ("16k O_DIRECT, jobs 1"), or null.
"""

from __future__ import annotations

from typing import NamedTuple

from ..units import format_ns, format_size

NON_VOLATILE = "non-volatile-cache-or-flush-ignored"
VOLATILE = "volatile-cache"
WRITE_THROUGH = "write-through"
UNKNOWN = "unknown"
VERDICTS = (NON_VOLATILE, VOLATILE, WRITE_THROUGH, UNKNOWN)

# The thresholds come from the published ranges (reference/published_sync_latency.csv):
# devices with a protected cache flush in ~1-60 µs, devices that empty a volatile cache
# take ~0.5-10 ms.
# A flush that returns faster than this did not empty a volatile cache to flash or disk.
FAST_FLUSH_NS = 100_000
# A flush at least this slow is the cost of writing a volatile cache out to media.
SLOW_FLUSH_NS = 500_000
# What a flush costs where the cache survives power loss, as a reason says it.
PROTECTED_FLUSH = "devices with a protected cache flush in ~1–60 µs"
BASIS_SIZE = 16 * 1024

_NO_FLUSH_OPTIONS = ("nobarrier", "barrier=0")


def _verdict(verdict: str, safe: bool | None, reasons: list[str], basis: str | None) -> dict:
    return {"verdict": verdict, "o_direct_no_fsync_safe": safe, "reasons": reasons,
            "basis": basis}


def _mount_options(facts: dict) -> list[str]:
    opts: list[str] = []
    for key in ("mount_options", "super_options"):
        opts += [o.strip() for o in (facts.get(key) or "").split(",") if o.strip()]
    return opts


class _Disks(NamedTuple):
    """What the facts say about the disks under the filesystem."""

    names: str                      # "nvme0n1, sda", for the reasons
    caches: list[str | None]        # each disk's write_cache as the kernel reports it
    rotational: list[bool | None]
    virtual: bool                   # a virtio/Xen disk: the host decides what a flush does


def _disks(facts: dict) -> _Disks:
    disks = facts.get("disks") or []
    return _Disks(names=", ".join(d.get("name") or "?" for d in disks),
                  caches=[d.get("write_cache") for d in disks],
                  rotational=[d.get("rotational") for d in disks],
                  virtual=any(d.get("virtual") or (d.get("name") or "").startswith(("vd", "xvd"))
                              for d in disks))


def plp_verdict(facts: dict, fsync_p50_ns: float | None, fdatasync_p50_ns: float | None,
                basis: str | None = "16k O_DIRECT, jobs 1") -> dict:
    """The verdict for a device with these facts and these measured sync p50s (ns)."""
    reasons: list[str] = []
    fs = facts.get("fs_type")
    disks = _disks(facts)
    syncs = {k: v for k, v in (("fsync", fsync_p50_ns), ("fdatasync", fdatasync_p50_ns))
             if v is not None and v > 0}
    figures = ", ".join(f"{k} p50 {format_ns(v)}" for k, v in syncs.items())
    if syncs:
        reasons.append(f"Measured ({basis or 'small writes'}): {figures}.")

    if fs in ("tmpfs", "ramfs"):
        reasons.append(f"{fs} is memory, not a device: fsync is a no-op and nothing "
                       "survives a power loss or a reboot; there is no cache to judge.")
        return _verdict(UNKNOWN, None, reasons, basis)

    if disks.virtual:
        reasons.append(f"{disks.names} is a virtual (virtio/Xen) disk: its rotational flag "
                       "says nothing about the real media, and the host decides what a flush "
                       "does (its cache mode and storage cannot be seen from inside).")

    if disks.caches and all(c == "write through" for c in disks.caches):
        return _write_through_verdict(disks, syncs, reasons, basis)

    no_flush = [o for o in _mount_options(facts) if o in _NO_FLUSH_OPTIONS]
    if no_flush:
        reasons.append(f"The filesystem is mounted with {no_flush[0]}: it sends no cache "
                       "flushes, so the sync latency says nothing about the device's "
                       "cache, and with a volatile cache nothing is durable. Measure "
                       "again without that option.")
        return _verdict(UNKNOWN, None, reasons, basis)

    if not syncs:
        reasons.append("No fsync/fdatasync latency was measured, so the cache cannot be "
                       "judged from timing.")
        if disks.caches and any(c == "write back" for c in disks.caches):
            reasons.append(f"{disks.names} has a write-back cache: O_DIRECT_NO_FSYNC is only "
                           "safe if that cache is non-volatile (PLP, battery-backed).")
        return _verdict(UNKNOWN, None, reasons, basis)
    return _timed_verdict(disks, syncs, reasons, basis)


def _write_through_verdict(disks: _Disks, syncs: dict[str, float], reasons: list[str],
                           basis: str | None) -> dict:
    """The kernel sees no volatile cache: safe, unless the disk is virtual (the host's
    cache cannot be seen)."""
    reasons.append(f"The kernel reports write_cache 'write through' for {disks.names}: no "
                   "volatile write cache, so it sends no cache flushes and a completed "
                   "O_DIRECT write is on stable media as far as the device promises.")
    if syncs and min(syncs.values()) < FAST_FLUSH_NS \
            and any(r is True for r in disks.rotational) and not disks.virtual:
        reasons.append("A spinning disk cannot complete a write in tens of µs: a "
                       "controller cache absorbs it — check that it is battery- or "
                       "flash-backed.")
    reasons.append("write_cache can be overridden by writing to /sys/block/*/queue/"
                   "write_cache; that changes only the kernel's view, not the device.")
    return _verdict(WRITE_THROUGH, None if disks.virtual else True, reasons, basis)


def _timed_verdict(disks: _Disks, syncs: dict[str, float], reasons: list[str],
                   basis: str | None) -> dict:
    """The verdict from the cheapest sync's latency: under FAST_FLUSH_NS no volatile cache
    was emptied, from SLOW_FLUSH_NS on one was (if the cache is write-back), in between
    no verdict."""
    flush = min(syncs.values())
    which = min(syncs, key=syncs.get)
    if flush < FAST_FLUSH_NS:
        return _fast_flush_verdict(disks, which, flush, reasons, basis)
    if flush >= SLOW_FLUSH_NS:
        return _slow_flush_verdict(disks, which, flush, reasons, basis)
    reasons.append(f"The cheapest sync ({which}, {format_ns(flush)}) is between "
                   f"{format_ns(FAST_FLUSH_NS)} and {format_ns(SLOW_FLUSH_NS)}: a slow "
                   "protected cache, network storage or a fast flush all fit; no verdict.")
    return _verdict(UNKNOWN, None, reasons, basis)


def _fast_flush_verdict(disks: _Disks, which: str, flush: float, reasons: list[str],
                        basis: str | None) -> dict:
    """A flush in tens of µs: a protected cache or a layer that ignores the flush, which
    look the same from here; what the disk is says which is likelier."""
    reasons.append(f"The cheapest sync ({which}, {format_ns(flush)}) is under "
                   f"{format_ns(FAST_FLUSH_NS)}: no volatile cache was written out to "
                   "media.")
    if disks.virtual:
        reasons.append("On a VM this usually means the host absorbs the flush (host "
                       "page cache, or storage with its own protected cache): "
                       "durability depends on the host, which cannot be seen here.")
    elif any(r is True for r in disks.rotational):
        reasons.append("A spinning disk cannot flush in tens of µs: a write-back cache "
                       "absorbs the flushes (a RAID controller with battery- or "
                       "flash-backed cache, or a VM host). Safe only if that cache is "
                       "protected.")
    elif any(r is False for r in disks.rotational):
        reasons.append("Flash that flushes this fast either has power-loss protection "
                       "(capacitors) or does not honour the flush; a lying device looks "
                       "the same — check the model's datasheet for PLP.")
    if any(c == "write back" for c in disks.caches):
        reasons.append(f"{disks.names} reports a write-back cache.")
    elif not any(c is not None for c in disks.caches):
        reasons.append("The device's write-cache setting is unknown.")
    return _verdict(NON_VOLATILE, None, reasons, basis)


def _slow_flush_verdict(disks: _Disks, which: str, flush: float, reasons: list[str],
                        basis: str | None) -> dict:
    """A flush of SLOW_FLUSH_NS or more: with a write-back cache, the cost of emptying a
    volatile one; without a known cache setting, slow media fit as well."""
    if any(c == "write back" for c in disks.caches):
        reasons.append(f"A flush this slow ({which} {format_ns(flush)}, at least "
                       f"{format_ns(SLOW_FLUSH_NS)}) with a write-back cache on "
                       f"{disks.names} is the cost of emptying a volatile cache "
                       f"({PROTECTED_FLUSH}): no power-loss protection. "
                       "O_DIRECT_NO_FSYNC is unsafe: acknowledged writes can be lost on "
                       "power failure.")
        if disks.virtual:
            reasons.append("On a VM the volatile cache may be the host's page cache "
                           "(cache=writeback); the conclusion is the same.")
        return _verdict(VOLATILE, False, reasons, basis)
    reasons.append(f"Syncs take {format_ns(flush)} but the write-cache setting is "
                   "unknown: either writes go through to slow media (safe) or a "
                   "volatile cache is flushed (unsafe).")
    return _verdict(UNKNOWN, None, reasons, basis)


def _pick(tests: list, op: str) -> tuple[float | None, str | None]:
    """p50 of the sync of op, preferring 16k, O_DIRECT, 1 job; then the nearest."""
    cands = [t for t in tests if t.op == op and t.sync is not None and not t.unsupported]
    if not cands:
        return None, None
    best = min(cands, key=lambda t: (abs(t.write_bytes - BASIS_SIZE), not t.direct,
                                     abs(t.jobs - 1)))
    basis = (f"{format_size(best.write_bytes)} "
             f"{'O_DIRECT' if best.direct else 'buffered'}, jobs {best.jobs}")
    return best.sync.median_ns, basis


def verdict_from_tests(facts: dict, tests: list) -> dict:
    """plp_verdict() fed with the best-suited measured tests (objects with op,
    write_bytes, direct, jobs, sync, unsupported)."""
    fsync, b1 = _pick(tests, "fsync")
    fdatasync, b2 = _pick(tests, "fdatasync")
    basis = b1 if b1 == b2 or b2 is None else (b2 if b1 is None else f"{b1} / {b2}")
    return plp_verdict(facts, fsync, fdatasync, basis)
