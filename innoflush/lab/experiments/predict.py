"""The prediction of a lab run and its comparison with what was measured.

``derive_workload`` builds the simulator's Workload from a run's independent
measurements (server and client CPU, round trips, the status deltas, the InnoDB files:
nothing fitted to the TPS; ``page_reentry`` splits the pages flushed into first writes
and rewrites); ``sim_config`` is the server's read-back settings as a ServerConfig;
``predict`` simulates them over the run's own timeline (from the server's
``start_state``); ``predicted_figures`` and ``measured_figures`` flatten both sides to
the COMPARED figures, and ``compare`` gives each prediction's error (predicted /
measured − 1).
"""

from __future__ import annotations

import os
from dataclasses import replace

from ...advisor.fit import config_from_facts
from ...advisor.measured import workload_from_observed
from ...advisor.predict import async_point_bytes
from ...errors import InnoflushError
from ...live.pages import page_counts, page_reentry
from ...simulator import ServerStart, Workload, simulate
from ..load.workload_result import WorkloadResult
from .hostprobe import storage_completion_cores
from .options import LabError

SIM_MIN_S = 3.0               # at least this many simulated seconds (page cleaner and
SIM_WARMUP_S = 1.0            #    checkpoint run about once a second)


def _server_cpu_us(server_cpu_s: float | None, commits: int, lines: list[str]) -> float:
    """cpu_us_per_trx: the server process's CPU per commit, or the default."""
    if server_cpu_s is not None:
        cpu_us = server_cpu_s * 1e6 / commits
        lines.append(f"cpu_us_per_trx = {cpu_us:.1f} (server process CPU "
                     f"{server_cpu_s:.3f} s / {commits:,} commits)")
        return cpu_us
    cpu_us = Workload().cpu_us_per_trx
    lines.append(f"cpu_us_per_trx = {cpu_us:.1f} (default: the server's CPU time could "
                 "not be read)")
    return cpu_us


def _tablespace_growth(files: dict | None, commits: int, base: Workload,
                       lines: list[str]) -> tuple[int, float]:
    """(tablespaces, growth_bytes_per_trx) from the InnoDB files written and grown, or
    the defaults when the datadir was not readable."""
    if files is not None:
        tablespaces = max(1, files["tablespaces_written"])
        growth = files["growth_bytes"] / commits
        lines.append(f"tablespaces = {tablespaces} (InnoDB files written during the run: "
                     f"{', '.join(files['files_written'][:6]) or 'none'})")
        lines.append(f"growth_bytes_per_trx = {growth:.1f} ({files['growth_bytes']:,} bytes "
                     f"of tablespace growth / commits)")
        return tablespaces, growth
    tablespaces = Workload().tablespaces
    growth = base.growth_bytes_per_trx
    lines.append(f"tablespaces = {tablespaces} (default: the datadir was not readable)")
    lines.append(f"growth_bytes_per_trx = {growth:.1f} (400 B per inserted row, assumed: "
                 "the datadir was not readable)")
    return tablespaces, growth


def _extend_bytes(extensions: dict | None, lines: list[str]) -> int:
    """extend_bytes: the mean size step of the files the ExtensionWatch saw grow, or the
    simulator's default."""
    if extensions and extensions.get("extensions"):
        step = max(64 * 1024, int(extensions["mean_step_bytes"]))
        lines.append(f"extend_bytes = {step:,} (the InnoDB files grew {extensions['extensions']}"
                     f" times by {extensions['grown_bytes']:,} bytes in all, polled every "
                     f"{extensions['interval_s'] * 1e3:g} ms)")
        return step
    extend = Workload().extend_bytes
    lines.append(f"extend_bytes = {extend:,} (simulator default"
                 + (": no file grew while polled" if extensions else "") + ")")
    return extend


