"""Where the test cases of a job run: one after another in this process (``serial``, as Ianvs does) or spread
over a Ray cluster (``ray``): one task per test case, or, with ``shard_samples``, a test case's samples split
into shards, one task each.

Each Ray task runs in a worker process of its own: it re-reads the job YAML in the submitting process's working
directory (Ianvs paths are relative to it) and builds its own models (the edge LLM and, when no cloud endpoint
is configured, its own local llama.cpp server, stopped when the task ends).  It claims as many cores of its node
as it asked Ray for (one), so that its models run that many threads and concurrent tasks do not share cores.

* A **test-case task** writes its predictions, audit lines and metrics under the job's output folder exactly as
  a serial run would (one folder per test case) and returns its :class:`CaseResult`.
* A **shard task** runs the samples of its shard, in the original order, with its own workspace shard
  (``<test case folder>/shard-<k>``: run context, audit log) and returns their predictions.  When every shard
  of a test case is back, the driver appends the shards' audit logs, in shard order, to the algorithm's
  ``cloud_audit.jsonl`` and a finishing task writes ``predictions.jsonl`` in the original sample order and
  computes every metric once on all predictions, as a serial run does.

Splitting is sound for ``jointinference`` (samples are independent): benchmark noise and surrogates are keyed
by the seed, the document and the value's index within it (:class:`~..randomness.Randomness`), never by a
counter over the run, the response cache is keyed by prompt and model, and the local LLMs answer a prompt the
same whatever came before.  Samples of one document stay in one shard (its per-document budget is charged in
order, in one accountant), and a test case with a per-session budget is never split: that budget covers the
whole run, which no shard sees.

The driver merges the results into the same rank files.  A multi-node cluster needs the repository at the
same path and a shared file system for the workspace on every node (see docs/leaderboard.md).  Both executors
return one :class:`CaseOutcome` per test case, in the job's order.
"""
from __future__ import annotations

import fcntl
import math
import os
import shutil
import sys
import tempfile
import time
import traceback
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Union

from ..errors import ConfigError
from .rank import CaseResult

EXECUTORS = ("serial", "ray")
AUTO = "auto"
# passed on to Ray workers: the endpoint and cache settings of the run (names only, values from the driver)
FORWARDED_ENV_PREFIXES = ("CEP_", "TAB_DATA_DIR", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
AUDIT_LOG = "cloud_audit.jsonl"
TASK_CPUS = 1


@dataclass
class CaseOutcome:
    """One test case: its result, or the error that stopped it."""

    index: int
    label: str
    result: Optional[CaseResult] = None
    error: str = ""
    traceback: str = ""


@dataclass(frozen=True)
class CaseSpec:
    """What the Ray executor needs to know of a test case."""

    index: int
    label: str
    saved: str              # the algorithm's output folder (Ianvs's RESULT_SAVED_URL for its test cases)
    splittable: bool = True  # False: run as one task (a per-session budget covers the whole run)
    reason: str = ""         # why it is not splittable


RunCase = Callable[[int, str], CaseResult]


def run_serial(labels: List[str], run_case: RunCase) -> List[CaseOutcome]:
    """Run the test cases one after another; a failing one is recorded and the others go on."""
    out = []
    for i, label in enumerate(labels):
        try:
            out.append(CaseOutcome(i, label, run_case(i, label)))
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001 - report and continue with the other test cases
            print(f"FAILED {label}: {type(exc).__name__}: {exc}", file=sys.stderr)
            out.append(CaseOutcome(i, label, error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()))
    return out


# ------------------------------------------------------------------------------------------ shard planning
def plan_shards(doc_ids: Sequence[Optional[str]], n: int) -> List[List[int]]:
    """Split the sample indices ``0..len(doc_ids)-1`` into at most ``n`` shards of about equal size.

    Samples with the same doc_id stay in one shard (a document's budget is charged in one accountant, in
    order); a sample without a doc_id is its own document.  Shards follow the sample order and list their
    indices ascending, so concatenating them gives the original order when no document repeats apart."""
    if n < 1:
        raise ConfigError(f"--shard-samples must be at least 1, got {n}")
    groups: Dict[Any, List[int]] = {}
    for i, d in enumerate(doc_ids):
        groups.setdefault(("doc", d) if d else ("sample", i), []).append(i)
    if not groups:
        return []
    n = min(n, len(groups))
    remaining = len(doc_ids)
    target = math.ceil(remaining / n)
    shards: List[List[int]] = [[]]
    for members in groups.values():
        if len(shards[-1]) >= target and len(shards) < n:
            remaining -= len(shards[-1])
            shards.append([])
            target = math.ceil(remaining / (n - len(shards) + 1))  # what is left, over the shards left
        shards[-1].extend(members)
    return [sorted(s) for s in shards if s]


def shard_count(requested: Union[int, str], n_cases: int, cpus: float) -> int:
    """Shards per test case: the number asked for, or with ``auto`` enough to give every CPU of the cluster a
    task (``ceil(cpus / test cases)``; 1 when there are at least as many test cases as CPUs)."""
    if requested == AUTO:
        return max(1, math.ceil(cpus / max(1, n_cases)))
    try:
        n = int(requested)
    except (TypeError, ValueError):
        raise ConfigError(f"--shard-samples takes a number >= 1 or '{AUTO}', got {requested!r}") from None
    if n < 1:
        raise ConfigError(f"--shard-samples must be at least 1, got {n}")
    return n


# ------------------------------------------------------------------------------------------ in the worker
def _forwarded_env() -> Dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith(FORWARDED_ENV_PREFIXES)}


