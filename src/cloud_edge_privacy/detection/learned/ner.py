"""The learned recognizer: a spaCy NER trained on a broad mixture (TAB train, the real development prompts,
the generated prompts, each also in lower case) by ``scripts/train_learned_ner.py``.

Its weights are ours (trained from a blank pipeline with a fixed seed) and committed under ``model/``.
Inference needs only spaCy (a core dependency), never torch.  Per-fold models for cross-validation live in
the cache directory (see :func:`fold_model_dir`).
"""
from __future__ import annotations

import json
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any, FrozenSet, List, Optional, Sequence, Tuple

from ...errors import ModelFileError
from ...lexicon import another_language, sentence_bounds, unread_letters
from ...spans import Span
from ..public_parties import is_public_institution
from ..recognizer import ALL_TAB, Reads, register_recognizer
from ..spacy_pipeline import SpacyPipeline

MODEL_DIR = Path(__file__).with_name("model")
# the learned NER trained on seven more languages besides English, with its decider (the "multilingual" preset);
# the default preset reads its sentences not in English with it
MULTILINGUAL_DIR = Path(__file__).with_name("model_multilingual")
_lock = threading.Lock()
# A text longer than this is read in pieces (court judgments): spaCy's cost grows with the document.
_PIECE = 5000


def fold_model_dir(fold: Any, multilingual: bool = False) -> Path:
    """Where ``scripts/train_learned_ner.py --fold K`` saves the model trained without fold K (``multilingual``:
    the one trained with ``--multilingual``, which reads the default preset's sentences not in English)."""
    from ...models.catalog import cache_dir

    return cache_dir() / ("multilingual_ner_folds" if multilingual else "learned_ner_folds") / f"fold{fold}"


@lru_cache(maxsize=8)
def reads_scripts(path: str) -> FrozenSet[str]:
    """The caseless scripts a learned model was trained on (``reads_scripts`` in its ``training.json``: "Han",
    "Kana", "Hangul"; none for a model without it): its spans over letters of any other caseless script are
    dropped, since there it only guesses (whole clauses as names)."""
    meta = Path(path, "training.json")
    if not meta.is_file():
        return frozenset()
    return frozenset(json.loads(meta.read_text(encoding="utf-8")).get("reads_scripts", ()))


@lru_cache(maxsize=8)
def load_learned(path: str) -> SpacyPipeline:
    """Load a learned NER once per process; a clear error if it was not built."""
    if not Path(path, "meta.json").is_file():
        how = " --multilingual multilingual/multilingual_train_large.jsonl" if "multilingual" in path else ""
        raise ModelFileError(f"{path}: the learned NER model is missing; build it with "
                             f".venv/bin/python scripts/train_learned_ner.py{how} (see docs/detection.md)")
    import spacy

    with _lock:
        return SpacyPipeline(spacy.load(path))


def _pieces(text: str) -> List[tuple]:
    """(offset, piece) cuts of a long text at line breaks, each at most about ``_PIECE`` characters."""
    if len(text) <= _PIECE:
        return [(0, text)]
    out, start = [], 0
    while start < len(text):
        end = min(len(text), start + _PIECE)
        if end < len(text):
            cut = text.rfind("\n", start + _PIECE // 2, end)
            if cut < 0:
                cut = text.rfind(". ", start + _PIECE // 2, end)
            end = cut + 1 if cut >= 0 else end
        out.append((start, text[start:end]))
        start = end
    return out


@register_recognizer("learned", ALL_TAB, {"learned": 1.5}, Reads.TOKENS)
class LearnedNerRecognizer:
    """Names, organisations, places, codes, dates and other private items as the learned model sees them,
    in context and in any case.  ``source`` is ``learned:<TAB type>``."""

    def __init__(self, path: Optional[str] = None, drop_public_institutions: bool = False,
                 other_languages: Optional[str] = None) -> None:
        self.path = str(path or MODEL_DIR)
        # as the spaCy recognizer: without courts, ministries, States and headings (is_public_institution)
        self.drop_public = drop_public_institutions
        # the model that reads the sentences not written in English (lexicon.another_language); None: this one
        self.other_path = str(other_languages) if other_languages else None

    def check(self) -> None:
        """Raise :class:`ModelFileError` now if a model is missing (presets call this when built)."""
        load_learned(self.path)
        if self.other_path:
            load_learned(self.other_path)

    def analyze(self, text: str) -> List[Span]:
        return self.analyze_many([text])[0]

    def analyze_many(self, texts: Sequence[str]) -> List[List[Span]]:
        """Batched with ``nlp.pipe``; long texts are read in pieces.  With ``other_languages``, the sentences
        written in another language are read by that model instead (each run of them alone)."""
        pieces = [(i, off, piece) for i, text in enumerate(texts) for off, piece in _pieces(text) if piece.strip()]
        out: List[List[Span]] = [[] for _ in texts]
        elsewhere: List[List[Tuple[int, int]]] = [[] for _ in pieces]  # runs of other-language sentences
        if self.other_path:
            elsewhere = [other_language_runs(piece) for _, _, piece in pieces]
            runs = [(i, off + a, piece[a:b]) for (i, off, piece), got in zip(pieces, elsewhere) for a, b in got]
            self._read(self.other_path, runs, out)
        self._read(self.path, pieces, out, [[(off + a, off + b) for a, b in got]
                                            for (_, off, _), got in zip(pieces, elsewhere)])
        return out

    def _read(self, path: str, pieces: Sequence[Tuple[int, int, str]], out: List[List[Span]],
              skip: Optional[Sequence[Sequence[Tuple[int, int]]]] = None) -> None:
        """The spans of the model at ``path`` in ``pieces`` ((text index, offset, piece)) into ``out``, but those
        that start in a ``skip`` range of their piece (read by the other model)."""
        if not pieces:
            return
        nlp, reads = load_learned(path), reads_scripts(path)

        def entities(doc: Any, text: str) -> List[tuple]:
            found = [(e.start_char, e.end_char, e.label_, text[e.start_char:e.end_char]) for e in doc.ents]
            return [(a, b, label) for a, b, label, surface in found if surface.strip()
                    and not (self.drop_public and is_public_institution(surface, label))
                    and not unread_letters(surface, reads)]

        for k, ((i, off, _), ents) in enumerate(zip(pieces, nlp.read_with_texts([p[2] for p in pieces], entities))):
            ranges = skip[k] if skip is not None else ()
            out[i].extend(Span(off + start, off + end, label, 0.8, f"learned:{label}") for start, end, label in ents
                          if not any(a <= off + start < b for a, b in ranges))


def other_language_runs(text: str) -> List[Tuple[int, int]]:
    """(start, end) of each run of consecutive sentences of ``text`` not written in English."""
    runs: List[Tuple[int, int]] = []
    for start, end in sentence_bounds(text):
        if not another_language(text[start:end]):
            continue
        if runs and not text[runs[-1][1]:start].strip():
            runs[-1] = (runs[-1][0], end)
        else:
            runs.append((start, end))
    return runs
