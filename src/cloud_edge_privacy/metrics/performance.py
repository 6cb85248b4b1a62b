"""Routing, cost, latency and completion metrics computed from the result objects (Ianvs measures no time).

A sample is *completed* when its status is ``ok``; failed samples (``privacy_failure``,
``cloud_failure``, ``budget_exceeded``, ``edge_failure``) have no answer.  Latency is averaged over
completed samples; counts of both are reported (``n_completed``, ``n_failed``).

A *replayed* sample got an LLM answer (cloud or edge) from the on-disk response cache: its recorded timings are
those of the original call, so latency, LO and TI leave it out, and ``cache_replays`` counts it.
"""
from __future__ import annotations

import math
import statistics
from typing import Any, Optional, Sequence

from ..results import Route, Stage, Status, Tokens
from .samples import SampleView, unpack


def n_completed(y_true: Sequence[Any], y_pred: Sequence[Any]) -> int:
    """Samples with status ``ok`` (they have an answer)."""
    return sum(v.completed for v in unpack(y_true, y_pred))


def n_failed(y_true: Sequence[Any], y_pred: Sequence[Any]) -> int:
    """Samples with any failure status (no answer; zero quality in APR)."""
    return sum(not v.completed for v in unpack(y_true, y_pred))


def sample_route(view: SampleView) -> str:
    """edge | collaborative | cloud: the route the sample took (edge when not a hard example)."""
    return Route.EDGE.value if not view.is_hard else view.route.value


def edge_ratio(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Share of samples answered on the edge (``is_hard_example`` falsy)."""
    views = unpack(y_true, y_pred)
    return math.nan if not views else round(sum(not v.is_hard for v in views) / len(views), 6)


def sample_cloud_tokens(view: SampleView) -> int:
    t: Optional[Tokens] = view.field("tokens")
    return t.cloud if t is not None else 0


def cloud_tokens(y_true: Sequence[Any], y_pred: Sequence[Any]) -> int:
    """Prompt + completion tokens exchanged with the cloud, over all samples (failed ones too)."""
    return sum(sample_cloud_tokens(v) for v in unpack(y_true, y_pred))


def sample_latency_ms(view: SampleView) -> float:
    """End-to-end time of one sample: every stage timing recorded by the edge and cloud results."""
    return sum(float(t) for part in view.parts() for t in part.timings_ms.values())


def replayed(view: SampleView) -> bool:
    """Some LLM answer of this sample (cloud or edge) came from the response cache, not from a model run."""
    return any(bool(part.cloud_cache_hit or part.edge_cache_hit)
               for part in (view.result, view.edge, view.cloud) if part is not None)


def cache_replays(y_true: Sequence[Any], y_pred: Sequence[Any]) -> int:
    """Samples whose answer (cloud or edge) was replayed from the response cache (no model ran, nothing
    was sent for it in this run)."""
    return sum(replayed(v) for v in unpack(y_true, y_pred))


def completed_latency_ms(view: SampleView) -> Optional[float]:
    """The sample's latency when it completed and was not replayed from a cache, else None."""
    return sample_latency_ms(view) if view.completed and not replayed(view) else None


def latency_mean_ms(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Mean end-to-end latency over completed samples that were not cache replays (NaN if none is left)."""
    values = [x for x in (completed_latency_ms(v) for v in unpack(y_true, y_pred)) if x is not None]
    return math.nan if not values else round(statistics.fmean(values), 3)


def privacy_failures(y_true: Sequence[Any], y_pred: Sequence[Any]) -> int:
    """Samples where the gateway failed closed (nothing was sent)."""
    return sum(1 for v in unpack(y_true, y_pred) if v.status == Status.PRIVACY_FAILURE)


# What LO and TI count: every stage the unprotected baseline does not run (the egress guard included).
PRIVACY_STAGES = (Stage.DETECTION, Stage.DESENSITIZATION, Stage.EGRESS_GUARD, Stage.RESTORATION)


def privacy_ms(view: SampleView) -> float:
    timings = view.cloud.timings_ms if view.cloud is not None else {}
    return sum(float(timings.get(s.value, 0.0)) for s in PRIVACY_STAGES)


def _privacy_and_total(y_true: Sequence[Any], y_pred: Sequence[Any]):
    privacy = total = 0.0
    for v in unpack(y_true, y_pred):
        if not v.completed or replayed(v):
            continue
        total += sample_latency_ms(v)
        privacy += privacy_ms(v)
    return privacy, total


def lo_pct(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Latency overhead: privacy processing time / time of the same path without it, in %, from one run
    (completed samples)."""
    privacy, total = _privacy_and_total(y_true, y_pred)
    base = total - privacy
    return math.nan if base <= 0 else round(100.0 * privacy / base, 4)


def ti_pct(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Throughput impact: (throughput without privacy - with) / without, in %, from one run's timings."""
    privacy, total = _privacy_and_total(y_true, y_pred)
    return math.nan if total <= 0 else round(100.0 * privacy / total, 4)  # 1 - T0/T1 with T0 = T1 - privacy


def answer_words(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Mean number of words of the final answers of completed samples (NaN if none completed); the worked
    example of docs/extending.md, "Add a metric"."""
    words = [len(v.result.answer.split()) for v in unpack(y_true, y_pred) if v.completed and v.result is not None]
    return math.nan if not words else round(statistics.fmean(words), 3)
