"""The ``trx-commit.*`` and ``sync-binlog.*`` rules: the syncs at commit, per
``--durability`` (strict: innodb_flush_log_at_trx_commit=1 and sync_binlog=1; relaxed:
trx_commit=2 with its loss window), role-aware (a replica or Galera node may relax)."""

from __future__ import annotations

from ...live.facts import ServerFacts
from ...live.replication import MARIADB_GTID, MYSQL_CRASH_SAFE
from ...live.sampling import WRITE_STATEMENTS
from ...units import format_ns
from .model import Change, Check, Context, Rule, dev_name

# a device that syncs faster than this gains little from trx_commit=2
CHEAP_SYNC_NS = 100_000
# A device sync this cheap makes trx_commit=2 look worthless from the device alone; the
# price decides when there is one: a predicted gain this large (%) is not "little" (the
# commit also pays the sync's system call, its CPU and the group's wait, which a fast
# device does not remove)
MIN_PRICED_GAIN_PCT = 10.0

TRX_COMMIT_MANUAL = ("MySQL Reference Manual, innodb_flush_log_at_trx_commit "
                     "(https://dev.mysql.com/doc/refman/8.0/en/innodb-parameters.html"
                     "#sysvar_innodb_flush_log_at_trx_commit)")
SYNC_BINLOG_MANUAL = ("MySQL Reference Manual, sync_binlog "
                      "(https://dev.mysql.com/doc/refman/8.0/en/"
                      "replication-options-binary-log.html#sysvar_sync_binlog)")
# what makes a replica's exemption (live/replication.py)
REPLICA_SOURCES = "a replica's crash safety: " + MYSQL_CRASH_SAFE + "; " + MARIADB_GTID


def _loss_at_rate(ctx: Context, seconds: float) -> str:
    o = ctx.observed
    if o and o.commits_per_s:
        return f" (≈{o.commits_per_s * seconds:,.0f} transactions at the observed " \
               f"{o.commits_per_s:,.0f} commits/s)"
    return ""


def _role_reason(f: ServerFacts) -> str:
    if f.role == "galera":
        return ("a Galera node: the writesets are held by the other nodes, and a crashed "
                "node rejoins by IST/SST")
    shown = "; ".join(f.replication.evidence) if f.replication else ""
    return ("a crash-safe replica: transactions lost in a crash are fetched again from its "
            f"source (read: {shown})")


def _direct_writes_per_s(ctx: Context) -> float:
    o = ctx.observed
    if o is None or not o.seconds:
        return 0.0
    return sum(o.deltas.get(k, 0) for k in WRITE_STATEMENTS) / o.seconds


def replica_exemption(ctx: Context) -> tuple[bool, list[str]]:
    """Whether this node may relax the commit syncs because its transactions exist
    elsewhere, and, for a replica that may not, what evidence is missing. A Galera node
    may; a replica only when its crash safety was read (live/replication.py) and it took
    no direct writes while its replication was stopped; a primary never."""
    f = ctx.facts
    if f.role == "galera":
        return True, []
    if f.role != "replica" or f.replication is None:
        return False, []
    missing = list(f.replication.missing)
    writes = _direct_writes_per_s(ctx)
    if writes > 0 and not f.replication.threads_running:
        missing.append(f"{writes:,.1f} write statements/s committed during the interval "
                       "with replication stopped: direct writes, held by no source")
    return not missing, missing


def _exempt(ctx: Context) -> bool:
    return replica_exemption(ctx)[0]


def _not_exempt_why(ctx: Context) -> list[str]:
    ok, missing = replica_exemption(ctx)
    if ok or ctx.facts.role != "replica":
        return []
    return ["a replica, but not shown crash-safe, so held to a primary's rule; missing: "
            + "; ".join(missing)]


def _strict(ctx: Context) -> bool:
    return ctx.durability == "strict"


def _relaxed(ctx: Context) -> bool:
    return ctx.durability == "relaxed"


# ---- innodb_flush_log_at_trx_commit -------------------------------------------------------

def _trx_commit_strict_ok(ctx: Context) -> bool:
    tc = ctx.facts.trx_commit
    return tc == 1 or (tc == 3 and ctx.facts.is_mariadb)


def _set_trx_commit(v: int) -> list[str]:
    return [f"SET GLOBAL innodb_flush_log_at_trx_commit = {v};"]


