"""Free-text identifiers that have a recognisable shape: street addresses (one span each, with flat, postcode
and city), organisations by legal form or institution word, ages, and places after a residence cue."""
from __future__ import annotations

import re
from typing import List

from ..spans import FOLDS_TO_ASCII, Span
from ..vocabulary import MONTH_ABBREVIATIONS, MONTH_ALTERNATION, MONTHS, WEEKDAYS
from .. import wordlists
from .recognizer import register_recognizer

_CAP = r"[A-ZÀ-ÞĀ-ſ](?:[\w'’-]|\.(?=\w))*"
_STREET_SUFFIX = wordlists.alternation("street_types_trailing")  # "Street|St\.|St|Road|Rd\.|Rd|Avenue..."
_STREET_LEAD = wordlists.alternation("street_types_leading")  # before the street's name: "rue", "via", "ul."
_DE_SUFFIX = wordlists.alternation("street_types_suffixed")  # "straße", "weg", "gatan"
_POSTCODE = (r"\d{5}(?:-\d{3,4})?|\d{8}|\d{4}\s?[A-Z]{2}|\d{2}-\d{3}|\d{3}\s?\d{2}|\d{4}|"
             r"[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}")
_CITY = rf"{_CAP}(?:[ -](?:{_CAP}|sur|sous|am|an|der|de|des|du|la|le|les|lès|en|aux|di|del|della|do|da|das|dos|op|aan|upon|on|in|im)){{0,4}}"
_TAIL = (rf"(?:\s*,?\s*(?:Apt\.?|Apartment|Suite|Ste\.?|Unit|Flat|Floor|Piso|Piano|Puerta|Etage|Stock|bus|Bus|Appartamento|Interno|Scala|Wohnung|Whg\.|Appartement|App\.|Apto\.?|"
         rf"Depto\.?|Dpto\.?|lok\.|m\.|Daire|Kat)\s*\w+)?"
         rf"(?:\s*,\s*(?:(?:{_POSTCODE})\s+{_CITY}(?:\s+{_CAP})?|{_CITY}(?:,\s*[A-Z]{{2}})?\s+(?:{_POSTCODE})|{_CITY}"
         rf"(?:,\s*[A-Z]{{2}}\s+\d{{5}}(?:-\d{{4}})?)?))?(?:,?\s+(?:{_POSTCODE})(?!\w))?")
