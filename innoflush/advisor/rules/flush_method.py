"""The ``flush-method.*`` rules: innodb_flush_method (MariaDB 11: innodb_doublewrite=fast
and innodb_data_file_*).

O_DIRECT_NO_FSYNC only where the data device's write cache is non-volatile or off (the
profile's plp_verdict says o_direct_no_fsync_safe=true), on a version with the 8.0.14 /
5.7.25 fix, with doublewrite and data on one filesystem, not on ZFS, and only when
data-file fsyncs are a visible cost. Never on a volatile cache — and a data-safety finding
when it is set there. ``fsync`` where O_DIRECT is not supported.
"""

from __future__ import annotations

from ...live.facts import ServerFacts
from ...units import format_ns
from .model import Change, Check, Context, Rule, dev_name

FAMILY = "flush-method"
# O_DIRECT_NO_FSYNC is worth it when the data-file syncs it removes are a visible cost:
# at least this many per second, and together at least this share of a second of the
# device's sync time (syncs/s x the profile's fsync latency). A share of all fsyncs is no
# measure: at trx_commit=2 the total is tiny, so a few data-file syncs are a large share.
MIN_OTHER_FSYNCS_PER_S = 1.0
MIN_OTHER_FSYNC_DEVICE_FRACTION = 0.01
# and, when the effect is predicted, at least this TPS gain at the best end of the
# predicted range (its own prediction of +0 % must not come with a recommendation)
MIN_PREDICTED_GAIN_PCT = 2.0
NO_FSYNC_RULE = "flush-method.o-direct-no-fsync-on-plp"
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


def no_fsync_fix_present(f: ServerFacts) -> bool:
    """O_DIRECT_NO_FSYNC fsyncs after create/extend (Bug #27309336) from 5.7.25 / 8.0.14."""
    if f.is_mariadb:
        return True  # MariaDB's implementation; the model covers 10.6+
    v = f.version_tuple
    return v >= (8, 0, 14) or (5, 7, 25) <= v < (8, 0, 0)


def method_change(f: ServerFacts, method: str) -> tuple[str, str, list[str], list[str], bool]:
    """(setting, recommended text, my.cnf lines, SET GLOBAL lines, restart) for a method."""
    if f.mariadb11_io_variables:
        if method == "O_DIRECT_NO_FSYNC":
            lines = ["innodb_doublewrite = fast"]
            setting = "innodb_doublewrite"
        elif method == "O_DIRECT":
            lines = ["innodb_data_file_buffering = OFF", "innodb_data_file_write_through = OFF"]
            if f.flush_method == "O_DIRECT_NO_FSYNC":
                lines = ["innodb_doublewrite = ON"] + lines
            setting = ("innodb_doublewrite" if f.flush_method == "O_DIRECT_NO_FSYNC"
                       else "innodb_data_file_buffering")
        elif method == "fsync":
            lines = ["innodb_data_file_buffering = ON"]
            if f.flush_method == "O_DIRECT_NO_FSYNC":
                lines = ["innodb_doublewrite = ON"] + lines
            setting = "innodb_data_file_buffering"
        else:
            lines = ["innodb_data_file_write_through = ON"]
            setting = "innodb_data_file_write_through"
        sets = [f"SET GLOBAL {name} = {value};"
                for name, value in (ln.split(" = ") for ln in lines)]
        dynamic = all(f.dynamic(ln.split(" = ")[0], True) for ln in lines)
        rec = ", ".join(ln.replace(" = ", "=") for ln in lines)
        return setting, rec, lines, (sets if dynamic else []), not dynamic
    return ("innodb_flush_method", method, [f"innodb_flush_method = {method}"], [], True)


def _current_method_text(f: ServerFacts) -> str:
    if f.mariadb11_io_variables:
        return f"{f.flush_method} ({f.flush_method_source})"
    return f.flush_method


def deprecated_method_given(f: ServerFacts) -> str | None:
    """MariaDB 11: the innodb_flush_method value the server was started with, when it is
    not the default (O_DIRECT): a deprecated option that, at the next start, overrides
    innodb_doublewrite and innodb_data_file_* whatever their order in my.cnf (tried on
    MariaDB 11.8.9: innodb_flush_method=O_DIRECT_NO_FSYNC with innodb_doublewrite=ON
    starts with fast). SET GLOBAL of the new variables leaves it showing the old value."""
    if not f.mariadb11_io_variables:
        return None
    raw = str(f.variables.get("innodb_flush_method") or "").strip()
    return raw if raw and raw.upper() != "O_DIRECT" else None


