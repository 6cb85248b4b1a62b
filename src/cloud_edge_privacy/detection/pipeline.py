"""Run recognizers, merge overlapping spans deterministically, and propagate entities to all mentions."""
from __future__ import annotations

import hashlib
from bisect import bisect_right
import os
import re
import threading
import time
import unicodedata
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache, partial
from types import MappingProxyType
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Tuple

from ..lexicon import NOUN_CAPITALISING, leading_language, mostly_another_language, unread_letters
from ..spans import Span, find_surface, non_space_run
from ..wordlists import words
from ..vocabulary import GREETINGS, MONTH_ABBREVIATIONS, MONTHS, RELATIVE_TIME_WORDS, TITLES, WEEKDAYS
from .normalize import Normalized, normalize
from .clinical import drug_names
from .code_context import code_identifier, sql_phrase
from .free_text import institution_name, translation_language
from .public_parties import drop_public_parties, is_public_institution, named_public_body
from .recognizer import Reads, identifying, priorities, run_recognizer, spec_of
from .shared_jobs import SharedJobs
from .technical import drop_syntax_spans
from .steps import Step, StepContext, Trace, run_steps, select_steps
from .structured import SECRET_PREFIX, outside_public_host
from .trade_terms import trade_phrases, trade_trim

# When merged spans disagree on category, the more specific source wins: the priorities and the propagated
# (identifying) categories are derived from the recognizers' declarations (see recognizer.py).
_ACRONYM = re.compile(r"\s*\((?:the\s+)?[“\"]?([A-Z]{2,8})[”\"]?\)")
_TITLES = TITLES | {f"{t}." for t in TITLES}
# What Detector.warm_up reads: names (capitalised and lower case), an e-mail, a date, an organisation, places.
# At most this long (seconds) the detector lets a concurrent recognizer's worker take its first job before it reads
# on (SharedJobs.wait_started): the worker then starts at once instead of after the GIL's 5 ms switch interval.  An
# idle worker takes it in well under 0.1 ms; when every worker is busy with other requests, the detector reads on.
_WORKER_START = 0.002
WARM_UP_TEXT = ("Warm-up: Ms Anna Berg (anna.berg@example.org) met mary jones in london on 1 May 2001 at "
                "Nordvik Consulting GmbH in Oslo.")


def merge_spans(spans: Iterable[Span], priority: Optional[Mapping[str, float]] = None,
                text: Optional[str] = None) -> List[Span]:
    """Merge overlapping spans into their union (safer for privacy); category from the best source
    (``priority``: source prefix -> priority, default the registered recognizers' declarations; unknown: 0).

    When the union holds an identifying span (PERSON, CODE, ORG, LOC) and the best span is not one, the best
    identifying span names the category: "2002 Paul Giles & The Vintage Team" is a person, not a date, and
    "2 Sanderson Farms' EPS" an organisation, not an amount (a date or amount operator rewrites the number and
    sends the words as they are).  Inside the best span, none of these counts: a span of the same words (the
    demonym list's "French" that a model called a person), a month or weekday ("May" in "5 May 2001"), a span
    without letters (a model's "code" over the date "12.03.1961"), a currency code ("NOK" in "NOK 45,000",
    which a model called a place).  A union of month and weekday names only is a date when a recognizer says so
    ("Monday", which a model called a place), and a place of month or weekday names names no union ("$89.99 twice
    in March", where the gazetteer knows a town called March), nor does a name without letters (the "2016-2019" a
    model's "University of Leeds (2016-2019" left once cut).  A union that is one word of digits and letters joined
    by slashes or hyphens is a code, whatever a model called it (the planning reference "23/01187/FUL" was a person,
    then a place), a person whose last word is an institution's ("School", "Hospital") an organisation, and an
    amount with no digit what an identifying span in it says ("Tesco Extra").  When the best span is a model's,
    the recognizers that read the union whole vote for its category; a name-list word covering only part of a union
    does not name it when another span covers the whole (:func:`_names_name_part`: "Greenfield Primary in Bristol",
    "Mayo Clinic"), and a lone first name of the lists votes with those that read the union whole ("Texas").
    ``text``: the text the spans are of; without it, only an identifying span reaching beyond the best one
    counts."""
    from .catalog import all_identifying, all_priorities

    table = all_priorities() if priority is None else priority
    ident = all_identifying()

    def rank(span: Span) -> tuple:
        return (table.get(span.recognizer, 0), span.end - span.start, span.category)

    ordered = sorted(spans, key=lambda s: (s.start, -s.end, s.category, s.source))
    merged: List[Span] = []
    group: List[Span] = []
    end = -1
    for span in ordered + [None]:  # type: ignore[list-item]
        if span is not None and group and span.start < end:
            group.append(span)
            end = max(end, span.end)
            continue
        if group:
            best = max(group, key=rank)
            whole = [s for s in group if (s.start, s.end) == (group[0].start, end) and not s.source.startswith("names")]
            if whole and text is not None and (
                    (best.source.startswith("names") and _names_name_part(text, group[0].start, end, group, whole))
                    or (best in whole and best.recognizer in _MODELS)):
                best = _voted(whole, rank)  # "Mayo Clinic", "St. Joseph Mercy Hospital": organisations
            elif whole and text is not None and best.source.startswith("names:first") \
                    and (best.start, best.end) == (group[0].start, end):
                # a lone first name of the lists votes with the others that read the same words: "Texas" is a place
                # to five recognizers; "Jordan" stays a person against spaCy's place
                best = _voted(whole + [best], rank)
            dates = [s for s in group if s.category == "DATETIME"]
            if dates and text is not None and _date_words_only(text[group[0].start:end]):
                best = max(dates, key=rank)  # "Monday", whatever else a model called it
            elif best.category not in ident:
                named = [s for s in group if s.category in ident and not (
                    best.start <= s.start and s.end <= best.end
                    and (text is None or (s.start, s.end) == (best.start, best.end)
                         or _date_words_only(text[s.start:s.end]) or not any(c.isalpha() for c in text[s.start:s.end])
                         or _currency_only(text[s.start:s.end])))
                    and not (s.category == "LOC" and text is not None and _date_words_only(text[s.start:s.end]))
                    and not (s.category != "CODE" and text is not None
                             and not any(c.isalpha() for c in text[s.start:s.end]))]
                if named:
                    best = max(named, key=rank)
            category = best.category
            if text is not None and category in ("PERSON", "LOC", "ORG") and _REFERENCE.fullmatch(
                    text[group[0].start:end]):
                category = "CODE"
            elif text is not None and category == "PERSON" and institution_name(text[group[0].start:end]):
                category = "ORG"  # "St Mary's Primary School" was a person to the TAB NER
            elif text is not None and category == "QUANTITY" and not any(
                    c.isdigit() for c in text[group[0].start:end]) and not _currency_only(text[group[0].start:end]):
                # an amount with no number ("Tesco Extra" cut from a model's "2021 ... Tesco Extra"): what the
                # others that read it call it, if they name it
                named = [s for s in group if s.category in ident]
                if named:
                    best = max(named, key=rank)
                    category = best.category
            merged.append(Span(group[0].start, end, category, max(s.score for s in group), best.source))
        if span is not None:
            group, end = [span], span.end
    return merged


# a reference: digits and letters joined by slashes or hyphens, two digits at least ("23/01187/FUL", "HL-20931")
_REFERENCE = re.compile(r"(?=(?:[^\d]*\d){2})(?=.*[A-Za-z])[A-Za-z0-9]+(?:[/-][A-Za-z0-9]+)+")
_DATE_WORD = re.compile(r"(?:" + "|".join(MONTHS + MONTH_ABBREVIATIONS + WEEKDAYS) + r")\.?", re.IGNORECASE)


_MODELS = frozenset(("encoder", "learned", "tab_ner", "spacy", "federated"))
_RULES_OF_PLACES_AND_ORGS = frozenset(("org", "place", "address"))


def _names_name_part(text: str, start: int, end: int, group: Sequence[Span], whole: Sequence[Span]) -> bool:
    """Whether the name lists' spans cover only a part of a union that is not a person's name: one of its words
    when it has three or more ("Greenfield Primary in Bristol"); or some of its words, when none of the others
    is in a name list and a rule recognizer of organisations, places or addresses covers the whole ("Mayo
    Clinic", "Ann Arbor"; not "Beckey Thompson", where "Beckey" is half the name, nor "Hello Erik", which only
    a model read as a whole)."""
    from ..lexicon import known_names

    words = [(m.start() + start, m.end() + start) for m in _LETTERS.finditer(text[start:end])]
    named = [w for w in words if any(s.source.startswith("names") and s.start <= w[0] and w[1] <= s.end
                                     for s in group)]
    if len(words) >= 3 and len(named) <= 1:
        return True
    rest = [text[a:b].lower() for a, b in words if (a, b) not in named]
    return bool(rest) and not any(w in known_names() for w in rest) \
        and any(s.recognizer in _RULES_OF_PLACES_AND_ORGS for s in whole)


def _voted(spans: Sequence[Span], rank: Callable[[Span], tuple]) -> Span:
    """The best span of the category most sources vote for, each weighted by its priority (``rank``'s first key):
    three recognizers' organisation outweighs one model's person of the same words."""
    votes: Dict[str, float] = {}
    for s in spans:
        votes[s.category] = votes.get(s.category, 0.0) + rank(s)[0]
    top = max(votes.values())
    return max((s for s in spans if votes[s.category] == top), key=rank)


