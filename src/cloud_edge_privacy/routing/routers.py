"""Hard example mining (routing) that works in both Sedna mining modes.

Routers read only x or the edge result (never gold data), record their :class:`~.results.RouteDecision` in
the run context for the cloud module, and return a plain ``bool`` (Sedna stores what is returned and tests
its truthiness).
"""
from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any, List

from ..core.context import CONTEXTS, sample_key
from ..core.module_configs import (EdgeConfidenceRouterConfig, FixedRouterConfig, PrismGateRouterConfig,
                             validate_config)
from ..core.profiling import as_sample, profile_sample
from ..results import Route, RouteDecision
from ..spans import Span


def store_key(item: Any) -> str:
    """The decision key of what a router receives: an edge result carries it, a raw sample is hashed."""
    if isinstance(item, dict) and "sample_key" in item:
        return item["sample_key"]
    return sample_key(as_sample(item))


class EdgeConfidenceRouter:
    """Send a sample to the cloud when the edge is unlikely to answer it well.

    * ``inference-then-mining``: receives the edge result; hard when its confidence is below
      ``confidence_threshold``.
    * ``mining-then-inference``: receives the raw sample; hard when the document is longer than
      ``max_edge_words`` (a small model's quality drops with length).
    """

    Config = EdgeConfidenceRouterConfig

    def __init__(self, **hyperparameters: Any) -> None:
        c = validate_config(EdgeConfidenceRouterConfig, hyperparameters, f"hard_example_mining {type(self).__name__}")
        self.confidence_threshold = c.confidence_threshold  # type: ignore[attr-defined]
        self.max_edge_words = c.max_edge_words  # type: ignore[attr-defined]

    def decide(self, item: Any) -> RouteDecision:
        if isinstance(item, dict) and "confidence" in item and "sample_key" in item:
            hard = float(item["confidence"]) < self.confidence_threshold
            return RouteDecision(Route.CLOUD if hard else Route.EDGE, "edge_confidence", item["confidence"],
                                 risk=(item.get("profile") or {}).get("risk"))
        words = len(as_sample(item)["text"].split())
        return RouteDecision(Route.CLOUD if words > self.max_edge_words else Route.EDGE, "task_size_words", words)

    def __call__(self, infer_result: Any = None, **_: Any) -> bool:
        d = self.decide(infer_result)
        CONTEXTS.get().record_decision(store_key(infer_result), d)
        return d.hard


class PrismGateRouter:
    """PRISM soft gating over (edge, collaborative, cloud) from the privacy profile, plus a privacy-first
    rule: a prompt whose risk R(P) reaches ``edge_risk_threshold`` stays on the edge."""

    Config = PrismGateRouterConfig

    def __init__(self, **hyperparameters: Any) -> None:
        from .prism_gate import WEIGHTS_FILE, SoftGate

        c = validate_config(PrismGateRouterConfig, hyperparameters, f"hard_example_mining {type(self).__name__}")
        self.gate = SoftGate.load(Path(c.gate_path) if c.gate_path else WEIGHTS_FILE)  # type: ignore[attr-defined]
        self.edge_risk_threshold = c.edge_risk_threshold  # type: ignore[attr-defined]
        self.detector_preset = c.detector  # type: ignore[attr-defined]

    def decide_text(self, text: str, spans: List[Span]) -> RouteDecision:
        from .prism_gate import ROUTES, gate_features
        from ..sensitivity import prism_risk

        t0 = time.perf_counter()
        gated, probs = self.gate.route(gate_features(text, spans))
        route, risk, rule = Route(gated), prism_risk(spans), None
        if self.edge_risk_threshold is not None and risk >= self.edge_risk_threshold and route != Route.EDGE:
            route, rule = Route.EDGE, f"risk {risk} >= {self.edge_risk_threshold}: privacy-first rule keeps it on the edge"
        return RouteDecision(route, "prism_gate", risk=risk, rule=rule,
                             probs={r: round(float(p), 4) for r, p in zip(ROUTES, probs)},
                             latency_ms=(time.perf_counter() - t0) * 1e3)

    def decide(self, item: Any) -> RouteDecision:
        if isinstance(item, dict) and "sample_key" in item and "profile" in item:
            spans = [Span.from_dict(e) for e in item["profile"].get("entities", [])]
            return self.decide_text(item.get("input_text", ""), spans)
        x = as_sample(item)
        prof = profile_sample(x, CONTEXTS.get().detector(self.detector_preset))
        # the profile travels with the decision: the gateway protects with these spans, not a second detection
        return replace(self.decide_text(x["text"], prof.spans), profile=prof)

    def __call__(self, infer_result: Any = None, **_: Any) -> bool:
        d = self.decide(infer_result)
        CONTEXTS.get().record_decision(store_key(infer_result), d)
        return d.hard


class FixedRouter:
    """Always the same route: the Cloud-only and Edge-only baselines."""

    Config = FixedRouterConfig

    def __init__(self, **hyperparameters: Any) -> None:
        c = validate_config(FixedRouterConfig, hyperparameters, f"hard_example_mining {type(self).__name__}")
        self.route = Route(c.route)  # type: ignore[attr-defined]

    def __call__(self, infer_result: Any = None, **_: Any) -> bool:
        d = RouteDecision(self.route, "fixed")
        CONTEXTS.get().record_decision(store_key(infer_result), d)
        return d.hard
