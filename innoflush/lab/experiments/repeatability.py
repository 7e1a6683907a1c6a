"""How far one run of a configuration is from another run of the same configuration, in
the same `lab validate --workload-cmd` run (pure): the measurement's own resolution.

A measured change is one run over another, so it carries two runs' noise. Where the
matrix ran the same server settings twice for the same workload and connections (the
before runs of the `trx-commit` and `no-fsync` cells are both O_DIRECT at trx_commit=1,
binary log off) or made replicates, the pairs of identical runs say how large a change
the host makes up by itself:

- **within ×/÷FACTOR**: the share of identical pairs within ×/÷FACTOR of each other.
  A perfect model, judged against one run a side, is within ×/÷FACTOR of the measured
  ratio in about that share of cells (the measured ratio is the true one times a ratio
  of two runs' noise, which is what an identical pair is): a model within about as
  often as the host's pairs cannot be told apart from perfect.
- **the 90th percentile of the difference**: a measured change smaller than it is one
  the host makes up one time in ten; the direction of such a change cannot be told from
  one run a side. ``direction_beyond_noise`` judges the direction on the cells whose
  measured change is larger.

With replicates a cell's measured ratio is a mean over them, less noisy than one run a
side, and the share is a floor. On the 2-vCPU VM the runs of docs/validation/ were made
on, most identical pairs were within ×/÷1.3 of each other and few within the band a
flat change is judged by (scripts/repeatability.py;
docs/validation/notebook/2026-11-27-what-one-run-can-tell-host-noise.md).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .change_judging import FACTOR, classify


def _settings_key(run: dict) -> tuple | None:
    s = run.get("settings")
    if not s or not run.get("tps") or run.get("settings_match") is False:
        return None
    return tuple(sorted((k, str(v)) for k, v in s.items()))


def repeat_pairs(devices: list[dict]) -> list[dict]:
    """Pairs of runs of identical settings, workload and connections on one device:
    the before (or after) runs of different cells, and each cell's replicates of one
    side. [{``device``, ``workload``, ``connections``, ``tps`` [a, b], ``ratio`` b/a}]."""
    pairs: list[dict] = []
    for dev in devices:
        groups: dict[tuple, list[float]] = {}
        for cell in dev.get("cells", []):
            if "measured_ratio" not in cell:
                continue
            head = (cell["workload"], cell["connections"])
            reps = cell.get("replicates") or []
            for side in ("before", "after"):
                key = _settings_key(cell.get(side) or {})
                if key is None:
                    continue
                if len(reps) > 1:
                    # each replicate is a run; the side's figures are their mean
                    tps = [(r.get(side) or {}).get("tps") for r in reps]
                    runs = [t for t in tps if t]
                else:
                    runs = [cell[side]["tps"]]
                groups.setdefault((*head, key), []).extend(runs)
        for (workload, conns, _), runs in groups.items():
            for a, b in itertools.combinations(runs, 2):
                pairs.append({"device": dev["name"], "workload": workload,
                              "connections": conns, "tps": [a, b],
                              "ratio": round(b / a, 4)})
    return pairs


def repeatability(pairs: list[dict], factor: float = FACTOR) -> dict:
    """``pairs``, ``within_factor`` ("k/n"), ``within_factor_share``,
    ``median_difference_pct`` and ``p90_difference_pct`` (the difference of a pair:
    the larger run over the smaller, less 1); figures None without pairs."""
    diffs = sorted(abs(math.log(p["ratio"])) for p in pairs if p["ratio"] > 0)
    n = len(diffs)
    inside = sum(1 for d in diffs if d <= math.log(factor) + 1e-9)
    if not n:
        return {"pairs": 0, "within_factor": "0/0", "within_factor_share": None,
                "median_difference_pct": None, "p90_difference_pct": None}
    return {"pairs": n, "within_factor": f"{inside}/{n}",
            "within_factor_share": round(inside / n, 3),
            "median_difference_pct": round(100 * math.expm1(float(np.median(diffs))), 1),
            "p90_difference_pct": round(
                100 * math.expm1(float(np.percentile(diffs, 90))), 1)}


# Below this share of identical pairs within ×/÷FACTOR, one run a side cannot tell a
# model within ×/÷FACTOR nine times in ten from a perfect one; fewer pairs than
# MIN_PAIRS say too little of the host to warn on.
RESOLUTION_SHARE = 0.9
MIN_PAIRS = 5


def resolution_warning(rep: dict, factor: float = FACTOR) -> str | None:
    """A warning when this run's own identical pairs show it cannot judge ×/÷factor
    finely (see RESOLUTION_SHARE); None otherwise."""
    share = rep.get("within_factor_share")
    if rep.get("pairs", 0) < MIN_PAIRS or share is None or share >= RESOLUTION_SHARE:
        return None
    return (f"runs of identical settings were within ×/÷{factor:g} of each other in only "
            f"{rep['within_factor']} pairs ({share:.0%}): a cell's \"within ×/÷{factor:g}\" "
            f"is bounded by this host's own noise (90th percentile "
            f"{rep['p90_difference_pct']:.0f} %), not only by the model; --replicates 2 or a "
            "longer --duration narrows it")


def judged_beyond_noise(cells: list[dict], band_pct: float) -> list[tuple[dict, bool]]:
    """(cell, right) for the cells with a prediction whose measured change is larger
    than band_pct (either way) and than the cell's own replicates' spread
    (``noise_band_pct``: a change its replicates disagree on by more is theirs to
    decide, not the run's); right: the predicted direction (flat within ±3 %) is the
    measured one."""
    out = []
    for c in cells:
        m, p = c.get("measured_ratio"), c.get("predicted_ratio")
        band = max(band_pct, c.get("noise_band_pct") or 0.0)
        if m is None or p is None or classify(m, band) == "flat":
            continue
        out.append((c, classify(p) == classify(m, band)))
    return out


def direction_beyond_noise(cells: list[dict], band_pct: float | None) -> str | None:
    """"k/n" of judged_beyond_noise: directions right of the cells judged; None without
    a band."""
    if band_pct is None:
        return None
    judged = judged_beyond_noise(cells, band_pct)
    return f"{sum(right for _, right in judged)}/{len(judged)}"


__all__ = ["MIN_PAIRS", "RESOLUTION_SHARE", "direction_beyond_noise", "judged_beyond_noise",
           "repeat_pairs", "repeatability", "resolution_warning"]
