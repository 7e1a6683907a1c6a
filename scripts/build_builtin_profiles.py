#!/usr/bin/env python3
"""Build innoflush's built-in device profiles from the published measurements.

Reads the transcription of the published figures (reference/published_sync_latency.csv
by default, provenance in reference/README.md; pass another path as the first argument)
and writes one JSON profile per device into innoflush/profiles/builtin/ (or --out DIR).
The output depends only on the CSV and this file: running it twice gives byte-identical
files, and tests/profiles/test_profiles_builtin.py checks that the committed profiles are what
this script produces.

What goes into a profile, and how honestly:

* Every test carries ``source``: "published" (a figure printed in the source, or one
  derived from printed figures by arithmetic stated in the note) or "assumed" (a
  gap-filler from the ASSUMPTIONS table below, with its basis in the note).
* Seed 000 (fio): per test the two runs are combined as the mean of the two; the sync
  latency is fio's mean, so it is a mean-only distribution; write latency is derived
  from the rate (1 job at queue depth 1: one write at a time, so 1/writes_per_s is the
  mean time per operation; minus the sync when there is one).
* Seeds 001/003/004 (timed Python loops): the figure is the mean of a whole write+sync
  and goes into the ``total`` component.
* Where a source gives no write-without-sync figure (seeds 001/003/004), the simulator
  still needs 16 KB and 2 MB write latency: those come from ASSUMPTIONS, per device class.

Usage: python scripts/build_builtin_profiles.py [CSV] [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from innoflush.measure.plp import (  # noqa: E402
    FAST_FLUSH_NS,
    NON_VOLATILE,
    PROTECTED_FLUSH,
    SLOW_FLUSH_NS,
    UNKNOWN,
    VOLATILE,
    WRITE_THROUGH,
)
from innoflush.profiles.model import OPS, DeviceProfile, ProfileTest  # noqa: E402
from innoflush.stats import LatencySummary  # noqa: E402
from innoflush.units import format_ns  # noqa: E402

DEFAULT_CSV = REPO / "reference" / "published_sync_latency.csv"
DEFAULT_OUT = REPO / "innoflush" / "profiles" / "builtin"

K16 = 16 * 1024
M2 = 2 * 1024 * 1024


def _xfer_us(nbytes: int, mb_per_s: float) -> float:
    """Time to move nbytes at mb_per_s (1 MB = 10^6 bytes), in microseconds."""
    return nbytes / mb_per_s


# =========================================================================================
# ASSUMPTIONS: the only figures in the built-in profiles that nobody published.
# Each row: mean latency (µs) of one O_DIRECT write without sync, 16 KB and 2 MB, for a
# class of device, and the basis of each figure. They go into tests with
# source "assumed" and the basis as the note. Nothing else in this file invents a figure.
# =========================================================================================
@dataclass(frozen=True)
class Assumption:
    write_16k_us: float
    basis_16k: str
    write_2m_us: float
    basis_2m: str


_NVME_2M = "2 MiB at ~2,000 MB/s, a round class figure for NVMe sequential writes"
ASSUMPTIONS: dict[str, Assumption] = {
    "consumer NVMe": Assumption(
        25.0,
        "seed 000 consumer NVMe, 16 KB O_DIRECT writes at 1 job, mean = 1/writes_per_s: "
        "Samsung 990 Pro 27.1 µs, Crucial T500 23.0 µs",
        round(_xfer_us(M2, 2000), 1),
        _NVME_2M + " (seed 000 consumer NVMe: Samsung 990 Pro 2.75 ms ≈ 760 MB/s, "
        "Crucial T500 0.40 ms ≈ 5,200 MB/s)"),
    "enterprise NVMe": Assumption(
        23.0,
        "seed 000 enterprise NVMe, 16 KB O_DIRECT writes at 1 job, mean = 1/writes_per_s: "
        "Samsung PM9A3 20.2 µs, Intel D7-P5520 26.6 µs",
        round(_xfer_us(M2, 2000), 1),
        _NVME_2M + " (seed 000 enterprise NVMe: Samsung PM9A3 1.41 ms ≈ 1,480 MB/s, "
        "Intel D7-P5520 0.53 ms ≈ 3,900 MB/s)"),
    "SATA SSD": Assumption(
        round(_xfer_us(K16, 450) + 25, 1),
        "16 KiB at ~450 MB/s (SATA 6 Gb/s class) = 36 µs, plus ~25 µs per command; bound: "
        "seed 003's Samsung PM863 (SATA) completes a whole 4 KiB write+fsync in 39 µs, so "
        "the per-command cost is below that. No seed publishes a SATA write without sync",
        round(_xfer_us(M2, 450), 1),
        "2 MiB at ~450 MB/s (SATA 6 Gb/s class sequential write)"),
    "hdd 7200": Assumption(
        round(220 + _xfer_us(K16, 150), 1),
        "seed 001 write-cache experiment (7200 rpm SATA drive, cache on): a 512 B O_DIRECT "
        "write without sync returns in 0.22 ms (4,651/s), i.e. into the drive's cache; plus "
        "16 KiB at ~150 MB/s (7200 rpm sequential, assumed). A burst figure: sustained random "
        "writes drain at the drive's seek rate, which a mean-only figure does not model",
        round(220 + _xfer_us(M2, 150), 1),
        "0.22 ms (seed 001 write-cache experiment) plus 2 MiB at ~150 MB/s (7200 rpm "
        "sequential, assumed)"),
    "hdd 5400 / USB": Assumption(
        round(220 + _xfer_us(K16, 100), 1),
        "0.22 ms per O_DIRECT write into the drive cache (seed 001 write-cache experiment, "
        "measured on a 7200 rpm drive) plus 16 KiB at ~100 MB/s, assumed for 5400 rpm "
        "laptop/portable and USB-attached drives (not from the seeds)",
        round(220 + _xfer_us(M2, 100), 1),
        "0.22 ms (seed 001 write-cache experiment) plus 2 MiB at ~100 MB/s (5400 rpm / USB, "
        "assumed)"),
    "RAID BBU": Assumption(
        50.0,
        "seed 001 Dell PERC with BBU: a whole 512 B write+fsync took 40 µs; a 16 KB write "
        "into the same DRAM cache assumed ~10 µs more",
        round(_xfer_us(M2, 300), 1),
        "sustained 2 MB writes drain from the controller cache to the array of 7200 rpm "
        "drives; the array size is not published, two drives' worth (2 × 150 MB/s) assumed"),
    "Optane writeback cache": Assumption(
        23.0,
        "writeback cache on an Intel Optane P4800X (seed 004): writes land on the Optane "
        "first; the enterprise NVMe 16 KB figure is used (seed 000: PM9A3 20.2 µs, "
        "D7-P5520 26.6 µs); no write-only figure was published",
        round(_xfer_us(M2, 2000), 1),
        _NVME_2M + ", as for enterprise NVMe"),
    "networked block storage": Assumption(
        480.7,
        "the only published write-without-sync figures for networked block storage: seed "
        "000 GCP Hyperdisk Balanced (ext4), 16 KB O_DIRECT, 2,093 and 2,068 writes/s at 1 job "
        "→ 480.7 µs",
        2799.2,
        "seed 000 GCP Hyperdisk Balanced (ext4), 2 MB O_DIRECT, 348 and 367 writes/s at 1 job "
        "→ 2.80 ms"),
}

# The PLP verdict's thresholds are the measured verdict's (innoflush/measure/plp.py), in
# the µs the published figures are in. A whole write+sync from a Python loop adds some
# tens of µs.
FAST_FLUSH_US = FAST_FLUSH_NS / 1e3
SLOW_FLUSH_US = SLOW_FLUSH_NS / 1e3

# =========================================================================================
# Sources (the CSV's source column, by its seed number)
# =========================================================================================
PERCONA_2018_URL = "https://www.percona.com/blog/fsync-performance-storage-devices/"
SOURCES = {
    "000": {"published": "2026-01-08",
            "method": "fio, 1 job, O_DIRECT, 16 KB and 2 MB writes with no sync, an fsync or an "
                      "fdatasync per write; two 5-minute runs per test; published per run: "
                      "writes/s, MB/s and fio's mean sync latency",
            "what_was_published": "mean only"},
    "001": {"url": PERCONA_2018_URL,
            "url_note": "the URL is cited in seed 003 (the fsync.py README), not in seed 001",
            "published": "2018-02-08",
            "method": "Python loop: file opened with O_DIRECT, 1000 × (write + fsync) (or "
                      "fdatasync), timed with `time`; published: rate and mean latency of the "
                      "whole write+sync (wall time / iterations, Python start-up included); "
                      "write size 512 B per the post's script (not stated in the seed text)",
            "what_was_published": "mean only"},
    "001c": {"url": PERCONA_2018_URL,
             "url_note": "the URL is cited in seed 003 (the fsync.py README), not in seed 001",
             "published": "2018-02",
             "method": "a reader's run of the post's Python script (O_DIRECT write + fsync), "
                       "10,000 iterations; published: total time, mean and rate",
             "what_was_published": "mean only"},
    "004": {"published": "2019",
            "method": "the same Python script as the 2018 post (write + fsync per iteration; "
                      "512 B per that script, not stated in the seed); published: rate and "
                      "mean latency of the whole write+fsync",
            "what_was_published": "mean only"},
    "003": {"published": "undated (README)",
            "method": "fsync.py: O_DIRECT, 4096-byte write + fsync, 1000 iterations; "
                      "published: operations/s and average time per op (total time / "
                      "iterations)",
            "what_was_published": "mean only"},
}
ITERATIONS = {"001": 1000, "001c": 10000, "004": 0, "003": 1000}  # 0: not stated


def source_key(row: dict) -> str:
    s = row["source"]
    if s.startswith("001") and s.rstrip().endswith("comments"):
        return "001c"
    return s[:3]


# =========================================================================================
# Devices: what the sources say about each one, beyond the figures.
# =========================================================================================
@dataclass(frozen=True)
class Dev:
    name: str
    title: str
    src: str                    # "000", "001", "001c", "004", "003"
    device_id: str              # the CSV's device_id
    cls: str
    model: str
    plp: str                    # yes | no | unknown | claimed
    plp_note: str
    write_cache: str = "unknown"  # on | off | battery-backed | unknown
    rotational: bool | None = None
    host: str | None = None     # seed 000: the CSV host selects the rows
    filesystem_is: str | None = None  # select rows by filesystem (Optane data=journal)
    host_desc: str | None = None
    filesystem: str | None = None     # overrides the CSV's
    raid: str | None = None           # overrides the CSV's
    assume: str | None = None         # ASSUMPTIONS key, for sources without write figures
    assume_note: str = ""
    direct_natural: bool = True       # O_DIRECT mode of the assumed write tests
    zfs: bool = False
    flush_ignored_quote: str = ""     # the source's own judgement that flushes are ignored
    iterations: int | None = None
    notes: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()     # extra verdict reasons (facts from the source)


_HDD_CACHE = ("The post: 'all drives appears to be fully complying with the SATA flush "
              "command even though they all have an enabled write cache. Disabling the "
              "drives write caches made no difference.'")
_SSD_CACHE = ("the post: 'All SSD/Flash have write caches, but only the high-end devices "
              "have capacitors to flush their write cache to the flash with a loss of power'")
_ZFS_NOTE = ("ZFS (O_DIRECT off, as the post says it must be): a write lands in RAM and "
             "reaches the drives in a later transaction group; the data drives' figures stand "
             "in for its sustained cost")
_SAME_SCRIPT = ("direct mode not restated in seed 004 ('the same python script', which opens "
                "the file with O_DIRECT): O_DIRECT assumed")

DEVICES: tuple[Dev, ...] = (
    # ---- seed 000/002: smalldatum, fio----
    Dev("samsung-990-pro", "Samsung 990 Pro, ext4", "000", "samsung-990-pro",
        "consumer NVMe", "Samsung 990 Pro", "no",
        "the post: 'the web claims it does not have PLP and fsync latency is several "
        "milliseconds'", rotational=False, host="ser7",
        host_desc="ser7: a mini PC, Ubuntu 24.04",
        notes=("The post: 'results had much variance (see the 2MB results below)'.",)),
    Dev("crucial-t500", "Crucial T500 2TB, ext4", "000", "crucial-t500",
        "consumer NVMe", "Crucial T500 2TB", "claimed",
        "the post contradicts itself: 'While the web claims it has PLP via capacitors the "
        "fsync latency for it was almost 1 millisecond' and later 'the T500 has PLP while "
        "the 990 Pro does not'", rotational=False, host="dell",
        host_desc="dell32: a large server at home, Ubuntu 24.04"),
    Dev("intel-d7-p5520", "Intel D7-P5520 × 2, md RAID 1, ext4", "000",
        "intel-d7-p5520", "enterprise NVMe", "Intel D7-P5520 (now Solidigm), 2 in SW RAID 1",
        "claimed", "the post: 'These are datacenter SSDs and the web claims they have power "
        "loss protection'", rotational=False, host="hetz",
        host_desc="hetz: Hetzner ax162-s, Ubuntu 24.04"),
    Dev("samsung-pm9a3", "Samsung PM9A3, ext4", "000", "samsung-pm9a3",
        "enterprise NVMe", "Samsung PM9A3", "yes",
        "the post: 'This is an enterprise SSD with power loss protection'", rotational=False,
        host="socket2", host_desc="socket2: a 2-socket server at home, Ubuntu 24.04",
        notes=("The post: 'excellent (low) sync latency after small writes, but fsync "
               "latency after 2MB writes is much larger'.",)),
    Dev("gcp-local-nvme-ext4", "GCP c3d local NVMe, 2 × RAID 0, ext4", "000",
        "gcp-c3d-local-nvme", "cloud local NVMe",
        "GCP c3d-standard-30-lssd local NVMe (brand unknown), 2 in SW RAID 0", "unknown",
        "the post: 'I was not able to determine the brand of the local NVMe devices'",
        rotational=False, host="gcp-local-ext4",
        host_desc="gcp: c3d-standard-30-lssd, Ubuntu 24.04"),
    Dev("gcp-local-nvme-xfs", "GCP c3d local NVMe, 2 × RAID 0, xfs", "000",
        "gcp-c3d-local-nvme", "cloud local NVMe",
        "GCP c3d-standard-30-lssd local NVMe (brand unknown), 2 in SW RAID 0", "unknown",
        "the post: 'I was not able to determine the brand of the local NVMe devices'",
        rotational=False, host="gcp-local-xfs",
        host_desc="gcp: c3d-standard-30-lssd, Ubuntu 24.04"),
    Dev("gcp-hyperdisk-balanced-ext4", "GCP Hyperdisk Balanced 1TB, ext4", "000",
        "gcp-hyperdisk-balanced", "cloud block storage",
        "GCP Hyperdisk Balanced 1TB, 50k IOPS, 800 MB/s provisioned", "unknown",
        "network block storage: the post does not say how writes are made durable",
        host="gcp-hyperdisk-ext4", host_desc="gcp: c3d-standard-30-lssd, Ubuntu 24.04",
        notes=("The post: 'fsync latency is ~2X larger than fdatasync on the local devices "
               "and closer to 15X larger on the Hyperdisk Balanced setup'.",)),
    Dev("gcp-hyperdisk-balanced-xfs", "GCP Hyperdisk Balanced 1TB, xfs", "000",
        "gcp-hyperdisk-balanced", "cloud block storage",
        "GCP Hyperdisk Balanced 1TB, 50k IOPS, 800 MB/s provisioned", "unknown",
        "network block storage: the post does not say how writes are made durable",
        host="gcp-hyperdisk-xfs", host_desc="gcp: c3d-standard-30-lssd, Ubuntu 24.04",
        notes=("The post: 'fsync latency is ~2X larger than fdatasync on the local devices "
               "and closer to 15X larger on the Hyperdisk Balanced setup'.",)),
    # ---- seed 001: Percona 2018, rotating drives----
    Dev("hdd-wd2500bjkt", "WD2500BJKT 5400 rpm laptop HDD (2009)", "001", "wd2500bjkt",
        "hdd 5400", "WDC WD2500BJKT, 5400 rpm laptop SATA (2009)", "no",
        "laptop drive; its write cache is volatile (general knowledge, not stated). "
        + _HDD_CACHE, write_cache="on", rotational=True, assume="hdd 5400 / USB"),
    Dev("hdd-st2000lm003", "Seagate ST2000LM003 5400 rpm USB-3 HDD", "001",
        "st2000lm003", "hdd 5400", "Seagate ST2000LM003, 5400 rpm, USB-3 portable drive",
        "no", "portable drive; its write cache is volatile (general knowledge, not stated). "
        + _HDD_CACHE, write_cache="on", rotational=True, assume="hdd 5400 / USB"),
    Dev("hdd-st3750528as", "Seagate ST3750528AS 7200 rpm SATA HDD", "001",
        "st3750528as", "hdd 7200", "Seagate ST3750528AS, 7200 rpm desktop SATA", "no",
        "desktop drive; its write cache is volatile (general knowledge, not stated). "
        + _HDD_CACHE, write_cache="on", rotational=True, assume="hdd 7200"),
    Dev("hdd-wd2502abys", "WD2502ABYS 7200 rpm desktop SATA HDD", "001", "wd2502abys",
        "hdd 7200", "WD2502ABYS-18B7A0, 7200 rpm desktop SATA", "no",
        "desktop drive; its write cache is volatile (general knowledge, not stated). "
        + _HDD_CACHE, write_cache="on", rotational=True, assume="hdd 7200",
        notes=("The post's worked example: 'using a 7.2k rpm drive, the fsync rate is about "
               "56/s for a latency of 18ms ... the fsyncs require a bit more than two "
               "rotations to complete. ... ext4 and XFS show similar results.'",)),
    Dev("hdd-hua723020ala641", "HGST HUA723020ALA641 7200 rpm, md mirror",
        "001", "hua723020ala641", "hdd 7200",
        "HGST HUA723020ALA641, 7200 rpm enterprise SATA, md mirror", "unknown",
        "not stated. " + _HDD_CACHE, write_cache="on", rotational=True, assume="hdd 7200",
        raid="md mirror"),
    Dev("hdd-dell-sas-7200-nocache", "Dell SAS 7200 rpm, PERC without cache",
        "001", "dell-sas-7200-nocache", "hdd 7200",
        "Dell SAS 7200 rpm (model unknown) behind a PERC controller without write cache",
        "unknown", "not stated. The controller had no write cache ('Behind Perc ctrl but no "
        "write cache'); read here as the drive's own cache being on, as for all drives of "
        "the table. " + _HDD_CACHE, write_cache="on", rotational=True, assume="hdd 7200",
        raid="behind a Dell PERC controller, no controller write cache"),
    Dev("hdd-toshiba-hdwe150", "Toshiba HDWE150 5TB 7200 rpm SATA HDD", "001",
        "toshiba-hdwe150", "hdd 7200", "Toshiba HDWE150, 7200 rpm desktop SATA, 5 TB", "no",
        "desktop drive; its write cache is volatile (general knowledge, not stated). "
        + _HDD_CACHE, write_cache="on", rotational=True, assume="hdd 7200"),
    # ---- seed 001: SSDs----
    Dev("samsung-mz7ln512", "Samsung MZ7LN512 consumer SATA SSD", "001", "samsung-mz7ln512",
        "consumer SATA SSD", "Samsung MZ7LN512", "no",
        "listed as consumer grade; " + _SSD_CACHE, write_cache="on", rotational=False,
        assume="SATA SSD"),
    Dev("crucial-m500", "Crucial M500 480GB consumer SATA SSD", "001", "crucial-m500",
        "consumer SATA SSD", "Crucial CT480M500SSD1", "no",
        "listed as consumer grade; " + _SSD_CACHE, write_cache="on", rotational=False,
        assume="SATA SSD"),
    Dev("intel-520", "Intel 520 consumer SATA SSD", "001", "intel-520", "consumer SATA SSD",
        "Intel 520", "no", "listed as consumer grade; " + _SSD_CACHE, write_cache="on",
        rotational=False, assume="SATA SSD"),
    Dev("samsung-mzvpv512", "Samsung MZVPV512HDGL consumer NVMe", "001", "samsung-mzvpv512",
        "consumer NVMe", "Samsung MZVPV512HDGL", "no",
        "listed as consumer grade; " + _SSD_CACHE, write_cache="on", rotational=False,
        assume="consumer NVMe"),
    Dev("samsung-960-pro", "Samsung 960 PRO high-end consumer NVMe", "001", "samsung-960-pro",
        "consumer NVMe", "Samsung SSD 960 PRO", "unknown",
        "listed as high-end consumer grade; not stated. " + _SSD_CACHE, write_cache="on",
        rotational=False, assume="consumer NVMe"),
    Dev("intel-pc3100", "Intel PC-3100 low-end consumer NVMe", "001", "intel-pc3100",
        "consumer NVMe", "Intel PC-3100", "no",
        "the post: per Intel's specs it 'doesn't have the \"Enhanced Power Loss Data "
        "Protection\"' feature", write_cache="on", rotational=False, assume="consumer NVMe",
        flush_ignored_quote="the post calls this device 'obviously cheating': too fast a "
        "flush for a drive without power-loss protection"),
    Dev("intel-750", "Intel 750 high-end consumer NVMe", "001", "intel-750", "consumer NVMe",
        "Intel 750", "unknown", "listed as high-end consumer grade; not stated. " + _SSD_CACHE,
        write_cache="on", rotational=False, assume="consumer NVMe"),
    Dev("intel-pc3700", "Intel PC-3700 / DC P3700 enterprise NVMe", "001", "intel-pc3700",
        "enterprise NVMe", "Intel PC-3700 (DC P3700)", "yes",
        "the post: unlike the PC-3100, 'the much more expansive PC-3700 does' have Enhanced "
        "Power Loss Data Protection", write_cache="on", rotational=False,
        assume="enterprise NVMe"),
    Dev("dell-perc-bbu", "Dell PERC with BBU cache, 7200 rpm array",
        "001", "dell-perc-bbu", "RAID controller, battery-backed cache",
        "Dell PERC with BBU write cache (write back), array of 7200 rpm drives", "yes",
        "battery-backed controller cache; the author's reply: the cache was set to 'write "
        "back'", write_cache="battery-backed", rotational=True, assume="RAID BBU",
        iterations=10000, raid="Dell PERC array (level not stated)",
        reasons=("The post: the controller 'concatenates the sequential writes, eventually "
                 "writing one big chunk on disk and… ignoring the fsyncs', from DRAM "
                 "'protected from power loss by a battery'.",)),
    Dev("zfs-2x7200-no-slog", "ZFS on a pair of 7200 rpm HDDs, no SLOG", "001",
        "zfs-2x7200-no-slog", "hdd 7200", "ZFS pool of two 7200 rpm drives, ZIL on the drives",
        "no", "desktop-class drives (not stated); ZFS keeps its own ordering through the ZIL",
        write_cache="on", rotational=True, assume="hdd 7200", assume_note=_ZFS_NOTE,
        direct_natural=False, zfs=True, filesystem="zfs (O_DIRECT off), ZIL on the data drives",
        raid="ZFS pool of 2 drives (layout not stated)"),
    # ---- seed 001: reader comments----
    Dev("optane-900p", "Intel Optane 900P 280GB (comment)", "001c", "intel-optane-900p",
        "consumer NVMe", "Intel Optane SSD 900P 280GB (3D XPoint)", "no",
        "the author's reply quotes the spec: 'Enhanced Power Loss Data Protection No'",
        rotational=False, assume="consumer NVMe", filesystem="ext4",
        notes=("A reader comment on the 2018 post (Franz Hänel, 2018-02-08): '10 000 "
               "iterations took 0.43s or 0.043 ms per fsync (~ 23 250 fsyncs / seconds)'.",),
        reasons=("The author's reply: 'I wonder if it really persists the data at each fsync "
                 "or fdatasync.'",)),
    Dev("hpe-3par-8400", "HPE 3PAR StoreServ 8400 SAN (comment)", "001c",
        "hpe-3par-8400", "SAN", "HPE 3PAR StoreServ 8400 (flash-based SAN)", "unknown",
        "not stated", rotational=None, assume="networked block storage",
        notes=("A reader comment on the 2018 post (Jacob, 2018-02-14): '10 000 iterations "
               "took 19.303s or 1.903 ms per fsync (~ 518 fsyncs / seconds)'. 19.303 s / "
               "10,000 is 1.930 ms, which matches 518/s; the printed 1.903 ms (as in the "
               "CSV) is kept.",)),
    # ---- seed 004: Percona 2019----
    Dev("optane-p4800x", "Intel Optane P4800X 375GB, ext4", "004", "intel-optane-p4800x",
        "enterprise NVMe", "Intel Optane DC P4800X 375GB (3D XPoint)", "unknown",
        "not stated in the post", rotational=False, filesystem_is="ext4",
        assume="enterprise NVMe",
        notes=("The post: 'The fsync performance is on par with a RAID controller with a "
               "write cache'.",)),
    Dev("optane-p4800x-data-journal", "Intel Optane P4800X, ext4 data=journal",
        "004", "intel-optane-p4800x", "enterprise NVMe",
        "Intel Optane DC P4800X 375GB (3D XPoint)", "unknown", "not stated in the post",
        rotational=False, filesystem_is="ext4 data=journal", assume="enterprise NVMe",
        direct_natural=False,
        notes=("Same card as optane-p4800x with ext4 mounted data=journal; the post: 'Even "
               "enabling the full ext4 journal, the rate is still excellent although, as "
               "expected, cut by about half.'",)),
    Dev("hdd-usb-sata", "External USB SATA disk, no cache layer", "004", "usb-sata-no-cache",
        "hdd", "external USB SATA disk (model and rpm not stated)", "unknown", "not stated",
        rotational=None, assume="hdd 5400 / USB",
        notes=("'No cache' in the post means no dm-cache/bcache layer (the baseline of those "
               "tests), not that the drive's own write cache was off.",
               "Rotational not stated; 75 ms per write+fsync suggests a rotating disk.")),
    Dev("usb-sata-dm-cache-optane", "USB SATA disk + dm-cache on Optane", "004",
        "usb-sata-dm-cache-optane", "hybrid",
        "external USB SATA disk behind dm-cache (writeback) on an Intel Optane DC P4800X",
        "unknown", "not stated", rotational=None, assume="Optane writeback cache",
        ),
    Dev("usb-sata-bcache-optane", "USB SATA disk + bcache on Optane P4800X", "004",
        "usb-sata-bcache-optane", "hybrid",
        "external USB SATA disk behind bcache (writeback) on an Intel Optane DC P4800X",
        "unknown", "not stated", rotational=None, assume="Optane writeback cache",
        ),
    Dev("zfs-usb-sata-slog-optane", "ZFS on USB SATA disk, Optane SLOG", "004",
        "zfs-usb-sata-slog-optane", "hybrid",
        "ZFS on an external USB SATA disk, SLOG on an Intel Optane DC P4800X "
        "(logbias=latency)", "unknown", "not stated", rotational=None,
        assume="hdd 5400 / USB", assume_note=_ZFS_NOTE + " (here the USB disk)",
        direct_natural=False, zfs=True, filesystem="zfs (logbias=latency), SLOG on Optane"),
    Dev("zfs-usb-sata-no-slog", "ZFS on a USB SATA disk, no SLOG", "004",
        "zfs-usb-sata-no-slog", "hdd", "ZFS on an external USB SATA disk, no SLOG",
        "unknown", "not stated", rotational=None, assume="hdd 5400 / USB",
        assume_note=_ZFS_NOTE + " (here the USB disk)", direct_natural=False, zfs=True,
        filesystem="zfs, ZIL on the data disk"),
    # ---- seed 003: centminmod fsync.py README----
    Dev("samsung-pm983-dc1500m-raid1",
        "Samsung PM983 + Kingston DC1500M, RAID 1", "003",
        "samsung-pm983-kingston-dc1500m-raid1", "enterprise NVMe",
        "Samsung PM983 960GB (MZQLB960HAJR) + Kingston DC1500M 960GB, U.2 NVMe, md RAID 1",
        "unknown", "not stated in the README (listed as datacenter/enterprise NVMe)",
        rotational=False, assume="enterprise NVMe", raid="md RAID 1 (/dev/md1)"),
    Dev("samsung-pm863", "Samsung PM863 240GB datacenter SATA SSD", "003", "samsung-pm863",
        "enterprise SATA SSD", "Samsung PM863 240GB (MZ7LM240HCGR)", "unknown",
        "not stated in the README (called 'Datacenter Grade SATA SSD')", rotational=False,
        assume="SATA SSD"),
    Dev("intel-dc-p3520-raid1", "Intel DC P3520 450GB NVMe, md RAID 1", "003",
        "intel-dc-p3520-raid1", "enterprise NVMe", "Intel DC P3520 450GB (SSDPE2MX450G7) × 2",
        "unknown", "not stated in the README", rotational=False, assume="enterprise NVMe",
        raid="md RAID 1 (/dev/md3)"),
    Dev("kingston-kc3000", "Kingston KC3000 consumer NVMe", "003", "kingston-kc3000",
        "consumer NVMe", "Kingston KC3000 (SKC3000S1024G)", "unknown", "not stated in the README",
        rotational=False, assume="consumer NVMe",
        notes=("The README says 512GB Kingston KC3000; the model string it prints, "
               "SKC3000S1024G, is the 1024GB model.",)),
    Dev("samsung-850-pro", "Samsung 850 Pro 512GB SATA SSD (LVM)", "003",
        "samsung-850-pro", "consumer SATA SSD", "Samsung 850 Pro 512GB", "unknown",
        "not stated in the README", rotational=False, assume="SATA SSD",
        filesystem="on LVM (/dev/mapper/almalinux-root), filesystem not stated"),
)

# CSV rows that are not a profile of their own, and where their figures went instead.
MENTIONED = {
    ("004", "raid-controller-write-cache"): (
        "dell-perc-bbu",
        "'a RAID controller with a write cache, for which I got a rate of 23000/s': the 2018 "
        "Dell PERC result quoted again"),
    ("004", "intel-pc3700"): (
        "intel-pc3700",
        "'a regular NAND based NVMe card like the Intel PC-3700, able to deliver a fsync rate "
        "of 7300/s' (the 2018 post printed 7,380/s)"),
}
EVIDENCE_ONLY = {
    ("001", "sata-7200-cache-experiment"):
        "an experiment on one 7200 rpm drive, not a device to simulate; its O_DIRECT write "
        "with the drive cache on (0.22 ms) is the basis of the HDD write assumptions",
}


# =========================================================================================
# Reading the CSV and building tests
# =========================================================================================
def _f(text: str) -> float | None:
    text = (text or "").strip()
    return float(text) if text else None


def _num(x: float) -> str:
    """A published figure as printed: 1083 -> '1,083', 891.1 -> '891.1'."""
    return f"{x:,.0f}" if x == int(x) else f"{x:,.1f}" if x * 10 == int(x * 10) else f"{x:,}"


def _size(n: int) -> str:
    return {K16: "16 KB", M2: "2 MB"}.get(n, f"{n} B")


def _direct(text: str) -> bool | None:
    t = (text or "").strip().lower()
    return {"yes": True, "no": False}.get(t)


def read_rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


_COUNT_NOTE = "count ≈ writes/s × 300 s per run (derived)."


def fio_tests(rows: list[dict]) -> list[ProfileTest]:
    """Seed 000: one test per (op, size), the two runs combined as their mean."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["op"], int(r["write_bytes"]), _direct(r["direct"]), int(r["jobs"]))].append(r)
    tests = []
    for (op, size, direct, jobs), runs in sorted(
            groups.items(), key=lambda kv: (OPS.index(kv[0][0]), kv[0][1])):
        runs.sort(key=lambda r: int(r["run"]))
        wps = [float(r["writes_per_s"]) for r in runs]
        ops_per_s = sum(wps) / len(wps)
        count = round(sum(w * 300 for w in wps))  # 5-minute runs
        rates = " and ".join(_num(w) for w in wps)
        head = (f"fio, 1 job, O_DIRECT, {_size(size)} writes"
                + ("" if op == "none" else f", {op} after each write")
                + f", {len(runs)} runs of 5 min: {rates} writes/s")
        if op == "none":
            lat = [1e9 / w for w in wps]
            write = LatencySummary.mean_only(round(sum(lat) / len(lat), 1), count)
            note = (f"{head}. write = mean of the runs' 1/writes_per_s "
                    f"({', '.join(format_ns(x) for x in lat)}): derived from the published "
                    "rate (one job at queue depth 1, fio's default; the fio script itself is "
                    f"not in the seed). {_COUNT_NOTE} No distribution published.")
            tests.append(ProfileTest(op=op, write_bytes=size, direct=bool(direct), jobs=jobs,
                                     ops_per_s=ops_per_s, write=write, source="published",
                                     note=note))
            continue
        syncs = [float(r["sync_latency_us"]) for r in runs]
        # fio printed 0.0 for one run's sync latency (hetz, fdatasync 16 KB): not a
        # measurement of zero, so that run is left out of the latency means.
        valid = [i for i, s in enumerate(syncs) if s > 0]
        dropped = [i for i in range(len(runs)) if i not in valid]
        sync_mean = sum(syncs[i] for i in valid) / len(valid)
        writes, clamped = [], False
        for i in valid:
            w = 1e6 / wps[i] - syncs[i]
            if w < 1.0:
                w, clamped = 1.0, True
            writes.append(w)
        write_mean = sum(writes) / len(writes)
        printed = " and ".join(f"{s:.1f}" for s in syncs)
        if dropped:
            combined = (f"{sync_mean:.2f} µs from run "
                        + ", ".join(runs[i]["run"] for i in valid) + " only: run "
                        + ", ".join(runs[i]["run"] for i in dropped) + " printed 0.0, taken as "
                        "not reported (the post's own overview table gives the other run's "
                        "figure) and left out of the sync and write means; its rate is in "
                        "ops_per_s")
        else:
            combined = f"{sync_mean:.2f} µs, the mean of the runs"
        note = (f"{head}; mean {op} latency (fio) {printed} µs → {combined}. write = "
                f"1/writes_per_s − sync per run → {write_mean:.1f} µs: derived from the "
                "published figures, not published itself.")
        if clamped:
            note += " A derived write came out below 1 µs and was clamped to 1 µs."
        note += f" {_COUNT_NOTE} No distribution published."
        tests.append(ProfileTest(
            op=op, write_bytes=size, direct=bool(direct), jobs=jobs, ops_per_s=ops_per_s,
            write=LatencySummary.mean_only(round(write_mean * 1e3, 1), count),
            sync=LatencySummary.mean_only(round(sync_mean * 1e3, 1), count),
            source="published", note=note))
    return tests


