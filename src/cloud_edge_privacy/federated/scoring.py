"""The exported detectors as recognizers: the best private model and the centralised one, alone and inside the
gateway's ``federated`` detector preset, scored on TAB-format sets (TAB dev, the real-prompt development set).

``python scripts/run_federated_bench.py --score-recognizers`` writes ``results/recognizers.md``.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Sequence

from ..metrics.psr import psr_scores
from ..datasets.tab import load_tab
from .recognizer import CENTRALIZED_FILE, MODEL_FILE
from .simulation import gold_view

KEYS = ("PSR", "ER_di", "ER_qi", "token_recall", "token_precision", "n_entities", "n_docs")


def _score(analyze_many: Callable[[Sequence[str]], List[List[Any]]], path: str) -> Dict[str, Any]:
    docs = load_tab(path)
    t = time.perf_counter()
    spans = analyze_many([d.text for d in docs])
    res = psr_scores([gold_view(d) for d in docs], [[[s.start, s.end] for s in sp] for sp in spans])
    out = {k: res[k] for k in KEYS}
    out["seconds"] = round(time.perf_counter() - t, 1)
    return out


def score_recognizers(model_dir: str, sets: Mapping[str, str], log: Callable[[str], None] = lambda _: None,
                      files: Sequence[str] = (MODEL_FILE, CENTRALIZED_FILE)) -> List[Dict[str, Any]]:
    """For each exported model (``files`` in ``model_dir``): the model alone and the ``federated`` preset
    (structured + regex + the model); ``log`` gets one line per scored row (a row takes minutes on a shared
    machine)."""
    from ..detection.presets import build_detector
    from .model import load_model, predict_spans

    rows: List[Dict[str, Any]] = []
    for fname in files:
        path = Path(model_dir) / fname
        if not path.is_file():
            raise FileNotFoundError(f"{path}: run the experiment with --export-path {model_dir} first")
        model, meta = load_model(str(path))
        thr = float(meta.get("threshold", 0.5))
        label = f"{meta.get('model')} {meta.get('method')} ε={meta.get('epsilon')}"
        alone = lambda texts, m=model, t=thr: [predict_spans(m, x, t, cache=False) for x in texts]  # noqa: E731
        detector = build_detector("federated", federated_path=str(path))
        for set_name, set_path in sets.items():
            for how, fn in (("model alone", alone), ("preset federated", detector.analyze_many)):
                rows.append({"model": label, "as": how, "set": set_name, **_score(fn, set_path)})
                r = rows[-1]
                log(f"{label} | {how} | {set_name}: PSR {r['PSR']:.3f}, token precision "
                    f"{r['token_precision']:.3f} ({r['seconds']} s)")
    return rows


def markdown(rows: Sequence[Dict[str, Any]]) -> str:
    head = ["model", "as", "set"] + list(KEYS) + ["seconds"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        lines.append("| " + " | ".join(f"{r[k]:.3f}" if isinstance(r[k], float) and k not in ("seconds",)
                                       else str(r[k]) for k in head) + " |")
    return "\n".join(lines) + "\n"
