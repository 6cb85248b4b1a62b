"""Choosing the pretrained-encoder head's training settings without looking at TAB dev.

The TAB train documents are split once (seeded) into a fitting part (80%) and a validation part (20%); every
candidate setting trains the named methods on the fitting part (its own Dirichlet client split) and is scored
on the validation part at several decision thresholds. TAB dev, where the grid reports, plays no part.
``python scripts/run_federated_bench.py --tune`` runs it and writes ``results/tuning.md``.
"""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import replace
from typing import Any, Callable, Dict, List, Sequence, Tuple

import numpy as np

from ..datasets.tab import TabDocument
from .simulation import FedConfig, evaluate_psr, run_method

#: candidate settings (FedConfig fields) for the MiniLM head
DEFAULT_CANDIDATES: Dict[str, Sequence[Any]] = {"batch_size": (16, 64), "lr": (3e-3, 1e-2), "local_epochs": (1, 2)}
DEFAULT_CELLS: Tuple[Tuple[str, float], ...] = (("fedavg", math.inf), ("dp_fedavg", 10.0))
THRESHOLDS = (0.5, 0.6, 0.7)


def split_train(docs: Sequence[TabDocument], val_share: float = 0.2, seed: int = 2024) -> Tuple[List[TabDocument], List[TabDocument]]:
    """(fitting documents, validation documents), a seeded split of the training documents."""
    order = np.random.default_rng(seed).permutation(len(docs))
    n_val = max(1, int(round(val_share * len(docs))))
    val = {int(i) for i in order[:n_val]}
    return [d for i, d in enumerate(docs) if i not in val], [d for i, d in enumerate(docs) if i in val]


def tune(train_docs: Sequence[TabDocument], base: FedConfig, *, candidates: Dict[str, Sequence[Any]] = DEFAULT_CANDIDATES,
         cells: Sequence[Tuple[str, float]] = DEFAULT_CELLS, seed: int = 0,
         log: Callable[[str], None] = print) -> List[Dict[str, Any]]:
    """One row per (setting, method, ε, threshold) with validation PSR and token precision."""
    fit, val = split_train(train_docs)
    keys = list(candidates)
    rows: List[Dict[str, Any]] = []
    for values in itertools.product(*(candidates[k] for k in keys)):
        setting = dict(zip(keys, values))
        cfg = replace(base, **setting)
        for method, eps in cells:
            t = time.perf_counter()
            run = run_method(method, fit, cfg, seed, eps)
            for thr in THRESHOLDS:
                ev = evaluate_psr(run["model"], val, thr)
                rows.append({**setting, "method": method, "epsilon": eps, "threshold": thr, "PSR": ev["PSR"],
                             "token_precision": ev["token_precision"],
                             "epsilon_total": run["privacy"].get("epsilon_total_rdp")})
            log(f"tune {setting} {method} eps={eps}: " + ", ".join(
                f"thr {r['threshold']}: PSR {r['PSR']:.3f} P {r['token_precision']:.3f}" for r in rows[-len(THRESHOLDS):])
                + f" ({time.perf_counter() - t:.0f} s)")
    return rows


def markdown(rows: Sequence[Dict[str, Any]], n_fit: int, n_val: int) -> str:
    keys = [k for k in rows[0] if k not in ("PSR", "token_precision", "epsilon_total")] if rows else []
    lines = [f"Validation on {n_val} of the TAB train documents (the other {n_fit} train); TAB dev not used.", "",
             "| " + " | ".join(keys + ["PSR", "token_precision"]) + " |", "|" + "---|" * (len(keys) + 2)]
    for r in rows:
        lines.append("| " + " | ".join(str(r[k]) for k in keys) + f" | {r['PSR']:.3f} | {r['token_precision']:.3f} |")
    return "\n".join(lines) + "\n"
