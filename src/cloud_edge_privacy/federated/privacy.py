"""What a method's privacy mechanism means for one run: the client side (local DP or DP-SGD), the server side
(DP-FTRL's tree noise around FedAvg) and the accounting report. Used by the simulation, the Flower apps and the
Ianvs modules alike; the numbers come from :mod:`.dp` (the one calibration)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Sequence

import torch

from .client import DPSGD, LocalDP
from .dp import Calibration, dpsgd_noise, ftrl_noise, ldp_sigma
from .methods import Method
from .server import DPFTRLServer, FedAdamServer, FedAvgServer, make_server

#: δ of DP-FTRL's client-level guarantee (well below 1/number of clients)
FTRL_DELTA = 1e-3


@dataclass(frozen=True)
class ClientMechanism:
    """What one client applies to its round: local DP on the release and/or DP-SGD in training."""

    local_dp: Optional[LocalDP] = None
    dpsgd: Optional[DPSGD] = None
    report: Dict[str, Any] = field(default_factory=dict)


def ldp_delta(client_sizes: Sequence[int]) -> float:
    """δ of local DP = 1/|S| with |S| the smallest client's number of windows."""
    return 1.0 / max(2, min(client_sizes))


def client_mechanism(method: Method, epsilon: float, cfg: Any, n_windows: int, delta: float) -> ClientMechanism:
    """The mechanism one client with ``n_windows`` records applies (``delta``: the local-DP δ of the run)."""
    if not math.isfinite(epsilon) or method.privacy in ("none", "tree"):
        return ClientMechanism()
    if method.local_dp:
        cal = ldp_sigma("paper" if method.privacy == "ldp_paper" else "accounted", epsilon, delta, cfg.rounds,
                        cfg.theta)
        return ClientMechanism(local_dp=LocalDP(cfg.theta, cal.scale), report=cal.report)
    if method.privacy == "dpsgd":
        cal = dpsgd_noise(epsilon, n_windows, cfg.batch_size, cfg.local_epochs, cfg.rounds)
        return ClientMechanism(dpsgd=DPSGD(cal.scale, cfg.dpsgd_clip), report=cal.report)
    raise ValueError(f"method '{method.name}': no client mechanism for privacy '{method.privacy}'")


def run_report(method: Method, epsilon: float, cfg: Any, client_sizes: Sequence[int]) -> Dict[str, Any]:
    """The privacy part of a run's result: ε target, the calibration and ε accounted over all rounds."""
    report: Dict[str, Any] = {"epsilon_target": epsilon}
    if not math.isfinite(epsilon) or method.privacy == "none":
        return report
    if method.local_dp:
        report.update(client_mechanism(method, epsilon, cfg, min(client_sizes), ldp_delta(client_sizes)).report)
    elif method.privacy == "dpsgd":
        reports = [client_mechanism(method, epsilon, cfg, n, 0.0).report for n in client_sizes]
        report.update(unit=reports[0]["unit"], delta="1/|client windows|",
                      noise_multipliers=[r["noise_multiplier"] for r in reports],
                      epsilon_total_rdp=max(r["epsilon_total_rdp"] for r in reports), rounds_accounted=cfg.rounds)
    elif method.privacy == "tree":
        report.update(ftrl_calibration(epsilon, cfg).report)
    return report


def ftrl_calibration(epsilon: float, cfg: Any) -> Calibration:
    return ftrl_noise(epsilon, FTRL_DELTA, cfg.rounds, cfg.theta)


def clients_per_round(cfg: Any) -> int:
    return max(1, math.ceil(cfg.participation * cfg.n_clients))


def make_aggregator(method: Method, epsilon: float, cfg: Any, init_flat: torch.Tensor,
                    generator: torch.Generator) -> "FedAvgServer | FedAdamServer | DPFTRLServer":
    """The server of ``method``: FedAvg or eq. 5, wrapped by DP-FTRL's tree noise for ``privacy = tree``.

    ``generator`` draws the tree noise: seeded in a benchmark, from the OS CSPRNG in a deployment."""
    if method.privacy == "tree" and math.isfinite(epsilon):
        cal = ftrl_calibration(epsilon, cfg)
        return DPFTRLServer(init_flat, cfg.theta, cal.scale, clients_per_round(cfg), cfg.server_lr_fedavg, generator)
    lr = cfg.server_lr_fedavg if method.aggregator == "fedavg" else cfg.server_lr_fedadam
    return make_server(method.aggregator, lr)