def _currency_only(surface: str) -> bool:
    """Whether every word of ``surface`` is an ISO currency code as written ("NOK" in "NOK 45,000")."""
    from ..lexicon import currency_codes

    words = re.findall(r"[^\W\d_]+", surface)
    return bool(words) and all(w in currency_codes() for w in words)


def _date_words_only(surface: str) -> bool:
    """Whether every word of ``surface`` is a month or weekday name ("May" in "5 May 2001")."""
    words = re.findall(r"[^\W\d_]+\.?", surface)
    return bool(words) and all(_DATE_WORD.fullmatch(w) for w in words)


def _normalize(surface: str) -> str:
    return re.sub(r"\s+", " ", surface.strip()).lower()


def propagate_mentions(text: str, spans: Sequence[Span], min_len: int = 3,
                       propagated: Optional[FrozenSet[str]] = None,
                       priority: Optional[Mapping[str, float]] = None,
                       ordinary_zipf: Optional[float] = None) -> List[Span]:
    """Add every other occurrence of a detected entity's surface form (and a person's surname).

    One unmasked mention defeats masking all the others, so co-reference by normalized surface form
    is applied to names, organisations, places and codes.  A surname shorter than ``min_len`` that came
    with a title ("Mr Li") propagates too, but only in its capitalised form.  Copies of a secret stay secrets.
    ``propagated``: the categories to propagate (default: those the registered recognizers declare identifying).
    ``ordinary_zipf``: a PERSON form made only of ordinary words ("Seller", "Small": in no name list and at least
    this common in English, besides titles and stop words), or written more often in lower case than otherwise
    in the text ("Cap" once, "cap" 44 times: :func:`~..lexicon.mostly_lower_case`), is not copied onto its
    all-lower-case occurrences unless it was found in lower case (the egress guard's rule 1 ignores such a form in
    any case), nor is one of everyday words in no name list even then ("mum"); with it, an organisation of everyday
    words (:func:`~.places.everyday_organisation`: "User", "Cross-Border", a model's lower-case "data") is not
    copied onto its lower-case uses, however it was found (the guard reads it the same way).  Places are,
    but for one everyday word that is also a name ("Park", "North", a model's "Mark") and a form of everyday words
    that is neither a town of the gazetteer nor a country (a model's "Border", "Seller"): people type "london" in
    lower case (:func:`~.places.everyday_place_word`; the guard reads these the same way).
    """
    from ..lexicon import lower_case_majority
    from .catalog import all_identifying
    from .places import everyday_organisation, everyday_place_word

    cats = all_identifying() if propagated is None else propagated
    forms: Dict[str, Tuple[str, str]] = {}
    exact: Dict[str, str] = {}
    lower_found = set()
    for s in spans:
        if s.category not in cats:
            continue
        surface = text[s.start : s.end]
        # "the Tribunal", "Court": kept where found, but a public body's name is not copied (it identifies no one)
        public = s.category in ("ORG", "LOC") and not surface.isupper() \
            and is_public_institution(surface.strip(), s.category)
        if surface.islower() and not public:
            lower_found.add(_normalize(surface))
        source = SECRET_PREFIX + "coref" if s.source.startswith(SECRET_PREFIX) else "coref"
        if not public:
            forms.setdefault(_normalize(surface), (s.category, source))
        if s.category in ("ORG", "LOC"):  # "Employment Appeal Tribunal (EAT)": the acronym names it too
            acronym = _ACRONYM.match(text, s.end)
            if acronym:
                exact.setdefault(acronym.group(1), s.category)
        if s.category == "PERSON":
            raw = re.split(r"\s+", surface.strip())
            tokens = [t for t in raw if t.lower() not in _TITLES]
            titled = len(tokens) < len(raw)
            if titled and len(tokens) >= 2:  # "Ms Melahat Filiz" -> also "Melahat Filiz" elsewhere
                forms.setdefault(_normalize(" ".join(tokens)), ("PERSON", "coref"))
            if (len(tokens) >= 2 or titled) and tokens and tokens[-1][:1].isupper():
                if len(tokens[-1]) >= min_len:
                    forms.setdefault(_normalize(tokens[-1]), ("PERSON", "coref"))
                elif titled and len(tokens[-1]) == 2 and tokens[-1].isalpha():
                    exact.setdefault(tokens[-1], "PERSON")
    extra = []
    for form, (cat, source) in forms.items():
        if len(form) < min_len:
            continue
        found = find_surface(text, form, ignore_case=True)
        ordinary = ordinary_zipf is not None and (
            (cat == "PERSON" and _no_name_word(form, ordinary_zipf)) or (cat == "ORG" and everyday_organisation(form))
            or (cat == "LOC" and everyday_place_word(form))
            or form not in lower_found and cat == "PERSON" and (
                _ordinary_words(form, ordinary_zipf) or lower_case_majority(text[a:b] for a, b in found)))
        for a, b in found:
            if not (ordinary and text[a:b].islower()):
                extra.append(Span(a, b, cat, 0.7, source))
    for form, cat in exact.items():
        for a, b in find_surface(text, form):  # case-sensitive: "Li", "EAT"
            extra.append(Span(a, b, cat, 0.7, "coref"))
    return merge_spans(list(spans) + extra, priority, text)


_LETTERS = re.compile(r"[^\W\d_]+")


def _ordinary_words(form: str, zipf: float) -> bool:
    """Every word of a (lower-case) form, besides titles and stop words, in no name list and at least ``zipf``
    common in English (wordfreq's Zipf scale); or a form of stop words only; or one everyday word that is also a
    name ("mark": ``lexicon.COMMON_NAME_WORDS``).  The egress guard's rule 1 reads these the same way."""
    from ..lexicon import common_name_word, english_stop_words

    letters = [w for w in _LETTERS.findall(form) if w not in _TITLES]
    words = [w for w in letters if w not in english_stop_words()]
    if letters and (not words or common_name_word(form)):
        return True  # "All", "Mark": the egress guard's rule 1 looks for them only as written
    return _everyday_non_names(words, zipf)


def _everyday_non_names(words: Sequence[str], zipf: float) -> bool:
    """At least one word, and every one in no name list and at least ``zipf`` common in English."""
    from ..lexicon import english_zipf, known_names

    return bool(words) and all(w not in known_names() and english_zipf(w) >= zipf for w in words)


def _no_name_word(form: str, zipf: float) -> bool:
    """A PERSON form of everyday words in no name list ("mum", "my boss"), which the egress guard never looks for:
    not copied onto its lower-case uses even when a model read it in lower case."""
    from ..lexicon import english_stop_words

    words = [w for w in _LETTERS.findall(form) if w not in _TITLES and w not in english_stop_words()]
    return not any(c.isdigit() for c in form) and _everyday_non_names(words, zipf)


_EDGE_SYMBOLS = "\u2022\u00b7\u25aa\u25cf\u25e6\u2023\u2219"  # bullets
_WORDLIKE = ("PERSON", "ORG", "LOC", "DEM", "MISC")
# (opening, closing) quotes and brackets: one at a span's edge whose partner is not inside it is trimmed
_QUOTES = (('"“', '"”'), ("「", "」"), ("『", "』"), ("«", "»"), ("(（", ")）"), ("【", "】"))


def tidy_span(text: str, span: Span) -> Optional[Span]:
    """A model's span without the bullets and emoji at its edges ("\u2022 Develop", "\U0001f614"), or None when
    nothing is left or a name-like span is only English stop words in lower case ("and" between two names, "her"), or
    only pronouns, question words and auxiliary verbs in any case ("I’m", "Why I", "How do"; not "US"): none of them
    names anyone, and neither does a header's label ("Sent:"); or a quantity of lower-case words without a number
    ("left arm"; a capitalised piece of a misread one, "TryHackme", may be a name and stays).  A span does not
    start at a possessive's "s"
    ("Britain's cities").  Validated identifiers and secrets are left as found."""
    if span.source.startswith(("structured", SECRET_PREFIX)):
        return span
    s, e = span.start, span.end
    while s < e and (text[s].isspace() or text[s] in _EDGE_SYMBOLS or unicodedata.category(text[s]) == "So"):
        s += 1
    while e > s and (text[e - 1].isspace() or text[e - 1] in _EDGE_SYMBOLS or unicodedata.category(text[e - 1]) == "So"):
        e -= 1
    while s < e and text[s] in "-–—" and s + 1 < e and text[s + 1].isspace():  # a list's dash ("- handled")
        s += 1
        while s < e and text[s].isspace():
            s += 1
    for opening, closing in _QUOTES:
        if e > s and text[e - 1] in closing and not any(c in opening for c in text[s:e - 1]):
            e -= 1  # the closing quote of a quoted message ("... Thanks, Ben\""; 「ユニバーサル・ヘアー」)
        if e > s and text[s] in opening and not any(c in closing for c in text[s + 1:e]):
            s += 1
    if span.category == "CODE":
        s, e = _code_core(text, s, e)
    elif span.category in _WORDLIKE and 0 < s < e - 1 and text[s - 1] in "'’" and text[s] in "sS" \
            and text[s + 1].isspace():
        s += 1  # "s cities" of "Britain's cities": the possessive's "s" is no part of a name after it
        while s < e and text[s].isspace():
            s += 1
    surface = text[s:e]
    if not any(c.isalnum() for c in surface):
        return None
    if span.category == "QUANTITY" and surface.islower() and not _counts(surface):
        return None
    if span.category in _WORDLIKE and surface.islower() and not any(c.isdigit() for c in surface):
        from ..lexicon import english_stop_words

        words = _LETTERS.findall(surface)
        if words and all(w in english_stop_words() for w in words):
            return None
    if span.category in _WORDLIKE:
        words = _CONTRACTED.findall(surface)
        if words and all(w.lower().replace("’", "'") in _PRONOUNS and not (len(w) > 1 and w.isupper())
                         for w in words):
            return None
        if _header_label(text, s, e):
            return None
    return span if (s, e) == (span.start, span.end) else Span(s, e, span.category, span.score, span.source)


