"""Regular-expression recognizers for structured identifiers."""
from __future__ import annotations

import re
from typing import Callable, Iterable, List, Optional, Tuple

from ..spans import Span
from ..vocabulary import MONTH_ALTERNATION, title_alternation
from .recognizer import register_recognizer

_MONTHS = rf"(?:{MONTH_ALTERNATION})"
_CURRENCY = (r"(?:euros?|EUR|USD|dollars?|pounds?|GBP|francs?|CHF|kroner|kronor|zlotys?|PLN|lire|liras?|"
             r"roubles?|rubles?|lei|forints?|HUF|korun|kunas?|dinars?|hryvnias?|TRY|RUB|€|\$|£)")


def _luhn_ok(digits: str) -> bool:
    total, parity = 0, len(digits) % 2
    for i, ch in enumerate(digits):
        d = int(ch)
        if i % 2 == parity:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


# (name, category, pattern, optional validator of the matched text)
PATTERNS: List[Tuple[str, str, "re.Pattern[str]", Optional[Callable[[str], bool]]]] = [
    ("email", "CODE", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"), None),
    ("url", "CODE", re.compile(r"\bhttps?://[^\s<>\"]+"), None),
    ("card", "CODE", re.compile(r"\b(?:\d[ -]?){12,18}\d\b"),
     lambda s: _luhn_ok(re.sub(r"\D", "", s))),
    ("phone", "CODE", re.compile(r"(?<![\w/])\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}\b"), None),
    ("iban", "CODE", re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}(?: ?[A-Z0-9]{1,3})?\b"), None),
    # ECHR application numbers such as 36110/97 and case file numbers such as 2-345/2004; not a month and year
    # ("06/2023 - 08/2023" in a CV), which TAB never writes as an application number
    ("echr_application", "CODE", re.compile(r"\b(?:\d{1,6}/\d{2,3}|\d{1,3}-\d{1,6}/\d{4})\b"), None),
    ("long_number", "CODE", re.compile(r"\b\d{8,}\b"), None),
    ("date_dmy", "DATETIME", re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)? {_MONTHS},? \d{{4}}\b"), None),
    ("date_mdy", "DATETIME", re.compile(rf"\b{_MONTHS} \d{{1,2}},? \d{{4}}\b"), None),
    ("date_my", "DATETIME", re.compile(rf"\b{_MONTHS} \d{{4}}\b"), None),
    ("date_numeric", "DATETIME", re.compile(r"\b\d{1,2}[./-]\d{1,2}[./-]\d{2,4}\b"), None),
    ("date_iso", "DATETIME", re.compile(r"\b(?:1[89]|20)\d{2}-[01]\d-[0-3]\d\b"), None),
    # not the year of an enactment's name ("Mental Capacity Act 2005"), which dates no person's life
    ("year", "DATETIME", re.compile(r"\b(?<!Act )(?<!Acts )(?<!Regulations )(?<!Directive )(?:1[89]\d{2}|20\d{2})\b"),
     None),
    ("amount", "QUANTITY", re.compile(
        rf"(?:{_CURRENCY} ?\d[\d,.]*(?: (?:million|billion|thousand))?|"
        rf"\b\d[\d,.]*(?: (?:million|billion|thousand))? (?:\w+ )?{_CURRENCY}(?![\w]))"), None),
    # A name after an honorific ("Mr Raja Arlewin", "Ms B. Baysal"): the commonest DIRECT identifier in
    # ECHR texts, and one that small NER models miss for less common names.  A name does not go on past a line
    # break (a signature's next line is the department: "Dr. Héctor Pastor Navarro\nServicio de Urología").
    ("titled_name", "PERSON", re.compile(
        rf"\b(?:{title_alternation()})\.?\s+(?:[A-Z]\.\s*){{0,3}}"
        r"[A-Z][^\W\d_]+(?:[-'’][A-Z][^\W\d_]+)?(?:[ \t]+[A-Z][^\W\d_]+(?:-[A-Z][^\W\d_]+)?){0,3}"), None),
    ("age", "DEM", re.compile(r"\b(?:aged \d{1,3}|\d{1,3}[- ]years?[- ]old|age of \d{1,3})\b"), None),
]


@register_recognizer("regex", {"CODE", "DATETIME", "QUANTITY", "PERSON", "DEM"}, {"regex": 3}, fine_types={
    "regex:email": "EMAIL", "regex:url": "URL", "regex:card": "CARD", "regex:phone": "PHONE", "regex:iban": "IBAN",
    "regex:echr_application": "ID_NUMBER", "regex:long_number": "NUMBER", "regex:age": "AGE"})
class RegexRecognizer:
    """The TAB-tuned patterns: e-mails, international phones, cards (Luhn), IBAN shapes, ECHR application
    numbers, long numbers, dates (English month names, numeric, ISO, years), amounts with currencies,
    titled names ("Mr A. Rönquist") and ages ("aged 46")."""

    def __init__(self, patterns: Optional[Iterable[str]] = None) -> None:
        wanted = set(patterns) if patterns else None
        self.patterns = [p for p in PATTERNS if wanted is None or p[0] in wanted]

    def analyze(self, text: str) -> List[Span]:
        spans = []
        for name, category, pattern, valid in self.patterns:
            for m in pattern.finditer(text):
                if m.end() > m.start() and (valid is None or valid(m.group())):
                    spans.append(Span(m.start(), m.end(), category, 0.9, f"regex:{name}"))
        return spans
