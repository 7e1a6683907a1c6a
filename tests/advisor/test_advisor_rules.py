"""The advisor's facts and rules over captured variable/status sets (no server needed).

Fixtures (tests/fixtures/*.json): MySQL 5.7.44, 8.0.36, 8.4.3 and MariaDB 11.4.4 written
from the servers' real SHOW output formats; MariaDB 10.11 captured from a real server.
Each rule is checked where it must fire and where it must not.
"""

from __future__ import annotations

import re

import pytest

from innoflush.advisor.device import _fs_word
from innoflush.advisor.rules import Context, DeviceFacts, device_from_profile, evaluate
from innoflush.live.facts import (
    NoInnoDB,
    detect_product,
    effective_flush_method,
    facts_from_variables,
    sim_flavor_for,
)
from innoflush.live.observed import observe
from innoflush.live.sampling import Snapshot, interval_between
from tests.helpers.device_facts import NO_VERDICT, PLP, VOLATILE


def build(fx: dict, device=None, durability="strict", datadir_fs=None, replica=None,
          **var_overrides) -> Context:
    variables = dict(fx["variables"])
    variables.update({k: str(v) for k, v in var_overrides.items()})
    rows = fx.get("replica_status", []) if replica is None else replica
    facts = facts_from_variables(variables, rows, True)
    a = Snapshot(0.0, fx["status_start"])
    b = Snapshot(fx["interval_s"], fx["status_end"])
    iv = interval_between(0, a, b, fx.get("polls"))
    assert iv.valid
    redo_wt = str(variables.get("innodb_log_file_write_through", "")).upper() == "ON"
    obs = observe(iv, facts.product, facts.log_bin, facts.trx_commit,
                  facts.flush_log_at_timeout, redo_wt)
    return Context(facts=facts, observed=obs, device=device, durability=durability,
                   datadir_fs=datadir_fs)


def ids(ev) -> list[str]:
    return [f.id for f in ev.findings]


def fired(ev, family: str) -> bool:
    """Whether any finding of the setting family (ids ``<family>.<situation>``) fired."""
    return any(i.startswith(family + ".") for i in ids(ev))


def finding(ev, fid):
    got = [f for f in ev.findings if f.id == fid]
    assert got, f"no {fid} finding in {ids(ev)}"
    return got[0]


# ---- facts ---------------------------------------------------------------------------

@pytest.mark.parametrize("name, product, flavor, method, tc, log_bin, sb, role", [
    ("mysql-5.7", "mysql", "mysql-5.7", "fsync", 2, True, 0, "primary"),
    ("mysql-8.0", "mysql", "mysql-8.0", "O_DIRECT", 1, True, 1, "primary"),
    ("mysql-8.4", "mysql", "mysql-8.4", "O_DIRECT", 1, True, 1, "replica"),
    ("mariadb-10.11", "mariadb", "mariadb-10.11", "O_DIRECT", 1, True, 0, "primary"),
    ("mariadb-11.4", "mariadb", "mariadb-11", "O_DIRECT_NO_FSYNC", 1, True, 0, "primary"),
    # real captures (tests/fixtures/README.md)
    ("mariadb-10.11-odirect", "mariadb", "mariadb-10.11", "O_DIRECT", 1, False, 0, "primary"),
    ("mariadb-10.11-binlog", "mariadb", "mariadb-10.11", "fsync", 2, True, 0, "primary"),
])
def test_facts_from_fixtures(load_fixture, name, product, flavor, method, tc, log_bin, sb,
                             role):
    fx = load_fixture(name)
    f = facts_from_variables(fx["variables"], fx["replica_status"], True)
    assert (f.product, f.sim_flavor, f.flush_method) == (product, flavor, method)
    assert (f.trx_commit, f.log_bin, f.sync_binlog, f.role) == (tc, log_bin, sb, role)
    assert f.redo_capacity_bytes and f.redo_capacity_bytes > 0
    assert f.doublewrite_protects


