"""Each recognizer finds what its docstring says it covers, and leaves common words alone."""
import pytest

from cloud_edge_privacy.detection import build_detector, is_secret
from cloud_edge_privacy.detection.free_text import (AddressRecognizer, AgePlaceRecognizer, CourtTextRecognizer,
                                                    DateAndPlaceRecognizer, OrganisationRecognizer)
from cloud_edge_privacy.detection.names import NameRecognizer
from cloud_edge_privacy.detection.pipeline import merge_spans, propagate_mentions
from cloud_edge_privacy.detection.public_parties import is_public_institution
from cloud_edge_privacy.detection.structured import StructuredRecognizer, looks_random
from cloud_edge_privacy.spans import Span


def _found(recognizer, text):
    return {text[s.start:s.end]: s for s in merge_spans(recognizer.analyze(text))}


@pytest.mark.parametrize("text, surface, source", [
    ("call me on 212.555.0187 tonight", "212.555.0187", "structured:phone"),
    ("mobile 07700 900123 (UK)", "07700 900123", "structured:phone"),
    ("ring +44 20 7946 0958 or", "+44 20 7946 0958", "structured:phone"),
    ("Telefon: (0306) 999 0141", "(0306) 999 0141", "structured:phone"),
    ("mon numéro est le 06 12 45 78 90.", "06 12 45 78 90", "structured:phone"),
    ("my ssn is 219-09-9999 and", "219-09-9999", "structured:ssn"),
    ("SSN 078-05-1120 on file", "078-05-1120", "structured:ssn"),
    ("NINO AB 12 34 56 C please", "AB 12 34 56 C", "structured:nino"),
    ("IBAN DE89 3704 0044 0532 0130 00 for", "DE89 3704 0044 0532 0130 00", "structured:iban"),
    ("card 4111 1111 1111 1111 was", "4111 1111 1111 1111", "structured:card"),
    ("passport U12345678 expires", "U12345678", "structured:code"),
    ("身份证号11010519491231002X，", "11010519491231002X", "structured:code"),
    ("car reg LK19 XWD got a fine", "LK19 XWD", "structured:plate"),
    ("write to jane.doe@example.org today", "jane.doe@example.org", "structured:email"),
    ("login ok ip=8.147.61.227 at", "8.147.61.227", "structured:ip"),
    ("ping @jsmith_dev about it", "@jsmith_dev", "structured:handle"),
    ("LinkedIn: /lumentechnologies, Instagram: @lumentech", "lumentechnologies", "structured:handle"),
    ("find us on YouTube : /acme-kitchens.", "acme-kitchens", "structured:handle"),
    ("Username mjacquet, account", "mjacquet", "structured:username"),
    ("open C:\\Users\\lena.vogt\\Desktop\\a.xlsx", "lena.vogt", "structured:path_user"),
    ("GET /api/v1/users/mkowalski88/invoices", "mkowalski88", "structured:path_user"),
    ("see https://www.linkedin.com/in/ppereira81 now", "ppereira81", "structured:url_user"),
    ("visit janedoe-photo.com for pictures", "janedoe-photo.com", "structured:domain"),
])
def test_structured_finds_identifiers(text, surface, source):
    found = _found(StructuredRecognizer(), text)
    assert surface in found, found
    assert found[surface].source == source and found[surface].category == "CODE"


@pytest.mark.parametrize("text", [
    "Software engineer at ExxonMobil, 2019-2023. B.Tech from VNIT.",   # "Mobil" in a firm's name is no phone cue
    "I was abroad during 1998/2004 and in 2011 - 2015 too.",            # nor "ring" in "during"; periods of years
    "the recall 2125 5501 87 and the context 1234 5678",                 # "call", "text" inside words
    "I studied economics at the University of Leeds (2016-2019) and",   # a period in brackets (session 21)
])
def test_year_ranges_and_cues_inside_words_are_no_phones(text):
    """A CV's "ExxonMobil, 2019-2023" went out as a pseudonymized phone number (issue 28, session 20)."""
    assert not [s for s in StructuredRecognizer().analyze(text) if s.source == "structured:phone"]


def test_phone_cues_still_end_words_outside_english():
    for text, number in (("Handynummer: 0171 2345678", "0171 2345678"), ("我的电话 13812345678", "13812345678"),
                         ("text 1234 5678", "1234 5678"), ("phone 2019-2024 ext", None)):
        found = _found(StructuredRecognizer(), text)
        assert (number in found) if number else not any(s.source == "structured:phone" for s in found.values())


