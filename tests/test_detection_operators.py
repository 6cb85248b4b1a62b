import re

import pytest

from cloud_edge_privacy.desensitization import apply_replacements, get_operator, list_operators
from cloud_edge_privacy.randomness import Randomness
from cloud_edge_privacy.detection.pipeline import Detector, merge_spans, propagate_mentions
from cloud_edge_privacy.detection import build_detector
from cloud_edge_privacy.detection.regex_recognizer import RegexRecognizer
from cloud_edge_privacy.core.gateway import PrivacyGateway
from cloud_edge_privacy.errors import PrivacyGatewayError
from cloud_edge_privacy.spans import Span


@pytest.mark.parametrize("text, surface, category", [
    ("application (no. 36110/97) against", "36110/97", "CODE"),
    ("write to jane.doe@example.org today", "jane.doe@example.org", "CODE"),
    ("call +47 22 33 44 55 now", "+47 22 33 44 55", "CODE"),
    ("card 4111 1111 1111 1111 was used", "4111 1111 1111 1111", "CODE"),
    ("on 12 March 2004 the court", "12 March 2004", "DATETIME"),
    ("in May 2006 the authority", "May 2006", "DATETIME"),
    ("claiming 48,000 euros in damages", "48,000 euros", "QUANTITY"),
    ("the applicant, aged 46, was", "aged 46", "DEM"),
    ("a Swedish national, Mr Raja Arlewin (“the applicant”)", "Mr Raja Arlewin", "PERSON"),
    ("represented by Ms B. Baysal, a lawyer", "Ms B. Baysal", "PERSON"),
    ("Mr A. Rönquist, the editor", "Mr A. Rönquist", "PERSON"),
])
def test_regex_recognizer_finds_structured_identifiers(text, surface, category):
    spans = merge_spans(RegexRecognizer().analyze(text))
    assert any(text[s.start:s.end] == surface and s.category == category for s in spans), spans


def test_a_month_and_year_is_no_application_number():
    """A CV's "Camp Beaumont Asia 06/2023 – 08/2023" went out as one code; a case file number keeps its year."""
    text = "Camp Beaumont Asia 06/2023 – 08/2023; no. 36110/97; case no. 2-345/2004"
    found = [text[s.start:s.end] for s in RegexRecognizer(["echr_application"]).analyze(text)]
    assert found == ["36110/97", "2-345/2004"]


def test_card_numbers_need_a_valid_luhn_checksum():
    text = "number 4111 1111 1111 1112 here"
    assert not [s for s in RegexRecognizer(["card"]).analyze(text)]


def test_merge_takes_union_and_prefers_regex_category():
    merged = merge_spans([Span(0, 5, "ORG", 0.8, "spacy:ORG"), Span(3, 9, "CODE", 0.9, "regex:x"),
                          Span(20, 25, "LOC", 0.8, "spacy:GPE")])
    assert merged == [Span(0, 9, "CODE", 0.9, "regex:x"), Span(20, 25, "LOC", 0.8, "spacy:GPE")]


def test_a_date_that_swallowed_a_name_is_merged_as_the_name():
    """Seen on real prompts: "2002 Paul Giles & The Vintage Team" merged as DATETIME, so the date operator
    rewrote the year and sent the name as it was."""
    spans = [Span(3, 7, "DATETIME", 0.9, "regex:year"), Span(8, 18, "PERSON", 0.8, "names:list"),
             Span(0, 18, "DATETIME", 0.8, "spacy:DATE")]
    assert merge_spans(spans) == [Span(0, 18, "PERSON", 0.9, "names:list")]
    # a name-like word inside the date span ("5 May 2001") leaves it a date
    inside = [Span(0, 10, "DATETIME", 0.9, "regex:date"), Span(2, 5, "PERSON", 0.5, "names:first")]
    assert merge_spans(inside)[0].category == "DATETIME"
    assert merge_spans(inside, text="5 May 2001")[0].category == "DATETIME"


def test_an_amount_that_swallowed_an_organisation_is_merged_as_the_organisation():
    """Seen on the dev prompts: the TAB NER read "2 Sanderson Farms' EPS" as a QUANTITY around the models'
    ORG "Sanderson Farms"; the amount operator rewrote the 2 and sent the company's name."""
    text = "2 Sanderson Farms' EPS down $.90 in 2022"
    spans = [Span(0, 22, "QUANTITY", 0.85, "tab_ner:QUANTITY"), Span(2, 17, "ORG", 0.8, "spacy:ORG")]
    assert merge_spans(spans, text=text) == [Span(0, 22, "ORG", 0.85, "spacy:ORG")]
    out = get_operator("pseudonym")(text, merge_spans(spans, text=text), Randomness.benchmark(0)).text
    assert "Sanderson" not in out and "Farms" not in out
    assert merge_spans(spans)[0].category == "QUANTITY"  # without the text: only a span beyond the best counts


def test_propagation_masks_every_mention_and_the_surname():
    text = "Ms Anna Berg sued. Later Berg appealed; ANNA BERG won."
    spans = propagate_mentions(text, [Span(3, 12, "PERSON", 0.8, "spacy:PERSON")])
    found = {text[s.start:s.end] for s in spans}
    assert {"Anna Berg", "Berg", "ANNA BERG"} <= found


def test_placeholder_is_consistent_and_touches_only_detected_spans():
    text = "The Court heard Anna Berg. Anna Berg lives in Oslo."
    spans = [Span(16, 25, "PERSON"), Span(27, 36, "PERSON"), Span(46, 50, "LOC")]
    out = get_operator("placeholder")(text, spans, Randomness.benchmark(0))
    assert out.text == "The Court heard [PERSON_1]. [PERSON_1] lives in [LOC_1]."
    for r in out.replacements:   # mapping offsets are right in both texts
        assert text[r.start:r.end] == r.original and out.text[r.new_start:r.new_end] == r.replacement
    assert out.masks()[0] == [16, 25, "[PERSON_1]"]


def test_suppression_and_overlap_rejection():
    out = get_operator("suppression")("a bc d", [Span(2, 4, "X")], Randomness.benchmark(0))
    assert out.text == "a [REDACTED] d"
    with pytest.raises(ValueError, match="overlapping"):
        apply_replacements("abcdef", [Span(0, 3, "X"), Span(2, 4, "X")], lambda s, t: "", "m")


def test_registry_knows_methods_and_rejects_unknown():
    assert {"suppression", "placeholder"} <= set(list_operators())
    with pytest.raises(KeyError, match="unknown privacy method 'nope'"):
        get_operator("nope")


def test_gateway_fails_closed_with_a_typed_error():
    class Boom:
        def analyze(self, text):
            raise RuntimeError("detector crashed")

    from cloud_edge_privacy.randomness import Randomness

    gw = PrivacyGateway("placeholder", Randomness.benchmark(0), detector=Boom())
    with pytest.raises(PrivacyGatewayError, match="RuntimeError .message withheld"):
        gw.protect("Anna Berg")


def test_default_detector_on_sample_catches_all_direct_identifiers(sample_docs):
    """Real spaCy + regex on the shipped sample: every DIRECT mention ends up inside a detected span."""
    det = build_detector("default")
    for doc in sample_docs:
        spans = det.analyze(doc.text)
        for m in doc.annotations["annotator1"]:
            if m.identifier_type == "DIRECT":
                assert any(s.start <= m.start_offset and m.end_offset <= s.end for s in spans), (doc.doc_id, m.span_text)


def test_high_recall_detector_on_sample(sample_docs):
    """Both TAB models are committed with the package: the preset never depends on setup.sh or a cache."""
    from cloud_edge_privacy.detection import build_detector

    det = build_detector("high_recall")
    assert [type(r).__name__ for r in det.recognizers] == ["RegexRecognizer", "SpacyRecognizer", "TabNerRecognizer",
                                                           "TabNerRecognizer"]
    for doc in sample_docs:
        spans = det.analyze(doc.text)
        for m in doc.annotations["annotator1"]:
            if m.identifier_type == "DIRECT":
                assert any(s.start <= m.start_offset and m.end_offset <= s.end for s in spans), (doc.doc_id, m.span_text)


def test_anonymize_cli_writes_masks_texts_and_epsilon(tmp_path, capsys):
    import json
    from cloud_edge_privacy.cli import main
    from cloud_edge_privacy.datasets.tab import sample_tab_path

    masks, texts = tmp_path / "masks.json", tmp_path / "out.jsonl"
    assert main(["anonymize", "--input", str(sample_tab_path()), "--method", "prism_ldp", "--epsilon", "2",
                 "--seed", "7", "--masks-out", str(masks), "--texts-out", str(texts), "--no-progress"]) == 0
    m = json.loads(masks.read_text())
    assert set(m) == {"sample-001", "sample-002", "sample-003"}
    assert all(isinstance(e, list) and len(e) == 3 for doc in m.values() for e in doc)
    lines = [json.loads(l) for l in texts.read_text().splitlines()]
    assert all(sum(l["epsilon_spent"].values()) > 0 for l in lines)          # ε per kind, never summed across kinds
    assert "Kowalczyk" not in lines[0]["text"]
    # same seed, same output
    again = tmp_path / "again.json"
    main(["anonymize", "--input", str(sample_tab_path()), "--method", "prism_ldp", "--epsilon", "2", "--seed", "7",
          "--masks-out", str(again), "--no-progress"])
    assert json.loads(again.read_text()) == m
    assert main(["anonymize", "--input", str(sample_tab_path()), "--method", "placeholder", "--epsilon", "2",
                 "--masks-out", str(again), "--no-progress"]) == 2
    assert "'placeholder' has no privacy budget" in capsys.readouterr().err


def test_legal_detector_is_the_tab_tuned_combination():
    from cloud_edge_privacy.detection import build_detector

    names = [type(r).__name__ for r in build_detector("legal").recognizers]
    assert names == ["RegexRecognizer", "SpacyRecognizer", "TabNerRecognizer"]
    with pytest.raises(ValueError, match="unknown detector"):
        build_detector("nope")


