"""One federated training run in simulation (clients in-process), and its evaluation on TAB dev.

Methods (``METHODS``):

* ``centralized``: non-private training on the pooled client data (the upper reference).
* ``local_only``: every client trains alone; PSR is the mean over the clients' models.
* ``fedavg`` / ``fedadam``: federated, no DP (``fedadam`` = the paper's eq. 5 server).
* ``dp_fedavg``: FedAvg with Opacus DP-SGD in each client; ε is record-level (one 128-token window),
  accounted over all local steps of all rounds (worst case: the client takes part in every round).
* ``fedadam_ldp_paper``: eq. 5 server + the paper's local DP (eq. 4 σ for a *per-round* ε).
* ``fedadam_ldp_accounted``: the same mechanism with σ calibrated so that all rounds compose to ε.
* ``teacher_only``: trained on the teacher-labelled public proxy set alone (no client data, no privacy cost
  for the clients): what the cloud model's labels are worth without any federated data.
* ``privateai``: PrivateAI = eq. 5 server + local DP on every release (σ calibrated so that all rounds compose
  to ε, as ``fedadam_ldp_accounted``; ε = ∞: no noise) + knowledge distillation on the public proxy set every
  ``kd.interval`` rounds (:mod:`.distill`).
* ``privateai_paper``: the same with the paper's per-round σ (eq. 4), as ``fedadam_ldp_paper``.

The distillation step uses public text and the global model only (post-processing of the DP releases), so
the ε of ``privateai`` is that of its client releases, accounted exactly as for ``fedadam_ldp_accounted``.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import torch

from ..metrics.tab_official import combine, score_document
from ..tab_data import TabDocument
from .client import DPSGD, LocalDP, local_update
from .distill import KDConfig, ProxySet, distill_flat, train_teacher_only
from .dp import calibrate_rounds_sigma, dpsgd_epsilon, gaussian_rounds_epsilon, paper_sigma
from .model import ModelConfig, TokenTagger, Windows, get_flat, make_windows, new_model, predict_spans, set_flat, train_epochs
from .server import make_server

METHODS = ("centralized", "local_only", "fedavg", "fedadam", "dp_fedavg", "fedadam_ldp_paper", "fedadam_ldp_accounted",
           "teacher_only", "privateai", "privateai_paper")
DP_METHODS = ("dp_fedavg", "fedadam_ldp_paper", "fedadam_ldp_accounted", "privateai_paper")  # need a finite ε
OPTIONAL_DP_METHODS = ("privateai",)  # finite ε or ∞ (no noise)
KD_METHODS = ("teacher_only", "privateai", "privateai_paper")  # need the teacher-labelled proxy set
LDP_METHODS = ("fedadam_ldp_paper", "fedadam_ldp_accounted", "privateai", "privateai_paper")


@dataclass(frozen=True)
class FedConfig:
    """Hyper-parameters of one run (defaults = the default experiment)."""

    n_clients: int = 8
    rounds: int = 10
    local_epochs: int = 1
    participation: float = 0.8
    alpha: float = 1.0
    lr: float = 3e-3
    batch_size: int = 16
    server_lr_fedavg: float = 1.0
    server_lr_fedadam: float = 3e-3
    theta: float = 1.0
    dpsgd_clip: float = 1.0
    threshold: float = 0.5
    model: ModelConfig = field(default_factory=ModelConfig)
    kd: KDConfig = field(default_factory=KDConfig)

    @staticmethod
    def smoke() -> "FedConfig":
        return FedConfig(n_clients=3, rounds=2, model=ModelConfig(word_buckets=1024, affix_buckets=256, dim=8, hidden=16, window=64))


def dirichlet_partition(n_docs: int, n_clients: int, alpha: float, seed: int) -> List[List[int]]:
    """Non-IID split of documents: client shares ~ Dirichlet(α); every client gets at least one document.

    Documents have no single class, so the Dirichlet acts on each client's share of the documents
    (quantity skew); small α gives a few large clients and many tiny ones.
    """
    if n_docs < n_clients:
        raise ValueError(f"{n_docs} documents cannot cover {n_clients} clients")
    rng = np.random.default_rng(seed)
    props = rng.dirichlet([alpha] * n_clients)
    order = rng.permutation(n_docs)
    parts: List[List[int]] = [[int(order[i])] for i in range(n_clients)]
    rest = order[n_clients:]
    owners = rng.choice(n_clients, size=len(rest), p=props)
    for d, o in zip(rest, owners):
        parts[int(o)].append(int(d))
    return parts


def select_clients(n_clients: int, participation: float, round_idx: int, seed: int) -> List[int]:
    """The ⌈participation·K⌉ clients of one round (deterministic in seed and round)."""
    k = max(1, math.ceil(participation * n_clients))
    rng = np.random.default_rng([seed, round_idx, 7])
    return sorted(int(i) for i in rng.choice(n_clients, size=k, replace=False))


def masks_for(model: TokenTagger, docs: Sequence[TabDocument], threshold: float) -> Dict[str, List[List[int]]]:
    """Predicted masks ``[[start, end]]`` per document."""
    return {d.doc_id: [[s.start, s.end] for s in predict_spans(model, d.text, threshold)] for d in docs}


def gold_view(doc: TabDocument) -> Dict[str, Any]:
    """The dict form that :mod:`metrics.tab_official` scores against."""
    return {"text": doc.text, "annotations": {a: [m.to_dict() for m in ms] for a, ms in doc.annotations.items()}}


def evaluate_psr(model: TokenTagger, docs: Sequence[TabDocument], threshold: float) -> Dict[str, float]:
    """PSR = entity recall over DIRECT+QUASI entities (micro, over annotators), with TAB's token precision."""
    masks = masks_for(model, docs, threshold)
    counts = [score_document(gold_view(d), masks[d.doc_id]) for d in docs]
    tot = {k: sum(c.get(k, 0) for c in counts) for k in ("entities_di", "entities_di_masked", "entities_qi", "entities_qi_masked")}
    res = combine(counts)
    n_ent = tot["entities_di"] + tot["entities_qi"]
    res["PSR"] = round((tot["entities_di_masked"] + tot["entities_qi_masked"]) / n_ent, 6) if n_ent else math.nan
    res["n_entities"] = n_ent
    return res


