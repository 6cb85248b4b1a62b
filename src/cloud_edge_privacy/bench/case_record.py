"""What a finished test case leaves in its folder for the report, written the same way by both runners.

``predictions.jsonl`` (one record per sample: route, status, replay flag and the result dicts) and
``test_case.json`` (hyperparameters, modules, metrics, route counts and the machine's state) sit in the test
case's folder, the ``url`` column of ``rank/all_rank.csv``.  Our runner writes them itself.  Ianvs writes no
per-sample output at all, and no module is told that folder (``RESULT_SAVED_URL`` is its parent, shared by
every test case of the algorithm; docs/ianvs-contract.md §3 and §8).  So the example's metric functions are
wrapped (:func:`recording`): when Ianvs calls one, the wrapper finds the calling Ianvs ``TestCase`` on the call
stack and records there, the predictions on the first call and each metric value as it is computed.  Under our
runner no such frame exists and the wrapper only computes the metric.

The machine record (load averages, usable cores, the process's CPU affinity) sits beside every wall-clock
metric, so the report can say when latencies of two test cases are not comparable (docs/design.md, "Latency").
"""
from __future__ import annotations

import functools
import inspect
import json
import os
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

from ..results import Status

# Ianvs 1d3da5b calls a metric from core.testcasecontroller.testcase.testcase.TestCase.compute_metrics
IANVS_TESTCASE_MODULE = "core.testcasecontroller.testcase"


def sample_replayed(pred: Any) -> bool:
    """An answer of this sample (cloud or edge) was replayed from the response cache."""
    parts = pred[1:] if isinstance(pred, list) else []
    return any(isinstance(p, dict) and (p.get("cloud_cache_hit") or p.get("edge_cache_hit")) for p in parts)


def sample_status(pred: List[Any]) -> str:
    """The sample's status: its final result's ``status`` (``error`` when there is no result dict)."""
    res = pred[1] if isinstance(pred, list) and len(pred) > 1 else None
    return str((res or {}).get("status", Status.OK.value)) if isinstance(res, dict) else Status.ERROR.value


def route_counts(y_pred: Sequence[Any]) -> Dict[str, int]:
    """Edge/cloud routes (from ``is_hard_example``), failed and replayed samples."""
    counts = {"edge": 0, "cloud": 0, "failed": 0, "replayed": 0}
    for res in y_pred:
        counts["cloud" if res[0] else "edge"] += 1
        counts["failed"] += sample_status(res) != Status.OK
        counts["replayed"] += sample_replayed(res)
    return counts