def loop_test(row: dict, dev: Dev) -> ProfileTest:
    """Seeds 001/003/004: one timed loop of write+sync → the total component."""
    src = source_key(row)
    op, size = row["op"], int(row["write_bytes"])
    direct = _direct(row["direct"])
    rate = _f(row["ops_per_s"])
    lat = _f(row["sync_latency_us"])
    iterations = dev.iterations if dev.iterations is not None else ITERATIONS[src]
    what = f"{_size(size)} {'O_DIRECT' if direct is not False else 'buffered'} write + {op}"
    if lat is not None:
        mean_us = lat
        note = (f"published: {_num(rate)}/s, {format_ns(lat * 1e3)} per {what} (mean of the whole "
                "write+sync; no distribution published)")
    else:
        mean_us = 1e6 / rate
        note = (f"published: {_num(rate)}/s only; mean {format_ns(mean_us * 1e3)} = 1/rate, "
                f"derived (no latency published) for {what}")
    if iterations:
        note += f"; {iterations:,} iterations"
    if direct is False and dev.zfs:
        note += "; O_DIRECT off (ZFS)"
    if direct is None:
        note += "; " + _SAME_SCRIPT
    extra = (row.get("note") or "").strip()
    if extra and extra not in ("buffered", "rate only") and not extra.startswith("mean only"):
        note += f"; CSV note: {extra}"
    note += "."
    return ProfileTest(op=op, write_bytes=size, direct=direct is not False, jobs=int(row["jobs"]),
                       ops_per_s=rate,
                       total=LatencySummary.mean_only(round(mean_us * 1e3, 1), iterations),
                       source="published", note=note)


