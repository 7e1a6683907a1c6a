"""Where a prediction's data fsyncs/s stop holding: MariaDB's page cleaner starting at the
checkpoint's async point after the simulated window (advisor/predict.py), and how the
report says it (pure)."""

from __future__ import annotations

from dataclasses import replace

from innoflush.advisor.fit import Fit
from innoflush.advisor.predict import Predictor, page_cleaner_horizon, settled_start
from innoflush.output.advise_text import _horizon_text
from innoflush.simulator import ServerConfig, ServerStart, Workload
from innoflush.simulator.flavors import get_flavor
from innoflush.simulator.redo import capacity_points
from tests.helpers.simprofiles import consumer_ssd

MIB = 1024 * 1024
MARIADB = ServerConfig(flavor="mariadb-10.11", innodb_max_dirty_pages_pct_lwm=0.0,
                       innodb_redo_log_capacity=96 * MIB)


def test_the_async_point_is_mariadbs_for_a_96_mib_log():
    # log_t::set_capacity on the lab's 96 MiB ib_logfile0: 70.7 MB, where the after runs
    # of 2026-11-28 started their page cleaner
    _, async_age, sync_age, _ = capacity_points(get_flavor("mariadb-10.11"), 96 * MIB)
    assert async_age == 70_717_088 and async_age < sync_age


def test_a_window_that_ends_short_of_the_async_point_says_when_it_gets_there():
    wl = Workload(connections=4, redo_bytes_per_trx=400)
    h = page_cleaner_horizon(MARIADB, wl, ServerStart(checkpoint_age=20_000_000), 12_500.0,
                             4.0)
    assert h is not None
    assert h["redo_bytes_per_s"] == 5_000_000
    assert h["age_at_start_bytes"] == 20_000_000 and h["age_at_end_bytes"] == 40_000_000
    assert h["seconds_to_async_point"] == round((70_717_088 - 20_000_000) / 5e6, 1)
    faster = {"horizon": h, "sim": {"duration_s": 4.0}, "current": {"tps": 1_000.0},
              "candidate": {"tps": 12_500.0}}
    text = _horizon_text(faster)
    assert "next 4 s from a checkpoint age of 20 MB" in text
    assert "5.0 MB/s" in text and "(71 MB) in about 10 s" in text
    # a change that leaves the commit rate about where it was shares the current
    # figure's horizon: its difference stands, and the report does not repeat it
    assert _horizon_text({**faster, "candidate": {"tps": 1_100.0}}) is None


def test_a_window_that_crosses_the_async_point_keeps_its_horizon():
    # 60 MB + 4 s x 5 MB/s passes 70.7 MB after about 2 s: the window's figures are half
    # without the page cleaner, so the settled server is still priced apart
    wl = Workload(connections=4, redo_bytes_per_trx=400)
    h = page_cleaner_horizon(MARIADB, wl, ServerStart(checkpoint_age=60_000_000),
                             12_500.0, 4.0)
    assert h is not None and h["reached_in_window"]
    assert h["seconds_to_async_point"] == round((70_717_088 - 60_000_000) / 5e6, 1)
    text = _horizon_text({"horizon": h, "sim": {"duration_s": 4.0},
                          "current": {"tps": 1_000.0}, "candidate": {"tps": 12_500.0}})
    assert "in about 2 s, within those seconds" in text
    short = page_cleaner_horizon(MARIADB, wl, ServerStart(checkpoint_age=20_000_000),
                                 12_500.0, 4.0)
    assert short is not None and not short["reached_in_window"]


