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

DP-FTRL (Kairouz et al. 2021), central DP with tree aggregation (:class:`TreeNoise`): each client's update is
clipped to C, the server adds the clipped updates of a round into leaf r of a binary tree over the R rounds and
releases noisy prefix sums, each the exact sum plus the Gaussian noise N(0, (zC)²) of the O(log R) dyadic
nodes that cover rounds 0..r. No sampling assumption: a client may take part in every round. Unit: one
client's whole data (add/remove). If it takes part in all R rounds, its contribution to node v has norm at most
n_v·C (n_v = rounds under v), so the release of all nodes is one Gaussian mechanism with L2 sensitivity
C·sqrt(Σ_v n_v²) (:func:`tree_sensitivity_factor`), accounted with dp-accounting. dp-accounting's own tree
events assume one participation per epoch, which 80% client participation does not give.

Calibration lives here, once, for every path (simulation, Flower apps, Ianvs modules): :func:`ldp_sigma`,
:func:`dpsgd_noise`, :func:`ftrl_noise`, each solving its noise multiplier with :func:`solve_noise_multiplier`
(bisection against dp-accounting's RDP accountant for the row's whole mechanism, so ε accounted <= ε target).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Dict, List, Tuple

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


def solve_noise_multiplier(accounted: Callable[[float], float], target: float, steps: int = 40) -> float:
    """The smallest noise multiplier z (to bisection precision) whose accounted ε, ``accounted(z)``, is <= ``target``.

    ``accounted`` must decrease in z (more noise, less ε). The answer always satisfies ``accounted(z) <= target``
    (bisection keeps the upper end), and after 40 steps it is within about 10⁻¹¹ of the exact root, so the
    accounted ε is the target up to the accountant's own flatness. The one solver of every DP row."""
    if not target > 0 or not math.isfinite(target):
        raise ValueError(f"target epsilon must be finite and > 0, got {target}")
    return _smallest_enough(lambda z: accounted(z) > target, 1e-2, 1.0, steps)


def calibrate_rounds_sigma(epsilon: float, delta: float, rounds: int, sensitivity: float) -> float:
    """σ such that ``rounds`` releases compose to (ε, δ) under the RDP accountant (bisection on σ/Δ)."""
    return solve_noise_multiplier(lambda z: gaussian_rounds_epsilon(z, rounds, delta), epsilon) * sensitivity


def dpsgd_schedule(n_windows: int, batch_size: int, local_epochs: int, rounds: int) -> Tuple[float, int]:
    """(Poisson rate q, steps) of the client's DP-SGD over all rounds, exactly as Opacus runs it: the private data
    loader has ``ceil(n/B)`` batches per epoch and samples each record with q = 1/ceil(n/B)."""
    batches = max(1, math.ceil(max(n_windows, 1) / batch_size))
    return 1.0 / batches, batches * local_epochs * rounds


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


# --- DP-FTRL: tree aggregation ----------------------------------------------------------------------------

def tree_nodes(rounds: int) -> List[Tuple[int, int]]:
    """The dyadic nodes ``(level, index)`` (covering rounds ``[index·2^level, (index+1)·2^level)``) that some
    prefix ``[0, t)``, ``t = 1..rounds``, is made of."""
    used = set()
    for t in range(1, rounds + 1):
        used.update(_prefix_nodes(t))
    return sorted(used)


def _prefix_nodes(t: int) -> List[Tuple[int, int]]:
    """Binary decomposition of ``[0, t)`` into dyadic nodes (largest first)."""
    out, start = [], 0
    for level in range(t.bit_length() - 1, -1, -1):
        if t & (1 << level):
            out.append((level, start >> level))
            start += 1 << level
    return out


def tree_sensitivity_factor(rounds: int) -> float:
    """sqrt(Σ_v n_v²) over the released nodes, n_v = rounds under node v (client in every round)."""
    return math.sqrt(sum(min(1 << lvl, rounds - (i << lvl)) ** 2 for lvl, i in tree_nodes(rounds)))


class TreeNoise:
    """The noise of the tree's nodes, drawn once per node; ``prefix_noise(t)`` = noise of the prefix [0, t)."""

    def __init__(self, dim: int, std: float, generator: torch.Generator) -> None:
        self.dim, self.std, self.gen = dim, std, generator
        self.nodes: Dict[Tuple[int, int], torch.Tensor] = {}

    def prefix_noise(self, t: int) -> torch.Tensor:
        total = torch.zeros(self.dim)
        for node in _prefix_nodes(t):
            if node not in self.nodes:
                self.nodes[node] = torch.randn(self.dim, generator=self.gen) * self.std
            total += self.nodes[node]
        return total


