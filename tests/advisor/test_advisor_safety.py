"""Advisor safety (no server needed): a replica relaxes the commit syncs only on read
evidence of its crash safety; O_DIRECT_NO_FSYNC only where it is worth it, with the
flavor's risk; a profile /sys contradicts; network filesystems; O_DSYNC,
innodb_dedicated_server, innodb_flush_log_at_timeout and innodb_log_file_buffering; and
the sampling loop across a restart or a FLUSH STATUS.

Facts are built from the captured fixtures (tests/fixtures/*.json), as in
test_advisor_rules.py.
"""

from __future__ import annotations

import copy

import pymysql
import pytest

from innoflush.advisor.device import reconcile_with_sys
from innoflush.advisor.rules import Context, evaluate
from innoflush.live.facts import facts_from_variables
from innoflush.live.observed import observe
from innoflush.live.replication import channel_from_row
from innoflush.live.sampling import Snapshot, interval_between, sample
from tests.helpers.device_facts import PLP, VOLATILE  # the rules tests' devices


def build(fx: dict, device=None, durability="strict", datadir_fs=None, replica=None,
          status_end: dict | None = None, **var_overrides) -> Context:
    variables = dict(fx["variables"])
    variables.update({k: str(v) for k, v in var_overrides.items()})
    rows = fx.get("replica_status", []) if replica is None else replica
    facts = facts_from_variables(variables, rows, True)
    end = {**fx["status_end"], **(status_end or {})}
    iv = interval_between(0, Snapshot(0.0, fx["status_start"]),
                          Snapshot(fx["interval_s"], end), fx.get("polls"))
    assert iv.valid
    obs = observe(iv, facts.product, facts.log_bin, facts.trx_commit,
                  facts.flush_log_at_timeout, facts.redo_write_through)
    return Context(facts=facts, observed=obs, device=device, durability=durability,
                   datadir_fs=datadir_fs)


def ids(ev) -> list[str]:
    return [f.id for f in ev.findings]


def finding(ev, fid):
    got = [f for f in ev.findings if f.id == fid]
    assert got, f"no {fid} finding in {ids(ev)}"
    return got[0]


def replica_row(**kw) -> dict:
    row = {"Source_Host": "db-primary-1", "Source_Port": 3306, "Replica_IO_Running": "Yes",
           "Replica_SQL_Running": "Yes", "Auto_Position": 1, "Channel_Name": ""}
    row.update(kw)
    return row


RELAXED_84 = {"innodb_flush_log_at_trx_commit": 2, "sync_binlog": 0}


# ---- a replica's crash safety --------------------------------------------------------------

def test_crash_safe_replica_is_read_not_assumed(load_fixture):
    ctx = build(load_fixture("mysql-8.4"), device=VOLATILE, **RELAXED_84)
    rep = ctx.facts.replication
    assert rep is not None and rep.crash_safe and rep.threads_running
    assert "relay_log_recovery=ON" in rep.evidence and "gtid_mode=ON" in rep.evidence
    assert any("auto-position" in e for e in rep.evidence)
    ev = evaluate(ctx)
    assert ev.findings == []
    assert any("crash-safe replica" in n and "relay_log_recovery=ON" in n for n in ev.notes)
    d = ctx.facts.to_dict()["replication"]
    assert d["crash_safe"] is True and d["channels"][0]["positioning"] == "auto-position"


def test_relay_log_recovery_off_keeps_strict(load_fixture):
    ctx = build(load_fixture("mysql-8.4"), device=VOLATILE, relay_log_recovery="OFF",
                **RELAXED_84)
    assert ctx.facts.role == "replica" and not ctx.facts.replication.crash_safe
    ev = evaluate(ctx)
    tc = finding(ev, "trx-commit.strict-requires-1")
    sb = finding(ev, "sync-binlog.strict-requires-1")
    for f in (tc, sb):
        assert f.recommended == "1"
        assert any("not shown crash-safe" in w and "relay_log_recovery=OFF" in w
                   for w in f.why)
    assert not any("accepted" in n for n in ev.notes)