def assumed_tests(dev: Dev) -> list[ProfileTest]:
    a = ASSUMPTIONS[dev.assume]
    out = []
    for size, us, basis in ((K16, a.write_16k_us, a.basis_16k), (M2, a.write_2m_us, a.basis_2m)):
        note = f"assumed ({dev.assume}, {_size(size)} write without sync): {basis}."
        if dev.assume_note:
            note += f" {dev.assume_note}."
        out.append(ProfileTest(op="none", write_bytes=size, direct=dev.direct_natural, jobs=1,
                               write=LatencySummary.mean_only(round(us * 1e3, 1)),
                               source="assumed", note=note))
    return out


# =========================================================================================
# PLP verdict: a small pure function of the published facts (the measured counterpart,
# innoflush.measure.plp.plp_verdict, judges a device from its kernel facts and timings)
# =========================================================================================
def published_verdict(*, cls: str, plp: str, write_cache: str, rotational: bool | None, zfs: bool,
                flush_ignored_quote: str, figure_us: float, figure_what: str,
                fdatasync_us: float | None = None, extra: tuple[str, ...] = ()) -> dict:
    """What the published figures say about the write cache, and whether InnoDB's
    O_DIRECT_NO_FSYNC (O_DIRECT writes never followed by fsync) would be safe on it.

    figure_us is the published mean of the cheapest flush the source gives: fio's sync
    latency after a 16 KB write (seed 000) or a whole small write+fsync (the loops).
    """
    fig = f"{figure_what}: {format_ns(figure_us * 1e3)} (published mean)"
    if fdatasync_us is not None:
        fig += f", fdatasync {format_ns(fdatasync_us * 1e3)}"
    reasons = [fig + "."]

    def out(verdict: str, safe: bool | None, *why: str) -> dict:
        return {"verdict": verdict, "o_direct_no_fsync_safe": safe,
                "reasons": [*reasons, *why, *extra]}

    if zfs:
        return out(VOLATILE, False,
                   "ZFS: O_DIRECT has to be off (seed 001); fsync returns once the data is in "
                   "the ZIL and 'the real write operation is done a few seconds later', so "
                   "writes not followed by an fsync wait in RAM.")
    if write_cache == "battery-backed":
        return out(NON_VOLATILE, True,
                   "Battery-backed controller cache: the flush is acknowledged from protected "
                   "DRAM, which is why it is this fast.")
    if write_cache == "off":
        return out(WRITE_THROUGH, True,
                   "The write cache is off: a write completes on the media.")
    if flush_ignored_quote:
        return out(NON_VOLATILE, False if plp == "no" else None,
                   f"The source's own judgement: {flush_ignored_quote}.",
                   "If the flush is ignored, neither fsync nor its absence makes writes durable.")
    if cls in ("cloud block storage", "SAN"):
        why = ["Networked storage: how the service acknowledges a write or a flush is not "
               "published, so the cache cannot be judged from these figures."]
        if fdatasync_us is not None and figure_us > 5 * fdatasync_us:
            why.append(f"fsync costs {figure_us / fdatasync_us:.0f}× fdatasync: the difference "
                       "is file-metadata (journal) work, not a device cache flush.")
        return out(UNKNOWN, None, *why)
    plp_says = {"yes": "power-loss protection stated by the source",
                "claimed": "power-loss protection claimed (by the web, per the source)",
                "no": "no power-loss protection, per the source",
                "unknown": "power-loss protection not stated"}[plp]
    if figure_us <= FAST_FLUSH_US:
        if plp in ("yes", "claimed"):
            return out(NON_VOLATILE, True,
                       f"A flush this cheap (≤ {FAST_FLUSH_US:.0f} µs) does not empty a cache to "
                       f"flash; with {plp_says}, the cache survives power loss.")
        return out(NON_VOLATILE, False if plp == "no" else None,
                   f"A flush this cheap (≤ {FAST_FLUSH_US:.0f} µs) means the cache is protected or "
                   f"the flush is not honoured; {plp_says}, so which one cannot be told from "
                   "the figures.")
    if figure_us >= SLOW_FLUSH_US:
        if plp == "yes":
            return out(UNKNOWN, None,
                       f"{plp_says.capitalize()}, yet the flush is slow (≥ "
                       f"{SLOW_FLUSH_US:.0f} µs): the figures and the claim disagree.")
        disk = rotational or (rotational is None and cls.startswith("hdd"))
        if disk and write_cache != "on":
            return out(UNKNOWN, None,
                       "The flush costs what reaching a rotating disk costs; whether the "
                       "drive's own write cache was on is not stated.")
        if disk:
            return out(VOLATILE, False,
                       "Flushes are honoured (the cost is that of reaching the platters) and "
                       "the drive's write cache is on: without fsync, O_DIRECT writes stay in "
                       "that cache (seed 001's experiment: O_DIRECT writes with the cache on "
                       "return in 0.22 ms, 4,651/s, 'there's no way the drive can persist 4651 "
                       "writes per second').")
        why = [f"A flush this slow (≥ {SLOW_FLUSH_US:.0f} µs) is the cost of emptying a "
               f"volatile write cache ({PROTECTED_FLUSH})."]
        if plp == "claimed":
            why.append("Power-loss protection is claimed, but a protected cache would not "
                       "need this long to flush: treated as volatile.")
        return out(VOLATILE, False, *why)
    # between FAST and SLOW
    if plp == "yes":
        return out(NON_VOLATILE, True,
                   f"{plp_says.capitalize()}; the figure includes the write and, for the "
                   "Python loops, the interpreter.")
    if plp == "no":
        return out(VOLATILE, False,
                   f"{plp_says.capitalize()}, so its write cache is volatile; the flush "
                   f"({format_ns(figure_us * 1e3)}) is neither a protected cache's nor clearly "
                   "a full one.")
    return out(UNKNOWN, None,
               f"Between a protected cache's flush (≤ {FAST_FLUSH_US:.0f} µs) and a volatile "
               f"one's (≥ {SLOW_FLUSH_US:.0f} µs), with {plp_says}.")