def _counts(surface: str) -> bool:
    """Whether a quantity's surface has a number: a digit, a number in words or a word of quantity ("a dozen")."""
    return any(c.isdigit() for c in surface) or any(w in _counting_words() for w in _LETTERS.findall(surface.lower()))


@lru_cache(maxsize=1)
def _counting_words() -> FrozenSet[str]:
    """The numbers in words and the words of quantity (wordlists ``number_words`` and ``quantity_words``)."""
    from .. import wordlists

    return wordlists.words("number_words") | wordlists.words("quantity_words")


def _header_label(text: str, s: int, e: int) -> bool:
    """Whether ``text[s:e]`` is one everyday capitalised word that starts a line and ends with a colon, the label of
    a header or form field ("Sent:", "Subject:", "Reason:"); a speaker's name ("Chloe:", "Mark:") is in the lists."""
    from ..lexicon import everyday_lower_word

    word = text[s:e]
    if not (word.isalpha() and word[:1].isupper() and word[1:].islower()) or not text.startswith(":", e):
        return False
    if word.lower() in _MAIL_HEADERS and _HEADER_BEFORE.search(text, text.rfind("\n", 0, s) + 1, s):
        return True  # "From: ... Subject: ...", a message's headers pasted on one line
    i = s
    while i > 0 and text[i - 1] in " \t>":
        i -= 1
    return (i == 0 or text[i - 1] == "\n") and everyday_lower_word(word.lower())


_MAIL_HEADERS = words("mail_headers")
_HEADER_BEFORE = re.compile(r"\b(?:" + "|".join(sorted(h.capitalize() for h in _MAIL_HEADERS)) + r"):")
_CONTRACTED = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")  # "I’m", "you're"
# the speaker, the reader, a question's word and its auxiliary verb name nobody in any case ("I’m", "Why I", "How do")
_PRONOUNS = words("pronouns_and_question_words")
_OPEN, _CLOSE = "([{<", ")]}>"


def drop_lone_ordinary_words(text: str, spans: Sequence[Span]) -> List[Span]:
    """Without the candidates that one model alone read as a name, place, organisation or code (not a demographic:
    "an accountant" is one) and that are one ordinary lower-case word ("economics", "warehouse", "rack", "city",
    "data", "plain"): in no name list, no country or town's own name (:func:`.places.named_place`), and at least
    ``ORDINARY_ZIPF`` common in English, the words the egress guard never reports as a name either.  Out of fold
    on the development prompts none of the 65 such candidates the decider kept was private; a lower-case name
    ("john"), a place ("leeds"), a rare word ("monzo"), a span of two words and one that another recognizer found
    too stay."""
    from .decider import group_overlapping
    from .places import named_place
    from ..lexicon import ORDINARY_ZIPF, everyday_lower_word

    out: List[Span] = []
    for group in group_overlapping(spans):
        families = {s.recognizer for s in group}
        if len(families) == 1 and families <= _MODELS and all(s.category in _LONE_CATEGORIES for s in group):
            word = text[min(s.start for s in group):max(s.end for s in group)]
            if _LONE_WORD.fullmatch(word) and everyday_lower_word(word, ORDINARY_ZIPF) and not named_place(word):
                continue
        out.extend(group)
    return out


_LONE_WORD = re.compile(r"[^\W\d_]+")
# not DEM: an occupation or a nationality is an ordinary lower-case word ("an accountant"), and a quasi-identifier
_LONE_CATEGORIES = frozenset(("PERSON", "ORG", "LOC", "MISC", "CODE"))


def _without_trade_terms(text: str, spans: List[Span]) -> List[Span]:
    """Spans without their drugs, analytes, clinical values, software names and instruction verbs, which identify
    nobody ("creatinine 180 umol/L", "Python, SQL and Power BI"; :func:`.trade_terms.trade_trim`)."""
    values = None  # read from the text when a span needs them (the guard's validators' spans never do)
    out = []
    for s in spans:
        if s.source.startswith(("structured", SECRET_PREFIX)):  # a URL's "https", a key: validated, kept whole
            out.append(s)
            continue
        if values is None:
            values = trade_phrases(text)
        extent = trade_trim(text, s.start, s.end, values)
        if extent is not None:
            out.append(s if extent == (s.start, s.end) else Span(extent[0], extent[1], s.category, s.score, s.source))
    return out


def _without_edge_stop_words(text: str, s: int, e: int) -> Tuple[int, int]:
    """``[s, e)`` without the lower-case stop words at its edges, when something with a digit is left."""
    from ..lexicon import english_stop_words

    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text[s:e])]
    if not words:
        return s, e
    while len(words) > 1 and text[s + words[-1][0]:s + words[-1][1]] in english_stop_words():
        words.pop()
    while len(words) > 1 and text[s + words[0][0]:s + words[0][1]] in english_stop_words():
        words.pop(0)
    if not any(c.isdigit() for c in text[s + words[0][0]:s + words[-1][1]]):
        return s, e
    return s + words[0][0], s + words[-1][1]


def split_at_spaced_dash(text: str, spans: Sequence[Span]) -> List[Span]:
    """A model's span of a number and a name with a spaced dash between them ("12 - Mr Ahmed" of "bed 12 - Mr
    Ahmed", one amount to the TAB NER) is its two sides, each tidied: the union would send the bed's number inside
    the name's surrogate.  A range ("10 - 12 May") is a date's, and stays whole."""
    out: List[Span] = []
    for span in spans:
        m = _SPACED_DASH.search(text, span.start, span.end)
        sides = [(span.start, m.start()), (m.end(), span.end)] if m else []
        if not m or span.category == "DATETIME" or span.recognizer not in _MODELS \
                or not any(text[a:b].strip().isdigit() for a, b in sides) \
                or not any(c.isalpha() for a, b in sides for c in text[a:b]):
            out.append(span)
            continue
        for a, b in sides:
            piece = tidy_span(text, Span(a, b, span.category, span.score, span.source))
            if piece is not None:
                out.append(piece)
    return out


_SPACED_DASH = re.compile(r"\s[-–—]\s")


# Katakana letters, the prolonged sound mark and the half-width forms: the letters of one katakana word
_KATAKANA = re.compile("[\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f]")


def whole_katakana_words(text: str, spans: Sequence[Span]) -> List[Span]:
    """A span that begins or ends inside a katakana word covers the whole word: the multilingual model reads
    Japanese one character a token and may stop inside one ("ギズモード" read as "モ"), and the operator would then
    replace a piece of the word and leave the rest ("ギズ...ド").  The word's edge is a letter of another script,
    a space or punctuation (the middle dot "・" between the words of a foreign name stops it too)."""
    out = []
    for span in spans:
        start, end = span.start, span.end
        if start < end and _KATAKANA.match(text, start):
            while start > 0 and _KATAKANA.match(text, start - 1) and text[start - 1] != "\u30fb":
                start -= 1
        if start < end and _KATAKANA.match(text, end - 1):
            while end < len(text) and _KATAKANA.match(text, end) and text[end] != "\u30fb":
                end += 1
        out.append(span if (start, end) == (span.start, span.end) else
                   Span(start, end, span.category, span.score, span.source))
    return out


def times_of_day(text: str, spans: Sequence[Span]) -> List[Span]:
    """A model's place, organisation, code or name that is a time of day, with stop words after it at most ("by
    8:15am on" read as a place), is that time: masked as a date, given a time's surrogate, and not trimmed as words
    first ("15am")."""
    from ..lexicon import english_stop_words

    out: List[Span] = []
    for span in spans:
        surface = text[span.start:span.end]
        clock = _CLOCK.match(surface) if span.category != "DATETIME" and span.recognizer in _MODELS \
            else None
        if clock and all(w in english_stop_words() for w in surface[clock.end():].lower().split()):
            span = Span(span.start, span.start + clock.end(), "DATETIME", span.score, span.source)
        out.append(span)
    return out


