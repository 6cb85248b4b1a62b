"""Score detector presets on the user-prompt evaluation set (examples/UserPrompts/) with TAB's scorer.

Prints, per detector: entity recall (DIRECT and QUASI pooled), ER_di, ER_qi, token recall, token precision
and the verbatim-leak rate (share of distinct gold strings of a prompt still present verbatim after the
detected spans are suppressed).  Report the ``test`` split; ``dev`` and ``tune`` are the ones recognizers were tuned on.

    .venv/bin/python scripts/eval_user_prompts.py --split test --detectors default,presidio,spacy
    .venv/bin/python scripts/eval_user_prompts.py --split dev --misses    # what the default preset missed
    .venv/bin/python scripts/eval_user_prompts.py --regenerate            # rewrite the frozen files
"""
from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from cloud_edge_privacy.detection import build_detector  # noqa: E402
from cloud_edge_privacy.eval_sets import load_split, write_splits  # noqa: E402
from cloud_edge_privacy.metrics.tab_official import combine, mention_is_masked, score_document  # noqa: E402


def _gold(doc: Dict[str, Any]) -> Dict[str, Any]:
    return {"text": doc["text"], "annotations": {a: b["entity_mentions"] for a, b in doc["annotations"].items()}}


def suppress(text: str, spans: Sequence[Any]) -> str:
    """The text with every detected span replaced by a marker (overlaps merged)."""
    out, pos = [], 0
    for s in sorted(spans, key=lambda s: s.start):
        if s.end <= pos:
            continue
        out.append(text[pos:max(pos, s.start)])
        out.append("[REDACTED]")
        pos = s.end
    out.append(text[pos:])
    return "".join(out)


def evaluate(docs: List[Dict[str, Any]], detector: Any, show_misses: bool = False) -> Dict[str, float]:
    counts, leaked, strings = [], 0, 0
    by_cat: Dict[str, List[int]] = defaultdict(lambda: [0, 0])
    spans_by_doc = detector.analyze_many([d["text"] for d in docs])
    for doc, spans in zip(docs, spans_by_doc):
        gold = _gold(doc)
        masks = [[s.start, s.end, ""] for s in spans]
        counts.append(score_document(gold, masks))
        masked = suppress(doc["text"], spans)
        mentions = [m for m in gold["annotations"]["gold"] if m["identifier_type"] in ("DIRECT", "QUASI")]
        surfaces = {m["span_text"] for m in mentions}
        strings += len(surfaces)
        leaked += sum(1 for s in surfaces if s in masked)
        cov = [False] * len(doc["text"])
        for s in spans:
            for i in range(s.start, s.end):
                cov[i] = True
        for m in mentions:
            ok = mention_is_masked(doc["text"], cov, m["start_offset"], m["end_offset"])
            by_cat[m["entity_type"]][0] += int(ok)
            by_cat[m["entity_type"]][1] += 1
            if show_misses and not ok:
                print(f"  MISS {doc['doc_id']:<18} {m['entity_type']:<8} {m['span_text']!r}")
    res = combine(counts)
    n_di, n_qi = res["n_entities_di"], res["n_entities_qi"]
    masked_ents = res["ER_di"] * n_di + (res["ER_qi"] * n_qi if n_qi else 0)
    res["entity_recall"] = round(masked_ents / (n_di + n_qi), 4)
    res["verbatim_leak"] = round(leaked / strings, 4) if strings else 0.0
    res["by_category"] = {c: f"{a}/{b}" for c, (a, b) in sorted(by_cat.items())}
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", default="test", choices=("dev", "test", "tune"))
    ap.add_argument("--detectors", default="default,legal,high_recall,structured,presidio,spacy")
    ap.add_argument("--misses", action="store_true", help="print every gold mention a detector missed")
    ap.add_argument("--regenerate", action="store_true", help="rewrite the frozen split files and exit")
    args = ap.parse_args()
    if args.regenerate:
        for p in write_splits():
            print("wrote", p)
        return
    docs = load_split(args.split)
    n_tokens = sum(len(d["text"].split()) for d in docs)
    print(f"user prompts, split {args.split}: {len(docs)} prompts, {n_tokens} whitespace tokens\n")
    rows = []
    for name in args.detectors.split(","):
        if args.misses:
            print(f"[{name}]")
        res = evaluate(docs, build_detector(name), args.misses)
        rows.append((name, res))
    print("| detector | entity recall | ER_di | ER_qi | token recall | token precision | verbatim leak |")
    print("|---|---|---|---|---|---|---|")
    for name, r in rows:
        print(f"| {name} | {r['entity_recall']:.3f} | {r['ER_di']:.3f} | {r['ER_qi']:.3f} | {r['token_recall']:.3f} "
              f"| {r['token_precision']:.3f} | {r['verbatim_leak']:.3f} |")
    n = rows[0][1]
    print(f"\nentities: {n['n_entities_di']} direct, {n['n_entities_qi']} quasi")
    hand = [d for d in docs if d["meta"]["source"] == "handwritten"]
    if hand:
        print(f"\nhand-written prompts only ({len(hand)}; names and numbers not drawn from Faker's lists):")
        for name, _ in rows:
            r = evaluate(hand, build_detector(name))
            print(f"  {name}: entity recall {r['entity_recall']:.3f}, token precision {r['token_precision']:.3f}, "
                  f"verbatim leak {r['verbatim_leak']:.3f}")
    print("\nmentions masked per gold category:")
    for name, r in rows:
        print(f"  {name}: " + ", ".join(f"{c} {v}" for c, v in r["by_category"].items()))


if __name__ == "__main__":
    main()