def _to_method(ctx: Context, method: str, why: list[str], risk: str) -> Change:
    f = ctx.facts
    setting, rec, lines, sets, restart = method_change(f, method)
    if given := deprecated_method_given(f):
        why = [*why, f"the server was started with innodb_flush_method={given}, deprecated "
               "since MariaDB 11.0 (MDEV-30136): remove it from my.cnf, or at the next "
               "start it overrides the settings above"]
    return Change(setting=setting, current=_current_method_text(f), recommended=rec, why=why,
                  risk=risk, restart_needed=restart, my_cnf=lines, set_global=sets,
                  sim_changes={"innodb_flush_method": method})


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


def _volatile(ctx: Context) -> bool:
    d = ctx.device
    return bool(d and (d.verdict == "volatile-cache" or d.o_direct_no_fsync_safe is False))


def _safe_for_no_fsync(ctx: Context) -> bool | None:
    d = ctx.device
    if d is None:
        return None
    if _volatile(ctx):
        return False
    return True if d.o_direct_no_fsync_safe is True else None


def _other_fsyncs_visible(ctx: Context) -> tuple[bool, str]:
    """Whether the data-file syncs O_DIRECT_NO_FSYNC would remove are worth removing:
    a rate and the device time they take (see MIN_OTHER_FSYNC_DEVICE_FRACTION)."""
    o = ctx.observed
    if o is None or o.data_fsyncs_per_s is None or o.other_fsyncs_per_s is None:
        return False, "no data-file fsync figures were observed"
    other = o.other_fsyncs_per_s
    total = o.data_fsyncs_per_s or 0.0
    text = (f"{other:.1f} data-file/doublewrite fsyncs/s beyond the redo syncs "
            f"(of {total:.1f} Innodb_data_fsyncs/s")
    d = ctx.device
    if not (d and d.fsync_ns):
        return False, text + "; the device's sync latency is unknown, so not the time " \
            "they take)"
    dev_frac = other * d.fsync_ns / 1e9
    text += (f"; × {format_ns(d.fsync_ns)} per sync = about {dev_frac * 1e3:.1f} ms of "
             f"device sync time per second, threshold "
             f"{MIN_OTHER_FSYNC_DEVICE_FRACTION * 1e3:.0f} ms)")
    visible = other >= MIN_OTHER_FSYNCS_PER_S and dev_frac >= MIN_OTHER_FSYNC_DEVICE_FRACTION
    return visible, text


def _is(*methods: str):
    return lambda ctx: _method(ctx) in methods


# ---- builders -----------------------------------------------------------------------------

def _testing_value(ctx: Context) -> Change:
    m = _method(ctx)
    return _to_method(
        ctx, "fsync" if _no_direct_fs(ctx) else "O_DIRECT",
        [f"innodb_flush_method={m} is a testing value: InnoDB skips or cuts short the "
         "fsyncs of its data files"],
        f"with {m}, an OS crash or power loss can corrupt data files that InnoDB "
        "believes durable; changing to a normal method only adds the syncs back")


def _no_fsync_without_fix(ctx: Context) -> Change:
    return _to_method(
        ctx, "O_DIRECT",
        [f"{ctx.facts.title} predates the O_DIRECT_NO_FSYNC fix of 5.7.25 / 8.0.14 "
         "(Bug #27309336): files are not fsynced after they are created or "
         "extended, so their size can be lost in a crash"],
        "on an OS crash or power loss a table grown since the last sync can come "
        "back truncated or corrupt; O_DIRECT adds one fsync per page-flush batch")


