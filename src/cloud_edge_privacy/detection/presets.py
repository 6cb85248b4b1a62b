"""Named detector presets, as data: each is a list of registered recognizers (by name, with their parameters)
and the pipeline's options; :func:`build_detector` builds any of them.

=============  =====================================================================================
multilingual   default with the learned NER (and decider) trained on seven more languages: for text that is
               not English (Chinese, Korean, Japanese, Russian, Spanish, French, German)
default        recall first: rule recognizers (validators, TAB regexes, addresses, organisations, ages/places,
               place and name lists, table columns), the CJK analyzers' proper nouns, word-shape candidates,
               spaCy's NER, the learned NER (sentences not in English read by its model of seven more
               languages), the TAB NER and the encoder NER; each candidate (overlapping spans) kept by the
               learned decider's low threshold; co-reference propagation (a "person" of ordinary words not
               onto its lower-case uses)
precision      the same candidates without the encoder NER (recall-leaning), kept only at the decider's stricter
               threshold (fewer false positives, lower recall)
fast           the rule recognizers alone, no model (high throughput)
rules+tab_ner  the previous default (rule recognizers + the TAB NER, no learned model, no decider)
learned        the learned NER alone (comparison)
default+llm    default, then the local edge LLM lists what is left (opt-in: one generation per text)
legal          the TAB-tuned pipeline of earlier releases (TAB regexes + spaCy + TAB NER)
high_recall    legal + the second TAB NER, built on en_core_web_sm (committed)
structured     only the fast validators (what the egress guard runs over the outgoing request)
federated      structured + TAB regexes + the federated detector (registered by cloud_edge_privacy.federated)
regex+spacy    TAB regexes + spaCy NER
tab_ner        the TAB NER alone
spacy          plain spaCy en_core_web_sm NER (baseline, no post-detection step)
presidio       plain Microsoft Presidio (baseline, no post-detection step)
=============  =====================================================================================

A parameter value may be a :class:`Param`: the caller sets it (``build_detector("default",
learned_path=...)``, a cross-validation fold's model); left unset, the recognizer's own default is used (the
committed model).  Models are never read from a cache here: a missing file is a ``ModelFileError``.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..lexicon import ORDINARY_ZIPF
from .learned.ner import MULTILINGUAL_DIR
from .pipeline import DEFAULT_STEPS, STEPS, Detector


@dataclass(frozen=True)
class Param:
    """A preset parameter the caller of :func:`build_detector` may set by ``key``; ``what`` names it in errors;
    ``default``: its value when the caller leaves it unset (None: the recognizer's own default)."""

    key: str
    what: str
    default: Any = None


@dataclass(frozen=True)
class Use:
    """One registered recognizer in a preset: its ``params`` (keyword arguments of its class), whether it reads
    long texts by informative sentence (``gate``, :class:`~.gating.SentenceGate`), and whether its model is
    checked when the detector is built (``check``: fail now, with the command that builds it)."""

    recognizer: str
    params: Mapping[str, Any] = field(default_factory=dict)
    gate: bool = False
    check: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))


@dataclass(frozen=True)
class Decide:
    """The learned span decider (:class:`~.decider.SpanDecider`): its rule (``"default"``: recall first,
    ``"precision"``), the folder of its ``decider.json`` (None: the committed learned model's) and a threshold
    (negative: the weights' own for the rule)."""

    rule: str
    model_dir: Any = None
    threshold: float = -1.0


@dataclass(frozen=True)
class Preset:
    """A detector as data: what it is for, its recognizers in order, its decider and its post-detection steps by
    name, in order (:data:`~.pipeline.STEPS`; ``ordinary_zipf``: see :func:`~.pipeline.propagate_mentions`)."""

    description: str
    recognizers: Tuple[Use, ...]
    decider: Optional[Decide] = None
    steps: Tuple[str, ...] = DEFAULT_STEPS
    ordinary_zipf: Optional[float] = None

    def __post_init__(self) -> None:
        unknown = [n for n in self.steps if n not in STEPS]
        if unknown:
            raise ValueError(f"preset {self.description!r}: unknown post-detection steps {unknown}; known: "
                             f"{sorted(STEPS)}")

    @property
    def propagate(self) -> bool:
        return "propagate" in self.steps

    def parameters(self) -> Dict[str, str]:
        """The keys :func:`build_detector` accepts for it, with what each names."""
        values = [v for u in self.recognizers for v in u.params.values()]
        if self.decider is not None:
            values.append(self.decider.model_dir)
        return {v.key: v.what for v in values if isinstance(v, Param)}


LEARNED_MODEL = Param("learned_path", "the learned model")
ENCODER_MODEL = Param("encoder_path", "the encoder model")
FEDERATED_MODEL = Param("federated_path", "a federated model file")
# what reads the default preset's sentences not in English: the multilingual preset's learned NER
OTHER_LANGUAGES_MODEL = Param("other_languages_path", "the learned model of other languages", str(MULTILINGUAL_DIR))

