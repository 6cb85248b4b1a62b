"""The typed values that pass between the rooms of the edge path, and their one serialisation.

router -> :class:`RouteDecision` (recorded in the run context) -> pipeline -> :class:`CloudReply` (from the
cloud client) -> :class:`SampleResult` (one per sample and module, edge or cloud route).  Profiling gives a
:class:`Profile`.  :class:`Route` and :class:`Status` are ``str`` enums, so a value compares equal to its
string and JSON keeps the strings.

Serialisation happens in one place, here: ``to_dict`` at the Ianvs boundary (the adapters in
``ianvs_modules.py`` hand Sedna plain dicts, which survive ``deepcopy``, Sedna's progress bar and our
``predictions.jsonl``) and ``from_dict`` where dicts come back (``metrics.samples.unpack``, the JSONL files).
Keys whose value is ``None`` are not written.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any, Dict, List, Optional

from .spans import Span


class Route(str, Enum):
    """Where a sample is answered."""

    EDGE = "edge"
    COLLABORATIVE = "collaborative"
    CLOUD = "cloud"

    def __str__(self) -> str:
        return self.value


class Status(str, Enum):
    """The outcome of one sample; everything but ``ok`` is a failure of that sample only."""

    OK = "ok"
    PRIVACY_FAILURE = "privacy_failure"  # the gateway or the egress guard refused: nothing was sent
    BUDGET_EXCEEDED = "budget_exceeded"  # the accountant refused the release: nothing was sent
    CLOUD_FAILURE = "cloud_failure"
    EDGE_FAILURE = "edge_failure"
    ERROR = "error"  # an unexpected exception around the module call (our runner)

    def __str__(self) -> str:
        return self.value


class Stage(str, Enum):
    """The one spelling of the timing keys of :attr:`SampleResult.timings_ms` (values in milliseconds)."""

    PROFILING = "profiling"
    DETECTION = "detection"
    DESENSITIZATION = "desensitization"
    EGRESS_GUARD = "egress_guard"
    CLOUD_CALL = "cloud_call"
    RESTORATION = "restoration"
    REFINEMENT = "refinement"
    EDGE_GENERATION = "edge_generation"

    def __str__(self) -> str:
        return self.value


def _plain(value: Any) -> Any:
    """A JSON-ready copy: enums to their strings, typed values to dicts, ``None`` values dropped from dicts."""
    if isinstance(value, Enum):
        return value.value
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, dict):
        return {str(_plain(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


class _Serialised:
    """``to_dict`` over the dataclass fields (``None`` left out, ``extra`` merged last)."""

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            if f.name == "extra":
                out.update({k: _plain(x) for k, x in v.items()})
            elif v is not None:
                out[f.name] = _plain(v)
        return out


@dataclass(frozen=True)
class RouteDecision(_Serialised):
    """A router's decision for one sample: the route and what decided it (no gold data is ever read)."""

    route: Route
    signal: str  # edge_confidence, task_size_words, prism_gate, fixed, no-router-decision
    value: Any = None  # the signal's value (the edge's confidence, the number of words)
    risk: Optional[float] = None
    rule: Optional[str] = None  # a privacy-first rule that overrode the gate
    probs: Optional[Dict[str, float]] = None
    latency_ms: Optional[float] = None
    # the profile the router computed, handed to the gateway in memory (never serialised: it holds the raw text)
    profile: Optional["Profile"] = field(default=None, repr=False, compare=False)

    @property
    def hard(self) -> bool:
        """Sedna's "hard example": anything but the edge route."""
        return self.route != Route.EDGE

    def to_dict(self) -> Dict[str, Any]:
        d = super().to_dict()
        d.pop("profile", None)
        return dict({"hard": self.hard}, **d)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "RouteDecision":
        return cls(Route(d.get("route", "cloud")), str(d.get("signal") or d.get("source") or ""),
                   d.get("value"), d.get("risk"), d.get("rule"), d.get("probs"), d.get("latency_ms"))


NO_DECISION = RouteDecision(Route.CLOUD, "no-router-decision")


