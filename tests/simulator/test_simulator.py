"""Behaviour of the InnoDB model: what must hold whatever the constants."""

from __future__ import annotations

from dataclasses import replace

import pytest

from innoflush.simulator import ServerConfig, Workload, replicate, simulate
from innoflush.simulator.config import with_
from innoflush.simulator.semaphore import Semaphore
from tests.helpers.simprofiles import consumer_ssd, hdd_total_only, plp_ssd, scaled

CONSUMER = consumer_ssd()
PLP = plp_ssd()


def run(cfg=None, wl=None, profile=CONSUMER, duration=4.0, seed=1):
    return simulate(cfg or ServerConfig(), wl or Workload(), profile, duration_s=duration,
                    seed=seed)


def data_file_fsyncs_per_write(r) -> float:
    """Data-file (not redo) syncs per page write: the quantity the flush method changes."""
    i = r.internal
    syncs = i.get("data_file_syncs", 0) + i.get("dblwr_syncs", 0) + i.get("extension_syncs", 0)
    return syncs / max(1, i.get("Innodb_pages_written", 0))


@pytest.mark.parametrize("flavor", ["mysql-8.0", "mysql-8.4", "mysql-5.7", "mariadb-10.11"])
def test_no_fsync_has_fewer_data_fsyncs_per_write(flavor):
    wl = Workload(connections=8, pages_dirtied_per_trx=2.0)
    # a buffer pool small enough for the dirty pages to pass innodb_max_dirty_pages_pct_lwm
    # in the run: MariaDB's cleaner flushes nothing before
    base = ServerConfig(flavor=flavor, innodb_buffer_pool_size=32 * 1024 * 1024)
    od = run(with_(base, innodb_flush_method="O_DIRECT"), wl)
    nf = run(with_(base, innodb_flush_method="O_DIRECT_NO_FSYNC"), wl)
    assert od.internal["Innodb_pages_written"] > 0 and nf.internal["Innodb_pages_written"] > 0
    assert data_file_fsyncs_per_write(nf) < data_file_fsyncs_per_write(od)
    # and the counter ratio a DBA reads moves the same way
    assert nf.data_fsyncs_per_data_write < od.data_fsyncs_per_data_write


@pytest.mark.slow
def test_no_fsync_still_syncs_every_file_extension():
    wl = Workload(connections=4, growth_bytes_per_trx=20_000, extend_bytes=1024 * 1024)
    r = run(ServerConfig(innodb_flush_method="O_DIRECT_NO_FSYNC"), wl, profile=PLP)
    ext = r.internal.get("file_extensions", 0)
    assert ext > 5
    assert r.internal.get("extension_syncs", 0) == ext
    assert r.internal.get("data_file_syncs", 0) == 0
    # every extension sync is an Innodb_data_fsyncs the server would count
    assert r.status["Innodb_data_fsyncs"] >= ext + r.status["Innodb_os_log_fsyncs"]


@pytest.mark.slow
def test_mysql_80_fsyncs_every_written_file_per_batch_under_o_direct():
    wl = Workload(connections=4, pages_dirtied_per_trx=2.0, growth_bytes_per_trx=0)
    r = run(ServerConfig(innodb_flush_method="O_DIRECT"), wl, profile=PLP)
    assert r.internal["data_file_syncs"] >= r.internal["Innodb_dblwr_writes"]
    assert r.internal.get("dblwr_syncs", 0) == 0  # no doublewrite fsync under O_DIRECT (8.0)
    r57 = run(ServerConfig(flavor="mysql-5.7", innodb_flush_method="O_DIRECT"), wl, profile=PLP)
    assert r57.internal["dblwr_syncs"] == r57.internal["Innodb_dblwr_writes"]  # 5.7: it does


def test_group_commit_grows_with_connections_when_sync_dominates():
    cfg = ServerConfig(log_bin=False)
    sizes = []
    for n in (1, 4, 16, 64):
        r = run(cfg, Workload(connections=n, cpu_us_per_trx=20, client_us_per_trx=20))
        sizes.append(r.group_commit["commits_per_redo_sync"])
    assert sizes[0] == pytest.approx(1.0, abs=0.05)
    assert all(b > a for a, b in zip(sizes, sizes[1:], strict=False)), sizes


@pytest.mark.slow
@pytest.mark.parametrize("profile", [CONSUMER, PLP], ids=lambda p: p.name)
@pytest.mark.parametrize("log_bin", [True, False])
@pytest.mark.parametrize("conns", [1, 8])
def test_trx_commit_2_never_slower_than_1(profile, log_bin, conns):
    wl = Workload(connections=conns)
    tps = {}
    for tc in (1, 2):
        tps[tc] = run(ServerConfig(innodb_flush_log_at_trx_commit=tc, log_bin=log_bin), wl,
                      profile=profile).tps
    assert tps[2] >= tps[1] * 0.98


@pytest.mark.parametrize("method", ["O_DIRECT", "O_DIRECT_NO_FSYNC", "fsync"])
def test_tps_never_falls_when_the_device_gets_faster(method):
    wl = Workload(connections=4)
    cfg = ServerConfig(innodb_flush_method=method)
    prev = None
    for factor in (4.0, 1.0, 0.25):
        tps = run(cfg, wl, profile=scaled(CONSUMER, factor)).tps
        if prev is not None:
            assert tps >= prev * 0.98
        prev = tps


