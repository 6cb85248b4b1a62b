#!/usr/bin/env python3
"""Throughput of the runner: the same job serially, on a local Ray cluster with one task per test case, and on
Ray with each test case's samples split into shard tasks, in one invocation; then the projected time of the full
TAB test split (127 documents) per privacy method.

    .venv/bin/python scripts/bench_executors.py --data-dir data/tab   # the CI job; serial vs Ray (2 workers), 3 TAB docs
    .venv/bin/python scripts/bench_executors.py -f <benchmarkingjob.yaml> --workers 2 --shard-samples 2 --out x.json
    .venv/bin/python scripts/bench_executors.py --project-docs 0    # throughput only
    .venv/bin/python scripts/bench_executors.py --serial-cores all 1   # serial on all cores and pinned to one

Ray tasks each claim one core (their llama.cpp runs one thread); a serial run on all usable cores runs llama.cpp
with that many threads, which on a machine loaded by other work stalls at its thread barriers.  ``--serial-cores
1`` pins the serial baseline (and the projection run) to one core, the like-for-like baseline of one Ray task.

Every run refuses cached answers (``--no-cache``), so every answer comes from a model run now.  Printed: the
machine's load (``uptime``) before and after, wall time and samples/min of each run and their ratio to the
serial run of the same invocation (on a shared machine the ratios are what counts), and a table of every
metric other than the wall-clock ones in the three runs (they must be equal: the exit status is 1 otherwise).

Projection: the same job runs serially on the first ``--project-docs`` documents of TAB dev (``--data-dir``,
else ``$TAB_DATA_DIR``, else the repository's data/tab), which are as long as the test split's (the embedded
sample's documents are ~85 words, TAB's ~630), with the whole test case timed (models, inference, metrics: from
the finishing times in all_rank.csv).  Seconds per document x 127 is the serial projection (it scales the
per-test-case model loading with the documents, so it errs high); divided by the Ray runs' measured speed-ups
it is their projection.
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
from datetime import datetime
from pathlib import Path
from typing import Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from ianvs_parity import WALL_CLOCK  # noqa: E402 - the metrics that measure the machine (scripts/ is on sys.path)
DEFAULT_JOB = "examples/TAB/cloud_edge_collaborative_inference_bench/benchmarkingjob_ci.yaml"
TAB_TEST_DOCS = 127
Row = Dict[str, str]


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _job_copy(job: Path, workspace: Path) -> Tuple[Path, str]:
    import yaml

    doc = yaml.safe_load(job.read_text(encoding="utf-8"))
    doc["benchmarkingjob"]["workspace"] = str(workspace)
    copy = workspace.parent / f"{workspace.name}.yaml"
    copy.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return copy, doc["benchmarkingjob"]["name"]


def _pinned(cores: Optional[int]):  # type: ignore[no-untyped-def]
    """A preexec_fn that pins the run (and the model servers it starts) to its first ``cores`` usable cores."""
    if not cores:
        return None
    mine = sorted(os.sched_getaffinity(0))[:cores]
    return lambda: os.sched_setaffinity(0, mine)


def _run(job: Path, workspace: Path, extra: List[str], log: Path,
         cores: Optional[int] = None) -> Tuple[float, List[Row], float]:
    """One run of the CLI (pinned to ``cores`` cores when given); returns wall time, rank rows and the start time."""
    copy, name = _job_copy(job, workspace)
    env = {k: v for k, v in os.environ.items() if k != "TAB_DATA_DIR"}
    cmd = [sys.executable, "-m", "cloud_edge_privacy.cli", "run", "-f", str(copy), "--no-progress",
           "--no-judge", "--no-cache", *extra]
    print(f"$ {' '.join(cmd)}\n  log: {log}", flush=True)
    start = time.time()
    t0 = time.perf_counter()
    with open(log, "w", encoding="utf-8") as fh:
        rc = subprocess.run(cmd, cwd=REPO, env=env, stdout=fh, stderr=subprocess.STDOUT,
                            preexec_fn=_pinned(cores)).returncode
    dt = time.perf_counter() - t0
    if rc != 0:
        sys.exit(f"run failed (exit {rc}); see {log}")
    print(f"  {dt:.0f} s", flush=True)
    with open(workspace / name / "rank" / "all_rank.csv", newline="", encoding="utf-8") as fh:
        return dt, list(csv.DictReader(fh)), start


def _metrics(rows: List[Row]) -> List[str]:
    keys = list(rows[0])
    return keys[keys.index("algorithm") + 1:keys.index("paradigm")]


def _case(r: Row) -> Tuple[str, ...]:
    return (r["algorithm"],) + tuple(v for k, v in r.items() if "-" in k)  # the hyperparameter columns


def _label(r: Row) -> str:
    method = r.get("cloudmodel-privacy_method") or r["algorithm"]
    eps = r.get("cloudmodel-epsilon") or ""
    return method + (f" eps={eps}" if eps not in ("", "None") else "")


def equality_table(runs: Dict[str, List[Row]]) -> Tuple[List[List[str]], int]:
    """Rows (test case, metric, value per run, equal?) for every non-wall-clock metric; and the difference count."""
    names = list(runs)
    base = runs[names[0]]
    by = {n: {_case(r): r for r in rows} for n, rows in runs.items()}
    table, diffs = [], 0
    for r in base:
        for m in _metrics(base):
            if m in WALL_CLOCK:
                continue
            vals = [by[n].get(_case(r), {}).get(m, "(missing)") for n in names]
            same = len(set(vals)) == 1
            diffs += not same
            table.append([_label(r), m, *vals, "yes" if same else "NO"])
    return table, diffs


def case_seconds(rows: List[Row], start: float) -> Dict[str, float]:
    """Seconds each test case of a serial run took, from the finishing times in all_rank.csv (1 s resolution)."""
    done = sorted((datetime.strptime(r["time"], "%Y-%m-%d %H:%M:%S").timestamp(), _label(r)) for r in rows)
    out, prev = {}, start
    for t, label in done:
        out[label] = max(t - prev, 0.0)
        prev = t
    return out


def _print_table(header: List[str], rows: List[List[str]]) -> None:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print("| " + " | ".join(str(x).ljust(w) for x, w in zip(r, widths)) + " |")


def _tab_dir(arg: Optional[str]) -> Optional[Path]:
    """--data-dir, else $TAB_DATA_DIR, else the TAB subset shipped in the repository (data/tab)."""
    d = Path(arg or os.environ.get("TAB_DATA_DIR") or REPO / "data" / "tab")
    d = d if d.is_absolute() else REPO / d
    return d if (d / "echr_dev.json").is_file() else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-f", "--config", default=DEFAULT_JOB)
    ap.add_argument("--workers", type=int, default=2, help="CPUs of the local Ray cluster (default 2)")
    ap.add_argument("--shard-samples", default=None, help="shards per test case in the sharded run (default: --workers)")
    ap.add_argument("--serial-cores", nargs="+", default=["all"], metavar="all|N",
                    help="serial run(s): on all usable cores (as a user runs it; llama.cpp then runs that many "
                         "threads) and/or pinned to N cores; the projection uses the last (default: all)")
    ap.add_argument("--project-docs", type=int, default=3,
                    help="TAB dev documents for the projection run (0: no projection; default 3)")
    ap.add_argument("--data-dir", default=None,
                    help="TAB folder with echr_dev.json (else $TAB_DATA_DIR, else data/tab)")
    ap.add_argument("--out", default=None, help="write the figures as JSON here")
    a = ap.parse_args()
    job = REPO / a.config
    shards = a.shard_samples or str(a.workers)
    work = Path(tempfile.mkdtemp(prefix="bench-exec-"))
    fig: Dict[str, object] = {"job": a.config, "workers": a.workers, "shard_samples": shards, "cpus": os.cpu_count(),
                              "uptime_before": uptime()}
    print(f"load before: {fig['uptime_before']}\nscratch: {work}", flush=True)
    serial_cores = {("serial" if c == "all" else f"serial, {c} core(s)"): (None if c == "all" else int(c))
                    for c in a.serial_cores}
    modes: Dict[str, Tuple[List[str], Optional[int]]] = {k: ([], c) for k, c in serial_cores.items()}
    modes[f"ray {a.workers} workers, task per test case"] = (["--executor", "ray", "--workers", str(a.workers)], None)
    modes[f"ray {a.workers} workers, {shards} shards per test case"] = (
        ["--executor", "ray", "--workers", str(a.workers), "--shard-samples", shards], None)
    walls: Dict[str, float] = {}
    ranks: Dict[str, List[Row]] = {}
    for i, (name, (extra, cores)) in enumerate(modes.items()):
        walls[name], ranks[name], _ = _run(job, work / f"run{i}", ["--sample", *extra], work / f"run{i}.log", cores)
    base = list(serial_cores)[-1]  # the speed-ups are against the last serial variant
    n = sum(int(float(r.get("n_completed") or 0)) + int(float(r.get("n_failed") or 0)) for r in ranks[base])
    t_serial = walls[base]
    fig["samples"] = n
    fig["test_cases"] = len(ranks[base])
    fig["speedups_against"] = base
    fig["runs"] = {name: {"wall_s": round(w, 1), "samples_per_min": round(60 * n / w, 2),
                          "speedup_vs_serial": round(t_serial / w, 3)} for name, w in walls.items()}
    table, diffs = equality_table(ranks)
    fig["metric_differences"] = diffs
    fig["uptime_after_runs"] = uptime()
    print(f"\n{fig['test_cases']} test cases x {n // max(1, fig['test_cases'])} samples = {n} samples per run; "
          f"load after: {fig['uptime_after_runs']}\n")
    _print_table(["run", "wall s", "samples/min", f"speed-up vs {base}"],
                 [[k, f"{v['wall_s']:.0f}", f"{v['samples_per_min']:.2f}", f"{v['speedup_vs_serial']:.2f}"]
                  for k, v in fig["runs"].items()])  # type: ignore[union-attr]
    print(f"\nevery non-wall-clock metric, per test case ({diffs} difference(s)):")
    _print_table(["test case", "metric", *modes, "equal?"], table)
    fig["equality"] = table

    tab = _tab_dir(a.data_dir)
    if a.project_docs > 0 and tab is None:
        print("\nno projection: no echr_dev.json in --data-dir, $TAB_DATA_DIR or data/tab")
    elif a.project_docs > 0:
        wall, rows, start = _run(job, work / "projection",
                                 ["--data-dir", str(tab), "--split", "dev", "--limit", str(a.project_docs)],
                                 work / "projection.log", serial_cores[base])
        per_case = case_seconds(rows, start)
        speedups = {k: v["speedup_vs_serial"] for k, v in fig["runs"].items()  # type: ignore[union-attr]
                    if k not in serial_cores}
        proj: Dict[str, Dict[str, float]] = {}
        out_rows = []
        for label, s in per_case.items():
            per_doc = s / a.project_docs
            serial_h = per_doc * TAB_TEST_DOCS / 3600
            proj[label] = {"s_per_doc": round(per_doc, 1), "serial_h": round(serial_h, 2),
                           **{f"{k}_h": round(serial_h / v, 2) for k, v in speedups.items()}}
            out_rows.append([label, f"{per_doc:.0f}", f"{serial_h:.2f}",
                             *(f"{serial_h / v:.2f}" for v in speedups.values())])
        fig["projection"] = {"docs": a.project_docs, "wall_s": round(wall, 1), "per_method": proj,
                             "uptime_after": uptime()}
        print(f"\nprojected time of the TAB test split ({TAB_TEST_DOCS} documents), from the whole test case's time "
              f"on the first {a.project_docs} TAB dev documents ({base}, --no-cache, {wall:.0f} s), Ray divided by "
              f"the speed-ups measured above; load after: {fig['projection']['uptime_after']}:")  # type: ignore[index]
        _print_table(["method", "s/doc", f"{base} h", *(f"{k} h" for k in speedups)], out_rows)
    fig["uptime_after"] = uptime()
    if a.out:
        Path(a.out).write_text(json.dumps(fig, indent=1), encoding="utf-8")
        print(f"\nfigures: {a.out}")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
