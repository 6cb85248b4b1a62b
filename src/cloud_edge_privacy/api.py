"""The library API: analyze text into typed entities, protect it with one method or a per-type policy, restore.

It runs the same privacy path as the benchmark and the proxy: the edge pipeline's detector, the privacy
gateway's operators and the egress guard (:class:`~cloud_edge_privacy.core.pipeline.EdgePipeline`).  Fine-grained
entity types (EMAIL, PHONE, IBAN, ...) are read from which recognizer found a span; each maps to one of TAB's
eight categories, which the operators and the benchmark's metrics use.

Randomness is deployment randomness: OS CSPRNG noise and keyed choices (pseudonyms, date shifts) under the
secret key in ``$CEP_SECRET_KEY``.  Without it a random key is generated for the process (a warning says so):
surrogates are then consistent and restorable only within that process.
"""
from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .errors import ConfigError
from .randomness import SECRET_KEY_ENV, Randomness
from .spans import Span, is_secret
from .vocabulary import CATEGORY_ENTITY_TYPE, ENTITY_TYPES

# ENTITY_TYPES (vocabulary.py): fine-grained entity type -> the TAB category it belongs to (the benchmark's and
# the operators' unit); which type a span has is declared by the recognizer that found it
# (``RecognizerSpec.fine_types``).
KEEP = "keep"  # a policy value: leave the type as it is


def entity_type(span: Span, fine_types: Optional[Mapping[str, str]] = None) -> str:
    """The fine-grained type of a detected span: the one its recognizer declares for the span's source
    (``fine_types``: source -> type, default every registered recognizer's declarations), else its TAB
    category's.  A secret is a ``SECRET``."""
    if is_secret(span):
        return "SECRET"
    if fine_types is None:
        from .detection.catalog import all_fine_types

        fine_types = all_fine_types()
    fine = fine_types.get(span.source)
    if fine is not None and ENTITY_TYPES[fine] == span.category:
        return fine
    return CATEGORY_ENTITY_TYPE.get(span.category, "MISC")


@dataclass(frozen=True)
class Entity:
    """A detected entity: fine-grained ``type``, its TAB ``category``, offsets ``[start, end)`` and the text."""

    type: str
    category: str
    start: int
    end: int
    text: str
    score: float
    source: str

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


def _entities(text: str, spans: Sequence[Span]) -> List[Entity]:
    from .detection.catalog import all_fine_types

    table = all_fine_types()
    return [Entity(entity_type(s, table), s.category, s.start, s.end, text[s.start:s.end], s.score, s.source)
            for s in sorted(spans)]


@dataclass(frozen=True)
class Replacement:
    """One rewritten entity: what it was and what the protected text says instead."""

    entity: Entity
    replacement: str


@dataclass
class Protected:
    """The result of :meth:`Gateway.protect`: the text to send, what was replaced, and the way back."""

    text: str
    method: str
    entities: List[Entity]          # everything detected in the original text
    replacements: List[Replacement]  # what was rewritten, in order
    randomness: str                  # the randomness label (deployment, or benchmark with its caveat)
    epsilon_spent: Dict[str, float]
    # values the egress guard found in clear and had masked too, per "rule/category" (counts, no values)
    repairs: Dict[str, int] = field(default_factory=dict)
    _prot: Any = field(default=None, repr=False)  # the gateway's ProtectedFields (holds the restoration vault)

    def restore(self, answer: str) -> str:
        """Put the original values back into an answer about the protected text (pseudonyms, placeholders;
        the identity for irreversible methods)."""
        return self._prot.restore(answer)


def _validate_policy(policy: Mapping[str, str]) -> Dict[str, str]:
    from .desensitization import list_operators

    methods = set(list_operators()) | {KEEP}
    out = {}
    for etype, method in policy.items():
        key = str(etype).upper()
        if key not in ENTITY_TYPES:
            raise ConfigError(f"policy: unknown entity type {etype!r}; known: {sorted(ENTITY_TYPES)}")
        if method not in methods or method in ("none", "adaptive"):
            raise ConfigError(f"policy[{etype!r}]: unknown or unsuitable method {method!r}; "
                              f"known: {sorted(methods - {'none', 'adaptive'})}")
        out[key] = method
    return out


def _typed_operator(policy: Mapping[str, str], default: str, epsilon: Optional[float]) -> Any:
    """The adaptive operator, routing by fine-grained type instead of by sensitivity level."""
    from .desensitization.policy import AdaptivePolicy

    from .detection.catalog import all_fine_types

    table = all_fine_types()
    methods = sorted(set(policy.values()) | {default})
    level_of = {m: i + 1 for i, m in enumerate(methods)}

    class TypedPolicy(AdaptivePolicy):
        name = "by_type"

        def method_for(self, span: Span) -> str:
            return policy.get(entity_type(span, table), default)

    params: Dict[str, Any] = {"policy": {lvl: m for m, lvl in level_of.items()}}
    if epsilon is not None:
        params["epsilon"] = epsilon
    return TypedPolicy(**params)


def _deployment_randomness() -> Randomness:
    rand = Randomness.deployment()
    if not rand.persistent_key:
        warnings.warn(f"${SECRET_KEY_ENV} is not set: a random secret key was generated for this process, so "
                      f"pseudonyms are consistent and restorable only within it (set ${SECRET_KEY_ENV} to 64 hex "
                      f"characters to keep them across processes)", stacklevel=3)
    return rand


