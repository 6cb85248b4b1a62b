"""NER trained on TAB's training split to find what TAB annotators mask (DIRECT and QUASI mentions).

Two small spaCy pipelines are committed with the package, both produced by ``scripts/train_tab_ner.py`` with a
fixed seed: ``tab_ner_model/`` (trained from a blank pipeline) and ``tab_ner_sm_model/`` (trained from
en_core_web_sm's tok2vec, MIT licence: see the NOTICE there).  Nothing is read from a cache, so a wheel install
without ``setup.sh`` gives the same spans as a development checkout.
"""
from __future__ import annotations

from dataclasses import replace

import json
from functools import lru_cache
from pathlib import Path
import bisect
import re
from types import MappingProxyType
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..errors import ModelFileError
from .. import wordlists
from ..spans import Span
from ..vocabulary import MONTHS, WEEKDAYS
from .public_parties import is_public_institution
from .recognizer import ALL_TAB, Reads, register_recognizer
from .spacy_pipeline import SpacyPipeline

MODEL_DIR = Path(__file__).with_name("tab_ner_model")
SM_MODEL_DIR = Path(__file__).with_name("tab_ner_sm_model")
COMMITTED_MODELS: Mapping[str, Path] = MappingProxyType({"blank": MODEL_DIR, "sm": SM_MODEL_DIR})


def transfer_model_dir() -> Path:
    """The committed model ``scripts/train_tab_ner.py --init sm`` builds on en_core_web_sm's tok2vec."""
    return SM_MODEL_DIR


@lru_cache(maxsize=2)
def load_tab_ner(path: str = str(MODEL_DIR)) -> SpacyPipeline:
    import spacy

    if not Path(path, "meta.json").is_file():
        hint = " --init sm" if Path(path) == transfer_model_dir() else ""
        raise ModelFileError(f"{path}: TAB NER model missing; run .venv/bin/python scripts/train_tab_ner.py{hint}")
    return SpacyPipeline(spacy.load(path))


def training_info(path: Path = MODEL_DIR) -> Dict[str, Any]:
    f = path / "tab_training.json"
    return json.loads(f.read_text()) if f.is_file() else {}


_SENTENCE = re.compile(r"[^\n]*?(?:[.!?](?=\s+[A-Z“\"(0-9])|\n|$)")
_LOWER_WORD = re.compile(r"\b[a-z][a-z'’-]+\b")
_CAPITALISED = re.compile(r"(?<=[\s(“\"'])[A-ZÀ-ÞĀ-ſ][\w'’-]*|[^\x00-\x7f\s“”’‘–—€£§°]")


@lru_cache(maxsize=1)
def _uninformative() -> frozenset:
    """Capitalised words of court text that never start an identifier (stop words, headings, institutions)."""
    from spacy.lang.en.stop_words import STOP_WORDS

    extra = wordlists.words("court_words_uninformative") | frozenset(m.lower() for m in MONTHS + WEEKDAYS)
    return frozenset(w.lower() for w in STOP_WORDS) | frozenset(extra)


def _inside(covered: List[Tuple[int, int]], start: int, end: int) -> bool:
    """Whether [start, end) lies inside one of the sorted spans."""
    j = bisect.bisect_right(covered, (start, float("inf"))) - 1
    return any(a <= start and end <= b for a, b in covered[max(0, j - 3):j + 1])


def informative_sentences(text: str, found: Sequence[Span] = ()) -> List[Tuple[int, str]]:
    """(offset, sentence) of the sentences of ``text`` worth a model's time: those with a capitalised word that is
    not a stop word or court vocabulary, not an ordinary sentence-initial word, and not inside a span of
    ``found`` (what cheaper recognizers already have), or with a non-ASCII letter."""
    covered = sorted((sp.start, sp.end) for sp in found)
    boring = _uninformative()
    # A sentence-initial word that the same text also uses in lower case ("Subsequently", "Relying")
    # is an ordinary word there, not a name.
    lower_words = set(_LOWER_WORD.findall(text))
    out: List[Tuple[int, str]] = []
    for m in _SENTENCE.finditer(text):
        sent, off = m.group(), m.start()
        head = len(sent) - len(sent.lstrip()) + 1  # where the first word starts in " " + sent
        for w in _CAPITALISED.finditer(" " + sent):
            at = off + w.start() - 1
            word = w.group()
            if word.lower() in boring or (w.start() == head and word.lower() in lower_words):
                continue
            if not _inside(covered, at, at + len(word)):
                out.append((off, sent))
                break
    return out


@register_recognizer("tab_ner", ALL_TAB, {"tab_ner": 2}, Reads.TOKENS)
class TabNerRecognizer:
    """What TAB annotators mask in court text (PERSON, ORG, LOC, DATETIME, DEM, QUANTITY, CODE, MISC),
    learned from TAB's training split.

    With ``skip_plain=True`` the model only reads sentences that have a capitalised word other than stop words
    and court vocabulary, or a non-ASCII letter: the others hold no name the model would find that the
    pattern recognizers (dates, numbers, amounts) do not already cover, and skipping them saves model time."""

    def __init__(self, path: Optional[str] = None, skip_plain: bool = False, model: str = "blank",
                 drop_public_institutions: bool = False) -> None:
        # ``model``: a committed model by name (``path`` overrides): "blank" (tab_ner_model/) or "sm"
        # (tab_ner_sm_model/, on en_core_web_sm's tok2vec); ``drop_public_institutions``: as the spaCy recognizer,
        # without courts, ministries, States and headings (``public_parties.is_public_institution``)
        if model not in COMMITTED_MODELS:
            raise ValueError(f"tab_ner model {model!r}: expected one of {sorted(COMMITTED_MODELS)} (or a path)")
        self.path = path if path is not None else str(COMMITTED_MODELS[model])
        self.skip_plain = skip_plain
        self.drop_public = drop_public_institutions
        if skip_plain:  # it reads what the recognizers before it found
            self.spec = replace(TabNerRecognizer.spec, reads=Reads.FOUND)

    def analyze(self, text: str) -> List[Span]:
        return self.analyze_many([text])[0]

    def analyze_many(self, texts: Sequence[str], found: Optional[Sequence[Sequence[Span]]] = None) -> List[List[Span]]:
        """Batched with ``nlp.pipe``.  ``found``: spans cheaper recognizers already have for each text; with
        ``skip_plain`` a capitalised word inside one of them does not make its sentence worth reading."""
        nlp = load_tab_ner(self.path)
        if not self.skip_plain:
            return nlp.read_with_texts(list(texts), self._spans)
        pieces = [(i, off, sent) for i, text in enumerate(texts)
                  for off, sent in informative_sentences(text, found[i] if found is not None else ())]
        out: List[List[Span]] = [[] for _ in texts]
        for (i, off, _), spans in zip(pieces, nlp.read_with_texts([p[2] for p in pieces], self._spans, batch_size=64)):
            out[i].extend(Span(s.start + off, s.end + off, s.category, s.score, s.source) for s in spans)
        return out

    def _spans(self, doc: Any, text: str) -> List[Span]:
        return [Span(e.start_char, e.end_char, e.label_, 0.85, f"tab_ner:{e.label_}") for e in doc.ents
                if not (self.drop_public and is_public_institution(text[e.start_char:e.end_char], e.label_))]