def test_public_institution_filter():
    from cloud_edge_privacy.detection.public_parties import is_public_institution

    for surface, cat in [("Court", "ORG"), ("the Turkish Government", "ORG"), ("THE FACTS", "ORG"),
                         ("Court of Cassation", "ORG"), ("Turkey", "LOC"), ("Republic of Poland", "LOC"),
                         ("United Nations", "ORG"), ("the United Nations Office on Drugs and Crime", "ORG"),
                         ("World Health Organization", "ORG"), ("WHO", "ORG"), ("UNICEF", "ORG"),
                         ("the European Union", "ORG")]:
        assert is_public_institution(surface, cat), surface
    for surface, cat in [("Baltic Fisheries Ltd", "ORG"), ("Gdynia", "LOC"), ("Anna Berg", "PERSON"),
                         ("United Nations Association of Leeds", "ORG"), ("Red Cross Shop Leeds", "ORG")]:
        assert not is_public_institution(surface, cat), surface


class _FixedRecognizer:
    """Returns the spans of the given surfaces (logic test of the pipeline, not of a model)."""

    from cloud_edge_privacy.detection.recognizer import ALL_TAB, declare

    spec = declare("fixed", ALL_TAB, {"fixed": 0})

    def __init__(self, *surfaces_and_categories):
        self.items = surfaces_and_categories

    def analyze(self, text):
        import re

        from cloud_edge_privacy.spans import Span

        return [Span(m.start(), m.end(), cat, 0.9, "fixed:x") for surface, cat in self.items
                for m in re.finditer(re.escape(surface), text)]


def test_public_party_filter_drops_the_respondent_state_and_government_only():
    from cloud_edge_privacy.detection.pipeline import Detector
    from cloud_edge_privacy.detection.public_parties import is_public_party
    from cloud_edge_privacy.spans import Span

    text = ("The case originated in an application (no. 1520/06) against the Republic of Turkey lodged by "
            "Mr Osman Erden. The Turkish Government were represented by their Agent. In 1990 he moved from "
            "Ankara to the Republic of Turkey's south.")
    recog = _FixedRecognizer(("Republic of Turkey", "LOC"), ("Turkish Government", "ORG"), ("Osman Erden", "PERSON"),
                             ("Ankara", "LOC"))
    kept = {(text[s.start:s.end], s.start) for s in Detector([recog], drop_public_parties=True).analyze(text)}
    assert ("Republic of Turkey", text.index("Republic of Turkey")) not in kept  # the respondent party
    assert ("Republic of Turkey", text.rindex("Republic of Turkey")) in kept  # a place in the story
    assert not any(surface == "Turkish Government" for surface, _ in kept)
    assert {"Osman Erden", "Ankara"} <= {surface for surface, _ in kept}
    # without the filter every span stays
    assert len(Detector([recog]).analyze(text)) == len(kept) + 2
    # a person is never a public party, whatever precedes it
    assert not is_public_party("an application (no. 1/06) against Mr Osman", Span(36, 44, "PERSON", 1.0, "x"))


def test_detector_cache_replays_the_original_detection_time():
    """A cache hit returns the same spans and the time of the first computation, not ~0 ms."""
    import time

    from cloud_edge_privacy.detection.pipeline import Detector

    class Slow(_FixedRecognizer):
        calls = 0

        def analyze(self, text):
            Slow.calls += 1
            time.sleep(0.05)
            return super().analyze(text)

    det = Detector([Slow(("Oslo", "LOC"))], cache_size=2)
    spans1, ms1 = det.analyze_timed("He lives in Oslo.")
    spans2, ms2 = det.analyze_timed("He lives in Oslo.")
    assert Slow.calls == 1 and spans1 == spans2 and ms1 >= 50 and ms2 == ms1
    det.analyze_timed("a"), det.analyze_timed("b")  # evicts the first text (cache of 2)
    det.analyze_timed("He lives in Oslo.")
    assert Slow.calls == 4


@pytest.mark.parametrize("method", ["suppression", "placeholder", "pseudonym", "generalization", "dp_numbers",
                                    "metric_dp_words", "prism_ldp", "uniform_ldp", "adaptive"])
def test_secrets_are_suppressed_by_every_method(method):
    from cloud_edge_privacy.desensitization import get_operator
    from cloud_edge_privacy.randomness import Randomness
    from cloud_edge_privacy.spans import SECRET_TOKEN

    text = "my PIN is 4471 and the key sk-proj-abcDEF123456 belongs to Anna Berg, 34"
    spans = [Span(10, 14, "CODE", 1.0, "secret:keyword"), Span(27, 47, "CODE", 1.0, "secret:prefixed_key"),
             Span(59, 68, "PERSON", 1.0, "names"), Span(70, 72, "DEM", 1.0, "age")]
    out = get_operator(method)(text, spans, Randomness.benchmark(0), "doc")
    assert "4471" not in out.text and "sk-proj" not in out.text, out.text
    if method != "uniform_ldp":  # that one rewrites every word of the text, secrets included
        assert out.text.count(SECRET_TOKEN) == 2, out.text
    assert "4471" not in out.restore("code [SECRET]") and all("4471" not in v for v in out.vault.values())


def test_a_same_words_reading_does_not_rename_a_rule_span():
    """"French" (the demonym list, a model's PERSON) went out as a person's surrogate ("Translate to Bakker"); a
    model's CODE over a date the date pattern read ("12.03.1961") was rewritten digit by digit into "15.83.1453";
    "Monday", which the TAB NER called a place, went out as a town."""
    text = "Translate to French on Monday, born 12.03.1961"
    french = (text.index("French"), text.index("French") + 6)
    assert merge_spans([Span(*french, "DEM", 0.8, "org:demonym"), Span(*french, "PERSON", 0.6, "encoder:PERSON")],
                       text=text)[0].category == "DEM"
    date = (text.index("12."), len(text))
    assert merge_spans([Span(*date, "DATETIME", 0.9, "regex:date_numeric"), Span(*date, "CODE", 0.7, "tab_ner:CODE")],
                       text=text)[0].category == "DATETIME"
    monday = (text.index("Monday"), text.index("Monday") + 6)
    assert merge_spans([Span(*monday, "LOC", 0.7, "tab_ner:LOC"), Span(*monday, "DATETIME", 0.6, "spacy:DATE")],
                       text=text)[0].category == "DATETIME"
    # a currency code a model called a place does not make an amount a place ("NOK 45,000" went out as an address)
    amount = "an invoice for NOK 45,000 is due"
    a = amount.index("NOK")
    assert merge_spans([Span(a, a + 10, "QUANTITY", 0.7, "tab_ner:QUANTITY"), Span(a, a + 6, "LOC", 0.5,
                                                                                 "encoder:LOC")],
                       text=amount)[0].category == "QUANTITY"
    # a town called March does not make an amount charged in March an address ("198 Pasadizo Jordi Jodar")
    bill = "charged $89.99 twice in March."
    a = bill.index("$")
    merged = merge_spans([Span(a, a + 6, "QUANTITY", 0.9, "regex:amount"), Span(a, len(bill) - 1, "DATETIME", 0.6,
                                                                                 "tab_ner:DATETIME"),
                          Span(bill.index("March"), len(bill) - 1, "LOC", 0.5, "place:gazetteer")], text=bill)
    assert [m.category for m in merged] == ["QUANTITY"]
    # a first name of the name lists inside a school's name the TAB NER read whole does not make it a person
    school = "her school, Greenfield Primary in Bristol, needs"
    a, b = school.index("Greenfield"), school.index(", needs")
    merged = merge_spans([Span(b - 7, b, "PERSON", 0.6, "names:first"), Span(a, b, "ORG", 0.7, "tab_ner:ORG")],
                         text=school)
    assert [(school[m.start:m.end], m.category) for m in merged] == [("Greenfield Primary in Bristol", "ORG")]
    # a name reaching beyond the rule span still names the union
    wider = [Span(0, 4, "DATETIME", 0.9, "regex:year"), Span(0, 15, "PERSON", 0.8, "encoder:PERSON")]
    assert merge_spans(wider, text="2002 Paul Giles")[0].category == "PERSON"


def test_the_category_of_a_union_is_voted_by_the_recognizers_that_read_it_whole():
    """Seen as a user: "a nurse position at Mayo Clinic ... St. Joseph Mercy Hospital in Ann Arbor" went out as
    "at Anselma Bourdon ... at Gyda. Thierry Laila Bud in Anita Boldu": a first name of the name lists ("Mayo",
    "Ann") or one model's PERSON named places and hospitals that other recognizers read whole."""
    text = "at Mayo Clinic, at St. Joseph Mercy Hospital in Ann Arbor. Hello Erik. Beckey Thompson signed."
    at = lambda s: (text.index(s), text.index(s) + len(s))  # noqa: E731

    def category(spans: list) -> str:
        merged = merge_spans(spans, text=text)
        assert len(merged) == 1
        return merged[0].category

    # a first name covering part of a union a rule recognizer reads whole as an organisation or a place
    assert category([Span(*at("Mayo"), "PERSON", 0.6, "names:first"), Span(*at("Mayo Clinic"), "ORG", 0.75,
                                                                            "org:pattern"),
                     Span(*at("Mayo Clinic"), "PERSON", 0.6, "learned:PERSON")]) == "ORG"
    assert category([Span(*at("Ann"), "PERSON", 0.6, "names:first"),
                     Span(*at("Ann Arbor"), "LOC", 0.6, "place:gazetteer"), Span(*at("Ann Arbor"), "ORG", 0.6,
                                                                                 "tab_ner:ORG"),
                     Span(*at("Ann Arbor"), "LOC", 0.6, "spacy:GPE"), Span(*at("Ann Arbor"), "LOC", 0.6,
                                                                           "encoder:LOC")]) == "LOC"
    # one model's person against two recognizers' organisation of the same words
    hospital = at("St. Joseph Mercy Hospital")
    assert category([Span(*hospital, "PERSON", 0.7, "tab_ner:PERSON"), Span(*hospital, "ORG", 0.75, "org:pattern"),
                     Span(*hospital, "ORG", 0.6, "spacy:ORG")]) == "ORG"
    # but a greeting a model read whole with the name, or a surname of the name lists, stays a person's name
    assert category([Span(*at("Erik"), "PERSON", 0.6, "names:first"),
                     Span(*at("Hello Erik"), "ORG", 0.6, "tab_ner:ORG")]) == "PERSON"
    assert category([Span(*at("Beckey"), "PERSON", 0.6, "names:first"),
                     Span(*at("Beckey Thompson"), "ORG", 0.6, "tab_ner:ORG"),
                     Span(*at("Beckey Thompson"), "ORG", 0.6, "org:work_cue")]) == "PERSON"


