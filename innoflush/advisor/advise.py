"""The advisor as one library call: facts, sampling, rules, fit, prediction, report."""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise

from ..live.activity import Activity
from ..live.evidence import evidence as workload_evidence
from ..live.evidence import redo_syncs_known
from ..live.facts import (
    facts_from_variables,
    filesystem_of,
    gather_facts,
    local_datadir,
    same_filesystem,
)
from ..live.observed import observe
from ..live.sampling import POLLED, combine, interval_between
from ..live.workload import measure_handoff_cost, measure_workload
from .candidates import candidate_changes, mark_advised
from .device import device_from_profile, measured_on_these_disks, reconcile_with_sys
from .fit import fit_workload, workload_from_profile
from .predict import Predictor, changes_key, findings_changes, predict_findings
from .report import build_report
from .request import AdviseRequest
from .rules import Context, evaluate
from .rules.commit import priced_trx_commit_2
from .rules.o_direct_no_fsync import drop_unprofitable_no_fsync

# Keyword arguments for innoflush.measure.measure_profile; None: its --quick preset.
MEASURE_KW: dict | None = None


def measure_device(datadir: str):
    """Probe the datadir's filesystem now (innoflush.measure, --quick preset): the files
    it writes are its own, in the datadir, and removed. Returns (DeviceFacts, profile)."""
    from ..errors import UsageError

    try:
        from .. import measure
    except ImportError:
        measure = None
    probe = getattr(measure, "measure_profile", None) if measure else None
    if probe is None:
        raise UsageError("--measure is not available in this build (the device probe "
                         "innoflush.measure.measure_profile is missing): measure with "
                         "`innoflush measure DIR` and pass --profile")
    kw = MEASURE_KW
    if kw is None:
        from ..measure.run import QUICK_DURATION_S
        kw = {"tests": measure.quick_tests(), "duration_s": QUICK_DURATION_S, "quick": True}
    profile = probe(datadir, "advise-measured", "measured now in the server's datadir", **kw)
    return device_from_profile(profile, source="measure"), profile


def advise(session, request: AdviseRequest, *, conn_public: dict, is_local: bool,
           progress=None, open_session=None, executor=None,
           after_window: Callable[[], object] | None = None) -> dict:
    """Read the server, measure its workload over the request's interval(s), evaluate the
    rules, and (with a device profile) price every candidate change; the report as a dict.

    open_session: a callable giving a second read-only session, for the processlist
    samples that measure the connections and where their time goes (without it the
    workload is not measured and no effect is predicted). executor
    (innoflush.executor.SimExecutor, ``--scheduler``): where the predictions' simulations
    run; default a local process pool made for this call. after_window: called once the
    workload is measured, before the fit and the predictions (the lab holds them there
    until its own measured window has closed, so their CPU does not weigh on the run it
    measures)."""
    request.check()   # an unknown rule id fails before the server is read
    profile = request.profile
    warnings: list[str] = []
    facts = gather_facts(session)
    if request.predicts and request.workload_profile is None and open_session is not None:
        _require_processlist(session)
    datadir = local_datadir(facts, is_local)
    datadir_fs = filesystem_of(datadir) if datadir else None
    dblwr_same = None
    if facts.doublewrite_dir and datadir:
        dblwr_same = same_filesystem(datadir, facts.doublewrite_dir)
    device = None
    # a profile measured on the disks under the datadir is this storage: its verdict stands
    # and the fit may scale it however far the disk moved (fit.device_as_seen)
    same_storage = False
    if profile is not None:
        device = device_from_profile(profile)
        if datadir:   # the profile against what /sys says of the datadir's disk
            from ..measure.facts import gather_facts as storage_facts
            here = storage_facts(datadir)
            same_storage = measured_on_these_disks(profile, here)
            mismatch = (None if same_storage else
                        reconcile_with_sys(device, here.get("disks") or []))
            if mismatch:
                warnings.append(mismatch)
    elif request.measure:
        from ..errors import UsageError

        if not datadir:
            raise UsageError("--measure needs the server's datadir on this host (connect "
                             "through localhost or its socket, as a user that can read "
                             f"{facts.datadir or 'the datadir'}); otherwise use --profile")
        device, profile = measure_device(datadir)
        same_storage = _measured_here(profile, datadir)
        warnings.append("--measure ran while the server was running: the latencies include "
                        "contention with its own I/O")
    intervals, evidence = measure_workload(
        session, facts, interval_s=request.interval_s, samples=request.samples,
        open_session=open_session, connections=request.connections,
        cpu_cores=request.cpu_cores, is_local=is_local, progress=progress)
    if after_window is not None:
        after_window()
    if evidence is not None:
        measure_handoff_cost(evidence, is_local)
    return _assess(facts, intervals, evidence, request,
                   source={"kind": "live", "path": None, "snapshots": request.samples + 1},
                   conn_public=conn_public, datadir=datadir, datadir_fs=datadir_fs,
                   doublewrite_same_fs=dblwr_same, device=device, profile=profile,
                   interval_s=request.interval_s, samples=request.samples,
                   warnings=warnings, executor=executor, same_storage=same_storage)


