"""Where a model recognizer spends its time: all of a short text, the informative sentences of a long one.

Most prompts are short (real ones: median 345 characters) and often typed in lower case, so every model reads
all of a text of up to 4,000 characters.  Longer texts (court judgments, long pasted documents) are read by
sentence: a sentence with no informative capitalised word (see
:func:`.tab_ner_recognizer.informative_sentences`) holds nothing a model would find that the pattern
recognizers (dates, numbers, amounts) do not already cover, so models skip it there.
"""
from __future__ import annotations

from functools import partial
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from dataclasses import replace

from ..spans import Span
from .recognizer import Reads, RecognizerSpec, spec_of
from .tab_ner_recognizer import informative_sentences

LONG_TEXT = 4000  # characters: above this, a text is read sentence by sentence


Piece = Tuple[int, int, str]  # the text's index in the batch, the piece's offset in it, the piece
Ahead = Dict[Tuple[int, int], List[Span]]  # (text index, offset) -> the inner recognizer's spans of that piece


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

    def read_ahead_jobs(self, texts: Sequence[str]) -> List[Callable[[], Ahead]]:
        """One job per piece of every text as if nothing had been found before it: the same short texts and a
        superset of the sentences :meth:`analyze_many` reads once spans are found (a covered word only ever drops
        a sentence).  For a recognizer declared ``concurrent``, which labels each piece alone, so that a worker
        thread can read them while the recognizers before it run (and the detector take the last ones)."""
        short, long = self._pieces(texts, None)
        return [partial(self._read, [p], []) for p in short] + [partial(self._read, [], [p]) for p in long]

    def analyze_many(self, texts: Sequence[str], found: Optional[Sequence[Sequence[Span]]] = None,
                     ahead: Optional[Ahead] = None) -> List[List[Span]]:
        """Spans of each text; ``ahead``: what :meth:`read_ahead` read of them (a piece it lacks is read now)."""
        short, long = self._pieces(texts, found)
        read = dict(ahead) if ahead is not None else {}
        read.update(self._read([p for p in short if p[:2] not in read], [p for p in long if p[:2] not in read]))
        out: List[List[Span]] = [[] for _ in texts]
        for i, off, _ in short + long:
            out[i].extend(Span(s.start + off, s.end + off, s.category, s.score, s.source) for s in read[(i, off)])
        return out

    def _pieces(self, texts: Sequence[str], found: Optional[Sequence[Sequence[Span]]]
                ) -> Tuple[List[Piece], List[Piece]]:
        """The short texts whole, and the informative sentences of the long ones given what was ``found``."""
        short: List[Piece] = []
        long: List[Piece] = []
        for i, text in enumerate(texts):
            if len(text) <= self.long_text:
                short.append((i, 0, text))
            else:
                long += [(i, off, sent) for off, sent in
                         informative_sentences(text, found[i] if found is not None else ())]
        return short, long

    def _read(self, short: Sequence[Piece], long: Sequence[Piece]) -> Ahead:
        """Each piece's spans, in the piece's own offsets: short texts by the inner recognizer, sentences of long
        ones by the long-text one."""
        read: Ahead = {}
        for rec, pieces in ((self.inner, short), (self.long_inner, long)):
            results = rec.analyze_many([p[2] for p in pieces]) if pieces else []  # type: ignore[attr-defined]
            for (i, off, _), spans in zip(pieces, results):
                read[(i, off)] = list(spans)
        return read