def test_model_spans_are_cut_around_validated_identifiers():
    """Seen as a user: "Email john.smith@acme.com or call 555-123-4567" was one code, sent as
    "lxzn.efgmd@igls.gej ba yoeq 054-614-6590"; "phone +47 912 34 567" took "phone" with it."""
    from cloud_edge_privacy.detection.pipeline import clip_at_identifiers, trim_kept

    text = "Email john.smith@acme.com or call 555-123-4567, John Smith <js@x.org>"
    at = lambda s: (text.index(s), text.index(s) + len(s))  # noqa: E731
    spans = [Span(*at("john.smith@acme.com"), "CODE", 0.95, "structured:email"),
             Span(*at("555-123-4567"), "CODE", 0.9, "structured:phone"),
             Span(*at("js@x.org"), "CODE", 0.95, "structured:email"),
             Span(at("Email")[0], at("4567")[1], "CODE", 0.6, "encoder:CODE"),
             Span(at("John")[0], len(text), "PERSON", 0.6, "encoder:PERSON")]
    out = sorted((text[s.start:s.end], s.source) for s in trim_kept(text, clip_at_identifiers(text, spans)))
    assert out == sorted([("john.smith@acme.com", "structured:email"), ("555-123-4567", "structured:phone"),
                          ("js@x.org", "structured:email"), ("John Smith", "encoder:PERSON")])
    # "or call" is glue, "Email" one everyday word (no code), and the name stays a name
    assert clip_at_identifiers(text, spans[3:]) == spans[3:]  # nothing validated: nothing to cut at
    url = "Read it here: https://lnkd.in/ecsuPbeR today now. See x.org/Lecture 4.pdf"
    host, path = url.index("lnkd.in"), url.index("x.org")
    found = clip_at_identifiers(url, [Span(host, host + 7, "CODE", 0.8, "structured:url_host"),
                                      Span(url.index("https"), url.index(" now"), "CODE", 0.6, "encoder:CODE"),
                                      Span(path, path + 5, "CODE", 0.7, "structured:domain"),
                                      Span(path, len(url), "CODE", 0.6, "encoder:CODE")])
    assert sorted(url[s.start:s.end] for s in found if s.source == "encoder:CODE") == \
        ["https://lnkd.in/ecsuPbeR", "x.org/Lecture 4.pdf"]  # the URL whole; "today" is glue; blanks rejoin
    lower = "write to mary jones mary.jones@example.org"
    found = clip_at_identifiers(lower, [Span(9, len(lower), "PERSON", 0.6, "encoder:PERSON"),
                                        Span(20, len(lower), "CODE", 0.95, "structured:email")])
    assert [lower[s.start:s.end] for s in found] == ["mary jones", "mary.jones@example.org"]  # a name is no glue


def test_kept_spans_lose_edge_punctuation_glue_segments_and_word_codes():
    from cloud_edge_privacy.detection.pipeline import trim_kept

    text = "patient Ola Nordmann (born 12.03.1961) in Trondheim, phone"
    at = lambda s: (text.index(s), text.index(s) + len(s))  # noqa: E731
    spans = [Span(at("Ola")[0], at("(")[1], "ORG", 0.6, "tab_ner:ORG"),
             Span(*at("born"), "CODE", 0.4, "encoder:CODE"),
             Span(at("Trondheim")[0], len(text), "LOC", 0.6, "encoder:LOC"),
             Span(*at("Nordmann"), "CODE", 0.9, "structured:username")]
    out = [(text[s.start:s.end], s.source) for s in trim_kept(text, spans)]
    assert out == [("Ola Nordmann", "tab_ner:ORG"), ("Trondheim", "encoder:LOC"),
                   ("Nordmann", "structured:username")]  # validated spans as found
    stop = "overdue since 1 October. The auditors came on 12 June."
    kept = trim_kept(stop, [Span(stop.index("1 Oct"), stop.index(" The"), "DATETIME", 0.6, "learned:DATETIME"),
                            Span(stop.index("12 J"), len(stop), "DATETIME", 0.6, "tab_ner:DATETIME")])
    assert [stop[s.start:s.end] for s in kept] == ["1 October", "12 June"]  # the sentence keeps its full stop
    rare = "code Zorblax"
    assert trim_kept(rare, [Span(5, 12, "CODE", 0.4, "encoder:CODE")])  # a rare word can be a code


def test_a_span_is_cut_at_a_joining_word_that_only_it_covers():
    """The TAB NER read "Anna at Bergen Logistics" as one place; the union went out as one town's name."""
    from cloud_edge_privacy.detection.pipeline import split_at_joining_words

    text = "a reminder to Anna at Bergen Logistics today"
    at = lambda s: (text.index(s), text.index(s) + len(s))  # noqa: E731
    long = Span(*at("Anna at Bergen Logistics"), "LOC", 0.6, "tab_ner:LOC")
    spans = [long, Span(*at("Anna"), "PERSON", 0.8, "names:first"), Span(*at("Bergen Logistics"), "ORG", 0.8,
                                                                            "spacy:ORG")]
    out = sorted(text[s.start:s.end] for s in split_at_joining_words(text, spans) if s.source == "tab_ner:LOC")
    assert out == ["Anna", "Bergen Logistics"]
    # nothing else covers a side ("Bank at Sea Ltd" read whole by one model): the span stays whole
    assert split_at_joining_words(text, [long, spans[1]]) == [long, spans[1]]
    # another span covers the joining word: it stays whole
    both = [long, spans[1], spans[2], Span(*at("Anna at Bergen"), "ORG", 0.5, "encoder:ORG")]
    assert long in split_at_joining_words(text, both)


def test_a_model_span_leaves_a_lower_case_tail_after_a_joining_word():
    """Seen as a user: "admitted to Leeds General Infirmary with community-acquired pneumonia" went out as
    "admitted to Henriksen A/S": one organisation's surrogate for the hospital and the diagnosis."""
    from cloud_edge_privacy.detection.pipeline import split_at_joining_words

    text = "admitted to Leeds General Infirmary with community-acquired pneumonia. Met Leeds with john smith."
    at = lambda s: (text.index(s), text.index(s) + len(s))  # noqa: E731
    ward = Span(*at("Leeds General Infirmary with community-acquired pneumonia"), "ORG", 0.6, "tab_ner:ORG")
    assert [text[s.start:s.end] for s in split_at_joining_words(text, [ward])] == ["Leeds General Infirmary"]
    # a tail in the name lists, or one another span covers, stays in the span
    names = Span(*at("Leeds with john smith"), "ORG", 0.6, "tab_ner:ORG")
    assert split_at_joining_words(text, [names]) == [names]
    covered = [ward, Span(*at("pneumonia"), "PERSON", 0.5, "learned:PERSON")]
    assert ward in split_at_joining_words(text, covered)


def test_a_lower_case_verb_before_its_object_is_no_nationality_or_name():
    """Seen as a user: "Please polish this email" went out as "Please [DEM_...] this email" (spaCy's NORP), and
    "polish: the paragraph" with a person's surrogate (issue 28, session 20)."""
    from cloud_edge_privacy.detection.pipeline import trim_kept

    text = "Please polish this email. polish: the text. I am polish. Ask anna the way. Summarise it for Turkish staff."
    at = lambda s, k=0: (text.index(s, k), text.index(s, k) + len(s))  # noqa: E731
    spans = [Span(*at("polish"), "DEM", 0.7, "spacy:NORP"), Span(*at("polish", 20), "PERSON", 0.6, "encoder:PERSON"),
             Span(*at("polish", 40), "DEM", 0.7, "spacy:NORP"), Span(*at("anna"), "PERSON", 0.6, "learned:PERSON"),
             Span(*at("Turkish"), "DEM", 0.7, "spacy:NORP")]
    kept = [(s.start, text[s.start:s.end]) for s in trim_kept(text, spans)]
    # the nationality stays, and so does a name typed in lower case (in the name lists) before "the"
    assert kept == [(text.index("polish", 40), "polish"), (text.index("anna"), "anna"),
                    (text.index("Turkish"), "Turkish")]


def test_a_model_span_leaves_a_lower_case_tail_after_an_indefinite_article():
    """Seen as a user: "Is the Uni-v a good first car?" went out as "Is the Binck bank?" (issue 28, session 20)."""
    from cloud_edge_privacy.detection.pipeline import split_at_joining_words

    text = "Is the Uni-v a good first car? Ask Anna a question. Try Kaito an Fujimoto."
    at = lambda s: (text.index(s), text.index(s) + len(s))  # noqa: E731
    car = Span(*at("Uni-v a good first car"), "ORG", 0.6, "tab_ner:ORG")
    anna = Span(*at("Anna a question"), "PERSON", 0.6, "tab_ner:PERSON")
    kaito = Span(*at("Kaito an Fujimoto"), "PERSON", 0.6, "tab_ner:PERSON")  # a capitalised word after: no tail
    assert [text[s.start:s.end] for s in split_at_joining_words(text, [car, anna, kaito])] == \
        ["Uni-v", "Anna", "Kaito an Fujimoto"]