class Gateway:
    """Detect private entities and protect text, as the edge does before anything goes to a cloud LLM.

    ``method``: one privacy method for every entity (``pseudonym``, ``placeholder``, ``suppression``,
    ``generalization``, ``dp_numbers``, ... -- :func:`methods` lists them); ``policy``: a method per entity
    type (``{"EMAIL": "placeholder", "PERSON": "pseudonym", "DATE_TIME": "generalization"}``; types it does not
    name get ``method``; ``"keep"`` leaves a type alone).  ``detector``: a preset name (:func:`detectors`).
    ``epsilon``: the budget of DP methods.  ``randomness``: deployment randomness unless given
    (``Randomness.benchmark(seed)`` for reproducible experiments, which are NOT private against the seed).
    ``guard``: run the egress guard, which masks an identifier that survived protection, or refuses (raises)
    when it cannot.
    """

    def __init__(self, method: str = "pseudonym", policy: Optional[Mapping[str, str]] = None,
                 detector: str = "default", epsilon: Optional[float] = None,
                 randomness: Optional[Randomness] = None, guard: bool = True,
                 audit_dir: str = "cep_audit") -> None:
        from .core.context import RunContext
        from .core.module_configs import CloudModelConfig, validate_config
        from .core.pipeline import EdgePipeline

        typed = _validate_policy(policy or {})
        if typed and method == "none":
            raise ConfigError("Gateway: a policy needs a protecting default method (use \"keep\" as a policy "
                              "value to leave a type alone)")
        params: Dict[str, Any] = {"privacy_method": method, "detector": detector, "randomness": "deployment"}
        if epsilon is not None and not typed:
            params["epsilon"] = epsilon
        self.config = validate_config(CloudModelConfig, params, "Gateway(method=..., detector=..., epsilon=...)")
        self.randomness = randomness or _deployment_randomness()
        self.guard = guard
        self._pipe = EdgePipeline(RunContext(Path(audit_dir)), self.config, randomness=self.randomness)
        if typed:
            # the same gateway, with the per-type routing operator in place of the single method's
            self._pipe.gateway.operator = _typed_operator(typed, method, epsilon)
            self._pipe.gateway.method = "by_type"
        self.method = self._pipe.gateway.method
        self.policy = typed

    def analyze(self, text: str) -> List[Entity]:
        """Detect private entities in ``text`` (no text is changed)."""
        spans, _ = self._pipe.gateway.detect(str(text))
        return _entities(text, spans)

    def protect(self, text: str, scope: str = "") -> Protected:
        """Protect ``text``; ``scope`` names the document or conversation (keyed choices depend on it).

        With ``guard`` on, an identifier the egress guard still finds in clear is masked too, by the same
        method, wherever it occurs (``Protected.repairs`` counts them).  Raises
        :class:`~cloud_edge_privacy.errors.PrivacyGatewayError` when the method fails, the budget is spent, or
        the guard finds what it cannot repair: then nothing should be sent."""
        if self.guard:  # the guard masks what it finds in clear too, or refuses (see EdgePipeline.protect_guarded)
            from .audit import outgoing_texts

            prot, _ = self._pipe.protect_guarded(
                [str(text)], lambda p: outgoing_texts([{"role": "user", "content": p.fields[0]}]), scope=scope)
        else:
            prot, _ = self._pipe.protect_messages([{"role": "user", "content": str(text)}], scope=scope)
        entities = _entities(prot.joined, prot.spans)
        by_offsets = {(e.start, e.end): e for e in entities}
        replacements = []
        for s, new in sorted(prot.replaced, key=lambda t: t[0].start):
            # the operator reports offsets and category; the detected span there carries the fine type
            e = by_offsets.get((s.start, s.end)) or Entity(CATEGORY_ENTITY_TYPE.get(s.category, "MISC"), s.category,
                                                           s.start, s.end, prot.joined[s.start:s.end], s.score, "")
            replacements.append(Replacement(e, new))
        return Protected(text=prot.fields[0], method=self.method, entities=entities, replacements=replacements,
                         randomness=self.randomness.label, epsilon_spent=prot.epsilon_by_kind(),
                         repairs=dict(prot.repairs), _prot=prot)

    def restore(self, protected: Protected, answer: str) -> str:
        """Same as ``protected.restore(answer)``."""
        return protected.restore(answer)


def analyze(text: str, detector: str = "default") -> List[Entity]:
    """One-off detection of private entities in ``text`` with a detector preset (it builds the detector: build a
    :class:`Gateway` once to analyze many texts)."""
    from .detection import build_detector

    return _entities(text, build_detector(detector).analyze(str(text)))


def protect(text: str, method: str = "pseudonym", policy: Optional[Mapping[str, str]] = None,
            **options: Any) -> Protected:
    """One-off :meth:`Gateway.protect` (build a :class:`Gateway` once to protect many texts)."""
    return Gateway(method, policy, **options).protect(text)


def restore(protected: Protected, answer: str) -> str:
    """Put the original values back into an answer (see :meth:`Protected.restore`)."""
    return protected.restore(answer)


def methods() -> Tuple[str, ...]:
    """The privacy methods (the operator registry); ``none`` (the unprotected baseline) is not one."""
    from .desensitization import list_operators

    return tuple(list_operators())


def detectors() -> Tuple[str, ...]:
    """The detector presets."""
    from .detection import DETECTORS

    return tuple(DETECTORS)