def verdict_for(dev: Dev, tests: list[ProfileTest]) -> dict:
    def pick(op: str):
        for t in sorted(tests, key=lambda t: (not t.direct, t.write_bytes)):
            if t.op == op and t.source == "published" and (t.sync or t.total):
                return t
        return None

    fs, fds = pick("fsync"), pick("fdatasync")
    if fs.sync is not None:
        what = f"fsync after a {_size(fs.write_bytes)} O_DIRECT write"
        fig, fdig = fs.sync.mean_ns / 1e3, (fds.sync.mean_ns / 1e3 if fds else None)
    else:
        mode = "O_DIRECT" if fs.direct else "buffered"
        what = f"{_size(fs.write_bytes)} {mode} write + fsync"
        fig = fs.total.mean_ns / 1e3
        fdig = fds.total.mean_ns / 1e3 if fds and fds.total else None
    return published_verdict(cls=dev.cls, plp=dev.plp, write_cache=dev.write_cache,
                       rotational=dev.rotational, zfs=dev.zfs,
                       flush_ignored_quote=dev.flush_ignored_quote, figure_us=fig,
                       figure_what=what, fdatasync_us=fdig, extra=dev.reasons)


# =========================================================================================
# Profiles
# =========================================================================================
def _select(rows: list[dict], dev: Dev) -> list[dict]:
    out = [r for r in rows if source_key(r) == dev.src and r["device_id"] == dev.device_id
           and (dev.host is None or r["host"] == dev.host)
           and (dev.filesystem_is is None or r["filesystem"] == dev.filesystem_is)]
    if not out:
        raise SystemExit(f"build_builtin_profiles: no CSV rows for {dev.name}")
    return out


