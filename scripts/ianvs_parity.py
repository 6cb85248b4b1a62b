#!/usr/bin/env python3
"""Run one benchmarking job under real KubeEdge-Ianvs and under our runner, then compare the rank files.

    .venv/bin/python scripts/ianvs_parity.py                        # the default TAB job
    .venv/bin/python scripts/ianvs_parity.py -f <benchmarkingjob.yaml> --ianvs-venv ../.venv-ianvs
    .venv/bin/python scripts/ianvs_parity.py --compare A/all_rank.csv B/all_rank.csv   # no runs

Both runs start from the repository root (Ianvs resolves every relative path against the CWD). Each gets
its own workspace: a temporary copy of the benchmarkingjob YAML (and of its testenv YAML) is written with
``workspace`` pointing into a scratch folder, so the project's ./workspace is never touched and Ianvs's
append-on-rerun behaviour of all_rank.csv cannot mix runs. The algorithm YAMLs are used as they are.

Real Ianvs is *not* part of this project: it is installed in a separate venv (see
docs/ianvs-contract.md §0) given by --ianvs-venv,
$IANVS_VENV, or .venv-ianvs beside the repository. That venv must also have this project installed.

By default each run gets private response caches ($CEP_CACHE_DIR: a scratch folder whose entries are
symlinks to the real cache's models, wheels and trained detectors, but never to a response cache: no
``edge_cache``, ``cloud_cache`` or any other ``*_cache``), so no run can reuse another run's answers.
``--cache-states fresh warm`` runs each side twice: first with empty caches, then again with the caches the
first run filled (every answer a replay); all runs are compared with the first (Ianvs, fresh).  Answers depend
only on prompt, model and seed (the local llama.cpp server and the edge model evaluate every prompt afresh), so
every metric but the wall-clock ones and the cache-state count must be equal.  --shared-cache turns the
isolation off.

Comparison: rows are matched by their test case (algorithm, paradigm, module names and every
``<type>-<hp>`` column); for each metric of the testenv (and the ``rank`` column) the Ianvs value and
ours must be equal: exactly for integer counts and non-numeric values, |diff| < 1e-9 for other numbers.
Not compared by default (--compare-all compares them too): the wall-clock metrics (latency_mean_ms, lo_pct,
ti_pct, PRISM's completion_time_s and edge_energy_j: they measure this machine's load) and cache_replays (it
counts the cache state by design).
Exit status: 0 all equal, 1 some value or test case differs, 2 a run failed or the setup is wrong.
"""
from __future__ import annotations

import argparse
import csv
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parent.parent
DEFAULT_JOB = "examples/TAB/cloud_edge_collaborative_inference_bench/benchmarkingjob.yaml"
DEFAULT_IANVS_VENV = str(REPO.parent / ".venv-ianvs")  # beside the clone, as docs/ianvs-contract.md §0 installs it
DEFAULT_OUR_CLI = REPO / ".venv" / "bin" / "cloud-edge-privacy"
NON_KEY_COLUMNS = {"rank", "time", "url"}
# measured on this machine at this moment (TAB: latency and overheads; PRISM: completion time and edge energy,
# RAPL or the CPU-time estimate): never equal between two runs; the report prints the machine's load beside them
from cloud_edge_privacy.reporting.machine import WALL_CLOCK  # noqa: E402
CACHE_STATE = ("cache_replays",)
TOL = 1e-9


class ParityError(Exception):
    """A setup or run problem (exit status 2), as opposed to a difference in the results (exit status 1)."""


# ---------------------------------------------------------------------------------------------- YAML
def _yaml():
    try:
        import yaml  # noqa: PLC0415
    except ImportError:
        raise ParityError("PyYAML is not importable by this interpreter; run the script with the project's "
                          f"venv: {REPO}/.venv/bin/python {Path(__file__).relative_to(REPO)}") from None
    return yaml


def _load(path: Path, top: str) -> dict:
    yaml = _yaml()
    with open(path, encoding="utf-8") as fh:
        doc = yaml.safe_load(fh)
    if not isinstance(doc, dict) or not isinstance(doc.get(top), dict):
        raise ParityError(f"{path}: no top-level '{top}:' mapping")
    return doc