# --- calibration: one place for every path ------------------------------------------------------------------

@dataclass(frozen=True)
class Calibration:
    """The noise of one mechanism and what it is worth: ``scale`` is σ (local DP), the noise multiplier z
    (DP-SGD) or the node noise multiplier z (DP-FTRL, node std = zC)."""

    mechanism: str
    scale: float
    delta: float
    epsilon_total: float
    report: Dict[str, Any]


def ldp_sigma(calibration: str, epsilon: float, delta: float, rounds: int, theta: float) -> Calibration:
    """Local DP on each released update (clip θ, Gaussian σ): ``paper`` = eq. 4 per round, ``accounted`` =
    σ such that all ``rounds`` compose to ε (RDP). ε total is accounted over all rounds in both cases."""
    sens = 2.0 * theta
    report: Dict[str, Any] = {}
    if calibration == "paper":
        sigma = paper_sigma(epsilon, delta, theta)
        report.update(epsilon_per_round_paper=epsilon, calibration="paper eq. 4 (per round)")
    elif calibration == "accounted":
        sigma = calibrate_rounds_sigma(epsilon, delta, rounds, sens)
        # the per-round ε the paper's eq. 4 would state for this σ (eq. 4 solved for ε)
        report.update(epsilon_per_round_paper=round(paper_sigma(1.0, delta, theta) / sigma, 4),
                      calibration="RDP over all rounds (accounted)")
    else:
        raise ValueError(f"unknown local-DP calibration '{calibration}' (expected paper or accounted)")
    eps = _ceil4(gaussian_rounds_epsilon(sigma / sens, rounds, delta))
    report.update(sigma=sigma, delta=delta, theta=theta, unit="client data set (replace-one, Δ=2θ)",
                  epsilon_total_rdp=eps, rounds_accounted=rounds)
    return Calibration("local_dp", sigma, delta, eps, report)


def dpsgd_noise(epsilon: float, n_windows: int, batch_size: int, local_epochs: int, rounds: int) -> Calibration:
    """DP-SGD noise multiplier for one client with ``n_windows`` records: all local steps of all rounds (the client
    may take part in every round), Poisson rate and step count as Opacus runs them (:func:`dpsgd_schedule`),
    δ = 1/n; z solved with dp-accounting's RDP accountant (:func:`solve_noise_multiplier`), so the ε reported
    is the ε accounted and never above the target."""
    q, steps = dpsgd_schedule(n_windows, batch_size, local_epochs, rounds)
    delta = 1.0 / max(n_windows, 2)
    z, eps = _dpsgd_solution(float(epsilon), q, steps, delta)
    return Calibration("dpsgd", z, delta, eps, {"noise_multiplier": round(z, 4), "sample_rate": round(q, 4),
                                                "steps": steps, "epsilon_total_rdp": eps,
                                                "calibration": "dp-accounting RDP, bisection on z",
                                                "unit": "one 128-token window (record-level DP-SGD)"})


@lru_cache(maxsize=256)
def _dpsgd_solution(epsilon: float, q: float, steps: int, delta: float) -> Tuple[float, float]:
    """(z, ε accounted rounded up) for one DP-SGD schedule; memoised (a pure function of numbers: every client of
    the same size in every round of a run asks the same question, and one solve is 40 accountant calls)."""
    z = solve_noise_multiplier(lambda m: dpsgd_epsilon(m, q, steps, delta), epsilon)
    return z, _ceil4(dpsgd_epsilon(z, q, steps, delta))


def _ceil4(x: float) -> float:
    """``x`` rounded up to 4 decimals: a reported ε never reads below what was accounted."""
    return math.ceil(x * 1e4 - 1e-9) / 1e4


def ftrl_noise(epsilon: float, delta: float, rounds: int, clip: float) -> Calibration:
    """DP-FTRL node noise multiplier z such that the whole tree (client in every round) is (ε, δ)-DP."""
    factor = tree_sensitivity_factor(rounds)
    z = solve_noise_multiplier(lambda m: gaussian_rounds_epsilon(m, 1, delta), epsilon) * factor
    eps = _ceil4(gaussian_rounds_epsilon(z / factor, 1, delta))
    return Calibration("tree", z, delta, eps, {
        "noise_multiplier": round(z, 4), "clip": clip, "delta": delta, "tree_sensitivity_factor": round(factor, 4),
        "epsilon_total_rdp": eps, "rounds_accounted": rounds,
        "unit": "one client's data (add/remove), taking part in every round (no sampling assumption)"})

