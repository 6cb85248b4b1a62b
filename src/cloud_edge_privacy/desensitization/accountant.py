"""Privacy budgets per document and per session, enforced before anything leaves the edge.

The edge pipeline calls ``accountant.charge(doc_scope, result.charges)`` after an operator ran and before
the request is sent; a charge that would exceed a limit raises :class:`BudgetExceededError` (a
:class:`PrivacyGatewayError`, so the sample fails closed) and records nothing.

Kinds are accounted separately and never added together: pure ε-DP and approximate (ε, δ)-DP use
diffprivlib's :class:`~diffprivlib.BudgetAccountant` (basic sequential composition: ε add up, δ compose as
1 - Π(1 - δᵢ)); metric-DP ε (a rate per unit of distance) is summed by this module, as diffprivlib has no
notion of it.  Heuristic charges carry no ε and are only counted.
"""
from __future__ import annotations

import math
import threading
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


def _compose(kind: str, spends: Sequence[Tuple[float, float]]) -> Tuple[float, float]:
    """Total (ε, δ) of ``spends`` of one kind under basic sequential composition."""
    if not spends:
        return 0.0, 0.0
    if kind in (PURE, APPROXIMATE):
        from diffprivlib import BudgetAccountant as _DPLAccountant

        total = _DPLAccountant().total(spent_budget=list(spends))
        return float(total.epsilon), float(total.delta)
    return float(sum(e for e, _ in spends)), 0.0


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
        self._spends: Dict[str, Dict[str, List[Tuple[float, float]]]] = {}   # scope -> kind -> [(ε, δ)]
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
            for kind, spends in new.items():
                doc_before = self._spends.get(scope, {}).get(kind, [])
                self._check(self.per_document, kind, doc_before + spends, f"per-document budget of {scope!r}")
                session_before = [s for per_kind in self._spends.values() for s in per_kind.get(kind, [])]
                self._check(self.per_session, kind, session_before + spends, "per-session budget")
            for kind, spends in new.items():
                self._spends.setdefault(scope, {}).setdefault(kind, []).extend(spends)
            if n_heuristic:
                self._heuristic[scope] = self._heuristic.get(scope, 0) + n_heuristic

    @staticmethod
    def _check(budget: Optional[Budget], kind: str, spends: List[Tuple[float, float]], where: str) -> None:
        limit = None if budget is None else budget.limit(kind)
        if limit is None:
            return
        eps, delta = _compose(kind, spends)
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
            if scope is None:
                per_kind: Dict[str, List[Tuple[float, float]]] = {}
                for kinds in self._spends.values():
                    for kind, spends in kinds.items():
                        per_kind.setdefault(kind, []).extend(spends)
            else:
                per_kind = {k: list(v) for k, v in self._spends.get(scope, {}).items()}
        out: Dict[str, Dict[str, float]] = {}
        for kind in EPSILON_KINDS:
            if per_kind.get(kind):
                eps, delta = _compose(kind, per_kind[kind])
                out[kind] = {"epsilon": round(eps, 9), "delta": delta}
        return out

    def heuristic_releases(self, scope: Optional[str] = None) -> int:
        """Number of charges of kind ``heuristic`` (no formal guarantee) recorded."""
        with self._lock:
            return sum(self._heuristic.values()) if scope is None else self._heuristic.get(scope, 0)

    def scopes(self) -> List[str]:
        with self._lock:
            return sorted(self._spends)
