"""Text in other languages: the CJK analyzers' proper nouns, and the learned NER reading each sentence with the
model of its language (the English one or the one trained on seven more)."""
from __future__ import annotations

import pytest

from cloud_edge_privacy.detection import build_detector
from cloud_edge_privacy.detection.cjk import CjkProperNounRecognizer, language_of
from cloud_edge_privacy.detection.decider import SpanDecider
from cloud_edge_privacy.detection.learned.ner import MODEL_DIR, MULTILINGUAL_DIR, LearnedNerRecognizer, \
    other_language_runs
from cloud_edge_privacy.errors import ModelFileError
from cloud_edge_privacy.lexicon import another_language, sentence_bounds
from cloud_edge_privacy.spans import Span


@pytest.fixture(scope="module")
def cjk() -> CjkProperNounRecognizer:
    return CjkProperNounRecognizer()


def _found(rec: CjkProperNounRecognizer, text: str) -> dict:
    return {text[s.start:s.end]: s.label for s in rec.analyze(text)}


def test_the_language_of_a_line_is_read_off_its_script():
    assert language_of("김민수 씨는 서울에 산다.") == "ko"
    assert language_of("田中さんは東京に住んでいます。") == "ja"
    assert language_of("我住在北京。") == "zh"
    assert language_of("Plain English, no CJK.") is None


def test_chinese_japanese_and_korean_proper_nouns_are_found_by_their_analyzers(cjk):
    zh = _found(cjk, "我的朋友王小明上个月搬到了北京。")
    assert zh.get("王小明") == "PERSON" and zh.get("北京") == "LOC"
    ja = _found(cjk, "昨日、田中太郎さんと大阪で会いました。")
    # UniDic splits a surname and a given name; one span of one kind
    assert ja.get("田中太郎") == "PERSON" and ja.get("大阪") == "LOC"
    ko = _found(cjk, "어제 김민수 씨를 부산에서 만났다.")
    assert "부산" in ko and any("김민수" in k for k in ko)
    # the words around them stay
    assert not any(w in k for k in zh for w in ("朋友", "上个月"))


def test_english_text_loads_no_analyzer_and_latin_words_in_a_cjk_line_are_left_to_the_others(cjk):
    rec = CjkProperNounRecognizer()
    assert rec.analyze("Ms Anna Berg lives in Oslo.") == []
    assert rec._loaded == {}
    spans = cjk.analyze("我在 Google 工作，住在上海。")
    assert all("Google" not in "我在 Google 工作，住在上海。"[s.start:s.end] for s in spans)
    assert any(s.source.startswith("cjk:") for s in spans)


def test_warm_up_loads_the_three_analyzers_so_no_request_waits_for_one():
    rec = CjkProperNounRecognizer()
    rec.warm_up()
    assert set(rec._loaded) == {"zh", "ja", "ko"}
    loaded = dict(rec._loaded)
    text = "어제 김민수 씨를 부산에서 만났다."
    assert any("부산" in text[s.start:s.end] for s in rec.analyze(text))
    assert rec._loaded == loaded  # read with the analyzers loaded at warm-up, none loaded again


def test_the_decider_keeps_the_cjk_analyzers_spans_whatever_its_trees_say():
    text = "我住在上海。"
    span = Span(3, 5, "LOC", 0.7, "cjk:LOC")
    strict = SpanDecider("default", threshold=1.0)
    assert strict.keep(text, [span]) == [span]
    other = Span(3, 5, "LOC", 0.8, "spacy:GPE")
    assert strict.keep(text, [other]) == []


def test_sentences_in_another_language_are_told_apart_and_run_together():
    text = ("Please summarise this letter. Je m'appelle Pierre Dupont et j'habite à Lyon depuis dix ans. "
            "Mon médecin est le docteur Martin. Thanks a lot!\n我叫王小明。")
    bounds = sentence_bounds(text)
    assert [text[a:b] for a, b in bounds][0] == "Please summarise this letter."
    runs = [text[a:b] for a, b in other_language_runs(text)]
    assert runs[0].startswith("Je m'appelle") and runs[0].endswith("docteur Martin.")
    assert runs[1] == "我叫王小明。"
    assert not another_language("Please summarise this letter for Dr Martin in Lyon.")


def test_the_learned_ner_reads_other_languages_with_the_multilingual_model():
    text = "Please help me with a message to my friend. 我的朋友王小明上个月搬到了北京，他在广东科技学院读书。"
    start = text.index("我")
    english = LearnedNerRecognizer(str(MODEL_DIR))
    routed = LearnedNerRecognizer(str(MODEL_DIR), other_languages=str(MULTILINGUAL_DIR))
    # the English model drops what it finds over Han (it never read it); the multilingual model reads it
    assert not [s for s in english.analyze(text) if s.start >= start]
    assert [s for s in routed.analyze(text) if s.start >= start]
    # the English sentence is read by the English model alone, as without routing
    plain = "Please forward the invoice to Anna Berg at Nordic Freight AS in Oslo."
    assert [(s.start, s.end, s.label) for s in routed.analyze(plain)] == \
        [(s.start, s.end, s.label) for s in english.analyze(plain)]