def test_fixed_seed_is_reproducible_and_seeds_differ():
    a = run(seed=7).to_dict()
    b = run(seed=7).to_dict()
    c = run(seed=8).to_dict()
    assert a == b
    assert a["commit_latency_ms"] != c["commit_latency_ms"]


def test_replications_give_a_confidence_interval():
    runs, summary = replicate(ServerConfig(), Workload(connections=2), CONSUMER,
                              replications=3, seed=1, duration_s=2)
    assert len({r.seed for r in runs}) == 3
    assert summary["tps"]["n"] == 3 and summary["tps"]["ci95"] > 0


def test_mysql_counter_semantics():
    r = run(ServerConfig(flavor="mysql-8.0", log_bin=False), Workload(connections=1),
            profile=PLP)
    s = r.status
    assert "Innodb_os_log_fsyncs" in s and "Binlog_group_commits" not in s
    # redo writes and syncs are inside the data counters
    assert s["Innodb_data_writes"] >= s["Innodb_log_writes"] + s["Innodb_pages_written"]
    assert s["Innodb_data_fsyncs"] >= s["Innodb_os_log_fsyncs"]
    assert s["Innodb_os_log_fsyncs"] >= r.commits * 0.95  # 1 connection: a sync per commit


def test_mariadb_counter_semantics():
    r = run(ServerConfig(flavor="mariadb-10.11", log_bin=False), Workload(connections=1),
            profile=PLP)
    s = r.status
    assert "Innodb_os_log_fsyncs" not in s  # removed in MariaDB 10.8
    # Innodb_data_writes excludes redo: far fewer than the log writes here
    assert s["Innodb_data_writes"] < s["Innodb_log_writes"]
    # measured on 10.11, trx_commit=1, 1 connection: data_fsyncs ~ log_writes ~ commits
    assert s["Innodb_data_fsyncs"] == pytest.approx(r.commits, rel=0.1)
    assert s["Innodb_log_writes"] == pytest.approx(r.commits, rel=0.1)


def test_mariadb_binlog_counters_and_data_files_synced_per_doublewrite_batch():
    r = run(ServerConfig(flavor="mariadb-10.11", innodb_flush_method="O_DIRECT",
                         innodb_buffer_pool_size=32 * 1024 * 1024),
            Workload(connections=8, pages_dirtied_per_trx=2.0))
    s = r.status
    assert s["Binlog_commits"] == pytest.approx(r.commits, rel=0.05)
    assert 0 < s["Binlog_group_commits"] <= s["Binlog_commits"]
    # buf_dblwr_t::flush_buffered_writes: the doublewrite area is synced, then each data
    # file the batch wrote (8 tablespaces at most; +1 batch in flight when the run ends)
    batches = r.internal["dblwr_syncs"]
    assert batches > 0
    assert 0 < r.internal["data_file_syncs"] <= (batches + 1) * 8
    assert r.internal["data_file_syncs"] > r.internal["checkpoints"]


def test_mariadb_page_cleaner_sleeps_below_the_async_point():
    """innodb_max_dirty_pages_pct_lwm=0: no page is written while the checkpoint age is
    below the async flush point; past it the cleaner flushes, re-initialised pages
    bypassing the doublewrite buffer."""
    base = ServerConfig(flavor="mariadb-10.11", log_bin=False,
                        innodb_flush_log_at_trx_commit=2, innodb_max_dirty_pages_pct_lwm=0.0,
                        innodb_redo_log_capacity=96 * 1024 * 1024)
    quiet = run(base, Workload(connections=2, redo_bytes_per_trx=256,
                               pages_dirtied_per_trx=0.5))
    assert quiet.status.get("Innodb_pages_written", 0) == 0
    busy = run(base, Workload(connections=2, redo_bytes_per_trx=65536,
                              pages_dirtied_per_trx=0.5, dblwr_page_share=0.25))
    pages = busy.status["Innodb_pages_written"]
    assert pages > 0
    assert busy.status["Innodb_dblwr_pages_written"] == pytest.approx(pages * 0.25, abs=2)


def test_mariadb_new_pages_alone_wait_for_the_checkpoints_file_syncs():
    """Pages written straight to their files (new pages: dblwr_page_share 0) are synced
    once a pass, by its checkpoint (log_checkpoint: fil_flush_file_spaces), however many
    128-page segments it took; doublewritten ones at the end of each doublewrite batch
    (buf_dblwr_t::write_completed)."""
    base = ServerConfig(flavor="mariadb-10.11", log_bin=False,
                        innodb_flush_log_at_trx_commit=2, innodb_max_dirty_pages_pct_lwm=0.0,
                        innodb_redo_log_capacity=96 * 1024 * 1024)
    wl = Workload(connections=2, redo_bytes_per_trx=65536, pages_dirtied_per_trx=2.0,
                  tablespaces=4)
    new = run(base, with_(wl, dblwr_page_share=0.0)).internal
    assert new.get("Innodb_dblwr_pages_written", 0) == 0
    assert new["Innodb_pages_written"] > 2 * 128 * new["flush_batches"] > 0
    assert 0 < new["data_file_syncs"] <= 4 * (new["checkpoints"] + 1)
    old = run(base, with_(wl, dblwr_page_share=1.0)).internal
    assert old["Innodb_dblwr_writes"] > 2 * old["checkpoints"] > 0
    assert old["data_file_syncs"] > 4 * (old["checkpoints"] + 1)


