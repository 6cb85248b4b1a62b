"""Membership inference against a trained detector: the loss-threshold attack (Yeom et al. 2018).

Members are the training windows (128 tokens) the model was trained on; non-members are windows of
TAB dev documents (same distribution, never trained on). Score = -(mean token loss): lower loss means
"member". We report ROC AUC (0.5 = chance) and TPR at 1% FPR, with the numbers of windows, because
with about a hundred non-member windows 1% FPR rests on one or two windows.
"""
from __future__ import annotations

import math
from typing import Dict, Sequence, Tuple

import numpy as np

from .model import TokenTagger, Windows, window_losses


def roc_auc(member_scores: np.ndarray, nonmember_scores: np.ndarray) -> float:
    """P(score(member) > score(non-member)) + ½ P(tie) (Mann-Whitney)."""
    m = np.asarray(member_scores, dtype=float)
    n = np.asarray(nonmember_scores, dtype=float)
    if not len(m) or not len(n):
        raise ValueError("both member and non-member scores are needed")
    greater = (m[:, None] > n[None, :]).sum()
    ties = (m[:, None] == n[None, :]).sum()
    return float((greater + 0.5 * ties) / (len(m) * len(n)))


def auc_interval(auc: float, n_members: int, n_nonmembers: int, z: float = 1.96) -> Tuple[float, float]:
    """Normal-approximation interval of a ROC AUC over the attacked windows (Hanley & McNeil 1982 standard error),
    clipped to [0, 1]: the sampling uncertainty of one target's AUC, stated where only one seed ran."""
    if n_members < 1 or n_nonmembers < 1:
        raise ValueError("both member and non-member counts must be >= 1")
    a = min(max(float(auc), 0.0), 1.0)
    q1, q2 = a / (2.0 - a), 2.0 * a * a / (1.0 + a)
    var = (a * (1 - a) + (n_members - 1) * (q1 - a * a) + (n_nonmembers - 1) * (q2 - a * a)) / (n_members * n_nonmembers)
    se = math.sqrt(max(var, 0.0))
    return max(0.0, a - z * se), min(1.0, a + z * se)


def tpr_at_fpr(member_scores: np.ndarray, nonmember_scores: np.ndarray, fpr: float = 0.01) -> float:
    """Share of members scoring above the threshold that at most ``fpr`` of non-members exceed."""
    n = np.sort(np.asarray(nonmember_scores, dtype=float))[::-1]
    k = int(np.floor(fpr * len(n)))  # number of non-members allowed above the threshold
    thr = n[k] if k < len(n) else -np.inf
    return float((np.asarray(member_scores, dtype=float) > thr).mean())


def loss_threshold_attack(model: TokenTagger, members: Windows, nonmembers: Windows, seed: int) -> Dict[str, float]:
    """Run the attack on a balanced sample of member and non-member windows."""
    rng = np.random.default_rng(seed)
    k = min(len(members), len(nonmembers))
    mi = rng.choice(len(members), size=k, replace=False)
    ni = rng.choice(len(nonmembers), size=k, replace=False)
    ms = -window_losses(model, members.subset(sorted(int(i) for i in mi)))
    ns = -window_losses(model, nonmembers.subset(sorted(int(i) for i in ni)))
    return {"mia_auc": round(roc_auc(ms, ns), 4), "mia_tpr_at_1fpr": round(tpr_at_fpr(ms, ns, 0.01), 4),
            "mia_n_members": k, "mia_n_nonmembers": k}


def lira_offline_scores(target_losses: np.ndarray, out_losses: Sequence[Sequence[float]], global_std: float) -> np.ndarray:
    """Offline LiRA with a fixed variance (Carlini et al. 2022, §VI-C): score = (mean OUT loss - target loss) / σ.

    ``out_losses[i]`` holds example i's losses under the shadow models that did not train on it; with few
    shadows a global σ is more stable than a per-example one. Higher score = more likely a member.
    """
    mu = np.array([float(np.mean(v)) if len(v) else np.nan for v in out_losses])
    return (mu - np.asarray(target_losses, dtype=float)) / max(global_std, 1e-12)
