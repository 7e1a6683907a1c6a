"""The ``flush-method.*`` rules: innodb_flush_method (MariaDB 11: innodb_doublewrite=fast
and innodb_data_file_*).

O_DIRECT_NO_FSYNC only where the data device's write cache is non-volatile or off (the
profile's plp_verdict says o_direct_no_fsync_safe=true), on a version with the 8.0.14 /
5.7.25 fix, with doublewrite and data on one filesystem, not on ZFS, and only when
data-file fsyncs are a visible cost. Never on a volatile cache — and a data-safety finding
when it is set there. ``fsync`` where O_DIRECT is not supported.

What makes O_DIRECT_NO_FSYNC safe and worth it: o_direct_no_fsync.py; how a change of
method is written on the server (MariaDB 11's variables): flush_method_change.py.
"""

from __future__ import annotations

from ...units import format_ns
from .flush_method_change import change_to_method
from .model import Change, Check, Context, Rule, dev_name
from .o_direct_no_fsync import (
    no_fsync_fix_present,
    no_fsync_skips,
    other_fsyncs_visible,
    safe_for_no_fsync,
    volatile_cache,
)

FAMILY = "flush-method"
# network filesystems (mountinfo's type; fuse.* too): a direct write's semantics there
# are the client's and the server's, not a local disk's
NETWORK_FS = ("nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "glusterfs", "afs")

MYSQL_MANUAL = ("MySQL Reference Manual, innodb_flush_method "
                "(https://dev.mysql.com/doc/refman/8.0/en/innodb-parameters.html"
                "#sysvar_innodb_flush_method)")
MARIADB_MANUAL = ("MariaDB documentation, InnoDB Flush Method "
                  "(https://mariadb.com/docs/server/server-usage/storage-engines/innodb/"
                  "innodb-flush-method)")
OPENZFS_23 = "OpenZFS 2.3.0 release notes (Direct I/O, openzfs/zfs#10018)"
OPENZFS_TUNING = ("OpenZFS documentation, Performance and Tuning: Workload Tuning, "
                  "MySQL / InnoDB (https://openzfs.github.io/openzfs-docs/"
                  "Performance%20and%20Tuning/Workload%20Tuning.html)")
MDEV_33545 = ("MDEV-33545 (innodb_doublewrite=fast replaces O_DIRECT_NO_FSYNC in MariaDB "
              "11.0.6 / 11.1.5 / 11.2.4 / 11.4.2; unlike O_DIRECT_NO_FSYNC before it, fast "
              "still syncs the doublewrite buffer: MariaDB/server pull request #3091)")
NETAPP_NFS = ("NetApp ONTAP documentation, MySQL innodb_flush_method "
              "(https://docs.netapp.com/us-en/ontap-apps-dbs/mysql/"
              "mysql-innodb_flush_method.html): on NFS, fsync outperformed O_DIRECT, whose "
              "writes reached the server as many small serial writes")
DEDICATED_MANUAL = ("MySQL 8.0 Reference Manual, Enabling Automatic Configuration for a "
                    "Dedicated MySQL Server (https://dev.mysql.com/doc/refman/8.0/en/"
                    "innodb-dedicated-server.html): as of 8.0.14 innodb_dedicated_server "
                    "sets innodb_flush_method to O_DIRECT_NO_FSYNC where available, unless "
                    "it is set explicitly")


# ---- what the predicates read -------------------------------------------------------------

def _method(ctx: Context) -> str:
    return ctx.facts.flush_method


def _no_direct_fs(ctx: Context) -> bool:
    return ctx.filesystem in ("tmpfs", "zfs")


def _network_fs(ctx: Context) -> bool:
    fs = ctx.filesystem or ""
    return fs in NETWORK_FS or fs.startswith("fuse.")


def _network_why(ctx: Context) -> str:
    return (f"the datadir is on {ctx.filesystem}, a network filesystem: O_DIRECT there "
            "bypasses the client's page cache, so each write goes to the file server as "
            "InnoDB issues it (small, serial), and a direct write may still be an "
            "unstable write on the server that only the fsync's COMMIT makes durable")


def _dedicated(ctx: Context) -> bool:
    f = ctx.facts
    return (not f.is_mariadb and (8, 0, 14) <= f.version_tuple < (8, 1, 0)
            and str(f.variables.get("innodb_dedicated_server", "")).upper() in ("ON", "1"))


def _fs_why(ctx: Context) -> str:
    return {"tmpfs": "the datadir is on tmpfs, which refuses O_DIRECT",
            "zfs": "the datadir is on ZFS, which does not honour O_DIRECT before OpenZFS "
                   "2.3 (the ARC caches the data anyway); with 2.3+ and direct=standard, "
                   "O_DIRECT is possible"}.get(ctx.filesystem or "", "")


def _is(*methods: str):
    return lambda ctx: _method(ctx) in methods


# ---- builders -----------------------------------------------------------------------------

def _testing_value(ctx: Context) -> Change:
    m = _method(ctx)
    return change_to_method(
        ctx, "fsync" if _no_direct_fs(ctx) else "O_DIRECT",
        [f"innodb_flush_method={m} is a testing value: InnoDB skips or cuts short the "
         "fsyncs of its data files"],
        f"with {m}, an OS crash or power loss can corrupt data files that InnoDB "
        "believes durable; changing to a normal method only adds the syncs back")


def _no_fsync_without_fix(ctx: Context) -> Change:
    return change_to_method(
        ctx, "O_DIRECT",
        [f"{ctx.facts.title} predates the O_DIRECT_NO_FSYNC fix of 5.7.25 / 8.0.14 "
         "(Bug #27309336): files are not fsynced after they are created or "
         "extended, so their size can be lost in a crash"],
        "on an OS crash or power loss a table grown since the last sync can come "
        "back truncated or corrupt; O_DIRECT adds one fsync per page-flush batch")


def _no_fsync_on_volatile(ctx: Context) -> Change:
    d = ctx.device
    return change_to_method(
        ctx, "O_DIRECT",
        [f"O_DIRECT_NO_FSYNC is set, but {dev_name(ctx)} has a volatile write "
         f"cache (verdict: {d.verdict or 'unsafe'})"] + d.reasons[:3]
        + ["O_DIRECT only bypasses the page cache: without fsync the written pages "
           "may sit in the device's cache, and nothing tells the device to make "
           "them durable before InnoDB advances its checkpoint"],
        "currently: on power loss, data pages InnoDB considers written can be lost "
        "while the redo that would rebuild them has been recycled — silent "
        "corruption. After the change: one fsync per data file per flush batch "
        "(MySQL) or per checkpoint (MariaDB), the cost shown in the prediction")


def _no_fsync_on_zfs(ctx: Context) -> Change:
    return change_to_method(
        ctx, "fsync",
        [_fs_why(ctx), "O_DIRECT_NO_FSYNC relies on direct writes being durable on "
         "completion, which ZFS does not promise without its own sync"],
        "on power loss, pages written since the last ZFS transaction-group commit "
        "may be missing while InnoDB believes them durable")


def _o_direct_unsupported(ctx: Context) -> Change:
    return change_to_method(
        ctx, "fsync", [_fs_why(ctx)],
        "none for durability: fsync mode syncs the same files; it only stops asking "
        "the filesystem for a mode it does not provide")


def _fsync_double_buffering(ctx: Context) -> Change:
    return change_to_method(
        ctx, "O_DIRECT",
        [f"innodb_flush_method=fsync reads and writes data files through the OS page "
         f"cache: every page is cached twice (buffer pool and page cache), and dirty "
         f"page-cache data is written back later; {ctx.filesystem} supports O_DIRECT"],
        "none for durability: the same files are fsynced; reads no longer benefit "
        "from the page cache, so a buffer pool sized for the page cache's memory "
        "should grow by it")


def _no_fsync_worth_it(ctx: Context) -> Change:
    f = ctx.facts
    _, text = other_fsyncs_visible(ctx)
    return change_to_method(
        ctx, "O_DIRECT_NO_FSYNC",
        [f"observed {text}",
         f"{dev_name(ctx)}: write cache judged non-volatile/safe "
         f"({ctx.device.verdict}); fsync {format_ns(ctx.device.fsync_ns)}"]
        + ctx.device.reasons[:2]
        + [f"{f.title} has the create/extend fsync fix; doublewrite and data share a "
           "filesystem"],
        f"relies on the device keeping acknowledged writes across power loss (the "
        f"verdict); {no_fsync_skips(f)}")


def _dedicated_no_fsync_on_volatile(ctx: Context) -> Change:
    ch = _no_fsync_on_volatile(ctx)
    ch.why = ["innodb_dedicated_server=ON: on MySQL 8.0.14+ it sets innodb_flush_method to "
              "O_DIRECT_NO_FSYNC unless innodb_flush_method is set explicitly, so this "
              "server skips the data files' fsyncs without anyone having chosen it"
              ] + ch.why
    ch.risk += ("; set innodb_flush_method explicitly in my.cnf (it overrides the "
                "dedicated server's choice; the other automatic settings stay)")
    return ch


def _o_dsync_double_buffering(ctx: Context) -> Change:
    return change_to_method(
        ctx, "O_DIRECT",
        ["innodb_flush_method=O_DSYNC: InnoDB opens the redo log with O_SYNC (synchronous "
         "writes, not O_DSYNC itself) and fsyncs the data files, which it reads and writes "
         f"through the OS page cache: every page is cached twice; {ctx.filesystem} "
         "supports O_DIRECT"],
        "none for durability: the data files are fsynced as before, and the redo log is "
        "synced by fsync after its writes instead of by O_SYNC writes; reads no longer "
        "benefit from the page cache, so the buffer pool should grow by the memory it held")


# ---- the table, in evaluation order (first match decides) ---------------------------------

def _check(kind: str, holds, text, summary: str) -> Check:
    return Check(FAMILY, kind, holds, text, summary)


ENTRIES: tuple[Rule | Check, ...] = (
    Rule(
        id="flush-method.testing-value", severity="data-safety",
        setting="innodb_flush_method", holds=_is("littlesync", "nosync"),
        build=_testing_value,
        summary="innodb_flush_method is `littlesync` or `nosync`: values for InnoDB's own "
                "performance testing, which skip or cut short the fsyncs of the data files.",
        recommends="`O_DIRECT` (`fsync` where the datadir is on tmpfs or ZFS).",
        risk="Now: an OS crash or power loss can corrupt data files InnoDB believes "
             "durable. The change only adds the syncs back.",
        source=MYSQL_MANUAL + " (littlesync and nosync: for internal performance testing, "
               "unsupported)"),
    Rule(
        id="flush-method.no-fsync-without-extend-fix", severity="data-safety",
        setting="innodb_flush_method",
        holds=lambda ctx: _method(ctx) == "O_DIRECT_NO_FSYNC"
        and not no_fsync_fix_present(ctx.facts),
        build=_no_fsync_without_fix,
        summary="O_DIRECT_NO_FSYNC is set on a MySQL older than 5.7.25 / 8.0.14, which does "
                "not fsync a data file after creating or extending it, whatever the device.",
        recommends="`O_DIRECT`.",
        risk="Now: a table grown since the last sync can come back truncated or corrupt "
             "after an OS crash or power loss. The change adds one fsync per page-flush "
             "batch.",
        source="MySQL Bug #27309336, fixed in 5.7.25 and 8.0.14 (release notes; "
               + MYSQL_MANUAL + ": \"As of MySQL 8.0.14, fsync() is called after creating "
               "a new file, after increasing file size, and after closing a file\")"),
    Rule(
        id="flush-method.dedicated-server-no-fsync-on-volatile-cache",
        severity="data-safety", setting="innodb_flush_method",
        holds=lambda ctx: (_method(ctx) == "O_DIRECT_NO_FSYNC" and _dedicated(ctx)
                           and volatile_cache(ctx)),
        build=_dedicated_no_fsync_on_volatile,
        summary="MySQL 8.0.14+ with innodb_dedicated_server=ON runs O_DIRECT_NO_FSYNC (what "
                "the dedicated-server mode picks when innodb_flush_method is not set "
                "explicitly) and the device profile judges the data device's write cache "
                "volatile: the data files' fsyncs are skipped on a cache that loses them.",
        recommends="`innodb_flush_method = O_DIRECT`, set explicitly in my.cnf.",
        risk="Now: on power loss, data pages InnoDB considers written can be lost while the "
             "redo that would rebuild them has been recycled. The change costs one fsync "
             "per data file per flush batch; the other settings innodb_dedicated_server "
             "chooses stay.",
        source=DEDICATED_MANUAL + "; " + MYSQL_MANUAL),
    Rule(
        id="flush-method.no-fsync-on-volatile-cache", severity="data-safety",
        setting="innodb_flush_method",
        holds=lambda ctx: _method(ctx) == "O_DIRECT_NO_FSYNC" and volatile_cache(ctx),
        build=_no_fsync_on_volatile,
        summary="O_DIRECT_NO_FSYNC (MariaDB 11: innodb_doublewrite=fast) is set and the "
                "device profile judges the data device's write cache volatile (verdict "
                "`volatile-cache`, or o_direct_no_fsync_safe=false): O_DIRECT only bypasses "
                "the page cache, and without fsync nothing makes the device persist its "
                "cache before InnoDB advances the checkpoint.",
        recommends="`O_DIRECT` (MariaDB 11: innodb_doublewrite=ON with "
                   "innodb_data_file_buffering=OFF, innodb_data_file_write_through=OFF).",
        risk="Now: on power loss, data pages InnoDB considers written can be lost while the "
             "redo that would rebuild them has been recycled (silent corruption). The "
             "change costs one fsync per data file per flush batch (MySQL) or per "
             "checkpoint (MariaDB).",
        source=MYSQL_MANUAL + "; MySQL storage/innobase/fil/fil0fil.cc "
               "(fil_buffering_disabled: no fsync of tablespace files under "
               "O_DIRECT_NO_FSYNC); " + MDEV_33545),
    Rule(
        id="flush-method.no-fsync-on-zfs", severity="data-safety",
        setting="innodb_flush_method",
        holds=lambda ctx: _method(ctx) == "O_DIRECT_NO_FSYNC" and ctx.filesystem == "zfs",
        build=_no_fsync_on_zfs,
        summary="O_DIRECT_NO_FSYNC is set (on a version with the fix, and the device not "
                "judged volatile) and the datadir is on ZFS: ZFS does not make a direct "
                "write durable on completion without its own sync.",
        recommends="`fsync`.",
        risk="Now: on power loss, pages written since the last ZFS transaction-group commit "
             "may be missing while InnoDB believes them durable.",
        source=OPENZFS_TUNING + "; " + OPENZFS_23),
    _check("cannot_judge",
           lambda ctx: _method(ctx) == "O_DIRECT_NO_FSYNC" and safe_for_no_fsync(ctx) is None,
           lambda ctx: (
               "whether O_DIRECT_NO_FSYNC (set now) is safe: that needs the data device's "
               "write-cache verdict (non-volatile/PLP or cache off) — give --profile with "
               "a plp_verdict, or --measure"
               + (f"; {dev_name(ctx)} has no verdict on it" if ctx.device else "")),
           "O_DIRECT_NO_FSYNC is set and there is no device profile, or it has no "
           "write-cache verdict (whether it is safe)."),
    _check("note", _is("O_DIRECT_NO_FSYNC"),
           lambda ctx: (f"O_DIRECT_NO_FSYNC is set and {dev_name(ctx)} is judged safe "
                        "for it (non-volatile write cache)"),
           "O_DIRECT_NO_FSYNC is set and the device is judged safe for it."),
    Rule(
        id="flush-method.o-direct-on-tmpfs-or-zfs", severity="performance",
        setting="innodb_flush_method",
        holds=lambda ctx: _method(ctx) == "O_DIRECT" and _no_direct_fs(ctx),
        build=_o_direct_unsupported,
        summary="innodb_flush_method is O_DIRECT but the datadir is on tmpfs (which refuses "
                "O_DIRECT) or ZFS (which does not honour it before OpenZFS 2.3; the ARC "
                "caches the data anyway).",
        recommends="`fsync`.",
        risk="None for durability: fsync mode syncs the same files; it only stops asking "
             "the filesystem for a mode it does not provide.",
        source=OPENZFS_23 + "; " + MARIADB_MANUAL),
    _check("note", lambda ctx: _method(ctx) == "fsync" and _no_direct_fs(ctx),
            lambda ctx: f"innodb_flush_method=fsync suits {ctx.filesystem}",
           "fsync on tmpfs or ZFS (it suits them)."),
    _check("note", lambda ctx: _method(ctx) in ("fsync", "O_DSYNC") and _network_fs(ctx),
           lambda ctx: (f"innodb_flush_method={_method(ctx)} kept: O_DIRECT is not advised "
                        f"here, {_network_why(ctx)}"),
           "fsync or O_DSYNC on a network filesystem (nfs, nfs4, cifs, smb3, 9p, ceph, "
           "glusterfs, fuse.*): kept, O_DIRECT is not advised there."),
    _check("cannot_judge", lambda ctx: _method(ctx) == "fsync" and ctx.filesystem is None,
           lambda ctx: (
               "whether O_DIRECT would be better than fsync: the datadir's filesystem is "
               "unknown (O_DIRECT avoids double buffering, but tmpfs and ZFS before 2.3 do "
               "not support it) — run on the server's host or give --profile"),
           "fsync, and the datadir's filesystem unknown (a remote server without a "
           "profile that names it)."),
    Rule(
        id="flush-method.fsync-double-buffering", severity="performance",
        setting="innodb_flush_method", holds=_is("fsync"),
        build=_fsync_double_buffering,
        summary="innodb_flush_method is fsync on a filesystem known to support O_DIRECT: "
                "every page is cached twice (buffer pool and OS page cache), and dirty "
                "page-cache data is written back later.",
        recommends="`O_DIRECT` (MariaDB 11: innodb_data_file_buffering=OFF).",
        risk="None for durability: the same files are fsynced. Reads no longer benefit from "
             "the page cache, so the buffer pool should grow by the memory the page cache "
             "held.",
        source=MYSQL_MANUAL + "; MDEV-24854 (O_DIRECT the default from MariaDB 10.6); "
               "MDEV-30136 (innodb_data_file_buffering in MariaDB 11.0)"),
    _check("note", lambda ctx: _method(ctx) == "O_DSYNC" and (
               ctx.facts.is_mariadb or _no_direct_fs(ctx)),
           lambda ctx: ("innodb_flush_method=O_DSYNC (" + ctx.facts.flush_method_source
                        + "): no rule applies"
                        + (f" on {ctx.filesystem}" if _no_direct_fs(ctx) else
                           " (MariaDB's O_DSYNC writes through: not judged here)")),
           "O_DSYNC on MariaDB (its write-through variant is not judged), or on tmpfs or "
           "ZFS."),
    _check("cannot_judge", lambda ctx: _method(ctx) == "O_DSYNC" and ctx.filesystem is None,
           lambda ctx: (
               "whether O_DIRECT would be better than O_DSYNC: the datadir's filesystem is "
               "unknown — run on the server's host or give --profile"),
           "O_DSYNC, and the datadir's filesystem unknown."),
    Rule(
        id="flush-method.o-dsync-double-buffering", severity="performance",
        setting="innodb_flush_method", holds=_is("O_DSYNC"),
        build=_o_dsync_double_buffering,
        summary="MySQL/Percona with innodb_flush_method=O_DSYNC on a local filesystem known "
                "to support O_DIRECT: the redo log is opened with O_SYNC and the data files "
                "are read and written through the OS page cache (cached twice) and "
                "fsynced.",
        recommends="`O_DIRECT`.",
        risk="None for durability: the data files are fsynced as before and the redo log "
             "is synced by fsync instead of O_SYNC writes. Reads no longer benefit from the "
             "page cache, so the buffer pool should grow by the memory it held.",
        source=MYSQL_MANUAL + " (O_DSYNC: \"InnoDB uses O_SYNC to open and flush the log "
               "files, and fsync() to flush the data files\")"),
    _check("note", lambda ctx: _method(ctx) != "O_DIRECT",
           lambda ctx: f"innodb_flush_method={_method(ctx)}: no rule applies",
           "any other method: no rule applies."),
    _check("note", lambda ctx: _network_fs(ctx),
           lambda ctx: f"O_DIRECT_NO_FSYNC not advised: {_network_why(ctx)}",
           "O_DIRECT on a network filesystem (O_DIRECT_NO_FSYNC not advised: a direct "
           "write there can need the fsync's COMMIT to be durable)."),
    # O_DIRECT on tmpfs/ZFS was decided above: from here on the filesystem supports it
    _check("note", lambda ctx: _method(ctx) == "O_DIRECT" and safe_for_no_fsync(ctx) is False,
           lambda ctx: (f"O_DIRECT_NO_FSYNC is NOT safe on {dev_name(ctx)} (volatile write "
                        "cache): keep O_DIRECT"),
           "O_DIRECT on a device judged volatile (keep O_DIRECT)."),
    _check("cannot_judge",
           lambda ctx: _method(ctx) == "O_DIRECT" and safe_for_no_fsync(ctx) is None,
           lambda ctx: (
               "whether O_DIRECT_NO_FSYNC would be safe: needs the data device's write-cache "
               "verdict (--profile with a plp_verdict, or --measure)"
               + (f"; {dev_name(ctx)} has none" if ctx.device else "")),
           "O_DIRECT and no write-cache verdict (whether O_DIRECT_NO_FSYNC would be safe)."),
    _check("note",
           lambda ctx: _method(ctx) == "O_DIRECT" and not no_fsync_fix_present(ctx.facts),
           lambda ctx: (f"O_DIRECT_NO_FSYNC not recommended on {ctx.facts.title}: it "
                        "predates the 5.7.25 / 8.0.14 fix"),
           "O_DIRECT on a MySQL before 5.7.25 / 8.0.14 (no O_DIRECT_NO_FSYNC there)."),
    _check("note",
           lambda ctx: (_method(ctx) == "O_DIRECT" and ctx.facts.is_mariadb
                        and ctx.facts.version_tuple >= (11, 0, 0)
                        and not ctx.facts.doublewrite_fast_supported),
           lambda ctx: (f"{ctx.facts.title} has no innodb_doublewrite=fast (11.0.6/11.1.5/"
                        "11.2.4/11.4.2+) and deprecates innodb_flush_method: upgrade before "
                        "skipping data-file fsyncs"),
           "O_DIRECT on a MariaDB 11 without innodb_doublewrite=fast (upgrade first)."),
    _check("note",
           lambda ctx: (_method(ctx) == "O_DIRECT" and bool(ctx.facts.doublewrite_dir)
                        and ctx.doublewrite_same_fs is False),
           lambda ctx: (f"innodb_doublewrite_dir={ctx.facts.doublewrite_dir} is on another "
                        "filesystem than the data: O_DIRECT_NO_FSYNC not recommended"),
           "O_DIRECT with innodb_doublewrite_dir on another filesystem than the data."),
    _check("cannot_judge",
           lambda ctx: (_method(ctx) == "O_DIRECT" and bool(ctx.facts.doublewrite_dir)
                        and ctx.doublewrite_same_fs is not True),
           lambda ctx: (f"whether innodb_doublewrite_dir={ctx.facts.doublewrite_dir} is on "
                        "the data files' filesystem (needed for O_DIRECT_NO_FSYNC): run on "
                        "the server's host"),
           "O_DIRECT with innodb_doublewrite_dir on a filesystem not known (a remote "
           "server)."),
    _check("note",
           lambda ctx: _method(ctx) == "O_DIRECT" and not other_fsyncs_visible(ctx)[0],
           lambda ctx: (f"O_DIRECT_NO_FSYNC would be safe on {dev_name(ctx)}, but data-file "
                        f"fsyncs are not a visible cost now ({other_fsyncs_visible(ctx)[1]})"),
           "O_DIRECT, safe for O_DIRECT_NO_FSYNC, but data-file fsyncs are not a visible "
           "cost."),
    Rule(
        id="flush-method.o-direct-no-fsync-on-plp", severity="performance",
        setting="innodb_flush_method", holds=_is("O_DIRECT"),
        build=_no_fsync_worth_it,
        summary="innodb_flush_method is O_DIRECT; the device profile judges the write cache "
                "non-volatile (PLP) or off (o_direct_no_fsync_safe=true); the server has the "
                "create/extend fsync fix (MySQL 5.7.25 / 8.0.14+, any MariaDB; MariaDB 11 "
                "needs innodb_doublewrite=fast); doublewrite and data share a filesystem "
                "that is not tmpfs, ZFS or a network filesystem; and the data-file/"
                "doublewrite fsyncs beyond the redo syncs are worth removing: at least 1/s, "
                "and taking at least 1% of the device's time (syncs/s × the profile's fsync "
                "latency ≥ 10 ms per second). When effects are predicted, the finding is "
                "dropped (a note instead) if the predicted TPS gain stays under 2% at the "
                "best end of the predicted range.",
        recommends="`O_DIRECT_NO_FSYNC` (MariaDB 11: innodb_doublewrite=fast).",
        risk="Relies on the device keeping acknowledged writes across power loss (the "
             "profile's verdict, or /sys where they disagree). MySQL 8.0.14+ still fsyncs "
             "a file after creating or extending it, and the redo log's syncs stay; "
             "MariaDB 10.x also skips the doublewrite buffer's fsync (MDEV-33545), which "
             "11.x's innodb_doublewrite=fast keeps.",
        source=MYSQL_MANUAL + "; MySQL storage/innobase/fil/fil0fil.cc "
               "(fil_buffering_disabled); " + MDEV_33545),
)
