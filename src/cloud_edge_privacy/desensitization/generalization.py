"""Generalization: replace a value by a coarser one of the same kind (date -> month/year or year,
place -> country, number -> range, age -> band, organisation -> kind)."""
from __future__ import annotations

import math
import re
from typing import Literal, Sequence

from pydantic import BaseModel, ConfigDict

from ..randomness import Randomness
from ..spans import Span
from .base import Desensitized, apply_replacements, register_operator
from .gazetteer import country_of

# Unit and currency words a generalized number may keep (public vocabulary, shared with dp_numbers);
# any other word of the span (a street, a town) is dropped.
from ..vocabulary import MONTH_ALTERNATION
from .dp_mechanisms import CURRENCIES, TEMPLATE_WORDS

_MONTHS = MONTH_ALTERNATION
_ORG_KINDS = [
    (r"\bcourt|tribunal\b", "a court"), (r"\bministry|department|government|agency|office\b", "a public authority"),
    (r"\bpolice|gendarmerie|prosecutor", "a law-enforcement authority"), (r"\bbank\b", "a bank"),
    (r"\buniversity|college|school|academy\b", "an educational institution"),
    (r"\bhospital|clinic|medical\b", "a medical institution"), (r"\bprison|detention|remand\b", "a detention facility"),
    (r"\bnewspaper|gazet|times|news|tv|radio|magazine\b", "a media outlet"),
    (r"\b(ltd|inc|gmbh|s\.a\.|plc|company|corporation|llc|a\.s\.|fisheries|holdings)\b", "a company"),
    (r"\bparty\b", "a political party"), (r"\bcouncil|municipal|city of|county\b", "a local authority"),
]


def generalize_date(surface: str, level: str = "year") -> str:
    years = re.findall(r"\b(1[89]\d{2}|20\d{2})\b", surface)
    if not years:
        return "a certain time" if re.search(r"\d|year|month|day|week", surface, re.I) else "[DATETIME]"
    if level == "month":
        m = re.search(rf"\b({_MONTHS})\b", surface)
        if m:
            return f"{m.group(1)} {years[-1]}"
    if len(years) == 1 and re.fullmatch(r"\s*(1[89]\d{2}|20\d{2})\s*", surface):
        return f"the {years[0][:3]}0s"  # a bare year becomes its decade
    return years[-1]


def generalize_number(surface: str) -> str:
    m = re.search(r"\d[\d,.\s]*", surface)
    if not m:
        return "some amount"
    digits = re.sub(r"[^\d.]", "", m.group().replace(",", ""))
    try:
        value = float(digits.rstrip("."))
    except ValueError:
        return "some amount"
    if re.search(r"million", surface, re.I):
        value *= 1e6
    words = re.findall(r"[^\W\d_]+|[€$£¥%]", re.sub(r"million|billion|thousand", " ", surface, flags=re.I))
    unit = " ".join(w for w in words if w.lower() in TEMPLATE_WORDS or w.lower() in CURRENCIES or w in "€$£¥%")
    if value < 10:
        rng = "fewer than 10"
    else:
        lo = 10 ** int(math.floor(math.log10(value)))
        rng = f"between {lo:,} and {lo * 10:,}"
    return f"{rng} {unit}".strip()


def generalize_age(surface: str) -> str:
    m = re.search(r"\d+", surface)
    if not m:
        return "of a certain age"
    lo = int(m.group()) // 10 * 10
    if lo >= 100:   # few people are that old: one open band, and nothing outside 0..120 is echoed
        return "aged 100 or over"
    return f"aged {lo}-{lo + 9}"


def generalize_org(surface: str) -> str:
    low = surface.lower()
    for pattern, kind in _ORG_KINDS:
        if re.search(pattern, low):
            return kind
    return "an organisation"


class GeneralizationParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    date_level: Literal["month", "year"] = "year"


@register_operator("generalization", params=GeneralizationParams)
class Generalization:
    """Coarsen each detected value; ``date_level`` is "month" (month year) or "year".

    Deterministic and heuristic: it gives no formal guarantee and spends no ε.
    """

    name = "generalization"

    def __init__(self, **params: object) -> None:
        self.date_level = GeneralizationParams(**params).date_level

    def replace(self, span: Span, surface: str) -> str:
        cat = span.category
        if cat == "DATETIME":
            return generalize_date(surface, self.date_level)
        if cat == "QUANTITY":
            return generalize_number(surface)
        if cat == "DEM" and re.search(r"\d", surface):
            return generalize_age(surface)
        if cat == "LOC":
            country = country_of(surface)
            return country if country and country.lower() != surface.lower() else "a place"
        if cat == "ORG":
            return generalize_org(surface)
        if cat == "PERSON":
            return "a person"
        return f"[{cat}]"  # nationalities, codes, misc: nothing coarser that is still safe

    def __call__(self, text: str, spans: Sequence[Span], rand: Randomness, scope: str = "") -> Desensitized:
        def replace(span: Span, surface: str) -> str:
            new = self.replace(span, surface)
            # "against the Republic of X" -> "against the country", not "against the a country"
            if re.search(r"\bthe\s+$", text[max(0, span.start - 5):span.start], re.I):
                new = re.sub(r"^(a|an)\s+", "", new)
            return new

        return apply_replacements(text, spans, replace, self.name)