def test_facts_details(load_fixture):
    f57 = facts_from_variables(load_fixture("mysql-5.7")["variables"])
    assert "empty" in f57.flush_method_source and f57.use_fdatasync is None
    assert f57.redo_capacity_bytes == 2 * 536870912          # log_file_size x files
    f80 = facts_from_variables(load_fixture("mysql-8.0")["variables"])
    assert f80.use_fdatasync is False and f80.redo_capacity_bytes == 4 * 1024**3
    f84 = load_fixture("mysql-8.4")
    f84 = facts_from_variables(f84["variables"], f84["replica_status"], True)
    assert "db-primary-1" in f84.role_detail and f84.super_read_only
    f11 = facts_from_variables(load_fixture("mariadb-11.4")["variables"])
    assert f11.mariadb11_io_variables and f11.doublewrite_fast_supported
    assert f11.flush_method_source == "innodb_doublewrite=fast"
    f1011 = facts_from_variables(load_fixture("mariadb-10.11")["variables"])
    assert f1011.use_fdatasync is None and not f1011.mariadb11_io_variables


@pytest.mark.parametrize("version, comment, product, vt", [
    ("8.0.36-28", "Percona Server (GPL), Release 28, Revision 47601f19", "percona", (8, 0, 36)),
    ("5.5.5-10.11.6-MariaDB-0+deb12u1", "Debian 12", "mariadb", (10, 11, 6)),
    ("11.4.4-MariaDB-log", "mariadb.org binary distribution", "mariadb", (11, 4, 4)),
    ("9.1.0", "MySQL Community Server - GPL", "mysql", (9, 1, 0)),
    ("5.7.44-log", "MySQL Community Server (GPL)", "mysql", (5, 7, 44)),
])
def test_detect_product(version, comment, product, vt):
    assert detect_product(version, comment) == (product, vt)


def test_sim_flavor_mapping():
    assert sim_flavor_for("mysql", (9, 1, 0)) == ("mysql-9.7", [])
    assert sim_flavor_for("mysql", (9, 7, 4)) == ("mysql-9.7", [])
    flavor, notes = sim_flavor_for("mysql", (26, 7, 0))     # an Innovation release
    assert flavor == "mysql-9.7" and "newer than any modelled version" in notes[0]
    assert sim_flavor_for("mysql", (8, 4, 3))[0] == "mysql-8.4"
    assert sim_flavor_for("percona", (8, 0, 36))[0] == "mysql-8.0"
    flavor, notes = sim_flavor_for("mysql", (8, 0, 18))
    assert flavor == "mysql-8.0" and notes
    assert sim_flavor_for("mariadb", (10, 6, 16))[0] == "mariadb-10.11"
    assert sim_flavor_for("mariadb", (11, 8, 9)) == ("mariadb-11.8", [])
    assert sim_flavor_for("mariadb", (11, 4, 4))[0] == "mariadb-11"
    flavor, notes = sim_flavor_for("mariadb", (12, 3, 0))
    assert flavor == "mariadb-11.8" and notes
    assert sim_flavor_for("mariadb", (10, 5, 20))[1]


def test_mariadb11_effective_method():
    base = {"innodb_data_file_buffering": "OFF", "innodb_data_file_write_through": "OFF",
            "innodb_doublewrite": "ON"}
    assert effective_flush_method("mariadb", base)[0] == "O_DIRECT"
    assert effective_flush_method("mariadb", base | {"innodb_doublewrite": "fast"})[0] == \
        "O_DIRECT_NO_FSYNC"
    assert effective_flush_method("mariadb", base | {"innodb_data_file_buffering": "ON"})[0] \
        == "fsync"
    assert effective_flush_method(
        "mariadb", base | {"innodb_data_file_write_through": "ON"})[0] == "O_DSYNC"


def test_no_innodb():
    with pytest.raises(NoInnoDB):
        facts_from_variables({"version": "10.11.6-MariaDB", "version_comment": "x",
                              "datadir": "/var/lib/mysql/"})


# ---- observed figures per flavor -----------------------------------------------------

def test_observed_mysql_80(load_fixture):
    fx = load_fixture("mysql-8.0")
    POLL = fx["polls"]["Threads_running"]  # noqa: N806 - each poll counts our own thread
    o = build(fx).observed
    assert o.commits_source == "Binlog_cache_use" and o.commits_per_s == 5000
    assert o.redo_syncs_source == "Innodb_os_log_fsyncs" and o.redo_syncs_per_s == 900
    assert o.other_fsyncs_per_s == 1200            # data-file/doublewrite fsyncs
    assert o.data_writes_include_redo
    assert o.commits_per_redo_sync == pytest.approx(5000 / 900, rel=1e-3)
    assert o.threads_running_avg == pytest.approx(sum(POLL) / len(POLL) - 1, abs=0.01)


