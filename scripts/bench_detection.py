"""Detector throughput (tokens/s) and per-document latency (p50/p95) on a TAB file, per detector preset
and per privacy method.  A benchmark that prints figures, not a test.

    .venv/bin/python scripts/bench_detection.py --gold ../shared/data/tab/echr_dev.json [--repeat 3]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from cloud_edge_privacy.desensitization import get_operator  # noqa: E402
from cloud_edge_privacy.detection import build_detector  # noqa: E402
from cloud_edge_privacy.stats import percentile as pct  # noqa: E402
from cloud_edge_privacy.tab_data import load_tab  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gold", default="../shared/data/tab/echr_dev.json")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    docs = load_tab(args.gold)
    n_tokens = sum(len(d.text.split()) for d in docs)
    print(f"{len(docs)} documents, {n_tokens} whitespace tokens, repeat {args.repeat}\n")
    print("| detector | tokens/s | p50 ms/doc | p95 ms/doc |\n|---|---|---|---|")
    spans_by_doc = {}
    for name in ("default", "high_recall", "regex+spacy", "tab_ner", "spacy", "presidio"):
        det = build_detector(name)
        det.analyze(docs[0].text)  # warm-up (model loading)
        lat = []
        t0 = time.perf_counter()
        for _ in range(args.repeat):
            for d in docs:
                t = time.perf_counter()
                spans = det.analyze(d.text)
                lat.append((time.perf_counter() - t) * 1e3)
                if name == "default":
                    spans_by_doc[d.doc_id] = spans
        total = time.perf_counter() - t0
        print(f"| {name} | {n_tokens * args.repeat / total:,.0f} | {pct(lat, .5):.1f} | {pct(lat, .95):.1f} |")
    print("\n| method (on default detector spans) | p50 ms/doc | p95 ms/doc |\n|---|---|---|")
    for method, params in [("suppression", {}), ("placeholder", {}), ("pseudonym", {}), ("generalization", {}),
                           ("dp_numbers", {}), ("metric_dp_words", {"epsilon": 8.0}), ("prism_ldp", {"epsilon": 2.0}),
                           ("adaptive", {})]:
        op = get_operator(method, **params)
        op(docs[0].text, spans_by_doc[docs[0].doc_id])  # warm-up (embedding table for metric DP)
        lat = []
        for _ in range(args.repeat):
            for d in docs:
                t = time.perf_counter()
                op(d.text, spans_by_doc[d.doc_id], seed=0)
                lat.append((time.perf_counter() - t) * 1e3)
        print(f"| {method} | {pct(lat, .5):.2f} | {pct(lat, .95):.2f} |")


if __name__ == "__main__":
    main()
