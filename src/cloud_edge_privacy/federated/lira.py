"""LiRA (offline, fixed variance) against detectors trained by the grid's methods, with shadow models.

Shadow models are trained centrally on random halves of the client documents (never on dev), the same
number of epochs as the targets' rounds. For every member window (a training window of the target) and
non-member window (dev) the attack compares the target's loss with the losses of the shadows that did
not see it; this removes the per-window difficulty that confounds the plain loss threshold.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence

import numpy as np
import torch

from ..tab_data import TabDocument
from .mia import lira_offline_scores, roc_auc, tpr_at_fpr
from .model import make_windows, new_model, train_epochs, window_losses
from .simulation import FedConfig, run_method


def run_lira(train_docs: Sequence[TabDocument], dev_docs: Sequence[TabDocument], cfg: FedConfig, seed: int,
             cells: Sequence[tuple], n_shadows: int = 4) -> List[Dict[str, Any]]:
    """AUC and TPR at 1% FPR of offline LiRA for each (method, ε) in ``cells`` (one target per cell)."""
    rng = np.random.default_rng([seed, 99])
    members = make_windows(train_docs, cfg.model)
    nonmembers = make_windows(dev_docs, cfg.model)
    doc_index = {d.doc_id: i for i, d in enumerate(train_docs)}
    mem_doc = np.array([doc_index[d] for d in members.doc_ids])
    shadow_mem: List[np.ndarray] = []
    shadow_non: List[np.ndarray] = []
    shadow_in: List[np.ndarray] = []
    for s in range(n_shadows):
        inside = rng.random(len(train_docs)) < 0.5
        data = members.subset([i for i in range(len(members)) if inside[mem_doc[i]]])
        m = new_model(cfg.model, 1000 + s)
        train_epochs(m, data, epochs=cfg.rounds * cfg.local_epochs, lr=cfg.lr, batch_size=cfg.batch_size,
                     generator=torch.Generator().manual_seed(1000 + s))
        shadow_mem.append(window_losses(m, members))
        shadow_non.append(window_losses(m, nonmembers))
        shadow_in.append(inside[mem_doc])
    out_mem = [[shadow_mem[s][i] for s in range(n_shadows) if not shadow_in[s][i]] for i in range(len(members))]
    out_non = [[shadow_non[s][i] for s in range(n_shadows)] for i in range(len(nonmembers))]
    all_out = np.concatenate([np.array([v for vs in out_mem for v in vs]), np.array([v for vs in out_non for v in vs])])
    sd = float(np.std(all_out))
    rows = []
    for method, eps in cells:
        run = run_method(method, train_docs, cfg, seed, eps)
        model = run["model"]
        sm = lira_offline_scores(window_losses(model, members), out_mem, sd)
        sn = lira_offline_scores(window_losses(model, nonmembers), out_non, sd)
        keep = ~np.isnan(sm)  # windows that every shadow trained on have no OUT reference
        k = min(int(keep.sum()), len(sn))
        mi = rng.choice(np.flatnonzero(keep), size=k, replace=False)
        ni = rng.choice(len(sn), size=k, replace=False)
        rows.append({"method": method, "epsilon": eps, "seed": seed, "lira_auc": round(roc_auc(sm[mi], sn[ni]), 4),
                     "lira_tpr_at_1fpr": round(tpr_at_fpr(sm[mi], sn[ni], 0.01), 4), "n_each": k,
                     "n_shadows": n_shadows, "epsilon_total_rdp": run["privacy"].get("epsilon_total_rdp", math.inf)})
    return rows