def _require_processlist(session) -> None:
    """A prediction fits the workload's connections and their time inside the server
    from the processlist: an account that sees only its own connections cannot measure
    them, and --connections alone does not give where their time goes. Refused before
    the window (and a --measure), with the privilege's name (exit 2)."""
    from ..live.activity import processlist_scope
    from ..live.connect import ConnectError

    if not processlist_scope(session)[1]:
        raise ConnectError(
            "missing privilege: PROCESS (the processlist shows only this account's "
            "connections, so the workload's connections and their time inside the server "
            "cannot be measured for a prediction): GRANT PROCESS ON *.* to the account (or "
            "SELECT ON performance_schema.threads, performance_schema on), give --workload "
            "with --connections, or --no-predict for the rules alone", "privilege")


def _measured_here(profile, datadir: str) -> bool:
    from ..measure.facts import gather_facts as storage_facts
    try:
        return measured_on_these_disks(profile, storage_facts(datadir))
    except Exception:  # noqa: BLE001 - sysfs facts are optional
        return False


def _assess(facts, intervals, evidence, request: AdviseRequest, *, source: dict,
            conn_public: dict | None, datadir: str | None, datadir_fs: str | None,
            doublewrite_same_fs: bool | None, device, profile, interval_s: float,
            samples: int, warnings: list[str], cannot_judge: list[str] = (),
            executor=None, same_storage: bool = False) -> dict:
    """Rules, fit, predictions and the report on what was read (live or captured).
    profile: the request's, or the one --measure probed; interval_s and samples: as
    sampled (a capture's own). executor: where the predictions run (None: a local
    process pool, closed here)."""
    durability, connections, seed = request.durability, request.connections, request.seed
    cpu_cores, workload_profile = request.cpu_cores, request.workload_profile
    dblwr_same = doublewrite_same_fs
    for iv in intervals:
        if not iv.valid:
            warnings.append(f"interval {iv.index + 1} ignored: {iv.problem}")
    total = combine(intervals)
    observed = observe(total, facts.product, facts.log_bin, facts.trx_commit,
                       facts.flush_log_at_timeout, facts.redo_write_through,
                       intervals=sum(1 for iv in intervals if iv.valid),
                       redo_syncs_known=redo_syncs_known(evidence))
    if facts.replica_status_readable is False:
        warnings.append("replica status not readable (missing REPLICATION CLIENT / SLAVE "
                        "MONITOR privilege): role taken from read_only")
    ctx = Context(facts=facts, observed=observed, device=device, durability=durability,
                  datadir_fs=datadir_fs, doublewrite_same_fs=dblwr_same)
    ev = evaluate(ctx, ignore=request.ignore_rules)
    ev.cannot_judge.extend(cannot_judge)
    fit = combined = None
    cands = candidate_changes(facts, device)
    mark_advised(cands, ev.findings)
    if profile is not None and request.predict:
        if observed.commits > 0:
            if workload_profile is not None:
                fit = workload_from_profile(facts, observed, profile, workload_profile,
                                            connections=connections, cpu_cores=cpu_cores,
                                            seed=seed, evidence=evidence)
            else:
                fit = fit_workload(facts, observed, evidence, profile, cpu_cores=cpu_cores,
                                   datadir=datadir, seed=seed, same_storage=same_storage)
            if fit.explained and fit.workload is not None:
                combined = _predict(fit, fit.profile or profile, seed, cands, ev,
                                    executor, ctx)
            else:
                warnings += [f"cannot predict this workload: {x}" for x in fit.reasons]
                warnings.append(
                    "no effect is predicted: the evidence lacks inputs the model needs "
                    "(each named above, with what supplies it)" if fit.inputs_missing else
                    "no effect is predicted: the model does not explain what this server "
                    "was seen doing (see the fit's checks)")
        else:
            ev.cannot_judge.append("predicted effects: no write transactions were committed "
                                   "during the interval, so there is no workload to measure")
    if evidence is not None:
        warnings += evidence.notes
    return build_report(facts=facts, conn_public=conn_public, datadir_fs=datadir_fs,
                        device=device, durability=durability, interval_s=interval_s,
                        samples=samples, intervals=intervals, observed=observed, fit=fit,
                        evaluation=ev, combined=combined, warnings=warnings,
                        evidence=evidence, candidates=cands,
                        predictions_wanted=profile is not None and request.predict,
                        source=source)


