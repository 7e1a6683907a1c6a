"""Facts about the storage under a path: filesystem, mount, block devices, host.

Everything here reads /proc and /sys and never writes. A fact that cannot be read is
``None`` (or an empty list), never an exception: containers, VMs and exotic filesystems
hide different parts of the picture.

The facts dict (also the ``facts`` object of ``innoflush measure --json``):

- ``path``: the real path measured.
- ``fs_type``, ``mount_point``, ``mount_options`` (per-mount options),
  ``super_options`` (filesystem options), ``mount_source``: from /proc/self/mountinfo,
  the longest mount point containing the path.
- ``dev``: "MAJ:MIN" of the filesystem (st_dev); ``anonymous_device``: true for major 0
  (btrfs, ZFS, tmpfs, overlay, NFS: no block device behind the number).
- ``block_device``: the kernel name behind ``dev`` ("sda1", "dm-0", "vda") or null;
  ``block_device_kind``: "disk", "partition", "dm", "md", "loop", "zram" or null;
  ``dm_name``, ``md_level``, ``loop_backing_file`` where they apply.
- ``disks``: the whole disks underneath (partitions resolved to their disk, dm/md
  followed through ``slaves/``), each {``name``, ``model``, ``vendor``, ``serial``,
  ``rotational`` (bool), ``write_cache`` ("write back" / "write through"), ``fua`` (bool),
  ``logical_block_size``, ``physical_block_size``, ``cache_type``, ``virtual`` (bool:
  virtio/Xen, whose ``rotational`` means nothing), ``hw_queues`` (blk-mq hardware
  queues: how many CPUs take its completion interrupts)}.
- ``disks_note``: why ``disks`` is empty or how it was found, else null.
- ``o_direct``: {``supported``: bool or null, ``reason``: str or null} (filled by the probe).
- ``kernel``, ``cpu_model``, ``cpu_count``, ``hostname``.
"""

from __future__ import annotations

import os
import platform
import socket
import stat
from pathlib import Path

SYS = Path("/sys")
PROC = Path("/proc")

# Filesystems that are not storage at all: measuring them is a mistake.
PSEUDO_FS = frozenset({
    "proc", "sysfs", "cgroup", "cgroup2", "devtmpfs", "devpts", "debugfs", "tracefs",
    "securityfs", "configfs", "pstore", "bpf", "mqueue", "hugetlbfs", "autofs",
    "binfmt_misc", "fusectl", "efivarfs", "rpc_pipefs", "nsfs", "selinuxfs",
})
# Filesystems whose data lives in RAM: syncs are no-ops.
MEMORY_FS = frozenset({"tmpfs", "ramfs"})