def test_a_model_span_leaves_lower_case_edge_words_that_only_it_read():
    """Seen as a user: "My manager Priya asked" went out as "My sandra Schwartsbach asked", and "our client at
    Brown & Partners LLP confirming the transfer" as "at Stanton-Nunez the transfer"."""
    from cloud_edge_privacy.detection.pipeline import trim_lower_case_edges

    text = "My manager Priya asked Brown & Partners LLP confirming it; my manager john asked"
    at = lambda s: (text.index(s), text.index(s) + len(s))  # noqa: E731
    spans = [Span(*at("manager Priya"), "ORG", 0.6, "tab_ner:ORG"), Span(*at("Priya"), "PERSON", 0.8, "names:first"),
             Span(*at("Brown & Partners LLP confirming"), "ORG", 0.6, "learned:ORG"),
             Span(*at("Brown & Partners LLP"), "ORG", 0.75, "org:pattern")]
    out = {text[s.start:s.end] for s in trim_lower_case_edges(text, spans)}
    assert out == {"Priya", "Brown & Partners LLP"}
    # a rare lower-case word stays: a first name typed in lower case (the precision preset lost the unit)
    demone = "ask demone Johnson"
    span = Span(4, len(demone), "PERSON", 0.6, "learned:PERSON")
    assert span in trim_lower_case_edges(demone, [span, Span(11, len(demone), "PERSON", 0.8, "names:first")])
    # a lower-case word of the name lists stays, and so does a span no other recognizer corroborates at its edge
    john = Span(text.rindex("manager john"), len(text) - len(" asked"), "PERSON", 0.6, "learned:PERSON")
    assert trim_lower_case_edges(text, [john]) == [john]
    # a greeting, in any case: "Dear Mr. Garcia" went out as "Kimberly Mr. Axelsson"
    dear = "Dear Mr. Garcia, hello Erik"
    spans = [Span(0, 15, "DEM", 0.5, "tab_ner:DEM"), Span(5, 15, "PERSON", 0.9, "regex:titled_name"),
             Span(17, 27, "ORG", 0.5, "tab_ner:ORG"), Span(23, 27, "PERSON", 0.8, "names:first")]
    assert sorted(dear[s.start:s.end] for s in trim_lower_case_edges(dear, spans)) == [
        "Erik", "Erik", "Mr. Garcia", "Mr. Garcia"]
    # and a date keeps its words (TAB's "between 1980 and 1981", "approximately EUR 1,800")
    date = Span(*at("manager Priya"), "DATETIME", 0.6, "tab_ner:DATETIME")
    assert date in trim_lower_case_edges(text, [date, spans[1]])


def test_a_time_relative_to_now_is_not_masked():
    """"I was admitted yesterday, next month a check-up" went out with "[DATETIME_0116]" for "yesterday": a time
    of words relative to now dates nothing (TAB's annotators never mark one).  Dates and durations with a number
    stay ("five years" is a quasi-identifier in TAB)."""
    from cloud_edge_privacy.detection.pipeline import trim_kept

    text = "admitted yesterday; next month; every morning; five years; on 3 May; Friday"
    spans = [Span(text.index(w), text.index(w) + len(w), "DATETIME", 0.6, "spacy:DATE")
             for w in ("yesterday", "next month", "every morning", "five years", "3 May", "Friday")]
    assert [text[s.start:s.end] for s in trim_kept(text, spans)] == ["five years", "3 May"]


def test_a_weekday_without_a_date_is_not_masked_whatever_a_model_called_it():
    """"a fever since Monday; the GP sees him on Friday morning" went out as "since Maillet-sur-Labbe ... on
    [QUANTITY_9290]": the TAB NER read weekdays as places and amounts.  A weekday dates nothing without a date (TAB
    has no weekday mention); one with a date stays, and so does a place of relative words without a weekday."""
    from cloud_edge_privacy.detection.pipeline import trim_kept

    text = "since Monday; on Friday morning; open Monday to Friday; Tuesday 12 March; next week"
    cases = [("Monday", "LOC"), ("Friday morning", "QUANTITY"), ("Monday to Friday", "LOC"),
             ("Tuesday 12 March", "DATETIME"), ("next week", "LOC")]
    spans = [Span(text.index(w), text.index(w) + len(w), cat, 0.6, "tab_ner:" + cat) for w, cat in cases]
    assert [text[s.start:s.end] for s in trim_kept(text, spans)] == ["Tuesday 12 March", "next week"]


def test_a_month_read_as_a_place_is_a_date_and_not_copied_onto_other_months():
    """A budget prompt had a model's "December" as a place, and co-reference masked every December of it as a
    town (issue 28, session 18).  A month alone is a date: still masked where a model found it, as a date, and not
    copied; a place with a month's name in it stays a place."""
    from cloud_edge_privacy.detection.pipeline import propagate_mentions, trim_kept

    text = "Close the books in December. December rent is due; we moved to May Street, Leeds in December."
    spans = [Span(19, 27, "LOC", 0.6, "tab_ner:LOC"), Span(text.index("May Street"), text.index(", Leeds"), "LOC", 0.6,
                                                         "tab_ner:LOC")]
    kept = trim_kept(text, spans)
    assert [(text[s.start:s.end], s.category) for s in kept] == [("December", "DATETIME"), ("May Street", "LOC")]
    out = propagate_mentions(text, kept)
    assert [text[s.start:s.end] for s in out] == ["December", "May Street"]


def test_a_span_in_a_public_web_address_is_no_identifier():
    """Typed as a user (session 18): a model read "nice.org.uk" as a place ("from cieszyn"), the URL regex and a
    number regex masked a PubMed link, and a model's "com/articles/s41393-020-0512-3" made the Nature link a host
    no surrogate explains, so the guard refused the request.  A span of a public host or a piece of it, with no
    path but a number, goes; one with a piece of the host and path words masks the whole address; a span of a
    search query and spans on a trust's own host or a private host stay as they are."""
    from cloud_edge_privacy.detection.pipeline import trim_kept

    text = ("Read (nature.com). From nice.org.uk, see https://pubmed.ncbi.nlm.nih.gov/24621041/ and "
            "https://www.nature.com/articles/s41393-020-0512-3 or https://www.google.com/search?q=anna+berg; "
            "my trust leedsth.nhs.uk; https://acme-clinic.com/12345")
    spans = [(text.index("nice.org.uk"), "nice.org.uk", "LOC", "tab_ner:LOC"),
             (text.index("nice.org.uk"), "nice.org", "ORG", "encoder:ORG"),
             (text.index("(nature") + 1, "nature", "ORG", "encoder:ORG"),
             (text.index("https://pubmed"), "https://pubmed.ncbi.nlm.nih.gov/24621041/", "CODE", "regex:url"),
             (text.index("24621041"), "24621041", "CODE", "regex:long_number"),
             (text.index("com/articles"), "com/articles/s41393-020-0512-3", "CODE", "encoder:CODE"),
             (text.index("anna+berg"), "anna+berg", "PERSON", "encoder:PERSON"),
             (text.index("leedsth"), "leedsth.nhs.uk", "ORG", "encoder:ORG"),
             (text.index("12345"), "12345", "CODE", "regex:long_number")]
    kept = trim_kept(text, [Span(i, i + len(w), cat, 0.6, src) for i, w, cat, src in spans])
    assert [text[s.start:s.end] for s in kept] == ["https://www.nature.com/articles/s41393-020-0512-3", "anna+berg",
                                                   "leedsth.nhs.uk", "12345"]
    text = "my page https://sites.google.com/view/annaberg-portfolio"
    url = Span(text.index("https"), len(text), "CODE", 0.9, "regex:url")
    assert [text[s.start:s.end] for s in trim_kept(text, [url])] == ["https://sites.google.com/view/annaberg-portfolio"]
    text = "meet at https://maps.google.com/51.5074,-0.1278"
    url = Span(text.index("https"), len(text), "CODE", 0.9, "regex:url")
    assert [text[s.start:s.end] for s in trim_kept(text, [url])] == ["https://maps.google.com/51.5074,-0.1278"]


def test_the_language_of_a_translation_is_not_masked():
    """Seen as a user: "Translate to French: ..." went out as "Translate to Dravish: ...", and "translate this
    email into German" as "into Baleares" (co-reference copied a model's "German").  A nationality stays masked,
    and so does a language TAB marks ("presented in the Swedish language")."""
    import os

    os.environ.setdefault("CEP_SECRET_KEY", "ab" * 32)
    from cloud_edge_privacy import Gateway
    from cloud_edge_privacy.detection.free_text import translation_language

    text = "Translate to French: hello. An English translation. He is a German national, in the Swedish language."
    at = lambda w: (text.index(w), text.index(w) + len(w))  # noqa: E731
    assert translation_language(text, *at("French")) and translation_language(text, *at("English"))
    assert not translation_language(text, *at("German")) and not translation_language(text, *at("Swedish"))
    out = Gateway("pseudonym").protect("Please translate this email into German: Dear Mr Weber, thanks.").text
    assert out.startswith("Please translate this email into German: Dear Mr ") and "Weber" not in out


