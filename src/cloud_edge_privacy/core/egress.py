"""The egress guard: the last check on the bytes that are about to leave the edge (docs/design.md invariant 1).

Detection can be silent, so the final outgoing texts are scanned again, independently of the operator:

1. in the parts of each field that no replacement produced, no identifier the profile found may appear:
   the full surface of a PERSON/CODE/ORG/LOC span, a person's name tokens, a code's digit runs;
2. a replacement of a PERSON or CODE span may not carry the original's name tokens or digit runs
   (an operator that only changed some characters of an identifier);
3. every structured identifier (e-mail, phone, IBAN, card, national ID, key or token, URL with credentials,
   IP, user path) found by the ``structured`` recognizers in an outgoing text must lie inside a surrogate or
   placeholder the operator produced;
4. an independent check: recognizers of their own (:func:`independent_detector`: the multilingual name lists
   and the learned model's PERSON spans, with no decision threshold) read the untouched regions of every
   protected field; a person they find there means one recognizer's miss, so nothing is sent.

Findings name the rule and the category, never the raw value.  The pipeline does not refuse on a finding of
rules 1, 3 and 4 at once: :func:`repair_spans` turns it into spans over every occurrence of the value in the
original request, the same operator protects the request again with them (so the same value gets the same
surrogate everywhere) and the guard checks again; the request is refused only when no repair can make it clean
(rule 2, a value that is not in the input, a value inside a span the operator kept, too many rounds), on any
error, or for an exhausted budget (``EdgePipeline.protect_guarded``).

A one-word "person" that is an ordinary English word and in no list of names ("score", "Managers", "lookup",
"var") is not a needle of rules 1 and 4: a recognizer that once called it a person was wrong, and masking it
everywhere would only cost the answer.  A name that is also an everyday word ("Mark", "Will", "King"), and an
organisation written only in everyday words ("User", "Cross-Border"), is a needle only where it is written
as the detected span wrote it (capitalised or not), and so is a one-word place of those words ("Park", "North"):
detection does not copy them onto their lower-case uses either.
"""
from __future__ import annotations

import bisect
import hashlib
import hmac
import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field as dc_field
from functools import lru_cache
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

from ..detection.catalog import all_identifying
from ..detection.places import everyday_organisation, everyday_place_word
from ..detection.technical import drop_syntax_spans, plain_syntax, syntax_regions
from .gateway import ProtectedFields
from ..lexicon import common_name_word, is_cjk, mostly_lower_case, ordinary_word
from ..spans import Span, find_surface
from ..vocabulary import TITLES

IDENTIFYING = all_identifying()  # PERSON, CODE, ORG, LOC: what the registered recognizers declare identifying
_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
_DIGITS = re.compile(r"\d{4,}")
REPAIRABLE_RULES = ("identifier_in_clear", "name_token_in_clear", "code_digits_in_clear",
                    "structured_identifier_in_clear", "independent_check_in_clear")


@dataclass(frozen=True)
class Finding:
    rule: str
    category: str
    field: int
    fingerprint: str  # keyed fingerprint of the offending value (see _fingerprinter)
    # the offending value itself, kept in memory for the repair only: never printed, compared or logged
    value: str = dc_field(default="", repr=False, compare=False)
    case_sensitive: bool = dc_field(default=False, repr=False, compare=False)

    def describe(self) -> str:
        return f"{self.rule} ({self.category}, field {self.field}, value hmac:{self.fingerprint})"


def _fingerprinter(key: Optional[bytes]) -> Callable[[str], str]:
    """A short keyed fingerprint of an offending value (HMAC under the edge's key): lets an operator match
    findings across log lines; without the key a low-entropy value cannot be brute-forced from it."""
    secret = key or hashlib.sha256(b"cloud-edge-privacy/egress/unkeyed").digest()

    def fp(value: str) -> str:
        return hmac.new(secret, value.lower().encode("utf-8"), hashlib.sha256).hexdigest()[:12]

    return fp


@lru_cache(maxsize=1)
def _common_words() -> FrozenSet[str]:
    """English stop words (read once: the guard runs on every request)."""
    try:
        from spacy.lang.en.stop_words import STOP_WORDS

        return frozenset(STOP_WORDS)
    except ImportError:  # pragma: no cover - spaCy is a core dependency
        return frozenset()


def _name_tokens(surface: str, common: Set[str]) -> List[str]:
    return [t for t in _WORD.findall(surface) if t.lower() not in TITLES and t.lower() not in common]


def _needle_tokens(surface: str, common: Set[str]) -> List[str]:
    """The name tokens of a PERSON surface that rule 1 looks for: not stop words, titles or ordinary words."""
    return [t for t in _name_tokens(surface, common) if not ordinary_word(t)]


