"""Anonymize TAB documents with a privacy method (through the edge pipeline, like every entry point) and
score masks with TAB's definitions."""
from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from tqdm import tqdm

from .detection import Detector, build_detector
from .errors import DataValidationError
from .randomness import Randomness
from .metrics.tab_official import score_masks
from .datasets.tab import TabDocument, load_tab, read_json_file


def gold_dict(doc: TabDocument) -> Dict[str, Any]:
    return {"doc_id": doc.doc_id, "text": doc.text,
            "annotations": {a: [m.to_dict() for m in ms] for a, ms in doc.annotations.items()}}


def anonymize_documents(docs: List[TabDocument], method: str, randomness: Randomness,
                        detector: Optional[Detector] = None, progress: bool = True,
                        params: Optional[Dict[str, Any]] = None, guard: bool = True) -> Dict[str, Any]:
    """Run the edge pipeline's protect + guard step (the one every entry point uses) over documents: masks,
    texts, timings, ε per kind.

    A document the egress guard blocks keeps its masks (they are what detection found) but gets no text:
    its ``status`` is ``privacy_failure``.  ``guard=False`` skips the guard (scripts that score masks only).
    """
    from .core.context import RunContext
    from .core.module_configs import CloudModelConfig
    from .core.pipeline import EdgePipeline, EgressBlocked

    config = CloudModelConfig(privacy_method=method, method_params=params or {})
    with tempfile.TemporaryDirectory(prefix="cep-anonymize-") as tmp:  # nothing is sent: no audit is written
        pipe = EdgePipeline(RunContext(Path(tmp)), config, randomness=randomness,
                            detector=detector if detector is not None else build_detector("default"))
        masks, texts, timings, epsilons, status = {}, {}, [], {}, {}
        for doc in tqdm(docs, desc=f"anonymize ({method})", unit="doc", disable=not progress):
            t0 = time.perf_counter()
            blocked = False
            if guard:
                try:
                    prot, _ = pipe.protect_texts([doc.text], scope=doc.doc_id)
                except EgressBlocked as exc:
                    blocked, prot = True, exc.prot
            else:
                prot = pipe.gateway.protect(doc.text, scope=doc.doc_id)
            timings.append((time.perf_counter() - t0) * 1e3)
            masks[doc.doc_id] = prot.masks()
            status[doc.doc_id] = "privacy_failure" if blocked else "ok"
            texts[doc.doc_id] = None if blocked else prot.fields[0]
            if prot.epsilon_by_kind():
                epsilons[doc.doc_id] = prot.epsilon_by_kind()
    return {"masks": masks, "texts": texts, "latency_ms": timings, "epsilon": epsilons, "status": status,
            "randomness": randomness.label}


def write_masks(masks: Dict[str, List[List[Any]]], path: str) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(masks, fh, ensure_ascii=False)
    os.replace(tmp, path)


def read_masks(path: str) -> Dict[str, List[List[Any]]]:
    """Read ``{doc_id: [[start, end, replacement], ...]}`` with errors naming the document and entry."""
    data = read_json_file(path)
    if not isinstance(data, dict):
        raise DataValidationError(f"{path}: expected an object mapping doc_id to a list of [start, end, replacement]")
    for doc_id, entries in data.items():
        if not isinstance(entries, list):
            raise DataValidationError(f"{path}: document '{doc_id}': expected a list of masks")
        for i, e in enumerate(entries):
            if not (isinstance(e, list) and len(e) >= 2 and all(isinstance(v, int) for v in e[:2]) and 0 <= e[0] <= e[1]):
                raise DataValidationError(f"{path}: document '{doc_id}', mask [{i}]: expected [start, end, replacement], got {e!r}")
    return data


def score_tab_file(gold_path: str, masks_path: str) -> Dict[str, Any]:
    docs = load_tab(gold_path)
    masks = read_masks(masks_path)
    golds = {d.doc_id: gold_dict(d) for d in docs}
    unknown = [d for d in masks if d not in golds]
    if unknown:
        raise DataValidationError(f"{masks_path}: doc_ids not in {gold_path}: {unknown[:5]}")
    for d in golds:
        for i, e in enumerate(masks.get(d, [])):
            if e[1] > len(golds[d]["text"]):
                raise DataValidationError(f"{masks_path}: document '{d}', mask [{i}] ends at {e[1]}, "
                                          f"beyond the text (length {len(golds[d]['text'])})")
    return score_masks(golds, masks)
