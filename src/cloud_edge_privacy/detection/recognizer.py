"""The recognizer protocol and the one registry of recognizers.

A recognizer is a class registered under a name with :func:`register_recognizer` in its own module (the way
operators register with ``register_operator``).  The registration writes the class's declaration
(:class:`RecognizerSpec`, its ``spec``): the TAB categories it may emit, the prefix and merge priority of its
``Span.source`` strings, which of its categories identify someone by themselves, the fine entity types
(EMAIL, PHONE, IBAN, ...) of its spans, and what it reads, which names the method the pipeline calls:

* ``Reads.TEXT``: ``analyze(text) -> List[Span]`` on the raw text (patterns, validators, word lists);
* ``Reads.TOKENS``: ``analyze_many(texts) -> List[List[Span]]``, a model over tokens, batched (a spaCy model
  through ``spacy_pipeline.SpacyPipeline.read``, which forgets the words it read);
* ``Reads.FOUND``: ``analyze_many(texts, found=...)``, which also reads the spans the recognizers before it
  in the preset found (to skip what is covered, or to show it redacted).

A recognizer that declares itself ``concurrent`` does its work outside Python's global interpreter lock (an ONNX
Runtime session) and labels each text alone, whatever else its batch holds: the detector starts it on a worker
thread while the recognizers before it run (a sentence gate around it reads ahead, see ``gating.py``), and its
spans are the same as when it runs in turn.

Presets (``presets.py``) name registered recognizers and their parameters.  From the declarations of a
detector's recognizers the pipeline derives, with no table to edit elsewhere, the merge priority of each source
prefix and the categories whose mentions propagate (the *identifying* ones); ``catalog.py`` gives the same for
every shipped recognizer (the module-level ``merge_spans``, the egress guard, the API's fine types).  This
module imports no recognizer: they import it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Tuple

from ..spans import SECRET_PREFIX, Span
from ..vocabulary import CATEGORY_ENTITY_TYPE, ENTITY_TYPES, TAB_CATEGORIES


class Reads(str, Enum):
    """What a recognizer reads (and so how the pipeline calls it)."""

    TEXT = "text"
    TOKENS = "tokens"
    FOUND = "found"


@dataclass(frozen=True)
class RecognizerSpec:
    """A recognizer's declaration.

    ``sources``: the prefix of every ``Span.source`` it emits (the part before the first ``:``) and its merge
    priority (higher wins a category conflict; the shipped range is 0 for word-shape guesses to 5 for secrets).
    ``identifying``: those of its ``categories`` that name someone by themselves, so that every other mention
    is masked too (co-reference propagation) and the egress guard looks for them in clear.
    ``fine_types``: ``Span.source`` -> the fine entity type (``vocabulary.ENTITY_TYPES``) of the spans it emits
    with that source; a span whose source is not listed has its category's type (a ``LOC`` is a ``LOCATION``).
    ``concurrent``: its work runs outside the GIL and it labels each text alone, so the detector runs it beside
    the recognizers before it."""

    name: str
    categories: FrozenSet[str]
    sources: Mapping[str, float]
    reads: Reads = Reads.TEXT
    identifying: FrozenSet[str] = field(default_factory=frozenset)
    fine_types: Mapping[str, str] = field(default_factory=dict)
    concurrent: bool = False

    def __post_init__(self) -> None:
        if not self.name or not self.sources:
            raise ValueError(f"recognizer spec {self.name!r}: a name and at least one source prefix are required")
        if not self.categories <= set(TAB_CATEGORIES):
            raise ValueError(f"recognizer {self.name!r}: categories {sorted(self.categories - set(TAB_CATEGORIES))} "
                             f"are not TAB categories {TAB_CATEGORIES}")
        if not self.identifying <= self.categories:
            raise ValueError(f"recognizer {self.name!r}: identifying categories {sorted(self.identifying)} are not "
                             f"all among its categories {sorted(self.categories)}")
        if any(":" in p for p in self.sources):
            raise ValueError(f"recognizer {self.name!r}: source prefixes are the part before ':' ({list(self.sources)})")
        for source, fine in self.fine_types.items():
            if source.split(":", 1)[0] not in self.sources:
                raise ValueError(f"recognizer {self.name!r}: fine_types source {source!r} has none of its source "
                                 f"prefixes {sorted(self.sources)}")
            if ENTITY_TYPES.get(fine) not in self.categories:
                raise ValueError(f"recognizer {self.name!r}: fine_types[{source!r}] = {fine!r} is not a fine entity "
                                 f"type of one of its categories {sorted(self.categories)} (vocabulary.ENTITY_TYPES)")
        object.__setattr__(self, "sources", MappingProxyType(dict(self.sources)))
        object.__setattr__(self, "fine_types", MappingProxyType(dict(self.fine_types)))

    @property
    def entity_types(self) -> FrozenSet[str]:
        """The fine entity types its spans may have: those declared, its categories' own, and SECRET when it
        emits secrets (a ``secret:`` source is SECRET whatever its category)."""
        secret = frozenset(("SECRET",)) if SECRET_PREFIX.rstrip(":") in self.sources else frozenset()
        return frozenset(self.fine_types.values()) | frozenset(CATEGORY_ENTITY_TYPE[c] for c in self.categories) | secret


# The TAB categories that identify by themselves (a name, a code, an organisation, a place).
IDENTIFYING_TAB = frozenset(("PERSON", "CODE", "ORG", "LOC"))
ALL_TAB = TAB_CATEGORIES


def declare(name: str, categories: Iterable[str], sources: Mapping[str, float], reads: Reads = Reads.TEXT,
            identifying: Optional[Iterable[str]] = None, fine_types: Optional[Mapping[str, str]] = None,
            concurrent: bool = False) -> RecognizerSpec:
    """A spec whose identifying categories default to its TAB identifying ones (PERSON, CODE, ORG, LOC)."""
    cats = frozenset(categories)
    ident = frozenset(identifying) if identifying is not None else cats & IDENTIFYING_TAB
    return RecognizerSpec(name, cats, dict(sources), reads, ident, dict(fine_types or {}), concurrent)


@dataclass(frozen=True)
class Registered:
    """A registered recognizer: its declaration and the factory (its class) a preset calls with parameters."""

    spec: RecognizerSpec
    factory: Callable[..., object]


_RECOGNIZERS: Dict[str, Registered] = {}


def register_recognizer(name: str, categories: Iterable[str], sources: Mapping[str, float],
                        reads: Reads = Reads.TEXT, identifying: Optional[Iterable[str]] = None,
                        fine_types: Optional[Mapping[str, str]] = None, concurrent: bool = False) -> Callable:
    """Register a recognizer class under ``name`` (what a preset names) with its declaration (see
    :func:`declare`), which also becomes the class's ``spec``.  Registering the same class again (a module
    imported twice) replaces it; another class under a registered name is an error."""
    spec = declare(name, categories, sources, reads, identifying, fine_types, concurrent)

    def wrap(cls: type) -> type:
        old = _RECOGNIZERS.get(name)
        if old is not None and getattr(old.factory, "__qualname__", None) != cls.__qualname__:
            raise ValueError(f"recognizer {name!r} is already registered by {old.factory!r}")
        cls.spec = spec  # type: ignore[attr-defined]
        _RECOGNIZERS[name] = Registered(spec, cls)
        return cls

    return wrap


def registered(name: str) -> Optional[Registered]:
    """The recognizer registered under ``name``, or None (``catalog.recognizer`` also loads plug-ins by name)."""
    return _RECOGNIZERS.get(name)


def registered_specs() -> Tuple[RecognizerSpec, ...]:
    """The declarations of every recognizer registered so far, in name order."""
    return tuple(_RECOGNIZERS[n].spec for n in sorted(_RECOGNIZERS))


# The pipeline's own source: co-reference copies of a mention (lowest priority: the original decides).
PIPELINE_SOURCES: Mapping[str, float] = MappingProxyType({"coref": 0})


def spec_of(recognizer: object) -> RecognizerSpec:
    """A recognizer's declaration, or a clear error naming what is missing."""
    s = getattr(recognizer, "spec", None)
    if not isinstance(s, RecognizerSpec):
        raise TypeError(f"{type(recognizer).__name__} declares no RecognizerSpec (a `spec` attribute); register it "
                        f"with detection.recognizer.register_recognizer, or wrap the object in "
                        f"detection.recognizer.Declared(obj, declare(...))")
    return s


