"""The ``use-fdatasync.*`` rule: innodb_use_fdatasync (MySQL 8.0.26+) where the device's
fdatasync is cheaper than its fsync."""

from __future__ import annotations

from ...units import format_ns
from .model import Change, Check, Context, Rule, dev_name

FAMILY = "use-fdatasync"
FDATASYNC_GAIN = 0.9   # fdatasync must be at most 90% of fsync to be worth switching


def _both_figures(ctx: Context) -> bool:
    d = ctx.device
    return bool(d.fsync_ns and d.fdatasync_ns and d.fsync_exact and d.fdatasync_exact)


def _use_fdatasync(ctx: Context) -> Change:
    d = ctx.device
    return Change(
        setting="innodb_use_fdatasync", current="OFF", recommended="ON",
        why=[f"{dev_name(ctx)}: fdatasync after a 16 KB write {format_ns(d.fdatasync_ns)} "
             f"vs fsync {format_ns(d.fsync_ns)} ({d.fdatasync_ns / d.fsync_ns:.0%})",
             "every redo sync and data-file sync InnoDB makes would use it"],
        risk="none for durability: fdatasync skips only metadata not needed to read the "
             "data back (InnoDB still fsyncs where a file's size changes)",
        restart_needed=False, my_cnf=["innodb_use_fdatasync = ON"],
        set_global=["SET GLOBAL innodb_use_fdatasync = ON;"],
        sim_changes={"innodb_use_fdatasync": True})


ENTRIES: tuple[Rule | Check, ...] = (
    # MariaDB uses fdatasync wherever it can (MDEV-22177), MySQL before 8.0.26 never: neither
    # has the variable
    Check(FAMILY, "silent", lambda ctx: ctx.facts.use_fdatasync is None, None,
          "no innodb_use_fdatasync variable (MariaDB: fdatasync wherever possible, "
          "MDEV-22177; MySQL before 8.0.26)."),
    Check(FAMILY, "silent", lambda ctx: bool(ctx.facts.use_fdatasync), None,
          "innodb_use_fdatasync=ON already."),
    Check(FAMILY, "cannot_judge", lambda ctx: ctx.device is None,
          lambda ctx: ("whether innodb_use_fdatasync=ON would help: needs the "
                       "device's fsync and fdatasync latencies (--profile/--measure)"),
          "no device profile."),
    Check(FAMILY, "cannot_judge", lambda ctx: not _both_figures(ctx),
          lambda ctx: (f"whether innodb_use_fdatasync=ON would help: {dev_name(ctx)} "
                       "does not have both fsync and fdatasync figures"),
          "the profile lacks a measured fsync or fdatasync figure."),
    Check(FAMILY, "note",
          lambda ctx: ctx.device.fdatasync_ns > FDATASYNC_GAIN * ctx.device.fsync_ns,
          lambda ctx: (f"innodb_use_fdatasync: fdatasync "
                       f"({format_ns(ctx.device.fdatasync_ns)}) is not cheaper than fsync "
                       f"({format_ns(ctx.device.fsync_ns)}) on {dev_name(ctx)}"),
          f"fdatasync costs more than {FDATASYNC_GAIN:.0%} of fsync on the device."),
    Rule(
        id="use-fdatasync.cheaper-than-fsync", severity="performance",
        setting="innodb_use_fdatasync", holds=lambda ctx: True, build=_use_fdatasync,
        summary="MySQL 8.0.26+ with innodb_use_fdatasync=OFF, and the device profile "
                "measures fdatasync after a 16 KB write at most "
                f"{FDATASYNC_GAIN:.0%} of fsync's latency.",
        recommends="`innodb_use_fdatasync = ON` (dynamic: SET GLOBAL).",
        risk="None for durability: fdatasync skips only metadata not needed to read the "
             "data back; InnoDB still fsyncs where a file's size changes.",
        source="MySQL Reference Manual, innodb_use_fdatasync "
               "(https://dev.mysql.com/doc/refman/8.0/en/innodb-parameters.html"
               "#sysvar_innodb_use_fdatasync); MDEV-22177 (MariaDB: fdatasync throughout)"),
)