def test_stopped_replica_taking_direct_writes_is_not_exempt(load_fixture):
    fx = load_fixture("mysql-8.4")
    stopped = [replica_row(Replica_IO_Running="No", Replica_SQL_Running="No")]
    writes = {"Com_insert": fx["status_start"].get("Com_insert", 0) + 50_000}
    ctx = build(fx, device=VOLATILE, replica=stopped, status_end=writes,
                read_only="OFF", super_read_only="OFF", **RELAXED_84)
    why = " ".join(finding(evaluate(ctx), "trx-commit.strict-requires-1").why)
    assert "replication threads not both running (IO No, SQL No)" in why
    assert "5,000.0 write statements/s committed during the interval with replication " \
           "stopped" in why
    assert "read_only=OFF" in why
    # the same stopped replica without writes: still not exempt, no direct-writes line
    ctx = build(fx, device=VOLATILE, replica=stopped, **RELAXED_84)
    why = " ".join(finding(evaluate(ctx), "trx-commit.strict-requires-1").why)
    assert "threads not both running" in why and "write statements/s" not in why


@pytest.mark.parametrize("overrides, row, missing", [
    ({"gtid_mode": "OFF"}, {}, "gtid_mode=OFF"),
    ({}, {"Auto_Position": 0}, "file-position replication"),
    ({"version": "8.0.22"}, {}, "relay_log_info_repository not readable"),
    ({"version": "8.0.22", "relay_log_info_repository": "FILE"}, {},
     "relay_log_info_repository=FILE"),
])
def test_each_missing_piece_of_evidence_is_named(load_fixture, overrides, row, missing):
    ctx = build(load_fixture("mysql-8.4"), device=VOLATILE, replica=[replica_row(**row)],
                **RELAXED_84, **overrides)
    assert any(missing in m for m in ctx.facts.replication.missing), \
        ctx.facts.replication.missing
    assert "trx-commit.strict-requires-1" in ids(evaluate(ctx))


def test_mysql_repository_table_counts_before_8023(load_fixture):
    ctx = build(load_fixture("mysql-8.4"), device=VOLATILE, version="8.0.22",
                relay_log_info_repository="TABLE", **RELAXED_84)
    assert ctx.facts.replication.crash_safe
    assert evaluate(ctx).findings == []


def test_every_mariadb_connection_is_judged(load_fixture):
    rows = [{"Connection_name": "east", "Master_Host": "10.0.0.1", "Master_Port": 3306,
             "Slave_IO_Running": "Yes", "Slave_SQL_Running": "Yes", "Using_Gtid": "Slave_Pos"},
            {"Connection_name": "west", "Master_Host": "10.0.0.2", "Master_Port": 3306,
             "Slave_IO_Running": "No", "Slave_SQL_Running": "Yes", "Using_Gtid": "No"}]
    ctx = build(load_fixture("mariadb-10.11"), device=VOLATILE, replica=rows,
                relay_log_recovery="ON", read_only="ON",
                innodb_flush_log_at_trx_commit=2)
    f = ctx.facts
    assert f.role == "replica" and "'east'" in f.role_detail and "'west'" in f.role_detail
    missing = " ".join(f.replication.missing)
    assert "connection 'west': file-position" in missing
    assert "connection 'west': replication threads not both running" in missing
    assert "east" not in missing
    assert "trx-commit.strict-requires-1" in ids(evaluate(ctx))
    # both connections on GTID and running: exempt
    rows[1].update(Slave_IO_Running="Yes", Using_Gtid="Current_Pos")
    ctx = build(load_fixture("mariadb-10.11"), device=VOLATILE, replica=rows,
                relay_log_recovery="ON", read_only="ON",
                innodb_flush_log_at_trx_commit=2)
    assert ctx.facts.replication.crash_safe
    assert "trx-commit.strict-requires-1" not in ids(evaluate(ctx))


