"""Words of a trade that identify nobody, and the rule that keeps them out of the masks.

Three kinds, each written as people write to an assistant:

* clinical words and values (:mod:`.clinical`): "creatinine 180 umol/L", "insulin glargine 20 units";
* software, programming languages and formats (:data:`TECH_TERMS`, :data:`_TECH_PHRASES`): "skilled in Python, SQL
  and Power BI" went out as "skilled in Brantgum, Woodfort", "Write a SQL query" as "Write a KKO query".  Products
  whose maker is a company people work at under the same name (Docker, GitHub, Tableau, Oracle, SAP, AWS) are not
  in the list: "I worked at Tableau" names an employer;
* the verb of an instruction at the start of a sentence ("Summarise this meeting" went out as "Koch this
  meeting"), and the greeting of a letter ("Dear Mr. Olsen" went out as "Kimberly Mr. Galiano").

A word of the person-name lists is never one of them ("Julia", "Ruby", "Swift" stay names).
"""
from __future__ import annotations

import errno
import re
from functools import lru_cache
from typing import FrozenSet, List, Optional, Tuple

from .clinical import clinical_word, measurements
from ..lexicon import ORDINARY_ZIPF, everyday_lower_word, function_words, known_names
from ..spans import non_space_run
from ..vocabulary import GREETINGS, TITLES
from .. import wordlists

TECH_TERMS: FrozenSet[str] = wordlists.words("tech_terms")
_TECH_PHRASES = re.compile(r"\bPower\s?BI\b|\bC\+\+|\bC#|(?-i:(?<![\w.])\.NET|\bASP\.NET)\b|\bNode\.js\b|"
                           r"\bVisual Studio(?: Code)?\b|"
                           r"\bVS ?Code\b|\bMicrosoft (?:Excel|Word|PowerPoint|Outlook|Teams|Office|365)\b|"
                           r"\bGoogle (?:Sheets|Docs|Slides|Drive|Analytics)\b|\bObjective-C\b|"
                           # a meeting tool before what it holds ("the Teams link", "a Zoom call"; "Slack" and "Zoom"
                           # alone can be names)
                           r"(?-i:\b(?:MS )?Teams|\bZoom|\bSlack|\bGoogle Meet) (?i:link|call|meeting|invite|chat|"
                           r"channel|message|workspace|thread)s?\b|"
                           # an exception's class ("KeyError", "NullPointerException") and an error code of the
                           # C library ("ECONNRESET"), as a traceback or a log prints them
                           r"(?-i:\b[A-Z][A-Za-z]*(?:Error|Exception|Warning)\b|\b(?:"
                           + "|".join(sorted(errno.errorcode.values(), key=len, reverse=True)) + r")\b)",
                           re.IGNORECASE)
INSTRUCTION_VERBS: FrozenSet[str] = wordlists.words("instruction_verbs")
# words that make a name an organisation's: a span with one keeps its trade terms ("Excel Systems", a company)
ORGANISATION_WORDS: FrozenSet[str] = wordlists.words("institution_words_in_organisations")
_SENTENCE_START = re.compile(r"(?:^|(?<=[.!?:;\n])\s*)([A-Z][a-z]+)\b")
_WORD = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*")
_DOMAIN = re.compile(r"(?i)\b[a-z0-9-]{2,}\.[a-z]{2,}\b")  # "researchgate.net": its ".net" is no .NET
# "Dr. Write": a surname after a title's dot, not a sentence's first word
_AFTER_TITLE = re.compile(r"(?i)\b(?:" + "|".join(sorted(TITLES, key=len, reverse=True)) + r")\.\s*$")


@lru_cache(maxsize=1)
def _tech_words() -> FrozenSet[str]:
    return TECH_TERMS - known_names()


@lru_cache(maxsize=1)
def _greetings() -> FrozenSet[str]:
    return frozenset(g.lower() for g in GREETINGS if " " not in g) - known_names()


def trade_word(word: str) -> bool:
    """A clinical word, a software, language or format name, or a greeting, in any case, in no person-name list."""
    return clinical_word(word) or word.lower() in _tech_words() or word.lower() in _greetings()


def trade_phrases(text: str) -> List[Tuple[int, int]]:
    """Offsets of the clinical values, software names of several words or signs ("Power BI", "C++") and
    instruction verbs that start a sentence in ``text``."""
    verbs = [m.span(1) for m in _SENTENCE_START.finditer(text)
             if m.group(1).lower() in INSTRUCTION_VERBS and m.group(1).lower() not in known_names()
             and not _AFTER_TITLE.search(text, max(0, m.start(1) - 16), m.start(1))]
    return measurements(text) + [m.span() for m in _TECH_PHRASES.finditer(text)] + verbs


def _in_address(text: str, start: int, end: int) -> bool:
    """Whether the run of non-space characters around ``text[start:end]`` is a URL, path, domain or e-mail
    address."""
    chunk = text[slice(*non_space_run(text, start, end))]
    return "/" in chunk or "@" in chunk or bool(_DOMAIN.search(chunk))


def trade_trim(text: str, start: int, end: int, values: List[Tuple[int, int]]) -> Optional[Tuple[int, int]]:
    """A span's extent without its trade terms, or ``None`` when nothing else is left.

    Each word is a term (a :func:`trade_word`, or inside one of ``values``, the :func:`trade_phrases` of
    ``text``), plain (a function word, or an ordinary lower-case word in no name list: ``ORDINARY_ZIPF``) or other.
    A span of terms and plain words only is dropped ("insulin glargine 20 units", "Python, SQL and Power BI");
    otherwise the words before its first other word, or after its last, go when they hold a term ("Mrs Senna Patel
    takes aspirin 75 mg" keeps "Mrs Senna Patel", "DOB 03/04/1971" its date).  A number outside a clinical value is
    an other word ("MRN 12345678"), and a span with an organisation's word keeps its extent ("Excel Systems")."""
    inside = [(a, b) for a, b in values if a < end and start < b]
    kinds: List[Tuple[int, int, str]] = []
    for m in _WORD.finditer(text, start, end):
        w = m.group()
        if w.lower() in ORGANISATION_WORDS:
            return start, end
        if any(a <= m.start() and m.end() <= b for a, b in inside):
            kind = "term"
        elif _in_address(text, m.start(), m.end()):
            kind = "other"  # "https" of a URL, "python" of a path or an e-mail: part of what identifies
        elif trade_word(w):
            kind = "term"
        elif w.lower() in function_words() or everyday_lower_word(w, ORDINARY_ZIPF):
            kind = "plain"
        else:
            kind = "other"
        kinds.append((m.start(), m.end(), kind))
    others = [i for i, k in enumerate(kinds) if k[2] == "other"]
    if not others:
        return None if any(k[2] == "term" for k in kinds) else (start, end)
    first, last = others[0], others[-1]
    if any(k[2] == "term" for k in kinds[:first]):
        start = kinds[first][0]
    if any(k[2] == "term" for k in kinds[last + 1:]):
        end = kinds[last][1]
    return start, end
