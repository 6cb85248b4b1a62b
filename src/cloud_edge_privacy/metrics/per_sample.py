"""Per-sample values of the metrics that declare them (``per_sample`` in ``catalog.py``), keyed by doc_id, for
bootstrap intervals and paired tests.

Each metric maps to ``{doc_id: value}`` where the value is a float (the metric is the mean of them, aggregation
"mean"; or their sum, "total"), a ``(num, den)`` pair (the metric is sum(num)/sum(den), as the pooled Ianvs
metric, "ratio"), or absent when the sample does not count for that metric.  The aggregates agree with the
Ianvs metric functions.
"""
from __future__ import annotations

import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import attacks, performance, privacy, tab_official
from .catalog import per_sample_metrics
from .samples import unpack


def pdr_values(y_true: Sequence[Any], y_pred: Sequence[Any], **_: Any) -> List[Any]:
    return [privacy.pdr_parts(v) for v in unpack(y_true, y_pred)]


def sels_values(y_true: Sequence[Any], y_pred: Sequence[Any], **_: Any) -> List[Any]:
    return [privacy.sels_parts(v) for v in unpack(y_true, y_pred)]


def leak_direct_values(y_true: Sequence[Any], y_pred: Sequence[Any], **_: Any) -> List[Any]:
    return [float(privacy.leak_direct_count(v)) for v in unpack(y_true, y_pred)]


def coref_values(y_true: Sequence[Any], y_pred: Sequence[Any], **_: Any) -> List[Any]:
    return [attacks.coref_parts(v) for v in unpack(y_true, y_pred)]


def reidentification_values(y_true: Sequence[Any], y_pred: Sequence[Any], **_: Any) -> List[Any]:
    return list(attacks.oracle_linking_hits(y_true, y_pred))


def edge_ratio_values(y_true: Sequence[Any], y_pred: Sequence[Any], **_: Any) -> List[Any]:
    return [float(not v.is_hard) for v in unpack(y_true, y_pred)]


def latency_values(y_true: Sequence[Any], y_pred: Sequence[Any], **_: Any) -> List[Any]:
    return [performance.completed_latency_ms(v) for v in unpack(y_true, y_pred)]


def _tab_values(num: str, den: str):
    def values(y_true: Sequence[Any], y_pred: Sequence[Any], **_: Any) -> List[Optional[Tuple[float, float]]]:
        out: List[Optional[Tuple[float, float]]] = []
        for v in unpack(y_true, y_pred):
            counts = (tab_official.score_document(v.gold, v.field("masks") or [])
                      if v.went_to_cloud and v.gold.get("text") else None)
            out.append(None if counts is None or not counts.get(den) else (float(counts.get(num, 0)), float(counts[den])))
        return out

    return values


er_di_values = _tab_values("entities_di_masked", "entities_di")
er_qi_values = _tab_values("entities_qi_masked", "entities_qi")
token_precision_values = _tab_values("precision_num", "precision_den")


def trir_values(y_true: Sequence[Any], y_pred: Sequence[Any], attacker: Optional[Any] = None, **_: Any) -> List[Any]:
    from .trir import per_sample

    return list(per_sample(y_true, y_pred, attacker))


def cpp_values(y_true: Sequence[Any], y_pred: Sequence[Any], **_: Any) -> List[Any]:
    from .semantic import per_sample_similarity

    return [None if s is None else 1.0 - s for s in per_sample_similarity(y_true, y_pred)]


def per_sample_values(y_true: Sequence[Any], y_pred: Sequence[Any], doc_ids: Sequence[str],
                      attacker: Optional[Any] = None, embeddings: bool = True,
                      trir: bool = True) -> Dict[str, Dict[str, Any]]:
    """Per-sample values of every metric that declares them.

    ``trir=False`` / ``embeddings=False`` leave out the metrics that need the background knowledge / the MiniLM
    model; when such a resource is unavailable that metric is left out and the reason printed on stderr."""
    skip = {name for name, on in (("trir", trir), ("embeddings", embeddings)) if not on}
    out: Dict[str, Dict[str, Any]] = {}
    for spec in per_sample_metrics():
        if spec.needs in skip:
            continue
        try:
            values = spec.per_sample_function()(y_true, y_pred, attacker=attacker)
        except Exception as exc:  # noqa: BLE001 - a missing resource must not hide the other metrics
            if spec.needs is None:
                raise
            print(f"per-sample {spec.name} not computed: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        out[spec.name] = {d: v for d, v in zip(doc_ids, values) if v is not None}
    return out

