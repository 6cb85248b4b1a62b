"""Named detector presets: one registry, one builder per name.

=============  =====================================================================================
default        recall first: rule recognizers (validators, TAB regexes, addresses, organisations, ages/places,
               place and name lists, table columns), word-shape candidates, spaCy's NER, the learned NER, the
               TAB NER and the encoder NER; each candidate (overlapping spans) kept by the learned decider's low
               threshold; co-reference propagation (a "person" of ordinary words not onto its lower-case uses)
precision      the same candidates without the encoder NER (recall-leaning), kept only at the decider's 0.5
               threshold (fewer false positives, lower recall)
fast           the rule recognizers alone, no model (high throughput)
rules+tab_ner  the previous default (rule recognizers + the TAB NER, no learned model, no decider)
learned        the learned NER alone (comparison)
default+llm    default, then the local edge LLM lists what is left (opt-in: one generation per text)
legal          the TAB-tuned pipeline of earlier releases (TAB regexes + spaCy + TAB NER)
high_recall    legal + the second TAB NER, built on en_core_web_sm (committed)
structured     only the fast validators (what the egress guard runs over the outgoing request)
federated      structured + TAB regexes + the federated detector (cloud_edge_privacy.federated)
regex+spacy    TAB regexes + spaCy NER
tab_ner        the TAB NER alone
spacy          plain spaCy en_core_web_sm NER (baseline, no propagation)
presidio       plain Microsoft Presidio (baseline, no propagation)
=============  =====================================================================================
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

from ..errors import ModelFileError
from .pipeline import Detector
from .recognizer import ALL_TAB, Declared, declare
from .regex_recognizer import RegexRecognizer
from .structured import StructuredRecognizer

# The federated model (``cloud_edge_privacy.federated``) is declared here, where the preset uses it.
FEDERATED_SPEC = declare("federated", ALL_TAB, {"federated": 2})


def _user_prompt_recognizers() -> List[object]:
    from .free_text import (AddressRecognizer, AgePlaceRecognizer, CourtTextRecognizer, DateAndPlaceRecognizer,
                            OrganisationRecognizer)
    from .names import NameRecognizer
    from .places import PlaceRecognizer
    from .tabular import TabularRecognizer

    return [StructuredRecognizer(), RegexRecognizer(), AddressRecognizer(), OrganisationRecognizer(),
            AgePlaceRecognizer(), DateAndPlaceRecognizer(), CourtTextRecognizer(), PlaceRecognizer(),
            TabularRecognizer(), NameRecognizer()]


def _tab_ner_model() -> str:
    """The TAB NER on en_core_web_sm's tok2vec, committed with the package (never read from a cache, so every
    install gives the same spans; a missing file is a ``ModelFileError``, never a weaker stand-in)."""
    from .tab_ner_recognizer import SM_MODEL_DIR

    return str(SM_MODEL_DIR)


def _rules_tab_ner() -> Detector:
    from .tab_ner_recognizer import TabNerRecognizer

    # The model reads only sentences with an informative capitalised word (see TabNerRecognizer).
    return Detector(_user_prompt_recognizers() + [TabNerRecognizer(_tab_ner_model(), skip_plain=True)],
                    name="rules+tab_ner")


def candidate_detector(learned_path: Optional[str] = None, learned: bool = True, encoder: bool = True,
                       encoder_path: Optional[str] = None) -> Detector:
    """Every recognizer of the default preset, without a decision: the rule recognizers, spaCy's NER, the
    learned model (``learned_path``, default the committed one; raises ModelFileError if it is missing), the
    TAB NER on en_core_web_sm and (``encoder``) the encoder NER (``encoder_path``, default the committed one).
    Used by the presets below and by ``scripts/train_decider.py`` (with the encoder: the decider's weights
    read it as one more recognizer family)."""
    from .encoder_ner import EncoderNerRecognizer
    from .gating import SentenceGate
    from .learned import LearnedNerRecognizer
    from .shapes import ShapeRecognizer
    from .spacy_recognizer import SpacyRecognizer
    from .tab_ner_recognizer import TabNerRecognizer

    # The models read short texts whole and long ones by informative sentence (see gating.py); each reads
    # what the recognizers before it found, so it skips sentences whose capitalised words are covered.
    # spaCy without laws and without the public institutions (courts, governments, ministries) that court
    # texts are full of and TAB marks NO_MASK.
    models: List[object] = [SentenceGate(SpacyRecognizer(drop_public_institutions=True))]
    if learned:
        rec = LearnedNerRecognizer(learned_path)
        rec.check()  # fail now, with the command that builds it, rather than silently lose recall
        models.append(SentenceGate(rec))
    models.append(SentenceGate(TabNerRecognizer(_tab_ner_model())))
    if encoder:
        # last, so the gated models above read what they read without it; gated like them (long texts by
        # informative sentence)
        enc = EncoderNerRecognizer(encoder_path)
        enc.check()
        models.append(SentenceGate(enc))
    return Detector(_user_prompt_recognizers() + [ShapeRecognizer()] + models, name="candidates")


def _decided(preset: str, learned_path: Optional[str], encoder_path: Optional[str] = None) -> Detector:
    from pathlib import Path

    from .decider import SpanDecider
    from .learned import MODEL_DIR

    det = candidate_detector(learned_path, encoder=uses_encoder(preset), encoder_path=encoder_path)
    det.decider = SpanDecider(preset, path=str(Path(learned_path or MODEL_DIR) / "decider.json"))
    det.name = preset
    return det


def _default(learned_path: Optional[str] = None, encoder_path: Optional[str] = None) -> Detector:
    det = _decided("default", learned_path, encoder_path)
    # a "person" of ordinary words ("Seller") is not copied onto its lower-case uses; 2.5: the egress guard's
    # ORDINARY_ZIPF, so that the guard never flags what propagation leaves (see docs/detection.md)
    det.ordinary_zipf = 2.5
    return det


def _precision(learned_path: Optional[str] = None) -> Detector:
    return _decided("precision", learned_path)


def _learned(learned_path: Optional[str] = None) -> Detector:
    from .learned import LearnedNerRecognizer

    rec = LearnedNerRecognizer(learned_path)
    rec.check()
    return Detector([rec], name="learned")


def _fast() -> Detector:
    return Detector(_user_prompt_recognizers(), name="fast")


def _legal() -> Detector:
    from .spacy_recognizer import SpacyRecognizer
    from .tab_ner_recognizer import TabNerRecognizer

    # Chosen on TAB dev (see the example README): general NER adds recall, its public-institution
    # spans (courts, governments, headings, state names) are dropped, the TAB model adds precision.
    return Detector([RegexRecognizer(), SpacyRecognizer(drop_public_institutions=True), TabNerRecognizer()], name="legal")


def _high_recall() -> Detector:
    from .spacy_recognizer import SpacyRecognizer
    from .tab_ner_recognizer import TabNerRecognizer, transfer_model_dir

    # Both TAB models, with spaCy's amounts and miscellanea left out: on TAB dev they cost precision
    # and add no entity (see README).
    keep = ("PERSON", "ORG", "DEM", "LOC", "DATETIME")
    return Detector([RegexRecognizer(), SpacyRecognizer(drop_public_institutions=True, keep_categories=keep),
                     TabNerRecognizer(), TabNerRecognizer(str(transfer_model_dir()))], name="high_recall")


def _federated() -> Detector:
    try:
        from ..federated.recognizer import FederatedRecognizer
    except ImportError as exc:
        raise ModelFileError(f"detector 'federated' needs cloud_edge_privacy.federated.recognizer.FederatedRecognizer "
                             f"(the federated training module): {exc}") from exc
    return Detector([StructuredRecognizer(), RegexRecognizer(), Declared(FederatedRecognizer(), FEDERATED_SPEC)],
                    name="federated")


def _spacy_only() -> Detector:
    from .spacy_recognizer import SpacyRecognizer

    return Detector([SpacyRecognizer(skip_labels=())], propagate=False, name="spacy")


def _presidio() -> Detector:
    from .presidio_recognizer import PresidioRecognizer

    return Detector([PresidioRecognizer()], propagate=False, name="presidio")


def _regex_spacy() -> Detector:
    from .spacy_recognizer import SpacyRecognizer

    return Detector([RegexRecognizer(), SpacyRecognizer()], name="regex+spacy")


def _tab_ner() -> Detector:
    from .tab_ner_recognizer import TabNerRecognizer

    return Detector([TabNerRecognizer()], name="tab_ner")


def _default_llm() -> Detector:
    from .llm_opinion import build

    return build()


PRESETS: Dict[str, Tuple[str, Callable[..., Detector]]] = {
    "default": ("recall first: every recognizer + the learned model, kept per span by learned weights", _default),
    "precision": ("the default's recognizers, kept only when the learned weights say likely private", _precision),
    "fast": ("rule recognizers, validators and name/place lists only (no model; high throughput)", _fast),
    "rules+tab_ner": ("the previous default: rule recognizers + the TAB NER", _rules_tab_ner),
    "learned": ("the learned NER alone (comparison)", _learned),
    "default+llm": ("default + the edge LLM's second opinion (opt-in, seconds per text)", _default_llm),
    "legal": ("TAB-tuned court text (the earlier default)", _legal),
    "high_recall": ("legal + a second TAB NER", _high_recall),
    "structured": ("validators only (egress guard)",
                   lambda: Detector([StructuredRecognizer()], propagate=False, name="structured")),
    "federated": ("structured + the federated detector", _federated),
    "regex+spacy": ("TAB regexes + spaCy", _regex_spacy),
    "tab_ner": ("TAB NER alone", _tab_ner),
    "spacy": ("plain spaCy baseline", _spacy_only),
    "presidio": ("plain Presidio baseline", _presidio),
}
DETECTORS = tuple(PRESETS)


# Presets that read the learned model (cross-validated on the real prompts; see scripts/eval_user_prompts.py).
LEARNED_PRESETS = frozenset(("default", "precision", "learned"))


def uses_learned(name: str) -> bool:
    """Whether a preset uses the learned recognizer (and accepts ``learned_path``)."""
    return name in LEARNED_PRESETS


# Presets that read the encoder NER (cross-validated with the learned model: fold K's encoder with fold K's
# learned NER and decider).  Not ``precision``: the encoder leans to recall.
ENCODER_PRESETS = frozenset(("default",))


def uses_encoder(name: str) -> bool:
    """Whether a preset uses the encoder recognizer (and accepts ``encoder_path``)."""
    return name in ENCODER_PRESETS


def build_detector(name: str = "default", learned_path: Optional[str] = None,
                   encoder_path: Optional[str] = None) -> Detector:
    """A new detector for a preset name (see the module docstring).  ``learned_path`` / ``encoder_path``:
    another learned model / encoder model (a cross-validation fold's) for presets that use one."""
    if name not in PRESETS:
        raise ValueError(f"unknown detector {name!r}; known: {DETECTORS}")
    if learned_path is not None and not uses_learned(name):
        raise ValueError(f"detector {name!r} does not use the learned model (learned_path given)")
    if encoder_path is not None and not uses_encoder(name):
        raise ValueError(f"detector {name!r} does not use the encoder model (encoder_path given)")
    kw = {k: v for k, v in (("learned_path", learned_path), ("encoder_path", encoder_path)) if v is not None}
    return PRESETS[name][1](**kw)

