"""Latency distributions: summaries of measured samples, and sampling from a summary.

A profile keeps a distribution as a handful of quantiles (min, p50, p90, p99, p99.9, max)
plus mean and count, because that is what both our probe and published sources (fio's
percentile tables) can give. The simulator draws from it by inverse-CDF interpolation
between those quantiles. A source that published only a mean gets an assumed narrow
lognormal with that mean, and says so in ``shape``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from .errors import ProfileError

# numpy is imported where samples are summarised or drawn: reading a profile
# (`profiles list`) needs none of it, and it is most of the start-up time
if TYPE_CHECKING:
    import numpy as np

# (field, cumulative probability) of the quantiles kept; min and max close the ends.
QUANTILE_FIELDS: tuple[tuple[str, float], ...] = (
    ("min_ns", 0.0),
    ("p50_ns", 0.5),
    ("p90_ns", 0.9),
    ("p99_ns", 0.99),
    ("p99_9_ns", 0.999),
    ("max_ns", 1.0),
)
SHAPE_QUANTILES = "quantiles"
SHAPE_MEAN_ONLY = "mean-only"
# Spread assumed for a published mean without any distribution: narrow, so that
# mean-only devices behave close to their published figure without inventing tails.
MEAN_ONLY_SIGMA = 0.25


@dataclass(frozen=True)
class LatencySummary:
    """One latency distribution, nanoseconds."""

    count: int
    mean_ns: float
    min_ns: float | None = None
    p50_ns: float | None = None
    p90_ns: float | None = None
    p99_ns: float | None = None
    p99_9_ns: float | None = None
    max_ns: float | None = None
    shape: str = SHAPE_QUANTILES

    @classmethod
    def from_samples(cls, samples_ns) -> LatencySummary:
        import numpy as np

        arr = np.asarray(samples_ns, dtype=np.float64)
        if arr.size == 0:
            raise ValueError("no samples")
        qs = np.percentile(arr, [0, 50, 90, 99, 99.9, 100])
        return cls(
            count=int(arr.size),
            mean_ns=float(arr.mean()),
            min_ns=float(qs[0]),
            p50_ns=float(qs[1]),
            p90_ns=float(qs[2]),
            p99_ns=float(qs[3]),
            p99_9_ns=float(qs[4]),
            max_ns=float(qs[5]),
        )

    @classmethod
    def mean_only(cls, mean_ns: float, count: int = 0) -> LatencySummary:
        return cls(count=count, mean_ns=float(mean_ns), shape=SHAPE_MEAN_ONLY)

    @classmethod
    def from_dict(cls, d: dict, where: str = "distribution") -> LatencySummary:
        if not isinstance(d, dict):
            raise ProfileError(f"{where}: expected an object, got {type(d).__name__}")
        known = {f for f in cls.__dataclass_fields__}
        unknown = set(d) - known
        if unknown:
            raise ProfileError(f"{where}: unknown keys {sorted(unknown)}")
        try:
            mean = float(d["mean_ns"])
        except KeyError:
            raise ProfileError(f"{where}: missing mean_ns") from None
        except (TypeError, ValueError):
            raise ProfileError(f"{where}: mean_ns is not a number") from None
        if not math.isfinite(mean) or mean < 0:
            raise ProfileError(f"{where}: mean_ns must be a finite number >= 0")
        try:
            count = int(d.get("count", 0))
        except (TypeError, ValueError):
            raise ProfileError(f"{where}: count is not an integer") from None
        if count < 0:
            raise ProfileError(f"{where}: count must be >= 0")
        kw = {"count": count, "mean_ns": mean, "shape": d.get("shape", SHAPE_QUANTILES)}
        if kw["shape"] not in (SHAPE_QUANTILES, SHAPE_MEAN_ONLY):
            raise ProfileError(f"{where}: unknown shape {kw['shape']!r}")
        prev = -1.0
        for name, _p in QUANTILE_FIELDS:
            v = d.get(name)
            if v is None:
                continue
            try:
                v = float(v)
            except (TypeError, ValueError):
                raise ProfileError(f"{where}: {name} is not a number") from None
            if not math.isfinite(v) or v < 0:
                raise ProfileError(f"{where}: {name} must be a finite number >= 0")
            if v < prev:
                raise ProfileError(f"{where}: quantiles must not decrease ({name})")
            prev = v
            kw[name] = v
        if kw["shape"] == SHAPE_QUANTILES and "p50_ns" not in kw:
            raise ProfileError(f"{where}: shape 'quantiles' needs at least p50_ns")
        return cls(**kw)

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}

    def knots(self) -> tuple[np.ndarray, np.ndarray]:
        """(probabilities, values) of the piecewise-linear inverse CDF used for sampling."""
        ps, vs = [], []
        for name, p in QUANTILE_FIELDS:
            v = getattr(self, name)
            if v is not None:
                ps.append(p)
                vs.append(v)
        if ps[0] != 0.0:  # no min published: start the curve at half the first quantile
            ps.insert(0, 0.0)
            vs.insert(0, vs[0] * 0.5)
        if ps[-1] != 1.0:  # no max: extend the last segment's slope a little
            ps.append(1.0)
            vs.append(vs[-1] * 1.5)
        import numpy as np

        return np.asarray(ps), np.asarray(vs)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """n latencies in ns drawn from this distribution."""
        import numpy as np

        if self.shape == SHAPE_MEAN_ONLY:
            if self.mean_ns <= 0:
                return np.zeros(n)
            mu = math.log(self.mean_ns) - MEAN_ONLY_SIGMA**2 / 2
            return rng.lognormal(mu, MEAN_ONLY_SIGMA, n)
        ps, vs = self.knots()
        return np.interp(rng.random(n), ps, vs)

    def scaled(self, factor: float) -> LatencySummary:
        """The same shape with every latency multiplied by factor."""
        kw = asdict(self)
        for k, v in kw.items():
            if k.endswith("_ns") and v is not None:
                kw[k] = v * factor
        return LatencySummary(**kw)

    @property
    def median_ns(self) -> float:
        """p50 where known, else the mean (the only figure a mean-only source gives)."""
        return self.p50_ns if self.p50_ns is not None else self.mean_ns
