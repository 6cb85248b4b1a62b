"""Our runner: drives the same three YAML files with the same call semantics as Ianvs + Sedna.

Differences from Ianvs, on purpose (each one keeps results trustworthy):
* the job, testenv and module YAMLs are validated (unknown keys, hyperparameters of every test case, metric
  names) and the test data is read and checked before any model loads: a bad configuration exits at once;
* one sample's failure is one sample's failure: it is recorded with its status and the run goes on, and a
  failing test case does not discard the others; the exit code is non-zero when anything failed;
* a lock per job output folder refuses a second concurrent run; an interrupted run leaves an ``INCOMPLETE``
  marker and no stale report; a rerun replaces earlier outputs;
* the progress bar counts routes from ``is_hard_example``, right in both mining modes;
* answers replayed from the response cache are counted per test case (``replayed``); ``no_cache=True``
  (``--no-cache``) refuses cached answers for the run.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import sys
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
from tqdm import tqdm

from ..core.context import CONTEXTS
from ..errors import BenchmarkError, ConfigError, DataValidationError
from .ianvs_config import Algorithm, BenchmarkJob, load_benchmarking_job
from .joint_inference import JointInference
from ..models.response_cache import NO_CACHE_ENV
from ..core.module_configs import validate_config
from .module_loader import import_module_file
from ..core.pipeline import safe_reason
from .case_record import case_record, sample_replayed, sample_status, write_case, write_predictions
from .rank import CaseResult, write_rank
from ..registry import ClassFactory, ClassType
from ..results import SampleResult, Status
from ..datasets.tab import DEFAULT_INSTRUCTION, load_tab, read_ianvs_jsonl, write_ianvs_jsonl

INCOMPLETE = "INCOMPLETE"
STALE_OUTPUTS = ("report.md", "leaderboard.csv", "leaderboard.html", "failures.json", "run_summary.json")


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
    sample_failures: int = 0
    samples: int = 0
    cache_replays: int = 0
    cache_replays_by_case: Dict[str, int] = field(default_factory=dict)


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


def module_class(spec: Any) -> Any:
    kind = ClassType.HEM if spec.type == "hard_example_mining" else ClassType.GENERAL
    return ClassFactory.get_cls(kind, spec.name)


def validate_job(job: BenchmarkJob) -> None:
    """Import every module file and validate every test case's hyperparameters; nothing is built."""
    for algo in job.algorithms:
        for pkg in algo.third_party_packages:
            import_module_file(pkg["url"])
        for spec in algo.modules.values():
            if spec.url:
                import_module_file(spec.url)
            cls = module_class(spec)
            schema = getattr(cls, "Config", None)
            if schema is not None:
                validate_config(schema, spec.hyperparameters, f"{spec.source}: module '{spec.name}' ({spec.type})")
    validate_metrics(job)


def validate_metrics(job: BenchmarkJob) -> None:
    """Import every metric file and check that each metric name is registered (before any inference)."""
    for i, m in enumerate(job.testenv.metrics):
        url = m.get("url")
        if url:
            if not os.path.isfile(url):
                raise ConfigError(f"{job.testenv.path}: metrics[{i}] '{m['name']}': url {url} not found "
                                  f"(paths resolve against the working directory {os.getcwd()})")
            import_module_file(url)
        try:
            ClassFactory.get_cls(ClassType.GENERAL, m["name"])
        except ValueError:
            raise ConfigError(f"{job.testenv.path}: metrics[{i}]: no metric named '{m['name']}' is registered"
                              + (f" by {url}" if url else " (and no url is given)")) from None


def validate_data(path: str, what: str) -> None:
    """Read and check the test data now, so that a missing or malformed file stops the run before any model
    loads; errors name the file (and the YAML that named it)."""
    if not os.path.isfile(path):
        raise ConfigError(f"{what}: test data {path} not found (paths resolve against the working directory "
                          f"{os.getcwd()})")
    if not path.endswith(".jsonl"):
        raise ConfigError(f"{what}: test data {path}: our runner reads JSONL test data (question/answer per line); "
                          "convert TAB with `cloud-edge-privacy prepare-tab`")
    try:
        read_ianvs_jsonl(path)
    except RecursionError:
        raise DataValidationError(f"{path}: a record is nested too deeply to parse (JSON nesting beyond "
                                  f"{sys.getrecursionlimit()} levels)") from None


