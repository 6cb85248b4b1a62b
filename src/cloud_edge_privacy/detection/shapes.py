"""Candidates by word shape: brand- and handle-like tokens and words English does not know.

Real prompts name companies, products and people that no list holds ("Foundever", "eClinicalWorks", "Take2",
"ADEREMI BIODUN", "ovhcloud").  What they share is shape: internal capitals, letters mixed with digits, runs of
ALL-CAPS words, or a word that is rare or unknown in English (wordfreq).  Shape alone is weak evidence, so these
spans are only candidates (category MISC, source ``shape:*``): the default preset's learned decider weighs them
with everything else found at the same place.  Not used by the ``fast`` preset.
"""
from __future__ import annotations

import re
from typing import List

from ..spans import Span
from .recognizer import register_recognizer

_WORD = re.compile(r"(?<![\w@#/.\\-])[^\W\d_][\w’'-]*[\w](?![\w@/\\-]|\.\w)")
_CAMEL = re.compile(r"^[A-Za-z]*[a-z][A-Z][A-Za-z]*$|^[A-Z][a-z]+[A-Z][A-Za-z]*$")
_LETTER_DIGIT = re.compile(r"^(?=.*\d)[A-Za-z]+\d+[A-Za-z\d]*$")
_CAPS_RUN = re.compile(r"\b[A-Z][A-Z'’-]{2,}(?:\s+[A-Z][A-Z'’-]{2,}){1,3}\b")


@register_recognizer("shape", {"MISC"}, {"shape": 0.2})
class ShapeRecognizer:
    """CamelCase and letter+digit tokens, runs of 2-4 ALL-CAPS words that are not common English, single ALL-CAPS
    words and capitalised words (inside a sentence) rare in English (Zipf < 2.5), and lower-case words English
    does not know, nor do French, German, Spanish, Italian, Portuguese or Dutch as a common word."""

    def warm_up(self) -> None:
        """Load the other languages' word lists (about 1.5 s), not during a request."""
        from ..lexicon import common_in_another_language

        common_in_another_language("warmup")

    def analyze(self, text: str) -> List[Span]:
        from ..lexicon import common_in_another_language, english_zipf, stop_words

        stop = stop_words()
        out: List[Span] = []
        for m in _CAPS_RUN.finditer(text):
            words = m.group().split()
            if sum(english_zipf(w.lower()) < 3.0 for w in words) >= max(1, len(words) - 1):
                out.append(Span(m.start(), m.end(), "MISC", 0.4, "shape:caps_run"))
        for m in _WORD.finditer(text):
            w = m.group()
            if len(w) < 3 or w.lower() in stop:
                continue
            if w.isupper() and len(w) >= 5 and w.isalpha():
                if english_zipf(w.lower()) < 2.5 and not any(s.start <= m.start() < s.end for s in out):
                    out.append(Span(m.start(), m.end(), "MISC", 0.4, "shape:caps_word"))
            elif _CAMEL.match(w):
                out.append(Span(m.start(), m.end(), "MISC", 0.4, "shape:camel"))
            elif _LETTER_DIGIT.match(w):
                out.append(Span(m.start(), m.end(), "MISC", 0.4, "shape:letter_digit"))
            elif w[:1].isupper() and w[1:].islower() and len(w) >= 4:
                initial = re.search(r"(?:^|[.!?:\n\"“(]\s*)$", text[max(0, m.start() - 3):m.start()])
                if not initial and english_zipf(w.lower()) < 2.5:
                    out.append(Span(m.start(), m.end(), "MISC", 0.4, "shape:rare_capitalised"))
            elif w.islower() and len(w) >= 5 and w.isalpha() and english_zipf(w) == 0.0 \
                    and not common_in_another_language(w):
                out.append(Span(m.start(), m.end(), "MISC", 0.4, "shape:unknown_word"))
        return out
