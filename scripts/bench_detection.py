"""Detector throughput (tokens/s), per-document latency (p50/p95), each recognizer's share of the time and
TAB quality, per preset (``presidio``: Microsoft Presidio's analyzer), with plain spaCy ``en_core_web_sm`` (full
pipeline) measured in the same run so that machine load cancels out in the ratio.  A benchmark that prints figures, not a test.

    .venv/bin/python scripts/bench_detection.py --gold data/tab/echr_dev.json [--repeat 3]
        [--detectors default,precision,fast,presidio] [--methods]

Throughput is measured on the whole file in one ``analyze_many`` call (batched, as the runner and ``anonymize``
use it); latency per document with one ``analyze`` call each.  Rounds alternate between spaCy and the
presets, and the ratio is taken round by round.

The presets' spaCy models run their layer products in ONNX Runtime (``detection/products.py``: thinc's bundled BLIS
has only a generic kernel on recent AMD CPUs), their embeddings' first product is made at load
(``detection/embed_tables.py``), their window encoders multiply in int8 (``detection/int8_encoders.py``), and their
entity recognizers decode through ``detection/greedy_ner.py`` (the products of states with no entity open
batched).  The baseline is spaCy as installed; so that the like-for-like figure is there too, spaCy's full pipeline
is also timed with the same products, embedding tables and int8 encoder and its NER decoded the same way (its parser
cannot be), and each preset's ratio to that is printed after the table.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from cloud_edge_privacy.detection import build_detector  # noqa: E402
from cloud_edge_privacy.detection.embed_tables import use_embed_tables  # noqa: E402
from cloud_edge_privacy.detection.int8_encoders import use_int8_encoders  # noqa: E402
from cloud_edge_privacy.detection.products import use_ort_products  # noqa: E402
from cloud_edge_privacy.detection.spacy_pipeline import greedy_decoders, pipe  # noqa: E402
from cloud_edge_privacy.detection.spacy_recognizer import DEFAULT_MODEL  # noqa: E402
from cloud_edge_privacy.metrics.tab_official import combine, score_document  # noqa: E402
from cloud_edge_privacy.metrics.stats import percentile as pct  # noqa: E402
from cloud_edge_privacy.datasets.tab import load_tab  # noqa: E402


def _gold(doc) -> Dict:
    return {"text": doc.text, "annotations": {a: [m.to_dict() for m in ms] for a, ms in doc.annotations.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gold", default="data/tab/echr_dev.json")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--detectors", default="default,precision,fast,presidio")
    ap.add_argument("--methods", action="store_true", help="also time the privacy operators on default spans")
    args = ap.parse_args()
    import spacy

    docs = load_tab(args.gold)
    texts = [d.text for d in docs]
    n_tokens = sum(len(t.split()) for t in texts)
    load = os.getloadavg()
    print(f"{len(docs)} documents, {n_tokens} whitespace tokens, repeat {args.repeat}, {os.cpu_count()} CPUs, "
          f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1/5/15 min)\n")
    full = spacy.load(DEFAULT_MODEL)
    list(full.pipe(texts[:2]))
    full_ort = spacy.load(DEFAULT_MODEL)
    use_ort_products(full_ort)
    use_embed_tables(full_ort)
    use_int8_encoders(full_ort)
    ort_decoders = greedy_decoders(full_ort)
    list(pipe(full_ort, texts[:2], ort_decoders))
    names = [n for n in args.detectors.split(",") if n]
    dets = {n: build_detector(n) for n in names}
    for det in dets.values():
        det.analyze_many(texts[:2])  # warm-up: model and name-list loading
    speed: Dict[str, List[float]] = {n: [] for n in ["spacy_full", "spacy_full_ort"] + names}
    ratios: Dict[str, List[float]] = {n: [] for n in names}
    like: Dict[str, List[float]] = {n: [] for n in ["spacy_full_ort"] + names}
    shares: Dict[str, Dict[str, float]] = {n: {} for n in names}
    spans_by_name = {}
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        list(full.pipe(texts))
        base = n_tokens / (time.perf_counter() - t0)
        speed["spacy_full"].append(base)
        t0 = time.perf_counter()
        list(pipe(full_ort, texts, ort_decoders))
        base_ort = n_tokens / (time.perf_counter() - t0)
        speed["spacy_full_ort"].append(base_ort)
        like["spacy_full_ort"].append(base_ort / base)
        for n, det in dets.items():
            t0 = time.perf_counter()
            spans_by_name[n] = det.analyze_many(texts, shares[n])
            v = n_tokens / (time.perf_counter() - t0)
            speed[n].append(v)
            ratios[n].append(v / base)
            like[n].append(v / base_ort)
    lat: Dict[str, List[float]] = {}
    for n, run in [("spacy_full", lambda t: full(t))] + [(n, d.analyze) for n, d in dets.items()]:
        lat[n] = []
        for t in texts:
            t0 = time.perf_counter()
            run(t)
            lat[n].append((time.perf_counter() - t0) * 1e3)
    golds = [_gold(d) for d in docs]
    print("| detector | tokens/s (median of rounds) | x spaCy full (median, min) | p50 ms/doc | p95 ms/doc "
          "| ER_di | ER_qi | token precision |\n|---|---|---|---|---|---|---|---|")
    med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    print(f"| spaCy en_core_web_sm (full pipeline) | {med(speed['spacy_full']):,.0f} | 1.00 | "
          f"{pct(lat['spacy_full'], .5):.1f} | {pct(lat['spacy_full'], .95):.1f} | | | |")
    print(f"| spaCy en_core_web_sm (full pipeline, products in ONNX Runtime, embedding tables, int8 encoder, NER by GreedyNer) | "
          f"{med(speed['spacy_full_ort']):,.0f} | "
          f"{med(like['spacy_full_ort']):.2f} ({min(like['spacy_full_ort']):.2f}) | | | | | |")
    for n in names:
        sc = combine(score_document(g, [[s.start, s.end, ""] for s in sp]) for g, sp in zip(golds, spans_by_name[n]))
        print(f"| {n} | {med(speed[n]):,.0f} | {med(ratios[n]):.2f} ({min(ratios[n]):.2f}) | {pct(lat[n], .5):.1f} | "
              f"{pct(lat[n], .95):.1f} | {sc['ER_di']:.3f} | {sc['ER_qi']:.3f} | {sc['token_precision']:.3f} |")
    print("\nlike for like, x spaCy's full pipeline as the presets' (products, embedding "
          "tables, int8 encoder, NER decoder) (median, min): "
          + ", ".join(f"{n} {med(like[n]):.2f} ({min(like[n]):.2f})" for n in names))
    print("\nshare of each preset's time per recognizer (summed over rounds; a recognizer declared concurrent runs on a "
          "worker thread beside the others, and its share is the time the detector waited for it):")
    for n in names:
        total = sum(shares[n].values()) or 1.0
        print(f"  {n}: " + ", ".join(f"{k} {v / total:.0%}" for k, v in sorted(shares[n].items(), key=lambda kv: -kv[1])))
    load = os.getloadavg()
    print(f"\nload average at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
    if args.methods and "default" in spans_by_name:
        _bench_methods(docs, spans_by_name["default"], args.repeat)


def _bench_methods(docs, spans_by_doc, repeat: int) -> None:
    from cloud_edge_privacy.desensitization import get_operator

    print("\n| method (on default detector spans) | p50 ms/doc | p95 ms/doc |\n|---|---|---|")
    for method, params in [("suppression", {}), ("placeholder", {}), ("pseudonym", {}), ("generalization", {}),
                           ("dp_numbers", {}), ("metric_dp_words", {"epsilon": 8.0}), ("prism_ldp", {"epsilon": 2.0}),
                           ("adaptive", {})]:
        try:
            op = get_operator(method, **params)
            op(docs[0].text, spans_by_doc[0])
        except Exception as exc:  # the operators are being rewritten elsewhere; report, do not hide
            print(f"| {method} | error: {type(exc).__name__}: {exc} | |")
            continue
        lat = []
        for _ in range(repeat):
            for d, spans in zip(docs, spans_by_doc):
                t = time.perf_counter()
                op(d.text, spans)
                lat.append((time.perf_counter() - t) * 1e3)
        print(f"| {method} | {pct(lat, .5):.2f} | {pct(lat, .95):.2f} |")


if __name__ == "__main__":
    main()
