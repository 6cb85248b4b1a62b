"""One training run in simulation (clients in-process), and its evaluation on TAB dev.

A method is a composition (:mod:`.methods`): layout x aggregator x privacy mechanism x distillation. The named
methods of the grid:

* ``centralized``: non-private training on the pooled client data (the upper reference).
* ``local_only``: every client trains alone; PSR is the mean over the clients' models.
* ``fedavg`` / ``fedadam``: federated, no DP (``fedadam`` = the paper's eq. 5 server).
* ``dp_fedavg``: FedAvg with Opacus DP-SGD in each client; ε is record-level (one 128-token window),
  accounted over all local steps of all rounds (worst case: the client takes part in every round).
* ``dp_ftrl``: FedAvg's sum wrapped by DP-FTRL's tree-aggregation noise (central, client-level DP, no
  sampling assumption).
* ``fedadam_ldp_paper``: eq. 5 server + the paper's local DP (eq. 4 σ for a *per-round* ε).
* ``fedadam_ldp_accounted``: the same mechanism with σ calibrated so that all rounds compose to ε.
* ``teacher_only``: trained on the teacher-labelled public proxy set alone (no client data).
* ``privateai``: eq. 5 server + accounted local DP (ε = ∞: no noise) + knowledge distillation on the public
  proxy set every ``kd.interval`` rounds (:mod:`.distill`); ``privateai_paper``: the same with eq. 4's σ.

The distillation step uses public text and the global model only (post-processing of the DP releases), so
the ε of ``privateai`` is that of its client releases. Calibration: :mod:`.privacy` / :mod:`.dp`.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import torch

from ..metrics.psr import psr_scores
from ..datasets.tab import TabDocument
from .client import local_update
from .distill import KDConfig, ProxySet, distill_flat, train_teacher_only
from .methods import METHODS, Method, client_seed, parse_method, selection_rng
from .model import ModelConfig, Windows, get_flat, make_windows, new_model, predict_spans, set_flat, train_epochs
from .privacy import client_mechanism, ldp_delta, make_aggregator, run_report

__all__ = ["METHODS", "FedConfig", "run_method", "evaluate_psr", "dirichlet_partition", "select_clients"]


#: local learning rates per model family; MiniLM's was chosen on a split of TAB train, not on dev (results/tuning.md)
HASHED_CNN_LR = 3e-3
MINILM_LR = 1e-2


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
    def smoke(kind: str = "hashed_cnn") -> "FedConfig":
        if kind == "minilm":
            return FedConfig(n_clients=3, rounds=2, model=replace(ModelConfig.minilm(), hidden=16, window=64))
        return FedConfig(n_clients=3, rounds=2, model=ModelConfig(word_buckets=1024, affix_buckets=256, dim=8, hidden=16, window=64))

    def with_model(self, kind: str) -> "FedConfig":
        """The same run with the other model family: the pretrained-encoder sizes and local learning rate
        (:data:`MINILM_LR`) for ``minilm``, the hashed CNN's for ``hashed_cnn``."""
        if kind == self.model.kind:
            return self
        if kind == "minilm":
            return replace(self, model=replace(ModelConfig.minilm(), window=self.model.window), lr=MINILM_LR)
        return replace(self, model=replace(ModelConfig(), window=self.model.window), lr=HASHED_CNN_LR)


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
    rng = selection_rng(seed, round_idx)
    return sorted(int(i) for i in rng.choice(n_clients, size=k, replace=False))


def masks_for(model: torch.nn.Module, docs: Sequence[TabDocument], threshold: float) -> Dict[str, List[List[int]]]:
    """Predicted masks ``[[start, end]]`` per document."""
    return {d.doc_id: [[s.start, s.end] for s in predict_spans(model, d.text, threshold)] for d in docs}


def gold_view(doc: TabDocument) -> Dict[str, Any]:
    """The dict form that :mod:`metrics.tab_official` scores against."""
    return {"text": doc.text, "annotations": {a: [m.to_dict() for m in ms] for a, ms in doc.annotations.items()}}


def evaluate_psr(model: torch.nn.Module, docs: Sequence[TabDocument], threshold: float) -> Dict[str, float]:
    """PSR (:mod:`..metrics.psr`) with TAB's token precision, of the model's masks on ``docs``."""
    masks = masks_for(model, docs, threshold)
    return psr_scores([gold_view(d) for d in docs], [masks[d.doc_id] for d in docs])