def trim_kept(text: str, spans: Sequence[Span]) -> List[Span]:
    """Kept model spans without a comma, colon or unmatched bracket at their edges ("Ola Nordmann (" -> the
    name), a date, amount or code without the sentence's full stop ("12 June."), and no code that is one everyday
    word ("born") or words without a digit, no amount without a number in digits or words, no time relative to
    now or to no date ("yesterday", "next month"), no identifier of program code
    ("def get_user(id", :mod:`.code_context`), no quarter without its year ("Q2") or hex constant ("0x80070005"),
    no national public body ("NHS") or identifier's type ("IBAN"),
    no public service's host ("nice.org.uk" read as a place, a PubMed link with its number:
    :func:`~.structured.outside_public_host`): an operator would rewrite them with the value, and none of them
    identifies anyone.  A place or organisation that is only a month's name ("December",
    "the month of May") is a date: masked as one, and not copied onto the text's other Decembers; an amount with its
    multiplier's letter ("120k") is an amount.  A model's single
    everyday lower-case word before a colon, determiner or pronoun is a verb ("polish my CV"), and goes."""
    from ..lexicon import currency_codes, english_zipf, everyday_lower_word, known_names, number_word

    out: List[Span] = []
    for span in spans:
        if span.source.startswith(("structured", SECRET_PREFIX)):
            out.append(span)
            continue
        s, e = span.start, span.end
        while s < e and (text[s] in ",;:" + _CLOSE or text[s].isspace()):
            s += 1
        while e > s and (text[e - 1] in ",;:" + _OPEN or text[e - 1].isspace()):
            e -= 1
        if span.category in _WORDLIKE:
            s, e = _without_glue_segments(text, s, e)
        elif span.category in ("CODE", "QUANTITY") and span.recognizer in _MODELS:
            s, e = _without_edge_stop_words(text, s, e)  # "23/01187/FUL for": the reference, not the "for"
        if span.category not in _WORDLIKE and e - s > 1 and text[e - 1] == ".":
            e -= 1  # the sentence's full stop after a date, amount or code ("12 June."); an abbreviation's stays beside
            # the surrogate, which reads as well ("Sept." -> "December.")
        web = outside_public_host(text, s, e)
        if web is None:
            continue
        s, e = web
        surface = text[s:e]
        if not any(c.isalnum() for c in surface):
            continue
        if span.category == "CODE" and surface.isalpha() and surface.lower() not in known_names() \
                and english_zipf(surface.lower()) >= 3.5:
            continue
        if span.category == "CODE" and span.recognizer in _MODELS and len(surface.split()) > 1 \
                and not any(c.isdigit() for c in surface):
            continue  # words without a digit ("E-mail autor" left of a model's "... 100 E-mail autor"): no code
        if span.category == "QUANTITY" and span.recognizer in _MODELS and not any(c.isdigit() for c in surface) \
                and not any(number_word(w) or w.upper() in currency_codes() for w in _SHAPE_WORD.findall(surface)):
            continue  # an amount says how many, in digits or words ("three brothers"), or in what ("TRY" of
            # "1,000 TRY"); "E-mail autor" says neither
        if _relative_time(surface, span.category) or code_identifier(text, s, e) or _CONSTANT.fullmatch(surface) \
                or named_public_body(surface) or surface.lower() in _IDENTIFIER_TYPES or sql_phrase(surface) \
                or _FREQUENCY.fullmatch(surface) or _greeted_role(text, s, e) or _occupation(text, s, e, span.category):
            continue  # "NHS" of a model's "NHS no. 485 777 3456" is no amount, nor "IBAN" a place
        if span.category in _WORDLIKE and span.recognizer in _MODELS and everyday_lower_word(surface) \
                and _VERB_OBJECT.match(text, e):
            continue  # "please polish my CV", "polish: the paragraph below": a verb, not a nationality or a name
        if span.category in ("LOC", "ORG") and _MONTH_ONLY.fullmatch(surface):
            # a model read "December" as a place: a date, masked as one and not copied onto every other December
            out.append(Span(s, e, "DATETIME", span.score, span.source))
            continue
        if span.category in _WORDLIKE + ("CODE",) and _SHORT_AMOUNT.fullmatch(surface):
            # "the budget is 120k": an amount, whose digits are redrawn, not a code whose "k" is ("035r")
            out.append(Span(s, e, "QUANTITY", span.score, span.source))
            continue
        out.append(span if (s, e) == (span.start, span.end) else Span(s, e, span.category, span.score, span.source))
    return out


# an amount written with its multiplier's letter ("120k", "4.5M", "2bn")
_SHORT_AMOUNT = re.compile(r"\d{1,4}(?:[.,]\d{1,2})?\s?(?:k|K|m|M|bn|BN)")


# a time of day ("8:15am", "10.30 a.m.", "4pm", "14:20")
_CLOCK = re.compile(r"(?:(?:1[0-2]|0?[1-9])(?:[:.][0-5]\d)?\s?(?i:[ap]\.?m\.?)|(?:[01]?\d|2[0-3])[:.][0-5]\d)(?!\w)")
# how often, which dates nothing ("4-hourly", "twice-daily")
_FREQUENCY = re.compile(r"(?i:(?:\d{1,2}|once|twice)[- ]?(?:hourly|daily|weekly|monthly))")
# a quarter of no year ("in Q2") and a program's or an error's hex constant ("error 0x80070005"; not a 40-digit wallet)
_CONSTANT = re.compile(r"Q[1-4]|0x[0-9A-Fa-f]{1,16}")
# what follows a verb and never a nationality or a name typed in lower case: a colon, a determiner or a pronoun
_VERB_OBJECT = re.compile(r"\s*(?::|(?:my|this|these|those|the|it|your|our|their)\b)")
_WEEKDAY_WORDS = frozenset(w.lower() for w in WEEKDAYS)
_MONTH_ONLY = re.compile(r"(?:(?:the\s+)?month\s+of\s+)?(?:" + "|".join(MONTHS) + r")", re.IGNORECASE)
_RANGE_WORDS = words("range_words")


def _relative_time(surface: str, category: str = "DATETIME") -> bool:
    """Whether a time is only words relative to now or to no date ("yesterday", "next month", "every morning"),
    weekdays included ("since Monday", "Friday morning", "Monday to Friday": a weekday without a date dates nothing,
    and TAB's annotators never mark one).  A span of another category counts only with a weekday in it (a model
    read "Monday" as a place)."""
    words = re.findall(r"[^\W\d_]+", surface.lower())
    if not words or any(c.isdigit() for c in surface):
        return False
    weekday = [w.rstrip("s") in _WEEKDAY_WORDS for w in words]
    if category != "DATETIME" and not any(weekday):
        return False
    return all(d or w in RELATIVE_TIME_WORDS or (any(weekday) and w in _RANGE_WORDS) for w, d in zip(words, weekday))


def _without_glue_segments(text: str, s: int, e: int) -> Tuple[int, int]:
    """A name-like span without its comma-separated first or last segments of glue ("Trondheim, phone")."""
    cuts = [m.start() for m in re.finditer(r"[,;]", text[s:e])]
    if not cuts:
        return s, e
    bounds = [s] + [s + c for c in cuts] + [e]
    segments = [(a if i == 0 else a + 1, b) for i, (a, b) in enumerate(zip(bounds, bounds[1:]))]
    while len(segments) > 1 and _glue(text[segments[-1][0]:segments[-1][1]]):
        segments.pop()
    while len(segments) > 1 and _glue(text[segments[0][0]:segments[0][1]]):
        segments.pop(0)
    a, b = segments[0][0], segments[-1][1]
    while a < b and text[a].isspace():
        a += 1
    while b > a and (text[b - 1].isspace() or text[b - 1] in ",;"):
        b -= 1
    return a, b


# validated identifiers whose extent is exact: a model's span reaching over one is cut around it; a URL's or a
# domain's span is cut around as its whole run of non-space characters
_ATOMIC_IDENTIFIERS = tuple(f"structured:{k}" for k in (
    "email", "phone", "iban", "card", "ssn", "nino", "ip", "handle", "number", "id_number", "plate"))
_URL_SOURCES = ("structured:url", "structured:domain")
# numeric dates, exact too: a model's name or organisation reaching over one is cut around it ("DOB 02/05/1948" of
# "Derek Holloway (DOB 02/05/1948" was an organisation), while its own dates and times keep them
_NUMERIC_DATES = frozenset(("regex:date_numeric", "regex:date_iso"))


def clip_at_identifiers(text: str, spans: Sequence[Span]) -> List[Span]:
    """Model spans cut around the validated identifiers they overlap: "john@x.org or call 555-0100" is two
    identifiers, not one code, and "phone +47 912 34 567" is a number.  A URL or domain is cut around as a whole
    (its run of non-space characters: what the model read inside it stays, since a path can hold a name), so
    "https://lnkd.in/x today" keeps "today".  Each piece outside keeps the model's category unless it is only
    glue: punctuation and everyday lower-case words ("or call"), which the union would otherwise rewrite letter by
    letter."""
    atoms = [(s.start, s.end, False) for s in spans if s.source.startswith(_ATOMIC_IDENTIFIERS)]
    atoms += [non_space_run(text, s.start, s.end) + (True,) for s in spans if s.source.startswith(_URL_SOURCES)]
    dates = sorted((s.start, s.end, False) for s in spans if s.source in _NUMERIC_DATES)
    if not atoms and not dates:
        return list(spans)
    atoms.sort()
    with_dates = sorted(atoms + dates)
    out: List[Span] = []
    for span in spans:
        around = atoms if span.category == "DATETIME" else with_dates
        inside = [a for a in around if a[0] < span.end and span.start < a[1]]
        if not inside or span.source.startswith(("structured", SECRET_PREFIX)):
            out.append(span)
            continue
        pos, pieces, kept = span.start, [], []
        for a, b, keep in inside:
            if a > pos:
                pieces.append((pos, a))
            if keep and max(a, span.start) < min(b, span.end):
                kept.append((max(a, span.start), min(b, span.end)))
            pos = max(pos, b)
        if pos < span.end:
            pieces.append((pos, span.end))
        by_date = all(a in dates for a in inside)
        for a, b in pieces:
            piece = tidy_span(text, Span(a, b, span.category, span.score, span.source))
            if piece is not None and not _identifier_label(text, piece.start, piece.end) \
                    and not (by_date and _everyday_words(text[piece.start:piece.end])):
                kept.append((piece.start, piece.end))
        # parts only blank apart stay one span ("Lecture%204.pdf" is "Lecture 4.pdf" once normalized)
        joined: List[List[int]] = []
        for a, b in sorted(kept):
            if joined and not text[joined[-1][1]:a].strip():
                joined[-1][1] = max(joined[-1][1], b)
            else:
                joined.append([a, b])
        out.extend(Span(a, b, span.category, span.score, span.source) for a, b in joined)
    return out