def _predict(fit, profile, seed: int, cands, ev, executor, ctx) -> dict | None:
    """Every candidate's and finding's predicted effect; the combined prediction. All
    the simulations (the current settings and every change, each at the workload's
    variants) go to the executor in one batch."""
    own = executor is None
    if own:
        from ..executor import make_executor

        executor = make_executor()
    try:
        predictor = Predictor(fit, profile, seed, executor=executor)
        predictor.prefetch([c.changes for c in cands] + findings_changes(ev.findings))
        for c in cands:
            c.predicted = predictor.predict(c.changes)
        known = {changes_key(c.changes): c.predicted for c in cands}
        priced = lambda ch: known.get(changes_key(ch))   # noqa: E731
        # the rules that wait for a price: each may drop or add a finding
        if drop_unprofitable_no_fsync(ev, priced) | priced_trx_commit_2(ev, ctx, priced):
            for c in cands:   # advised anew
                c.advised, c.finding = False, None
            mark_advised(cands, ev.findings)
        return predict_findings(ev.findings, predictor, known)
    finally:
        if own:
            executor.close()


# What a capture cannot hold: the advisor's live-only evidence, said once in cannot_judge.
OFFLINE_CANNOT_JUDGE = (
    "offline capture: the connections, their time inside and outside the server and the "
    "server's CPU are read live (processlist, /proc) and are not in a capture — "
    "--connections and --cpu-cores give the first and the host's cores, --workload the "
    "per-transaction costs",
    "offline capture: the datadir's filesystem and where innodb_doublewrite_dir lies are "
    "read on the server's host — the rules that need them take the --profile's filesystem "
    "or cannot judge offline",
)


def advise_capture(capture, request: AdviseRequest, *, executor=None) -> dict:
    """advise() on a capture (innoflush.live.capture.read_capture) instead of a session:
    the same facts, intervals, rules, fit and report, without what only a live server on
    this host shows (processlist, /proc, the datadir's filesystem), which the report's
    cannot_judge names; the capture's snapshots are the sampling (the request's
    interval_s and samples are not used). executor: as advise()'s."""
    request.check()
    profile = request.profile
    rows = capture.replica_rows
    facts = facts_from_variables(capture.variables, rows,
                                 True if rows is not None else None)
    if rows is None and facts.role == "primary":
        facts.role_detail = ("no SHOW REPLICA STATUS in the capture: taken as not a "
                             "replica, read_only being OFF")
    device = device_from_profile(profile) if profile is not None else None
    snaps = capture.snapshots
    intervals = []
    for i, (a, b) in enumerate(pairwise(snaps)):
        # the gauges the live sampler polls: here only as the snapshots saw them
        polls = {k: [b.status[k]] for k in POLLED if k in b.status}
        intervals.append(interval_between(i, a, b, polls))
    evidence = None
    if any(iv.valid for iv in intervals):
        evidence = workload_evidence(
            facts, combine(intervals),
            Activity(None, problem="offline capture: no processlist samples"), None,
            None, None, own_statements=len(intervals), pid=None,
            pid_reason="offline capture: the server's /proc is not in it",
            connections_option=request.connections, cpu_cores_option=request.cpu_cores)
    warnings = list(capture.notes)
    seconds = snaps[-1].t - snaps[0].t
    return _assess(facts, intervals, evidence, request, source=capture.source(),
                   conn_public=None, datadir=None, datadir_fs=None,
                   doublewrite_same_fs=None, device=device, profile=profile,
                   interval_s=round(seconds / max(1, len(intervals)), 3),
                   samples=len(intervals), warnings=warnings,
                   cannot_judge=OFFLINE_CANNOT_JUDGE, executor=executor)
