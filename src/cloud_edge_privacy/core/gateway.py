"""The privacy gateway: detect once over every outgoing field, desensitize, charge the DP budget.

All fields of one request (system and user messages, instruction, document, tool results) are joined into
one document, so detection and co-reference see them together and one operator call gives consistent
replacements across fields (the instruction's "John Smith" gets the same surrogate as the document's).
Any exception becomes :class:`PrivacyGatewayError`: the caller sends nothing (fail closed).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..desensitization import Desensitized, get_operator
from ..desensitization.base import operator_spec
from ..errors import BenchmarkError, PrivacyGatewayError
from ..randomness import Randomness
from ..results import Profile, Stage
from ..spans import Span

NO_PROTECTION = "none"  # baseline only: sends the raw text; never counts as a privacy method
FIELD_JOINER = "\n\n"


def budgeted_methods() -> Tuple[str, ...]:
    """Methods that take a privacy budget ε (declared by the operators themselves)."""
    from ..desensitization import list_operators

    return tuple(m for m in list_operators() if operator_spec(m).budgeted)


def split_spans_at(spans: Sequence[Span], bounds: Sequence[Tuple[int, int]]) -> List[Span]:
    """Clip spans to field boundaries: a span crossing two fields becomes one span per field."""
    out: List[Span] = []
    for s in spans:
        for lo, hi in bounds:
            a, b = max(s.start, lo), min(s.end, hi)
            if a < b:
                out.append(Span(a, b, s.category, s.score, s.source))
    return out


@dataclass
class ProtectedFields:
    """The outcome of protecting one request's fields."""

    originals: List[str]
    fields: List[str]
    method: str
    spans: List[Span]                       # on the joined original document
    result: Optional[Desensitized]
    untouched: List[List[Tuple[int, int]]]  # per protected field: regions no replacement produced
    replaced: List[Tuple[Span, str]]        # (original span, its replacement) for every rewritten span
    joined: str
    timings_ms: Dict[str, float] = field(default_factory=dict)  # keys: results.Stage values
    repairs: Dict[str, int] = field(default_factory=dict)  # "rule/category" -> values the egress guard repaired

    def restore(self, answer: str) -> str:
        """Put pseudonyms and placeholders back into an answer (identity for irreversible methods)."""
        return self.result.restore(answer) if self.result is not None else answer

    def masks(self, field_index: int = -1) -> List[List[Any]]:
        """``[start, end, replacement]`` in the offsets of one original field (TAB's mask format)."""
        idx = field_index % len(self.originals)
        lo = sum(len(f) + len(FIELD_JOINER) for f in self.originals[:idx])
        hi = lo + len(self.originals[idx])
        return [[s.start - lo, s.end - lo, new] for s, new in self.replaced
                if lo <= s.start and s.end <= hi and new != self.joined[s.start:s.end]]

    def epsilon_by_kind(self) -> Dict[str, float]:
        return self.result.epsilon_by_kind() if self.result is not None else {}


