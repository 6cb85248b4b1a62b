"""Privacy budget accounting for the DP/LDP methods (basic sequential composition)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional


@dataclass
class Charge:
    mechanism: str
    epsilon: float
    delta: float = 0.0
    what: str = ""


@dataclass
class BudgetAccountant:
    """Records every mechanism application; the total is the sum (sequential composition).

    ``limit`` (optional) makes over-spending an error instead of a silent overrun.
    """

    limit: Optional[float] = None
    charges: List[Charge] = field(default_factory=list)

    def spend(self, mechanism: str, epsilon: float, delta: float = 0.0, what: str = "") -> None:
        if epsilon <= 0:
            raise ValueError(f"{mechanism}: epsilon must be positive, got {epsilon}")
        if self.limit is not None and self.total_epsilon + epsilon > self.limit + 1e-12:
            raise ValueError(f"{mechanism}: spending {epsilon} would exceed the budget {self.limit} "
                             f"(already spent {self.total_epsilon})")
        self.charges.append(Charge(mechanism, float(epsilon), float(delta), what))

    @property
    def total_epsilon(self) -> float:
        return round(sum(c.epsilon for c in self.charges), 9)

    @property
    def total_delta(self) -> float:
        return sum(c.delta for c in self.charges)
