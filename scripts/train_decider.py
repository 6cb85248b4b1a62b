"""Fit the per-span decider (``detection/decider.py``): gradient-boosted trees over candidate features.

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

Thresholds are read out of fold, never off the trees' own training rows (boosted trees fit those almost
perfectly): each of the prompt folds a decider is fitted on is predicted by trees fitted without it (and with
all of TAB train), and ``default`` keeps ``--recall`` (0.96) of those out-of-fold private prompt candidates,
``precision`` ``--precision-recall`` (0.90).
The trees are deterministic (fixed seed, no early stopping); the script checks that the exported JSON gives
scikit-learn's probabilities.

    .venv/bin/python scripts/train_decider.py [--recall 0.96] [--precision-recall 0.90]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
from cloud_edge_privacy.datasets import require_data  # noqa: E402
from cloud_edge_privacy.detection.decider import (  # noqa: E402
    FEATURES_VERSION, feature_matrix, features, group_overlapping, model_from_json)
from cloud_edge_privacy.detection.encoder_ner import fold_model_dir as encoder_fold_dir  # noqa: E402
from cloud_edge_privacy.detection.learned import MODEL_DIR, N_FOLDS, fold_model_dir, fold_of  # noqa: E402
from cloud_edge_privacy.detection.learned.folds import NO_PROMPTS  # noqa: E402
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


TREES = {"max_iter": 400, "learning_rate": 0.05, "max_leaf_nodes": 31, "min_samples_leaf": 10}
SEED = 0


def _trees(x: Any, y: Any) -> HistGradientBoostingClassifier:
    return HistGradientBoostingClassifier(**TREES, early_stopping=False, random_state=SEED).fit(x, y)


def export(model: HistGradientBoostingClassifier, names: Sequence[str]) -> Dict[str, Any]:
    """The trees as JSON (``decider.model_from_json``): per node [feature, threshold, left, right, value]."""
    def g(x: float) -> float:  # leaf values to 7 significant digits (thresholds exact): probabilities within 1e-5
        return float(f"{x:.7g}")

    trees = []
    for (pred,) in model._predictors:
        trees.append([[0, 0.0, -1, -1, g(n["value"])] if n["is_leaf"] else
                      [int(n["feature_idx"]), float(n["num_threshold"]), int(n["left"]), int(n["right"]), 0.0]
                      for n in pred.nodes])
    return {"features": list(names), "baseline": float(np.ravel(model._baseline_prediction)[0]), "trees": trees}


def fit(tab_rows: Sequence[Row], prompt_folds: Mapping[int, Sequence[Row]], recall: float,
        precision_recall: float, tab_folds: Optional[Sequence[int]] = None) -> Dict[str, Any]:
    """Trees on TAB train and the given prompt folds; the thresholds from out-of-fold probabilities of the prompt
    folds, or, with no prompt fold (the cross-source decider), of TAB train's ``tab_folds`` (a fold per row)."""
    rows = list(tab_rows) + [r for rs in prompt_folds.values() for r in rs]
    names = sorted({k for f, _ in rows for k in f})
    x = feature_matrix(names, [f for f, _ in rows])
    y = np.array([lab for _, lab in rows])
    # each row's prompt fold (-1: TAB train, in every fit)
    fold = np.array([-1] * len(tab_rows) + [j for j, rs in prompt_folds.items() for _ in rs])
    if not prompt_folds:
        if tab_folds is None or len(tab_folds) != len(tab_rows):
            raise ValueError("a decider without prompt folds needs a fold for each TAB row")
        fold = np.array(tab_folds)
    held: List[float] = []
    for j in (prompt_folds or sorted(set(fold.tolist()))):
        inner = _trees(x[fold != j], y[fold != j])
        private = (fold == j) & (y == 1)
        if private.any():
            held += list(inner.predict_proba(x[private])[:, 1])
    pos = np.sort(np.array(held))

    def keeping(share: float) -> float:  # the threshold that keeps ``share`` of the held-out private candidates
        return round(min(float(pos[int((1 - share) * len(pos))]), 0.5), 6) if len(pos) else 0.5

    model = _trees(x, y)
    out = export(model, names)
    out["thresholds"] = {"default": keeping(recall), "precision": keeping(precision_recall)}
    gap = float(np.max(np.abs(model_from_json(out).probabilities([f for f, _ in rows]) - model.predict_proba(x)[:, 1])))
    if gap > 1e-5:
        raise SystemExit(f"exported trees disagree with scikit-learn by {gap:.2e}")
    out["training"] = {"candidates": len(rows), "private": int(sum(lab for _, lab in rows)), "trees": TREES,
                       "seed": SEED, "features_version": FEATURES_VERSION, "recall_target_out_of_fold": recall,
                       "precision_preset_recall_target_out_of_fold": precision_recall,
                       "out_of_fold_private_candidates": len(pos)}
    return out


