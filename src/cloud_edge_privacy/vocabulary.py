"""The shared vocabulary, in one place: TAB's eight categories, month names, honorific titles and the
whitespace-tolerant surface regex.  Detection, desensitization, the egress guard and the metrics import these,
so they agree (the guard and the detector treat "Lord" and "Prof" the same way).  Pure data, no imports from
the package; the larger public word lists (names, stop words) are in ``lexicon.py``."""
from __future__ import annotations

import re
from types import MappingProxyType
from typing import Any, Dict, FrozenSet, Iterable, Mapping, Tuple

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

MONTHS: Tuple[str, ...] = ("January", "February", "March", "April", "May", "June", "July", "August",
                           "September", "October", "November", "December")
MONTH_ALTERNATION = "|".join(MONTHS)  # for regexes: (?:January|...|December)
MONTH_ABBREVIATIONS: Tuple[str, ...] = ("Sept", "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Oct",
                                        "Nov", "Dec")
WEEKDAYS: Tuple[str, ...] = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

# Honorific titles (lower case, without the dot): not part of what identifies a person.  The egress guard
# leaves them out of a name's identifying words, detection reads a capitalised one before a name as a cue and
# strips it when it propagates a mention, pseudonyms keep it.
TITLES: FrozenSet[str] = frozenset({
    "mr", "mrs", "ms", "miss", "mx", "mme", "mlle", "dr", "prof", "professor", "judge", "sir", "dame", "madam",
    "lord", "lady",
    # offices and ranks written before a name ("Councillor Sarah Hughes" went out as three surrogate names)
    "councillor", "councilor", "senator", "mayor", "governor", "sergeant", "sgt", "constable", "inspector",
    "detective", "captain", "capt", "lieutenant", "colonel", "reverend", "rev", "pastor", "rabbi", "imam",
    "bishop", "cllr", "insp", "supt", "cpl", "pte"})
# Words of times relative to now or to no date ("yesterday", "next month", "every morning"): a time made only of
# them dates nothing (TAB's annotators never mark one; its durations carry a number: "five years").
RELATIVE_TIME_WORDS: FrozenSet[str] = frozenset({
    "today", "tonight", "tomorrow", "yesterday", "now", "currently", "recently", "soon", "later", "earlier", "ago",
    "morning", "mornings", "afternoon", "afternoons", "evening", "evenings", "night", "nights", "noon", "midnight",
    "day", "days", "daily", "week", "weeks", "weekly", "weekend", "weekends", "month", "months", "monthly", "year",
    "years", "yearly", "annual", "annually", "quarter", "quarterly", "hour", "hours", "hourly", "minute", "minutes",
    "second", "seconds", "decade", "decades", "season", "time", "past", "next", "last", "this", "that", "previous",
    "following", "coming", "upcoming", "every", "each", "early", "late", "the", "a", "an", "of", "few", "several",
    "couple", "some", "recent", "current", "same", "end", "beginning", "start", "mid", "rest", "whole", "all"})
# Greetings and sign-offs around a name ("Dear Mr. Garcia", "Hello Erik", "Thanks, Tom"): never part of it.
GREETINGS: FrozenSet[str] = frozenset({
    "dear", "hi", "hello", "hey", "greetings", "thanks", "regards", "cheers", "sincerely", "hallo", "liebe", "lieber",
    "bonjour", "salut", "cher", "chère", "hola", "querido", "querida", "estimado", "estimada", "ciao", "gentile",
    "hej", "beste", "cześć", "olá", "merhaba"})
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