@contextmanager
def claimed_cores(n: int) -> Iterator[List[int]]:
    """Pin this worker to ``n`` cores of its node that no other task of ours holds (a lock file per core in the
    node's temp folder), so that models sized by the usable cores run ``n`` threads and concurrent tasks do not
    share cores.  Without enough free cores (other Ray clusters on the node), the first ``n`` are used."""
    try:
        cores = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity API (not Linux): leave the threads alone
        yield []
        return
    if n >= len(cores):
        yield cores
        return
    lock_dir = Path(tempfile.gettempdir()) / "cloud-edge-privacy-ray-cores"
    lock_dir.mkdir(exist_ok=True)
    held = []
    for core in cores:
        fh = open(lock_dir / f"{core}.lock", "w")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            continue
        held.append((core, fh))
        if len(held) == n:
            break
    mine = [c for c, _ in held] if len(held) == n else cores[:n]
    os.sched_setaffinity(0, mine)
    try:
        yield mine
    finally:
        os.sched_setaffinity(0, cores)
        for _, fh in held:
            fcntl.flock(fh, fcntl.LOCK_UN)
            fh.close()


def _stop_local_servers() -> None:
    """The local llama.cpp servers this task started: a worker process may be killed without running atexit."""
    from ..models.local_server import stop_all

    stop_all()


def _load_job(config_path: str, cwd: str, env: Dict[str, str]) -> Any:
    os.chdir(cwd)
    os.environ.update(env)
    from .ianvs_config import load_benchmarking_job
    from .runner import validate_job

    job = load_benchmarking_job(config_path)
    validate_job(job)  # imports the module files, so their classes register in this worker
    return job