# ---- small readers ---------------------------------------------------------------------
def _read(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    return text or None


def _read_int(path: Path) -> int | None:
    text = _read(path)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _read_bool(path: Path) -> bool | None:
    v = _read_int(path)
    return None if v is None else bool(v)


# ---- mountinfo -------------------------------------------------------------------------
def _unescape(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as \\ooo octal."""
    out, i = [], 0
    while i < len(field):
        code = field[i + 1:i + 4]
        if field[i] == "\\" and len(code) == 3 and all(c in "01234567" for c in code):
            out.append(chr(int(code, 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def parse_mountinfo(text: str) -> list[dict]:
    """The lines of /proc/self/mountinfo as dicts (malformed lines skipped)."""
    mounts = []
    for line in text.splitlines():
        parts = line.split()
        try:
            sep = parts.index("-")
        except ValueError:
            continue
        if sep < 6 or len(parts) < sep + 3:
            continue
        mounts.append({
            "dev": parts[2],
            "root": _unescape(parts[3]),
            "mount_point": _unescape(parts[4]),
            "mount_options": parts[5],
            "fs_type": parts[sep + 1],
            "source": _unescape(parts[sep + 2]),
            "super_options": parts[sep + 3] if len(parts) > sep + 3 else "",
        })
    return mounts


def find_mount(mounts: list[dict], realpath: str) -> dict | None:
    """The mount holding realpath: the longest mount point that contains it; among equal
    mount points the last one listed (a later mount hides an earlier one)."""
    best, best_key = None, (-1, -1)
    for i, m in enumerate(mounts):
        mp = m["mount_point"]
        inside = realpath == mp or mp == "/" or realpath.startswith(mp.rstrip("/") + "/")
        if inside and (len(mp), i) > best_key:
            best, best_key = m, (len(mp), i)
    return best


def mount_facts(realpath: str, mountinfo_text: str | None = None) -> dict:
    if mountinfo_text is None:
        mountinfo_text = _read(PROC / "self" / "mountinfo") or ""
    m = find_mount(parse_mountinfo(mountinfo_text), realpath)
    if m is None:
        return {"fs_type": None, "mount_point": None, "mount_options": None,
                "super_options": None, "mount_source": None}
    return {"fs_type": m["fs_type"], "mount_point": m["mount_point"],
            "mount_options": m["mount_options"], "super_options": m["super_options"] or None,
            "mount_source": m["source"]}


# ---- block devices ---------------------------------------------------------------------
def _is_virtual_disk(name: str, vendor: str | None) -> bool:
    return (name.startswith(("vd", "xvd"))
            or (vendor or "").lower() == "0x1af4")  # Red Hat / virtio PCI vendor id


def disk_facts(name: str, sys_root: Path = SYS) -> dict:
    """What sysfs says about a whole disk /sys/block/NAME."""
    base = sys_root / "block" / name
    q = base / "queue"
    dev = base / "device"
    cache_type = _read(base / "cache_type")
    if cache_type is None:  # SCSI/SATA: /sys/block/sdX/device/scsi_disk/H:C:T:L/cache_type
        try:
            for sd in sorted((dev / "scsi_disk").iterdir()):
                cache_type = _read(sd / "cache_type")
                if cache_type:
                    break
        except OSError:
            pass
    vendor = _read(dev / "vendor")
    return {
        "name": name,
        "model": _read(dev / "model"),
        "vendor": vendor,
        "serial": _read(dev / "serial") or _read(base / "serial"),
        "rotational": _read_bool(q / "rotational"),
        "write_cache": _read(q / "write_cache"),
        "fua": _read_bool(q / "fua"),
        "logical_block_size": _read_int(q / "logical_block_size"),
        "physical_block_size": _read_int(q / "physical_block_size"),
        "cache_type": cache_type,
        "virtual": _is_virtual_disk(name, vendor),
        "hw_queues": _hw_queues(base),
    }


def _hw_queues(base: Path) -> int | None:
    """blk-mq hardware queues of a disk (/sys/block/NAME/mq/N): each has its completion
    interrupt, taken by one CPU at a time."""
    try:
        return sum(1 for e in (base / "mq").iterdir() if e.name.isdigit()) or None
    except OSError:
        return None


def completion_cores(facts: dict) -> int | None:
    """How many CPUs take the completion interrupts of the storage's disks: the fewest
    hardware queues among them, at most the CPU count; None when unknown."""
    queues = [d.get("hw_queues") for d in facts.get("disks") or []]
    if not queues or any(q is None for q in queues):
        return None
    cpus = facts.get("cpu_count") or os.cpu_count() or 1
    return max(1, min(min(queues), cpus))


def _leaf_disks(name: str, sys_root: Path, seen: set[str]) -> list[str]:
    """Whole disks under a block device: partition -> its disk, dm/md -> slaves/."""
    if name in seen:
        return []
    seen.add(name)
    node = sys_root / "class" / "block" / name
    try:
        real = node.resolve(strict=True)
    except OSError:
        return []
    slaves_dir = real / "slaves"
    try:
        slaves = sorted(p.name for p in slaves_dir.iterdir())
    except OSError:
        slaves = []
    if slaves:
        out: list[str] = []
        for s in slaves:
            for d in _leaf_disks(s, sys_root, seen):
                if d not in out:
                    out.append(d)
        return out
    if (real / "partition").exists():
        parent = real.parent.name
        return _leaf_disks(parent, sys_root, seen) if parent != name else [name]
    return [name]


def block_facts(st_dev: int, sys_root: Path = SYS) -> dict:
    """The block device behind a filesystem's st_dev and the disks under it."""
    major, minor = os.major(st_dev), os.minor(st_dev)
    out: dict = {"dev": f"{major}:{minor}", "anonymous_device": major == 0,
                 "block_device": None, "block_device_kind": None, "disks": [],
                 "disks_note": None}
    if major == 0:
        out["disks_note"] = "anonymous device number: no block device behind it"
        return out
    link = sys_root / "dev" / "block" / f"{major}:{minor}"
    try:
        real = link.resolve(strict=True)
    except OSError:
        out["disks_note"] = f"{link} not readable (container without /sys?)"
        return out
    name = real.name
    out["block_device"] = name
    if (real / "partition").exists():
        kind = "partition"
    elif (real / "dm").is_dir():
        kind = "dm"
        out["dm_name"] = _read(real / "dm" / "name")
    elif (real / "md").is_dir():
        kind = "md"
        out["md_level"] = _read(real / "md" / "level")
    elif name.startswith("loop"):
        kind = "loop"
        out["loop_backing_file"] = _read(real / "loop" / "backing_file")
    elif name.startswith("zram"):
        kind = "zram"
    else:
        kind = "disk"
    out["block_device_kind"] = kind
    disks = _leaf_disks(name, sys_root, set())
    out["disks"] = [disk_facts(d, sys_root) for d in disks]
    if kind == "loop":
        out["disks_note"] = ("loop device: the latency is that of its backing file "
                             f"{out.get('loop_backing_file') or '(unknown)'}")
    elif kind == "zram":
        out["disks_note"] = "zram: compressed RAM, not a storage device"
    elif not disks:
        out["disks_note"] = "no disk found under the block device"
    return out


def _block_facts_from_source(source: str | None, sys_root: Path) -> dict | None:
    """btrfs and similar report an anonymous st_dev but name a /dev node as source."""
    if not source or not source.startswith("/dev/"):
        return None
    try:
        st = os.stat(source)
    except OSError:
        return None
    if not stat.S_ISBLK(st.st_mode):
        return None
    return block_facts(st.st_rdev, sys_root)


# ---- host ------------------------------------------------------------------------------
def cpu_model(cpuinfo_text: str | None = None) -> str | None:
    if cpuinfo_text is None:
        cpuinfo_text = _read(PROC / "cpuinfo") or ""
    for key in ("model name", "Model", "Hardware", "cpu model", "cpu"):
        for line in cpuinfo_text.splitlines():
            k, sep, v = line.partition(":")
            if sep and k.strip() == key and v.strip():
                return v.strip()
    return platform.processor() or None


def host_facts() -> dict:
    u = os.uname()
    return {"kernel": f"{u.sysname} {u.release} {u.version} {u.machine}",
            "cpu_model": cpu_model(), "cpu_count": os.cpu_count(),
            "hostname": socket.gethostname()}


# ---- all together ----------------------------------------------------------------------
def gather_facts(path: str | os.PathLike, sys_root: Path = SYS) -> dict:
    """All facts about the storage under path (a directory); never raises for missing
    information."""
    realpath = os.path.realpath(path)
    facts: dict = {"path": realpath}
    facts.update(mount_facts(realpath))
    try:
        st_dev = os.stat(realpath).st_dev
    except OSError:
        st_dev = None
    if st_dev is None:
        facts.update({"dev": None, "anonymous_device": None, "block_device": None,
                      "block_device_kind": None, "disks": [],
                      "disks_note": "cannot stat the path"})
    else:
        facts.update(block_facts(st_dev, sys_root))
    fs = facts.get("fs_type")
    if facts.get("anonymous_device"):
        src = facts.get("mount_source")
        from_src = _block_facts_from_source(src, sys_root)
        if from_src and from_src["disks"]:
            facts["disks"] = from_src["disks"]
            facts["disks_note"] = (f"{fs or 'filesystem'} uses an anonymous device number; "
                                   f"disks found from the mount source {src} (a "
                                   "multi-device filesystem may use more)")
        elif fs in MEMORY_FS:
            facts["disks_note"] = f"{fs} is memory: no backing disk"
        else:
            facts["disks_note"] = (f"{fs or 'filesystem'} uses an anonymous device number: "
                                   f"backing disk unknown (mount source: {src})")
    facts["o_direct"] = {"supported": None, "reason": None}
    facts.update(host_facts())
    return facts


def device_class(facts: dict) -> str:
    """A short human guess of what kind of device this is, for a saved profile."""
    fs = facts.get("fs_type")
    if fs in MEMORY_FS:
        return "memory (tmpfs)"
    disks = facts.get("disks") or []
    if not disks:
        return "unknown"
    d = disks[0]
    name = d.get("name") or ""
    if any(x.get("virtual") for x in disks):
        return "virtual disk"
    if len(disks) > 1 and facts.get("block_device_kind") in ("md", "dm"):
        prefix = "RAID/LVM of "
    else:
        prefix = ""
    if name.startswith("nvme"):
        kind = "NVMe SSD"
    elif d.get("rotational") is False:
        kind = "SSD"
    elif d.get("rotational") is True:
        kind = "hdd"
    else:
        kind = "unknown"
    return prefix + kind