def test_observed_mariadb_1011_captured(load_fixture):
    o = build(load_fixture("mariadb-10.11")).observed
    d = o.deltas
    assert o.commits_source == "Binlog_commits" and o.commits > 0
    assert d["Innodb_data_fsyncs"] > 0
    # MariaDB: no redo-sync counter; data writes exclude redo; fsyncs include redo syncs
    assert "Innodb_os_log_fsyncs" not in d
    assert o.redo_syncs_source.startswith("estimated")
    assert d["Innodb_data_fsyncs"] >= d["Innodb_log_writes"]
    assert d["Innodb_data_writes"] < d["Innodb_log_writes"]
    assert not o.data_writes_include_redo
    assert o.binlog_commits_per_group >= 1.0 and o.binlog_bytes_per_commit > 0


def test_observed_mysql_57_autocommit(load_fixture):
    o = build(load_fixture("mysql-5.7")).observed
    # binlog on: Binlog_cache_use counts the transactions, not the (absent) Com_commit
    assert o.commits_source == "Binlog_cache_use" and o.commits == 21000
    assert o.redo_syncs_per_s == pytest.approx(1.2)     # trx_commit=2: ~once a second


# ---- innodb_flush_method -------------------------------------------------------------

def test_no_fsync_recommended_where_safe_and_visible(load_fixture):
    ev = evaluate(build(load_fixture("mysql-8.0"), device=PLP))
    f = finding(ev, "flush-method.o-direct-no-fsync-on-plp")
    assert (f.current, f.recommended, f.severity) == ("O_DIRECT", "O_DIRECT_NO_FSYNC",
                                                      "performance")
    assert f.restart_needed and f.my_cnf == ["innodb_flush_method = O_DIRECT_NO_FSYNC"]
    assert any("1200.0 data-file" in w for w in f.why)
    assert f.sim_changes == {"innodb_flush_method": "O_DIRECT_NO_FSYNC"}


def test_no_fsync_never_on_volatile_cache(load_fixture):
    ev = evaluate(build(load_fixture("mysql-8.0"), device=VOLATILE))
    assert not fired(ev, "flush-method")
    assert any("NOT safe" in n for n in ev.notes)


def test_no_fsync_unknown_device_cannot_judge(load_fixture):
    for dev in (None, NO_VERDICT):
        ev = evaluate(build(load_fixture("mysql-8.0"), device=dev))
        assert not fired(ev, "flush-method")
        assert any("O_DIRECT_NO_FSYNC" in c for c in ev.cannot_judge)


def test_no_fsync_not_for_versions_without_the_fix(load_fixture):
    ev = evaluate(build(load_fixture("mysql-8.0"), device=PLP, version="8.0.13"))
    assert not fired(ev, "flush-method")
    assert any("8.0.14" in n for n in ev.notes)


def test_no_fsync_not_when_data_fsyncs_are_not_visible(load_fixture):
    # MariaDB fsyncs data files per checkpoint only: few beyond the redo syncs
    ev = evaluate(build(load_fixture("mariadb-10.11"), device=PLP))
    assert not fired(ev, "flush-method")
    assert any("not a visible cost" in n for n in ev.notes)


def test_no_fsync_not_on_zfs_or_separate_doublewrite_dir(load_fixture):
    ev = evaluate(build(load_fixture("mysql-8.0"), device=PLP, datadir_fs="zfs"))
    # never NO_FSYNC on ZFS
    assert finding(ev, "flush-method.o-direct-on-tmpfs-or-zfs").recommended == "fsync"
    ctx = build(load_fixture("mysql-8.0"), device=PLP, innodb_doublewrite_dir="/ssd2/dblwr")
    ev = evaluate(ctx)
    assert not fired(ev, "flush-method")
    assert any("innodb_doublewrite_dir" in c for c in ev.cannot_judge)
    ctx.doublewrite_same_fs = True
    assert "flush-method.o-direct-no-fsync-on-plp" in ids(evaluate(ctx))


def test_no_fsync_on_volatile_cache_is_a_data_safety_finding(load_fixture):
    ev = evaluate(build(load_fixture("mysql-8.0"), device=VOLATILE,
                        innodb_flush_method="O_DIRECT_NO_FSYNC"))
    f = finding(ev, "flush-method.no-fsync-on-volatile-cache")
    assert f.severity == "data-safety" and f.recommended == "O_DIRECT"
    assert any("volatile write cache" in w for w in f.why)
    assert ev.findings[0] is f                      # most severe first


