"""Binary log two-phase commit: MYSQL_BIN_LOG::ordered_commit's stages, group by group.

MySQL: a transaction queues for the FLUSH stage; the stage leader takes the whole queue
as one group, makes its redo durable (ha_flush_logs: write+sync for trx_commit=1, write
only for 2, nothing for 0), writes the group's events to the binlog, and hands the
group to the SYNC stage, whose leader waits binlog_group_commit_sync_delay, takes every
group queued by then and fdatasyncs the binlog when the sync_binlog counter says so;
the COMMIT stage then releases them without another redo sync. Flush of the next group
overlaps the sync of this one.

MariaDB: the redo is made durable at prepare, per transaction (with redo group commit),
and one leader writes, syncs and commits each binlog group. A thread that finds nobody
writing the binlog leads at once, with whoever queued before it (``Binlog.enqueue``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import simpy
from simpy.events import Event

from .events import SimGen, wake
from .redo import log_write_up_to

if TYPE_CHECKING:
    from .server import Server


class BinlogGroup:
    __slots__ = ("lsns_max", "bytes", "size", "done")

    def __init__(self, env: simpy.Environment):
        self.lsns_max = 0
        self.bytes = 0
        self.size = 0
        self.done = env.event()


class Binlog:
    """The binary log's commit queues: the group forming at the FLUSH stage, the groups
    written and waiting for the SYNC stage, the bytes written since the last sync and
    the sync_binlog counter."""

    __slots__ = ("env", "lead_on_arrival", "forming", "led", "flush_wakeup",
                 "sync_wakeup", "sync_queue", "unsynced_bytes", "sync_counter")

    def __init__(self, env: simpy.Environment, lead_on_arrival: bool = False):
        self.env = env
        # MariaDB only: there a redo group's followers reach the binlog in a burst,
        # each woken in turn by the redo leader, and which of them leads decides the
        # binlog groups. MySQL syncs the redo inside the FLUSH stage, so its commits
        # reach the queue one by one; leading on arrival would change no group there,
        # only cost every commit a group and a stage hand-off of its own.
        self.lead_on_arrival = lead_on_arrival
        self.forming = BinlogGroup(env)
        self.led: BinlogGroup | None = None   # a group its leader closed on arrival
        self.flush_wakeup: Event | None = None
        self.sync_wakeup: Event | None = None
        self.sync_queue: list[BinlogGroup] = []
        self.unsynced_bytes = 0
        self.sync_counter = 0

    def enqueue(self, lsn: int, nbytes: int) -> Event:
        """A committing transaction joins the flush-stage queue; returns the event to
        wait on."""
        g = self.forming
        g.lsns_max = max(g.lsns_max, lsn)
        g.bytes += nbytes
        g.size += 1
        if (self.lead_on_arrival and self.flush_wakeup is not None
                and not self.flush_wakeup.triggered):
            # Nobody is writing the binlog: this thread leads and takes the queue at
            # once — before the followers of its redo group, each woken in turn by the
            # redo leader's release, reach it. (MariaDB/server sql/log.cc,
            # MYSQL_BIN_LOG::trx_group_commit_leader: the first of the queue "will wait
            # to obtain the LOCK_log mutex, then group commit all the transactions in
            # the queue (more may have entered while waiting for LOCK_log)" — with
            # LOCK_log free there is no wait.) Those followers form the next group,
            # behind this one's sync: measured on 10.11 at sync_binlog=1, 1.28 commits
            # per binlog group at 4 threads and 4.65 at 16 (sysbench oltp_insert,
            # emulated 2.8 ms syncs), not the N/2 of a redo group carried whole.
            self.led, self.forming = g, BinlogGroup(self.env)
        wake(self.flush_wakeup)
        return g.done


def binlog_flush_stage(srv: Server) -> SimGen[None]:
    """The FLUSH stage leader loop (MySQL) or the whole group commit leader (MariaDB)."""
    env, binlog = srv.env, srv.binlog
    trx_commit = srv.trx_commit
    while True:
        if binlog.forming.size == 0 and binlog.led is None:
            binlog.flush_wakeup = wakeup = env.event()
            yield wakeup
            continue
        if binlog.led is not None:
            group, binlog.led = binlog.led, None
        else:
            group, binlog.forming = binlog.forming, BinlogGroup(env)
        if srv.flavor.redo_sync_in_binlog_flush_stage and trx_commit in (1, 2):
            yield from log_write_up_to(srv, group.lsns_max, flush=trx_commit == 1)
        yield from srv.device.write(max(512, group.bytes), False)
        binlog.unsynced_bytes += group.bytes
        c = srv.counters
        c["binlog_groups"] += 1
        c["binlog_writes"] += 1
        if srv.flavor.has_binlog_group_commit_counters:
            c["Binlog_commits"] += group.size
            c["Binlog_group_commits"] += 1
        if srv.flavor.redo_sync_in_binlog_flush_stage:
            binlog.sync_queue.append(group)
            wake(binlog.sync_wakeup)
        else:
            yield from binlog_sync(srv)
            wake(group.done)


def _sync_due(srv: Server) -> bool:
    n = srv.config.sync_binlog
    return n > 0 and srv.binlog.sync_counter + 1 >= n


def binlog_sync(srv: Server) -> SimGen[None]:
    """fdatasync the binlog when sync_binlog's counter is due (my_sync uses fdatasync)."""
    binlog = srv.binlog
    if _sync_due(srv):
        binlog.sync_counter = 0
        size = max(512, binlog.unsynced_bytes)
        binlog.unsynced_bytes = 0
        yield from srv.commit_sync("fdatasync", size, False)
        srv.count("binlog_syncs")
    else:
        binlog.sync_counter += 1


def binlog_sync_stage(srv: Server) -> SimGen[None]:
    """MySQL's SYNC stage leader, then the COMMIT stage for every group it synced."""
    env, binlog = srv.env, srv.binlog
    delay_s = srv.config.binlog_group_commit_sync_delay * 1e-6
    while True:
        if not binlog.sync_queue:
            binlog.sync_wakeup = wakeup = env.event()
            yield wakeup
            continue
        if delay_s > 0 and _sync_due(srv):
            yield env.timeout(delay_s)  # lets later flush groups join this sync
        groups, binlog.sync_queue = binlog.sync_queue, []
        yield from binlog_sync(srv)
        for g in groups:
            wake(g.done)