_FLAT = r"(?:(?i:flat|apt\.?|apartment|unit|suite)\s*\d+\w?,?\s+)?"
# "Klosterstraße 12", "Carlijnweg 03", "Songül-Heinrich-Platz 98/32"
_SUFFIX_STREET = rf"\b(?:{_CAP}[ -]){{0,3}}[\w'’-]*(?i:{_DE_SUFFIX})\s+\d{{1,5}}[a-z]?(?:\s?[-/]\s?\d+[a-z]?)?{_TAIL}"
_ADDRESS_FORMS = [
    # "17 Larkspur Rise", "90, rue Allard", "4417 W Olive Ave"
    rf"{_FLAT}\b\d{{1,5}}[A-Za-z]?(?:[-/]\d+)?,?\s+(?:(?:{_CAP}|[NSEW]\.?)\s+){{0,4}}(?:{_STREET_SUFFIX})\b{_TAIL}",
    rf"{_FLAT}\b\d{{1,5}}[A-Za-z]?,?\s+(?i:{_STREET_LEAD})\s+(?:(?:{_CAP}|de|du|des|la|le|del|della|di|da|do|dos|das|"
    rf"von|van)[ \t]+){{0,4}}{_CAP}{_TAIL}",
    rf"{_FLAT}\b\d{{1,5}}[A-Za-z]?,?\s+(?i:{_STREET_LEAD})\s+(?:[\w'’.-]+\s+){{0,4}}?[\w'’.-]+{_TAIL}",
    _SUFFIX_STREET,
    # "Piazza Lazzaro, 35", "Calle de X 40", "ul. Jadwigi 978", "aleja Maczka 67/01"
    rf"\b(?i:{_STREET_LEAD})\s+(?:[\w'’.-]+\s+){{0,4}}?[\w'’.-]+,?\s+\d{{1,5}}[A-Za-z]?(?:[-/]\d+)?{_TAIL}",
    # Cyrillic: "ул. Ленина, д. 5, кв. 3", "пр. Тукая, д. 728"
    r"(?:(?:г\.|с\.|пос\.|клх|д\.|ст\.|п\.|м\.|смт)\s*[А-ЯЁІЇЄҐ][\w-]*,\s*)?(?:ул\.|улица|пр\.|просп\.|проспект|пер\.|"
    r"переулок|провулок|проезд|проїзд|узвіз|ш\.|шоссе|шосе|бул\.|бульвар|наб\.|пл\.|вул\.|вулиця|пров\.|тупик|алея|"
    r"площа|майдан)\s*[^,\n]{2,40},\s*"
    r"(?:д\.|дом|буд\.)\s*\d+\w*(?:[,/]?\s*(?:кв\.|корп\.|стр\.|к\.)\s*\d+)*(?:,\s*[^,\n]{2,30})?(?:,\s*\d{5,6})?",
    # Han: "上海市徐汇区漕溪北路88号"
    r"[\u4e00-\u9fff]{1,12}?(?:省|市|区|县|镇|乡|村|路|街|道|巷|里)[\u4e00-\u9fff\w]{0,20}?\d+[\w\u4e00-\u9fff]{0,6}?"
    r"(?:号|座|栋|室|楼|幢)(?:[\w\u4e00-\u9fff]{0,8}?(?:室|楼|座|号))?(?:\s*\d{6})?",
    r"[\u4e00-\u9fff]{1,12}?(?:省|市|区|县)[\u4e00-\u9fff\w]{0,20}?(?:路|街|道|巷)[\w\u4e00-\u9fff]{0,8}?"
    r"(?:号|座|栋|室|楼|幢)(?:\s*\d{6})?",
    # Cyrillic settlements by type: "селище Радехів", "клх Яхрома", "г. Тверь"
    r"(?:(?<![\w])(?:селище|село|смт|місто|посёлок|поселок|деревня|станица|хутор|город|клх|пос\.|с\.|м\.|г\.|д\.)\s*"
    r"[А-ЯЁІЇЄҐ][\w'’-]+)",
    # Devanagari and other Indic scripts: "76 कलिता, चिरमिरी 033932", "025 रति त्रिवेदी, भद्रक-654515"
    r"\b\d{1,5}\s+[\u0900-\u0dff][\u0900-\u0dff ]{1,40},\s*[\u0900-\u0dff][\u0900-\u0dff ]{0,30}[- ]\d{6}\b",
    # Japanese: prefecture + municipality (+ district and block numbers: "西新宿2丁目8番1号"); what follows a
    # municipality without a block number is the sentence ("兵庫県神戸市出身の..."), not the address
    r"[\u4e00-\u9fff]{1,4}(?:都|道|府|県)[\u3040-\u30ff\u4e00-\u9fff]{1,12}?(?:市|区|町|村|郡)"
    r"(?:[\u3040-\u30ff\u4e00-\u9fff]{0,12}?[\d０-９一二三四五六七八九十]+(?:丁目|番地|番|号|-|−|ー)"
    r"[\d０-９一二三四五六七八九十\-−ー丁目番地号]*)?",
    # Korean: "부산광역시 도봉구 강남대로 475-74"
    r"[가-힣]+(?:도|시)\s[가-힣]+(?:시|군|구)(?:\s[가-힣]+(?:시|군|구|읍|면|동))?\s[가-힣\d]+(?:로|길)\s?\d+(?:-\d+)?"
    r"(?:\s\([^)]{1,20}\))?",
]
# The "Klosterstraße 12" form tries up to three capitalised words before its suffix at every word: 40% of the
# pattern's time on a prompt.  It can match only where a suffix stands before spaces and a digit, so a text with no
# such place is read by the pattern without it (the same matches: a form that matches nowhere changes none).
_ADDRESS = re.compile("|".join(_ADDRESS_FORMS))
_ADDRESS_NO_SUFFIX_FORM = re.compile("|".join(f for f in _ADDRESS_FORMS if f is not _SUFFIX_STREET))
_DE_SUFFIXES = wordlists.entries("street_types_suffixed")
_BEFORE_SPACED_DIGIT = re.compile(r"\S\s+\d")