# words that join two named things ("Anna at Bergen Logistics") rather than make part of one name
_JOINING = words("joining_words")
# words a plain lower-case tail may start with: the joining words and the indefinite article ("Is the Uni-v a good
# first car?" was one organisation to the TAB NER)
_TAIL_START = _JOINING | {"a", "an"}


def split_at_joining_words(text: str, spans: Sequence[Span]) -> List[Span]:
    """A span cut at a joining word ("at", "from", ...) that no other span covers, when other spans cover words
    on both sides of it: "Anna at Bergen Logistics", one place to the TAB NER, is a person at a company, and
    the union would send the two as one place's surrogate.  Only the joining word is left out.  A span also ends
    before a joining word or an indefinite article followed, to its end, by lower-case words only ("Leeds General
    Infirmary with community-acquired pneumonia", "Uni-v a good first car")."""
    out: List[Span] = []
    for span in spans:
        words = [(m.start() + span.start, m.end() + span.start) for m in _LETTERS.finditer(text[span.start:span.end])]
        if span.source.startswith(("structured", SECRET_PREFIX)) \
                or not any(text[a:b] in _TAIL_START for a, b in words[1:-1]):
            out.append(span)
            continue
        others = [o for o in spans if o is not span and o.start < span.end and span.start < o.end]

        def covered(a: int, b: int) -> bool:
            return any(o.start <= a and b <= o.end for o in others)

        cuts = [(a, b) for k, (a, b) in enumerate(words) if 0 < k < len(words) - 1
                and text[a:b] in _JOINING and not covered(a, b)
                and any(covered(*w) for w in words[:k]) and any(covered(*w) for w in words[k + 1:])]
        tail = next((k for k, (a, b) in enumerate(words) if 0 < k < len(words) - 1 and text[a:b] in _TAIL_START
                     and not covered(a, b)
                     and _plain_tail(text, words[k + 1:], span.end, covered, names=text[a:b] in _JOINING)), None)
        end = span.end
        if tail is not None:  # "Leeds General Infirmary with community-acquired pneumonia": the diagnosis stays
            end = words[tail][0]
            cuts = [c for c in cuts if c[0] < end]
        pos = span.start
        for a, b in cuts:
            piece = tidy_span(text, Span(pos, a, span.category, span.score, span.source))
            if piece is not None:
                out.append(piece)
            pos = b
        piece = tidy_span(text, Span(pos, end, span.category, span.score, span.source)) \
            if cuts or tail is not None else span
        if piece is not None:
            out.append(piece)
    return out


_TOKEN = re.compile(r"[\w'’-]+")
_FIRST_PERSON = re.compile(r"^I(?=$|['’](?:m|ve|ll|d)$)")

LONG_SPAN_WORDS = 5
_SPLIT = _WORDLIKE + ("DATETIME", "QUANTITY")  # "2027 Intro to Cybersecurity, TryHackme - December 2023 ..."
# where a long span is cut: list and sentence punctuation, bullets, a colon that is no clock's ("4:00" stays whole)
_PIECE_BREAK = re.compile(r"[,;|()\[\]\n\u2013\u2014\uff0c\u3002\uff1b\uff1f\uff01\u3001\u25a0\uf0d8#*"
                          + _EDGE_SYMBOLS + r"]|[.!?](?=\s)|:(?!\d)|(?<!\d):|\s-\s")
_PIECE_ZIPF = 2.5  # a piece of lower-case words this common, and stop words, names nothing ("spares", "the client")


def split_long_spans(text: str, spans: Sequence[Span]) -> List[Span]:
    """A model's span of :data:`LONG_SPAN_WORDS` words or more (a name, place, date or amount), read as the pieces
    between list and sentence punctuation and runs of two or more everyday lower-case words that no shorter span
    covers: the TAB NER read a job advert's "customers and provide adequate reporting (spares delivery, repair Shop
    Processing time, ..." as one place, and a CV's line as one employer.  Each piece loses the stop words and
    everyday lower-case words at its edges, and a piece of nothing else goes.  What the structured rules found
    (URLs, e-mail addresses) is never cut, and a lone everyday word between two others stays ("Bank of the
    West")."""
    from ..lexicon import EVERYDAY_ZIPF, english_stop_words, everyday_lower_word

    out: List[Span] = []
    for span in spans:
        words = [(m.start() + span.start, m.end() + span.start) for m in _TOKEN.finditer(text[span.start:span.end])]
        if span.recognizer not in _MODELS or span.category not in _SPLIT or len(words) < LONG_SPAN_WORDS:
            out.append(span)
            continue
        others = [o for o in spans if o.start < span.end and span.start < o.end
                  and o.end - o.start < span.end - span.start]

        def plain(a: int, b: int, zipf: float = EVERYDAY_ZIPF) -> bool:
            """A stop word or an everyday lower-case word that no shorter span covers."""
            w = _FIRST_PERSON.sub("i", text[a:b])
            return not any(o.start <= a and b <= o.end for o in others) and not any(c.isdigit() for c in w) and (
                w.lower() in english_stop_words() or everyday_lower_word(w, zipf))

        cut = [False] * (span.end - span.start)

        def mark(a: int, b: int, value: bool = True) -> None:
            cut[a - span.start:b - span.start] = [value] * (b - a)

        for m in _PIECE_BREAK.finditer(text, span.start, span.end):
            mark(m.start(), m.end())
        # the pronoun "I" is a lower-case word here ("University of Edinburgh and I'm joining Skyscanner")
        loose = [everyday_lower_word(_FIRST_PERSON.sub("i", text[a:b])) and plain(a, b) for a, b in words]
        for k, (a, b) in enumerate(words):
            if loose[k] and ((k > 0 and loose[k - 1]) or (k + 1 < len(words) and loose[k + 1])):
                mark(a, b)
        for m in re.finditer(r"\S+", text[span.start:span.end]):
            a, b = m.start() + span.start, m.end() + span.start
            if any(o.start < b and a < o.end and o.source.startswith(("structured", SECRET_PREFIX)) for o in others):
                mark(a, b, False)
        for m in re.finditer(r"x+", "".join(" " if c else "x" for c in cut)):
            inner = [(a, b) for a, b in words if span.start + m.start() <= a and b <= span.start + m.end()]
            kept = [w for w in inner if not plain(*w)]
            if not kept or all(plain(a, b, _PIECE_ZIPF) for a, b in kept):
                continue  # "the client", "spares": common words alone
            piece = tidy_span(text, Span(kept[0][0], kept[-1][1], span.category, span.score, span.source))
            if piece is not None:
                out.append(piece)
    return out


def trim_lower_case_edges(text: str, spans: Sequence[Span]) -> List[Span]:
    """A model's name, organisation or place without the lower-case words at its edges (at least ``ORDINARY_ZIPF``
    common) that no other span covers and no name list holds, when the word it then begins or ends with is covered
    by another span ("attends Hillside Academy"): "manager
    Priya", "Brown & Partners LLP confirming" (the name and the firm, which other recognizers read, without the
    words around them); so is a greeting in any case ("Dear Mr. Garcia", "Hello Erik").  After a capitalised word an
    everyday lower-case word goes even when a name list holds it ("Leeds rose 12%": "rose" is also a name; "john
    Smith" keeps its given name), and so does a number that an amount's or date's span covers.  A rare lower-case
    word stays: "demone Johnson" is a first name typed in lower case."""
    from ..lexicon import EVERYDAY_ZIPF, ORDINARY_ZIPF, english_zipf, everyday_lower_word

    out: List[Span] = []
    for span in spans:
        if span.recognizer not in _MODELS or span.category not in _WORDLIKE:
            out.append(span)  # TAB's dates and amounts hold their words: "between 1980 and 1981", "approximately"
            continue
        words = [(m.start() + span.start, m.end() + span.start) for m in _TOKEN.finditer(text[span.start:span.end])]
        others = [o for o in spans if o is not span and o.start < span.end and span.start < o.end]

        def covered(w: Tuple[int, int]) -> bool:
            return any(o.start <= w[0] and w[1] <= o.end for o in others)

        # the first capitalised word: after it a lower-case word is no given name ("john Smith" keeps "john")
        first_capital = next((w for w in words if text[w[0]:w[1]][:1].isupper()), (span.end, span.end))

        def loose(w: Tuple[int, int]) -> bool:
            t = text[w[0]:w[1]]
            if any(c.isdigit() for c in t):  # the "12" of "Leeds rose 12%", which its amount's span masks
                return any(o.start <= w[0] and w[1] <= o.end and o.category in ("QUANTITY", "DATETIME")
                           for o in others)
            return not covered(w) and (t.lower() in GREETINGS or everyday_lower_word(t, ORDINARY_ZIPF) or (
                w[0] > first_capital[0] and t.islower() and english_zipf(t) >= EVERYDAY_ZIPF))

        i, j = 0, len(words)
        while i < j and loose(words[i]):
            i += 1
        while j > i and loose(words[j - 1]):
            j -= 1
        s = words[i][0] if 0 < i < len(words) and covered(words[i]) else span.start
        e = words[j - 1][1] if 0 < j < len(words) and covered(words[j - 1]) else span.end
        trimmed = tidy_span(text, Span(s, e, span.category, span.score, span.source)) if (s, e) != (
            span.start, span.end) else span
        if trimmed is not None:
            out.append(trimmed)
    return out


