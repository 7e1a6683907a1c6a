"""Judging a predicted change against a measured one, with the measurement's noise (pure).

One before and one after run of a few seconds cannot tell a small change's direction on
a shared VM, where the same configuration measures differently minutes apart
(docs/validation/notebook/2026-11-25-first-sysbench-run.md): with
``lab validate --workload-cmd --replicates N`` every cell's before and after runs are
made N times (before, after; after, before; ... — A B B A, so a drift of the host
weighs on both sides alike), and the prediction is judged against the replicates'
spread:

- the **measured ratio** is the mean after TPS over the mean before TPS;
- each replicate has its own ratio (its after run over its before run); their
  **spread** is half their range, in % of the measured ratio (none with one replicate);
- the **noise band** is the larger of ``NOISE_PCT`` (3 %) and the spread: a measured
  change within it is **flat (within noise)** when the spread made it so; a predicted
  change is flat at the measurement's resolution when it is within the band too, and
  only then right against a flat measurement;
- **within ×/÷FACTOR**: the predicted ratio within ×/÷FACTOR of some ratio of the
  measured one's spread, [ratio × (1 - spread), ratio × (1 + spread)] (the measured
  ratio itself with one replicate).

With one replicate this is the judgment lab validate always made (flat within ±3 %,
within ×/÷FACTOR of the one measured ratio).
"""

from __future__ import annotations

from ...advisor.check import FACTOR  # a predicted ratio within ×/÷ this is "within"
from .prediction_accuracy import NOISE_PCT


def spread_pct(measured: float | None, ratios: list[float]) -> float | None:
    """Half the range of the replicates' own ratios, in % of the measured ratio; None
    with fewer than two replicates."""
    have = [r for r in ratios if r is not None]
    if measured is None or measured <= 0 or len(have) < 2:
        return None
    return round(100.0 * (max(have) - min(have)) / 2.0 / measured, 1)


def noise_band_pct(spread: float | None) -> float:
    """The band within which a measured change is flat: ±NOISE_PCT, or the replicates'
    spread where that is wider."""
    return max(NOISE_PCT, spread or 0.0)


def classify(ratio: float | None, band_pct: float = NOISE_PCT) -> str | None:
    """down, flat (within ±band_pct) or up; None without a ratio."""
    if ratio is None:
        return None
    pct = round(100.0 * (ratio - 1.0), 3)      # the ratios are reported to 4 decimals
    if abs(pct) <= band_pct:
        return "flat"
    return "up" if pct > 0 else "down"


def judge(predicted: float | None, measured: float | None,
          replicate_ratios: list[float] | None = None) -> dict:
    """The verdicts of one cell: ``ratio_factor`` (predicted / measured),
    ``within_factor``, ``spread_pct``, ``noise_band_pct`` and ``direction``
    {``measured``, ``predicted``, ``right``, ``within_noise``} (see the module doc)."""
    spread = spread_pct(measured, replicate_ratios or [])
    band = noise_band_pct(spread)
    factor = (round(predicted / measured, 4) if predicted is not None and measured
              else None)
    within = None
    if factor is not None and measured is not None and predicted is not None:
        s = (spread or 0.0) / 100.0
        lo, hi = measured * (1.0 - s) / FACTOR, measured * (1.0 + s) * FACTOR
        # compared at 3 decimals: the ratios are reported (and read back) to 4
        within = round(lo, 3) <= round(predicted, 3) <= round(hi, 3)
    m_dir = classify(measured, band)
    within_noise = m_dir == "flat" and classify(measured) != "flat"
    if m_dir == "flat":
        # a flat measurement can confirm only a change smaller than its noise
        p_dir = classify(predicted, band)
    else:
        p_dir = classify(predicted)
    return {"ratio_factor": factor, "within_factor": within, "spread_pct": spread,
            "noise_band_pct": band,
            "direction": {"measured": m_dir, "predicted": p_dir,
                          "right": None if m_dir is None or p_dir is None else m_dir == p_dir,
                          "within_noise": within_noise}}


__all__ = ["FACTOR", "classify", "judge", "noise_band_pct", "spread_pct"]
