"""Contextual privacy preservation (CPP) with all-MiniLM-L6-v2 from PyPI (loaded once per process).

CPP = 1 - cosine(embedding(original text), embedding(sent text)) over the samples sent to the cloud;
higher means the sent text says less about the original.  ``cpp_similarity`` reports the cosine itself.
"""
from __future__ import annotations

import math
import statistics
from functools import lru_cache
from typing import Any, List, Sequence

from .samples import unpack


@lru_cache(maxsize=1)
def _model() -> Any:
    from sentence_transformers import SentenceTransformer

    from ..models.embeddings import minilm_dir

    return SentenceTransformer(str(minilm_dir()), device="cpu")


def similarities(y_true: Sequence[Any], y_pred: Sequence[Any]) -> List[float]:
    pairs = [(str(v.gold.get("text", "")), v.cloud["sent_messages"][-1]["content"])
             for v in unpack(y_true, y_pred) if v.went_to_cloud and v.gold.get("text")]
    if not pairs:
        return []
    emb = _model().encode([t for p in pairs for t in p], normalize_embeddings=True, batch_size=16)
    return [float(emb[2 * i] @ emb[2 * i + 1]) for i in range(len(pairs))]


def cpp(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    sims = similarities(y_true, y_pred)
    return math.nan if not sims else round(1.0 - statistics.fmean(sims), 6)


def cpp_similarity(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    sims = similarities(y_true, y_pred)
    return math.nan if not sims else round(statistics.fmean(sims), 6)