def cross_source(tab: Sequence[Dict[str, Any]], tab_path: Path, recall: float, precision_recall: float) -> None:
    """The decider of the models trained without any real prompt (``--fold none``), fitted on TAB train alone."""
    t0 = time.time()
    det = candidate_detector(learned=False, encoder_path=str(encoder_fold_dir(NO_PROMPTS)))
    cands = det.candidates_many([d["text"] for d in tab])
    skip = encoder_training_paragraphs(tab_path)
    rows: List[Row] = []
    folds: List[int] = []
    for i, (doc, spans) in enumerate(zip(tab, cands)):
        part = rows_for([doc], [spans], {0: skip.get(i, [])})
        rows += part
        folds += [i % N_FOLDS] * len(part)
    w = fit(rows, {}, recall, precision_recall, tab_folds=folds)
    w["training"]["command"] = ".venv/bin/python scripts/train_decider.py --cross-source"
    w["training"]["thresholds_read_on"] = "TAB train, out of fold (documents by index mod 5); no real prompt"
    out = fold_model_dir(NO_PROMPTS) / "decider.json"
    out.write_text(json.dumps(w, sort_keys=True))
    print(f"cross-source decider: {len(rows)} TAB candidates, thresholds {w['thresholds']}; saved {out} "
          f"({time.time() - t0:.0f}s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=None,
                    help="directory with tab/ and prompts/ (default: the repository's data/, or $CEP_DATA_DIR)")
    ap.add_argument("--recall", type=float, default=0.96,
                    help="the default preset keeps this share of the private prompt candidates, out of fold")
    ap.add_argument("--precision-recall", type=float, default=0.90,
                    help="the precision preset keeps this share of the private prompt candidates, out of fold")
    ap.add_argument("--tab-rows", default=None,
                    help="a JSON file for TAB train's candidate rows: read if it exists, else written (they do not "
                         "depend on the learned models, so they can be computed while those train; they do depend on "
                         "the committed encoder NER: rows written before it was a feature are stale)")
    ap.add_argument("--only-tab-rows", action="store_true", help="compute the TAB rows (--tab-rows) and stop")
    ap.add_argument("--cross-source", action="store_true",
                    help="fit only the cross-source decider (no real prompt: TAB train read with the encoder of "
                         "'train_encoder_ner.py --fold none', thresholds out of fold over TAB documents) and save it "
                         "next to 'train_learned_ner.py --fold none''s model")
    args = ap.parse_args()
    t0 = time.time()
    data = Path(args.data_dir) if args.data_dir else require_data("prompts").parent
    real = json.loads((data / "prompts" / "pupa_tnb_tab.json").read_text(encoding="utf-8"))
    tab_path = data / "tab" / "echr_train.json"
    tab = json.loads(tab_path.read_text(encoding="utf-8"))
    if args.cross_source:
        cross_source(tab, tab_path, args.recall, args.precision_recall)
        return
    cache = Path(args.tab_rows) if args.tab_rows else None
    cached = json.loads(cache.read_text()) if cache is not None and cache.is_file() else None
    if isinstance(cached, dict) and cached.get("features_version") == FEATURES_VERSION:
        tab_rows = [(f, lab) for f, lab in cached["rows"]]
    else:
        if cached is not None:
            print(f"{cache}: rows of other features (not version {FEATURES_VERSION}); recomputing", flush=True)
        cands = candidate_detector(learned=False).candidates_many([d["text"] for d in tab])
        tab_rows = rows_for(tab, cands, encoder_training_paragraphs(tab_path))
        if cache is not None:
            cache.write_text(json.dumps({"features_version": FEATURES_VERSION, "rows": tab_rows}))
    print(f"TAB train: {len(tab_rows)} candidates ({time.time() - t0:.0f}s)", flush=True)
    if args.only_tab_rows:
        return
    by_fold: Dict[int, List[Row]] = {}
    for k in range(N_FOLDS):
        docs = [d for d in real if fold_of(d["doc_id"]) == k]
        det = candidate_detector(learned_path=str(fold_model_dir(k)), encoder_path=str(encoder_fold_dir(k)),
                                 other_languages_path=str(fold_model_dir(k, multilingual=True)))
        by_fold[k] = rows_for(docs, det.candidates_many([d["text"] for d in docs]))
        print(f"fold {k}: {len(docs)} prompts, {len(by_fold[k])} candidates ({time.time() - t0:.0f}s)", flush=True)
    for k in range(N_FOLDS):
        w = fit(tab_rows, {j: rs for j, rs in by_fold.items() if j != k}, args.recall, args.precision_recall)
        (fold_model_dir(k) / "decider.json").write_text(json.dumps(w))
        print(f"fold {k} decider: thresholds {w['thresholds']} ({time.time() - t0:.0f}s)", flush=True)
    w = fit(tab_rows, by_fold, args.recall, args.precision_recall)
    w["training"]["command"] = ".venv/bin/python scripts/train_decider.py " + " ".join(sys.argv[1:])
    w["training"]["recognizers"] = "candidate_detector(): rules, shapes, spaCy, learned NER, TAB NER, encoder NER"
    (MODEL_DIR / "decider.json").write_text(json.dumps(w, sort_keys=True))
    print(f"final decider: {len(w['trees'])} trees over {len(w['features'])} features, thresholds "
          f"{w['thresholds']}; saved {MODEL_DIR / 'decider.json'} ({time.time() - t0:.0f}s)")


if __name__ == "__main__":
    main()
