"""Fit the per-span decider (``detection/decider.py``): logistic weights over candidate features.

Candidates are the groups of overlapping spans of all the default preset's recognizers.  Training data:

* the real development prompts, out of fold: fold K's prompts are read with the learned model trained without
  fold K (``scripts/train_learned_ner.py --fold K``), so the learned recognizer's weight reflects how it does
  on prompts it did not see; a candidate is private if it overlaps a PII unit by half of either;
* the encoder NER is a recognizer like the others: fold K's prompts are read by the encoder trained without fold
  K (``scripts/train_encoder_ner.py --fold K``);
* TAB train, read *without* the learned recognizer (it was trained on TAB train, so its spans there would look
  perfect) and with the committed encoder, leaving out the candidates in the paragraphs the encoder was trained
  on (``train_learned_ner.tab_paragraphs``); a candidate is private if it overlaps a DIRECT or QUASI mention by
  half of either.

For the cross-validated figures, the decider of fold K is fitted without fold K's prompts and saved next to
that fold's model; the final one, on everything, is saved next to the committed model (``learned/model/``).
Thresholds: ``default`` keeps ``--recall`` (0.998) of the private training candidates (recall first),
``precision`` keeps ``--precision-recall`` (0.95).  Candidates two or more recognizer families agree on are
kept by the default preset whatever the threshold (see ``SpanDecider``).

    .venv/bin/python scripts/train_decider.py [--recall 0.998] [--precision-recall 0.95]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
from sklearn.linear_model import LogisticRegression

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
from cloud_edge_privacy.datasets import require_data  # noqa: E402
from cloud_edge_privacy.detection.decider import features, group_overlapping  # noqa: E402
from cloud_edge_privacy.detection.encoder_ner import fold_model_dir as encoder_fold_dir  # noqa: E402
from cloud_edge_privacy.detection.learned import MODEL_DIR, N_FOLDS, fold_model_dir, fold_of  # noqa: E402
from cloud_edge_privacy.detection.presets import candidate_detector  # noqa: E402

Row = Tuple[Dict[str, float], int]


def _label(group: Sequence[Any], gold: Sequence[Tuple[int, int]]) -> int:
    start, end = min(s.start for s in group), max(s.end for s in group)
    for a, b in gold:
        inter = min(end, b) - max(start, a)
        if inter > 0 and (inter * 2 >= end - start or inter * 2 >= b - a):
            return 1
    return 0


def rows_for(docs: Sequence[Dict[str, Any]], candidates: Sequence[Sequence[Any]],
             left_out: Optional[Dict[int, List[Tuple[int, int]]]] = None) -> List[Row]:
    """Feature rows of every candidate; ``left_out``: per document index, regions whose candidates are skipped."""
    out: List[Row] = []
    for i, (doc, spans) in enumerate(zip(docs, candidates)):
        gold = [(m["start_offset"], m["end_offset"]) for ann in doc["annotations"].values()
                for m in ann["entity_mentions"] if m["identifier_type"] in ("DIRECT", "QUASI")]
        skip = (left_out or {}).get(i, [])
        out += [(features(doc["text"], g), _label(g, gold)) for g in group_overlapping(spans)
                if not any(s.start < b and a < s.end for s in g for a, b in skip)]
    return out


def encoder_training_paragraphs(path: Path) -> Dict[int, List[Tuple[int, int]]]:
    """Per TAB train document index, the paragraphs the encoder NER was trained on."""
    sys.path.insert(0, str(REPO / "scripts"))
    from train_learned_ner import tab_paragraphs

    out: Dict[int, List[Tuple[int, int]]] = {}
    for i, start, end, _, used in tab_paragraphs(path):
        if used:
            out.setdefault(i, []).append((start, end))
    return out


def fit(rows: Sequence[Row], recall: float, precision_recall: float) -> Dict[str, Any]:
    names = sorted({k for f, _ in rows for k in f})
    x = np.array([[f.get(k, 0.0) for k in names] for f, _ in rows])
    y = np.array([lab for _, lab in rows])
    model = LogisticRegression(C=1.0, max_iter=2000).fit(x, y)
    p = model.predict_proba(x)[:, 1]
    pos = np.sort(p[y == 1])

    def keeping(share: float) -> float:  # the threshold that keeps ``share`` of the private candidates
        return float(pos[int((1 - share) * len(pos))]) if len(pos) else 0.5

    coef = {k: round(float(c), 5) for k, c in zip(names, model.coef_[0])}
    return {"coef": coef, "intercept": round(float(model.intercept_[0]), 5),
            "thresholds": {"default": round(min(keeping(recall), 0.5), 5),
                           "precision": round(min(keeping(precision_recall), 0.5), 5)},
            "training": {"candidates": int(len(y)), "private": int(y.sum()), "recall_target": recall,
                         "precision_preset_recall_target": precision_recall}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=None,
                    help="directory with tab/ and prompts/ (default: the repository's data/, or $CEP_DATA_DIR)")
    ap.add_argument("--recall", type=float, default=0.998,
                    help="the default preset keeps this share of the private training candidates")
    ap.add_argument("--precision-recall", type=float, default=0.95,
                    help="the precision preset keeps this share of the private training candidates")
    ap.add_argument("--tab-rows", default=None,
                    help="a JSON file for TAB train's candidate rows: read if it exists, else written (they do not "
                         "depend on the learned models, so they can be computed while those train; they do depend on "
                         "the committed encoder NER: rows written before it was a feature are stale)")
    ap.add_argument("--only-tab-rows", action="store_true", help="compute the TAB rows (--tab-rows) and stop")
    args = ap.parse_args()
    t0 = time.time()
    data = Path(args.data_dir) if args.data_dir else require_data("prompts").parent
    real = json.loads((data / "prompts" / "pupa_tnb_tab.json").read_text(encoding="utf-8"))
    tab_path = data / "tab" / "echr_train.json"
    tab = json.loads(tab_path.read_text(encoding="utf-8"))
    cache = Path(args.tab_rows) if args.tab_rows else None
    if cache is not None and cache.is_file():
        tab_rows = [(f, lab) for f, lab in json.loads(cache.read_text())]
    else:
        cands = candidate_detector(learned=False).candidates_many([d["text"] for d in tab])
        tab_rows = rows_for(tab, cands, encoder_training_paragraphs(tab_path))
        if cache is not None:
            cache.write_text(json.dumps(tab_rows))
    print(f"TAB train: {len(tab_rows)} candidates ({time.time() - t0:.0f}s)", flush=True)
    if args.only_tab_rows:
        return
    by_fold: Dict[int, List[Row]] = {}
    for k in range(N_FOLDS):
        docs = [d for d in real if fold_of(d["doc_id"]) == k]
        det = candidate_detector(learned_path=str(fold_model_dir(k)), encoder_path=str(encoder_fold_dir(k)))
        by_fold[k] = rows_for(docs, det.candidates_many([d["text"] for d in docs]))
        print(f"fold {k}: {len(docs)} prompts, {len(by_fold[k])} candidates ({time.time() - t0:.0f}s)", flush=True)
    for k in range(N_FOLDS):
        rows = tab_rows + [r for j, rs in by_fold.items() if j != k for r in rs]
        w = fit(rows, args.recall, args.precision_recall)
        (fold_model_dir(k) / "decider.json").write_text(json.dumps(w, indent=1))
        print(f"fold {k} decider: thresholds {w['thresholds']}")
    w = fit(tab_rows + [r for rs in by_fold.values() for r in rs], args.recall, args.precision_recall)
    w["training"]["command"] = ".venv/bin/python scripts/train_decider.py " + " ".join(sys.argv[1:])
    w["training"]["recognizers"] = "candidate_detector(): rules, shapes, spaCy, learned NER, TAB NER, encoder NER"
    (MODEL_DIR / "decider.json").write_text(json.dumps(w, indent=1, sort_keys=True))
    print(f"final decider: thresholds {w['thresholds']}; top weights:")
    for k, c in sorted(w["coef"].items(), key=lambda kv: -abs(kv[1]))[:25]:
        print(f"  {k:32s} {c:+.3f}")
    print(f"saved {MODEL_DIR / 'decider.json'} ({time.time() - t0:.0f}s)")


if __name__ == "__main__":
    main()
