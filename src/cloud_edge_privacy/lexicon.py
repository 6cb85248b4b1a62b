"""Public word lists shared by detection and desensitization: person names of every Faker locale, stop words,
common words that are also names (wordlists/common_name_words.txt), and English word frequencies (wordfreq).
Read-only, loaded once."""
from __future__ import annotations

import importlib
import math
import pkgutil
import re
from functools import lru_cache
from typing import Callable, Dict, FrozenSet, Iterable, List, Tuple

from . import wordlists


def _names_of(provider: type, kind: str) -> List[str]:
    """Every list of ``kind`` names ("first" or "last") a Faker person provider defines, whatever it calls
    them (``last_names``, ``male_last_names``, ``unisex_last_names``...)."""
    out: List[str] = []
    for attr in dir(provider):
        low = attr.lower()
        if attr.startswith("_") or "name" not in low or not (kind in low or (kind == "last" and "surname" in low)):
            continue
        v = getattr(provider, attr, None)
        if isinstance(v, dict):
            out.extend(k for k in v.keys() if isinstance(k, str))
        elif isinstance(v, (list, tuple)):
            out.extend(n for n in v if isinstance(n, str))
    return out


@lru_cache(maxsize=1)
def name_lists() -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """(first names, last names), lowercased, from every Faker person provider; multi-word entries are split."""
    import faker.providers.person as person

    first, last = set(), set()
    for mod in pkgutil.iter_modules(person.__path__):
        provider = getattr(importlib.import_module(f"faker.providers.person.{mod.name}"), "Provider", None)
        if provider is None:
            continue
        for kind, acc in (("first", first), ("last", last)):
            for n in _names_of(provider, kind):
                acc.update(t.lower() for t in n.split() if len(t) > 1 or is_cjk(t))
    return frozenset(first), frozenset(last)


@lru_cache(maxsize=1)
def function_words() -> FrozenSet[str]:
    """Stop words (function words) of the languages users write in most, from spaCy's lists, lowercased."""
    words = set()
    for lang in ("en", "de", "fr", "es", "it", "nl", "pt", "pl", "sv", "tr", "ru", "da", "nb", "fi", "cs", "ro"):
        try:
            words.update(importlib.import_module(f"spacy.lang.{lang}.stop_words").STOP_WORDS)
        except ImportError:
            continue
    return frozenset(w.lower() for w in words)


@lru_cache(maxsize=1)
def _number_readers() -> Tuple[Callable[[str], bool], ...]:
    readers = []
    for lang in ("en", "fr", "es", "it", "nl", "pt", "ru", "pl", "sv", "da"):
        try:
            readers.append(importlib.import_module(f"spacy.lang.{lang}.lex_attrs").like_num)
        except (ImportError, AttributeError):
            continue
    return tuple(readers)


def number_word(word: str) -> bool:
    """Whether ``word`` is a number written in digits or words ("three", "fifty-five", "trois", "tres"), by spaCy's
    ``like_num`` of the languages it has one for."""
    parts = [p for p in re.split(r"[-‐]", word) if p]
    return bool(parts) and all(any(like(p) for like in _number_readers()) for p in parts)


@lru_cache(maxsize=1)
def stop_words() -> FrozenSet[str]:
    """Function words plus common English words that are also given names or surnames."""
    return function_words() | frozenset(w.lower() for w in COMMON_NAME_WORDS)


def common_name_word(word: str) -> bool:
    """One word that is a function word or an everyday word that is also a name ("Mark", "Park", "Will"):
    detection's co-reference and the egress guard's rule 1 both read such a name only as written."""
    word = word.strip()
    return " " not in word and word.lower() in stop_words()


def mostly_lower_case(form: str, text: str) -> bool:
    """Whether ``form`` occurs in ``text`` (any case, on word boundaries) more often all in lower case than
    otherwise: where "cap" is written 44 times and "Cap" once, it is a word, whatever a model read once.
    Detection's co-reference and the egress guard's rule 1 both read such a person's name only as written."""
    from .spans import find_surface

    return lower_case_majority(text[a:b] for a, b in find_surface(text, form.strip(), ignore_case=True))


