"""Post-detection steps: declared by name in presets, switchable, traced (detection/steps.py, pipeline.STEPS)."""
from __future__ import annotations

import pytest

from cloud_edge_privacy.detection import build_detector
from cloud_edge_privacy.detection.pipeline import DEFAULT_STEPS, STEPS, Detector, drop_unread_scripts, unread_script
from cloud_edge_privacy.detection.presets import PRESETS, Preset
from cloud_edge_privacy.detection.recognizer import declare, Declared
from cloud_edge_privacy.spans import Span


class _Fixed:
    """A fake model recognizer returning fixed spans (logic test only)."""

    def __init__(self, spans):
        self.spans = spans

    def analyze(self, text):
        return list(self.spans)


def _model(spans, prefix="spacy"):
    return Declared(_Fixed(spans), declare(f"fixed_{prefix}", {"PERSON", "ORG", "LOC"}, {prefix: 2.0}))


def test_every_preset_names_known_steps_and_the_baselines_are_plain():
    for name, preset in PRESETS.items():
        assert all(s in STEPS for s in preset.steps), name
    # "plain" baselines: the recognizer's own spans, merged, with none of our post-processing
    assert PRESETS["spacy"].steps == () and PRESETS["presidio"].steps == ()
    assert PRESETS["default"].steps == DEFAULT_STEPS and "propagate" in DEFAULT_STEPS
    assert list(DEFAULT_STEPS) == [s for s in DEFAULT_STEPS if s in STEPS]


def test_unknown_step_names_are_clear_errors():
    with pytest.raises(ValueError, match="unknown post-detection steps"):
        Preset("x", (), steps=("tidy", "no_such_step"))
    with pytest.raises(ValueError, match="unknown post-detection step 'nope'"):
        build_detector("fast", without_steps=("nope",))
    with pytest.raises(ValueError, match="are not steps it runs"):
        build_detector("spacy", without_steps=("tidy",))


def test_a_step_switched_off_changes_the_spans_and_the_trace_says_which_step_did_it():
    text = "Please ask • Anna Berg about it."
    s = text.index("•")
    det = Detector([_model([Span(s, s + len("• Anna Berg"), "PERSON", 0.9, "spacy:PERSON")])])
    spans, trace = det.analyze_traced(text)
    assert [text[x.start:x.end] for x in spans] == ["Anna Berg"]
    tidy = [e for e in trace.entries if e.step == "tidy"]
    assert len(tidy) == 1 and tidy[0].removed[0].start == s and tidy[0].added[0].start == text.index("Anna")
    assert any(line.startswith("tidy: '• Anna Berg' PERSON") for line in trace.lines())
    off = Detector([_model([Span(s, s + len("• Anna Berg"), "PERSON", 0.9, "spacy:PERSON")])], without_steps=("tidy",))
    assert [text[x.start:x.end] for x in off.analyze(text)] == ["• Anna Berg"]
    assert "tidy" not in off.step_names and off.step_names == tuple(n for n in DEFAULT_STEPS if n != "tidy")


def test_the_trace_is_empty_when_no_step_changes_anything_and_spans_equal_analyze():
    text = "Anna Berg lives in Oslo."
    det = Detector([_model([Span(0, 9, "PERSON", 0.9, "spacy:PERSON"), Span(19, 23, "LOC", 0.9, "spacy:LOC")])])
    spans, trace = det.analyze_traced(text)
    assert spans == det.analyze(text) and trace.entries == []


def test_unread_scripts_drops_model_spans_over_caseless_scripts_only():
    assert unread_script("不论是孩子、家长") and unread_script("مركز الإتصالات") and unread_script("서울")
    assert not unread_script("Anna Berg") and not unread_script("Москва") and not unread_script("Ἀθῆναι") \
        and not unread_script("Nguyễn Thị Ánh") and not unread_script("Müller-Straße")
    text = "Centric Brands System.这段话通顺吗 王小明"
    clause = Span(0, text.index(" 王"), "ORG", 0.8, "tab_ner:ORG")  # a model's clause over Han letters
    latin = Span(0, 14, "ORG", 0.8, "learned:ORG")
    listed = Span(text.index("王"), len(text), "PERSON", 0.9, "names:foreign_script")  # a name list reads Han
    kept = drop_unread_scripts(text, [clause, latin, listed])
    assert kept == [latin, listed]


def test_the_default_preset_runs_its_steps_on_a_real_detector():
    det = build_detector("fast")
    assert det.step_names == DEFAULT_STEPS
    text = "Translate to French: Dear Mark, I am Anna Berg from Oslo."
    spans, trace = det.analyze_traced(text)
    assert spans == det.analyze(text)
    assert all(e.step in det.step_names for e in trace.entries)


def test_a_sentence_in_another_language_is_told_apart_by_word_frequencies():
    from cloud_edge_privacy.lexicon import mostly_another_language

    assert mostly_another_language("Das Werk konnte aufgrund von Holzmangel in diesem Jahr nur wenige Wochen arbeiten.")
    assert mostly_another_language("Je voudrais réserver une table pour deux personnes ce soir.")
    assert mostly_another_language("Эти попытки свалить вину на американцев были не корректными")
    # English quoting foreign names and places stays English; too few voting words decide nothing
    assert not mostly_another_language("Please write to Hans Müller about the meeting in München next week.")
    assert not mostly_another_language("Rachel Zheng is a clerk in the Administrative Department of H&R Technology.")
    assert not mostly_another_language("Gdańsk Łódź")


