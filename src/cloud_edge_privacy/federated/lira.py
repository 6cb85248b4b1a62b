"""LiRA (Carlini et al. 2022) against the grid's detectors, with shadow models shared by every target.

The attacker (who knows the code and the configuration) trains ``n`` shadow models centrally, each on a random
half of the *candidate pool* = the client documents (train) ∪ the non-member documents (dev), the same number
of epochs as the targets' rounds. For every window of the pool it then has the losses of the shadows that
trained on it (IN) and of those that did not (OUT). Against a target:

* **offline, fixed variance**: score = (mean OUT loss − target loss) / σ_OUT (only OUT shadows are needed);
* **online, fixed variance**: score = log N(target loss; μ_IN, σ_IN²) − log N(target loss; μ_OUT, σ_OUT²),
  with per-window means and global σ's, each the spread of the shadows' losses around their window's mean
  (Carlini et al. recommend global variances below ~64 shadows).

Members are the target's training windows, non-members the dev windows (never trained on by any target), in
a balanced random sample. Shadows train like ``centralized`` (not like the federated targets), a simplification
that can only weaken the attack against federated targets.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Sequence

import numpy as np
import torch

from .mia import auc_interval, lira_offline_scores, roc_auc, tpr_at_fpr
from .model import ModelConfig, TokenTagger, Windows, new_model, train_epochs, window_losses


@dataclass
class ShadowRefs:
    """``losses[s, i]``: loss of shadow s on pool window i; ``inside[s, i]``: shadow s trained on it."""

    losses: np.ndarray
    inside: np.ndarray

    @property
    def n_shadows(self) -> int:
        return int(self.losses.shape[0])


def shadow_membership(n_docs: int, n_shadows: int, seed: int) -> np.ndarray:
    """``(n_shadows, n_docs)`` bool: each shadow takes each pool document with probability ½ (seeded)."""
    rng = np.random.default_rng([seed, 99])
    return rng.random((n_shadows, n_docs)) < 0.5


def train_shadow(pool: Windows, window_doc: np.ndarray, doc_inside: np.ndarray, cfg: ModelConfig, *, epochs: int,
                 lr: float, batch_size: int, seed: int) -> np.ndarray:
    """Train one shadow on the pool windows of its documents; return its loss on every pool window."""
    idx = [i for i in range(len(pool)) if doc_inside[window_doc[i]]]
    m = new_model(cfg, seed)
    train_epochs(m, pool.subset(idx), epochs=epochs, lr=lr, batch_size=batch_size,
                 generator=torch.Generator().manual_seed(seed))
    return window_losses(m, pool)


def _means(L: np.ndarray, mask: np.ndarray) -> np.ndarray:
    n = mask.sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, (L * mask).sum(0) / np.maximum(n, 1), np.nan)


def _pooled_sd(L: np.ndarray, mask: np.ndarray, mu: np.ndarray) -> float:
    """Global σ: the spread of the shadows' losses around each window's own mean (pooled over windows)."""
    res = (L - mu[None, :])[mask & ~np.isnan(mu)[None, :]]
    return max(float(np.sqrt(np.mean(res ** 2))) if res.size else 1.0, 1e-6)


def online_scores(target: np.ndarray, refs: ShadowRefs) -> np.ndarray:
    """Online LiRA with global variances, for every pool window (NaN where IN or OUT references are missing).

    ``target`` holds the target's loss on every pool window; the σ's are estimated over the whole pool, so
    members and non-members are scored on one scale.
    """
    L, In = refs.losses, refs.inside
    mu_in, mu_out = _means(L, In), _means(L, ~In)
    sd_in, sd_out = _pooled_sd(L, In, mu_in), _pooled_sd(L, ~In, mu_out)
    t = np.asarray(target, dtype=float)
    ll_in = -0.5 * ((t - mu_in) / sd_in) ** 2 - np.log(sd_in)
    ll_out = -0.5 * ((t - mu_out) / sd_out) ** 2 - np.log(sd_out)
    return ll_in - ll_out


def offline_scores(target: np.ndarray, refs: ShadowRefs) -> np.ndarray:
    """Offline LiRA with a global OUT variance, for every pool window (NaN without an OUT reference)."""
    L, In = refs.losses, refs.inside
    outs = [L[~In[:, j], j].tolist() for j in range(L.shape[1])]
    return lira_offline_scores(target, outs, _pooled_sd(L, ~In, _means(L, ~In)))


def lira_attack(model: TokenTagger, pool: Windows, refs: ShadowRefs, member_idx: Sequence[int],
                nonmember_idx: Sequence[int], seed: int) -> Dict[str, Any]:
    """Offline and online LiRA AUC / TPR at 1% FPR on a balanced sample of member and non-member windows."""
    rng = np.random.default_rng([seed, 5])
    target = window_losses(model, pool)
    out: Dict[str, Any] = {"lira_n_shadows": refs.n_shadows}
    for name, fn in (("lira", offline_scores), ("lira_online", online_scores)):
        scores = fn(target, refs)
        sm, sn = scores[list(member_idx)], scores[list(nonmember_idx)]
        km, kn = np.flatnonzero(~np.isnan(sm)), np.flatnonzero(~np.isnan(sn))
        k = min(len(km), len(kn))
        if k == 0:
            out.update({f"{name}_auc": float("nan"), f"{name}_tpr_at_1fpr": float("nan"), f"{name}_n_each": 0})
            continue
        mi, ni = rng.choice(km, size=k, replace=False), rng.choice(kn, size=k, replace=False)
        auc = roc_auc(sm[mi], sn[ni])
        out.update({f"{name}_auc": round(auc, 4), f"{name}_auc_ci95": [round(v, 4) for v in auc_interval(auc, k, k)],
                    f"{name}_tpr_at_1fpr": round(tpr_at_fpr(sm[mi], sn[ni], 0.01), 4), f"{name}_n_each": int(k)})
    return out


def mean_over(results: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Average the numeric LiRA fields over several models (``local_only``: one model per client)."""
    keys = [k for k in results[0] if k.startswith("lira")]
    out: Dict[str, Any] = {}
    for k in keys:
        vals = [r[k] for r in results if r[k] == r[k]]
        if k.endswith("_ci95"):
            continue  # an interval of one model; a mean over clients has none
        if k.endswith("_n_each") or k == "lira_n_shadows":
            out[k] = int(sum(vals)) if k.endswith("_n_each") else results[0][k]
        else:
            out[k] = round(float(np.mean(vals)), 4) if vals else float("nan")
    return out
