"""Suppression and typed placeholders."""
from __future__ import annotations

import re
from typing import Dict, Sequence

from pydantic import BaseModel, ConfigDict

from ..randomness import Randomness
from ..spans import Span
from .base import Desensitized, apply_replacements, register_operator
from .restore import OnePassRestorer


class SuppressionParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    token: str = "[REDACTED]"


@register_operator("suppression", params=SuppressionParams)
class Suppression:
    """Replace each detected span by a fixed token carrying no information about it (not restorable)."""

    name = "suppression"

    def __init__(self, token: str = "[REDACTED]") -> None:
        self.token = token

    def __call__(self, text: str, spans: Sequence[Span], rand: Randomness, scope: str = "") -> Desensitized:
        return apply_replacements(text, spans, lambda s, surface: self.token, self.name)


def _norm(surface: str) -> str:
    return re.sub(r"\s+", " ", surface).strip().lower()


@register_operator("placeholder", restores="placeholders")
class TypedPlaceholder:
    """``[PERSON_1]``-style placeholders: same surface form -> same placeholder within a document.

    Only detected spans are touched; ordinary words are never rewritten.  Restorable on the edge: the
    result's restorer puts the first original surface of each placeholder back into an answer.
    """

    name = "placeholder"

    def __call__(self, text: str, spans: Sequence[Span], rand: Randomness, scope: str = "") -> Desensitized:
        ids: Dict[tuple, str] = {}
        counters: Dict[str, int] = {}
        restorer = OnePassRestorer()

        def replace(span: Span, surface: str) -> str:
            key = (span.category, _norm(surface))
            if key not in ids:
                counters[span.category] = counters.get(span.category, 0) + 1
                ids[key] = f"[{span.category}_{counters[span.category]}]"
                restorer.add(ids[key], " ".join(surface.split()))
            return ids[key]

        out = apply_replacements(text, spans, replace, self.name)
        out.restorer = restorer
        out.vault = restorer.mapping
        return out