def _plain_tail(text: str, words: Sequence[Tuple[int, int]], end: int, covered: Callable[[int, int], bool],
                names: bool = True) -> bool:
    """Whether the words after a joining word, to the span's end, are lower-case words no other span covers (and,
    with ``names``, in no name list: "Leeds with john smith"; after an article a name list's "good" or "car" is a
    word), with nothing but blanks, hyphens and apostrophes between them."""
    from ..lexicon import known_names

    rest = text[words[0][0]:end]
    return bool(words) and not re.search(r"[^\w\s'’-]|\d|_", rest) and all(
        text[a:b].islower() and not (names and text[a:b] in known_names()) and not covered(a, b) for a, b in words)


# what an identifier is, written before it ("IBAN PT50 ...", "SSN 078-05-1120", "DOB 03/04/1971")
_IDENTIFIER_TYPES = words("identifier_type_labels")


def _identifier_label(text: str, start: int, end: int) -> bool:
    """What is left of a model's span around an identifier when it is glue (:func:`_glue`) or only says what the
    identifier is: everyday words capitalised only after a sentence's end, national public bodies and the
    identifier's type, no digit ("Card ending" of "Card ending 8812", "NHS no." of "NHS no. 485 777 3456", "IBAN");
    the identifier itself stays masked."""
    from ..lexicon import english_stop_words, everyday_lower_word

    if any(c.isdigit() for c in text[start:end]):
        return False
    for m in _LETTERS.finditer(text, start, end):
        word, low = m.group(), m.group().lower()
        if named_public_body(word) or low in _IDENTIFIER_TYPES:
            continue
        if not (low in english_stop_words() or everyday_lower_word(low)):
            return False
        if not word.islower():
            k = m.start()
            while k > 0 and text[k - 1].isspace():
                k -= 1
            if k and text[k - 1] not in '.!?:"“(':
                return False
    return True


# a salutation, and a word before the greeted one ("Dear Hiring Manager", "Dear Parents and Carers")
_SALUTATION = re.compile(r"(?i:\b(?:dear|hi|hello|hey)\s+(?:[a-z]+\s+(?:(?:and|&)\s+)?)?)$")


# words that only name an occupation, and a degree before its subject
_JOB_WORDS = words("job_words")
_JOB_AFTER = re.compile(r"\s+([A-Za-z-]+)")
_DEGREES = r"BSc|MSc|BA|MA|MEng|BEng|PhD|MBA|MPhil|LLB|LLM|HND"
_DEGREE = re.compile(rf"(?:\b(?:{_DEGREES}|degree|diploma|certificate)\s+(?:\(Hons\)\s+)?(?:(?i:in|of)\s+)?)$")
_DEGREE_FIRST = re.compile(rf"(?:{_DEGREES})\s+(?:\(Hons\)\s+)?(?:(?i:in|of)\s+)?")


def _occupation(text: str, start: int, end: int, category: str) -> bool:
    """A model's name, organisation or place of everyday words in no name list that is an occupation ("Customer
    Service Advisor"), the start of one ("Data" of "Data Analyst role") or a degree's subject ("MSc in Data
    Science", "BSc Nursing"): none identifies anyone."""
    if category not in _WORDLIKE:
        return False
    degree = _DEGREE_FIRST.match(text, start, end)
    if degree and _everyday_words(text[degree.end():end]):
        return True  # "BSc Nursing"
    if text[start:end].islower():
        return False  # in lower case, a product's ("facebook ads manager") as much as a job's
    after = _JOB_AFTER.match(text, end)
    job_after = bool(after) and after.group(1).lower() in _JOB_WORDS
    if after and after.group(1)[:1].isupper() and not job_after:
        return False  # an occupation as a name's title ("Teacher Yolanda", an annotated unit)
    # the cheap tests first: this runs on every kept span
    return (text[start:end].split()[-1].lower() in _JOB_WORDS or job_after
            or bool(_DEGREE.search(text[max(0, start - 30):start]))) and _everyday_words(text[start:end])


def _greeted_role(text: str, start: int, end: int) -> bool:
    """A salutation's everyday words in no name list: "Dear Hiring Team", "Dear Recruiter" name no one."""
    from ..lexicon import ORDINARY_ZIPF

    return bool(_SALUTATION.search(text[max(0, start - 30):start])) \
        and _everyday_words(text[start:end], ORDINARY_ZIPF)


def _everyday_words(surface: str, zipf: Optional[float] = None) -> bool:
    """Everyday words in any case and in no name list, without a digit ("Time" of "[25/06/2023] Time");
    ``zipf``: how common a word must be (default: ``everyday_lower_word``'s)."""
    from ..lexicon import everyday_lower_word, known_names

    words = [w.lower() for w in _LETTERS.findall(surface)]
    return bool(words) and not any(c.isdigit() for c in surface) and all(
        (everyday_lower_word(w) if zipf is None else everyday_lower_word(w, zipf)) and w not in known_names()
        for w in words)


def _glue(surface: str) -> bool:
    """Punctuation, stop words and everyday lower-case words in no name list ("or call"; not "mary jones",
    which people type in lower case), without a digit."""
    from ..lexicon import english_stop_words, everyday_lower_word

    words = _LETTERS.findall(surface)
    return not any(c.isdigit() for c in surface) and all(
        w.islower() and (w in english_stop_words() or everyday_lower_word(w))
        for w in words)


def _code_core(text: str, s: int, e: int) -> Tuple[int, int]:
    """A model's code span without the everyday words at its edges ("phone +44 20 7946 0958" -> the number: the
    cue word is no part of it, and a code operator would rewrite it letter by letter)."""
    from ..lexicon import english_zipf

    words = [(m.start() + s, m.end() + s) for m in re.finditer(r"\S+", text[s:e])]

    def plain(w: Tuple[int, int]) -> bool:
        token = text[w[0]:w[1]].strip(".,;:()")
        return token.isalpha() and english_zipf(token.lower()) >= 3.5

    while len(words) > 1 and plain(words[0]):
        words.pop(0)
    while len(words) > 1 and plain(words[-1]):
        words.pop()
    return (words[0][0], words[-1][1]) if words else (s, e)


def unread_script(surface: str) -> bool:
    """Whether ``surface`` holds a letter of a caseless script past Greek and Cyrillic (Hebrew, Arabic, Indic, Thai,
    Khmer, Han, Kana, Hangul...; :func:`~..lexicon.unread_letters`): the English models read English (and cased
    Latin, Greek and Cyrillic shapes) and, there, tag whole clauses as organisations or places."""
    return unread_letters(surface)


def drop_unread_scripts(text: str, spans: Sequence[Span]) -> List[Span]:
    """Without the spans an English model (spaCy, the TAB NER, the encoder, the federated model) or a word-shape
    guess made over letters of a script it never read (:func:`unread_script`).  What finds names there stays: the
    validators, the multilingual name lists, the address and legal-form patterns of those scripts, and the learned
    NER, which drops by itself what its model did not read (``reads_scripts`` in its ``training.json``)."""
    return [s for s in spans if s.recognizer not in _UNREAD_BY or not unread_script(text[s.start:s.end])]


_UNREAD_BY = (_MODELS - {"learned"}) | {"shape"}

_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|\n+")


def drop_english_models_in_other_languages(text: str, spans: Sequence[Span]) -> List[Span]:
    """Without the spans an English-only model (spaCy, the TAB NER, the encoder, the federated model) or a
    word-shape guess made in a sentence written in another language (:func:`~..lexicon.mostly_another_language`:
    most of its words are more common in French, German, Russian... than in English, by wordfreq): there they tag
    clauses and capitalised nouns as names.  The learned NER (trained on seven languages), the validators, the
    name lists and the place gazetteer still read it.  A span is judged by the sentences it covers, read together
    (a span that runs from "Responsable clínico: Dr." over the next sentence is judged by both, not by the few
    words before the title's full stop); each such stretch is judged once, and only where such a span is."""
    starts = [0] + [m.end() for m in _SENTENCE_END.finditer(text)]
    # per stretch of sentences: (written in another language, in one that capitalises proper nouns only)
    judged: Dict[Tuple[int, int], Tuple[bool, bool]] = {}
    out = []
    for span in spans:
        if span.recognizer in _UNREAD_BY:
            first = bisect_right(starts, span.start) - 1
            last = max(first, bisect_right(starts, span.end - 1) - 1)
            if (first, last) not in judged:
                end = starts[last + 1] if last + 1 < len(starts) else len(text)
                stretch = text[starts[first]:end]
                other = mostly_another_language(stretch)
                judged[first, last] = (other, other and leading_language(stretch) not in NOUN_CAPITALISING)
            other, proper_capitals = judged[first, last]
            if other and not name_shaped(text[span.start:span.end], capitalised_in_mid_sentence=proper_capitals
                                         and span.recognizer != "shape"
                                         and _in_mid_sentence(text, starts[first], span.start, span.end)):
                continue
        out.append(span)
    return out


