"""Sensitivity levels (1-5) per detected category and a document risk score.

The table is configurable (pass your own mapping); defaults follow the direct/quasi split of TAB:
names and codes identify a person on their own, dates and places only in combination.
"""
from __future__ import annotations

from typing import Dict, List, Mapping, Sequence

from .spans import Span

DEFAULT_LEVELS: Dict[str, int] = {
    "PERSON": 5, "CODE": 5, "LOC": 3, "ORG": 3, "DATETIME": 3, "DEM": 3, "QUANTITY": 2, "MISC": 2,
}


def level(span: Span, table: Mapping[str, int] = DEFAULT_LEVELS) -> int:
    return int(table.get(span.category, 2))


def document_risk(spans: Sequence[Span], n_tokens: int, table: Mapping[str, int] = DEFAULT_LEVELS) -> float:
    """Risk in [0, 1]: sensitivity-weighted density of detected entities, saturating at 1.

    A document with one level-5 identifier per 100 tokens scores about 0.5.
    """
    if n_tokens <= 0 or not spans:
        return 0.0
    weight = sum(level(s, table) / 5.0 for s in spans)
    density = 100.0 * weight / n_tokens
    return round(density / (1.0 + density), 4)


# PRISM-style category weights w_t in [0, 1] for the risk score (configurable).
RISK_WEIGHTS: Dict[str, float] = {
    "PERSON": 0.9, "CODE": 0.95, "LOC": 0.4, "ORG": 0.5, "DATETIME": 0.3, "DEM": 0.7, "QUANTITY": 0.3, "MISC": 0.5,
}
FIRST_PERSON = {"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves", "i'm", "i've", "i'd"}


def prism_risk(spans: Sequence[Span], weights: Mapping[str, float] = RISK_WEIGHTS) -> float:
    """PRISM eq. 1: R(P) = sum over detected entities of the category weight w_t."""
    return round(sum(weights.get(s.category, 0.2) for s in spans), 4)


def personal_context(text: str, spans: Sequence[Span] = ()) -> bool:
    """PRISM eq. 2: Δ = 1 when the prompt holds a private cue: a first-person pronoun or a detected PERSON."""
    import re

    return (any(s.category == "PERSON" for s in spans)
            or any(t in FIRST_PERSON for t in re.findall(r"[a-z']+", text.lower())))


def prism_mask(text: str, spans: Sequence[Span]) -> List[bool]:
    """PRISM eq. 3 as written: every entity is flagged for protection (d_i = 1) iff Δ > 0."""
    flag = personal_context(text, spans)
    return [flag] * len(spans)


def privacy_profile(text: str, spans: Sequence[Span], table: Mapping[str, int] = DEFAULT_LEVELS) -> Dict[str, object]:
    """Per-span sensitivity levels plus PRISM's document risk R(P) and context flag (eq. 1-3).

    Eq. 3: every entity is privacy-sensitive (d_i = 1) iff the context flag Δ of eq. 2 is set.
    """
    ctx = personal_context(text, spans)
    n_tokens = len(text.split())
    return {
        "entities": [dict(s.to_dict(), level=level(s, table), sensitive=ctx) for s in spans],
        "risk": prism_risk(spans),
        "risk_density": document_risk(spans, n_tokens, table),
        "personal_context": ctx,
        "n_tokens": n_tokens,
    }
