"""Utility metrics for the time-series scenario: STS, numeric answer error, bootstrap intervals.

STS (Rehman et al.) = cosine similarity of all-MiniLM-L6-v2 embeddings of the LLM's answer with the original
values and its answer with the values that were sent.
"""
from __future__ import annotations

import math
import re
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def embed(texts: Sequence[str]) -> np.ndarray:
    """Normalised all-MiniLM-L6-v2 embeddings (the model is loaded once per process by metrics.semantic)."""
    from ..metrics.semantic import _model

    return np.asarray(_model().encode(list(texts), normalize_embeddings=True, batch_size=16))


def sts(pairs: Sequence[Tuple[str, str]]) -> List[float]:
    """Cosine similarity per (answer with original data, answer with sent data); identical texts give 1."""
    if not pairs:
        return []
    emb = embed([t for p in pairs for t in p])
    return [1.0 if a == b else float(emb[2 * i] @ emb[2 * i + 1]) for i, (a, b) in enumerate(pairs)]


def bootstrap_ci(values: Sequence[float], n_boot: int = 2000, alpha: float = 0.05, seed: int = 0
                 ) -> Tuple[float, float, float]:
    """Mean and percentile-bootstrap (1 - alpha) interval; NaNs for no values."""
    v = np.asarray([x for x in values if x is not None and not math.isnan(x)], dtype=float)
    if len(v) == 0:
        return math.nan, math.nan, math.nan
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, len(v), size=(n_boot, len(v)))].mean(axis=1)
    return float(v.mean()), float(np.quantile(means, alpha / 2)), float(np.quantile(means, 1 - alpha / 2))


def first_number(text: str) -> Optional[float]:
    """The first number in an answer (e.g. ``"The peak is 10.4 at t=8"`` -> 10.4), or None."""
    m = _NUMBER.search(text.replace(",", ""))
    return float(m.group()) if m else None


def numeric_error(answer: str, truth: Optional[float], width: float) -> Optional[float]:
    """|first number - truth| / width (the public domain width); 1.0 when no number was given, None when
    the question has no numeric answer."""
    if truth is None:
        return None
    got = first_number(answer)
    if got is None:
        return 1.0
    return min(abs(got - truth) / width, 1.0)


def summarise(values: Sequence[Optional[float]], seed: int = 0) -> Dict[str, float]:
    """{"mean", "lo", "hi", "n"} for the non-missing values."""
    kept = [v for v in values if v is not None and not math.isnan(v)]
    mean, lo, hi = bootstrap_ci(kept, seed=seed)
    return {"mean": round(mean, 4), "lo": round(lo, 4), "hi": round(hi, 4), "n": len(kept)}
