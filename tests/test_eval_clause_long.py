"""``scripts/eval_user_prompts.clause_long``: which spans count as a clause tagged as a name."""
from __future__ import annotations

import sys
from pathlib import Path

from cloud_edge_privacy.spans import Span

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import eval_user_prompts as E  # noqa: E402


def _doc(text: str, *mentions: str) -> dict:
    ments = [{"start_offset": text.index(m), "end_offset": text.index(m) + len(m)} for m in mentions]
    return {"text": text, "annotations": {"a": {"entity_mentions": ments}}}


def _span(text: str, part: str) -> Span:
    return Span(text.index(part), text.index(part) + len(part), "ORG", 1.0, "test:ORG")


def test_a_long_single_noun_counts_by_letters_but_not_as_a_clause():
    text = "Die Verwaltungsebenen arbeiten mit Anna Berg."
    doc, spans = _doc(text, "Anna Berg"), [_span(text, "Verwaltungsebenen")]
    assert E.clause_long(doc, spans) == 1 and E.clause_long(doc, spans, words=3) == 0


def test_words_past_the_mention_and_cjk_runs_count_as_clauses():
    text = "Dr. Anna Berg Servicio de Urologia Complejo."
    doc = _doc(text, "Anna Berg")
    assert E.clause_long(doc, [_span(text, "Anna Berg Servicio de Urologia")], words=3) == 1
    # a name with its title only is no clause
    assert E.clause_long(doc, [_span(text, "Dr. Anna Berg")], words=3) == 0
    zh = "我的朋友王小明上个月搬到了北京。"
    assert E.clause_long(_doc(zh, "王小明"), [_span(zh, "我的朋友王小明上个月搬到了北京")], words=3) == 1
    assert E.clause_long(_doc(zh, "王小明"), [_span(zh, "王小明")], words=3) == 0