@dataclass(frozen=True)
class Profile(_Serialised):
    """A sample's privacy profile: spans over the joined private fields, risk scores, detection time."""

    joined: str
    spans: List[Span]
    risk: float
    prism_risk: float
    n_tokens: int
    profiling_ms: float
    detector: str = ""          # the name of the detector that found the spans
    detection_ms: float = 0.0   # the detection part of profiling_ms

    def to_dict(self) -> Dict[str, Any]:
        """The form a result carries (the joined text stays on the edge, in memory)."""
        return {"entities": [s.to_dict() for s in self.spans], "risk": self.risk, "prism_risk": self.prism_risk,
                "n_tokens": self.n_tokens, "profiling_ms": self.profiling_ms}


@dataclass(frozen=True)
class CloudReply(_Serialised):
    """What the cloud client returns for one chat request."""

    answer: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    call_ms: float = 0.0
    cache_hit: bool = False
    attempts: int = 0


@dataclass
class Tokens(_Serialised):
    edge_prompt: int = 0
    edge_completion: int = 0
    cloud_prompt: int = 0
    cloud_completion: int = 0

    @property
    def cloud(self) -> int:
        return self.cloud_prompt + self.cloud_completion


@dataclass
class SampleResult(_Serialised):
    """One module's result for one sample (edge route: the edge model's; cloud and collaborative routes: the
    pipeline's).  Failed samples carry ``status`` and a ``reason`` that holds no raw value."""

    sample_id: str
    route: Optional[Route] = None
    status: Status = Status.OK
    answer: str = ""
    reason: Optional[str] = None
    sample_key: Optional[str] = None
    router: Optional[RouteDecision] = None
    privacy_method: Optional[str] = None
    randomness: Optional[str] = None
    input_text: Optional[str] = None  # edge route: what the inference-then-mining router reads
    profile: Optional[Dict[str, Any]] = None  # edge route: Profile.to_dict()
    sent_messages: Optional[List[Dict[str, Any]]] = None  # exactly what left the edge (the audited messages)
    masks: Optional[List[Any]] = None
    detected_entities: Optional[List[Dict[str, Any]]] = None
    epsilon_spent: Optional[Dict[str, float]] = None
    tokens: Tokens = field(default_factory=Tokens)
    timings_ms: Dict[str, float] = field(default_factory=dict)  # keys: Stage values
    cloud_answer: Optional[str] = None
    sketch: Optional[str] = None  # collaborative route: the cloud's restored sketch
    cloud_draft: Optional[str] = None  # edge refinement of a direct cloud answer (LDP baselines)
    cloud_cache_hit: Optional[bool] = None
    cloud_attempts: Optional[int] = None
    confidence: Optional[float] = None
    confidence_method: Optional[str] = None
    edge_cache_hit: Optional[bool] = None
    truncated_input: Optional[bool] = None
    model: Optional[Dict[str, Any]] = None
    extra: Dict[str, Any] = field(default_factory=dict)  # keys added by wrappers (e.g. PRISM's metering)

    @property
    def ok(self) -> bool:
        return self.status == Status.OK

    def time(self, stage: Stage, ms: float) -> None:
        self.timings_ms[stage.value] = float(ms)

    def fail(self, status: Status, reason: str) -> "SampleResult":
        self.status, self.reason = status, reason
        return self

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "SampleResult":
        """The inverse of ``to_dict``; unknown keys go to ``extra``."""
        known = {f.name for f in fields(cls)} - {"extra"}
        kw: Dict[str, Any] = {k: v for k, v in d.items() if k in known}
        kw["sample_id"] = str(d.get("sample_id") or "")
        if kw.get("route") is not None:
            kw["route"] = Route(kw["route"])
        kw["status"] = Status(d.get("status") or Status.OK.value)
        if isinstance(kw.get("router"), dict):
            kw["router"] = RouteDecision.from_dict(kw["router"])
        kw["tokens"] = Tokens(**{k: int(v) for k, v in (d.get("tokens") or {}).items()
                                 if k in {f.name for f in fields(Tokens)}})
        kw["timings_ms"] = dict(d.get("timings_ms") or {})
        return cls(**kw, extra={k: v for k, v in d.items() if k not in known})