def _no_fsync_on_volatile(ctx: Context) -> Change:
    d = ctx.device
    return _to_method(
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
    return _to_method(
        ctx, "fsync",
        [_fs_why(ctx), "O_DIRECT_NO_FSYNC relies on direct writes being durable on "
         "completion, which ZFS does not promise without its own sync"],
        "on power loss, pages written since the last ZFS transaction-group commit "
        "may be missing while InnoDB believes them durable")


def _o_direct_unsupported(ctx: Context) -> Change:
    return _to_method(
        ctx, "fsync", [_fs_why(ctx)],
        "none for durability: fsync mode syncs the same files; it only stops asking "
        "the filesystem for a mode it does not provide")


def _fsync_double_buffering(ctx: Context) -> Change:
    return _to_method(
        ctx, "O_DIRECT",
        [f"innodb_flush_method=fsync reads and writes data files through the OS page "
         f"cache: every page is cached twice (buffer pool and page cache), and dirty "
         f"page-cache data is written back later; {ctx.filesystem} supports O_DIRECT"],
        "none for durability: the same files are fsynced; reads no longer benefit "
        "from the page cache, so a buffer pool sized for the page cache's memory "
        "should grow by it")


def no_fsync_skips(f: ServerFacts) -> str:
    """What O_DIRECT_NO_FSYNC (MariaDB 11: innodb_doublewrite=fast) stops syncing, per
    flavor."""
    if f.is_mariadb and f.mariadb11_io_variables:
        return ("removes the data files' fsyncs (per checkpoint); the doublewrite buffer "
                "is still synced before the pages are written in place (innodb_doublewrite"
                "=fast, MDEV-33545), and so is the redo log")
    if f.is_mariadb:
        return ("removes the data files' fsyncs (per checkpoint) and, on MariaDB 10.x, "
                "also the doublewrite buffer's fsync before the pages are written in place "
                "(MDEV-33545: only 11.x's innodb_doublewrite=fast syncs it again); the "
                "redo log's syncs stay")
    return ("removes the data files' fsyncs (per page-flush batch, one per file) except "
            "after a file is created or extended (MySQL 8.0.14 / 5.7.25+); the redo log's "
            "syncs stay")


def _no_fsync_worth_it(ctx: Context) -> Change:
    f = ctx.facts
    _, text = _other_fsyncs_visible(ctx)
    return _to_method(
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
    return _to_method(
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
                           and _volatile(ctx)),
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
        holds=lambda ctx: _method(ctx) == "O_DIRECT_NO_FSYNC" and _volatile(ctx),
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
           lambda ctx: _method(ctx) == "O_DIRECT_NO_FSYNC" and _safe_for_no_fsync(ctx) is None,
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
    _check("note", lambda ctx: _method(ctx) == "O_DIRECT" and _safe_for_no_fsync(ctx) is False,
           lambda ctx: (f"O_DIRECT_NO_FSYNC is NOT safe on {dev_name(ctx)} (volatile write "
                        "cache): keep O_DIRECT"),
           "O_DIRECT on a device judged volatile (keep O_DIRECT)."),
    _check("cannot_judge",
           lambda ctx: _method(ctx) == "O_DIRECT" and _safe_for_no_fsync(ctx) is None,
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
           lambda ctx: _method(ctx) == "O_DIRECT" and not _other_fsyncs_visible(ctx)[0],
           lambda ctx: (f"O_DIRECT_NO_FSYNC would be safe on {dev_name(ctx)}, but data-file "
                        f"fsyncs are not a visible cost now ({_other_fsyncs_visible(ctx)[1]})"),
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


def drop_unprofitable_no_fsync(ev, prediction_of) -> bool:
    """After the candidates were predicted: drop the O_DIRECT_NO_FSYNC finding when its
    predicted TPS gain stays under MIN_PREDICTED_GAIN_PCT at the best end of the range,
    with a note saying so. prediction_of(changes) -> the prediction, or None. True when
    it was dropped."""
    for f in ev.findings:
        if f.id != NO_FSYNC_RULE:
            continue
        pred = prediction_of(f.sim_changes)
        if not pred:
            return False
        span = (pred.get("range") or {}).get("tps_pct") or []
        best = max([x for x in [*span, pred["change"].get("tps_pct")] if x is not None],
                   default=None)
        if best is None or best >= MIN_PREDICTED_GAIN_PCT:
            return False
        ev.findings.remove(f)
        ev.notes.append(f"O_DIRECT_NO_FSYNC would be safe, but its predicted effect is "
                        f"{best:+.1f} % TPS at best (under {MIN_PREDICTED_GAIN_PCT:g} %): "
                        "not recommended")
        return True
    return False
