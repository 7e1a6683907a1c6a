"""The ``flush-log-timeout.*`` and ``log-file-buffering.*`` rules: how often the redo log
is synced when commits do not sync it (innodb_flush_log_at_timeout), and whether MariaDB
writes it through the page cache (innodb_log_file_buffering)."""

from __future__ import annotations

from .commit import TRX_COMMIT_MANUAL, replica_exemption
from .model import Change, Check, Context, Rule

TIMEOUT_MANUAL = ("MySQL Reference Manual, innodb_flush_log_at_timeout "
                  "(https://dev.mysql.com/doc/refman/8.0/en/innodb-parameters.html"
                  "#sysvar_innodb_flush_log_at_timeout): with innodb_flush_log_at_trx_commit "
                  "0 or 2 the log is written and flushed every N seconds, and a crash can "
                  "erase up to N seconds of transactions")
MDEV_28766 = ("MDEV-28766, SET GLOBAL innodb_log_file_buffering (MariaDB/server commit "
              "4c0cd953ab): OFF (O_DIRECT redo writes) by default on Linux and Windows; "
              "turned ON when the server starts with innodb_flush_log_at_trx_commit=2, "
              "where buffered log writes typically improve throughput")


def _loose(ctx: Context) -> bool:
    """trx_commit 0 or 2: the redo log is synced by the timer, not by the commits."""
    return ctx.facts.trx_commit in (0, 2)


def _timeout(ctx: Context) -> float:
    return ctx.facts.flush_log_at_timeout


def _timeout_widens(ctx: Context) -> Change:
    f = ctx.facts
    t = _timeout(ctx)
    o = ctx.observed
    at_rate = (f" (≈{o.commits_per_s * t:,.0f} transactions at the observed "
               f"{o.commits_per_s:,.0f} commits/s)" if o and o.commits_per_s else "")
    who = "an OS crash, power loss or a mysqld crash" if f.trx_commit == 0 else \
        "an OS crash or power loss"
    return Change(
        setting="innodb_flush_log_at_timeout", current=f"{t:g}", recommended="1",
        why=[f"innodb_flush_log_at_trx_commit={f.trx_commit}: the redo log is written and "
             f"synced once per innodb_flush_log_at_timeout, so {who} loses the last "
             f"~{t:g} s of commits{at_rate}",
             "--durability relaxed accepts about a second of commits (the default "
             "timeout), not more"],
        risk="none for data; the background redo sync runs every second instead of every "
             f"{t:g} s",
        restart_needed=False, my_cnf=["innodb_flush_log_at_timeout = 1"],
        set_global=["SET GLOBAL innodb_flush_log_at_timeout = 1;"],
        sim_changes={"innodb_flush_log_at_timeout": 1.0})


FLUSH_LOG_TIMEOUT: tuple[Rule | Check, ...] = (
    Check("flush-log-timeout", "silent", lambda ctx: _timeout(ctx) <= 1, None,
          "innodb_flush_log_at_timeout is 1 (the default) or less."),
    Check("flush-log-timeout", "note", lambda ctx: not _loose(ctx),
          lambda ctx: (f"innodb_flush_log_at_timeout={_timeout(ctx):g} does not matter at "
                       f"innodb_flush_log_at_trx_commit={ctx.facts.trx_commit}: each commit "
                       "syncs the redo log"),
          "above 1 at trx_commit=1 (or 3): it does not matter, each commit syncs."),
    Check("flush-log-timeout", "note", lambda ctx: ctx.durability == "strict",
          lambda ctx: (f"innodb_flush_log_at_timeout={_timeout(ctx):g}: at "
                       f"innodb_flush_log_at_trx_commit={ctx.facts.trx_commit} a crash loses "
                       f"up to {_timeout(ctx):g} s of commits"
                       + ("; moot once trx_commit=1 (see the trx-commit finding)"
                          if not replica_exemption(ctx)[0] else
                          "; accepted with the trx_commit value on this node")),
          "above 1 at trx_commit 0 or 2 under strict: the trx-commit family decides "
          "(a note on the wider window)."),
    Rule(
        id="flush-log-timeout.widens-loss-window", severity="durability",
        setting="innodb_flush_log_at_timeout",
        holds=lambda ctx: ctx.durability == "relaxed",
        build=_timeout_widens,
        summary="--durability relaxed, innodb_flush_log_at_trx_commit is 0 or 2, and "
                "innodb_flush_log_at_timeout is above 1: the redo log is synced only every "
                "N seconds, so a crash loses N seconds of commits instead of about one.",
        recommends="`innodb_flush_log_at_timeout = 1` (dynamic: SET GLOBAL).",
        risk="None for data: the background redo sync runs every second instead of every "
             "N seconds.",
        source=TIMEOUT_MANUAL + "; " + TRX_COMMIT_MANUAL),
)


