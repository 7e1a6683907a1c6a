"""The advice as a document: what `advise --json` prints (its text form:
innoflush/output/advise_text.py).

JSON keys (``innoflush advise --json``; schema ``innoflush.advice/1``):

- ``schema``: "innoflush.advice/1".
- ``taken_at``: when the server was read (UTC, ISO 8601); null for a capture.
- ``source``: what was read: ``kind`` (live|capture), ``path`` (the --from path, null
  live), ``snapshots`` (SHOW GLOBAL STATUS snapshots); a capture adds ``files``,
  ``formats``, ``interval_source`` and ``mysqladmin_relative`` (and ``server.connection``
  is null: nothing was connected to).
- ``exit_code``: 0 nothing to change, 3 recommendations made, 4 the model cannot explain
  the observed workload (no effect predicted).
- ``server``: ``title``, ``product`` (mysql|percona|mariadb), ``version``,
  ``version_comment``, ``version_with_update`` (MySQL 9.7's MAJOR.MINOR.PATCH.UPDATE
  version; null where the server has no such variable), ``sim_flavor`` (simulator
  flavor), ``role``
  (primary|replica|galera|read-only), ``role_detail``, ``datadir``, ``datadir_filesystem``
  (null unless the server runs on this host), ``connection`` {``target``, ``user``,
  ``tls`` (the session's, as the server reports it; null: not read), ``tls_version``,
  ``tls_cipher``, ``server_verified`` (none|ca|identity), ``ssl_mode``,
  ``password_source``} — never the password.
- ``settings``: ``innodb_flush_method`` (effective; MariaDB 11 derived from
  innodb_doublewrite / innodb_data_file_*), ``flush_method_source``,
  ``innodb_flush_log_at_trx_commit``, ``innodb_flush_log_at_timeout``, ``log_bin``,
  ``sync_binlog``, ``innodb_doublewrite``, ``innodb_use_fdatasync`` (null: no such
  variable), ``innodb_io_capacity``, ``innodb_io_capacity_max``, ``redo_capacity_bytes``,
  ``innodb_buffer_pool_size``, ``variables`` (the raw values read).
- ``device``: null without ``--profile``/``--measure``; else ``name``, ``title``,
  ``source`` (profile|measure), ``class``, ``plp``, ``verdict``,
  ``o_direct_no_fsync_safe``, ``reasons``, ``filesystem``, ``fsync_median_us``,
  ``fdatasync_median_us``, ``fsync_exact``, ``fdatasync_exact``, ``atomic_writes``.
- ``durability``: strict|relaxed.
- ``ignored_rules``: the rule ids given with ``--ignore-rule`` (their findings are left
  out), [] when none.
- ``sampling``: ``interval_s``, ``samples``, ``intervals`` [{``index``, ``seconds``,
  ``valid``, ``problem``, ``deltas``}].
- ``observed``: ``seconds``, ``intervals``, ``commits``, ``commits_per_s``,
  ``commits_source``, ``commits_note``, ``data_fsyncs_per_s``, ``data_writes_per_s``,
  ``data_fsyncs_per_data_write``, ``data_writes_include_redo``, ``redo_syncs_per_s``,
  ``redo_syncs_source``, ``other_fsyncs_per_s``, ``log_writes_per_commit``,
  ``os_log_fsyncs_per_commit``, ``redo_bytes_per_commit``, ``commits_per_redo_sync``,
  ``binlog_commits_per_group``, ``binlog_bytes_per_commit``, ``dblwr_writes_per_s``,
  ``dblwr_pages_per_s``, ``dblwr_pages_per_write``, ``pages_written_per_s``,
  ``pages_flushed_per_s``, ``page_writes_per_commit``, ``pages_dirtied_per_commit``,
  ``rows_inserted_per_commit``,
  ``threads_running_avg``, ``pending_fsyncs_max``, ``pending_fsyncs_avg``, ``deltas``
  (counter deltas summed over the valid intervals), ``notes``.
- ``workload``: the measured inputs (innoflush.live.workload): ``seconds``, ``commits``,
  ``commits_per_s``, then per input {``value``, ``source``, ``detail``, ``low``, ``high``}:
  ``connections``, ``inside_us_per_trx``, ``outside_us_per_trx``,
  ``commit_wait_us_per_trx``, ``server_cpu_us_per_trx``, ``background_cpu_us_per_trx``,
  ``client_cpu_us_per_trx``, ``other_cpu_us_per_trx``, ``extend_bytes``, ``tablespaces_written``,
  ``statements_per_trx``, ``cpu_cores``, ``redo_syncs_per_s``, ``data_file_syncs_per_s``,
  ``binlog_syncs_per_s``, ``data_file_sync_us``, ``commit_statement_us``; ``activity``
  (the processlist samples), ``performance_schema``, ``server_process``, ``notes``.
- ``fit``: null when nothing was simulated; else ``source`` ("measured", or
  "profile:NAME" with ``--workload``), ``explained``, ``config`` (simulator
  ServerConfig), ``workload`` (the simulator Workload, null when an input is missing),
  ``inputs`` (Workload field -> {value, source, detail}), ``observed_tps``,
  ``simulated_tps``, ``checks`` [{``figure``, ``observed``, ``model``, ``error_pct``,
  ``tolerance_pct``, ``ok``, ``note``}], ``reasons``, ``sim_duration_s``, ``wall_s``,
  ``start``, ``assumptions``.
- ``candidates``: every single-setting change the model runs: {``id``, ``setting``,
  ``current``, ``candidate``, ``changes``, ``advised``, ``finding``, ``unsafe``,
  ``predicted`` (null, or {``current``, ``candidate``, ``change``, ``range``, ``sim``})}.
- ``findings``: [{``id`` (the rule's id, ``<setting-family>.<situation>`` with the
  family flush-method|trx-commit|sync-binlog|use-fdatasync|doublewrite; every id in
  docs/advisor-rules.md), ``severity`` (data-safety|durability|performance), ``setting``,
  ``current``, ``recommended``, ``why`` [..], ``risk``, ``restart_needed``, ``my_cnf``
  [lines for the [mysqld] section], ``set_global`` [statements to apply a dynamic change
  now; innoflush never runs them], ``predicted``: null or {``current``, ``recommended``:
  {``tps``, ``commit_latency_p50_ms``, ``commit_latency_p99_ms``, ``data_fsyncs_per_s``,
  ``syncs_per_s``}, ``change``: {``tps_pct``, ``commit_latency_p50_pct``,
  ``commit_latency_p99_pct``, ``data_fsyncs_per_s_pct``}, ``range`` {``tps_pct``,
  ``data_fsyncs_per_s_pct``: [low, high]}, ``horizon`` (null, or where the data fsyncs
  stop holding: {``async_point_bytes``, ``age_at_start_bytes``, ``age_at_end_bytes``,
  ``redo_bytes_per_s``, ``seconds_to_async_point``, ``reached_in_window``}),
  ``settled`` (null with no horizon, else the setting once the age sits at that point:
  {``tps``,
  ``data_fsyncs_per_s``, ``syncs_per_s``, ``duration_s``, ``checkpoint_age_bytes``,
  ``dirty_pages``}), ``sim`` {``profile``,
  ``duration_s``, ``seed``, ``changes``, ``fit_converged``}}}], most severe first.
- ``combined_prediction``: all recommendations at once (same shape as ``predicted``), or
  null when fewer than two are simulated.
- ``cannot_judge``: what could not be decided and what would decide it.
- ``notes``: checks that passed or did not apply; ``warnings``: problems met on the way
  (invalid intervals, missing privileges).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

SCHEMA = "innoflush.advice/1"


EXIT_NOTHING, EXIT_RECOMMENDATIONS, EXIT_UNEXPLAINED = 0, 3, 4


def build_report(*, facts, conn_public: dict, datadir_fs, device, durability: str,
                 interval_s: float, samples: int, intervals, observed, fit, evaluation,
                 combined, warnings: list[str], evidence=None, candidates=(),
                 predictions_wanted: bool = False, source: dict | None = None) -> dict:
    findings = [f.to_dict() for f in evaluation.findings]
    unexplained = predictions_wanted and fit is not None and not fit.explained
    live = not source or source.get("kind") == "live"
    return {
        "schema": SCHEMA,
        # when the server was read (a capture's own time is not known: null)
        "taken_at": (datetime.now(UTC).isoformat(timespec="seconds") if live else None),
        "source": source or {"kind": "live", "path": None, "snapshots": samples + 1},
        "exit_code": (EXIT_UNEXPLAINED if unexplained
                      else EXIT_RECOMMENDATIONS if findings else EXIT_NOTHING),
        "server": {
            "title": facts.title, "product": facts.product, "version": facts.version,
            "version_comment": facts.version_comment,
            "version_with_update": facts.version_with_update, "sim_flavor": facts.sim_flavor,
            "role": facts.role, "role_detail": facts.role_detail, "datadir": facts.datadir,
            "datadir_filesystem": datadir_fs, "connection": conn_public,
            "replication": facts.replication.to_dict() if facts.replication else None,
        },
        "settings": {
            "innodb_flush_method": facts.flush_method,
            "flush_method_source": facts.flush_method_source,
            "innodb_flush_log_at_trx_commit": facts.trx_commit,
            "innodb_flush_log_at_timeout": facts.flush_log_at_timeout,
            "log_bin": facts.log_bin, "sync_binlog": facts.sync_binlog,
            "innodb_doublewrite": facts.doublewrite,
            "innodb_use_fdatasync": facts.use_fdatasync,
            "innodb_io_capacity": facts.io_capacity,
            "innodb_io_capacity_max": facts.io_capacity_max,
            "redo_capacity_bytes": facts.redo_capacity_bytes,
            "innodb_buffer_pool_size": facts.buffer_pool_bytes,
            "variables": facts.variables,
        },
        "device": device.to_dict() if device else None,
        "durability": durability,
        "ignored_rules": list(evaluation.ignored),
        "sampling": {"interval_s": interval_s, "samples": samples,
                     "intervals": [iv.to_dict() for iv in intervals]},
        "observed": observed.to_dict() if observed else None,
        "workload": evidence.to_dict() if evidence is not None else None,
        "fit": fit.to_dict() if fit else None,
        "candidates": [c.to_dict() for c in candidates],
        "findings": findings,
        "combined_prediction": combined,
        "cannot_judge": list(evaluation.cannot_judge),
        "notes": list(facts.notes) + list(evaluation.notes),
        "warnings": list(warnings),
    }


def to_json(report: dict) -> str:
    return json.dumps(report, indent=2, sort_keys=False, default=str) + "\n"
