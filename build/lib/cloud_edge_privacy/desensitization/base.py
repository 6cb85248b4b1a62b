"""Operator protocol, result type and the one registry of desensitization methods."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional, Protocol, Sequence

from ..spans import Span


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
    """Operator output: the new text, the mapping, and what the method spent (ε for DP methods)."""

    text: str
    replacements: List[Replacement]
    method: str
    epsilon: Optional[float] = None
    vault: Dict[str, str] = field(default_factory=dict)  # surrogate -> original, for reversible methods

    def masks(self) -> List[List[Any]]:
        """``[start, end, replacement]`` in original-text offsets (the TAB evaluators' mask format).

        A span whose replacement equals the original (a randomized mechanism that kept the true value)
        was not masked and is left out.
        """
        return [[r.start, r.end, r.replacement] for r in self.replacements if r.replacement != r.original]

    def to_dict(self) -> Dict[str, Any]:
        return {"text": self.text, "method": self.method, "epsilon": self.epsilon,
                "replacements": [asdict(r) for r in self.replacements]}


def apply_replacements(text: str, spans: Sequence[Span], replace: Callable[[Span, str], str],
                       method: str) -> Desensitized:
    """Rewrite non-overlapping spans left to right with ``replace(span, surface)``."""
    out: List[str] = []
    reps: List[Replacement] = []
    cursor, new_len = 0, 0
    for span in sorted(spans):
        if span.start < cursor:
            raise ValueError(f"overlapping spans at {span.start}: merge spans before desensitizing")
        out.append(text[cursor : span.start])
        new_len += span.start - cursor
        surface = text[span.start : span.end]
        new = replace(span, surface)
        reps.append(Replacement(span.start, span.end, new_len, new_len + len(new), span.category, surface, new))
        out.append(new)
        new_len += len(new)
        cursor = span.end
    out.append(text[cursor:])
    return Desensitized("".join(out), reps, method)


class Operator(Protocol):
    name: str

    def __call__(self, text: str, spans: Sequence[Span], seed: int = 0) -> Desensitized: ...


_OPERATORS: Dict[str, Callable[..., Operator]] = {}


def register_operator(name: str) -> Callable:
    """Register an operator factory under ``name`` (the ``privacy_method`` value in YAML)."""

    def wrap(factory: Callable[..., Operator]) -> Callable[..., Operator]:
        if name in _OPERATORS:
            raise ValueError(f"privacy method {name!r} is already registered")
        _OPERATORS[name] = factory
        return factory

    return wrap


def get_operator(name: str, **params: Any) -> Operator:
    if name not in _OPERATORS:
        raise KeyError(f"unknown privacy method {name!r}; known: {sorted(_OPERATORS)}")
    return _OPERATORS[name](**params)


def list_operators() -> List[str]:
    return sorted(_OPERATORS)