def test_no_horizon_where_the_cleaner_is_at_work_or_does_not_wait_for_the_point():
    wl = Workload(connections=4, redo_bytes_per_trx=400)
    # an age already past the point
    past = ServerStart(checkpoint_age=71_000_000)
    assert page_cleaner_horizon(MARIADB, wl, past, 12_500.0, 4.0) is None
    # a low-water mark set: MariaDB's cleaner flushes before the async point
    lwm = ServerConfig(flavor="mariadb-10.11", innodb_max_dirty_pages_pct_lwm=10.0)
    assert page_cleaner_horizon(lwm, wl, None, 12_500.0, 4.0) is None
    # MySQL's page cleaner is not modelled this way
    assert page_cleaner_horizon(ServerConfig(flavor="mysql-8.0"), wl, None, 12_500.0,
                                4.0) is None
    # a page cleaner already at work when advise looked is in the window's figures
    awake = ServerStart(checkpoint_age=20_000_000, cleaner_active=True)
    assert page_cleaner_horizon(MARIADB, wl, awake, 12_500.0, 4.0) is None
    # nothing committed, nothing to say
    assert page_cleaner_horizon(MARIADB, wl, None, 0.0, 4.0) is None
    assert _horizon_text({"horizon": None, "sim": {"duration_s": 4.0},
                          "current": {"tps": 1.0}, "candidate": {"tps": 9.0}}) is None


def test_a_settled_server_sits_at_the_async_point_with_the_dirty_pages_it_kept():
    wl = Workload(connections=4, redo_bytes_per_trx=500, pages_dirtied_per_trx=0.01)
    s = settled_start(MARIADB, wl, ServerStart(checkpoint_age=20_000_000, dirty_pages=1_000))
    assert s.checkpoint_age == 70_717_088 and s.cleaner_active
    # the 1,000 pages advise saw stay dirty (nothing flushes before the point), and the
    # ~101,434 transactions still to come dirty 1,014 more for the first time
    assert s.dirty_pages == 1_000 + int((70_717_088 - 20_000_000) / 500 * 0.01)
    # never more than innodb_max_dirty_pages_pct of the buffer pool
    tiny = ServerConfig(flavor="mariadb-10.11", innodb_max_dirty_pages_pct_lwm=0.0,
                        innodb_redo_log_capacity=96 * MIB, innodb_buffer_pool_size=8 * MIB,
                        innodb_max_dirty_pages_pct=50.0)
    assert settled_start(tiny, wl, None).dirty_pages == 8 * MIB // 16384 // 2


def test_the_report_gives_the_settled_figure_where_there_is_one():
    wl = Workload(connections=4, redo_bytes_per_trx=400)
    h = page_cleaner_horizon(MARIADB, wl, ServerStart(checkpoint_age=20_000_000), 12_500.0,
                             4.0)
    p = {"horizon": h, "sim": {"duration_s": 4.0}, "current": {"tps": 1_000.0},
         "candidate": {"tps": 12_500.0}, "settled": {"data_fsyncs_per_s": 23.5}}
    text = _horizon_text(p)
    assert "settled there: 23.5 data fsyncs/s" in text and "leaves out" not in text


def test_advise_prices_the_settled_server_where_its_window_ends_short():
    """A MariaDB fit whose prediction ends far short of the async point: the settled run
    starts there, and its page cleaner passes (and syncs) where the window's did not."""
    cfg = replace(MARIADB, log_bin=False, innodb_flush_log_at_trx_commit=1)
    wl = Workload(connections=4, cpu_us_per_trx=60.0, client_us_per_trx=40.0,
                  redo_bytes_per_trx=600, pages_dirtied_per_trx=0.05, tablespaces=4)
    fit = Fit(cfg, wl, 1_000.0, 1_000.0, True, 1.0, 0.0,
              start=ServerStart(checkpoint_age=2_000_000, dirty_pages=200))
    p = Predictor(fit, consumer_ssd(), seed=1, duration_s=1.0, ranges=False)
    pred = p.predict({"innodb_flush_log_at_trx_commit": 2})
    assert pred["horizon"] is not None
    st = pred["settled"]
    assert st["checkpoint_age_bytes"] == 70_717_088 and st["duration_s"] == 3.0
    assert st["syncs_per_s"]["data_file_syncs"] > pred["recommended"]["syncs_per_s"][
        "data_file_syncs"]
    assert st["data_fsyncs_per_s"] > pred["recommended"]["data_fsyncs_per_s"]
    # no horizon (the page cleaner was at work), no settled run
    near = replace(fit, start=ServerStart(checkpoint_age=70_000_000, dirty_pages=200,
                                          cleaner_active=True))
    assert Predictor(near, consumer_ssd(), seed=1, duration_s=1.0, ranges=False).predict(
        {"innodb_flush_log_at_trx_commit": 2})["settled"] is None
