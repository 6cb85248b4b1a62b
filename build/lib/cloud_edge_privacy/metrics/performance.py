"""Routing, cost and latency metrics computed from the result objects (Ianvs measures no time)."""
from __future__ import annotations

import math
import statistics
from typing import Any, Sequence

from .samples import unpack


def edge_ratio(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Share of samples answered on the edge (``is_hard_example`` falsy)."""
    views = unpack(y_true, y_pred)
    return math.nan if not views else round(sum(not v.is_hard for v in views) / len(views), 6)


def cloud_tokens(y_true: Sequence[Any], y_pred: Sequence[Any]) -> int:
    """Prompt + completion tokens exchanged with the cloud, over all samples."""
    total = 0
    for v in unpack(y_true, y_pred):
        t = (v.cloud or {}).get("tokens") or {}
        total += int(t.get("cloud_prompt", 0)) + int(t.get("cloud_completion", 0))
    return total


def sample_latency_ms(view) -> float:
    """End-to-end time of one sample: every stage timing recorded by the edge and cloud results."""
    total = 0.0
    for part in (view.edge, view.cloud):
        if part:
            total += sum(float(t) for t in (part.get("timings_ms") or {}).values())
    return total


def latency_mean_ms(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    views = unpack(y_true, y_pred)
    return math.nan if not views else round(statistics.fmean(sample_latency_ms(v) for v in views), 3)


def privacy_failures(y_true: Sequence[Any], y_pred: Sequence[Any]) -> int:
    """Samples where the gateway failed closed (nothing was sent)."""
    return sum(1 for v in unpack(y_true, y_pred) if (v.cloud or {}).get("status") == "privacy_failure")


PRIVACY_STAGES = ("detection", "desensitization", "restoration")


def _privacy_and_total(y_true: Sequence[Any], y_pred: Sequence[Any]):
    privacy = total = 0.0
    for v in unpack(y_true, y_pred):
        total += sample_latency_ms(v)
        privacy += sum(float(((v.cloud or {}).get("timings_ms") or {}).get(s, 0.0)) for s in PRIVACY_STAGES)
    return privacy, total


def lo_pct(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Latency overhead: privacy processing time / time of the same path without it, in %, from one run."""
    privacy, total = _privacy_and_total(y_true, y_pred)
    base = total - privacy
    return math.nan if base <= 0 else round(100.0 * privacy / base, 4)


def ti_pct(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Throughput impact: (throughput without privacy - with) / without, in %, from one run's timings."""
    privacy, total = _privacy_and_total(y_true, y_pred)
    return math.nan if total <= 0 else round(100.0 * privacy / total, 4)  # 1 - T0/T1 with T0 = T1 - privacy