def _in_mid_sentence(text: str, sentence_start: int, start: int, end: int) -> bool:
    """Whether the words ``start:end`` follow a word of their sentence directly (a space, a comma or an elision's
    apostrophe between: "avec Nissan", "l’État"), not the sentence's start, a colon, a quote or a bracket, and
    are no field's label (a colon after them: "Fecha de Ingreso: 13/11/2017")."""
    before = text[sentence_start:start].rstrip()
    return bool(before) and (before[-1].isalnum() or before[-1] in ",'’") \
        and not text[end:].lstrip(" ").startswith(":")


_SHAPE_WORD = re.compile(r"[^\W_][\w'’.-]*")
# the most words a span an English model found in another language's sentence may have and still be read as a name
NAME_SHAPED_WORDS = 4


def name_shaped(surface: str, capitalised_in_mid_sentence: bool = False) -> bool:
    """A span that looks like a name in any language: every word capitalised (or with a digit), and one word that
    is common in no language wordfreq knows here, or written in capitals or with a capital inside ("Gettyimages",
    "STD Aero", "TS-LBD", "BdB", "PayPal"; no language capitalises inside a word), or
    ``capitalised_in_mid_sentence``: capitalised where the sentence's language writes only proper nouns so (French,
    Russian: "avec Nissan", "представитель Philips"; not German, which capitalises every noun):
    what an English model still reads right in a sentence of another language.  Not a run of more than
    :data:`NAME_SHAPED_WORDS` words (a heading run into its sentence: "Infrastruktur OT Wennekath Die Bundesstraße 216
    Lüneburg"), nor one with a capitalised function word inside it that no name list holds ("Truppenübungsplatz Zur
    Errichtung": German capitalises nouns, so capitals there are no sign of a name; "De" in "Robert De Niro" is a
    surname's part and stays)."""
    from ..lexicon import english_zipf, function_words, known_names, other_language_zipf

    words = _SHAPE_WORD.findall(surface)
    if not words or len(words) > NAME_SHAPED_WORDS \
            or not all(w[0].isupper() or any(c.isdigit() for c in w) for w in words):
        return False
    if any(w.lower() in function_words() and w.lower() not in known_names() for w in words[1:]):
        return False
    if capitalised_in_mid_sentence and all(w[0].isupper() for w in words) and sum(map(len, words)) > 1:
        return True
    return any((len(w) > 1 and (w.isupper() or any(c.isupper() for c in w[1:])))
               or max(english_zipf(w.lower()), other_language_zipf(w.lower())) < 3.0 for w in words)


def _tidy(ctx: StepContext, spans: List[Span]) -> List[Span]:
    return [t for t in (tidy_span(ctx.text, s) for s in spans) if t is not None]


def _decided(ctx: StepContext, spans: List[Span]) -> List[Span]:
    return spans if ctx.decider is None else ctx.decider.keep(ctx.text, spans)  # type: ignore[attr-defined]


def _propagated(ctx: StepContext, spans: List[Span]) -> List[Span]:
    return propagate_mentions(ctx.text, spans, propagated=ctx.propagated, priority=ctx.priority,
                              ordinary_zipf=ctx.ordinary_zipf)


# A model's name (person, organisation, place) of this many words or more is no name, whatever it is: the longest
# such mention of TAB train and dev and of the development prompts has 16 words (an agency with its name in the
# original language); a run of 25-40 capitalised words without punctuation is a pasted list of skills or accounts.
NO_NAME_WORDS = 20


def _split_and_decided(ctx: StepContext, spans: List[Span]) -> List[Span]:
    """:func:`split_long_spans`, then each new piece decided as a candidate of its own, with the spans inside it: the
    decider kept "Post Office, Season, Internet, Chess, Puppet" (a word list the TAB NER read as one company) as one
    candidate, for the name list's "Garfield" in it, and had dropped "Chameleon" of the same list standing alone.  A
    piece it drops takes the spans inside it along (they were kept as members of the long span's candidate only).
    A model's name of :data:`NO_NAME_WORDS` words or more that no break split goes; the spans inside it are then
    decided as candidates of their own."""
    out = split_long_spans(ctx.text, spans)
    before = set(spans)
    runs = {s for s in out if s.recognizer in _MODELS and s.category in ("PERSON", "ORG", "LOC")
            and len(_TOKEN.findall(ctx.text, s.start, s.end)) >= NO_NAME_WORDS}
    out = [s for s in out if s not in runs]
    if ctx.decider is None:
        return out
    def inside(outer: Span) -> List[Span]:
        """The spans found before the split that lie within ``outer``."""
        return [o for o in out if o in before and outer.start <= o.start and o.end <= outer.end]

    dropped: set = set()
    for piece in (s for s in out if s not in before):
        inner = inside(piece)
        if piece not in ctx.decider.keep(ctx.text, [piece] + inner):  # type: ignore[attr-defined]
            dropped.add(piece)
            dropped.update(inner)
    for run in runs:  # what the other recognizers found inside it: candidates of their own now
        inner = inside(run)
        dropped.update(set(inner) - set(ctx.decider.keep(ctx.text, inner)))  # type: ignore[attr-defined]
    return [s for s in out if s not in dropped]


def _on_text(fn: Callable[[str, List[Span]], List[Span]]) -> Callable[[StepContext, List[Span]], List[Span]]:
    return lambda ctx, spans: fn(ctx.text, spans)


def _without_translation_languages(text: str, spans: List[Span]) -> List[Span]:
    return [s for s in spans if not translation_language(text, s.start, s.end)]


# Every post-detection step a preset may name (see steps.py), in the order of DEFAULT_STEPS.  Propagation reads the
# recognizers' own spans, not only their merged union: when "Gitte and Sarina" is one span, "Gitte" alone elsewhere
# is still a mention.
STEPS: Mapping[str, Step] = MappingProxyType({s.name: s for s in (
    Step("tidy", _tidy, "trim bullets, emoji, quotes and list dashes at a span's edges; drop name-like spans of stop "
                        "words, pronouns or a header's label (tidy_span)"),
    Step("decide", _decided, "the learned decider keeps a candidate (overlapping spans) when its probability of "
                             "being private reaches the preset's threshold (no-op without a decider)"),
    Step("unread_scripts", _on_text(drop_unread_scripts),
         "drop a model's span holding letters of a caseless script (Han, Kana, Hangul, Thai, Arabic...) that no "
         "model of ours was trained on: the conservative fallback there is the validators, name lists and forms"),
    Step("other_languages", _on_text(drop_english_models_in_other_languages),
         "drop an English-only model's span (or a shape guess) in a sentence written in another language (wordfreq's "
         "word frequencies): the learned NER, validators, name lists and gazetteer read it"),
    Step("technical_text", _on_text(drop_syntax_spans),
         "drop a span wholly in the syntax of code, configuration or markup (identifiers, keys, tags), not in its "
         "literals, comments or values; validated identifiers and secrets stay (technical.py)"),
    Step("drop_lone_ordinary_words", _on_text(drop_lone_ordinary_words),
         "drop a lone everyday lower-case word only a model or a shape guess found"),
    Step("drop_trade_terms", _on_text(_without_trade_terms), "drop or trim trade phrases (product and market terms)"),
    Step("split_long_spans", _split_and_decided, "split a model's long span at list and clause breaks; the decider "
                                                 "judges each piece as a candidate of its own"),
    Step("split_at_spaced_dash", _on_text(split_at_spaced_dash), "split a model's span at a spaced dash"),
    Step("times_of_day", _on_text(times_of_day), "a clock time inside a model's non-date span becomes a DATETIME"),
    Step("whole_katakana_words", _on_text(whole_katakana_words),
         "a span that begins or ends inside a katakana word covers the whole word"),
    Step("clip_at_identifiers", _on_text(clip_at_identifiers),
         "a model's span does not run into a validated identifier (an e-mail, a URL)"),
    Step("split_at_joining_words", _on_text(split_at_joining_words),
         "split a span at a joining word ('at', 'from', 'via') between two names"),
    Step("trim_lower_case_edges", _on_text(trim_lower_case_edges),
         "trim everyday lower-case words at a model's span edges"),
    Step("trim_kept", _on_text(trim_kept), "trim or drop what names nothing: code identifiers, bare quarters, clock "
                                           "and frequency words, relative times, occupations"),
    Step("propagate", _propagated, "co-reference: every other mention of an identifying form is masked too"),
    Step("drop_translation_languages", _on_text(_without_translation_languages),
         "the language of a translation ('Translate to French') is no private detail"),
    Step("drop_public_parties", _on_text(drop_public_parties),
         "drop the States and public institutions court texts name as parties"),
)})
# What a preset runs unless it says otherwise (the public-party filter is opt-in).
DEFAULT_STEPS: Tuple[str, ...] = ("tidy", "decide", "unread_scripts", "other_languages",
                                  "drop_lone_ordinary_words", "drop_trade_terms",
                                  "split_long_spans", "split_at_spaced_dash", "times_of_day", "whole_katakana_words",
                                  "clip_at_identifiers",
                                  "split_at_joining_words", "trim_lower_case_edges", "trim_kept", "propagate",
                                  "technical_text", "drop_translation_languages")


