"""A sample's privacy profile: detected once on the edge, shared by the router and the gateway."""
from __future__ import annotations

import time
from typing import Any, Dict, List

from .gateway import FIELD_JOINER
from ..results import Profile
from ..sensitivity import document_risk, prism_risk

DEFAULT_TASK = "Summarize the text."


def as_sample(data: Any) -> Dict[str, str]:
    """Normalise x: Ianvs passes the JSONL ``question`` (a dict here); a bare string is a text to summarize."""
    if isinstance(data, dict):
        if data.get("text") is None:
            raise ValueError(f"sample has no 'text' field (keys: {sorted(data)})")
        return {"doc_id": str(data.get("doc_id", "")), "text": str(data["text"]),
                "instruction": str(data.get("instruction") or DEFAULT_TASK)}
    if isinstance(data, str):
        return {"doc_id": "", "text": data, "instruction": DEFAULT_TASK}
    raise TypeError(f"unsupported sample type {type(data).__name__}")


def private_fields(x: Dict[str, str]) -> List[str]:
    """The fields of a sample that go through the gateway, in the order the gateway joins them."""
    return [x["instruction"], x["text"]]


def profile_sample(x: Dict[str, str], detector: Any) -> Profile:
    """Spans over the joined private fields (instruction and text), risk scores and the detection time."""
    joined = FIELD_JOINER.join(private_fields(x))
    spans, detection_ms = detector.analyze_timed(joined)
    t0 = time.perf_counter()
    n_tokens = len(joined.split())
    risk, p_risk = document_risk(spans, n_tokens), prism_risk(spans)
    return Profile(joined, spans, risk, p_risk, n_tokens, detection_ms + (time.perf_counter() - t0) * 1e3,
                   detector=str(getattr(detector, "name", "")), detection_ms=detection_ms)
