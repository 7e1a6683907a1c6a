"""Binary log two-phase commit: MYSQL_BIN_LOG::ordered_commit's stages, group by group,
each run by the connection that leads it (as in the servers: no thread of its own).

MySQL: a transaction queues for the FLUSH stage; the first to queue leads it, waits for
the stage to be free, then takes the whole queue as one group, makes its redo durable
(ha_flush_logs: write+sync for trx_commit=1, write only for 2, nothing for 0), writes
the group's events to the binlog and goes on to the SYNC stage with it; the next FLUSH
leader runs meanwhile. At the SYNC stage the first leader to arrive waits for the stage,
waits binlog_group_commit_sync_delay, takes every group queued by then and fdatasyncs
the binlog when the sync_binlog counter says so; the other groups' leaders follow it.
The COMMIT stage then releases them without another redo sync
(Stage_manager::enroll_for, sql/rpl_commit_stage_manager.cc).

MariaDB: the redo is made durable at prepare, per transaction (with redo group commit),
and one leader writes, syncs and commits each binlog group
(MYSQL_BIN_LOG::trx_group_commit_leader, sql/log.cc).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import simpy
from simpy.events import PENDING, Event

from .events import SimGen, wake
from .redo import log_write_up_to

if TYPE_CHECKING:
    from .server import Server


class BinlogGroup:
    """Transactions queued for the FLUSH stage together; `done` is what its followers
    sleep on (made by the first of them: a group of one has none)."""

    __slots__ = ("lsns_max", "bytes", "size", "done")

    def __init__(self) -> None:
        self.lsns_max = 0
        self.bytes = 0
        self.size = 0
        self.done: Event | None = None

    def follow(self, env: simpy.Environment) -> Event:
        """The event a follower (of the group or of the SYNC stage) sleeps on."""
        if self.done is None:
            self.done = env.event()
        return self.done


class Binlog:
    """The binary log's commit queues: the group forming at the FLUSH stage, the groups
    written and waiting for the SYNC stage, who holds or waits for each stage, the bytes
    written since the last sync and the sync_binlog counter."""

    __slots__ = ("redo_in_flush_stage", "group_counters", "forming", "flush_busy",
                 "flush_wakeup", "sync_busy", "sync_leader", "sync_wakeup", "sync_queue",
                 "unsynced_bytes", "sync_counter")

    def __init__(self, redo_in_flush_stage: bool, group_counters: bool):
        # MySQL: the FLUSH stage makes the group's redo durable and a SYNC stage follows;
        # MariaDB: the redo is durable at prepare and one leader does it all
        self.redo_in_flush_stage = redo_in_flush_stage
        self.group_counters = group_counters   # Binlog_commits, Binlog_group_commits
        self.forming = BinlogGroup()
        self.flush_busy = False     # a leader holds the FLUSH stage (LOCK_log)
        self.flush_wakeup: Event | None = None   # the next FLUSH leader, waiting
        self.sync_busy = False      # a leader holds the SYNC stage (LOCK_sync)
        self.sync_leader = False    # a leader will take the SYNC queue (waiting or delaying)
        self.sync_wakeup: Event | None = None    # the next SYNC leader, waiting
        self.sync_queue: list[BinlogGroup] = []
        self.unsynced_bytes = 0
        self.sync_counter = 0


def _release(group: BinlogGroup) -> None:
    """The COMMIT stage: the group's followers return (its leader is running already)."""
    if group.done is not None:
        wake(group.done)