def machine_state() -> Dict[str, Any]:
    """Load averages (1, 5, 15 min), usable cores and the CPU affinity of this process, now."""
    try:
        affinity = sorted(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        affinity = []
    load = [round(v, 2) for v in os.getloadavg()] if hasattr(os, "getloadavg") else []
    cpu_count = os.cpu_count() or 0
    return {"loadavg_1_5_15": load, "cpu_count": cpu_count, "cpu_affinity": affinity,
            "pinned": bool(affinity) and len(affinity) < cpu_count,
            "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


def write_predictions(case_dir: str, doc_ids: Sequence[Optional[str]], y_pred: Sequence[Any]) -> None:
    """``<case_dir>/predictions.jsonl``: one record per sample, in sample order."""
    os.makedirs(case_dir, exist_ok=True)
    tmp = os.path.join(case_dir, "predictions.jsonl.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for doc_id, p in zip(doc_ids, y_pred):
            fh.write(json.dumps({"doc_id": doc_id,
                                 "is_hard_example": bool(p[0]), "status": sample_status(p),
                                 "replayed": sample_replayed(p), "result": p[1],
                                 "edge_result": p[2], "cloud_result": p[3]}, ensure_ascii=False, default=str) + "\n")
    os.replace(tmp, os.path.join(case_dir, "predictions.jsonl"))


def write_case(case_dir: str, record: Dict[str, Any]) -> None:
    """``<case_dir>/test_case.json`` (replaced whole)."""
    os.makedirs(case_dir, exist_ok=True)
    tmp = os.path.join(case_dir, "test_case.json.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(record, fh, indent=1, default=str)
    os.replace(tmp, os.path.join(case_dir, "test_case.json"))


def case_record(algorithm: str, hyperparameters: Dict[str, Any], modules: Dict[str, str], metrics: Dict[str, Any],
                y_pred: Sequence[Any], runner: str) -> Dict[str, Any]:
    """The content of ``test_case.json``."""
    return {"algorithm": algorithm, "hyperparameters": hyperparameters, "modules": modules, "metrics": metrics,
            "samples": route_counts(y_pred), "machine": machine_state(), "runner": runner}


# ------------------------------------------------------------------------------------------------ under Ianvs
def _ianvs_test_case() -> Any:
    """The Ianvs ``TestCase`` whose ``compute_metrics`` is on the call stack, or None (our runner, a test)."""
    frame = inspect.currentframe()
    try:
        while frame is not None:
            obj = frame.f_locals.get("self")
            if (obj is not None and type(obj).__name__ == "TestCase"
                    and type(obj).__module__.startswith(IANVS_TESTCASE_MODULE)
                    and isinstance(getattr(obj, "output_dir", None), str)):
                return obj
            frame = frame.f_back
        return None
    finally:
        del frame


def _ianvs_columns(test_case: Any) -> tuple:
    """(algorithm name, ``<type>-<hp>`` columns, module names) of an Ianvs test case, as all_rank.csv has them."""
    algo = getattr(test_case, "algorithm", None)
    hps: Dict[str, Any] = {}
    names: Dict[str, str] = {}
    for mtype, module in (getattr(algo, "modules", None) or {}).items():
        names[mtype] = str(getattr(module, "name", ""))
        for key, value in (getattr(module, "hyperparameters", None) or {}).items():
            hps[f"{mtype}-{key}"] = value
    return str(getattr(algo, "name", "")), hps, names


def _doc_ids(y_true: Sequence[Any], n: int) -> List[Optional[str]]:
    """doc_id of each sample from its gold record (the ``answer`` field, a JSON object)."""
    out: List[Optional[str]] = []
    for g in list(y_true)[:n]:
        if isinstance(g, (str, bytes)):
            try:
                g = json.loads(g)
            except (TypeError, ValueError):
                g = None
        out.append(str(g["doc_id"]) if isinstance(g, dict) and g.get("doc_id") is not None else None)
    return out + [None] * (n - len(out))


def record_under_ianvs(name: str, value: Any, y_true: Sequence[Any], y_pred: Sequence[Any]) -> Optional[str]:
    """Record the predictions (once) and this metric's value in the calling Ianvs test case's folder; returns
    the folder, or None when no Ianvs test case is calling."""
    test_case = _ianvs_test_case()
    if test_case is None:
        return None
    case_dir = test_case.output_dir
    preds = os.path.join(case_dir, "predictions.jsonl")
    meta = os.path.join(case_dir, "test_case.json")
    if not os.path.isfile(preds):
        write_predictions(case_dir, _doc_ids(y_true, len(y_pred)), y_pred)
    if os.path.isfile(meta):
        with open(meta, encoding="utf-8") as fh:
            record = json.load(fh)
    else:
        algorithm, hps, names = _ianvs_columns(test_case)
        record = case_record(algorithm, hps, names, {}, y_pred, "ianvs")
    record["metrics"][name] = value
    write_case(case_dir, record)
    return case_dir


def recording(name: str, fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``fn`` as an Ianvs metric that also records the test case for the report (see the module docstring)."""
    @functools.wraps(fn)  # the same name and qualname: registering it again replaces the plain function
    def metric(y_true: Any, y_pred: Any) -> Any:
        value = fn(y_true, y_pred)
        record_under_ianvs(name, value, y_true, y_pred)
        return value

    return metric
