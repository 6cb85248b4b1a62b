"""Suppression and typed placeholders."""
from __future__ import annotations

import re
from typing import Dict, Sequence

from ..spans import Span
from .base import Desensitized, apply_replacements, register_operator


@register_operator("suppression")
class Suppression:
    """Replace each detected span by a fixed token carrying no information about it."""

    name = "suppression"

    def __init__(self, token: str = "[REDACTED]") -> None:
        self.token = token

    def __call__(self, text: str, spans: Sequence[Span], seed: int = 0) -> Desensitized:
        return apply_replacements(text, spans, lambda s, surface: self.token, self.name)


def _norm(surface: str) -> str:
    return re.sub(r"\s+", " ", surface).strip().lower()


@register_operator("placeholder")
class TypedPlaceholder:
    """``[PERSON_1]``-style placeholders: same surface form -> same placeholder within a document.

    Only detected spans are touched; ordinary words are never rewritten.
    """

    name = "placeholder"

    def __call__(self, text: str, spans: Sequence[Span], seed: int = 0) -> Desensitized:
        ids: Dict[tuple, str] = {}
        counters: Dict[str, int] = {}

        def replace(span: Span, surface: str) -> str:
            key = (span.category, _norm(surface))
            if key not in ids:
                counters[span.category] = counters.get(span.category, 0) + 1
                ids[key] = f"[{span.category}_{counters[span.category]}]"
            return ids[key]

        return apply_replacements(text, spans, replace, self.name)
