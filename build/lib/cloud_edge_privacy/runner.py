"""Our runner: drives the same three YAML files with the same call semantics as Ianvs + Sedna.

Differences from Ianvs, on purpose: a rerun replaces the rank files instead of appending; a failing
test case is reported (``failures.json`` and stderr) without discarding the others; the progress bar
counts routes from ``is_hard_example`` so it is right in both mining modes.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import time
import traceback
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
from tqdm import tqdm

from . import decision_store
from .errors import BenchmarkError, ConfigError
from .ianvs_config import Algorithm, BenchmarkJob, load_benchmarking_job
from .joint_inference import JointInference
from .module_loader import import_module_file
from .rank import CaseResult, write_rank
from .registry import ClassFactory, ClassType
from .tab_data import DEFAULT_INSTRUCTION, load_tab, read_ianvs_jsonl, write_ianvs_jsonl


@dataclass
class DataSource:
    """What Sedna hands a dataset_processor: numpy ``x``/``y`` and the data type."""

    x: Any
    y: Any
    data_type: str = "inference"


@dataclass
class RunSummary:
    output_dir: str
    rank_files: Dict[str, str]
    results: List[CaseResult]
    failures: List[Dict[str, Any]] = field(default_factory=list)
    data_file: str = ""


def _np_array(values: List[Any]) -> Any:
    """``np.array(values)`` as Ianvs's JSONL parser builds it, but dicts always stay dicts."""
    arr = np.empty(len(values), dtype=object) if values and isinstance(values[0], dict) else None
    if arr is None:
        return np.array(values)
    for i, v in enumerate(values):
        arr[i] = v
    return arr


def load_dataset(path: str, limit: Optional[int] = None) -> DataSource:
    if not path.endswith(".jsonl"):
        raise ConfigError(f"{path}: our runner reads JSONL test data (question/answer per line); "
                          "convert TAB with `cloud-edge-privacy prepare-tab`")
    records = read_ianvs_jsonl(path)
    if limit is not None:
        records = records[:limit]
    return DataSource(_np_array([r["question"] for r in records]), _np_array([r["answer"] for r in records]))


def _build(spec) -> Any:
    import_module_file(spec.url)
    cls = ClassFactory.get_cls(ClassType.GENERAL, spec.name)
    return cls(**spec.hyperparameters)


def run_test_case(job: BenchmarkJob, algo: Algorithm, data_file: str, limit: Optional[int],
                  progress: bool = True, label: str = "") -> CaseResult:
    mods = algo.modules
    for pkg in algo.third_party_packages:
        import_module_file(pkg["url"])
    # 1. instantiate in YAML order (the HEM file is only imported)
    instances: Dict[str, Any] = {}
    for mtype, spec in mods.items():
        if mtype == "hard_example_mining":
            if spec.url:
                import_module_file(spec.url)
            continue
        instances[mtype] = _build(spec)
    # 2. per-algorithm output folder, shared by all its test cases
    saved = os.path.join(job.output_dir, algo.name)
    os.makedirs(saved, exist_ok=True)
    os.environ["RESULT_SAVED_URL"] = saved
    os.environ["LOCAL_TEST"] = "TRUE"
    case_dir = os.path.join(saved, str(uuid.uuid4()))
    # 3-4. dataset and optional processor
    ds = load_dataset(data_file, limit)
    if "dataset_processor" in instances:
        ds = instances["dataset_processor"](ds)
    # 6. joint inference; the HEM is built by "Sedna" from {method, param}
    hem_spec = mods["hard_example_mining"]
    param = dict(hem_spec.hyperparameters)
    if hem_spec.name == "OracleRouter":
        param.update(edgemodel=instances["edgemodel"], cloudmodel=instances["cloudmodel"])
    hem = ClassFactory.get_cls(ClassType.HEM, hem_spec.name)(**param)
    job_ji = JointInference(instances["edgemodel"], instances["cloudmodel"], hem)
    decision_store.clear()  # decisions of an earlier test case must not steer this one
    mode = job.testenv.mining_mode
    y_pred: List[Any] = []
    counts = {"edge": 0, "cloud": 0}
    bar = tqdm(ds.x, desc=label or algo.name, unit="sample", disable=not progress, file=sys.stderr)
    for x in bar:
        res = job_ji.inference(x, mining_mode=mode)
        y_pred.append(res)
        counts["cloud" if res[0] else "edge"] += 1
        bar.set_postfix(counts)
    # 8. cleanup: every instance, then the HEM
    for inst in list(instances.values()) + [hem]:
        if hasattr(inst, "cleanup"):
            inst.cleanup()
    # 9. metrics on a fresh, unprocessed y
    y_true = load_dataset(data_file, limit).y
    metrics: Dict[str, Any] = {}
    for m in job.testenv.metrics:
        if m.get("url"):
            import_module_file(m["url"])
        fn = ClassFactory.get_cls(ClassType.GENERAL, m["name"])
        metrics[m["name"]] = fn(y_true, y_pred)
    os.makedirs(case_dir, exist_ok=True)
    _dump_predictions(case_dir, algo, ds, y_pred, metrics)
    return CaseResult(algo, metrics, time.strftime("%Y-%m-%d %H:%M:%S"), case_dir)