def test_channel_columns_of_each_server():
    old = channel_from_row({"Master_Host": "h", "Slave_IO_Running": "Yes",
                            "Slave_SQL_Running": "No", "Auto_Position": "1"}, False)
    assert (old.io_running, old.sql_running, old.gtid, old.name) == ("Yes", "No", True, "")
    unknown = channel_from_row({"Master_Host": "h", "Slave_IO_Running": "Yes"}, False)
    assert unknown.gtid is None and unknown.sql_running == "?" and not unknown.running


def test_relaxed_keeps_binlog_sync_on_an_unsafe_replica(load_fixture):
    ev = evaluate(build(load_fixture("mysql-8.4"), device=VOLATILE, durability="relaxed",
                        relay_log_recovery="OFF"))
    assert "sync-binlog.relaxed-replica-allows-0" not in ids(ev)
    assert any("sync_binlog=1 kept" in n and "relay_log_recovery=OFF" in n for n in ev.notes)
    f = finding(ev, "trx-commit.relaxed-allows-2")
    assert "acceptable on" not in f.risk
    ev = evaluate(build(load_fixture("mysql-8.4"), device=VOLATILE, durability="relaxed"))
    assert "sync-binlog.relaxed-replica-allows-0" in ids(ev)


# ---- loss windows from innodb_flush_log_at_timeout -----------------------------------------

def test_loss_windows_follow_the_timeout(load_fixture):
    fx = load_fixture("mysql-5.7")
    f = finding(evaluate(build(fx, innodb_flush_log_at_trx_commit=0,
                               innodb_flush_log_at_timeout=3)),
                "trx-commit.strict-requires-1")
    assert any("~3 s (innodb_flush_log_at_timeout)" in w for w in f.why)
    f = finding(evaluate(build(fx, durability="relaxed", innodb_flush_log_at_trx_commit=0,
                               innodb_flush_log_at_timeout=3)),
                "trx-commit.relaxed-0-to-2")
    assert "~3 s" in f.why[0] and "~1 s" not in f.why[0]


def test_flush_log_timeout_rule(load_fixture):
    fx = load_fixture("mariadb-10.11")
    ev = evaluate(build(fx, durability="relaxed", innodb_flush_log_at_trx_commit=2,
                        innodb_flush_log_at_timeout=5))
    f = finding(ev, "flush-log-timeout.widens-loss-window")
    assert (f.current, f.recommended, f.severity) == ("5", "1", "durability")
    assert "~5 s" in f.why[0] and f.sim_changes == {"innodb_flush_log_at_timeout": 1.0}
    # strict: the trx-commit finding decides; a note on the wider window
    ev = evaluate(build(fx, innodb_flush_log_at_trx_commit=2, innodb_flush_log_at_timeout=5))
    assert "flush-log-timeout.widens-loss-window" not in ids(ev)
    assert any("up to 5 s" in n and "moot" in n for n in ev.notes)
    # trx_commit=1: it does not matter
    ev = evaluate(build(fx, innodb_flush_log_at_timeout=5))
    assert any("does not matter" in n for n in ev.notes)
    assert not any(i.startswith("flush-log-timeout.") for i in ids(ev))
    ev = evaluate(build(fx, durability="relaxed", innodb_flush_log_at_trx_commit=2))
    assert "flush-log-timeout.widens-loss-window" not in ids(ev)     # timeout 1


# ---- innodb_log_file_buffering (MariaDB) ---------------------------------------------------

