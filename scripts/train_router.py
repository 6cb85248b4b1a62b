"""Train the PRISM soft gate on labelled prompts and report stratified 5-fold cross-validated accuracy.

Features come from the edge privacy profile only (default detector).  Deterministic (seed).  Writes
src/cloud_edge_privacy/routing/routing_models/prism_gate.json (a few KB, committed).

    .venv/bin/python scripts/train_router.py --data data/prism/routing_train.jsonl
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from cloud_edge_privacy.detection import build_detector  # noqa: E402
from cloud_edge_privacy.routing.prism_gate import ROUTES, WEIGHTS_FILE, SoftGate, cross_validate, gate_features  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default="data/prism/routing_train.jsonl")
    ap.add_argument("--lam", type=float, default=0.1, help="entropy weight λ of eq. 5 (paper's sign: +λH)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(WEIGHTS_FILE))
    ap.add_argument("--detector", default="default", help="detector preset the gate's features come from (use the "
                    "same preset as the router that loads the gate)")
    args = ap.parse_args()
    rows = [json.loads(l) for l in open(args.data, encoding="utf-8") if l.strip()]
    bad = [r.get("id") for r in rows if r.get("route") not in ROUTES or not r.get("prompt")]
    if bad:
        raise SystemExit(f"{args.data}: rows without a prompt or with a route outside {ROUTES}: {bad[:5]}")
    det = build_detector(args.detector)
    t0 = time.perf_counter()
    X = np.stack([gate_features(r["prompt"], det.analyze(r["prompt"])) for r in rows])
    y = [r["route"] for r in rows]
    print(f"{len(rows)} prompts {dict(Counter(y))}; profiling {1e3 * (time.perf_counter() - t0) / len(rows):.1f} ms/prompt")
    for lam in sorted({0.0, args.lam, 0.5}):
        accs = cross_validate(X, y, folds=5, seed=args.seed, lam=lam)
        print(f"lambda {lam:<4}: 5-fold accuracy {np.mean(accs):.3f} (folds {', '.join(f'{a:.3f}' for a in accs)})")
    gate = SoftGate.fit(X, y, lam=args.lam, seed=args.seed)
    train_acc = float(np.mean([gate.route(x)[0] == t for x, t in zip(X, y)]))
    accs = cross_validate(X, y, folds=5, seed=args.seed, lam=args.lam)
    gate.save(Path(args.out), meta={"trained_on": Path(args.data).name, "n": len(rows), "seed": args.seed,
                                     "detector": args.detector,
                                     "cv5_accuracy": round(float(np.mean(accs)), 4),
                                     "train_accuracy": round(train_acc, 4)})
    print(f"saved {args.out} (lambda {args.lam}; training accuracy {train_acc:.3f})")


if __name__ == "__main__":
    main()
