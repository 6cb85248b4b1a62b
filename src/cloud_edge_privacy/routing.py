"""Hard example mining (routing) that works in both Sedna mining modes."""
from __future__ import annotations

from typing import Any, Dict

from . import decision_store
from .models.llama_edge import as_sample


class EdgeConfidenceRouter:
    """Send a sample to the cloud when the edge is unlikely to answer it well.

    * ``inference-then-mining``: receives the edge result; hard when its confidence is below
      ``confidence_threshold``.
    * ``mining-then-inference``: receives the raw sample (the edge has not run); hard when the
      document is longer than ``max_edge_words`` (a small model's quality drops with length).

    Returns a plain ``bool`` (Sedna stores whatever is returned and tests its truthiness) and
    records the decision for the cloud module under the sample's stable key.
    """

    def __init__(self, confidence_threshold: float = 0.8, max_edge_words: int = 400, **_: Any) -> None:
        self.confidence_threshold = float(confidence_threshold)
        self.max_edge_words = int(max_edge_words)

    def decide(self, item: Any) -> Dict[str, Any]:
        if isinstance(item, dict) and "confidence" in item and "sample_key" in item:
            hard = float(item["confidence"]) < self.confidence_threshold
            return {"key": item["sample_key"], "hard": hard, "route": "cloud" if hard else "edge",
                    "signal": "edge_confidence", "value": item["confidence"],
                    "risk": (item.get("profile") or {}).get("risk")}
        x = as_sample(item)
        words = len(x["text"].split())
        hard = words > self.max_edge_words
        return {"key": decision_store.sample_key(x), "hard": hard, "route": "cloud" if hard else "edge",
                "signal": "task_size_words", "value": words, "risk": None}

    def __call__(self, infer_result: Any = None, **_: Any) -> bool:
        d = self.decide(infer_result)
        decision_store.record(d.pop("key"), d)
        return bool(d["hard"])
