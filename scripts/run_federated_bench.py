#!/usr/bin/env python
"""Federated privacy detector benchmark (PrivateAI on TAB): the method x ε grid, or export the detector.

    python scripts/run_federated_bench.py                   # default grid -> examples/TAB/federated_privacy_detector_bench/results/
    python scripts/run_federated_bench.py --smoke --out /tmp/fed   # seconds, for tests
    python scripts/run_federated_bench.py --export-detector # train FedAvg and save it for --detector federated
    python scripts/run_federated_bench.py --prepare-ianvs-data  # JSONL files the Ianvs example reads
"""
from __future__ import annotations

import argparse
import logging
import math
import os
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

DATA = os.environ.get("CEP_TAB_DIR", str(ROOT.parent / "shared" / "data" / "tab"))
RESULTS = ROOT / "examples" / "TAB" / "federated_privacy_detector_bench" / "results"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", default=os.path.join(DATA, "echr_train.json"))
    ap.add_argument("--dev", default=os.path.join(DATA, "echr_dev.json"))
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--methods", nargs="+", default=None)
    ap.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 10.0])
    ap.add_argument("--alpha", type=float, default=None, help="Dirichlet alpha of the client split")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--smoke", action="store_true", help="tiny model, 3 clients, 2 rounds, 6 train / 3 dev docs")
    ap.add_argument("--export-detector", action="store_true", help="train one detector and save it for the recognizer")
    ap.add_argument("--export-method", default="fedavg")
    ap.add_argument("--export-epsilon", type=float, default=math.inf)
    ap.add_argument("--export-path", default=None)
    ap.add_argument("--lira", action="store_true",
                    help="offline LiRA (4 shadow models) against centralized, fedavg, fedadam_ldp_accounted and dp_fedavg "
                         "at eps 10, seed = first --seeds; writes <out>/lira_seed<N>.json")
    ap.add_argument("--merge", nargs="+", default=None, help="merge the grid_rows.json of these dirs into --out")
    ap.add_argument("--prepare-ianvs-data", action="store_true",
                    help="write the example's data/tab_train.jsonl and data/tab_dev.jsonl from the TAB files")
    a = ap.parse_args(argv)

    warnings.simplefilter("ignore")
    logging.getLogger().setLevel(logging.ERROR)
    import torch

    torch.set_num_threads(a.threads)
    from dataclasses import replace

    from cloud_edge_privacy.federated.experiment import export_detector, run_grid
    from cloud_edge_privacy.federated.recognizer import MODEL_FILE, default_model_dir
    from cloud_edge_privacy.federated.simulation import METHODS, FedConfig

    cfg = FedConfig.smoke() if a.smoke else FedConfig()
    if a.alpha is not None:
        cfg = replace(cfg, alpha=a.alpha)
    if a.rounds is not None:
        cfg = replace(cfg, rounds=a.rounds)
    t0 = time.perf_counter()
    if a.lira:
        import json

        from cloud_edge_privacy.federated.lira import run_lira
        from cloud_edge_privacy.tab_data import load_tab

        tr, dev = load_tab(a.train), load_tab(a.dev)
        if a.smoke:
            tr, dev = tr[:6], dev[:3]
        cells = [("centralized", math.inf), ("fedavg", math.inf), ("fedadam_ldp_accounted", 10.0), ("dp_fedavg", 10.0)]
        rows = run_lira(tr, dev, cfg, a.seeds[0], cells, n_shadows=4)
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, f"lira_seed{a.seeds[0]}.json"), "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1, default=str)
        for r in rows:
            print(r)
        print(f"LiRA done in {time.perf_counter() - t0:.1f} s")
        return 0
    if a.merge:
        from cloud_edge_privacy.federated.experiment import merge_results

        merge_results(a.merge, a.out)
        print(open(os.path.join(a.out, "grid.md"), encoding="utf-8").read())
        return 0
    if a.prepare_ianvs_data:
        from cloud_edge_privacy.federated.ianvs_runner import prepare_data

        print(prepare_data(str(RESULTS.parent / "data"), a.train, a.dev))
        return 0
    if a.export_detector:
        path = a.export_path or str(default_model_dir() / MODEL_FILE)
        meta = export_detector(a.train, path, method=a.export_method, epsilon=a.export_epsilon, cfg=cfg)
        print(f"saved {path} ({meta}) in {time.perf_counter() - t0:.1f} s")
        return 0
    small = dict(max_train_docs=6, max_dev_docs=3) if a.smoke else {}
    export = None if a.smoke else (a.export_path or str(default_model_dir() / MODEL_FILE))
    run_grid(a.train, a.dev, a.out, methods=a.methods or METHODS, epsilons=a.epsilons, seeds=a.seeds, cfg=cfg,
             log=lambda m: print(m, flush=True), export_path=export, export_method=a.export_method, **small)
    print(f"wrote {a.out}/grid.md in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
