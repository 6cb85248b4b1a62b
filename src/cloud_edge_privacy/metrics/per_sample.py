"""Per-sample values of the leaderboard's metrics, keyed by doc_id, for bootstrap intervals and paired tests.

Each metric maps to ``{doc_id: value}`` where the value is a float (the metric is the mean of them),
a ``(num, den)`` pair (the metric is sum(num)/sum(den), as the pooled Ianvs metric), or absent when the
sample does not count for that metric.  The aggregates agree with the Ianvs metric functions.
"""
from __future__ import annotations

import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import attacks, performance, privacy, tab_official
from .samples import unpack

# metric -> (kind, description); kind: "mean", "ratio" or "total"
PER_SAMPLE_METRICS: Dict[str, Tuple[str, str]] = {
    "pdr": ("ratio", "share of gold DIRECT/QUASI mentions absent from what was sent"),
    "sels": ("ratio", "sensitivity-weighted share of gold mentions leaked (lower is better)"),
    "leak_direct": ("total", "gold DIRECT mentions found verbatim in the traffic (total)"),
    "iar_trir": ("mean", "TRIR: share of sent texts the background-knowledge attacker links to the right person"),
    "iar_coref_leak": ("ratio", "hidden entities still named in clear elsewhere in the sent text"),
    "iar_reidentification": ("mean", "oracle linking with the gold quasi-identifiers (upper bound)"),
    "cpp": ("mean", "1 - cosine(original, sent) with all-MiniLM-L6-v2"),
    "er_di": ("ratio", "TAB entity recall, direct identifiers"),
    "er_qi": ("ratio", "TAB entity recall, quasi identifiers"),
    "token_precision": ("ratio", "TAB token precision of the masks"),
    "edge_ratio": ("mean", "share of samples answered on the edge"),
    "latency_mean_ms": ("mean", "end-to-end latency of completed samples, ms"),
}


def _keyed(doc_ids: Sequence[str], values: Sequence[Any]) -> Dict[str, Any]:
    return {d: v for d, v in zip(doc_ids, values) if v is not None}


def per_sample_values(y_true: Sequence[Any], y_pred: Sequence[Any], doc_ids: Sequence[str],
                      attacker: Optional[Any] = None, embeddings: bool = True,
                      trir: bool = True) -> Dict[str, Dict[str, Any]]:
    """Per-sample values of every metric of :data:`PER_SAMPLE_METRICS` that can be computed here.

    ``trir=False`` leaves TRIR out; otherwise it needs the background knowledge (``attacker`` or the cached one) and CPP the MiniLM model; when
    either is unavailable that metric is left out and the reason printed on stderr."""
    views = unpack(y_true, y_pred)
    out: Dict[str, Dict[str, Any]] = {
        "pdr": _keyed(doc_ids, [privacy.pdr_parts(v) for v in views]),
        "sels": _keyed(doc_ids, [privacy.sels_parts(v) for v in views]),
        "leak_direct": _keyed(doc_ids, [float(privacy.leak_direct_count(v)) for v in views]),
        "iar_coref_leak": _keyed(doc_ids, [attacks.coref_parts(v) for v in views]),
        "iar_reidentification": _keyed(doc_ids, attacks.oracle_linking_hits(y_true, y_pred)),
        "edge_ratio": _keyed(doc_ids, [float(not v.is_hard) for v in views]),
        "latency_mean_ms": _keyed(doc_ids, [performance.completed_latency_ms(v) for v in views]),
    }
    tab: Dict[str, List[Any]] = {"er_di": [], "er_qi": [], "token_precision": []}
    keys = {"er_di": ("entities_di_masked", "entities_di"), "er_qi": ("entities_qi_masked", "entities_qi"),
            "token_precision": ("precision_num", "precision_den")}
    for v in views:
        counts = (tab_official.score_document(v.gold, v.field("masks") or [])
                  if v.went_to_cloud and v.gold.get("text") else None)
        for name, (num, den) in keys.items():
            tab[name].append(None if counts is None or not counts.get(den) else
                             (float(counts.get(num, 0)), float(counts[den])))
    out.update({name: _keyed(doc_ids, vals) for name, vals in tab.items()})
    if trir:
        try:
            from .trir import per_sample as trir_per_sample

            out["iar_trir"] = _keyed(doc_ids, trir_per_sample(y_true, y_pred, attacker))
        except (FileNotFoundError, ValueError) as exc:
            print(f"per-sample TRIR not computed: {exc}", file=sys.stderr)
    if embeddings:
        try:
            from .semantic import per_sample_similarity

            sims = per_sample_similarity(y_true, y_pred)
            out["cpp"] = _keyed(doc_ids, [None if s is None else 1.0 - s for s in sims])
        except Exception as exc:  # noqa: BLE001 - a missing embedding model must not hide the other metrics
            print(f"per-sample CPP not computed: {type(exc).__name__}: {exc}", file=sys.stderr)
    return out
