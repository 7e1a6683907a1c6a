"""What the lab takes from an ``advise`` report about an external workload, read
defensively: a key advise does not (yet) give reads as "no prediction", never a crash.

The interface (``innoflush advise --json``):

- ``fit``: whether the model explains what advise saw — ``explained`` (bool),
  ``checks``, ``reasons`` — and ``workload``, the simulator Workload it fitted from its
  measurements of the live workload;
- ``candidates``: the price of every candidate change, each ``{id, setting, current,
  candidate, changes {ServerConfig field: value}, advised, finding, unsafe, predicted:
  {current, candidate: {tps, data_fsyncs_per_s, commit_latency_p50_ms}, change:
  {tps_pct, data_fsyncs_per_s_pct}, range: {tps_pct: [lo, hi]}} | null}``.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from ...errors import InnoflushError
from ...simulator import Workload

NO_PREDICTION = "advise gave no prediction"


def _num(x) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


def advise_fit(report: dict | None, error: str | None = None) -> dict:
    """advise's fit of the workload: ``ran`` (advise finished), ``error``, ``explained``
    (True/False, None: advise did not say), ``checks``, ``reasons``, ``workload`` (its
    fitted Workload as a dict, or None), ``source``, ``converged``."""
    out: dict[str, Any] = {"ran": isinstance(report, dict), "error": error, "explained": None,
                           "checks": [],
           "reasons": [], "workload": None, "source": None, "converged": None,
           "device_scale": 1.0}
    if not isinstance(report, dict):
        out["error"] = error or "advise did not finish"
        out["reasons"] = [f"advise did not run to its end: {out['error']}"]
        return out
    fit = report.get("fit")
    if not isinstance(fit, dict):
        out["reasons"] = ["advise fitted no workload (no 'fit' in its report)"]
        return out
    explained = fit.get("explained")
    out["explained"] = explained if isinstance(explained, bool) else None
    checks = fit.get("checks")
    out["checks"] = checks if isinstance(checks, list | dict) else []
    reasons = fit.get("reasons")
    out["reasons"] = [str(r) for r in reasons] if isinstance(reasons, list) else []
    if isinstance(fit.get("workload"), dict):
        out["workload"] = dict(fit["workload"])
    out["source"] = fit.get("source") if isinstance(fit.get("source"), str) else None
    scale = _num(fit.get("device_scale"))
    out["device_scale"] = scale if scale and scale > 0 else 1.0
    out["converged"] = fit.get("converged") if isinstance(fit.get("converged"), bool) \
        else None
    return out


def profile_as_seen(fit: dict, profile):
    """The device profile as advise's fit used it: scaled to the server's commit wait
    when advise found the server's storage faster or slower than the profile."""
    f = fit.get("device_scale") or 1.0
    if abs(f - 1.0) < 1e-9:
        return profile
    return profile.scaled(f, "advise: the device as the server saw it")


def fitted_workload(fit: dict) -> tuple[Workload | None, list[str]]:
    """The simulator Workload of advise's fit (keys this simulator does not know are
    left out, and said); (None, why) when there is none or it is not usable."""
    d = fit.get("workload")
    if not isinstance(d, dict):
        return None, [fit.get("error") or "advise fitted no workload"]
    known = {f.name for f in fields(Workload)}
    notes = []
    extra = sorted(set(d) - known)
    if extra:
        notes.append(f"advise's workload keys this simulator does not know, left out: "
                     f"{', '.join(extra)}")
    try:
        wl = Workload.from_dict({k: v for k, v in d.items() if k in known})
        wl.validate()
    except (InnoflushError, TypeError, ValueError) as exc:
        return None, notes + [f"advise's fitted workload is not usable: {exc}"]
    return wl, notes


def candidates(report: dict | None) -> list[dict]:
    """advise's candidate changes (the well-formed ones), [] when it gave none."""
    got = report.get("candidates") if isinstance(report, dict) else None
    return [c for c in got if isinstance(c, dict)] if isinstance(got, list) else []


def _same(a, b) -> bool:
    return str(a).strip().upper() == str(b).strip().upper()