# The rule recognizers of user prompts (no model).
RULES: Tuple[Use, ...] = (Use("structured"), Use("regex"), Use("address"), Use("organisations"), Use("age_place"),
                          Use("date_place"), Use("court_text"), Use("places"), Use("tabular"), Use("names"))


# The encoder NER, read last and gated like the other models, without the public institutions and States that court
# texts name as parties (TAB leaves them unmasked; the encoder calls "the United Kingdom" an organisation).
ENCODER = Use("encoder_ner", {"path": ENCODER_MODEL, "drop_public_institutions": True}, gate=True, check=True)


def candidates(learned: bool = True, encoder: bool = True, learned_model: "Param" = LEARNED_MODEL) -> Tuple[Use, ...]:
    """Every recognizer of the default preset, before a decision.  The models read short texts whole and long
    ones by informative sentence (see gating.py); each reads what the recognizers before it found, so it skips
    sentences whose capitalised words are covered.  Every model without the public institutions (courts,
    governments, ministries, States) that court texts are full of and TAB marks NO_MASK; spaCy also without laws.
    The encoder NER last, so the gated models read what they read without it; gated like them."""
    return RULES + (Use("cjk"), Use("shape"), Use("spacy", {"drop_public_institutions": True}, gate=True)) \
        + ((Use("learned", {"path": learned_model, "drop_public_institutions": True,
                            "other_languages": OTHER_LANGUAGES_MODEL}, gate=True, check=True),)
           if learned else ()) \
        + (Use("tab_ner", {"model": "sm", "drop_public_institutions": True}, gate=True),) \
        + ((ENCODER,) if encoder else ())


# A "person" of ordinary words ("Seller") is not copied onto its lower-case uses; ORDINARY_ZIPF, as the egress
# guard reads them, so that the guard never flags what propagation leaves (see docs/detection.md).
_DEFAULT = Preset("recall first: every recognizer + the learned model, kept per span by learned weights",
                  candidates(), Decide("default", LEARNED_MODEL), ordinary_zipf=ORDINARY_ZIPF)
# Chosen on TAB dev (see the example README): general NER adds recall, its public-institution spans (courts,
# governments, headings, state names) are dropped, the TAB model adds precision.
_NO_PROPAGATION = tuple(n for n in DEFAULT_STEPS if n != "propagate")
_LEGAL = (Use("regex"), Use("spacy", {"drop_public_institutions": True}), Use("tab_ner"))

# The default's recognizers and steps with the learned NER (and its decider) trained on seven more languages
# (detection/learned/model_multilingual; docs/detection.md, "Languages and scripts").
_MULTILINGUAL_MODEL = Param("learned_path", "the learned model", default=str(MULTILINGUAL_DIR))
_MULTILINGUAL = Preset("default with the learned NER trained on zh, ko, ja, ru, es, fr and de too",
                       candidates(learned_model=_MULTILINGUAL_MODEL), Decide("default", _MULTILINGUAL_MODEL),
                       ordinary_zipf=ORDINARY_ZIPF)

PRESETS: Mapping[str, Preset] = MappingProxyType({
    "default": _DEFAULT,
    "multilingual": _MULTILINGUAL,
    "precision": Preset("the default's recognizers, kept only when the learned weights say likely private",
                        candidates(encoder=False), Decide("precision", LEARNED_MODEL)),
    "fast": Preset("rule recognizers, validators and name/place lists only (no model; high throughput)", RULES),
    # the TAB NER reads only sentences with an informative capitalised word (see TabNerRecognizer)
    "rules+tab_ner": Preset("the previous default: rule recognizers + the TAB NER",
                            RULES + (Use("tab_ner", {"model": "sm", "skip_plain": True}),)),
    "learned": Preset("the learned NER alone (comparison)", (Use("learned", {"path": LEARNED_MODEL}, check=True),)),
    "default+llm": Preset("default + the edge LLM's second opinion (opt-in, seconds per text)",
                          _DEFAULT.recognizers + (Use("llm_opinion"),), _DEFAULT.decider,
                          ordinary_zipf=_DEFAULT.ordinary_zipf),
    "legal": Preset("TAB-tuned court text (the earlier default)", _LEGAL),
    # both TAB models, spaCy's amounts and miscellanea left out: on TAB dev they cost precision, add no entity
    "high_recall": Preset("legal + a second TAB NER", (
        Use("regex"), Use("spacy", {"drop_public_institutions": True,
                                    "keep_categories": ("PERSON", "ORG", "DEM", "LOC", "DATETIME")}),
        Use("tab_ner"), Use("tab_ner", {"model": "sm"}))),
    "structured": Preset("validators only (egress guard)", (Use("structured"),), steps=_NO_PROPAGATION),
    "federated": Preset("structured + the federated detector",
                        (Use("structured"), Use("regex"), Use("federated", {"model_dir": FEDERATED_MODEL}))),
    "regex+spacy": Preset("TAB regexes + spaCy", (Use("regex"), Use("spacy"))),
    "tab_ner": Preset("TAB NER alone", (Use("tab_ner"),)),
    # plain: the recognizer's own spans, merged, with none of our post-detection steps
    "spacy": Preset("plain spaCy baseline", (Use("spacy", {"skip_labels": ()}),), steps=()),
    "presidio": Preset("plain Presidio baseline", (Use("presidio"),), steps=()),
})
DETECTORS = tuple(PRESETS)