class PrivacyGateway:
    """Detect private spans and rewrite them with one configured method.

    ``accountant`` (optional) is charged with every randomized release before the text is returned; a
    budget overrun raises :class:`PrivacyGatewayError`.
    """

    def __init__(self, method: str, randomness: Randomness, detector: Any = None, accountant: Any = None,
                 method_params: Optional[Dict[str, Any]] = None) -> None:
        self.method = method
        self.randomness = randomness
        self._detector = detector
        self.accountant = accountant
        # An unknown method or a bad parameter fails here, when the gateway is built.
        self.operator = None if method == NO_PROTECTION else get_operator(method, **(method_params or {}))

    @property
    def detector(self) -> Any:
        if self._detector is None:
            from ..detection import build_detector

            self._detector = build_detector("default")
        return self._detector

    def warm_up(self) -> None:
        """Load the detection models now, so that loading is not counted as per-sample latency."""
        if self.operator is not None:
            warm = getattr(self.detector, "warm_up", None)  # a Detector loads every model and table it uses
            if callable(warm):
                warm()
            else:
                self.detector.analyze("Warm-up: Ms Anna Berg, 1 May 2001, Oslo.")

    def detector_name(self) -> str:
        return str(getattr(self.detector, "name", ""))

    def detect(self, text: str) -> Tuple[List[Span], float]:
        if hasattr(self.detector, "analyze_timed"):  # cache hits replay the original detection time
            return self.detector.analyze_timed(text)
        t0 = time.perf_counter()
        spans = self.detector.analyze(text)
        return spans, (time.perf_counter() - t0) * 1e3

    def protect(self, text: str, scope: str = "") -> ProtectedFields:
        return self.protect_fields([text], scope)

    def protect_fields(self, fields: Sequence[str], scope: str = "",
                       randomness: Optional[Randomness] = None, profile: Optional[Profile] = None,
                       charge: bool = True) -> ProtectedFields:
        """Protect all ``fields`` of one request together; ``scope`` names the document/conversation;
        ``randomness`` overrides the gateway's for this call (the proxy's per-conversation keys); ``profile``
        is the router's profile of the same fields: its spans are used when it was made by this gateway's
        detector over exactly this text (otherwise the gateway detects itself).  ``charge=False`` leaves the
        accountant alone: the caller charges (:meth:`charge`) the protection it finally sends."""
        originals = [str(f) for f in fields]
        joined = FIELD_JOINER.join(originals)
        if self.operator is None:
            return ProtectedFields(originals, list(originals), NO_PROTECTION, [], None,
                                   [[(0, len(f))] for f in originals], [], joined,
                                   {Stage.DETECTION.value: 0.0, Stage.DESENSITIZATION.value: 0.0})
        try:
            if profile is not None and profile.joined == joined and profile.detector == self.detector_name():
                spans, detection_ms = list(profile.spans), profile.detection_ms
            else:
                spans, detection_ms = self.detect(joined)
        except PrivacyGatewayError:
            raise
        except Exception as exc:  # fail closed: the caller must not send anything
            raise self._failure(exc) from exc
        return self._apply(originals, joined, spans, scope, randomness, detection_ms, charge)

    def reprotect(self, prot: ProtectedFields, extra: Sequence[Span], scope: str = "",
                  randomness: Optional[Randomness] = None, charge: bool = False) -> ProtectedFields:
        """Protect the same fields again with the detected spans plus ``extra`` ones (the egress guard's
        repairs; they must not overlap the detected spans), without detecting again."""
        spans = sorted(list(prot.spans) + list(extra), key=lambda s: (s.start, s.end))
        return self._apply(prot.originals, prot.joined, spans, scope, randomness,
                           prot.timings_ms.get(Stage.DETECTION.value, 0.0), charge)

    def charge(self, scope: str, prot: ProtectedFields) -> None:
        """Charge the accountant (if any) with what ``prot`` releases; raises ``BudgetExceededError``."""
        if self.accountant is not None and prot.result is not None:
            self.accountant.charge(scope, prot.result.charges)

    def _apply(self, originals: List[str], joined: str, spans: Sequence[Span], scope: str,
               randomness: Optional[Randomness], detection_ms: float, charge: bool) -> ProtectedFields:
        try:
            bounds, pos = [], 0
            for f in originals:
                bounds.append((pos, pos + len(f)))
                pos += len(f) + len(FIELD_JOINER)
            clipped = split_spans_at(spans, bounds)
            t1 = time.perf_counter()
            result = self.operator(joined, clipped, randomness or self.randomness, scope)
            desens_ms = (time.perf_counter() - t1) * 1e3
            if charge and self.accountant is not None:
                self.accountant.charge(scope, result.charges)
            protected, untouched = _split_result(result, originals)
        except PrivacyGatewayError:
            raise
        except Exception as exc:  # fail closed: the caller must not send anything
            raise self._failure(exc) from exc
        replaced = [(Span(r.start, r.end, r.category), r.replacement) for r in result.replacements]
        return ProtectedFields(originals, protected, self.method, clipped, result, untouched, replaced, joined,
                               {Stage.DETECTION.value: detection_ms, Stage.DESENSITIZATION.value: desens_ms})

    def _failure(self, exc: Exception) -> PrivacyGatewayError:
        # Our own errors are written without raw values; any other message may quote the input.
        detail = str(exc) if isinstance(exc, BenchmarkError) else "message withheld: it may quote private input"
        return PrivacyGatewayError(f"privacy method {self.method!r} failed: {type(exc).__name__} ({detail})")


def _split_result(result: Desensitized, originals: Sequence[str]) -> Tuple[List[str], List[List[Tuple[int, int]]]]:
    """Cut the desensitized joined text back into fields, with each field's untouched regions."""
    reps = sorted(result.replacements, key=lambda r: r.start)

    def new_pos(old: int) -> int:
        shift = 0
        for r in reps:
            if r.end <= old:
                shift += (r.new_end - r.new_start) - (r.end - r.start)
        return old + shift

    fields, untouched, pos = [], [], 0
    for f in originals:
        lo, hi = new_pos(pos), new_pos(pos + len(f))
        fields.append(result.text[lo:hi])
        regions, cur = [], lo
        for r in reps:
            if r.new_start >= lo and r.new_end <= hi:
                if r.new_start > cur:
                    regions.append((cur - lo, r.new_start - lo))
                cur = max(cur, r.new_end)
        if hi > cur:
            regions.append((cur - lo, hi - lo))
        untouched.append(regions)
        pos += len(f) + len(FIELD_JOINER)
    joined_new = FIELD_JOINER.join(fields)
    if joined_new != result.text:
        raise PrivacyGatewayError("desensitized text could not be split back into its fields "
                                  "(an operator rewrote a field separator)")
    return fields, untouched
