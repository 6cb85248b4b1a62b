#!/usr/bin/env python3
"""Throughput of the runner: the same job serially and on a local Ray cluster, in one invocation, then the
projected time of the full TAB test split (127 documents) per privacy method.

    .venv/bin/python scripts/bench_executors.py                       # the CI job, serial vs Ray with 2 workers
    .venv/bin/python scripts/bench_executors.py -f <benchmarkingjob.yaml> --workers 2 --out /tmp/exec.json

Both runs refuse cached answers (``--no-cache``), so every answer comes from a model run.  Printed: wall time,
samples/min and their ratio, and whether every metric other than the wall-clock ones is equal between the two
runs.  The projection multiplies each method's mean end-to-end latency per document (``latency_mean_ms`` of a
results/ all_rank.csv measured on TAB dev documents, which are as long as the test split's) by 127, serially and
divided by the worker count (Ray runs test cases, not documents, in parallel: the division is the ideal bound
for a job with at least as many test cases as workers).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

REPO = Path(__file__).resolve().parent.parent
DEFAULT_JOB = "examples/TAB/cloud_edge_collaborative_inference_bench/benchmarkingjob_ci.yaml"
DEFAULT_PROJECTION = "examples/TAB/cloud_edge_collaborative_inference_bench/results/tab_privacy_cloud_all/all_rank.csv"
WALL_CLOCK = {"latency_mean_ms", "lo_pct", "ti_pct"}
TAB_TEST_DOCS = 127


def _run(job: Path, workspace: Path, extra: List[str], log: Path) -> float:
    text = job.read_text(encoding="utf-8").replace('workspace: "./workspace"', f'workspace: "{workspace}"')
    copy = workspace.parent / f"{workspace.name}.yaml"
    copy.write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "TAB_DATA_DIR"}
    cmd = [sys.executable, "-m", "cloud_edge_privacy.cli", "run", "-f", str(copy), "--sample", "--no-progress",
           "--no-judge", "--no-cache", *extra]
    print(f"$ {' '.join(cmd)}  (log: {log})", flush=True)
    t0 = time.perf_counter()
    with open(log, "w", encoding="utf-8") as fh:
        rc = subprocess.run(cmd, cwd=REPO, env=env, stdout=fh, stderr=subprocess.STDOUT).returncode
    dt = time.perf_counter() - t0
    if rc != 0:
        sys.exit(f"run failed (exit {rc}); see {log}")
    return dt


def _rank(path: Path) -> List[Dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _metrics(rows: List[Dict[str, str]]) -> List[str]:
    keys = list(rows[0])
    return keys[keys.index("algorithm") + 1:keys.index("paradigm")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-f", "--config", default=DEFAULT_JOB)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--projection-from", default=DEFAULT_PROJECTION,
                    help="an all_rank.csv with latency_mean_ms per method measured on TAB documents")
    ap.add_argument("--out", default=None, help="write the figures as JSON here")
    a = ap.parse_args()
    job = REPO / a.config
    work = Path(tempfile.mkdtemp(prefix="bench-exec-"))
    name = None
    for line in job.read_text(encoding="utf-8").splitlines():
        if line.strip().startswith("name:") and name is None:
            name = line.split(":", 1)[1].strip().strip('"')
    t_serial = _run(job, work / "serial", [], work / "serial.log")
    t_ray = _run(job, work / "ray", ["--executor", "ray", "--workers", str(a.workers)], work / "ray.log")
    serial = _rank(work / "serial" / name / "rank" / "all_rank.csv")
    ray = _rank(work / "ray" / name / "rank" / "all_rank.csv")
    n = sum(int(float(r.get("n_completed") or 0)) + int(float(r.get("n_failed") or 0)) for r in serial)
    key = lambda r: tuple(v for k, v in r.items() if "-" in k)  # noqa: E731 - the hyperparameter columns
    by_ray = {key(r): r for r in ray}
    diffs = [(key(r), m, r[m], by_ray.get(key(r), {}).get(m)) for r in serial for m in _metrics(serial)
             if m not in WALL_CLOCK and r[m] != by_ray.get(key(r), {}).get(m)]
    fig = {"job": a.config, "samples": n, "test_cases": len(serial), "workers": a.workers,
           "serial_s": round(t_serial, 1), "ray_s": round(t_ray, 1),
           "serial_samples_per_min": round(60 * n / t_serial, 2), "ray_samples_per_min": round(60 * n / t_ray, 2),
           "speedup": round(t_serial / t_ray, 3), "metric_differences": len(diffs), "cpus": os.cpu_count()}
    print(json.dumps(fig, indent=1))
    for d in diffs:
        print("DIFF", d)
    proj = Path(REPO / a.projection_from)
    if proj.is_file():
        rows = _rank(proj)
        print(f"\nprojected time of the TAB test split ({TAB_TEST_DOCS} documents) per method, from latency_mean_ms "
              f"in {a.projection_from}:")
        print(f"{'method':<22} {'s/doc':>8} {'serial h':>9} {f'{a.workers} workers h':>12}")
        fig["projection"] = {}
        for r in rows:
            method = r.get("cloudmodel-privacy_method") or r.get("algorithm")
            eps = r.get("cloudmodel-epsilon") or ""
            label = method + (f" eps={eps}" if eps not in ("", "None") else "")
            try:
                s = float(r["latency_mean_ms"]) / 1000.0
            except (KeyError, ValueError):
                continue
            serial_h = s * TAB_TEST_DOCS / 3600
            fig["projection"][label] = {"s_per_doc": round(s, 2), "serial_h": round(serial_h, 2),
                                        "workers_h": round(serial_h / a.workers, 2)}
            print(f"{label:<22} {s:>8.1f} {serial_h:>9.2f} {serial_h / a.workers:>12.2f}")
    if a.out:
        Path(a.out).write_text(json.dumps(fig, indent=1), encoding="utf-8")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
