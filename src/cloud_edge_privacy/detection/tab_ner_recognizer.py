"""NER trained on TAB's training split to find what TAB annotators mask (DIRECT and QUASI mentions).

The model is a small spaCy pipeline committed with the package (``tab_ner_model/``), produced by
``scripts/train_tab_ner.py`` with a fixed seed.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List

from ..errors import ModelFileError
from ..spans import Span

MODEL_DIR = Path(__file__).with_name("tab_ner_model")


@lru_cache(maxsize=2)
def load_tab_ner(path: str = str(MODEL_DIR)) -> Any:
    import spacy

    if not Path(path, "meta.json").is_file():
        raise ModelFileError(f"{path}: TAB NER model missing; run scripts/train_tab_ner.py")
    return spacy.load(path)


def training_info(path: Path = MODEL_DIR) -> Dict[str, Any]:
    f = path / "tab_training.json"
    return json.loads(f.read_text()) if f.is_file() else {}


class TabNerRecognizer:
    name = "tab_ner"

    def __init__(self, path: str = str(MODEL_DIR)) -> None:
        self.path = path

    def analyze(self, text: str) -> List[Span]:
        doc = load_tab_ner(self.path)(text)
        return [Span(e.start_char, e.end_char, e.label_, 0.85, f"tab_ner:{e.label_}") for e in doc.ents]