def test_no_fsync_safe_device_stays(load_fixture):
    ev = evaluate(build(load_fixture("mysql-8.0"), device=PLP,
                        innodb_flush_method="O_DIRECT_NO_FSYNC"))
    assert not fired(ev, "flush-method")
    ev = evaluate(build(load_fixture("mysql-8.0"), device=None,
                        innodb_flush_method="O_DIRECT_NO_FSYNC"))
    assert not fired(ev, "flush-method")
    assert any("set now" in c for c in ev.cannot_judge)


def test_no_fsync_before_the_fix_is_unsafe_anywhere(load_fixture):
    ev = evaluate(build(load_fixture("mysql-5.7"), device=PLP, version="5.7.24-log",
                        innodb_flush_method="O_DIRECT_NO_FSYNC"))
    f = finding(ev, "flush-method.no-fsync-without-extend-fix")
    assert f.severity == "data-safety" and "27309336" in f.why[0]


def test_mariadb11_doublewrite_fast_on_volatile(load_fixture):
    ev = evaluate(build(load_fixture("mariadb-11.4"), device=VOLATILE))
    f = finding(ev, "flush-method.no-fsync-on-volatile-cache")
    assert f.severity == "data-safety" and f.setting == "innodb_doublewrite"
    assert f.my_cnf[0] == "innodb_doublewrite = ON"
    assert "innodb_flush_method" not in " ".join(f.my_cnf)   # the deprecated variable
    assert f.current.startswith("O_DIRECT_NO_FSYNC (innodb_doublewrite=fast")


def test_mariadb11_recommends_doublewrite_fast(load_fixture):
    fx = load_fixture("mariadb-11.4")
    fx["status_end"] = dict(fx["status_end"])
    # visible data-file fsyncs: 402/s x 40 µs = 16 ms of device time per second
    fx["status_end"]["Innodb_data_fsyncs"] += 4000
    ev = evaluate(build(fx, device=PLP, innodb_doublewrite="ON"))
    f = finding(ev, "flush-method.o-direct-no-fsync-on-plp")
    assert f.recommended == "innodb_doublewrite=fast"
    assert f.my_cnf == ["innodb_doublewrite = fast"]
    # an 11.x without the 'fast' value: no recommendation, a note instead
    ev = evaluate(build(fx, device=PLP, innodb_doublewrite="ON",
                        version="11.2.2-MariaDB"))
    assert not fired(ev, "flush-method")


def test_fsync_default_on_mysql57(load_fixture):
    ev = evaluate(build(load_fixture("mysql-5.7"), device=VOLATILE))
    f = finding(ev, "flush-method.fsync-double-buffering")
    assert (f.current, f.recommended) == ("fsync", "O_DIRECT")
    ev = evaluate(build(load_fixture("mysql-5.7"), device=None))
    assert not fired(ev, "flush-method")
    assert any("filesystem is" in c for c in ev.cannot_judge)
    ev = evaluate(build(load_fixture("mysql-5.7"), device=None, datadir_fs="zfs"))
    assert not fired(ev, "flush-method")


def test_o_direct_on_tmpfs_and_zfs_recommends_fsync(load_fixture):
    for fs in ("tmpfs", "zfs"):
        ev = evaluate(build(load_fixture("mariadb-10.11"), device=None, datadir_fs=fs))
        f = finding(ev, "flush-method.o-direct-on-tmpfs-or-zfs")
        assert f.recommended == "fsync" and fs in f.why[0].lower()


# ---- innodb_flush_log_at_trx_commit, sync_binlog ------------------------------------------

def test_strict_on_primary(load_fixture):
    ev = evaluate(build(load_fixture("mysql-5.7"), device=VOLATILE, datadir_fs="zfs"))
    tc = finding(ev, "trx-commit.strict-requires-1")
    assert (tc.current, tc.recommended, tc.severity) == ("2", "1", "durability")
    assert not tc.restart_needed and tc.set_global
    assert any("1 s" in w for w in tc.why)
    sb = finding(ev, "sync-binlog.strict-requires-1")
    assert (sb.current, sb.recommended) == ("0", "1")


