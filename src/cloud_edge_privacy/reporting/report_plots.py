"""Plots for report.md, made from each test case's predictions.jsonl and the rank file (matplotlib, PNG)."""
from __future__ import annotations

import csv
import json
import math
import os
from collections import defaultdict
from typing import Dict, List, Optional

STAGES = ("profiling", "edge_generation", "detection", "desensitization", "cloud_call", "restoration", "refinement")


def _hp_columns(row: Dict[str, str]) -> List[str]:
    """The hyperparameter columns of an all_rank row (``<module type>-<name>``, e.g. ``cloudmodel-epsilon``)."""
    modules = {k for k in row if "-" not in k}
    return [k for k in row if "-" in k and k.split("-", 1)[0] in modules]


def case_labels(rows: List[Dict[str, str]]) -> List[str]:
    """Name each test case by what differs between them: the privacy method and ε first, then any other
    hyperparameter that varies (``name=value``), prefixed by the algorithm when there are several."""
    hps = [k for k in dict.fromkeys(k for r in rows for k in _hp_columns(r))
           if len({r.get(k, "") for r in rows}) > 1 and k not in ("cloudmodel-privacy_method", "cloudmodel-epsilon")]
    several_algos = len({r.get("algorithm") for r in rows}) > 1
    labels = []
    for r in rows:
        parts = [r.get("cloudmodel-privacy_method") or r.get("algorithm", "?")]
        if r.get("cloudmodel-epsilon") not in (None, "", "None"):
            parts.append(f"ε={r['cloudmodel-epsilon']}")
        parts += [f"{k.split('-', 1)[1]}={r.get(k, '')}" for k in hps]
        label = " ".join(parts)
        labels.append(f"{r['algorithm']}: {label}" if several_algos else label)
    seen: Dict[str, int] = defaultdict(int)
    for lab in labels:
        seen[lab] += 1
    count: Dict[str, int] = defaultdict(int)
    out = []
    for lab in labels:  # identical configurations (repeats) get a run number
        count[lab] += 1
        out.append(f"{lab} #{count[lab]}" if seen[lab] > 1 else lab)
    return out