def _varying_hps(algo: Algorithm, all_algos: List[Algorithm]) -> str:
    """The hyperparameters that distinguish this test case from the others, e.g. ``privacy_method=none``."""
    cols = [a.hyperparameter_columns() for a in all_algos]
    keys = [k for k in algo.hyperparameter_columns() if len({c.get(k) for c in cols}) > 1]
    return " ".join(f"{k.split('-', 1)[1]}={algo.hyperparameter_columns()[k]}" for k in keys)


def _dump_predictions(case_dir: str, algo: Algorithm, ds: DataSource, y_pred: List[Any], metrics: Dict[str, Any]) -> None:
    with open(os.path.join(case_dir, "predictions.jsonl"), "w", encoding="utf-8") as fh:
        for x, p in zip(ds.x, y_pred):
            fh.write(json.dumps({"doc_id": x.get("doc_id") if isinstance(x, dict) else None,
                                 "is_hard_example": bool(p[0]), "result": p[1], "edge_result": p[2],
                                 "cloud_result": p[3]}, ensure_ascii=False, default=str) + "\n")
    with open(os.path.join(case_dir, "test_case.json"), "w", encoding="utf-8") as fh:
        json.dump({"algorithm": algo.name, "hyperparameters": algo.hyperparameter_columns(),
                   "modules": {t: m.name for t, m in algo.modules.items()}, "metrics": metrics},
                  fh, indent=1, default=str)


def prepare_data(job: BenchmarkJob, tab_file: Optional[Path], split_name: str, limit: Optional[int],
                 instruction: str = DEFAULT_INSTRUCTION) -> str:
    """The JSONL to run on: converted from ``tab_file`` when given, else the testenv's own test data."""
    if tab_file is None:
        return job.testenv.test_data
    out = os.path.join(job.output_dir, "data", f"{split_name}.jsonl")
    write_ianvs_jsonl(load_tab(tab_file), out, instruction, limit)
    return out


def run_job(config_path: str, tab_file: Optional[Path] = None, limit: Optional[int] = None,
            progress: bool = True, test_data: Optional[str] = None) -> RunSummary:
    """Run every test case of a benchmarking job and write the rank files."""
    job = load_benchmarking_job(config_path)
    if limit is not None and limit < 1:
        raise ConfigError("--limit must be at least 1")
    data_file = test_data or prepare_data(job, tab_file, tab_file.stem if tab_file else "test", limit)
    # A rerun replaces earlier outputs of this job instead of piling rows and audit lines up.
    for algo_name in {a.name for a in job.algorithms}:
        shutil.rmtree(os.path.join(job.output_dir, algo_name), ignore_errors=True)
    shutil.rmtree(os.path.join(job.output_dir, "rank"), ignore_errors=True)
    results: List[CaseResult] = []
    failures: List[Dict[str, Any]] = []
    for i, algo in enumerate(job.algorithms, 1):
        label = f"test case {i}/{len(job.algorithms)} {algo.name} {_varying_hps(algo, job.algorithms)}".strip()
        try:
            results.append(run_test_case(job, algo, data_file, limit, progress, label))
        except (BenchmarkError, Exception) as exc:  # report and continue with the other test cases
            failures.append({"test_case": label, "error": f"{type(exc).__name__}: {exc}",
                             "traceback": traceback.format_exc()})
            print(f"FAILED {label}: {type(exc).__name__}: {exc}", file=sys.stderr)
    metric_names = [m["name"] for m in job.testenv.metrics]
    rank_files = write_rank(job.output_dir, results, metric_names, job.rank) if results else {}
    fail_path = os.path.join(job.output_dir, "failures.json")
    if failures:
        with open(fail_path, "w", encoding="utf-8") as fh:
            json.dump(failures, fh, indent=1)
    elif os.path.exists(fail_path):
        os.remove(fail_path)
    return RunSummary(job.output_dir, rank_files, results, failures, data_file)
