"""The PLP verdict rules: a pure function of facts and measured sync p50s."""

from __future__ import annotations

import pytest

from innoflush.measure.plp import (
    NON_VOLATILE,
    UNKNOWN,
    VERDICTS,
    VOLATILE,
    WRITE_THROUGH,
    plp_verdict,
    verdict_from_tests,
)
from innoflush.measure.result import TestResult
from innoflush.stats import LatencySummary

US = 1_000
MS = 1_000_000


def disk(name="sda", rotational=False, write_cache="write back", virtual=False, **kw):
    return {"name": name, "rotational": rotational, "write_cache": write_cache,
            "virtual": virtual, "model": kw.get("model")}


def facts(*disks, fs="ext4", mount_options="rw,relatime", super_options="rw"):
    return {"fs_type": fs, "disks": list(disks), "mount_options": mount_options,
            "super_options": super_options}


def check_shape(v):
    assert v["verdict"] in VERDICTS
    assert v["o_direct_no_fsync_safe"] in (True, False, None)
    assert v["reasons"] and all(isinstance(r, str) and r for r in v["reasons"])


def test_consumer_ssd_slow_flush_is_volatile_and_unsafe():
    v = plp_verdict(facts(disk("sda")), fsync_p50_ns=4 * MS, fdatasync_p50_ns=2.5 * MS)
    check_shape(v)
    assert v["verdict"] == VOLATILE
    assert v["o_direct_no_fsync_safe"] is False
    text = " ".join(v["reasons"])
    assert "2.50 ms" in text and "4.00 ms" in text  # cites the figures
    assert "unsafe" in text


def test_enterprise_flash_fast_flush_is_non_volatile_but_not_declared_safe():
    v = plp_verdict(facts(disk("nvme0n1")), fsync_p50_ns=30 * US, fdatasync_p50_ns=20 * US)
    check_shape(v)
    assert v["verdict"] == NON_VOLATILE
    assert v["o_direct_no_fsync_safe"] is None  # a lying device looks the same
    text = " ".join(v["reasons"])
    assert "20.0 µs" in text and "power-loss protection" in text and "lying" in text


def test_write_through_cache():
    v = plp_verdict(facts(disk("sdb", write_cache="write through")), 3 * MS, 3 * MS)
    check_shape(v)
    assert v["verdict"] == WRITE_THROUGH
    assert v["o_direct_no_fsync_safe"] is True


def test_write_through_on_spinning_disk_with_fast_writes_mentions_controller():
    v = plp_verdict(facts(disk("sda", rotational=True, write_cache="write through")),
                    40 * US, 30 * US)
    assert v["verdict"] == WRITE_THROUGH
    assert "controller" in " ".join(v["reasons"])


def test_spinning_disk_fast_flush_is_a_cache_absorbing_flushes():
    v = plp_verdict(facts(disk("sda", rotational=True)), 25 * US, 30 * US)
    assert v["verdict"] == NON_VOLATILE
    assert v["o_direct_no_fsync_safe"] is None
    text = " ".join(v["reasons"])
    assert "RAID controller" in text and "battery" in text


def test_virtio_disk_mentions_rotational_flag_and_host():
    v = plp_verdict(facts(disk("vda", rotational=True, virtual=True)), 25 * US, 50 * US)
    assert v["verdict"] == NON_VOLATILE
    text = " ".join(v["reasons"])
    assert "vda" in text and "rotational" in text and "host" in text
    # must not claim it is a spinning disk behind a RAID controller
    assert "RAID controller" not in text


def test_virtio_disk_detected_by_name_even_without_flag():
    v = plp_verdict(facts(disk("vdb", rotational=True)), 25 * US, None)
    assert "rotational" in " ".join(v["reasons"])


def test_virtio_slow_flush_is_volatile():
    v = plp_verdict(facts(disk("vda", rotational=True, virtual=True)), 3 * MS, 2 * MS)
    assert v["verdict"] == VOLATILE
    assert v["o_direct_no_fsync_safe"] is False


