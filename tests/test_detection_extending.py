"""The recognizer protocol (issue 21): declarations, what the pipeline derives from them, and the worked example of
docs/extending.md ("Add a recognizer") run as it stands."""
import re

import pytest

from cloud_edge_privacy.detection.pipeline import Detector, merge_spans
from cloud_edge_privacy.detection.recognizer import (ALL_TAB, Declared, Reads, builtin_identifying, builtin_priorities,
                                                     declare, priorities, spec_of)
from cloud_edge_privacy.spans import Span

from conftest import REPO

# The hand-written table the declarations replaced (pipeline.py before issue 21), and its propagated categories.
_OLD_PRIORITY = {"secret": 5, "structured": 4, "address": 4, "regex": 3, "names": 2.6, "tab_ner": 2, "federated": 2,
                 "org": 1.8, "learned": 1.5, "tabular": 1, "spacy": 1, "presidio": 1, "age": 1, "place": 0.5,
                 "shape": 0.2, "coref": 0}


def test_declarations_reproduce_the_previous_tables():
    derived = dict(builtin_priorities())
    assert derived.pop("llm_opinion") == 0  # was absent (unknown sources rank 0), now declared 0
    assert derived.pop("encoder") == 1.5  # new: the encoder NER (issue 28), ranked with the learned NER
    assert derived == _OLD_PRIORITY
    assert builtin_identifying() == frozenset({"PERSON", "CODE", "ORG", "LOC"})
    from cloud_edge_privacy.core.egress import IDENTIFYING

    assert set(IDENTIFYING) == {"PERSON", "CODE", "ORG", "LOC"}


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
    with pytest.raises(ValueError, match="before ':'"):
        declare("x", {"CODE"}, {"x:y": 1})
    with pytest.raises(ValueError, match="priority"):
        priorities([declare("a", {"LOC"}, {"place": 0.5}), declare("b", {"LOC"}, {"place": 3})])


def test_a_non_identifying_category_does_not_propagate():
    det = Detector([Declared(type("R", (), {"analyze": lambda self, t: [Span(0, 5, "MISC", 1.0, "r")]})(),
                             declare("r", {"MISC"}, {"r": 1}))])
    assert len(det.analyze("Alpha and Alpha")) == 1
    # priority: the better-ranked source names the category of a merged span
    merged = merge_spans([Span(0, 5, "ORG", 1.0, "low:x"), Span(0, 5, "LOC", 1.0, "high:x")], {"low": 1, "high": 2})
    assert merged[0].category == "LOC"


def _example_block() -> str:
    doc = (REPO / "docs" / "extending.md").read_text(encoding="utf-8")
    section = doc.split("## Add a recognizer", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_worked_example_in_docs_extending_runs(capsys):
    scope: dict = {}
    exec(compile(_example_block(), "docs/extending.md#add-a-recognizer", "exec"), scope)  # noqa: S102
    text, spans = scope["text"], scope["spans"]
    found = [(text[s.start:s.end], s.category, s.source) for s in spans]
    assert found == [("SilentFox92", "CODE", "gamer_tag:cue"), ("SilentFox92", "CODE", "coref"),
                     ("Anna Berg", "PERSON", "names:list")]
    assert str(found) in capsys.readouterr().out  # the comment in the docs is what it prints
    assert str(found) in _example_block()
    assert scope["detector"].priority["gamer_tag"] == 3 and spec_of(scope["GamerTagRecognizer"]()).categories == {"CODE"}
    assert ALL_TAB  # the full category list is importable for recognizers that find every TAB type
