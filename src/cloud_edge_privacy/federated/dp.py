"""Differential privacy for the federated detector: the paper's local DP rule and a correct accounting.

Privacy map of the local-DP release (both calibrations): each participating client releases
``clip(update, θ) + N(0, σ² I)`` once per round. Unit protected: the client's whole local data set
(replace-one-client neighbouring relation; the clipped update has L2 sensitivity 2θ). Mechanism:
Gaussian, approximate (ε, δ)-DP. Composition: over the rounds the client takes part in; we account
for all ``R`` rounds (worst case) because the server sees which clients take part, so client
sampling gives no amplification against it.

* :func:`paper_sigma` is PrivateAI's eq. 4, σ² = 8θ² ln(1.25/δ)/ε²: the classic calibration, valid
  only for ε < 1, per round, composition ignored.
* :func:`analytic_gaussian_sigma` is the exact (Balle & Wang 2018) calibration for one release.
* :func:`gaussian_rounds_epsilon` / :func:`calibrate_rounds_sigma` compose ``R`` Gaussian releases
  with the RDP accountant of ``dp-accounting``.
"""
from __future__ import annotations

import math
from typing import Callable, Tuple

import torch


def paper_sigma(epsilon: float, delta: float, theta: float = 1.0) -> float:
    """PrivateAI eq. 4: σ = sqrt(8 θ² ln(1.25/δ)) / ε (per round; not a valid guarantee for ε >= 1)."""
    if epsilon <= 0 or not 0 < delta < 1:
        raise ValueError("epsilon must be > 0 and 0 < delta < 1")
    return math.sqrt(8.0 * theta * theta * math.log(1.25 / delta)) / epsilon


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def gaussian_delta(sigma: float, sensitivity: float, epsilon: float) -> float:
    """Exact δ(ε) of one Gaussian release with noise σ and L2 sensitivity Δ (Balle & Wang 2018, Thm 8)."""
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    return _phi(a - b) - math.exp(epsilon) * _phi(-a - b)


def _smallest_enough(too_small: Callable[[float], bool], lo: float, hi: float, steps: int) -> float:
    """The smallest x (to bisection precision) with ``too_small(x)`` false, for a predicate that is true below
    some threshold and false above it: double ``hi`` until it is enough, then bisect ``steps`` times."""
    while too_small(hi):
        hi *= 2.0
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        if too_small(mid):
            lo = mid
        else:
            hi = mid
    return hi


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Smallest σ with :func:`gaussian_delta` <= δ (bisection; δ(σ) decreases in σ)."""
    return _smallest_enough(lambda s: gaussian_delta(s, sensitivity, epsilon) > delta,
                            1e-6 * sensitivity, sensitivity, 200)


def gaussian_rounds_epsilon(noise_multiplier: float, rounds: int, delta: float) -> float:
    """ε after ``rounds`` Gaussian releases with σ/Δ = ``noise_multiplier`` (RDP accountant, dp-accounting)."""
    import dp_accounting
    from dp_accounting import rdp

    acc = rdp.RdpAccountant()
    acc.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(noise_multiplier), int(rounds)))
    return float(acc.get_epsilon(delta))


def calibrate_rounds_sigma(epsilon: float, delta: float, rounds: int, sensitivity: float) -> float:
    """σ such that ``rounds`` releases compose to (ε, δ) under the RDP accountant (bisection on σ/Δ)."""
    return _smallest_enough(lambda z: gaussian_rounds_epsilon(z, rounds, delta) > epsilon, 1e-2, 1.0, 40) * sensitivity


def dpsgd_epsilon(noise_multiplier: float, sample_rate: float, steps: int, delta: float) -> float:
    """ε of DP-SGD (Poisson-subsampled Gaussian) after ``steps`` steps, via dp-accounting's RDP accountant."""
    import dp_accounting
    from dp_accounting import rdp

    acc = rdp.RdpAccountant()
    ev = dp_accounting.PoissonSampledDpEvent(sample_rate, dp_accounting.GaussianDpEvent(noise_multiplier))
    acc.compose(dp_accounting.SelfComposedDpEvent(ev, int(steps)))
    return float(acc.get_epsilon(delta))


def clip_and_noise(update: torch.Tensor, theta: float, sigma: float, generator: torch.Generator) -> Tuple[torch.Tensor, float]:
    """Clip ``update`` to L2 norm θ and add N(0, σ²) per coordinate; returns (release, pre-clip norm)."""
    norm = float(update.norm())
    clipped = update * min(1.0, theta / max(norm, 1e-12))
    noise = torch.randn(update.shape, generator=generator, dtype=update.dtype) * sigma
    return clipped + noise, norm
