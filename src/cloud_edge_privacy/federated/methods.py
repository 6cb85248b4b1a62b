"""A federated method is a composition: training layout x aggregator x privacy mechanism x distillation.

Every path (the simulation, the Flower apps, the Ianvs modules) reads a method through :func:`parse_method`,
so each combination is decoded once. The named methods of the grid are entries of :data:`NAMED`; any other
valid combination can be written ``<aggregator>+<privacy>[+kd]``, e.g. ``fedavg+ldp_accounted+kd``.

* layout: ``pooled`` (centralised), ``local`` (each client alone), ``federated``, ``proxy_only`` (teacher
  labels on public text only);
* aggregator: ``fedavg`` (sample-weighted mean, server lr 1) or ``fedadam`` (PrivateAI eq. 5);
* privacy: ``none``, ``dpsgd`` (record-level DP-SGD in each client), ``ldp_paper`` / ``ldp_accounted``
  (clip + Gaussian on each released update, σ from the paper's eq. 4 per round or accounted over all rounds),
  ``tree`` (DP-FTRL: central DP by tree aggregation around the fedavg aggregator, a DP wrapper as in Flower);
* distillation: PrivateAI's server-side KD on the teacher-labelled public proxy set every ``kd.interval`` rounds.

The seed rule is here too (:func:`client_seed`, :func:`selection_rng`), so every path trains the same model.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, Tuple

import numpy as np

LAYOUTS = ("pooled", "local", "federated", "proxy_only")
AGGREGATORS = ("fedavg", "fedadam")
PRIVACY = ("none", "dpsgd", "ldp_paper", "ldp_accounted", "tree")


@dataclass(frozen=True)
class Method:
    """One method; ``epsilon_optional``: a finite ε turns the privacy mechanism on, ∞ runs it without noise."""

    name: str
    layout: str
    aggregator: str = ""
    privacy: str = "none"
    distill: bool = False
    epsilon_optional: bool = False

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise ValueError(f"method '{self.name}': unknown layout '{self.layout}'")
        if self.layout == "federated" and self.aggregator not in AGGREGATORS:
            raise ValueError(f"method '{self.name}': aggregator must be one of {AGGREGATORS}")
        if self.privacy not in PRIVACY:
            raise ValueError(f"method '{self.name}': privacy must be one of {PRIVACY}")
        if self.privacy != "none" and self.layout != "federated":
            raise ValueError(f"method '{self.name}': a privacy mechanism needs the federated layout")
        if self.privacy == "tree" and self.aggregator != "fedavg":
            raise ValueError(f"method '{self.name}': DP-FTRL's tree noise wraps the fedavg aggregator only")

    @property
    def needs_epsilon(self) -> bool:
        return self.privacy != "none" and not self.epsilon_optional

    @property
    def takes_epsilon(self) -> bool:
        return self.privacy != "none"

    @property
    def local_dp(self) -> bool:
        return self.privacy in ("ldp_paper", "ldp_accounted")

    @property
    def needs_proxy(self) -> bool:
        return self.distill

    def check_epsilon(self, epsilon: float) -> None:
        """Raise ValueError when ``epsilon`` does not fit the method."""
        if not epsilon > 0:
            raise ValueError(f"epsilon must be > 0, got {epsilon}")
        if self.needs_epsilon and not math.isfinite(epsilon):
            raise ValueError(f"method '{self.name}' needs a finite epsilon")
        if not self.takes_epsilon and math.isfinite(epsilon):
            raise ValueError(f"method '{self.name}' has no privacy budget; epsilon must be inf")


NAMED: Dict[str, Method] = {m.name: m for m in (
    Method("centralized", "pooled"),
    Method("local_only", "local"),
    Method("fedavg", "federated", "fedavg"),
    Method("fedadam", "federated", "fedadam"),
    Method("dp_fedavg", "federated", "fedavg", "dpsgd"),
    Method("dp_ftrl", "federated", "fedavg", "tree"),
    Method("fedadam_ldp_paper", "federated", "fedadam", "ldp_paper"),
    Method("fedadam_ldp_accounted", "federated", "fedadam", "ldp_accounted"),
    Method("teacher_only", "proxy_only", distill=True),
    Method("privateai", "federated", "fedadam", "ldp_accounted", distill=True, epsilon_optional=True),
    Method("privateai_paper", "federated", "fedadam", "ldp_paper", distill=True),
)}
METHODS: Tuple[str, ...] = tuple(NAMED)


def parse_method(name: str) -> Method:
    """A named method, or a composition ``<aggregator>+<privacy>[+kd]``."""
    if name in NAMED:
        return NAMED[name]
    parts = name.split("+")
    kd = parts[-1] == "kd"
    if kd:
        parts = parts[:-1]
    if len(parts) in (1, 2) and parts[0] in AGGREGATORS:
        privacy = parts[1] if len(parts) == 2 else "none"
        if privacy in PRIVACY:
            return Method(name, "federated", parts[0], privacy, kd)
    raise ValueError(f"unknown method '{name}': expected one of {METHODS} or '<aggregator>+<privacy>[+kd]' with "
                     f"aggregator in {AGGREGATORS}, privacy in {PRIVACY}")


def client_seed(seed: int, round_idx: int, client: int) -> int:
    """The local-training seed of client ``client`` in round ``round_idx`` (0-based) of a run seeded ``seed``."""
    return seed * 100003 + round_idx * 101 + client


def selection_rng(seed: int, round_idx: int) -> np.random.Generator:
    """The generator that picks round ``round_idx``'s clients."""
    return np.random.default_rng([seed, round_idx, 7])