def run_method(method: "str | Method", train_docs: Sequence[TabDocument], cfg: FedConfig, seed: int,
               epsilon: float = math.inf, progress: Optional[Any] = None,
               proxy: Optional[ProxySet] = None) -> Dict[str, Any]:
    """Train one detector with ``method``; returns ``{"model" | "models", "privacy", "parts", "seconds", ...}``.

    ``proxy`` (the teacher-labelled public proxy set) is required by methods with distillation.
    """
    m = method if isinstance(method, Method) else parse_method(method)
    m.check_epsilon(epsilon)
    if m.needs_proxy and proxy is None:
        raise ValueError(f"method '{m.name}' needs the teacher-labelled proxy set (proxy=...)")
    t0 = time.perf_counter()
    parts = dirichlet_partition(len(train_docs), cfg.n_clients, cfg.alpha, seed)
    init = new_model(cfg.model, seed)
    if m.layout == "proxy_only":
        assert proxy is not None
        gen = torch.Generator().manual_seed(seed)
        train_teacher_only(init, proxy, epochs=cfg.rounds * cfg.local_epochs, lr=cfg.lr, batch_size=cfg.batch_size,
                           generator=gen)
        privacy = {"epsilon_target": epsilon, "unit": "no client data used (public proxy text, teacher labels)",
                   "epsilon_total_rdp": 0.0}
        return {"model": init, "privacy": privacy, "parts": parts, "members_used": False,
                "seconds": time.perf_counter() - t0}
    client_data: List[Windows] = [make_windows([train_docs[i] for i in p], cfg.model) for p in parts]
    sizes = [len(d) for d in client_data]
    privacy = run_report(m, epsilon, cfg, sizes)
    if m.layout == "pooled":
        pooled = make_windows(train_docs, cfg.model)
        gen = torch.Generator().manual_seed(seed)
        train_epochs(init, pooled, epochs=cfg.rounds * cfg.local_epochs, lr=cfg.lr, batch_size=cfg.batch_size, generator=gen)
        return {"model": init, "privacy": privacy, "parts": parts, "seconds": time.perf_counter() - t0}
    if m.layout == "local":
        models: List[torch.nn.Module] = []
        for k, data in enumerate(client_data):
            mk = new_model(cfg.model, seed)
            gen = torch.Generator().manual_seed(seed * 1000 + k)
            train_epochs(mk, data, epochs=cfg.rounds * cfg.local_epochs, lr=cfg.lr, batch_size=cfg.batch_size, generator=gen)
            models.append(mk)
        return {"models": models, "privacy": privacy, "parts": parts, "seconds": time.perf_counter() - t0}

    delta = ldp_delta(sizes)
    mechanisms = [client_mechanism(m, epsilon, cfg, n, delta) for n in sizes]
    if m.distill:
        privacy.update(kd="public proxy text only: post-processing, no privacy cost",
                       kd_interval=cfg.kd.interval, kd_mu=cfg.kd.mu, kd_teacher_weight=cfg.kd.teacher_weight)
    global_flat = get_flat(init)
    server = make_aggregator(m, epsilon, cfg, global_flat, torch.Generator().manual_seed(seed * 7 + 3))
    model = new_model(cfg.model, seed)
    history: List[Dict[str, Any]] = []
    for r in range(cfg.rounds):
        chosen = select_clients(cfg.n_clients, cfg.participation, r, seed)
        ups = []
        for k in chosen:
            res = local_update(global_flat, client_data[k], cfg.model, epochs=cfg.local_epochs, lr=cfg.lr,
                               batch_size=cfg.batch_size, seed=client_seed(seed, r, k),
                               local_dp=mechanisms[k].local_dp, dpsgd=mechanisms[k].dpsgd)
            ups.append((res["update"], float(res["num_samples"])))
        global_flat = server.step(global_flat, ups)
        entry: Dict[str, Any] = {"round": r, "clients": chosen}
        if m.distill and (r + 1) % cfg.kd.interval == 0:
            assert proxy is not None
            global_flat, entry["kd"] = distill_flat(global_flat, proxy, cfg.kd, cfg.model, seed * 7919 + r)
        history.append(entry)
        if progress:
            progress(f"{m.name} eps={epsilon} seed={seed} round {r + 1}/{cfg.rounds}")
    set_flat(model, global_flat)
    out = {"model": model, "privacy": privacy, "parts": parts, "history": history, "seconds": time.perf_counter() - t0}
    if m.distill:
        out["kd"] = [h["kd"] for h in history if "kd" in h]
    return out


def with_alpha(cfg: FedConfig, alpha: float) -> FedConfig:
    """A copy of ``cfg`` with another Dirichlet α."""
    return replace(cfg, alpha=alpha)