def test_strict_already_optimal_is_silent(load_fixture):
    # 8.4 defaults: O_DIRECT, trx_commit=1, sync_binlog=1, fdatasync ON, doublewrite ON
    ev = evaluate(build(load_fixture("mysql-8.4"), device=VOLATILE))
    assert ev.findings == []
    ev = evaluate(build(load_fixture("mysql-8.4"), device=None))
    assert ev.findings == []


def test_strict_replica_may_relax(load_fixture):
    ctx = build(load_fixture("mysql-8.4"), device=VOLATILE,
                innodb_flush_log_at_trx_commit=2, sync_binlog=0)
    assert ctx.facts.role == "replica"
    ev = evaluate(ctx)
    assert ev.findings == []
    assert any("replica" in n and "accepted" in n for n in ev.notes)
    galera = build(load_fixture("mariadb-10.11"), device=VOLATILE, wsrep_on="ON",
                   innodb_flush_log_at_trx_commit=2)
    assert galera.facts.role == "galera"
    assert not fired(evaluate(galera), "trx-commit")


def test_relaxed_on_primary(load_fixture):
    fx = load_fixture("mariadb-10.11")
    ev = evaluate(build(fx, device=VOLATILE, durability="relaxed",
                        innodb_flush_log_at_timeout=2))
    f = finding(ev, "trx-commit.relaxed-allows-2")
    assert (f.current, f.recommended) == ("1", "2")
    assert "~2 s" in f.risk and "innodb_flush_log_at_timeout" in f.risk
    assert "replicas may then hold" in f.risk
    # the primary keeps sync_binlog as it is (sync_binlog=0 here: nothing to add)
    assert not fired(ev, "sync-binlog")


def test_relaxed_replica_drops_binlog_sync(load_fixture):
    ev = evaluate(build(load_fixture("mysql-8.4"), device=VOLATILE, durability="relaxed"))
    assert finding(ev, "trx-commit.relaxed-allows-2").recommended == "2"
    sb = finding(ev, "sync-binlog.relaxed-replica-allows-0")
    assert (sb.current, sb.recommended) == ("1", "0")
    assert "replica" in " ".join(sb.why)


def test_relaxed_not_worth_it_on_fast_sync(load_fixture):
    ev = evaluate(build(load_fixture("mariadb-10.11"), device=PLP, durability="relaxed"))
    assert not fired(ev, "trx-commit")
    assert any("gain little" in n for n in ev.notes)


@pytest.mark.parametrize("gain, promoted", [(94.0, True), (10.0, True), (9.0, False),
                                            (-3.0, False)])
def test_a_price_overrules_the_cheap_sync_guess(load_fixture, gain, promoted):
    """On a fast device 2 was kept as "little gain"; where the model prices it at +10 %
    or more, the finding replaces the note, with that price in its reasons."""
    from innoflush.advisor.rules.commit import priced_trx_commit_2

    ctx = build(load_fixture("mariadb-10.11"), device=PLP, durability="relaxed")
    ev = evaluate(ctx)
    assert not [f for f in ev.findings if f.id == "trx-commit.relaxed-allows-2"]
    pred = {"change": {"tps_pct": gain}, "range": {"tps_pct": [gain - 15, gain + 5]},
            "interval": {"tps_pct": [gain - 50, gain + 40]}}
    asked = []

    def prediction_of(changes):
        asked.append(changes)
        return pred
    assert priced_trx_commit_2(ev, ctx, prediction_of) is promoted
    assert asked == [{"innodb_flush_log_at_trx_commit": 2}]
    got = [f for f in ev.findings if f.id == "trx-commit.relaxed-allows-2"]
    assert bool(got) is promoted
    assert any("would gain little" in n for n in ev.notes) is not promoted
    if promoted:
        assert got[0].set_global == ["SET GLOBAL innodb_flush_log_at_trx_commit = 2;"]
        assert any("the model prices 2 at" in w for w in got[0].why)
    # strict durability, or no price: nothing moves
    assert priced_trx_commit_2(evaluate(ctx), ctx, lambda ch: None) is False


def test_relaxed_zero_becomes_two(load_fixture):
    ev = evaluate(build(load_fixture("mysql-5.7"), durability="relaxed",
                        innodb_flush_log_at_trx_commit=0))
    assert finding(ev, "trx-commit.relaxed-0-to-2").recommended == "2"
    ev = evaluate(build(load_fixture("mysql-5.7"), durability="relaxed"))  # already 2
    assert not fired(ev, "trx-commit")


