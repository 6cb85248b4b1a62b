"""Markdown report of a run: leaderboard (selected rank), failures, config hash and model sha256s."""
from __future__ import annotations

import csv
import json
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


def _apr_section(output_dir: str) -> List[str]:
    """APR: answers with privacy vs the unprotected baseline's answers on the same samples (MiniLM cosine)."""
    from .report_plots import _cases

    cases = _cases(output_dir)
    base = [c for c in cases if c["row"].get("cloudmodel-privacy_method") == "none"]
    if not base:
        return []
    ref = {p["doc_id"]: (p.get("result") or {}).get("answer") for p in base[0]["preds"] if p.get("is_hard_example")}
    from .metrics.semantic import _model

    rows = ["## Accuracy preservation (APR) against the unprotected baseline", "",
            "| test case | samples | APR (answer similarity) |", "|---|---|---|"]
    for c in cases:
        if c is base[0]:
            continue
        pairs = [(ref[p["doc_id"]], (p.get("result") or {}).get("answer")) for p in c["preds"]
                 if p.get("is_hard_example") and ref.get(p["doc_id"]) and (p.get("result") or {}).get("answer")]
        if not pairs:
            continue
        emb = _model().encode([t for pr in pairs for t in pr], normalize_embeddings=True)
        sims = [float(emb[2 * i] @ emb[2 * i + 1]) for i in range(len(pairs))]
        rows.append(f"| {c['label']} | {len(sims)} | {sum(sims) / len(sims):.3f} |")
    return rows + [""]


def write_report(output_dir: str, config_path: Optional[str] = None, data_file: Optional[str] = None) -> str:
    """Write ``<output_dir>/report.md`` from the rank files; returns its path."""
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
    try:
        lines += _apr_section(output_dir)
    except Exception as exc:  # noqa: BLE001 - the leaderboard must survive a missing embedding model
        lines += [f"(APR not computed: {type(exc).__name__}: {exc})", ""]
    try:
        from .report_plots import make_plots

        plots = make_plots(output_dir)
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
