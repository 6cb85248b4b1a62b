"""Where a model recognizer spends its time: all of a short text, the informative sentences of a long one.

Most prompts are short (real ones: median 345 characters) and often typed in lower case, so every model reads
all of a text of up to 4,000 characters.  Longer texts (court judgments, long pasted documents) are read by
sentence: a sentence with no informative capitalised word (see
:func:`.tab_ner_recognizer.informative_sentences`) holds nothing a model would find that the pattern
recognizers (dates, numbers, amounts) do not already cover, so models skip it there.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from dataclasses import replace

from ..spans import Span
from .recognizer import Reads, RecognizerSpec, spec_of
from .tab_ner_recognizer import informative_sentences

LONG_TEXT = 4000  # characters: above this, a text is read sentence by sentence


class SentenceGate:
    """Wraps a recognizer with ``analyze_many``: short texts whole, long texts by informative sentence."""

    def __init__(self, inner: object, long_text: int = LONG_TEXT, long_inner: Optional[object] = None) -> None:
        self.inner = inner
        self.long_text = long_text
        # a differently configured recognizer for long texts (court judgments), e.g. without public institutions
        self.long_inner = long_inner if long_inner is not None else inner
        # the inner recognizer's declaration; it reads what the recognizers before it found (to skip sentences)
        self.spec: RecognizerSpec = replace(spec_of(inner), reads=Reads.FOUND)

    @property
    def name(self) -> str:
        return self.spec.name

    def check(self) -> None:
        getattr(self.inner, "check", lambda: None)()

    def analyze(self, text: str) -> List[Span]:
        return self.analyze_many([text])[0]

    def analyze_many(self, texts: Sequence[str], found: Optional[Sequence[Sequence[Span]]] = None) -> List[List[Span]]:
        short: List[Tuple[int, int, str]] = []
        long: List[Tuple[int, int, str]] = []
        for i, text in enumerate(texts):
            if len(text) <= self.long_text:
                short.append((i, 0, text))
            else:
                long += [(i, off, sent) for off, sent in
                         informative_sentences(text, found[i] if found is not None else ())]
        out: List[List[Span]] = [[] for _ in texts]
        for rec, pieces in ((self.inner, short), (self.long_inner, long)):
            results = rec.analyze_many([p[2] for p in pieces]) if pieces else []  # type: ignore[attr-defined]
            for (i, off, _), spans in zip(pieces, results):
                out[i].extend(Span(s.start + off, s.end + off, s.category, s.score, s.source) for s in spans)
        return out
