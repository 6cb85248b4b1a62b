"""Score detector presets on prompts and court text with TAB's scorer; real prompts first.

``--set real`` (the default): the 217 real WildChat prompts of ``data/prompts/pupa_tnb_tab.json``.
Every PII unit is one DIRECT entity, so ER_di is the share of *fully masked* units (every word of every mention
inside a detected span).  A preset that uses the learned recognizer is 5-fold cross-validated: prompts of fold
K are read by the model trained without fold K (``scripts/train_learned_ner.py --fold K``; folds fixed in
``detection/learned/folds.py``).  Presets without it (Presidio, spaCy, ...) read every prompt once.
Also per PUPA category.

``--set generated``: the generated user-prompt set (``--split test``; ``dev``/``tune`` were used for tuning and
training).  ``--set tab``: TAB dev (``echr_dev.json``).

    .venv/bin/python scripts/eval_user_prompts.py --set real --detectors default,precision,fast,presidio,spacy
    .venv/bin/python scripts/eval_user_prompts.py --set real --misses default     # what the default missed
    .venv/bin/python scripts/eval_user_prompts.py --set generated --split test
    .venv/bin/python scripts/eval_user_prompts.py --set tab
    .venv/bin/python scripts/eval_user_prompts.py --set real --detectors default --guard   # egress guard blocks
    .venv/bin/python scripts/eval_user_prompts.py --regenerate                    # rewrite the generated files
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
from cloud_edge_privacy.datasets import require_data  # noqa: E402
from cloud_edge_privacy.detection import build_detector  # noqa: E402
from cloud_edge_privacy.detection.learned import N_FOLDS, fold_model_dir, fold_of  # noqa: E402
from cloud_edge_privacy.detection.presets import uses_learned  # noqa: E402
from cloud_edge_privacy.eval_sets import load_split, write_splits  # noqa: E402
from cloud_edge_privacy.metrics.tab_official import combine, mention_is_masked, score_document  # noqa: E402



def _gold(doc: Dict[str, Any]) -> Dict[str, Any]:
    return {"text": doc["text"], "annotations": {a: b["entity_mentions"] for a, b in doc["annotations"].items()}}


def _group(doc: Dict[str, Any]) -> str:
    meta = doc.get("meta") or {}
    return str(meta.get("category") or meta.get("domain") or "all")


def score(docs: Sequence[Dict[str, Any]], spans_by_doc: Sequence[Sequence[Any]],
          misses: Optional[List[str]] = None) -> Dict[str, Any]:
    """TAB scores of detected spans, plus fully masked entities per group (PUPA category or domain)."""
    counts = []
    groups: Dict[str, List[int]] = defaultdict(lambda: [0, 0])
    for doc, spans in zip(docs, spans_by_doc):
        gold = _gold(doc)
        counts.append(score_document(gold, [[s.start, s.end, ""] for s in spans]))
        cov = [False] * len(doc["text"])
        for s in spans:
            for i in range(s.start, s.end):
                cov[i] = True
        by_entity: Dict[str, bool] = {}
        for ann in gold["annotations"].values():
            for m in ann:
                if m["identifier_type"] in ("DIRECT", "QUASI"):
                    ok = mention_is_masked(doc["text"], cov, m["start_offset"], m["end_offset"])
                    key = m["entity_id"]
                    by_entity[key] = by_entity.get(key, True) and ok
                    if misses is not None and not ok:
                        misses.append(f"{doc['doc_id']:<14} {m['entity_type']:<8} {m['span_text']!r}")
        g = groups[_group(doc)]
        g[0] += sum(by_entity.values())
        g[1] += len(by_entity)
    res = combine(counts)
    n_di, n_qi = res["n_entities_di"], res["n_entities_qi"]
    masked = res["ER_di"] * n_di + (res["ER_qi"] * n_qi if n_qi else 0)
    res["fully_masked"] = round(masked / (n_di + n_qi), 4) if n_di + n_qi else 0.0
    res["groups"] = {k: (a, b) for k, (a, b) in sorted(groups.items())}
    return res


def detect(name: str, docs: Sequence[Dict[str, Any]], cross_validate: bool) -> List[List[Any]]:
    """Spans per document; out-of-fold when the preset uses the learned model and ``cross_validate``."""
    texts = [d["text"] for d in docs]
    if not (cross_validate and uses_learned(name)):
        return build_detector(name).analyze_many(texts)
    out: List[List[Any]] = [[] for _ in docs]
    for k in range(N_FOLDS):
        idx = [i for i, d in enumerate(docs) if fold_of(d["doc_id"]) == k]
        det = build_detector(name, learned_path=str(fold_model_dir(k)))
        for i, spans in zip(idx, det.analyze_many([texts[i] for i in idx])):
            out[i] = spans
    return out


def guard_blocks(name: str, docs: Sequence[Dict[str, Any]], cross_validate: bool,
                 method: str = "placeholder") -> Dict[str, Any]:
    """How often the egress guard blocks a text protected by this preset with ``method``: every rule, and
    rule 4 (the independent check) on its own."""
    from cloud_edge_privacy.core.egress import check_egress
    from cloud_edge_privacy.core.gateway import PrivacyGateway
    from cloud_edge_privacy.randomness import Randomness

    structured = build_detector("structured")
    blocked, by_rule = 0, defaultdict(int)
    folds = range(N_FOLDS) if cross_validate and uses_learned(name) else [None]
    for k in folds:
        det = build_detector(name) if k is None else build_detector(name, learned_path=str(fold_model_dir(k)))
        gw = PrivacyGateway(method, Randomness.benchmark(0), detector=det)
        for d in docs:
            if k is not None and fold_of(d["doc_id"]) != k:
                continue
            findings = check_egress(gw.protect(d["text"], scope=d["doc_id"]), structured)
            blocked += bool(findings)
            for rule in {f.rule for f in findings}:
                by_rule[rule] += 1
    return {"blocked": blocked, "n": len(docs), "by_rule": dict(by_rule)}


def load_set(which: str, split: str) -> List[Dict[str, Any]]:
    if which == "real":
        return json.loads(require_data("prompts/pupa_tnb_tab.json").read_text(encoding="utf-8"))
    if which == "tab":
        return json.loads(require_data("tab/echr_dev.json").read_text(encoding="utf-8"))
    return load_split(split)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", dest="which", default="real", choices=("real", "generated", "tab"))
    ap.add_argument("--split", default="test", choices=("dev", "test", "tune"), help="for --set generated")
    ap.add_argument("--detectors", default="default,precision,fast,legal,high_recall,presidio,spacy")
    ap.add_argument("--misses", default="", help="print every gold mention this detector missed")
    ap.add_argument("--no-cv", action="store_true", help="use the final learned model everywhere (in-sample on real)")
    ap.add_argument("--union", default="", help="also score the union of these presets (comma-separated)")
    ap.add_argument("--guard", action="store_true",
                    help="also protect every text (placeholder method) and count what the egress guard blocks")
    ap.add_argument("--json", default=None, help="write the results to this file")
    ap.add_argument("--regenerate", action="store_true", help="rewrite the generated split files and exit")
    args = ap.parse_args()
    if args.regenerate:
        for p in write_splits():
            print("wrote", p)
        return
    docs = load_set(args.which, args.split)
    cv = args.which == "real" and not args.no_cv
    n_tokens = sum(len(d["text"].split()) for d in docs)
    print(f"set {args.which}{' ' + args.split if args.which == 'generated' else ''}: {len(docs)} texts, "
          f"{n_tokens} whitespace tokens; learned model {'5-fold cross-validated' if cv else 'final (all folds)'}\n")
    names = [n for n in args.detectors.split(",") if n]
    spans: Dict[str, List[List[Any]]] = {}
    rows = []
    for name in names:
        t0 = time.perf_counter()
        spans[name] = detect(name, docs, cv)
        miss: Optional[List[str]] = [] if name == args.misses else None
        res = score(docs, spans[name], miss)
        res["seconds"] = round(time.perf_counter() - t0, 1)
        rows.append((name, res))
        if miss:
            print(f"[{name}] missed mentions:\n  " + "\n  ".join(miss) + "\n")
    if args.union:
        parts = args.union.split(",")
        for p in parts:
            if p not in spans:
                spans[p] = detect(p, docs, cv)
        uni = [sum((spans[p][i] for p in parts), []) for i in range(len(docs))]
        rows.append((f"union({args.union})", score(docs, uni)))
    print("| detector | fully masked units | ER_di | ER_qi | token recall | token precision | seconds |")
    print("|---|---|---|---|---|---|---|")
    for name, r in rows:
        print(f"| {name} | {r['fully_masked']:.3f} | {r['ER_di']:.3f} | {r['ER_qi']:.3f} | {r['token_recall']:.3f} "
              f"| {r['token_precision']:.3f} | {r.get('seconds', '')} |")
    n = rows[0][1]
    print(f"\nentities: {n['n_entities_di']} direct, {n['n_entities_qi']} quasi")
    groups = list(rows[0][1]["groups"])
    if len(groups) > 1:
        print("\nfully masked units per category (masked/total):\n")
        print("| detector | " + " | ".join(groups) + " |\n|---|" + "---|" * len(groups))
        for name, r in rows:
            print(f"| {name} | " + " | ".join(f"{r['groups'][g][0] / r['groups'][g][1]:.3f} ({r['groups'][g][0]}/"
                                               f"{r['groups'][g][1]})" for g in groups) + " |")
    if args.guard:
        print("\negress guard on texts protected by each preset (placeholder method): blocked texts, and texts per "
              "rule (independent_check_in_clear = rule 4, the guard's own recognizers)\n")
        for name in names:
            g = guard_blocks(name, docs, cv)
            rows.append((f"guard:{name}", g))
            print(f"  {name}: blocked {g['blocked']}/{g['n']} ({g['blocked'] / g['n']:.1%}); "
                  + ", ".join(f"{r} {c}" for r, c in sorted(g["by_rule"].items())))
    if args.json:
        Path(args.json).write_text(json.dumps({n: r for n, r in rows}, indent=1))


if __name__ == "__main__":
    main()