def _build(spec: Any) -> Any:
    return module_class(spec)(**spec.hyperparameters)


def _failed_sample(x: Any, exc: BaseException) -> List[Any]:
    doc_id = x.get("doc_id") if isinstance(x, dict) else None
    res = SampleResult(str(doc_id or ""), status=Status.ERROR, reason=safe_reason(exc))
    return [False, res.to_dict(), None, None]


def _build_modules(algo: Algorithm) -> Dict[str, Any]:
    """Every module in YAML order, as Ianvs builds them (the HEM file is only imported: Sedna builds it later)."""
    for pkg in algo.third_party_packages:
        import_module_file(pkg["url"])
    instances: Dict[str, Any] = {}
    for mtype, spec in algo.modules.items():
        if mtype == "hard_example_mining":
            if spec.url:
                import_module_file(spec.url)
            continue
        instances[mtype] = _build(spec)
    return instances


def _build_hem(algo: Algorithm, instances: Dict[str, Any]) -> Any:
    """The HEM as Sedna builds it from ``{method, param}``."""
    hem_spec = algo.modules["hard_example_mining"]
    param = dict(hem_spec.hyperparameters)
    if hem_spec.name == "OracleRouter":
        param.update(edgemodel=instances["edgemodel"], cloudmodel=instances["cloudmodel"])
    return module_class(hem_spec)(**param)


def infer_samples(job: BenchmarkJob, algo: Algorithm, data_file: str, limit: Optional[int], saved: str,
                  indices: Optional[Sequence[int]] = None, progress: bool = True,
                  label: str = "") -> Tuple[List[Optional[str]], List[Any]]:
    """Build the test case's modules and run joint inference on the samples at ``indices`` (all when None), in
    that order, with ``saved`` as the run's output folder (``RESULT_SAVED_URL``: audit log, run context).

    Returns the doc_ids and the predictions of those samples.  A sample's failure is recorded as that sample's
    result; the others go on."""
    instances = _build_modules(algo)  # before RESULT_SAVED_URL is set, as in Ianvs
    os.makedirs(saved, exist_ok=True)
    os.environ["RESULT_SAVED_URL"] = saved
    os.environ["LOCAL_TEST"] = "TRUE"
    CONTEXTS.get(saved).clear_decisions()  # decisions of an earlier test case must not steer this one
    ds = load_dataset(data_file, limit)
    if "dataset_processor" in instances:
        ds = instances["dataset_processor"](ds)
    xs = list(ds.x) if indices is None else [ds.x[i] for i in indices]
    hem = _build_hem(algo, instances)
    job_ji = JointInference(instances["edgemodel"], instances["cloudmodel"], hem)
    mode = job.testenv.mining_mode
    y_pred: List[Any] = []
    counts = {"edge": 0, "cloud": 0, "failed": 0, "replayed": 0}
    bar = tqdm(xs, desc=label or algo.name, unit="sample", disable=not progress, file=sys.stderr)
    for x in bar:
        try:
            res = job_ji.inference(x, mining_mode=mode)
        except Exception as exc:  # noqa: BLE001 - one sample's failure is one sample's failure
            res = _failed_sample(x, exc)
        y_pred.append(res)
        _count(counts, res)
        bar.set_postfix(counts)
    # cleanup: every instance, then the HEM
    for inst in list(instances.values()) + [hem]:
        if hasattr(inst, "cleanup"):
            inst.cleanup()
    return [_doc_id(x) for x in xs], y_pred


def finish_test_case(job: BenchmarkJob, algo: Algorithm, data_file: str, limit: Optional[int],
                     doc_ids: List[Optional[str]], y_pred: List[Any], case_dir: str) -> CaseResult:
    """Write the predictions (before any metric can fail), compute every metric once on all of them (against a
    fresh, unprocessed y) and write ``test_case.json``."""
    os.makedirs(case_dir, exist_ok=True)
    write_predictions(case_dir, doc_ids, y_pred)
    y_true = load_dataset(data_file, limit).y
    metrics: Dict[str, Any] = {}
    for m in job.testenv.metrics:
        if m.get("url"):
            import_module_file(m["url"])
        fn = ClassFactory.get_cls(ClassType.GENERAL, m["name"])
        metrics[m["name"]] = fn(y_true, y_pred)
    write_case(case_dir, case_record(algo.name, algo.hyperparameter_columns(),
                                     {t: m.name for t, m in algo.modules.items()}, metrics, y_pred, "cloud-edge-privacy"))
    return CaseResult(algo, metrics, time.strftime("%Y-%m-%d %H:%M:%S"), case_dir)


