"""Score every privacy method (and the spaCy / Presidio baselines) on a TAB file, the same way as
``cloud-edge-privacy anonymize`` + ``score-tab``; prints a markdown table.

    .venv/bin/python scripts/eval_tab_methods.py --gold data/tab/echr_dev.json [--out results.json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from cloud_edge_privacy.anonymize import anonymize_documents, gold_dict  # noqa: E402
from cloud_edge_privacy.desensitization import list_operators  # noqa: E402
from cloud_edge_privacy.detection import build_detector  # noqa: E402
from cloud_edge_privacy.metrics.tab_official import score_masks  # noqa: E402
from cloud_edge_privacy.randomness import Randomness  # noqa: E402
from cloud_edge_privacy.metrics.stats import percentile as pct  # noqa: E402
from cloud_edge_privacy.datasets.tab import load_tab  # noqa: E402

METHODS = [("suppression", None), ("placeholder", None), ("pseudonym", None), ("generalization", None),
           ("adaptive", None), ("dp_numbers", None), ("metric_dp_words", 8.0), ("prism_ldp", 2.0)]
ROWS = [("spacy", "suppression", None), ("presidio", "suppression", None)] + [
    (det, m, eps) for det in ("default", "high_recall") for m, eps in METHODS]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gold", default="data/tab/echr_dev.json")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    docs = load_tab(args.gold)
    golds = {d.doc_id: gold_dict(d) for d in docs}
    assert set(list_operators()) >= {m for _, m, _ in ROWS}
    results = []
    detectors = {}
    for det_name, method, eps in ROWS:
        det = detectors.setdefault(det_name, build_detector(det_name))
        det.analyze(docs[0].text)  # warm-up: model loading is not per-document latency
        params = {"epsilon": eps} if eps is not None else {}
        t0 = time.perf_counter()
        # benchmark randomness (reproducible from --seed): these figures are about utility, not a deployment
        out = anonymize_documents(docs, method, Randomness.benchmark(args.seed), detector=det, progress=False,
                                  params=params)
        sc = score_masks(golds, out["masks"])
        lat = out["latency_ms"]
        eps_doc = [sum(v.values()) for v in out["epsilon"].values()]  # one kind per method here
        kinds = sorted({k for v in out["epsilon"].values() for k in v})
        results.append({"detector": det_name, "method": method, "epsilon_param": eps, **sc,
                        "latency_p50_ms": round(pct(lat, 0.5), 1), "latency_p95_ms": round(pct(lat, 0.95), 1),
                        "epsilon_per_doc_mean": (f"{statistics.fmean(eps_doc):.2f} ({'+'.join(kinds)})"
                                                 if eps_doc else None),
                        "blocked_by_egress_guard": sum(s != "ok" for s in out["status"].values()),
                        "seconds": round(time.perf_counter() - t0, 1)})
        print(f"done {det_name}/{method}", file=sys.stderr)
    cols = ["detector", "method", "epsilon_param", "ER_di", "ER_qi", "token_recall", "token_precision",
            "epsilon_per_doc_mean", "blocked_by_egress_guard", "latency_p50_ms", "latency_p95_ms"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in results:
        print("| " + " | ".join("" if r[c] is None else (f"{r[c]:.3f}" if isinstance(r[c], float) and c.startswith(("ER", "token")) else str(r[c])) for c in cols) + " |")
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