def _strict_requires_1(ctx: Context) -> Change:
    f = ctx.facts
    tc = f.trx_commit
    what = ("a mysqld crash as well as an OS crash" if tc == 0 else
            "an OS crash or power loss (not a mysqld crash)")
    # with 0 as with 2 the log is written and synced once per innodb_flush_log_at_timeout
    window = f.flush_log_at_timeout
    return Change(
        setting="innodb_flush_log_at_trx_commit", current=str(tc), recommended="1",
        why=["--durability strict: every acknowledged commit must survive a crash",
             f"with {tc}, {what} loses the last ~{window:g} s (innodb_flush_log_at_timeout)"
             " of commits" + _loss_at_rate(ctx, window)] + _not_exempt_why(ctx),
        risk="no data at risk; each commit (group) waits for a redo sync, so commit "
             "latency rises by about one device sync (see the prediction)",
        restart_needed=False, my_cnf=["innodb_flush_log_at_trx_commit = 1"],
        set_global=_set_trx_commit(1),
        sim_changes={"innodb_flush_log_at_trx_commit": 1})


def _relaxed_0_to_2(ctx: Context) -> Change:
    t = ctx.facts.flush_log_at_timeout
    return Change(
        setting="innodb_flush_log_at_trx_commit", current="0", recommended="2",
        why=[f"with 0 even a mysqld crash loses ~{t:g} s (innodb_flush_log_at_timeout) of "
             "commits; 2 writes the redo to the OS at each commit, so only an OS crash or "
             "power loss loses them, at about the same cost"],
        risk=f"an OS crash or power loss loses up to ~{t:g} s (innodb_flush_log_at_"
             f"timeout) of commits{_loss_at_rate(ctx, t)}",
        restart_needed=False, my_cnf=["innodb_flush_log_at_trx_commit = 2"],
        set_global=_set_trx_commit(2),
        sim_changes={"innodb_flush_log_at_trx_commit": 2})


def _cheap_sync(ctx: Context) -> bool:
    d = ctx.device
    return bool(d and d.fsync_ns is not None and d.fsync_ns < CHEAP_SYNC_NS)


def _cheap_sync_note(ctx: Context) -> str:
    return (f"--durability relaxed, but {dev_name(ctx)} syncs in "
            f"{format_ns(ctx.device.fsync_ns)}: innodb_flush_log_at_trx_commit=2 "
            "would gain little; keeping 1")


def priced_trx_commit_2(ev, ctx: Context, prediction_of) -> bool:
    """After the candidates were priced: where the cheap-sync note kept 1 but the model
    prices 2 at MIN_PRICED_GAIN_PCT or more, the relaxed-allows-2 finding replaces the
    note (its interval beside it, as every price). prediction_of(changes) -> the
    prediction, or None. True when it did."""
    if not (_relaxed(ctx) and _cheap_sync(ctx)) or RELAXED_ALLOWS_2.id in ev.ignored:
        return False
    note = _cheap_sync_note(ctx)
    if note not in ev.notes:
        return False
    finding = RELAXED_ALLOWS_2.finding(ctx)
    pred = prediction_of(finding.sim_changes)
    gain = ((pred or {}).get("change") or {}).get("tps_pct")
    if gain is None or gain < MIN_PRICED_GAIN_PCT:
        return False
    ev.notes.remove(note)
    finding.why.append(f"{dev_name(ctx)} syncs in {format_ns(ctx.device.fsync_ns)}, but the "
                       f"model prices 2 at {gain:+.0f} % TPS on this workload: the commit "
                       "pays more than the device's sync")
    ev.findings.append(finding)
    ev.findings = ev.sorted_findings()
    return True


def _relaxed_allows_2(ctx: Context) -> Change:
    f = ctx.facts
    t = f.flush_log_at_timeout
    d = ctx.device
    o = ctx.observed
    why = [f"--durability relaxed: losing the last ~{t:g} s of commits in an OS crash or "
           "power loss is acceptable"]
    if o and o.redo_syncs_per_s is not None:
        why.append(f"observed {o.redo_syncs_per_s:,.1f} redo syncs/s "
                   f"({o.redo_syncs_source}) for {o.commits_per_s:,.1f} commits/s"
                   + (f", {o.commits_per_redo_sync:g} commits per sync"
                      if o.commits_per_redo_sync else ""))
    if d and d.fsync_ns:
        why.append(f"{dev_name(ctx)}: a sync costs {format_ns(d.fsync_ns)}, paid by every "
                   "commit group")
    exempt = _exempt(ctx)
    role = ("" if not exempt else f"; acceptable on {_role_reason(f)}")
    primary = ("" if exempt or not f.log_bin else
               "; on a primary with replicas, replicas may then hold transactions the "
               "primary lost: fail over or rebuild them")
    return Change(
        setting="innodb_flush_log_at_trx_commit", current=str(f.trx_commit), recommended="2",
        why=why,
        risk=f"an OS crash or power loss (not a mysqld crash) loses up to ~{t:g} s "
             f"(innodb_flush_log_at_timeout) of acknowledged commits"
             f"{_loss_at_rate(ctx, t)}{role}{primary}",
        restart_needed=False, my_cnf=["innodb_flush_log_at_trx_commit = 2"],
        set_global=_set_trx_commit(2),
        sim_changes={"innodb_flush_log_at_trx_commit": 2})