def priorities(specs: Iterable[RecognizerSpec]) -> Dict[str, float]:
    """Source prefix -> merge priority, from the declarations (two recognizers may share a prefix only with one
    priority)."""
    out: Dict[str, float] = dict(PIPELINE_SOURCES)
    owner: Dict[str, str] = {p: "pipeline" for p in PIPELINE_SOURCES}
    for s in specs:
        for prefix, prio in s.sources.items():
            if prefix in out and out[prefix] != prio:
                raise ValueError(f"source prefix {prefix!r}: priority {prio} in recognizer {s.name!r} but "
                                 f"{out[prefix]} in {owner[prefix]!r}")
            out[prefix], owner[prefix] = prio, owner.get(prefix, s.name)
    return out


def identifying(specs: Iterable[RecognizerSpec]) -> FrozenSet[str]:
    """The categories any of the recognizers declares identifying."""
    return frozenset().union(*(s.identifying for s in specs))


def fine_types(specs: Iterable[RecognizerSpec]) -> Dict[str, str]:
    """``Span.source`` -> fine entity type, from the declarations (two recognizers may declare one source only
    with one type)."""
    out: Dict[str, str] = {}
    owner: Dict[str, str] = {}
    for s in specs:
        for source, fine in s.fine_types.items():
            if source in out and out[source] != fine:
                raise ValueError(f"source {source!r}: fine type {fine} in recognizer {s.name!r} but {out[source]} "
                                 f"in {owner[source]!r}")
            out[source], owner[source] = fine, owner.get(source, s.name)
    return out


class Declared:
    """An object from elsewhere, not registered, with a declaration given where it is used."""

    def __init__(self, inner: object, declaration: RecognizerSpec) -> None:
        self.inner = inner
        self.spec = declaration

    @property
    def name(self) -> str:
        return self.spec.name

    def analyze(self, text: str) -> List[Span]:
        return self.inner.analyze(text)  # type: ignore[attr-defined]

    def analyze_many(self, texts: Sequence[str], found: Optional[Sequence[Sequence[Span]]] = None) -> List[List[Span]]:
        many = getattr(self.inner, "analyze_many", None)
        if many is None:
            return [self.analyze(t) for t in texts]
        return many(texts, found=found) if self.spec.reads is Reads.FOUND else many(texts)

    def __getattr__(self, attr: str) -> object:  # check(), describe() ... of the wrapped object
        return getattr(self.inner, attr)


def run_recognizer(recognizer: object, texts: Sequence[str], found: Sequence[Sequence[Span]]) -> List[List[Span]]:
    """Call a recognizer the way its declaration says it reads."""
    reads = spec_of(recognizer).reads
    if reads is Reads.FOUND:
        return recognizer.analyze_many(texts, found=found)  # type: ignore[attr-defined]
    if reads is Reads.TOKENS:
        return recognizer.analyze_many(texts)  # type: ignore[attr-defined]
    return [recognizer.analyze(t) for t in texts]  # type: ignore[attr-defined]

