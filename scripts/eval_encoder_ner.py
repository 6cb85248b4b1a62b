"""Measure the encoder recognizer (``detection/encoder_ner.py``): 5-fold cross-validated on the real development
prompts, alone and in union with presets, against the learned NER on the same folds; TAB dev scores; speed
against spaCy ``en_core_web_sm``'s full pipeline on TAB dev in the same run.

Prompts of fold K are read by the encoder trained without fold K (``scripts/train_encoder_ner.py --fold K``) and
by presets that use the learned model with the learned model trained without fold K, when
``learned_ner_folds/foldK`` exists in the cache (else with the committed model, marked in-sample).

    .venv/bin/python scripts/eval_encoder_ner.py [--presets default,learned] [--tab] [--speed 3]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "scripts"))
from cloud_edge_privacy.datasets import require_data  # noqa: E402
from cloud_edge_privacy.detection import build_detector  # noqa: E402
from cloud_edge_privacy.errors import ModelFileError  # noqa: E402
from cloud_edge_privacy.detection.encoder_ner import MODEL_DIR, EncoderNerRecognizer, fold_model_dir  # noqa: E402
from cloud_edge_privacy.detection.learned import N_FOLDS, fold_of  # noqa: E402
from cloud_edge_privacy.detection.learned import fold_model_dir as learned_fold_dir  # noqa: E402
from cloud_edge_privacy.detection.presets import uses_learned  # noqa: E402
from eval_user_prompts import score  # noqa: E402

Spans = List[List[Any]]


def per_fold(docs: Sequence[Dict[str, Any]], run: Any) -> Spans:
    """Spans per document, fold K read by ``run(k, texts)``."""
    out: Spans = [[] for _ in docs]
    for k in range(N_FOLDS):
        idx = [i for i, d in enumerate(docs) if fold_of(d["doc_id"]) == k]
        for i, spans in zip(idx, run(k, [docs[i]["text"] for i in idx])):
            out[i] = spans
    return out


def preset_cv(name: str, docs: Sequence[Dict[str, Any]]) -> Optional[Spans]:
    """A preset's spans, its learned model out of fold; None when the fold models are missing."""
    if not uses_learned(name):
        return build_detector(name).analyze_many([d["text"] for d in docs])
    if not all((learned_fold_dir(k) / "meta.json").is_file() for k in range(N_FOLDS)):
        return None
    try:
        return per_fold(docs, lambda k, t: build_detector(name, learned_path=str(learned_fold_dir(k))).analyze_many(t))
    except ModelFileError as exc:  # e.g. a fold without the decider's weights
        print(f"({name}: fold models incomplete: {exc})")
        return None


def m_ok(v: Any) -> bool:
    return isinstance(v, dict) and "fully_masked" in v


def row(name: str, r: Dict[str, Any]) -> str:
    return (f"| {name} | {r['fully_masked']:.3f} | {r['ER_di']:.3f} | {r['ER_qi']:.3f} | {r['token_recall']:.3f} | "
            f"{r['token_precision']:.3f} |")


