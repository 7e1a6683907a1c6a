"""The rules: server facts + observed deltas + device → findings. Pure functions, no I/O.

Each rule returns findings (a recommended change, with why, risk, restart and my.cnf
lines), and adds to ``cannot_judge`` what it could not decide without a device profile,
and to ``notes`` what it checked and found fine. A rule that has nothing to change stays
silent: already optimal, unknown device, no traffic to justify a change.

Rules:
- ``flush-method``: innodb_flush_method (MariaDB 11: innodb_doublewrite=fast and
  innodb_data_file_*). O_DIRECT_NO_FSYNC only where the data device's write cache is
  non-volatile or off (the profile's plp_verdict says o_direct_no_fsync_safe=true), on a
  version with the 8.0.14/5.7.25 fix, with doublewrite and data on one filesystem, not on
  ZFS, and only when data-file fsyncs are a visible cost. Never on a volatile cache — and
  a data-safety finding when it is set there. ``fsync`` where O_DIRECT is not supported.
- ``trx-commit`` and ``sync-binlog``: per ``--durability`` (strict: 1 and 1; relaxed:
  innodb_flush_log_at_trx_commit=2 with its loss window), role-aware.
- ``use-fdatasync``: MySQL 8.0.26+ where the device's fdatasync is cheaper than fsync.
- ``doublewrite``: OFF (or DETECT_ONLY) flagged unless the storage cannot tear pages.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..live.facts import ServerFacts
from ..live.sampling import Observed
from ..units import format_ns

SEVERITIES = ("data-safety", "durability", "performance")
DURABILITIES = ("strict", "relaxed")
# data-file fsyncs are "a visible cost" past these
MIN_OTHER_FSYNCS_PER_S = 1.0
MIN_OTHER_FSYNC_SHARE = 0.05
MIN_OTHER_FSYNC_DEVICE_FRACTION = 0.01
# a device that syncs faster than this gains little from trx_commit=2
CHEAP_SYNC_NS = 100_000
FDATASYNC_GAIN = 0.9   # fdatasync must be at most 90% of fsync to be worth switching


@dataclass
class DeviceFacts:
    """What the rules need from a device profile (or a fresh measurement)."""

    name: str
    title: str
    source: str                       # "profile" or "measure"
    klass: str | None = None
    plp: str | None = None            # yes | no | unknown | claimed
    verdict: str | None = None        # non-volatile-cache-or-flush-ignored | volatile-cache |
    #                                   write-through | unknown
    o_direct_no_fsync_safe: bool | None = None
    reasons: list[str] = field(default_factory=list)
    filesystem: str | None = None     # first word, lowercase: ext4, xfs, zfs, tmpfs, ...
    fsync_ns: float | None = None     # median sync after a 16 KB O_DIRECT write
    fdatasync_ns: float | None = None
    fsync_exact: bool = False         # False: the figure stands in for another operation
    fdatasync_exact: bool = False
    atomic_writes: bool | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["class"] = d.pop("klass")
        d["fsync_median_us"] = round(self.fsync_ns / 1e3, 2) if self.fsync_ns else None
        d["fdatasync_median_us"] = (round(self.fdatasync_ns / 1e3, 2)
                                    if self.fdatasync_ns else None)
        del d["fsync_ns"], d["fdatasync_ns"]
        return d


_KNOWN_FS = ("ext4", "ext3", "xfs", "zfs", "btrfs", "tmpfs", "f2fs", "nfs", "ext2", "bcachefs",
             "overlay")


def _fs_word(text) -> str | None:
    """The filesystem a profile's free-text 'filesystem' names ('ext4 (discard)' -> ext4),
    or None when it names none or more than one ('ext4 or xfs')."""
    if not text:
        return None
    import re

    found = {w for w in re.findall(r"[a-z0-9]+", str(text).lower()) if w in _KNOWN_FS}
    return found.pop() if len(found) == 1 else None


def device_from_profile(profile, source: str = "profile") -> DeviceFacts:
    dev = profile.device or {}
    verdict = profile.plp_verdict or {}
    out = DeviceFacts(name=profile.name, title=profile.title, source=source,
                      klass=dev.get("class"), plp=dev.get("plp"),
                      verdict=verdict.get("verdict"),
                      o_direct_no_fsync_safe=verdict.get("o_direct_no_fsync_safe"),
                      reasons=list(verdict.get("reasons") or []),
                      filesystem=_fs_word(dev.get("filesystem")),
                      atomic_writes=dev.get("atomic_writes"))
    from ..errors import ProfileError
    for op in ("fsync", "fdatasync"):
        try:
            summary, note = profile.resolve("sync", op, 16384, True)
        except ProfileError:
            continue
        setattr(out, f"{op}_ns", summary.median_ns)
        setattr(out, f"{op}_exact", "not in profile" not in note)
    return out


@dataclass
class Finding:
    id: str
    severity: str
    setting: str
    current: str
    recommended: str
    why: list[str]
    risk: str
    restart_needed: bool
    my_cnf: list[str]
    set_global: list[str] = field(default_factory=list)   # for dynamic ones; never run
    sim_changes: dict = field(default_factory=dict)        # ServerConfig fields to predict
    predicted: dict | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("sim_changes")
        return d


@dataclass
class Context:
    facts: ServerFacts
    observed: Observed | None = None
    device: DeviceFacts | None = None
    durability: str = "strict"
    datadir_fs: str | None = None          # from /proc/self/mountinfo when local
    doublewrite_same_fs: bool | None = None

    @property
    def filesystem(self) -> str | None:
        return self.datadir_fs or (self.device.filesystem if self.device else None)


@dataclass
class Evaluation:
    findings: list[Finding] = field(default_factory=list)
    cannot_judge: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def sorted_findings(self) -> list[Finding]:
        return sorted(self.findings, key=lambda f: SEVERITIES.index(f.severity))


def _dev_name(ctx: Context) -> str:
    return f"{ctx.device.title} ({ctx.device.source} {ctx.device.name})" if ctx.device else "?"


# ---- innodb_flush_method ---------------------------------------------------------------

def _version(f: ServerFacts) -> str:
    return ".".join(map(str, f.version_tuple))


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


def _mk_method(ctx: Context, method: str, severity: str, why: list[str], risk: str,
               fid: str = "flush-method") -> Finding:
    f = ctx.facts
    setting, rec, lines, sets, restart = method_change(f, method)
    return Finding(id=fid, severity=severity, setting=setting,
                   current=_current_method_text(f), recommended=rec, why=why, risk=risk,
                   restart_needed=restart, my_cnf=lines, set_global=sets,
                   sim_changes={"innodb_flush_method": method})


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
    o = ctx.observed
    if o is None or o.data_fsyncs_per_s is None or o.other_fsyncs_per_s is None:
        return False, "no data-file fsync figures were observed"
    other = o.other_fsyncs_per_s
    total = o.data_fsyncs_per_s or 0.0
    share = other / total if total else 0.0
    dev_frac = (other * ctx.device.fsync_ns / 1e9) if (ctx.device and ctx.device.fsync_ns) \
        else None
    text = (f"{other:.1f} data-file/doublewrite fsyncs/s beyond the redo syncs "
            f"({share:.0%} of {total:.1f} Innodb_data_fsyncs/s")
    text += (f"; about {dev_frac * 1e3:.1f} ms of device sync time per second)"
             if dev_frac is not None else ")")
    visible = other >= MIN_OTHER_FSYNCS_PER_S and (
        share >= MIN_OTHER_FSYNC_SHARE
        or (dev_frac is not None and dev_frac >= MIN_OTHER_FSYNC_DEVICE_FRACTION))
    return visible, text


def rule_flush_method(ctx: Context, ev: Evaluation) -> None:
    f = ctx.facts
    m = f.flush_method
    fs = ctx.filesystem
    no_direct_fs = fs in ("tmpfs", "zfs")
    fs_why = {"tmpfs": "the datadir is on tmpfs, which refuses O_DIRECT",
              "zfs": "the datadir is on ZFS, which does not honour O_DIRECT before OpenZFS "
                     "2.3 (the ARC caches the data anyway); with 2.3+ and direct=standard, "
                     "O_DIRECT is possible"}.get(fs or "", "")
    safe_method = "fsync" if no_direct_fs else "O_DIRECT"

    if m in ("littlesync", "nosync"):
        ev.findings.append(_mk_method(
            ctx, safe_method, "data-safety",
            [f"innodb_flush_method={m} is a testing value: InnoDB skips or cuts short the "
             "fsyncs of its data files"],
            f"with {m}, an OS crash or power loss can corrupt data files that InnoDB "
            "believes durable; changing to a normal method only adds the syncs back"))
        return

    if m == "O_DIRECT_NO_FSYNC":
        if not no_fsync_fix_present(f):
            ev.findings.append(_mk_method(
                ctx, "O_DIRECT", "data-safety",
                [f"{f.title} predates the O_DIRECT_NO_FSYNC fix of 5.7.25 / 8.0.14 "
                 "(Bug #27309336): files are not fsynced after they are created or "
                 "extended, so their size can be lost in a crash"],
                "on an OS crash or power loss a table grown since the last sync can come "
                "back truncated or corrupt; O_DIRECT adds one fsync per page-flush batch"))
            return
        if _volatile(ctx):
            d = ctx.device
            ev.findings.append(_mk_method(
                ctx, "O_DIRECT", "data-safety",
                [f"O_DIRECT_NO_FSYNC is set, but {_dev_name(ctx)} has a volatile write "
                 f"cache (verdict: {d.verdict or 'unsafe'})"] + d.reasons[:3]
                + ["O_DIRECT only bypasses the page cache: without fsync the written pages "
                   "may sit in the device's cache, and nothing tells the device to make "
                   "them durable before InnoDB advances its checkpoint"],
                "currently: on power loss, data pages InnoDB considers written can be lost "
                "while the redo that would rebuild them has been recycled — silent "
                "corruption. After the change: one fsync per data file per flush batch "
                "(MySQL) or per checkpoint (MariaDB), the cost shown in the prediction"))
            return
        if fs == "zfs":
            ev.findings.append(_mk_method(
                ctx, "fsync", "data-safety",
                [fs_why, "O_DIRECT_NO_FSYNC relies on direct writes being durable on "
                 "completion, which ZFS does not promise without its own sync"],
                "on power loss, pages written since the last ZFS transaction-group commit "
                "may be missing while InnoDB believes them durable"))
            return
        if ctx.device is None or _safe_for_no_fsync(ctx) is None:
            ev.cannot_judge.append(
                "whether O_DIRECT_NO_FSYNC (set now) is safe: that needs the data device's "
                "write-cache verdict (non-volatile/PLP or cache off) — give --profile with "
                "a plp_verdict, or --measure"
                + (f"; {_dev_name(ctx)} has no verdict on it" if ctx.device else ""))
        else:
            ev.notes.append(f"O_DIRECT_NO_FSYNC is set and {_dev_name(ctx)} is judged safe "
                            "for it (non-volatile write cache)")
        return

    if no_direct_fs and m in ("O_DIRECT",):
        ev.findings.append(_mk_method(
            ctx, "fsync", "performance", [fs_why],
            "none for durability: fsync mode syncs the same files; it only stops asking "
            "the filesystem for a mode it does not provide"))
        return

    if m == "fsync":
        if no_direct_fs:
            ev.notes.append(f"innodb_flush_method=fsync suits {fs}")
            return
        if fs is None:
            ev.cannot_judge.append(
                "whether O_DIRECT would be better than fsync: the datadir's filesystem is "
                "unknown (O_DIRECT avoids double buffering, but tmpfs and ZFS before 2.3 do "
                "not support it) — run on the server's host or give --profile")
            return
        ev.findings.append(_mk_method(
            ctx, "O_DIRECT", "performance",
            [f"innodb_flush_method=fsync reads and writes data files through the OS page "
             f"cache: every page is cached twice (buffer pool and page cache), and dirty "
             f"page-cache data is written back later; {fs} supports O_DIRECT"],
            "none for durability: the same files are fsynced; reads no longer benefit "
            "from the page cache, so a buffer pool sized for the page cache's memory "
            "should grow by it"))
        return

    if m != "O_DIRECT":
        ev.notes.append(f"innodb_flush_method={m}: no rule applies")
        return

    # m == O_DIRECT: would O_DIRECT_NO_FSYNC be safe and worth it?
    if fs in ("zfs", "tmpfs"):
        return
    safe = _safe_for_no_fsync(ctx)
    if safe is False:
        ev.notes.append(f"O_DIRECT_NO_FSYNC is NOT safe on {_dev_name(ctx)} (volatile write "
                        "cache): keep O_DIRECT")
        return
    if safe is None:
        ev.cannot_judge.append(
            "whether O_DIRECT_NO_FSYNC would be safe: needs the data device's write-cache "
            "verdict (--profile with a plp_verdict, or --measure)"
            + (f"; {_dev_name(ctx)} has none" if ctx.device else ""))
        return
    if not no_fsync_fix_present(f):
        ev.notes.append(f"O_DIRECT_NO_FSYNC not recommended on {f.title}: it predates the "
                        "5.7.25 / 8.0.14 fix")
        return
    if f.is_mariadb and f.version_tuple >= (11, 0, 0) and not f.doublewrite_fast_supported:
        ev.notes.append(f"{f.title} has no innodb_doublewrite=fast (11.0.6/11.1.5/11.2.4/"
                        "11.4.2+) and deprecates innodb_flush_method: upgrade before "
                        "skipping data-file fsyncs")
        return
    if f.doublewrite_dir and ctx.doublewrite_same_fs is not True:
        if ctx.doublewrite_same_fs is False:
            ev.notes.append(f"innodb_doublewrite_dir={f.doublewrite_dir} is on another "
                            "filesystem than the data: O_DIRECT_NO_FSYNC not recommended")
        else:
            ev.cannot_judge.append(f"whether innodb_doublewrite_dir={f.doublewrite_dir} is on "
                                   "the data files' filesystem (needed for "
                                   "O_DIRECT_NO_FSYNC): run on the server's host")
        return
    visible, text = _other_fsyncs_visible(ctx)
    if not visible:
        ev.notes.append(f"O_DIRECT_NO_FSYNC would be safe on {_dev_name(ctx)}, but data-file "
                        f"fsyncs are not a visible cost now ({text})")
        return
    when = ("per checkpoint" if f.is_mariadb else "per page-flush batch, one per file")
    ev.findings.append(_mk_method(
        ctx, "O_DIRECT_NO_FSYNC", "performance",
        [f"observed {text}",
         f"{_dev_name(ctx)}: write cache judged non-volatile/safe "
         f"({ctx.device.verdict}); fsync {format_ns(ctx.device.fsync_ns)}"]
        + ctx.device.reasons[:2]
        + [f"{f.title} has the create/extend fsync fix; doublewrite and data share a "
           "filesystem"],
        f"relies on the device keeping acknowledged writes across power loss (the "
        f"verdict); files are still fsynced when they grow. Removes the data-file fsyncs "
        f"({when}); redo and doublewrite syncs stay"))


# ---- innodb_flush_log_at_trx_commit and sync_binlog -------------------------------------

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
    return ("a replica: transactions lost in a crash are fetched again from its source "
            "when the replication position is crash-safe (GTID auto-positioning, "
            "relay_log_recovery=ON)")


def rule_trx_commit(ctx: Context, ev: Evaluation) -> None:
    f = ctx.facts
    tc = f.trx_commit
    t = f.flush_log_at_timeout
    strict_ok = tc == 1 or (tc == 3 and f.is_mariadb)
    sets = ["SET GLOBAL innodb_flush_log_at_trx_commit = {v};"]
    if ctx.durability == "strict":
        if strict_ok:
            return
        if f.replica_like:
            ev.notes.append(f"innodb_flush_log_at_trx_commit={tc} accepted on {_role_reason(f)}"
                            f"; a primary would need 1 under --durability strict")
            return
        what = ("a mysqld crash as well as an OS crash" if tc == 0 else
                "an OS crash or power loss (not a mysqld crash)")
        window = 1.0 if tc == 0 else t
        ev.findings.append(Finding(
            id="trx-commit", severity="durability",
            setting="innodb_flush_log_at_trx_commit", current=str(tc), recommended="1",
            why=["--durability strict: every acknowledged commit must survive a crash",
                 f"with {tc}, {what} loses the last ~{window:g} s of commits"
                 + _loss_at_rate(ctx, window)],
            risk="no data at risk; each commit (group) waits for a redo sync, so commit "
                 "latency rises by about one device sync (see the prediction)",
            restart_needed=False, my_cnf=["innodb_flush_log_at_trx_commit = 1"],
            set_global=[sets[0].format(v=1)],
            sim_changes={"innodb_flush_log_at_trx_commit": 1}))
        return
    # relaxed
    if tc == 2:
        return
    if tc == 0:
        ev.findings.append(Finding(
            id="trx-commit", severity="durability",
            setting="innodb_flush_log_at_trx_commit", current="0", recommended="2",
            why=["with 0 even a mysqld crash loses ~1 s of commits; 2 writes the redo to the "
                 "OS at each commit, so only an OS crash or power loss loses them, at about "
                 "the same cost"],
            risk=f"an OS crash or power loss loses up to ~{t:g} s (innodb_flush_log_at_"
                 f"timeout) of commits{_loss_at_rate(ctx, t)}",
            restart_needed=False, my_cnf=["innodb_flush_log_at_trx_commit = 2"],
            set_global=[sets[0].format(v=2)],
            sim_changes={"innodb_flush_log_at_trx_commit": 2}))
        return
    d = ctx.device
    if d and d.fsync_ns is not None and d.fsync_ns < CHEAP_SYNC_NS:
        ev.notes.append(f"--durability relaxed, but {_dev_name(ctx)} syncs in "
                        f"{format_ns(d.fsync_ns)}: innodb_flush_log_at_trx_commit=2 would gain "
                        "little; keeping 1")
        return
    o = ctx.observed
    why = [f"--durability relaxed: losing the last ~{t:g} s of commits in an OS crash or "
           "power loss is acceptable"]
    if o and o.redo_syncs_per_s is not None:
        why.append(f"observed {o.redo_syncs_per_s:,.1f} redo syncs/s "
                   f"({o.redo_syncs_source}) for {o.commits_per_s:,.1f} commits/s"
                   + (f", {o.commits_per_redo_sync:g} commits per sync"
                      if o.commits_per_redo_sync else ""))
    if d and d.fsync_ns:
        why.append(f"{_dev_name(ctx)}: a sync costs {format_ns(d.fsync_ns)}, paid by every "
                   "commit group")
    role = ("" if not f.replica_like else f"; acceptable on {_role_reason(f)}")
    primary = ("" if f.replica_like or not f.log_bin else
               "; on a primary with replicas, replicas may then hold transactions the "
               "primary lost: fail over or rebuild them")
    ev.findings.append(Finding(
        id="trx-commit", severity="performance",
        setting="innodb_flush_log_at_trx_commit", current=str(tc), recommended="2",
        why=why,
        risk=f"an OS crash or power loss (not a mysqld crash) loses up to ~{t:g} s "
             f"(innodb_flush_log_at_timeout) of acknowledged commits"
             f"{_loss_at_rate(ctx, t)}{role}{primary}",
        restart_needed=False, my_cnf=["innodb_flush_log_at_trx_commit = 2"],
        set_global=[sets[0].format(v=2)],
        sim_changes={"innodb_flush_log_at_trx_commit": 2}))


def rule_sync_binlog(ctx: Context, ev: Evaluation) -> None:
    f = ctx.facts
    if not f.log_bin:
        return
    sb = f.sync_binlog
    mk = dict(setting="sync_binlog", current=str(sb), restart_needed=False)
    if ctx.durability == "strict":
        if sb == 1:
            return
        if f.replica_like:
            ev.notes.append(f"sync_binlog={sb} accepted on {_role_reason(f)} (if this replica "
                            "may be promoted, use 1)")
            return
        loss = ("whatever the OS had not yet written back" if sb == 0 else
                f"up to {sb - 1} commit groups")
        ev.findings.append(Finding(
            id="sync-binlog", severity="durability", recommended="1",
            why=["--durability strict with the binary log on: the binlog must be synced at "
                 "each commit group, or after an OS crash it can lack transactions InnoDB "
                 "has (replicas and point-in-time recovery miss them)",
                 f"sync_binlog={sb}: an OS crash or power loss loses {loss} of the binlog"],
            risk="no data at risk; each commit group waits for one more sync (the binlog "
                 "file), see the prediction",
            my_cnf=["sync_binlog = 1"], set_global=["SET GLOBAL sync_binlog = 1;"],
            sim_changes={"sync_binlog": 1}, **mk))
        return
    # relaxed: only a replica or Galera node drops the binlog sync
    if sb != 1:
        return
    if not f.replica_like:
        ev.notes.append("sync_binlog=1 kept under --durability relaxed: on a primary the "
                        "binary log feeds replicas and point-in-time recovery")
        return
    ev.findings.append(Finding(
        id="sync-binlog", severity="performance", recommended="0",
        why=[f"--durability relaxed on {_role_reason(f)}",
             "sync_binlog=1 costs one binlog sync per commit group"],
        risk="an OS crash or power loss can lose the tail of this node's binlog (what the "
             "OS had not written back); replicas chained from it may need re-pointing",
        my_cnf=["sync_binlog = 0"], set_global=["SET GLOBAL sync_binlog = 0;"],
        sim_changes={"sync_binlog": 0}, **mk))


# ---- innodb_use_fdatasync -------------------------------------------------------------

def rule_use_fdatasync(ctx: Context, ev: Evaluation) -> None:
    f = ctx.facts
    if f.use_fdatasync is None:
        if f.is_mariadb:
            return  # MariaDB uses fdatasync wherever it can (MDEV-22177): no variable
        return      # MySQL before 8.0.26: no variable
    if f.use_fdatasync:
        return
    d = ctx.device
    if d is None:
        ev.cannot_judge.append("whether innodb_use_fdatasync=ON would help: needs the "
                               "device's fsync and fdatasync latencies (--profile/--measure)")
        return
    if not (d.fsync_ns and d.fdatasync_ns and d.fsync_exact and d.fdatasync_exact):
        ev.cannot_judge.append(f"whether innodb_use_fdatasync=ON would help: {_dev_name(ctx)} "
                               "does not have both fsync and fdatasync figures")
        return
    if d.fdatasync_ns > FDATASYNC_GAIN * d.fsync_ns:
        ev.notes.append(f"innodb_use_fdatasync: fdatasync ({format_ns(d.fdatasync_ns)}) is not "
                        f"cheaper than fsync ({format_ns(d.fsync_ns)}) on {_dev_name(ctx)}")
        return
    ev.findings.append(Finding(
        id="use-fdatasync", severity="performance", setting="innodb_use_fdatasync",
        current="OFF", recommended="ON",
        why=[f"{_dev_name(ctx)}: fdatasync after a 16 KB write {format_ns(d.fdatasync_ns)} "
             f"vs fsync {format_ns(d.fsync_ns)} ({d.fdatasync_ns / d.fsync_ns:.0%})",
             "every redo sync and data-file sync InnoDB makes would use it"],
        risk="none for durability: fdatasync skips only metadata not needed to read the "
             "data back (InnoDB still fsyncs where a file's size changes)",
        restart_needed=False, my_cnf=["innodb_use_fdatasync = ON"],
        set_global=["SET GLOBAL innodb_use_fdatasync = ON;"],
        sim_changes={"innodb_use_fdatasync": True}))


# ---- innodb_doublewrite ---------------------------------------------------------------

def rule_doublewrite(ctx: Context, ev: Evaluation) -> None:
    f = ctx.facts
    if f.doublewrite_protects:
        return
    fs = ctx.filesystem
    if fs == "zfs":
        ev.notes.append(f"innodb_doublewrite={f.doublewrite} suits ZFS (copy-on-write: "
                        "pages cannot tear)")
        return
    if ctx.device and ctx.device.atomic_writes:
        ev.notes.append(f"innodb_doublewrite={f.doublewrite}: {_dev_name(ctx)} writes 16 KB "
                        "pages atomically")
        return
    dynamic = f.is_mariadb and f.version_tuple >= (11, 0, 0) and f.dynamic(
        "innodb_doublewrite", False)
    ev.findings.append(Finding(
        id="doublewrite", severity="data-safety", setting="innodb_doublewrite",
        current=f.doublewrite, recommended="ON",
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
        sim_changes={"innodb_doublewrite": True}))


RULES = (rule_flush_method, rule_trx_commit, rule_sync_binlog, rule_use_fdatasync,
         rule_doublewrite)


def evaluate(ctx: Context) -> Evaluation:
    if ctx.durability not in DURABILITIES:
        raise ValueError(f"durability must be one of {DURABILITIES}")
    ev = Evaluation()
    for rule in RULES:
        rule(ctx, ev)
    if ctx.device is None:
        ev.cannot_judge.append("predicted effects: no device profile, so nothing to simulate "
                               "(give --profile NAME|FILE or --measure)")
    ev.findings = ev.sorted_findings()
    return ev
