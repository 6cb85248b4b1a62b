"""Sensitivity levels (1-5) per detected category and a document risk score.

The table is configurable (pass your own mapping); defaults follow the direct/quasi split of TAB:
names and codes identify a person on their own, dates and places only in combination.
"""
from __future__ import annotations

from typing import Dict, Mapping, Sequence

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