def run_test_case(job: BenchmarkJob, algo: Algorithm, data_file: str, limit: Optional[int],
                  progress: bool = True, label: str = "") -> CaseResult:
    """One test case as Ianvs runs it: every sample in this process, then the metrics."""
    saved = os.path.join(job.output_dir, algo.name)  # per-algorithm output folder, shared by its test cases
    doc_ids, y_pred = infer_samples(job, algo, data_file, limit, saved, None, progress, label)
    return finish_test_case(job, algo, data_file, limit, doc_ids, y_pred, os.path.join(saved, str(uuid.uuid4())))


def _doc_id(x: Any) -> Optional[str]:
    return x.get("doc_id") if isinstance(x, dict) else None


def _count(counts: Dict[str, int], res: Any) -> None:
    counts["cloud" if res[0] else "edge"] += 1
    counts["failed"] += sample_status(res) != Status.OK
    counts["replayed"] += sample_replayed(res)


def _splittable(algo: Algorithm) -> Tuple[bool, str]:
    """Whether a test case's samples may run in separate processes: jointinference samples are independent, but
    a per-session budget is one ledger over the whole run, in sample order."""
    cloud = algo.modules.get("cloudmodel")
    if cloud is not None and cloud.hyperparameters.get("budget_per_session") is not None:
        return False, "its cloudmodel has a budget_per_session: one ledger over all its samples, in order"
    return True, ""


def _varying_hps(algo: Algorithm, all_algos: List[Algorithm]) -> str:
    """The hyperparameters that distinguish this test case from the others, e.g. ``privacy_method=none``."""
    cols = [a.hyperparameter_columns() for a in all_algos]
    keys = [k for k in algo.hyperparameter_columns() if len({c.get(k) for c in cols}) > 1]
    return " ".join(f"{k.split('-', 1)[1]}={algo.hyperparameter_columns()[k]}" for k in keys)


def prepare_data(job: BenchmarkJob, tab_file: Optional[Path], split_name: str, limit: Optional[int],
                 instruction: str = DEFAULT_INSTRUCTION) -> str:
    """The JSONL to run on: converted from ``tab_file`` when given, else the testenv's own test data."""
    if tab_file is None:
        return job.testenv.test_data
    out = os.path.join(job.output_dir, "data", f"{split_name}.jsonl")
    write_ianvs_jsonl(load_tab(tab_file), out, instruction, limit)
    return out


