"""Where the test cases of a job run: one after another in this process (``serial``, as Ianvs does) or spread
over a Ray cluster (``ray``), one task per test case.

Each Ray task runs in a worker process of its own: it re-reads the job YAML in the submitting process's working
directory (Ianvs paths are relative to it), builds its own models (the edge LLM and, when no cloud endpoint is
configured, its own local llama.cpp server), writes its predictions, audit lines and metrics under the job's
output folder exactly as a serial run would (one folder per test case), and returns its :class:`CaseResult`;
the driver merges the results into the same rank files.  A multi-node cluster needs the repository at the same
path and a shared file system for the workspace on every node (see the example's README).

Both executors return one :class:`CaseOutcome` per test case, in the job's order.
"""
from __future__ import annotations

import os
import sys
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

from ..errors import ConfigError
from .rank import CaseResult

EXECUTORS = ("serial", "ray")
# passed on to Ray workers: the endpoint and cache settings of the run (names only, values from the driver)
FORWARDED_ENV_PREFIXES = ("CEP_", "TAB_DATA_DIR", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


@dataclass
class CaseOutcome:
    """One test case: its result, or the error that stopped it."""

    index: int
    label: str
    result: Optional[CaseResult] = None
    error: str = ""
    traceback: str = ""


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


def _forwarded_env() -> Dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith(FORWARDED_ENV_PREFIXES)}


def _ray_task(config_path: str, cwd: str, index: int, label: str, data_file: str, limit: Optional[int],
              env: Dict[str, str]) -> Dict[str, Any]:
    """Body of one Ray task (runs in a worker process): the same code path as a serial test case."""
    os.chdir(cwd)
    os.environ.update(env)
    from .ianvs_config import load_benchmarking_job
    from .runner import run_test_case, validate_job

    try:
        job = load_benchmarking_job(config_path)
        validate_job(job)  # imports the module files, so their classes register in this worker
        return {"result": run_test_case(job, job.algorithms[index], data_file, limit, False, label)}
    except Exception as exc:  # noqa: BLE001 - the driver records it as this test case's failure
        return {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}


def run_ray(config_path: str, labels: List[str], data_file: str, limit: Optional[int], address: Optional[str] = None,
            workers: Optional[int] = None) -> List[CaseOutcome]:
    """One Ray task per test case (1 CPU each), on the cluster at ``address`` or on a local one with ``workers``
    CPUs; results in the job's order."""
    try:
        import ray
    except ImportError:
        raise ConfigError("--executor ray needs Ray: pip install 'ray==2.55.1' (scripts/setup.sh installs it)") from None
    started = False
    if not ray.is_initialized():
        kwargs: Dict[str, Any] = {"include_dashboard": False, "logging_level": "WARNING", "log_to_driver": True}
        if address:
            kwargs["address"] = address
        else:
            kwargs.update(num_cpus=workers or os.cpu_count() or 2, object_store_memory=200 * 1024 * 1024)
        ray.init(**kwargs)
        started = True
    try:
        task = ray.remote(num_cpus=1, max_retries=0)(_ray_task)
        env = _forwarded_env()
        cwd = os.getcwd()
        refs = [task.remote(config_path, cwd, i, label, data_file, limit, env) for i, label in enumerate(labels)]
        out = []
        for i, (label, ref) in enumerate(zip(labels, refs)):
            res = ray.get(ref)
            if "result" in res:
                out.append(CaseOutcome(i, label, res["result"]))
            else:
                print(f"FAILED {label}: {res['error']}", file=sys.stderr)
                out.append(CaseOutcome(i, label, error=res["error"], traceback=res["traceback"]))
        return out
    finally:
        if started:
            ray.shutdown()