def load_cases(output_dir: str) -> List[Dict]:
    """Each test case of a finished job: its label, its all_rank row, its predictions and its ``test_case.json``
    (what either runner recorded in the test case's folder; see bench/case_record.py)."""
    rank = os.path.join(output_dir, "rank", "all_rank.csv")
    if not os.path.isfile(rank):
        return []
    with open(rank, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    cases = []
    for r, label in zip(rows, case_labels(rows)):
        preds_file = os.path.join(r["url"], "predictions.jsonl")
        preds = []
        if os.path.isfile(preds_file):
            with open(preds_file, encoding="utf-8") as fh:
                preds = [json.loads(line) for line in fh if line.strip()]
        meta_file = os.path.join(r["url"], "test_case.json")
        meta = {}
        if os.path.isfile(meta_file):
            with open(meta_file, encoding="utf-8") as fh:
                meta = json.load(fh)
        cases.append({"label": label, "row": r, "preds": preds, "meta": meta})
    return cases


def _f(x: str) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def _stacked_barh(plt, path: str, labels: List[str], series: Dict[str, List[float]], xlabel: str, title: str,
                  colors: Dict[str, str] | None = None) -> None:
    fig, ax = plt.subplots(figsize=(9, 0.4 * len(labels) + 2.2))
    left = [0.0] * len(labels)
    pos = list(range(len(labels)))
    drawn = False
    for name, values in series.items():
        if any(values):
            ax.barh(pos, values, left=left, label=name, color=(colors or {}).get(name))
            left = [a + b for a, b in zip(left, values)]
            drawn = True
    ax.set_yticks(pos, labels, fontsize=8)
    ax.invert_yaxis()  # first test case on top, as in the leaderboard
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    if drawn:  # the legend sits outside the bars, so it never hides one
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    else:  # e.g. every answer replayed from the response cache: no time was measured in this run
        ax.text(0.5, 0.5, "nothing measured in this run (all values are zero or missing)", ha="center",
                va="center", transform=ax.transAxes, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _method_and_eps(row: Dict[str, str]) -> tuple:
    eps = row.get("cloudmodel-epsilon")
    return row.get("cloudmodel-privacy_method") or row.get("algorithm", "?"), ("" if eps in (None, "", "None") else eps)


def _eps_value(eps: str) -> float:
    return _f(eps) if eps else math.nan


def _privacy_utility(plt, path: str, cases: List[Dict], apr: List[Dict]) -> bool:
    """SELS and TRIR against APR (the baseline sits at APR 1), SELS against 1 - CPP: colour = method,
    marker size = ε (legend), so no text is drawn next to the points and nothing can overlap."""
    apr_by_label = {r["label"]: r["apr_similarity"] for r in apr}
    apr_of = lambda c: 1.0 if _method_and_eps(c["row"])[0] == "none" else apr_by_label.get(c["label"], math.nan)  # noqa: E731
    sels_x = ("sels", "SELS: sensitivity-weighted leakage (lower is more private)")
    panels = []
    if apr_by_label:
        panels.append((sels_x, "APR: answer similarity to the unprotected answer", apr_of))
        if any(not math.isnan(_f(c["row"].get("iar_trir"))) for c in cases):
            panels.append((("iar_trir", "TRIR: share of sent texts re-identified (lower is more private)"),
                           "APR: answer similarity to the unprotected answer", apr_of))
    if any(not math.isnan(_f(c["row"].get("cpp"))) for c in cases):
        panels.append((sels_x, "similarity of the sent text to the original (1 - CPP)",
                       lambda c: 1.0 - _f(c["row"].get("cpp"))))
    if not panels:
        return False
    fig, axes = plt.subplots(1, len(panels), figsize=(5.6 * len(panels) + 2.2, 4.8), squeeze=False)
    methods = list(dict.fromkeys(_method_and_eps(c["row"])[0] for c in cases))
    colors = {m: plt.get_cmap("tab10")(i % 10) for i, m in enumerate(methods)}
    eps_levels = sorted({_eps_value(_method_and_eps(c["row"])[1]) for c in cases} - {math.nan},
                        key=lambda e: e)
    eps_levels = [e for e in eps_levels if not math.isnan(e)]
    size = lambda eps: 30.0 if math.isnan(eps) else 25.0 + 130.0 * (eps_levels.index(eps) + 1) / len(eps_levels)  # noqa: E731
    drawn = False
    for ax, ((xkey, xlabel), ylabel, y_of) in zip(axes[0], panels):
        for c in cases:
            x, y = _f(c["row"].get(xkey)), y_of(c)
            if math.isnan(x) or math.isnan(y):
                continue
            method, eps = _method_and_eps(c["row"])
            ax.scatter(x, y, color=colors[method], s=size(_eps_value(eps)), alpha=0.6, edgecolors="black",
                       linewidths=0.4)
            drawn = True
        ax.set_xlabel(xlabel, fontsize=9)
        ax.set_ylabel(ylabel, fontsize=9)
        ax.grid(alpha=0.3)
    handles = [plt.Line2D([], [], marker="o", linestyle="", color=colors[m], label=m) for m in methods]
    handles += [plt.scatter([], [], s=size(e), color="lightgray", edgecolors="black", linewidths=0.4,
                            label=f"ε={e:g}") for e in eps_levels]
    fig.legend(handles=handles, loc="center right", fontsize=7, frameon=False)
    fig.suptitle("Privacy-utility frontier (colour: method, size: ε)")
    fig.tight_layout(rect=(0, 0, 1 - 1.9 / (5.6 * len(panels) + 2.2), 1))
    if drawn:
        fig.savefig(path, dpi=110)
    plt.close(fig)
    return drawn


def make_plots(output_dir: str, apr: Optional[List[Dict]] = None, cases: Optional[List[Dict]] = None) -> List[str]:
    """Write latency_breakdown.png, routes.png and privacy_utility.png; returns their file names.

    ``apr`` are the rows of :func:`cloud_edge_privacy.metrics.apr.apr_rows` for the same job; ``cases``
    the job's :func:`load_cases` when the caller has read them already."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = load_cases(output_dir) if cases is None else cases
    if not cases:
        return []
    made = []
    labels = [c["label"] for c in cases]

    # 1. mean time per stage per test case: every stage the results recorded (the known ones first), over the
    # samples that ran now (answers replayed from the response cache carry an earlier run's timings)
    parts = lambda p: [x for x in (p.get("edge_result"), p.get("cloud_result")) if isinstance(x, dict)]  # noqa: E731
    seen = [st for c in cases for p in c["preds"] for x in parts(p) for st in (x.get("timings_ms") or {})]
    stages = [st for st in STAGES if st in seen] + [st for st in dict.fromkeys(seen) if st not in STAGES]
    means = defaultdict(list)
    for c in cases:
        live = [p for p in c["preds"] if not p.get("replayed")]
        n = max(1, len(live))
        for st in stages:
            total = sum(float((x.get("timings_ms") or {}).get(st, 0.0)) for p in live for x in parts(p))
            means[st].append(total / n / 1000.0)
    _stacked_barh(plt, os.path.join(output_dir, "latency_breakdown.png"), labels, {st: means[st] for st in stages},
                  "mean seconds per sample (cache replays left out)", "Latency per stage")
    made.append("latency_breakdown.png")

    # 2. route distribution
    routes = ("edge", "collaborative", "cloud")
    counts = {r: [] for r in routes}
    for c in cases:
        got = defaultdict(int)
        for p in c["preds"]:
            route = "edge" if not p.get("is_hard_example") else (p.get("cloud_result") or {}).get("route", "cloud")
            got[route] += 1
        for r in routes:
            counts[r].append(got[r])
    _stacked_barh(plt, os.path.join(output_dir, "routes.png"), labels, counts, "samples", "Route distribution",
                  {"edge": "#4c9a2a", "collaborative": "#e0a030", "cloud": "#3a6ea5"})
    made.append("routes.png")

    # 3. privacy (SELS, lower is better) against utility: APR and the similarity of what was sent
    if _privacy_utility(plt, os.path.join(output_dir, "privacy_utility.png"), cases, apr or []):
        made.append("privacy_utility.png")
    return made