def _ordinary_person(surface: str, common: Set[str]) -> bool:
    """A PERSON surface with no name token (only stop words, titles and ordinary words)."""
    return bool(_WORD.findall(surface)) and not _needle_tokens(surface, common)


def _find(rule: str, value: str, case_sensitive: bool, text: str) -> List[Tuple[int, int]]:
    """Every place ``value`` is written in ``text``: on word edges, or digit edges for a code's digits
    (``find_surface``: the matches of the value's word-edged pattern, tolerant of whitespace, without compiling
    one per value and request).  A value in Han, Kana or Hangul is found wherever it is written: those scripts put no
    space (or, for Hangul, a particle) between a name and the next word, so a word edge never comes."""
    if rule != "code_digits" and is_cjk(value):
        hay, needle = (text, value) if case_sensitive else (text.lower(), value.lower())
        out, pos = [], 0
        while (i := hay.find(needle, pos)) >= 0:
            out.append((i, i + len(needle)))
            pos = i + len(needle)
        return out
    return find_surface(text, value, ignore_case=not case_sensitive, digits=rule == "code_digits")


def _needles(prot: ProtectedFields, common: Set[str]) -> List[Tuple[str, str, str, bool]]:
    """(rule, category, value, case sensitive) for every identifier the profile found."""
    seen: Set[Tuple[str, str]] = set()
    out = []
    for s in prot.spans:
        if s.category not in IDENTIFYING:
            continue
        surface = " ".join(prot.joined[s.start:s.end].split())
        person = s.category == "PERSON"
        items = [("identifier", surface)] if len(surface) >= 3 and not (person and _ordinary_person(surface, common)) \
            else []
        if person:
            items += [("name_token", t) for t in _needle_tokens(surface, common)]
        if s.category == "CODE":
            items += [("code_digits", d) for d in _DIGITS.findall(surface)]
        if surface.islower() and (s.category == "ORG" and everyday_organisation(surface)
                                  or s.category == "LOC" and everyday_place_word(surface)):
            continue  # a model's "data", "sales" or "border": propagation does not copy it onto lower-case uses
        for rule, value in items:
            # a common word that is also a name, or a name the text writes mostly in lower case ("Cap" once, "cap"
            # 44 times): only where it is written as in the span ("Mark", not "mark"); so are
            # an organisation of everyday words ("User", "Cross-Border") and a place of everyday words that is no
            # town or country ("Border"), as propagation copies them
            exact = value != value.lower() and (
                (person and (common_name_word(value) or mostly_lower_case(value, prot.joined)))
                or (s.category == "LOC" and rule == "identifier" and everyday_place_word(value))
                or (s.category == "ORG" and rule == "identifier" and everyday_organisation(value)))
            key = (rule, value if exact else value.lower())
            if key in seen:
                continue
            seen.add(key)
            out.append((rule, s.category, value, exact))
    return out


_DEFAULT = object()


