"""Operator protocol, result type and the one registry of desensitization methods."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional, Protocol, Sequence, Type

from pydantic import BaseModel, ConfigDict

from ..randomness import Randomness
from ..spans import SECRET_TOKEN, Span, is_secret

# The kinds of privacy loss; they are never added into one number.
PURE, APPROXIMATE, METRIC, HEURISTIC = "pure", "approximate", "metric", "heuristic"
EPSILON_KINDS = (PURE, APPROXIMATE, METRIC)


@dataclass(frozen=True)
class PrivacyMap:
    """What one release of a randomized operator guarantees (stated next to the mechanism).

    ``kind`` is pure ε-DP, approximate (ε, δ)-DP, metric DP (ε per unit of ``neighbouring`` distance) or
    heuristic (no formal guarantee); ``neighbouring`` names the relation; ``protects`` says what one release
    protects (e.g. "one value of the attribute, within its public domain").
    """

    mechanism: str
    kind: str
    epsilon: float
    delta: float = 0.0
    neighbouring: str = ""
    protects: str = ""

    def __post_init__(self) -> None:
        if self.kind not in (*EPSILON_KINDS, HEURISTIC):
            raise ValueError(f"unknown privacy kind {self.kind!r}")


@dataclass(frozen=True)
class PrivacyCharge:
    """One release charged to the accountant: its privacy map and what was released (no raw value)."""

    privacy_map: PrivacyMap
    what: str = ""


@dataclass(frozen=True)
class Replacement:
    """One rewritten span: original offsets, offsets in the new text, and both surface forms."""

    start: int
    end: int
    new_start: int
    new_end: int
    category: str
    original: str
    replacement: str


@dataclass
class Desensitized:
    """Operator output: the new text, the mapping, the privacy charges of its randomized releases, and
    (for reversible methods) a ``restorer`` with ``restore(answer) -> str``."""

    text: str
    replacements: List[Replacement]
    method: str
    charges: List[PrivacyCharge] = field(default_factory=list)
    restorer: Optional[Any] = None
    vault: Dict[str, str] = field(default_factory=dict)  # surrogate -> original, for reversible methods

    def epsilon_by_kind(self) -> Dict[str, float]:
        """Total ε per kind under basic sequential composition (kinds are never summed together)."""
        out: Dict[str, float] = {}
        for c in self.charges:
            if c.privacy_map.kind in EPSILON_KINDS:
                out[c.privacy_map.kind] = round(out.get(c.privacy_map.kind, 0.0) + c.privacy_map.epsilon, 9)
        return out

    def restore(self, answer: str) -> str:
        """Put original values back into a model's answer (identity for irreversible methods)."""
        return self.restorer.restore(answer) if self.restorer is not None else answer

    def masks(self) -> List[List[Any]]:
        """``[start, end, replacement]`` in original-text offsets (the TAB evaluators' mask format).

        A span whose replacement equals the original (a randomized mechanism that kept the true value)
        was not masked and is left out.
        """
        return [[r.start, r.end, r.replacement] for r in self.replacements if r.replacement != r.original]

    def to_dict(self) -> Dict[str, Any]:
        return {"text": self.text, "method": self.method, "epsilon": self.epsilon_by_kind(),
                "replacements": [asdict(r) for r in self.replacements]}


def apply_replacements(text: str, spans: Sequence[Span], replace: Callable[[Span, str], str],
                       method: str) -> Desensitized:
    """Rewrite non-overlapping spans left to right with ``replace(span, surface)``.

    Credentials (``is_secret``) are always suppressed to ``[SECRET]``, whatever the method: a surrogate, a
    generalization or a noisy copy of a password or PIN is of no use to the cloud, and noise on a PIN would
    release it.  ``replace`` is not called for them, so no randomness is drawn and nothing is kept to restore."""
    out: List[str] = []
    reps: List[Replacement] = []
    cursor, new_len = 0, 0
    for span in sorted(spans):
        if span.start < cursor:
            raise ValueError(f"overlapping spans at {span.start}: merge spans before desensitizing")
        out.append(text[cursor : span.start])
        new_len += span.start - cursor
        surface = text[span.start : span.end]
        new = SECRET_TOKEN if is_secret(span) else replace(span, surface)
        reps.append(Replacement(span.start, span.end, new_len, new_len + len(new), span.category, surface, new))
        out.append(new)
        new_len += len(new)
        cursor = span.end
    out.append(text[cursor:])
    return Desensitized("".join(out), reps, method)