def _in_task(body: Callable[[], Dict[str, Any]]) -> Dict[str, Any]:
    """Run a task's body on its claimed cores; an exception becomes ``{error, traceback}`` (the driver records
    it as the test case's failure) and the local servers the task started are stopped in any case."""
    try:
        with claimed_cores(TASK_CPUS):
            return body()
    except Exception as exc:  # noqa: BLE001 - reported to the driver
        return {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
    finally:
        _stop_local_servers()


def _case_task(config_path: str, cwd: str, index: int, label: str, data_file: str, limit: Optional[int],
               env: Dict[str, str]) -> Dict[str, Any]:
    """Body of one test-case task: the same code path as a serial test case."""
    def body() -> Dict[str, Any]:
        from .runner import run_test_case

        job = _load_job(config_path, cwd, env)
        return {"result": run_test_case(job, job.algorithms[index], data_file, limit, False, label)}

    return _in_task(body)


def _shard_task(config_path: str, cwd: str, index: int, label: str, data_file: str, limit: Optional[int],
                samples: List[int], shard_dir: str, env: Dict[str, str]) -> Dict[str, Any]:
    """Body of one shard task: the samples at ``samples``, in that order, with ``shard_dir`` as the run's folder."""
    t0 = time.perf_counter()

    def body() -> Dict[str, Any]:
        from ..core.context import CONTEXTS
        from .runner import infer_samples

        job = _load_job(config_path, cwd, env)
        doc_ids, preds = infer_samples(job, job.algorithms[index], data_file, limit, shard_dir, samples, False, label)
        CONTEXTS.drop(shard_dir)
        return {"doc_ids": doc_ids, "preds": preds, "seconds": time.perf_counter() - t0}

    return _in_task(body)


def _finish_task(config_path: str, cwd: str, index: int, data_file: str, limit: Optional[int],
                 doc_ids: List[Optional[str]], preds: List[Any], case_dir: str,
                 env: Dict[str, str]) -> Dict[str, Any]:
    """Body of the task that writes a sharded test case's predictions and computes its metrics once."""
    def body() -> Dict[str, Any]:
        from .runner import finish_test_case

        job = _load_job(config_path, cwd, env)
        return {"result": finish_test_case(job, job.algorithms[index], data_file, limit, doc_ids, preds, case_dir)}

    return _in_task(body)


# ------------------------------------------------------------------------------------------ in the driver
def merge_audit_logs(shard_dirs: Sequence[str], saved: str) -> int:
    """Append each shard's audit log, in shard order, to ``saved``'s (where a serial run writes it), then remove
    the shard's copy; returns the number of lines moved.  The shards wrote theirs before anything left."""
    target = Path(saved) / AUDIT_LOG
    moved = 0
    for d in shard_dirs:
        src = Path(d) / AUDIT_LOG
        if not src.is_file():
            continue
        data = src.read_bytes()
        if data and not data.endswith(b"\n"):
            data += b"\n"
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "ab") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        moved += data.count(b"\n")
        src.unlink()
    return moved


def _ray_init(address: Optional[str], workers: Optional[int]) -> bool:
    try:
        import ray
    except ImportError:
        raise ConfigError("--executor ray needs Ray: pip install 'ray==2.55.1' (scripts/setup.sh installs it)") from None
    if ray.is_initialized():
        return False
    kwargs: Dict[str, Any] = {"include_dashboard": False, "logging_level": "WARNING", "log_to_driver": True}
    if address:
        kwargs["address"] = address
    else:
        kwargs.update(num_cpus=workers or os.cpu_count() or 2, object_store_memory=200 * 1024 * 1024)
    ray.init(**kwargs)
    return True


