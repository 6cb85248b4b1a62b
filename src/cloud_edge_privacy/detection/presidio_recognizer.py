"""Optional recognizer: Microsoft Presidio's analyzer, run offline on our PyPI spaCy model.

Install with ``pip install -e .[presidio]`` (scripts/setup.sh does).  Presidio's e-mail/URL
recognizers call tldextract, which would download the public-suffix list; it is pointed at the copy
bundled with tldextract instead.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, List

from ..spans import Span
from .spacy_recognizer import DEFAULT_MODEL
from .recognizer import register_recognizer

LABEL_MAP = {
    "PERSON": "PERSON", "LOCATION": "LOC", "NRP": "DEM", "DATE_TIME": "DATETIME", "ORGANIZATION": "ORG",
    "EMAIL_ADDRESS": "CODE", "PHONE_NUMBER": "CODE", "CREDIT_CARD": "CODE", "IBAN_CODE": "CODE",
    "IP_ADDRESS": "CODE", "US_SSN": "CODE", "US_PASSPORT": "CODE", "US_DRIVER_LICENSE": "CODE",
    "UK_NHS": "CODE", "MEDICAL_LICENSE": "CODE", "URL": "CODE", "CRYPTO": "CODE", "US_BANK_NUMBER": "CODE",
    "US_ITIN": "CODE",
}


@lru_cache(maxsize=1)
def _engine() -> Any:
    import tldextract
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import NlpEngineProvider

    offline = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)
    tldextract.extract = offline  # type: ignore[assignment]
    tldextract.tldextract.extract = offline  # type: ignore[attr-defined]
    conf = {"nlp_engine_name": "spacy", "models": [{"lang_code": "en", "model_name": DEFAULT_MODEL}]}
    nlp = NlpEngineProvider(nlp_configuration=conf).create_engine()
    return AnalyzerEngine(nlp_engine=nlp, supported_languages=["en"])


@register_recognizer("presidio", set(LABEL_MAP.values()) | {"MISC"}, {"presidio": 1}, fine_types={
    "presidio:EMAIL_ADDRESS": "EMAIL", "presidio:PHONE_NUMBER": "PHONE", "presidio:IBAN_CODE": "IBAN",
    "presidio:CREDIT_CARD": "CARD", "presidio:IP_ADDRESS": "IP", "presidio:URL": "URL", "presidio:US_SSN": "ID_NUMBER",
    "presidio:UK_NHS": "ID_NUMBER", "presidio:US_PASSPORT": "ID_NUMBER"})
class PresidioRecognizer:
    """Presidio's analyzer (its NER and pattern recognizers) with its types mapped to TAB categories;
    types without a mapping are kept as MISC."""

    def __init__(self, min_score: float = 0.4) -> None:
        self.min_score = min_score

    def analyze(self, text: str) -> List[Span]:
        out = []
        for r in _engine().analyze(text=text, language="en"):
            # A type without a TAB mapping is kept as a generic category rather than dropped.
            cat = LABEL_MAP.get(r.entity_type, "MISC")
            if r.score >= self.min_score and r.end > r.start:
                out.append(Span(r.start, r.end, cat, float(r.score), f"presidio:{r.entity_type}"))
        return out
