"""The recognizer protocol: what a recognizer declares, and what the pipeline derives from the declarations.

A recognizer is any object with a ``spec`` (:class:`RecognizerSpec`) and the method its ``reads`` names:

* ``Reads.TEXT``: ``analyze(text) -> List[Span]`` on the raw text (patterns, validators, word lists);
* ``Reads.TOKENS``: ``analyze_many(texts) -> List[List[Span]]``, a model over tokens, batched (``nlp.pipe``);
* ``Reads.FOUND``: ``analyze_many(texts, found=...)``, which also reads the spans the recognizers before it
  in the preset found (to skip what is covered, or to show it redacted).

From the declarations of a detector's recognizers the pipeline derives, with no table to edit elsewhere:
the merge priority of each span source prefix (when overlapping spans disagree on the category, the more
specific source wins) and the categories whose mentions propagate to every other occurrence (the
*identifying* ones).  :func:`builtin_specs` gives the same for the shipped recognizers, for the module-level
``merge_spans`` and the egress guard.  A recognizer from elsewhere is declared where a preset uses it, by
:class:`Declared`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from typing import Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence

from ..spans import Span
from ..vocabulary import TAB_CATEGORIES


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
    is masked too (co-reference propagation) and the egress guard looks for them in clear."""

    name: str
    categories: FrozenSet[str]
    sources: Mapping[str, float]
    reads: Reads = Reads.TEXT
    identifying: FrozenSet[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if not self.name or not self.sources:
            raise ValueError(f"recognizer spec {self.name!r}: a name and at least one source prefix are required")
        if not self.identifying <= self.categories:
            raise ValueError(f"recognizer {self.name!r}: identifying categories {sorted(self.identifying)} are not "
                             f"all among its categories {sorted(self.categories)}")
        if any(":" in p for p in self.sources):
            raise ValueError(f"recognizer {self.name!r}: source prefixes are the part before ':' ({list(self.sources)})")


# The TAB categories that identify by themselves (a name, a code, an organisation, a place).
IDENTIFYING_TAB = frozenset(("PERSON", "CODE", "ORG", "LOC"))
ALL_TAB = TAB_CATEGORIES


def declare(name: str, categories: Iterable[str], sources: Mapping[str, float], reads: Reads = Reads.TEXT,
         identifying: Optional[Iterable[str]] = None) -> RecognizerSpec:
    """A spec whose identifying categories default to its TAB identifying ones (PERSON, CODE, ORG, LOC)."""
    cats = frozenset(categories)
    ident = frozenset(identifying) if identifying is not None else cats & IDENTIFYING_TAB
    return RecognizerSpec(name, cats, dict(sources), reads, ident)


# The pipeline's own source: co-reference copies of a mention (lowest priority: the original decides).
PIPELINE_SOURCES: Mapping[str, float] = {"coref": 0}


def spec_of(recognizer: object) -> RecognizerSpec:
    """A recognizer's declaration, or a clear error naming what is missing."""
    s = getattr(recognizer, "spec", None)
    if not isinstance(s, RecognizerSpec):
        raise TypeError(f"{type(recognizer).__name__} declares no RecognizerSpec (a `spec` attribute); declare it in "
                        f"the class, or wrap the object in detection.recognizer.Declared(obj, declare(...)) in the preset")
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


class Declared:
    """A recognizer from elsewhere (a plug-in, the federated model) with a declaration given by the preset."""

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


@lru_cache(maxsize=1)
def builtin_specs() -> tuple:
    """The declarations of the shipped recognizers (read from their classes; no model is loaded)."""
    from .free_text import (AddressRecognizer, AgePlaceRecognizer, CourtTextRecognizer, DateAndPlaceRecognizer,
                            OrganisationRecognizer)
    from .encoder_ner import EncoderNerRecognizer
    from .learned.ner import LearnedNerRecognizer
    from .llm_opinion import LLMOpinionRecognizer
    from .names import NameRecognizer
    from .places import PlaceRecognizer
    from .presidio_recognizer import PresidioRecognizer
    from .regex_recognizer import RegexRecognizer
    from .shapes import ShapeRecognizer
    from .spacy_recognizer import SpacyRecognizer
    from .structured import StructuredRecognizer
    from .tab_ner_recognizer import TabNerRecognizer
    from .tabular import TabularRecognizer
    from .presets import FEDERATED_SPEC

    classes = (StructuredRecognizer, RegexRecognizer, AddressRecognizer, OrganisationRecognizer, AgePlaceRecognizer,
               DateAndPlaceRecognizer, CourtTextRecognizer, PlaceRecognizer, TabularRecognizer, NameRecognizer,
               ShapeRecognizer, SpacyRecognizer, LearnedNerRecognizer, TabNerRecognizer, PresidioRecognizer,
               LLMOpinionRecognizer, EncoderNerRecognizer)
    return tuple(c.spec for c in classes) + (FEDERATED_SPEC,)


@lru_cache(maxsize=1)
def builtin_priorities() -> Mapping[str, float]:
    """Source prefix -> merge priority of the shipped recognizers."""
    return priorities(builtin_specs())


@lru_cache(maxsize=1)
def builtin_identifying() -> FrozenSet[str]:
    """The categories the shipped recognizers declare identifying (PERSON, CODE, ORG, LOC)."""
    return identifying(builtin_specs())
