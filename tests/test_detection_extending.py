"""The recognizer registry (issues 21, 28): declarations, what the pipeline derives from them, presets as data,
and the worked examples of docs/extending.md ("Add a recognizer") as they stand."""
import importlib
import inspect
import re
import sys

import pytest

from cloud_edge_privacy.detection.catalog import all_fine_types, all_identifying, all_priorities
from cloud_edge_privacy.detection.pipeline import Detector, merge_spans
from cloud_edge_privacy.detection.recognizer import (ALL_TAB, Declared, Reads, declare, priorities, register_recognizer,
                                                     spec_of)
from cloud_edge_privacy.spans import Span

from conftest import REPO

# The hand-written table the declarations replaced (pipeline.py before issue 21), and its propagated categories.
_OLD_PRIORITY = {"secret": 5, "structured": 4, "address": 4, "regex": 3, "names": 2.6, "tab_ner": 2, "federated": 2,
                 "org": 1.8, "learned": 1.5, "tabular": 1, "spacy": 1, "presidio": 1, "age": 1, "place": 0.5,
                 "shape": 0.2, "coref": 0}


# The table that recovered fine entity types from Span.source strings (api._BY_SOURCE before issue 28): the tail
# after "structured:", "regex:", "presidio:" ..., lower-cased -> fine type.
_OLD_BY_SOURCE = {
    "email": "EMAIL", "email_address": "EMAIL", "phone": "PHONE", "phone_number": "PHONE", "iban": "IBAN",
    "iban_code": "IBAN", "card": "CARD", "credit_card": "CARD", "ip": "IP", "ip_address": "IP", "url": "URL",
    "url_host": "URL", "url_user": "URL", "url_query": "URL", "domain": "URL", "ssn": "ID_NUMBER",
    "us_ssn": "ID_NUMBER", "nino": "ID_NUMBER", "id_number": "ID_NUMBER", "echr_application": "ID_NUMBER",
    "uk_nhs": "ID_NUMBER", "us_passport": "ID_NUMBER", "username": "USERNAME", "handle": "USERNAME",
    "path_user": "USERNAME", "plate": "LICENSE_PLATE", "number": "NUMBER", "long_number": "NUMBER",
    "street": "ADDRESS", "postcode": "ADDRESS", "age": "AGE",
}


def test_declarations_reproduce_the_previous_tables():
    derived = dict(all_priorities())
    assert derived.pop("llm_opinion") == 0  # was absent (unknown sources rank 0), now declared 0
    assert derived.pop("encoder") == 1.5  # new: the encoder NER (issue 28), ranked with the learned NER
    assert derived.pop("cjk") == 1.0  # new: the CJK analyzers (issue 49), under the learned NER
    assert derived == _OLD_PRIORITY
    assert all_identifying() == frozenset({"PERSON", "CODE", "ORG", "LOC"})
    from cloud_edge_privacy.core.egress import IDENTIFYING

    assert set(IDENTIFYING) == {"PERSON", "CODE", "ORG", "LOC"}


def test_declared_fine_types_reproduce_the_source_table_they_replace():
    declared = all_fine_types()
    for source, fine in declared.items():
        assert _OLD_BY_SOURCE[source.split(":", 1)[-1].lower()] == fine, source
    assert {source.split(":", 1)[-1].lower() for source in declared} == set(_OLD_BY_SOURCE)  # none lost
    from cloud_edge_privacy.api import entity_type

    assert entity_type(Span(0, 5, "CODE", 0.9, "presidio:EMAIL_ADDRESS")) == "EMAIL"
    assert entity_type(Span(0, 5, "DEM", 0.9, "age")) == "AGE"
    assert entity_type(Span(0, 5, "LOC", 0.9, "regex:email")) == "LOCATION"  # a type belongs to one category
    assert entity_type(Span(0, 5, "CODE", 0.9, "secret:entropy")) == "SECRET"
    assert entity_type(Span(0, 5, "CODE", 0.9, "coref")) == "CODE"


def test_presets_derive_priorities_and_reads_from_their_recognizers():
    from cloud_edge_privacy.detection import build_detector

    det = build_detector("rules+tab_ner")
    assert det.propagated == frozenset({"PERSON", "CODE", "ORG", "LOC"})
    assert det.priority["names"] == 2.6 and det.priority["coref"] == 0
    reads = {spec_of(r).name: spec_of(r).reads for r in det.recognizers}
    assert reads["tab_ner"] is Reads.FOUND and reads["structured"] is Reads.TEXT  # sentence-gated model


