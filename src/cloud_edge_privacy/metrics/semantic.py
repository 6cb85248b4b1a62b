"""Contextual privacy preservation (CPP) with all-MiniLM-L6-v2 from PyPI (loaded once per process).

CPP = 1 - cosine(embedding(original text), embedding(sent text)) over the samples sent to the cloud;
higher means the sent text says less about the original.  ``cpp_similarity`` reports the cosine itself.
"""
from __future__ import annotations

import math
import statistics
from functools import lru_cache
from typing import Any, List, Optional, Sequence

from .samples import unpack


@lru_cache(maxsize=1)
def _model() -> Any:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:  # torch and sentence-transformers are the [bench] extra, not the core install
        from ..errors import ModelFileError

        raise ModelFileError("CPP/APR similarity need sentence-transformers and torch: "
                             "pip install 'cloud-edge-privacy[bench]' (scripts/setup.sh installs everything)") from exc

    from ..models.embeddings import minilm_dir

    return SentenceTransformer(str(minilm_dir()), device="cpu")


def per_sample_similarity(y_true: Sequence[Any], y_pred: Sequence[Any]) -> List[Optional[float]]:
    """Per sample: cosine of the original text and the last sent message; None when nothing was sent."""
    views = unpack(y_true, y_pred)
    idx = [i for i, v in enumerate(views) if v.went_to_cloud and v.gold.get("text")]
    out: List[Optional[float]] = [None] * len(views)
    if not idx:
        return out
    pairs = [(str(views[i].gold["text"]), str(views[i].sent_messages()[-1].get("content", ""))) for i in idx]
    emb = _model().encode([t for p in pairs for t in p], normalize_embeddings=True, batch_size=16)
    for k, i in enumerate(idx):
        out[i] = float(emb[2 * k] @ emb[2 * k + 1])
    return out


def similarities(y_true: Sequence[Any], y_pred: Sequence[Any]) -> List[float]:
    return [s for s in per_sample_similarity(y_true, y_pred) if s is not None]


def cpp(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    sims = similarities(y_true, y_pred)
    return math.nan if not sims else round(1.0 - statistics.fmean(sims), 6)


def cpp_similarity(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    sims = similarities(y_true, y_pred)
    return math.nan if not sims else round(statistics.fmean(sims), 6)