# ---- MariaDB's innodb_log_file_buffering --------------------------------------------------

def _buffering(ctx: Context) -> bool | None:
    raw = ctx.facts.variables.get("innodb_log_file_buffering")
    if raw is None or not ctx.facts.is_mariadb:
        return None
    return str(raw).strip().upper() in ("ON", "1")


def _stays_at_2(ctx: Context) -> bool:
    """trx_commit=2 is what this server keeps (relaxed, or a node allowed to relax)."""
    return ctx.facts.trx_commit == 2 and (ctx.durability == "relaxed"
                                          or replica_exemption(ctx)[0])


def _buffering_off_at_2(ctx: Context) -> Change:
    return Change(
        setting="innodb_log_file_buffering", current="OFF", recommended="ON",
        why=["innodb_flush_log_at_trx_commit=2 with innodb_log_file_buffering=OFF: each "
             "redo write goes to the device directly (O_DIRECT) although commits do not "
             "wait for its sync",
             "MariaDB itself turns buffering on when it starts with trx_commit=2 "
             "(MDEV-28766): writing the log through the page cache typically improves "
             "throughput there, especially on slow storage or with few concurrent "
             "transactions"],
        risk="none for durability at trx_commit=2 (the log is synced once per "
             "innodb_flush_log_at_timeout either way); the redo log then uses page-cache "
             "memory",
        restart_needed=False, my_cnf=["innodb_log_file_buffering = ON"],
        set_global=["SET GLOBAL innodb_log_file_buffering = ON;"])


LOG_FILE_BUFFERING: tuple[Rule | Check, ...] = (
    Check("log-file-buffering", "silent", lambda ctx: _buffering(ctx) is None, None,
          "not MariaDB, or no innodb_log_file_buffering variable."),
    Check("log-file-buffering", "note", lambda ctx: _buffering(ctx) and _stays_at_2(ctx),
          lambda ctx: ("innodb_log_file_buffering=ON suits innodb_flush_log_at_trx_commit=2 "
                       "(MariaDB turns it on at 2, MDEV-28766)"),
          "ON at trx_commit=2 (as MariaDB sets it)."),
    Check("log-file-buffering", "note",
          lambda ctx: bool(_buffering(ctx)) and ctx.facts.trx_commit in (1, 3),
          lambda ctx: ("innodb_log_file_buffering=ON at innodb_flush_log_at_trx_commit="
                       f"{ctx.facts.trx_commit}: the redo log goes through the page cache "
                       "before each sync; MariaDB's default OFF (O_DIRECT) was mostly, not "
                       "always, faster at 1 (MDEV-28766) — measure before changing it"),
          "ON at trx_commit=1 (a note: O_DIRECT was mostly, not always, faster)."),
    Check("log-file-buffering", "silent",
          lambda ctx: not (_buffering(ctx) is False and _stays_at_2(ctx)), None,
          "any other combination: nothing to say."),
    Rule(
        id="log-file-buffering.off-at-trx-commit-2", severity="performance",
        setting="innodb_log_file_buffering",
        holds=lambda ctx: _buffering(ctx) is False and _stays_at_2(ctx),
        build=_buffering_off_at_2,
        summary="MariaDB with innodb_flush_log_at_trx_commit=2 kept (relaxed, or a node "
                "allowed to relax) and innodb_log_file_buffering=OFF: the redo log is "
                "written with O_DIRECT although no commit waits for its sync; MariaDB "
                "turns buffering on itself when it starts at 2.",
        recommends="`innodb_log_file_buffering = ON` (dynamic: SET GLOBAL).",
        risk="None for durability at trx_commit=2; the redo log uses page-cache memory.",
        source=MDEV_28766),
)