def test_identifiers_of_program_code_are_not_masked():
    """"def get_user(id" went out as "maria toft)" and JavaScript's "catalogItemId" as "xknirxaSpruHa": models read
    identifiers as organisations and codes.  Names stay candidates: in an identifier ("john_smith"), in a string, and
    a company written in camel case in prose; amounts and application numbers are no code."""
    import os

    from cloud_edge_privacy.detection.code_context import code_identifier

    def code(text, surface):
        start = text.index(surface)
        return code_identifier(text, start, start + len(surface))

    assert code("fix: def get_user(id): return", "def get_user(id")
    assert code("var catalogItemId = current.cat_item;", "catalogItemId")
    assert code("checker.isCatalogItemExcluded(catalogItemId);", "catalogItemId")
    assert code("x; print(user)", "print(user")
    assert code("def total(xs):\n    return s", "total(xs")  # a short identifier of ordinary letters (session 21)
    assert code("check: SELECT first_name, last_name FROM t", "SELECT first_name")  # SQL's keywords in capitals
    assert not code("Select first_name, then", "Select first_name")
    assert not code("send_to(john_smith);", "john_smith")
    assert not code('user = "John Smith";', "John Smith")
    assert not code("I worked at DoorDash. Then", "DoorDash")
    assert not code("between 1980 and 1981, the", "between 1980 and 1981")
    assert not code("paid TRY 2,767.", "TRY 2,767")

    os.environ.setdefault("CEP_SECRET_KEY", "ab" * 32)
    from cloud_edge_privacy import Gateway

    snippet = "var catalogItemId = current.cat_item.toString(); var isItemExcluded = checker.isCatalogItemExcluded(" \
              "catalogItemId);"
    assert Gateway("pseudonym").protect(snippet).text == snippet


def test_one_models_single_ordinary_lower_case_word_is_no_candidate():
    """Typed as a user (issue 28, session 21): "I studied economics", "the server in rack 12", "tables customers(id,
    name, city)", "deliver the pallets to the warehouse" went out with those words as organisations and places,
    each read by the encoder alone.  A lower-case name, a known place, a rare word, two words, a capitalised word
    and a word that two families read stay candidates."""
    from cloud_edge_privacy.detection.pipeline import drop_lone_ordinary_words

    text = "economics rack john leeds monzo excel systems Economics apple"
    at = lambda s: (text.index(s), text.index(s) + len(s))  # noqa: E731
    spans = [Span(*at("economics"), "ORG", 0.5, "encoder:ORG"), Span(*at("rack"), "LOC", 0.5, "encoder:LOC"),
             Span(*at("john"), "PERSON", 0.5, "encoder:PERSON"), Span(*at("leeds"), "LOC", 0.5, "learned:LOC"),
             Span(*at("monzo"), "ORG", 0.5, "encoder:ORG"), Span(*at("excel systems"), "ORG", 0.5, "encoder:ORG"),
             Span(*at("Economics"), "ORG", 0.5, "spacy:ORG"), Span(*at("apple"), "ORG", 0.5, "encoder:ORG"),
             Span(*at("apple"), "ORG", 0.5, "spacy:ORG")]
    kept = {text[s.start:s.end] for s in drop_lone_ordinary_words(text, spans)}
    assert kept == {"john", "leeds", "monzo", "excel systems", "Economics", "apple"}
    # and a rule recognizer's word is not the models' to drop, nor an occupation (a quasi-identifier in TAB)
    assert drop_lone_ordinary_words("in rack 12", [Span(3, 7, "LOC", 0.5, "place:gazetteer")])
    assert drop_lone_ordinary_words("an accountant at", [Span(3, 13, "DEM", 0.5, "tab_ner:DEM")])
    # a town's alternate name in GeoNames is no place for this ("in plain English": session 26's CI), its own
    # name and a country are ("moved to reading", "born in india")
    for said, word, stays in (("in plain English", "plain", False), ("moved to reading", "reading", True),
                              ("born in india", "india", True)):
        at = said.index(word)
        assert bool(drop_lone_ordinary_words(said, [Span(at, at + len(word), "LOC", 0.5, "encoder:LOC")])) == stays

    import os

    os.environ.setdefault("CEP_SECRET_KEY", "ab" * 32)
    from cloud_edge_privacy import Gateway

    prompt = ("Write a SQL query that returns the top 5 customers by total order value from tables customers(id, "
              "name, city) and orders(id, customer_id, amount, created_at).")
    assert Gateway("pseudonym").protect(prompt).text == prompt


def test_quarters_hex_constants_products_and_national_bodies_identify_nobody():
    """Typed as a user (session 21): "his sales targets by 18% in Q2" went out as "in 88 Anna Route", "the budget is
    120k" as "035r", an IT ticket's "Windows update ..., error 0x80070005" as "Scandeluzza update ..., error
    3w44821338", "without losing the VLAN config" with the config as a company, and "the NHS waiting list" as "the
    IFL waiting list".  A quarter with its year, a regional health board and a wallet-length hex string stay
    candidates."""
    import os

    from cloud_edge_privacy.detection.encoder_ner import _public
    from cloud_edge_privacy.detection.pipeline import trim_kept
    from cloud_edge_privacy.detection.public_parties import is_public_institution

    amount = "the budget is 120k."
    assert [s.category for s in trim_kept(amount, [Span(14, 18, "CODE", 0.5, "tab_ner:CODE"),
                                                   Span(14, 18, "PERSON", 0.5, "spacy:PERSON")])] == ["QUANTITY"] * 2

    text = "in Q2 and Q2 2024, error 0x80070005, wallet 0x" + "ab" * 20
    at = lambda s: (text.index(s), text.index(s) + len(s))  # noqa: E731
    kept = trim_kept(text, [Span(*at("Q2"), "LOC", 0.5, "encoder:LOC"), Span(*at("Q2 2024"), "DATETIME", 0.5,
                                                                             "spacy:DATE"),
                            Span(*at("0x80070005"), "CODE", 0.5, "encoder:CODE"),
                            Span(*at("0x" + "ab" * 20), "CODE", 0.5, "encoder:CODE")])
    assert [text[s.start:s.end] for s in kept] == ["Q2 2024", "0x" + "ab" * 20]
    assert _public("NHS", "ORG") and _public("NHS", "LOC") and is_public_institution("the NHS", "ORG") \
        and is_public_institution("HMRC", "ORG")
    assert not _public("NHS Lothian", "ORG") and not is_public_institution("NHS Lothian", "ORG")
    assert not _public("AIDA", "ORG")  # a college's name in capitals is still one

    os.environ.setdefault("CEP_SECRET_KEY", "ab" * 32)
    from cloud_edge_privacy import Gateway

    gw = Gateway("pseudonym")
    for prompt in ("Tell me how to reset a router to factory settings without losing the VLAN config.",
                   "How long is the NHS waiting list for a knee MRI usually?"):
        assert gw.protect(prompt).text == prompt


def test_a_lone_first_name_votes_with_the_recognizers_that_read_the_same_words():
    """"for someone earning $85,000 a year in Texas" went out as "in Josefsson": "Texas" is a first name of the
    lists, and the name lists' priority outweighed five recognizers' place (session 21).  A first name against one
    model's place stays a person."""
    text = "in Texas. Dear Jordan,"
    tx, jo = (3, 8), (15, 21)
    texas = merge_spans([Span(*tx, "PERSON", 0.6, "names:first")] + [
        Span(*tx, "LOC", 0.6, src) for src in ("encoder:LOC", "learned:LOC", "spacy:GPE", "tab_ner:LOC")], text=text)
    jordan = merge_spans([Span(*jo, "PERSON", 0.6, "names:first"), Span(*jo, "LOC", 0.6, "spacy:GPE")], text=text)
    assert [s.category for s in texas + jordan] == ["LOC", "PERSON"]


def test_a_question_word_with_its_auxiliary_verb_names_nobody():
    """"How do I set up two-factor authentication" went out as "Oberviechtach I set up ...": the TAB NER read "How
    do" as a place (session 21).  An article is no such word: "company A" is a name in a finance question."""
    from cloud_edge_privacy.detection.pipeline import tidy_span

    text = "How do I set up 2FA? Shares of company A. Can you help?"
    assert tidy_span(text, Span(0, 6, "LOC", 0.5, "tab_ner:LOC")) is None
    assert tidy_span(text, Span(text.index("Can you"), text.index("Can you") + 7, "ORG", 0.5, "spacy:ORG")) is None
    a = text.index("company A")
    assert tidy_span(text, Span(a, a + 9, "ORG", 0.5, "encoder:ORG")) is not None
    assert tidy_span(text, Span(a + 8, a + 9, "ORG", 0.5, "encoder:ORG")) is not None


def test_a_possessive_s_starts_no_name_and_an_acts_year_is_no_date():
    """"The Industrial Revolution changed Britain's cities" went out with "'s cities" as a company (the encoder
    began a span at the possessive's "s"), and "the Mental Capacity Act 2005" as "Act 2007" (session 21).  A year
    elsewhere is still a date."""
    from cloud_edge_privacy.detection.pipeline import tidy_span

    text = "changed Britain's cities more; James's Place"
    s = text.index("s cities")
    assert tidy_span(text, Span(s, s + 8, "ORG", 0.5, "encoder:ORG")) == Span(s + 2, s + 8, "ORG", 0.5, "encoder:ORG")
    j = text.index("James")
    assert tidy_span(text, Span(j, len(text), "ORG", 0.5, "encoder:ORG")) == Span(j, len(text), "ORG", 0.5,
                                                                                  "encoder:ORG")
    years = [text_[s.start:s.end] for text_ in ["the Mental Capacity Act 2005 and in 2005 she moved"]
             for s in RegexRecognizer().analyze(text_) if s.source == "regex:year"]
    assert years == ["2005"]


def test_a_quote_or_bracket_at_a_spans_edge_without_its_partner_is_trimmed():
    from cloud_edge_privacy.detection.pipeline import tidy_span

    text = "社名は「ユニバーサル・ヘアー」で、(Reuters) と «Le Monde» (Paris) も"
    def span(surface):
        i = text.index(surface)
        return Span(i, i + len(surface), "ORG", 0.5, "learned:ORG")
    def tidied(surface):
        t = tidy_span(text, span(surface))
        return text[t.start:t.end]
    assert tidied("ユニバーサル・ヘアー」") == "ユニバーサル・ヘアー"
    assert tidied("「ユニバーサル・ヘアー") == "ユニバーサル・ヘアー"
    assert tidied("「ユニバーサル・ヘアー」") == "「ユニバーサル・ヘアー」"  # both: the span chose them
    assert tidied("Reuters)") == "Reuters"
    assert tidied("«Le Monde") == "Le Monde"
    assert tidied("(Paris)") == "(Paris)"