def _suffix_form_possible(text: str) -> bool:
    """Whether a street suffix ("straße", "weg", "gatan"...) in any case ends right before spaces and a digit."""
    if not FOLDS_TO_ASCII.isdisjoint(text):
        return True
    return any(text[max(0, m.start() - 8):m.start() + 1].lower().endswith(_DE_SUFFIXES)
               for m in _BEFORE_SPACED_DIGIT.finditer(text))
_LEGAL_FORM = wordlists.alternation("legal_forms")  # "Ltd\.|Ltd|Limited|LLC|...|GmbH|...|Sp\. z o\.o\."
_INSTITUTION = wordlists.alternation("institution_words_organisation_endings")  # "University|...|Hospital|...|Club"
_ORG = re.compile("|".join([
    rf"(?:{_CAP}(?:,\s|\s&\s|\s(?:and|und|et|e|y|i|en|och|ve)\s|[ -])){{0,4}}{_CAP},?\s(?:{_LEGAL_FORM})(?![\w])",
    rf"{_CAP}, {_CAP} (?:and|und|et|e|y|i|en|och|ve) {_CAP}",
    rf"(?:(?:St\.?|Saint|San|Santa)\s)?(?:{_CAP}\s){{0,3}}(?:{_INSTITUTION})(?:\s(?:of|de|di|du|der|des|for|für|van|del|"
    rf"de la)\s{_CAP}(?:[ -]{_CAP}){{0,2}}|\s{_CAP}(?:[ -]{_CAP}){{0,2}})?",
    rf"(?:{_INSTITUTION})\s(?:(?:of|de|di|du|der|des|for|für)\s)?[^\W\d_][\w'-]+",
    r"(?:ООО|ОАО|ЗАО|ПАО|АО|ГК|НПО|ИП|ТОВ|ПрАТ|ПАТ|ФОП|ТзОВ)\s?[«\"“][^»\"”\n]{2,60}[»\"”]|"
    r"(?:ООО|ОАО|ЗАО|ПАО|АО|ГК|НПО|ТОВ)\s[А-ЯЁІЇЄҐ][\w-]+(?:\s[А-ЯЁІЇЄҐ][\w-]+)*",
    r"[\u4e00-\u9fff]{2,16}(?:有限公司|有限责任公司|股份有限公司|集团|公司)|(?:株式会社|有限会社)\s?[\u3040-\u30ff\u4e00-\u9fff]{1,12}|"
    r"[\u3040-\u30ff\u4e00-\u9fff]{1,12}(?:株式会社|有限会社|保険|銀行)",
    r"(?:\(유\)|\(주\)|유한회사|주식회사)\s?[가-힣]+|[가-힣]+\s?(?:유한회사|주식회사)",
    r"[Α-ΩΆ-Ώ][\w-]+(?:\s[Α-ΩΆ-Ώ][\w-]+)*\s(?:Α\.Ε\.|Ε\.Π\.Ε\.|Ο\.Ε\.)(?:\s[Α-Ω\s]+)?",
]))
# An organisation named right after a work cue: "at Albuquerque", "bei Kreusel", "chez Legros".
_WORK_ORG = re.compile(
    rf"(?i:(?:work(?:s|ed|ing)?|employed|intern(?:ed)?|analyst|engineer|manager|job|role|position|applying|apply|"
    rf"studied|study|employer|seller|company)(?:\s+\w+){{0,2}}?\s+(?:at|for|with|to|bei|chez|presso|en|w|bij|em|in)\s+|"
    rf"\b(?:bei|chez|presso|pracuję w|trabajo en|trabalho na|werk bij)\s+|\b(?:employer|seller|company|firm)\s*:?\s+)"
    rf"((?:{_CAP})(?:[ -](?:{_CAP}|&|and)){{0,3}})")