def _value(value: Any, overrides: Mapping[str, Any]) -> Any:
    return overrides.get(value.key, value.default) if isinstance(value, Param) else value


def _recognizer(preset: str, use: Use, overrides: Mapping[str, Any]) -> object:
    from .catalog import recognizer
    from .gating import SentenceGate

    factory = recognizer(use.recognizer).factory
    # a Param left unset is not passed: the recognizer's own default (its committed model)
    kwargs = {k: _value(v, overrides) for k, v in use.params.items()}
    kwargs = {k: v for k, v in kwargs.items() if v is not None or not isinstance(use.params[k], Param)}
    try:
        inspect.signature(factory).bind(**kwargs)
    except TypeError as exc:
        raise ValueError(f"detector {preset!r}: recognizer {use.recognizer!r} parameters {sorted(kwargs)}: {exc}") \
            from None
    rec = factory(**kwargs)
    if use.check:
        rec.check()  # type: ignore[attr-defined]
    return SentenceGate(rec) if use.gate else rec


def build(name: str, preset: Preset, without_steps: Sequence[str] = (), **overrides: Any) -> Detector:
    """A new detector for ``preset`` (named ``name``); ``overrides`` set its :class:`Param` values;
    ``without_steps`` names post-detection steps of the preset to switch off (an ablation)."""
    accepted = preset.parameters()
    for key in overrides:
        if key not in accepted:
            known = {p.key: p.what for p in (LEARNED_MODEL, ENCODER_MODEL, FEDERATED_MODEL, OTHER_LANGUAGES_MODEL)}
            what = f"use {known[key]}" if key in known else "take a parameter"
            raise ValueError(f"detector {name!r} does not {what} ({key} given; it takes {sorted(accepted) or 'none'})")
    recognizers: List[object] = [_recognizer(name, u, overrides) for u in preset.recognizers]
    decider = None
    if preset.decider is not None:
        from .decider import SpanDecider
        from .learned import MODEL_DIR

        folder = _value(preset.decider.model_dir, overrides) or MODEL_DIR
        decider = SpanDecider(preset.decider.rule, path=str(Path(folder) / "decider.json"),
                              threshold=preset.decider.threshold)
    return Detector(recognizers, name=name, decider=decider, ordinary_zipf=preset.ordinary_zipf,
                    steps=preset.steps, without_steps=tuple(without_steps))


def build_detector(name: str = "default", **overrides: Any) -> Detector:
    """A new detector for a preset name (see the module docstring).  ``overrides``: the preset's parameters
    (:meth:`Preset.parameters`), e.g. ``learned_path`` / ``encoder_path`` (a cross-validation fold's models) or
    ``federated_path``; ``None`` leaves one unset.  ``without_steps=("split_long_spans", ...)`` switches off
    post-detection steps of the preset (``pipeline.STEPS``)."""
    if name not in PRESETS:
        raise ValueError(f"unknown detector {name!r}; known: {DETECTORS}")
    return build(name, PRESETS[name], **{k: v for k, v in overrides.items() if v is not None})


def candidate_detector(learned_path: Optional[str] = None, learned: bool = True, encoder: bool = True,
                       encoder_path: Optional[str] = None, other_languages_path: Optional[str] = None) -> Detector:
    """Every recognizer of the default preset, without a decision (:func:`candidates`): the learned model
    (``learned_path``, default the committed one; raises ModelFileError if it is missing) and (``encoder``) the
    encoder NER (``encoder_path``); ``other_languages_path``: the learned model of the sentences not in English
    (default the multilingual preset's).  Used by ``scripts/train_decider.py`` (with the encoder: the decider's
    weights read it as one more recognizer family)."""
    preset = Preset("every candidate of the default preset", candidates(learned, encoder))
    given = {LEARNED_MODEL.key: learned_path, ENCODER_MODEL.key: encoder_path,
             OTHER_LANGUAGES_MODEL.key: other_languages_path}
    return build("candidates", preset, **{k: v for k, v in given.items() if v is not None and k in preset.parameters()})


def uses_learned(name: str) -> bool:
    """Whether a preset uses the learned model (and accepts ``learned_path``)."""
    return LEARNED_MODEL.key in PRESETS[name].parameters()


def uses_encoder(name: str) -> bool:
    """Whether a preset uses the encoder model (and accepts ``encoder_path``)."""
    return ENCODER_MODEL.key in PRESETS[name].parameters()
