"""Markdown report of a run: leaderboard (selected rank), failures, config hash and model sha256s."""
from __future__ import annotations

import csv
import json
import math
import os
from typing import Dict, List, Optional

from .hashing import sha256_file, stable_hash
from .models.catalog import MODELS


def _read_rank(path: str) -> List[Dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _config_files(config_path: str) -> Dict[str, str]:
    import yaml

    files = {config_path: sha256_file(config_path)}
    with open(config_path, encoding="utf-8") as fh:
        job = (yaml.safe_load(fh) or {}).get("benchmarkingjob", {})
    paths = [job.get("testenv")] + [a.get("url") for a in (job.get("test_object") or {}).get("algorithms", [])]
    for p in paths:
        if p and os.path.isfile(p):
            files[p] = sha256_file(p)
    return files


def _fmt(x: float, nd: int = 3) -> str:
    return "" if x != x else f"{x:.{nd}f}"


def _apr_section(rows: List[Dict]) -> List[str]:
    if not rows:
        return []
    out = ["## Accuracy preservation (APR) against the unprotected baseline", "",
           "Over the samples that both this test case and the `none` baseline sent to the cloud. Similarity: "
           "cosine (all-MiniLM-L6-v2) of the final answer to the baseline's answer. Judge: the local LLM's "
           "1-10 score of each answer to the unprotected request; APR (judge) = mean with privacy / mean "
           "without. A 0.5B judge is a coarse signal.", "",
           "| test case | n | APR (similarity) mean | sd | judge with | judge without | APR (judge) |",
           "|---|---|---|---|---|---|---|"]
    out += [f"| {r['label']} | {r['n']} | {_fmt(r['apr_similarity'])} | {_fmt(r['apr_similarity_sd'])} | "
            f"{_fmt(r['judge_with'], 2)} | {_fmt(r['judge_without'], 2)} | {_fmt(r['apr_judge'])} |" for r in rows]
    return out + [""]


SUMMARY_METRICS = ("pdr", "sels", "leak_direct", "iar", "iar_coref_leak", "iar_reidentification", "iar_inference",
                   "cpp", "er_di", "er_qi", "token_precision", "edge_ratio", "cloud_tokens", "latency_mean_ms",
                   "lo_pct", "ti_pct", "privacy_failures")


def _summary_section(cases: List[Dict], apr: List[Dict]) -> List[str]:
    """One compact row per test case (all_rank order): its label, the metrics it has, and APR."""
    if not cases:
        return []
    cols = [m for m in SUMMARY_METRICS if any(c["row"].get(m) not in (None, "") for c in cases)]
    by_label = {r["label"]: r for r in apr}
    head = ["test case"] + cols + (["apr_similarity", "apr_judge"] if apr else [])
    out = ["## Summary per test case (all_rank order)", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in cases:
        cells = [c["label"]] + [c["row"].get(m) or "" for m in cols]
        if apr:
            r = by_label.get(c["label"], {})
            base = c["row"].get("cloudmodel-privacy_method") == "none"
            cells += ["1 (reference)", "1 (reference)"] if base else [_fmt(r.get("apr_similarity", math.nan)),
                                                                      _fmt(r.get("apr_judge", math.nan))]
        out.append("| " + " | ".join(str(x) for x in cells) + " |")
    return out + [""]


def write_report(output_dir: str, config_path: Optional[str] = None, data_file: Optional[str] = None,
                 judge: bool = True) -> str:
    """Write ``<output_dir>/report.md`` from the rank files; returns its path.

    ``judge=False`` skips the LLM-judge half of APR (it calls the local model once per cloud answer)."""
    sel = os.path.join(output_dir, "rank", "selected_rank.csv")
    lines = ["# Benchmark report", ""]
    if os.path.isfile(sel):
        rows = _read_rank(sel)
        if rows:
            header = list(rows[0].keys())
            lines += ["## Leaderboard (selected_rank.csv)", "", "| " + " | ".join(header) + " |",
                      "|" + "---|" * len(header)]
            lines += ["| " + " | ".join(r.get(h, "") or "" for h in header) + " |" for r in rows]
            lines.append("")
    from .report_plots import load_cases, make_plots

    cases = load_cases(output_dir)
    apr: List[Dict] = []
    try:
        from .metrics.apr import apr_rows

        apr = apr_rows(cases, judge=None if judge else (lambda request, answer: float("nan")))
    except Exception as exc:  # noqa: BLE001 - the leaderboard must survive a missing embedding or judge model
        lines += [f"(APR not computed: {type(exc).__name__}: {exc})", ""]
    lines += _summary_section(cases, apr) + _apr_section(apr)
    try:
        plots = make_plots(output_dir, apr, cases)
    except Exception as exc:  # a plot must never hide the leaderboard
        plots, lines = [], lines + [f"(plots not drawn: {type(exc).__name__}: {exc})", ""]
    if plots:
        lines += ["## Plots", ""] + [f"![{p[:-4]}]({p})" for p in plots] + [""]
    fail = os.path.join(output_dir, "failures.json")
    if os.path.isfile(fail):
        with open(fail, encoding="utf-8") as fh:
            failures = json.load(fh)
        lines += ["## Failed test cases", ""] + [f"- {f['test_case']}: `{f['error']}`" for f in failures] + [""]
    lines += ["## Provenance", ""]
    if config_path and os.path.isfile(config_path):
        files = _config_files(config_path)
        lines += [f"- config hash: `{stable_hash(files)[:16]}`"] + [f"- `{p}`: sha256 `{h[:16]}`" for p, h in files.items()]
    if data_file and os.path.isfile(data_file):
        lines.append(f"- test data: `{data_file}` (sha256 `{sha256_file(data_file)[:16]}`)")
    lines += [f"- model `{k}`: sha256 `{m.sha256}`" for k, m in MODELS.items()]
    path = os.path.join(output_dir, "report.md")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return path