_AGE = re.compile(
    r"(?i:\b(?:aged|age|turns?|turning|is|am|i'm)\s+)(\d{1,3})(?=\s*(?:years?|yrs?|y/o|yo|,|\.|;|\)|and|$|\s))|"
    r"\b(\d{1,3})\s*(?i:years?[- ]old|yrs?[- ]old|y/o|yo|jaar|jahre|jahren|ans|años|anni|lat|år|anos|yaş|года|лет|"
    r"歳|岁|살)(?!\w)|\((\d{1,2})\)")  # "(7)" after a name (checked in AgePlaceRecognizer)
_AGE_SUBJECT = re.compile(r"(?i)(?:\b(?:son|daughter|child|kid|baby|boy|girl|he|she|i|mother|father|mom|mum|dad|wife|"
                          r"husband|boss|patient|grandma|grandpa|who|[A-Z][a-z]+)\s+(?:is|am|turns?|turning)\s+|"
                          r"\b(?:aged|age|turns?|turning|i'm)\s+)$")
_RESIDENCE = re.compile(
    rf"(?i:\b(?:live|living|lives|lived|based|reside|residing|moved|moving|born|from|near|visit(?:ing)?|trip|"
    rf"wohne|lebe|habite|vivo|abito|woon|mieszkam|bor)\s+(?:in|at|to|near|en|à|a|in der nähe von|w|i)?\s*|"
    rf"\b(?:near|nahe|près de|cerca de|vicino a|bij|koło)\s+)({_CAP}(?:[ -](?:(?:de|do|da|del|di|la|le|sur|am|an)[ -])?"
    rf"{_CAP}){{0,2}})")


@register_recognizer("address", {"LOC"}, {"address": 4},
                     fine_types={"address:street": "ADDRESS", "address:postcode": "ADDRESS"})
class AddressRecognizer:
    """Street addresses as one LOC span each: number + street (+ flat, postcode, city, US state and ZIP) in
    English, Romance, German/Dutch/Nordic, Polish and Portuguese forms; Cyrillic, Han, Japanese and Korean
    address forms; UK postcodes on their own."""

    def analyze(self, text: str) -> List[Span]:
        pattern = _ADDRESS if _suffix_form_possible(text) else _ADDRESS_NO_SUFFIX_FORM
        out = [Span(m.start(), m.end(), "LOC", 0.85, "address:street") for m in pattern.finditer(text)
               if m.end() - m.start() >= 6]
        for m in re.finditer(r"(?<![\w-])[A-Z]{1,2}\d[A-Z\d]? \d[A-Z]{2}(?![\w-])", text):  # UK postcode
            out.append(Span(m.start(), m.end(), "LOC", 0.8, "address:postcode"))
        return out


# "H&R Technology", "h&r technology", "AT&T": letters joined by "&", with an organisation word after it if any.
_AMP_ORG = re.compile(rf"(?<![\w&])[A-Za-z]{{1,5}}&[A-Za-z]{{1,5}}(?![\w&])(?:\s(?i:technolog(?:y|ies)|group|company|"
                      rf"co\.?|inc\.?|ltd\.?|corp\.?|consulting|solutions|services|partners|associates|"
                      rf"{_INSTITUTION}))?")
# An institution word with no name ("Software engineer", "Hospital staff", "Bank holidays") names no organisation.
_BARE_INSTITUTION = re.compile(rf"(?:{_INSTITUTION})")
_ENDS_IN_INSTITUTION = re.compile(rf"\b(?:{_INSTITUTION})\Z")