def test_log_file_buffering(load_fixture):
    fx = load_fixture("mariadb-10.11")
    assert fx["variables"]["innodb_log_file_buffering"] == "OFF"
    ev = evaluate(build(fx, durability="relaxed", innodb_flush_log_at_trx_commit=2))
    f = finding(ev, "log-file-buffering.off-at-trx-commit-2")
    assert (f.current, f.recommended, f.restart_needed) == ("OFF", "ON", False)
    assert any("MDEV-28766" in w for w in f.why)
    ev = evaluate(build(fx, durability="relaxed", innodb_flush_log_at_trx_commit=2,
                        innodb_log_file_buffering="ON"))
    assert not any(i.startswith("log-file-buffering.") for i in ids(ev))
    assert any("suits innodb_flush_log_at_trx_commit=2" in n for n in ev.notes)
    # strict on a primary: trx_commit=2 is what the advice removes
    ev = evaluate(build(fx, innodb_flush_log_at_trx_commit=2))
    assert "log-file-buffering.off-at-trx-commit-2" not in ids(ev)
    ev = evaluate(build(fx, innodb_log_file_buffering="ON"))
    assert any("mostly, not always, faster" in n for n in ev.notes)
    # MySQL has no such variable
    ev = evaluate(build(load_fixture("mysql-5.7"), durability="relaxed",
                        innodb_log_file_buffering="OFF"))
    assert not any(i.startswith("log-file-buffering.") for i in ids(ev))


# ---- O_DIRECT_NO_FSYNC: worth it, and what it skips ----------------------------------------

def test_no_fsync_not_for_a_large_share_of_few_fsyncs(load_fixture):
    """trx_commit=2: few fsyncs in all, so data-file syncs are a large share of them, but
    they take almost no device time: no recommendation."""
    fx = load_fixture("mysql-8.0")
    s = fx["status_start"]
    end = {"Innodb_os_log_fsyncs": s["Innodb_os_log_fsyncs"] + 10,
           "Innodb_data_fsyncs": s["Innodb_data_fsyncs"] + 60}    # 5 data-file syncs/s
    ev = evaluate(build(fx, device=PLP, status_end=end, innodb_flush_log_at_trx_commit=2))
    assert "flush-method.o-direct-no-fsync-on-plp" not in ids(ev)
    note = next(n for n in ev.notes if "not a visible cost" in n)
    assert "5.0 data-file" in note and "0.2 ms of device sync time" in note
    assert "threshold 10 ms" in note
    # no device latency: not judged worth it either
    slow_unknown = copy.deepcopy(PLP)
    slow_unknown.fsync_ns = None
    ev = evaluate(build(fx, device=slow_unknown))
    assert "flush-method.o-direct-no-fsync-on-plp" not in ids(ev)
    assert any("sync latency is unknown" in n for n in ev.notes)


def test_no_fsync_risk_is_the_flavors(load_fixture):
    f = finding(evaluate(build(load_fixture("mysql-8.0"), device=PLP)),
                "flush-method.o-direct-no-fsync-on-plp")
    assert "created or extended" in f.risk and "doublewrite" not in f.risk
    fx = load_fixture("mariadb-10.11")
    busy = {"Innodb_data_fsyncs": fx["status_end"]["Innodb_data_fsyncs"] + 4000}
    f = finding(evaluate(build(fx, device=PLP, status_end=busy)),
                "flush-method.o-direct-no-fsync-on-plp")
    assert "doublewrite buffer's fsync" in f.risk and "MDEV-33545" in f.risk
    fx = load_fixture("mariadb-11.4")
    busy = {"Innodb_data_fsyncs": fx["status_end"]["Innodb_data_fsyncs"] + 4000}
    f = finding(evaluate(build(fx, device=PLP, status_end=busy, innodb_doublewrite="ON")),
                "flush-method.o-direct-no-fsync-on-plp")
    assert "still synced" in f.risk and f.recommended == "innodb_doublewrite=fast"