def _page_shares(commits: int, d: dict, dirty_growth: int | None, base: Workload,
                 lines: list[str]) -> tuple[float, float, float]:
    """(pages_dirtied_per_trx, hot_page_share, dblwr_page_share): page_reentry's split of
    the pages flushed when the run flushed enough, else the advisor's pages dirtied, no
    hot pages and the doublewritten share of the pages written."""
    created, flushed, dblwr_pages = page_counts(d)
    fit = page_reentry(commits, created, flushed, dirty_growth, dblwr_pages)
    if fit is not None:
        lines.extend(fit["lines"])
        return fit["pages_dirtied_per_trx"], fit["hot_page_share"], fit["dblwr_page_share"]
    pages_dirtied = base.pages_dirtied_per_trx
    hot_share = Workload().hot_page_share
    share = Workload().dblwr_page_share
    lines.append(f"pages_dirtied_per_trx = {pages_dirtied:.4g} (the larger of "
                 "Innodb_pages_written and pages flushed + growth of dirty pages, / "
                 "commits)")
    lines.append(f"hot_page_share = {hot_share:g} (simulator default: fewer than 100 "
                 "pages flushed, or a count missing)")
    pages = d.get("Innodb_pages_written", 0)
    if pages >= 100:
        dblwr = d.get("Innodb_dblwr_pages_written", 0)
        share = round(min(1.0, dblwr / pages), 4)
        lines.append(f"dblwr_page_share = {share:.3g} (Innodb_dblwr_pages_written "
                     f"{dblwr:,} / Innodb_pages_written {pages:,})")
    else:
        lines.append(f"dblwr_page_share = {share:g} (simulator default: fewer than 100 "
                     "pages written)")
    return pages_dirtied, hot_share, share


def derive_workload(*, connections: int, commits: int, server_cpu_s: float | None,
                    client_cpu_s: float, statements_per_trx: int, round_trip_us: float,
                    observed, files: dict | None,
                    round_trip_source: str = "SELECT 1 round trip",
                    extensions: dict | None = None, deltas: dict | None = None,
                    dirty_growth: int | None = None) -> tuple:
    """The simulator Workload from measured quantities (none fitted to the TPS).

    - ``cpu_us_per_trx`` = server process CPU seconds over the run / commits (all its
      threads: connection threads, page cleaner, log writer, purge);
    - ``client_us_per_trx`` = client CPU per commit + statements per transaction ×
      ``round_trip_us``: the part of a ``SELECT 1`` round trip that neither the client's
      nor the server's CPU time counts (``loopback()['wait_us']``; both CPUs are already
      in the two per-transaction CPU figures), or, where the server's CPU could not be
      read, the part outside the client's CPU (``outside_client_us``);
    - ``redo_bytes_per_trx``, ``pages_dirtied_per_trx``, ``binlog_bytes_per_trx``: the
      advisor's arithmetic on the status deltas (``measured.workload_from_observed``);
    - ``tablespaces`` = InnoDB files written during the run (mtime moved), at least 1;
    - ``growth_bytes_per_trx`` = bytes those files grew / commits;
    - ``extend_bytes`` = the mean size step of the files while the run went on (when
      ``extensions``, an ``ExtensionWatch`` result, saw any), else the simulator's
      default;
    - ``pages_dirtied_per_trx``, ``hot_page_share``, ``dblwr_page_share``: from
      ``page_reentry`` when the run flushed 100 pages or more (``dirty_growth``: the
      growth of Innodb_buffer_pool_pages_dirty); else the advisor's pages dirtied, no hot
      pages, and Innodb_dblwr_pages_written / Innodb_pages_written when 100 pages or
      more were written (else the default, all pages).

    Returns (Workload, derivation lines).
    """
    if commits <= 0:
        raise LabError("the workload committed no transaction: nothing to derive a "
                       "workload from")
    base, _ = workload_from_observed(observed, connections)
    lines: list[str] = [f"connections = {connections} (client processes)"]
    cpu_us = _server_cpu_us(server_cpu_s, commits, lines)
    client_cpu_us = client_cpu_s * 1e6 / commits
    client_us = client_cpu_us + statements_per_trx * round_trip_us
    lines.append(f"client_us_per_trx = {client_us:.1f} (client CPU {client_cpu_us:.1f} µs + "
                 f"{statements_per_trx} statements × {round_trip_us:.1f} µs: "
                 f"{round_trip_source})")
    lines.append(f"client_cpu_us_per_trx = {client_cpu_us:.1f} (the client processes run on "
                 "this host: their CPU competes with the server's for the same cores)")
    lines.append(f"statements_per_trx = {statements_per_trx} (round trips per transaction, "
                 "COMMIT included: each queues for a core on its own)")
    lines.append(f"redo_bytes_per_trx = {base.redo_bytes_per_trx} (Innodb_os_log_written / "
                 "commits)")
    lines.append(f"binlog_bytes_per_trx = {base.binlog_bytes_per_trx}"
                 + (" (Binlog_bytes_written / commits)" if observed.binlog_bytes_per_commit
                    else " (simulator default: not counted or binlog off)"))
    tablespaces, growth = _tablespace_growth(files, commits, base, lines)
    extend = _extend_bytes(extensions, lines)
    pages_dirtied, hot_share, share = _page_shares(commits, deltas or {}, dirty_growth, base,
                                                   lines)
    wl = Workload(connections=connections, cpu_us_per_trx=round(cpu_us, 3),
                  client_us_per_trx=round(client_us, 3),
                  statements_per_trx=max(1, statements_per_trx),
                  client_cpu_us_per_trx=round(min(client_cpu_us, client_us), 3),
                  redo_bytes_per_trx=base.redo_bytes_per_trx,
                  binlog_bytes_per_trx=base.binlog_bytes_per_trx,
                  pages_dirtied_per_trx=pages_dirtied, hot_page_share=hot_share,
                  tablespaces=tablespaces, growth_bytes_per_trx=round(growth, 3),
                  extend_bytes=extend, dblwr_page_share=share)
    wl.validate()
    return wl, lines