class IndependentCheck:
    """Rule 4's recognizers: person names in any case and script (name lists, cues, CJK) and the learned NER's
    PERSON spans, outside the syntax of code, configuration and markup (``technical.drop_syntax_spans``).  Only
    their spans inside untouched regions count, so surrogates and placeholders never do.  With
    ``other_languages_path``, the sentences not written in English are also read by that learned model, as the
    detector reads them, and there the English model's people count only when they look like names in any
    language (``pipeline.name_shaped``: capitalised, one word rare everywhere): it never saw Russian or Spanish,
    reads their everyday words as people ("свалить вину", "средствах массовой"), and the repairs then garbled
    the request.

    Their spans are a deterministic function of the text, so a text read before (the fixed instruction, the
    earlier turns of a conversation the proxy sends again) is answered from a small cache of spans (offsets
    and categories only, keyed by the text's SHA-256): the same result, not a weaker check."""

    name = "guard_independent"

    def __init__(self, learned_path: Optional[str] = None, cache_size: int = 256,
                 other_languages_path: Optional[str] = None) -> None:
        from ..detection.learned import LearnedNerRecognizer
        from ..detection.names import NameRecognizer

        self.names = NameRecognizer()
        self.learned = LearnedNerRecognizer(learned_path)
        self.learned.check()  # missing model: an error here, so the guard cannot silently see less
        self.other = LearnedNerRecognizer(other_languages_path) if other_languages_path else None
        if self.other is not None:
            self.other.check()
        self.cache_size = cache_size
        self._cache: "OrderedDict[str, Tuple[Span, ...]]" = OrderedDict()
        self._lock = threading.Lock()  # proxy workers share one guard

    def analyze(self, text: str) -> List[Span]:
        return self.analyze_many([text])[0]

    def analyze_many(self, texts: Sequence[str]) -> List[List[Span]]:
        """Spans of each text; the learned model reads every text not in the cache in one batch."""
        keys = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        out: List[Optional[List[Span]]] = []
        with self._lock:
            for k in keys:
                hit = self._cache.get(k)
                if hit is not None:
                    self._cache.move_to_end(k)
                out.append(None if hit is None else list(hit))
        todo = [i for i, spans in enumerate(out) if spans is None]
        learned = self._people([texts[i] for i in todo]) if todo else []
        for i, found in zip(todo, learned):
            # not in the syntax of code, configuration or markup (an identifier "ray", a key "username"), as the
            # detector's technical_text step: a name in a string literal, comment or value still counts
            spans = drop_syntax_spans(texts[i], self.names.analyze(texts[i]) + found)
            out[i] = spans
            if self.cache_size:
                with self._lock:
                    self._cache[keys[i]] = tuple(spans)
                    while len(self._cache) > self.cache_size:
                        self._cache.popitem(last=False)
        return [list(spans or []) for spans in out]

    def _people(self, texts: Sequence[str]) -> List[List[Span]]:
        """The learned models' PERSON spans of each text (see the class)."""
        from ..detection.learned.ner import other_language_runs
        from ..detection.pipeline import name_shaped

        found = self.learned.analyze_many(texts)
        if self.other is None:
            return [[s for s in spans if s.category == "PERSON"] for spans in found]
        runs = [other_language_runs(t) for t in texts]
        pieces = [(i, a, texts[i][a:b]) for i, got in enumerate(runs) for a, b in got]
        out = [[s for s in spans if s.category == "PERSON" and (
                    not any(a <= s.start < b for a, b in got) or name_shaped(text[s.start:s.end]))]
               for text, spans, got in zip(texts, found, runs)]
        for (i, off, _), spans in zip(pieces, self.other.analyze_many([p for _, _, p in pieces]) if pieces else []):
            out[i] += [Span(off + s.start, off + s.end, s.category, s.score, s.source)
                       for s in spans if s.category == "PERSON"]
        return out


@lru_cache(maxsize=4)
def independent_detector(learned_path: Optional[str] = None,
                         other_languages_path: Optional[str] = None) -> IndependentCheck:
    """The guard's own recognizers, built once per process and pair of learned models (``learned_path`` None:
    the default preset's; ``other_languages_path``: the model of the sentences not in English, None: the first
    reads them too; the multilingual preset's guard reads its own multilingual model)."""
    return IndependentCheck(learned_path, other_languages_path=other_languages_path)


def _independent_findings(prot: ProtectedFields, check: Any, fp: Callable[[str], str]) -> List[Finding]:
    out = []
    common = _common_words()
    read = [i for i, regions in enumerate(prot.untouched) if regions]
    texts = [prot.fields[i] for i in read]
    many = getattr(check, "analyze_many", None)
    found = many(texts) if callable(many) else [check.analyze(t) for t in texts]
    for i, spans in zip(read, found):
        text, regions = prot.fields[i], prot.untouched[i]
        for s in spans:
            if s.category not in IDENTIFYING:
                continue
            value = text[s.start:s.end]
            if s.category == "PERSON" and _ordinary_person(value, common):
                continue  # "institute educational": no name token
            if any(lo <= s.start and s.end <= hi for lo, hi in regions) and len(value.strip()) >= 2:
                out.append(Finding("independent_check_in_clear", s.category, i, fp(value), value.strip()))
    return out


