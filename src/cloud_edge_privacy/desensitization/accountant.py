"""Privacy budgets per document and per session, enforced before anything leaves the edge.

The edge pipeline calls ``accountant.charge(doc_scope, result.charges)`` after an operator ran and before
the request is sent; a charge that would exceed a limit raises :class:`BudgetExceededError` (a
:class:`PrivacyGatewayError`, so the sample fails closed) and records nothing.

Kinds are accounted separately and never added together.  Every kind uses basic sequential composition:
ε add up and δ compose as 1 - Π(1 - δᵢ), the rule of diffprivlib's ``BudgetAccountant`` with slack 0 (a
test checks the totals against it).  diffprivlib's accountant is not used as the store because it re-sums
its whole spend list on every check (quadratic over a long session), checks one spend at a time (no atomic
check of a batch against two limits), has no per-scope view and no metric kind.  Heuristic charges carry
no ε and are only counted.
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from pydantic import BaseModel, ConfigDict, field_validator

from ..errors import PrivacyGatewayError
from .base import APPROXIMATE, EPSILON_KINDS, HEURISTIC, METRIC, PURE, PrivacyCharge

# ε above this gives no meaningful guarantee (e^10 ≈ 22,000: the output may be 22,000 times likelier under
# one value than under another); reports flag it.
MEANINGFUL_EPSILON = 10.0
_TOL = 1e-9


def meaningful(epsilon: Optional[float]) -> bool:
    """True when ``epsilon`` is a finite ε <= :data:`MEANINGFUL_EPSILON` (a guarantee worth stating)."""
    return epsilon is not None and math.isfinite(epsilon) and 0 <= epsilon <= MEANINGFUL_EPSILON


class BudgetExceededError(PrivacyGatewayError):
    """A charge would exceed a per-document or per-session budget; nothing was recorded, nothing may leave."""


def _check_eps(value: float, what: str) -> float:
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{what} must be a finite number > 0, got {value!r}")
    return value


class Budget(BaseModel):
    """Per-kind limits: ``pure`` ε, ``approximate`` (ε, δ), ``metric`` ε (per unit of distance).

    A kind left as ``None`` is not limited by this budget; ``Budget()`` limits nothing.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    pure: Optional[float] = None
    approximate: Optional[Tuple[float, float]] = None
    metric: Optional[float] = None

    @field_validator("pure", "metric")
    @classmethod
    def _finite_positive(cls, v: Optional[float]) -> Optional[float]:
        return None if v is None else _check_eps(v, "a budget epsilon")

    @field_validator("approximate")
    @classmethod
    def _eps_delta(cls, v: Optional[Tuple[float, float]]) -> Optional[Tuple[float, float]]:
        if v is None:
            return None
        eps, delta = v
        _check_eps(eps, "the approximate budget's epsilon")
        if not (math.isfinite(delta) and 0 <= delta < 1):
            raise ValueError(f"the approximate budget's delta must be in [0, 1), got {delta!r}")
        return float(eps), float(delta)

    def limit(self, kind: str) -> Optional[Tuple[float, float]]:
        """(ε, δ) limit for ``kind``, or None when unlimited."""
        if kind == PURE:
            return None if self.pure is None else (self.pure, 0.0)
        if kind == APPROXIMATE:
            return self.approximate
        if kind == METRIC:
            return None if self.metric is None else (self.metric, 0.0)
        return None


@dataclass
class _Total:
    """Running basic composition of one kind: ε add up, δ compose as 1 - Π(1 - δᵢ) (O(1) per charge)."""

    epsilon: float = 0.0
    keep: float = 1.0      # Π(1 - δᵢ)
    n: int = 0

    @property
    def delta(self) -> float:
        return 1.0 - self.keep

    def plus(self, spends: Sequence[Tuple[float, float]]) -> "_Total":
        out = _Total(self.epsilon, self.keep, self.n)
        for eps, delta in spends:
            out.epsilon += eps
            out.keep *= 1.0 - delta
            out.n += 1
        return out


