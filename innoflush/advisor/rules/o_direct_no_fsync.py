"""When O_DIRECT_NO_FSYNC (MariaDB 11: innodb_doublewrite=fast) is safe and worth it: the
version's create/extend fsync fix, the data device's write-cache verdict, the data-file
syncs it would remove and the device time they take, what it stops syncing per flavor,
and the drop of its finding when the predicted gain is too small."""

from __future__ import annotations

from ...live.facts import ServerFacts
from ...units import format_ns
from .model import Context

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


def no_fsync_fix_present(f: ServerFacts) -> bool:
    """O_DIRECT_NO_FSYNC fsyncs after create/extend (Bug #27309336) from 5.7.25 / 8.0.14."""
    if f.is_mariadb:
        return True  # MariaDB's implementation; the model covers 10.6+
    v = f.version_tuple
    return v >= (8, 0, 14) or (5, 7, 25) <= v < (8, 0, 0)


def volatile_cache(ctx: Context) -> bool:
    """The device profile judges the data device's write cache volatile."""
    d = ctx.device
    return bool(d and (d.verdict == "volatile-cache" or d.o_direct_no_fsync_safe is False))


def safe_for_no_fsync(ctx: Context) -> bool | None:
    """True where the profile says O_DIRECT_NO_FSYNC is safe, False where the cache is
    volatile, None where there is no verdict."""
    d = ctx.device
    if d is None:
        return None
    if volatile_cache(ctx):
        return False
    return True if d.o_direct_no_fsync_safe is True else None


def other_fsyncs_visible(ctx: Context) -> tuple[bool, str]:
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