def test_sync_binlog_ignored_without_binlog(load_fixture):
    ev = evaluate(build(load_fixture("mysql-5.7"), device=VOLATILE, log_bin="OFF",
                        innodb_flush_log_at_trx_commit=1, datadir_fs="xfs",
                        innodb_flush_method="O_DIRECT"))
    assert ev.findings == []


# ---- innodb_use_fdatasync ------------------------------------------------------------

def test_use_fdatasync_where_cheaper(load_fixture):
    ev = evaluate(build(load_fixture("mysql-8.0"), device=NO_VERDICT))
    f = finding(ev, "use-fdatasync.cheaper-than-fsync")
    assert (f.current, f.recommended, f.restart_needed) == ("OFF", "ON", False)
    assert f.sim_changes == {"innodb_use_fdatasync": True}


def test_use_fdatasync_must_not_fire(load_fixture):
    # not cheaper
    ev = evaluate(build(load_fixture("mysql-8.0"), device=VOLATILE))
    assert not fired(ev, "use-fdatasync")
    # already ON (8.4), MariaDB (no variable), 5.7 (no variable), no device
    assert not fired(evaluate(build(load_fixture("mysql-8.4"), device=PLP)), "use-fdatasync")
    assert not fired(evaluate(build(load_fixture("mariadb-10.11"),
                                                     device=NO_VERDICT)), "use-fdatasync")
    assert not fired(evaluate(build(load_fixture("mysql-5.7"),
                                                     device=NO_VERDICT)), "use-fdatasync")
    ev = evaluate(build(load_fixture("mysql-8.0"), device=None))
    assert not fired(ev, "use-fdatasync")
    assert any("innodb_use_fdatasync" in c for c in ev.cannot_judge)


# ---- innodb_doublewrite --------------------------------------------------------------

def test_doublewrite_off_flagged(load_fixture):
    for name, value in (("mysql-8.0", "OFF"), ("mysql-8.4", "DETECT_ONLY"),
                        ("mariadb-10.11", "OFF")):
        ev = evaluate(build(load_fixture(name), device=VOLATILE, innodb_doublewrite=value))
        f = finding(ev, "doublewrite.off-where-pages-can-tear")
        assert f.severity == "data-safety" and f.recommended == "ON" and f.restart_needed


def test_doublewrite_must_not_fire(load_fixture):
    assert not fired(evaluate(build(load_fixture("mysql-8.0"), device=PLP)), "doublewrite")
    ev = evaluate(build(load_fixture("mysql-8.0"), device=PLP, datadir_fs="zfs",
                        innodb_doublewrite="OFF"))
    assert not fired(ev, "doublewrite")
    atomic = DeviceFacts(**{**PLP.__dict__, "atomic_writes": True})
    ev = evaluate(build(load_fixture("mysql-8.0"), device=atomic, innodb_doublewrite="OFF"))
    assert not fired(ev, "doublewrite")
    # MariaDB 11's 'fast' still protects against torn pages
    fx = load_fixture("mariadb-11.4")
    assert not fired(evaluate(build(fx, device=PLP)), "doublewrite")


def test_no_device_says_what_it_cannot_judge(load_fixture):
    ev = evaluate(build(load_fixture("mariadb-10.11"), device=None))
    assert any("predicted effects" in c for c in ev.cannot_judge)
    assert any("O_DIRECT_NO_FSYNC" in c for c in ev.cannot_judge)


# ---- device facts from a profile ------------------------------------------------------

@pytest.mark.parametrize("text, fs", [
    ("ext4 (discard)", "ext4"), ("xfs (discard)", "xfs"), ("zfs, ZIL on the data disk", "zfs"),
    ("ext4 or xfs (similar)", None), ("on LVM, filesystem not stated", None), (None, None),
])
def test_filesystem_from_profile_text(text, fs):
    assert _fs_word(text) == fs


def test_device_from_profile(profile_files):
    from innoflush.profiles import DeviceProfile, load_profile

    d = device_from_profile(load_profile(profile_files["plp"]))
    assert d.o_direct_no_fsync_safe is True and d.fsync_ns == 40e3 and d.fdatasync_ns == 25e3
    assert d.fsync_exact and d.fdatasync_exact and d.filesystem == "ext4"
    # a profile without fdatasync: the fsync figure stands in, and is marked as such
    raw = load_profile(profile_files["volatile"]).to_dict()
    raw["tests"] = [t for t in raw["tests"] if t["op"] != "fdatasync"]
    d = device_from_profile(DeviceProfile.from_dict(raw))
    assert d.fdatasync_ns == d.fsync_ns and not d.fdatasync_exact