HEADER = "| detector | fully masked units | ER_di | ER_qi | token recall | token precision |\n|---|---|---|---|---|---|"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--presets", default="default,learned", help="presets to compare and to unite with the encoder")
    ap.add_argument("--model", default=str(MODEL_DIR), help="encoder model for TAB dev and speed (final model)")
    ap.add_argument("--tab", action="store_true", help="also score TAB dev")
    ap.add_argument("--speed", type=int, default=0, help="rounds of the speed comparison on TAB dev (0: none)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--record", action="store_true", help="write the figures into --model's training.json")
    args = ap.parse_args()
    results: Dict[str, Any] = {}
    docs = json.loads(require_data("prompts/pupa_tnb_tab.json").read_text(encoding="utf-8"))
    print(f"real development prompts: {len(docs)}, 5-fold cross-validated; load {os.getloadavg()[0]:.1f}\n")
    spans: Dict[str, Spans] = {"encoder": per_fold(docs, lambda k, t: EncoderNerRecognizer(str(fold_model_dir(k))).analyze_many(t))}
    for p in [p for p in args.presets.split(",") if p]:
        s = preset_cv(p, docs)
        if s is None:
            print(f"({p}: the learned model's fold models in {learned_fold_dir(0).parent} are missing or incomplete; "
                  f"its committed model, trained on every prompt, is used: in-sample, optimistic)")
            s, p = build_detector(p).analyze_many([d["text"] for d in docs]), f"{p} [in-sample]"
        spans[p] = s
        spans[f"encoder ∪ {p}"] = [a + b for a, b in zip(spans["encoder"], s)]
    print(HEADER)
    for name, s in spans.items():
        results[f"real:{name}"] = r = score(docs, s)
        print(row(name, r))
    # the encoder's O threshold was chosen on fold 0: the same table without fold 0
    keep = [i for i, d in enumerate(docs) if fold_of(d["doc_id"]) != 0]
    print(f"\nfolds 1-4 only ({len(keep)} prompts; the encoder's threshold was chosen on fold 0)\n\n{HEADER}")
    for name, s in spans.items():
        results[f"real_folds1-4:{name}"] = r = score([docs[i] for i in keep], [s[i] for i in keep])
        print(row(name, r))
    if args.tab or args.speed:
        tab = json.loads(require_data("tab/echr_dev.json").read_text(encoding="utf-8"))
        texts = [d["text"] for d in tab]
        enc = EncoderNerRecognizer(args.model)
    if args.tab:
        print(f"\nTAB dev ({len(tab)} documents), encoder model {args.model}\n\n" + HEADER)
        tab_spans = {"encoder": enc.analyze_many(texts)}
        for p in [p for p in args.presets.split(",") if p]:
            tab_spans[p] = build_detector(p).analyze_many(texts)
            tab_spans[f"encoder ∪ {p}"] = [a + b for a, b in zip(tab_spans["encoder"], tab_spans[p])]
        for name, s in tab_spans.items():
            results[f"tab:{name}"] = r = score(tab, s)
            print(row(name, r))
    if args.speed:
        import spacy

        from cloud_edge_privacy.detection.spacy_recognizer import DEFAULT_MODEL

        nlp = spacy.load(DEFAULT_MODEL)
        list(nlp.pipe(texts[:2]))
        enc.analyze_many(texts[:2])
        chars = sum(len(t) for t in texts)
        sp, en, ratios = [], [], []
        for _ in range(args.speed):
            t0 = time.perf_counter()
            list(nlp.pipe(texts))
            sp.append(chars / (time.perf_counter() - t0))
            t0 = time.perf_counter()
            enc.analyze_many(texts)
            en.append(chars / (time.perf_counter() - t0))
            ratios.append(en[-1] / sp[-1])
        med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
        results["speed"] = {"spacy_chars_per_s": med(sp), "encoder_chars_per_s": med(en), "ratio_median": med(ratios),
                            "ratios": ratios, "load": os.getloadavg()}
        print(f"\nspeed on TAB dev ({chars} chars, {args.speed} alternating rounds, encoder {enc.threads} thread(s)): "
              f"spaCy en_core_web_sm full pipeline {med(sp):,.0f} chars/s, encoder {med(en):,.0f} chars/s, "
              f"ratio {med(ratios):.2f} (min {min(ratios):.2f}, max {max(ratios):.2f}); load {os.getloadavg()[0]:.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))
    if args.record:
        # the figures go into the final model's training.json (what it scored, measured by this script)
        tj = Path(args.model) / "training.json"
        meta = json.loads(tj.read_text(encoding="utf-8"))
        keys = ("fully_masked", "ER_di", "ER_qi", "token_recall", "token_precision")
        meta["figures"] = {"measured_by": "scripts/eval_encoder_ner.py " + " ".join(sys.argv[1:]),
                           **{k: ({m: round(float(v[m]), 4) for m in keys} if m_ok(v) else v)
                              for k, v in results.items()}}
        tj.write_text(json.dumps(meta, indent=1, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
