"""The ``adaptive`` method: pick an operator per entity from its sensitivity level (table in config)."""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence

from ..sensitivity import DEFAULT_LEVELS
from ..spans import Span
from .accountant import BudgetAccountant
from .base import Desensitized, apply_replacements, get_operator, register_operator

# From simple to complex, as the seed proposal orders them; level -> method.
DEFAULT_POLICY: Dict[int, str] = {
    5: "pseudonym",        # direct identifiers: consistent, reversible surrogates (answers can be restored)
    4: "suppression",      # confidential attributes
    3: "generalization",   # quasi-identifiers: dates -> year, places -> country, organisations -> kind
    2: "dp_numbers",       # amounts and other numbers: Laplace noise with adaptive ε
    1: "keep",
}


@register_operator("adaptive")
class AdaptivePolicy:
    """Route each span to the operator its sensitivity level names; merge the results.

    Each operator sees the whole text with only its own spans, so consistency (same value, same
    output) holds within each operator; ε of the DP operators is summed by the accountant.
    """

    name = "adaptive"

    def __init__(self, policy: Optional[Mapping[int, str]] = None, levels: Optional[Mapping[str, int]] = None,
                 operator_params: Optional[Mapping[str, Dict[str, Any]]] = None) -> None:
        self.policy = {int(k): v for k, v in (policy or DEFAULT_POLICY).items()}
        self.levels = dict(levels or DEFAULT_LEVELS)
        params = dict(operator_params or {})
        self.ops = {m: get_operator(m, **params.get(m, {})) for m in set(self.policy.values()) if m != "keep"}

    def method_for(self, span: Span) -> str:
        lvl = self.levels.get(span.category, 2)
        return self.policy.get(lvl, "suppression")  # unknown level: fail towards more protection

    def __call__(self, text: str, spans: Sequence[Span], seed: int = 0) -> Desensitized:
        by_method: Dict[str, list] = {}
        for s in spans:
            by_method.setdefault(self.method_for(s), []).append(s)
        chosen: Dict[tuple, str] = {}
        acct = BudgetAccountant()
        vault: Dict[str, str] = {}
        restorers = []
        for method, subset in sorted(by_method.items()):
            if method == "keep":
                continue
            part = self.ops[method](text, subset, seed=seed)
            for r in part.replacements:
                chosen[(r.start, r.end)] = r.replacement
            for c in getattr(part, "accountant", BudgetAccountant()).charges:
                acct.spend(c.mechanism, c.epsilon, c.delta, c.what)
            vault.update(part.vault)
            if getattr(part, "restorer", None) is not None:
                restorers.append(part.restorer)
        kept = [s for s in spans if (s.start, s.end) in chosen]
        res = apply_replacements(text, kept, lambda s, surface: chosen[(s.start, s.end)], self.name)
        res.epsilon = acct.total_epsilon if acct.charges else None
        res.vault = vault
        res.accountant = acct  # type: ignore[attr-defined]
        if restorers:
            res.restorer = restorers[0]  # type: ignore[attr-defined]
        res.methods = {m: len(v) for m, v in by_method.items()}  # type: ignore[attr-defined]
        return res