def test_no_fsync_dropped_when_its_predicted_gain_is_small(load_fixture):
    from innoflush.advisor.rules.o_direct_no_fsync import drop_unprofitable_no_fsync

    def pred(pct, span):
        return {"change": {"tps_pct": pct}, "range": {"tps_pct": span}}
    for p, dropped in ((pred(0.0, [-0.5, 1.2]), True), (pred(0.5, [0.2, 3.0]), False),
                       (pred(5.0, None), False), (None, False)):
        ev = evaluate(build(load_fixture("mysql-8.0"), device=PLP))
        assert "flush-method.o-direct-no-fsync-on-plp" in ids(ev)
        assert drop_unprofitable_no_fsync(ev, lambda ch, p=p: p) is dropped
        assert ("flush-method.o-direct-no-fsync-on-plp" not in ids(ev)) is dropped
        assert any("+1.2 % TPS at best" in n for n in ev.notes) is dropped


# ---- a profile against /sys ---------------------------------------------------------------

def test_sys_write_back_overrides_a_plp_profile(load_fixture):
    dev = copy.deepcopy(PLP)
    warning = reconcile_with_sys(dev, [{"name": "vda", "write_cache": "write back",
                                        "virtual": True}])
    assert warning and "/sys/block/vda/queue/write_cache" in warning
    assert "write back" in warning and "plp" in warning
    assert dev.verdict == "volatile-cache" and dev.o_direct_no_fsync_safe is False
    ev = evaluate(build(load_fixture("mysql-8.0"), device=dev))
    assert "flush-method.o-direct-no-fsync-on-plp" not in ids(ev)
    assert any("NOT safe" in n for n in ev.notes)
    ev = evaluate(build(load_fixture("mysql-8.0"), device=dev,
                        innodb_flush_method="O_DIRECT_NO_FSYNC"))
    f = finding(ev, "flush-method.no-fsync-on-volatile-cache")
    assert "write back" in " ".join(f.why)


def test_sys_write_through_overrides_a_volatile_profile():
    dev = copy.deepcopy(VOLATILE)
    warning = reconcile_with_sys(dev, [{"name": "nvme0n1", "write_cache": "write through",
                                        "virtual": False}])
    assert warning and "write through" in warning
    assert dev.verdict == "write-through" and dev.o_direct_no_fsync_safe is True
    vdev = copy.deepcopy(VOLATILE)
    reconcile_with_sys(vdev, [{"name": "vdb", "write_cache": "write through"}])
    assert vdev.o_direct_no_fsync_safe is None           # a VM: the host decides


def test_sys_agreeing_or_silent_or_measured_changes_nothing():
    for dev, disks in ((PLP, [{"name": "nvme0n1", "write_cache": "write through"}]),
                       (VOLATILE, [{"name": "sda", "write_cache": "write back"}]),
                       (PLP, [{"name": "sda", "write_cache": None}]),
                       (PLP, [])):
        d = copy.deepcopy(dev)
        assert reconcile_with_sys(d, disks) is None
        assert (d.verdict, d.o_direct_no_fsync_safe) == (dev.verdict,
                                                         dev.o_direct_no_fsync_safe)
    measured = copy.deepcopy(PLP)
    measured.source = "measure"
    assert reconcile_with_sys(measured, [{"name": "vda", "write_cache": "write back"}]) \
        is None


# ---- network filesystems, O_DSYNC, innodb_dedicated_server -----------------------------

@pytest.mark.parametrize("fs", ["nfs", "nfs4", "cifs", "fuse.sshfs"])
def test_no_o_direct_on_network_filesystems(load_fixture, fs):
    ev = evaluate(build(load_fixture("mysql-5.7"), device=VOLATILE, datadir_fs=fs))
    assert "flush-method.fsync-double-buffering" not in ids(ev)
    assert any("network filesystem" in n and "COMMIT" in n for n in ev.notes)
    ev = evaluate(build(load_fixture("mysql-8.0"), device=PLP, datadir_fs=fs))
    assert "flush-method.o-direct-no-fsync-on-plp" not in ids(ev)
    assert any("O_DIRECT_NO_FSYNC not advised" in n for n in ev.notes)
    # a local filesystem: the rules as before
    ev = evaluate(build(load_fixture("mysql-5.7"), device=VOLATILE, datadir_fs="ext4"))
    assert "flush-method.fsync-double-buffering" in ids(ev)