class PrivacyAccountant:
    """Thread-safe ledger of privacy charges with optional per-document and per-session budgets.

    One accountant belongs to one session (a benchmark run, a proxy conversation store); ``scope`` names the
    document or conversation a charge belongs to.  :meth:`charge` is atomic: every charge is checked against
    both limits first, and either all are recorded or none.
    """

    def __init__(self, per_document: Optional[Budget] = None, per_session: Optional[Budget] = None) -> None:
        self.per_document = per_document
        self.per_session = per_session
        self._lock = threading.Lock()
        self._totals: Dict[str, Dict[str, _Total]] = {}   # scope -> kind -> running total
        self._session: Dict[str, _Total] = {}               # kind -> running total over all scopes
        self._heuristic: Dict[str, int] = {}

    def charge(self, scope: str, charges: Sequence[PrivacyCharge]) -> None:
        """Record ``charges`` under ``scope``; raise :class:`BudgetExceededError` (recording nothing) if any
        per-kind total of the document or of the session would exceed its limit."""
        new: Dict[str, List[Tuple[float, float]]] = {}
        n_heuristic = 0
        for c in charges:
            pm = c.privacy_map
            if pm.kind == HEURISTIC:
                n_heuristic += 1
                continue
            if not (math.isfinite(pm.epsilon) and pm.epsilon > 0) or not (0 <= pm.delta < 1):
                raise BudgetExceededError(f"invalid charge from {pm.mechanism!r}: epsilon={pm.epsilon!r}, "
                                          f"delta={pm.delta!r} (epsilon must be finite and > 0)")
            new.setdefault(pm.kind, []).append((float(pm.epsilon), float(pm.delta)))
        with self._lock:
            doc = self._totals.setdefault(scope, {})
            for kind, spends in new.items():
                self._check(self.per_document, kind, doc.get(kind, _Total()).plus(spends),
                            f"per-document budget of {scope!r}")
                self._check(self.per_session, kind, self._session.get(kind, _Total()).plus(spends),
                            "per-session budget")
            for kind, spends in new.items():
                doc[kind] = doc.get(kind, _Total()).plus(spends)
                self._session[kind] = self._session.get(kind, _Total()).plus(spends)
            if n_heuristic:
                self._heuristic[scope] = self._heuristic.get(scope, 0) + n_heuristic

    @staticmethod
    def _check(budget: Optional[Budget], kind: str, total: _Total, where: str) -> None:
        limit = None if budget is None else budget.limit(kind)
        if limit is None:
            return
        eps, delta = total.epsilon, total.delta
        if eps > limit[0] + _TOL or delta > limit[1] + 1e-15:
            amount = f"epsilon {eps:.6g}" + (f", delta {delta:.3g}" if kind == APPROXIMATE else "")
            lim = f"epsilon {limit[0]:.6g}" + (f", delta {limit[1]:.3g}" if kind == APPROXIMATE else "")
            raise BudgetExceededError(f"privacy budget exceeded: {kind} spend would reach {amount}, over the "
                                      f"{where} limit of {lim}; nothing was recorded or sent")

    def spent(self, scope: Optional[str] = None) -> Dict[str, Dict[str, float]]:
        """``{kind: {"epsilon": .., "delta": ..}}`` for one scope, or for the whole session (``scope=None``).

        Only kinds with charges appear; kinds are never summed together.
        """
        with self._lock:
            totals = dict(self._session) if scope is None else dict(self._totals.get(scope, {}))
        return {kind: {"epsilon": round(totals[kind].epsilon, 9), "delta": totals[kind].delta}
                for kind in EPSILON_KINDS if kind in totals and totals[kind].n}

    def heuristic_releases(self, scope: Optional[str] = None) -> int:
        """Number of charges of kind ``heuristic`` (no formal guarantee) recorded."""
        with self._lock:
            return sum(self._heuristic.values()) if scope is None else self._heuristic.get(scope, 0)

    def scopes(self) -> List[str]:
        with self._lock:
            return sorted(s for s, kinds in self._totals.items() if kinds)