def test_a_headers_label_names_nobody_and_a_speaker_still_does():
    """A pasted e-mail's "Sent: Tuesday" went out as "Verdone-Brenna SPA: Tuesday": the TAB NER read the header's
    label as an organisation (session 21).  A speaker's name before a colon is still a name."""
    from cloud_edge_privacy.detection.pipeline import tidy_span

    text = "From: Chloe Martin\nSent: Tuesday\n> Subject: bid\nChloe: thanks\nThe Sent: items"
    at = lambda s, k=0: (text.index(s, k), text.index(s, k) + len(s))  # noqa: E731
    assert tidy_span(text, Span(*at("Sent"), "ORG", 0.5, "tab_ner:ORG")) is None
    assert tidy_span(text, Span(*at("Subject"), "ORG", 0.5, "spacy:ORG")) is None
    assert tidy_span(text, Span(*at("Chloe", 10), "PERSON", 0.5, "spacy:PERSON")) is not None
    assert tidy_span(text, Span(*at("Sent", 30), "ORG", 0.5, "tab_ner:ORG")) is not None  # not at a line's start


def test_a_name_without_letters_names_no_union():
    """A model's "University of Leeds (2016-2019" cut at the organisation left "2016-2019" as an organisation, and
    it named the date union over it: the years went out as letters of a company's surrogate (session 21)."""
    text = "Leeds (2016-2019) and"
    years = (7, 16)
    merged = merge_spans([Span(7, 11, "DATETIME", 0.8, "regex:year"), Span(*years, "DATETIME", 0.7, "spacy:DATE"),
                          Span(*years, "ORG", 0.6, "tab_ner:ORG")], text=text)
    assert [(s.start, s.end, s.category) for s in merged] == [(7, 16, "DATETIME")]


def test_a_long_model_span_is_read_as_its_pieces():
    """The TAB NER read a job advert's "customers and provide adequate reporting (spares delivery, repair Shop
    Processing time, ...)" as one place: every word of it went out masked.  A model's span of five words or more
    is cut at list and sentence punctuation and at runs of everyday lower-case words; each piece loses the
    everyday words at its edges ("see"), and a piece of common lower-case words alone goes ("spares")."""
    from cloud_edge_privacy.detection.pipeline import split_long_spans

    text = ("report to customers and provide adequate reporting (spares delivery, repair Shop Processing time) "
            "via Northwind Traders - Seattle: see https://example.com/jobs/shop-processing-time at 4:00 now")
    at = lambda s: (text.index(s), text.index(s) + len(s))  # noqa: E731
    long = Span(*at("customers and provide adequate reporting (spares delivery, repair Shop Processing time) "
                    "via Northwind Traders - Seattle: see https://example.com/jobs/shop-processing-time at 4:00"),
                "LOC", 0.6, "tab_ner:LOC")
    url = Span(*at("https://example.com/jobs/shop-processing-time"), "CODE", 1.0, "structured:url")
    out = sorted(text[s.start:s.end] for s in split_long_spans(text, [long, url]))
    assert out == sorted(["Shop Processing", "Northwind Traders", "Seattle",
                          "https://example.com/jobs/shop-processing-time at 4:00",
                          "https://example.com/jobs/shop-processing-time"])
    # a model's amount or date over a CV's lines
    cv = "Feb 28, 2027 Intro to Cybersecurity, TryHackme - December 2023 Pre-Security"
    amount = Span(8, len(cv), "QUANTITY", 0.6, "tab_ner:QUANTITY")
    assert [cv[s.start:s.end] for s in split_long_spans(cv, [amount])] == [
        "2027 Intro to Cybersecurity", "TryHackme", "December 2023 Pre-Security"]
    # a name of four words and a rule's span are left as found
    name = "Life Disability and Nursing Care"
    spans = [Span(0, len(name) - 5, "ORG", 0.6, "spacy:ORG"), Span(0, len(name), "ORG", 0.9, "org:pattern")]
    assert split_long_spans(name, spans) == spans


def test_each_piece_of_a_split_span_is_decided_as_a_candidate_of_its_own():
    """A word list the TAB NER read as one company ("Post Office, Season, Internet, Chess, Puppet") was kept as one
    candidate and every word of it went out masked.  After the split, the decider judges each piece with the spans
    inside it; a piece it drops takes those along."""
    from cloud_edge_privacy.detection.pipeline import STEPS
    from cloud_edge_privacy.detection.steps import StepContext

    text = "Format these words: Post Office, Season, Internet, Chess, Puppet, Garfield"
    at = lambda s, cat, src: Span(text.index(s), text.index(s) + len(s), cat, 0.6, src)  # noqa: E731
    long = at("Post Office, Season, Internet, Chess, Puppet, Garfield", "ORG", "tab_ner:ORG")
    inner = at("Chess", "ORG", "spacy:ORG")
    name = at("Garfield", "PERSON", "names:first")

    class Decider:  # keeps a candidate with a name list's span in it, or the long span whole
        def keep(self, text_, spans):
            return list(spans) if any(s.source.startswith("names") or s == long for s in spans) else []

    ctx = StepContext(text=text, priority={}, propagated=frozenset(), decider=Decider())
    out = STEPS["split_long_spans"].run(ctx, [long, inner, name])
    assert sorted(text[s.start:s.end] for s in out) == ["Garfield", "Garfield"]
    # a run of 20+ capitalised words with no break is no name; what was found inside it is decided on its own
    skills = ("Skills: Tenable Nessus NIST Framework Access Controls Network Security Security Operations Security "
              "Principles Business Continuity Disaster Recovery Incident Response Risk Management Splunk Google Suite")
    at2 = lambda s, cat, src: Span(skills.index(s), skills.index(s) + len(s), cat, 0.6, src)  # noqa: E731
    run = at2(skills[8:], "ORG", "tab_ner:ORG")
    nessus, splunk = at2("Tenable Nessus", "ORG", "spacy:ORG"), at2("Splunk", "ORG", "encoder:ORG")

    class KeepsNessus:
        def keep(self, text_, spans):
            return [s for s in spans if skills[s.start:s.end] == "Tenable Nessus"]

    ctx2 = StepContext(text=skills, priority={}, propagated=frozenset(), decider=KeepsNessus())
    assert STEPS["split_long_spans"].run(ctx2, [run, nessus, splunk]) == [nessus]
    # without a decider, the pieces stay (the split alone)
    plain = STEPS["split_long_spans"].run(StepContext(text=text, priority={}, propagated=frozenset()),
                                          [long, inner, name])
    assert {"Season", "Chess", "Post Office"} <= {text[s.start:s.end] for s in plain}


def test_an_everyday_organisation_is_not_copied_onto_its_lower_case_uses():
    """A model read one "data" of an article as a company, and co-reference masked all 33 of them.  A town typed
    in lower case is still copied ("london"), and so is a company that is no everyday word."""
    text = "view data as an asset; big data and data culture. I left london; london is big. I left acme; acme pays."
    at = lambda s, k=0: (text.index(s), text.index(s) + len(s))  # noqa: E731
    spans = [Span(*at("data"), "ORG", 0.6, "encoder:ORG"), Span(*at("london"), "LOC", 0.6, "encoder:LOC"),
             Span(*at("acme"), "ORG", 0.6, "encoder:ORG")]
    out = [text[s.start:s.end] for s in propagate_mentions(text, spans, ordinary_zipf=2.5)]
    assert out.count("data") == 1 and out.count("london") == 2 and out.count("acme") == 2
    # "Big" is also a hamlet of the gazetteer, but an everyday word first: its lower-case uses are the word
    big = "Big Companies Are Embracing Analytics: big data, big wins."
    spans = [Span(0, 3, "ORG", 0.6, "encoder:ORG")]
    assert [big[s.start:s.end] for s in propagate_mentions(big, spans, ordinary_zipf=2.5)] == ["Big"]


def test_a_span_of_pronouns_and_question_words_is_no_name():
    """A model read "I’m" and "Why I" as names, and co-reference masked every "I’m" of a prompt.  "US" and "WHO"
    written in capitals are a country and an organisation, and an initial stays."""
    from cloud_edge_privacy.detection.pipeline import tidy_span

    text = "I’m sure. Why I ask: the US and WHO agree, says D and I'mma go"
    at = lambda s: (text.index(s), text.index(s) + len(s))  # noqa: E731
    gone = [Span(*at("I’m"), "PERSON", 0.6, "spacy:PERSON"), Span(*at("Why I"), "DEM", 0.6, "tab_ner:DEM"),
            Span(*at("I'mma"), "PERSON", 0.6, "spacy:PERSON")]
    assert [tidy_span(text, s) for s in gone] == [None, None, None]
    kept = [Span(*at("US"), "LOC", 0.6, "spacy:GPE"), Span(*at("WHO"), "ORG", 0.6, "spacy:ORG"),
            Span(*at("D"), "PERSON", 0.6, "spacy:PERSON")]
    assert [tidy_span(text, s) for s in kept] == kept