TRX_COMMIT: tuple[Rule | Check, ...] = (
    Check("trx-commit", "silent", lambda ctx: _strict(ctx) and _trx_commit_strict_ok(ctx),
          None, "strict, and trx_commit=1 (or 3 on MariaDB)."),
    Check("trx-commit", "note", lambda ctx: _strict(ctx) and _exempt(ctx),
          lambda ctx: (f"innodb_flush_log_at_trx_commit={ctx.facts.trx_commit} accepted on "
                       f"{_role_reason(ctx.facts)}; a primary would need 1 under "
                       "--durability strict"),
          "strict, another value, on a Galera node or a replica shown crash-safe "
          "(relay_log_recovery=ON, GTID positioning and both replication threads running "
          "on every connection, MySQL before 8.0.23 relay_log_info_repository=TABLE, "
          "read_only=ON, and no direct writes while replication is stopped): accepted."),
    Rule(
        id="trx-commit.strict-requires-1", severity="durability",
        setting="innodb_flush_log_at_trx_commit", holds=_strict,
        build=_strict_requires_1,
        summary="--durability strict on a primary (or a replica not shown crash-safe: the "
                "finding names the missing evidence), and innodb_flush_log_at_trx_commit is "
                "not 1 (nor MariaDB's 3): an OS crash or power loss (with 0, a mysqld crash "
                "as well) loses the last innodb_flush_log_at_timeout seconds of commits.",
        recommends="`innodb_flush_log_at_trx_commit = 1` (dynamic: SET GLOBAL).",
        risk="No data at risk: each commit group waits for a redo sync, so commit latency "
             "rises by about one device sync.",
        source=TRX_COMMIT_MANUAL + "; " + REPLICA_SOURCES),
    Check("trx-commit", "silent", lambda ctx: _relaxed(ctx) and ctx.facts.trx_commit == 2,
          None, "relaxed, and trx_commit=2."),
    Rule(
        id="trx-commit.relaxed-0-to-2", severity="durability",
        setting="innodb_flush_log_at_trx_commit",
        holds=lambda ctx: _relaxed(ctx) and ctx.facts.trx_commit == 0,
        build=_relaxed_0_to_2,
        summary="--durability relaxed and innodb_flush_log_at_trx_commit=0: even a mysqld "
                "crash loses innodb_flush_log_at_timeout seconds of commits, where 2 loses "
                "them only in an OS crash or power loss, at about the same cost.",
        recommends="`innodb_flush_log_at_trx_commit = 2` (dynamic: SET GLOBAL).",
        risk="An OS crash or power loss still loses up to innodb_flush_log_at_timeout "
             "seconds of commits.",
        source=TRX_COMMIT_MANUAL),
    Check("trx-commit", "note", lambda ctx: _relaxed(ctx) and _cheap_sync(ctx),
          _cheap_sync_note,
          f"relaxed on a device that syncs in under {CHEAP_SYNC_NS // 1000} µs (2 would "
          "gain little) — unless the model prices 2 at "
          f"+{MIN_PRICED_GAIN_PCT:g} % TPS or more: then the finding below, with that "
          "price."),
    RELAXED_ALLOWS_2 := Rule(
        id="trx-commit.relaxed-allows-2", severity="performance",
        setting="innodb_flush_log_at_trx_commit", holds=_relaxed,
        build=_relaxed_allows_2,
        summary="--durability relaxed, innodb_flush_log_at_trx_commit is 1 (or 3), and the "
                f"device's sync is not cheap (no profile, or {CHEAP_SYNC_NS // 1000} µs or "
                "more, or the model prices 2 at "
                f"+{MIN_PRICED_GAIN_PCT:g} % TPS or more): every commit group pays a redo "
                "sync that relaxed durability does not need.",
        recommends="`innodb_flush_log_at_trx_commit = 2` (dynamic: SET GLOBAL).",
        risk="An OS crash or power loss (not a mysqld crash) loses up to "
             "innodb_flush_log_at_timeout seconds of acknowledged commits; on a primary "
             "with the binary log on, replicas may then hold transactions the primary "
             "lost.",
        source=TRX_COMMIT_MANUAL),
)