def institution_name(surface: str) -> bool:
    """Whether ``surface`` ends with an institution word ("St Mary's Primary School", "Parkside Surgery"): an
    organisation, whoever read it as a person."""
    return bool(_ENDS_IN_INSTITUTION.search(surface.strip()))


_AMP_NOT_ORG = wordlists.words("ampersand_abbreviations")


@register_recognizer("organisations", {"ORG"}, {"org": 1.8})
class OrganisationRecognizer:
    """Organisations by legal form (Ltd, GmbH, S.A., Sp. z o.o., 有限公司, ООО «...»...), "X, Y and Z" firm
    names, institutions (universities, schools, hospitals, banks...), the capitalised name right after a
    work cue ("worked at", "bei", "chez", "employer:"), and names joined by "&" in any case ("h&r technology")."""

    def analyze(self, text: str) -> List[Span]:
        out = [Span(m.start(), m.end(), "ORG", 0.75, "org:pattern") for m in _ORG.finditer(text)
               if len(m.group().strip()) > 3 and not _BARE_INSTITUTION.fullmatch(m.group().strip())]
        out += [Span(m.start(1), m.end(1), "ORG", 0.7, "org:work_cue") for m in _WORK_ORG.finditer(text)]
        out += [Span(m.start(), m.end(), "ORG", 0.7, "org:ampersand") for m in _AMP_ORG.finditer(text)
                if m.group().split()[0].lower() not in _AMP_NOT_ORG]
        return out


@register_recognizer("age_place", {"DEM", "LOC"}, {"age": 1, "place": 0.5}, fine_types={"age": "AGE"})
class AgePlaceRecognizer:
    """Ages ("34 years old", "she turns 50", "12 jaar", "(7)") as DEM, and places after a residence cue
    ("I live in X", "near X", "wohne in X") as LOC."""

    def analyze(self, text: str) -> List[Span]:
        out = []
        for m in _AGE.finditer(text):
            g = next(i for i in (1, 2, 3) if m.group(i))
            if g == 1 and not _AGE_SUBJECT.search(text[max(0, m.start(1) - 30):m.start(1)]):
                continue
            if g == 3 and not re.search(r"[^\W\d_]{2,} $", text[max(0, m.start() - 30):m.start()]):
                continue
            if 0 < int(m.group(g)) <= 120:
                out.append(Span(m.start(g), m.end(g), "DEM", 0.7, "age"))
        out += [Span(m.start(1), m.end(1), "LOC", 0.65, "place:residence") for m in _RESIDENCE.finditer(text)]
        return out


_MON = r"(?:" + "|".join(MONTH_ABBREVIATIONS) + r")\.?|" + wordlists.alternation("months_other_languages")
_EXTRA_DATE = re.compile(
    rf"(?i:\b\d{{1,2}}\.?\s(?:{_MON})(?:\s\d{{4}})?\b|\b(?:{_MON})\s\d{{1,2}}(?:,?\s\d{{4}})?\b|"
    rf"\b\d{{1,2}}\s(?:{MONTH_ALTERNATION})\b|"
    rf"\b(?:19|20)\d{{2}}\s?[–-]\s?(?:19|20)?\d{{2}}\b)")
_CLAUSE_PLACE = re.compile(rf"\b(?:in|near|nach|à|w|bij|aus|de|from)\s+({_CAP}(?:[ -]{_CAP}){{0,2}})(?=\s*(?:[.,;!?)]|\n|$))")