def check_egress(prot: ProtectedFields, structured: Optional[Any] = None,
                 outgoing: Optional[Sequence[str]] = None, randomized_release: bool = False,
                 key: Optional[bytes] = None, independent: Any = _DEFAULT,
                 timings: Optional[Dict[str, float]] = None) -> List[Finding]:
    """Findings for one request (empty list: safe to send).

    ``outgoing`` are the final message contents (the protected fields inside our templates); rule 3 scans
    them, defaulting to the protected fields themselves.  ``randomized_release`` (a DP operator) skips rule 2:
    a randomized mechanism may release the true value by chance, and blocking exactly then would make the
    guard's decision depend on the private value (a side channel that breaks the DP guarantee).
    ``independent``: rule 4's recognizers (default :func:`independent_detector`; ``None`` turns rule 4 off,
    for tests of the other rules).  Rule 4 reads only untouched text, which no randomized operator changed.
    ``timings``, when given, accumulates the seconds spent per rule (keys ``rule1`` ... ``rule4``).
    """
    if prot.result is None:  # the unprotected baseline: nothing to check against, by definition
        return []
    _fp = _fingerprinter(key)
    common = _common_words()
    findings: List[Finding] = []
    clock = _Clock(timings)
    needles = _needles(prot, common)
    # 1. untouched regions of every field
    for i, (text, regions) in enumerate(zip(prot.fields, prot.untouched)):
        # an occurrence in the plain syntax of code ("import ray" after "Ray" was masked in a comment) is no leak:
        # the detector leaves it too (technical.plain_syntax: a name-list identifier or a code with digits counts)
        syntax = syntax_regions(text) if regions and needles else []
        for lo, hi in regions:
            part = text[lo:hi]
            for rule, cat, value, exact in needles:
                found = _find(rule, value, exact, part)
                if found and syntax:
                    found = [(a, b) for a, b in found if not plain_syntax(text, syntax, lo + a, lo + b)]
                if found:
                    seen = part[found[0][0]:found[0][1]]
                    findings.append(Finding(f"{rule}_in_clear", cat, i, _fp(seen), seen, exact))
    clock.lap("rule1")
    # 2. replacements of direct identifiers that still carry a piece of the original
    for span, new in ([] if randomized_release else prot.replaced):
        if span.category not in ("PERSON", "CODE"):
            continue
        original = prot.joined[span.start:span.end]
        tokens = _needle_tokens if span.category == "PERSON" else _name_tokens  # a code's words all count
        pieces = tokens(original, common) + _DIGITS.findall(original)
        for piece in pieces:
            if find_surface(new, piece, ignore_case=True):
                findings.append(Finding("identifier_kept_in_replacement", span.category, -1, _fp(piece)))
    clock.lap("rule2")
    # 3. structured identifiers in the outgoing texts must be our own surrogates/placeholders
    if structured is not None:
        surrogates = [new for _, new in prot.replaced]
        for i, text in enumerate(outgoing if outgoing is not None else prot.fields):
            for s in structured.analyze(text):
                value = text[s.start:s.end].strip(" \t\n.,;:!?()[]{}<>\"'")
                if not value or any(value in sur for sur in surrogates):
                    continue
                if randomized_release and value not in prot.joined:
                    continue  # a noised value (or our template's text): never a reason to refuse
                findings.append(Finding("structured_identifier_in_clear", s.category, i, _fp(value), value))
    clock.lap("rule3")
    # 4. an independent check of what is left in clear
    check = independent_detector() if independent is _DEFAULT else independent
    if check is not None:
        findings += _independent_findings(prot, check, _fp)
    clock.lap("rule4")
    return _dedupe(findings)


class _Clock:
    """Seconds per rule into ``timings`` (nothing when it is None)."""

    def __init__(self, timings: Optional[Dict[str, float]]) -> None:
        self.timings = timings
        self.t = time.perf_counter()

    def lap(self, key: str) -> None:
        if self.timings is not None:
            now = time.perf_counter()
            self.timings[key] = self.timings.get(key, 0.0) + now - self.t
            self.t = now


def _dedupe(findings: Iterable[Finding]) -> List[Finding]:
    out, seen = [], set()
    for f in findings:
        if f not in seen:
            seen.add(f)
            out.append(f)
    return out


def repair_spans(prot: ProtectedFields, findings: Sequence[Finding]) -> Optional[List[Span]]:
    """Spans over every occurrence, in the original request, of each finding's value that no detected span
    covers yet (the guard's repair: the same operator then protects them like any other span, so one value gets
    one surrogate everywhere).  None when a finding cannot be repaired: rule 2 (the operator's own output kept a
    piece), a value that is not in the input, or a value whose every occurrence already lies in a span (the
    operator kept it)."""
    taken = sorted((s.start, s.end) for s in prot.spans)
    out: List[Span] = []

    def free(a: int, b: int) -> bool:
        j = bisect.bisect_left(taken, (b, b))
        return not any(x < b and a < y for x, y in taken[max(0, j - 8):j]) and \
            not any(s.start < b and a < s.end for s in out)

    done: Set[Tuple[str, bool, Tuple[str, ...]]] = set()
    # the longest values first: a name token's repair ("GPT") must not take the place of the longer value it is part
    # of ("GPT-4" found by another rule), whose occurrences would then be neither free nor inside a repair
    for f in sorted(findings, key=lambda f: -len(f.value.strip())):
        value = f.value.strip()
        if f.rule not in REPAIRABLE_RULES or not value:
            return None
        rule = "code_digits" if f.rule == "code_digits_in_clear" else "text"
        key = (rule, f.case_sensitive, tuple(value.split()))
        if key in done:  # the same value found again (another field, another rule)
            continue
        done.add(key)
        added = False
        for a, b in _find(rule, value, f.case_sensitive, prot.joined):
            if free(a, b):
                out.append(Span(a, b, f.category, 1.0, f"guard_repair:{f.rule}"))
                added = True
            elif any(s.start <= a and b <= s.end for s in out):
                added = True  # inside a longer value this repair already masks ("Quist" in "Halvard Quist")
        if not added:
            return None
    return sorted(out)