class Detector:
    """A configured detection pipeline: recognizers -> optional per-candidate decision (learned weights) ->
    merge -> co-reference propagation -> optional public-party filter.  Recognizers with an ``analyze_many`` method are
    run in batches, and those declared ``concurrent`` on worker threads beside the others."""

    def __init__(self, recognizers: Sequence[object], propagate: bool = True,
                 cache_size: int = 0, drop_public_parties: bool = False, name: str = "",
                 decider: Optional[object] = None, ordinary_zipf: Optional[float] = None,
                 concurrent: bool = True, steps: Optional[Sequence[str]] = None,
                 without_steps: Sequence[str] = ()) -> None:
        self.recognizers = list(recognizers)
        # derived from the recognizers' declarations (a recognizer without one is a clear TypeError here)
        specs = [spec_of(r) for r in self.recognizers]
        self.priority = priorities(specs)
        self.propagated = identifying(specs)
        self.ordinary_zipf = ordinary_zipf  # see propagate_mentions
        self.name = name
        # Decides per candidate (overlapping spans of all recognizers) what to keep, before propagation.
        self.decider = decider
        # The post-detection steps, by name (see steps.py); by default every one, propagation and the public-party
        # filter (applied last, so that a State name propagated from elsewhere cannot re-mask its party mention)
        # as the two flags say.
        if steps is None:
            steps = [n for n in DEFAULT_STEPS if n != "propagate" or propagate] \
                + (["drop_public_parties"] if drop_public_parties else [])
        self.steps = select_steps(STEPS, steps, without_steps, where=f"detector {name!r}" if name else "detector")
        self.step_names = tuple(s.name for s in self.steps)
        self.cache_size = cache_size  # 0: no cache (benchmarks measure real detection time)
        self._cache: "OrderedDict[str, Tuple[List[Span], float]]" = OrderedDict()
        self._cache_lock = threading.Lock()  # the cache is shared by threads (proxy workers, router + gateway)
        # run the recognizers declared concurrent on worker threads beside the others (see candidates_many); False:
        # every recognizer in turn on the calling thread (the spans are the same)
        self.concurrent = concurrent
        self._has_concurrent = any(s.concurrent for s in specs)
        self._workers: Optional[ThreadPoolExecutor] = None
        self._workers_pid = 0
        self._workers_lock = threading.Lock()

    def warm_up(self) -> None:
        """Load every model and table now and run each path once (a short text read whole, a long one read by
        sentence), so that loading is never counted as a request's detection time.  Bypasses the cache."""
        for rec in self.recognizers:
            hook = getattr(rec, "warm_up", None) or getattr(rec, "check", None)
            if callable(hook):
                hook()
        from .gating import LONG_TEXT

        drug_names()
        # wordfreq's tables of every language the other_languages step may consult (a word of each script)
        mostly_another_language("Warm-up: ein Satz, это предложение, μια πρόταση.")
        long_text = " ".join([WARM_UP_TEXT] * (LONG_TEXT // len(WARM_UP_TEXT) + 2))
        self.analyze_many([WARM_UP_TEXT, long_text])

    def analyze(self, text: str) -> List[Span]:
        """Detected spans of ``text``; repeated calls on the same text are answered from a small cache."""
        return self.analyze_timed(text)[0]

    def analyze_timed(self, text: str) -> Tuple[List[Span], float]:
        """Spans and the milliseconds their detection took.  A cache hit reports the time of the original
        computation (as the LLM response caches do), so per-stage timings stay comparable across runs."""
        key = hashlib.sha256(text.encode("utf-8")).hexdigest() if self.cache_size else ""
        with self._cache_lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                spans, ms = self._cache[key]
                return list(spans), ms
        t0 = time.perf_counter()
        spans = self.analyze_many([text])[0]
        ms = (time.perf_counter() - t0) * 1e3
        if self.cache_size:
            with self._cache_lock:
                self._cache[key] = (spans, ms)
                if len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return list(spans), ms

    def analyze_many(self, texts: Sequence[str], timings: Optional[Dict[str, float]] = None) -> List[List[Span]]:
        """Spans of each text; model recognizers see the whole batch at once (``nlp.pipe``).

        ``timings``, when given, accumulates the seconds spent per recognizer (and in merging)."""
        norms = [normalize(t) for t in texts]  # read as a reader reads it (fullwidth, &#64;, %40, \.)
        texts = [n.text for n in norms]
        found = self.candidates_many(texts, timings)
        t0 = time.perf_counter()
        out = [self.decide(n, spans) for n, spans in zip(norms, found)]
        if timings is not None:
            timings["merge+coref"] = timings.get("merge+coref", 0.0) + time.perf_counter() - t0
        return out

    def candidates_many(self, texts: Sequence[str], timings: Optional[Dict[str, float]] = None) -> List[List[Span]]:
        """Every recognizer's own spans of each text, before any decision, merge or propagation.

        A recognizer declared ``concurrent`` starts at once on a worker thread, one job per text (or, under a
        sentence gate, per piece it could read): when its turn comes, this thread runs the jobs the worker has not
        started (:class:`.shared_jobs.SharedJobs`).  A gate keeps, at its place in the order, the pieces that what
        was found before it leaves to read.  Its spans are the same as when it runs in turn; its entry in
        ``timings`` is the time spent at its turn here."""
        found: List[List[Span]] = [[] for _ in texts]
        pool = self._pool()
        early = {k: self._start(pool, rec, texts) for k, rec in enumerate(self.recognizers)
                 if pool is not None and spec_of(rec).concurrent}
        for jobs in early.values():
            if jobs is not None:
                jobs.wait_started(_WORKER_START)
        for k, rec in enumerate(self.recognizers):
            t0 = time.perf_counter()
            started = early.get(k)
            if started is None:
                results = run_recognizer(rec, texts, found)
            elif spec_of(rec).reads is Reads.FOUND:
                ahead: Dict[Any, List[Span]] = {}
                for part in started.results():
                    ahead.update(part)
                results = rec.analyze_many(texts, found=found, ahead=ahead)  # type: ignore[attr-defined]
            else:
                results = [one[0] for one in started.results()]
            for acc, spans in zip(found, results):
                acc.extend(spans)
            if timings is not None:
                key = spec_of(rec).name
                timings[key] = timings.get(key, 0.0) + time.perf_counter() - t0
        return found

    def _pool(self) -> Optional[ThreadPoolExecutor]:
        """The worker threads of the concurrent recognizers (None without one), made anew in a forked child: a
        pool copied by ``fork`` counts threads the child does not have, and a job given to it would never run."""
        if not (self.concurrent and self._has_concurrent):
            return None
        with self._workers_lock:
            if self._workers is None or self._workers_pid != os.getpid():
                self._workers = ThreadPoolExecutor(thread_name_prefix="detector")
                self._workers_pid = os.getpid()
            return self._workers

    @staticmethod
    def _start(pool: ThreadPoolExecutor, rec: object, texts: Sequence[str]) -> Optional[SharedJobs]:
        """A concurrent recognizer's jobs, started on a worker thread: its spans of each text, or what it reads
        ahead of them when it reads what was found before it (None when it cannot: it is then run in turn)."""
        if spec_of(rec).reads is not Reads.FOUND:
            return SharedJobs([partial(run_recognizer, rec, [t], [[]]) for t in texts], pool)
        jobs = getattr(rec, "read_ahead_jobs", None)
        return SharedJobs(jobs(texts), pool) if callable(jobs) else None

    def decide(self, norm: Normalized, spans: List[Span]) -> List[Span]:
        """The spans of one text, in its original offsets, from the candidates of its normalized form
        (:meth:`candidates_many`): what :meth:`analyze_many` does after the recognizers."""
        out = self._decide(norm.text, spans)
        return merge_spans(norm.spans_to_original(out), self.priority, norm.original) if norm.changed else out

    def _decide(self, text: str, spans: List[Span], trace: Optional[Trace] = None) -> List[Span]:
        """The post-detection steps on the normalized text, then the merge of what overlaps."""
        ctx = StepContext(text, self.priority, self.propagated, self.ordinary_zipf, self.decider)
        # propagation merges what it returns (merging again changes nothing); without it, this is the merge
        return merge_spans(run_steps(self.steps, ctx, spans, trace), self.priority, text)

    def analyze_traced(self, text: str) -> Tuple[List[Span], Trace]:
        """The spans of ``text`` (as :meth:`analyze`, never cached) and the trace of what each post-detection step
        removed or added (offsets of the normalized text, ``trace.text``; see :mod:`.steps`)."""
        norm = normalize(text)
        found = self.candidates_many([norm.text])[0]
        trace = Trace(norm.text)
        out = self._decide(norm.text, found, trace)
        spans = merge_spans(norm.spans_to_original(out), self.priority, norm.original) if norm.changed else out
        return spans, trace