def run_ray(config_path: str, cases: List[CaseSpec], data_file: str, limit: Optional[int],
            doc_ids: Sequence[Optional[str]], address: Optional[str] = None, workers: Optional[int] = None,
            shard_samples: Union[int, str] = 1) -> List[CaseOutcome]:
    """Run the test cases as Ray tasks (1 CPU each) on the cluster at ``address`` or on a local one with
    ``workers`` CPUs: one task per test case, or with ``shard_samples`` > 1 (or ``auto``) each splittable test
    case's samples (``doc_ids``, in data order) in up to that many shard tasks.  Results in the job's order."""
    started = _ray_init(address, workers)
    import ray

    try:
        n = shard_count(shard_samples, len(cases), float(ray.cluster_resources().get("CPU", 1)))
        env, cwd = _forwarded_env(), os.getcwd()
        case_task = ray.remote(num_cpus=TASK_CPUS, max_retries=0)(_case_task)
        shard_task = ray.remote(num_cpus=TASK_CPUS, max_retries=0)(_shard_task)
        finish_task = ray.remote(num_cpus=TASK_CPUS, max_retries=0)(_finish_task)
        pending: Dict[Any, tuple] = {}        # ref -> (kind, case index, shard index)
        shards: Dict[int, List[List[int]]] = {}
        shard_dirs: Dict[int, List[str]] = {}
        case_dirs: Dict[int, str] = {}
        shard_out: Dict[int, Dict[int, Dict[str, Any]]] = {}
        outcomes: Dict[int, CaseOutcome] = {}
        for c in cases:
            plan = plan_shards(doc_ids, n) if c.splittable and n > 1 else []
            if n > 1 and not c.splittable:
                print(f"[ray] {c.label}: not split ({c.reason})", file=sys.stderr)
            if len(plan) < 2:
                pending[case_task.remote(config_path, cwd, c.index, c.label, data_file, limit, env)] = ("case", c.index, 0)
                continue
            case_dirs[c.index] = os.path.join(c.saved, str(uuid.uuid4()))
            shards[c.index] = plan
            shard_dirs[c.index] = [os.path.join(case_dirs[c.index], f"shard-{k}") for k in range(len(plan))]
            shard_out[c.index] = {}
            for k, samples in enumerate(plan):
                ref = shard_task.remote(config_path, cwd, c.index, f"{c.label} shard {k + 1}/{len(plan)}", data_file,
                                        limit, samples, shard_dirs[c.index][k], env)
                pending[ref] = ("shard", c.index, k)
        by_index = {c.index: c for c in cases}
        total, done = len(pending), 0
        t0 = time.perf_counter()
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            kind, i, k = pending.pop(ready[0])
            res = ray.get(ready[0])
            done += 1
            label = by_index[i].label
            if "error" in res:
                where = f" (shard {k + 1}/{len(shards[i])})" if kind == "shard" else ""
                print(f"FAILED {label}{where}: {res['error']}", file=sys.stderr)
                outcomes.setdefault(i, CaseOutcome(i, label, error=res["error"] + where, traceback=res["traceback"]))
                continue
            if kind == "shard":
                shard_out[i][k] = res
                print(f"[ray] {label}: shard {k + 1}/{len(shards[i])} done, {len(res['preds'])} sample(s) in "
                      f"{res['seconds']:.0f} s ({done}/{total} tasks, {time.perf_counter() - t0:.0f} s)",
                      file=sys.stderr, flush=True)
                if len(shard_out[i]) == len(shards[i]) and i not in outcomes:
                    try:
                        merged = _merge_in_order(shards[i], shard_out[i], len(doc_ids))
                        merge_audit_logs(shard_dirs[i], by_index[i].saved)
                    except (OSError, RuntimeError) as exc:
                        outcomes[i] = CaseOutcome(i, label, error=f"merging the shards: {type(exc).__name__}: {exc}",
                                                  traceback=traceback.format_exc())
                        continue
                    _remove_empty(shard_dirs[i])
                    ref = finish_task.remote(config_path, cwd, i, data_file, limit, merged[0], merged[1],
                                             case_dirs[i], env)
                    pending[ref] = ("finish", i, 0)
                    total += 1
                continue
            outcomes[i] = CaseOutcome(i, label, res["result"])
            print(f"[ray] {label}: finished ({done}/{total} tasks, {time.perf_counter() - t0:.0f} s)",
                  file=sys.stderr, flush=True)
        return [outcomes[c.index] for c in cases]
    finally:
        if started:
            ray.shutdown()


def _merge_in_order(plan: List[List[int]], out: Dict[int, Dict[str, Any]], n: int) -> tuple:
    """The shards' doc_ids and predictions put back at their samples' original positions."""
    doc_ids: List[Optional[str]] = [None] * n
    preds: List[Any] = [None] * n
    for k, samples in enumerate(plan):
        for pos, i in enumerate(samples):
            doc_ids[i], preds[i] = out[k]["doc_ids"][pos], out[k]["preds"][pos]
    missing = [i for i, p in enumerate(preds) if p is None]
    if missing:
        raise RuntimeError(f"no prediction for samples {missing[:5]} after merging the shards")
    return doc_ids, preds


def _remove_empty(dirs: Sequence[str]) -> None:
    """Shard folders that hold nothing after their audit log moved (others keep e.g. noise stores)."""
    for d in dirs:
        p = Path(d)
        if p.is_dir() and not any(p.rglob("*")):
            shutil.rmtree(p, ignore_errors=True)