def test_a_model_span_leaves_an_everyday_word_and_an_amount_beside_a_capitalised_name():
    """"sales in Leeds rose 12%" went out as "sales in 46 Bachmannplatz": the encoder read "Leeds rose 12" as one
    place ("rose" is also a name), and the figure was lost with it.  A lower-case name typed alone stays."""
    from cloud_edge_privacy.detection.pipeline import trim_lower_case_edges

    text = "sales in Leeds rose 12% and rose smith called"
    at = lambda s: (text.index(s), text.index(s) + len(s))  # noqa: E731
    spans = [Span(*at("Leeds rose 12"), "LOC", 0.4, "encoder:LOC"), Span(*at("Leeds"), "LOC", 0.8, "spacy:GPE"),
             Span(*at("12%"), "QUANTITY", 0.8, "spacy:PERCENT")]
    assert sorted(text[s.start:s.end] for s in trim_lower_case_edges(text, spans)) == ["12%", "Leeds", "Leeds"]
    lower = [Span(*at("rose smith"), "PERSON", 0.7, "learned:PERSON"), Span(*at("smith"), "PERSON", 0.7, "names:list")]
    assert trim_lower_case_edges(text, lower)[0] == lower[0]
    # a given name typed in lower case before a capitalised surname stays in the name's span
    mixed = "call john Smith today"
    spans = [Span(5, 15, "PERSON", 0.7, "learned:PERSON"), Span(10, 15, "PERSON", 0.8, "names:list")]
    assert trim_lower_case_edges(mixed, spans)[0] == spans[0]


def test_exceptions_sql_functions_units_and_plain_english_identify_nobody():
    """Typed as a user (session 22): "crashes with KeyError: 'user_id'" went out as "crashes with Zielona Gora:
    'user_id'", "SELECT name, COUNT(*)" as "BERNAL(*)", "Explain in plain English" as "in plain Estmarkish",
    "Convert 72 degrees Fahrenheit" as "Convert [DATETIME_7447] Walker and Sons", "PMH: T2DM" as "MATHIASEN:
    T2DM", "ERR! code ECONNRESET" with the code as a company and "the new CRM rollout" with a placeholder.  The
    names in the same prompts are still masked, and "French" as a nationality stays a candidate."""
    import os

    from cloud_edge_privacy.detection.free_text import translation_language
    from cloud_edge_privacy.detection.trade_terms import trade_phrases, trade_word

    text = "got KeyError and NullPointerException, code ECONNRESET; Errol Flynn"
    found = {text[a:b] for a, b in trade_phrases(text)}
    assert {"KeyError", "NullPointerException", "ECONNRESET"} <= found and "Errol" not in " ".join(found)
    assert all(trade_word(w) for w in ("PMH", "MSK", "Fahrenheit", "CRM", "npm", "outpatients"))
    said = "Explain in plain English. She is French."
    at = said.index("English")
    assert translation_language(said, at, at + 7)
    at = said.index("French")
    assert not translation_language(said, at, at + 6)

    os.environ.setdefault("CEP_SECRET_KEY", "ab" * 32)
    from cloud_edge_privacy import Gateway

    gw = Gateway("pseudonym")
    for prompt in ("Our Python script crashes with KeyError: 'user_id' when the API returns an empty list.",
                   "Fix this SQL: SELECT name, COUNT(*) FROM orders GROUP BY customer_id HAVING COUNT(*) > 5",
                   "Explain in plain English what a tracker mortgage is and whether it makes sense if rates fall.",
                   "Convert 72 degrees Fahrenheit to Celsius and explain the formula.",
                   "Summarise: Patient reports chest pain radiating to left arm since 6am, BP 150/95, HR 102, "
                   "troponin pending. PMH: T2DM, hypertension. On metformin and ramipril."):
        assert gw.protect(prompt).text == prompt
    out = gw.protect("Ask Mrs Okafor why the npm install fails with ECONNRESET in her CRM export.").text
    assert "Okafor" not in out and "ECONNRESET" in out and "CRM" in out and "npm" in out


def test_a_class_whose_member_is_read_and_an_id_after_a_cue_are_no_names():
    """Typed as a user (session 22): "null check in UserService.getProfile()" went out as "in Beccaria SPA()", and
    "My employee ID is EMP-20931" with "ID" as a person (after the cue "my employee").  A company in camel case
    ("DoorDash.com") and a name after the same cue stay candidates."""
    from cloud_edge_privacy.detection.code_context import code_identifier
    from cloud_edge_privacy.detection.names import NameRecognizer

    text = "fixed UserService.getProfile() and DoorDash.com, then DoorDash."
    at = lambda s: (text.index(s), text.index(s) + len(s))  # noqa: E731
    assert code_identifier(text, *at("UserService"))
    assert code_identifier(text, *at("UserService.getProfile"))
    assert not code_identifier(text, *at("DoorDash"))
    names = NameRecognizer()
    said = "My employee ID is EMP-20931."
    assert not [s for s in names.analyze(said) if said[s.start:s.end] == "ID"]
    said = "my employee Priyanka starts Monday"
    assert [said[s.start:s.end] for s in names.analyze(said)] == ["Priyanka"]


def test_a_relation_a_label_and_a_public_body_beside_what_they_name_are_not_masked():
    """Typed as a user (session 22): "my friend chloe okonkwo" went out as "my karen odette vincent" ("friend" is in
    a name list, and started the run of lower-case names), "Card ending 8812" as "[DATETIME_5212] 4209" and "NHS no.
    485 777 3456" as "[QUANTITY_8755] no. 276 ...".  The name, the card's digits and the NHS number are still
    masked; a name before a number stays a candidate."""
    import os

    from cloud_edge_privacy.detection.names import NameRecognizer
    from cloud_edge_privacy.detection.pipeline import clip_at_identifiers

    said = "a message for my friend chloe okonkwo, and for my boss"
    assert [said[s.start:s.end] for s in NameRecognizer().analyze(said)] == ["chloe okonkwo"]
    text = "Card ending 8812 was charged. Call Harriet Maddox 07911 123456."
    clipped = clip_at_identifiers(text, _spans_of(text, ("Card ending 8812", "DATETIME", "spacy:DATE"),
                                                  ("8812", "CODE", "structured:id_number"),
                                                  ("Harriet Maddox 07911 123456", "PERSON", "spacy:PERSON"),
                                                  ("07911 123456", "PHONE", "structured:phone")))
    assert sorted(text[s.start:s.end] for s in clipped) == ["07911 123456", "8812", "Harriet Maddox"]

    os.environ.setdefault("CEP_SECRET_KEY", "ab" * 32)
    from cloud_edge_privacy import Gateway

    out = Gateway("pseudonym").protect("Patient: Harriet Maddox, NHS no. 485 777 3456, MRN 00481723. Summarise.").text
    assert out.startswith("Patient: ") and "NHS no. " in out and "Maddox" not in out and "485 777 3456" not in out
    out = Gateway("pseudonym").protect("can u write a bday message for my friend chloe okonkwo, she turns 30").text
    assert "my friend " in out and "okonkwo" not in out


def test_an_identifiers_type_read_alone_is_no_name():
    """"to IBAN PT50 ..." went out as "to ROOSENBOOM PT69 ...": the encoder read "IBAN" alone as a place (session
    22).  The IBAN itself stays masked, and so does a name."""
    from cloud_edge_privacy.detection.pipeline import trim_kept

    text = "pay IBAN PT50 0002 0123 1234 5678 9015 4 for Ibanez, NHS"
    kept = trim_kept(text, _spans_of(text, ("IBAN", "LOC", "encoder:LOC"),
                                     ("PT50 0002 0123 1234 5678 9015 4", "CODE", "structured:iban"),
                                     ("Ibanez", "PERSON", "spacy:PERSON"), ("NHS", "QUANTITY", "tab_ner:QUANTITY")))
    assert [text[s.start:s.end] for s in kept] == ["PT50 0002 0123 1234 5678 9015 4", "Ibanez"]


def _spans_of(text, *found):
    """A span for each (surface, category, source), at the surface's first place in ``text``."""
    return [Span(text.index(surface), text.index(surface) + len(surface), category, 0.8, source)
            for surface, category, source in found]


def test_a_less_common_verb_at_a_models_edge_is_left_out():
    """"who is autistic and attends Hillside Academy" went out with "attends" inside the school's surrogate (session
    22): a word at the edge that only the model read, in no name list and at least ``ORDINARY_ZIPF`` common, goes
    like the everyday ones; a rare word typed before a name stays ("demone Johnson")."""
    from cloud_edge_privacy.detection.pipeline import trim_lower_case_edges

    text = "and attends Hillside Academy; ask demone Johnson"
    found = trim_lower_case_edges(text, _spans_of(text, ("attends Hillside Academy", "ORG", "encoder:ORG"),
                                                  ("Hillside Academy", "ORG", "org:pattern"),
                                                  ("demone Johnson", "PERSON", "encoder:PERSON"),
                                                  ("Johnson", "PERSON", "names:first")))
    assert sorted(text[s.start:s.end] for s in found) == ["Hillside Academy", "Hillside Academy", "Johnson",
                                                          "demone Johnson"]


