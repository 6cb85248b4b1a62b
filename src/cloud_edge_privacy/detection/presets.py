"""Named detector presets: one registry, one builder per name.

=============  =====================================================================================
default        user prompts and court text: structured validators, TAB regexes, addresses, organisations,
               ages/places, place gazetteer, table columns, multilingual names, the TAB NER; co-reference propagation
default+llm    default, then the local edge LLM lists what is left (opt-in: one generation per text)
legal          the TAB-tuned pipeline of earlier releases (TAB regexes + spaCy + TAB NER)
high_recall    legal + the second TAB NER built on en_core_web_sm (setup.sh trains it)
structured     only the fast validators (what the egress guard runs over the outgoing request)
federated      structured + TAB regexes + the federated detector (cloud_edge_privacy.federated)
regex+spacy    TAB regexes + spaCy NER
tab_ner        the TAB NER alone
spacy          plain spaCy en_core_web_sm NER (baseline, no propagation)
presidio       plain Microsoft Presidio (baseline, no propagation)
=============  =====================================================================================
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable, Dict, List, Tuple

from ..errors import ModelFileError
from ..spans import Span
from .pipeline import Detector
from .regex_recognizer import RegexRecognizer
from .structured import StructuredRecognizer


def _user_prompt_recognizers() -> List[object]:
    from .free_text import (AddressRecognizer, AgePlaceRecognizer, CourtTextRecognizer, DateAndPlaceRecognizer,
                            OrganisationRecognizer)
    from .names import NameRecognizer
    from .places import PlaceRecognizer
    from .tabular import TabularRecognizer

    return [StructuredRecognizer(), RegexRecognizer(), AddressRecognizer(), OrganisationRecognizer(),
            AgePlaceRecognizer(), DateAndPlaceRecognizer(), CourtTextRecognizer(), PlaceRecognizer(),
            TabularRecognizer(), NameRecognizer()]


def _default() -> Detector:
    import warnings

    from .tab_ner_recognizer import MODEL_DIR, TabNerRecognizer, transfer_model_dir

    model = transfer_model_dir()
    if not (model / "meta.json").is_file():
        # setup.sh trains it when TAB data is present; without it the committed (weaker) TAB NER stands in.
        warnings.warn(f"{model}: TAB NER on en_core_web_sm missing (run scripts/train_tab_ner.py --init sm); "
                      f"the default detector uses the committed TAB NER instead, with lower recall on court text",
                      RuntimeWarning, stacklevel=2)
        model = MODEL_DIR
    # The model reads only sentences with an informative capitalised word (see TabNerRecognizer).
    return Detector(_user_prompt_recognizers() + [TabNerRecognizer(str(model), skip_plain=True)], name="default")


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
    return Detector([StructuredRecognizer(), RegexRecognizer(), FederatedRecognizer()], name="federated")


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


PRESETS: Dict[str, Tuple[str, Callable[[], Detector]]] = {
    "default": ("user prompts and court text", _default),
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


def build_detector(name: str = "default") -> Detector:
    """A new detector for a preset name (see the module docstring)."""
    if name not in PRESETS:
        raise ValueError(f"unknown detector {name!r}; known: {DETECTORS}")
    return PRESETS[name][1]()


@lru_cache(maxsize=1)
def default_detector() -> Detector:
    """The default pipeline, built once per process and shared (edge profile, gateway, router): on one
    sample's path they see the same text, so it keeps a small per-text cache."""
    det = build_detector("default")
    det.cache_size = 64
    return det


def detect(text: str) -> List[Span]:
    """Detect with the shared default pipeline."""
    return default_detector().analyze(text)
