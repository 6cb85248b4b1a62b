"""scripts/ablate_models.py: leaving model families out, and the detector-level "non-PII words kept" measure."""
from __future__ import annotations

import subprocess
import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
from ablate_models import without, words_kept  # noqa: E402

from cloud_edge_privacy.spans import Span  # noqa: E402


def test_without_leaves_out_whole_families_only():
    spans = [Span(0, 4, "PERSON", 0.8, "spacy:PERSON"), Span(0, 4, "PERSON", 0.9, "encoder:PERSON"),
             Span(5, 9, "ORG", 0.85, "tab_ner:ORG"), Span(10, 14, "PERSON", 1.0, "names:list")]
    assert [s.source for s in without(spans, {"spacy", "tab_ner"})] == ["encoder:PERSON", "names:list"]
    assert without(spans, set()) == spans


def test_words_kept_counts_a_word_kept_when_one_occurrence_is_left():
    text = "Ask Maria about the report; the report is due."
    start = text.index("Maria")
    doc = {"text": text, "annotations": {"a": {"entity_mentions": [
        {"start_offset": start, "end_offset": start + 5}]}}}
    first = text.index("report")
    # 8 words outside the unit (Ask about the report the report is due); "report" masked once, left once: kept
    assert words_kept(doc, [Span(first, first + 6, "ORG", 0.8, "tab_ner:ORG")]) == (8, 8)
    both = [Span(first, first + 6, "ORG", 0.8, "tab_ner:ORG"),
            Span(text.rindex("report"), text.rindex("report") + 6, "ORG", 0.8, "tab_ner:ORG")]
    assert words_kept(doc, both) == (6, 8)
    assert words_kept(doc, [Span(0, 3, "MISC", 0.5, "shape:x"), Span(start, start + 5, "PERSON")]) == (7, 8)


def test_an_unknown_family_is_a_clear_error():
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "ablate_models.py"), "--drop", "spacy+gliner"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "unknown families ['gliner']" in proc.stderr