def test_an_undeclared_recognizer_is_a_clear_error_and_declared_wraps_one():
    class Bare:
        def analyze(self, text):
            return [Span(0, 4, "PERSON", 1.0, "bare:x")] if text.startswith("Anna") else []

    with pytest.raises(TypeError, match="declares no RecognizerSpec"):
        Detector([Bare()])
    det = Detector([Declared(Bare(), declare("bare", {"PERSON"}, {"bare": 2}))])
    assert [(s.start, s.end, s.source) for s in det.analyze("Anna said Anna")] == [(0, 4, "bare:x"), (10, 14, "coref")]


def test_declarations_are_validated():
    with pytest.raises(ValueError, match="identifying"):
        declare("x", {"DATETIME"}, {"x": 1}, identifying={"PERSON"})
    with pytest.raises(ValueError, match="not a fine entity type"):
        declare("x", {"LOC"}, {"x": 1}, fine_types={"x:mail": "EMAIL"})  # EMAIL is a CODE
    with pytest.raises(ValueError, match="source prefixes"):
        declare("x", {"CODE"}, {"x": 1}, fine_types={"y:mail": "EMAIL"})
    with pytest.raises(ValueError, match="TAB categories"):
        declare("x", {"EMAIL"}, {"x": 1})
    with pytest.raises(ValueError, match="before ':'"):
        declare("x", {"CODE"}, {"x:y": 1})
    with pytest.raises(ValueError, match="priority"):
        priorities([declare("a", {"LOC"}, {"place": 0.5}), declare("b", {"LOC"}, {"place": 3})])


def test_a_recognizer_that_emits_secrets_declares_the_secret_type():
    from cloud_edge_privacy.detection.recognizer import registered

    assert "SECRET" in registered("structured").spec.entity_types
    assert {"EMAIL", "PHONE", "USERNAME"} <= registered("structured").spec.entity_types
    assert "SECRET" not in declare("x", {"CODE"}, {"x": 1}).entity_types


def test_a_non_identifying_category_does_not_propagate():
    det = Detector([Declared(type("R", (), {"analyze": lambda self, t: [Span(0, 5, "MISC", 1.0, "r")]})(),
                             declare("r", {"MISC"}, {"r": 1}))])
    assert len(det.analyze("Alpha and Alpha")) == 1
    # priority: the better-ranked source names the category of a merged span
    merged = merge_spans([Span(0, 5, "ORG", 1.0, "low:x"), Span(0, 5, "LOC", 1.0, "high:x")], {"low": 1, "high": 2})
    assert merged[0].category == "LOC"