@register_recognizer("date_place", {"DATETIME", "LOC"}, {"place": 0.5})
class DateAndPlaceRecognizer:
    """Dates the TAB patterns do not cover (abbreviated and French/German/Spanish/Italian/Dutch month names,
    "3 June" without a year, year ranges) as DATETIME, and a capitalised place closing a clause after "in",
    "near", "nach", "à"... ("... in Fulda.") as LOC."""

    def analyze(self, text: str) -> List[Span]:
        from ..lexicon import english_stop_words

        out = [Span(m.start(), m.end(), "DATETIME", 0.7, "place:date") for m in _EXTRA_DATE.finditer(text)]
        stop = english_stop_words()
        for m in _CLAUSE_PLACE.finditer(text):
            words = m.group(1).split()
            if words[0].lower() not in stop and words[0].lower() not in _NOT_PLACES:
                out.append(Span(m.start(1), m.end(1), "LOC", 0.6, "place:clause"))
        return out


# Capitalised words closing a clause after "in", "near"... that name no place: the month and weekday names and
# not_places_after_preposition.txt ("Python", "Court", "absentia"), lower case
_NOT_PLACES = (frozenset(m.lower() for m in MONTHS) | frozenset(w.lower() for w in WEEKDAYS)
               | wordlists.words("not_places_after_preposition"))


_DEMONYMS = wordlists.alternation("demonyms")  # "Afghan|Albanian|...|Yemeni"
_DEMONYM = re.compile(rf"\b(?:{_DEMONYMS})(?:\s+(?:national|nationals|citizen|citizens|origin|nationality))?\b")
_TRANSLATE_TO = re.compile(r"(?i:\btranslat\w*\b[^.!?\n]{0,60}?\b(?:to|into|in)\s+(?:the\s+)?)$")
_TRANSLATION = re.compile(r"(?i:\s+translation\b)")
_PLAIN = re.compile(r"(?i:\b(?:plain|simple)\s+)$")  # "in plain English": a register, not a nationality
_DEMONYM_WORD = re.compile(rf"(?:{_DEMONYMS})")  # compiled once: every kept span is checked


