"""The grid: every method x ε x seed, PSR on TAB dev and membership inference, written as a table."""
from __future__ import annotations

import csv
import json
import math
import os
import statistics
import time
from dataclasses import asdict
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from ..tab_data import TabDocument, load_tab
from .mia import loss_threshold_attack
from .model import Windows, make_windows, new_model, save_model
from .simulation import DP_METHODS, METHODS, FedConfig, evaluate_psr, run_method

DEFAULT_EPSILONS = (1.0, 10.0)


def grid_cells(methods: Sequence[str], epsilons: Sequence[float]) -> List[Tuple[str, float]]:
    """(method, ε) pairs: DP methods at each finite ε, the others at ε = ∞."""
    cells: List[Tuple[str, float]] = []
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"unknown method '{m}' (expected one of {METHODS})")
        cells.extend([(m, float(e)) for e in epsilons] if m in DP_METHODS else [(m, math.inf)])
    return cells


def evaluate_run(run: Dict[str, Any], train_docs: Sequence[TabDocument], dev_docs: Sequence[TabDocument],
                 dev_windows: Windows, cfg: FedConfig, seed: int) -> Dict[str, Any]:
    """PSR / token precision on dev, and the loss-threshold MIA (members = the model's training windows)."""
    if "models" in run:  # local_only: mean over clients; MIA on each client's own data, averaged
        psr, mia = [], []
        for k, model in enumerate(run["models"]):
            psr.append(evaluate_psr(model, dev_docs, cfg.threshold))
            members = make_windows([train_docs[i] for i in run["parts"][k]], cfg.model)
            mia.append(loss_threshold_attack(model, members, dev_windows, seed))
        keys = ("PSR", "token_precision", "token_recall", "ER_di", "ER_qi")
        out = {k: round(statistics.mean(p[k] for p in psr), 6) for k in keys}
        out.update({k: round(statistics.mean(m[k] for m in mia), 4) for k in ("mia_auc", "mia_tpr_at_1fpr")})
        out["mia_n_members"] = sum(m["mia_n_members"] for m in mia)
        out["n_entities"] = psr[0]["n_entities"]
        return out
    model = run["model"]
    res = evaluate_psr(model, dev_docs, cfg.threshold)
    members = make_windows(train_docs, cfg.model)
    res.update(loss_threshold_attack(model, members, dev_windows, seed))
    return res


def run_grid(train_path: str, dev_path: str, out_dir: str, *, methods: Sequence[str] = METHODS,
             epsilons: Sequence[float] = DEFAULT_EPSILONS, seeds: Sequence[int] = (0, 1), cfg: Optional[FedConfig] = None,
             max_train_docs: Optional[int] = None, max_dev_docs: Optional[int] = None,
             log: Callable[[str], None] = print, export_path: Optional[str] = None,
             export_method: str = "fedavg") -> List[Dict[str, Any]]:
    """Run the grid, write ``grid_rows.json``, ``grid.csv`` and ``grid.md`` to ``out_dir``; return the rows.

    With ``export_path``, the ``export_method`` model of the first seed is saved there for the recognizer.
    """
    cfg = cfg or FedConfig()
    train_docs = load_tab(train_path)[:max_train_docs]
    dev_docs = load_tab(dev_path)[:max_dev_docs]
    dev_windows = make_windows(dev_docs, cfg.model)
    os.makedirs(out_dir, exist_ok=True)
    rows: List[Dict[str, Any]] = []
    t_all = time.perf_counter()
    members_all = make_windows(train_docs, cfg.model)
    # Reference: the attack against the untrained initial model. Train and dev windows differ in
    # content, so even a model that learnt nothing need not sit exactly at AUC 0.5.
    untrained = {str(s): loss_threshold_attack(new_model(cfg.model, s), members_all, dev_windows, s) for s in seeds}
    cfg_meta = {"mia_untrained_reference": untrained}
    for seed in seeds:
        for method, eps in grid_cells(methods, epsilons):
            run = run_method(method, train_docs, cfg, seed, eps)
            ev = evaluate_run(run, train_docs, dev_docs, dev_windows, cfg, seed)
            row = {"method": method, "epsilon": eps, "seed": seed, "train_seconds": round(run["seconds"], 1),
                   **{k: ev[k] for k in ("PSR", "token_precision", "token_recall", "ER_di", "ER_qi", "mia_auc",
                                         "mia_tpr_at_1fpr", "mia_n_members", "n_entities")},
                   "privacy": run["privacy"]}
            rows.append(row)
            if export_path and method == export_method and seed == seeds[0] and "model" in run:
                os.makedirs(os.path.dirname(os.path.abspath(export_path)), exist_ok=True)
                save_model(run["model"], export_path, {"method": method, "epsilon": eps, "seed": seed,
                                                       "threshold": cfg.threshold, "privacy": run["privacy"],
                                                       "dev_PSR": row["PSR"], "dev_token_precision": row["token_precision"]})
            _dump(out_dir, rows, cfg, seeds, train_docs, dev_docs, dev_windows, time.perf_counter() - t_all, partial=True,
                  extra=cfg_meta)
            log(f"[{time.perf_counter() - t_all:7.1f}s] {method:22s} eps={eps:<5} seed={seed} PSR={row['PSR']:.3f} "
                f"tokP={row['token_precision']:.3f} MIA-AUC={row['mia_auc']:.3f} eps_total={run['privacy'].get('epsilon_total_rdp', '-')}")
    _dump(out_dir, rows, cfg, seeds, train_docs, dev_docs, dev_windows, time.perf_counter() - t_all, partial=False,
          extra=cfg_meta)
    return rows