@pytest.mark.parametrize("fs", ["tmpfs", "ramfs"])
def test_memory_filesystem_is_unknown(fs):
    v = plp_verdict(facts(fs=fs), 1 * US, 1 * US)
    assert v["verdict"] == UNKNOWN
    assert v["o_direct_no_fsync_safe"] is None
    assert "memory" in " ".join(v["reasons"])


def test_nobarrier_mount_makes_timing_meaningless():
    v = plp_verdict(facts(disk("sda"), super_options="rw,nobarrier"), 20 * US, 20 * US)
    assert v["verdict"] == UNKNOWN
    assert "nobarrier" in " ".join(v["reasons"])


def test_in_between_latency_gives_no_verdict():
    v = plp_verdict(facts(disk("sda")), 250 * US, 300 * US)
    assert v["verdict"] == UNKNOWN
    assert v["o_direct_no_fsync_safe"] is None


def test_slow_flush_with_unknown_cache_must_not_claim_volatile():
    v = plp_verdict(facts(), 4 * MS, 4 * MS)
    assert v["verdict"] == UNKNOWN
    assert v["o_direct_no_fsync_safe"] is None


def test_fast_flush_must_not_say_volatile():
    for rot in (True, False, None):
        v = plp_verdict(facts(disk("sda", rotational=rot)), 15 * US, 12 * US)
        assert v["verdict"] != VOLATILE
        assert v["o_direct_no_fsync_safe"] is not False


def test_write_through_must_not_say_volatile_even_when_slow():
    v = plp_verdict(facts(disk("sda", rotational=True, write_cache="write through")),
                    12 * MS, 10 * MS)
    assert v["verdict"] == WRITE_THROUGH


def test_mixed_caches_take_the_weakest():
    v = plp_verdict(facts(disk("sda", write_cache="write through"), disk("sdb")),
                    3 * MS, 3 * MS)
    assert v["verdict"] == VOLATILE


def test_no_measurement_is_unknown_and_mentions_write_back():
    v = plp_verdict(facts(disk("sda")), None, None)
    check_shape(v)
    assert v["verdict"] == UNKNOWN
    assert "write-back" in " ".join(v["reasons"])


def test_empty_facts_never_crash():
    for f, s in (({}, None), ({}, 20 * US), ({}, 5 * MS), ({"disks": None}, 20 * US)):
        check_shape(plp_verdict(f, s, s))


def _t(op, size, direct, p50, jobs=1, unsupported=None):
    s = LatencySummary(count=10, mean_ns=p50, p50_ns=p50)
    return TestResult(op=op, write_bytes=size, direct=direct, jobs=jobs, count=10,
                      write=s, sync=s if op in ("fsync", "fdatasync") else None,
                      unsupported=unsupported)


def test_verdict_from_tests_prefers_16k_odirect_single_job():
    tests = [_t("fsync", 2 << 20, True, 9 * MS), _t("fsync", 16384, False, 8 * MS),
             _t("fsync", 16384, True, 20 * US), _t("fsync", 16384, True, 7 * MS, jobs=4),
             _t("fdatasync", 16384, True, 15 * US), _t("none", 16384, True, 5 * MS)]
    v = verdict_from_tests(facts(disk("nvme0n1")), tests)
    assert v["verdict"] == NON_VOLATILE
    assert v["basis"] == "16k O_DIRECT, jobs 1"


def test_verdict_from_tests_falls_back_to_buffered_when_direct_unsupported():
    tests = [_t("fsync", 16384, True, 0, unsupported="O_DIRECT refused"),
             _t("fsync", 16384, False, 3 * MS)]
    v = verdict_from_tests(facts(disk("sda")), tests)
    assert v["verdict"] == VOLATILE
    assert v["basis"] == "16k buffered, jobs 1"