def translation_language(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is a demonym naming the language of a translation ("Translate to French:",
    "translate this into Spanish", "an English translation", "in plain English"): a request's language, not a
    person's nationality.
    Not any language: TAB marks "presented in the Swedish language" (a film) as a quasi-identifier."""
    if not _DEMONYM_WORD.fullmatch(text, start, end):
        return False
    before = text[max(0, start - 80):start]
    return bool(_TRANSLATE_TO.search(before) or _PLAIN.search(before) or _TRANSLATION.match(text, end))


_COURT = re.compile(r"(?:\b(?:[A-ZÀ-Þ][\w'’-]+\s+){1,4}Tribunal|(?:\bAppeal Committee of the )?\bHouse of Lords|"
                    r"\bCourt of Appeal|\bSupreme Court|\bCourt of Justice(?: of the European Union)?)\b"
                    r"(?:\s+\([^)]{2,40}\))?|\b[A-Z][\w-]+ (?:army|garrison|regiment|barracks|constabulary)\b")
_RESPONDENT = re.compile(r"application[^)]{0,40}\)\s+against\s+(?:the\s+)?([A-Z][\w ]{2,80}?)(?=\s+lodged|\s+\(|,|\.|\s+by\s)")
_NUMBER_WORDS = wordlists.alternation("number_words")  # "one|two|...|sixty|several|a few"
_DURATION = re.compile(rf"(?i)\b(?:{_NUMBER_WORDS}|\d{{1,3}})(?:[ -](?:{_NUMBER_WORDS}))?\s+(?:days?|weeks?|months?|"
                       rf"years?|hours?)\b(?![ -]old)")


# "represented by Royds Rdw, solicitors in London": the law firm (a lawyer's own name is a titled name)
_REPRESENTED = re.compile(r"represented by ((?:[A-Z][\w&'’.-]*)(?:\s(?:[A-Z&][\w&'’.-]*|and|of))*?),\s+(?:solicitors|"
                          r"lawyers|a (?:law )?firm|attorneys|advocates|barristers)")
_AGE_WORDS = re.compile(rf"\b(?:aged|age of)\s+((?:{_NUMBER_WORDS}|seventy|eighty|ninety)(?:[ -](?:one|two|three|four|"
                        rf"five|six|seven|eight|nine))?)\b")


@register_recognizer("court_text", {"DEM", "LOC", "ORG", "DATETIME"}, {"org": 1.8, "place": 0.5, "age": 1},
                     fine_types={"age": "AGE"})
class CourtTextRecognizer:
    """What court judgments name besides people: nationalities ("Swedish", "a Turkish national") as DEM, country
    names (Faker's lists in English, German, Spanish, French, Italian and Russian, Russian ones in their case
    forms; not the respondent State named in a judgment's first sentence) as LOC,
    named tribunals ("Employment Appeal Tribunal"), the House of Lords, the Court of Appeal, a Supreme Court,
    the Court of Justice, military units ("Catterick garrison") and the law firm after "represented by" as ORG;
    ages in words ("aged sixty three") as DEM, and durations ("eight days") as DATETIME."""

    def analyze(self, text: str) -> List[Span]:
        out = [Span(m.start(), m.end(), "DEM", 0.7, "org:demonym") for m in _DEMONYM.finditer(text)]
        # the respondent State of a judgment is a public party, not an identifier
        respondent = {m.group(1).strip() for m in _RESPONDENT.finditer(text[:2000])}
        out += [Span(m.start(), m.end(), "LOC", 0.7, "place:country") for m in _countries().finditer(text)
                if not any(m.group() in r for r in respondent)]
        out += [Span(m.start(), m.end(), "ORG", 0.65, "org:court") for m in _COURT.finditer(text)]
        out += [Span(m.start(), m.end(), "DATETIME", 0.65, "place:duration") for m in _DURATION.finditer(text)]
        out += [Span(m.start(1), m.end(1), "ORG", 0.7, "org:representative") for m in _REPRESENTED.finditer(text)]
        out += [Span(m.start(1), m.end(1), "DEM", 0.7, "age") for m in _AGE_WORDS.finditer(text)]
        return out


def _countries() -> "re.Pattern[str]":
    return _country_pattern()


from functools import lru_cache  # noqa: E402


# Faker's address providers whose country lists are read besides the English one: the languages of the
# multilingual set written with spaces (Chinese, Japanese and Korean place names are the cjk analyzers')
COUNTRY_LOCALES = ("de_DE", "es_ES", "fr_FR", "it_IT", "ru_RU")


@lru_cache(maxsize=1)
def _country_pattern() -> "re.Pattern[str]":
    """Country names in English (and the forms court judgments write), German, Spanish, French, Italian and
    Russian, from Faker's address providers; a name that is an English word or a stop word of any language
    ("Chad", "Jordan" are kept: Faker's English list has them already) is left out of the other languages'."""
    import importlib

    from faker.providers.address.en import Provider

    from ..lexicon import english_zipf, stop_words
    from .inflection import russian_case_forms

    names = {c for c in Provider.countries if len(c) > 3} | wordlists.words("countries_extra")
    stop = stop_words()
    forms = [re.escape(n) for n in names]
    for locale in COUNTRY_LOCALES:
        for c in importlib.import_module(f"faker.providers.address.{locale}").Provider.countries:
            if len(c) <= 3 or c in names or c.lower() in stop or english_zipf(c.lower()) >= 3.5:
                continue
            forms.append(russian_case_forms(c) if locale == "ru_RU" else re.escape(c))
    forms = sorted(set(forms), key=len, reverse=True)
    # the names that start with a capital (all of them in Faker 40.54) are tried only where a capital stands: the
    # lookahead rejects the other positions before a thousand names are tried there (5x faster)
    caps = [f for f in forms if f[:1].isupper()]
    others = [f for f in forms if not f[:1].isupper()]
    alternatives = [r"(?=[^\W\d_])(?=[^a-zß-ÿа-яё])(?:" + "|".join(caps) + ")"] + (["|".join(others)] if others else [])
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")\b")