COMPARED = ("tps", "commit_latency_p50_ms", "commit_latency_p99_ms", "data_fsyncs_per_s",
            "data_writes_per_s", "data_fsyncs_per_data_write")


def error_pct(measured, predicted) -> float | None:
    """(predicted / measured - 1) in %, None when either is missing or measured is 0."""
    if measured is None or predicted is None:
        return None
    if measured == 0:
        return None
    return round(100.0 * (predicted / measured - 1.0), 1)


def compare(measured: dict, predicted: dict) -> dict:
    """errors_pct for each COMPARED figure (flat dicts with those keys)."""
    return {k: error_pct(measured.get(k), predicted.get(k)) for k in COMPARED}


def measured_figures(wr: WorkloadResult, observed) -> dict:
    lat = wr.to_dict()
    return {"tps": round(wr.tps, 2),
            "commit_latency_p50_ms": lat["commit_latency_ms"]["p50"],
            "commit_latency_p99_ms": lat["commit_latency_ms"]["p99"],
            "data_fsyncs_per_s": observed.data_fsyncs_per_s,
            "data_writes_per_s": observed.data_writes_per_s,
            "data_fsyncs_per_data_write": observed.data_fsyncs_per_data_write}


def _plus(x, y):
    return None if x is None else round(x + y, 4)


