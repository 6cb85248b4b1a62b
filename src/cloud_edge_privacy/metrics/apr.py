"""Accuracy preservation (APR) of each test case against the unprotected baseline of the same job.

APR needs two test cases (a method and the ``none`` baseline), so it is computed over a finished job,
not inside one Ianvs metric call.  Over the samples that both sent to the cloud:

* ``apr_similarity``: mean cosine (all-MiniLM-L6-v2) between the case's final answer and the baseline's
  answer, i.e. quality = similarity to the reference answer of the unprotected cloud path (the baseline's
  own quality on that scale is 1, so the ratio is the mean itself);
* ``apr_judge``: mean LLM-judge score (1-10) of the case's answers / that of the baseline's answers, both
  judged against the unprotected request.
"""
from __future__ import annotations

import math
import statistics
from typing import Any, Callable, Dict, List, Optional, Sequence

BASELINE_METHOD = "none"


def _answer(pred: Dict[str, Any]) -> str:
    return str((pred.get("result") or {}).get("answer") or "")


def _request(pred: Dict[str, Any]) -> str:
    """The unprotected request as the baseline sent it (its last message)."""
    msgs = (pred.get("result") or {}).get("sent_messages") or []
    return str(msgs[-1]["content"]) if msgs else ""


def _mean_sd(xs: Sequence[float]) -> tuple:
    if not xs:
        return math.nan, math.nan
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def apr_rows(cases: List[Dict[str, Any]], judge: Optional[Callable[[str, str], float]] = None,
             embed: Optional[Callable[[List[str]], Any]] = None) -> List[Dict[str, Any]]:
    """One row per non-baseline case: n, similarity mean/sd, judge means and their ratio.

    ``cases`` are dicts with ``label``, ``row`` (the rank row) and ``preds`` (predictions.jsonl records).
    ``embed`` maps texts to unit-norm vectors (default: MiniLM); ``judge(request, answer)`` returns a
    score from 1 to 10 or NaN (default: the local LLM judge, cached on disk).
    """
    base = next((c for c in cases if c["row"].get("cloudmodel-privacy_method") == BASELINE_METHOD), None)
    if base is None:
        return []
    ref = {p["doc_id"]: p for p in base["preds"] if p.get("is_hard_example") and _answer(p)}
    if embed is None:
        from .semantic import _model

        def embed(texts: List[str]) -> Any:
            return _model().encode(texts, normalize_embeddings=True, batch_size=16)
    if judge is None:
        from .judge import judge_score as judge
    base_scores: Dict[str, float] = {}
    rows = []
    for c in cases:
        if c is base:
            continue
        pairs = [(ref[p["doc_id"]], p) for p in c["preds"]
                 if p.get("is_hard_example") and p["doc_id"] in ref and _answer(p)]
        if not pairs:
            continue
        emb = embed([t for r, p in pairs for t in (_answer(r), _answer(p))])
        sims = [float(emb[2 * i] @ emb[2 * i + 1]) for i in range(len(pairs))]
        with_, without = [], []
        for r, p in pairs:
            if r["doc_id"] not in base_scores:
                base_scores[r["doc_id"]] = judge(_request(r), _answer(r))
            s_p, s_r = judge(_request(r), _answer(p)), base_scores[r["doc_id"]]
            if not (math.isnan(s_p) or math.isnan(s_r)):
                with_.append(s_p)
                without.append(s_r)
        sim_mean, sim_sd = _mean_sd(sims)
        j_with, j_without = _mean_sd(with_)[0], _mean_sd(without)[0]
        rows.append({"label": c["label"], "n": len(pairs), "apr_similarity": sim_mean, "apr_similarity_sd": sim_sd,
                     "judge_n": len(with_), "judge_with": j_with, "judge_without": j_without,
                     "apr_judge": j_with / j_without if with_ and j_without > 0 else math.nan})
    return rows