def _dump(doc: dict, path: Path) -> None:
    yaml = _yaml()
    with open(path, "w", encoding="utf-8") as fh:
        yaml.safe_dump(doc, fh, sort_keys=False, allow_unicode=True)


def prepare_job(job_yaml: Path, out_dir: Path, workspace: Path, limit: Optional[int]) -> Tuple[Path, str, List[str]]:
    """Write a copy of the job YAML (workspace -> ``workspace``) and of its testenv YAML into ``out_dir``.

    With ``limit``, the testenv's JSONL train/test files are cut to their first ``limit`` lines (copies in
    ``out_dir``), so both runners see the same reduced data.  Returns (job copy, job name, metric names).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    job = _load(job_yaml, "benchmarkingjob")
    bj = job["benchmarkingjob"]
    testenv_path = bj.get("testenv")
    if not testenv_path:
        raise ParityError(f"{job_yaml}: benchmarkingjob.testenv is missing")
    testenv_src = (REPO / testenv_path) if not os.path.isabs(testenv_path) else Path(testenv_path)
    if not testenv_src.is_file():
        raise ParityError(f"testenv file {testenv_path} not found (relative paths resolve against {REPO})")
    testenv = _load(testenv_src, "testenv")
    te = testenv["testenv"]
    metrics = [m.get("name") for m in te.get("metrics") or [] if isinstance(m, dict) and m.get("name")]
    if limit is not None:
        ds = te.get("dataset") or {}
        for key in ("train_data", "test_data"):
            src = ds.get(key)
            if not src:
                continue
            p = (REPO / src) if not os.path.isabs(src) else Path(src)
            if p.suffix != ".jsonl":
                raise ParityError(f"--limit only works with JSONL datasets ({key}: {src})")
            cut = out_dir / f"{key}{p.suffix}"
            with open(p, encoding="utf-8") as fi, open(cut, "w", encoding="utf-8") as fo:
                n = 0
                for line in fi:
                    if n >= limit:
                        break
                    if line.strip():
                        fo.write(line)
                        n += 1
            ds[key] = str(cut)
        if ds.get("test_data_info") and not ds.get("test_data") and not ds.get("test_index"):
            raise ParityError("--limit does not support test_data_info datasets")
    testenv_copy = out_dir / "testenv.yaml"
    _dump(testenv, testenv_copy)
    bj["workspace"] = str(workspace)
    bj["testenv"] = str(testenv_copy)
    job_copy = out_dir / "benchmarkingjob.yaml"
    _dump(job, job_copy)
    return job_copy, str(bj.get("name") or "benchmarkingjob"), metrics


# ---------------------------------------------------------------------------------------------- runs
def is_response_cache(name: str) -> bool:
    """Entries of $CEP_CACHE_DIR that hold answers (never shared between parity runs)."""
    return name.endswith("_cache") or name.startswith("llama_server_")


def private_cache(dest: Path, fresh: bool = True) -> Path:
    """A $CEP_CACHE_DIR that shares models, wheels and trained detectors with the real cache but has response
    caches of its own (emptied first when ``fresh``)."""
    real = Path(os.environ.get("CEP_CACHE_DIR") or Path.home() / ".cache" / "cloud-edge-privacy")
    dest.mkdir(parents=True, exist_ok=True)
    if fresh:
        for entry in dest.iterdir():
            if is_response_cache(entry.name) and entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
    if real.is_dir():
        for entry in real.iterdir():
            if not is_response_cache(entry.name) and not (dest / entry.name).exists():
                (dest / entry.name).symlink_to(entry.resolve())
    return dest


def run(label: str, cmd: Sequence[str], env: Dict[str, str], log: Path, timeout: float, nice: int) -> float:
    """Run ``cmd`` from the repo root, output to ``log``; raise ParityError on failure or timeout."""
    if nice:
        cmd = ["nice", "-n", str(nice), *cmd]
    print(f"[{label}] {' '.join(cmd)}\n[{label}] log: {log}", flush=True)
    t0 = time.perf_counter()
    with open(log, "w", encoding="utf-8") as fh:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            raise ParityError(f"[{label}] timed out after {timeout:.0f} s\n{_tail(log)}") from None
        except KeyboardInterrupt:
            os.killpg(proc.pid, signal.SIGTERM)
            raise
    dt = time.perf_counter() - t0
    if rc != 0:
        raise ParityError(f"[{label}] exited with status {rc} after {dt:.0f} s; last lines of {log}:\n{_tail(log)}")
    print(f"[{label}] finished in {dt:.0f} s", flush=True)
    return dt


def _tail(path: Path, n: int = 40) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join("    " + line for line in lines[-n:])


def ianvs_command(venv: Path) -> List[str]:
    exe = venv / "bin" / "ianvs"
    py = venv / "bin" / "python"
    if not venv.is_dir():
        raise ParityError(f"Ianvs venv {venv} does not exist. Give it with --ianvs-venv or $IANVS_VENV, or create "
                          "it as described in docs/ianvs-contract.md §0 (Sedna wheel, Ianvs "
                          "requirements, `pip install <ianvs checkout>`, torch==2.13.0, then this project).")
    if not exe.is_file() or not os.access(exe, os.X_OK):
        raise ParityError(f"{exe} is missing: Ianvs is not installed in {venv} (pip install <ianvs checkout>)")
    probe = subprocess.run([str(py), "-c", "import sedna, core, cloud_edge_privacy"], cwd="/",
                           capture_output=True, text=True)
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or [""])[-1]
        raise ParityError(f"{py} cannot import sedna, core (Ianvs) and cloud_edge_privacy (this project): {last}")
    return [str(exe)]


def venv_env(bin_dir: Path, cache: Optional[Path]) -> Dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(bin_dir.parent)
    env.pop("PYTHONHOME", None)
    env.setdefault("PYTHONUNBUFFERED", "1")
    if cache is not None:
        env["CEP_CACHE_DIR"] = str(cache)
    return env


# ---------------------------------------------------------------------------------------------- compare
def read_rank(path: Path) -> Tuple[List[str], List[Dict[str, str]]]:
    if not path.is_file():
        raise ParityError(f"rank file {path} was not written")
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        rows = list(reader)
        return list(reader.fieldnames or []), rows


def _num(s: str) -> Optional[float]:
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def _is_int(s: str) -> bool:
    try:
        int(s.strip())
        return True
    except (AttributeError, ValueError):
        return False


def values_equal(a: str, b: str) -> bool:
    a, b = (a or "").strip(), (b or "").strip()
    if _is_int(a) and _is_int(b):
        return int(a) == int(b)  # counts: exact
    fa, fb = _num(a), _num(b)
    if fa is not None and fb is not None:
        if math.isnan(fa) or math.isnan(fb):
            return math.isnan(fa) and math.isnan(fb)
        if math.isinf(fa) or math.isinf(fb):
            return fa == fb
        return abs(fa - fb) < TOL
    missing = {"", "nan", "none"}
    if a.lower() in missing and b.lower() in missing:
        return True
    return a == b


def compare(ianvs_csv: Path, ours_csv: Path, metrics: Optional[List[str]], ignore: Sequence[str]) -> int:
    """Print the parity table; return the number of differences (values, missing rows, column sets)."""
    cols_i, rows_i = read_rank(ianvs_csv)
    cols_o, rows_o = read_rank(ours_csv)
    problems = 0
    if metrics is None:  # --compare without a job: metrics = columns between 'algorithm' and 'paradigm'
        def between(cols: List[str]) -> List[str]:
            try:
                return cols[cols.index("algorithm") + 1: cols.index("paradigm")]
            except ValueError:
                return []
        metrics = list(dict.fromkeys(between(cols_i) + between(cols_o)))
    metrics = [m for m in metrics if m not in ignore]
    for m in metrics:
        for label, cols in (("Ianvs", cols_i), ("ours", cols_o)):
            if m not in cols:
                print(f"DIFF: metric column '{m}' missing from {label}'s all_rank.csv")
                problems += 1
    metric_set = set(metrics) | set(ignore)
    key_i = [c for c in cols_i if c not in metric_set and c not in NON_KEY_COLUMNS]
    key_o = [c for c in cols_o if c not in metric_set and c not in NON_KEY_COLUMNS]
    if set(key_i) != set(key_o):
        print(f"DIFF: test-case columns differ: only Ianvs {sorted(set(key_i) - set(key_o))}, "
              f"only ours {sorted(set(key_o) - set(key_i))}")
        problems += 1
    key_cols = [c for c in key_i if c in key_o]
    if set(cols_i) - set(cols_o) - set(ignore) or set(cols_o) - set(cols_i) - set(ignore):
        print(f"note: column sets differ: only Ianvs {sorted(set(cols_i) - set(cols_o))}, "
              f"only ours {sorted(set(cols_o) - set(cols_i))}")
    if cols_i != cols_o and set(cols_i) == set(cols_o):
        print("note: same columns, different order (Ianvs orders metric columns as a set)")

    def key(row: Dict[str, str]) -> Tuple[str, ...]:
        return tuple((row.get(c) or "").strip() for c in key_cols)

    by_i: Dict[Tuple[str, ...], List[Dict[str, str]]] = {}
    by_o: Dict[Tuple[str, ...], List[Dict[str, str]]] = {}
    for rows, by in ((rows_i, by_i), (rows_o, by_o)):
        for r in rows:
            by.setdefault(key(r), []).append(r)
    for label, by in (("Ianvs", by_i), ("ours", by_o)):
        dups = {k: len(v) for k, v in by.items() if len(v) > 1}
        if dups:
            print(f"DIFF: {label}'s all_rank.csv has repeated test cases ({sum(dups.values())} rows for "
                  f"{len(dups)} cases): a stale rank file appended to?")
            problems += 1
    # the columns that identify a test case in the table: those whose value varies between rows
    all_keys = list(dict.fromkeys(list(by_i) + list(by_o)))
    varying = [c for j, c in enumerate(key_cols) if len({k[j] for k in all_keys}) > 1] or key_cols[:1]
    idx = [key_cols.index(c) for c in varying]

    def label_of(k: Tuple[str, ...]) -> str:
        return ", ".join(f"{key_cols[j]}={k[j]}" for j in idx)

    compared = ["rank", *metrics]
    table = []
    legend = []
    for k in all_keys:
        ri, ro = (by_i.get(k) or [None])[0], (by_o.get(k) or [None])[0]
        if ri is None or ro is None:
            print(f"DIFF: test case [{label_of(k)}] only in {'ours' if ri is None else 'Ianvs'}")
            problems += 1
            continue
        case = f"#{len(legend) + 1}"
        legend.append(f"{case}: {label_of(k)}")
        for m in compared:
            vi, vo = ri.get(m, ""), ro.get(m, "")
            eq = values_equal(vi, vo)
            problems += 0 if eq else 1
            table.append((case, m, vi, vo, "yes" if eq else "NO"))
    print("\ntest cases (the test-case columns whose values differ between rows):")
    for line in legend:
        print("  " + line)
    header = ("case", "metric", "Ianvs", "ours", "equal?")
    widths = [min(max(len(str(r[i])) for r in [header, *table]), 40) for i in range(5)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    print()
    print(fmt.format(*header))
    print(fmt.format(*("-" * w for w in widths)))
    for r in table:
        print(fmt.format(*(str(c) if len(str(c)) <= 40 else str(c)[:37] + "..." for c in r)))
    shown = [m for m in ignore if m in cols_i or m in cols_o]
    if shown:
        print(f"\n(not compared: {', '.join(shown)})")
    n_cases = len([k for k in all_keys if k in by_i and k in by_o])
    print(f"\n{n_cases} test case(s) in both files; {problems} difference(s)")
    return problems


def side_by_side(csvs: Dict[str, Path], metrics: Optional[List[str]], ignore: Sequence[str]) -> str:
    """One markdown table of every compared metric in every run: | test case | metric | run 1 | run 2 | ... |
    (rows matched by the same test-case columns as :func:`compare`; the first file's test cases)."""
    tables = {label: read_rank(path) for label, path in csvs.items()}
    cols0, rows0 = next(iter(tables.values()))
    if metrics is None:
        metrics = cols0[cols0.index("algorithm") + 1: cols0.index("paradigm")] if "paradigm" in cols0 else []
    shown = ["rank", *[m for m in metrics if m not in ignore]]
    key_cols = [c for c in cols0 if c not in set(metrics) | set(ignore) | NON_KEY_COLUMNS]
    varying = [c for c in key_cols if len({r.get(c) for r in rows0}) > 1] or key_cols[:1]
    if "algorithm" in varying and len({r.get("algorithm") for r in rows0}) == len(rows0):
        varying = ["algorithm"]  # one test case per algorithm (e.g. PRISM): its name says which

    def key(r: Dict[str, str]) -> Tuple[str, ...]:
        return tuple((r.get(c) or "").strip() for c in key_cols)

    by = {label: {key(r): r for r in rows} for label, (_, rows) in tables.items()}
    lines = ["| test case | metric | " + " | ".join(csvs) + " | equal |",
             "|---|---|" + "---|" * len(csvs) + "---|"]
    for r in rows0:
        case = ", ".join(f"{c.split('-', 1)[-1]}={r.get(c)}" for c in varying)
        for m in shown:
            vals = [(by[label].get(key(r)) or {}).get(m, "(missing)") for label in csvs]
            same = all(values_equal(vals[0], v) for v in vals[1:])
            lines.append(f"| {case} | {m} | " + " | ".join(vals) + f" | {'yes' if same else 'NO'} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- main
def _abs(path: str) -> Path:
    return Path(path) if os.path.isabs(path) else REPO / path


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-f", "--config", default=None,
                    help=f"benchmarkingjob YAML, relative to the repo root (default: {DEFAULT_JOB})")
    ap.add_argument("--ianvs-venv", default=None,
                    help=f"venv with real Ianvs + Sedna + this project (else $IANVS_VENV, else {DEFAULT_IANVS_VENV})")
    ap.add_argument("--our-cli", default=str(DEFAULT_OUR_CLI), help="our runner's executable (cloud-edge-privacy)")
    ap.add_argument("--work-dir", default=None, help="scratch folder for YAML copies, workspaces and logs "
                    "(default: a new temporary folder, kept for inspection)")
    ap.add_argument("--timeout", type=float, default=1200, help="seconds allowed per run (default 1200)")
    ap.add_argument("--limit", type=int, default=None, help="cut the testenv's JSONL data to its first N samples")
    ap.add_argument("--ignore", action="append", default=[], metavar="METRIC",
                    help="a metric not to compare (e.g. a wall-clock one); repeatable")
    ap.add_argument("--cache-states", nargs="+", choices=["fresh", "warm"], default=["fresh"],
                    help="run each side with empty response caches (fresh) and/or again with the caches its first "
                         "run filled (warm); every run is compared with Ianvs-fresh (default: fresh)")
    ap.add_argument("--compare-all", action="store_true",
                    help="also compare the wall-clock metrics and cache_replays (not compared by default)")
    ap.add_argument("--shared-cache", action="store_true",
                    help="let both runs share the real response cache (the second run reuses cloud answers)")
    ap.add_argument("--nice", type=int, default=10, help="nice level of the runs (0: none; default 10)")
    ap.add_argument("--only", choices=["ianvs", "ours"], default=None,
                    help="run only one side (no comparison); for checking a setup")
    ap.add_argument("--compare", nargs="+", metavar="CSV", default=None,
                    help="only compare existing all_rank.csv files: the first (e.g. Ianvs's) with each other one, "
                         "then all side by side")
    args = ap.parse_args(argv)

    try:
        if args.compare:
            metrics = None  # without -f: the columns between 'algorithm' and 'paradigm'
            if args.config:
                tmp = Path(tempfile.mkdtemp(prefix="ianvs-parity-"))
                _, _, metrics = prepare_job(_abs(args.config), tmp, tmp / "workspace", None)
                shutil.rmtree(tmp, ignore_errors=True)
            ignore = list(args.ignore) + ([] if args.compare_all else [m for m in WALL_CLOCK + CACHE_STATE
                                                                       if m not in args.ignore])
            if len(args.compare) < 2:
                raise ParityError("--compare needs at least two all_rank.csv files")
            paths = [Path(c) for c in args.compare]
            total = sum(compare(paths[0], other, metrics, ignore) for other in paths[1:])
            if len(paths) > 2:
                common = Path(os.path.commonpath([str(p.resolve()) for p in paths]))
                names = [p.resolve().relative_to(common).parts[0] if p.resolve() != common else str(p) for p in paths]
                if len(set(names)) < len(names):
                    names = [f"#{i + 1}" for i in range(len(paths))]
                print("\n" + side_by_side(dict(zip(names, paths)), metrics, ignore))
            return 1 if total else 0

        args.config = args.config or DEFAULT_JOB
        job_yaml = _abs(args.config)
        if not job_yaml.is_file():
            raise ParityError(f"{args.config}: no such benchmarkingjob YAML (relative to {REPO})")
        venv = Path(args.ianvs_venv or os.environ.get("IANVS_VENV") or DEFAULT_IANVS_VENV)
        ours_cli = Path(args.our_cli)
        if args.only != "ours":
            ianvs_cmd = ianvs_command(venv)
        if args.only != "ianvs" and not (ours_cli.is_file() and os.access(ours_cli, os.X_OK)):
            raise ParityError(f"our runner {ours_cli} is missing (run scripts/setup.sh, or give --our-cli)")
        work = Path(args.work_dir or tempfile.mkdtemp(prefix="ianvs-parity-")).resolve()
        work.mkdir(parents=True, exist_ok=True)
        print(f"job: {job_yaml}\nscratch: {work}", flush=True)

        csvs: Dict[str, Path] = {}
        metrics: List[str] = []
        sides = [s for s in ("ianvs", "ours") if not args.only or args.only == s]
        copies: Dict[str, Tuple[Path, str, List[str]]] = {}
        runs = [(state, side) for state in args.cache_states for side in sides]
        for state, side in runs:  # all copies up front: a testenv edited during a run must not split them
            ws = work / f"{side}-{state}" / "workspace"
            if ws.exists():
                shutil.rmtree(ws)  # Ianvs appends to an existing all_rank.csv
            copies[f"{side}-{state}"] = prepare_job(job_yaml, work / f"{side}-{state}", ws, args.limit)
        for state, side in runs:
            label = f"{side}-{state}"
            ws = work / label / "workspace"
            job_copy, name, metrics = copies[label]
            # one cache folder per side: "warm" reuses what that side's "fresh" run filled
            cache = None if args.shared_cache else private_cache(work / side / "cache", fresh=(state == "fresh"))
            if side == "ianvs":
                env = venv_env(venv / "bin", cache)
                run(label, [*ianvs_cmd, "-f", str(job_copy)], env, work / f"{label}.log", args.timeout, args.nice)
            else:
                env = venv_env(ours_cli.parent, cache)
                env.pop("TAB_DATA_DIR", None)
                run(label, [str(ours_cli), "run", "-f", str(job_copy), "--sample", "--no-progress", "--no-judge"], env,
                    work / f"{label}.log", args.timeout, args.nice)
            csvs[label] = ws / name / "rank" / "all_rank.csv"
            print(f"[{label}] rank file: {csvs[label]}", flush=True)
        if args.only:
            for label in csvs:
                read_rank(csvs[label])
            return 0
        ignore = list(args.ignore) + ([] if args.compare_all else [m for m in WALL_CLOCK + CACHE_STATE
                                                                   if m not in args.ignore])
        labels = list(csvs)
        total = 0
        for other in labels[1:]:
            print(f"\n=== {labels[0]} vs {other} ===")
            total += compare(csvs[labels[0]], csvs[other], metrics, ignore)
        if len(labels) > 2:
            print("\nall runs side by side:\n" + side_by_side(csvs, metrics, ignore))
        print(f"\n{len(labels)} runs ({', '.join(labels)}); {total} difference(s) in all")
        return 1 if total else 0
    except ParityError as e:
        print(f"ianvs_parity: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
