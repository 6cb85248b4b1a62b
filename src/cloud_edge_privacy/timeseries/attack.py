"""Attacks on what left the edge: reconstruct the original series, and infer the sensitive event.

The attacker knows the code, the method, ε, the public domain and the event threshold (the YAML is public);
it sees only the released values.  It (1) denoises them (a centred 3-point moving average for per-value
releases, each window mean repeated over its window for window releases), clipped to the public domain, and
(2) flags the event wherever its estimate exceeds the public event threshold.

* reconstruction succeeds when the mean absolute error is at most ``tolerance`` x Δf (default 5%);
* event inference is scored by balanced accuracy over the indices (0.5 = chance) and succeeds when it is at
  least 0.9.  For the heart-rate series (one spike), that means finding the spike without false alarms.

Success rates are over many fresh noise draws (no LLM needed), each drawn like the release itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Sequence

import numpy as np

from .data import Series
from .operator import Release


def reconstruct(release: Release, s: Series) -> np.ndarray:
    """The attacker's estimate of the original series from the released values."""
    y = np.asarray(release.sent, dtype=float)
    n = len(s.values)
    if release.method == "user_windows":
        k = len(y)
        bounds = np.linspace(0, n, k + 1).astype(int)
        est = np.concatenate([np.full(b - a, y[i]) for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))])
    elif release.method == "none" or not np.isfinite(release.per_value_epsilon):
        est = y
    else:
        # smoothing helps only when the noise is large compared with the signal's local variation
        scale = s.sensitivity / release.per_value_epsilon
        if scale > 0.05 * s.sensitivity:
            pad = np.concatenate([y[:1], y, y[-1:]])
            est = (pad[:-2] + pad[1:-1] + pad[2:]) / 3.0
        else:
            est = y
    return np.clip(est, *s.domain)


def balanced_accuracy(truth: Sequence[bool], pred: Sequence[bool]) -> float:
    """Mean of the true-positive and true-negative rates (a class absent from ``truth`` is skipped)."""
    t, p = np.asarray(truth, bool), np.asarray(pred, bool)
    rates = []
    if t.any():
        rates.append(float((p & t).sum() / t.sum()))
    if (~t).any():
        rates.append(float((~p & ~t).sum() / (~t).sum()))
    return float(np.mean(rates)) if rates else float("nan")


@dataclass
class AttackOutcome:
    reconstruction_nmae: float      # mean |estimate - original| / Δf
    reconstruction_success: bool
    event_balanced_accuracy: float
    event_success: bool


def attack(release: Release, s: Series, tolerance: float = 0.05, event_success_at: float = 0.9) -> AttackOutcome:
    """Run both attacks on one release."""
    est = reconstruct(release, s)
    nmae = float(np.mean(np.abs(est - s.array)) / s.sensitivity)
    bacc = balanced_accuracy(s.events(), est > s.event_threshold)
    return AttackOutcome(round(nmae, 5), nmae <= tolerance, round(bacc, 4), bacc >= event_success_at)


def success_rates(outcomes: List[AttackOutcome]) -> Dict[str, float]:
    """Share of draws in which each attack succeeded, with the mean error and balanced accuracy."""
    n = len(outcomes)
    return {
        "n_draws": n,
        "reconstruction_success": round(sum(o.reconstruction_success for o in outcomes) / n, 4),
        "reconstruction_nmae": round(float(np.mean([o.reconstruction_nmae for o in outcomes])), 4),
        "event_success": round(sum(o.event_success for o in outcomes) / n, 4),
        "event_balanced_accuracy": round(float(np.mean([o.event_balanced_accuracy for o in outcomes])), 4),
    }