def lower_case_majority(occurrences: Iterable[str]) -> bool:
    """Whether more than half of ``occurrences`` (a form as written at each place) are all in lower case."""
    found = list(occurrences)
    return sum(1 for f in found if f.islower()) * 2 > len(found)


# Common English words that are also given names or surnames ("will", "mark", "park"), and everyday words a name
# list holds ("court", "python"): wordlists/common_name_words.txt
COMMON_NAME_WORDS: FrozenSet[str] = wordlists.words("common_name_words")


_CJK = re.compile("[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7a3]")


def is_cjk(s: str) -> bool:
    """Whether ``s`` holds a Kana, Han or Hangul character."""
    return _CJK.search(s) is not None


# The scripts written without spaces between words (or, for Hangul, with particles fused to a name), which the
# learned NER's tokenizer reads one character a token: name -> character ranges (a regex class body).
CJK_SCRIPTS: Dict[str, str] = {"Han": "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff",
                               "Kana": "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f",
                               "Hangul": "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"}
CJK_CHARACTER = "[" + "".join(CJK_SCRIPTS.values()) + "]"
_CJK_SCRIPT = [(name, re.compile("[" + body + "]")) for name, body in CJK_SCRIPTS.items()]
# katakana letters and the long-vowel mark "ー", not the middle dot "・" that parts the words of a foreign name
KATAKANA_LETTERS = "\u30a1-\u30fa\u30fc"


def unread_letters(surface: str, reads: FrozenSet[str] = frozenset()) -> bool:
    """Whether ``surface`` holds a letter of a caseless script past Greek and Cyrillic (Hebrew, Arabic, Indic, Thai,
    Khmer, Han, Kana, Hangul...) other than the :data:`CJK_SCRIPTS` named in ``reads``: a model trained on cased
    text, or on only those scripts, has not read it (and, there, tags whole clauses as names)."""
    for c in surface:
        if ord(c) >= 0x0590 and c.isalpha() and c.lower() == c.upper() \
                and not any(name in reads and pattern.match(c) for name, pattern in _CJK_SCRIPT):
            return True
    return False


def zipf_of(word: str, lang: str) -> float:
    """wordfreq's ``zipf_frequency(word, lang)``.  A word of lower-case ASCII letters is its own only token in
    every language here, so it is looked up in wordfreq's table and rounded as wordfreq rounds it (the same
    value, tests/test_lexicon.py); wordfreq's tokenizer, which that spares, was most of a lookup's 20-40 us, and
    the name recognizers look up every new word of a prompt."""
    from wordfreq import get_frequency_dict, zipf_frequency  # wordfreq keeps each table once

    if not (word.isascii() and word.isalpha() and word.islower()):
        return zipf_frequency(word, lang)
    freq = get_frequency_dict(lang, "best").get(word)
    if freq is None:
        return _ZIPF_OF_UNKNOWN
    freq = max(1.0 / (1.0 / freq), _UNKNOWN_FREQ)  # wordfreq combines its tokens' frequencies this way
    return round(math.log(round(freq, math.floor(-math.log(freq, 10)) + 3), 10) + 9, 2)


_UNKNOWN_FREQ = 1e-9  # wordfreq's zipf_to_freq(0): the minimum zipf_frequency passes on
_ZIPF_OF_UNKNOWN = round(math.log(_UNKNOWN_FREQ, 10) + 9, 2)


@lru_cache(maxsize=16384)
def english_zipf(word: str) -> float:
    """How common a word is in English (wordfreq's Zipf scale: 0 unknown, 3 rare, 6 very common)."""
    return zipf_of(word, "en")


# Other languages whose common words are no unknown word (wordfreq's large lists): French, German, Spanish,
# Italian, Portuguese, Dutch.
OTHER_LANGUAGES = ("fr", "de", "es", "it", "pt", "nl")


