"""Accuracy preservation (APR) of each test case against the unprotected baseline of the same job.

APR needs two test cases (a method and the ``none`` baseline), so it is computed over a finished job,
not inside one Ianvs metric call.  The compared samples are those the baseline answered through the
cloud path (status ``ok``, a non-empty answer) and that the case also routed to the cloud path; on them:

* ``apr_similarity``: mean over samples of the cosine (all-MiniLM-L6-v2) between the case's final answer
  and the baseline's answer (the baseline's own quality on this scale is 1, so the ratio is the mean);
* ``apr_judge``: mean LLM-judge score (1-10) of the case's answers / that of the baseline's answers, both
  judged against the unprotected request.

**A sample the case failed on (any non-``ok`` status, or an empty answer) counts as zero quality**:
similarity 0 and judge score 0 (docs/design.md), so a configuration that answers nothing has APR 0 and can
never look best.  Answers the judge gives no number for are left out of the judge ratio only.
"""
from __future__ import annotations

import math
import statistics
from typing import Any, Callable, Dict, List, Optional, Sequence

BASELINE_METHOD = "none"


def record_status(pred: Dict[str, Any]) -> str:
    """Status of a predictions.jsonl record: the first non-ok status of its result or cloud result."""
    for part in (pred.get("result"), pred.get("cloud_result")):
        st = (part or {}).get("status")
        if st and st != "ok":
            return str(st)
    return "ok"


def _answer(pred: Dict[str, Any]) -> str:
    return str((pred.get("result") or {}).get("answer") or "")


def answered(pred: Dict[str, Any]) -> bool:
    """The record completed with a non-empty answer."""
    return record_status(pred) == "ok" and bool(_answer(pred).strip())


def _request(pred: Dict[str, Any]) -> str:
    """The unprotected request as the baseline sent it (its last message)."""
    msgs = (pred.get("result") or {}).get("sent_messages") or (pred.get("cloud_result") or {}).get("sent_messages") or []
    return str(msgs[-1]["content"]) if msgs else ""


def _mean_sd(xs: Sequence[float]) -> tuple:
    if not xs:
        return math.nan, math.nan
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def apr_rows(cases: List[Dict[str, Any]], judge: Optional[Callable[[str, str], float]] = None,
             embed: Optional[Callable[[List[str]], Any]] = None) -> List[Dict[str, Any]]:
    """One row per non-baseline case with n, n_failed, similarity mean/sd, judge means and their ratio,
    and the per-sample lists (``doc_ids``, ``similarities``, ``judge_pairs``) for bootstrap intervals.

    ``cases`` are dicts with ``label``, ``row`` (the rank row) and ``preds`` (predictions.jsonl records).
    ``embed`` maps texts to unit-norm vectors (default: MiniLM); ``judge(request, answer)`` returns a
    score from 1 to 10 or NaN (default: the local LLM judge, cached on disk).
    """
    base = next((c for c in cases if c["row"].get("cloudmodel-privacy_method") == BASELINE_METHOD), None)
    if base is None:
        return []
    ref = {p["doc_id"]: p for p in base["preds"] if p.get("is_hard_example") and answered(p)}
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
        pairs = [(ref[p["doc_id"]], p) for p in c["preds"] if p.get("is_hard_example") and p["doc_id"] in ref]
        if not pairs:
            continue
        ok = [i for i, (_, p) in enumerate(pairs) if answered(p)]
        sims = [0.0] * len(pairs)
        if ok:
            emb = embed([t for i in ok for t in (_answer(pairs[i][0]), _answer(pairs[i][1]))])
            for k, i in enumerate(ok):
                sims[i] = float(emb[2 * k] @ emb[2 * k + 1])
        judge_pairs: List[Optional[tuple]] = []
        for i, (r, p) in enumerate(pairs):
            if r["doc_id"] not in base_scores:
                base_scores[r["doc_id"]] = judge(_request(r), _answer(r))
            s_r = base_scores[r["doc_id"]]
            s_p = judge(_request(r), _answer(p)) if i in ok else 0.0
            judge_pairs.append(None if math.isnan(s_p) or math.isnan(s_r) else (s_p, s_r))
        scored = [jp for jp in judge_pairs if jp]
        sim_mean, sim_sd = _mean_sd(sims)
        j_with = _mean_sd([s for s, _ in scored])[0]
        j_without = _mean_sd([s for _, s in scored])[0]
        rows.append({"label": c["label"], "n": len(pairs), "n_failed": len(pairs) - len(ok),
                     "apr_similarity": sim_mean, "apr_similarity_sd": sim_sd,
                     "judge_n": len(scored), "judge_with": j_with, "judge_without": j_without,
                     "apr_judge": j_with / j_without if scored and j_without > 0 else math.nan,
                     "doc_ids": [r["doc_id"] for r, _ in pairs], "similarities": sims, "judge_pairs": judge_pairs})
    return rows
