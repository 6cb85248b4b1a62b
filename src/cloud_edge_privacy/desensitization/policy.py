"""The ``adaptive`` method: pick an operator per entity from its sensitivity level (table in config).

The level comes from the span's category (public), never from its value.  The DP operators of the table
get a small ε per value (``epsilon``, default 1) and share a per-document cap (``max_document_epsilon``,
default 5 per kind): a value whose release would exceed the cap gets a placeholder instead, so one document
never spends more than the cap, however many numbers it contains.  The session/document budgets of the
pipeline's :class:`~.accountant.PrivacyAccountant` are enforced on top of this.
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Any, Dict, List, Mapping, Optional, Sequence

from pydantic import BaseModel, ConfigDict, field_validator

from ..randomness import Randomness
from ..sensitivity import DEFAULT_LEVELS
from ..spans import Span
from .accountant import BudgetExceededError
from .base import (EPSILON_KINDS, Desensitized, PrivacyCharge, apply_replacements, get_operator, operator_spec,
                   register_operator)
from .dp_mechanisms import check_epsilon
from .restore import OnePassRestorer

# From simple to complex, as the seed proposal orders them; level -> method.
DEFAULT_POLICY: Mapping[int, str] = MappingProxyType({
    5: "pseudonym",        # direct identifiers: consistent, reversible surrogates (answers can be restored)
    4: "suppression",      # confidential attributes
    3: "generalization",   # quasi-identifiers: dates -> year, places -> country, organisations -> kind
    2: "dp_numbers",       # amounts and other numbers: Laplace noise, ε per value
    1: "keep",
})
DEFAULT_VALUE_EPSILON = 1.0
DEFAULT_DOCUMENT_EPSILON = 5.0


class AdaptiveParams(BaseModel):
    """``epsilon``: ε per released value for the table's DP operators; ``max_document_epsilon``: their
    per-document cap (per kind, shared by all DP operators of the table)."""

    model_config = ConfigDict(extra="forbid")
    policy: Optional[Dict[int, str]] = None
    levels: Optional[Dict[str, int]] = None
    operator_params: Optional[Dict[str, Dict[str, Any]]] = None
    epsilon: float = DEFAULT_VALUE_EPSILON
    max_document_epsilon: float = DEFAULT_DOCUMENT_EPSILON

    @field_validator("epsilon", "max_document_epsilon", mode="before")
    @classmethod
    def _eps(cls, v: Any, info: Any) -> float:
        return check_epsilon(v, info.field_name)

    @field_validator("policy")
    @classmethod
    def _methods(cls, v: Optional[Dict[int, str]]) -> Optional[Dict[int, str]]:
        for lvl, method in (v or {}).items():
            if method == "adaptive":
                raise ValueError("the adaptive policy cannot route to itself")
            if method != "keep":
                try:
                    operator_spec(method)
                except KeyError as exc:   # a ValueError, so pydantic names the key at fault
                    raise ValueError(str(exc).strip("\"'")) from None
        return v


@register_operator("adaptive", params=AdaptiveParams, budgeted=True, restores="surrogates")
class AdaptivePolicy:
    """Route each span to the operator its sensitivity level names; merge the results and their charges.

    The DP operators of the table share ``max_document_epsilon`` equally; one without such a cap (e.g.
    ``metric_dp_words``) that overspends makes the call fail closed with :class:`BudgetExceededError`.
    """

    name = "adaptive"

    def __init__(self, **params: Any) -> None:
        self.params = AdaptiveParams(**params)
        self.policy = {int(k): v for k, v in (self.params.policy or DEFAULT_POLICY).items()}
        self.levels = dict(self.params.levels or DEFAULT_LEVELS)
        extra = dict(self.params.operator_params or {})
        methods = sorted(set(self.policy.values()) - {"keep"})
        budgeted = [m for m in methods if operator_spec(m).budgeted]
        self.ops = {}
        for m in methods:
            kwargs = dict(extra.get(m, {}))
            if m in budgeted:
                kwargs.setdefault("epsilon", self.params.epsilon)
                if "max_document_epsilon" in operator_spec(m).params.model_fields:
                    kwargs.setdefault("max_document_epsilon", self.params.max_document_epsilon / len(budgeted))
            self.ops[m] = get_operator(m, **kwargs)

    def method_for(self, span: Span) -> str:
        lvl = self.levels.get(span.category, 2)
        return self.policy.get(lvl, "suppression")  # unknown level: fail towards more protection

    def __call__(self, text: str, spans: Sequence[Span], rand: Randomness, scope: str = "") -> Desensitized:
        by_method: Dict[str, List[Span]] = {}
        for s in spans:
            by_method.setdefault(self.method_for(s), []).append(s)
        chosen: Dict[tuple, str] = {}
        charges: List[PrivacyCharge] = []
        vault: Dict[str, str] = {}
        restorers = []
        for method, subset in sorted(by_method.items()):
            if method == "keep":
                continue
            part = self.ops[method](text, subset, rand, scope)
            for r in part.replacements:
                chosen[(r.start, r.end)] = r.replacement
            charges.extend(part.charges)
            vault.update(part.vault)
            if part.restorer is not None:
                restorers.append((method != "pseudonym", part.restorer))
        kept = [s for s in spans if (s.start, s.end) in chosen]
        res = apply_replacements(text, kept, lambda s, surface: chosen[(s.start, s.end)], self.name)
        res.charges = charges
        self._check_cap(res)
        res.vault = vault
        restorers.sort(key=lambda t: t[0])   # pseudonyms first, then placeholders
        if restorers:
            res.restorer = OnePassRestorer.merged(r for _, r in restorers)
        res.methods = {m: len(v) for m, v in by_method.items()}  # type: ignore[attr-defined]
        return res

    def _check_cap(self, res: Desensitized) -> None:
        """Defence in depth: the operators' caps must add up to at most the document cap, per kind."""
        for kind, eps in res.epsilon_by_kind().items():
            if kind in EPSILON_KINDS and eps > self.params.max_document_epsilon + 1e-9:
                raise BudgetExceededError(f"adaptive: {kind} epsilon {eps:.6g} for one document exceeds "
                                          f"max_document_epsilon {self.params.max_document_epsilon:g}")