@lru_cache(maxsize=16384)
def common_in_another_language(word: str, zipf: float = 3.0) -> bool:
    """Whether ``word`` is at least ``zipf`` common in one of :data:`OTHER_LANGUAGES` ("réparation",
    "folgendem"), so not a name or handle that English does not know."""
    return any(zipf_of(word, lang) >= zipf for lang in OTHER_LANGUAGES)


# The languages a word may be more common in than in English, for :func:`mostly_another_language`, by the script it is
# written in: wordfreq's cased-script languages of Europe.  Caseless scripts are handled by unread_letters.
LANGUAGE_VOTE = {"latin": ("fr", "de", "es", "it", "pt", "nl", "pl", "sv", "tr"), "cyrillic": ("ru", "uk"),
                 "greek": ("el",)}
_VOTE_WORD = re.compile(r"[^\W\d_]{2,}")
# wordfreq's Zipf scale: an English word this common votes English at once ("the", "and", "is", "you"; the function
# words of other languages that English text also holds, "de", "la", "die", stay under it).
_SURELY_ENGLISH = 6.0
# how much more common (Zipf points) a word must be in another language than in English to vote for it
_FOREIGN_MARGIN = 1.0


def _vote(word: str) -> int:
    """+1: the word votes English, -1: another language, 0: it does not vote (see :func:`language_votes`)."""
    en = english_zipf(word)
    if en >= _SURELY_ENGLISH:
        return 1
    other = _other_zipf(word)
    if other >= 3.0 and other >= en + _FOREIGN_MARGIN:
        return -1
    return 1 if en >= 3.0 else 0


def _vote_languages(word: str) -> Tuple[str, ...]:
    """The languages of :data:`LANGUAGE_VOTE` of the script ``word`` starts in."""
    first = word[0]
    script = "cyrillic" if "\u0400" <= first <= "\u04ff" else "greek" if "\u0370" <= first <= "\u03ff" else "latin"
    return LANGUAGE_VOTE[script]


@lru_cache(maxsize=16384)
def _other_zipf(word: str) -> float:
    return max(zipf_of(word, lang) for lang in _vote_languages(word))


def other_language_zipf(word: str) -> float:
    """The highest Zipf frequency of ``word`` (lower case) in the other languages of its script
    (:data:`LANGUAGE_VOTE`)."""
    return _other_zipf(word) if word else 0.0


# The languages of LANGUAGE_VOTE that capitalise every noun (German): there a capital in mid-sentence is no sign of a
# name.  French, Spanish, Italian, Portuguese, Dutch, Polish, Swedish, Turkish, Russian, Ukrainian and Greek
# capitalise proper nouns only (and a few institutions: "l'État"; their nationalities' nouns).
NOUN_CAPITALISING = frozenset({"de"})


def leading_language(sentence: str) -> str:
    """The language most of the words of ``sentence`` that vote for another language (:func:`language_votes`) are
    most common in ("en" when none votes so): "de" for "Der Bundesverband deutscher Banken", "fr" for "a
    coopéré avec Nissan"."""
    langs: Dict[str, int] = {}
    for m in _VOTE_WORD.finditer(sentence):
        word = m.group().lower()
        if _vote(word) == -1:
            lang = max(_vote_languages(word), key=lambda code: zipf_of(word, code))
            langs[lang] = langs.get(lang, 0) + 1
    return max(langs, key=lambda code: langs[code]) if langs else "en"


def language_votes(sentence: str) -> Tuple[int, int]:
    """(English votes, votes for another language) of the words of ``sentence``: a word votes for another language
    of :data:`LANGUAGE_VOTE` (of its script) when wordfreq finds it at least Zipf 3 common there and a point more
    common than in English ("de", "und", "что"), and for English when it is at least Zipf 3 common in English
    otherwise; a word rare everywhere (a name, a handle) does not vote."""
    votes = [_vote(m.group().lower()) for m in _VOTE_WORD.finditer(sentence)]
    return votes.count(1), votes.count(-1)