def test_a_missing_other_language_model_is_a_clear_error(tmp_path):
    rec = LearnedNerRecognizer(str(MODEL_DIR), other_languages=str(tmp_path / "nowhere"))
    with pytest.raises(ModelFileError, match="nowhere"):
        rec.check()


def test_the_default_detector_masks_names_in_chinese_without_masking_the_clause():
    det = build_detector("default")
    text = "请帮我写一封邮件给王小明，告诉他明天下午三点在北京开会。"
    spans = det.analyze(text)
    covered = "".join(text[s.start:s.end] for s in spans)
    assert "王小明" in covered
    assert "请帮我写一封邮件" not in covered and len(covered) < len(text) // 2


def test_everyday_chinese_words_jieba_tags_as_persons_are_no_names(cjk):
    """jieba's dictionary tags 谢谢 ("thanks") and 明白 ("understand") as persons; a two-character one that
    common in Chinese is no name, a rarer name still is."""
    found = _found(cjk, "谢谢你，我明白了。王小明明天来。")
    assert "谢谢" not in found and "明白" not in found
    assert any("王小明" in k for k in found)


def test_a_latin_name_written_inside_chinese_or_japanese_text_is_a_word_of_its_own():
    """Han and Kana are written without spaces: "同事Katherine明天" holds the name as a word, not one long run."""
    from cloud_edge_privacy.detection.names import NameRecognizer

    rec = NameRecognizer()
    for text, name in (("我的同事Katherine明天去上海出差。", "Katherine"), ("田中さんとMichaelが会った。", "Michael")):
        assert name in {text[s.start:s.end] for s in rec.analyze(text)}, text
    # a Latin word that is no list name stays
    text = "我在Google工作。"
    assert not any("Google" in text[s.start:s.end] for s in rec.analyze(text))


def test_country_names_of_other_languages_and_their_russian_case_forms_are_places():
    from cloud_edge_privacy.detection.free_text import CourtTextRecognizer

    rec = CourtTextRecognizer()
    for text, country in (("вопрос политической ориентации Грузии будет решаться", "Грузии"),
                          ("переговоры с Ираном не приводят ни к чему", "Ираном"),
                          ("le nord de la Syrie", "Syrie"), ("Ich war in der Türkei.", "Türkei"),
                          ("Viajó a Alemania.", "Alemania")):
        assert (country, "LOC") in {(text[s.start:s.end], s.category) for s in rec.analyze(text)}, text
    # an English word is never taken from another language's list
    text = "The chad of the ballot was hanging."
    assert not any(s.category == "LOC" for s in rec.analyze(text))


def test_a_declined_russian_town_name_is_a_place_but_not_at_a_sentence_start():
    from cloud_edge_privacy.detection.inflection import russian_case_forms, russian_nominatives
    from cloud_edge_privacy.detection.places import PlaceRecognizer

    assert "Москва" in russian_nominatives("Москве") and "Вашингтон" in russian_nominatives("Вашингтоном")
    import re
    assert re.fullmatch(russian_case_forms("Грузия"), "Грузией") and not re.fullmatch(russian_case_forms("Иран"),
                                                                                      "Ирания")
    rec = PlaceRecognizer()
    text = "Он живёт в Москве и работает с Вашингтоном."
    got = {text[s.start:s.end] for s in rec.analyze(text)}
    assert {"Москве", "Вашингтоном"} <= got
    # a capital at a sentence's start says nothing: only the name as written counts there
    text = "Москвой он не интересовался."
    assert not any(s.source == "place:gazetteer_declined" for s in rec.analyze(text))


def test_a_katakana_place_name_inside_a_longer_katakana_word_is_no_place():
    from cloud_edge_privacy.detection.places import PlaceRecognizer

    places = PlaceRecognizer()
    sung = "日本の女性シンガーソングライター・やなぎなぎの3枚目のシングル。"
    assert places.analyze(sung) == []  # "シンガ", "ライ", "グル" are pieces of loanwords
    text = "来月ロンドンに行きます。"
    assert [text[s.start:s.end] for s in places.analyze(text)] == ["ロンドン"]


def test_a_katakana_word_unidic_does_not_know_is_a_proper_noun_but_a_loanword_it_knows_is_not(cjk):
    found = _found(cjk, "アップルは警察に捜査を依頼し、ギズモードのオフィスに家宅捜査が入った。")
    assert found.get("ギズモード") == "MISC"
    assert "オフィス" not in found
    assert _found(cjk, "日本の女性シンガーソングライターの3枚目のシングル。") == {"日本": "LOC"}