def _dump(out_dir: str, rows: List[Dict[str, Any]], cfg: FedConfig, seeds: Sequence[int], train_docs: Sequence[Any],
          dev_docs: Sequence[Any], dev_windows: Windows, wall: float, partial: bool,
          extra: Optional[Dict[str, Any]] = None) -> None:
    meta = {**(extra or {}), "config": asdict(cfg), "seeds": list(seeds), "n_train_docs": len(train_docs), "n_dev_docs": len(dev_docs),
            "n_dev_windows": len(dev_windows), "wall_seconds": round(wall, 1), "cpu_threads": _threads(),
            "complete": not partial}
    with open(os.path.join(out_dir, "grid_rows.json"), "w", encoding="utf-8") as fh:
        json.dump({"meta": meta, "rows": rows}, fh, indent=1, default=str)
    write_tables(out_dir, rows, meta)


def write_tables(out_dir: str, rows: Sequence[Dict[str, Any]], meta: Dict[str, Any]) -> None:
    """``grid.csv`` and ``grid.md`` from the rows."""
    table = summarize(rows)
    with open(os.path.join(out_dir, "grid.csv"), "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(table[0]))
        w.writeheader()
        w.writerows(table)
    with open(os.path.join(out_dir, "grid.md"), "w", encoding="utf-8") as fh:
        fh.write(markdown_table(table, meta))


def plot_grid(rows: Sequence[Dict[str, Any]], out_dir: str) -> List[str]:
    """``psr_vs_epsilon.png`` (PSR and token precision) and ``mia_vs_epsilon.png``: mean ± sd over seeds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = {1.0: 0, 10.0: 1, math.inf: 2}
    methods = list(dict.fromkeys(r["method"] for r in rows))
    files = []
    for fname, panels in (("psr_vs_epsilon.png", (("PSR", "PSR (entity recall, DIRECT+QUASI)"),
                                                   ("token_precision", "TAB token precision"))),
                          ("mia_vs_epsilon.png", (("mia_auc", "loss-threshold MIA AUC"),
                                                  ("mia_tpr_at_1fpr", "MIA TPR at 1% FPR")))):
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        for ax, (key, label) in zip(axes, panels):
            for i, m in enumerate(methods):
                pts = []
                for e in sorted({float(r["epsilon"]) for r in rows if r["method"] == m}):
                    v = [float(r[key]) for r in rows if r["method"] == m and float(r["epsilon"]) == e]
                    pts.append((xs.get(e, 2) + (i - len(methods) / 2) * 0.04, statistics.mean(v),
                                statistics.stdev(v) if len(v) > 1 else 0.0))
                ax.errorbar([p[0] for p in pts], [p[1] for p in pts], yerr=[p[2] for p in pts], marker="o",
                            capsize=3, label=m, linestyle="-" if len(pts) > 1 else "none")
            if key == "mia_auc":
                ax.axhline(0.5, color="grey", lw=0.8, ls="--")
            ax.set_xticks([0, 1, 2], ["ε=1", "ε=10", "ε=∞ (no DP)"])
            ax.set_ylabel(label)
            ax.set_ylim(0, 1.02)
        axes[0].legend(fontsize=7)
        fig.suptitle("Federated detector on TAB dev (ε: target over all rounds; paper rows: per-round ε)", fontsize=9)
        fig.tight_layout()
        path = os.path.join(out_dir, fname)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        files.append(path)
    return files


def merge_results(dirs: Sequence[str], out_dir: str) -> List[Dict[str, Any]]:
    """Merge the ``grid_rows.json`` of runs over disjoint cells (e.g. run in parallel) into one table."""
    rows: List[Dict[str, Any]] = []
    metas = []
    for d in dirs:
        with open(os.path.join(d, "grid_rows.json"), encoding="utf-8") as fh:
            blob = json.load(fh)
        metas.append(blob["meta"])
        for r in blob["rows"]:
            r["epsilon"] = float(r["epsilon"])
            rows.append(r)
    meta = dict(metas[0])
    meta["wall_seconds"] = max(m["wall_seconds"] for m in metas)
    meta["seeds"] = sorted({int(r["seed"]) for r in rows})
    ref: Dict[str, Any] = {}
    for m in metas:
        ref.update(m.get("mia_untrained_reference") or {})
    meta["mia_untrained_reference"] = ref
    meta["parts"] = [{"dir": os.path.basename(os.path.normpath(d)), "wall_seconds": m["wall_seconds"],
                      "complete": m.get("complete")} for d, m in zip(dirs, metas)]
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "grid_rows.json"), "w", encoding="utf-8") as fh:
        json.dump({"meta": meta, "rows": rows}, fh, indent=1, default=str)
    write_tables(out_dir, rows, meta)
    plot_grid(rows, out_dir)
    return rows


def _threads() -> int:
    import torch

    return torch.get_num_threads()


def _mean_sd(vals: Iterable[float]) -> str:
    v = [x for x in vals if x == x]
    if not v:
        return "nan"
    return f"{statistics.mean(v):.3f}" + (f" ± {statistics.stdev(v):.3f}" if len(v) > 1 else "")


def _span_of(vals: Sequence[Any], infinite: bool) -> str:
    """One value, or ``min-max`` when seeds differ (δ = 1/|S| follows each seed's client split)."""
    v = sorted({float(x) for x in vals if x not in (None, "")})
    if not v:
        return "inf" if infinite else ""
    return f"{v[0]:g}" if len(v) == 1 else f"{v[0]:g}-{v[-1]:g}"


def summarize(rows: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """One row per (method, ε): mean ± sd over seeds."""
    out: List[Dict[str, Any]] = []
    keys: List[Tuple[str, float]] = []
    for r in rows:
        if (r["method"], r["epsilon"]) not in keys:
            keys.append((r["method"], r["epsilon"]))
    for m, e in keys:
        rs = [r for r in rows if r["method"] == m and r["epsilon"] == e]
        p = rs[0]["privacy"]
        out.append({
            "method": m, "epsilon_target": "inf" if math.isinf(e) else e,
            "epsilon_per_round_paper": p.get("epsilon_per_round_paper", ""),
            "epsilon_total_accounted": _span_of([r["privacy"].get("epsilon_total_rdp") for r in rs], math.isinf(e)),
            "PSR": _mean_sd(r["PSR"] for r in rs), "token_precision": _mean_sd(r["token_precision"] for r in rs),
            "mia_auc": _mean_sd(r["mia_auc"] for r in rs), "mia_tpr_at_1fpr": _mean_sd(r["mia_tpr_at_1fpr"] for r in rs),
            "seeds": len(rs), "train_seconds": round(statistics.mean(r["train_seconds"] for r in rs), 1),
        })
    return out


def markdown_table(table: Sequence[Dict[str, Any]], meta: Dict[str, Any]) -> str:
    """The table in Markdown, preceded by what was run."""
    cols = list(table[0])
    lines = [f"Seeds {meta['seeds']}; train docs {meta['n_train_docs']} (clients), dev docs {meta['n_dev_docs']} "
             f"(PSR over the dev DIRECT+QUASI entities); MIA on {meta['n_dev_windows']} dev windows as non-members; "
             f"wall time {meta['wall_seconds']} s with {meta['cpu_threads']} torch threads"
             + (f" per process, parts run in parallel: {meta['parts']}" if meta.get("parts") else "") + ".",
             "MIA AUC of the untrained initial model (reference, per seed): "
             + ", ".join(f"seed {k}: {v['mia_auc']}" for k, v in sorted((meta.get("mia_untrained_reference") or {}).items())) + ".", "",
             "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in table]
    return "\n".join(lines) + "\n"


def export_detector(train_path: str, out_file: str, *, method: str = "fedavg", epsilon: float = math.inf,
                    seed: int = 0, cfg: Optional[FedConfig] = None) -> Dict[str, Any]:
    """Train one detector and save it where :class:`FederatedRecognizer` reads it."""
    cfg = cfg or FedConfig()
    run = run_method(method, load_tab(train_path), cfg, seed, epsilon)
    if "model" not in run:
        raise ValueError(f"method '{method}' produces one model per client; export a federated or centralized method")
    meta = {"method": method, "epsilon": epsilon, "seed": seed, "threshold": cfg.threshold,
            "privacy": run["privacy"], "train_seconds": round(run["seconds"], 1)}
    os.makedirs(os.path.dirname(os.path.abspath(out_file)), exist_ok=True)
    save_model(run["model"], out_file, meta)
    return meta