def test_literature_and_public_health_hosts_identify_nobody():
    """A clinician's prompt of PubMed, Nature and NIH links went out with every host masked (issue 28, session 18):
    they name articles and public bodies, not a person.  A profile path on such a host is still masked, and so is
    a local body under a national domain (an NHS trust names its town)."""
    text = ("see https://pubmed.ncbi.nlm.nih.gov/24621041/ and Spinal Cord (nature.com); guidance on cdc.gov; "
            "https://www.researchgate.net/profile/Lena-Vogt-2 wrote it; my site lenavogt-research.net; "
            "my trust's https://leedsth.nhs.uk/renal")
    found = _found(StructuredRecognizer(), text)
    assert sorted(found) == ["Lena-Vogt-2", "leedsth.nhs.uk", "lenavogt-research.net"], found


@pytest.mark.parametrize("text, surface", [
    ("export OPENAI_API_KEY=sk-proj-Ab3dEfGh1jKlMn0pQrStUvWxYz12", "sk-proj-Ab3dEfGh1jKlMn0pQrStUvWxYz12"),
    ("aws_access_key_id = AKIAQX3ZP7M2LBN5R8TW", "AKIAQX3ZP7M2LBN5R8TW"),
    ("aws_secret_access_key = w9Jx2Lq7Rz5Vn0Pk3Ty8Mb6Hc4Gd1Fs2Ea7Ub9Xo", "w9Jx2Lq7Rz5Vn0Pk3Ty8Mb6Hc4Gd1Fs2Ea7Ub9Xo"),
    ("token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ok",
     "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("The password for the shared drive is Bluebird!2291 and", "Bluebird!2291"),
    ("my PIN is 4471.", "4471"),
    ("refresh_token=098f5bceabf64d8b63c2a6ffd5a046324f9c3c00 x", "098f5bceabf64d8b63c2a6ffd5a046324f9c3c00"),
    ("curl -H 'Authorization: Bearer ghp_R7tY2uI9oP3aS6dF1gH8jK4lZ0xC5vB2nM7q'", "ghp_R7tY2uI9oP3aS6dF1gH8jK4lZ0xC5vB2nM7q"),
    ("ftp://admin:hunter22@files.acme-corp.io/uploads", "ftp://admin:hunter22@files.acme-corp.io/uploads"),
    ("slack xoxb-12345678901-123456789012-abcdefghijklmnopqrstuvwx ok",
     "xoxb-12345678901-123456789012-abcdefghijklmnopqrstuvwx"),
])
def test_secrets_are_found_and_marked_secret(text, surface):
    found = _found(StructuredRecognizer(), text)
    assert surface in found, found
    assert is_secret(found[surface]) and found[surface].category == "CODE"


def test_structured_leaves_plain_text_dates_and_case_numbers_alone():
    text = ("The applicant, born in 1950, lodged application no. 36110/97 on 12 March 2004 at 10:14:07; "
            "the pinned dependencies and the password reset page are fine; see main.py and github.com; "
            "sizes medium/large; the threads: /usr is a path.")
    assert StructuredRecognizer().analyze(text) == []
    assert not looks_random("ThisIsAVeryLongCamelCaseIdentifierName") and looks_random("9f8e7d6c5b4a39281706f5e4d3c2b1a0")


def test_an_invalid_iban_is_not_reported_and_an_invalid_card_is_only_a_long_number():
    spans = StructuredRecognizer().analyze("IBAN DE89 3704 0044 0532 0130 01 and card 4111 1111 1111 1112")
    assert [s.source for s in spans] == ["structured:number"]  # 16 grouped digits are still masked


@pytest.mark.parametrize("text, surface", [
    ("my wife anna nowak and i", "anna nowak"),
    ("FROM: ADRIANNA BIELAS SENT: Monday", "ADRIANNA BIELAS"),
    ("the keeper is Yasmin van den Hoek.", "Yasmin van den Hoek"),
    ("Member: Eric Brown, SSN", "Eric Brown"),
    ("saying that Birgitta will miss class", "Birgitta"),
    ("hi mrs okonkwo, the boiler", "okonkwo"),
    ("thanks, tunde'", "tunde"),
    ("Меня зовут Остромир Власова, мой", "Остромир Власова"),
    ("给余雷 and 王慧 a note", "余雷"),
    ("我叫欧阳靖雯，身份证", "欧阳靖雯"),
])
def test_names_in_any_case_and_script(text, surface):
    assert surface in _found(NameRecognizer(), text)


def test_common_words_and_places_are_not_names():
    text = "Will you help me? I may go to London in June. The Court of Justice, the Council and Mark Twain's book."
    found = _found(NameRecognizer(), text)
    assert not {"Will", "London", "June", "Council", "Court"} & set(found), found


@pytest.mark.parametrize("text, surface", [
    ("at flat 3, 17 Larkspur Rise, Leeds LS6 2QT is", "flat 3, 17 Larkspur Rise, Leeds LS6 2QT"),
    ("sent to 4417 W Olive Ave, Phoenix, AZ 85019. what", "4417 W Olive Ave, Phoenix, AZ 85019"),
    ("wohne in der Klosterstraße 12, 04109 Leipzig. Wie", "Klosterstraße 12, 04109 Leipzig"),
    ("j'habite 90, rue Allard, 62300 Berger-sur-Bousquet et", "90, rue Allard, 62300 Berger-sur-Bousquet"),
    ("office at 221B Baker Street, London.", "221B Baker Street, London"),
])
def test_an_address_is_one_span(text, surface):
    spans = AddressRecognizer().analyze(text)
    assert any(text[s.start:s.end] == surface and s.category == "LOC" for s in spans), \
        [text[s.start:s.end] for s in spans]


def test_a_han_address_is_covered():
    text = "请翻译：我住在上海市徐汇区漕溪北路88号。"
    assert any(s.start <= text.index("上海") and text.index("号") < s.end for s in AddressRecognizer().analyze(text))


def test_an_address_wins_over_a_quantity_inside_it():
    text = "Send it to 221B Baker Street, London please"
    merged = merge_spans(AddressRecognizer().analyze(text) + [Span(11, 14, "QUANTITY", 0.9, "regex:amount")])
    assert [(text[s.start:s.end], s.category) for s in merged] == [("221B Baker Street, London", "LOC")]


@pytest.mark.parametrize("text, surface", [
    ("I work at Bourgeois SARL in", "Bourgeois SARL"),
    ("invoice for Thompson, Dunn and Warner is", "Thompson, Dunn and Warner"),
    ("studied at Université de Pereiranec.", "Université de Pereiranec"),
    ("Zuletzt bei Kreusel in Fulda", "Kreusel"),
    ("from 兰金电子传媒有限公司 today", "兰金电子传媒有限公司"),
])
def test_organisations(text, surface):
    assert surface in _found(OrganisationRecognizer(), text)


def test_an_institution_word_without_a_name_is_no_organisation():
    """"Software engineer" went out as "Pepe Group engineer" (issue 28, session 20)."""
    text = "Software engineer; Hospital staff; Bank holidays; Acme Software and the University of Tromsø."
    assert sorted(_found(OrganisationRecognizer(), text)) == ["Acme Software", "University of Tromsø"]


def test_ages_places_and_dates():
    text = "My son Kwame (7) is 7 and she turns 50 on 3 June; I live in Frome. Ich bin 34 Jahre alt."
    found = {text[s.start:s.end]: s.category for s in AgePlaceRecognizer().analyze(text)
             + DateAndPlaceRecognizer().analyze(text)}
    assert found.get("50") == "DEM" and found.get("34") == "DEM" and found.get("Frome") == "LOC"
    assert found.get("3 June") == "DATETIME"
    assert not AgePlaceRecognizer().analyze("under Article 5 (1) of the Convention")


def test_court_text_skips_the_respondent_state():
    text = ("The case originated in an application (no. 1/06) against the Republic of Turkey lodged with the Court "
            "by a Swedish national, Mr X, who was aged sixty three. He moved to Turkey and later to Sweden, and was "
            "represented by Royds Rdw, solicitors in London, before the Employment Appeal Tribunal.")
    found = {text[s.start:s.end]: s for s in CourtTextRecognizer().analyze(text)}
    assert "Sweden" in found and "Turkey" not in found
    assert found["Swedish national"].category == "DEM" and found["sixty three"].category == "DEM"
    assert found["Royds Rdw"].category == "ORG" and "Employment Appeal Tribunal" in found


def test_short_titled_surnames_and_untitled_full_names_propagate():
    text = "Mr Li arrived. Later Li left, and li is a word. Ms Melahat Filiz spoke; Melahat Filiz agreed."
    ms = text.index("Ms Melahat")
    spans = propagate_mentions(text, [Span(0, 5, "PERSON", 0.9, "regex:titled_name"),
                                      Span(ms, ms + len("Ms Melahat Filiz"), "PERSON", 0.9, "regex:titled_name")])
    surfaces = [text[s.start:s.end] for s in spans]
    assert "Li" in surfaces and "li" not in surfaces  # the short surname only in its capitalised form
    assert "Melahat Filiz" in surfaces


def test_a_person_of_ordinary_words_is_not_copied_onto_its_lower_case_uses():
    text = "Seller notes: every seller pays. Smith wrote; smith agreed. Seller again."
    spans = [Span(0, 6, "PERSON", 0.6, "spacy:PERSON"), Span(33, 38, "PERSON", 0.9, "names:list")]
    plain = [text[s.start:s.end] for s in propagate_mentions(text, spans)]
    assert plain.count("seller") == 1 and plain.count("smith") == 1         # default: any case
    guarded = [(s.start, text[s.start:s.end]) for s in propagate_mentions(text, spans, ordinary_zipf=2.5)]
    assert (text.index("seller"), "seller") not in guarded                   # an everyday word, in no name list
    assert (text.rindex("Seller"), "Seller") in guarded                      # the capitalised use still is
    assert (text.index("smith"), "smith") in guarded                         # a surname is copied in any case
    found_lower = [text[s.start:s.end] for s in propagate_mentions(
        text, spans + [Span(text.index("seller"), text.index("seller") + 6, "PERSON", 0.6, "names:list")],
        ordinary_zipf=2.5)]
    assert "seller" in found_lower                                           # found in lower case: copied so


def test_a_name_that_is_an_everyday_word_or_stop_word_is_copied_only_as_written():
    """"Mark" (an everyday word that is also a name) and "All" were copied onto "mark the box" and "all", which
    the egress guard's rule 1 never looks for (it reads such a name only as written); "Mark Twain" still is."""
    text = "Mark wrote. Please mark the box; All said all. Mark Twain and mark twain."
    spans = [Span(0, 4, "PERSON", 0.8, "encoder:PERSON"), Span(text.index("All"), text.index("All") + 3, "PERSON", 0.5,
                                                                "spacy:PERSON"),
             Span(text.index("Mark Twain"), text.index("Mark Twain") + 10, "PERSON", 0.9, "names:list")]
    out = [(s.start, text[s.start:s.end]) for s in propagate_mentions(text, spans, ordinary_zipf=2.5)]
    assert (text.index("mark the"), "mark") not in out and (text.index("all."), "all") not in out
    assert (text.index("mark twain"), "mark twain") in out                  # a name beside it: any case
    text = "Meet at Park today; park the car. Paris, then paris."
    spans = [Span(8, 12, "LOC", 0.6, "tab_ner:LOC"), Span(text.index("Paris"), text.index("Paris") + 5, "LOC", 0.9,
                                                          "spacy:GPE")]
    out = [text[s.start:s.end] for s in propagate_mentions(text, spans, ordinary_zipf=2.5)]
    assert "park" not in out and "paris" in out                            # one everyday word; a real place
    # everyday words that are no town or country: a model's "Border" was copied onto every "border" (17 words of
    # one prompt); "Reading" is a town of the gazetteer, so "reading" still is
    text = "Shipping to Border and Reading: the border fee, reading list."
    spans = [Span(*(lambda a: (a, a + 6))(text.index("Border")), "LOC", 0.6, "tab_ner:LOC"),
             Span(*(lambda a: (a, a + 7))(text.index("Reading")), "LOC", 0.9, "place:gazetteer")]
    out = [text[s.start:s.end] for s in propagate_mentions(text, spans, ordinary_zipf=2.5)]
    assert "border" not in out and "reading" in out
    from cloud_edge_privacy.core.egress import _needles

    from types import SimpleNamespace

    prot = SimpleNamespace(joined=text, spans=spans)
    exact = {value: case for _, _, value, case in _needles(prot, set())}       # the guard reads them the same way
    assert any(case for pat, case in exact.items() if "Border" in pat)
    assert not any(case for pat, case in exact.items() if "Reading" in pat)
    from cloud_edge_privacy import Gateway

    p = Gateway("pseudonym").protect("Mark wrote to me. Please mark the box and send it back.")
    assert "mark the box" in p.text and not p.repairs                       # the guard agrees: nothing to repair


def test_a_name_the_text_writes_mostly_in_lower_case_is_copied_only_as_written():
    """A names recognizer read "Cap" in a headline ("Small-Cap Value Investing") as a name; co-reference then
    masked all 44 "cap" of the article ("small-cap value investors" went out as "small-henschel ...").  A name
    written more often capitalised keeps its lower-case copies ("Oscar ... Classic failure oscar.")."""
    from types import SimpleNamespace

    from cloud_edge_privacy.core.egress import _needles
    from cloud_edge_privacy.lexicon import mostly_lower_case

    text = "Small-Cap Value. Many small-cap funds; small-cap risk, a cap on fees. Oscar failed. Oscar, oscar."
    assert mostly_lower_case("Cap", text) and not mostly_lower_case("Oscar", text)
    spans = [Span(text.index("Cap"), text.index("Cap") + 3, "PERSON", 0.6, "names:pair"),
             Span(text.index("Oscar"), text.index("Oscar") + 5, "PERSON", 0.8, "names:first")]
    out = [text[s.start:s.end] for s in propagate_mentions(text, spans, ordinary_zipf=3.5)]
    assert "cap" not in out and "oscar" in out
    exact = {value: case for _, _, value, case in _needles(SimpleNamespace(joined=text, spans=spans), set())}
    assert all(case for pat, case in exact.items() if "Cap" in pat)              # the guard reads them alike
    assert not any(case for pat, case in exact.items() if "Oscar" in pat)
    # a model's lower-case PERSON of everyday words in no name list ("mum"), which the guard never looks for
    text = "my mum said hi; mum and 100mi again, 100mi"
    spans = [Span(3, 6, "PERSON", 0.6, "encoder:PERSON"), Span(24, 29, "PERSON", 0.5, "encoder:PERSON")]
    out = [(s.start, text[s.start:s.end]) for s in propagate_mentions(text, spans, ordinary_zipf=3.5)]
    assert (text.index("mum and"), "mum") not in out and (text.rindex("100mi"), "100mi") in out
    assert not _needles(SimpleNamespace(joined=text, spans=spans[:1]), set())


def test_an_organisation_of_everyday_words_is_not_copied_onto_its_lower_case_uses():
    text = "A Cross-Border seller. Cross-Border again; cross-border trade. Hudlvex and hudlvex."
    spans = [Span(2, 14, "ORG", 0.8, "spacy:ORG"), Span(text.index("Hudlvex"), text.index("Hudlvex") + 7, "ORG", 0.8,
                                                       "spacy:ORG")]
    out = [text[s.start:s.end] for s in propagate_mentions(text, spans, ordinary_zipf=2.5)]
    assert out.count("Cross-Border") == 2 and "cross-border" not in out    # everyday words in lower case
    assert "hudlvex" in out                                                 # a rare word is copied in any case
    text = "Paris in May; we met in paris."
    out = [text[s.start:s.end] for s in propagate_mentions(text, [Span(0, 5, "LOC", 0.8, "spacy:GPE")],
                                                           ordinary_zipf=2.5)]
    assert "paris" in out                                                   # a place is copied in any case


def test_a_sentence_in_another_script_is_not_a_name():
    rec = NameRecognizer()
    text = ("Please translate this line for the quarterly report: و هرکدام را در خط جداگانه بنویس. Put it into plain "
            "English for the whole team, keep the tone formal and friendly, and email 彭林 (HR) the final result.")
    assert [text[s.start:s.end] for s in rec.analyze(text) if s.source == "names:foreign_script"] == ["彭林"]


def test_a_chinese_instruction_in_an_english_prompt_is_no_name_but_a_short_han_name_is():
    rec = NameRecognizer()
    text = ("She needs to write an email to Johnny to explain her suggestions before booking. 请将以上句子翻译成中文 "
            "and send it to 王伟 and 김민수 today.")
    found = [text[s.start:s.end] for s in rec.analyze(text) if s.source == "names:foreign_script"]
    assert found == ["王伟", "김민수"]


def test_a_public_body_is_not_copied_onto_its_other_mentions():
    text = "The Employment Tribunal sat. The Employment Tribunal agreed; Nordvik Ltd and Nordvik Ltd too."
    spans = [Span(4, 23, "ORG", 0.8, "org:pattern"), Span(text.index("Nordvik"), text.index("Nordvik") + 11, "ORG",
                                                          0.8, "org:pattern")]
    out = [text[s.start:s.end] for s in propagate_mentions(text, spans)]
    assert out.count("Employment Tribunal") == 1        # kept where found, not copied onto the second mention
    assert out.count("Nordvik Ltd") == 2                # a company still is


def test_tidy_span_drops_stop_words_and_trims_bullets():
    from cloud_edge_privacy.detection.pipeline import tidy_span

    text = "Lebo and Rosa met the US team. \u2022 Develop plans \U0001f614"
    assert tidy_span(text, Span(5, 8, "ORG", 0.2, "encoder:ORG")) is None            # "and"
    us = Span(text.index("US"), text.index("US") + 2, "LOC", 0.8, "spacy:GPE")
    assert tidy_span(text, us) == us                                                   # capitalised: a country
    bullet = tidy_span(text, Span(text.index("\u2022"), text.index(" plans"), "ORG", 0.8, "spacy:ORG"))
    assert text[bullet.start:bullet.end] == "Develop"
    assert tidy_span(text, Span(len(text) - 1, len(text), "ORG", 0.8, "spacy:ORG")) is None  # an emoji alone
    phone = "call phone +44 20 7946 0958 today"
    core = tidy_span(phone, Span(5, len(phone) - 6, "CODE", 0.5, "encoder:CODE"))
    assert phone[core.start:core.end] == "+44 20 7946 0958"                           # the cue word is no code
    kept = Span(5, 8, "CODE", 0.8, "structured:username")
    assert tidy_span(text, kept) == kept                                               # validators as found


def test_username_cue_followed_by_an_english_word_is_no_username():
    rec = StructuredRecognizer()
    for text in ("save your username and password", "open the login page", "the user name field"):
        assert not [s for s in rec.analyze(text) if s.source == "structured:username"], text
    text = "username jsmith77, login: and"
    found = sorted(text[s.start:s.end] for s in rec.analyze(text) if s.source == "structured:username")
    assert found == ["and", "jsmith77"]  # a user name's shape, or anything after "login:"


def test_secret_copies_stay_secret_and_acronyms_propagate():
    text = "key sk-proj-Ab3dEfGh1jKlMn0pQrSt again sk-proj-Ab3dEfGh1jKlMn0pQrSt. The Employment Appeal Tribunal (EAT) ... EAT"
    key = "sk-proj-Ab3dEfGh1jKlMn0pQrSt"
    first = Span(4, 4 + len(key), "CODE", 0.9, "secret:prefixed_key")
    tribunal = text.index("Employment")
    spans = propagate_mentions(text, [first, Span(tribunal, tribunal + len("Employment Appeal Tribunal"), "ORG", 0.7,
                                                  "org:court")])
    copies = [s for s in spans if text[s.start:s.end] == key]
    assert len(copies) == 2 and all(is_secret(s) for s in copies)
    assert sum(text[s.start:s.end] == "EAT" for s in spans) == 2


def test_public_party_filter_is_category_aware():
    assert is_public_institution("THE FACTS", "ORG")
    assert not is_public_institution("JOHN SMITH", "PERSON")
    assert not is_public_institution("ACME LTD", "ORG")
    assert not is_public_institution("078-05-1120", "CODE")
    # bodies, offices, enactments with "and"/"for", a year or a possessive (TAB leaves them unmasked)
    for surface in ("Foreign and Commonwealth Office", "Ministry for Foreign Affairs", "Ministry of the Interior",
                    "Asylum and Immigration Act 1996", "Supreme Administrative Court's", "Commanding Officer"):
        assert is_public_institution(surface, "ORG"), surface
    assert is_public_institution("Great Britain and Northern Ireland", "LOC")
    for surface in ("Anderson and Sons", "Nordvik Consulting", "Smith's Bakery"):
        assert not is_public_institution(surface, "ORG"), surface


def test_presidio_types_without_a_mapping_are_kept(monkeypatch):
    from types import SimpleNamespace

    from cloud_edge_privacy.detection import presidio_recognizer

    fake = SimpleNamespace(analyze=lambda text, language: [
        SimpleNamespace(entity_type="UK_NINO", start=0, end=9, score=0.85),
        SimpleNamespace(entity_type="PERSON", start=10, end=14, score=0.85),
        SimpleNamespace(entity_type="IN_PAN", start=15, end=20, score=0.2)])
    monkeypatch.setattr(presidio_recognizer, "_engine", lambda: fake)
    spans = presidio_recognizer.PresidioRecognizer().analyze("AB123456C Anna x")
    assert [(s.category, s.source) for s in spans] == [("MISC", "presidio:UK_NINO"), ("PERSON", "presidio:PERSON")]


@pytest.mark.parametrize("text, surface", [
    ("we moved to Karlstad last year", "Karlstad"),
    ("Departure from Örnsköldsvik at 9", "Örnsköldsvik"),
    ("Мой город Волноваха, а также", "Волноваха"),
    ("next meeting in 보령시 on Friday", "보령시"),
    ("告诉他我下周到红霞市出差", "红霞市"),
    ("ホテルは日野市にあります", "日野市"),
    ("来週南房総市で会います", "南房総市"),
    ("I live in Reading now", "Reading"),
])
def test_places_from_the_gazetteer_and_unit_suffixes(text, surface):
    from cloud_edge_privacy.detection.places import PlaceRecognizer

    assert surface in _found(PlaceRecognizer(), text)


def test_town_names_that_are_common_words_need_a_place_cue():
    from cloud_edge_privacy.detection.places import PlaceRecognizer

    text = "Reading is fun. Nice to meet you. Mobile phones are cheap; 친구 다시 만나요."
    assert not _found(PlaceRecognizer(), text)
    # after a cue, but inside a longer capitalised name: not a town ("Human" is one in GeoNames)
    assert not _found(PlaceRecognizer(), "the European Court of Human Rights held that")
    assert "Reading" in _found(PlaceRecognizer(), "we stayed in Reading. It rained.")


def test_court_formations_tagged_as_facilities_are_public():
    assert is_public_institution("Fourth Section of the Court", "LOC")
    assert is_public_institution("Grand Chamber", "LOC")
    assert not is_public_institution("Leeds General Infirmary", "LOC")


@pytest.mark.parametrize("text, surface", [
    ("rewrite: livio can u pick up the kids", "livio"),
    ("- attendees: Thomas Holm, Jan Hjalmarsson, Eriksson\n- Jan", "Eriksson"),
    ("pls reply to shane rose that i can't come", "shane rose"),
    ("and cc stephanie on it", "stephanie"),
    ("an interview with 彭林 (HR) and the team", "彭林"),
    ("the manager, 岡田 治, was rude", "岡田 治"),
    ("Translate: Hola Ana, soy Lucía Gómez de Acme", "Lucía Gómez"),
    ("Mijn huisarts is dokter Visser in Assen", "Visser"),
])
def test_lone_names_without_a_strong_cue(text, surface):
    assert surface in _found(NameRecognizer(), text)


def test_lone_rare_name_rules_leave_code_and_everyday_words_alone():
    text = ("import os; path = '/home/carolina/x'; config.eriksson = 1. I went with my wife for dinner and a movie; "
            "ask will about it. Reading the file with pandas and django.")
    assert not _found(NameRecognizer(), text)


def test_table_cells_are_masked_by_their_column():
    from cloud_edge_privacy.detection.tabular import TabularRecognizer

    text = "Dedupe:\nname,email,city,notes\nAnna Berg,anna@x.se,Kathleenstad,late\nBo Li,bo@y.cn,Vernio,ok\nbye, thanks"
    found = _found(TabularRecognizer(), text)
    assert {"Anna Berg", "anna@x.se", "Kathleenstad", "Bo Li", "bo@y.cn", "Vernio"} == set(found)
    assert found["Kathleenstad"].category == "LOC" and found["Bo Li"].category == "PERSON"
    md = "| Name | Phone | Notes |\n|---|---|---|\n| Jo Ng | 555 1234 | late |\n"
    assert set(_found(TabularRecognizer(), md)) == {"Jo Ng", "555 1234"}
    assert not TabularRecognizer().analyze("a,b\n1,2\nred, green")


def test_propagation_reads_unmerged_spans():
    det = build_detector("default")
    text = "A toast for Gitte and Sarina. Mention Gitte's brother."
    spans = det.analyze(text)
    second = text.rindex("Gitte")
    assert any(s.start <= second and second + 5 <= s.end for s in spans), [text[s.start:s.end] for s in spans]


def test_llm_second_opinion_keeps_only_verbatim_new_items():
    from cloud_edge_privacy.detection.llm_opinion import LLMOpinionRecognizer, parse_items, redact

    seen = []

    def chat(messages):  # a scripted model: the logic around it is what is tested
        seen.append(messages[-1]["content"])
        return 'Sure: ["Quentin Marsh", "Anna Berg", "the", "Nowhere Ville", "project"] done'

    text = "Ask Anna Berg and quentin marsh... no: Quentin Marsh about the project."
    rec = LLMOpinionRecognizer(chat)
    found = [[Span(4, 13, "PERSON", 0.9, "names")]]
    spans = rec.analyze_many([text], found=found)[0]
    assert [text[s.start:s.end] for s in spans] == ["Quentin Marsh"]  # invented, already-found, common: dropped
    assert "Anna Berg" not in seen[0] and "[REDACTED]" in seen[0]
    assert parse_items("no array here") == [] and parse_items('["a", 3, "bc"') == []
    assert redact("abcdef", [Span(1, 3, "X", 1, "s")]) == "a[REDACTED]def"


@pytest.mark.parametrize("make", ["tab_ner", "learned"])
def test_models_of_the_default_preset_leave_public_institutions_out(make):
    """Like spaCy and the encoder in ``default``, the TAB NER and the learned NER drop the courts, ministries and
    States that court texts name and TAB leaves unmasked; the person and the date stay."""
    from cloud_edge_privacy.detection.learned.ner import LearnedNerRecognizer
    from cloud_edge_privacy.detection.presets import PRESETS
    from cloud_edge_privacy.detection.tab_ner_recognizer import TabNerRecognizer

    # a court each model does tag (the learned NER, trained on TAB's NO_MASK courts too, leaves most courts alone)
    court, tail = {"tab_ner": ("Ankara Administrative Court", "dismissed the case brought by Mr Ali Yilmaz against "
                                                              "the Ministry of Finance."),
                   "learned": ("Istanbul State Security Court", "convicted Mr Ali Yilmaz on 4 June 1999.")}[make]
    text = f"On 3 May 1999 the {court} {tail}"
    build = {"tab_ner": lambda **k: TabNerRecognizer(model="sm", **k), "learned": LearnedNerRecognizer}[make]
    found = lambda **k: {text[s.start:s.end] for s in build(**k).analyze(text)}  # noqa: E731
    assert any(court in f for f in found())          # the model does tag it (its edges are the model's)
    kept = found(drop_public_institutions=True)
    assert not any(court in k for k in kept) and {"Mr Ali Yilmaz", "3 May 1999"} <= kept
    uses = [u for u in PRESETS["default"].recognizers if u.recognizer == make]
    assert uses and all(u.params.get("drop_public_institutions") for u in uses)


def test_an_identifier_cue_is_a_whole_word():
    """"accounting for 38.18% of national emissions" read "account" as a cue and sent the share as an ID number,
    rewritten with the words after it; "card" in "cardiology" likewise."""
    rec = StructuredRecognizer()
    for text in ("accounting for 38.18% of national emissions", "cardiology ward 4471", "compass 7731 bearing"):
        assert not [s for s in rec.analyze(text) if s.source == "structured:id_number"], text
    for text, value in (("account no. 55120", "55120"), ("Patient 88213", "88213"), ("# 4471", "4471"),
                        ("passport: 8841 2201", "8841 2201"), ("the accounts 4471-2290", "4471-2290")):
        found = [text[s.start:s.end] for s in rec.analyze(text) if s.source == "structured:id_number"]
        assert found == [value], (text, found)


def test_a_pronoun_after_a_greeting_is_no_name():
    """"Hi, I'm Lars Eriksen" was one name with "I'm" in it, so the surrogate swallowed the pronoun."""
    rec = NameRecognizer()
    for text, name in (("Hi, I'm Lars Eriksen from Nordic Shipping.", "Lars Eriksen"),
                       ("Hello, I\u2019m Sofia Rossi", "Sofia Rossi")):
        found = [text[s.start:s.end] for s in rec.analyze(text)]
        assert name in found and not any(f.lower().startswith("i") and f != name for f in found), found


def test_an_office_before_a_name_is_a_title_the_surrogate_keeps():
    """"Councillor Sarah Hughes" went out as three surrogate names: an office or rank before a name is a title,
    which detection reads as a cue and the pseudonym keeps; the name itself is replaced."""
    import os

    os.environ.setdefault("CEP_SECRET_KEY", "ab" * 32)
    from cloud_edge_privacy import Gateway

    text = "Please write to Councillor Sarah Hughes; Sergeant Paul Wright leads security."
    sent = Gateway("pseudonym").protect(text).text
    assert "Councillor " in sent and "Sergeant " in sent, sent
    assert not any(w in sent for w in ("Sarah", "Hughes", "Paul", "Wright")), sent


def test_the_address_pattern_skips_its_suffix_form_only_where_it_cannot_match():
    """Random texts of street suffixes in any case, capitalised words, digits and spaces: wherever the suffix form
    ("Klosterstraße 12") matches alone, the cheap test says it may; and the recognizer finds what the whole
    pattern finds."""
    import random
    import re

    from cloud_edge_privacy.detection import free_text as F

    rng = random.Random(8)
    alone = re.compile(F._SUFFIX_STREET)
    pieces = ["straße", "STRASSE", "Weg", "gatan", "str.", "Kloster", "Main", "12", "4b", " ", "  ", "\n", ", ", "-",
              "laan", "Vej", "x"]
    hits = 0
    for _ in range(4000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        if alone.search(text):
            hits += 1
            assert F._suffix_form_possible(text), text
        want = [m.span() for m in F._ADDRESS.finditer(text) if m.end() - m.start() >= 6]
        got = [(s.start, s.end) for s in F.AddressRecognizer().analyze(text) if s.source == "address:street"]
        assert got == want, text
    assert hits > 100