def test_flush_list_takes_rewrites_first_and_fills_the_doublewrite_slots():
    from innoflush.simulator.buffer_pool import FlushList

    fl = FlushList()
    fl.add(10, 6, hot=2)            # first entries: 2 of 6 hot
    fl.add(20, 3, hot=3, rewrites=3)  # hot pages back after their write
    fl.add(20, 2, hot=1)            # same LSN: one chunk
    assert fl.pages == 11 and fl.chunks[1][1:] == [5, 4, 3]
    # first writes bypass the doublewrite (share 0): only the rewrites take slots; the
    # third rewrite waits for the next segment
    assert fl.take(100, slots=2, first_share=0.0) == (10, 5, 2)
    assert fl.pages == 1 and list(fl.chunks) == [[20, 1, 1, 1]]
    fl.add(30, 4, hot=1)
    # every page takes a slot (MySQL): at most `slots` pages, rewrites and hot ones first
    assert fl.take(100, slots=2, first_share=1.0) == (2, 2, 1)
    assert fl.take(2) == (2, 0, 0) and fl.pages == 1
    assert fl.take(100) == (1, 0, 0) and fl.pages == 0 and not fl.chunks


def test_hot_pages_come_back_after_their_write_and_are_doublewritten():
    """A page the workload goes on changing re-enters the flush list after each write:
    more page writes than pages dirtied for the first time, and (MariaDB) its rewrites
    go through the doublewrite buffer while first writes of new pages bypass it."""
    cold = run(MARIADB_LWM0, with_(REDO_HEAVY, dblwr_page_share=0.0), duration=3.0)
    hot = run(MARIADB_LWM0, with_(REDO_HEAVY, dblwr_page_share=0.0, hot_page_share=0.8),
              duration=3.0)
    assert cold.status["Innodb_pages_written"] > 0
    assert cold.status.get("Innodb_dblwr_pages_written", 0) == 0
    assert hot.status["Innodb_dblwr_pages_written"] > 0
    assert hot.status["Innodb_pages_written"] > 1.2 * cold.status["Innodb_pages_written"]


def test_work_cv_spreads_the_transactions_around_the_same_mean():
    cfg = ServerConfig(flavor="mariadb-10.11", log_bin=False,
                       innodb_flush_log_at_trx_commit=0)
    wl = Workload(connections=1, cpu_us_per_trx=150, client_us_per_trx=100)
    flat = run(cfg, wl, PLP, duration=2.0)
    spread = run(cfg, with_(wl, work_cv=0.5), PLP, duration=2.0)
    assert flat.trx_latency_ms["p95"] == flat.trx_latency_ms["p50"]
    assert spread.trx_latency_ms["p95"] > 1.5 * spread.trx_latency_ms["p50"]
    assert spread.trx_latency_ms["mean"] == pytest.approx(flat.trx_latency_ms["mean"],
                                                          rel=0.05)
    with pytest.raises(Exception, match="work_cv"):
        with_(wl, work_cv=-0.1).validate()


MARIADB_LWM0 = ServerConfig(flavor="mariadb-10.11", log_bin=False, innodb_flush_log_at_trx_commit=2,
                            innodb_max_dirty_pages_pct_lwm=0.0,
                            innodb_redo_log_capacity=16 * 1024 * 1024, cpu_cores=4)
# heavy redo per commit: the 16 MB log passes its async point within the run
REDO_HEAVY = Workload(connections=4, cpu_us_per_trx=50, client_us_per_trx=20,
                      redo_bytes_per_trx=8192, pages_dirtied_per_trx=0.5,
                      dblwr_page_share=0.2)


def mariadb_server(cfg=MARIADB_LWM0, wl=REDO_HEAVY):
    from innoflush.simulator.server import Server

    srv = Server(cfg, wl, PLP, seed=1)
    srv.start()
    return srv