@contextmanager
def job_lock(output_dir: str) -> Iterator[None]:
    """Hold an exclusive lock on the job's output folder; a second run of the same job is refused."""
    os.makedirs(output_dir, exist_ok=True)
    fh = open(os.path.join(output_dir, ".lock"), "w")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        raise BenchmarkError(f"{output_dir}: another run of this job is in progress (lock held); wait for it "
                             "or give this run another job name/workspace") from None
    try:
        fh.write(str(os.getpid()))
        fh.flush()
        yield
    finally:
        fcntl.flock(fh, fcntl.LOCK_UN)
        fh.close()


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM behaves like Ctrl-C, so both leave the outputs marked incomplete."""
    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


@contextmanager
def _cache_reads(refused: bool) -> Iterator[None]:
    """With ``refused``, every response-cache lookup of this run is a miss (``$CEP_NO_CACHE``)."""
    old = os.environ.get(NO_CACHE_ENV)
    if refused:
        os.environ[NO_CACHE_ENV] = "1"
    try:
        yield
    finally:
        if refused:
            if old is None:
                os.environ.pop(NO_CACHE_ENV, None)
            else:
                os.environ[NO_CACHE_ENV] = old


def run_job(config_path: str, tab_file: Optional[Path] = None, limit: Optional[int] = None,
            progress: bool = True, test_data: Optional[str] = None, no_cache: bool = False,
            executor: str = "serial", address: Optional[str] = None, workers: Optional[int] = None,
            shard_samples: Union[int, str] = 1) -> RunSummary:
    """Run every test case of a benchmarking job and write the rank files.

    ``executor="ray"`` spreads the test cases over a Ray cluster (``address``, else a local one with ``workers``
    CPUs), with ``shard_samples`` > 1 (or ``"auto"``) each test case's samples in up to that many tasks
    (:mod:`.executors`); ``no_cache`` refuses cached answers, so every answer comes from a model run."""
    from .executors import AUTO, EXECUTORS, CaseSpec, run_ray, run_serial, shard_count

    if executor not in EXECUTORS:
        raise ConfigError(f"unknown executor {executor!r}; one of {EXECUTORS}")
    if shard_samples != AUTO:
        shard_samples = shard_count(shard_samples, 1, 1)  # a bad value fails before anything runs
    if shard_samples != 1 and executor != "ray":
        raise ConfigError("--shard-samples needs --executor ray (a serial run has one process to run samples in)")
    job = load_benchmarking_job(config_path)
    if limit is not None and limit < 1:
        raise ConfigError("--limit must be at least 1")
    validate_job(job)  # before any model loads or any output is touched
    if test_data:
        validate_data(test_data, "--test-data")  # same validation and errors as TAB input
    elif tab_file is None:
        validate_data(job.testenv.test_data, job.testenv.path)
    with job_lock(job.output_dir), _terminate_as_interrupt(), _cache_reads(no_cache):
        marker = Path(job.output_dir) / INCOMPLETE
        marker.write_text("this run has not finished; its outputs are not valid\n")
        # A rerun replaces earlier outputs of this job instead of piling rows and audit lines up.
        for algo_name in {a.name for a in job.algorithms}:
            shutil.rmtree(os.path.join(job.output_dir, algo_name), ignore_errors=True)
            CONTEXTS.drop(os.path.join(job.output_dir, algo_name))
        for name in ("rank", "plots"):
            shutil.rmtree(os.path.join(job.output_dir, name), ignore_errors=True)
        for name in STALE_OUTPUTS:
            Path(job.output_dir, name).unlink(missing_ok=True)
        for png in Path(job.output_dir).glob("*.png"):
            png.unlink()
        data_file = test_data or prepare_data(job, tab_file, tab_file.stem if tab_file else "test", limit)
        labels = [f"test case {i}/{len(job.algorithms)} {algo.name} {_varying_hps(algo, job.algorithms)}".strip()
                  for i, algo in enumerate(job.algorithms, 1)]
        if executor == "ray":
            cases = [CaseSpec(i, label, os.path.join(job.output_dir, algo.name), *_splittable(algo))
                     for i, (algo, label) in enumerate(zip(job.algorithms, labels))]
            doc_ids = [_doc_id(x) for x in load_dataset(data_file, limit).x]
            outcomes = run_ray(config_path, cases, data_file, limit, doc_ids, address, workers, shard_samples)
        else:
            outcomes = run_serial(labels, lambda i, label: run_test_case(job, job.algorithms[i], data_file, limit,
                                                                         progress, label))
        results: List[CaseResult] = []
        failures: List[Dict[str, Any]] = []
        replays: Dict[str, int] = {}
        n_failed_samples = n_samples = 0
        for o in outcomes:
            if o.result is None:
                failures.append({"test_case": o.label, "error": o.error, "traceback": o.traceback})
                continue
            results.append(o.result)
            with open(os.path.join(o.result.url, "predictions.jsonl"), encoding="utf-8") as fh:
                preds = [json.loads(line) for line in fh]
            statuses = [p["status"] for p in preds]
            replays[o.label] = sum(bool(p.get("replayed")) for p in preds)
            n_samples += len(statuses)
            bad = [s for s in statuses if s != Status.OK]
            n_failed_samples += len(bad)
            if bad:
                failures.append({"test_case": o.label, "failed_samples": len(bad), "samples": len(statuses),
                                 "statuses": {s: bad.count(s) for s in sorted(set(bad))}})
        metric_names = [m["name"] for m in job.testenv.metrics]
        rank_files = write_rank(job.output_dir, results, metric_names, job.rank) if results else {}
        if failures:
            with open(os.path.join(job.output_dir, "failures.json"), "w", encoding="utf-8") as fh:
                json.dump(failures, fh, indent=1)
        marker.unlink(missing_ok=True)
    return RunSummary(job.output_dir, rank_files, results, failures, data_file, n_failed_samples, n_samples,
                      sum(replays.values()), replays)
