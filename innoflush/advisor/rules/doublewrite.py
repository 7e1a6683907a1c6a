"""The ``doublewrite.*`` rule: innodb_doublewrite OFF (or DETECT_ONLY) flagged unless the
storage cannot tear pages."""

from __future__ import annotations

from .model import Change, Check, Context, Rule, dev_name

FAMILY = "doublewrite"


def _doublewrite_on(ctx: Context) -> Change:
    f = ctx.facts
    dynamic = f.is_mariadb and f.version_tuple >= (11, 0, 0) and f.dynamic(
        "innodb_doublewrite", False)
    return Change(
        setting="innodb_doublewrite", current=f.doublewrite, recommended="ON",
        why=[f"innodb_doublewrite={f.doublewrite}: a page write torn by a crash or power loss "
             "(part old, part new) cannot be repaired from the redo log",
             "only storage that guarantees atomic 16 KB writes (ZFS, some devices with "
             "atomic-write support) makes it unnecessary; "
             + ("the profile does not say so" if ctx.device else "no device profile says so")],
        risk="currently: a torn page makes crash recovery fail or a table unreadable. "
             "After the change: each page-flush batch is written twice (one large "
             "sequential write plus, depending on the method, one sync)",
        restart_needed=not dynamic, my_cnf=["innodb_doublewrite = ON"],
        set_global=(["SET GLOBAL innodb_doublewrite = ON;"] if dynamic else []),
        sim_changes={"innodb_doublewrite": True})


ENTRIES: tuple[Rule | Check, ...] = (
    Check(FAMILY, "silent", lambda ctx: ctx.facts.doublewrite_protects, None,
          "doublewrite protects against torn pages (ON, or MariaDB 11's fast)."),
    Check(FAMILY, "note", lambda ctx: ctx.filesystem == "zfs",
          lambda ctx: (f"innodb_doublewrite={ctx.facts.doublewrite} suits ZFS (copy-on-write: "
                       "pages cannot tear)"),
          "off on ZFS (copy-on-write: pages cannot tear)."),
    Check(FAMILY, "note", lambda ctx: bool(ctx.device and ctx.device.atomic_writes),
          lambda ctx: (f"innodb_doublewrite={ctx.facts.doublewrite}: {dev_name(ctx)} writes "
                       "16 KB pages atomically"),
          "off on a device whose profile says it writes 16 KB pages atomically."),
    Rule(
        id="doublewrite.off-where-pages-can-tear", severity="data-safety",
        setting="innodb_doublewrite", holds=lambda ctx: True, build=_doublewrite_on,
        summary="innodb_doublewrite is OFF (or MySQL's DETECT_ONLY), the datadir is not on "
                "ZFS and no device profile says the device writes 16 KB pages atomically: a "
                "page write torn by a crash or power loss cannot be repaired from the redo "
                "log.",
        recommends="`innodb_doublewrite = ON` (a restart; on MariaDB 11, SET GLOBAL where "
                   "the server reports the variable dynamic).",
        risk="Now: a torn page makes crash recovery fail or a table unreadable. The change "
             "writes each page-flush batch twice (one large sequential write plus, depending "
             "on the method, one sync).",
        source="MySQL Reference Manual, Doublewrite Buffer "
               "(https://dev.mysql.com/doc/refman/8.0/en/innodb-doublewrite-buffer.html); "
               "MySQL storage/innobase/buf/buf0dblwr.cc; OpenZFS documentation, Workload "
               "Tuning, MySQL / InnoDB (doublewrite off on ZFS); MDEV-33545 (MariaDB 11's "
               "innodb_doublewrite OFF / ON / fast)"),
)