@pytest.mark.slow
def test_mariadb_flushes_only_back_to_the_async_point():
    """mtr_t::commit asks for the pages older than lsn - max_modified_age_async: past the
    async point the checkpoint age settles just above it, not drained to the adaptive
    flushing's low-water mark as a flush of innodb_io_capacity_max pages would."""
    srv = mariadb_server()
    ages = []

    def watch():
        while True:
            yield srv.env.timeout(0.25)
            ages.append(srv.redo.checkpoint_age())

    srv.env.process(watch())
    srv.env.run(until=12.0)
    assert srv.counters["Innodb_pages_written"] > 0
    late = ages[len(ages) // 2:]
    assert min(late) > 0.9 * srv.redo.async_flush_age
    assert max(late) <= srv.redo.sync_flush_age + srv.workload.redo_bytes_per_trx * 4


@pytest.mark.slow
def test_mariadb_cleaner_stays_asleep_below_the_async_point_then_works_each_second():
    srv = mariadb_server(wl=with_(REDO_HEAVY, redo_bytes_per_trx=512, cpu_us_per_trx=200))
    srv.env.run(until=0.5)
    assert srv.redo.checkpoint_age() < srv.redo.async_flush_age
    assert srv.flush_ahead.cleaner_idle and srv.counters["Innodb_pages_written"] == 0
    srv.env.run(until=12.0)
    passes = (srv.counters["async_flush_batches"] + srv.counters["adaptive_flush_batches"]
              + srv.counters["sync_flush_batches"])
    assert passes > 0
    # one checkpoint per pass at most (a pass that moved nothing makes none)
    assert 0 < srv.counters["checkpoints"] <= passes + 1


def test_mariadb_adaptive_recommendation_starts_from_zero_averages():
    """page_cleaner_flush_pages_recommendation keeps its averages in statics refreshed
    every innodb_flushing_avg_loops calls: the first call asks for innodb_io_capacity,
    the next ones (io_capacity + 0 + 1) / 3 until the averages are first computed."""
    from innoflush.simulator.mariadb_page_cleaner import AdaptiveFlushing

    srv = mariadb_server(wl=with_(REDO_HEAVY, pages_dirtied_per_trx=2.0))
    srv.env.run(until=1.0)
    dirty = srv.buf_pool.flush_list.pages
    assert dirty > srv.config.innodb_io_capacity
    srv.redo.lsn += 8 * 1024 * 1024  # an oldest page well past the adaptive low-water mark
    af = AdaptiveFlushing()
    oldest = srv.buf_pool.flush_list.oldest_lsn()
    pct = 100.0 * dirty / srv.buf_pool.size_pages
    assert af.recommendation(srv, 0, oldest, 0.0, dirty, pct) == srv.config.innodb_io_capacity
    io = srv.config.innodb_io_capacity
    for _ in range(5):
        assert af.recommendation(srv, 200, oldest, 0.0, dirty, pct) == (io + 0 + 1) // 3
    assert af.avg_page_rate == 0


@pytest.mark.slow
def test_trx_commit_2_page_writes_and_checkpoints_sync_the_redo():
    """The write-ahead rule: a page batch waits for its redo to be durable; MariaDB's
    checkpoint makes the redo durable to its end first. With trx_commit=2 both add redo
    syncs to the master thread's one a second."""
    srv = mariadb_server()
    srv.env.run(until=12.0)
    c = srv.counters
    assert c["Innodb_pages_written"] > 0
    assert c["page_write_log_flushes"] > 0
    assert c["redo_syncs"] > 12 + c["checkpoints"]


def test_mysql_page_writes_wait_for_the_log_flusher():
    """MySQL 8.0: a page batch at trx_commit=2 asks the log_flusher for a sync at once,
    not at its next tick (here ten seconds away: the batches would wait the whole run)."""
    cfg = ServerConfig(flavor="mysql-8.0", log_bin=False, innodb_flush_log_at_trx_commit=2,
                       innodb_flush_log_at_timeout=10.0,
                       innodb_buffer_pool_size=32 * 1024 * 1024)
    r = run(cfg, Workload(connections=8, pages_dirtied_per_trx=2.0), profile=PLP)
    assert r.internal["page_write_log_flushes"] > 0
    assert r.internal["redo_syncs"] >= r.internal["page_write_log_flushes"] > 0
    assert r.status["Innodb_pages_written"] > 0


def test_wake_succeeds_a_pending_wakeup_once_and_ignores_none():
    import simpy

    from innoflush.simulator.events import wake

    env = simpy.Environment()
    wake(None)   # the thread has not gone to sleep yet: nothing to do
    ev = env.event()
    wake(ev)
    assert ev.triggered
    wake(ev)     # woken twice in one instant: no error, one wake-up
    env.run()
    assert ev.processed


def test_a_segment_in_flight_holds_back_the_oldest_modification():
    """Pages taken for a doublewrite segment leave the flush list but hold back the
    checkpoint until the segment is written; its hot pages come back at the next
    commit."""
    import numpy as np

    from innoflush.simulator.buffer_pool import BufferPool

    wl = Workload(pages_dirtied_per_trx=1.0, hot_page_share=1.0)
    bp = BufferPool(ServerConfig(), wl, np.random.default_rng(1))
    bp.note_modification(100)
    bp.note_modification(200)
    oldest, k, hot, rewrites = bp.take_segment(1, slots=4, first_share=1.0)
    assert (oldest, k, hot, rewrites) == (100, 1, 1, 0)
    assert bp.flush_list.oldest_lsn() == 200 and bp.oldest_modification() == 100
    bp.segment_written(oldest, hot)
    assert bp.oldest_modification() == 200
    bp.note_modification(300)   # one new page, and the hot one dirtied again
    assert bp.flush_list.pages == 3 and list(bp.flush_list.chunks)[-1] == [300, 2, 2, 1]


def test_a_device_without_a_generator_gives_means_but_refuses_to_sample():
    import simpy

    from innoflush.simulator.device import Device

    dev = Device(simpy.Environment(), PLP, rng=None)
    assert dev.mean_s("sync", "fsync", 16384, True) > 0
    with pytest.raises(RuntimeError, match="means only"):
        dev.sampler("sync", "fsync", 16384, True)()


def test_semaphore_withdraw():
    import simpy

    env = simpy.Environment()
    sem = Semaphore(env, 1)
    assert sem.acquire() is None
    ev = sem.acquire()
    assert ev is not None and sem.withdraw(ev)
    sem.release()
    assert sem.free == 1 and not ev.triggered   # the withdrawn request got nothing
    assert sem.acquire() is None and sem.free == 0
    ev3 = sem.acquire()
    sem.release()  # granted at once
    assert ev3.triggered and not sem.withdraw(ev3)


CPU_HEAVY = Workload(connections=6, cpu_us_per_trx=200, client_us_per_trx=100,
                     client_cpu_us_per_trx=80, statements_per_trx=2, sync_cpu_us=20,
                     pages_dirtied_per_trx=0.1)


@pytest.mark.slow
def test_sleeping_commits_run_on_the_completion_cores():
    """A single-queue disk: every commit is woken by its completion interrupt on one
    CPU, and the connection threads stay there; the clients get the other cores."""
    base = ServerConfig(log_bin=False, innodb_flush_log_at_trx_commit=1, cpu_cores=2,
                        flavor="mariadb-10.11")
    spread = run(base, CPU_HEAVY, profile=PLP)
    one = run(with_(base, io_completion_cores=1), CPU_HEAVY, profile=PLP)
    assert one.tps < 0.9 * spread.tps
    # when commits do not sleep the completion cores change nothing
    nosleep = with_(base, innodb_flush_log_at_trx_commit=2)
    assert run(with_(nosleep, io_completion_cores=1), CPU_HEAVY, profile=PLP).tps == \
        pytest.approx(run(nosleep, CPU_HEAVY, profile=PLP).tps, rel=1e-9)


@pytest.mark.slow
def test_only_the_committing_statement_is_pulled_to_the_completion_cores():
    """The storage's interrupt wakes the thread that sleeps on the commit; the other
    statements of a transaction are woken by the client's socket and run on any free
    core. One-statement transactions stay confined (every statement commits); ten-
    statement ones use both cores nearly as if there were no completion core at all."""
    base = ServerConfig(log_bin=False, innodb_flush_log_at_trx_commit=1, cpu_cores=2,
                        flavor="mariadb-10.11", io_completion_cores=1)
    spread = with_(base, io_completion_cores=None)
    for n, lo, hi in ((1, 0.0, 0.8), (10, 0.9, 1.01)):
        wl = with_(CPU_HEAVY, connections=4, statements_per_trx=n, client_cpu_us_per_trx=0,
                   client_us_per_trx=50)
        ratio = run(base, wl, profile=PLP).tps / run(spread, wl, profile=PLP).tps
        assert lo < ratio < hi, (n, ratio)


def test_threads_queued_on_a_busy_completion_core_are_pulled_by_a_free_one():
    """After sched_migration_cost in the queue a free core takes the thread: the server
    uses more than its one completion core when that one is saturated."""
    base = ServerConfig(log_bin=False, innodb_flush_log_at_trx_commit=1, cpu_cores=2,
                        flavor="mariadb-10.11", io_completion_cores=1)
    wl = with_(CPU_HEAVY, connections=16, client_cpu_us_per_trx=0, client_us_per_trx=20)
    r = run(base, wl, profile=PLP)
    server_cores = r.tps * (wl.cpu_us_per_trx + wl.sync_cpu_us) / 1e6
    assert server_cores > 1.1


def test_a_sleeping_commits_cost_is_per_commit_the_calls_per_sync():
    """sleep_cpu_us is paid by every commit that sleeps, sync_cpu_us once per group."""
    cfg = ServerConfig(log_bin=False, innodb_flush_log_at_trx_commit=1, cpu_cores=8,
                       flavor="mariadb-10.11")
    wl = Workload(connections=8, cpu_us_per_trx=50, client_us_per_trx=50,
                  pages_dirtied_per_trx=0.0)

    def cpu_per_commit(w):
        r = run(cfg, w, profile=CONSUMER)
        return r.cpu_util * cfg.cpu_cores * r.duration_s / r.commits * 1e6, r

    per_sync, r1 = cpu_per_commit(with_(wl, sync_cpu_us=400))
    per_commit, r2 = cpu_per_commit(with_(wl, sleep_cpu_us=200, sleep_side_cpu_us=200))
    assert r1.tps / r1.syncs_per_s["redo_syncs"] > 3      # group commit on a slow flush
    assert per_sync == pytest.approx(50 + 400 * r1.syncs_per_s["redo_syncs"] / r1.tps,
                                     rel=0.1)
    assert per_commit == pytest.approx(50 + 400, rel=0.1)


def test_a_server_started_with_redo_and_dirty_pages_reaches_the_async_point_sooner():
    from innoflush.simulator import ServerStart

    wl = with_(REDO_HEAVY, redo_bytes_per_trx=512, cpu_us_per_trx=200)
    empty = simulate(MARIADB_LWM0, wl, PLP, duration_s=1.0, warmup_s=0.0)
    start = ServerStart(checkpoint_age=10 * 1024 * 1024, dirty_pages=300)
    loaded = simulate(MARIADB_LWM0, wl, PLP, duration_s=1.0, warmup_s=0.0, start=start)
    assert empty.status.get("Innodb_pages_written", 0) == 0
    assert loaded.status["Innodb_pages_written"] > 0
    with pytest.raises(Exception, match="negative"):
        simulate(MARIADB_LWM0, wl, PLP, duration_s=0.1, start=ServerStart(-1, 0))


def test_o_dsync_syncs_no_redo_with_fsync_calls():
    r = run(ServerConfig(innodb_flush_method="O_DSYNC", log_bin=False), Workload(connections=2))
    assert r.status["Innodb_os_log_fsyncs"] == 0
    assert r.internal["redo_syncs"] > 0  # made durable by the O_DSYNC writes themselves
    assert r.internal.get("dblwr_syncs", 0) > 0  # MySQL syncs the doublewrite under O_DSYNC


def test_sync_binlog_0_and_n():
    wl = Workload(connections=4)
    r0 = run(ServerConfig(sync_binlog=0), wl)
    assert r0.syncs_per_s["binlog_syncs"] == 0
    r1 = run(ServerConfig(sync_binlog=1), wl)
    r10 = run(ServerConfig(sync_binlog=10), wl)
    groups10 = r10.internal["binlog_groups"]
    assert r10.internal["binlog_syncs"] == pytest.approx(groups10 / 10, rel=0.2, abs=2)
    assert r0.tps >= r10.tps * 0.98 >= r1.tps * 0.98 * 0.98


def test_cpu_bound_server_is_predicted_cpu_bound():
    cfg = ServerConfig(cpu_cores=2, innodb_flush_log_at_trx_commit=2, log_bin=False)
    r = run(cfg, Workload(connections=16, cpu_us_per_trx=1000, client_us_per_trx=0), profile=PLP)
    assert r.tps == pytest.approx(2000, rel=0.05)
    assert r.cpu_util > 0.95


def test_slow_data_fsyncs_reach_commits_through_checkpoint_stalls():
    """On a device with slow flushes, O_DIRECT's per-batch data fsyncs limit page flushing;
    with a small redo log the checkpoint age hits its limit and commits stall."""
    wl = Workload(connections=8, pages_dirtied_per_trx=2.0, redo_bytes_per_trx=8192,
                  cpu_us_per_trx=20, client_us_per_trx=0)
    small = ServerConfig(innodb_redo_log_capacity=8 * 1024 * 1024, log_bin=False)
    big = with_(small, innodb_redo_log_capacity=1024**3)
    r_small = run(small, wl, duration=6)
    r_big = run(big, wl, duration=6)
    assert r_small.checkpoint_stall_s > 0
    assert r_big.checkpoint_stall_s == 0
    assert r_small.tps < r_big.tps
    nofsync = run(with_(small, innodb_flush_method="O_DIRECT_NO_FSYNC"), wl, duration=6)
    assert nofsync.checkpoint_stall_s < r_small.checkpoint_stall_s


def test_invalid_combination_is_a_clear_error():
    from innoflush.errors import UsageError
    with pytest.raises(UsageError, match="innodb_flush_method"):
        run(ServerConfig(innodb_flush_method="unbuffered"))
    with pytest.raises(UsageError, match="flavor"):
        run(ServerConfig(flavor="postgres"))


def test_published_total_only_profile_adds_up_to_the_published_figure():
    """write + sync of a total-only device reproduces the published write+fsync time."""
    from innoflush.simulator.tps import SETTINGS, commit_latency_s
    redo_only = next(s for s in SETTINGS if s.key == "redo-fsync")
    lat, _ = commit_latency_s(hdd_total_only(18.0), redo_only, "mysql-8.0")
    assert lat == pytest.approx(0.018, rel=0.02)


def test_semaphore_is_fifo_and_counts():
    import simpy
    env = simpy.Environment()
    sem = Semaphore(env, 2)
    order = []

    def user(name, n, hold):
        ev = sem.acquire(n)
        if ev is not None:
            yield ev
        order.append((name, env.now))
        yield env.timeout(hold)
        sem.release(n)

    env.process(user("a", 1, 5))
    env.process(user("b", 1, 3))
    env.process(user("c", 2, 1))
    env.process(user("d", 1, 1))
    env.run()
    assert order == [("a", 0), ("b", 0), ("c", 5), ("d", 6)]
    assert sem.free == 2


@pytest.mark.slow
def test_tps_reproduces_the_seeds_arithmetic_for_an_18ms_drive():
    """Percona 2018: a 7.2k rpm drive at 18 ms per fsync gives ~56 commits/s per
    connection, so 200 durable TPS need at least 4 connections."""
    from innoflush.profiles import load_profile
    from innoflush.simulator.tps import tps_table
    out = tps_table(load_profile("hdd-wd2502abys"), "mysql-8.0", target_tps=200)
    row = next(r for r in out["settings"] if r["setting"] == "redo-fsync")
    assert row["tps_per_connection"] == pytest.approx(56, abs=1.5)
    assert row["connections_for_target"] == 4
    assert row["simulated_tps_1_connection"] == pytest.approx(row["tps_per_connection"],
                                                               rel=0.05)
    # group commit shares syncs: more connections, more commits per sync ...
    assert row["simulated_tps_at_target_connections"] >= 1.5 * row["simulated_tps_1_connection"]
    # ... but the closed form is a lower bound: a commit that arrives during a sync waits
    # for the next one, so connections released together can split into two groups
    assert 4 <= row["simulated_connections_for_target"] <= 8
    both = next(r for r in out["settings"] if r["setting"] == "redo+binlog")
    assert both["tps_per_connection"] < row["tps_per_connection"]
    relaxed = next(r for r in out["settings"] if r["setting"] == "trx-commit-2")
    assert relaxed["tps_per_connection"] > 100 * row["tps_per_connection"]


def test_tps_uses_fdatasync_where_the_device_makes_it_cheaper():
    from innoflush.simulator.tps import tps_table
    out = tps_table(CONSUMER, "mysql-8.0", check=False)
    by = {r["setting"]: r for r in out["settings"]}
    assert by["redo-fdatasync"]["tps_per_connection"] > by["redo-fsync"]["tps_per_connection"]
    maria = tps_table(CONSUMER, "mariadb-10.11", check=False)
    assert "redo-fdatasync" not in {r["setting"] for r in maria["settings"]}


@pytest.mark.slow
def test_max_commits_ends_the_run_at_that_many_commits():
    r = simulate(ServerConfig(), Workload(connections=4), PLP, duration_s=3600, seed=1,
                 max_commits=5000)
    assert 5000 <= r.commits <= 5004  # the commits in flight at that instant also count
    assert r.duration_s < 10
    assert r.tps == pytest.approx(r.commits / r.duration_s)


def test_mariadb_buffers_its_redo_with_trx_commit_2_unless_told_otherwise():
    wl = Workload(connections=1, pages_dirtied_per_trx=0, growth_bytes_per_trx=0)
    auto = run(ServerConfig(flavor="mariadb-10.11", innodb_flush_log_at_trx_commit=2,
                            log_bin=False), wl)
    direct = run(ServerConfig(flavor="mariadb-10.11", innodb_flush_log_at_trx_commit=2,
                              log_bin=False, innodb_log_file_buffering=False), wl)
    # an O_DIRECT redo write is a device write (20 µs here); a buffered one a memory copy
    assert auto.commit_latency_ms["p50"] < direct.commit_latency_ms["p50"] - 0.01


@pytest.mark.slow
def test_a_client_on_the_same_host_competes_for_the_cores():
    cfg = ServerConfig(cpu_cores=2, innodb_flush_log_at_trx_commit=2, log_bin=False)
    apart = run(cfg, Workload(connections=8, cpu_us_per_trx=500, client_us_per_trx=500),
                profile=PLP)
    shared = run(cfg, Workload(connections=8, cpu_us_per_trx=500, client_us_per_trx=500,
                               client_cpu_us_per_trx=500), profile=PLP)
    assert apart.tps == pytest.approx(4000, rel=0.05)   # the server's 2 cores at 500 µs
    assert shared.tps == pytest.approx(2000, rel=0.05)  # now 1 ms of CPU per transaction
    with pytest.raises(Exception, match="part of client_us_per_trx"):
        run(cfg, Workload(client_us_per_trx=10, client_cpu_us_per_trx=20))


def test_carry_pays_whole_units_and_keeps_the_fraction():
    from innoflush.simulator.carry import Carry

    c = Carry()
    got = [c.take(0.25) for _ in range(10)]
    assert got == [0, 0, 0, 1, 0, 0, 0, 1, 0, 0] and c.frac == 0.5
    capped = Carry()
    assert capped.take(2.5, limit=1) == 1      # at most the limit now ...
    assert capped.take(0.0) == 1               # ... the rest owed later
    assert capped.frac == 0.5


@pytest.mark.parametrize("conns", [4, 16])
def test_mariadb_binlog_leader_takes_its_queue_before_its_redo_group_arrives(conns):
    # MariaDB: a thread that finds nobody writing the binlog leads at once; the rest of
    # its redo group, woken one by one, forms the next binlog group. Measured on
    # MariaDB 10.11 with sync_binlog=1 (sysbench oltp_insert, emulated 2.8 ms syncs):
    # 1.28 commits per binlog group at 4 threads, 4.65 at 16 — not the N/2 a group
    # carried whole from the redo sync into the binlog would give.
    cfg = ServerConfig(flavor="mariadb-10.11", sync_binlog=1)
    r = run(cfg, Workload(connections=conns, cpu_us_per_trx=100, client_us_per_trx=50))
    per_group = r.status["Binlog_commits"] / r.status["Binlog_group_commits"]
    assert 1.0 < per_group < 0.85 * conns / 2
    # sync_binlog=0: one redo sync per group, and the groups grow to about N/2
    r0 = run(with_(cfg, sync_binlog=0),
             Workload(connections=conns, cpu_us_per_trx=100, client_us_per_trx=50))
    assert r0.commits / r0.internal["redo_syncs"] > 0.85 * conns / 2
    assert r0.tps > 2.2 * r.tps


def test_a_lone_connection_that_does_not_sleep_keeps_the_round_trip_floor():
    """round_trip_floor_us: a lone connection at a setting without a sync at commit takes
    at least the floor per statement; while commits sleep, or with more connections,
    the floor changes nothing at all."""
    from innoflush.simulator.tps import DurabilitySetting, commit_path

    def run(trx_commit: int, connections: int, floor: float):
        wl = Workload(connections=connections, cpu_us_per_trx=80.0, client_us_per_trx=20.0,
                      client_cpu_us_per_trx=20.0, statements_per_trx=6,
                      pages_dirtied_per_trx=0.01, growth_bytes_per_trx=0.0,
                      round_trip_floor_us=floor)
        cfg = ServerConfig(flavor="mariadb-10.11", innodb_flush_log_at_trx_commit=trx_commit,
                           log_bin=False, cpu_cores=2)
        return simulate(cfg, wl, consumer_ssd(), duration_s=1.0, seed=3)

    free, floored = run(2, 1, 0.0), run(2, 1, 200.0)
    assert free.tps > 3 * floored.tps
    assert floored.tps == pytest.approx(1e6 / (6 * 200.0), rel=0.05)
    for trx_commit, conns in ((1, 1), (2, 4)):
        assert run(trx_commit, conns, 200.0).tps == run(trx_commit, conns, 0.0).tps
    # the one-connection arithmetic of `tps` keeps it the same way
    wl = Workload(cpu_us_per_trx=80.0, client_us_per_trx=20.0, statements_per_trx=6,
                  round_trip_floor_us=200.0, growth_bytes_per_trx=0.0)
    relaxed = DurabilitySetting("r", "r", trx_commit=2, log_bin=False, sync_binlog=0,
                                use_fdatasync=False)
    durable = DurabilitySetting("d", "d", trx_commit=1, log_bin=False, sync_binlog=0,
                                use_fdatasync=False)
    assert commit_path(consumer_ssd(), relaxed, "mariadb-10.11", wl).work_s == \
        pytest.approx(6 * 200e-6)
    assert commit_path(consumer_ssd(), durable, "mariadb-10.11", wl).work_s == \
        pytest.approx(100e-6)


def test_a_wire_is_paid_on_an_idle_core_once_commits_stop_sleeping():
    # sysbench's 4-thread insert on a 2-core host, as advise measured it on the Samsung:
    # 56 µs of server CPU, 21 of the clients', a 140-µs wire. While the commits sleep the
    # wire is paid every time; once they do not, a woken thread finds the cores busy and
    # waits in their queue instead, so four connections pass 4 / (wire + CPU)
    wl = Workload(connections=4, cpu_us_per_trx=56.0, client_us_per_trx=161.0,
                  client_cpu_us_per_trx=21.0, work_cv=0.3)
    wire_bound = 4 / ((140.0 + 77.0) * 1e-6)
    cpu_bound = 2 / (77.0 * 1e-6)
    tps = {tc: simulate(ServerConfig(flavor="mariadb-10.11", log_bin=False,
                                     innodb_flush_log_at_trx_commit=tc),
                        wl, plp_ssd(), duration_s=0.5, seed=1).tps for tc in (1, 2)}
    assert tps[1] < wire_bound
    assert 1.25 * wire_bound < tps[2] <= cpu_bound * 1.02
    # a lone connection's cores are never all busy: it pays its wire either way
    one = simulate(ServerConfig(flavor="mariadb-10.11", log_bin=False,
                                innodb_flush_log_at_trx_commit=2),
                   replace(wl, connections=1), plp_ssd(), duration_s=0.5, seed=1).tps
    assert one < 1 / ((140.0 + 77.0) * 1e-6)


def test_log_writer_threads_follow_each_flavors_rule():
    """MySQL 9.5+: the log writer threads are ON by default only with the binlog at 32
    CPUs or more, or without it above 4 (the 9.5 manual); 8.0/8.4 say ON; 5.7 and MariaDB
    have none. A value the server reports wins where the threads exist."""
    from innoflush.simulator.flavors import get_flavor

    f97 = get_flavor("mysql-9.7")
    assert not f97.log_writer_threads(None, 2, True)
    assert not f97.log_writer_threads(None, 31, True) and f97.log_writer_threads(None, 32, True)
    assert not f97.log_writer_threads(None, 4, False) and f97.log_writer_threads(None, 5, False)
    assert f97.log_writer_threads(True, 2, True)
    assert get_flavor("mysql-8.4").log_writer_threads(None, 2, True)
    assert not get_flavor("mysql-8.0").log_writer_threads(False, 64, True)
    for name in ("mysql-5.7", "mariadb-10.11", "mariadb-11.8"):
        assert not get_flavor(name).log_writer_threads(True, 64, False)


def test_mysql_writes_the_incomplete_last_redo_block_apart():
    """MySQL 8.0+: a commit whose redo crosses a 512-byte block is two write calls (the
    complete blocks, then the incomplete one through the write-ahead buffer): one
    connection counts two Innodb_log_writes per commit, as MySQL 9.7.4 did (1.98); 5.7
    and MariaDB write it in one."""
    wl = Workload(connections=1, redo_bytes_per_trx=2600)
    for flavor, per_commit in (("mysql-9.7", 2.0), ("mysql-5.7", 1.0)):
        r = run(ServerConfig(flavor=flavor, log_bin=False), wl, profile=PLP)
        assert r.status["Innodb_log_writes"] / r.commits == pytest.approx(per_commit,
                                                                          abs=0.05)


def test_mysql_fresh_server_flushes_little_in_its_first_half_minute():
    """MySQL's adaptive flushing averages start at zero and are first refreshed after 30
    passes: a server a few seconds old, its dirty pages under the low-water mark and its
    checkpoint age under innodb_adaptive_flushing_lwm, asks for a page or none a pass;
    one that has run long asks for about what the load dirties."""
    from innoflush.simulator.config import ServerStart

    cfg = ServerConfig(flavor="mysql-9.7", log_bin=False, innodb_io_capacity=10000,
                       innodb_io_capacity_max=20000, innodb_redo_log_capacity=1 << 30)
    wl = Workload(connections=1, pages_dirtied_per_trx=0.2)
    flushed = {}
    for uptime in (5, None):
        r = simulate(cfg, wl, PLP, duration_s=8.0, seed=1,
                     start=ServerStart(uptime_s=uptime))
        flushed[uptime] = r.status["Innodb_pages_written"] / r.commits
    assert flushed[5] < 0.02 < flushed[None]