def _blocks() -> list:
    doc = (REPO / "docs" / "extending.md").read_text(encoding="utf-8")
    section = doc.split("## Add a recognizer", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_encoder_worked_example_matches_the_code():
    """docs/extending.md shows the encoder NER's registration and its preset line as they stand in the code."""
    registration, preset_line = _blocks()[:2]
    code = (REPO / "src/cloud_edge_privacy/detection/encoder_ner.py").read_text(encoding="utf-8").splitlines()
    shown = [ln for ln in registration.splitlines() if ln.strip() and ln.strip() != "..."]
    assert len(shown) >= 6
    for line in shown:
        assert line in code, f"docs/extending.md shows {line!r}, which encoder_ner.py does not have"
    presets = (REPO / "src/cloud_edge_privacy/detection/presets.py").read_text(encoding="utf-8").splitlines()
    assert preset_line.rstrip("\n") in presets
    from cloud_edge_privacy.detection.encoder_ner import EncoderNerRecognizer
    from cloud_edge_privacy.detection.presets import ENCODER_MODEL, PRESETS, RULES, Preset, Use, build, uses_encoder

    assert EncoderNerRecognizer.spec == declare("encoder_ner", ALL_TAB, {"encoder": 1.5}, Reads.TOKENS, concurrent=True)
    assert uses_encoder("default") and not uses_encoder("precision")
    # the one-line preset the section describes builds, with the encoder last and its model a parameter
    det = build("fast+encoder", Preset("rules + the encoder NER", RULES + (Use("encoder_ner", {"path": ENCODER_MODEL},
                                                                             check=True),)))
    assert [spec_of(r).name for r in det.recognizers] == [u.recognizer for u in PRESETS["fast"].recognizers] + \
        ["encoder_ner"] and det.priority["encoder"] == 1.5


def test_a_new_recognizer_is_one_module_and_one_preset_line(tmp_path, monkeypatch, capsys):
    """The documented path as it stands: the docs' module written to a file of its own and imported (it registers
    itself), then a preset built from data naming it; its spans carry its declared fine type."""
    module_block, preset_block = _blocks()[2:4]
    from cloud_edge_privacy.detection import recognizer as registry

    monkeypatch.setattr(registry, "_RECOGNIZERS", dict(registry._RECOGNIZERS))  # the registration ends with the test
    (tmp_path / "gamer_tag_recognizer.py").write_text(module_block, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        module = importlib.import_module("gamer_tag_recognizer")
        scope: dict = {}
        exec(compile(preset_block, "docs/extending.md#add-a-recognizer", "exec"), scope)  # noqa: S102
    finally:
        sys.modules.pop("gamer_tag_recognizer", None)
    text, spans = scope["text"], scope["spans"]
    from cloud_edge_privacy.api import entity_type

    found = [(text[s.start:s.end], s.category, s.source, entity_type(s)) for s in spans]
    assert found == [("SilentFox92", "CODE", "gamer_tag:cue", "USERNAME"), ("SilentFox92", "CODE", "coref", "CODE"),
                     ("Anna Berg", "PERSON", "names:list", "PERSON")]
    assert str(found) in capsys.readouterr().out and str(found) in preset_block  # the comment is what it prints
    assert scope["detector"].priority["gamer_tag"] == 3
    assert spec_of(module.GamerTagRecognizer()).fine_types == {"gamer_tag:cue": "USERNAME"}
    assert all_fine_types()["gamer_tag:cue"] == "USERNAME"  # registered: the API's table reads it
    # registering the same class again (a module imported twice) is fine; another class under its name is not
    register_recognizer("gamer_tag", {"CODE"}, {"gamer_tag": 3})(module.GamerTagRecognizer)
    with pytest.raises(ValueError, match="already registered"):
        register_recognizer("gamer_tag", {"CODE"}, {"gamer_tag": 3})(type("Other", (), {}))
    register_recognizer("gamer_tag", {"CODE"}, {"gamer_tag": 3}, fine_types={"gamer_tag:cue": "USERNAME"})(
        module.GamerTagRecognizer)


def test_every_preset_names_registered_recognizers_with_parameters_their_classes_take():
    """Presets are data: checked here against the registry without loading a model."""
    from cloud_edge_privacy.detection.catalog import recognizer
    from cloud_edge_privacy.detection.presets import PRESETS, Param

    for name, preset in PRESETS.items():
        assert preset.description and preset.recognizers, name
        for use in preset.recognizers:
            factory = recognizer(use.recognizer).factory
            inspect.signature(factory).bind(**{k: v for k, v in use.params.items() if not isinstance(v, Param)})
    assert PRESETS["default"].parameters() == {"learned_path": "the learned model", "encoder_path": "the encoder model",
                                               "other_languages_path": "the learned model of other languages"}
    assert PRESETS["federated"].parameters() == {"federated_path": "a federated model file"}


def test_a_preset_parameter_is_checked_and_passed_as_data(tmp_path):
    from cloud_edge_privacy.detection import build_detector
    from cloud_edge_privacy.detection.presets import Preset, Use, build
    from cloud_edge_privacy.errors import ModelFileError

    with pytest.raises(ValueError, match="does not use a federated model file"):
        build_detector("fast", federated_path=str(tmp_path))
    with pytest.raises(ValueError, match="does not take a parameter"):
        build_detector("fast", colour="blue")
    with pytest.raises(ValueError, match="recognizer 'spacy' parameters"):
        build("x", Preset("a typo", (Use("spacy", {"drop_public": True}),)))
    with pytest.raises(ValueError, match="no recognizer registered as 'nope'"):
        build("x", Preset("unknown", (Use("nope"),)))
    # the federated model's file is a parameter (no environment variable is swapped to pass it)
    missing = tmp_path / "elsewhere" / "federated_detector.pt"
    with pytest.raises(ModelFileError, match=re.escape(str(missing))):
        build_detector("federated", federated_path=str(missing))


def test_a_plugin_that_cannot_be_imported_is_a_clear_error(monkeypatch):
    from cloud_edge_privacy.detection import catalog
    from cloud_edge_privacy.errors import ModelFileError

    monkeypatch.setattr(catalog, "PLUGINS", {"ghost": ("cloud_edge_privacy.no_such_wing", "the ghost extra")})
    with pytest.raises(ModelFileError, match="ghost extra"):
        catalog.recognizer("ghost")
    assert "federated" in {s.name for s in catalog.specs()}  # registered from its own package, by name
