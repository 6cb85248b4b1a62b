"""The shared vocabulary, in one place: TAB's eight categories, month names, honorific titles and the
whitespace-tolerant surface regex.  Detection, desensitization, the egress guard and the metrics import these,
so they agree (the guard and the detector treat "Lord" and "Prof" the same way).  Pure data: the word lists are
files of ``wordlists/`` (months.txt, titles.txt...), read through :mod:`.wordlists`, its only import from the
package; the larger public word lists (names, stop words) are in ``lexicon.py``."""
from __future__ import annotations

import re
from types import MappingProxyType
from typing import Any, Dict, FrozenSet, Iterable, Mapping, Tuple

from . import wordlists

# TAB's entity categories, in TAB's order; every detector label maps to one of them.
TAB_CATEGORIES: Tuple[str, ...] = ("PERSON", "CODE", "LOC", "ORG", "DATETIME", "DEM", "QUANTITY", "MISC")

# Fine-grained entity types (what a recognizer declares it finds, what the library API reports and a per-type
# policy names) -> the TAB category each belongs to (the benchmark's and the operators' unit).
ENTITY_TYPES: Mapping[str, str] = MappingProxyType({
    "PERSON": "PERSON",
    "EMAIL": "CODE", "PHONE": "CODE", "IBAN": "CODE", "CARD": "CODE", "IP": "CODE", "URL": "CODE",
    "SECRET": "CODE", "ID_NUMBER": "CODE", "USERNAME": "CODE", "LICENSE_PLATE": "CODE", "NUMBER": "CODE",
    "CODE": "CODE",
    "ADDRESS": "LOC", "LOCATION": "LOC",
    "ORGANIZATION": "ORG",
    "DATE_TIME": "DATETIME",
    "AGE": "DEM", "DEMOGRAPHIC": "DEM",
    "QUANTITY": "QUANTITY",
    "MISC": "MISC",
})
# The fine type of a span whose recognizer declares none finer for it: its TAB category's.
CATEGORY_ENTITY_TYPE: Mapping[str, str] = MappingProxyType({
    "PERSON": "PERSON", "CODE": "CODE", "LOC": "LOCATION", "ORG": "ORGANIZATION", "DATETIME": "DATE_TIME",
    "DEM": "DEMOGRAPHIC", "QUANTITY": "QUANTITY", "MISC": "MISC"})

MONTHS: Tuple[str, ...] = wordlists.entries("months")
MONTH_ALTERNATION = "|".join(MONTHS)  # for regexes: (?:January|...|December)
MONTH_ABBREVIATIONS: Tuple[str, ...] = wordlists.entries("month_abbreviations")  # "Sept" before "Sep"
WEEKDAYS: Tuple[str, ...] = wordlists.entries("weekdays")

# Honorific titles (lower case, without the dot): not part of what identifies a person.  The egress guard
# leaves them out of a name's identifying words, detection reads a capitalised one before a name as a cue and
# strips it when it propagates a mention, pseudonyms keep it.
TITLES: FrozenSet[str] = wordlists.words("titles")  # with the offices and ranks written before a name ("Councillor")
# Words of times relative to now or to no date ("yesterday", "next month", "every morning"): a time made only of
# them dates nothing (TAB's annotators never mark one; its durations carry a number: "five years").
RELATIVE_TIME_WORDS: FrozenSet[str] = wordlists.words("relative_time_words")
# Greetings and sign-offs around a name ("Dear Mr. Garcia", "Hello Erik", "Thanks, Tom"): never part of it.
GREETINGS: FrozenSet[str] = wordlists.words("greetings")
# Titles of other languages that pseudonyms write as their English equivalent (where a person is from is
# itself a clue): "Herr" -> "Mr".
FOREIGN_TITLES = {"herr": "Mr", "frau": "Mrs", "mlle": "Ms", "sra": "Mrs", "sr": "Mr", "sig": "Mr",
                  "sig.ra": "Mrs", "rev": "Mr", "dame": "Ms"}


def title_alternation() -> str:
    """The titles as a case-sensitive regex alternation of their capitalised forms, longest first
    ("Professor|Madam|...|Mr")."""
    return "|".join(re.escape(t.capitalize()) for t in sorted(TITLES, key=lambda t: (-len(t), t)))


def literal_trie(words: Iterable[str]) -> str:
    """A regex body matching the same words as their alternation longest first, ``(?:abcd|abc|ab)``, written as a
    trie, ``ab(?:c(?:d)?)?``: Python's ``re`` tries an alternation's words one by one at every position, and a
    clinical word list of 220 made that pattern 240 us a prompt; the trie takes about 40."""
    trie: Dict[str, Any] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def body(node: Dict[str, Any]) -> str:
        kids = [re.escape(ch) + body(sub) for ch, sub in sorted(node.items()) if ch]
        if not kids:
            return ""
        alt = kids[0] if len(kids) == 1 else "(?:" + "|".join(kids) + ")"
        return f"(?:{alt})?" if "" in node else alt

    return body(trie)


def tolerant_body(surface: str) -> str:
    """The regex body of a surface form, tolerant of any run of whitespace between its tokens (a line break
    inside a name still matches)."""
    return r"\s+".join(re.escape(tok) for tok in surface.split())