def test_a_japanese_address_ends_at_its_municipality_unless_block_numbers_follow():
    from cloud_edge_privacy.detection.free_text import AddressRecognizer

    addresses = AddressRecognizer()
    born = "鴇田正憲は、兵庫県神戸市出身のサッカー選手、経営者。"
    assert [born[s.start:s.end] for s in addresses.analyze(born)] == ["兵庫県神戸市"]
    office = "本社は東京都新宿区西新宿2丁目8番1号にある。"
    assert [office[s.start:s.end] for s in addresses.analyze(office)] == ["東京都新宿区西新宿2丁目8番1号"]


def test_an_english_model_span_is_judged_by_every_sentence_it_covers():
    from cloud_edge_privacy.detection.pipeline import drop_english_models_in_other_languages

    text = ("Responsable clínico: Dr. Héctor Pastor Navarro Servicio de Urología Complejo Hospitalario Universitario "
            "de Albacete.")
    clause = Span(21, len(text) - 1, "PERSON", 0.85, "tab_ner:PERSON")
    # the sentence where it starts ("Responsable clínico: Dr.") is too short to vote; the stretch it covers is Spanish
    assert drop_english_models_in_other_languages(text, [clause]) == []
    english = "Contact: Dr. John Smith of the Leeds General Infirmary, who will call you."
    name = Span(9, 23, "PERSON", 0.85, "tab_ner:PERSON")
    assert drop_english_models_in_other_languages(english, [name]) == [name]


def test_a_name_shaped_span_is_short_and_holds_no_capitalised_function_word():
    from cloud_edge_privacy.detection.pipeline import name_shaped

    assert name_shaped("Hanna De Wennekath")  # "De": a surname's part, in the name lists
    assert name_shaped("OT Wennekath")
    assert name_shaped("BdB") and name_shaped("PayPal") and not name_shaped("Banken")  # a capital inside a word
    assert not name_shaped("Truppenübungsplatz Zur Errichtung")  # German capitalises nouns and headings run on
    assert not name_shaped("Infrastruktur OT Wennekath Die Bundesstraße 216 Lüneburg")


def test_a_capital_in_mid_sentence_marks_a_name_where_only_proper_nouns_are_capitalised():
    from cloud_edge_privacy.detection.pipeline import drop_english_models_in_other_languages
    from cloud_edge_privacy.lexicon import leading_language

    def kept(text, surface, source="spacy:ORG"):
        i = text.index(surface)
        span = Span(i, i + len(surface), source.split(":")[1], 0.8, source)
        return drop_english_models_in_other_languages(text, [span]) == [span]

    french = "Le constructeur a coopéré avec Nissan dans un communiqué de presse publié hier soir."
    assert leading_language(french) == "fr"
    assert kept(french, "Nissan")  # common in English and French, so not "rare": capitalised in mid-sentence
    russian = "Об этом в понедельник отметила представитель Philips в российской компании."
    assert kept(russian, "Philips", "encoder:PERSON")
    german = "Der Bundesverband deutscher Banken hat die Prognose für das Wachstum gesenkt, sagte sie."
    assert leading_language(german) == "de"
    assert not kept(german, "Prognose")  # German capitalises every noun
    assert not kept(french, "Le constructeur")  # the sentence's start
    label = "Fecha de Ingreso: 13/11/2017 del paciente que fue visto en la consulta."
    assert not kept(label, "Ingreso", "encoder:PERSON")  # a field's label, title-cased
    unit = "Presenta una cifra de 73 U que es alta para el paciente de la consulta."
    assert not kept(unit, "U")  # one letter
    assert not kept(french, "communiqué de presse")  # not capitalised


def test_a_models_code_or_amount_without_a_number_is_dropped():
    from cloud_edge_privacy.detection.pipeline import trim_kept
    from cloud_edge_privacy.lexicon import number_word

    assert number_word("three") and number_word("fifty-five") and number_word("trois") and not number_word("autor")
    text = "Tel.: 967 597 100 E-mail autor: x. Fecha de Ingreso: hoy. He has three brothers and paid 1,000 TRY."
    def at(surface, category, source="tab_ner"):
        i = text.index(surface)
        return Span(i, i + len(surface), category, 0.8, f"{source}:{category}")
    kept = trim_kept(text, [at("E-mail autor", "CODE", "learned"), at("Fecha de Ingreso", "QUANTITY"),
                            at("three brothers", "QUANTITY"), at("TRY", "QUANTITY")])
    assert [text[s.start:s.end] for s in kept] == ["three brothers", "TRY"]