def _mention_note(row: dict, quote: str) -> str:
    rate = float(row["ops_per_s"])
    return (f"Seed 004 (Percona 2019): {quote}. Rate only: 1/rate = {format_ns(1e9 / rate)} "
            "(derived). Not a separate profile; the 2018 figure is the one used here.")


def build_profile(dev: Dev, rows: list[dict], all_rows: list[dict]) -> DeviceProfile:
    mine = _select(rows, dev)
    first = mine[0]
    if dev.src == "000":
        tests = fio_tests(mine)
    else:
        tests = [loop_test(r, dev) for r in mine]
        tests.sort(key=lambda t: (OPS.index(t.op), t.write_bytes, not t.direct))
    if dev.assume:
        tests += assumed_tests(dev)
    prov = {"kind": "published", "source": first["source"], **SOURCES[dev.src]}
    notes = list(dev.notes)
    for (src, device_id), (target, quote) in MENTIONED.items():
        if target == dev.name:
            notes += [_mention_note(r, quote) for r in all_rows
                      if source_key(r) == src and r["device_id"] == device_id]
    if notes:
        prov["notes"] = notes
    prov["transcribed_in"] = "reference/published_sync_latency.csv"
    device = {
        "class": dev.cls,
        "model": dev.model,
        "plp": dev.plp,
        "plp_note": dev.plp_note,
        "write_cache": dev.write_cache,
        "filesystem": dev.filesystem or first["filesystem"] or None,
        "raid": dev.raid or first["raid"] or None,
        "host": dev.host_desc or first["host"] or None,
        "rotational": dev.rotational,
    }
    profile = DeviceProfile(name=dev.name, title=dev.title, provenance=prov, device=device,
                            tests=tests, plp_verdict=verdict_for(dev, tests))
    # what we write must load: round-trip through the validating reader
    return DeviceProfile.from_json(profile.to_json(), f"generated {dev.name}")


