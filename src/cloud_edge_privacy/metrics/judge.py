"""Answer quality by an LLM judge (1-10), and route shares, from the result objects.

The judge is the local llama.cpp model (a 0.5B model is a weak judge: treat its scores as a coarse,
relative signal).  Scores are cached on disk by a stable hash of (judge model, prompt, answer).
"""
from __future__ import annotations

import math
import re
import statistics
from typing import Any, Optional, Sequence

from .performance import sample_route
from .samples import unpack

JUDGE_PROMPT = ("You grade answers. Read the user's request and the assistant's answer, then rate how "
                "helpful, correct and on-topic the answer is on a scale from 1 (useless) to 10 (excellent). "
                "Reply with the number only.\n\nRequest:\n{request}\n\nAnswer:\n{answer}\n\nScore (1-10):")


def default_judge() -> Any:
    """The local helper LM used as judge (one per process, kept by ``local_helper_model``)."""
    from ..models.llama_edge import local_helper_model

    return local_helper_model(max_tokens=4, seed=7)


def judge_score(request: str, answer: str, model: Optional[Any] = None) -> float:
    """One judgement; NaN when the answer is empty or the judge gives no number."""
    if not answer.strip():
        return math.nan
    out = (model or default_judge()).chat([{"role": "user", "content": JUDGE_PROMPT.format(
        request=request[:3000], answer=answer[:2000])}])
    m = re.search(r"\b(10|[1-9])\b", out["answer"])
    return float(m.group(1)) if m else math.nan


def llm_judge(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Mean judge score of the final answers; a failed sample (no answer) scores 0, an answer the judge
    gives no number for is left out."""
    scores = []
    for v in unpack(y_true, y_pred):
        if not v.completed:
            scores.append(0.0)
            continue
        s = judge_score(str(v.gold.get("text", "")), str((v.result or {}).get("answer") or ""))
        if not math.isnan(s):
            scores.append(s)
    return round(statistics.fmean(scores), 3) if scores else math.nan


def _share(route: str):
    def f(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
        views = unpack(y_true, y_pred)
        if not views:
            return math.nan
        routes = [sample_route(v) for v in views]
        return round(sum(r == route for r in routes) / len(routes), 6)

    f.__name__ = f"{route}_share"
    return f


edge_share = _share("edge")
collaborative_share = _share("collaborative")
cloud_share = _share("cloud")