def find_candidate(report: dict | None, setting: str, value, sim_field: str | None = None,
                   sim_value=None) -> dict | None:
    """The candidate that sets `setting` to `value` (or whose ``changes`` set the
    simulator field `sim_field` to `sim_value`); None when advise priced no such change."""
    for c in candidates(report):
        if _same(c.get("setting", ""), setting) and _same(c.get("candidate", ""), value):
            return c
    if sim_field is not None:
        for c in candidates(report):
            ch = c.get("changes")
            if isinstance(ch, dict) and sim_field in ch and _same(ch[sim_field], sim_value):
                return c
    return None


def _ratio_span(span: object) -> list[float] | None:
    """A prediction's {"tps_pct": [lo, hi]} (its range or its interval) as after / before
    ratios [lo, hi]; None when it is missing or malformed."""
    t = span.get("tps_pct") if isinstance(span, dict) else None
    if not (isinstance(t, list | tuple) and len(t) == 2 and all(_num(x) is not None
                                                                 for x in t)):
        return None
    lo, hi = sorted(float(x) for x in t)
    return [round(1.0 + lo / 100.0, 4), round(1.0 + hi / 100.0, 4)]


def candidate_prediction(c: dict | None) -> dict:
    """A candidate's predicted effect: ``ratio`` (after / before TPS = 1 + tps_pct/100),
    ``ratio_range`` [lo, hi] (from its range, or None), ``ratio_interval`` [lo, hi] (from
    its interval: the model's validated error, or None), ``tps_pct``, the data fsyncs/s
    ``current``, ``candidate`` and ``settled`` (once the checkpoint age sits at the
    page cleaner's async point; None where the prediction has no horizon), ``advised``,
    ``unsafe``, ``id``, ``finding``; and
    ``missing`` (why there is no ratio, or None)."""
    out: dict[str, Any] = {"id": None, "advised": None, "unsafe": None, "finding": None,
                           "tps_pct": None,
           "ratio": None, "ratio_range": None, "ratio_interval": None,
           "tps_current": None, "tps_candidate": None,
           "data_fsyncs_per_s_current": None, "data_fsyncs_per_s_candidate": None,
           "data_fsyncs_per_s_settled": None, "missing": None}
    if not isinstance(c, dict):
        out["missing"] = NO_PREDICTION + " (it priced no such change)"
        return out
    out["id"] = c.get("id") if isinstance(c.get("id"), str) else None
    out["advised"] = c.get("advised") if isinstance(c.get("advised"), bool) else None
    out["unsafe"] = c.get("unsafe") if isinstance(c.get("unsafe"), str) else None
    out["finding"] = c.get("finding") if isinstance(c.get("finding"), str) else None
    p = c.get("predicted")
    if not isinstance(p, dict):
        out["missing"] = NO_PREDICTION + " (the change has no predicted effect)"
        return out
    cur: dict = p["current"] if isinstance(p.get("current"), dict) else {}
    cand: dict = p["candidate"] if isinstance(p.get("candidate"), dict) else {}
    change: dict = p["change"] if isinstance(p.get("change"), dict) else {}
    out["tps_current"], out["tps_candidate"] = _num(cur.get("tps")), _num(cand.get("tps"))
    out["data_fsyncs_per_s_current"] = _num(cur.get("data_fsyncs_per_s"))
    out["data_fsyncs_per_s_candidate"] = _num(cand.get("data_fsyncs_per_s"))
    settled = p.get("settled")
    if isinstance(settled, dict):
        out["data_fsyncs_per_s_settled"] = _num(settled.get("data_fsyncs_per_s"))
    pct = _num(change.get("tps_pct"))
    if pct is None and out["tps_current"] and out["tps_candidate"] is not None:
        pct = 100.0 * (out["tps_candidate"] / out["tps_current"] - 1.0)
    if pct is None:
        out["missing"] = NO_PREDICTION + " (no TPS change in its prediction)"
        return out
    out["tps_pct"] = round(pct, 2)
    out["ratio"] = round(1.0 + pct / 100.0, 4)
    out["ratio_range"] = _ratio_span(p.get("range"))
    out["ratio_interval"] = _ratio_span(p.get("interval"))
    return out


__all__ = ["NO_PREDICTION", "advise_fit", "candidate_prediction", "candidates",
           "find_candidate", "fitted_workload"]
