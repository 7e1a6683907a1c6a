"""Today's model on a past change validation: advise's fit and prediction run again,
offline, on what each cell's advise report measured (no server).

`innoflush lab validate --workload-cmd ... --json` keeps, for every cell, advise's whole
report of the before run (the counters, the processlist, /proc) and the device profile
each device was predicted on. A change to the model is judged on those same measured
cells (bench/refit_changes.py), and the model's error on them gives the interval a
prediction carries (scripts/prediction_error.py, advisor/error_bands.py).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

from ...advisor.fit import fit_workload
from ...advisor.predict import Predictor
from ...live.evidence import Input, WorkloadEvidence
from ...live.facts import facts_from_variables
from ...live.observed import Observed
from ...profiles import DeviceProfile
from ...simulator import ServerConfig
from .change_cells import CHANGES, data_fsyncs_basis


def read_validation(path: str | Path) -> dict:
    """A `lab validate --workload-cmd --json` report, gzipped or not."""
    raw = Path(path).read_bytes()
    return json.loads(gzip.decompress(raw) if str(path).endswith(".gz") else raw)


def measured_cells(report: dict) -> Iterator[tuple[dict, dict, DeviceProfile]]:
    """(device, cell, profile) of every cell with an advise report and a measured ratio,
    on devices whose profile data the report kept."""
    for dev in report.get("devices", []):
        data = (dev.get("profile") or {}).get("data")
        if not data:
            continue
        profile = DeviceProfile.from_dict(data)
        for cell in dev.get("cells", []):
            if cell.get("advise_report") and cell.get("measured_ratio"):
                yield dev, cell, profile


def refit(cell: dict, profile: DeviceProfile, seed: int = 1,
          extend_bytes: int | None = None, tablespaces: int | None = None) -> dict:
    """Today's fit and predicted ratio for one measured cell. extend_bytes: the
    tablespaces' extension step where the report did not read it (reports made before
    advise read it); tablespaces: the files a flush batch syncs where the report did not
    read them (likewise)."""
    rep = cell["advise_report"]
    facts = facts_from_variables(rep["settings"]["variables"])
    observed = Observed.from_dict(rep["observed"])
    ev = WorkloadEvidence.from_dict(rep["workload"])
    if extend_bytes and ev.extend_bytes.value is None:
        ev.extend_bytes = Input(float(extend_bytes), "option", "--extend-bytes")
    if tablespaces and ev.tablespaces_written.value is None:
        ev.tablespaces_written = Input(float(tablespaces), "option", "--tablespaces")
    config = ServerConfig(**rep["fit"]["config"]) if rep.get("fit") else None
    fit = fit_workload(facts, observed, ev, profile, seed=seed, config=config)
    out: dict = {"explained": fit.explained, "reasons": fit.reasons, "ratio": None,
                 "range": None, "fsyncs_after": None, "fsyncs_basis": None,
                 "sim_before_err": None, "tps_after": None}
    if fit.simulated_tps and observed.commits_per_s:
        out["sim_before_err"] = 100 * (fit.simulated_tps / observed.commits_per_s - 1)
    if not fit.explained or fit.workload is None:
        return out
    change = CHANGES[cell["change"]]
    p = Predictor(fit, fit.profile or profile, seed).predict({change.sim_field:
                                                              change.sim_after})
    out["ratio"] = 1 + p["change"]["tps_pct"] / 100
    rg = p["range"]["tps_pct"]
    out["range"] = [1 + rg[0] / 100, 1 + rg[1] / 100] if rg else None
    # as lab validate sets it beside the after runs: the settled figure where they settled
    settled = (p.get("settled") or {}).get("data_fsyncs_per_s")
    basis = data_fsyncs_basis({"data_fsyncs_per_s_settled": settled,
                               "data_fsyncs_per_s_candidate":
                               p["recommended"]["data_fsyncs_per_s"]},
                              cell.get("after") or {}, cell.get("replicates"))
    out["fsyncs_after"], out["fsyncs_basis"] = basis
    out["tps_after"] = p["recommended"]["tps"]
    return out