def mostly_another_language(sentence: str, min_votes: int = 3, share: float = 0.6) -> bool:
    """Whether ``sentence`` is written in a language other than English: at least ``min_votes`` of its words
    vote, and at least ``share`` of those for another language (:func:`language_votes`).  A German or Russian
    sentence is; an English one quoting a German name or two is not.  wordfreq's frequencies, not a list.  Reads
    the words in turn and stops as soon as the rest cannot change the answer (an English sentence after a few)."""
    words = [m.group().lower() for m in _VOTE_WORD.finditer(sentence)]
    en_votes = other_votes = 0
    for k, word in enumerate(words):
        v = _vote(word)
        en_votes += v == 1
        other_votes += v == -1
        left = len(words) - k - 1
        if en_votes > (1 - share) * (en_votes + other_votes + left):
            return False  # even if every word left voted for another language, it would not reach the share
    votes = en_votes + other_votes
    return votes >= min_votes and other_votes >= share * votes


# Where a sentence ends, for reading each in its language: after . ! ? ; : and a space, after the CJK full stops
# (no space follows them), at line breaks.
_SENTENCE_BREAK = re.compile(r"(?<=[.!?;:])\s+|(?<=[\u3002\uff01\uff1f])\s*|\n+")


def sentence_bounds(text: str) -> List[Tuple[int, int]]:
    """(start, end) of each sentence of ``text`` with a letter or digit in it, in order (:data:`_SENTENCE_BREAK`)."""
    out, start = [], 0
    for m in _SENTENCE_BREAK.finditer(text):
        if m.start() > start:
            out.append((start, m.start()))
        start = m.end()
    if start < len(text):
        out.append((start, len(text)))
    return [(a, b) for a, b in out if any(c.isalnum() for c in text[a:b])]


@lru_cache(maxsize=4096)
def another_language(sentence: str) -> bool:
    """Whether a sentence is not English: it holds letters of a caseless script (Han, Kana, Hangul, Arabic...),
    or most of its words are more common in another language (:func:`mostly_another_language`)."""
    return unread_letters(sentence) or mostly_another_language(sentence)


# wordfreq's Zipf scale: a word at least this common in English that is in no list of names is an ordinary word.
ORDINARY_ZIPF = 2.5


def ordinary_word(token: str) -> bool:
    """A word that is common in English and in no list of first or last names ("score", "managers", "var")."""
    low = token.lower()
    return low not in known_names() and english_zipf(low) >= ORDINARY_ZIPF


# wordfreq's Zipf scale: an organisation written only in words at least this common ("User", "Cross-Border", "Keto")
# names the entity where it is capitalised as detected; its lower-case uses are the everyday words.
EVERYDAY_ZIPF = 3.5


def everyday_lower_word(word: str, zipf: float = EVERYDAY_ZIPF) -> bool:
    """One word written in lower case, in no name list and at least ``zipf`` common in English ("showed", "shop"):
    what the rules after the decision may leave out of a span."""
    return word.islower() and word not in known_names() and english_zipf(word) >= zipf


def everyday_words(form: str, zipf: float = EVERYDAY_ZIPF) -> bool:
    """Every letter word of ``form`` besides function words at least ``zipf`` common in English (at least one)."""
    import re

    words = [w for w in re.findall(r"[^\W\d_]+", form.lower()) if w not in function_words()]
    return bool(words) and all(english_zipf(w) >= zipf for w in words)


@lru_cache(maxsize=1)
def currency_codes() -> FrozenSet[str]:
    """ISO 4217 currency codes ("NOK", "USD"), upper case, from Faker's currency provider."""
    from faker.providers.currency import Provider

    return frozenset(code for code, _ in Provider.currencies)


@lru_cache(maxsize=1)
def known_names() -> FrozenSet[str]:
    """First and last names together."""
    first, last = name_lists()
    return first | last


@lru_cache(maxsize=1)
def english_and_common() -> FrozenSet[str]:
    """English stop words and common words that are also names."""
    return english_stop_words() | frozenset(COMMON_NAME_WORDS)


@lru_cache(maxsize=1)
def english_stop_words() -> FrozenSet[str]:
    """spaCy's English stop words (function words), lowercased."""
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(w.lower() for w in STOP_WORDS)
