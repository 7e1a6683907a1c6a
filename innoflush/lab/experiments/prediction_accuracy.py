"""How close the predictions of a `lab validate` matrix came to its measurements (pure):
the mean absolute percentage error (MAPE) of each compared figure, and whether the model
got the direction of the O_DIRECT → O_DIRECT_NO_FSYNC change of Innodb_data_fsyncs/s
right; ``device_summary`` puts them together for one device's cells."""

from __future__ import annotations

# the figures whose MAPE is reported, and the targets for them (percent)
MAPE_FIGURES = ("tps", "commit_latency_p50_ms", "commit_latency_p99_ms", "data_fsyncs_per_s",
                "data_writes_per_s")
TARGETS = {"tps": 15.0, "commit_latency_p50_ms": 20.0, "data_fsyncs_per_s": 25.0,
           "data_writes_per_s": 25.0}
NOISE_PCT = 3.0     # a measured O_DIRECT -> O_DIRECT_NO_FSYNC change this small is "flat"


def mape(cells: list[dict], key: str, errors: str = "errors_pct") -> dict:
    """Mean absolute percentage error of one figure over the cells that have an error
    (None where the measured value was 0 or missing): {mape_pct, cells, excluded,
    within_target (cells whose |error| is within the figure's target), max_abs_pct}."""
    errs = [c[errors].get(key) for c in cells if c.get(errors)]
    have = [abs(e) for e in errs if e is not None]
    target = TARGETS.get(key)
    out = {"mape_pct": round(sum(have) / len(have), 1) if have else None,
           "cells": len(have), "excluded": len(errs) - len(have),
           "max_abs_pct": round(max(have), 1) if have else None}
    if target is not None:
        out["target_pct"] = target
        out["within_target"] = sum(1 for e in have if e <= target)
        out["met"] = (None if out["mape_pct"] is None   # no cell to judge
                      else out["mape_pct"] <= target)
    return out


def _sign(x: float | None, flat: float = 0.0) -> int | None:
    if x is None:
        return None
    if abs(x) <= flat:
        return 0
    return 1 if x > 0 else -1


def _change_pct(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or a == 0:
        return None
    return round(100.0 * (b / a - 1.0), 1)


def _mean(cells: list[dict], side: str, key: str) -> float | None:
    xs = [c[side].get(key) for c in cells]
    if not xs or any(x is None for x in xs):
        return None
    return sum(xs) / len(xs)


def _replicate_pairs(a: list[dict], b: list[dict]) -> list[tuple[dict, dict]]:
    """The O_DIRECT and O_DIRECT_NO_FSYNC cells of the same replicate."""
    by_b = {c.get("replicate", 1): c for c in b}
    return [(x, by_b[x.get("replicate", 1)]) for x in a if x.get("replicate", 1) in by_b]


def directions(cells: list[dict]) -> list[dict]:
    """Per (connections, trx_commit) with both O_DIRECT and O_DIRECT_NO_FSYNC cells: the
    change of Innodb_data_fsyncs/s (and per commit) measured and predicted, and whether
    the predicted direction is right: each change is classed down, flat (within
    ±NOISE_PCT: noise-sized; at trx_commit=1 the data fsyncs are nearly all redo syncs,
    which the flush method does not touch) or up, and right means the same class.
    ``sign_agrees_per_s``: the bare signs compared, flat or not.

    With replicates (``lab validate --replicates``) a side's figure is the mean of its
    cells, and each replicate's own change is classed too: when the replicates disagree
    (one says down, another flat), the measured direction is noise and the pair is
    ``undetermined`` — not judged right or wrong, and counted as such."""
    out = []
    keys = sorted({(c["connections"], c["trx_commit"]) for c in cells})
    for conns, tc in keys:
        side = {m: [c for c in cells if c["connections"] == conns and c["trx_commit"] == tc
                    and c["flush_method"] == m and "measured" in c]
                for m in ("O_DIRECT", "O_DIRECT_NO_FSYNC")}
        a, b = side["O_DIRECT"], side["O_DIRECT_NO_FSYNC"]
        if not a or not b:
            continue
        pairs = _replicate_pairs(a, b)
        row: dict = {"connections": conns, "trx_commit": tc, "replicates": len(pairs)}
        for per in ("per_s", "per_commit"):
            key = f"data_fsyncs_{per}"
            m = _change_pct(_mean(a, "measured", key), _mean(b, "measured", key))
            p = _change_pct(_mean(a, "predicted", key), _mean(b, "predicted", key))
            reps = [_change_pct(x["measured"].get(key), y["measured"].get(key))
                    for x, y in pairs]
            agree = len({_sign(r, NOISE_PCT) for r in reps if r is not None}) <= 1
            row[f"measured_change_{per}_pct"] = m
            row[f"predicted_change_{per}_pct"] = p
            row[f"replicate_changes_{per}_pct"] = reps
            row[f"replicates_agree_{per}"] = agree
            ms, ps = _sign(m, NOISE_PCT), _sign(p, NOISE_PCT)
            row[f"right_{per}"] = (None if ms is None or ps is None or not agree
                                   else ms == ps)
            if per == "per_s":
                row["sign_agrees_per_s"] = (None if m is None or p is None
                                            else _sign(m) == _sign(p))
        row["measured_flat"] = (row["measured_change_per_s_pct"] is not None
                                and abs(row["measured_change_per_s_pct"]) <= NOISE_PCT)
        row["undetermined"] = not row["replicates_agree_per_s"]
        out.append(row)
    return out


def _right_not_flat(dirs: list[dict]) -> str:
    """Right among the pairs whose measured change is beyond the noise band."""
    got = [d["right_per_s"] for d in dirs if d["right_per_s"] is not None
           and not d["measured_flat"]]
    return f"{sum(got)}/{len(got)}"


def device_summary(cells: list[dict]) -> dict:
    ok = [c for c in cells if "measured" in c]
    dirs = directions(ok)
    right = [d["right_per_s"] for d in dirs if d["right_per_s"] is not None]
    right_pc = [d["right_per_commit"] for d in dirs if d["right_per_commit"] is not None]
    signs = [d["sign_agrees_per_s"] for d in dirs if d.get("sign_agrees_per_s") is not None]
    return {
        "cells": len(cells), "measured_cells": len(ok),
        "failed_cells": len(cells) - len(ok),
        "mape": {k: mape(ok, k) for k in MAPE_FIGURES},
        "mape_derived": {k: mape(ok, k, "errors_pct_derived") for k in MAPE_FIGURES},
        "mape_single_calibration": {k: mape(ok, k, "errors_pct_single") for k in
                                    MAPE_FIGURES},
        "direction": dirs,
        "direction_right": f"{sum(right)}/{len(right)}",
        "direction_all_right": (all(right) if right else None),
        "direction_right_per_commit": f"{sum(right_pc)}/{len(right_pc)}",
        "direction_sign_agrees": f"{sum(signs)}/{len(signs)}",
        "direction_right_not_flat": _right_not_flat(dirs),
        "direction_undetermined": sum(1 for d in dirs if d["undetermined"]),
    }


__all__ = ["MAPE_FIGURES", "NOISE_PCT", "TARGETS", "device_summary", "directions", "mape"]
