"""The privacy gateway: detect -> desensitize, run on the edge before anything goes to the cloud."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from .desensitization import Desensitized, get_operator
from .desensitization.pseudonyms import restore_answer
from .detection import Detector, default_detector
from .errors import PrivacyGatewayError
from .spans import Span

NO_PROTECTION = "none"  # baseline only: sends the raw text; never counts as a privacy method
EPSILON_METHODS = ("dp_numbers", "metric_dp_words", "prism_ldp", "uniform_ldp")  # methods that take a privacy budget ε


@dataclass
class Protected:
    original: str
    text: str
    method: str
    spans: List[Span]
    result: Optional[Desensitized]
    timings_ms: Dict[str, float] = field(default_factory=dict)

    def masks(self) -> List[List[Any]]:
        return self.result.masks() if self.result else []

    def restore(self, answer: str) -> str:
        """Put pseudonymized values back into an answer (no-op for irreversible methods)."""
        return restore_answer(answer, self.result) if self.result is not None else answer


class PrivacyGateway:
    """Detect private spans and rewrite them with the configured method.

    Any exception inside is re-raised as :class:`PrivacyGatewayError` so that callers fail closed.
    """

    def __init__(self, method: str = "placeholder", seed: int = 0, detector: Optional[Detector] = None,
                 epsilon: Optional[float] = None, **method_params: Any) -> None:
        self.method = method
        self.seed = seed
        self._detector = detector
        if epsilon is not None and method in EPSILON_METHODS:
            method_params["epsilon"] = float(epsilon)
        self.operator = None if method == NO_PROTECTION else get_operator(method, **method_params)

    @property
    def detector(self) -> Detector:
        if self._detector is None:
            self._detector = default_detector()
        return self._detector

    def warm_up(self) -> None:
        """Load the detection models now, so that loading is not counted as per-sample latency."""
        if self.operator is not None:
            self.detector.analyze("Warm-up: Ms Anna Berg, 1 May 2001, Oslo.")

    def protect(self, text: str) -> Protected:
        try:
            if self.operator is None:
                return Protected(text, text, NO_PROTECTION, [], None, {"detection_ms": 0.0, "desensitization_ms": 0.0})
            t0 = time.perf_counter()
            if hasattr(self.detector, "analyze_timed"):  # a Detector: cache hits replay the original time
                spans, detection_ms = self.detector.analyze_timed(text)
            else:  # any object with analyze(text) -> spans
                spans = self.detector.analyze(text)
                detection_ms = (time.perf_counter() - t0) * 1e3
            t1 = time.perf_counter()
            result = self.operator(text, spans, seed=self.seed)
            t2 = time.perf_counter()
        except Exception as exc:  # fail closed: the caller must not send anything
            raise PrivacyGatewayError(f"privacy method {self.method!r} failed: {type(exc).__name__}: {exc}") from exc
        return Protected(text, result.text, self.method, spans, result,
                         {"detection_ms": detection_ms, "desensitization_ms": (t2 - t1) * 1e3})
