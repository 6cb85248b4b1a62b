"""Hard example mining (routing) that works in both Sedna mining modes."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from . import decision_store
from .models.llama_edge import as_sample
from .spans import Span


def store_key(item: Any) -> str:
    """The decision-store key of what a router receives: an edge result (inference-then-mining)
    carries it, a raw sample (mining-then-inference) is hashed."""
    if isinstance(item, dict) and "sample_key" in item:
        return item["sample_key"]
    return decision_store.sample_key(as_sample(item))


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
        words = len(as_sample(item)["text"].split())
        hard = words > self.max_edge_words
        return {"key": store_key(item), "hard": hard, "route": "cloud" if hard else "edge",
                "signal": "task_size_words", "value": words, "risk": None}

    def __call__(self, infer_result: Any = None, **_: Any) -> bool:
        d = self.decide(infer_result)
        decision_store.record(d.pop("key"), d)
        return bool(d["hard"])


class PrismGateRouter:
    """PRISM soft gating over (edge, collaborative, cloud) from the privacy profile, plus a
    privacy-first rule: a prompt whose risk R(P) reaches ``edge_risk_threshold`` stays on the edge.

    Works in both mining modes: it profiles the raw sample itself, or reuses the edge result's
    profile.  ``is_hard_example`` is ``route != "edge"``; the route reaches the cloud module through
    the per-sample decision store.
    """

    def __init__(self, edge_risk_threshold: Optional[float] = None, gate_path: Optional[str] = None,
                 detector: str = "default", **_: Any) -> None:
        from .detection import build_detector, default_detector
        from .prism_gate import WEIGHTS_FILE, SoftGate

        self.gate = SoftGate.load(Path(gate_path) if gate_path else WEIGHTS_FILE)
        self.edge_risk_threshold = None if edge_risk_threshold in (None, "none") else float(edge_risk_threshold)
        self.detector = default_detector() if detector == "default" else build_detector(detector)

    def decide_text(self, text: str, spans: Optional[List[Span]] = None) -> Dict[str, Any]:
        from .prism_gate import ROUTES, gate_features
        from .sensitivity import prism_risk

        t0 = time.perf_counter()
        if spans is None:
            spans = self.detector.analyze(text)
        route, probs = self.gate.route(gate_features(text, spans))
        risk = prism_risk(spans)
        rule = None
        if self.edge_risk_threshold is not None and risk >= self.edge_risk_threshold and route != "edge":
            route, rule = "edge", f"risk {risk} >= {self.edge_risk_threshold}: privacy-first rule keeps it on the edge"
        return {"route": route, "hard": route != "edge", "signal": "prism_gate", "risk": risk, "rule": rule,
                "probs": {r: round(float(p), 4) for r, p in zip(ROUTES, probs)},
                "entities": [s.to_dict() for s in spans], "latency_ms": (time.perf_counter() - t0) * 1e3}

    def __call__(self, infer_result: Any = None, **_: Any) -> bool:
        if isinstance(infer_result, dict) and "sample_key" in infer_result and "profile" in infer_result:
            spans = [Span(**{k: e[k] for k in ("start", "end", "category", "score", "source")})
                     for e in infer_result["profile"].get("entities", [])]
            d = self.decide_text(infer_result.get("input_text", ""), spans)
        else:
            d = self.decide_text(as_sample(infer_result)["text"])
        decision_store.record(store_key(infer_result), {k: v for k, v in d.items() if k != "entities"})
        return bool(d["hard"])


class FixedRouter:
    """Always the same route: the Cloud-only and Edge-only baselines."""

    def __init__(self, route: str = "cloud", **_: Any) -> None:
        if route not in ("edge", "cloud", "collaborative"):
            raise ValueError(f"route must be edge, cloud or collaborative, got {route!r}")
        self.route = route

    def __call__(self, infer_result: Any = None, **_: Any) -> bool:
        decision_store.record(store_key(infer_result),
                              {"route": self.route, "hard": self.route != "edge", "signal": "fixed"})
        return self.route != "edge"