def test_a_date_of_birth_a_time_of_day_a_query_clause_and_obs_are_what_they_are():
    """Typed as a user (session 23): "Derek Holloway (DOB 02/05/1948" was one organisation to the TAB NER, and the
    date went out as "OLYMPIA UITZENDBUREAU"; "by 8:15am" went out as an address ("57 vigosteeg"), "GROUP BY" and
    "DESC" of a query as people, "Obs stable" as a nationality and "obs due 4-hourly" with a placeholder.  The
    name, the date and the hospital number are still masked; the date and the time get surrogates of their kind."""
    import os

    from cloud_edge_privacy.detection.code_context import sql_phrase
    from cloud_edge_privacy.detection.pipeline import clip_at_identifiers, times_of_day

    text = "patient Derek Holloway (DOB 02/05/1948, hospital no. RX4471923) fell. [25/06/2023] Time 11:27"
    clipped = clip_at_identifiers(text, _spans_of(text, ("DOB 02/05/1948", "ORG", "tab_ner:ORG"),
                                                  ("02/05/1948", "DATETIME", "regex:date_numeric"),
                                                  ("25/06/2023] Time", "MISC", "tab_ner:MISC"),
                                                  ("25/06/2023", "DATETIME", "regex:date_numeric"),
                                                  ("02/05/1948, hospital", "DATETIME", "spacy:DATE")))
    got = sorted((text[s.start:s.end], s.category) for s in clipped)
    # the label and the everyday word go, the dates stay, and a model's own date keeps its words
    assert got == [("02/05/1948", "DATETIME"), ("02/05/1948, hospital", "DATETIME"), ("25/06/2023", "DATETIME")]
    said = "be there by 8:15am on Monday, or 10.30 a.m. at the latest"
    kept = times_of_day(said, _spans_of(said, ("8:15am on", "LOC", "learned:LOC"), ("10.30 a.m.", "ORG", "tab_ner:ORG"),
                                        ("Monday, or 10", "LOC", "tab_ner:LOC")))
    assert sorted((said[s.start:s.end], s.category) for s in kept) == [
        ("10.30 a.m.", "DATETIME"), ("8:15am", "DATETIME"), ("Monday, or 10", "LOC")]
    assert sql_phrase("GROUP BY") and sql_phrase("DESC") and not sql_phrase("AND") and not sql_phrase("Group By")

    os.environ.setdefault("CEP_SECRET_KEY", "ab" * 32)
    from cloud_edge_privacy import Gateway

    gw = Gateway("pseudonym")
    for prompt in ("SELECT name FROM users GROUP BY name ORDER BY name DESC",
                   "Obs stable overnight, obs due 4-hourly."):
        assert gw.protect(prompt).text == prompt
    prompt = ("Summarise: At 14:20 on the ward, patient Derek Holloway (DOB 02/05/1948, hospital no. RX4471923) "
              "had an unwitnessed fall. Obs stable. Please reply by 8:15am.")
    out = gw.protect(prompt).text
    assert not any(v in out for v in ("Derek", "Holloway", "02/05/1948", "RX4471923", "8:15am"))
    assert re.search(r"\(DOB \d{2}/\d{2}/\d{4}, hospital no\. [A-Z]{2}\d{7}\)", out), out
    assert re.search(r"Obs stable\. Please reply by \d{1,2}:\d{2}[ap]m\.$", out), out


def test_a_councillor_a_planning_reference_and_a_school_keep_their_kind():
    """Typed as a user (session 23): "Cllr J. Morgan" went out as "Christina E. Woods", the planning reference
    "23/01187/FUL for" as "KRISTA gill" (a model's code with the "for" after it, voted a person by a piece, "FUL")
    and "St Mary's Primary School" as "Rosalie Louise's Sarah Kallert" (a person to the TAB NER)."""
    import os

    from cloud_edge_privacy.detection.pipeline import merge_spans, trim_kept

    text = "application 23/01187/FUL for an extension; St Mary's Primary School; ref HL-20931."
    kept = trim_kept(text, _spans_of(text, ("23/01187/FUL for", "QUANTITY", "tab_ner:QUANTITY")))
    assert [text[s.start:s.end] for s in kept] == ["23/01187/FUL"]
    merged = merge_spans(_spans_of(text, ("23/01187/FUL", "PERSON", "encoder:PERSON"),
                                   ("St Mary's Primary School", "PERSON", "tab_ner:PERSON"),
                                   ("HL-20931", "LOC", "encoder:LOC")), text=text)
    assert sorted((text[s.start:s.end], s.category) for s in merged) == [
        ("23/01187/FUL", "CODE"), ("HL-20931", "CODE"), ("St Mary's Primary School", "ORG")]
    assert [s.category for s in merge_spans(_spans_of(text, ("extension", "LOC", "encoder:LOC")), text=text)] \
        == ["LOC"]

    os.environ.setdefault("CEP_SECRET_KEY", "ab" * 32)
    from cloud_edge_privacy import Gateway

    out = Gateway("pseudonym").protect(
        "Present: Cllr J. Morgan (Chair). Item 4: planning application 23/01187/FUL for a rear extension was "
        "approved.").text
    assert re.match(r"Present: Cllr [A-Z]\. \S+ \(Chair\)\. Item 4: planning application \d\d/\d{5}/[A-Z]{3} for a "
                    r"rear extension was approved\.$", out), out
    assert "Morgan" not in out and "01187" not in out


def test_a_cover_letter_an_email_and_a_cv_line_keep_their_words():
    """Typed as a user (session 23): "Dear Hiring Manager" went out as "Dear Charlotte Williams", "the Data Analyst
    role" with "Data" as a company, "MSc in Data Science" with the subject as a company, "the University of
    Edinburgh and I'm joining Skyscanner" as one organisation, "the Teams link" with "link" as one, a pasted
    message's "Subject:" as a nationality and its closing quote inside a surrogate, "UAN 3434-..." with its label
    as a name, "2018-2021 Customer Service Advisor, Tesco Extra, Leeds - handled" with the job as a company, the
    store as an amount's placeholder and "- handled" as a company.  Names, places, companies and numbers are still
    masked; a lower-case product ("facebook ads manager", annotated once) is no job."""
    import os

    from cloud_edge_privacy.detection.pipeline import merge_spans, split_long_spans, tidy_span, trim_kept

    text = ('Dear Hiring Manager, the Data Analyst role; MSc in Data Science; the facebook ads manager; '
            '"Hi, I\'m Ben" - handled. Dear Parents and Carers. UAN 1234; BSc Nursing')
    at = lambda s, cat="ORG", src="tab_ner:ORG": _spans_of(text, (s, cat, src))  # noqa: E731
    for surface in ("Manager", "Data", "Data Science", "Carers", "UAN", "BSc Nursing"):
        assert trim_kept(text, at(surface)) == [], surface
    assert [text[s.start:s.end] for s in trim_kept(text, at("facebook ads manager"))] == ["facebook ads manager"]
    titled = "ask Teacher Yolanda"  # an occupation as a name's title stays with the name
    assert len(trim_kept(titled, _spans_of(titled, ("Teacher", "PERSON", "spacy:PERSON")))) == 1
    assert text[slice(*_extent(tidy_span(text, at('Ben"', "PERSON", "spacy:PERSON")[0])))] == "Ben"
    assert text[slice(*_extent(tidy_span(text, at("- handled")[0])))] == "handled"
    said = "the University of Edinburgh and I'm joining Skyscanner as a graduate engineer in September"
    pieces = split_long_spans(said, _spans_of(said, (said[4:], "ORG", "tab_ner:ORG")))
    assert [said[s.start:s.end] for s in pieces] == ["University of Edinburgh", "Skyscanner", "September"]
    store = "Advisor, Tesco Extra, Leeds"
    merged = merge_spans(_spans_of(store, ("Tesco Extra", "QUANTITY", "tab_ner:QUANTITY"),
                                   ("Tesco Extra", "ORG", "encoder:ORG")), text=store)
    assert [s.category for s in merged] == ["ORG"]

    os.environ.setdefault("CEP_SECRET_KEY", "ab" * 32)
    from cloud_edge_privacy import Gateway

    gw = Gateway("pseudonym")
    out = gw.protect('Reply: "From: james.whitaker@fastmail.com Subject: Overdue payment. I\'ll send the Teams link. '
                     'Thanks, James"').text
    assert out.startswith('Reply: "From: ') and " Subject: Overdue payment. I'll send the Teams link. Thanks, " in out
    assert out.endswith('"') and "james" not in out.lower()
    out = gw.protect("Dear Hiring Manager, I am applying for the Data Analyst role at Brightwater Energy.").text
    assert out.startswith("Dear Hiring Manager, I am applying for the Data Analyst role at ") and "Brightwater" not in out


def _extent(span):
    return span.start, span.end


def test_a_ward_handover_keeps_its_clinical_words_and_bed_numbers_apart_from_names():
    """Typed as a user (session 23): "bed 12 - Mr Ahmed" went out as "bed Nienke - Mr Poole" (one amount to the TAB
    NER), "IV co-amoxiclav" as "IV co-sjostrand", "on IV tazocin" as "on US schweitzer", "lap chole" as "lap
    nilsson", "G2P1" as "L9S1", "EF 35%" as an organisation and "repeat U&Es" as "repeat Borman Groep".  The names
    and the record number are still masked."""
    import os

    from cloud_edge_privacy.detection.clinical import measurements
    from cloud_edge_privacy.detection.pipeline import split_at_spaced_dash
    from cloud_edge_privacy.detection.trade_terms import trade_word

    assert all(trade_word(w) for w in ("AF", "EF", "co-amoxiclav", "tazocin", "IV", "chole", "G2P1", "g3p2+1"))
    said = "repeat U&Es in 1 week"
    assert [said[a:b] for a, b in measurements(said)] == ["U&Es"]
    text = "bed 12 - Mr Ahmed; held 10 - 12 May; Smith - Jones"
    pieces = split_at_spaced_dash(text, _spans_of(text, ("12 - Mr Ahmed", "QUANTITY", "tab_ner:QUANTITY"),
                                                  ("10 - 12 May", "DATETIME", "tab_ner:DATETIME"),
                                                  ("Smith - Jones", "ORG", "tab_ner:ORG")))
    assert sorted(text[s.start:s.end] for s in pieces) == ["10 - 12 May", "12", "Mr Ahmed", "Smith - Jones"]

    os.environ.setdefault("CEP_SECRET_KEY", "ab" * 32)
    from cloud_edge_privacy import Gateway

    out = Gateway("pseudonym").protect("Handover: bed 12 - Mr Ahmed, post-op day 2 lap chole, on IV tazocin and "
                                       "co-amoxiclav. Known AF, EF 35%, G2P1. Repeat U&Es. MRN 7730142.").text
    assert "Ahmed" not in out and "7730142" not in out and re.search(r"bed \d+ - Mr \S+, post-op", out), out
    assert "lap chole, on IV tazocin and co-amoxiclav." in out and "EF 35%, G2P1. Repeat U&Es." in out, out
