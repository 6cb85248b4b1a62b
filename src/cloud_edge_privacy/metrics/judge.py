"""Answer quality by an LLM judge (1-10), its reliability, and route shares, from the result objects.

The judge is the local llama.cpp model by default (a 0.5B model is a weak judge: its reliability is measured
with :func:`judge_reliability`, two differently worded judge prompts on the same answers).  Setting
``CEP_JUDGE_BASE_URL`` and ``CEP_JUDGE_MODEL`` (key in ``CEP_JUDGE_API_KEY``) sends the same prompts to any
OpenAI-compatible endpoint instead, e.g. GPT-4o as in PRISM's paper.  Only answers and the user's request are
sent to the judge: run a remote judge only on data you may share with it.
"""
from __future__ import annotations

import math
import os
import re
import statistics
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

from .performance import sample_route
from .samples import unpack

JUDGE_PROMPTS: Dict[str, str] = {
    "a": ("You grade answers. Read the user's request and the assistant's answer, then rate how "
          "helpful, correct and on-topic the answer is on a scale from 1 (useless) to 10 (excellent). "
          "Reply with the number only.\n\nRequest:\n{request}\n\nAnswer:\n{answer}\n\nScore (1-10):"),
    "b": ("Act as an impartial evaluator of an AI assistant. Judge the response below for relevance to the "
          "user's question, coherence and how informative it is. Give one integer rating from 1 (very poor) "
          "to 10 (perfect) and nothing else.\n\n[Question]\n{request}\n\n[Response]\n{answer}\n\nRating:"),
}
JUDGE_PROMPT = JUDGE_PROMPTS["a"]
_SCORE = re.compile(r"\b(10|[1-9])\b")


def parse_score(text: str) -> float:
    """The first integer 1-10 in a judge's reply; NaN when there is none."""
    m = _SCORE.search(text or "")
    return float(m.group(1)) if m else math.nan


class LocalJudge:
    """The local llama.cpp model as judge (greedy decoding; replies cached on disk)."""

    def __init__(self, model: Optional[Any] = None, seed: int = 7) -> None:
        if model is None:
            from ..models.llama_edge import local_helper_model

            model = local_helper_model(max_tokens=4, seed=seed)
        self.model = model
        self.name = f"local:{getattr(model, 'model', 'llama.cpp')}"

    def reply(self, prompt: str) -> str:
        return self.model.chat([{"role": "user", "content": prompt}])["answer"]


class RemoteJudge:
    """An OpenAI-compatible endpoint as judge (temperature 0)."""

    def __init__(self, base_url: str, model: str, api_key: str = "", timeout_s: float = 120.0) -> None:
        import openai

        self.client = openai.OpenAI(base_url=base_url, api_key=api_key or "unset", timeout=timeout_s, max_retries=3)
        self.model_name = model
        self.name = f"remote:{model}"

    def reply(self, prompt: str) -> str:
        resp = self.client.chat.completions.create(model=self.model_name, temperature=0.0, max_tokens=8,
                                                   messages=[{"role": "user", "content": prompt}])
        return (resp.choices[0].message.content or "") if resp.choices else ""


def make_judge(base_url: Optional[str] = None, model: Optional[str] = None, api_key_env: str = "CEP_JUDGE_API_KEY") -> Any:
    """A remote judge when a base URL is given (or ``$CEP_JUDGE_BASE_URL`` is set), else the local model."""
    base_url = base_url or os.environ.get("CEP_JUDGE_BASE_URL")
    if base_url:
        model = model or os.environ.get("CEP_JUDGE_MODEL")
        if not model:
            from ..errors import ConfigError

            raise ConfigError("a judge base URL is set but no judge model (--judge-model or $CEP_JUDGE_MODEL)")
        return RemoteJudge(base_url, model, os.environ.get(api_key_env, ""))
    return LocalJudge()


def default_judge() -> Any:
    return make_judge()


def judge_score(request: str, answer: str, model: Optional[Any] = None, prompt: str = "a") -> float:
    """One judgement with judge prompt ``prompt``; NaN when the answer is empty or no number comes back.
    ``model`` is a judge (``reply``) or a chat model (``chat``, as the local LLM)."""
    if not answer.strip():
        return math.nan
    text = JUDGE_PROMPTS[prompt].format(request=request[:3000], answer=answer[:2000])
    judge = model or default_judge()
    if hasattr(judge, "reply"):
        return parse_score(judge.reply(text))
    return parse_score(judge.chat([{"role": "user", "content": text}])["answer"])


def llm_judge(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Mean judge score of the final answers; a failed sample (no answer) scores 0, an answer the judge
    gives no number for is left out."""
    judge = default_judge()
    scores = []
    for v in unpack(y_true, y_pred):
        if not v.completed:
            scores.append(0.0)
            continue
        s = judge_score(str(v.gold.get("text", "")), (v.result.answer if v.result is not None else ""), judge)
        if not math.isnan(s):
            scores.append(s)
    return round(statistics.fmean(scores), 3) if scores else math.nan


@dataclass(frozen=True)
class Reliability:
    """Agreement of two judgements of the same answers, and how much the scores separate methods."""

    n: int
    spearman: float
    exact: float          # share of answers with the same score
    within_one: float     # share with |a - b| <= 1
    mean_abs_diff: float
    sd_a: float           # spread of all scores (prompt a)
    method_range_a: float  # max - min of the per-method means (prompt a)
    method_range_b: float

    def to_dict(self) -> Dict[str, float]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


def _ranks(x: List[float]) -> List[float]:
    order = sorted(range(len(x)), key=lambda i: x[i])
    ranks = [0.0] * len(x)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and x[order[j + 1]] == x[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2.0
        i = j + 1
    return ranks


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman rank correlation with average ranks for ties; NaN when either side is constant."""
    ra, rb = _ranks(list(a)), _ranks(list(b))
    if len(ra) < 2 or statistics.pstdev(ra) == 0 or statistics.pstdev(rb) == 0:
        return math.nan
    return statistics.correlation(ra, rb)


def judge_reliability(a: Sequence[float], b: Sequence[float], methods: Sequence[str]) -> Reliability:
    """Reliability of two judgements (e.g. two judge prompts) of the same answers; NaN pairs are dropped."""
    keep = [i for i in range(len(a)) if not (math.isnan(a[i]) or math.isnan(b[i]))]
    xa, xb, ms = [a[i] for i in keep], [b[i] for i in keep], [methods[i] for i in keep]
    if not keep:
        return Reliability(0, *([math.nan] * 7))

    def method_range(x: List[float]) -> float:
        means = [statistics.fmean([v for v, m in zip(x, ms) if m == name]) for name in sorted(set(ms))]
        return max(means) - min(means)

    diffs = [abs(p - q) for p, q in zip(xa, xb)]
    return Reliability(len(keep), spearman(xa, xb), sum(d == 0 for d in diffs) / len(diffs),
                       sum(d <= 1 for d in diffs) / len(diffs), statistics.fmean(diffs),
                       statistics.pstdev(xa), method_range(xa), method_range(xb))


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