def build_all(csv_path: Path) -> list[DeviceProfile]:
    rows = read_rows(csv_path)
    used: set[int] = set()
    profiles = []
    for dev in DEVICES:
        for r in _select(rows, dev):
            used.add(id(r))
        profiles.append(build_profile(dev, rows, rows))
    names = [p.name for p in profiles]
    if len(set(names)) != len(names):
        raise SystemExit("build_builtin_profiles: duplicate profile names")
    left = [r for r in rows if id(r) not in used
            and (source_key(r), r["device_id"]) not in MENTIONED
            and (source_key(r), r["device_id"]) not in EVIDENCE_ONLY]
    if left:
        raise SystemExit("build_builtin_profiles: CSV rows not used by any profile: "
                         + ", ".join(sorted({r["device_id"] for r in left})))
    return profiles


def write_all(profiles: list[DeviceProfile], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    wanted = {f"{p.name}.json" for p in profiles}
    for stale in sorted(out.glob("*.json")):
        if stale.name not in wanted:
            stale.unlink()
            print(f"removed stale {stale}", file=sys.stderr)
    paths = []
    for p in profiles:
        path = out / f"{p.name}.json"
        path.write_text(p.to_json(), encoding="utf-8")
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", nargs="?", type=Path, default=DEFAULT_CSV,
                    help=f"published figures (default: {DEFAULT_CSV})")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT,
                    help="directory for the JSON profiles (default: innoflush/profiles/builtin)")
    args = ap.parse_args(argv)
    if not args.csv.is_file():
        print(f"build_builtin_profiles: no such file: {args.csv}", file=sys.stderr)
        return 2
    paths = write_all(build_all(args.csv), args.out)
    print(f"wrote {len(paths)} profiles to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