def test_o_dsync(load_fixture):
    fx = load_fixture("mysql-8.0")
    f = finding(evaluate(build(fx, datadir_fs="xfs", innodb_flush_method="O_DSYNC")),
                "flush-method.o-dsync-double-buffering")
    assert (f.current, f.recommended, f.severity) == ("O_DSYNC", "O_DIRECT", "performance")
    assert "O_SYNC" in f.why[0] and f.restart_needed
    ev = evaluate(build(fx, innodb_flush_method="O_DSYNC"))       # filesystem unknown
    assert "flush-method.o-dsync-double-buffering" not in ids(ev)
    assert any("than O_DSYNC" in c for c in ev.cannot_judge)
    ev = evaluate(build(fx, datadir_fs="nfs4", innodb_flush_method="O_DSYNC"))
    assert not any(i.startswith("flush-method.") for i in ids(ev))
    ev = evaluate(build(load_fixture("mariadb-10.11"), datadir_fs="xfs",
                        innodb_flush_method="O_DSYNC"))
    assert not any(i.startswith("flush-method.") for i in ids(ev))
    assert any("O_DSYNC" in n and "not judged" in n for n in ev.notes)


def test_dedicated_server_no_fsync_on_volatile(load_fixture):
    fx = load_fixture("mysql-8.0")
    ev = evaluate(build(fx, device=VOLATILE, innodb_dedicated_server="ON",
                        innodb_flush_method="O_DIRECT_NO_FSYNC"))
    f = finding(ev, "flush-method.dedicated-server-no-fsync-on-volatile-cache")
    assert f.severity == "data-safety" and f.recommended == "O_DIRECT"
    assert "innodb_dedicated_server=ON" in f.why[0] and "explicitly" in f.risk
    assert "flush-method.no-fsync-on-volatile-cache" not in ids(ev)
    # without the dedicated mode (or on 8.4): the general rule
    for over in ({"innodb_dedicated_server": "OFF"}, {"version": "8.4.3"}):
        ev = evaluate(build(fx, device=VOLATILE, innodb_flush_method="O_DIRECT_NO_FSYNC",
                            **{"innodb_dedicated_server": "ON", **over}))
        assert "flush-method.no-fsync-on-volatile-cache" in ids(ev)
    # on a safe device nothing fires
    ev = evaluate(build(fx, device=PLP, innodb_dedicated_server="ON",
                        innodb_flush_method="O_DIRECT_NO_FSYNC"))
    assert not any(i.startswith("flush-method.") for i in ids(ev))


# ---- sampling across a restart and a FLUSH STATUS ------------------------------------------

BASE = {"Uptime": 1000, "Uptime_since_flush_status": 1000, "Com_insert": 100,
        "Innodb_data_fsyncs": 50}


def test_flush_status_seen_when_nothing_decreased():
    a = Snapshot(0.0, {**BASE, "Uptime_since_flush_status": 2})
    b = Snapshot(10.0, {**BASE, "Uptime": 1010, "Uptime_since_flush_status": 4,
                        "Com_insert": 900})
    iv = interval_between(0, a, b)
    assert not iv.valid and "FLUSH STATUS" in iv.problem and "rose 2 s" in iv.problem
    # one second of rounding between the two uptimes is not a reset
    b = Snapshot(10.0, {**BASE, "Uptime": 1010, "Uptime_since_flush_status": 11,
                        "Com_insert": 900})
    assert interval_between(0, a, b).valid


class LosingSession:
    """Answers SHOW GLOBAL STATUS from a list; raises a lost connection at call `lose_at`
    (counting the status reads and the polls)."""

    def __init__(self, statuses, lose_at=None):
        self.statuses = list(statuses)
        self.lose_at = lose_at
        self.calls = 0
        self.statements: list[str] = []
        self.closed = False

    def query(self, sql, args=None):
        self.calls += 1
        if self.lose_at is not None and self.calls >= self.lose_at:
            raise pymysql.err.OperationalError(2013, "Lost connection to server during query")
        self.statements.append(sql)
        if sql == "SHOW GLOBAL STATUS":
            return list(self.statuses.pop(0).items())
        return [("Threads_running", 2)]

    def close(self):
        self.closed = True