# ---- sync_binlog --------------------------------------------------------------------------

def _strict_binlog(ctx: Context) -> Change:
    sb = ctx.facts.sync_binlog
    loss = ("whatever the OS had not yet written back" if sb == 0 else
            f"up to {sb - 1} commit groups")
    return Change(
        setting="sync_binlog", current=str(sb), recommended="1",
        why=["--durability strict with the binary log on: the binlog must be synced at "
             "each commit group, or after an OS crash it can lack transactions InnoDB "
             "has (replicas and point-in-time recovery miss them)",
             f"sync_binlog={sb}: an OS crash or power loss loses {loss} of the binlog"]
        + _not_exempt_why(ctx),
        risk="no data at risk; each commit group waits for one more sync (the binlog "
             "file), see the prediction",
        restart_needed=False, my_cnf=["sync_binlog = 1"],
        set_global=["SET GLOBAL sync_binlog = 1;"], sim_changes={"sync_binlog": 1})


def _relaxed_replica_binlog(ctx: Context) -> Change:
    return Change(
        setting="sync_binlog", current=str(ctx.facts.sync_binlog), recommended="0",
        why=[f"--durability relaxed on {_role_reason(ctx.facts)}",
             "sync_binlog=1 costs one binlog sync per commit group"],
        risk="an OS crash or power loss can lose the tail of this node's binlog (what the "
             "OS had not written back); replicas chained from it may need re-pointing",
        restart_needed=False, my_cnf=["sync_binlog = 0"],
        set_global=["SET GLOBAL sync_binlog = 0;"], sim_changes={"sync_binlog": 0})


SYNC_BINLOG: tuple[Rule | Check, ...] = (
    Check("sync-binlog", "silent", lambda ctx: not ctx.facts.log_bin, None,
          "the binary log is off."),
    Check("sync-binlog", "silent", lambda ctx: _strict(ctx) and ctx.facts.sync_binlog == 1,
          None, "strict, and sync_binlog=1."),
    Check("sync-binlog", "note", lambda ctx: _strict(ctx) and _exempt(ctx),
          lambda ctx: (f"sync_binlog={ctx.facts.sync_binlog} accepted on "
                       f"{_role_reason(ctx.facts)} (if this replica may be promoted, use 1)"),
          "strict, another value, on a Galera node or a replica shown crash-safe "
          "(accepted)."),
    Rule(
        id="sync-binlog.strict-requires-1", severity="durability", setting="sync_binlog",
        holds=_strict, build=_strict_binlog,
        summary="--durability strict on a primary (or a replica not shown crash-safe) with "
                "the binary log on, and sync_binlog is not 1: after an OS crash the binlog "
                "can lack transactions InnoDB has, so replicas and point-in-time recovery "
                "miss them.",
        recommends="`sync_binlog = 1` (dynamic: SET GLOBAL).",
        risk="No data at risk: each commit group waits for one more sync (the binlog file).",
        source=SYNC_BINLOG_MANUAL + "; " + REPLICA_SOURCES),
    Check("sync-binlog", "silent", lambda ctx: _relaxed(ctx) and ctx.facts.sync_binlog != 1,
          None, "relaxed, and sync_binlog is not 1."),
    Check("sync-binlog", "note", lambda ctx: _relaxed(ctx) and not _exempt(ctx),
          lambda ctx: ("sync_binlog=1 kept under --durability relaxed: "
                       + ("on a primary the binary log feeds replicas and point-in-time "
                          "recovery" if ctx.facts.role != "replica" else
                          "a replica not shown crash-safe ("
                          + "; ".join(replica_exemption(ctx)[1]) + ")")),
          "relaxed on a primary, or on a replica not shown crash-safe (sync_binlog=1 "
          "kept)."),
    Rule(
        id="sync-binlog.relaxed-replica-allows-0", severity="performance",
        setting="sync_binlog", holds=_relaxed, build=_relaxed_replica_binlog,
        summary="--durability relaxed on a Galera node or a replica shown crash-safe, with "
                "the binary log on and sync_binlog=1: one binlog sync per commit group that "
                "the node's role does not need.",
        recommends="`sync_binlog = 0` (dynamic: SET GLOBAL).",
        risk="An OS crash or power loss can lose the tail of this node's binlog; replicas "
             "chained from it may need re-pointing.",
        source=SYNC_BINLOG_MANUAL),
)
