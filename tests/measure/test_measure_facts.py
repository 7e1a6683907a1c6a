"""Device facts: mountinfo parsing, the block-device walk (on a fake /sys), no crashes."""

from __future__ import annotations

import os

from innoflush.measure.facts import (
    block_facts,
    cpu_model,
    device_class,
    disk_facts,
    find_mount,
    gather_facts,
    mount_facts,
    parse_mountinfo,
)

MOUNTINFO = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 8:2 / / rw,relatime - ext4 /dev/sda2 rw,errors=remount-ro
40 27 8:17 / /data rw,noatime - xfs /dev/sdb1 rw,attr2,inode64
41 40 0:45 / /data/tmp rw - tmpfs tmpfs rw,size=100k
42 27 253:0 / /srv/my\\040db rw,relatime - ext4 /dev/mapper/vg-db rw,nobarrier
43 27 0:50 /@home /home rw - btrfs /dev/nvme0n1p3 rw,ssd,subvol=/@home
44 40 8:33 / /data rw,relatime - ext4 /dev/sdc1 rw
garbage line without separator
"""


def test_parse_mountinfo_fields_and_escapes():
    mounts = parse_mountinfo(MOUNTINFO)
    assert len(mounts) == 7  # the garbage line is skipped
    db = [m for m in mounts if m["dev"] == "253:0"][0]
    assert db["mount_point"] == "/srv/my db"
    assert db["fs_type"] == "ext4" and db["source"] == "/dev/mapper/vg-db"
    assert db["super_options"] == "rw,nobarrier"


def test_find_mount_longest_prefix_and_last_wins():
    mounts = parse_mountinfo(MOUNTINFO)
    assert find_mount(mounts, "/data/tmp/x")["fs_type"] == "tmpfs"
    assert find_mount(mounts, "/data/tmpfoo")["source"] == "/dev/sdc1"  # not /data/tmp
    assert find_mount(mounts, "/data")["source"] == "/dev/sdc1"  # stacked: later wins
    assert find_mount(mounts, "/srv/my db/x")["dev"] == "253:0"
    assert find_mount(mounts, "/usr/lib")["mount_point"] == "/"
    assert find_mount([], "/x") is None


def test_mount_facts_missing_is_none():
    f = mount_facts("/x", "")
    assert f["fs_type"] is None and f["mount_point"] is None
    f = mount_facts("/home/u", MOUNTINFO)
    assert f["fs_type"] == "btrfs" and f["mount_options"] == "rw"


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def _fake_disk(sys, name, model=None, rot="0", wc="write back", serial=None):
    dev = sys / "devices" / "pci0" / name
    (dev / "queue").mkdir(parents=True)
    _write(dev / "queue" / "rotational", rot)
    _write(dev / "queue" / "write_cache", wc)
    _write(dev / "queue" / "fua", "1")
    _write(dev / "queue" / "logical_block_size", "512")
    _write(dev / "queue" / "physical_block_size", "4096")
    if model:
        _write(dev / "device" / "model", model + "   ")
    if serial:
        _write(dev / "device" / "serial", serial)
    for link in (sys / "block" / name, sys / "class" / "block" / name):
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(dev)
    return dev


def _fake_part(sys, disk_dev, name, majmin):
    part = disk_dev / name
    part.mkdir()
    _write(part / "partition", "1")
    (sys / "class" / "block" / name).symlink_to(part)
    (sys / "dev" / "block").mkdir(parents=True, exist_ok=True)
    (sys / "dev" / "block" / majmin).symlink_to(part)
    return part


def test_partition_resolves_to_its_disk(tmp_path):
    sys = tmp_path / "sys"
    sda = _fake_disk(sys, "sda", model="Samsung SSD 870", serial="S123")
    _fake_part(sys, sda, "sda1", "8:1")
    f = block_facts(os.makedev(8, 1), sys)
    assert f["block_device"] == "sda1" and f["block_device_kind"] == "partition"
    assert [d["name"] for d in f["disks"]] == ["sda"]
    d = f["disks"][0]
    assert d["model"] == "Samsung SSD 870" and d["serial"] == "S123"
    assert d["rotational"] is False and d["write_cache"] == "write back"
    assert d["fua"] is True and d["logical_block_size"] == 512
    assert d["physical_block_size"] == 4096 and d["vendor"] is None
    assert d["virtual"] is False


def test_dm_follows_slaves_to_all_disks(tmp_path):
    sys = tmp_path / "sys"
    sda = _fake_disk(sys, "sda")
    sdb = _fake_disk(sys, "sdb", rot="1")
    _fake_part(sys, sda, "sda1", "8:1")
    _fake_part(sys, sdb, "sdb1", "8:17")
    dm = sys / "devices" / "virtual" / "dm-0"
    (dm / "slaves").mkdir(parents=True)
    _write(dm / "dm" / "name", "vg-data")
    (dm / "slaves" / "sda1").symlink_to(sys / "class" / "block" / "sda1")
    (dm / "slaves" / "sdb1").symlink_to(sys / "class" / "block" / "sdb1")
    (sys / "class" / "block" / "dm-0").symlink_to(dm)
    (sys / "dev" / "block" / "253:0").symlink_to(dm)
    f = block_facts(os.makedev(253, 0), sys)
    assert f["block_device_kind"] == "dm" and f["dm_name"] == "vg-data"
    assert [d["name"] for d in f["disks"]] == ["sda", "sdb"]
    assert f["disks"][1]["rotational"] is True
    assert device_class(dict(f, fs_type="ext4")) == "RAID/LVM of SSD"


def test_anonymous_device_has_no_disks():
    f = block_facts(os.makedev(0, 45))
    assert f["anonymous_device"] is True and f["disks"] == []
    assert "anonymous" in f["disks_note"]


def test_unknown_device_number_is_not_a_crash(tmp_path):
    f = block_facts(os.makedev(8, 99), tmp_path / "nosys")
    assert f["block_device"] is None and f["disks"] == []
    assert f["disks_note"]


def test_disk_facts_all_missing_is_none(tmp_path):
    d = disk_facts("vdz", tmp_path)
    assert d["name"] == "vdz" and d["virtual"] is True
    for k in ("model", "vendor", "serial", "rotational", "write_cache", "fua",
              "logical_block_size", "physical_block_size", "cache_type"):
        assert d[k] is None


def test_cpu_model_from_text():
    assert cpu_model("processor\t: 0\nmodel name\t: Test CPU @ 3GHz\n") == "Test CPU @ 3GHz"


def test_gather_facts_on_a_real_directory(tmp_path):
    f = gather_facts(tmp_path)
    assert f["path"] == os.path.realpath(tmp_path)
    for key in ("fs_type", "mount_point", "mount_options", "dev", "anonymous_device",
                "block_device", "disks", "disks_note", "o_direct", "kernel", "cpu_model",
                "cpu_count", "hostname"):
        assert key in f
    assert f["kernel"].startswith(os.uname().sysname)
    assert isinstance(f["disks"], list)


def test_device_class_guesses():
    assert device_class({"fs_type": "tmpfs", "disks": []}) == "memory (tmpfs)"
    assert device_class({"disks": []}) == "unknown"
    assert device_class({"disks": [{"name": "vda", "virtual": True}]}) == "virtual disk"
    assert device_class({"disks": [{"name": "nvme0n1", "rotational": False}]}) == "NVMe SSD"
    assert device_class({"disks": [{"name": "sda", "rotational": True}]}) == "hdd"


def test_hw_queues_and_completion_cores(tmp_path):
    from innoflush.measure.facts import completion_cores

    sys = tmp_path / "sys"
    one = _fake_disk(sys, "vdq")
    (one / "mq" / "0").mkdir(parents=True)
    many = _fake_disk(sys, "nvme9n1")
    for q in range(8):
        (many / "mq" / str(q)).mkdir(parents=True)
    assert disk_facts("vdq", sys)["hw_queues"] == 1
    assert disk_facts("nvme9n1", sys)["hw_queues"] == 8
    assert disk_facts("vdz", tmp_path)["hw_queues"] is None
    facts = {"cpu_count": 4, "disks": [disk_facts("nvme9n1", sys)]}
    assert completion_cores(facts) == 4              # a queue per CPU: every core
    facts["disks"].append(disk_facts("vdq", sys))
    assert completion_cores(facts) == 1              # the fewest queues decide
    assert completion_cores({"cpu_count": 4, "disks": []}) is None
    assert completion_cores({"cpu_count": 4, "disks": [{"hw_queues": None}]}) is None


def test_sync_call_cpu_is_measured_in_a_file_of_ours(tmp_path):
    from innoflush.measure.probe import sync_call_cpu_us

    (tmp_path / "theirs.txt").write_text("keep me")
    us = sync_call_cpu_us(str(tmp_path), "fdatasync", 4096, direct=False, ops=50)
    assert us is not None and 0 < us < 100_000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["theirs.txt"]