class Operator(Protocol):
    """``op(text, spans, rand, scope)``: rewrite the (non-overlapping) spans of ``text``.

    ``rand`` is the only source of randomness (deployment or benchmark mode); ``scope`` names the unit that
    per-document choices belong to (a document id, a conversation), so date shifts are per document.
    """

    name: str

    def __call__(self, text: str, spans: Sequence[Span], rand: Randomness, scope: str = "") -> Desensitized: ...


class NoParams(BaseModel):
    """Parameters of an operator that takes none."""

    model_config = ConfigDict(extra="forbid")


# What an operator's restorer puts back into an answer (``OperatorSpec.restores``).
RESTORES_NOTHING, RESTORES_SURROGATES, RESTORES_PLACEHOLDERS = "", "surrogates", "placeholders"


@dataclass(frozen=True)
class OperatorSpec:
    """A registered operator: its factory, the pydantic model of its parameters, whether it takes ε,
    whether its output is a randomized release (the egress guard then does not compare the output with the
    input: a DP release may equal the true value by chance), and what its result's restorer puts back
    (``""``: irreversible, no restorer; otherwise an :class:`~.restore.OnePassRestorer` that restores
    ``"surrogates"`` or ``"placeholders"``)."""

    name: str
    factory: Callable[..., Operator]
    params: Type[BaseModel]
    budgeted: bool
    randomized_release: bool = False
    restores: str = RESTORES_NOTHING


_OPERATORS: Dict[str, OperatorSpec] = {}


def register_operator(name: str, params: Type[BaseModel] = NoParams, budgeted: bool = False,
                      randomized_release: bool = False, restores: str = RESTORES_NOTHING) -> Callable:
    """Register an operator factory under ``name`` (the ``privacy_method`` value in YAML).

    ``params`` validates the keyword arguments (declare ``extra="forbid"`` so typos are errors);
    ``budgeted`` methods take an ``epsilon`` parameter, the others refuse one; ``randomized_release`` and
    ``restores``: see :class:`OperatorSpec`.
    """
    if restores not in (RESTORES_NOTHING, RESTORES_SURROGATES, RESTORES_PLACEHOLDERS):
        raise ValueError(f"privacy method {name!r}: unknown restores={restores!r}")

    def wrap(factory: Callable[..., Operator]) -> Callable[..., Operator]:
        if name in _OPERATORS:
            raise ValueError(f"privacy method {name!r} is already registered")
        _OPERATORS[name] = OperatorSpec(name, factory, params, budgeted, randomized_release, restores)
        return factory

    return wrap


def operator_spec(name: str) -> OperatorSpec:
    if name not in _OPERATORS:
        raise KeyError(f"unknown privacy method {name!r}; known: {sorted(_OPERATORS)}")
    return _OPERATORS[name]


def validate_params(name: str, params: Dict[str, Any]) -> Dict[str, Any]:
    """Validated keyword arguments for operator ``name``; raises ``pydantic.ValidationError`` on a bad key or value."""
    spec = operator_spec(name)
    return spec.params.model_validate(params).model_dump(exclude_unset=True)


def get_operator(name: str, **params: Any) -> Operator:
    spec = operator_spec(name)
    return spec.factory(**validate_params(name, params))


def list_operators() -> List[str]:
    return sorted(_OPERATORS)
