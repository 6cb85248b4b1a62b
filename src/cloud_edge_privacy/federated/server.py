"""Server-side aggregation over flat parameter vectors: FedAvg, the paper's Adam-style rule (eq. 5), and DP-FTRL
(central DP by tree aggregation, wrapped around FedAvg's sum)."""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

import torch

from .dp import TreeNoise


def weighted_mean(updates: Sequence[Tuple[torch.Tensor, float]]) -> torch.Tensor:
    """Σ w_k Δ_k / Σ w_k."""
    if not updates:
        raise ValueError("no client updates to aggregate")
    tot = sum(float(w) for _, w in updates)
    if tot <= 0:
        raise ValueError("client weights must sum to a positive number")
    return sum(u * (float(w) / tot) for u, w in updates)  # type: ignore[return-value]


class FedAvgServer:
    """Θ += η · weighted mean of client updates (η = 1 is McMahan et al.'s FedAvg)."""

    def __init__(self, lr: float = 1.0) -> None:
        self.lr = lr

    def step(self, global_flat: torch.Tensor, updates: Sequence[Tuple[torch.Tensor, float]]) -> torch.Tensor:
        return global_flat + self.lr * weighted_mean(updates)


class FedAdamServer:
    """PrivateAI eq. 5: Δ = mean update; G = τ1 G + (1-τ1) Δ; κ = τ2 κ + (1-τ2) Δ²; Θ += η G / sqrt(κ + τ0).

    The paper writes τ0 inside the square root; we follow it. Δ is the unweighted mean (the paper's rule).
    """

    def __init__(self, lr: float = 0.01, tau0: float = 1e-8, tau1: float = 0.9, tau2: float = 0.999) -> None:
        self.lr, self.tau0, self.tau1, self.tau2 = lr, tau0, tau1, tau2
        self.G: Optional[torch.Tensor] = None
        self.kappa: Optional[torch.Tensor] = None

    def step(self, global_flat: torch.Tensor, updates: Sequence[Tuple[torch.Tensor, float]]) -> torch.Tensor:
        delta = weighted_mean([(u, 1.0) for u, _ in updates])
        if self.G is None or self.kappa is None:
            self.G = torch.zeros_like(delta)
            self.kappa = torch.zeros_like(delta)
        self.G = self.tau1 * self.G + (1 - self.tau1) * delta
        self.kappa = self.tau2 * self.kappa + (1 - self.tau2) * delta * delta
        return global_flat + self.lr * self.G / torch.sqrt(self.kappa + self.tau0)


class DPFTRLServer:
    """DP-FTRL: Θ_t = Θ_0 + η · (Σ_{r<=t} Σ_k clip_C(Δ_k) + tree noise of the prefix) / m.

    ``m`` = the number of clients asked per round (public, fixed), so the weights reveal nothing through the
    denominator; the updates are clipped here (a client could clip its own as well) and weighted equally.
    """

    def __init__(self, init_flat: torch.Tensor, clip: float, noise_multiplier: float, clients_per_round: int,
                 lr: float, generator: torch.Generator) -> None:
        self.init = init_flat.clone()
        self.clip, self.m, self.lr = float(clip), int(clients_per_round), float(lr)
        self.tree = TreeNoise(init_flat.numel(), noise_multiplier * clip, generator)
        self.total = torch.zeros_like(init_flat)
        self.t = 0

    def step(self, global_flat: torch.Tensor, updates: Sequence[Tuple[torch.Tensor, float]]) -> torch.Tensor:
        for u, _ in updates:
            self.total += u * min(1.0, self.clip / max(float(u.norm()), 1e-12))
        self.t += 1
        return self.init + self.lr * (self.total + self.tree.prefix_noise(self.t)) / self.m


def make_server(kind: str, lr: float) -> "FedAvgServer | FedAdamServer":
    """``fedavg`` or ``fedadam``."""
    if kind == "fedavg":
        return FedAvgServer(lr)
    if kind == "fedadam":
        return FedAdamServer(lr)
    raise ValueError(f"unknown server aggregation '{kind}' (expected fedavg or fedadam)")
