"""The predicted effect of each recommendation: current vs recommended config, simulated.

Both runs use the fitted workload, the device profile, the same seed (common random
numbers: the difference is the setting's, not the dice's) and a short simulated duration.
"""

from __future__ import annotations

from dataclasses import replace

from ..simulator import simulate
from .fit import Fit
from .rules import Finding


def metrics(r) -> dict:
    d = r.duration_s or 1.0
    return {
        "tps": round(r.tps, 2),
        "commit_latency_p50_ms": r.commit_latency_ms.get("p50"),
        "commit_latency_p99_ms": r.commit_latency_ms.get("p99"),
        "data_fsyncs_per_s": round(r.status.get("Innodb_data_fsyncs", 0) / d, 2),
        "syncs_per_s": dict(r.syncs_per_s),
    }


def _change(cur: dict, rec: dict) -> dict:
    def pct(a, b):
        if a in (None, 0) or b is None:
            return None
        return round(100.0 * (b - a) / a, 1)
    return {"tps_pct": pct(cur["tps"], rec["tps"]),
            "commit_latency_p50_pct": pct(cur["commit_latency_p50_ms"],
                                          rec["commit_latency_p50_ms"]),
            "commit_latency_p99_pct": pct(cur["commit_latency_p99_ms"],
                                          rec["commit_latency_p99_ms"]),
            "data_fsyncs_per_s_pct": pct(cur["data_fsyncs_per_s"], rec["data_fsyncs_per_s"])}


class Predictor:
    def __init__(self, fit: Fit, profile, seed: int = 1, duration_s: float | None = None):
        self.fit = fit
        self.profile = profile
        self.seed = seed
        self.duration_s = duration_s or max(fit.sim_duration_s, 1.0)
        self._current: dict | None = None

    def run(self, changes: dict) -> dict:
        cfg = replace(self.fit.config, **changes)
        r = simulate(cfg, self.fit.workload, self.profile, duration_s=self.duration_s,
                     seed=self.seed)
        return metrics(r)

    @property
    def current(self) -> dict:
        if self._current is None:
            self._current = self.run({})
        return self._current

    def predict(self, changes: dict) -> dict:
        rec = self.run(changes)
        return {"current": self.current, "recommended": rec,
                "change": _change(self.current, rec),
                "sim": {"profile": self.profile.name, "duration_s": self.duration_s,
                        "seed": self.seed, "changes": changes,
                        "fit_converged": self.fit.converged}}


def predict_findings(findings: list[Finding], fit: Fit, profile, seed: int = 1
                     ) -> dict | None:
    """Fill each finding's ``predicted``; return the prediction of all of them together."""
    p = Predictor(fit, profile, seed)
    combined: dict = {}
    for f in findings:
        if f.sim_changes:
            f.predicted = p.predict(f.sim_changes)
            combined.update(f.sim_changes)
    if len([f for f in findings if f.sim_changes]) > 1:
        return p.predict(combined)
    return None
