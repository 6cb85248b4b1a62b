"""The federated detector as a recognizer of the detection pipeline (``--detector federated``), registered here
as ``federated`` (the detection layer's ``catalog.PLUGINS`` names this module; presets name the recognizer).

The experiment (``scripts/run_federated_bench.py``) saves there the best private detector at ε <= 10 of its grid
(either model family; the file records which, with its ε and dev scores) and, for comparison, the non-private
centralised model of the same family (``centralized_detector.pt``; ``FederatedRecognizer(model_file=...)``).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List, Optional

from ..detection.recognizer import ALL_TAB, register_recognizer
from ..errors import ModelFileError
from ..spans import Span

MODEL_FILE = "federated_detector.pt"
CENTRALIZED_FILE = "centralized_detector.pt"
TRAIN_COMMAND = "python scripts/run_federated_bench.py"


def default_model_dir() -> Path:
    """``$CEP_FEDERATED_MODEL_DIR``, else ``<cache>/models/federated_detector``."""
    env = os.environ.get("CEP_FEDERATED_MODEL_DIR")
    if env:
        return Path(env)
    from ..models.catalog import cache_dir

    return cache_dir() / "models" / "federated_detector"


@register_recognizer("federated", ALL_TAB, {"federated": 2})
class FederatedRecognizer:
    """Tags TAB entity types (PERSON, CODE, LOC, ORG, DATETIME, DEM, QUANTITY, MISC) with the federated model.
    ``model_dir``: a folder holding ``model_file``, or a model file (default: :func:`default_model_dir`)."""

    name = "federated"

    def __init__(self, model_dir: Optional[str] = None, threshold: Optional[float] = None,
                 model_file: str = MODEL_FILE) -> None:
        path = Path(model_dir) if model_dir else default_model_dir()
        file = path / model_file if path.is_dir() or not path.suffix else path
        if not file.is_file():
            raise ModelFileError(
                f"federated detector model not found at {file}; train and export it with `{TRAIN_COMMAND}` "
                f"(writes {default_model_dir() / model_file}; or set CEP_FEDERATED_MODEL_DIR)")
        from .model import load_model

        try:
            self.model, self.meta = load_model(str(file))
        except Exception as exc:  # a truncated or foreign file must say so, not crash deep in torch
            raise ModelFileError(f"{file}: not a federated detector model ({exc}); re-run `{TRAIN_COMMAND}`") from None
        self.threshold = float(threshold if threshold is not None else self.meta.get("threshold", 0.5))

    def analyze(self, text: str) -> List[Span]:
        """Spans of ``text`` the model labels private."""
        from .model import predict_spans

        return predict_spans(self.model, text, self.threshold, source=self.name, cache=False)

    def describe(self) -> Dict[str, object]:
        """Provenance of the loaded model (method, ε, seed, ...)."""
        return dict(self.meta)