def ordered_commit(srv: Server, lsn: int, nbytes: int) -> SimGen[None]:
    """A committing transaction's binlog commit, from the FLUSH queue to the COMMIT
    stage: as a follower it sleeps until its group is released; as the leader of its
    group it runs the stages itself."""
    binlog = srv.binlog
    group = binlog.forming
    if lsn > group.lsns_max:
        group.lsns_max = lsn
    group.bytes += nbytes
    group.size += 1
    if group.size > 1:
        yield group.follow(srv.env)
        return
    mysql = binlog.redo_in_flush_stage
    env = srv.env
    if mysql and not binlog.flush_busy and env.others_due_now():
        # MySQL's leader takes the queue once it holds LOCK_log: whoever reaches the
        # queue in the same instant is in its group (two connections whose statements
        # end together commit together). MariaDB's leader takes it at once (below).
        binlog.flush_wakeup = wakeup = env.event()
        wake(wakeup)
        yield wakeup
    while binlog.flush_busy:
        # Somebody holds LOCK_log: this leader waits, and takes whoever queued meanwhile.
        # (MariaDB: one that finds it free leads at once — before the followers of its
        # redo group, each woken in turn by the redo leader's release, reach the queue;
        # they form the next group, behind this one's sync, so binlog groups stay small:
        # not the N/2 of a redo group carried whole. docs/model.md, 'Binlog', has the
        # groups a 10.11 server made.)
        binlog.flush_wakeup = wakeup = srv.env.event()
        yield wakeup
    binlog.flush_busy = True
    binlog.forming = BinlogGroup()
    if mysql and srv.trx_commit in (1, 2):
        yield from log_write_up_to(srv, group.lsns_max, flush=srv.trx_commit == 1)
    yield from srv.device.write(group.bytes if group.bytes > 512 else 512, False)
    binlog.unsynced_bytes += group.bytes
    c = srv.counters
    c["binlog_groups"] += 1
    c["binlog_writes"] += 1
    if binlog.group_counters:
        c["Binlog_commits"] += group.size
        c["Binlog_group_commits"] += 1
    # the next FLUSH leader, if one waits (most often none: the event in the field is
    # one processed already; events.wake's test, inline)
    if mysql:
        binlog.flush_busy = False
        w = binlog.flush_wakeup
        if w is not None and w._value is PENDING:
            wake(w)
        yield from binlog_sync_stage(srv, group)
    else:
        yield from binlog_sync(srv)
        binlog.flush_busy = False
        w = binlog.flush_wakeup
        if w is not None and w._value is PENDING:
            wake(w)
        _release(group)


def _sync_due(srv: Server) -> bool:
    n = srv.config.sync_binlog
    return n > 0 and srv.binlog.sync_counter + 1 >= n


def binlog_sync(srv: Server) -> SimGen[None]:
    """fdatasync the binlog when sync_binlog's counter is due (my_sync uses fdatasync)."""
    binlog = srv.binlog
    n = srv.config.sync_binlog   # _sync_due, inlined
    if n > 0 and binlog.sync_counter + 1 >= n:
        binlog.sync_counter = 0
        size = binlog.unsynced_bytes if binlog.unsynced_bytes > 512 else 512
        binlog.unsynced_bytes = 0
        yield from srv.commit_sync("fdatasync", size, False)
        srv.counters["binlog_syncs"] += 1
    else:
        binlog.sync_counter += 1


def binlog_sync_stage(srv: Server, group: BinlogGroup) -> SimGen[None]:
    """MySQL's SYNC stage, then the COMMIT stage, for a FLUSH leader and its group: the
    group waits for the leader that takes the SYNC queue next; if none is on its way,
    this one is it."""
    binlog = srv.binlog
    binlog.sync_queue.append(group)
    if binlog.sync_leader:
        yield group.follow(srv.env)
        return
    binlog.sync_leader = True
    while binlog.sync_busy:
        binlog.sync_wakeup = wakeup = srv.env.event()
        yield wakeup
    binlog.sync_busy = True
    delay_s = srv.config.binlog_group_commit_sync_delay * 1e-6
    if delay_s > 0 and _sync_due(srv):
        yield srv.env.timeout(delay_s)  # lets later flush groups join this sync
    groups, binlog.sync_queue = binlog.sync_queue, []
    binlog.sync_leader = False
    yield from binlog_sync(srv)
    binlog.sync_busy = False
    w = binlog.sync_wakeup
    if w is not None and w._value is PENDING:   # (as at the FLUSH stage's end)
        wake(w)
    for g in groups:
        _release(g)
