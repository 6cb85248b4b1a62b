"""Summary statistics shared by metrics, reports and benchmark scripts: a nearest-rank percentile,
percentile bootstrap intervals for per-sample metrics, and a paired test of two methods' difference.

All resampling uses ``numpy.random.default_rng(seed)`` with a fixed seed, so a report is reproducible.
Statistics are either a mean of per-sample values or a ratio of sums of per-sample ``(num, den)``
pairs (pooled metrics such as PDR/SELS: documents are resampled and the ratio recomputed).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Tuple, Union

N_RESAMPLES = 2000
SEED = 20240
LEVEL = 0.95

Value = Union[float, Tuple[float, float]]


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile, ``q`` in [0, 1]; NaN for no values."""
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its sample count and percentile-bootstrap interval (NaN when n < 2)."""

    value: float
    low: float
    high: float
    n: int

    def fmt(self, nd: int = 3) -> str:
        """``0.123 [0.050, 0.210] (n=21)``; ``n/a (n=0)`` when there is nothing to estimate."""
        if self.n == 0 or math.isnan(self.value):
            return f"n/a (n={self.n})"
        if math.isnan(self.low):
            return f"{self.value:.{nd}f} (n={self.n})"
        return f"{self.value:.{nd}f} [{self.low:.{nd}f}, {self.high:.{nd}f}] (n={self.n})"


def _array(values: Sequence[Any]) -> Tuple[Any, bool]:
    """Drop None/NaN entries; returns (array of shape (n,) or (n, 2), is_ratio)."""
    import numpy as np

    kept = []
    for v in values:
        if v is None:
            continue
        if isinstance(v, (tuple, list)):
            if len(v) != 2 or any(x is None or (isinstance(x, float) and math.isnan(x)) for x in v):
                continue
            kept.append((float(v[0]), float(v[1])))
        elif not (isinstance(v, float) and math.isnan(v)):
            kept.append(float(v))
    if not kept:
        return np.zeros(0), False
    ratio = isinstance(kept[0], tuple)
    if any(isinstance(k, tuple) != ratio for k in kept):
        raise ValueError("mix of plain values and (num, den) pairs")
    return np.asarray(kept, dtype=float), ratio


def _stat(arr: Any, ratio: bool, axis: Optional[int] = None) -> Any:
    import numpy as np

    if not ratio:
        return arr.mean(axis=axis)
    num, den = arr[..., 0].sum(axis=-1), arr[..., 1].sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def bootstrap_ci(values: Sequence[Value], n_resamples: int = N_RESAMPLES, seed: int = SEED,
                 level: float = LEVEL, total: bool = False) -> Estimate:
    """Point estimate and percentile bootstrap interval of the mean (or of sum(num)/sum(den) for pairs;
    or of the sum with ``total=True``).  None/NaN entries are not samples.  n < 2: no interval."""
    import numpy as np

    arr, ratio = _array(values)
    n = len(arr)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    scale = n if total and not ratio else 1
    point = float(_stat(arr, ratio)) * scale
    if n < 2:
        return Estimate(point, math.nan, math.nan, n)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_resamples, n))
    stats = _stat(arr[idx], ratio, axis=1) * scale
    stats = stats[~np.isnan(stats)]
    if len(stats) == 0:
        return Estimate(point, math.nan, math.nan, n)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(stats, [alpha, 1.0 - alpha])
    return Estimate(point, float(low), float(high), n)


@dataclass(frozen=True)
class Difference:
    """Paired difference a - b on the samples both have, with its bootstrap interval."""

    diff: float
    low: float
    high: float
    n: int

    @property
    def significant(self) -> bool:
        """The 95% interval of the difference excludes 0."""
        return self.n >= 2 and not math.isnan(self.low) and (self.low > 0 or self.high < 0)

    def fmt(self, nd: int = 3) -> str:
        if self.n < 2 or math.isnan(self.low):
            return f"n/a (n={self.n})"
        verdict = "significant" if self.significant else "not significant"
        return f"{self.diff:+.{nd}f} [{self.low:+.{nd}f}, {self.high:+.{nd}f}] (n={self.n}, {verdict})"


def paired_difference(a: Sequence[Value], b: Sequence[Value], n_resamples: int = N_RESAMPLES, seed: int = SEED,
                      level: float = LEVEL) -> Difference:
    """Paired bootstrap of stat(a) - stat(b) over the positions where both have a value.

    ``a`` and ``b`` are aligned per sample (same order, same documents).  The same resampled indices
    are used for both, so what is tested is the difference on the same samples."""
    import numpy as np

    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} vs {len(b)}")
    keep = [i for i in range(len(a)) if len(_array([a[i]])[0]) and len(_array([b[i]])[0])]
    arr_a, ratio_a = _array([a[i] for i in keep])
    arr_b, ratio_b = _array([b[i] for i in keep])
    n = len(keep)
    if n == 0:
        return Difference(math.nan, math.nan, math.nan, 0)
    point = float(_stat(arr_a, ratio_a)) - float(_stat(arr_b, ratio_b))
    if n < 2:
        return Difference(point, math.nan, math.nan, n)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_resamples, n))
    diffs = _stat(arr_a[idx], ratio_a, axis=1) - _stat(arr_b[idx], ratio_b, axis=1)
    diffs = diffs[~np.isnan(diffs)]
    if len(diffs) == 0:
        return Difference(point, math.nan, math.nan, n)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(diffs, [alpha, 1.0 - alpha])
    return Difference(point, float(low), float(high), n)
