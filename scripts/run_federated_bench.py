#!/usr/bin/env python
"""Federated privacy detector benchmark (PrivateAI on TAB): model families x methods x ε x seeds, α sweep, LiRA,
the KD teacher; saves the best private detector at ε <= 10 for ``--detector federated``.

    python scripts/run_federated_bench.py                   # the default experiment -> examples/TAB/federated_privacy_detector_bench/results/
    python scripts/run_federated_bench.py --full-grid       # every method x ε at 3 seeds, wider α sweep, μ ablation, 32 LiRA shadows
    python scripts/run_federated_bench.py --smoke --out /tmp/fed   # seconds (tiny model, 6 train / 3 dev docs)
    python scripts/run_federated_bench.py --export-detector --export-method dp_fedavg --export-epsilon 10  # one model
    python scripts/run_federated_bench.py --prepare-ianvs-data  # JSONL files the Ianvs example reads

The distillation teacher is the project's cloud endpoint ($CEP_CLOUD_BASE_URL / $CEP_CLOUD_MODEL /
$CEP_CLOUD_API_KEY; unset: the local llama.cpp server, started only when a proxy passage is not cached). Its
answers are cached in $CEP_CACHE_DIR/kd_teacher_cache; --teacher-cache-only refuses to contact the LLM.
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

DATA = os.environ.get("CEP_TAB_DIR", str(ROOT / "data" / "tab"))
RESULTS = ROOT / "examples" / "TAB" / "federated_privacy_detector_bench" / "results"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", default=os.path.join(DATA, "echr_train.json"))
    ap.add_argument("--dev", default=os.path.join(DATA, "echr_dev.json"))
    ap.add_argument("--background", default=os.path.join(DATA, "background_knowledge.json"),
                    help="public text {doc_id: text} for the distillation proxy set")
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument("--full-grid", action="store_true",
                    help="every named method x ε for both families at every seed, the α sweep (local-only, FedAvg, "
                         "FedAdam, DP-FedAvg ε=10, local-DP FedAdam ε=10, PrivateAI ε=10/∞) for both families at every "
                         "seed, the μ=0.5 ablation, 32 LiRA shadows. Without it: the acceptance rows, FedAvg / "
                         "DP-FedAvg / DP-FTRL at every seed and the rest at the first, a one-seed α sweep of FedAvg "
                         "and DP-FedAvg ε=10 (MiniLM), 16 shadows")
    ap.add_argument("--seeds", type=int, nargs="+", default=None,
                    help="default 0 1 2 (smoke: 0); without --full-grid only FedAvg / DP-FedAvg / DP-FTRL run them all")
    ap.add_argument("--methods", nargs="+", default=None,
                    help="named methods or compositions <aggregator>+<privacy>[+kd] (see federated/methods.py)")
    ap.add_argument("--models", nargs="+", default=None, choices=("minilm", "hashed_cnn"),
                    help="model families (default both: the frozen-MiniLM head and the from-scratch hashed CNN)")
    ap.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 10.0])
    ap.add_argument("--alpha", type=float, default=None, help="Dirichlet alpha of the main grid (default 1)")
    ap.add_argument("--sweep-alphas", type=float, nargs="*", default=None,
                    help="extra alphas for the sweep cells (default 0.1 10; smoke: none)")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--shadows", type=int, default=None, help="LiRA shadow models per family (default 16, --full-grid 32, smoke 2; 0 = no LiRA)")
    ap.add_argument("--proxy-passages", type=int, default=None, help="public passages labelled by the teacher (default 100)")
    ap.add_argument("--teacher-eval-passages", type=int, default=None,
                    help="dev passages on which the teacher is scored against gold (default 30; 0 = skip)")
    ap.add_argument("--teacher-live", action="store_true",
                    help="ask the teacher (cache, else the LLM) and score it on dev passages, instead of reusing the "
                         "recorded answers in results/teacher_labels.json (the default when that file exists)")
    ap.add_argument("--teacher-cache-only", action="store_true",
                    help="--teacher-live without contacting the LLM: fail on a cache miss")
    ap.add_argument("--teacher-labels", default=None,
                    help="reuse this saved teacher_labels.json (no LLM, no cache; the teacher is not scored on dev); "
                         "default: results/teacher_labels.json unless --teacher-live / --smoke")
    ap.add_argument("--kd-interval", type=int, default=None)
    ap.add_argument("--kd-mu", type=float, default=None, help="distillation confidence threshold (default 0.9)")
    ap.add_argument("--kd-mu-ablation", type=float, nargs="*", default=None,
                    help="privateai again with these thresholds on the hashed CNN (default none; e.g. 0.5)")
    ap.add_argument("--workers", type=int, default=None, help="worker processes (default 2, smoke 1)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per worker process")
    ap.add_argument("--smoke", action="store_true", help="tiny model, 3 clients, 2 rounds, 6 train / 3 dev docs")
    ap.add_argument("--export-detector", action="store_true", help="train one detector and save it for the recognizer")
    ap.add_argument("--export-method", default="fedavg")
    ap.add_argument("--export-epsilon", type=float, default=math.inf)
    ap.add_argument("--export-model", default="minilm", choices=("minilm", "hashed_cnn"))
    ap.add_argument("--export-path", default=None, help="--export-detector: the file; the experiment: a directory")
    ap.add_argument("--merge", nargs="+", default=None, help="merge the grid_rows.json of these dirs into --out")
    ap.add_argument("--score-recognizers", action="store_true",
                    help="score the exported best private and centralised detectors (alone and in the 'federated' "
                         "preset) on TAB dev and --prompts: <out>/recognizers.md")
    ap.add_argument("--score-files", nargs="+", default=None,
                    help="--score-recognizers: only these model files of the export directory (default both: "
                         "federated_detector.pt centralized_detector.pt)")
    ap.add_argument("--prompts", default=os.environ.get("CEP_PROMPTS_TAB", str(ROOT.parent / "shared" / "data" / "prompts"
                                                                           / "pupa_tnb_tab.json")),
                    help="the real-prompt development set in TAB format")
    ap.add_argument("--tune", action="store_true",
                    help="choose the MiniLM head's settings on a split of TAB train (not dev): results/tuning.md")
    ap.add_argument("--prepare-ianvs-data", action="store_true",
                    help="write the example's data/tab_train.jsonl and data/tab_dev.jsonl from the TAB files")
    a = ap.parse_args(argv)

    warnings.simplefilter("ignore")
    logging.getLogger().setLevel(logging.ERROR)
    import torch

    torch.set_num_threads(a.threads)
    from dataclasses import replace

    from cloud_edge_privacy.federated.experiment import ExperimentSpec, export_detector, run_experiment
    from cloud_edge_privacy.federated.recognizer import CENTRALIZED_FILE, MODEL_FILE, default_model_dir
    from cloud_edge_privacy.federated.methods import parse_method
    from cloud_edge_privacy.federated.simulation import FedConfig
    from cloud_edge_privacy.federated.teacher import TeacherLabeller

    cfg = FedConfig.smoke() if a.smoke else FedConfig()
    if a.alpha is not None:
        cfg = replace(cfg, alpha=a.alpha)
    if a.rounds is not None:
        cfg = replace(cfg, rounds=a.rounds)
    if a.kd_interval is not None:
        cfg = replace(cfg, kd=replace(cfg.kd, interval=a.kd_interval))
    if a.kd_mu is not None:
        cfg = replace(cfg, kd=replace(cfg.kd, mu=a.kd_mu))
    t0 = time.perf_counter()
    if a.merge:
        from cloud_edge_privacy.federated.experiment import merge_results

        merge_results(a.merge, a.out)
        print(open(os.path.join(a.out, "grid.md"), encoding="utf-8").read())
        return 0
    if a.score_recognizers:
        from cloud_edge_privacy.federated import scoring

        rows = scoring.score_recognizers(a.export_path or str(default_model_dir()),
                                         {"TAB dev": a.dev, "real prompts (PUPA TNB)": a.prompts},
                                         log=lambda m: print(m, flush=True),
                                         files=a.score_files or (MODEL_FILE, CENTRALIZED_FILE))
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "recognizers.md"), "w", encoding="utf-8") as fh:
            fh.write(scoring.markdown(rows))
        print(scoring.markdown(rows))
        return 0
    if a.tune:
        from cloud_edge_privacy.federated import tune
        from cloud_edge_privacy.datasets.tab import load_tab

        docs = load_tab(a.train)
        rows = tune.tune(docs, cfg.with_model("minilm"), log=lambda m: print(m, flush=True))
        fit, val = tune.split_train(docs)
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "tuning.md"), "w", encoding="utf-8") as fh:
            fh.write(tune.markdown(rows, len(fit), len(val)))
        print(open(os.path.join(a.out, "tuning.md"), encoding="utf-8").read())
        return 0
    if a.prepare_ianvs_data:
        from cloud_edge_privacy.federated.ianvs_runner import prepare_data

        print(prepare_data(str(RESULTS.parent / "data"), a.train, a.dev))
        return 0
    if a.export_detector:
        if parse_method(a.export_method).distill:
            print("--export-detector trains without the proxy set; export a distilled model from the grid instead",
                  file=sys.stderr)
            return 2
        path = a.export_path or str(default_model_dir() / MODEL_FILE)
        meta = export_detector(a.train, path, method=a.export_method, epsilon=a.export_epsilon,
                               cfg=cfg.with_model(a.export_model))
        print(f"saved {path} ({meta}) in {time.perf_counter() - t0:.1f} s")
        return 0
    spec = ExperimentSpec.smoke() if a.smoke else ExperimentSpec.full_grid() if a.full_grid else ExperimentSpec()
    over = {"methods": tuple(a.methods) if a.methods else None, "epsilons": tuple(a.epsilons),
            "models": tuple(a.models) if a.models else None,
            "seeds": tuple(a.seeds) if a.seeds else None,
            "sweep_alphas": tuple(a.sweep_alphas) if a.sweep_alphas is not None else None,
            "kd_mu_ablation": tuple(a.kd_mu_ablation) if a.kd_mu_ablation is not None else None,
            "n_shadows": a.shadows, "n_proxy": a.proxy_passages, "n_teacher_eval": a.teacher_eval_passages,
            "workers": a.workers, "threads_per_worker": a.threads}
    spec = replace(spec, **{k: v for k, v in over.items() if v is not None})
    for m in spec.methods:
        try:
            parse_method(m)
        except ValueError as exc:
            print(f"--methods: {exc}", file=sys.stderr)
            return 2
    export = None if a.smoke else (a.export_path or str(default_model_dir()))
    # the teacher's audit log: $CEP_CACHE_DIR/kd_teacher_audit.jsonl (hashes only; the text is public anyway)
    record = a.teacher_labels
    if record is None and not (a.smoke or a.teacher_live or a.teacher_cache_only) and (RESULTS / "teacher_labels.json").is_file():
        record = str(RESULTS / "teacher_labels.json")  # the committed answers of the LLM teacher: no LLM run needed
        print(f"teacher: recorded answers {os.path.relpath(record, ROOT)} (--teacher-live asks the teacher again)")
    labeller = None if record else TeacherLabeller(allow_llm=not a.teacher_cache_only)
    res = run_experiment(a.train, a.dev, a.out, background_path=a.background, spec=spec, cfg=cfg, labeller=labeller,
                         log=lambda m: print(m, flush=True), export_dir=export, teacher_record=record)
    print(open(os.path.join(a.out, "grid.md"), encoding="utf-8").read())
    print(f"wrote {a.out} in {time.perf_counter() - t0:.1f} s"
          + (f" (teacher LLM calls: {labeller.calls})" if labeller else ""))
    return 0 if res["rows"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