def test_english_models_are_not_read_in_a_sentence_of_another_language():
    from cloud_edge_privacy.detection.pipeline import drop_english_models_in_other_languages as drop

    text = "Bitte schreib an Herrn Weber. Der Weg führt zunächst im Uhrzeigersinn zum Brunnen. Ask Anna about it."
    clause = Span(text.index("Der"), text.index(" zunächst"), "ORG", 0.8, "tab_ner:ORG")
    learned = Span(text.index("Weber"), text.index("Weber") + 5, "PERSON", 0.8, "learned:PERSON")
    english = Span(text.index("Anna"), text.index("Anna") + 4, "PERSON", 0.8, "spacy:PERSON")
    assert drop(text, [clause, learned, english]) == [learned, english]


def test_the_syntax_of_code_config_and_markup_is_told_from_its_data():
    from cloud_edge_privacy.detection.technical import drop_syntax_spans, syntax_regions

    text = ('Why does this fail?\n\n```python\ndef get_user(username, password):\n'
            '    user = db.find("Anna Berg")  # ask Maria\n    return BaseModel(name=user, key="8ca422836f04")\n```\n'
            'Note (important): Anna Berg wrote this.\nDear John,\nname: John Smith\n'
            '<div class="x">Hello Maria</div>\nThe applicant, Mr X, was born in 1970;\n')
    syntax = "".join(text[a:b] for a, b in syntax_regions(text))
    assert "get_user" in syntax and "BaseModel" in syntax and "password" in syntax and "div" in syntax
    for data in ("Anna Berg", "Maria", "John", "Mr X", "important"):  # a one-token literal is syntax, but
        # a code with digits in it is kept (below)
        assert data not in syntax, data

    def span(word, source="spacy:PERSON"):
        i = text.index(word)
        return Span(i, i + len(word), "PERSON", 0.8, source)

    kept = drop_syntax_spans(text, [span("BaseModel"), span("username"), span("Anna Berg"), span("Maria"),
                                    span("password", "secret:keyword"), span("8ca422836f04", "encoder:CODE")])
    assert [text[s.start:s.end] for s in kept] == ["Anna Berg", "Maria", "password", "8ca422836f04"]
    # a name-list identifier in code may be personal: kept
    code = "```\nsend_to(john_smith)\n```"
    i = code.index("john_smith")
    assert drop_syntax_spans(code, [Span(i, i + 10, "PERSON", 0.8, "learned:PERSON")])
    # a configuration's literal value is syntax, though a name list holds "True"
    ini = "```ini\n[mypy]\nstrict_optional = True\nplugins = None\nowner = Trudy\n```"
    found = [Span(ini.index(w), ini.index(w) + len(w), "PERSON", 0.8, "names:first") for w in ("True", "None", "Trudy")]
    assert [ini[s.start:s.end] for s in drop_syntax_spans(ini, found)] == ["Trudy"]


def test_the_detect_command_prints_spans_and_the_trace_and_reads_stdin(capsys, monkeypatch):
    import io

    from cloud_edge_privacy.cli import main

    monkeypatch.setattr("sys.stdin", io.StringIO("Translate to French: Dear Anna Berg, see you in Oslo."))
    assert main(["detect", "--detector", "fast", "--trace", "--input", "-"]) == 0
    out = capsys.readouterr().out
    assert "\tPERSON\t" in out and "'Anna Berg'" in out
    assert "# drop_translation_languages: dropped 'French' DEM" in out and "# steps run: tidy," in out
    assert main(["detect", "--detector", "fast", "--text", "x", "--without-step", "nope"]) == 2
    assert "unknown post-detection step 'nope'" in capsys.readouterr().err


def test_a_key_whose_value_only_refers_to_a_secret_is_no_secret():
    from cloud_edge_privacy.detection import build_detector

    det = build_detector("structured")
    code = ("password: ${DB_PASSWORD}\ntoken = os.environ['API_TOKEN']\n"
            "conn = connect(username=username, password=password)\n")
    assert det.analyze(code) == []
    real = "My password: Tr0ub4dor&3 and the username: jdoe_77"
    found = {real[s.start:s.end] for s in det.analyze(real)}
    assert "Tr0ub4dor&3" in found and "jdoe_77" in found


def test_a_span_inside_a_katakana_word_covers_the_whole_word():
    from cloud_edge_privacy.detection.pipeline import whole_katakana_words

    text = "ギズモードのオフィスに。ロナルド・レーガン大統領と警察"
    i = text.index("モ")
    spans = [Span(i, i + 1, "ORG", 0.8, "learned:ORG"), Span(text.index("ロナ"), text.index("ロナ") + 3, "PERSON"),
             Span(text.index("警察"), text.index("警察") + 2, "ORG")]
    # the middle dot between a foreign name's words stops it; a span of Han letters is left as it is
    assert [text[s.start:s.end] for s in whole_katakana_words(text, spans)] == ["ギズモード", "ロナルド", "警察"]
    assert "whole_katakana_words" in DEFAULT_STEPS
