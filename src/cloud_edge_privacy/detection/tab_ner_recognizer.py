"""NER trained on TAB's training split to find what TAB annotators mask (DIRECT and QUASI mentions).

The model is a small spaCy pipeline committed with the package (``tab_ner_model/``), produced by
``scripts/train_tab_ner.py`` with a fixed seed.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Sequence

from ..errors import ModelFileError
from ..spans import Span

MODEL_DIR = Path(__file__).with_name("tab_ner_model")


def transfer_model_dir() -> Path:
    """Where ``scripts/train_tab_ner.py --init sm`` puts the model built on en_core_web_sm's tok2vec.

    It is not committed: it holds a re-trained copy of third-party weights (6 MB).
    """
    from ..models.catalog import cache_dir

    return cache_dir() / "tab_ner_sm"


@lru_cache(maxsize=2)
def load_tab_ner(path: str = str(MODEL_DIR)) -> Any:
    import spacy

    if not Path(path, "meta.json").is_file():
        hint = " --init sm" if Path(path) == transfer_model_dir() else ""
        raise ModelFileError(f"{path}: TAB NER model missing; run .venv/bin/python scripts/train_tab_ner.py{hint}")
    return spacy.load(path)


def training_info(path: Path = MODEL_DIR) -> Dict[str, Any]:
    f = path / "tab_training.json"
    return json.loads(f.read_text()) if f.is_file() else {}


class TabNerRecognizer:
    """What TAB annotators mask in court text (PERSON, ORG, LOC, DATETIME, DEM, QUANTITY, CODE, MISC),
    learned from TAB's training split."""

    name = "tab_ner"

    def __init__(self, path: str = str(MODEL_DIR)) -> None:
        self.path = path

    def analyze(self, text: str) -> List[Span]:
        return self.analyze_many([text])[0]

    def analyze_many(self, texts: Sequence[str]) -> List[List[Span]]:
        """Batched with ``nlp.pipe``."""
        return [[Span(e.start_char, e.end_char, e.label_, 0.85, f"tab_ner:{e.label_}") for e in doc.ents]
                for doc in load_tab_ner(self.path).pipe(texts, batch_size=32)]