def test_restart_mid_interval_loses_only_that_interval(fake_clock):
    s1 = {**BASE, "Uptime": 1003, "Uptime_since_flush_status": 1003, "Com_insert": 400}
    # 1 status read + 5 polls in interval 1 + its end read = 7 calls; lost in interval 2
    old = LosingSession([BASE, s1], lose_at=9)
    after = {**BASE, "Uptime": 2, "Uptime_since_flush_status": 2, "Com_insert": 0}
    later = {**BASE, "Uptime": 5, "Uptime_since_flush_status": 5, "Com_insert": 600}
    new = LosingSession([after, later])
    tries: list[int] = []

    def open_session():
        tries.append(1)
        if len(tries) < 3:     # the server is still starting
            raise pymysql.err.OperationalError(2003, "Can't connect")
        return new
    got: list = []
    ivs = sample(old, interval_s=3, samples=3, poll_s=0.5, open_session=open_session,
                 on_reconnect=got.append)
    assert [iv.valid for iv in ivs] == [True, False, True]
    assert ivs[1].problem.startswith("server restarted during interval 2: lost")
    assert "Uptime 1003 s -> 2 s" in ivs[1].problem
    assert got == [new] and len(tries) == 3
    assert ivs[2].deltas["Com_insert"] == 600 and ivs[0].deltas["Com_insert"] == 300


def test_lost_connection_without_reconnect_raises(fake_clock):
    with pytest.raises(pymysql.err.OperationalError):
        sample(LosingSession([BASE, BASE], lose_at=3), interval_s=3, samples=2)

    def never():
        raise pymysql.err.OperationalError(2003, "Can't connect")
    with pytest.raises(pymysql.err.OperationalError) as exc:
        sample(LosingSession([BASE, BASE], lose_at=3), interval_s=3, samples=2,
               open_session=never, reconnect_window_s=5)
    assert exc.value.args[0] == 2013        # the loss itself, not the failed reconnects
    # an error that is not a lost connection is not retried
    bad = LosingSession([BASE])
    bad.query = lambda sql, args=None: (_ for _ in ()).throw(
        pymysql.err.ProgrammingError(1064, "syntax")) if "WHERE" in sql else \
        list(BASE.items())
    with pytest.raises(pymysql.err.ProgrammingError):
        sample(bad, interval_s=3, samples=1, open_session=lambda: LosingSession([BASE]))


def test_a_profile_measured_on_this_disk_keeps_measure_s_verdict():
    """measure read /sys beside timing the flush: advise does not overrule the verdict of
    a profile measured here, on the disks under the datadir (one verdict for one disk);
    another host's, another disk's or a published profile's still meet /sys."""
    from innoflush.advisor.device import measured_on_these_disks
    from innoflush.profiles.model import DeviceProfile

    disk = {"name": "vda", "serial": "s1", "write_cache": "write back"}
    here = {"hostname": "vm", "disks": [disk]}

    def profile(kind="measured", hostname="vm", disks=(disk,)):
        return DeviceProfile("p", "p", {"kind": kind},
                             {"hostname": hostname, "disks": list(disks)})
    assert measured_on_these_disks(profile(), here)
    assert not measured_on_these_disks(profile(hostname="db2"), here)
    assert not measured_on_these_disks(profile(disks=[{**disk, "name": "vdb"}]), here)
    assert not measured_on_these_disks(profile(disks=[{**disk, "serial": "s2"}]), here)
    assert not measured_on_these_disks(profile(kind="published"), here)
    assert not measured_on_these_disks(profile(disks=[]), here)