def _dpsgd_setup(data_sizes: Sequence[int], cfg: FedConfig, epsilon: float) -> Dict[int, DPSGD]:
    from opacus.accountants.utils import get_noise_multiplier

    out: Dict[int, DPSGD] = {}
    for k, n in enumerate(data_sizes):
        q = min(1.0, cfg.batch_size / max(n, 1))
        steps = int(math.ceil(1.0 / q)) * cfg.local_epochs * cfg.rounds
        delta = 1.0 / max(n, 2)
        z = get_noise_multiplier(target_epsilon=epsilon, target_delta=delta, sample_rate=q, steps=steps, accountant="rdp")
        out[k] = DPSGD(noise_multiplier=float(z), max_grad_norm=cfg.dpsgd_clip)
    return out


def run_method(method: str, train_docs: Sequence[TabDocument], cfg: FedConfig, seed: int,
               epsilon: float = math.inf, progress: Optional[Any] = None,
               proxy: Optional[ProxySet] = None) -> Dict[str, Any]:
    """Train one detector with ``method``; returns ``{"model" | "models", "privacy", "members", "seconds", ...}``.

    ``proxy`` (the teacher-labelled public proxy set) is required by the methods in ``KD_METHODS``.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method '{method}' (expected one of {METHODS})")
    if method in DP_METHODS and not math.isfinite(epsilon):
        raise ValueError(f"method '{method}' needs a finite epsilon")
    if method not in DP_METHODS + OPTIONAL_DP_METHODS and math.isfinite(epsilon):
        raise ValueError(f"method '{method}' has no privacy budget; epsilon must be inf")
    if not (epsilon > 0):
        raise ValueError(f"epsilon must be > 0, got {epsilon}")
    if method in KD_METHODS and proxy is None:
        raise ValueError(f"method '{method}' needs the teacher-labelled proxy set (proxy=...)")
    t0 = time.perf_counter()
    parts = dirichlet_partition(len(train_docs), cfg.n_clients, cfg.alpha, seed)
    init = new_model(cfg.model, seed)
    privacy: Dict[str, Any] = {"epsilon_target": epsilon}
    if method == "teacher_only":
        assert proxy is not None
        gen = torch.Generator().manual_seed(seed)
        train_teacher_only(init, proxy, epochs=cfg.rounds * cfg.local_epochs, lr=cfg.lr, batch_size=cfg.batch_size,
                           generator=gen)
        privacy.update(unit="no client data used (public proxy text, teacher labels)", epsilon_total_rdp=0.0)
        return {"model": init, "privacy": privacy, "parts": parts, "members_used": False,
                "seconds": time.perf_counter() - t0}
    client_data: List[Windows] = [make_windows([train_docs[i] for i in p], cfg.model) for p in parts]
    if method == "centralized":
        pooled = make_windows(train_docs, cfg.model)
        gen = torch.Generator().manual_seed(seed)
        train_epochs(init, pooled, epochs=cfg.rounds * cfg.local_epochs, lr=cfg.lr, batch_size=cfg.batch_size, generator=gen)
        return {"model": init, "privacy": privacy, "parts": parts, "seconds": time.perf_counter() - t0}
    if method == "local_only":
        models: List[TokenTagger] = []
        for k, data in enumerate(client_data):
            m = new_model(cfg.model, seed)
            gen = torch.Generator().manual_seed(seed * 1000 + k)
            train_epochs(m, data, epochs=cfg.rounds * cfg.local_epochs, lr=cfg.lr, batch_size=cfg.batch_size, generator=gen)
            models.append(m)
        return {"models": models, "privacy": privacy, "parts": parts, "seconds": time.perf_counter() - t0}

    server = make_server("fedavg" if method in ("fedavg", "dp_fedavg") else "fedadam",
                         cfg.server_lr_fedavg if method in ("fedavg", "dp_fedavg") else cfg.server_lr_fedadam)
    local_dp: Optional[LocalDP] = None
    dpsgd: Dict[int, DPSGD] = {}
    if method in LDP_METHODS and math.isfinite(epsilon):
        delta = 1.0 / max(2, min(len(d) for d in client_data))
        sens = 2.0 * cfg.theta
        if method in ("fedadam_ldp_paper", "privateai_paper"):
            sigma = paper_sigma(epsilon, delta, cfg.theta)
            privacy.update(epsilon_per_round_paper=epsilon, calibration="paper eq. 4 (per round)")
        else:
            sigma = calibrate_rounds_sigma(epsilon, delta, cfg.rounds, sens)
            # the per-round ε the paper's eq. 4 would state for this σ (eq. 4 solved for ε)
            privacy.update(epsilon_per_round_paper=round(paper_sigma(1.0, delta, cfg.theta) / sigma, 4),
                           calibration="RDP over all rounds (accounted)")
        privacy.update(sigma=sigma, delta=delta, theta=cfg.theta, unit="client data set (replace-one, Δ=2θ)",
                       epsilon_total_rdp=round(gaussian_rounds_epsilon(sigma / sens, cfg.rounds, delta), 4),
                       rounds_accounted=cfg.rounds)
        local_dp = LocalDP(cfg.theta, sigma)
    kd_on = method in ("privateai", "privateai_paper")
    if kd_on:
        privacy.update(kd="public proxy text only: post-processing, no privacy cost",
                       kd_interval=cfg.kd.interval, kd_mu=cfg.kd.mu, kd_teacher_weight=cfg.kd.teacher_weight)
    if method == "dp_fedavg":
        dpsgd = _dpsgd_setup([len(d) for d in client_data], cfg, epsilon)
        eps_check = []
        for k, d in enumerate(client_data):
            q = min(1.0, cfg.batch_size / max(len(d), 1))
            steps = int(math.ceil(1.0 / q)) * cfg.local_epochs * cfg.rounds
            eps_check.append(dpsgd_epsilon(dpsgd[k].noise_multiplier, q, steps, 1.0 / max(len(d), 2)))
        privacy.update(unit="one 128-token window (record-level DP-SGD)", delta="1/|client windows|",
                       noise_multipliers=[round(v.noise_multiplier, 3) for v in dpsgd.values()],
                       epsilon_total_rdp=round(max(eps_check), 4), rounds_accounted=cfg.rounds)
    global_flat = get_flat(init)
    model = new_model(cfg.model, seed)
    history: List[Dict[str, Any]] = []
    for r in range(cfg.rounds):
        chosen = select_clients(cfg.n_clients, cfg.participation, r, seed)
        ups = []
        for k in chosen:
            res = local_update(global_flat, client_data[k], cfg.model, epochs=cfg.local_epochs, lr=cfg.lr,
                               batch_size=cfg.batch_size, seed=seed * 100003 + r * 101 + k,
                               local_dp=local_dp, dpsgd=dpsgd.get(k))
            ups.append((res["update"], float(res["num_samples"])))
        global_flat = server.step(global_flat, ups)
        entry: Dict[str, Any] = {"round": r, "clients": chosen}
        if kd_on and (r + 1) % cfg.kd.interval == 0:
            assert proxy is not None
            global_flat, entry["kd"] = distill_flat(global_flat, proxy, cfg.kd, cfg.model, seed * 7919 + r)
        history.append(entry)
        if progress:
            progress(f"{method} eps={epsilon} seed={seed} round {r + 1}/{cfg.rounds}")
    set_flat(model, global_flat)
    out = {"model": model, "privacy": privacy, "parts": parts, "history": history, "seconds": time.perf_counter() - t0}
    if kd_on:
        out["kd"] = [h["kd"] for h in history if "kd" in h]
    return out


def with_alpha(cfg: FedConfig, alpha: float) -> FedConfig:
    """A copy of ``cfg`` with another Dirichlet α."""
    return replace(cfg, alpha=alpha)
