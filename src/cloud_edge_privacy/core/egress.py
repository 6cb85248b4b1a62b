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

Any finding means nothing is sent.  Findings name the rule and the category, never the raw value.
"""
from __future__ import annotations

import hashlib
import hmac
import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

from ..detection.recognizer import builtin_identifying
from .gateway import ProtectedFields
from ..spans import Span
from ..vocabulary import TITLES, tolerant_body

IDENTIFYING = builtin_identifying()  # PERSON, CODE, ORG, LOC: what the recognizers declare identifying
_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
_DIGITS = re.compile(r"\d{4,}")


@dataclass(frozen=True)
class Finding:
    rule: str
    category: str
    field: int
    fingerprint: str  # keyed fingerprint of the offending value (see _fingerprinter)

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


def _needles(prot: ProtectedFields, common: Set[str]) -> List[Tuple[str, str, "re.Pattern[str]"]]:
    """(rule, category, pattern) for every identifier the profile found."""
    seen: Set[Tuple[str, str]] = set()
    out = []
    for s in prot.spans:
        if s.category not in IDENTIFYING:
            continue
        surface = " ".join(prot.joined[s.start:s.end].split())
        items = [("identifier", surface)] if len(surface) >= 3 else []
        if s.category == "PERSON":
            items += [("name_token", t) for t in _name_tokens(surface, common)]
        if s.category == "CODE":
            items += [("code_digits", d) for d in _DIGITS.findall(surface)]
        for rule, value in items:
            if (rule, value.lower()) in seen:
                continue
            seen.add((rule, value.lower()))
            body = tolerant_body(value)
            edge = r"(?<!\d)" if rule == "code_digits" else r"(?<!\w)"
            tail = r"(?!\d)" if rule == "code_digits" else r"(?!\w)"
            out.append((rule, s.category, re.compile(edge + body + tail, re.IGNORECASE)))
    return out


_DEFAULT = object()


class IndependentCheck:
    """Rule 4's recognizers: person names in any case and script (name lists, cues, CJK) and the learned NER's
    PERSON spans.  Only their spans inside untouched regions count, so surrogates and placeholders never do.

    Their spans are a deterministic function of the text, so a text read before (the fixed instruction, the
    earlier turns of a conversation the proxy sends again) is answered from a small cache of spans (offsets
    and categories only, keyed by the text's SHA-256): the same result, not a weaker check."""

    name = "guard_independent"

    def __init__(self, learned_path: Optional[str] = None, cache_size: int = 256) -> None:
        from ..detection.learned import LearnedNerRecognizer
        from ..detection.names import NameRecognizer

        self.names = NameRecognizer()
        self.learned = LearnedNerRecognizer(learned_path)
        self.learned.check()  # missing model: an error here, so the guard cannot silently see less
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
        learned = self.learned.analyze_many([texts[i] for i in todo]) if todo else []
        for i, found in zip(todo, learned):
            spans = self.names.analyze(texts[i]) + [s for s in found if s.category == "PERSON"]
            out[i] = spans
            if self.cache_size:
                with self._lock:
                    self._cache[keys[i]] = tuple(spans)
                    while len(self._cache) > self.cache_size:
                        self._cache.popitem(last=False)
        return [list(spans or []) for spans in out]


@lru_cache(maxsize=1)
def independent_detector() -> IndependentCheck:
    """The guard's own recognizers, built once per process."""
    return IndependentCheck()


def _independent_findings(prot: ProtectedFields, check: Any, fp: Callable[[str], str]) -> List[Finding]:
    out = []
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
            if any(lo <= s.start and s.end <= hi for lo, hi in regions) and len(value.strip()) >= 2:
                out.append(Finding("independent_check_in_clear", s.category, i, fp(value)))
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
        for lo, hi in regions:
            part = text[lo:hi]
            for rule, cat, pat in needles:
                m = pat.search(part)
                if m:
                    findings.append(Finding(f"{rule}_in_clear", cat, i, _fp(m.group())))
    clock.lap("rule1")
    # 2. replacements of direct identifiers that still carry a piece of the original
    for span, new in ([] if randomized_release else prot.replaced):
        if span.category not in ("PERSON", "CODE"):
            continue
        original = prot.joined[span.start:span.end]
        pieces = _name_tokens(original, common) + _DIGITS.findall(original)
        for piece in pieces:
            if re.search(r"(?<!\w)" + re.escape(piece) + r"(?!\w)", new, re.IGNORECASE):
                findings.append(Finding("identifier_kept_in_replacement", span.category, -1, _fp(piece)))
    clock.lap("rule2")
    # 3. structured identifiers in the outgoing texts must be our own surrogates/placeholders
    if structured is not None:
        surrogates = [new for _, new in prot.replaced]
        for i, text in enumerate(outgoing if outgoing is not None else prot.fields):
            for s in structured.analyze(text):
                value = text[s.start:s.end].strip(" \t\n.,;:!?()[]{}<>\"'")
                if value and not any(value in sur for sur in surrogates):
                    findings.append(Finding("structured_identifier_in_clear", s.category, i, _fp(value)))
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