def predicted_figures(r, commit_round_trip_ms: float = 0.0) -> dict:
    """A SimResult as the flat figures compared, plus its detail.

    The simulator's commit latency is the wait for durability only; the client measures
    the COMMIT statement's round trip. So the compared commit latencies are the
    simulated ones plus ``commit_round_trip_ms`` (one measured ``SELECT 1`` round trip:
    what a COMMIT costs besides the wait); the raw ones are in ``sim_commit_latency_ms``.
    """
    d = r.duration_s or 1.0
    fsyncs = r.status.get("Innodb_data_fsyncs", 0)
    writes = r.status.get("Innodb_data_writes", 0)
    rt = commit_round_trip_ms
    return {"tps": round(r.tps, 2),
            "commit_latency_p50_ms": _plus(r.commit_latency_ms.get("p50"), rt),
            "commit_latency_p99_ms": _plus(r.commit_latency_ms.get("p99"), rt),
            "commit_round_trip_ms": round(rt, 4),
            "sim_commit_latency_ms": r.commit_latency_ms,
            "data_fsyncs_per_s": round(fsyncs / d, 2),
            "data_writes_per_s": round(writes / d, 2),
            "data_fsyncs_per_data_write": (round(fsyncs / writes, 6) if writes else None),
            "trx_latency_ms": r.trx_latency_ms,
            "commits": r.commits, "status_per_s": {k: round(v / d, 2)
                                                    for k, v in r.status.items()},
            "syncs_per_s": r.syncs_per_s, "group_commit": r.group_commit,
            "cpu_util": round(r.cpu_util, 4),
            "device_flush_util": round(r.device_flush_util, 4),
            "checkpoint_stall_s": round(r.checkpoint_stall_s, 4),
            "sim_duration_s": r.duration_s, "seed": r.seed, "profile": r.profile,
            "notes": list(r.notes)}


def predict(config, workload, profile, run_s: float, seed: int = 1,
            warmup_s: float = 0.0, start: dict | None = None):
    """simulate() on the profile over the run's own timeline — its warm-up, then its
    measured seconds (at least SIM_WARMUP_S and SIM_MIN_S) — since what the page cleaner
    does depends on how long the server has been loaded (MariaDB's sleeps until the
    checkpoint age reaches its async point). Returns the SimResult."""
    return simulate(config, workload, profile, duration_s=max(SIM_MIN_S, run_s), seed=seed,
                    warmup_s=max(SIM_WARMUP_S, warmup_s),
                    start=ServerStart(**start) if start else None)


def sim_config(facts, cores: int, datadir: str | os.PathLike | None = None):
    """The simulator ServerConfig of the read-back settings: the advisor's
    ``config_from_facts``, with innodb_max_dirty_pages_pct_lwm and
    innodb_adaptive_flushing_lwm as the server has them (config_from_facts reads an lwm
    of 0 — MariaDB's default, "no pre-flushing" — as 10), and the CPUs that take the
    completion interrupts of the storage under `datadir` (``io_completion_cores``)."""
    config, notes = config_from_facts(facts, cores)
    changes = {}
    for name in ("innodb_max_dirty_pages_pct_lwm", "innodb_adaptive_flushing_lwm"):
        try:
            value = float(facts.variables.get(name))
        except (TypeError, ValueError):
            continue
        if 0 <= value <= 99 and value != getattr(config, name):
            changes[name] = value
    io_cores = storage_completion_cores(datadir) if datadir is not None else None
    if io_cores is not None and io_cores < cores:
        changes["io_completion_cores"] = io_cores
        notes = notes + [f"io_completion_cores = {io_cores} (the storage's disks have "
                         f"{io_cores} hardware queue(s): their completion interrupts, and "
                         "the threads that sleep on them, run on that many of the "
                         f"{cores} cores)"]
    if changes:
        config = replace(config, **changes)
        config.validate()
    return config, notes



def model_notes(facts, config) -> list[str]:
    """Where the server's read-back settings go beyond what the model knows."""
    notes = []
    method = facts.flush_method
    if method and method != config.innodb_flush_method:
        notes.append(f"innodb_flush_method={method} is simulated as "
                     f"{config.innodb_flush_method}")
    return notes



__all__ = ["COMPARED", "async_point", "compare", "derive_workload", "error_pct", "measured_figures",
           "model_notes", "predict", "predicted_figures",
           "sim_config"]


def async_point(facts) -> int | None:
    """The checkpoint age at which the server's page cleaner must flush (the async
    point of its redo capacity, as the simulator's flavor has it), bytes; None where
    the settings do not say."""
    try:
        config, _ = config_from_facts(facts, os.cpu_count() or 1)
    except InnoflushError:
        return None
    return async_point_bytes(config)
