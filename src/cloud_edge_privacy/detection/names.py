"""Person names in any case and script: a multilingual name list used with context.

The list is every first and last name of Faker's person providers (about 110 locales, Latin, Cyrillic,
Greek, Arabic, Devanagari, Han, Kana, Hangul...), loaded once.  A common word is never a name on its own:
tokens that are stop words of any spaCy language are ignored, and a single name token counts only after a
cue ("my name is", "hi", "dear", "my son", "Best,", titles...).  Two adjacent list names (first + last, any
case: ``anna berg``, ``ANNA BERG``) are a name without a cue.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import FrozenSet, List, Tuple

from ..lexicon import (CJK_SCRIPTS, is_cjk, english_and_common, english_stop_words, english_zipf, known_names,
                       name_lists, stop_words)
from ..spans import Span
from .. import wordlists
from .recognizer import register_recognizer

_LATIN_WORD = r"[^\W\d_][^\W\d_'’-]*(?:[-'’][^\W\d_]+)*"
# The relations of the cues ("my son", "my boss"); some are in the name lists too ("Friend", "Boss"), never a name there
_RELATIONS = wordlists.words("relations")
# Cues after which the next 1-3 name-like tokens are a person (several languages).
_CUES = (
    r"my name is|my name's|i am|i'm|call me|hi|hello|hey|dear|thanks|thank you|best|regards|cheers|"
    r"sincerely|yours|love|sign it|signed|attn|"
    r"my (?:" + "|".join(sorted(_RELATIONS)) + r")|"
    r"ich heiße|ich bin|hallo|liebe|lieber|grüße|gruß|je m'appelle|je suis|bonjour|salut|cher|chère|"
    r"me llamo|soy|hola|querid[oa]|estimad[oa]|saludos|mi chiamo|sono|ciao|gentile|car[oa]|saluti|sou|"
    r"dokter|doktor|docteur|doctora|dottore|dottoressa|doutor|doutora|huisarts|hausarzt|"
    r"ik ben|ik heet|beste|groeten|nazywam się|jestem|cześć|meu nome é|olá|jag heter|hej|adım|merhaba|"
    r"mr|mrs|ms|miss|mx|dr|prof|sir|madam|herr|frau|monsieur|madame|mme|mlle|maître|señor|señora|sr|sra|"
    r"signor|signora|sig|dott|pan|pani|meneer|mevrouw|dhr|mevr"
)
_CUE_RE = re.compile(rf"(?i)(?<![\w])(?:{_CUES})\.?,?\s+")
_LETTER = r"(?:[^\W\d_]|[\u0300-\u036f\u0900-\u0dff])"
# A token is one script's run: Han, Kana and Hangul are written without spaces, and a Latin word inside such text
# ("我的同事Katherine明天...") is a word of its own, not part of the run around it.
_CJK_LETTERS = "".join(CJK_SCRIPTS.values())
_SPACED_LETTER = rf"(?:(?![{_CJK_LETTERS}]){_LETTER})"
_TOKEN = re.compile(rf"[{_CJK_LETTERS}]+|{_SPACED_LETTER}+(?:[-'’]{_SPACED_LETTER}+)*", re.UNICODE)
_CYR_GREEK_NAME = re.compile(r"(?<![\w])[А-ЯЁІЇЄҐΑ-ΩΆΈΉΊΌΎΏ][а-яёіїєґα-ωάέήίόύώϊϋΐΰς'-]+"
                             r"(?:\s+[А-ЯЁІЇЄҐΑ-ΩΆΈΉΊΌΎΏ][а-яёіїєґα-ωάέήίόύώϊϋΐΰς'-]+){1,2}(?![\w])")
_CJK_HONORIFIC = re.compile(r"([\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7a3]{1,4}(?:\s[\u4e00-\u9fff\u3040-\u30ff]{1,3})?)"
                            r"(?=さん|様|さま|先生|くん|ちゃん|先生|女士|小姐|老师|经理|님|씨)")


@lru_cache(maxsize=1)
def _cjk_full_names() -> "re.Pattern[str]":
    """Han/Kana/Hangul full names written as surname + given name (with or without a space)."""
    first, last = name_lists()
    lasts = sorted((n for n in last if is_cjk(n)), key=len, reverse=True)
    firsts = sorted((n for n in first if is_cjk(n) and len(n) >= 2), key=len, reverse=True)
    return re.compile(f"(?:{'|'.join(map(re.escape, lasts))})\\s?(?:{'|'.join(map(re.escape, firsts))})")


@register_recognizer("names", {"PERSON"}, {"names": 2.6})
class NameRecognizer:
    """Person names the NER models miss: lowercase, ALL-CAPS and non-Latin names.

    * two or more adjacent list names starting with a first name, in one case (``anna berg``, ``ANNA BERG``,
      ``Lize de Boer`` with particles);
    * one capitalised first name from the list inside a sentence ("saying that Birgitta will");
    * one to three name-like tokens (list names in any case, or capitalised words) after a cue such as
      "my name is", "Hi", "Dear", "Best,", "my son", or a title (Mr, Mme, Herr, Sra...);
    * two or three capitalised Cyrillic or Greek words in a row;
    * Han/Kana/Hangul surname + given name from the list; a short Han or Hangul run starting with a surname
      in text of another script, or after 叫/是/给; any short run before an honorific (さん, 先生, 님).
    """

    def analyze(self, text: str) -> List[Span]:
        first, last = name_lists()
        known = known_names()
        stop, en_stop = stop_words(), english_stop_words()
        head_stop = english_and_common()
        out: List[Span] = []
        tokens = [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text)]
        cues = {m.end(): m for m in _CUE_RE.finditer(text)}  # one pass: where a cue ends, a name may start
        n = len(tokens)

        def case(t: str) -> str:
            return "upper" if t.isupper() and len(t) > 1 else "title" if t[:1].isupper() else "lower"

        def namey(t: str, head: bool) -> bool:
            low = t.lower()
            if low not in (first if head else known):
                return False
            if case(t) == "lower":
                return low not in stop
            return low not in (head_stop if head else en_stop)

        i = 0
        while i < n:
            s, e, tok = tokens[i]
            if tok.lower() in _RELATIONS and _POSSESSIVE.search(text, max(0, s - 8), s):
                i += 1  # "my friend chloe okonkwo": the relation is the cue, not the first of the names
                continue
            # a run of list names: first name + more names (particles allowed inside); a given name that is also
            # a common word ("mary", "rose") or a surname written first ("wang fang") only starts a run of two+
            nxt_tok = tokens[i + 1][2] if i + 1 < n and _adjacent(text, e, tokens[i + 1][0]) else ""
            pair_only = not namey(tok, True) and bool(nxt_tok) and case(nxt_tok) == case(tok) and (
                (tok.lower() in _PAIR_HEADS and namey(nxt_tok, False))
                or (tok.lower() in last and tok.lower() not in stop and nxt_tok.lower() in first
                    and nxt_tok.lower() not in stop and not is_cjk(tok)))
            if namey(tok, True) or pair_only:
                j, names = i + 1, 1
                while j < n and _adjacent(text, tokens[j - 1][1], tokens[j][0]):
                    t = tokens[j][2]
                    if t.lower() in _PARTICLES:  # "van den", "de la": particles before a further name
                        k = j
                        while k < n and k - j < 3 and tokens[k][2].lower() in _PARTICLES \
                                and _adjacent(text, tokens[k][1], tokens[k + 1][0] if k + 1 < n else -1):
                            k += 1
                        if k > j and k < n and namey(tokens[k][2], False):
                            j = k
                            continue
                    if not namey(t, False) or (case(t) != case(tok) and not t.lower() in _PARTICLES) \
                            or is_cjk(t) != is_cjk(tok):
                        break
                    names += 1
                    j += 1
                after = tokens[j][2].lower() if j < n else ""
                if names >= 2 and after not in _INSTITUTION_WORDS and tokens[j - 1][2].lower() not in _INSTITUTION_WORDS:
                    out.append(Span(s, tokens[j - 1][1], "PERSON", 0.75, "names:list"))
                    i = j
                    continue
                if pair_only:
                    i += 1
                    continue
                # a lone capitalised first name inside a sentence
                before = text[max(0, s - 3):s]
                nxt = tokens[i + 1][2].lower() if i + 1 < n else ""
                initial = i == 0 or re.search(r"[.!?:\n\"“(]\s*$|^\s*$", before)
                if case(tok) == "title" and len(tok) >= 3 and tok.lower() not in stop \
                        and tok.lower() not in _PLACES and nxt not in _INSTITUTION_WORDS \
                        and (not initial or english_zipf(tok.lower()) < 3.0):  # sentence-initial: only rare words
                    out.append(Span(s, e, "PERSON", 0.6, "names:first"))
                    i += 1
                    continue
            if _lone_rare_name(text, tokens, i, first, last, stop):
                out.append(Span(s, e, "PERSON", 0.6, "names:rare"))
                i += 1
                continue
            cue = cues.get(s)
            capital_ok = case(tok) == "title" and tok.lower() not in en_stop and tok.lower() not in _NOT_NAMES_AFTER_CUE
            if cue and (tok.lower() not in stop or capital_ok) and not tok.isdigit() \
                    and tok.lower() not in _NOT_NAMES_AFTER_CUE:
                j = i
                while j < n and j - i < 3 and (j == i or _adjacent(text, tokens[j - 1][1], tokens[j][0])):
                    t = tokens[j][2]
                    if (t.lower() in stop and not (j == i and capital_ok)) or not (t.lower() in known or t[:1].isupper()) \
                            or (j > i and case(tok) == "title" and case(t) != "title"):
                        break
                    j += 1
                signoff = _SIGNOFF.search(cue.group()) and re.match(r"\s*(?:$|['\"”’\n!.])", text[e:])
                if j == i and signoff:
                    j = i + 1
                if j > i:
                    out.append(Span(s, tokens[j - 1][1], "PERSON", 0.7, "names:cue"))
                    i = j
                    continue
            i += 1
        for m in _WEAK_CUE.finditer(text):  # "reply to shane rose", "cc rachel", "ask dr ng"
            run = _list_name_run(text, m.end(), known, first)
            if run:
                out.append(Span(m.end(), run, "PERSON", 0.6, "names:weak_cue"))
        for m in _PAIR_AND.finditer(text):
            a, b = m.group(1), m.group(2)
            if (a.lower() in first or b.lower() in first) and a.lower() not in head_stop and b.lower() not in head_stop \
                    and a.lower() not in _PLACES and b.lower() not in _PLACES:
                out.append(Span(m.start(1), m.end(1), "PERSON", 0.6, "names:pair"))
                out.append(Span(m.start(2), m.end(2), "PERSON", 0.6, "names:pair"))
        out += _foreign_script_names(text)
        for m in _CYR_GREEK_NAME.finditer(text):
            out.append(Span(m.start(), m.end(), "PERSON", 0.7, "names:cyrillic_greek"))
        if is_cjk(text):
            out.extend(_cjk_names(text, last))
        return out


_POSSESSIVE = re.compile(r"(?i)\b(?:my|our|your|his|her|their)\s+$")
# Given names that are also everyday words: a name only when a listed surname follows ("mary jones").
_PAIR_HEADS = wordlists.words("name_pair_heads")
# Capitalised words after a cue ("Hi", "Dear", "my boss") that are not names.
_NOT_NAMES_AFTER_CUE = wordlists.words("not_names_after_cue")  # pronouns, what a cue's word is asked about, roles
_PAIR_AND = re.compile(r"(?<![\w&])([A-Z][a-z]{2,})\s?(?:&|and)\s?([A-Z][a-z]{2,})(?![\w&])")
# Verbs and prepositions after which a lower-case list name is a person ("cc rachel", "ask dr ng").
_WEAK_CUE = re.compile(r"(?i)(?<![\w])(?:reply to|write to|send (?:it )?to|cc|bcc|ask|tell|text|ping|email|pick up|"
                       r"invite|remind|thank|sign it|sign as|signed|from|with|for|dr\.?|and|me and)\s+(?=[^\W\d_])")
_FUNCTION_WORDS_NOT_NAMES = wordlists.words("names_not_after_weak_cue")


_ONE_OR_TWO_WORDS = re.compile(r"([^\W\d_]+)(?: ([^\W\d_]+))?")


def _list_name_run(text: str, at: int, known: FrozenSet[str], first: FrozenSet[str]) -> int:
    """End of one or two lower-case list names starting at ``at`` (the first a first name that is not an
    everyday word), or 0."""
    m = _ONE_OR_TWO_WORDS.match(text, at)
    if not m or not m.group(1).islower():
        return 0
    head = m.group(1)
    if head not in first or head in _FUNCTION_WORDS_NOT_NAMES or head in english_stop_words() \
            or english_zipf(head) >= 4.5 or len(head) < 3:
        return 0
    tail = m.group(2)
    if tail and tail.islower() and tail in known and tail not in english_stop_words() and english_zipf(tail) < 5.0:
        return m.end(2)
    return m.end(1)


_SCRIPTS = "\u0900-\u0dff\u0600-\u06ff\u0e00-\u0e7f\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7a3\u200d"
# one to three words of those scripts, not part of a longer run of them (a sentence in Persian is no name)
_FOREIGN_RUN = re.compile(rf"(?<![\w\u200d])(?<![{_SCRIPTS}] )[{_SCRIPTS}]+(?: [{_SCRIPTS}]+){{0,2}}(?![\w\u200d])"
                          rf"(?! [{_SCRIPTS}])")


# the longest word of Han, Kana or Hangul taken for a name by its length alone: most personal names are 2-4
# characters (multilingual dev set: 15 of 19 Chinese, 14 of 18 Korean, 16 of 25 Japanese PERSON mentions)
CJK_NAME_CHARACTERS = 4


def _foreign_script_names(text: str) -> List[Span]:
    """In text written mostly in Latin script, a short run of Devanagari, Arabic, Thai, Han or Hangul words
    standing alone ("with 彭林 (HR)", "- 지민 to send") is almost always a name; masked as one.  A longer word of
    Han, Kana or Hangul is left to the languages' own analyzers (the cjk recognizer): in the development prompts
    every such run was an instruction ("请将以上句子翻译成中文", "这是什么意思"), none a name."""
    runs = [m for m in _FOREIGN_RUN.finditer(text) if len(m.group().replace(" ", "")) <= 12
            and not (is_cjk(m.group()) and max(len(w) for w in m.group().split()) > CJK_NAME_CHARACTERS)]
    if not runs:  # the common case: no need to count the letters
        return []
    letters = [c for c in text if c.isalpha()]
    latin = sum(1 for c in letters if c.isascii() or "\u00c0" <= c <= "\u024f")
    if not letters or latin / len(letters) < 0.7:
        return []
    return [Span(m.start(), m.end(), "PERSON", 0.55, "names:foreign_script") for m in runs]


def _lone_rare_name(text: str, tokens: List[Tuple[int, int, str]], i: int, first: FrozenSet[str],
                    last: FrozenSet[str], stop: FrozenSet[str]) -> bool:
    """A single list name that is rare as an English word, standing alone in prose: a lower-case first name
    ("can u pick up carolina"), or a capitalised surname inside a sentence ("attendees: ..., Eriksson").
    Tokens glued to code punctuation (paths, identifiers, URLs) are left to the code recognizers."""
    s, e, tok = tokens[i]
    low = tok.lower()
    if len(tok) < 4 or low in stop or low in _PLACES or english_zipf(low) >= 3.0:
        return False
    if text[max(0, s - 1):s] in ("/", ".", "_", "=", "@", "\\", "-", "#", "$", "{", "[", "<") \
            or text[e:e + 1] in ("/", ".", "_", "=", "(", "@", "\\", "-", "[", "{") and text[e:e + 2] not in (". ", ".\n"):
        return False
    if tok.islower():
        return low in first
    if not (tok[:1].isupper() and tok[1:].islower()) or low not in last:
        return False
    before = text[max(0, s - 3):s]
    if re.search(r"[.!?\n\"“(]\s*$|^\s*$", before):  # sentence-initial: the NER models decide
        return False
    prev_cap = i > 0 and tokens[i - 1][2][:1].isupper() and _adjacent(text, tokens[i - 1][1], s)
    next_tok = tokens[i + 1] if i + 1 < len(tokens) else None
    next_cap = next_tok is not None and next_tok[2][:1].isupper() and _adjacent(text, e, next_tok[0])
    return not prev_cap and not next_cap and (next_tok is None or next_tok[2].lower() not in _INSTITUTION_WORDS)


_INSTITUTION_WORDS = wordlists.words("institution_words_after_names")
# First names that are far more often places or institutions in running text.
_PLACES = wordlists.words("first_names_mostly_places")
_PARTICLES = wordlists.words("name_particles")
_SIGNOFF = re.compile(r"(?i)thanks|thank you|best|regards|cheers|love|sincerely|yours|sign")
_HAN_RUN = re.compile(r"[\u4e00-\u9fff]{2,4}")
_HANGUL_RUN = re.compile(r"[\uac00-\ud7a3]{2,4}")
_HAN_CUE = re.compile(r"(?:叫|是|给|名字是|姓名[:：]?|联系人[:：]?|致|联系|找|问|告诉|通知|请|和|跟|同事|经理|老板|客户|"
                      r"老师|医生)(?=([\u4e00-\u9fff]{2,4}))")  # a lookahead: cues may follow each other (请联系张伟)


def _cjk_names(text: str, last: FrozenSet[str]) -> List[Span]:
    out = [Span(m.start(), m.end(), "PERSON", 0.7, "names:cjk_list") for m in _cjk_full_names().finditer(text)]
    out += [Span(m.start(1), m.end(1), "PERSON", 0.7, "names:cjk_honorific") for m in _CJK_HONORIFIC.finditer(text)]
    for pattern, script in ((_HAN_RUN, r"[\u4e00-\u9fff\u3040-\u30ff]"), (_HANGUL_RUN, r"[\uac00-\ud7a3]")):
        for m in pattern.finditer(text):
            around = text[max(0, m.start() - 12):m.start()] + text[m.end():m.end() + 12]
            if re.search(script, around) is None and (m.group()[:1] in last or m.group()[:2] in last
                                                      or m.group() in _first_names()):
                out.append(Span(m.start(), m.end(), "PERSON", 0.65, "names:cjk_isolated"))
    for m in _HAN_SPACED.finditer(text):
        around = text[max(0, m.start() - 12):m.start()] + text[m.end():m.end() + 12]
        if m.group(1) in last and re.search(r"[\u4e00-\u9fff\u3040-\u30ff]", around) is None:
            out.append(Span(m.start(), m.end(), "PERSON", 0.65, "names:cjk_spaced"))
    for m in _HAN_CUE.finditer(text):
        run = m.group(1)
        if run[:1] in last or run[:2] in last:
            out.append(Span(m.start(1), m.end(1), "PERSON", 0.65, "names:cjk_cue"))
    return out


def _first_names() -> FrozenSet[str]:
    return name_lists()[0]


# A Japanese or Chinese surname, a space and a one- or two-character given name, in text of another script.
_HAN_SPACED = re.compile(r"(?<![\u4e00-\u9fff\u3040-\u30ff])([\u4e00-\u9fff]{1,2}) ([\u4e00-\u9fff]{1,2})"
                         r"(?![\u4e00-\u9fff\u3040-\u30ff])")


def _adjacent(text: str, end: int, start: int) -> bool:
    gap = text[end:start]
    return len(gap) <= 2 and gap.strip(" ") in ("",) or gap in (" ", "  ", "-")


def _consistent_case(tokens: List[str]) -> bool:
    """All tokens capitalised, all lower case or all upper case (not "Will long")."""
    if all(t.islower() for t in tokens) or all(t.isupper() for t in tokens):
        return True
    return all(t[:1].isupper() for t in tokens)