# ---- the rule table and --ignore-rule ----------------------------------------------------

def test_rule_ids_are_unique_and_name_their_family():
    from innoflush.advisor.rules import FAMILIES, RULE_IDS, RULES, SEVERITIES, TABLE

    assert len(RULE_IDS) == len(set(RULE_IDS)) == 18
    families = [fam.name for fam in FAMILIES]
    for rule in RULES:
        family, _, situation = rule.id.partition(".")
        assert family in families and situation, rule.id
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", situation), rule.id
        assert rule.severity in SEVERITIES and rule.setting and rule.source, rule.id
        assert rule.summary and rule.recommends and rule.risk, rule.id
    for fam in FAMILIES:
        assert {e.family for e in fam.entries} == {fam.name}
        assert fam.entries[-1] in RULES    # a family ends with the rule it falls through to
    assert {e.kind for e in TABLE if e not in RULES} == {"note", "cannot_judge", "silent"}


def test_ignored_rule_drops_only_its_finding(load_fixture):
    ctx = build(load_fixture("mysql-8.0"), device=PLP)
    assert ids(evaluate(ctx)) == ["flush-method.o-direct-no-fsync-on-plp",
                                  "use-fdatasync.cheaper-than-fsync"]
    ev = evaluate(ctx, ignore=["flush-method.o-direct-no-fsync-on-plp"])
    assert ids(ev) == ["use-fdatasync.cheaper-than-fsync"]
    assert ev.ignored == ["flush-method.o-direct-no-fsync-on-plp"]
    assert ev.notes == evaluate(ctx).notes and ev.cannot_judge == evaluate(ctx).cannot_judge
    ev = evaluate(ctx, ignore=["use-fdatasync.cheaper-than-fsync"] * 2
                  + ["flush-method.o-direct-no-fsync-on-plp"])
    assert ev.findings == []
    assert ev.ignored == ["use-fdatasync.cheaper-than-fsync",
                          "flush-method.o-direct-no-fsync-on-plp"]
    assert evaluate(ctx).ignored == []


def test_ignored_rule_still_decides_its_family(load_fixture):
    # before the 5.7.25 fix and on a volatile cache: the first situation decides; ignoring
    # it must not let the volatile-cache rule (later in the table) fire instead
    ctx = build(load_fixture("mysql-5.7"), device=VOLATILE, version="5.7.24-log",
                innodb_flush_method="O_DIRECT_NO_FSYNC")
    assert "flush-method.no-fsync-without-extend-fix" in ids(evaluate(ctx))
    ev = evaluate(ctx, ignore=["flush-method.no-fsync-without-extend-fix"])
    assert not fired(ev, "flush-method")
    assert fired(ev, "trx-commit")                   # other families unaffected


def test_unknown_ignored_rule_names_the_closest():
    from innoflush.advisor.rules import UnknownRule
    from innoflush.errors import UsageError

    ctx = minimal_context()
    with pytest.raises(UnknownRule) as exc:
        evaluate(ctx, ignore=["flush-method.no-fsync-on-volatile"])
    msg = str(exc.value)
    assert isinstance(exc.value, UsageError) and "\n" not in msg
    assert "'flush-method.no-fsync-on-volatile'" in msg
    assert msg.split("closest: ")[1].startswith("flush-method.no-fsync-on-volatile-cache")
    # the bare family name (the ids before the table): all of the family's ids
    with pytest.raises(UnknownRule, match="trx-commit.strict-requires-1, "
                                          "trx-commit.relaxed-0-to-2, "
                                          "trx-commit.relaxed-allows-2 "):
        evaluate(ctx, ignore=["trx-commit"])


def minimal_context() -> Context:
    from innoflush.live.facts import facts_from_variables

    return Context(facts=facts_from_variables({
        "version": "8.0.36", "version_comment": "MySQL Community Server - GPL",
        "datadir": "/var/lib/mysql/", "innodb_flush_method": "O_DIRECT",
        "innodb_flush_log_at_trx_commit": "1", "innodb_doublewrite": "ON"}))
